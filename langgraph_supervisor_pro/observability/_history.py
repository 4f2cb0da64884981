"""Checkpoint history read once (private): the one reader of the audit trail and the metrics.

`History.read(saver, thread_id)` (or `aread`) lists the checkpoints once
(`_history_rows.list_once`), groups them by thread and namespace, oldest first, and gives
any checkpoint's `SupervisorState` delta channels as LangGraph rebuilds them (the nearest
stored value, then the pending writes down the parent chain). It folds those writes
incrementally, memoised per checkpoint: one reducer call per checkpoint with writes, not a
replay per checkpoint. The reducers are batching-invariant, as `DeltaChannel` requires, so
the result is LangGraph's one-batch replay. Values are shared between checkpoints (one with
no writes of a channel holds its parent's value): callers must not mutate them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, get_origin, get_type_hints

from langgraph.channels import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from langgraph_supervisor_pro._state import SupervisorState
from langgraph_supervisor_pro.observability._history_rows import (
    Listing,
    Threads,
    alist_once,
    list_once,
)


def _delta_specs() -> dict[str, DeltaChannel[Any]]:
    """The annotations' channels, with the value type a compiled graph gives them."""
    hints = get_type_hints(SupervisorState, include_extras=True)
    specs: dict[str, DeltaChannel[Any]] = {}
    for name, hint in hints.items():
        for spec in getattr(hint, "__metadata__", ()):
            if isinstance(spec, DeltaChannel):
                typ = get_origin(hint.__origin__) or hint.__origin__
                specs[name] = DeltaChannel(
                    spec.reducer, typ, snapshot_frequency=spec.snapshot_frequency
                )
    return specs


DELTA_SPECS: Mapping[str, DeltaChannel[Any]] = _delta_specs()
"""The delta channels `SupervisorState` declares, by name (with their reducers)."""

Key = tuple[str, str, str]
"""A checkpoint's (thread id, namespace, checkpoint id)."""


def key_of(item: CheckpointTuple) -> Key:
    """The checkpoint's key.

    Example:
        >>> from langgraph.checkpoint.base import CheckpointTuple
        >>> key_of(CheckpointTuple({"configurable": {"thread_id": "t", "checkpoint_id": "1"}},
        ...                        {}, {}))  # type: ignore[typeddict-item]
        ('t', '', '1')
    """
    configurable = item.config.get("configurable") or {}
    return (
        str(configurable.get("thread_id", "")),
        str(configurable.get("checkpoint_ns", "")),
        str(configurable.get("checkpoint_id", "")),
    )


def _parent_key(item: CheckpointTuple) -> Key | None:
    parent = item.parent_config
    if not parent:
        return None
    configurable = parent.get("configurable") or {}
    checkpoint_id = configurable.get("checkpoint_id")
    if not checkpoint_id:
        return None
    thread, namespace, _ = key_of(item)
    return (thread, namespace, str(checkpoint_id))


@dataclass
class History:
    """Checkpoints by thread and namespace, oldest first, with their delta channels."""

    listing: Listing
    specs: Mapping[str, DeltaChannel[Any]] = field(default_factory=lambda: dict(DELTA_SPECS))
    """The delta channels to rebuild, by name."""
    _chains: dict[tuple[str, str], list[CheckpointTuple]] = field(
        init=False, repr=False, default_factory=dict
    )
    _by_key: dict[Key, CheckpointTuple] = field(init=False, repr=False, default_factory=dict)
    _writes: dict[Key, dict[str, list[Any]]] = field(init=False, repr=False, default_factory=dict)
    _after: dict[tuple[Key, str], Any] = field(init=False, repr=False, default_factory=dict)
    folds: int = field(init=False, default=0)
    """Reducer replays performed so far (one per checkpoint and channel with writes)."""

    def __post_init__(self) -> None:
        for item in self.listing.items:
            key = key_of(item)
            self._by_key[key] = item
            self._chains.setdefault(key[:2], []).append(item)
            by_channel: dict[str, list[Any]] = {}
            for write in item.pending_writes or ():
                if write[1] in self.specs:
                    by_channel.setdefault(str(write[1]), []).append(write)
            if by_channel:
                self._writes[key] = by_channel
        for chain in self._chains.values():
            chain.sort(key=lambda i: key_of(i)[2])

    @classmethod
    def read(cls, saver: BaseCheckpointSaver[Any], thread_id: Threads = None) -> History:
        """Every checkpoint of `thread_id` (a list of ids; None: every thread), listed once."""
        return cls(list_once(saver, thread_id))

    @classmethod
    async def aread(cls, saver: BaseCheckpointSaver[Any], thread_id: Threads = None) -> History:
        """`read` with the saver's async methods."""
        return cls(await alist_once(saver, thread_id))

    def threads(self) -> list[str]:
        """The threads, sorted."""
        return sorted({thread for thread, _ in self._chains})

    def namespaces(self, thread_id: str) -> dict[str, list[CheckpointTuple]]:
        """The thread's namespaces (`""` is the root), each oldest first, sorted by name."""
        return {
            namespace: chain
            for (thread, namespace), chain in sorted(self._chains.items())
            if thread == thread_id
        }

    def chain(self, thread_id: str, namespace: str = "") -> list[CheckpointTuple]:
        """One namespace's checkpoints, oldest first (empty when there are none)."""
        return self._chains.get((thread_id, namespace), [])

    def newest(self, thread_id: str, namespace: str = "") -> CheckpointTuple | None:
        """The namespace's newest checkpoint (checkpoint ids sort by time).

        Example:
            >>> History(Listing([])).newest("t") is None
            True
        """
        chain = self.chain(thread_id, namespace)
        return chain[-1] if chain else None

    def delta_values(
        self, item: CheckpointTuple, channels: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """The delta channels' values at `item`, as `graph.get_state` shows them.

        A channel without a version at `item` (never written) is left out.
        """
        versions = item.checkpoint.get("channel_versions") or {}
        out: dict[str, Any] = {}
        for name in channels if channels is not None else self.specs:
            if name not in versions:
                continue
            spec = self.specs[name]
            found, value = self.listing.stored(item, name)
            if found:
                out[name] = spec.from_checkpoint(value).get()
                continue
            parent = _parent_key(item)
            item_parent = self._by_key.get(parent) if parent is not None else None
            if item_parent is None:
                out[name] = spec.from_checkpoint(None).get()
            else:
                out[name] = self._value_after(key_of(item_parent), name)
        return out

    def delta_history(
        self, thread_id: str, namespace: str = "", channels: Sequence[str] | None = None
    ) -> Iterator[tuple[CheckpointTuple, dict[str, Any]]]:
        """Each checkpoint of a namespace, oldest first, with its delta channels' values."""
        for item in self.chain(thread_id, namespace):
            yield item, self.delta_values(item, channels)

    def _value_after(self, key: Key, name: str) -> Any:
        """The channel's value after checkpoint `key`'s own pending writes (memoised)."""
        memo = (key, name)
        if memo in self._after:
            return self._after[memo]
        # Walk up to a checkpoint whose value is known: memoised, stored, or the first.
        path: list[Key] = []
        base: Any = None
        cursor: Key | None = key
        while cursor is not None:
            if (cursor, name) in self._after:
                base = self._after[(cursor, name)]
                break
            path.append(cursor)
            item = self._by_key[cursor]
            if self.listing.stored(item, name)[0]:
                base = None  # the walk's seed: folded below from the stored value
                break
            parent = _parent_key(item)
            cursor = parent if parent is not None and parent in self._by_key else None
        spec = self.specs[name]
        for step in reversed(path):
            found, value = self.listing.stored(self._by_key[step], name)
            start = value if found else base
            writes = self._writes.get(step, {}).get(name)
            if writes:
                channel = spec.from_checkpoint(start)
                channel.replay_writes(writes)
                base = channel.get()
                self.folds += 1
            else:
                base = spec.from_checkpoint(start).get()
            self._after[(step, name)] = base
        return self._after[memo]

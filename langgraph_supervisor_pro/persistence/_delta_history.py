"""Reading a delta channel's history on Postgres (private to `checkpointers.py`).

`postgres_delta_history` returns what LangGraph's `get_delta_channel_history` does (pinned
by tests/persistence/test_delta_history.py) in three reads instead of LangGraph's
per-channel probes: the channels' stored values (one query), the parent chain in pages
that grow (each checkpoint's JSON read once per row, a channel's walk stopping at its
first stored value: a blob wins over an inline value), then every channel's writes by
checkpoint id range (ids grow along a chain; a fork's other branches are left out before
anything is deserialized) and its seed's blob, in one query.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, LiteralString

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    DeltaChannelHistory,
    PendingWrite,
    get_checkpoint_id,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_supervisor_pro._internal.twins import Io, Steps

FIRST_PAGE = 128
"""Checkpoints in the walk's first page (the target's row among them)."""
PAGE_GROWTH = 4
"""How much larger each next page is than the one before."""
_LAST_PAGE = 8_192

_HEAD: LiteralString = (
    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s "
    "ORDER BY checkpoint_id DESC LIMIT 1"
)
_STORED: LiteralString = (
    "SELECT channel, version FROM checkpoint_blobs WHERE thread_id = %s "
    "AND checkpoint_ns = %s AND channel = ANY(%s) AND type <> 'empty'"
)
_WRITES_BRANCH: LiteralString = (
    "SELECT 'w', checkpoint_id, channel, type, blob, task_id, task_path, idx, NULL "
    "FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s "
    "AND checkpoint_id >= %s AND checkpoint_id <= %s"
)
_SEED_BRANCH: LiteralString = (
    "SELECT 'b', NULL, channel, type, blob, NULL, NULL, NULL::integer, version "
    "FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s "
    "AND version = %s"
)
_PAGE_COLUMNS: LiteralString = "v ->> %s, cv -> %s"


def _page_sql(channels: int, *, first: bool) -> LiteralString:
    """A page of the chain: id, parent, then each channel's version and inline value.

    The subquery (kept apart by `OFFSET 0`) reads each row's JSON once for every channel.
    """
    columns: LiteralString = ", ".join([_PAGE_COLUMNS] * channels)
    bound: LiteralString = "<=" if first else "<"
    return (
        "SELECT checkpoint_id, parent_checkpoint_id, "
        + columns
        + " FROM (SELECT checkpoint_id, parent_checkpoint_id, "
        "checkpoint -> 'channel_versions' AS v, checkpoint -> 'channel_values' AS cv "
        "FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id "
        + bound
        + " %s ORDER BY checkpoint_id DESC LIMIT %s OFFSET 0) AS page"
    )


Run = Callable[[LiteralString, Sequence[Any]], Io[list[Any]]]
"""Makes the `Io` of one read on the saver's connection (the checkpointers' `_PostgresSql`,
binary: a blob arrives as is)."""


@dataclass(slots=True)
class _Walk:
    """One channel's walk up the parent chain from the target's parent."""

    cursor: str | None
    chain: list[str] = field(default_factory=list)
    seed_version: str | None = None
    inline: Any = None

    def advance(
        self,
        parent_of: Mapping[str, str | None],
        version_of: Mapping[str, str | None],
        inline_of: Mapping[str, Any],
        stored: set[str],
    ) -> None:
        """Walk as far as the checkpoints read so far go, or to the seed."""
        while self.cursor is not None and self.cursor in parent_of:
            here = self.cursor
            self.chain.append(here)
            version = version_of.get(here)
            has_blob = version is not None and version in stored
            inline = inline_of.get(here)
            if has_blob or inline is not None:
                self.seed_version = version
                if not has_blob:
                    self.inline = inline
                self.cursor = None
                return
            self.cursor = parent_of[here]


def postgres_delta_history(
    config: RunnableConfig,
    channels: Sequence[str],
    run: Run,
    serde: SerializerProtocol,
) -> Steps[dict[str, DeltaChannelHistory]]:
    """Each channel's writes since its seed on the chain of `config`'s checkpoint.

    The contract of `BaseCheckpointSaver.get_delta_channel_history`: no checkpoint id
    means the namespace's newest checkpoint; a checkpoint that does not exist gives
    every channel no writes and no seed.
    """
    names = list(dict.fromkeys(channels))
    if not names:
        return {}
    configurable = config["configurable"]
    thread_id = str(configurable["thread_id"])
    namespace = str(configurable.get("checkpoint_ns", ""))
    target = get_checkpoint_id(config)
    if not target:
        head = yield run(_HEAD, (thread_id, namespace))
        if not head:
            return {ch: DeltaChannelHistory(writes=[]) for ch in names}
        target = str(head[0][0])
    stored_rows = yield run(_STORED, (thread_id, namespace, names))
    stored: dict[str, set[str]] = {ch: set() for ch in names}
    for channel, version in stored_rows:
        stored[str(channel)].add(str(version))
    parent_of: dict[str, str | None] = {}
    version_of: list[dict[str, str | None]] = [{} for _ in names]
    inline_of: list[dict[str, Any]] = [{} for _ in names]
    walks: list[_Walk] | None = None
    cursor, size, first = target, FIRST_PAGE, True
    while True:
        params: list[Any] = []
        for ch in names:
            params += [ch, ch]
        params += [thread_id, namespace, cursor, size]
        page = yield run(_page_sql(len(names), first=first), params)
        for row in page:
            checkpoint_id = str(row[0])
            parent_of[checkpoint_id] = None if row[1] is None else str(row[1])
            for i in range(len(names)):
                version = row[2 + 2 * i]
                version_of[i][checkpoint_id] = None if version is None else str(version)
                inline_of[i][checkpoint_id] = row[3 + 2 * i]
        if walks is None:
            if target not in parent_of:  # no such checkpoint
                return {ch: DeltaChannelHistory(writes=[]) for ch in names}
            walks = [_Walk(parent_of[target]) for _ in names]
        for i, walk in enumerate(walks):
            walk.advance(parent_of, version_of[i], inline_of[i], stored[names[i]])
        if all(w.cursor is None for w in walks) or len(page) < size:
            break
        cursor, size, first = str(page[-1][0]), min(size * PAGE_GROWTH, _LAST_PAGE), False
    branches: list[LiteralString] = []
    params = []
    for ch, walk in zip(names, walks, strict=True):
        if walk.chain:
            branches.append(_WRITES_BRANCH)
            params += [thread_id, namespace, ch, walk.chain[-1], walk.chain[0]]
    for ch, walk in zip(names, walks, strict=True):
        if walk.seed_version is not None:
            branches.append(_SEED_BRANCH)
            params += [thread_id, namespace, ch, walk.seed_version]
    rows = (yield run(" UNION ALL ".join(branches), params)) if branches else []
    return _histories(names, walks, rows, serde)


def _histories(
    names: list[str],
    walks: list[_Walk],
    rows: list[tuple[Any, ...]],
    serde: SerializerProtocol,
) -> dict[str, DeltaChannelHistory]:
    """Demultiplex the writes and seeds read, deserializing each once, oldest first."""
    writes: dict[str, dict[str, list[tuple[Any, ...]]]] = {ch: {} for ch in names}
    seeds: dict[tuple[str, str], tuple[str, bytes]] = {}
    for kind, checkpoint_id, channel, type_, blob, task_id, task_path, idx, version in rows:
        if kind == "w":
            by_checkpoint = writes[str(channel)].setdefault(str(checkpoint_id), [])
            by_checkpoint.append((str(task_path), str(task_id), int(idx), str(type_), blob))
        else:
            seeds[(str(channel), str(version))] = (str(type_), bytes(blob))
    out: dict[str, DeltaChannelHistory] = {}
    for ch, walk in zip(names, walks, strict=True):
        collected: list[PendingWrite] = []
        for checkpoint_id in reversed(walk.chain):
            found = writes[ch].get(checkpoint_id, [])  # a fork's other branches: left
            found.sort(key=lambda w: writes_sort_key(w[0], w[1], w[2]))
            for _path, task_id, _idx, type_, blob in found:
                collected.append((task_id, ch, serde.loads_typed((type_, bytes(blob)))))
        entry = DeltaChannelHistory(writes=collected)
        if walk.seed_version is not None:
            seed = seeds.get((ch, walk.seed_version))
            if seed is not None and seed[0] != "empty":
                entry["seed"] = serde.loads_typed(seed)
            elif walk.inline is not None:
                entry["seed"] = walk.inline
        out[ch] = entry
    return out

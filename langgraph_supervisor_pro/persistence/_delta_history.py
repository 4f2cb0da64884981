"""Reading a delta channel's history on Postgres (private to `checkpointers.py`).

LangGraph rebuilds a `DeltaChannel` at a checkpoint from the nearest ancestor holding
a stored value of it (a `_DeltaSnapshot` copy, a blob of a thread written before the
channel was a delta channel, or an inline primitive) and every write of the channel on
the parent chain since (`BaseCheckpointSaver.get_delta_channel_history`). LangGraph's
`PostgresSaver` finds that ancestor with pages of 1,024 checkpoints, each row probing
`checkpoint_blobs` once per channel and reading the checkpoint's JSON three times per
channel: about 24 ms for a 300-hop thread's seven root delta channels, whether the copy
is one checkpoint up or 600.

`postgres_delta_history` returns the same histories, read differently:

1. the (channel, version) pairs of the thread's stored values of the channels, one
   query (a delta channel's blobs are its copies only, a few per thread);
2. the parent chain, newest first, in pages that grow (128 checkpoints, then 512,
   2,048, ...): each row's parent, and each channel's version and inline value, the
   checkpoint's JSON read once per row; a channel's walk stops at the first ancestor
   whose version has a stored value (a blob wins over an inline value, as upstream:
   for a copy the inline value is its `true` marker);
3. one query for every channel's writes and its seed's blob. A channel's writes are
   read by checkpoint id range (its seed's id to the target's parent's: checkpoint ids
   grow along a chain), not as a list of ids: sending 600 ids per channel cost more
   than the read. A forked thread's other branches inside the range are read too and
   left out before anything is deserialized.

The writes come back oldest first, each checkpoint's in `writes_sort_key` order, each
channel's seed deserialized with the saver's `serde`: what LangGraph's saver returns
(pinned by tests/persistence/test_delta_history.py against it, thread by thread).

Example:
    ```python
    histories = drive(postgres_delta_history(config, ["ledger"], run, saver.serde))
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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

__all__ = ["FIRST_PAGE", "PAGE_GROWTH", "Run", "postgres_delta_history"]

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

    The subquery (kept apart by `OFFSET 0`) reads each row's `channel_versions` and
    `channel_values` once; the outer select takes each channel from them.
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


class _Walk:
    """One channel's walk up the parent chain from the target's parent."""

    __slots__ = ("chain", "cursor", "inline", "seed_version", "seeded")

    def __init__(self, start: str | None) -> None:
        self.chain: list[str] = []
        self.cursor = start
        self.seeded = False
        self.seed_version: str | None = None
        self.inline: Any = None

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
                self.seeded, self.seed_version = True, version
                if not has_blob:
                    self.inline = inline
                self.cursor = None
                return
            self.cursor = parent_of[here]

    @property
    def done(self) -> bool:
        return self.cursor is None


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
        if all(w.done for w in walks) or len(page) < size:
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

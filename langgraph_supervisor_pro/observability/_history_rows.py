"""Listing checkpoints once (private), for `_history.History`.

`list_once(saver, threads)` / `alist_once` return the checkpoints of one thread, a list of
threads or every thread (None) as a `Listing`. From a Postgres saver it runs three queries
over the saver's tables (`checkpoints`, `checkpoint_blobs`, `checkpoint_writes`) and
deserializes a blob only when `Listing.stored` asks for it, once for every checkpoint that
shares it, where the saver's `list` deserializes every channel of every checkpoint again
(a delta channel's copy, the conversation's messages). Other savers, and a Postgres thread
with checkpoints older than LangGraph's format 4, use the saver's `list`. A value shared by
several checkpoints is one object: callers must not mutate it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, LiteralString, TypeAlias

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncConnection, Connection
from psycopg.rows import dict_row

from langgraph_supervisor_pro.persistence._connections import asaver_connection, saver_connection
from langgraph_supervisor_pro.persistence._thread_index import (
    WriteRow,
    checkpoint_tuple,
    column_blob,
)

_CHECKPOINTS: LiteralString = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, "
    "metadata FROM checkpoints"
)
_BLOBS: LiteralString = (
    "SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs"
)
_WRITES: LiteralString = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, "
    "blob FROM checkpoint_writes"
)
_BY_THREAD: LiteralString = " WHERE thread_id = %s"
_BY_THREADS: LiteralString = " WHERE thread_id = ANY(%s)"

Threads: TypeAlias = str | Sequence[str] | None
"""One thread id, several, or None for every thread."""

Rows = tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]
"""The checkpoints', blobs' and writes' rows."""

BlobKey = tuple[str, str, str, str]
"""A stored value's (thread id, namespace, channel, version)."""


class Listing:
    """Listed checkpoints, and the values they store, read when asked for.

    From a Postgres saver's tables, `channel_values` holds only the row's inline values
    (`status`, `step`, ...); `stored` loads a `checkpoint_blobs` value on first use.
    """

    def __init__(
        self,
        items: list[CheckpointTuple],
        blobs: Mapping[BlobKey, tuple[str, Any]] | None = None,
        serde: Any = None,
    ) -> None:
        self.items = items
        self._blobs = blobs
        self._serde = serde
        self._loaded: dict[BlobKey, Any] = {}
        self.loads = 0
        """Stored values deserialized on demand so far."""

    def stored(self, item: CheckpointTuple, channel: str) -> tuple[bool, Any]:
        """Whether `item` stores a value of `channel`, and the value.

        Example:
            >>> Listing([]).stored(CheckpointTuple({}, {"channel_values": {"a": 1}}, {}), "a")
            (True, 1)
        """
        values = item.checkpoint.get("channel_values") or {}
        if self._blobs is not None:
            configurable = item.config.get("configurable") or {}
            version = (item.checkpoint.get("channel_versions") or {}).get(channel)
            key = (
                str(configurable.get("thread_id", "")),
                str(configurable.get("checkpoint_ns", "")),
                channel,
                str(version),
            )
            found = self._blobs.get(key) if version is not None else None
            if found is not None and found[0] != "empty":
                if key not in self._loaded:
                    self._loaded[key] = self._serde.loads_typed((found[0], column_blob(found[1])))
                    self.loads += 1
                return True, self._loaded[key]
        if channel in values:
            return True, values[channel]
        return False, None


def _configs(threads: Threads) -> list[RunnableConfig | None]:
    """The `list` configs that cover `threads` (None: one listing of every thread)."""
    if threads is None:
        return [None]
    ids = [threads] if isinstance(threads, str) else list(dict.fromkeys(threads))
    return [{"configurable": {"thread_id": thread_id}} for thread_id in ids]


def reads_tables(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether `list_once` reads `saver`'s tables itself (a Postgres saver).

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> reads_tables(InMemorySaver())
        False
    """
    return isinstance(saver, PostgresSaver | AsyncPostgresSaver)


def _queries(threads: Threads) -> tuple[list[LiteralString], tuple[Any, ...]]:
    where: LiteralString = ""
    params: tuple[Any, ...] = ()
    if isinstance(threads, str):
        where, params = _BY_THREAD, (threads,)
    elif threads is not None:
        where, params = _BY_THREADS, (list(threads),)
    return [_CHECKPOINTS + where, _BLOBS + where, _WRITES + where], params


def _read(conn: Connection[Any], threads: Threads) -> Rows:
    queries, params = _queries(threads)
    with conn.cursor(row_factory=dict_row) as cur:
        checkpoints, blobs, writes = (cur.execute(q, params).fetchall() for q in queries)
    return checkpoints, blobs, writes


async def _aread(conn: AsyncConnection[Any], threads: Threads) -> Rows:
    queries, params = _queries(threads)
    out: list[list[dict[str, Any]]] = []
    async with conn.cursor(row_factory=dict_row) as cur:
        for query in queries:
            await cur.execute(query, params)
            out.append(await cur.fetchall())
    return out[0], out[1], out[2]


def _tuples(saver: BaseCheckpointSaver[Any], rows: Rows) -> Listing | None:
    """The rows as a `Listing` (values in blobs left to `stored`); None: `list` migrates."""
    checkpoints, blob_rows, write_rows = rows
    if any(r["checkpoint"].get("v", 4) < 4 and r["parent_checkpoint_id"] for r in checkpoints):
        return None
    serde = saver.serde
    blobs: dict[BlobKey, tuple[str, Any]] = {
        (r["thread_id"], r["checkpoint_ns"], r["channel"], r["version"]): (r["type"], r["blob"])
        for r in blob_rows
    }
    writes: dict[tuple[str, str, str], list[WriteRow]] = {}
    for r in write_rows:
        writes.setdefault((r["thread_id"], r["checkpoint_ns"], r["checkpoint_id"]), []).append(
            (r["task_id"], r["task_path"], r["idx"], r["channel"], r["type"], r["blob"])
        )
    out: list[CheckpointTuple] = []
    for row in checkpoints:
        key = (row["thread_id"], row["checkpoint_ns"], row["checkpoint_id"])
        out.append(
            checkpoint_tuple(
                serde,
                key,
                row["parent_checkpoint_id"],
                row["checkpoint"],
                row["metadata"],
                writes.get(key, ()),
            )
        )
    return Listing(out, blobs, serde)


def list_once(saver: BaseCheckpointSaver[Any], threads: Threads) -> Listing:
    """Every checkpoint of `threads` (an id, a list of ids, None: every thread), in any order.

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> list_once(InMemorySaver(), "t").items
        []
    """
    if isinstance(saver, PostgresSaver):
        with saver_connection(saver) as conn:
            rows = _read(conn, threads)
        listing = _tuples(saver, rows)
        if listing is not None:
            return listing
    return Listing([item for config in _configs(threads) for item in saver.list(config)])


async def alist_once(saver: BaseCheckpointSaver[Any], threads: Threads) -> Listing:
    """`list_once` with the saver's async methods."""
    if isinstance(saver, AsyncPostgresSaver):
        async with asaver_connection(saver) as conn:
            rows = await _aread(conn, threads)
        listing = _tuples(saver, rows)
        if listing is not None:
            return listing
    return Listing([item for config in _configs(threads) async for item in saver.alist(config)])

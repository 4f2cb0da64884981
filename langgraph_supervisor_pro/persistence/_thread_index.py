"""A checkpoint database's threads, listed a page at a time from its tables (private).

`saver.list(None)` deserializes every checkpoint of the database to find its threads. On
Postgres and SQLite the ids come from one indexed query per page instead, and on Postgres
`each_head` reads each thread's newest root checkpoint a page at a time with only the values
its row holds inline. Other savers are scanned. Written once for the sync and async savers
(`_internal/twins.py`); retention, the review desk and `lgsp runs` list threads here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString, cast

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple, writes_sort_key
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg import AsyncCursor, Cursor
from psycopg.rows import TupleRow, tuple_row

from langgraph_supervisor_pro._internal.records import aware_time
from langgraph_supervisor_pro._internal.twins import Call, Steps, adrive, drive
from langgraph_supervisor_pro.persistence._connections import asaver_connection, saver_connection

PAGE_SIZE = 500
"""Thread ids read per query when every thread is listed."""


@dataclass(frozen=True, slots=True)
class Sql:
    """One statement on a tuple-row cursor; the reply is every row."""

    cursor: Cursor[TupleRow] | AsyncCursor[TupleRow]
    query: LiteralString
    params: tuple[Any, ...] = ()

    def run(self) -> list[TupleRow]:
        cursor = cast(Cursor[TupleRow], self.cursor)
        cursor.execute(self.query, self.params)
        return cursor.fetchall() if cursor.description else []

    async def arun(self) -> list[TupleRow]:
        cursor = cast(AsyncCursor[TupleRow], self.cursor)
        await cursor.execute(self.query, self.params)
        return await cursor.fetchall() if cursor.description else []


@dataclass(frozen=True, slots=True)
class Transaction:
    """Run `body(cursor, conn)` in one transaction on one of the saver's connections."""

    saver: PostgresSaver | AsyncPostgresSaver
    body: Any  # Callable[[cursor, conn], Steps[T]]

    def run(self) -> Any:
        with saver_connection(cast(PostgresSaver, self.saver)) as conn, conn.transaction():
            return drive(self.body(conn.cursor(row_factory=tuple_row), conn))

    async def arun(self) -> Any:
        saver = cast(AsyncPostgresSaver, self.saver)
        async with asaver_connection(saver) as conn, conn.transaction():
            return await adrive(self.body(conn.cursor(row_factory=tuple_row), conn))


_PG_HEADS: LiteralString = (
    "SELECT DISTINCT ON (thread_id) thread_id, checkpoint->>'ts' FROM checkpoints "
    "WHERE checkpoint_ns = '' AND thread_id > %s ORDER BY thread_id, checkpoint_id DESC "
    "LIMIT %s"
)
_SQLITE_THREADS = (
    "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = '' AND thread_id > ? "
    "ORDER BY thread_id LIMIT ?"
)


def indexed(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether `saver`'s threads are listed by query (Postgres, SQLite), not by a scan.

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> indexed(InMemorySaver())
        False
    """
    return isinstance(saver, PostgresSaver | AsyncPostgresSaver | SqliteSaver | AsyncSqliteSaver)


def _sqlite_threads(saver: SqliteSaver, after: str, limit: int) -> list[str]:
    with saver.cursor(transaction=False) as cur:
        return [str(row[0]) for row in cur.execute(_SQLITE_THREADS, (after, limit)).fetchall()]


async def _asqlite_threads(saver: AsyncSqliteSaver, after: str, limit: int) -> list[str]:
    await saver.setup()
    async with saver.lock, saver.conn.execute(_SQLITE_THREADS, (after, limit)) as cur:
        return [str(row[0]) for row in await cur.fetchall()]


def head_page(
    saver: BaseCheckpointSaver[Any], after: str, limit: int
) -> Steps[list[tuple[str, datetime | None]]]:
    """The next `limit` threads after `after` in id order, with their head's time on Postgres.

    Only for an `indexed` saver; a thread is listed when its root namespace has a checkpoint.
    """
    if isinstance(saver, PostgresSaver | AsyncPostgresSaver):

        def body(cur: Any, conn: Any) -> Steps[list[TupleRow]]:
            rows: list[TupleRow] = yield Sql(cur, _PG_HEADS, (after, limit))
            return rows

        rows = yield Transaction(saver, body)
        return [(str(row[0]), aware_time(row[1])) for row in rows]
    ids: list[str] = yield Call(
        lambda: _sqlite_threads(cast(SqliteSaver, saver), after, limit),
        lambda: _asqlite_threads(cast(AsyncSqliteSaver, saver), after, limit),
    )
    return [(thread, None) for thread in ids]


def indexed_heads(saver: BaseCheckpointSaver[Any]) -> Steps[list[tuple[str, datetime | None]]]:
    """Every thread of an `indexed` saver with a root checkpoint, in id order, as `head_page`."""
    heads: list[tuple[str, datetime | None]] = []
    after = ""
    while True:
        page = yield from head_page(saver, after, PAGE_SIZE)
        heads.extend(page)
        if len(page) < PAGE_SIZE:
            return heads
        after = page[-1][0]


def indexed_threads(saver: BaseCheckpointSaver[Any]) -> Steps[list[str]]:
    """The ids of `indexed_heads`."""
    return [thread for thread, _ in (yield from indexed_heads(saver))]


_HEAD_COLUMNS: LiteralString = (
    "SELECT DISTINCT ON (thread_id) thread_id, checkpoint_id, parent_checkpoint_id, "
    "checkpoint, metadata FROM checkpoints WHERE checkpoint_ns = '' "
)
_HEADS_AFTER: LiteralString = (
    _HEAD_COLUMNS + "AND thread_id > %s ORDER BY thread_id, checkpoint_id DESC LIMIT %s"
)
_HEADS_OF: LiteralString = (
    _HEAD_COLUMNS + "AND thread_id = ANY(%s) ORDER BY thread_id, checkpoint_id DESC"
)
_HEAD_WRITES: LiteralString = (
    "SELECT w.thread_id, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, "
    "w.blob FROM checkpoint_writes w JOIN unnest(%s::text[], %s::text[]) AS h(thread_id, "
    "checkpoint_id) ON w.thread_id = h.thread_id AND w.checkpoint_id = h.checkpoint_id "
    "WHERE w.checkpoint_ns = ''"
)

Take = Callable[[str, CheckpointTuple], None]
"""What `each_head` calls with each thread id and its newest root checkpoint."""


def column_text(value: object) -> str:
    """A text or BYTEA column's value as text (the savers' tables hold both)."""
    if isinstance(value, memoryview):
        return bytes(value).decode()
    return value.decode() if isinstance(value, bytes) else str(value)


def column_blob(value: object) -> Any:
    """A BYTEA column's value as `serde.loads_typed` takes it (`list` passes it as is)."""
    return bytes(value) if isinstance(value, memoryview) else value


WriteRow = tuple[object, object, object, object, object, object]
"""A pending write's columns: task_id, task_path, idx, channel, type, blob."""


def checkpoint_tuple(
    serde: Any,
    config: tuple[str, str, str],
    parent: str | None,
    checkpoint: Any,
    metadata: Any,
    writes: Iterable[WriteRow],
) -> CheckpointTuple:
    """A `CheckpointTuple` from a saver's rows, as its `list` gives it (less blob values).

    `config` is (thread id, namespace, checkpoint id); the pending writes are put in
    LangGraph's order and deserialized with `serde`.
    """
    thread, namespace, checkpoint_id = config
    configurable = {"thread_id": thread, "checkpoint_ns": namespace, "checkpoint_id": checkpoint_id}
    ordered = sorted(
        writes, key=lambda w: writes_sort_key(column_text(w[1]), column_text(w[0]), int(str(w[2])))
    )
    return CheckpointTuple(
        {"configurable": configurable},
        checkpoint,
        metadata,
        {"configurable": {**configurable, "checkpoint_id": parent}} if parent else None,
        [
            (
                column_text(w[0]),
                column_text(w[3]),
                serde.loads_typed((column_text(w[4]), column_blob(w[5]))),
            )
            for w in ordered
        ],
    )


def _head_tuples(
    saver: PostgresSaver | AsyncPostgresSaver, heads: list[TupleRow], writes: list[TupleRow]
) -> list[tuple[str, CheckpointTuple]]:
    pending: dict[tuple[str, str], list[WriteRow]] = {}
    for row in writes:  # thread_id, checkpoint_id, then the write's columns
        pending.setdefault((str(row[0]), str(row[1])), []).append(cast(WriteRow, tuple(row[2:])))
    return [
        (
            str(thread),
            checkpoint_tuple(
                saver.serde,
                (str(thread), "", str(checkpoint_id)),
                parent,
                checkpoint,
                metadata,
                pending.get((str(thread), str(checkpoint_id)), ()),
            ),
        )
        for thread, checkpoint_id, parent, checkpoint, metadata in heads
    ]


def _pg_head_page(
    saver: PostgresSaver | AsyncPostgresSaver, query: LiteralString, params: tuple[Any, ...]
) -> Steps[tuple[list[TupleRow], list[tuple[str, CheckpointTuple]]]]:
    """One page of heads (`query`) and their pending writes, in one transaction."""

    def body(cur: Any, conn: Any) -> Steps[tuple[list[TupleRow], list[TupleRow]]]:
        heads: list[TupleRow] = yield Sql(cur, query, params)
        keys = ([str(h[0]) for h in heads], [str(h[1]) for h in heads])
        writes: list[TupleRow] = (yield Sql(cur, _HEAD_WRITES, keys)) if heads else []
        return heads, writes

    heads, writes = yield Transaction(saver, body)
    return heads, _head_tuples(saver, heads, writes)


def heads_read_by_page(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether `each_head` reads `saver`'s heads a page at a time (a Postgres saver)."""
    return isinstance(saver, PostgresSaver | AsyncPostgresSaver)


def each_head(
    saver: BaseCheckpointSaver[Any], thread_ids: Sequence[str] | None, take: Take
) -> Steps[None]:
    """`take(thread_id, newest root checkpoint)` for every thread, or for `thread_ids`.

    Only for a saver `heads_read_by_page` accepts; `PAGE_SIZE` threads per page (every
    thread in id order; `thread_ids` in their order, one without a root checkpoint
    skipped). The checkpoint's `channel_values` hold only the values stored inline in its
    row; its pending writes are all there.
    """
    pg = cast(PostgresSaver | AsyncPostgresSaver, saver)
    if thread_ids is not None:
        for start in range(0, len(thread_ids), PAGE_SIZE):
            chunk = list(thread_ids[start : start + PAGE_SIZE])
            _, found = yield from _pg_head_page(pg, _HEADS_OF, (chunk,))
            by_id = dict(found)
            for thread in chunk:
                if thread in by_id:
                    take(thread, by_id[thread])
        return
    after = ""
    while True:
        heads, found = yield from _pg_head_page(pg, _HEADS_AFTER, (after, PAGE_SIZE))
        for thread, item in found:
            take(thread, item)
        if len(heads) < PAGE_SIZE:
            return
        after = str(heads[-1][0])


def _scanned(items: list[CheckpointTuple]) -> list[str]:
    return sorted({str(i.config["configurable"]["thread_id"]) for i in items})


async def _ascan(saver: BaseCheckpointSaver[Any]) -> list[str]:
    return _scanned([item async for item in saver.alist(None)])


def scan(saver: BaseCheckpointSaver[Any]) -> Call:
    """Every thread id of a saver that is not `indexed`, from `list(None)` (memory, others)."""
    return Call(lambda: _scanned(list(saver.list(None))), lambda: _ascan(saver))

"""A checkpoint database's threads, listed a page at a time from its tables (private).

Reading every checkpoint to find the threads (`saver.list(None)`) costs the whole
database: every checkpoint of every namespace, its blobs and its writes, deserialized.
A thousand threads of three hundred hops is hundreds of thousands of checkpoints, for a
list of a thousand ids. On Postgres and SQLite the ids come from one indexed query per
page instead (`thread_id > last ORDER BY thread_id LIMIT n`, root namespace only), and
the caller reads each thread's newest checkpoint with `get_tuple` if it needs it. Other
savers (memory, a saver of another library) have no tables to ask: they are scanned.

Written once for the sync and async savers (`_internal/twins.py`). Retention, the review
desk and `lgsp runs` list threads through here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString, cast

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
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

# -- Postgres I/O ----------------------------------------------------------------------------


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


# -- one page of threads -----------------------------------------------------------------------

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


def _pg_heads(
    saver: PostgresSaver | AsyncPostgresSaver, after: str, limit: int
) -> Steps[list[tuple[str, datetime | None]]]:
    def body(cur: Any, conn: Any) -> Steps[list[TupleRow]]:
        rows: list[TupleRow] = yield Sql(cur, _PG_HEADS, (after, limit))
        return rows

    rows = yield Transaction(saver, body)
    return [(str(row[0]), aware_time(row[1])) for row in rows]


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

    Only for an `indexed` saver. A thread is listed when its root namespace has a
    checkpoint; the time is the newest root checkpoint's `ts` (None on SQLite).
    """
    if isinstance(saver, PostgresSaver | AsyncPostgresSaver):
        return (yield from _pg_heads(saver, after, limit))
    ids: list[str] = yield Call(
        lambda: _sqlite_threads(cast(SqliteSaver, saver), after, limit),
        lambda: _asqlite_threads(cast(AsyncSqliteSaver, saver), after, limit),
    )
    return [(thread, None) for thread in ids]


def indexed_heads(saver: BaseCheckpointSaver[Any]) -> Steps[list[tuple[str, datetime | None]]]:
    """Every thread of an `indexed` saver with a root checkpoint, in id order, as `head_page`.

    `PAGE_SIZE` threads per query, each page after the last id of the one before.
    """
    size = PAGE_SIZE
    heads: list[tuple[str, datetime | None]] = []
    after = ""
    while True:
        page = yield from head_page(saver, after, size)
        heads.extend(page)
        if len(page) < size:
            return heads
        after = page[-1][0]


def indexed_threads(saver: BaseCheckpointSaver[Any]) -> Steps[list[str]]:
    """The ids of `indexed_heads`."""
    return [thread for thread, _ in (yield from indexed_heads(saver))]


# -- any other saver -------------------------------------------------------------------------


def _scanned(items: list[CheckpointTuple]) -> list[str]:
    return sorted({str(i.config["configurable"]["thread_id"]) for i in items})


async def _ascan(saver: BaseCheckpointSaver[Any]) -> list[str]:
    return _scanned([item async for item in saver.alist(None)])


def scan(saver: BaseCheckpointSaver[Any]) -> Call:
    """Every thread id of a saver that is not `indexed`, from `list(None)` (memory, others)."""
    return Call(lambda: _scanned(list(saver.list(None))), lambda: _ascan(saver))

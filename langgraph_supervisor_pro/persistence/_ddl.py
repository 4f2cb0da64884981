"""Setup that never waits on running work: skip applied DDL, bound every lock wait (private).

Applied DDL is skipped after a look at the catalog, which takes no lock; DDL that must run
sets `lock_timeout` for its transaction, so a table held elsewhere fails the open promptly
with `SetupLockError` (naming the sessions holding the lock) instead of stalling it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, LiteralString

from psycopg import AsyncConnection, Connection, sql
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_supervisor_pro.errors import SetupLockError

LOCK_TIMEOUT: LiteralString = "SELECT set_config('lock_timeout', %s, true)"
"""`SET LOCAL lock_timeout` with a parameter: for the current transaction only."""

BLOCKERS: LiteralString = (
    "SELECT DISTINCT a.pid, a.state, a.application_name, a.query "
    "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
    "WHERE l.granted AND l.pid <> pg_backend_pid() AND ("
    " (l.locktype = 'relation' AND l.relation = to_regclass(%s))"
    " OR (l.locktype = 'advisory' AND l.objsubid = 1"
    "  AND ((l.classid::bigint << 32) | l.objid::bigint) = %s::bigint)) "
    "ORDER BY a.pid"
)
"""The sessions holding a lock on a relation, or an advisory lock on a bigint key."""


def lock_timeout_params(seconds: float) -> tuple[str]:
    """The parameter of `LOCK_TIMEOUT` for `seconds` (whole milliseconds, at least 1)."""
    return (f"{max(1, round(seconds * 1000))}ms",)


def setup_lock_error(what: str, seconds: float, rows: Sequence[Any]) -> SetupLockError:
    """The error of a setup that timed out, from the rows of `BLOCKERS`."""
    return SetupLockError(
        what,
        seconds,
        [tuple(row.values()) if isinstance(row, dict) else tuple(row) for row in rows],
    )


def set_up_lock_error(
    conn: Connection[Any], what: LiteralString, key: LiteralString, seconds: float
) -> SetupLockError:
    """The `SetupLockError` of `what`'s setup, naming who holds its table or advisory `key`.

    Called on `conn` once the setup's transaction failed with `LockNotAvailable`.
    """
    cur = conn.cursor(row_factory=tuple_row)
    found = cur.execute("SELECT (" + key + ")::bigint").fetchone()
    rows = cur.execute(BLOCKERS, (what, found[0] if found else 0)).fetchall()
    return setup_lock_error(what, seconds, rows)


async def aset_up_lock_error(
    conn: AsyncConnection[Any], what: LiteralString, key: LiteralString, seconds: float
) -> SetupLockError:
    """Async twin of `set_up_lock_error`."""
    cur = conn.cursor(row_factory=tuple_row)
    found = await (await cur.execute("SELECT (" + key + ")::bigint")).fetchone()
    rows = await (await cur.execute(BLOCKERS, (what, found[0] if found else 0))).fetchall()
    return setup_lock_error(what, seconds, rows)


_HAS_TABLE: LiteralString = "SELECT to_regclass(%s) IS NOT NULL"


def _migrations_of(backend: object) -> tuple[str, int] | None:
    """(migrations table, how many migrations this version has), None when not known."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.store.postgres import AsyncPostgresStore, PostgresStore

    if isinstance(backend, (PostgresSaver, AsyncPostgresSaver)):
        return "checkpoint_migrations", len(backend.MIGRATIONS)
    if isinstance(backend, (PostgresStore, AsyncPostgresStore)):
        if getattr(backend, "index_config", None):  # vector migrations too: let it look
            return None
        return "store_migrations", len(backend.MIGRATIONS)
    return None


def _latest(table: str) -> sql.Composed:
    return sql.SQL("SELECT coalesce(max(v), -1) FROM {}").format(sql.Identifier(table))


def _row_value(row: Any) -> Any:
    if row is None:
        return None
    return next(iter(row.values())) if isinstance(row, dict) else row[0]


def migrations_applied(pool: ConnectionPool[Any], backend: object) -> bool:
    """Whether LangGraph's `setup()` of `backend` has nothing left to do (no lock taken).

    True when the backend's migrations table has the last migration this LangGraph version
    knows; False when it cannot tell.
    """
    found = _migrations_of(backend)
    if found is None:
        return False
    table, count = found
    with pool.connection() as conn:
        if not _row_value(conn.execute(_HAS_TABLE, (table,)).fetchone()):
            return False
        latest = _row_value(conn.execute(_latest(table)).fetchone())
    return isinstance(latest, int) and latest >= count - 1


async def amigrations_applied(pool: AsyncConnectionPool[Any], backend: object) -> bool:
    """Async twin of `migrations_applied`."""
    found = _migrations_of(backend)
    if found is None:
        return False
    table, count = found
    async with pool.connection() as conn:
        if not _row_value(await (await conn.execute(_HAS_TABLE, (table,))).fetchone()):
            return False
        latest = _row_value(await (await conn.execute(_latest(table))).fetchone())
    return isinstance(latest, int) and latest >= count - 1

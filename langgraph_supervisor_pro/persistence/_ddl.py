"""Setup that never waits on running work: skip applied DDL, bound every lock wait (private).

Opening effects, leases, stores or checkpointers runs their setup. DDL that is already
applied is skipped after a look at the catalog (`to_regclass`, `pg_attribute`, a
migrations table), which takes no lock. DDL that must run sets `lock_timeout` for its
transaction (`SET LOCAL`), so a table held by a long transaction elsewhere (an effect in
flight keeps `lgsp_effects` row-locked) fails the open promptly with `SetupLockError`,
which names the sessions holding the lock (pid, state, application, query), instead of
stalling every new worker at start-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, LiteralString

from psycopg import AsyncConnection, Connection, sql
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_supervisor_pro.errors import SetupLockError

__all__ = [
    "BLOCKERS",
    "LOCK_TIMEOUT",
    "amigrations_applied",
    "aset_up_lock_error",
    "lock_timeout_params",
    "migrations_applied",
    "set_up_lock_error",
    "setup_lock_error",
]

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
    """The parameter of `LOCK_TIMEOUT` for `seconds` (whole milliseconds, at least 1).

    Example:
        >>> lock_timeout_params(2.5)
        ('2500ms',)
    """
    return (f"{max(1, round(seconds * 1000))}ms",)


def setup_lock_error(what: str, seconds: float, rows: Sequence[Any]) -> SetupLockError:
    """The error of a setup that timed out, from the rows of `BLOCKERS`.

    Example:
        >>> setup_lock_error("lgsp_effects", 2, []).holders
        []
    """
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

    Example:
        ```python
        except LockNotAvailable:
            raise set_up_lock_error(conn, "lgsp_effects", "hashtext('lgsp_effects')", 5) from None
        ```
    """
    cur = conn.cursor(row_factory=tuple_row)
    found = cur.execute("SELECT (" + key + ")::bigint").fetchone()
    rows = cur.execute(BLOCKERS, (what, found[0] if found else 0)).fetchall()
    return setup_lock_error(what, seconds, rows)


async def aset_up_lock_error(
    conn: AsyncConnection[Any], what: LiteralString, key: LiteralString, seconds: float
) -> SetupLockError:
    """Async twin of `set_up_lock_error`.

    Example:
        ```python
        except LockNotAvailable:
            raise await aset_up_lock_error(conn, "lgsp_effects", key_sql, 5) from None
        ```
    """
    cur = conn.cursor(row_factory=tuple_row)
    found = await (await cur.execute("SELECT (" + key + ")::bigint")).fetchone()
    rows = await (await cur.execute(BLOCKERS, (what, found[0] if found else 0))).fetchall()
    return setup_lock_error(what, seconds, rows)


# -- LangGraph's own migrations ------------------------------------------------------------

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

    Reads the backend's own migrations table (`checkpoint_migrations`, `store_migrations`):
    when its newest version is the last migration this LangGraph version knows, `setup()`
    would only run `CREATE TABLE IF NOT EXISTS` and a select, so it is skipped, and so is
    the wait for another process's setup (`setup_lock`). False when it cannot tell.
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

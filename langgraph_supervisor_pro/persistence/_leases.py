"""One writer per thread: a run-scoped lease on a thread, and the error a second writer gets.

On Postgres the lease is a session-level advisory lock on a connection of its own (released
when the holder exits or is killed, within `expire_after` seconds when its host dies: the
session's TCP keepalives); a row in `lgsp_thread_leases` shows operators who holds it (trust
the lock, not the row). On memory and SQLite it is a process-local lock.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/leases/
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal, LiteralString, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from psycopg import AsyncConnection, Connection
from psycopg.errors import LockNotAvailable
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_supervisor_pro._internal.checks import check_seconds
from langgraph_supervisor_pro._internal.storable import check_thread_id
from langgraph_supervisor_pro._internal.text import shown_id, truncate
from langgraph_supervisor_pro._internal.twins import Call, Sleep, Steps, adrive, drive
from langgraph_supervisor_pro.errors import ThreadBusyError
from langgraph_supervisor_pro.persistence._connections import (
    DEFAULT_CONNECT_TIMEOUT,
    connection_error,
    libpq_timeout,
    sqlite_path,
    validate_options,
)
from langgraph_supervisor_pro.persistence._ddl import (
    LOCK_TIMEOUT,
    aset_up_lock_error,
    lock_timeout_params,
    set_up_lock_error,
)

logger = logging.getLogger("langgraph_supervisor_pro.persistence.leases")  # stable across moves

DEFAULT_EXPIRE_AFTER = 30.0
"""Seconds within which Postgres releases the lease of a holder whose host died."""
MIN_EXPIRE_AFTER = 4.0
MAX_EXPIRE_AFTER = 3600.0
"""Linux caps a TCP keepalive idle time at 32767 s; an hour is plenty."""
KEEPALIVE_COUNT = 3
LEASE_TABLE = "lgsp_thread_leases"
"""Where holders are shown to operators (the advisory lock is the authority)."""
FORK_KEY = "lgsp_fork"
"""`configurable[FORK_KEY] = True` lets one call store a deliberate fork (time travel)."""

_LEASE_KEY: LiteralString = "hashtextextended('lgsp_lease:' || %s, 0)"
_FENCE_KEY: LiteralString = "hashtextextended('lgsp_fence:' || %s, 0)"
_SETUP_KEY: LiteralString = "hashtextextended('lgsp_thread_leases:setup', 0)"
_SETUP_LOCK: LiteralString = "SELECT pg_advisory_xact_lock(" + _SETUP_KEY + ")"
_CREATE: LiteralString = (
    "CREATE TABLE IF NOT EXISTS lgsp_thread_leases (thread_id text PRIMARY KEY, "
    "owner text NOT NULL, acquired_at timestamptz NOT NULL, backend_pid integer NOT NULL)"
)
_TRY: LiteralString = "SELECT pg_try_advisory_lock(" + _LEASE_KEY + ")"
_LOCK: LiteralString = "SELECT pg_advisory_lock(" + _LEASE_KEY + ")"
_UNLOCK: LiteralString = "SELECT pg_advisory_unlock(" + _LEASE_KEY + ")"
_RECORD: LiteralString = (
    "INSERT INTO lgsp_thread_leases (thread_id, owner, acquired_at, backend_pid) "
    "VALUES (%s, %s, now(), pg_backend_pid()) ON CONFLICT (thread_id) DO UPDATE SET "
    "owner = EXCLUDED.owner, acquired_at = EXCLUDED.acquired_at, "
    "backend_pid = EXCLUDED.backend_pid RETURNING acquired_at"
)
_FORGET: LiteralString = (
    "DELETE FROM lgsp_thread_leases WHERE thread_id = %s AND backend_pid = pg_backend_pid()"
)
_HOLDER: LiteralString = (
    "SELECT owner, acquired_at FROM lgsp_thread_leases "
    "WHERE to_regclass('lgsp_thread_leases') IS NOT NULL AND thread_id = %s"
)
_HOLDER_SAFE: LiteralString = "SELECT to_regclass('lgsp_thread_leases') IS NOT NULL AS present"
_KEEPALIVES: LiteralString = (
    "SELECT set_config('tcp_keepalives_idle', %s, false), "
    "set_config('tcp_keepalives_interval', %s, false), "
    "set_config('tcp_keepalives_count', %s, false)"
)
_USER_TIMEOUT: LiteralString = "SELECT set_config('tcp_user_timeout', %s, false)"
_APPLICATION_NAME: LiteralString = "SELECT set_config('application_name', %s, false)"
_LOCK_TIMEOUT: LiteralString = "SELECT set_config('lock_timeout', %s, false)"
_POLL = 0.05
"""Seconds between two looks at a process-local lease while waiting for it."""


@dataclass(frozen=True)
class ThreadLease:
    """A lease held on one thread (what `thread_lease` yields).

    Example:
        >>> with thread_lease("memory", "t-1", owner="docs") as lease:
        ...     lease.backend, lease.expires_within
        ('local', None)
    """

    thread_id: str
    owner: str
    """`host:pid` unless given."""
    acquired_at: datetime
    """The database's clock on Postgres."""
    backend: Literal["postgres", "local"]
    """`postgres` (an advisory lock, across processes) or `local` (this process only)."""
    expires_within: float | None
    """Seconds within which Postgres releases the lease of a holder whose host died
    (keepalive idle + interval x count); None for a process-local lease."""


@dataclass(frozen=True)
class _Options:
    thread_id: str
    wait: float | None
    owner: str
    expire_after: float
    connect_timeout: float

    @property
    def keepalives(self) -> tuple[int, int, int]:
        """(idle, interval, count) in whole seconds, adding up to at most `expire_after`."""
        interval = max(1, int(self.expire_after // (2 * KEEPALIVE_COUNT)))
        idle = max(1, int(self.expire_after - KEEPALIVE_COUNT * interval))
        return idle, interval, KEEPALIVE_COUNT

    @property
    def expires_within(self) -> float:
        idle, interval, count = self.keepalives
        return float(idle + interval * count)


def _text(value: object, field: str, fix: str) -> str:
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise ValueError(f"{field}: got {truncate(repr(value), 60)}; {fix}")
    return value


def _options(
    thread_id: object,
    wait: object,
    owner: object,
    expire_after: object,
    connect_timeout: object,
    where: str,
) -> _Options:
    tid = _text(thread_id, f"{where} thread_id", "give the run's non-empty thread id")
    # A thread id no database can encode (a surrogate): said as such, not as an encoding
    # error from the lease's `application_name`.
    check_thread_id(tid, f"{where} thread_id")
    waited = None if wait is None else check_seconds(
        wait, f"{where} wait", zero=True, fix=", or None to fail at once when the thread is busy"
    )  # fmt: skip
    who = f"{socket.gethostname()}:{os.getpid()}" if owner is None else owner
    who = _text(who, f"{where} owner", "give a non-empty name (no NUL), or None for host:pid")
    if len(who) > 200:
        raise ValueError(f"{where} owner: {len(who)} characters; give at most 200")
    expiry = check_seconds(
        expire_after,
        f"{where} expire_after",
        maximum=MAX_EXPIRE_AFTER,
        fix=f" (and at least {MIN_EXPIRE_AFTER:g})",
    )
    if expiry < MIN_EXPIRE_AFTER:
        raise ValueError(
            f"{where} expire_after: got {expire_after!r}; give at least {MIN_EXPIRE_AFTER:g} "
            "seconds (TCP keepalives count whole seconds)"
        )
    timeout = check_seconds(connect_timeout, f"{where} connect_timeout")
    return _Options(tid, waited, who, expiry, timeout)


def _pool_url(pool: ConnectionPool[Any] | AsyncConnectionPool[Any]) -> str:
    url = getattr(pool, "url", None)
    if isinstance(url, str):
        return url
    if isinstance(pool.conninfo, str):
        return pool.conninfo
    raise TypeError("thread_lease: the checkpointer's pool computes its conninfo; pass the URL")


def resolve_target(db: object, where: str) -> tuple[str, str]:
    """`("postgres", url)` or `("local", scope)` for a URL, a checkpointer or a graph."""
    if isinstance(db, Pregel):
        saver = db.checkpointer
        if not isinstance(saver, BaseCheckpointSaver):
            raise TypeError(
                f"{where}: the graph has no checkpointer of its own; compile it with "
                "checkpointer=... or pass the checkpointer (or its URL)"
            )
        db = saver
    if isinstance(db, str):
        kind = validate_options(db, 1, DEFAULT_CONNECT_TIMEOUT)
        if kind == "postgres":
            return "postgres", db.strip()
        if kind == "sqlite":
            return "local", f"sqlite:{sqlite_path(db)}"
        return "local", "memory"
    if isinstance(db, BaseCheckpointSaver):
        conn = getattr(db, "conn", None)
        if isinstance(conn, ConnectionPool | AsyncConnectionPool):
            return "postgres", _pool_url(conn)
        if isinstance(conn, Connection | AsyncConnection):
            raise TypeError(
                f"{where}: a Postgres checkpointer over a single connection does not say "
                "its password; pass the database URL instead"
            )
        return "local", f"saver:{id(db)}"
    raise TypeError(
        f"{where}: got {type(db).__name__}; give a database URL, the checkpointer "
        "open_checkpointer opened, or a graph compiled with it"
    )


_local_guard = threading.Lock()
_local_holders: dict[tuple[str, str], str] = {}


def _local_try(scope: str, opts: _Options) -> str | None:
    """Take the local lease; return None, or the holder when it is taken."""
    with _local_guard:
        key = (scope, opts.thread_id)
        holder = _local_holders.get(key)
        if holder is not None:
            return holder
        _local_holders[key] = opts.owner
        return None


def _local_take(scope: str, opts: _Options) -> Steps[ThreadLease]:
    """Take the local lease, polling until `opts.wait` runs out (then ThreadBusyError)."""
    deadline = time.monotonic() + (opts.wait or 0.0)
    while (holder := _local_try(scope, opts)) is not None:
        if time.monotonic() >= deadline:
            raise _busy(opts, holder)
        yield Sleep(_POLL)
    return ThreadLease(opts.thread_id, opts.owner, datetime.now(UTC), "local", None)


def _local_release(scope: str, opts: _Options) -> None:
    with _local_guard:
        _local_holders.pop((scope, opts.thread_id), None)


_setup_done: set[str] = set()
_setup_guard = threading.Lock()


@dataclass(frozen=True, slots=True)
class _Sql:
    """One statement on a connection (sync or async); the reply is its first row.

    Every statement here but the DELETE returns rows. Not told by `description`: in a
    pipeline (the fence's) that is unknown until the result is fetched.
    """

    conn: Connection[Any] | AsyncConnection[Any]
    query: LiteralString
    params: tuple[Any, ...] | None = None

    def run(self) -> Any:
        cur = cast(Connection[Any], self.conn).execute(self.query, self.params)
        return None if self.query.startswith("DELETE") else cur.fetchone()

    async def arun(self) -> Any:
        cur = await cast(AsyncConnection[Any], self.conn).execute(self.query, self.params)
        return None if self.query.startswith("DELETE") else await cur.fetchone()


def _create(conn: Connection[Any], seconds: float) -> None:
    """The holders' table's DDL in one transaction, waiting at most `seconds` for its locks."""
    with conn.transaction():
        conn.execute(LOCK_TIMEOUT, lock_timeout_params(seconds))
        conn.execute(_SETUP_LOCK)
        conn.execute(_CREATE)


async def _acreate(conn: AsyncConnection[Any], seconds: float) -> None:
    async with conn.transaction():
        await conn.execute(LOCK_TIMEOUT, lock_timeout_params(seconds))
        await conn.execute(_SETUP_LOCK)
        await conn.execute(_CREATE)


def _busy(opts: _Options, holder: str | None) -> ThreadBusyError:
    waited = f" for {opts.wait:g} s" if opts.wait else ""
    held = f"held by {holder}" if holder else "held by another writer"
    return ThreadBusyError(
        opts.thread_id,
        holder,
        f"thread {shown_id(opts.thread_id)} is busy: its lease is {held}"
        f"{'; waited' + waited if waited else ''}. Wait for the run to finish "
        "(thread_lease(..., wait=SECONDS) waits for the lease), or run another thread.",
    )


def _connect(url: str, opts: _Options) -> Connection[Any]:
    try:
        return Connection.connect(
            url, autocommit=True, connect_timeout=libpq_timeout(opts.connect_timeout)
        )
    except Exception as exc:
        reason = str(exc) or type(exc).__name__
    raise connection_error(url, reason)  # outside the `except`: see `connection_error`


async def _aconnect(url: str, opts: _Options) -> AsyncConnection[Any]:
    try:
        return await AsyncConnection.connect(
            url, autocommit=True, connect_timeout=libpq_timeout(opts.connect_timeout)
        )
    except Exception as exc:
        reason = str(exc) or type(exc).__name__
    raise connection_error(url, reason)


def _settings(conn: Connection[Any] | AsyncConnection[Any], opts: _Options) -> list[Any]:
    """The (sql, params) pairs that set the session's keepalives and `application_name`.

    The name shows the lease in `pg_stat_activity` (`lgsp lease <thread>`, in 63 bytes).
    """
    idle, interval, count = opts.keepalives
    name = f"lgsp lease {opts.thread_id}".encode()[:63].decode(errors="ignore")
    steps: list[Any] = [
        (_KEEPALIVES, (str(idle), str(interval), str(count))),
        (_APPLICATION_NAME, (name,)),
    ]
    if conn.info.server_version >= 120000:
        steps.append((_USER_TIMEOUT, (str(int(opts.expires_within * 1000)),)))
    return steps


def _setup(conn: Connection[Any] | AsyncConnection[Any], url: str, seconds: float) -> Steps[None]:
    """Create the holders' table unless the catalog shows it (a look that takes no lock).

    The DDL waits at most `seconds` for its locks (then `SetupLockError` names the holders).
    """
    with _setup_guard:
        if url in _setup_done:
            return
    if not _took((yield _Sql(conn, _HOLDER_SAFE))):
        c: Any = conn
        try:
            yield Call(partial(_create, c, seconds), partial(_acreate, c, seconds))
        except LockNotAvailable:
            args = (c, LEASE_TABLE, _SETUP_KEY, seconds)
            raise (
                yield Call(partial(set_up_lock_error, *args), partial(aset_up_lock_error, *args))
            ) from None
    with _setup_guard:
        _setup_done.add(url)


def _took(row: Any) -> bool:
    """Whether a row's first value is true (any row factory; no row: false)."""
    if isinstance(row, dict):
        return bool(next(iter(row.values()), False))
    return bool(row and row[0])


def _acquire(conn: Connection[Any] | AsyncConnection[Any], opts: _Options) -> Steps[bool]:
    if not opts.wait:
        return _took((yield _Sql(conn, _TRY, (opts.thread_id,))))
    yield _Sql(conn, _LOCK_TIMEOUT, (str(max(1, int(opts.wait * 1000))),))
    try:
        yield _Sql(conn, _LOCK, (opts.thread_id,))
    except LockNotAvailable:
        took = False
    else:
        took = True
    # Any other failure leaves the connection to be closed, which resets it anyway.
    with contextlib.suppress(Exception):
        yield _Sql(conn, _LOCK_TIMEOUT, ("0",))
    return took


def _holder(conn: Connection[Any] | AsyncConnection[Any], thread_id: str) -> Steps[str | None]:
    if not _took((yield _Sql(conn, _HOLDER_SAFE))):
        return None
    row = yield _Sql(conn, _HOLDER, (thread_id,))
    if row is None:
        return None
    return str(row["owner"] if isinstance(row, dict) else row[0])


def lease_holder(conn: Connection[Any], thread_id: str) -> str | None:
    """Who holds `thread_id`'s lease (e.g. `host:pid`), as its row says, or None."""
    return drive(_holder(conn, thread_id))


async def alease_holder(conn: AsyncConnection[Any], thread_id: str) -> str | None:
    """Async twin of :func:`lease_holder`."""
    return await adrive(_holder(conn, thread_id))


def _release(conn: Connection[Any] | AsyncConnection[Any], opts: _Options) -> Steps[None]:
    """Delete the row and unlock (the caller closes); a lost connection already released it."""
    try:
        if not conn.closed and not conn.broken:
            yield _Sql(conn, _FORGET, (opts.thread_id,))
            yield _Sql(conn, _UNLOCK, (opts.thread_id,))
    except Exception as exc:  # the lock goes with the session anyway
        logger.warning(
            "thread %s: releasing the lease failed (%s); the connection is closed, "
            "which releases it",
            shown_id(opts.thread_id),
            type(exc).__name__,
        )


def _lease(conn: Connection[Any] | AsyncConnection[Any], url: str, opts: _Options) -> Steps[Any]:
    """Prepare the session, take the lock (or raise ThreadBusyError), record the holder."""
    for statement, params in _settings(conn, opts):
        yield _Sql(conn, statement, params)
    yield from _setup(conn, url, opts.connect_timeout)
    if not (yield from _acquire(conn, opts)):
        raise _busy(opts, (yield from _holder(conn, opts.thread_id)))
    row = yield _Sql(conn, _RECORD, (opts.thread_id, opts.owner))
    acquired = row[0] if row else datetime.now(UTC)
    return ThreadLease(opts.thread_id, opts.owner, acquired, "postgres", opts.expires_within)


def _postgres_lease(conn: Connection[Any], url: str, opts: _Options) -> ThreadLease:
    return cast(ThreadLease, drive(_lease(conn, url, opts)))


@contextmanager
def thread_lease(
    db: str | BaseCheckpointSaver[Any] | Pregel[Any, Any, Any, Any],
    thread_id: str,
    *,
    wait: float | None = None,
    owner: str | None = None,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> Iterator[ThreadLease]:
    """Hold the one-writer lease of `thread_id` for the block (a run), or raise ThreadBusyError.

    Args:
        db: Where the thread lives: a database URL (`postgresql://...`, `sqlite:///...`,
            `memory`), the checkpointer `open_checkpointer` opened, or a graph compiled
            with it. Postgres: an advisory lock across processes, on a connection of the
            lease's own; otherwise a lock within this process only.
        thread_id: The thread the run writes.
        wait: None (default) or 0 to raise `ThreadBusyError` at once when another
            writer holds the lease; seconds to wait for it first (a finite number >= 0).
        owner: Who holds the lease, shown to operators and in the error a second
            caller gets (default `host:pid`).
        expire_after: Seconds (4 to 3600, default 30) within which Postgres releases
            the lease of a holder whose host died or whose network was cut (the
            session's TCP keepalives). A killed process's lease is released at once.
        connect_timeout: Seconds to wait for Postgres when connecting (finite, > 0).

    Yields:
        The lease (thread, owner, when, backend).

    Raises:
        ThreadBusyError: Another writer holds the lease (after `wait`, if given).
        ValueError: An option is out of range (the message names it).
        TypeError: `db` is none of the accepted kinds.
        ConnectionError: Postgres cannot be reached (password masked).

    Example:
        >>> from langgraph.graph import START, StateGraph
        >>> from langgraph_supervisor_pro import open_checkpointer
        >>> builder = StateGraph(int)
        >>> _ = builder.add_node("inc", lambda x: x + 1).add_edge(START, "inc")
        >>> with open_checkpointer("memory") as saver:
        ...     app = builder.compile(checkpointer=saver)
        ...     with thread_lease(app, "t-1"):
        ...         app.invoke(1, {"configurable": {"thread_id": "t-1"}})
        2
    """
    opts = _options(thread_id, wait, owner, expire_after, connect_timeout, "thread_lease")
    kind, target = resolve_target(db, "thread_lease")
    if kind == "local":
        lease = drive(_local_take(target, opts))
        try:
            yield lease
        finally:
            _local_release(target, opts)
        return
    conn = _connect(target, opts)
    try:
        lease = _postgres_lease(conn, target, opts)
        try:
            yield lease
        finally:
            drive(_release(conn, opts))
    finally:
        conn.close()


@asynccontextmanager
async def athread_lease(
    db: str | BaseCheckpointSaver[Any] | Pregel[Any, Any, Any, Any],
    thread_id: str,
    *,
    wait: float | None = None,
    owner: str | None = None,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> AsyncIterator[ThreadLease]:
    """Async twin of :func:`thread_lease` (same arguments): for `ainvoke` / `astream` runs.

    Example:
        >>> import asyncio
        >>> async def main() -> str:
        ...     async with athread_lease("memory", "t-1", owner="docs") as lease:
        ...         return lease.owner
        >>> asyncio.run(main())
        'docs'
    """
    opts = _options(thread_id, wait, owner, expire_after, connect_timeout, "athread_lease")
    kind, target = resolve_target(db, "athread_lease")
    if kind == "local":
        lease = await adrive(_local_take(target, opts))
        try:
            yield lease
        finally:
            _local_release(target, opts)
        return
    conn = await _aconnect(target, opts)
    try:
        lease = await adrive(_lease(conn, target, opts))
        try:
            yield lease
        finally:
            await adrive(_release(conn, opts))
    finally:
        await conn.close()

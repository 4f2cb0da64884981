"""Connections behind the openers (private to `persistence`): URL forms, pools, probes.

Every wait for Postgres (opening, and later reads and writes through the pool) is bounded
by `connect_timeout`, and no error shows the URL's password, in its message or in the
exceptions chained to it.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, closing, contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal, cast

import aiosqlite
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncConnection, Connection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from langgraph_supervisor_pro._internal.checks import check_seconds
from langgraph_supervisor_pro._internal.urls import (
    agreed_reading,
    driver_reason,
    mask_url,
    scheme_of,
)
from langgraph_supervisor_pro.persistence._ddl import amigrations_applied, migrations_applied

DEFAULT_POOL_SIZE = 10
DEFAULT_CONNECT_TIMEOUT = 10.0
POSTGRES_SCHEMES = ("postgresql", "postgres")
SQLITE_PREFIX = "sqlite:///"
SQLITE_MEMORY = ":memory:"
POOL_KWARGS = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
ACCEPTED_FORMS = (
    "'memory', 'sqlite:///relative/path.db', 'sqlite:////absolute/path.db', "
    "'sqlite:///:memory:', 'postgresql://user:password@host:5432/dbname' "
    "(or 'postgres://...')"
)


def describe_target(url: str) -> str:
    """Describe the host, port and database a Postgres URL points at (no password).

    Shown only when libpq reads the masked URL the same way (`agreed_reading`): otherwise
    any of them may hold a piece of the password, and the masked URL alone is shown.
    """
    shown = mask_url(url)
    params = agreed_reading(url)
    if params is None:
        return shown
    host = params.get("host") or params.get("hostaddr") or "localhost"
    port = params.get("port") or 5432
    dbname = params.get("dbname") or params.get("user") or "(default)"
    return f"{shown} (host={host}, port={port}, dbname={dbname})"


def connection_error(url: str, reason: str, *, driver: bool = True) -> ConnectionError:
    """Build the error raised when a Postgres server cannot be reached.

    Raise it outside the `except` block that caught the driver's error: the driver's
    message may quote the whole URL, and an exception raised inside the block keeps the
    one it handles as its `__context__` (even with `from None`, which only hides it).
    `reason` is the driver's message (shown as `driver_reason` allows) unless
    `driver=False` (a message of ours).
    """
    shown = driver_reason(url, reason) if driver else reason.strip()
    return ConnectionError(
        f"Could not connect to Postgres at {describe_target(url)}: {shown}\n"
        "Hint: check that the Postgres server is running and reachable, and that the URL "
        "(for example the LGSP_POSTGRES_URI environment variable) has the right host, port, "
        "database, user and password (percent-encode any of / : @ ? # [ ] % in them)."
    )


def validate_options(url: str, pool_size: int, connect_timeout: float) -> str:
    """Check the options shared by both openers and return the backend kind."""
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, got {type(url).__name__}")
    if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
        raise ValueError(f"pool_size must be an integer >= 1, got {pool_size!r}")
    if isinstance(connect_timeout, timedelta):  # passed on to the drivers as a number
        raise ValueError(
            f"connect_timeout: got {connect_timeout!r}; give a number of seconds, e.g. "
            f"{connect_timeout.total_seconds():g}"
        )
    check_seconds(connect_timeout, "connect_timeout")
    stripped = url.strip()
    if stripped == "memory":
        return "memory"
    scheme = scheme_of(stripped)
    if scheme in POSTGRES_SCHEMES:
        if not stripped[len(scheme) :].startswith("://"):
            # libpq would read it as `key=value` settings and quote it whole in its error.
            raise ValueError(
                f"Unsupported checkpointer `url` {mask_url(stripped)!r}: a Postgres URL "
                f"starts with '{scheme}://'; accepted forms: {ACCEPTED_FORMS}"
            )
        return "postgres"
    if scheme == "sqlite" and stripped.lower().startswith(SQLITE_PREFIX):
        if not stripped[len(SQLITE_PREFIX) :]:
            raise ValueError(
                "checkpointer `url` 'sqlite:///' has no database path; accepted forms: "
                + ACCEPTED_FORMS
            )
        return "sqlite"
    got = f"scheme {scheme!r}" if scheme else "no scheme"
    if scheme == "sqlite":
        got = "a 'sqlite:' URL without the 'sqlite:///' prefix"
    raise ValueError(f"Unsupported checkpointer `url`: got {got}; accepted forms: {ACCEPTED_FORMS}")


def sqlite_path(url: str) -> str:
    """Return the SQLite database path of a ``sqlite:///`` URL, creating parent dirs."""
    path = url.strip()[len(SQLITE_PREFIX) :]
    if path != SQLITE_MEMORY:
        Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        path = str(Path(path).expanduser())
    return path


def libpq_timeout(connect_timeout: float) -> int:
    """The `connect_timeout` libpq is given: whole seconds, and it takes less than 2 as 2."""
    return max(2, round(connect_timeout))


def _connect(url: str, connect_timeout: float, **kwargs: Any) -> Connection[Any]:
    """A connection to `url`, or the `connection_error` saying why there is none."""
    try:
        return Connection.connect(url, connect_timeout=libpq_timeout(connect_timeout), **kwargs)
    except Exception as exc:
        reason = str(exc) or type(exc).__name__
    raise connection_error(url, reason)  # outside the `except`: see `connection_error`


async def _aconnect(url: str, connect_timeout: float, **kwargs: Any) -> AsyncConnection[Any]:
    try:
        timeout = libpq_timeout(connect_timeout)
        return await AsyncConnection.connect(url, connect_timeout=timeout, **kwargs)
    except Exception as exc:
        reason = str(exc) or type(exc).__name__
    raise connection_error(url, reason)


_SETUP_LOCK = "SELECT pg_try_advisory_lock(hashtextextended('lgsp_setup', 0))"
"""Held (on a connection of its own) while `setup()` runs: one process migrates at a time.

Tried, never waited on in SQL: a session blocked in `pg_advisory_lock` is an open
transaction, which the holder's `CREATE INDEX CONCURRENTLY` would wait for in turn."""
_SETUP_POLL = 0.05


@contextmanager
def setup_lock(url: str, connect_timeout: float) -> Iterator[None]:
    """Serialise `setup()` across processes on one database.

    LangGraph's Postgres migrations include `CREATE INDEX CONCURRENTLY`, which deadlocks
    when two processes run them at the same moment. The lock is a session advisory lock
    on an autocommit connection with no open transaction, so it never holds up the
    migration itself; closing the connection releases it, also when the process dies.
    """
    with _connect(url, connect_timeout, autocommit=True) as conn:
        while not _took(conn.execute(_SETUP_LOCK).fetchone()):
            time.sleep(_SETUP_POLL)
        yield


def _took(row: Any) -> bool:
    return bool(row and row[0])


@asynccontextmanager
async def asetup_lock(url: str, connect_timeout: float) -> AsyncIterator[None]:
    """Async twin of :func:`setup_lock`."""
    async with await _aconnect(url, connect_timeout, autocommit=True) as conn:
        while not _took(await (await conn.execute(_SETUP_LOCK)).fetchone()):
            await asyncio.sleep(_SETUP_POLL)
        yield


def pool_timeout(url: str, message: str, connect_timeout: float) -> PoolTimeout:
    """The error of a read or write that found no pooled connection within the timeout."""
    return PoolTimeout(
        f"{message}: no connection to Postgres at {describe_target(url)} within "
        f"connect_timeout={connect_timeout:g} s\n"
        "Hint: check that the Postgres server is running and reachable; the pool "
        "reconnects by itself once it is."
    )


def _pool_options(pool_size: int, connect_timeout: float) -> dict[str, Any]:
    """The options both pools share: sizes, and every wait bounded by `connect_timeout`."""
    return {
        "min_size": 1,
        "max_size": pool_size,
        "kwargs": {**POOL_KWARGS, "connect_timeout": libpq_timeout(connect_timeout)},
        "timeout": connect_timeout,
        "reconnect_timeout": connect_timeout,
        "open": False,
    }


def check_connection(conn: Connection[DictRow]) -> None:
    """Whether a pooled connection still works: one empty statement, never prepared.

    psycopg_pool's own check, under the savers' `prepare_threshold=0`, prepares the
    statement under a new name on every checkout and never deallocates it: two round trips
    per checkout, and one more prepared statement per checkout on the backend, without
    bound. The pools are autocommit, so the statement opens no transaction.
    """
    conn.execute("", prepare=False)


async def acheck_connection(conn: AsyncConnection[DictRow]) -> None:
    """Async twin of `check_connection`."""
    await conn.execute("", prepare=False)


class PostgresPool(ConnectionPool[Connection[DictRow]]):
    """The pool behind every sync Postgres backend: waits bounded by `connect_timeout`.

    A request that times out raises `PoolTimeout` naming the server (password masked).
    Each connection is checked before it is handed out, so a server restart leaves no
    broken connection behind. The pool stops retrying a lost connection after
    `connect_timeout` (psycopg_pool's default retries for five minutes), so the next
    request connects afresh instead of waiting for a distant retry.
    """

    def __init__(self, url: str, pool_size: int, connect_timeout: float) -> None:
        options = _pool_options(pool_size, connect_timeout)
        super().__init__(
            url, connection_class=Connection[DictRow], check=check_connection, **options
        )
        self.url, self.connect_timeout = url, connect_timeout

    def getconn(self, timeout: float | None = None) -> Connection[DictRow]:
        """A connection, or `PoolTimeout` (naming the server) after the timeout."""
        try:
            return super().getconn(timeout)
        except PoolTimeout as exc:
            message = str(exc)
        raise pool_timeout(self.url, message, self.connect_timeout)


class AsyncPostgresPool(AsyncConnectionPool[AsyncConnection[DictRow]]):
    """Async twin of `PostgresPool`."""

    def __init__(self, url: str, pool_size: int, connect_timeout: float) -> None:
        options = _pool_options(pool_size, connect_timeout)
        super().__init__(
            url, connection_class=AsyncConnection[DictRow], check=acheck_connection, **options
        )
        self.url, self.connect_timeout = url, connect_timeout

    async def getconn(self, timeout: float | None = None) -> AsyncConnection[DictRow]:
        """A connection, or `PoolTimeout` (naming the server) after the timeout."""
        try:
            return await super().getconn(timeout)
        except PoolTimeout as exc:
            message = str(exc)
        raise pool_timeout(self.url, message, self.connect_timeout)


class AsyncPoolGate(asyncio.Lock):
    """The `lock` of a pooled async saver: as many holders at once as its pool's connections.

    LangGraph's `AsyncPostgresSaver` holds its one `asyncio.Lock` around every statement,
    pool or not: over a pool that serialises every run of the process on one connection
    (langgraph #7259). This gate lets `size` holders in at once (the pool's `max_size`);
    the rest wait here in order, without a deadline, as they did on the lock, so the
    pool's own deadline still means "the server did not answer", not "the process is
    busy". `waiting` is the queue to watch (the pool's `requests_waiting` stays near 0).
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size
        self.waiting = 0
        """Callers waiting for a slot now."""
        self._slots = asyncio.Semaphore(size)

    async def acquire(self) -> Literal[True]:
        """Wait for a free slot (in order), then take it."""
        self.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        return True

    def release(self) -> None:
        """Give the slot back."""
        self._slots.release()

    def locked(self) -> bool:
        """Whether every slot is taken (the next holder would wait)."""
        return self._slots.locked()


class PoolGate(threading.BoundedSemaphore):
    """The `lock` of a pooled sync saver: `size` holders at once (see `AsyncPoolGate`).

    A bounded semaphore has the lock's interface (`with`, `acquire`, `release`) and lets
    threads sharing one saver each use their own connection; `waiting` counts the queue.
    """

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size
        self.waiting = 0
        """Threads waiting for a slot now."""
        self._count_lock = threading.Lock()

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        """Take a slot, waiting (in no promised order) as `threading.Semaphore` does."""
        if super().acquire(blocking=False):
            return True
        if not blocking:
            return False
        with self._count_lock:
            self.waiting += 1
        try:
            return super().acquire(True, timeout)
        finally:
            with self._count_lock:
                self.waiting -= 1

    __enter__ = acquire


def pool_gate(size: int) -> threading.Lock:
    """A `PoolGate` of `size` slots, typed as the `threading.Lock` it stands in for."""
    return cast(threading.Lock, PoolGate(size))


@contextmanager
def postgres_pool(url: str, pool_size: int, connect_timeout: float) -> Iterator[PostgresPool]:
    """A pool with the settings langgraph's Postgres classes require; fails fast."""
    _connect(url, connect_timeout).close()  # fails fast, with the real reason
    pool = PostgresPool(url, pool_size, connect_timeout)
    try:
        pool.open()
        ready = True
        try:
            pool.wait(timeout=connect_timeout)
        except PoolTimeout:
            ready = False
        if not ready:  # raised outside the `except`: see `connection_error`
            raise connection_error(url, f"no connection within {connect_timeout:g} s", driver=False)
        yield pool
    finally:
        pool.close()


@asynccontextmanager
async def apostgres_pool(
    url: str, pool_size: int, connect_timeout: float
) -> AsyncIterator[AsyncPostgresPool]:
    await (await _aconnect(url, connect_timeout)).close()
    pool = AsyncPostgresPool(url, pool_size, connect_timeout)
    try:
        ready = True
        try:
            await pool.open(wait=True, timeout=connect_timeout)
        except PoolTimeout:
            ready = False
        if not ready:
            raise connection_error(url, f"no connection within {connect_timeout:g} s", driver=False)
        yield pool
    finally:
        await pool.close()


@contextmanager
def saver_connection(saver: PostgresSaver) -> Iterator[Connection[Any]]:
    """A connection of any `PostgresSaver`, taken under the saver's `lock`.

    The lock the saver's own statements take: over a pool, ours is a gate of the pool's
    size, so these callers and the saver share its connections in one queue; over one
    connection, it keeps their statements from interleaving.
    """
    with saver.lock:
        if isinstance(saver.conn, ConnectionPool):
            with saver.conn.connection() as conn:
                yield conn
        else:
            yield saver.conn


@asynccontextmanager
async def asaver_connection(saver: AsyncPostgresSaver) -> AsyncIterator[AsyncConnection[Any]]:
    """The async twin of `saver_connection`, for an `AsyncPostgresSaver`."""
    async with saver.lock:
        if isinstance(saver.conn, AsyncConnectionPool):
            async with saver.conn.connection() as conn:
                yield conn
        else:
            yield saver.conn


@contextmanager
def opened(
    url: str,
    pool_size: int,
    setup: bool,
    connect_timeout: float,
    *,
    memory: Callable[[], Any],
    sqlite: Callable[[Any], Any],
    postgres: Callable[[Any], Any],
    autocommit: bool = False,
) -> Iterator[Any]:
    """One way to open every backend: the connection for the URL, the class, `setup()`.

    `autocommit`: a SQLite connection without implicit transactions (the stores need it).
    """
    kind = validate_options(url, pool_size, connect_timeout)
    if kind == "memory":
        yield memory()
        return
    target = url.strip()
    isolation: Literal["DEFERRED"] | None = None if autocommit else "DEFERRED"
    if kind == "sqlite":
        path = sqlite_path(target)
        connection = sqlite3.connect(path, check_same_thread=False, isolation_level=isolation)
        with closing(connection) as conn:
            backend = sqlite(conn)
            if setup:
                backend.setup()
            yield backend
        return
    with postgres_pool(target, pool_size, connect_timeout) as pool:
        backend = postgres(pool)
        if setup and not migrations_applied(pool, backend):  # applied: no wait, no DDL
            with setup_lock(target, connect_timeout):
                backend.setup()
        yield backend


@asynccontextmanager
async def aopened(
    url: str,
    pool_size: int,
    setup: bool,
    connect_timeout: float,
    *,
    memory: Callable[[], Any],
    sqlite: Callable[[Any], Any],
    postgres: Callable[[Any], Any],
    autocommit: bool = False,
) -> AsyncIterator[Any]:
    """Async twin of `opened` (async connections, awaited `setup()`)."""
    kind = validate_options(url, pool_size, connect_timeout)
    if kind == "memory":
        yield memory()
        return
    target = url.strip()
    isolation: Literal["DEFERRED"] | None = None if autocommit else "DEFERRED"
    if kind == "sqlite":
        async with aiosqlite.connect(sqlite_path(target), isolation_level=isolation) as conn:
            backend = sqlite(conn)
            if setup:
                await backend.setup()
            yield backend
        return
    async with apostgres_pool(target, pool_size, connect_timeout) as pool:
        backend = postgres(pool)
        if setup and not await amigrations_applied(pool, backend):
            async with asetup_lock(target, connect_timeout):
                await backend.setup()
        yield backend

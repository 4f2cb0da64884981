"""Connections behind the openers (private to `persistence`): URL forms, pools, probes.

One way to open every backend (memory, SQLite, Postgres) for checkpointers, stores
and effects: the URL is validated, Postgres is probed with `connect_timeout` and
pooled with the saver's settings (`autocommit`, `prepare_threshold=0`, `dict_row`),
and the backend's `setup()` runs once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    AsyncExitStack,
    ExitStack,
    asynccontextmanager,
    closing,
    contextmanager,
)
from pathlib import Path
from typing import Any, Literal

import aiosqlite
from psycopg import AsyncConnection, Connection
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from langgraph_supervisor_pro._internal.urls import mask_url, scheme_of, scrub

DEFAULT_POOL_SIZE = 10
DEFAULT_CONNECT_TIMEOUT = 10.0
POSTGRES_SCHEMES = ("postgresql", "postgres")
SQLITE_PREFIX = "sqlite:///"
SQLITE_MEMORY = ":memory:"
ACCEPTED_FORMS = (
    "'memory', 'sqlite:///relative/path.db', 'sqlite:////absolute/path.db', "
    "'sqlite:///:memory:', 'postgresql://user:password@host:5432/dbname' "
    "(or 'postgres://...')"
)


def describe_target(url: str) -> str:
    """Describe the host, port and database a Postgres URL points at (no password)."""
    try:
        params = conninfo_to_dict(url)
    except Exception:  # describing the target is best effort
        return mask_url(url)
    host = params.get("host") or params.get("hostaddr") or "localhost"
    port = params.get("port") or 5432
    dbname = params.get("dbname") or params.get("user") or "(default)"
    return f"{mask_url(url)} (host={host}, port={port}, dbname={dbname})"


def connection_error(url: str, reason: str) -> ConnectionError:
    """Build the error raised when a Postgres server cannot be reached."""
    return ConnectionError(
        f"Could not connect to Postgres at {describe_target(url)}: "
        f"{scrub(reason.strip(), url)}\n"
        "Hint: check that the Postgres server is running and reachable, and that the URL "
        "(for example the LGSP_POSTGRES_URI environment variable) has the right host, port, "
        "database, user and password."
    )


def validate_options(url: str, pool_size: int, connect_timeout: float) -> str:
    """Check the options shared by both openers and return the backend kind."""
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, got {type(url).__name__}")
    if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
        raise ValueError(f"pool_size must be an integer >= 1, got {pool_size!r}")
    if isinstance(connect_timeout, bool) or not connect_timeout > 0:
        raise ValueError(
            f"connect_timeout must be a number of seconds > 0, got {connect_timeout!r}"
        )
    stripped = url.strip()
    if stripped == "memory":
        return "memory"
    scheme = scheme_of(stripped)
    if scheme in POSTGRES_SCHEMES:
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


def probe_postgres(url: str, connect_timeout: float) -> None:
    """Open and close one connection so a wrong URL fails fast with the real reason."""
    try:
        conn = Connection.connect(url, connect_timeout=max(2, round(connect_timeout)))
    except Exception as exc:
        raise connection_error(url, str(exc) or type(exc).__name__) from None
    conn.close()


async def aprobe_postgres(url: str, connect_timeout: float) -> None:
    """Async version of :func:`probe_postgres`."""
    try:
        conn = await AsyncConnection.connect(url, connect_timeout=max(2, round(connect_timeout)))
    except Exception as exc:
        raise connection_error(url, str(exc) or type(exc).__name__) from None
    await conn.close()


POOL_KWARGS = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


@contextmanager
def sqlite_connection(url: str, *, autocommit: bool = False) -> Iterator[sqlite3.Connection]:
    # The stores manage their own transactions and need an autocommit connection.
    isolation: Literal["DEFERRED"] | None = None if autocommit else "DEFERRED"
    path = sqlite_path(url)
    with closing(sqlite3.connect(path, check_same_thread=False, isolation_level=isolation)) as conn:
        yield conn


@asynccontextmanager
async def asqlite_connection(
    url: str, *, autocommit: bool = False
) -> AsyncIterator[aiosqlite.Connection]:
    isolation: Literal["DEFERRED"] | None = None if autocommit else "DEFERRED"
    async with aiosqlite.connect(sqlite_path(url), isolation_level=isolation) as conn:
        yield conn


@contextmanager
def postgres_pool(
    url: str, pool_size: int, connect_timeout: float
) -> Iterator[ConnectionPool[Connection[DictRow]]]:
    """A pool with the settings langgraph's Postgres classes require; fails fast."""
    probe_postgres(url, connect_timeout)
    pool = ConnectionPool(
        url,
        connection_class=Connection[DictRow],
        min_size=1,
        max_size=pool_size,
        kwargs=dict(POOL_KWARGS),
        open=True,
    )
    try:
        try:
            pool.wait(timeout=connect_timeout)
        except PoolTimeout as exc:
            raise connection_error(url, f"no connection within {connect_timeout:g} s") from exc
        yield pool
    finally:
        pool.close()


@asynccontextmanager
async def apostgres_pool(
    url: str, pool_size: int, connect_timeout: float
) -> AsyncIterator[AsyncConnectionPool[AsyncConnection[DictRow]]]:
    await aprobe_postgres(url, connect_timeout)
    pool = AsyncConnectionPool(
        url,
        connection_class=AsyncConnection[DictRow],
        min_size=1,
        max_size=pool_size,
        kwargs=dict(POOL_KWARGS),
        open=False,
    )
    try:
        try:
            await pool.open(wait=True, timeout=connect_timeout)
        except PoolTimeout as exc:
            raise connection_error(url, f"no connection within {connect_timeout:g} s") from exc
        yield pool
    finally:
        await pool.close()


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
) -> AbstractContextManager[Any]:
    """One way to open every backend: the connection for the URL, the class, `setup()`."""

    @contextmanager
    def opened() -> Iterator[Any]:
        kind = validate_options(url, pool_size, connect_timeout)
        if kind == "memory":
            yield memory()
            return
        target = url.strip()
        with ExitStack() as stack:
            if kind == "sqlite":
                backend = sqlite(
                    stack.enter_context(sqlite_connection(target, autocommit=autocommit))
                )
            else:
                backend = postgres(
                    stack.enter_context(postgres_pool(target, pool_size, connect_timeout))
                )
            if setup:
                backend.setup()
            yield backend

    return opened()


def aopened(
    url: str,
    pool_size: int,
    setup: bool,
    connect_timeout: float,
    *,
    memory: Callable[[], Any],
    sqlite: Callable[[Any], Any],
    postgres: Callable[[Any], Any],
    autocommit: bool = False,
) -> AbstractAsyncContextManager[Any]:
    """Async twin of `opened` (async connections, awaited `setup()`)."""

    @asynccontextmanager
    async def opened() -> AsyncIterator[Any]:
        kind = validate_options(url, pool_size, connect_timeout)
        if kind == "memory":
            yield memory()
            return
        target = url.strip()
        async with AsyncExitStack() as stack:
            if kind == "sqlite":
                connection = asqlite_connection(target, autocommit=autocommit)
                backend = sqlite(await stack.enter_async_context(connection))
            else:
                pool = apostgres_pool(target, pool_size, connect_timeout)
                backend = postgres(await stack.enter_async_context(pool))
            if setup:
                await backend.setup()
            yield backend

    return opened()

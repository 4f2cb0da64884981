"""Open LangGraph checkpointers and stores from a single URL.

One URL selects the backend, so the same code runs against memory in tests,
SQLite on a laptop and Postgres in production:

- ``memory``: an in-process ``InMemorySaver`` (lost when the process ends).
- ``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db`` or
  ``sqlite:///:memory:``: a ``SqliteSaver`` (``AsyncSqliteSaver`` for async).
  As in SQLAlchemy, three slashes start a relative path and a fourth slash an
  absolute one. Missing parent directories are created.
- ``postgresql://user:password@host:5432/db`` (or ``postgres://...``): a
  ``PostgresSaver`` (``AsyncPostgresSaver``) over a connection pool.

Example:
    >>> from langgraph_supervisor_pro.persistence.checkpointers import open_checkpointer
    >>> with open_checkpointer("memory") as saver:
    ...     type(saver).__name__
    'InMemorySaver'
"""

from __future__ import annotations

import re
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
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import AsyncSqliteStore, SqliteStore
from psycopg import AsyncConnection, Connection
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

__all__ = ["aopen_checkpointer", "aopen_store", "open_checkpointer", "open_store"]

_DEFAULT_POOL_SIZE = 10
_DEFAULT_CONNECT_TIMEOUT = 10.0
_POSTGRES_SCHEMES = ("postgresql", "postgres")
_SQLITE_PREFIX = "sqlite:///"
_SQLITE_MEMORY = ":memory:"
_ACCEPTED_FORMS = (
    "'memory', 'sqlite:///relative/path.db', 'sqlite:////absolute/path.db', "
    "'sqlite:///:memory:', 'postgresql://user:password@host:5432/dbname' "
    "(or 'postgres://...')"
)
_MASK = "***"
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def _scheme_of(url: str) -> str:
    """Return the lower-cased scheme of ``url`` ('' when it has none)."""
    match = _SCHEME_RE.match(url.strip())
    return match.group(1).lower() if match else ""


def _mask_url(url: str) -> str:
    """Return ``url`` with any password (in userinfo or query) replaced by ``***``."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostinfo = netloc.rpartition("@")
            user, has_password, password = userinfo.partition(":")
            shown = f"{user}:{_MASK}" if has_password and password else user
            netloc = f"{shown}@{hostinfo}"
        query = urlencode(
            [
                (key, _MASK if key.lower() == "password" else value)
                for key, value in parse_qsl(parts.query, keep_blank_values=True)
            ],
            safe="/:*",
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return f"{_scheme_of(url) or '?'}://<unparsable URL, not shown>"


def _passwords_in(url: str) -> list[str]:
    """Return the password strings present in a Postgres URL (to scrub messages)."""
    found: list[str] = []
    try:
        password = conninfo_to_dict(url).get("password")
    except Exception:  # a URL libpq cannot parse has no password to scrub
        password = None
    if password:
        found.append(str(password))
    try:
        parts = urlsplit(url)
        if parts.password:
            found.append(parts.password)
    except ValueError:
        pass
    return found


def _scrub(text: str, url: str) -> str:
    """Remove any password of ``url`` from ``text``."""
    for secret in _passwords_in(url):
        text = text.replace(secret, _MASK)
    return text


def _describe_target(url: str) -> str:
    """Describe the host, port and database a Postgres URL points at (no password)."""
    try:
        params = conninfo_to_dict(url)
    except Exception:  # describing the target is best effort
        return _mask_url(url)
    host = params.get("host") or params.get("hostaddr") or "localhost"
    port = params.get("port") or 5432
    dbname = params.get("dbname") or params.get("user") or "(default)"
    return f"{_mask_url(url)} (host={host}, port={port}, dbname={dbname})"


def _connection_error(url: str, reason: str) -> ConnectionError:
    """Build the error raised when a Postgres server cannot be reached."""
    return ConnectionError(
        f"Could not connect to Postgres at {_describe_target(url)}: "
        f"{_scrub(reason.strip(), url)}\n"
        "Hint: check that the Postgres server is running and reachable, and that the URL "
        "(for example the LGSP_POSTGRES_URI environment variable) has the right host, port, "
        "database, user and password."
    )


def _validate_options(url: str, pool_size: int, connect_timeout: float) -> str:
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
    scheme = _scheme_of(stripped)
    if scheme in _POSTGRES_SCHEMES:
        return "postgres"
    if scheme == "sqlite" and stripped.lower().startswith(_SQLITE_PREFIX):
        if not stripped[len(_SQLITE_PREFIX) :]:
            raise ValueError(
                "checkpointer `url` 'sqlite:///' has no database path; accepted forms: "
                + _ACCEPTED_FORMS
            )
        return "sqlite"
    got = f"scheme {scheme!r}" if scheme else "no scheme"
    if scheme == "sqlite":
        got = "a 'sqlite:' URL without the 'sqlite:///' prefix"
    raise ValueError(
        f"Unsupported checkpointer `url`: got {got}; accepted forms: {_ACCEPTED_FORMS}"
    )


def _sqlite_path(url: str) -> str:
    """Return the SQLite database path of a ``sqlite:///`` URL, creating parent dirs."""
    path = url.strip()[len(_SQLITE_PREFIX) :]
    if path != _SQLITE_MEMORY:
        Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        path = str(Path(path).expanduser())
    return path


def _probe_postgres(url: str, connect_timeout: float) -> None:
    """Open and close one connection so a wrong URL fails fast with the real reason."""
    try:
        conn = Connection.connect(url, connect_timeout=max(2, round(connect_timeout)))
    except Exception as exc:
        raise _connection_error(url, str(exc) or type(exc).__name__) from None
    conn.close()


async def _aprobe_postgres(url: str, connect_timeout: float) -> None:
    """Async version of :func:`_probe_postgres`."""
    try:
        conn = await AsyncConnection.connect(url, connect_timeout=max(2, round(connect_timeout)))
    except Exception as exc:
        raise _connection_error(url, str(exc) or type(exc).__name__) from None
    await conn.close()


_POOL_KWARGS = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


@contextmanager
def _sqlite_connection(url: str, *, autocommit: bool = False) -> Iterator[sqlite3.Connection]:
    # The stores manage their own transactions and need an autocommit connection.
    isolation: Literal["DEFERRED"] | None = None if autocommit else "DEFERRED"
    path = _sqlite_path(url)
    with closing(sqlite3.connect(path, check_same_thread=False, isolation_level=isolation)) as conn:
        yield conn


@asynccontextmanager
async def _asqlite_connection(
    url: str, *, autocommit: bool = False
) -> AsyncIterator[aiosqlite.Connection]:
    isolation: Literal["DEFERRED"] | None = None if autocommit else "DEFERRED"
    async with aiosqlite.connect(_sqlite_path(url), isolation_level=isolation) as conn:
        yield conn


@contextmanager
def _postgres_pool(
    url: str, pool_size: int, connect_timeout: float
) -> Iterator[ConnectionPool[Connection[DictRow]]]:
    """A pool with the settings langgraph's Postgres classes require; fails fast."""
    _probe_postgres(url, connect_timeout)
    pool = ConnectionPool(
        url,
        connection_class=Connection[DictRow],
        min_size=1,
        max_size=pool_size,
        kwargs=dict(_POOL_KWARGS),
        open=True,
    )
    try:
        try:
            pool.wait(timeout=connect_timeout)
        except PoolTimeout as exc:
            raise _connection_error(url, f"no connection within {connect_timeout:g} s") from exc
        yield pool
    finally:
        pool.close()


@asynccontextmanager
async def _apostgres_pool(
    url: str, pool_size: int, connect_timeout: float
) -> AsyncIterator[AsyncConnectionPool[AsyncConnection[DictRow]]]:
    await _aprobe_postgres(url, connect_timeout)
    pool = AsyncConnectionPool(
        url,
        connection_class=AsyncConnection[DictRow],
        min_size=1,
        max_size=pool_size,
        kwargs=dict(_POOL_KWARGS),
        open=False,
    )
    try:
        try:
            await pool.open(wait=True, timeout=connect_timeout)
        except PoolTimeout as exc:
            raise _connection_error(url, f"no connection within {connect_timeout:g} s") from exc
        yield pool
    finally:
        await pool.close()


def _opened(
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
        kind = _validate_options(url, pool_size, connect_timeout)
        if kind == "memory":
            yield memory()
            return
        target = url.strip()
        with ExitStack() as stack:
            if kind == "sqlite":
                backend = sqlite(
                    stack.enter_context(_sqlite_connection(target, autocommit=autocommit))
                )
            else:
                backend = postgres(
                    stack.enter_context(_postgres_pool(target, pool_size, connect_timeout))
                )
            if setup:
                backend.setup()
            yield backend

    return opened()


def _aopened(
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
    """Async twin of `_opened` (async connections, awaited `setup()`)."""

    @asynccontextmanager
    async def opened() -> AsyncIterator[Any]:
        kind = _validate_options(url, pool_size, connect_timeout)
        if kind == "memory":
            yield memory()
            return
        target = url.strip()
        async with AsyncExitStack() as stack:
            if kind == "sqlite":
                connection = _asqlite_connection(target, autocommit=autocommit)
                backend = sqlite(await stack.enter_async_context(connection))
            else:
                pool = _apostgres_pool(target, pool_size, connect_timeout)
                backend = postgres(await stack.enter_async_context(pool))
            if setup:
                await backend.setup()
            yield backend

    return opened()


@contextmanager
def open_checkpointer(
    url: str,
    *,
    pool_size: int = _DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = _DEFAULT_CONNECT_TIMEOUT,
) -> Iterator[BaseCheckpointSaver[str]]:
    """Open a synchronous checkpointer for ``url`` and close its resources on exit.

    Args:
        url: ``memory``, ``sqlite:///path.db`` (``sqlite:////abs/path.db`` for an
            absolute path, ``sqlite:///:memory:``) or ``postgresql://...`` /
            ``postgres://...``.
        pool_size: Maximum number of pooled Postgres connections (at least 1).
            Ignored by the other backends but still validated.
        setup: Create or migrate the checkpoint tables on open (SQLite and Postgres).
        connect_timeout: Seconds to wait for Postgres before giving up (libpq
            rounds the first connection attempt to whole seconds, at least 2).

    Yields:
        The checkpointer: ``InMemorySaver``, ``SqliteSaver`` or ``PostgresSaver``.

    Raises:
        ValueError: The URL form is not supported or an option is out of range.
        ConnectionError: The Postgres server cannot be reached (password masked).

    Example:
        >>> from langgraph.graph import START, StateGraph
        >>> builder = StateGraph(int)
        >>> _ = builder.add_node("inc", lambda x: x + 1).add_edge(START, "inc")
        >>> with open_checkpointer("sqlite:///:memory:") as saver:
        ...     graph = builder.compile(checkpointer=saver)
        ...     graph.invoke(1, {"configurable": {"thread_id": "t1"}})
        2
    """
    with _opened(
        url,
        pool_size,
        setup,
        connect_timeout,
        memory=InMemorySaver,
        sqlite=SqliteSaver,
        postgres=PostgresSaver,
    ) as saver:
        yield saver


@asynccontextmanager
async def aopen_checkpointer(
    url: str,
    *,
    pool_size: int = _DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = _DEFAULT_CONNECT_TIMEOUT,
) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """Open an asynchronous checkpointer for ``url`` and close its resources on exit.

    Accepts the same URLs and options as :func:`open_checkpointer`; use it with
    ``ainvoke`` / ``astream``.

    Args:
        url: ``memory``, ``sqlite:///path.db`` (``sqlite:////abs/path.db`` for an
            absolute path, ``sqlite:///:memory:``) or ``postgresql://...`` /
            ``postgres://...``.
        pool_size: Maximum number of pooled Postgres connections (at least 1).
        setup: Create or migrate the checkpoint tables on open (SQLite and Postgres).
        connect_timeout: Seconds to wait for Postgres before giving up (libpq
            rounds the first connection attempt to whole seconds, at least 2).

    Yields:
        The checkpointer: ``InMemorySaver``, ``AsyncSqliteSaver`` or
        ``AsyncPostgresSaver``.

    Raises:
        ValueError: The URL form is not supported or an option is out of range.
        ConnectionError: The Postgres server cannot be reached (password masked).

    Example:
        >>> import asyncio
        >>> from langgraph.graph import START, StateGraph
        >>> builder = StateGraph(int)
        >>> _ = builder.add_node("inc", lambda x: x + 1).add_edge(START, "inc")
        >>> async def main() -> int:
        ...     async with aopen_checkpointer("sqlite:///:memory:") as saver:
        ...         graph = builder.compile(checkpointer=saver)
        ...         return await graph.ainvoke(1, {"configurable": {"thread_id": "t1"}})
        >>> asyncio.run(main())
        2
    """
    async with _aopened(
        url,
        pool_size,
        setup,
        connect_timeout,
        memory=InMemorySaver,
        sqlite=AsyncSqliteSaver,
        postgres=AsyncPostgresSaver,
    ) as saver:
        yield saver


@contextmanager
def open_store(
    url: str,
    *,
    pool_size: int = _DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = _DEFAULT_CONNECT_TIMEOUT,
) -> Iterator[BaseStore]:
    """Open a LangGraph store (external memory) for ``url`` and close it on exit.

    The same URLs as :func:`open_checkpointer`: ``memory`` gives an
    ``InMemoryStore``, ``sqlite:///path.db`` a ``SqliteStore`` and
    ``postgresql://...`` a ``PostgresStore`` (pooled, tables set up once). Pass it
    to ``compile(store=...)``; full worker outputs then live in the store, and the
    workers' results in state keep references and summaries.

    Args:
        url: ``memory``, ``sqlite:///path.db`` or ``postgresql://...``.
        pool_size: Maximum number of pooled Postgres connections (at least 1).
        setup: Create or migrate the store's tables on open.
        connect_timeout: Seconds to wait for Postgres before giving up.

    Yields:
        The store.

    Raises:
        ValueError: The URL form is not supported or an option is out of range.
        ConnectionError: The Postgres server cannot be reached (password masked).

    Example:
        >>> with open_store("memory") as store:
        ...     store.put(("docs",), "a", {"text": "hello"})
        ...     store.get(("docs",), "a").value
        {'text': 'hello'}
    """
    # The stores manage their own SQLite transactions: they need autocommit.
    with _opened(
        url,
        pool_size,
        setup,
        connect_timeout,
        memory=InMemoryStore,
        sqlite=SqliteStore,
        postgres=PostgresStore,
        autocommit=True,
    ) as store:
        yield store


@asynccontextmanager
async def aopen_store(
    url: str,
    *,
    pool_size: int = _DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = _DEFAULT_CONNECT_TIMEOUT,
) -> AsyncIterator[BaseStore]:
    """Open an asynchronous LangGraph store for ``url``; the async twin of :func:`open_store`.

    Args:
        url: ``memory``, ``sqlite:///path.db`` or ``postgresql://...``.
        pool_size: Maximum number of pooled Postgres connections (at least 1).
        setup: Create or migrate the store's tables on open.
        connect_timeout: Seconds to wait for Postgres before giving up.

    Yields:
        The store (``InMemoryStore``, ``AsyncSqliteStore`` or ``AsyncPostgresStore``).

    Raises:
        ValueError: The URL form is not supported or an option is out of range.
        ConnectionError: The Postgres server cannot be reached (password masked).

    Example:
        >>> import asyncio
        >>> async def main() -> dict:
        ...     async with aopen_store("memory") as store:
        ...         await store.aput(("docs",), "a", {"n": 1})
        ...         return (await store.aget(("docs",), "a")).value
        >>> asyncio.run(main())
        {'n': 1}
    """
    async with _aopened(
        url,
        pool_size,
        setup,
        connect_timeout,
        memory=InMemoryStore,
        sqlite=AsyncSqliteStore,
        postgres=AsyncPostgresStore,
        autocommit=True,
    ) as store:
        yield store

"""Open LangGraph stores (external memory) from a single URL.

The same URLs as the checkpointers: ``memory``, ``sqlite:///path.db`` and
``postgresql://...`` (pooled, tables set up once).

Example:
    >>> from langgraph_supervisor_pro.persistence._stores import open_store
    >>> with open_store("memory") as store:
    ...     type(store).__name__
    'InMemoryStore'
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import (
    asynccontextmanager,
    contextmanager,
)

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import AsyncSqliteStore, SqliteStore
from psycopg import Connection
from psycopg.rows import DictRow
from psycopg_pool import ConnectionPool

from langgraph_supervisor_pro.persistence._connections import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_POOL_SIZE,
    aopened,
    opened,
    pool_gate,
)

__all__ = ["aopen_store", "open_store"]


def _pooled_store(pool: ConnectionPool[Connection[DictRow]]) -> PostgresStore:
    """A `PostgresStore` over `pool` whose batches do not take turns on one lock.

    LangGraph's sync store takes its one `threading.Lock` around every pipelined batch
    (every `put`, `get`, `search`), after checking out its own pooled connection, so
    threads sharing the store (a parallel step's branches, a threaded server) held a
    connection each and ran their batches one at a time. A gate of the pool's size
    (`pool_gate`) never makes a holder of a connection wait. LangGraph's async store
    already skips its lock over a pool.
    """
    store = PostgresStore(pool)
    store.lock = pool_gate(pool.max_size)
    return store


@contextmanager
def open_store(
    url: str,
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
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
        connect_timeout: Seconds to wait for Postgres before giving up (a finite
            number > 0), on opening and for a pooled connection at every later use.

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
    with opened(
        url,
        pool_size,
        setup,
        connect_timeout,
        memory=InMemoryStore,
        sqlite=SqliteStore,
        postgres=_pooled_store,
        autocommit=True,
    ) as store:
        yield store


@asynccontextmanager
async def aopen_store(
    url: str,
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> AsyncIterator[BaseStore]:
    """Open an asynchronous LangGraph store for ``url``; the async twin of :func:`open_store`.

    Args:
        url: ``memory``, ``sqlite:///path.db`` or ``postgresql://...``.
        pool_size: Maximum number of pooled Postgres connections (at least 1).
        setup: Create or migrate the store's tables on open.
        connect_timeout: Seconds to wait for Postgres before giving up (a finite
            number > 0), on opening and for a pooled connection at every later use.

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
    async with aopened(
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

"""Open LangGraph stores (external memory) from the checkpointers' URLs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

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


def _pooled_store(pool: ConnectionPool[Connection[DictRow]]) -> PostgresStore:
    """A `PostgresStore` over `pool` whose batches do not take turns on one lock.

    LangGraph's sync store takes its one lock around every batch, after checking out its
    own pooled connection, so threads sharing it ran one batch at a time; a gate of the
    pool's size never makes a holder of a connection wait (the async store has no lock).
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

    Pass it to ``compile(store=...)``: full worker outputs then live in the store, and the
    workers' results in state keep references and summaries.

    Args:
        url: ``memory``, ``sqlite:///path.db`` or ``postgresql://...`` (as for
            :func:`open_checkpointer`).
        pool_size: Maximum number of pooled Postgres connections (at least 1).
        setup: Create or migrate the store's tables on open.
        connect_timeout: Seconds to wait for Postgres (a finite number > 0).

    Yields:
        The store: ``InMemoryStore``, ``SqliteStore`` or ``PostgresStore``.

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
    backends: dict[str, Callable[..., BaseStore]] = {
        "memory": InMemoryStore,
        "sqlite": SqliteStore,
        "postgres": _pooled_store,
    }
    with opened(url, pool_size, setup, connect_timeout, **backends, autocommit=True) as store:
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

    It takes the same arguments and yields an ``InMemoryStore``, ``AsyncSqliteStore`` or
    ``AsyncPostgresStore``.

    Example:
        >>> import asyncio
        >>> async def main() -> dict:
        ...     async with aopen_store("memory") as store:
        ...         await store.aput(("docs",), "a", {"n": 1})
        ...         return (await store.aget(("docs",), "a")).value
        >>> asyncio.run(main())
        {'n': 1}
    """
    backends = {"memory": InMemoryStore, "sqlite": AsyncSqliteStore, "postgres": AsyncPostgresStore}
    async with aopened(url, pool_size, setup, connect_timeout, **backends, autocommit=True) as s:
        yield s

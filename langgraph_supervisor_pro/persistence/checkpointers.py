"""Open LangGraph checkpointers from a single URL.

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

from collections.abc import AsyncIterator, Iterator
from contextlib import (
    asynccontextmanager,
    contextmanager,
)

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langgraph_supervisor_pro.persistence._connections import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_POOL_SIZE,
    aopened,
    opened,
)

__all__ = ["aopen_checkpointer", "open_checkpointer"]


@contextmanager
def open_checkpointer(
    url: str,
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> Iterator[BaseCheckpointSaver[str]]:
    """Open a synchronous checkpointer for ``url`` and close its resources on exit.

    Args:
        url: ``memory``, ``sqlite:///path.db`` (``sqlite:////abs/path.db`` for an
            absolute path, ``sqlite:///:memory:``) or ``postgresql://...`` /
            ``postgres://...``.
        pool_size: Maximum number of pooled Postgres connections (at least 1).
            Ignored by the other backends but still validated.
        setup: Create or migrate the checkpoint tables on open (SQLite and Postgres).
        connect_timeout: Seconds to wait for Postgres before giving up, a finite
            number > 0: on opening (libpq rounds a connection attempt to whole
            seconds, at least 2) and for a pooled connection at every later read or
            write (then `psycopg_pool.PoolTimeout`, naming the server).

    Yields:
        The checkpointer: ``InMemorySaver``, ``SqliteSaver`` or ``PostgresSaver``.

    Raises:
        ValueError: The URL form is not supported or an option is out of range.
        ConnectionError: The Postgres server cannot be reached (password masked, in
            the message and in every exception chained to it).

    Example:
        >>> from langgraph.graph import START, StateGraph
        >>> builder = StateGraph(int)
        >>> _ = builder.add_node("inc", lambda x: x + 1).add_edge(START, "inc")
        >>> with open_checkpointer("sqlite:///:memory:") as saver:
        ...     graph = builder.compile(checkpointer=saver)
        ...     graph.invoke(1, {"configurable": {"thread_id": "t1"}})
        2
    """
    with opened(
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
    pool_size: int = DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
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
        connect_timeout: Seconds to wait for Postgres before giving up, a finite
            number > 0: on opening (libpq rounds a connection attempt to whole
            seconds, at least 2) and for a pooled connection at every later read or
            write (then `psycopg_pool.PoolTimeout`, naming the server).

    Yields:
        The checkpointer: ``InMemorySaver``, ``AsyncSqliteSaver`` or
        ``AsyncPostgresSaver``.

    Raises:
        ValueError: The URL form is not supported or an option is out of range.
        ConnectionError: The Postgres server cannot be reached (password masked, in
            the message and in every exception chained to it).

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
    async with aopened(
        url,
        pool_size,
        setup,
        connect_timeout,
        memory=InMemorySaver,
        sqlite=AsyncSqliteSaver,
        postgres=AsyncPostgresSaver,
    ) as saver:
        yield saver

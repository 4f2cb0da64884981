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

Credentials never reach checkpoint metadata through these checkpointers. LangGraph copies
every ``str``, ``int``, ``float`` and ``bool`` of the run's ``configurable`` and
``metadata`` into each checkpoint's metadata; these savers (subclasses of the ones
above) leave out the strings under secret-looking keys (``openai_api_key``,
``github_token``, ``db_password``, ``Authorization``, ...) and those holding a secret
registered with ``register_secret``. The rest of the checkpoint is stored as LangGraph
writes it.

Example:
    >>> from langgraph.checkpoint.memory import InMemorySaver
    >>> from langgraph_supervisor_pro.persistence.checkpointers import open_checkpointer
    >>> with open_checkpointer("memory") as saver:
    ...     isinstance(saver, InMemorySaver)
    True
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import (
    asynccontextmanager,
    contextmanager,
)

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langgraph_supervisor_pro._internal.scrub import redact_config
from langgraph_supervisor_pro.persistence._connections import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_POOL_SIZE,
    aopened,
    opened,
)

__all__ = ["aopen_checkpointer", "open_checkpointer"]


class _NoSecretsInMetadata(BaseCheckpointSaver[str]):
    """Leaves secret-looking and registered values of the config out of checkpoint metadata.

    LangGraph's savers build a checkpoint's metadata from the config given to `put`
    (`get_checkpoint_metadata`) and read nothing else from it but the checkpoint's
    coordinates, which `redact_config` keeps.
    """

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return super().put(redact_config(config), checkpoint, metadata, new_versions)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await super().aput(redact_config(config), checkpoint, metadata, new_versions)


class _InMemorySaver(_NoSecretsInMetadata, InMemorySaver):
    """`InMemorySaver` without secrets in checkpoint metadata."""


class _SqliteSaver(_NoSecretsInMetadata, SqliteSaver):
    """`SqliteSaver` without secrets in checkpoint metadata."""


class _AsyncSqliteSaver(_NoSecretsInMetadata, AsyncSqliteSaver):
    """`AsyncSqliteSaver` without secrets in checkpoint metadata."""


class _PostgresSaver(_NoSecretsInMetadata, PostgresSaver):
    """`PostgresSaver` without secrets in checkpoint metadata."""


class _AsyncPostgresSaver(_NoSecretsInMetadata, AsyncPostgresSaver):
    """`AsyncPostgresSaver` without secrets in checkpoint metadata."""


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
        memory=_InMemorySaver,
        sqlite=_SqliteSaver,
        postgres=_PostgresSaver,
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
        memory=_InMemorySaver,
        sqlite=_AsyncSqliteSaver,
        postgres=_AsyncPostgresSaver,
    ) as saver:
        yield saver

"""The checkpointer a LangGraph server (`langgraph-api`, edition Postgres) runs graphs with.

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/server/
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_supervisor_pro._internal.urls import mask_url, scheme_of
from langgraph_supervisor_pro.persistence._checkpointers import aopen_checkpointer
from langgraph_supervisor_pro.persistence._connections import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_POOL_SIZE,
)

CHECKPOINTER_URI_ENV = "LGSP_CHECKPOINTER_URI"
"""The Postgres URL `server_checkpointer` opens, if set (else the server's `DATABASE_URI`)."""
_DATABASE_URI_ENV = "DATABASE_URI"


def _server_url(environ: Mapping[str, str]) -> str:
    for name in (CHECKPOINTER_URI_ENV, _DATABASE_URI_ENV):
        url = environ.get(name, "").strip()
        if not url:
            continue
        if name == _DATABASE_URI_ENV and url == ":memory:":
            raise ValueError(
                "server_checkpointer: DATABASE_URI=':memory:' is `langgraph dev`'s in-memory "
                "runtime, which has no Postgres: leave the `checkpointer` line out of the "
                f"langgraph.json `langgraph dev` reads, or set {CHECKPOINTER_URI_ENV}="
                "postgresql://..."
            )
        if scheme_of(url) not in ("postgresql", "postgres"):
            raise ValueError(
                f"server_checkpointer: {name}={mask_url(url)!r} is not a Postgres URL; "
                "give postgresql://user:password@host:5432/db (the server's own "
                f"DATABASE_URI is used when {CHECKPOINTER_URI_ENV} is unset)"
            )
        return url
    raise ValueError(
        f"server_checkpointer: neither {CHECKPOINTER_URI_ENV} nor {_DATABASE_URI_ENV} is "
        "set; it runs inside a LangGraph server on Postgres, which sets DATABASE_URI "
        f"(set {CHECKPOINTER_URI_ENV}=postgresql://... to store checkpoints elsewhere)"
    )


@asynccontextmanager
async def server_checkpointer(
    *,
    environ: Mapping[str, str] | None = None,
    pool_size: int = DEFAULT_POOL_SIZE,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    keep_agent_checkpoints: bool = False,
) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """Open this package's async Postgres saver for a LangGraph server to run graphs with.

    Name it in `langgraph.json`::

        "checkpointer": {"path": "langgraph_supervisor_pro.persistence.server_checkpointer"}

    It opens `aopen_checkpointer` on `LGSP_CHECKPOINTER_URI` if set, else on the server's
    own `DATABASE_URI` (same schema, so the server's API reads and writes the same thread
    state), deleting a finished hop's agent checkpoints as `open_checkpointer` does. The
    fork fence is off: the server's run queue already runs one run per thread at a time,
    and what would trip it there is deliberate (Studio's fork and edit).

    Args:
        environ: Where the URLs are read (`os.environ` by default).
        pool_size: Maximum number of pooled connections per event loop (at least 1).
        connect_timeout: Seconds to wait for Postgres (as for `aopen_checkpointer`).
        keep_agent_checkpoints: Keep every hop's agent checkpoints (the server's
            default behaviour).

    Yields:
        The checkpointer (an `AsyncPostgresSaver`).

    Raises:
        ValueError: Neither URL is set, or the one set is not a Postgres URL.
        ConnectionError: Postgres cannot be reached (password masked).

    Example:
        >>> import asyncio
        >>> async def main() -> None:
        ...     async with server_checkpointer(environ={}) as saver:
        ...         pass
        >>> asyncio.run(main())
        Traceback (most recent call last):
        ...
        ValueError: server_checkpointer: neither LGSP_CHECKPOINTER_URI nor DATABASE_URI ...
    """
    url = _server_url(os.environ if environ is None else environ)
    async with aopen_checkpointer(
        url,
        pool_size=pool_size,
        connect_timeout=connect_timeout,
        fence=False,
        keep_agent_checkpoints=keep_agent_checkpoints,
    ) as saver:
        yield saver

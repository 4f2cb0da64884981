"""A graph node with native sync and async bodies and no trace run of its own (private).

LangGraph already opens a named run for every node; a `RunnableLambda` would open a
second, nested run of the same name carrying the whole state. This Runnable calls
its bodies directly, so each node shows once in LangSmith with its slim inputs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config

In = TypeVar("In")
Out = TypeVar("Out")


class GraphNode(Runnable[In, Out], Generic[In, Out]):
    """Runs `func` under `invoke` and `afunc` under `ainvoke`, with the node's config."""

    def __init__(
        self,
        name: str,
        func: Callable[[In, RunnableConfig], Out],
        afunc: Callable[[In, RunnableConfig], Awaitable[Out]],
    ) -> None:
        self.name = name
        self._func = func
        self._afunc = afunc

    def invoke(self, input: In, config: RunnableConfig | None = None, **kwargs: Any) -> Out:
        """Run the sync body."""
        return self._func(input, ensure_config(config))

    async def ainvoke(self, input: In, config: RunnableConfig | None = None, **kwargs: Any) -> Out:
        """Run the async body on the event loop."""
        return await self._afunc(input, ensure_config(config))

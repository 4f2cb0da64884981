"""A graph node with native sync and async bodies and no trace run of its own (private).

A `RunnableLambda` would open a second run, carrying the whole state, inside the one
LangGraph opens per node. A node running a compiled graph names it as its one `deps`, so
LangGraph finds it as the node's subgraph (docs/architecture.md, "Subgraphs LangGraph can see").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import ensure_config
from langchain_core.runnables.utils import ConfigurableFieldSpec

_COMPLETE_KEYS = frozenset({"tags", "metadata", "callbacks", "recursion_limit", "configurable"})


def _complete(config: RunnableConfig | None) -> RunnableConfig:
    """`config` as it is when it has every key a body reads (LangGraph's), else ensured.

    Ensuring LangGraph's already ensured config again copied it on every hop for nothing.
    """
    if config is not None and config.keys() >= _COMPLETE_KEYS:
        return config
    return ensure_config(config)


In = TypeVar("In")
Out = TypeVar("Out")


class GraphNode(RunnableLambda[In, Out], Generic[In, Out]):
    """Runs `func` under `invoke` and `afunc` under `ainvoke`; `subgraph` is its one dep."""

    def __init__(
        self,
        name: str,
        func: Callable[[In, RunnableConfig], Out],
        afunc: Callable[[In, RunnableConfig], Awaitable[Out]],
        *,
        subgraph: Runnable[Any, Any] | None = None,
    ) -> None:
        super().__init__(func, afunc, name=name)
        self._func = func
        self._afunc = afunc
        self._subgraph = subgraph

    @property
    def deps(self) -> list[Runnable[Any, Any]]:
        """The compiled graph the bodies run inside, if any (never read from source code)."""
        return [self._subgraph] if self._subgraph is not None else []

    def __eq__(self, other: object) -> bool:
        """Identity, as for any Runnable (`RunnableLambda` compares functions)."""
        return self is other

    def __hash__(self) -> int:  # type: ignore[override]
        """Identity, as for any Runnable (`RunnableLambda` is unhashable)."""
        return id(self)

    def __repr__(self) -> str:
        """The node's name (`RunnableLambda` shows its function's source)."""
        return f"GraphNode({self.name!r})"

    @property
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        """None: the subgraph's configurable fields are its own, as for any node."""
        return []

    def invoke(self, input: In, config: RunnableConfig | None = None, **kwargs: Any) -> Out:
        """Run the sync body."""
        return self._func(input, _complete(config))

    async def ainvoke(self, input: In, config: RunnableConfig | None = None, **kwargs: Any) -> Out:
        """Run the async body on the event loop."""
        return await self._afunc(input, _complete(config))

    # Runnable's own streaming (the body's result as one chunk), not `RunnableLambda`'s, which
    # opens a trace run.
    stream = Runnable.stream
    astream = Runnable.astream
    transform = Runnable.transform
    atransform = Runnable.atransform

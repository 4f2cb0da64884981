"""A graph node with native sync and async bodies and no trace run of its own (private).

LangGraph already opens a named run for every node; a `RunnableLambda` would open a
second, nested run of the same name carrying the whole state. This Runnable calls
its bodies directly, so each node shows once in LangSmith with its slim inputs.

A node that runs a compiled graph inside (a worker's agent: a `create_agent` graph or a
domain supervisor) names it as its one dependency (`deps`), the way a `RunnableLambda`
names the Runnables its function uses. LangGraph looks through a `RunnableLambda`
node's dependencies when it compiles a graph to find the node's subgraph; that is how
`get_graph(xray=...)`, `get_subgraphs()` and `get_state(subgraphs=True)` see every level
of a tree (see docs/architecture.md, "Subgraphs LangGraph can see").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Generic, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import ensure_config
from langchain_core.runnables.utils import ConfigurableFieldSpec

_COMPLETE_KEYS = frozenset({"tags", "metadata", "callbacks", "recursion_limit", "configurable"})


def _complete(config: RunnableConfig | None) -> RunnableConfig:
    """`config` with every key a body reads: as it is when it has them all, else ensured.

    LangGraph hands a node the task's config already ensured (and freshly copied by
    `patch_config`): ensuring it again copied its callback managers and metadata on
    every decision and hop for nothing. A config from any other caller may lack keys.
    """
    if config is not None and config.keys() >= _COMPLETE_KEYS:
        return config
    return ensure_config(config)


In = TypeVar("In")
Out = TypeVar("Out")


class GraphNode(RunnableLambda[In, Out], Generic[In, Out]):
    """Runs `func` under `invoke` and `afunc` under `ainvoke`, with the node's config.

    `subgraph` is the compiled graph the bodies run inside, if any: it is the node's
    only dependency, so LangGraph discovers it as the node's subgraph. The node never
    runs it by itself; the bodies do.
    """

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
        """The compiled graph the node runs inside, if any (never read from source code)."""
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

    def stream(
        self, input: In, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Out]:
        """The sync body's result as one chunk (no trace run, unlike `RunnableLambda`)."""
        yield self.invoke(input, config, **kwargs)

    async def astream(
        self, input: In, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Out]:
        """The async body's result as one chunk (no trace run, unlike `RunnableLambda`)."""
        yield await self.ainvoke(input, config, **kwargs)

    def transform(
        self, input: Iterator[In], config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Out]:
        """Gather the input chunks, then stream (`Runnable`'s behaviour)."""
        yield from Runnable.transform(self, input, config, **kwargs)

    async def atransform(
        self, input: AsyncIterator[In], config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Out]:
        """Gather the input chunks, then stream (`Runnable`'s behaviour)."""
        async for chunk in Runnable.atransform(self, input, config, **kwargs):
            yield chunk

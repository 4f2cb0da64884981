"""A graph node with native sync and async bodies and no trace run of its own (private).

A `RunnableLambda` would open a second run, carrying the whole state, inside the one
LangGraph opens per node. A node running a compiled graph names it as its one `deps`, so
LangGraph finds it as the node's subgraph (docs/architecture.md, "Subgraphs LangGraph can see").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import (
    DEFAULT_RECURSION_LIMIT,
    ensure_config,
    var_child_runnable_config,
)
from langchain_core.runnables.utils import ConfigurableFieldSpec

_COMPLETE_KEYS = frozenset({"tags", "metadata", "callbacks", "recursion_limit", "configurable"})
_NODE_KEYS = frozenset({"metadata", "callbacks", "configurable"})
"""The keys of the config LangGraph runs a node with (it sets no tags or recursion limit)."""


def _complete(config: RunnableConfig | None) -> RunnableConfig:
    """`config` with every key a body reads, as `ensure_config` gives it, without its copies.

    A complete config is taken as it is. LangGraph runs a node with its task's config,
    which is also the context's (`var_child_runnable_config`) and lacks `tags` and
    `recursion_limit`: those get `ensure_config`'s defaults, and the metadata the
    namespace, as `ensure_config` would, without copying the callback manager (twice) and
    every dict on every node call. Any other config is ensured.
    """
    if config is None:
        return ensure_config(config)
    keys = config.keys()
    if keys >= _COMPLETE_KEYS:
        return config
    if keys >= _NODE_KEYS and var_child_runnable_config.get() is config:
        completed: RunnableConfig = {"tags": [], "recursion_limit": DEFAULT_RECURSION_LIMIT}
        completed.update(config)
        metadata = config["metadata"]
        for key in ("model", "checkpoint_ns"):  # what `ensure_config` copies to metadata
            value = config["configurable"].get(key)
            if isinstance(value, str) and key not in metadata:
                metadata = {**metadata, key: value}
        completed["metadata"] = metadata
        return completed
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

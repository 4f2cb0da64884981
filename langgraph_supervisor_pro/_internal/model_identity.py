"""Which chat models a supervisor graph uses, and whether two of them are the same model.

A domain's models are those `register_models` recorded against its `StateGraph`; any other
agent is searched where models can be seen. Two models are the same when they are one
object or report the same (provider, model name) (docs/architecture.md, "The online judge").
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableBinding, RunnableSequence
from langchain_core.runnables.fallbacks import RunnableWithFallbacks
from langgraph.pregel import Pregel

_DEPTH = 4  # how deep closures and Runnables are searched for models

_REGISTRY: weakref.WeakKeyDictionary[Any, tuple[ModelUse, ...]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True, slots=True)
class ModelUse:
    """One chat model and the place in a graph that uses it."""

    place: str
    """Where, e.g. "the supervisor's model" or "domain 'ops' > the synthesizer"."""
    model: BaseChatModel


def register_models(graph: Any, uses: tuple[ModelUse, ...]) -> None:
    """Record the models a `create_supervisor` graph was built with."""
    _REGISTRY[graph] = uses


def registered(graph: Any) -> tuple[ModelUse, ...] | None:
    """The models recorded for `graph` (a StateGraph or a graph compiled from one)."""
    builder = getattr(graph, "builder", graph)
    try:
        return _REGISTRY.get(builder)
    except TypeError:  # not weak-referenceable: never registered
        return None


def chat_models(obj: Any, depth: int = _DEPTH) -> Iterator[BaseChatModel]:
    """The chat models `obj` is or holds, where they can be seen."""
    seen: set[int] = set()
    yield from _walk(obj, depth, seen)


def _walk(obj: Any, depth: int, seen: set[int]) -> Iterator[BaseChatModel]:
    if depth < 0 or id(obj) in seen or obj is None:
        return
    seen.add(id(obj))
    if isinstance(obj, BaseChatModel):
        yield obj
        return
    children: list[Any] = []
    if isinstance(obj, RunnableBinding):
        children.append(obj.bound)
    elif isinstance(obj, RunnableSequence):
        children.extend(obj.steps)
    elif isinstance(obj, RunnableWithFallbacks):
        children.extend([obj.runnable, *obj.fallbacks])
    elif isinstance(obj, Pregel):
        children.extend(getattr(node, "bound", None) for node in obj.nodes.values())
    elif isinstance(obj, Runnable):
        children.extend(getattr(obj, "deps", None) or ())
        children.extend(getattr(obj, name, None) for name in ("func", "afunc"))
    elif callable(obj):
        for cell in getattr(obj, "__closure__", None) or ():
            try:
                children.append(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
    for child in children:
        if isinstance(child, BaseChatModel | Runnable) or callable(child):
            yield from _walk(child, depth - 1, seen)


def agent_models(agent: Any, worker: str) -> tuple[ModelUse, ...]:
    """The models a worker's agent uses: a domain's recorded ones, else those found in it."""
    uses = registered(agent)
    if uses is not None:
        return tuple(ModelUse(f"domain {worker!r} > {use.place}", use.model) for use in uses)
    return tuple(ModelUse(f"worker {worker!r}'s agent", m) for m in chat_models(agent))


def fingerprint(model: BaseChatModel) -> tuple[str, str] | None:
    """(provider, model name) as the model reports them to LangSmith, when it names itself."""
    # `_get_ls_params`: LangChain's (private) hook for LangSmith's model metadata; should it
    # fail, the public `model_name` / `model` fields, then `name`, still say it.
    try:
        params = model._get_ls_params()
    except Exception:  # a model whose params cannot be read: its public fields
        params = {}
    provider = str(params.get("ls_provider") or type(model).__name__).lower()
    names = (
        params.get("ls_model_name"),
        getattr(model, "model_name", None),
        getattr(model, "model", None),
        getattr(model, "name", None),
    )
    for name in names:
        if isinstance(name, str) and name.strip():
            return provider, name.strip()
    return None


def same_model(a: BaseChatModel, b: BaseChatModel) -> bool:
    """One object, or one (provider, model name)."""
    if a is b:
        return True
    mark = fingerprint(a)
    return mark is not None and mark == fingerprint(b)

"""External memory: full worker outputs live in a LangGraph store, state keeps references.

With a store (`compile(store=...)`), each hop's full output is written under
`("lgsp", "outputs", <thread_id>, <worker>)` with the key `t<turn>.s<step>`, and the
worker's slot keeps the status, the summary and a reference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.config import get_config, get_store
from langgraph.store.base import BaseStore, Item
from typing_extensions import TypedDict

from langgraph_supervisor_pro._contracts import WorkerResult
from langgraph_supervisor_pro._internal.hop import hop_context
from langgraph_supervisor_pro._internal.storable import storable, storable_value
from langgraph_supervisor_pro._internal.text import store_label

_ROOT = ("lgsp", "outputs")
_PAGE = 1_000  # items per store search when a worker's outputs are read back


class OutputRef(TypedDict):
    """Where a hop's full output lives in the store."""

    namespace: list[str]
    key: str


def output_namespace(thread_id: str, worker: str, *, within: Sequence[str] = ()) -> tuple[str, ...]:
    """The store namespace that holds a worker's outputs for one thread.

    Args:
        thread_id: The run's `thread_id`.
        worker: The worker's name.
        within: In a tree of supervisors, the workers from the root down to the domain
            this worker belongs to (empty at the root), so that two domains' workers of
            the same name never share a namespace.

    Returns:
        `("lgsp", "outputs", thread_id, *within, worker)`.

    Example:
        >>> output_namespace("t-1", "researcher")
        ('lgsp', 'outputs', 't-1', 'researcher')
        >>> output_namespace("t-1", "clerk", within=("ops", "orders"))
        ('lgsp', 'outputs', 't-1', 'ops', 'orders', 'clerk')
    """
    return (*_ROOT, store_label(thread_id), *within, worker)


def output_key(turn: int, step: int) -> str:
    """The store key of the output of hop `step` in `turn` (sorts in hop order)."""
    return f"t{turn:05d}.s{step:05d}"


def thread_of(config: RunnableConfig) -> str:
    """The thread id of a run ('' when the graph runs without a checkpointer).

    Without one a run has no thread to file its outputs under: they stay in its state.
    """
    return str(config.get("configurable", {}).get("thread_id", ""))


def stored_value(
    worker: str, turn: int, step: int, instructions: str, result: WorkerResult
) -> dict[str, Any]:
    """What a hop stores: its full result plus where it came from.

    NUL and lone surrogates become U+FFFD: the Postgres store's JSONB refuses both.
    """
    return {
        "worker": worker,
        "turn": turn,
        "step": step,
        "instructions": storable(instructions),
        **storable_value(result.model_dump()),
    }


def reference(
    thread_id: str,
    worker: str,
    turn: int,
    step: int,
    result: WorkerResult,
    *,
    within: Sequence[str] = (),
) -> dict[str, Any]:
    """The slot entry that stands for a stored result: no blob, a reference."""
    ref = OutputRef(
        namespace=list(output_namespace(thread_id, worker, within=within)),
        key=output_key(turn, step),
    )
    chars = len(result.result_text())
    return {**result.model_dump(), "result": None, "ref": ref, "chars": chars}


def _resolved(entry: Mapping[str, Any], value: Mapping[str, Any] | None) -> WorkerResult:
    error = entry.get("error")
    if value is None:
        key = (entry.get("ref") or {}).get("key")
        error = error or f"the full output ({key}) is missing from the store"
    return WorkerResult(
        status=entry["status"],
        summary=entry.get("summary", ""),
        error=error,
        result=None if value is None else value.get("result"),
    )


def load_result(store: BaseStore | None, entry: Mapping[str, Any]) -> WorkerResult:
    """A slot's result entry as a `WorkerResult`, fetching the blob from the store."""
    ref = entry.get("ref")
    if not ref:
        return WorkerResult.model_validate({k: v for k, v in entry.items() if k != "ref"})
    item = store.get(tuple(ref["namespace"]), ref["key"]) if store is not None else None
    return _resolved(entry, item.value if item is not None else None)


async def aload_result(store: BaseStore | None, entry: Mapping[str, Any]) -> WorkerResult:
    """Async twin of `load_result`."""
    ref = entry.get("ref")
    if not ref:
        return WorkerResult.model_validate({k: v for k, v in entry.items() if k != "ref"})
    item = await store.aget(tuple(ref["namespace"]), ref["key"]) if store is not None else None
    return _resolved(entry, item.value if item is not None else None)


def _recall(worker: str, step: int = 0) -> str:
    store = get_store()
    if store is None:
        return "No external memory is configured for this graph (compile it with a store)."
    config = get_config()
    hop = hop_context(config)  # inside a domain of a tree: that domain's workers
    within = hop.path[:-1] if hop is not None else ()
    items = _every_output(store, output_namespace(thread_of(config), worker, within=within))
    if not items:
        return f"No stored output from {worker!r} yet."
    items = sorted(items, key=lambda item: item.key)
    if step:
        matches = [item for item in items if item.value.get("step") == step]
        if not matches:
            steps = sorted({int(item.value.get("step", 0)) for item in items})
            return f"{worker!r} has no stored output for step {step}; it has steps {steps}."
        item = matches[-1]
    else:
        item = items[-1]
    value = item.value
    result = WorkerResult.model_validate(
        {k: value[k] for k in ("status", "result", "summary", "error")}
    )
    return (
        f"Output of {worker} (turn {value.get('turn')}, hop {value.get('step')}, "
        f"{result.status}):\n{result.result_text() or result.summary}"
    )


def _every_output(store: BaseStore, namespace: tuple[str, ...]) -> list[Item]:
    """Every item in `namespace`, page by page (a store's order is its own, so read all)."""
    items: list[Item] = []
    while True:
        page = store.search(namespace, limit=_PAGE, offset=len(items))
        items.extend(page)
        if len(page) < _PAGE:
            return items


def recall_tool(*, name: str = "recall_output") -> BaseTool:
    """A tool that lets a worker's agent read earlier hops' full outputs from the store.

    The tool takes a worker's name and optionally a hop number (0 or omitted: that
    worker's latest output in this thread) and returns the stored output as text.

    Args:
        name: The tool's name.

    Returns:
        A LangChain tool to give to a worker's agent.

    Example:
        ```python
        from langchain.agents import create_agent
        agent = create_agent(model, tools=[search, recall_tool()])
        ```
    """
    return StructuredTool.from_function(
        _recall,
        name=name,
        description=(
            "Read the full output of an earlier hop of this run from memory. "
            "Give the worker's name, and optionally the hop number (default: its latest)."
        ),
    )


def latest_results(slots: Mapping[str, Any], names: Sequence[str]) -> dict[str, Mapping[str, Any]]:
    """The latest result entry of each named worker that has one."""
    return {
        name: slot["results"][-1] for name in names if (slot := slots.get(name)) and slot["results"]
    }

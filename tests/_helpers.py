"""Small helpers shared by the tests (the public fakes live in langgraph_supervisor_pro.testing)."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import StateSnapshot

from langgraph_supervisor_pro import Worker, create_supervisor


def routes(*names: str):
    """A router that replays `names` in order (then FINISH forever)."""
    it = itertools.chain(names, itertools.repeat("FINISH"))

    def router(view):
        return next(it)

    return router


def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def compile_team(workers: Iterable[Worker], **kwargs: Any):
    return create_supervisor(list(workers), **kwargs).compile(checkpointer=InMemorySaver())


def ask(text: str = "Write a report on cats") -> dict[str, Any]:
    return {"messages": [("user", text)]}


def task_errors(snapshot: StateSnapshot) -> list[tuple[str, Exception]]:
    """Every task error in a snapshot and, at any depth, its subgraphs' snapshots
    (`get_state(config, subgraphs=True)` nests them in `task.state`)."""
    errors: list[tuple[str, Exception]] = []
    for task in snapshot.tasks:
        if task.error is not None:
            errors.append((task.name, task.error))
        if isinstance(task.state, StateSnapshot):
            errors.extend(task_errors(task.state))
    return errors


def without_invalid_answer(value: Any) -> Any:
    """A review payload without `context["invalid_answer"]` (what a refused answer adds)."""
    context = {k: v for k, v in value["context"].items() if k != "invalid_answer"}
    return {**value, "context": context}

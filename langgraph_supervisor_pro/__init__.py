"""langgraph-supervisor-pro: production supervisor/worker graphs for LangGraph.

The top level holds what a first program uses. Everything else has one public home:
`langgraph_supervisor_pro.types` (state and routing vocabulary), `.workers` (what a
worker can be given), `.errors`, `.review`, `.persistence`, `.compaction`,
`.observability`, `.evals`, `.testing` and `.cli`.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/

Example:
    >>> from langgraph_supervisor_pro import Worker, WorkerTask, create_supervisor
    >>> from langgraph_supervisor_pro import open_checkpointer
    >>> def research(task: WorkerTask) -> str:
    ...     return f"Three facts about {task.task}"
    >>> graph = create_supervisor(
    ...     [Worker(name="researcher", description="Finds facts.", agent=research)],
    ...     router=lambda view: "FINISH" if view.ledger else "researcher",
    ... )
    >>> with open_checkpointer("memory") as saver:
    ...     app = graph.compile(checkpointer=saver)
    ...     final = app.invoke({"messages": [("user", "tea")]},
    ...                        {"configurable": {"thread_id": "t-1"}})
    >>> final["status"], final["messages"][-1].content
    ('done', 'Three facts about tea')
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _distribution_version
from typing import Any

from langgraph_supervisor_pro._budget import Budget
from langgraph_supervisor_pro._builder import create_supervisor
from langgraph_supervisor_pro._contracts import FINISH, RouteDecision, WorkerResult, WorkerTask
from langgraph_supervisor_pro._redaction import register_secret
from langgraph_supervisor_pro._supervisor import SupervisorView
from langgraph_supervisor_pro._workers import Worker
from langgraph_supervisor_pro.compaction._compactor import Compaction
from langgraph_supervisor_pro.persistence._checkpointers import (
    aopen_checkpointer,
    open_checkpointer,
)
from langgraph_supervisor_pro.persistence._stores import aopen_store, open_store
from langgraph_supervisor_pro.review._policy import ReviewPolicy
from langgraph_supervisor_pro.review._risks import risk

try:
    __version__ = _distribution_version("langgraph-supervisor-pro")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = [
    "FINISH",
    "Budget",
    "Compaction",
    "ReviewPolicy",
    "RouteDecision",
    "SupervisorView",
    "Worker",
    "WorkerResult",
    "WorkerTask",
    "aopen_checkpointer",
    "aopen_store",
    "create_supervisor",
    "open_checkpointer",
    "open_store",
    "register_secret",
    "risk",
]


def __getattr__(name: str) -> Any:
    """`SupervisorState`, moved to `langgraph_supervisor_pro.types` in 0.2.

    Importable here with a DeprecationWarning until 0.3.
    """
    if name == "SupervisorState":
        import warnings

        from langgraph_supervisor_pro._state import SupervisorState

        warnings.warn(
            "langgraph_supervisor_pro.SupervisorState moved to "
            "langgraph_supervisor_pro.types.SupervisorState; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )
        return SupervisorState
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

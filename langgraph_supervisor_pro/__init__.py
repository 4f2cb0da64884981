"""langgraph-supervisor-pro: production supervisor/worker graphs for LangGraph.

The top level holds what most programs use: the builder, workers and their
contracts, `Breaker`, the router types, the state types, compaction, the review policy,
the persistence openers and `register_secret`. Everything else lives in its submodule:
`langgraph_supervisor_pro.review` (gates, guard, review desk),
`.compaction`, `.persistence` (effects, memory), `.testing` (scripted models),
`.contracts`, `.state`, `.synthesis`, `.workers`, `.breakers` and `.supervisor`.

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

from langgraph_supervisor_pro.breakers import Breaker
from langgraph_supervisor_pro.builder import SupervisorGraph, create_supervisor
from langgraph_supervisor_pro.compaction.config import Compaction
from langgraph_supervisor_pro.compaction.middleware import CompactionMiddleware
from langgraph_supervisor_pro.contracts import (
    FINISH,
    RouteDecision,
    WorkerResult,
    WorkerTask,
    route_decision_model,
)
from langgraph_supervisor_pro.persistence.checkpointers import aopen_checkpointer, open_checkpointer
from langgraph_supervisor_pro.persistence.effects import effect_key
from langgraph_supervisor_pro.persistence.leases import (
    ThreadBusyError,
    ThreadLease,
    athread_lease,
    thread_lease,
)
from langgraph_supervisor_pro.persistence.stores import aopen_store, open_store
from langgraph_supervisor_pro.redaction import register_secret
from langgraph_supervisor_pro.review.guard import ToolGuard
from langgraph_supervisor_pro.review.policy import ReviewPolicy, Tier
from langgraph_supervisor_pro.review.risks import Risk, risk
from langgraph_supervisor_pro.state import LedgerEntry, SupervisorInput, SupervisorState, WorkerSlot
from langgraph_supervisor_pro.supervisor import Router, SupervisorView
from langgraph_supervisor_pro.workers import Worker

try:
    __version__ = _distribution_version("langgraph-supervisor-pro")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = [
    "FINISH",
    "Breaker",
    "Compaction",
    "CompactionMiddleware",
    "LedgerEntry",
    "ReviewPolicy",
    "Risk",
    "RouteDecision",
    "Router",
    "SupervisorGraph",
    "SupervisorInput",
    "SupervisorState",
    "SupervisorView",
    "ThreadBusyError",
    "ThreadLease",
    "Tier",
    "ToolGuard",
    "Worker",
    "WorkerResult",
    "WorkerSlot",
    "WorkerTask",
    "__version__",
    "aopen_checkpointer",
    "aopen_store",
    "athread_lease",
    "create_supervisor",
    "effect_key",
    "open_checkpointer",
    "open_store",
    "register_secret",
    "risk",
    "route_decision_model",
    "thread_lease",
]

"""langgraph-supervisor-pro: production supervisor/worker graphs for LangGraph.

Example:
    >>> from langgraph_supervisor_pro import Worker, create_supervisor, open_checkpointer
    >>> graph = create_supervisor([Worker(name="researcher", description="Finds facts.",
    ...                                   agent=research)], model=chat_model)
    >>> with open_checkpointer("sqlite:///runs.db") as saver:
    ...     app = graph.compile(checkpointer=saver)
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _distribution_version

from langgraph_supervisor_pro.builder import SupervisorGraph, create_supervisor
from langgraph_supervisor_pro.compaction.compactor import ContextSummary
from langgraph_supervisor_pro.compaction.config import Compaction
from langgraph_supervisor_pro.compaction.middleware import CompactionMiddleware
from langgraph_supervisor_pro.contracts import (
    FINISH,
    HaltReason,
    RouteDecision,
    RunStatus,
    WorkerResult,
    WorkerStatus,
    WorkerTask,
    route_decision_model,
)
from langgraph_supervisor_pro.persistence.checkpointers import aopen_checkpointer, open_checkpointer
from langgraph_supervisor_pro.persistence.effects import (
    AsyncPostgresEffects,
    PostgresEffects,
    StoreEffects,
    aopen_effects,
    effect_key,
    open_effects,
)
from langgraph_supervisor_pro.persistence.memory import recall_tool
from langgraph_supervisor_pro.persistence.stores import aopen_store, open_store
from langgraph_supervisor_pro.review.confirm import ConfirmRequest
from langgraph_supervisor_pro.review.desk import (
    InvalidDecisionError,
    PendingReview,
    ReviewError,
    ReviewNotFoundError,
    SweepAction,
    aget_review,
    alist_reviews,
    aresolve_review,
    asweep_reviews,
    get_review,
    list_reviews,
    resolve_review,
    sweep_reviews,
)
from langgraph_supervisor_pro.review.gate import ReviewDecision, request_review, review_payload
from langgraph_supervisor_pro.review.guard import ToolGuard
from langgraph_supervisor_pro.review.policy import ReviewPolicy, Tier
from langgraph_supervisor_pro.review.risk import Risk, UndeclaredRiskWarning, risk
from langgraph_supervisor_pro.state import (
    CompactionEntry,
    LedgerEntry,
    RouteState,
    SecurityEntry,
    SupervisorInput,
    SupervisorState,
    UsageEntry,
    WorkerSlot,
)
from langgraph_supervisor_pro.supervisor import DEFAULT_SUPERVISOR_PROMPT, Router, SupervisorView
from langgraph_supervisor_pro.synthesis import (
    DEFAULT_SYNTHESIS_PROMPT,
    HopOutput,
    SynthesisInput,
    Synthesizer,
)
from langgraph_supervisor_pro.workers import (
    Worker,
    WorkerAgent,
    WorkerTimeoutError,
    default_worker_retry,
)

try:
    __version__ = _distribution_version("langgraph-supervisor-pro")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = [
    "DEFAULT_SUPERVISOR_PROMPT",
    "DEFAULT_SYNTHESIS_PROMPT",
    "FINISH",
    "AsyncPostgresEffects",
    "Compaction",
    "CompactionEntry",
    "CompactionMiddleware",
    "ConfirmRequest",
    "ContextSummary",
    "HaltReason",
    "HopOutput",
    "InvalidDecisionError",
    "LedgerEntry",
    "PendingReview",
    "PostgresEffects",
    "ReviewDecision",
    "ReviewError",
    "ReviewNotFoundError",
    "ReviewPolicy",
    "Risk",
    "RouteDecision",
    "RouteState",
    "Router",
    "RunStatus",
    "SecurityEntry",
    "StoreEffects",
    "SupervisorGraph",
    "SupervisorInput",
    "SupervisorState",
    "SupervisorView",
    "SweepAction",
    "SynthesisInput",
    "Synthesizer",
    "Tier",
    "ToolGuard",
    "UndeclaredRiskWarning",
    "UsageEntry",
    "Worker",
    "WorkerAgent",
    "WorkerResult",
    "WorkerSlot",
    "WorkerStatus",
    "WorkerTask",
    "WorkerTimeoutError",
    "__version__",
    "aget_review",
    "alist_reviews",
    "aopen_checkpointer",
    "aopen_effects",
    "aopen_store",
    "aresolve_review",
    "asweep_reviews",
    "create_supervisor",
    "default_worker_retry",
    "effect_key",
    "get_review",
    "list_reviews",
    "open_checkpointer",
    "open_effects",
    "open_store",
    "recall_tool",
    "request_review",
    "resolve_review",
    "review_payload",
    "risk",
    "route_decision_model",
    "sweep_reviews",
]

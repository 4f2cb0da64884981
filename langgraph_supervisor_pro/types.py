"""The vocabulary of a supervisor graph's state and routing: what its values are.

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/state/

Example:
    >>> from langgraph_supervisor_pro.types import route_decision_model
    >>> route_decision_model(["researcher"])(next="FINISH").next
    'FINISH'
"""

from langgraph_supervisor_pro._builder import SupervisorGraph
from langgraph_supervisor_pro._contracts import (
    HaltReason,
    RunStatus,
    WorkerStatus,
    route_decision_model,
)
from langgraph_supervisor_pro._state import (
    LedgerEntry,
    ReviewEntry,
    SupervisorInput,
    SupervisorState,
    WorkerSlot,
)
from langgraph_supervisor_pro._supervisor import Router

__all__ = [
    "HaltReason",
    "LedgerEntry",
    "ReviewEntry",
    "Router",
    "RunStatus",
    "SupervisorGraph",
    "SupervisorInput",
    "SupervisorState",
    "WorkerSlot",
    "WorkerStatus",
    "route_decision_model",
]

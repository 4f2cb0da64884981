"""Observability: what a run did, read back from its checkpoints.

- `audit_trail(checkpointer_or_graph, thread_id)`: the timeline of one run for a
  compliance reader (`lgsp audit`).

Example:
    ```python
    from langgraph_supervisor_pro.observability import audit_trail
    trail = audit_trail(saver, "order-7")
    ```
"""

from langgraph_supervisor_pro.observability.audit import (
    AuditEvent,
    AuditTrail,
    CompactionEvent,
    DecisionEvent,
    EffectEvent,
    EndEvent,
    HopEvent,
    RefusalEvent,
    ReviewEvent,
    TurnEvent,
    audit_trail,
)

__all__ = [
    "AuditEvent",
    "AuditTrail",
    "CompactionEvent",
    "DecisionEvent",
    "EffectEvent",
    "EndEvent",
    "HopEvent",
    "RefusalEvent",
    "ReviewEvent",
    "TurnEvent",
    "audit_trail",
]

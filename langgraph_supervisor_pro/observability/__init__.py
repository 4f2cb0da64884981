"""Observability: what runs did, as OpenTelemetry traces and read back from checkpoints.

- `OTelCallbackHandler` (the `otel` extra): a run's decisions, hops and tool calls as
  OpenTelemetry GenAI spans. Loaded on first use, so the package imports without
  OpenTelemetry; without it, using the name says which extra to install.
- `audit_trail(checkpointer_or_graph, thread_id)`: the timeline of one run for a
  compliance reader (`lgsp audit`).

Example:
    >>> from langgraph_supervisor_pro.observability import OTelCallbackHandler
    >>> OTelCallbackHandler().capture_content
    False
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from langgraph_supervisor_pro.observability.otel import OTelCallbackHandler

__all__ = [
    "AuditEvent",
    "AuditTrail",
    "CompactionEvent",
    "DecisionEvent",
    "EffectEvent",
    "EndEvent",
    "HopEvent",
    "OTelCallbackHandler",
    "RefusalEvent",
    "ReviewEvent",
    "TurnEvent",
    "audit_trail",
]


def __getattr__(name: str) -> Any:
    if name == "OTelCallbackHandler":
        try:
            from langgraph_supervisor_pro.observability.otel import OTelCallbackHandler
        except ImportError as exc:
            raise ImportError(
                "OTelCallbackHandler needs OpenTelemetry: "
                'pip install "langgraph-supervisor-pro[otel]"'
            ) from exc
        return OTelCallbackHandler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

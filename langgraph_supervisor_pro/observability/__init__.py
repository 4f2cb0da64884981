"""Observability: what runs did, as OpenTelemetry traces and read back from checkpoints.

- `OTelCallbackHandler` (the `otel` extra): a run's decisions, hops and tool calls as
  OpenTelemetry GenAI spans. Loaded on first use, so the package imports without
  OpenTelemetry; without it, using the name says which extra to install.
- `audit_trail(checkpointer_or_graph, thread_id)`: the timeline of one run for a
  compliance reader (`lgsp audit`).
- `delegation_metrics(checkpointer, ...)`: completion, routing, handoffs, workers,
  utilisation and reviews across a database's runs (`lgsp metrics`).
- `evaluate(graph, dataset, scorers)` / `aevaluate`: run labelled cases offline, score
  them and measure routing precision, recall and F1.
- `OnlineJudge` (`create_supervisor(judge=...)`): a judge model scores a sample of
  completed turns online; low scores wait in the store (`judge_reviews`,
  `acknowledge_judgement`, `lgsp judge`), scores go to LangSmith as feedback.

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
    JudgementEvent,
    RefusalEvent,
    ReviewEvent,
    TurnEvent,
    audit_trail,
)
from langgraph_supervisor_pro.observability.evaluation import (
    Case,
    CaseResult,
    EvaluationReport,
    Outcome,
    RunOutput,
    Score,
    Scorer,
    ScorerSummary,
    aevaluate,
    answer_traits,
    dataset_cases,
    evaluate,
    langsmith_cases,
    route_exact_match,
    status_done,
)
from langgraph_supervisor_pro.observability.judge import (
    DEFAULT_JUDGE_CRITERIA,
    JudgeVerdict,
    OnlineJudge,
    judge_key,
    judged,
)
from langgraph_supervisor_pro.observability.judge_queue import (
    JUDGE_NAMESPACE,
    JudgedTurn,
    JudgementNotFoundError,
    ReviewStatus,
    aacknowledge_judgement,
    acknowledge_judgement,
    ajudge_reviews,
    judge_reviews,
)
from langgraph_supervisor_pro.observability.metrics import (
    DEFAULT_LOOP_VISITS,
    DEFAULT_UTILISATION_ALERT,
    CompactionMetrics,
    CompletionMetrics,
    DelegationMetrics,
    DomainRecord,
    EdgeMetrics,
    ExpectedRoutes,
    RefusalMetrics,
    ReviewMetrics,
    ReviewOpening,
    RoutingMetrics,
    RoutingScore,
    ThreadRecord,
    UtilisationMetrics,
    WorkerMetrics,
    adelegation_metrics,
    aread_threads,
    compute_metrics,
    delegation_metrics,
    expected_routes,
    load_expected,
    parse_since,
    read_threads,
)

if TYPE_CHECKING:
    from langgraph_supervisor_pro.observability.otel import OTelCallbackHandler

__all__ = [
    "DEFAULT_JUDGE_CRITERIA",
    "DEFAULT_LOOP_VISITS",
    "DEFAULT_UTILISATION_ALERT",
    "JUDGE_NAMESPACE",
    "AuditEvent",
    "AuditTrail",
    "Case",
    "CaseResult",
    "CompactionEvent",
    "CompactionMetrics",
    "CompletionMetrics",
    "DecisionEvent",
    "DelegationMetrics",
    "DomainRecord",
    "EdgeMetrics",
    "EffectEvent",
    "EndEvent",
    "EvaluationReport",
    "ExpectedRoutes",
    "HopEvent",
    "JudgeVerdict",
    "JudgedTurn",
    "JudgementEvent",
    "JudgementNotFoundError",
    "OTelCallbackHandler",
    "OnlineJudge",
    "Outcome",
    "RefusalEvent",
    "RefusalMetrics",
    "ReviewEvent",
    "ReviewMetrics",
    "ReviewOpening",
    "ReviewStatus",
    "RoutingMetrics",
    "RoutingScore",
    "RunOutput",
    "Score",
    "Scorer",
    "ScorerSummary",
    "ThreadRecord",
    "TurnEvent",
    "UtilisationMetrics",
    "WorkerMetrics",
    "aacknowledge_judgement",
    "acknowledge_judgement",
    "adelegation_metrics",
    "aevaluate",
    "ajudge_reviews",
    "answer_traits",
    "aread_threads",
    "audit_trail",
    "compute_metrics",
    "dataset_cases",
    "delegation_metrics",
    "evaluate",
    "expected_routes",
    "judge_key",
    "judge_reviews",
    "judged",
    "langsmith_cases",
    "load_expected",
    "parse_since",
    "read_threads",
    "route_exact_match",
    "status_done",
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

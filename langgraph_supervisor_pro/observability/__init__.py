"""Observability: what runs did, as OpenTelemetry traces and read back from checkpoints.

- `OTelCallbackHandler` (the `otel` extra): a run's decisions, hops and tool calls as
  OpenTelemetry GenAI spans; `publish_metrics(report)`: the delegation metrics as
  OpenTelemetry instruments. Loaded on first use, so the package imports without
  OpenTelemetry; without it, using the names says which extra to install.
- `audit_trail(checkpointer_or_graph, thread_id)`: the timeline of one run for a
  compliance reader (`lgsp audit`).
- `delegation_metrics(checkpointer, ...)`: completion, routing, handoffs, workers,
  utilisation and reviews across a database's runs (`lgsp metrics`);
  `write_metrics_html(report, path)`: the same as one self-contained page with charts
  (`lgsp metrics --html`).
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

import importlib
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
    JudgementAlreadyAcknowledgedError,
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
    REVIEW_TIME_BUCKETS,
    CompactionMetrics,
    CompletionMetrics,
    DelegationMetrics,
    DomainRecord,
    EdgeMetrics,
    ExpectedRoutes,
    HopUtilisation,
    RefusalMetrics,
    ReviewMetrics,
    ReviewOpening,
    ReviewTimeBucket,
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
from langgraph_supervisor_pro.observability.metrics_html import (
    HOP_COLOURS,
    REVIEW_COLOUR,
    ROLE_COLOURS,
    metrics_html,
    write_metrics_html,
)

if TYPE_CHECKING:
    from langgraph_supervisor_pro.observability.otel import OTelCallbackHandler
    from langgraph_supervisor_pro.observability.otel_metrics import (
        INSTRUMENTS,
        DelegationInstruments,
        publish_metrics,
    )

__all__ = [
    "DEFAULT_JUDGE_CRITERIA",
    "DEFAULT_LOOP_VISITS",
    "DEFAULT_UTILISATION_ALERT",
    "HOP_COLOURS",
    "INSTRUMENTS",
    "JUDGE_NAMESPACE",
    "REVIEW_COLOUR",
    "REVIEW_TIME_BUCKETS",
    "ROLE_COLOURS",
    "AuditEvent",
    "AuditTrail",
    "Case",
    "CaseResult",
    "CompactionEvent",
    "CompactionMetrics",
    "CompletionMetrics",
    "DecisionEvent",
    "DelegationInstruments",
    "DelegationMetrics",
    "DomainRecord",
    "EdgeMetrics",
    "EffectEvent",
    "EndEvent",
    "EvaluationReport",
    "ExpectedRoutes",
    "HopEvent",
    "HopUtilisation",
    "JudgeVerdict",
    "JudgedTurn",
    "JudgementAlreadyAcknowledgedError",
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
    "ReviewTimeBucket",
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
    "metrics_html",
    "parse_since",
    "publish_metrics",
    "read_threads",
    "route_exact_match",
    "status_done",
    "write_metrics_html",
]


_NEEDS_OPENTELEMETRY = {
    "OTelCallbackHandler": "otel",
    "DelegationInstruments": "otel_metrics",
    "INSTRUMENTS": "otel_metrics",
    "publish_metrics": "otel_metrics",
}
"""The names loaded on first use, from the modules that import OpenTelemetry."""


def __getattr__(name: str) -> Any:
    module = _NEEDS_OPENTELEMETRY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        loaded = importlib.import_module(f"{__name__}.{module}")
    except ImportError as exc:
        raise ImportError(
            f'{name} needs OpenTelemetry: pip install "langgraph-supervisor-pro[otel]"'
        ) from exc
    return getattr(loaded, name)

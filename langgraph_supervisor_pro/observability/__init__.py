"""Observability: delegation metrics computed from the checkpoints (`metrics.py`).

Example:
    ```python
    from langgraph_supervisor_pro.observability import delegation_metrics

    report = delegation_metrics(saver, since="24h")
    print(report.completion.completion_rate)
    ```
"""

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

__all__ = [
    "DEFAULT_LOOP_VISITS",
    "DEFAULT_UTILISATION_ALERT",
    "CompactionMetrics",
    "CompletionMetrics",
    "DelegationMetrics",
    "DomainRecord",
    "EdgeMetrics",
    "ExpectedRoutes",
    "RefusalMetrics",
    "ReviewMetrics",
    "ReviewOpening",
    "RoutingMetrics",
    "RoutingScore",
    "ThreadRecord",
    "UtilisationMetrics",
    "WorkerMetrics",
    "adelegation_metrics",
    "aread_threads",
    "compute_metrics",
    "delegation_metrics",
    "expected_routes",
    "load_expected",
    "parse_since",
    "read_threads",
]

"""The delegation metrics as OpenTelemetry metrics (the `otel` extra).

`publish_metrics(report, meter_provider=...)` registers one observable instrument per figure
of a `DelegationMetrics` (`INSTRUMENTS` lists them): counts as asynchronous UpDownCounters,
shares, utilisation and durations as asynchronous Gauges; a figure with no value is not
reported. Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/metrics/

Example:
    ```python
    instruments = publish_metrics(delegation_metrics(saver), meter_provider=provider)
    instruments.update(delegation_metrics(saver))  # later, with fresh figures
    ```
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Meter, MeterProvider, Observation

from langgraph_supervisor_pro.observability._metrics import DelegationMetrics

_SCOPE = "langgraph_supervisor_pro.observability"

Point = tuple[float, dict[str, str | int]]
"""One observation: the value and its attributes."""

Points = Callable[[DelegationMetrics], Iterable[Point]]


@dataclass(frozen=True)
class _Spec:
    name: str
    unit: str
    description: str
    points: Points

    @property
    def kind(self) -> str:
        """`count` (an asynchronous UpDownCounter: units such as `{run}`) or `gauge`."""
        return "count" if self.unit.startswith("{") else "gauge"


def _at(report: object, path: str) -> Any:
    """`report.<path>` (dotted), None when a part of it is None (effects not counted)."""
    for name in path.split("."):
        report = None if report is None else getattr(report, name)
    return report


def _value(path: str) -> Points:
    """The figure at `path`, without attributes, when it has a value."""
    return lambda r: [] if _at(r, path) is None else [(_at(r, path), {})]


def _by(path: str, attribute: str) -> Points:
    """One point per key of the mapping at `path`."""
    return lambda r: [(n, {attribute: key}) for key, n in (_at(r, path) or {}).items()]


def _each(path: str, figure: str, key: str, attribute: str) -> Points:
    """Each item's `figure` (when it has one) of the sequence at `path`, by its `key`."""
    return lambda r: [
        (getattr(item, figure), {attribute: getattr(item, key)})
        for item in _at(r, path) or ()
        if getattr(item, figure) is not None
    ]


def _per_worker(figure: str) -> Points:
    return _each("workers", figure, "worker", "lgsp.worker.path")


def _per_role(figure: str) -> Points:
    return _each("utilisation", figure, "role", "lgsp.role")


def _routing(figure: str) -> Points:
    return _each("routing.per_worker", figure, "worker", "lgsp.worker.path")


def _edge(source: str, target: str) -> dict[str, str | int]:
    return {"lgsp.edge.source": source, "lgsp.edge.target": target}


def _hops(r: DelegationMetrics) -> Iterator[Point]:
    for e in r.edges:
        for status, count in (
            ("success", e.succeeded),
            ("needs_review", e.needs_review),
            ("failed", e.failed),
        ):
            yield count, {**_edge(e.source, e.target), "lgsp.status": status}


Labels = Callable[[Any], dict[str, str | int]]


def _worker(item: Any) -> dict[str, str | int]:
    return {"lgsp.worker.path": item.worker}


def _model(item: Any) -> dict[str, str | int]:
    labels: dict[str, str | int] = {"gen_ai.request.model": item.model or "unknown"}
    if item.provider:
        labels["gen_ai.provider.name"] = item.provider
    return labels


def _spent(path: str, labels: Labels, figure: str) -> Points:
    """`figure` of the spend of each item (of the sequence at `path`) that made calls."""
    return lambda r: [
        (value, labels(item))
        for item in _at(r, path) or ()
        if item.spend.calls and (value := getattr(item.spend, figure)) is not None
    ]


def _tokens(path: str, labels: Labels) -> Points:
    """Input and output tokens (`gen_ai.token.type`) of each item that made calls."""
    return lambda r: [
        (getattr(item.spend, f"{kind}_tokens"), {**labels(item), "gen_ai.token.type": kind})
        for item in _at(r, path) or ()
        if item.spend.calls
        for kind in ("input", "output")
    ]


def _hop_utilisation(figure: str) -> Points:
    return lambda r: [
        (getattr(u, figure), {"lgsp.hop.number": hop.hop, "lgsp.role": u.role})
        for hop in r.hop_utilisation
        for u in hop.roles
    ]


_SPECS = (
    _Spec(
        "lgsp.run.count",
        "{run}",
        "Runs (threads) by status.",
        _by("completion.by_status", "lgsp.status"),
    ),
    _Spec(
        "lgsp.run.halt.count",
        "{run}",
        "Runs that stopped early, by halt reason.",
        _by("completion.by_halt_reason", "lgsp.halt_reason"),
    ),
    _Spec(
        "lgsp.run.completion.ratio",
        "1",
        "The share of runs that ended done.",
        _value("completion.completion_rate"),
    ),
    _Spec(
        "lgsp.hop.count",
        "{hop}",
        "Hops along each edge of the delegation tree, by how they ended.",
        _hops,
    ),
    _Spec(
        "lgsp.handoff.success.ratio",
        "1",
        "The share of an edge's hops that succeeded.",
        lambda r: [
            (e.success_rate, _edge(e.source, e.target))
            for e in r.edges
            if e.success_rate is not None
        ],
    ),
    _Spec(
        "lgsp.worker.visit.count",
        "{visit}",
        "Visits of each worker (by path in a tree).",
        _per_worker("visits"),
    ),
    _Spec(
        "lgsp.worker.retry.count",
        "{visit}",
        "Visits after a failed hop of the same worker in the same turn.",
        _per_worker("retries"),
    ),
    _Spec(
        "lgsp.worker.loop.count",
        "{turn}",
        "Turns in which a worker ran loop_visits times or more.",
        _per_worker("loop_flags"),
    ),
    _Spec(
        "lgsp.worker.refusal.count",
        "{call}",
        "Tool calls of a worker refused for least privilege.",
        _per_worker("refused_tools"),
    ),
    _Spec(
        "lgsp.worker.token.count",
        "{token}",
        "Tokens of a worker's model calls (a domain's: every call inside it), by type.",
        _tokens("workers", _worker),
    ),
    _Spec(
        "lgsp.worker.cost",
        "{currency}",
        "Cost of a worker's priced model calls, in the price table's currency.",
        _spent("workers", _worker, "cost"),
    ),
    _Spec(
        "lgsp.worker.unpriced_call.count",
        "{call}",
        "A worker's model calls without a price (unpriced, not free).",
        _spent("workers", _worker, "unpriced_calls"),
    ),
    _Spec(
        "lgsp.model.token.count",
        "{token}",
        "Tokens of the runs' model calls per model, by type.",
        _tokens("models", _model),
    ),
    _Spec(
        "lgsp.model.cost",
        "{currency}",
        "Cost of a model's priced calls, in the price table's currency.",
        _spent("models", _model, "cost"),
    ),
    _Spec(
        "lgsp.model.unpriced_call.count",
        "{call}",
        "A model's calls without a price (unpriced, not free).",
        _spent("models", _model, "unpriced_calls"),
    ),
    _Spec(
        "lgsp.budget.event.count",
        "{event}",
        "Budget events by kind: warning, approved, rejected, exceeded.",
        lambda r: [
            (getattr(r.budget, figure), {"lgsp.budget.event.kind": kind})
            for figure, kind in (
                ("warnings", "warning"),
                ("approved", "approved"),
                ("rejected", "rejected"),
                ("exceeded", "exceeded"),
            )
        ],
    ),
    _Spec(
        "lgsp.budget.halt.count",
        "{turn}",
        "Turns of runs that halted on a budget (budget_exceeded).",
        _value("budget.halts"),
    ),
    _Spec(
        "lgsp.model.call.count",
        "{call}",
        "Model calls measured against a context window, by role.",
        _per_role("calls"),
    ),
    _Spec(
        "lgsp.model.call.over_threshold.count",
        "{call}",
        "Model calls at or over the utilisation alert threshold, by role.",
        _per_role("over_threshold"),
    ),
    _Spec(
        "lgsp.context.utilization.average",
        "1",
        "Average context utilisation (tokens / window) of a role's calls.",
        _per_role("average"),
    ),
    _Spec(
        "lgsp.context.utilization.p99",
        "1",
        "99th percentile (nearest rank) of a role's context utilisation.",
        _per_role("p99"),
    ),
    _Spec(
        "lgsp.context.utilization.peak",
        "1",
        "Highest context utilisation of a role's calls.",
        _per_role("peak"),
    ),
    _Spec(
        "lgsp.context.utilization.alert",
        "1",
        "1 when a role's p99 utilisation reached the alert threshold, else 0.",
        lambda r: [(int(u.alert), {"lgsp.role": u.role}) for u in r.utilisation],
    ),
    _Spec(
        "lgsp.hop.context.utilization.average",
        "1",
        "Average context utilisation of the calls serving the Nth hop of a run.",
        _hop_utilisation("average"),
    ),
    _Spec(
        "lgsp.hop.context.utilization.peak",
        "1",
        "Highest context utilisation of the calls serving the Nth hop of a run.",
        _hop_utilisation("peak"),
    ),
    _Spec(
        "lgsp.compaction.count",
        "{compaction}",
        "Compactions of workers' histories, by reason.",
        _by("compactions.by_reason", "lgsp.compaction.reason"),
    ),
    _Spec(
        "lgsp.compaction.failure.count",
        "{compaction}",
        "Compactions whose summarizer failed or was skipped (breaker open).",
        _value("compactions.failed"),
    ),
    _Spec(
        "lgsp.compaction.truncated.count",
        "{compaction}",
        "Compactions that fell back to dropping the oldest turns.",
        _value("compactions.truncated"),
    ),
    _Spec(
        "lgsp.compaction.saved",
        "{token}",
        "Tokens the successful compactions removed from the histories.",
        _value("compactions.tokens_saved"),
    ),
    _Spec(
        "lgsp.tool.refusal.count",
        "{call}",
        "Tool calls refused for least privilege, by tool.",
        _by("refusals.by_tool", "gen_ai.tool.name"),
    ),
    _Spec(
        "lgsp.review.count",
        "{review}",
        "Answered reviews, by decision.",
        _by("reviews.by_decision", "lgsp.review.decision"),
    ),
    _Spec(
        "lgsp.review.escalated.count",
        "{review}",
        "Answered reviews that were escalated before their answer.",
        _value("reviews.escalated"),
    ),
    _Spec(
        "lgsp.review.deadline_breach.count",
        "{review}",
        "Reviews answered at or after their first deadline, or pending past it.",
        _value("reviews.deadline_breaches"),
    ),
    _Spec(
        "lgsp.review.pending.count",
        "{review}",
        "Reviews the runs are paused on.",
        _value("reviews.pending"),
    ),
    _Spec(
        "lgsp.review.overdue.count",
        "{review}",
        "Pending reviews whose deadline has passed.",
        _value("reviews.overdue"),
    ),
    _Spec(
        "lgsp.review.escalation.ratio",
        "1",
        "The share of answered reviews that were escalated.",
        _value("reviews.escalation_rate"),
    ),
    _Spec(
        "lgsp.review.duration.average",
        "s",
        "Average time in review, from the pause to the answer.",
        _value("reviews.average_seconds"),
    ),
    _Spec(
        "lgsp.review.duration.p99",
        "s",
        "99th percentile (nearest rank) of the time in review.",
        _value("reviews.p99_seconds"),
    ),
    _Spec(
        "lgsp.review.duration.max", "s", "Longest time in review.", _value("reviews.max_seconds")
    ),
    _Spec(
        "lgsp.effect.count",
        "{effect}",
        "Side effects the runs recorded, by state (done, intent, in_doubt, ...).",
        _by("effects.by_state", "lgsp.effect.state"),
    ),
    _Spec(
        "lgsp.effect.doubted.count",
        "{effect}",
        "Side effects not done: in doubt, or settled after a doubt.",
        _value("effects.doubted"),
    ),
    _Spec(
        "lgsp.effect.in_doubt.count",
        "{effect}",
        "Side effects still in doubt: they may have happened, or not.",
        _value("effects.in_doubt"),
    ),
    _Spec(
        "lgsp.routing.precision",
        "1",
        "Routing precision per worker against the expected routes.",
        _routing("precision"),
    ),
    _Spec(
        "lgsp.routing.recall",
        "1",
        "Routing recall per worker against the expected routes.",
        _routing("recall"),
    ),
    _Spec(
        "lgsp.routing.f1", "1", "Routing F1 per worker against the expected routes.", _routing("f1")
    ),
)

INSTRUMENTS: tuple[str, ...] = tuple(s.name for s in _SPECS)
"""The names of the instruments `publish_metrics` registers, in order."""


def _version() -> str | None:
    try:
        return version("langgraph-supervisor-pro")
    except PackageNotFoundError:  # pragma: no cover - a checkout run without installing
        return None


def _checked(report: object) -> DelegationMetrics:
    if not isinstance(report, DelegationMetrics):
        raise ValueError(
            f"report: got {type(report).__name__}; give a DelegationMetrics "
            "(delegation_metrics(saver) or compute_metrics(records))"
        )
    return report


class DelegationInstruments:
    """The observable instruments publishing the report last given (`publish_metrics`).

    Example:
        >>> from opentelemetry.sdk.metrics import MeterProvider
        >>> from langgraph_supervisor_pro.observability import compute_metrics
        >>> instruments = publish_metrics(compute_metrics([]), meter_provider=MeterProvider())
        >>> instruments.report.completion.runs
        0
    """

    def __init__(self, report: DelegationMetrics, *, meter: Meter) -> None:
        self._lock = threading.Lock()
        self._report = _checked(report)
        for spec in _SPECS:
            create = (
                meter.create_observable_gauge
                if spec.kind == "gauge"
                else meter.create_observable_up_down_counter
            )
            create(
                spec.name,
                callbacks=[self._callback(spec)],
                unit=spec.unit,
                description=spec.description,
            )

    @property
    def report(self) -> DelegationMetrics:
        """The report the instruments publish."""
        with self._lock:
            return self._report

    def update(self, report: DelegationMetrics) -> None:
        """Publish `report` (a `DelegationMetrics`, else ValueError) from the next collection on."""
        checked = _checked(report)
        with self._lock:
            self._report = checked

    def _callback(self, spec: _Spec) -> Callable[[CallbackOptions], Iterable[Observation]]:
        def observe(options: CallbackOptions) -> Iterable[Observation]:
            return [
                Observation(value, attributes) for value, attributes in spec.points(self.report)
            ]

        return observe


def publish_metrics(
    report: DelegationMetrics, *, meter_provider: MeterProvider | None = None
) -> DelegationInstruments:
    """Register the delegation metrics as observable OpenTelemetry instruments.

    Register once per provider (a second registration of the same names is refused by
    the SDK with a warning in its log); publish newer figures with `update`.

    Args:
        report: The figures to publish.
        meter_provider: The provider whose readers collect them; the global one when None.

    Returns:
        The instruments, holding the report.

    Raises:
        ValueError: If `report` is not a `DelegationMetrics`.

    Example:
        ```python
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader

        reader = InMemoryMetricReader()
        publish_metrics(delegation_metrics(saver),
                        meter_provider=MeterProvider(metric_readers=[reader]))
        data = reader.get_metrics_data()   # lgsp.run.count, lgsp.hop.count, ...
        ```
    """
    meter = metrics.get_meter(_SCOPE, _version() or "", meter_provider=meter_provider)
    return DelegationInstruments(report, meter=meter)

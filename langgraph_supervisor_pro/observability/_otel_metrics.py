"""The delegation metrics as OpenTelemetry metrics (the `otel` extra).

`publish_metrics(report, meter_provider=...)` registers one observable instrument per
figure of a `DelegationMetrics` on a meter (scope `langgraph_supervisor_pro.observability`);
each collection by the provider's readers reports the figures of the newest report
(`DelegationInstruments.update(report)` swaps it, for a process that recomputes them on a
schedule). The figures are a snapshot of the runs in the database (or the `since` window),
not events, so counts are asynchronous UpDownCounters (they may go down when the window
moves) and shares, utilisation and durations are asynchronous Gauges. Names follow the
OpenTelemetry naming guidelines: under `lgsp.`, units in UCUM (`1`, `s`, `{run}`, ...) and
not in the name, counts singular with `.count`.

The instruments (`INSTRUMENTS` lists them; attributes in brackets):

- runs: `lgsp.run.count` `{run}` [`lgsp.status`], `lgsp.run.halt.count` `{run}`
  [`lgsp.halt_reason`], `lgsp.run.completion.ratio` `1`;
- handoffs: `lgsp.hop.count` `{hop}` [`lgsp.edge.source`, `lgsp.edge.target`,
  `lgsp.status`], `lgsp.handoff.success.ratio` `1` [`lgsp.edge.source`, `lgsp.edge.target`];
- workers [`lgsp.worker.path`]: `lgsp.worker.visit.count` `{visit}`,
  `lgsp.worker.retry.count` `{visit}`, `lgsp.worker.loop.count` `{turn}`,
  `lgsp.worker.refusal.count` `{call}`;
- utilisation [`lgsp.role`]: `lgsp.model.call.count` `{call}`,
  `lgsp.model.call.over_threshold.count` `{call}`, `lgsp.context.utilization.average`,
  `.p99`, `.peak` and `.alert` (1 when the p99 reached the threshold) `1`; per hop
  [`lgsp.hop.number`, `lgsp.role`]: `lgsp.hop.context.utilization.average` and `.peak` `1`;
- compactions: `lgsp.compaction.count` `{compaction}` [`lgsp.compaction.reason`],
  `lgsp.compaction.failure.count` `{compaction}`, `lgsp.compaction.truncated.count`
  `{compaction}`, `lgsp.compaction.saved` `{token}`;
  refused tools: `lgsp.tool.refusal.count` `{call}` [`gen_ai.tool.name`];
- reviews: `lgsp.review.count` `{review}` [`lgsp.review.decision`], `.escalated.count`,
  `.deadline_breach.count`, `.pending.count`, `.overdue.count` `{review}`,
  `lgsp.review.escalation.ratio` `1`, `lgsp.review.duration.average`, `.p99`, `.max` `s`;
- effects, when the report counted them (`effects=`): `lgsp.effect.count` `{effect}`
  [`lgsp.effect.state`], `lgsp.effect.doubted.count` `{effect}` (not `done`: in doubt or
  settled after a doubt) and `lgsp.effect.in_doubt.count` `{effect}` (still in doubt);
- routing, when scored [`lgsp.worker.path`]: `lgsp.routing.precision`, `.recall`, `.f1` `1`.

A figure with no value (a share of nothing, the time in review without a timed review,
effects not counted) is not reported. Requires the `otel` extra
(`pip install "langgraph-supervisor-pro[otel]"`).

Example:
    ```python
    from opentelemetry.sdk.metrics import MeterProvider
    from langgraph_supervisor_pro.observability import delegation_metrics, publish_metrics

    instruments = publish_metrics(delegation_metrics(saver), meter_provider=provider)
    ...  # later, with fresh figures:
    instruments.update(delegation_metrics(saver))
    ```
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Literal

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Meter, MeterProvider, Observation

from langgraph_supervisor_pro.observability._metrics import DelegationMetrics

__all__ = ["INSTRUMENTS", "DelegationInstruments", "publish_metrics"]

_SCOPE = "langgraph_supervisor_pro.observability"

Point = tuple[float, dict[str, str | int]]
"""One observation: the value and its attributes."""


@dataclass(frozen=True, kw_only=True)
class _Spec:
    name: str
    kind: Literal["count", "gauge"]
    """An asynchronous UpDownCounter (a count) or Gauge."""
    unit: str
    description: str
    points: Callable[[DelegationMetrics], Iterable[Point]]


def _one(value: float | None) -> Iterable[Point]:
    return [] if value is None else [(value, {})]


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


def _hop_utilisation(
    pick: Callable[[float, float], float],
) -> Callable[[DelegationMetrics], Iterator[Point]]:
    def points(r: DelegationMetrics) -> Iterator[Point]:
        for hop in r.hop_utilisation:
            for u in hop.roles:
                yield pick(u.average, u.peak), {"lgsp.hop.number": hop.hop, "lgsp.role": u.role}

    return points


def _routing(pick: str) -> Callable[[DelegationMetrics], Iterator[Point]]:
    def points(r: DelegationMetrics) -> Iterator[Point]:
        for score in () if r.routing is None else r.routing.per_worker:
            value = getattr(score, pick)
            if value is not None:
                yield value, {"lgsp.worker.path": score.worker}

    return points


def _specs() -> tuple[_Spec, ...]:
    return (
        _Spec(
            name="lgsp.run.count",
            kind="count",
            unit="{run}",
            description="Runs (threads) by status.",
            points=lambda r: [(n, {"lgsp.status": s}) for s, n in r.completion.by_status.items()],
        ),
        _Spec(
            name="lgsp.run.halt.count",
            kind="count",
            unit="{run}",
            description="Runs that stopped early, by halt reason.",
            points=lambda r: [
                (n, {"lgsp.halt_reason": s}) for s, n in r.completion.by_halt_reason.items()
            ],
        ),
        _Spec(
            name="lgsp.run.completion.ratio",
            kind="gauge",
            unit="1",
            description="The share of runs that ended done.",
            points=lambda r: _one(r.completion.completion_rate),
        ),
        _Spec(
            name="lgsp.hop.count",
            kind="count",
            unit="{hop}",
            description="Hops along each edge of the delegation tree, by how they ended.",
            points=_hops,
        ),
        _Spec(
            name="lgsp.handoff.success.ratio",
            kind="gauge",
            unit="1",
            description="The share of an edge's hops that succeeded.",
            points=lambda r: [
                (e.success_rate, _edge(e.source, e.target))
                for e in r.edges
                if e.success_rate is not None
            ],
        ),
        _Spec(
            name="lgsp.worker.visit.count",
            kind="count",
            unit="{visit}",
            description="Visits of each worker (by path in a tree).",
            points=lambda r: [(w.visits, {"lgsp.worker.path": w.worker}) for w in r.workers],
        ),
        _Spec(
            name="lgsp.worker.retry.count",
            kind="count",
            unit="{visit}",
            description="Visits after a failed hop of the same worker in the same turn.",
            points=lambda r: [(w.retries, {"lgsp.worker.path": w.worker}) for w in r.workers],
        ),
        _Spec(
            name="lgsp.worker.loop.count",
            kind="count",
            unit="{turn}",
            description="Turns in which a worker ran loop_visits times or more.",
            points=lambda r: [(w.loop_flags, {"lgsp.worker.path": w.worker}) for w in r.workers],
        ),
        _Spec(
            name="lgsp.worker.refusal.count",
            kind="count",
            unit="{call}",
            description="Tool calls of a worker refused for least privilege.",
            points=lambda r: [(w.refused_tools, {"lgsp.worker.path": w.worker}) for w in r.workers],
        ),
        _Spec(
            name="lgsp.model.call.count",
            kind="count",
            unit="{call}",
            description="Model calls by role.",
            points=lambda r: [(u.calls, {"lgsp.role": u.role}) for u in r.utilisation],
        ),
        _Spec(
            name="lgsp.model.call.over_threshold.count",
            kind="count",
            unit="{call}",
            description="Model calls at or over the utilisation alert threshold, by role.",
            points=lambda r: [(u.over_threshold, {"lgsp.role": u.role}) for u in r.utilisation],
        ),
        _Spec(
            name="lgsp.context.utilization.average",
            kind="gauge",
            unit="1",
            description="Average context utilisation (tokens / window) of a role's calls.",
            points=lambda r: [(u.average, {"lgsp.role": u.role}) for u in r.utilisation],
        ),
        _Spec(
            name="lgsp.context.utilization.p99",
            kind="gauge",
            unit="1",
            description="99th percentile (nearest rank) of a role's context utilisation.",
            points=lambda r: [(u.p99, {"lgsp.role": u.role}) for u in r.utilisation],
        ),
        _Spec(
            name="lgsp.context.utilization.peak",
            kind="gauge",
            unit="1",
            description="Highest context utilisation of a role's calls.",
            points=lambda r: [(u.peak, {"lgsp.role": u.role}) for u in r.utilisation],
        ),
        _Spec(
            name="lgsp.context.utilization.alert",
            kind="gauge",
            unit="1",
            description="1 when a role's p99 utilisation reached the alert threshold, else 0.",
            points=lambda r: [(int(u.alert), {"lgsp.role": u.role}) for u in r.utilisation],
        ),
        _Spec(
            name="lgsp.hop.context.utilization.average",
            kind="gauge",
            unit="1",
            description="Average context utilisation of the calls serving the Nth hop of a run.",
            points=_hop_utilisation(lambda average, peak: average),
        ),
        _Spec(
            name="lgsp.hop.context.utilization.peak",
            kind="gauge",
            unit="1",
            description="Highest context utilisation of the calls serving the Nth hop of a run.",
            points=_hop_utilisation(lambda average, peak: peak),
        ),
        _Spec(
            name="lgsp.compaction.count",
            kind="count",
            unit="{compaction}",
            description="Compactions of workers' histories, by reason.",
            points=lambda r: [
                (n, {"lgsp.compaction.reason": s}) for s, n in r.compactions.by_reason.items()
            ],
        ),
        _Spec(
            name="lgsp.compaction.failure.count",
            kind="count",
            unit="{compaction}",
            description="Compactions whose summarizer failed or was skipped (breaker open).",
            points=lambda r: [(r.compactions.failed, {})],
        ),
        _Spec(
            name="lgsp.compaction.truncated.count",
            kind="count",
            unit="{compaction}",
            description="Compactions that fell back to dropping the oldest turns.",
            points=lambda r: [(r.compactions.truncated, {})],
        ),
        _Spec(
            name="lgsp.compaction.saved",
            kind="count",
            unit="{token}",
            description="Tokens the successful compactions removed from the histories.",
            points=lambda r: [(r.compactions.tokens_saved, {})],
        ),
        _Spec(
            name="lgsp.tool.refusal.count",
            kind="count",
            unit="{call}",
            description="Tool calls refused for least privilege, by tool.",
            points=lambda r: [(n, {"gen_ai.tool.name": t}) for t, n in r.refusals.by_tool.items()],
        ),
        _Spec(
            name="lgsp.review.count",
            kind="count",
            unit="{review}",
            description="Answered reviews, by decision.",
            points=lambda r: [
                (n, {"lgsp.review.decision": d}) for d, n in r.reviews.by_decision.items()
            ],
        ),
        _Spec(
            name="lgsp.review.escalated.count",
            kind="count",
            unit="{review}",
            description="Answered reviews that were escalated before their answer.",
            points=lambda r: [(r.reviews.escalated, {})],
        ),
        _Spec(
            name="lgsp.review.deadline_breach.count",
            kind="count",
            unit="{review}",
            description="Reviews answered at or after their first deadline, or pending past it.",
            points=lambda r: [(r.reviews.deadline_breaches, {})],
        ),
        _Spec(
            name="lgsp.review.pending.count",
            kind="count",
            unit="{review}",
            description="Reviews the runs are paused on.",
            points=lambda r: [(r.reviews.pending, {})],
        ),
        _Spec(
            name="lgsp.review.overdue.count",
            kind="count",
            unit="{review}",
            description="Pending reviews whose deadline has passed.",
            points=lambda r: [(r.reviews.overdue, {})],
        ),
        _Spec(
            name="lgsp.review.escalation.ratio",
            kind="gauge",
            unit="1",
            description="The share of answered reviews that were escalated.",
            points=lambda r: _one(r.reviews.escalation_rate),
        ),
        _Spec(
            name="lgsp.review.duration.average",
            kind="gauge",
            unit="s",
            description="Average time in review, from the pause to the answer.",
            points=lambda r: _one(r.reviews.average_seconds),
        ),
        _Spec(
            name="lgsp.review.duration.p99",
            kind="gauge",
            unit="s",
            description="99th percentile (nearest rank) of the time in review.",
            points=lambda r: _one(r.reviews.p99_seconds),
        ),
        _Spec(
            name="lgsp.review.duration.max",
            kind="gauge",
            unit="s",
            description="Longest time in review.",
            points=lambda r: _one(r.reviews.max_seconds),
        ),
        _Spec(
            name="lgsp.effect.count",
            kind="count",
            unit="{effect}",
            description="Side effects the runs recorded, by state (done, intent, in_doubt, ...).",
            points=lambda r: (
                []
                if r.effects is None
                else [(n, {"lgsp.effect.state": k}) for k, n in r.effects.by_state.items()]
            ),
        ),
        _Spec(
            name="lgsp.effect.doubted.count",
            kind="count",
            unit="{effect}",
            description="Side effects not done: in doubt, or settled after a doubt.",
            points=lambda r: [] if r.effects is None else [(r.effects.doubted, {})],
        ),
        _Spec(
            name="lgsp.effect.in_doubt.count",
            kind="count",
            unit="{effect}",
            description="Side effects still in doubt: they may have happened, or not.",
            points=lambda r: [] if r.effects is None else [(r.effects.in_doubt, {})],
        ),
        _Spec(
            name="lgsp.routing.precision",
            kind="gauge",
            unit="1",
            description="Routing precision per worker against the expected routes.",
            points=_routing("precision"),
        ),
        _Spec(
            name="lgsp.routing.recall",
            kind="gauge",
            unit="1",
            description="Routing recall per worker against the expected routes.",
            points=_routing("recall"),
        ),
        _Spec(
            name="lgsp.routing.f1",
            kind="gauge",
            unit="1",
            description="Routing F1 per worker against the expected routes.",
            points=_routing("f1"),
        ),
    )


_SPECS = _specs()

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
    """The observable instruments publishing a `DelegationMetrics` (`publish_metrics`).

    Each collection reports the figures of the report last given; `update` replaces it
    (from any thread).

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
        """Publish `report` from the next collection on.

        Raises:
            ValueError: If `report` is not a `DelegationMetrics`.

        Example:
            ```python
            instruments.update(delegation_metrics(saver, since="24h"))
            ```
        """
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

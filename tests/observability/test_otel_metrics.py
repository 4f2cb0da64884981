"""The delegation metrics as OpenTelemetry instruments: exact values from real runs, read
with the SDK's in-memory reader; updates; names, kinds and units."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import Gauge, InMemoryMetricReader, Sum

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro.observability import (
    DelegationMetrics,
    compute_metrics,
    delegation_metrics,
    publish_metrics,
)
from langgraph_supervisor_pro.observability._metrics import EffectMetrics
from langgraph_supervisor_pro.observability._otel_metrics import INSTRUMENTS, DelegationInstruments
from langgraph_supervisor_pro.persistence._effects import StoreEffects
from tests.observability._record import record, record_spend

LABELS = {"retry": ["flaky", "writer"], "loop": ["looper"]}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DelegationMetrics]:
    db = tmp_path_factory.mktemp("otel") / "runs.db"
    effects = StoreEffects(InMemoryStore())
    effects.run("retry/1/1/flaky/email", lambda key: "sent")
    with open_checkpointer(f"sqlite:///{db}") as saver:
        record(saver)
        yield delegation_metrics(saver, expected=LABELS, effects=effects)


Points = dict[tuple[tuple[str, Any], ...], Any]


def collect(reader: InMemoryMetricReader) -> dict[str, tuple[Any, str | None, Points]]:
    """Each metric's data (its type), unit and points by sorted attributes."""
    data = reader.get_metrics_data()
    assert data is not None
    (resource,) = data.resource_metrics
    (scope,) = resource.scope_metrics
    assert scope.scope.name == "langgraph_supervisor_pro.observability"
    out = {}
    for metric in scope.metrics:
        points = {
            tuple(sorted((p.attributes or {}).items())): p.value for p in metric.data.data_points
        }
        out[metric.name] = (metric.data, metric.unit, points)
    return out


def published(report: DelegationMetrics) -> tuple[DelegationInstruments, InMemoryMetricReader]:
    reader = InMemoryMetricReader()
    instruments = publish_metrics(report, meter_provider=MeterProvider(metric_readers=[reader]))
    return instruments, reader


def test_every_figure_of_real_runs_as_an_instrument(report) -> None:
    _, reader = published(report)
    got = collect(reader)

    def points(name: str) -> Points:
        return got[name][2]

    assert points("lgsp.run.count") == {
        (("lgsp.status", "done"),): 5,
        (("lgsp.status", "failed"),): 1,
        (("lgsp.status", "halted"),): 1,
        (("lgsp.status", "running"),): 1,
    }
    assert points("lgsp.run.halt.count") == {
        (("lgsp.halt_reason", "max_steps"),): 1,
        (("lgsp.halt_reason", "supervisor_error"),): 1,
    }
    assert points("lgsp.run.completion.ratio") == {(): 0.625}
    hops = points("lgsp.hop.count")
    assert len(hops) == 3 * len(report.edges) == 27
    edge = (("lgsp.edge.source", "supervisor"), ("lgsp.edge.target", "flaky"))
    assert hops[(*edge, ("lgsp.status", "success"))] == 1
    assert hops[(*edge, ("lgsp.status", "failed"))] == 1
    assert hops[(*edge, ("lgsp.status", "needs_review"))] == 0
    assert sum(hops.values()) == report.hops == 16
    assert points("lgsp.handoff.success.ratio")[edge] == 0.5
    assert (
        points("lgsp.handoff.success.ratio")[
            (("lgsp.edge.source", "ops/incident"), ("lgsp.edge.target", "pager"))
        ]
        == 1.0
    )
    assert points("lgsp.worker.visit.count")[(("lgsp.worker.path", "ops/incident/pager"),)] == 1
    assert {k[0][1]: v for k, v in points("lgsp.worker.retry.count").items() if v} == {
        "flaky": 1,
        "ops/notes": 1,
    }
    assert {k[0][1]: v for k, v in points("lgsp.worker.loop.count").items() if v} == {"looper": 1}
    assert {k[0][1]: v for k, v in points("lgsp.worker.refusal.count").items() if v} == {
        "tech_support": 1
    }
    by_role = {u.role: u for u in report.utilisation}
    worker, summarizer = by_role["worker"], by_role["summarizer"]
    roles = {role: (("lgsp.role", role),) for role in by_role}
    assert points("lgsp.model.call.count") == {roles[r]: u.calls for r, u in by_role.items()}
    assert summarizer.calls == 1
    assert points("lgsp.model.call.over_threshold.count") == {
        roles[r]: u.over_threshold for r, u in by_role.items()
    }
    assert (worker.over_threshold, summarizer.over_threshold) == (0, 1)
    assert points("lgsp.context.utilization.average")[roles["worker"]] == pytest.approx(
        worker.average
    )
    assert points("lgsp.context.utilization.p99")[roles["worker"]] == worker.p99
    assert points("lgsp.context.utilization.peak")[roles["summarizer"]] == summarizer.peak
    assert points("lgsp.context.utilization.alert") == {
        roles[r]: int(r == "summarizer") for r in by_role
    }
    per_hop = points("lgsp.hop.context.utilization.peak")
    assert per_hop == {
        (("lgsp.hop.number", h.hop), ("lgsp.role", u.role)): u.peak
        for h in report.hop_utilisation
        for u in h.roles
    }
    assert len(per_hop) >= 4
    second = report.hop_utilisation[1]
    assert points("lgsp.hop.context.utilization.average")[
        (("lgsp.hop.number", second.hop), ("lgsp.role", second.roles[0].role))
    ] == pytest.approx(second.roles[0].average)
    assert points("lgsp.compaction.count") == {(("lgsp.compaction.reason", "within_hop"),): 1}
    assert points("lgsp.compaction.failure.count") == {(): 0}
    assert points("lgsp.compaction.saved") == {(): report.compactions.tokens_saved}
    assert report.compactions.tokens_saved > 0
    assert points("lgsp.tool.refusal.count") == {(("gen_ai.tool.name", "refund"),): 1}
    assert points("lgsp.review.count") == {(("lgsp.review.decision", "approve"),): 3}
    assert points("lgsp.review.escalated.count") == {(): 1}
    assert points("lgsp.review.deadline_breach.count") == {(): 2}
    assert points("lgsp.review.pending.count") == {(): 1}
    assert points("lgsp.review.overdue.count") == {(): 0}
    assert points("lgsp.review.escalation.ratio") == {(): pytest.approx(1 / 3)}
    reviews = report.reviews
    assert points("lgsp.review.duration.average") == {(): reviews.average_seconds}
    assert points("lgsp.review.duration.p99") == {(): reviews.p99_seconds}
    assert points("lgsp.review.duration.max") == {(): reviews.max_seconds}
    assert points("lgsp.routing.precision") == {
        (("lgsp.worker.path", "flaky"),): 0.5,
        (("lgsp.worker.path", "looper"),): pytest.approx(1 / 3),
        (("lgsp.worker.path", "writer"),): 1.0,
    }
    assert points("lgsp.routing.recall")[(("lgsp.worker.path", "writer"),)] == 1.0
    assert points("lgsp.routing.f1")[(("lgsp.worker.path", "looper"),)] == pytest.approx(0.5)
    assert points("lgsp.effect.count") == {(("lgsp.effect.state", "done"),): 1}
    assert points("lgsp.effect.doubted.count") == {(): 0}
    assert points("lgsp.effect.in_doubt.count") == {(): 0}
    # Tokens and cost per worker and per model: the report's figures.
    spending = [w for w in report.workers if w.spend.calls]
    assert spending and points("lgsp.worker.unpriced_call.count") == {
        (("lgsp.worker.path", w.worker),): w.spend.unpriced_calls for w in spending
    }
    assert points("lgsp.worker.token.count") == {
        (("gen_ai.token.type", kind), ("lgsp.worker.path", w.worker)): getattr(
            w.spend, f"{kind}_tokens"
        )
        for w in spending
        for kind in ("input", "output")
    }
    priced = {w.worker: w.spend.cost for w in spending if w.spend.cost is not None}
    costs = got.get("lgsp.worker.cost", (None, None, {}))[2]
    assert {key[0][1]: value for key, value in costs.items()} == pytest.approx(priced)
    assert sum(points("lgsp.model.token.count").values()) == report.spend.total_tokens
    assert points("lgsp.budget.halt.count") == {(): 0}
    # Every instrument reported (a cost only where a call was priced), its kind and unit.
    unreported = {"lgsp.worker.cost"} if not priced else set()
    if all(m.spend.cost is None for m in report.models):
        unreported.add("lgsp.model.cost")
    assert sorted(got) == sorted(set(INSTRUMENTS) - unreported)
    for name, (data, unit, _) in got.items():
        is_count = name.endswith((".count", ".cost")) or name == "lgsp.compaction.saved"
        if is_count:
            assert isinstance(data, Sum) and not data.is_monotonic, name
            assert unit and unit.startswith("{") and unit.endswith("}"), (name, unit)
        else:
            assert isinstance(data, Gauge), name
            assert unit == ("s" if ".duration." in name else "1"), (name, unit)
        assert name.startswith("lgsp.") and name == name.lower()


def test_figures_without_a_value_are_not_reported() -> None:
    _, reader = published(compute_metrics([]))
    got = collect(reader)
    assert "lgsp.run.count" not in got  # no runs: no point (no status to name)
    for missing in (
        "lgsp.run.completion.ratio",
        "lgsp.review.escalation.ratio",
        "lgsp.review.duration.average",
        "lgsp.routing.f1",
        "lgsp.hop.context.utilization.peak",
        "lgsp.effect.count",
        "lgsp.effect.in_doubt.count",
    ):
        assert missing not in got or got[missing][2] == {}, missing
    assert got["lgsp.review.pending.count"][2] == {(): 0}


def test_update_publishes_the_newer_report_from_the_next_collection(report) -> None:
    instruments, reader = published(compute_metrics([]))
    assert collect(reader)["lgsp.review.pending.count"][2] == {(): 0}
    instruments.update(report)
    assert instruments.report is report
    assert collect(reader)["lgsp.review.pending.count"][2] == {(): 1}
    assert collect(reader)["lgsp.run.count"][2][(("lgsp.status", "done"),)] == 5
    # Two threads updating while a third collects: every collection sees one whole report.
    reports = [report, compute_metrics([])]
    seen: list[int] = []

    def flip() -> None:
        for index in range(200):
            instruments.update(reports[index % 2])

    threads = [threading.Thread(target=flip) for _ in range(2)]
    for thread in threads:
        thread.start()
    for _ in range(20):
        runs = collect(reader).get("lgsp.run.count", (None, "", {}))[2]
        seen.append(int(sum(runs.values())))
    for thread in threads:
        thread.join()
    assert set(seen) <= {0, 8} and len(seen) == 20


@pytest.mark.parametrize("bad", [None, {"completion": {}}, "report"])
def test_a_report_that_is_not_one_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match=r"report: got .*; give a DelegationMetrics"):
        publish_metrics(bad, meter_provider=MeterProvider())  # type: ignore[arg-type]
    instruments, _ = published(compute_metrics([]))
    with pytest.raises(ValueError, match=r"report: got .*; give a DelegationMetrics"):
        instruments.update(bad)  # type: ignore[arg-type]


def test_effects_in_doubt_as_counters(report) -> None:
    doubted = replace(
        report, effects=EffectMetrics(recorded=3, by_state={"done": 1, "intent": 1, "skipped": 1})
    )
    _, reader = published(doubted)
    got = collect(reader)
    assert got["lgsp.effect.count"][2] == {
        (("lgsp.effect.state", "done"),): 1,
        (("lgsp.effect.state", "intent"),): 1,
        (("lgsp.effect.state", "skipped"),): 1,
    }
    assert got["lgsp.effect.doubted.count"][2] == {(): 2}
    assert got["lgsp.effect.in_doubt.count"][2] == {(): 1}


def test_tokens_cost_and_budget_events_as_instruments() -> None:
    saver = InMemorySaver()
    record_spend(saver)
    report = delegation_metrics(saver)
    _, reader = published(report)
    got = collect(reader)

    def points(name: str) -> Points:
        return got[name][2]

    billing = (("lgsp.worker.path", "billing"),)
    assert points("lgsp.worker.token.count") == {
        (("gen_ai.token.type", "input"), *billing): 1680,
        (("gen_ai.token.type", "output"), *billing): 170,
    }
    assert points("lgsp.worker.cost") == {billing: pytest.approx(0.0029)}
    assert points("lgsp.worker.unpriced_call.count") == {billing: 3}
    gpt = (("gen_ai.provider.name", "openai"), ("gen_ai.request.model", "gpt-4.1"))
    llama = (("gen_ai.provider.name", "ollama"), ("gen_ai.request.model", "llama3"))
    unknown = (("gen_ai.request.model", "unknown"),)
    tokens = points("lgsp.model.token.count")
    assert tokens[(*gpt, ("gen_ai.token.type", "input"))] == 1490
    assert tokens[(*unknown, ("gen_ai.token.type", "output"))] == 0
    assert sum(tokens.values()) == report.spend.total_tokens == 2520
    # Only a model with priced calls has a cost; the others are counted as unpriced.
    assert points("lgsp.model.cost") == {gpt: pytest.approx(0.00482)}
    assert points("lgsp.model.unpriced_call.count") == {gpt: 0, llama: 1, unknown: 2}
    assert points("lgsp.budget.event.count") == {
        (("lgsp.budget.event.kind", "warning"),): 2,
        (("lgsp.budget.event.kind", "approved"),): 0,
        (("lgsp.budget.event.kind", "rejected"),): 0,
        (("lgsp.budget.event.kind", "exceeded"),): 1,
    }
    assert points("lgsp.budget.halt.count") == {(): 1}
    for name in ("lgsp.worker.cost", "lgsp.model.cost", "lgsp.budget.halt.count"):
        assert isinstance(got[name][0], Sum) and not got[name][0].is_monotonic
    assert got["lgsp.model.cost"][1] == "{currency}"

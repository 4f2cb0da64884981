"""Delegation metrics from real runs' checkpoints, in memory and on SQLite, figure by figure."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_supervisor_pro import aopen_checkpointer, open_checkpointer
from langgraph_supervisor_pro._budget import entry_tokens, spend_of
from langgraph_supervisor_pro.observability import (
    DelegationMetrics,
    _history_rows,
    adelegation_metrics,
    aread_threads,
    compute_metrics,
    delegation_metrics,
    read_threads,
)
from langgraph_supervisor_pro.observability._metrics import (
    BudgetMetrics,
    DomainRecord,
    EffectMetrics,
    SpendMetrics,
    ThreadRecord,
    expected_routes,
    load_expected,
    parse_since,
)
from langgraph_supervisor_pro.persistence._effects import StoreEffects, open_effects
from tests.observability._record import (
    Recorded,
    budget_event,
    budgeted_team,
    call,
    leave_an_effect_in_doubt,
    record,
    record_spend,
)

FUTURE = datetime(2999, 1, 1, tzinfo=UTC)
LABELS = {
    "retry": ["flaky", "writer"],
    "loop": ["looper"],
    "desk": ["billing", "tech_support", "billing"],
    "late": ["billing", "writer"],
    "nowhere": ["x"],
}


@pytest.fixture(scope="module", params=["memory", "sqlite"])
def recorded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[BaseCheckpointSaver[Any], Recorded]]:
    if request.param == "memory":
        saver: BaseCheckpointSaver[Any] = InMemorySaver()
        yield saver, record(saver)
        return
    db = tmp_path_factory.mktemp("metrics") / "runs.db"
    with open_checkpointer(f"sqlite:///{db}") as opened:
        yield opened, record(opened)


def _usage(recorded: Recorded) -> dict[str, list[float]]:
    by_role: dict[str, list[float]] = {}
    for state in recorded.states.values():
        for entry in state.get("usage", []):
            by_role.setdefault(entry["role"], []).append(entry["utilisation"])
    return by_role


def test_the_reader_rebuilds_each_threads_state_as_its_graph_sees_it(recorded) -> None:
    saver, truth = recorded
    records = {r.thread_id: r for r in read_threads(saver)}
    assert set(records) == {
        "desk",
        "late",
        "waiting",
        "escalated",
        "retry",
        "loop",
        "broken",
        "tree",
    }
    for thread, state in truth.states.items():
        got = records[thread]
        assert got.status == state["status"]
        assert got.halt_reason == state.get("halt_reason")
        for channel in ("ledger", "usage", "compactions", "security", "reviews", "budget_events"):
            assert list(getattr(got, channel)) == list(state.get(channel, [])), (thread, channel)
    assert {r.graph_id for r in records.values()} == {"desk", "team", "tree"}
    # The tree's domains come from their own namespaces, by path.
    tree = records["tree"]
    assert [(d.path, [(e["worker"], e["status"]) for e in d.ledger]) for d in tree.domains] == [
        (("ops",), [("incident", "success"), ("notes", "failed"), ("notes", "success")]),
        (("ops", "incident"), [("pager", "success")]),
    ]
    assert records["waiting"].pending_reviews == 1
    assert records["waiting"].overdue_reviews == 0


def test_every_figure_of_the_recorded_runs(recorded) -> None:
    saver, truth = recorded
    report = delegation_metrics(saver, expected=LABELS, now=FUTURE)
    assert isinstance(report, DelegationMetrics)
    # Completion.
    assert report.completion.runs == 8
    assert report.completion.by_status == {"done": 5, "failed": 1, "halted": 1, "running": 1}
    assert report.completion.by_halt_reason == {"max_steps": 1, "supervisor_error": 1}
    assert report.completion.completion_rate == 5 / 8
    # Hops at every level: 12 at the roots, 3 in ops, 1 in incident.
    assert report.hops == 16
    # Handoffs per edge.
    assert [
        (e.source, e.target, e.hops, e.succeeded, e.failed, e.needs_review, e.success_rate)
        for e in report.edges
    ] == [
        ("ops", "incident", 1, 1, 0, 0, 1.0),
        ("ops", "notes", 2, 1, 1, 0, 0.5),
        ("ops/incident", "pager", 1, 1, 0, 0, 1.0),
        ("supervisor", "billing", 4, 4, 0, 0, 1.0),
        ("supervisor", "flaky", 2, 1, 1, 0, 0.5),
        ("supervisor", "looper", 3, 3, 0, 0, 1.0),
        ("supervisor", "ops", 1, 1, 0, 0, 1.0),
        ("supervisor", "tech_support", 1, 1, 0, 0, 1.0),
        ("supervisor", "writer", 1, 1, 0, 0, 1.0),
    ]
    # Workers: visits, successes, failures, retries, loop flags, refused tools.
    assert [
        (w.worker, w.visits, w.succeeded, w.failed, w.retries, w.loop_flags, w.refused_tools)
        for w in report.workers
    ] == [
        ("billing", 4, 4, 0, 0, 0, 0),
        ("flaky", 2, 1, 1, 1, 0, 0),
        ("looper", 3, 3, 0, 0, 1, 0),
        ("ops", 1, 1, 0, 0, 0, 0),
        ("ops/incident", 1, 1, 0, 0, 0, 0),
        ("ops/incident/pager", 1, 1, 0, 0, 0, 0),
        ("ops/notes", 2, 1, 1, 1, 0, 0),
        ("tech_support", 1, 1, 0, 0, 0, 1),
        ("writer", 1, 1, 0, 0, 0, 0),
    ]
    # Routing against the labels (multisets per thread; "nowhere" is not in the database).
    routing = report.routing
    assert routing is not None
    assert (routing.labelled, routing.missing, routing.exact_matches) == (4, ("nowhere",), 1)
    assert [
        (s.worker, s.true_positives, s.false_positives, s.false_negatives)
        for s in routing.per_worker
    ] == [
        ("billing", 3, 0, 0),
        ("flaky", 1, 1, 0),
        ("looper", 1, 2, 0),
        ("tech_support", 1, 0, 0),
        ("writer", 1, 0, 1),
    ]
    flaky, looper, writer = routing.per_worker[1], routing.per_worker[2], routing.per_worker[4]
    assert (flaky.precision, flaky.recall, flaky.f1) == (0.5, 1.0, 2 * 0.5 / 1.5)
    assert (looper.precision, looper.recall) == (1 / 3, 1.0)
    assert looper.f1 == pytest.approx(0.5)
    assert (writer.precision, writer.recall, writer.f1) == (1.0, 0.5, 2 * 0.5 / 1.5)
    assert (routing.micro_precision, routing.micro_recall) == (0.7, 0.875)
    assert routing.micro_f1 == pytest.approx(2 * 0.7 * 0.875 / 1.575)
    # Context utilisation per role, against the graphs' own usage records.
    usage = _usage(truth)
    assert {"worker", "summarizer"} <= set(usage) <= {"supervisor", "worker", "summarizer"}
    roles = [r for r in ("supervisor", "worker", "summarizer") if r in usage]
    assert [u.role for u in report.utilisation] == roles
    for figure in report.utilisation:
        values = sorted(usage[figure.role])
        assert figure.calls == len(values)
        assert figure.average == pytest.approx(sum(values) / len(values))
        assert figure.p99 == values[math.ceil(0.99 * len(values)) - 1]
        assert figure.peak == values[-1]
        assert figure.over_threshold == sum(1 for v in values if v >= 0.7)
        assert figure.alert is (figure.p99 >= 0.7)
    by_role = {u.role: u for u in report.utilisation}
    summarizer = by_role["summarizer"]
    assert summarizer.p99 > 1 and summarizer.alert  # the compaction's call: over the window
    assert by_role["worker"].alert is False and report.alerts == ("summarizer",)
    # Tokens and cost: the sums of the graphs' own usage records.
    calls = [e for state in truth.states.values() for e in state.get("usage", [])]
    assert _figures(report.spend) == _sums(calls)
    assert report.spend.total_tokens == spend_of(calls).tokens
    assert sum(m.spend.calls for m in report.models) == len(calls)
    assert {w.worker: w.spend.calls for w in report.workers if w.spend.calls} == dict(
        Counter(e["worker"] for e in calls if e["worker"])
    )
    # Compactions and refused tools.
    compactions = [c for s in truth.states.values() for c in s.get("compactions", [])]
    assert report.compactions.total == 1 == len(compactions)
    assert report.compactions.by_reason == {"within_hop": 1}
    assert report.compactions.failed == 0
    assert report.compactions.tokens_saved == sum(
        c["tokens_before"] - c["tokens_after"] for c in compactions
    )
    assert report.compactions.tokens_saved > 0
    assert (report.refusals.total, report.refusals.by_worker, report.refusals.by_tool) == (
        1,
        {"tech_support": 1},
        {"refund": 1},
    )
    # Reviews: desk's approved 30 s after the pause, late's 5 s after its deadline,
    # escalated's escalated by the sweep then approved 10 s after its first deadline,
    # waiting's still pending (and overdue in 2999).
    reviews = report.reviews
    assert (reviews.answered, reviews.by_decision, reviews.escalated) == (3, {"approve": 3}, 1)
    assert reviews.escalation_rate == 1 / 3
    seconds = truth.review_seconds
    assert seconds["desk"] == 30.0 and seconds["late"] > 86400
    assert seconds["escalated"] == pytest.approx(seconds["late"] + 5, abs=0.1)
    assert reviews.timed == 3
    assert reviews.average_seconds == pytest.approx(sum(seconds.values()) / 3, abs=1e-6)
    assert reviews.p99_seconds == pytest.approx(seconds["escalated"], abs=1e-6)
    assert reviews.max_seconds == pytest.approx(seconds["escalated"], abs=1e-6)
    assert (reviews.pending, reviews.overdue, reviews.deadline_breaches) == (1, 1, 3)
    (escalation,) = truth.states["escalated"]["reviews"][0]["escalations"]
    assert escalation["to"] == "leads"
    # JSON: the same figures.
    data = json.loads(json.dumps(report.to_dict()))
    assert data["completion"]["completion_rate"] == 0.625
    assert data["routing"]["missing"] == ["nowhere"]
    assert data["alerts"] == ["summarizer"]
    assert data["reviews"]["deadline_breaches"] == 3
    assert data["edges"][1] == {
        "source": "ops",
        "target": "notes",
        "hops": 2,
        "succeeded": 1,
        "failed": 1,
        "needs_review": 0,
        "spend": {
            "calls": 0,
            "input_tokens": 0,
            "output_tokens": 0,
            "cost": 0.0,
            "unpriced_calls": 0,
            "estimated_calls": 0,
            "total_tokens": 0,
        },
        "success_rate": 0.5,
    }


def test_today_no_pending_review_is_overdue_and_routing_is_not_scored(recorded) -> None:
    saver, _ = recorded
    report = delegation_metrics(saver)
    assert report.routing is None and report.to_dict()["routing"] is None
    assert (report.reviews.pending, report.reviews.overdue, report.reviews.deadline_breaches) == (
        1,
        0,
        2,
    )


def test_the_alert_threshold_and_loop_visits_are_settings(recorded) -> None:
    saver, truth = recorded
    report = delegation_metrics(saver, utilisation_alert=0.5, loop_visits=2)
    (worker,) = [u for u in report.utilisation if u.role == "worker"]
    values = _usage(truth)["worker"]
    assert worker.threshold == 0.5 == report.utilisation_alert
    assert worker.over_threshold == sum(1 for v in values if v >= 0.5)
    assert worker.alert is (worker.p99 >= 0.5)
    flags = {w.worker: w.loop_flags for w in report.workers}
    assert flags["looper"] == 1 and flags["flaky"] == 1 and flags["ops/notes"] == 1
    assert flags["billing"] == 0  # three visits, but one per turn


def test_filters_by_graph_and_since(recorded) -> None:
    saver, _ = recorded
    team = delegation_metrics(saver, graph="team")
    assert team.completion.runs == 3
    assert team.completion.by_status == {"done": 1, "failed": 1, "halted": 1}
    assert delegation_metrics(saver, graph="nothing").completion.runs == 0
    records = {r.thread_id: r for r in read_threads(saver)}
    start = records["loop"].last_activity
    assert start is not None
    recent = read_threads(saver, since=start)
    assert {r.thread_id for r in recent} == {"loop", "broken", "tree"}
    by_duration = read_threads(saver, since="1h", now=start + timedelta(hours=1))
    assert {r.thread_id for r in by_duration} == {"loop", "broken", "tree"}
    iso = read_threads(saver, since=start.isoformat())
    assert [r.thread_id for r in iso] == [r.thread_id for r in recent]
    assert read_threads(saver, since=FUTURE) == []


def test_an_empty_database_has_no_figures() -> None:
    report = delegation_metrics(InMemorySaver(), expected={"t": ["a"]})
    assert report.completion.runs == 0 and report.completion.completion_rate is None
    assert report.edges == () and report.workers == () and report.utilisation == ()
    assert report.routing is not None and report.routing.missing == ("t",)
    assert report.routing.micro_f1 is None
    assert report.reviews.average_seconds is None and report.reviews.escalation_rate is None


def _review(**overrides: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "turn": 1,
        "step": 1,
        "interrupt_id": "i1",
        "kind": "tool",
        "action": "refund",
        "worker": "billing",
        "path": ["billing"],
        "decision": "reject",
        "reviewer": "lgsp:sweep",
        "reviewers": "managers",
        "answered_at": "2030-01-01T10:00:00+00:00",
        "escalations": [],
    }
    return {**entry, **overrides}


def test_escalations_and_sweep_answers_without_a_recorded_opening() -> None:
    record_ = ThreadRecord(
        thread_id="t",
        status="done",
        halt_reason=None,
        last_activity=None,
        graph_id=None,
        reviews=(
            _review(),  # the sweep's reject: a breach, though its opening is unknown
            _review(
                interrupt_id="i2",
                decision="approve",
                reviewer="bob",
                escalations=[{"from": "support", "to": "managers"}],
            ),
        ),
    )
    reviews = compute_metrics([record_]).reviews
    assert (reviews.answered, reviews.escalated, reviews.escalation_rate) == (2, 1, 0.5)
    assert (reviews.timed, reviews.deadline_breaches) == (0, 1)
    assert reviews.by_decision == {"approve": 1, "reject": 1}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"utilisation_alert": 0}, "utilisation_alert: got 0;"),
        ({"utilisation_alert": 1.5}, "utilisation_alert: got 1.5;"),
        ({"utilisation_alert": True}, "utilisation_alert: got True;"),
        ({"utilisation_alert": "0.7"}, "utilisation_alert: got '0.7';"),
        ({"loop_visits": 1}, "loop_visits: got 1;"),
        ({"loop_visits": 2.0}, "loop_visits: got 2.0;"),
        ({"since": "yesterday"}, "since: got 'yesterday';"),
        ({"since": 5}, "since: got int;"),
        ({"graph": " "}, "graph: got ' ';"),
        ({"now": datetime(2030, 1, 1)}, "now: got datetime.datetime(2030, 1, 1, 0, 0);"),
        ({"expected": "t1"}, "expected: got str;"),
    ],
)
def test_invalid_arguments_name_their_field(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        delegation_metrics(InMemorySaver(), **kwargs)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["t1"], "expected[0]: got str; give an object with thread_id and expected"),
        ([{"expected": ["a"]}], "expected[0].thread_id: missing"),
        ([{"thread_id": "t"}], "expected[0].expected: missing"),
        ([{"thread_id": "t", "expected": [], "why": 1}], "expected[0]: unknown keys ['why']"),
        ([{"thread_id": "", "expected": []}], "expected[0].thread_id: the thread id must be"),
        ({"t": "billing"}, "expected['t']: got str; give a list of worker names"),
        ({"t": ["a", 3]}, "expected['t'][1]: give a worker name, got 3"),
        (
            [{"thread_id": "t", "expected": []}, {"thread_id": "t", "routes": []}],
            "expected[1].thread_id: thread 't' is labelled twice",
        ),
    ],
)
def test_invalid_expected_routes_name_the_field(value: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        expected_routes(value)
    assert str(caught.value).startswith(message)


def test_expected_routes_from_a_json_file(tmp_path: Path) -> None:
    good = tmp_path / "labels.json"
    good.write_text(json.dumps([{"thread_id": "t1", "routes": ["a", "b"]}]), encoding="utf-8")
    assert load_expected(good) == {"t1": ("a", "b")}
    bad = tmp_path / "bad.json"
    bad.write_text("{oops", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.json: not JSON \(line 1, column 2"):
        load_expected(bad)
    with pytest.raises(ValueError, match=r"missing\.json: cannot read it"):
        load_expected(tmp_path / "missing.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match=r"binary\.json: not UTF-8 text"):
        load_expected(binary)
    shape = tmp_path / "shape.json"
    shape.write_text("3", encoding="utf-8")
    with pytest.raises(ValueError, match=r"shape.json: got int"):
        load_expected(shape)


def test_parse_since_takes_durations_and_iso_times() -> None:
    now = datetime(2030, 1, 8, tzinfo=UTC)
    assert parse_since("90s", now=now) == now - timedelta(seconds=90)
    assert parse_since("1.5h", now=now) == now - timedelta(minutes=90)
    assert parse_since("1w", now=now) == datetime(2030, 1, 1, tzinfo=UTC)
    assert parse_since("2030-01-01T01:00:00+01:00") == datetime(2030, 1, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match=r"^--since: got '7 days'"):
        parse_since("7 days", where="--since")


async def test_the_async_twins_read_the_same_figures(tmp_path: Path) -> None:
    memory = InMemorySaver()
    record(memory)
    sync = delegation_metrics(memory, expected=LABELS, now=FUTURE).to_dict()
    assert (await adelegation_metrics(memory, expected=LABELS, now=FUTURE)).to_dict() == sync
    db = tmp_path / "runs.db"
    with open_checkpointer(f"sqlite:///{db}") as saver:
        record(saver)
        on_disk = delegation_metrics(saver, expected=LABELS, now=FUTURE).to_dict()
    async with aopen_checkpointer(f"sqlite:///{db}") as asaver:
        report = await adelegation_metrics(asaver, expected=LABELS, now=FUTURE)
        assert report.to_dict() == on_disk
        records = await aread_threads(asaver, graph="team")
    assert sorted(r.thread_id for r in records) == ["broken", "loop", "retry"]
    # The same runs on another backend: the same figures but the review times.
    same = {k: v for k, v in on_disk.items() if k != "reviews"}
    assert same == {k: v for k, v in sync.items() if k != "reviews"}
    with pytest.raises(ValueError, match=r"^loop_visits: got 0;"):
        await adelegation_metrics(memory, loop_visits=0)


def test_a_compiled_domain_visited_twice_counts_each_visits_namespace() -> None:
    from langgraph_supervisor_pro import SupervisorView, Worker, create_supervisor
    from tests.observability._record import _leaf, _routes

    def twice(view: SupervisorView) -> str:
        return "ops" if len(view.ledger) < 2 else "FINISH"

    ops = create_supervisor([_leaf("pager")], router=_routes("pager"), name="ops").compile()
    saver = InMemorySaver()
    root = create_supervisor(
        [Worker(name="ops", description="Operations.", agent=ops)], router=twice
    ).compile(checkpointer=saver)
    root.invoke({"messages": [("user", "Page twice")]}, {"configurable": {"thread_id": "t"}})
    (thread,) = read_threads(saver)
    assert [d.path for d in thread.domains] == [("ops",), ("ops",)]  # one namespace per visit
    report = compute_metrics([thread])
    assert [(e.source, e.target, e.hops, e.succeeded) for e in report.edges] == [
        ("ops", "pager", 2, 2),
        ("supervisor", "ops", 2, 2),
    ]
    assert [(w.worker, w.visits) for w in report.workers] == [("ops", 2), ("ops/pager", 2)]


def test_a_thread_resumed_without_its_graph_id_keeps_it() -> None:
    from langgraph_supervisor_pro import create_supervisor
    from tests.observability._record import _leaf

    saver = InMemorySaver()
    team = create_supervisor(
        [_leaf("writer")], router=lambda view: "FINISH" if view.ledger else "writer"
    ).compile(checkpointer=saver)
    tagged = {"configurable": {"thread_id": "t"}, "metadata": {"graph_id": "team"}}
    team.invoke({"messages": [("user", "First")]}, tagged)
    team.invoke({"messages": [("user", "Second")]}, {"configurable": {"thread_id": "t"}})
    (thread,) = read_threads(saver, graph="team")
    assert thread.graph_id == "team" and len(thread.ledger) == 2


def test_utilisation_per_hop_and_the_time_in_review_histogram(recorded) -> None:
    saver, truth = recorded
    report = delegation_metrics(saver)
    # Hops numbered across each run's turns: desk's turns 1, 2, 3 are its hops 1, 2, 3.
    by_hop: dict[int, dict[str, list[float]]] = {}
    for state in truth.states.values():
        entries = (*state.get("ledger", []), *state.get("usage", []))
        keys = sorted({(e["turn"], e["step"]) for e in entries})
        for entry in state.get("usage", []):
            number = keys.index((entry["turn"], entry["step"])) + 1
            by_hop.setdefault(number, {}).setdefault(entry["role"], []).append(entry["utilisation"])
    assert [h.hop for h in report.hop_utilisation] == sorted(by_hop)
    assert len(by_hop) >= 3
    for hop in report.hop_utilisation:
        roles = by_hop[hop.hop]
        known = ("supervisor", "worker", "summarizer")
        assert [u.role for u in hop.roles] == [r for r in known if r in roles]
        for figure in hop.roles:
            values = sorted(roles[figure.role])
            assert (figure.calls, figure.peak) == (len(values), values[-1])
            assert figure.average == pytest.approx(sum(values) / len(values))
            assert figure.over_threshold == sum(1 for v in values if v >= 0.7)
        assert hop.peak == max(max(v) for v in roles.values())
    # Desk's billing in its third turn, compacted inside the hop: the summarizer's one call.
    (compacted,) = [h for h in report.hop_utilisation if "summarizer" in {u.role for u in h.roles}]
    assert [u.calls for u in compacted.roles if u.role == "summarizer"] == [1]
    assert sum(u.calls for h in report.hop_utilisation for u in h.roles) == sum(
        u.calls for u in report.utilisation
    )
    # The histogram: desk's 30 s, late's and escalated's a day and more.
    histogram = report.reviews.histogram
    assert [b.label for b in histogram] == [
        "< 1 min",
        "1 min - 5 min",
        "5 min - 15 min",
        "15 min - 1 h",
        "1 h - 4 h",
        "4 h - 1 d",
        "1 d or more",
    ]
    assert [b.reviews for b in histogram] == [1, 0, 0, 0, 0, 0, 2]
    assert (
        sorted(truth.review_seconds.values())[0]
        < 60
        <= 86400
        < min(truth.review_seconds["late"], truth.review_seconds["escalated"])
    )
    data = report.to_dict()
    index = report.hop_utilisation.index(compacted)
    assert data["hop_utilisation"][index]["hop"] == compacted.hop
    assert "summarizer" in [r["role"] for r in data["hop_utilisation"][index]["roles"]]
    assert data["reviews"]["time_in_review"]["histogram"][-1] == {
        "lower_seconds": 86400.0,
        "upper_seconds": None,
        "reviews": 2,
        "label": "1 d or more",
    }


def test_a_bucket_bound_belongs_to_the_bucket_above_it() -> None:
    from langgraph_supervisor_pro.observability._metrics import _histogram

    buckets = _histogram([0.0, 59.999, 60.0, 86400.0, 1e12])
    assert [b.reviews for b in buckets] == [2, 1, 0, 0, 0, 0, 2]
    assert sum(b.reviews for b in _histogram([])) == 0


def test_hops_are_numbered_per_level_across_turns_and_a_finish_decision_is_the_next() -> None:
    def usage(turn: int, step: int, role: str, value: float) -> dict[str, Any]:
        return {
            "turn": turn,
            "step": step,
            "role": role,
            "worker": None,
            "tokens": 1,
            "window": 10,
            "utilisation": value,
        }

    def hop(turn: int, step: int) -> dict[str, Any]:
        return {"turn": turn, "step": step, "worker": "w", "status": "success"}

    record = ThreadRecord(
        thread_id="t",
        status="done",
        halt_reason=None,
        last_activity=None,
        graph_id=None,
        ledger=(hop(1, 1), hop(1, 2), hop(2, 1)),  # type: ignore[arg-type]
        usage=(  # type: ignore[arg-type]
            usage(1, 1, "supervisor", 0.1),
            usage(1, 2, "supervisor", 0.2),
            usage(1, 3, "supervisor", 0.3),  # turn 1's FINISH decision
            usage(2, 1, "supervisor", 0.4),
        ),
    )
    report = compute_metrics([record])
    assert [(h.hop, h.peak) for h in report.hop_utilisation] == [
        (1, 0.1),
        (2, 0.2),
        (3, 0.3),
        (4, 0.4),
    ]


async def test_since_on_postgres_reads_only_the_threads_active_since(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The heads' times come from one query; only the active threads' checkpoints are read."""
    with open_checkpointer(pg_database) as saver:
        record(saver)
        every = read_threads(saver)
        start = {r.thread_id: r for r in every}["loop"].last_activity
        assert start is not None
        asked: list[object] = []
        real = _history_rows._queries

        def queries(threads: Any) -> Any:
            asked.append(threads)
            return real(threads)

        monkeypatch.setattr(_history_rows, "_queries", queries)
        recent = read_threads(saver, since=start)
        assert sorted(asked.pop()) == ["broken", "loop", "tree"]  # type: ignore[call-overload]
        assert recent == [r for r in every if r.last_activity and r.last_activity >= start]
        assert read_threads(saver, since=FUTURE) == [] and asked.pop() == []
        assert read_threads(saver) == every and asked.pop() is None  # no since: one listing
        figures = delegation_metrics(saver, since=start, now=FUTURE).to_dict()
    async with aopen_checkpointer(pg_database) as asaver:
        assert await aread_threads(asaver, since=start) == recent
        assert sorted(asked.pop()) == ["broken", "loop", "tree"]  # type: ignore[call-overload]
        assert (await adelegation_metrics(asaver, since=start, now=FUTURE)).to_dict() == figures


# --------------------------------------------------------------------------- effects


async def test_an_effect_left_in_doubt_is_counted_on_postgres(pg_database: str) -> None:
    """`effects=` counts the reported runs' effects not `done`, read as the audit reads them."""
    with open_checkpointer(pg_database) as saver, open_effects(pg_database) as effects:
        leave_an_effect_in_doubt(saver, effects, "mail-1")
        # A done effect of the run, and one of a thread the report does not hold.
        assert effects.run_external("mail-1/9/9/mailer/other", lambda key: "sent") == "sent"
        effects.run_external("elsewhere/1/1/mailer/receipt", lambda key: "sent")
        without = delegation_metrics(saver, now=FUTURE)
        report = delegation_metrics(saver, now=FUTURE, effects=effects)
        listed = delegation_metrics(saver, now=FUTURE, effects=[effects])
        records = read_threads(saver)
        assert compute_metrics(records, effects=effects).effects == report.effects
        with pytest.raises(TypeError, match=r"effects: got str; give open_effects\(url\)"):
            compute_metrics(records, effects=["postgresql://db"])  # type: ignore[list-item]
    assert without.effects is None and without.to_dict()["effects"] is None
    assert report.effects is not None and listed.effects == report.effects
    assert (report.effects.recorded, report.effects.by_state) == (2, {"done": 1, "intent": 1})
    assert (report.effects.doubted, report.effects.in_doubt) == (1, 1)
    assert report.to_dict()["effects"] == {
        "recorded": 2,
        "doubted": 1,
        "in_doubt": 1,
        "settled_after_doubt": 0,
        "by_state": {"done": 1, "intent": 1},
    }
    async with aopen_checkpointer(pg_database) as asaver:
        with open_effects(pg_database, setup=False) as effects:
            again = await adelegation_metrics(asaver, now=FUTURE, effects=effects)
    assert again.to_dict() == report.to_dict()


def test_effects_in_a_store_and_settled_after_a_doubt() -> None:
    store = InMemoryStore()
    StoreEffects(store).run("retry/1/1/flaky/email", lambda key: "sent")
    StoreEffects(store).run("other/1/1/flaky/email", lambda key: "sent")
    run = ThreadRecord(
        thread_id="retry", status="done", halt_reason=None, last_activity=None, graph_id=None
    )
    figures = compute_metrics([run], effects=StoreEffects(store)).effects
    assert figures == compute_metrics([run], effects=[store]).effects
    assert figures is not None and (figures.recorded, figures.doubted) == (1, 0)
    assert figures.by_state == {"done": 1}
    assert compute_metrics([], effects=store).effects == EffectMetrics(recorded=0, by_state={})
    settled = EffectMetrics(
        recorded=7,
        by_state={"confirmed": 1, "done": 2, "in_doubt": 1, "intent": 1, "redone": 1, "skipped": 1},
    )
    assert (settled.doubted, settled.in_doubt, settled.settled_after_doubt) == (5, 2, 3)


# --------------------------------------------------------------------------- cost and budgets


@pytest.fixture(scope="module", params=["memory", "sqlite"])
def spent(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[BaseCheckpointSaver[Any], dict[str, dict[str, Any]]]]:
    if request.param == "memory":
        saver: BaseCheckpointSaver[Any] = InMemorySaver()
        yield saver, record_spend(saver)
        return
    db = tmp_path_factory.mktemp("spend") / "runs.db"
    with open_checkpointer(f"sqlite:///{db}") as opened:
        yield opened, record_spend(opened)


def _sums(entries: Any) -> tuple[Any, ...]:
    """By hand: calls, input and output tokens, the priced calls' cost, unpriced, estimated."""
    entries = list(entries)
    return (
        len(entries),
        sum(e.get("input_tokens", e["tokens"]) for e in entries),
        sum(e.get("output_tokens", 0) for e in entries),
        round(sum(e["cost"] for e in entries if e.get("cost") is not None), 10)
        if any(e.get("cost") is not None for e in entries) or not entries
        else None,
        sum(1 for e in entries if e.get("cost") is None),
        sum(1 for e in entries if e.get("estimated")),
    )


def _figures(spend: SpendMetrics) -> tuple[Any, ...]:
    return (
        spend.calls,
        spend.input_tokens,
        spend.output_tokens,
        spend.cost,
        spend.unpriced_calls,
        spend.estimated_calls,
    )


def test_tokens_and_cost_are_the_sums_of_the_recorded_calls(spent) -> None:
    saver, states = spent
    report = delegation_metrics(saver)
    calls = [e for state in states.values() for e in state["usage"]]
    assert _figures(report.spend) == _sums(calls) == (8, 2260, 260, 0.00482, 3, 1)
    assert report.spend.total_tokens == sum(entry_tokens(e) for e in calls) == 2520
    budgeted = spend_of(calls)  # what a budget counts: the same
    assert (budgeted.tokens, budgeted.cost, budgeted.calls, budgeted.unpriced) == (
        2520,
        0.00482,
        8,
        3,
    )
    assert report.spend.shown_cost == "0.00482 + 3 unpriced calls"
    # Per model, the most expensive first; calls that did not record their model: unknown.
    assert [(m.name, _figures(m.spend)) for m in report.models] == [
        ("openai/gpt-4.1", _sums(e for e in calls if e.get("model") == "gpt-4.1")),
        ("unknown", _sums(e for e in calls if "model" not in e)),
        ("ollama/llama3", _sums(e for e in calls if e.get("model") == "llama3")),
    ]
    assert sum(m.spend.calls for m in report.models) == report.spend.calls
    unknown = report.models[1].spend
    assert (unknown.cost, unknown.shown_cost) == (None, "unpriced (2 calls)")  # not free
    # Per worker and per edge: billing's hops (the decisions and the synthesis are no hop's).
    hops = [e for e in calls if e["worker"] == "billing"]
    ((worker,), (edge,)) = report.workers, report.edges
    assert (worker.worker, edge.source, edge.target) == ("billing", "supervisor", "billing")
    assert (
        _figures(worker.spend)
        == _figures(edge.spend)
        == _sums(hops)
        == (5, 1680, 170, 0.0029, 3, 1)
    )
    # Per ended turn (the old thread's one, spend's two).
    assert [(t.thread_id, t.turn, _figures(t.spend)) for t in report.turns.by_turn] == [
        ("old", 1, _sums(states["old"]["usage"])),
        ("spend", 1, _sums(e for e in states["spend"]["usage"] if e["turn"] == 1)),
        ("spend", 2, _sums(e for e in states["spend"]["usage"] if e["turn"] == 2)),
    ]
    turns = report.turns
    assert sum(t.spend.calls for t in turns.by_turn) == report.spend.calls
    assert (turns.completed, turns.average_tokens, turns.max_tokens) == (3, 2520 / 3, 1200)
    # Only spend's turn 2 had every call priced: the others' cost is not known.
    assert (turns.priced, turns.average_cost, turns.max_cost) == (1, 0.0021, 0.0021)
    # Budgets: two warnings, billing's own budget exceeded, the run halted in turn 2.
    assert report.budget == BudgetMetrics(warnings=2, exceeded=1, halts=1)
    assert report.completion.by_halt_reason == {"budget_exceeded": 1}
    # JSON: the same figures.
    data = json.loads(json.dumps(report.to_dict()))
    assert data["spend"] == {
        "calls": 8,
        "input_tokens": 2260,
        "output_tokens": 260,
        "cost": 0.00482,
        "unpriced_calls": 3,
        "estimated_calls": 1,
        "total_tokens": 2520,
    }
    assert data["models"][1] == {
        "name": "unknown",
        "provider": None,
        "model": None,
        "spend": {
            "calls": 2,
            "input_tokens": 570,
            "output_tokens": 0,
            "cost": None,
            "unpriced_calls": 2,
            "estimated_calls": 0,
            "total_tokens": 570,
        },
    }
    assert data["workers"][0]["spend"]["unpriced_calls"] == 3
    assert {k: v for k, v in data["turns"].items() if k != "by_turn"} == {
        "completed": 3,
        "average_tokens": 840.0,
        "max_tokens": 1200,
        "priced": 1,
        "average_cost": 0.0021,
        "max_cost": 0.0021,
    }
    assert data["turns"]["by_turn"][2]["spend"]["cost"] == 0.0021
    assert data["budget"] == {
        "warnings": 2,
        "approved": 0,
        "rejected": 0,
        "exceeded": 1,
        "halts": 1,
    }


def test_entries_of_older_threads_lack_the_new_keys_and_count_as_unknown(spent) -> None:
    saver, _ = spent
    (old,) = [r for r in read_threads(saver) if r.thread_id == "old"]
    assert [set(e) for e in old.usage] == [
        {"turn", "step", "role", "worker", "tokens", "window", "utilisation"},
        {"turn", "step", "role", "worker", "tokens"},  # no window: not measured, no crash
    ]
    report = compute_metrics([old])
    assert [(u.role, u.calls, u.peak) for u in report.utilisation] == [("worker", 1, 0.5)]
    assert [(h.hop, [u.calls for u in h.roles]) for h in report.hop_utilisation] == [(1, [1])]
    # Their tokens are input (by the configured counter); their cost is unknown: unpriced.
    assert _figures(report.spend) == (2, 570, 0, None, 2, 0)
    assert [m.name for m in report.models] == ["unknown"]
    assert report.budget == BudgetMetrics() and old.budget_events == ()
    # The new runs record no window at all (no compaction): no utilisation, every cost.
    (new,) = [r for r in read_threads(saver) if r.thread_id == "spend"]
    fresh = compute_metrics([new])
    assert fresh.utilisation == () and fresh.hop_utilisation == () and fresh.alerts == ()
    assert fresh.spend.calls == 6


def _hop(worker: str, turn: int = 1) -> dict[str, Any]:
    return {"turn": turn, "step": 1, "worker": worker, "status": "success"}


def test_a_domains_calls_are_its_hops_at_each_level_and_counted_once() -> None:
    """A call inside a domain is in the domain's usage and, as its hop's, in each level above."""
    deep = call(1, 1, "worker", "ops", 100, 10, 0.01, path=["ops", "incident", "pager"])
    inner = call(1, 1, "worker", "ops", 50, 5, 0.005, path=["ops"])  # ops's own decision
    decision = call(1, 1, "supervisor", None, 20, 2, None, ("acme", "router-1"))
    record = ThreadRecord(
        thread_id="t",
        status="done",
        halt_reason=None,
        last_activity=None,
        graph_id=None,
        turn=1,
        ledger=(_hop("ops"),),  # type: ignore[arg-type]
        usage=(decision, inner, deep),  # type: ignore[arg-type]
        domains=(
            DomainRecord(
                path=("ops",),
                ledger=(_hop("incident"),),  # type: ignore[arg-type]
                usage=(  # type: ignore[arg-type]
                    call(1, 1, "supervisor", None, 50, 5, 0.005, path=[]),
                    call(1, 1, "worker", "incident", 100, 10, 0.01, path=["incident", "pager"]),
                ),
                compactions=(),
                security=(),
            ),
            DomainRecord(
                path=("ops", "incident"),
                ledger=(_hop("pager"),),  # type: ignore[arg-type]
                usage=(call(1, 1, "worker", "pager", 100, 10, 0.01),),  # type: ignore[arg-type]
                compactions=(),
                security=(),
            ),
        ),
    )
    report = compute_metrics([record])
    assert _figures(report.spend) == _sums(record.usage) == (3, 170, 17, 0.015, 1, 0)
    assert {w.worker: _figures(w.spend) for w in report.workers} == {
        "ops": _sums([inner, deep]),
        "ops/incident": (1, 100, 10, 0.01, 0, 0),
        "ops/incident/pager": (1, 100, 10, 0.01, 0, 0),
    }
    assert {(e.source, e.target): e.spend.calls for e in report.edges} == {
        ("supervisor", "ops"): 2,
        ("ops", "incident"): 1,
        ("ops/incident", "pager"): 1,
    }
    assert [(m.name, m.spend.calls, m.spend.cost) for m in report.models] == [
        ("openai/gpt-4.1", 2, 0.015),
        ("acme/router-1", 1, None),
    ]
    assert [_figures(t.spend) for t in report.turns.by_turn] == [_figures(report.spend)]


def test_budget_events_are_counted_once_and_halts_once_per_turn() -> None:
    warning = budget_event(1, "warning", "tokens", 850, 1000)
    approved = budget_event(1, "approved", "tokens", 850, 2000, reviewer="alice")
    in_ops = budget_event(1, "exceeded", "tokens", 2100, 2000, path=["ops"])
    spent_ = budget_event(2, "exceeded", "cost", 1.2, 1.0, scope="thread")

    def run(thread: str, turn: int | None, *events: Any, **kwargs: Any) -> ThreadRecord:
        return ThreadRecord(
            thread_id=thread,
            status="halted",
            halt_reason="budget_exceeded",
            last_activity=None,
            graph_id=None,
            turn=turn,
            budget_events=events,
            **kwargs,
        )

    domain = DomainRecord(
        path=("ops",), ledger=(), usage=(), compactions=(), security=(), budget_events=(in_ops,)
    )
    # The domain's halt is copied to the root's events: one event, not the root's halt.
    tree = run("tree", 2, warning, approved, in_ops, spent_, domains=(domain,))
    rejected = run("rejected", None, budget_event(1, "rejected", "cost", 0.9, 1.0))
    report = compute_metrics([tree, rejected])
    assert report.budget == BudgetMetrics(warnings=1, approved=1, rejected=1, exceeded=2, halts=2)
    assert compute_metrics([tree]).budget.halts == 1  # turn 2: its event and its halt reason
    assert compute_metrics([run("early", 3, spent_)]).budget.halts == 2  # turns 2 and 3


def test_a_budgeted_runs_figures_are_the_calls_the_runtime_recorded() -> None:
    saver = InMemorySaver()
    states = {}
    for thread, team in (
        ("warned", budgeted_team()),
        ("halted", budgeted_team(max_tokens=150, warn_at=1.0)),
    ):
        app = team.compile(checkpointer=saver)
        where = {"configurable": {"thread_id": thread}}
        app.invoke({"messages": [("user", "Research tea")]}, where)
        states[thread] = app.get_state(where).values
    assert (states["halted"]["status"], states["halted"]["halt_reason"]) == (
        "halted",
        "budget_exceeded",
    )
    report = compute_metrics(read_threads(saver))
    calls = [e for state in states.values() for e in state["usage"]]
    assert _figures(report.spend) == _sums(calls)
    assert report.spend.total_tokens == spend_of(calls).tokens
    assert report.spend.unpriced_calls == sum(1 for e in calls if e["model"] == "big") >= 1
    assert {m.name: (m.spend.calls, m.spend.cost is None) for m in report.models} == {
        "functionchatmodel/small": (sum(1 for e in calls if e["model"] == "small"), False),
        "functionchatmodel/big": (sum(1 for e in calls if e["model"] == "big"), True),
    }
    assert {w.worker: _figures(w.spend) for w in report.workers} == {
        name: _sums(e for e in calls if e["worker"] == name) for name in ("researcher", "writer")
    }
    assert report.budget == BudgetMetrics(warnings=1, exceeded=1, halts=1)
    assert report.completion.by_halt_reason == {"budget_exceeded": 1}
    assert [t.thread_id for t in report.turns.by_turn] == ["halted", "warned"]

"""The audit trail: a run's timeline read back from its checkpoints (and effects store)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import (
    Compaction,
    RouteDecision,
    SupervisorView,
    Worker,
    WorkerTask,
    create_supervisor,
    open_checkpointer,
    register_secret,
)
from langgraph_supervisor_pro._internal.hop import prompt_digest
from langgraph_supervisor_pro.observability import audit_trail
from langgraph_supervisor_pro.observability._audit import (
    AuditEvent,
    AuditTrail,
    BudgetEvent,
    CompactionEvent,
    DecisionEvent,
    EffectEvent,
    EndEvent,
    HopEvent,
    JudgementEvent,
    RefusalEvent,
    ReviewEvent,
    TurnEvent,
)
from langgraph_supervisor_pro.persistence._effects import StoreEffects, effect_key
from langgraph_supervisor_pro.review import resolve_review
from langgraph_supervisor_pro.review._desk import Approve, Reject
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel
from tests._graph.test_compaction_node import summarizer
from tests._helpers import ask
from tests.observability._record import budget_event, record_spend


def config(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


def rows(trail: AuditTrail) -> list[tuple[Any, ...]]:
    """(kind, path, turn, step, line) of each event, in order."""
    return [(e.kind, "/".join(e.path), e.turn, e.step, e.line()) for e in trail.events]


def assert_times(trail: AuditTrail) -> None:
    times = [e.at for e in trail.events]
    assert all(isinstance(t, datetime) and t.tzinfo is not None for t in times), times
    assert times == sorted(times, key=lambda t: t or datetime.min.replace(tzinfo=UTC))


# ---------------------------------------------------------------------------- decisions


def checking_run(
    saver: BaseCheckpointSaver[Any],
    thread_id: str = "run-1",
    *,
    effects: Any = None,
    store: BaseStore | None = None,
) -> tuple[Any, Any]:
    """Router then model decisions, a failed hop and its retry, an exactly-once effect.

    The effect is recorded in `effects` (a `StoreEffects` over `store` by default, or
    `PostgresEffects`).
    """
    store = store if store is not None else InMemoryStore()
    effects = effects if effects is not None else StoreEffects(store)
    tries: list[int] = []

    def ledger(task: WorkerTask) -> str:
        tries.append(task.step)
        if len(tries) == 1:
            raise RuntimeError("ledger service unavailable")
        return "Checked the ledger. All fine."

    def cashier(task: WorkerTask) -> str:
        outcome = effects.run(effect_key("charge"), lambda _: {"payment_id": 7})
        return f"Charged, payment {outcome['payment_id']}."

    def router(view: SupervisorView) -> RouteDecision | None:
        if view.step == 0:
            return RouteDecision(next="ledger", instructions="check the ledger")
        return None  # the model decides

    model = ScriptedChatModel(
        script=[
            {"next": "ledger", "instructions": "try again"},
            {"next": "cashier", "instructions": "charge 30 EUR"},
            {"next": "FINISH", "instructions": ""},
        ]
    )
    app = create_supervisor(
        [
            Worker(name="ledger", description="Checks the ledger.", agent=ledger),
            Worker(name="cashier", description="Charges.", agent=cashier),
        ],
        model=model,
        router=router,
    ).compile(checkpointer=saver, store=store)
    out = app.invoke(ask("Charge order A1"), config(thread_id))
    assert out["status"] == "done"
    return app, effects


CHARGE_PROMPT = WorkerTask(
    worker="cashier", step=3, task="Charge order A1", instructions="charge 30 EUR"
).prompt()
CHARGE_KEY = f"run-1/1/3/cashier@{prompt_digest(CHARGE_PROMPT)}/charge"
"""The cashier hop's effect key: its worker part carries the hop prompt's digest."""

EXPECTED_CHECKING = [
    ("turn", "", 1, None, "turn 1: Charge order A1"),
    ("decision", "", 1, 1, "router chose ledger: check the ledger"),
    ("hop", "", 1, 1, "ledger: failed (error: RuntimeError: ledger service unavailable)"),
    ("decision", "", 1, 2, "model chose ledger: try again"),
    ("hop", "", 1, 2, "ledger: success: Checked the ledger."),
    ("decision", "", 1, 3, "model chose cashier: charge 30 EUR"),
    ("effect", "", 1, 3, f'cashier effect charge [{CHARGE_KEY}] -> {{"payment_id": 7}}'),
    ("hop", "", 1, 3, "cashier: success: Charged, payment 7."),
    ("decision", "", 1, 3, "model chose FINISH"),
    ("end", "", 1, None, "run done"),
]


def test_decisions_hops_a_retry_and_an_effect_in_order() -> None:
    saver = InMemorySaver()
    app, effects = checking_run(saver)
    trail = audit_trail(saver, "run-1", effects=effects)
    assert trail.thread_id == "run-1"
    assert rows(trail) == EXPECTED_CHECKING
    assert_times(trail)
    decisions = [e for e in trail.events if isinstance(e, DecisionEvent)]
    assert [e.decided_by for e in decisions] == ["router", "model", "model", "model"]
    failed = next(e for e in trail.events if isinstance(e, HopEvent))
    assert (failed.worker, failed.status, failed.summary, failed.error, failed.fallback) == (
        "ledger",
        "failed",
        "failed: RuntimeError: ledger service unavailable",
        "RuntimeError: ledger service unavailable",
        None,
    )
    (effect,) = [e for e in trail.events if isinstance(e, EffectEvent)]
    # The key carries the hop prompt's digest; the event names the worker without it.
    assert (effect.key, effect.worker, effect.name, effect.outcome) == (
        CHARGE_KEY,
        "cashier",
        "charge",
        {"payment_id": 7},
    )
    # The graph, or the effects' store itself, give the same trail.
    assert rows(audit_trail(app, "run-1", effects=effects.store)) == EXPECTED_CHECKING
    # Without an effects store, effects are left out (the checkpoints do not hold them).
    assert [r for r in rows(audit_trail(saver, "run-1")) if r[0] == "effect"] == []


def test_events_are_frozen_and_json_ready() -> None:
    saver = InMemorySaver()
    _, effects = checking_run(saver)
    trail = audit_trail(saver, "run-1", effects=[effects])
    event = trail.events[0]
    assert isinstance(event, TurnEvent) and isinstance(event, AuditEvent)
    with pytest.raises(AttributeError):
        event.task = "changed"  # type: ignore[misc]
    data = json.loads(json.dumps(trail.to_dict()))
    assert data["thread_id"] == "run-1"
    assert [e["kind"] for e in data["events"]] == [r[0] for r in EXPECTED_CHECKING]
    assert data["events"][1] == {
        "kind": "decision",
        "at": trail.events[1].at.isoformat(),  # type: ignore[union-attr]
        "turn": 1,
        "step": 1,
        "path": [],
        "worker": "ledger",
        "instructions": "check the ledger",
        "decided_by": "router",
    }
    assert data["events"][6]["key"] == CHARGE_KEY
    assert data["events"][6]["outcome"] == {"payment_id": 7}


# ------------------------------------------------------------------------ reviews, turns


@tool
def refund(order_id: str, amount: int) -> str:
    """Refund an order."""
    return f"refunded {amount} on {order_id}"


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _clerk(call: ScriptedCall) -> AIMessage | str:
    """Tries a tool it does not have for A1, then refunds; reports what the tool said."""
    last = call.messages[-1]
    if isinstance(last, ToolMessage):
        if "wipe_database" in str(last.content):
            return _call("refund", {"order_id": "A1", "amount": 30}, "r1")
        return "Refund done." if "refunded" in str(last.content) else "Refund not made."
    if "A1" in str(last.content):
        return _call("wipe_database", {}, "w1")
    return _call("refund", {"order_id": "B2", "amount": 5}, "r2")


def test_a_refused_tool_and_two_reviews_over_two_turns() -> None:
    billing = Worker(
        name="billing",
        description="Refunds orders.",
        model=ScriptedChatModel(script=[_clerk] * 10),
        tools=[refund],
        risks={"refund": "high"},
    )
    saver = InMemorySaver()
    app = create_supervisor(
        [billing], router=lambda view: "FINISH" if view.step >= 1 else "billing"
    ).compile(checkpointer=saver)
    paused = app.invoke(ask("Refund order A1"), config("desk"))
    assert "__interrupt__" in paused
    so_far = audit_trail(saver, "desk")
    assert so_far.pending_reviews == 1 and so_far.to_dict()["pending_reviews"] == 1
    assert [(e.kind, e.line()) for e in so_far.events] == [
        ("turn", "turn 1: Refund order A1"),
        ("decision", "router chose billing"),
    ]  # the refusal is written with the hop, when it ends
    resolve_review(app, thread_id="desk", decision=Approve(), reviewer="alice")
    app.invoke(ask("Refund order B2"), config("desk"))
    out = resolve_review(
        app, thread_id="desk", decision=Reject(message="not eligible"), reviewer="bob"
    )
    assert out["status"] == "done"
    trail = audit_trail(saver, "desk")
    assert trail.pending_reviews == 0
    reviews = [e for e in trail.events if isinstance(e, ReviewEvent)]
    assert [(r.decision, r.reviewer, r.action, r.review_kind, r.worker) for r in reviews] == [
        ("approve", "alice", "refund", "tool", "billing"),
        ("reject", "bob", "refund", "tool", "billing"),
    ]
    stored = out["reviews"]
    assert [r.answered_at for r in reviews] == [r["answered_at"] for r in stored]
    assert [r.interrupt_id for r in reviews] == [r["interrupt_id"] for r in stored]
    assert rows(trail) == [
        ("turn", "", 1, None, "turn 1: Refund order A1"),
        ("decision", "", 1, 1, "router chose billing"),
        ("refusal", "", 1, 1, "billing was refused wipe_database: not in the worker's allowlist"),
        ("review", "", 1, 1, f"approve by alice on refund at {stored[0]['answered_at']}"),
        ("hop", "", 1, 1, "billing: success: Refund done."),
        ("decision", "", 1, 1, "router chose FINISH"),
        ("end", "", 1, None, "run done"),
        ("turn", "", 2, None, "turn 2: Refund order B2"),
        ("decision", "", 2, 1, "router chose billing"),
        ("review", "", 2, 1, f"reject by bob on refund at {stored[1]['answered_at']}"),
        ("hop", "", 2, 1, "billing: success: Refund not made."),
        ("decision", "", 2, 1, "router chose FINISH"),
        ("end", "", 2, None, "run done"),
    ]
    assert_times(trail)
    (refusal,) = [e for e in trail.events if isinstance(e, RefusalEvent)]
    assert (refusal.worker, refusal.tool) == ("billing", "wipe_database")


# -------------------------------------------------------------------- compaction, halt


def test_a_compaction_and_a_halt() -> None:
    def pager(task: WorkerTask) -> str:
        return f"FACT-{task.step} paged."

    saver = InMemorySaver()
    app = create_supervisor(
        [Worker(name="pager", description="Pages.", agent=pager)],
        router=lambda view: "pager",
        max_steps=3,
        compaction=Compaction(
            summarizer=summarizer(), max_context_tokens=100_000, every_n_steps=2, keep=1
        ),
    ).compile(checkpointer=saver)
    out = app.invoke(ask("Page the on-call"), config("pages"))
    assert out["halt_reason"] == "max_steps"
    trail = audit_trail(saver, "pages")
    (compaction,) = [e for e in trail.events if isinstance(e, CompactionEvent)]
    stored = out["compactions"][0]
    assert (compaction.worker, compaction.reason, compaction.removed, compaction.error) == (
        "pager",
        "cadence",
        stored["removed"],
        None,
    )
    assert (compaction.tokens_before, compaction.tokens_after) == (
        stored["tokens_before"],
        stored["tokens_after"],
    )
    (end,) = [e for e in trail.events if isinstance(e, EndEvent)]
    assert (end.status, end.halt_reason, end.halt_detail) == (
        "halted",
        "max_steps",
        out["halt_detail"],
    )
    assert [(e.kind, e.step) for e in trail.events] == [
        ("turn", None),
        ("decision", 1),
        ("hop", 1),
        ("decision", 2),
        ("hop", 2),
        ("decision", 3),
        ("compaction", 3),
        ("hop", 3),
        ("end", None),
    ]
    assert trail.events[-1].line() == f"run halted: max_steps ({out['halt_detail']})"
    assert_times(trail)


# ---------------------------------------------------------------------------- trees


def tree_run(saver: BaseCheckpointSaver[Any]) -> None:
    """A three-level tree on thread `tree`: root -> ops -> incident -> pager."""

    def pager(task: WorkerTask) -> str:
        return "Paged the on-call."

    incident = create_supervisor(
        [Worker(name="pager", description="Pages.", agent=pager)],
        router=lambda view: "FINISH" if view.ledger else "pager",
        name="incident",
    )
    ops = create_supervisor(
        [Worker(name="incident", description="Incidents.", agent=incident)],
        router=lambda view: "FINISH" if view.ledger else "incident",
        name="ops",
    )
    app = create_supervisor(
        [Worker(name="ops", description="Operations.", agent=ops)],
        router=lambda view: "FINISH" if view.ledger else "ops",
    ).compile(checkpointer=saver)
    app.invoke(ask("The database is down"), config("tree"))


EXPECTED_TREE = [
    ("turn", "", 1, None, "turn 1: The database is down"),
    ("decision", "", 1, 1, "router chose ops"),
    ("decision", "ops", 1, 1, "router chose incident"),
    ("decision", "ops/incident", 1, 1, "router chose pager"),
    ("hop", "ops/incident", 1, 1, "pager: success: Paged the on-call."),
    ("decision", "ops/incident", 1, 1, "router chose FINISH"),
    ("hop", "ops", 1, 1, "incident: success: Paged the on-call."),
    ("decision", "ops", 1, 1, "router chose FINISH"),
    ("hop", "", 1, 1, "ops: success: Paged the on-call."),
    ("decision", "", 1, 1, "router chose FINISH"),
    ("end", "", 1, None, "run done"),
]


def test_a_tree_shows_each_domains_hops_with_their_path() -> None:
    saver = InMemorySaver()
    tree_run(saver)
    trail = audit_trail(saver, "tree")
    assert rows(trail) == EXPECTED_TREE
    assert_times(trail)


# ---------------------------------------------------------------------------- secrets


def test_registered_secrets_never_appear() -> None:
    secret = "sk-live-0123456789abcdef"
    register_secret(secret)

    def login(task: WorkerTask) -> str:
        raise RuntimeError(f"login with {secret} was refused")

    saver = InMemorySaver()
    app = create_supervisor(
        [Worker(name="login", description="Logs in.", agent=login)],
        router=lambda view: "FINISH" if view.ledger else "login",
    ).compile(checkpointer=saver)
    app.invoke(ask("Log in"), config("secret"))
    trail = audit_trail(saver, "secret")
    (hop,) = [e for e in trail.events if isinstance(e, HopEvent)]
    assert hop.error == "RuntimeError: login with *** was refused"
    assert secret not in json.dumps(trail.to_dict())


# ------------------------------------------------------------------ SQLite and errors


def test_sqlite_gives_the_same_trail(tmp_path: Path) -> None:
    with open_checkpointer(f"sqlite:///{tmp_path / 'runs.db'}") as saver:
        _, effects = checking_run(saver)
        trail = audit_trail(saver, "run-1", effects=effects)
    assert rows(trail) == EXPECTED_CHECKING
    assert_times(trail)


def test_an_unknown_thread_is_a_lookup_error() -> None:
    saver = InMemorySaver()
    checking_run(saver)
    with pytest.raises(LookupError, match="thread 'nobody' has no checkpoints"):
        audit_trail(saver, "nobody")


def test_a_graph_without_a_checkpointer_is_refused() -> None:
    app = create_supervisor(
        [Worker(name="a", description="A.", agent=lambda task: "ok")], router=lambda v: "a"
    ).compile()
    with pytest.raises(TypeError, match="give a checkpointer"):
        audit_trail(app, "t")
    with pytest.raises(TypeError, match="got str"):
        audit_trail("postgresql://db", "t")


def forest_run(saver: BaseCheckpointSaver[Any]) -> Any:
    """A tree with a fan-out, a refused tool and a review in a domain, a domain's halt."""
    billing = Worker(
        name="billing",
        description="Refunds orders.",
        model=ScriptedChatModel(script=[_clerk] * 10),
        tools=[refund],
        risks={"refund": "high"},
    )
    orders = create_supervisor(
        [billing], router=lambda view: "FINISH" if view.ledger else "billing", name="orders"
    )
    pager = Worker(name="pager", description="Pages.", agent=lambda task: "Paged.")
    ops = create_supervisor([pager], router=lambda view: "pager", max_steps=1, name="ops")

    def router(view: SupervisorView) -> Any:
        if not view.ledger:
            return ["ops", "notes"]
        return "FINISH" if len(view.ledger) >= 3 else "orders"

    app = create_supervisor(
        [
            Worker(name="orders", description="Orders.", agent=orders),
            Worker(name="ops", description="Operations.", agent=ops),
            Worker(name="notes", description="Takes notes.", agent=lambda task: "Noted."),
        ],
        router=router,
        parallel=True,
    ).compile(checkpointer=saver)
    app.invoke(ask("Refund order A1"), config("forest"))
    out = resolve_review(app, thread_id="forest", decision=Approve(), reviewer="alice")
    assert out["status"] == "done" and out["reviews"]
    return app


def test_a_tree_with_a_fan_out_a_domain_review_a_refusal_and_a_domain_halt() -> None:
    saver = InMemorySaver()
    app = forest_run(saver)
    out = app.get_state(config("forest")).values
    trail = audit_trail(saver, "forest")
    answered = out["reviews"][0]["answered_at"]
    ops_halt = next(e for e in trail.events if isinstance(e, EndEvent) and e.path == ("ops",))
    assert (ops_halt.status, ops_halt.halt_reason) == ("halted", "max_steps")
    ops_hop = next(e for e in trail.events if isinstance(e, HopEvent) and e.worker == "ops")
    assert ops_hop.status == "failed" and ops_hop.path == ()
    assert ops_hop.error is not None and ops_hop.error.startswith("domain 'ops' halted (max_steps)")
    assert sorted((e["step"], e["worker"]) for e in out["ledger"]) == [
        (1, "ops"),
        (2, "notes"),
        (3, "orders"),
    ]
    assert [(k, p, t, s) for k, p, t, s, _ in rows(trail)] == [
        ("turn", "", 1, None),
        ("decision", "", 1, 1),
        ("decision", "", 1, 2),
        ("decision", "ops", 1, 1),
        ("hop", "ops", 1, 1),
        ("end", "ops", 1, None),
        ("hop", "", 1, 1),  # the branches' hops end in one step, listed by step
        ("hop", "", 1, 2),
        ("decision", "", 1, 3),
        ("decision", "orders", 1, 1),
        ("refusal", "orders", 1, 1),
        ("hop", "orders", 1, 1),
        ("decision", "orders", 1, 1),
        ("review", "", 1, 3),
        ("hop", "", 1, 3),
        ("decision", "", 1, 3),
        ("end", "", 1, None),
    ]
    lines = [r[4] for r in rows(trail)]
    assert lines[1:3] == ["router chose ops", "router chose notes"]
    assert lines[10] == "billing was refused wipe_database: not in the worker's allowlist"
    assert lines[13] == f"approve by alice on refund in orders/billing at {answered}"
    (review,) = [e for e in trail.events if isinstance(e, ReviewEvent)]
    assert review.review_path == ("orders", "billing")
    assert_times(trail)


def test_the_supervisor_s_fallback_and_a_worker_s_fallback() -> None:
    def broken(task: WorkerTask) -> str:
        raise RuntimeError("feed down")

    model = ScriptedChatModel(
        script=[{"next": "nobody"}, {"next": "nobody"}, {"next": "FINISH", "instructions": ""}]
    )
    saver = InMemorySaver()
    app = create_supervisor(
        [
            Worker(
                name="quotes",
                description="Fetches quotes.",
                agent=broken,
                retry=RetryPolicy(max_attempts=1),
                fallback=lambda task: "ACME at 9.9 (cached)",
            ),
        ],
        model=model,
        fallback="quotes",
    ).compile(checkpointer=saver)
    out = app.invoke(ask("Quote ACME"), config("fallbacks"))
    assert out["status"] == "done"
    trail = audit_trail(saver, "fallbacks")
    (decision, finish) = [e for e in trail.events if isinstance(e, DecisionEvent)]
    assert (decision.worker, decision.decided_by) == ("quotes", "fallback")
    assert (finish.worker, finish.decided_by) == ("FINISH", "model")
    (hop,) = [e for e in trail.events if isinstance(e, HopEvent)]
    assert (hop.status, hop.summary, hop.fallback) == (
        "success",
        "ACME at 9.9 (cached)",
        out["ledger"][0]["fallback"],
    )
    assert hop.fallback is not None and "feed down" in hop.fallback
    assert (
        hop.line() == f"quotes: success: ACME at 9.9 (cached) (fallback answered: {hop.fallback})"
    )


def test_the_audit_trail_shows_the_online_judges_verdict_after_the_end(tmp_path):
    from tests.evals.test_judge import LOW, config, judge_of, team

    with open_checkpointer(f"sqlite:///{tmp_path / 'runs.db'}") as saver:
        judge = judge_of(LOW, RuntimeError("judge down"), sample=1.0)
        app = team(judge, router=lambda view: "FINISH" if view.ledger else "w").compile(
            checkpointer=saver, store=InMemoryStore()
        )
        app.invoke(ask("tea"), config("audited"))
        app.invoke(ask("coffee"), config("audited"))
        trail = audit_trail(saver, "audited")
    kinds = [e.kind for e in trail.events]
    assert kinds == ["turn", "decision", "hop", "decision", "end", "judgement"] * 2
    first, second = (e for e in trail.events if isinstance(e, JudgementEvent))
    assert first.line() == (
        "scriptedchatmodel/judge scored the answer 0.20 (below 0.50, queued for review): "
        "misses the price"
    )
    assert (first.turn, first.key, first.queued) == (1, "audited:1", True)
    assert second.line() == (
        "scriptedchatmodel/judge gave no verdict: the judge failed: RuntimeError: judge down"
    )
    assert trail.to_dict()["events"][5]["score"] == 0.2


# ---------------------------------------------------------------------------- budgets


def test_budget_events_are_listed_before_the_hop_they_stopped(tmp_path: Path) -> None:
    saver = InMemorySaver()
    record_spend(saver)
    trail = audit_trail(saver, "spend")
    assert rows(trail) == [
        ("turn", "", 1, None, "turn 1: Task 1"),
        ("decision", "", 1, 1, "model chose billing"),
        ("budget", "", 1, 1, "budget warning: tokens 850/1,000 (turn)"),
        # a priced graph's hops and ends say what they spent (the thread's total so far)
        (
            "hop",
            "",
            1,
            1,
            "billing: success: Refunded. [700 tokens, cost 0.0013, 1 unpriced calls]",
        ),
        (
            "end",
            "",
            1,
            None,
            "run done [thread so far: 1,200 tokens, cost 0.00272, 1 unpriced calls]",
        ),
        ("turn", "", 2, None, "turn 2: Task 2"),
        ("decision", "", 2, 1, "model chose billing"),
        ("budget", "", 2, 1, "budget warning: cost 0.0041/0.005 (turn) [worker billing]"),
        ("budget", "", 2, 1, "budget exceeded: cost 0.0057/0.005 (turn) [worker billing]"),
        (
            "hop",
            "",
            2,
            1,
            "billing: failed: Budget spent. (error: BudgetExceededError: billing is spent) "
            "[580 tokens, cost 0.0016]",
        ),
        (
            "end",
            "",
            2,
            None,
            "run halted: budget_exceeded [thread so far: 1,950 tokens, cost 0.00482, "
            "1 unpriced calls]",
        ),
    ]
    assert_times(trail)
    exceeded = trail.events[8]
    assert isinstance(exceeded, BudgetEvent)
    data = json.loads(json.dumps(trail.to_dict()))["events"][8]
    assert data == {
        "kind": "budget",
        "at": exceeded.at.isoformat(),  # type: ignore[union-attr]
        "turn": 2,
        "step": 1,
        "path": [],
        "budget_kind": "exceeded",
        "measure": "cost",
        "spent": 0.0057,
        "limit": 0.005,
        "scope": "turn",
        "worker": "billing",
        "budget_path": [],
        "occurred_at": "2030-01-01T10:02:00+00:00",
        "reviewer": None,
    }
    with open_checkpointer(f"sqlite:///{tmp_path / 'runs.db'}") as disk:
        record_spend(disk)
        assert rows(audit_trail(disk, "spend")) == rows(trail)
        assert not [e for e in audit_trail(disk, "old").events if e.kind == "budget"]


def test_a_budget_event_copied_to_the_level_above_is_listed_once() -> None:
    """A domain's event, in its own state and its parent's: one line, saying where."""
    from langgraph.graph import START, StateGraph

    from langgraph_supervisor_pro._state import SupervisorState
    from langgraph_supervisor_pro.observability import compute_metrics, read_threads

    event = budget_event(1, "approved", "tokens", 850, 2000, path=["ops"], reviewer="alice")
    hop = {"turn": 1, "step": 1, "worker": "pager", "status": "success", "summary": "Paged."}
    inner = StateGraph(SupervisorState)
    inner.add_node("pager", lambda state: {"budget_events": [event], "ledger": [hop]})
    inner.add_edge(START, "pager")
    outer = StateGraph(SupervisorState)
    outer.add_node("ops", inner.compile())
    outer.add_edge(START, "ops")
    saver = InMemorySaver()
    out = outer.compile(checkpointer=saver).invoke(ask(), config("copied"))
    assert out["budget_events"] == [event]  # the parent holds the copy
    (domain,) = read_threads(saver)[0].domains
    assert domain.path == ("ops",) and list(domain.budget_events) == [event]
    budgets = [e for e in audit_trail(saver, "copied").events if isinstance(e, BudgetEvent)]
    assert [(e.path, e.budget_path, e.line()) for e in budgets] == [
        ((), ("ops",), "budget approved by alice: tokens 850/2,000 (turn) in ops")
    ]
    assert compute_metrics(read_threads(saver)).budget.approved == 1

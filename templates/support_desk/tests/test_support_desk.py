"""The support desk, offline: triage, the refund review, approve, reject, other workers, costs."""

from __future__ import annotations

import uuid

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall

from support_desk.graph import (
    DEMO_CONVERSATION,
    PRICES,
    TURN_TOKEN_LIMIT,
    budget_for,
    build_graph,
    supervisor_reply,
)

DUPLICATE = "I was charged twice for order A1001, please refund the duplicate"


@pytest.fixture
def app():
    return build_graph({"LGSP_AUTONOMY": "supervised"}).compile(checkpointer=InMemorySaver())


def config(**configurable):
    return {"configurable": {"thread_id": str(uuid.uuid4()), **configurable}}


def ask(app, text, cfg):
    return app.invoke({"messages": [("user", text)]}, cfg)


def test_a_duplicate_charge_reaches_the_refund_review(app) -> None:
    cfg = config()
    out = ask(app, DUPLICATE, cfg)
    (pending,) = out["__interrupt__"]
    request = pending.value["action_requests"][0]
    assert request["name"] == "refund"
    assert request["args"] == {"order_id": "A1001", "amount": 29.0, "reason": "duplicate charge"}
    assert pending.value["context"]["worker"] == "billing"
    # The order was looked up (low risk, no review) before the refund was asked for.
    assert pending.value["context"]["summary"].endswith("tool calls so far this hop: lookup_order")


def test_approving_refunds(app) -> None:
    cfg = config()
    ask(app, DUPLICATE, cfg)
    out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), cfg)
    assert out["status"] == "done"
    assert [e["worker"] for e in out["ledger"]] == ["billing"]
    assert "refunded 29.00 on order A1001" in out["messages"][-1].content
    assert out["reviews"][0]["decision"] == "approve"


def test_rejecting_ends_politely_without_a_refund(app) -> None:
    cfg = config()
    ask(app, DUPLICATE, cfg)
    out = app.invoke(Command(resume={"decisions": [{"type": "reject"}]}), cfg)
    assert out["status"] == "done"
    answer = out["messages"][-1].content
    assert "not approved" in answer and "refunded 29.00" not in answer


def test_the_autonomous_tier_refunds_without_a_review() -> None:
    app = build_graph({"LGSP_AUTONOMY": "autonomous"}).compile(checkpointer=InMemorySaver())
    out = ask(app, DUPLICATE, config())
    assert "__interrupt__" not in out
    assert "refunded 29.00" in out["messages"][-1].content


def test_a_run_cannot_loosen_the_deployments_tier(app) -> None:
    out = ask(app, DUPLICATE, config(autonomy="autonomous"))
    assert out["status"] == "failed" and out["ledger"] == []
    assert "looser than the deployment's tier 'supervised'" in out["halt_detail"]


@pytest.mark.parametrize(
    ("text", "worker"),
    [
        ("The app crashes every time I open a note", "tech_support"),
        ("Please change the email address on my account", "account"),
    ],
)
def test_other_requests_go_to_the_other_workers(app, text, worker) -> None:
    out = ask(app, text, config())
    assert out["status"] == "done"
    assert [e["worker"] for e in out["ledger"]] == [worker]
    assert out["messages"][-1].content


def test_a_help_center_comment_cannot_make_tech_support_refund(app) -> None:
    out = ask(app, "The app crashes every time I open a note", config())
    assert "__interrupt__" not in out  # refused outright: no review, nothing to approve
    assert out["status"] == "done"
    (entry,) = out["ledger"]
    assert (entry["worker"], entry["status"], entry["refused"]) == (
        "tech_support",
        "success",
        ["refund"],
    )
    (record,) = out["security"]
    assert record["kind"] == "out_of_scope"
    assert (record["worker"], record["tool"], record["args"]["order_id"]) == (
        "tech_support",
        "refund",
        "A1002",
    )
    assert out.get("reviews", []) == []
    answer = out["messages"][-1].content
    assert "1) Update the app;" in answer and "it was not done" in answer


def test_an_article_without_comments_leads_to_no_refused_call(app) -> None:
    out = ask(app, "My notes do not sync between my phone and laptop", config())
    assert out["ledger"][0]["refused"] == []
    assert out.get("security", []) == []
    assert "Settings > Sync" in out["messages"][-1].content


def play(app, cfg, turns):
    """Each turn of the conversation, approving any review; the last state."""
    out = {}
    for text in turns:
        out = ask(app, text, cfg)
        while "__interrupt__" in out:
            out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), cfg)
    return out


def test_the_demo_conversation_reviews_refuses_and_compacts(app) -> None:
    cfg = config()
    out = play(app, cfg, DEMO_CONVERSATION)
    assert out["status"] == "done" and out["turn"] == 3
    assert [(e["turn"], e["worker"], e["refused"]) for e in out["ledger"]] == [
        (1, "billing", []),
        (2, "tech_support", ["refund"]),
        (3, "billing", []),
    ]
    assert [(r["turn"], r["action"], r["decision"]) for r in out["reviews"]] == [
        (1, "refund", "approve")
    ]
    # Billing's context reached the trigger (70% of the offline window) before its model
    # call in turn 3: turn 1's messages became a summary, whose key facts answer the
    # follow-up.
    (compaction,) = out["compactions"]
    assert (compaction["turn"], compaction["worker"], compaction["reason"]) == (
        3,
        "billing",
        "within_hop",
    )
    assert compaction["tokens_after"] < compaction["tokens_before"]
    assert compaction["error"] is None
    history = out["workers"]["billing"]["messages"]
    assert history[0].content.startswith("[Summary of earlier work]")
    assert "- A1001" in history[0].content and "- 29.00" in history[0].content
    assert out["messages"][-1].content.startswith("The refund of 29.00 on order A1001")
    # No worker's model call passed the trigger.
    assert max(u["utilisation"] for u in out["usage"] if u["role"] == "worker") < 0.7


def test_the_follow_up_alone_asks_for_the_order(app) -> None:
    out = ask(app, DEMO_CONVERSATION[-1], config())
    assert out["messages"][-1].content == "Which order is it about? I need the order number."
    assert out.get("compactions", []) == []


def test_every_call_reports_its_model_and_is_priced(app) -> None:
    out = play(app, config(), DEMO_CONVERSATION)
    usage = out["usage"]
    # A larger model routes; smaller ones do the workers' work and the summaries.
    assert {(u["role"], u["model"]) for u in usage} == {
        ("supervisor", "gpt-4.1"),
        ("worker", "gpt-4.1-mini"),
        ("summarizer", "gpt-4.1-mini"),
    }
    for entry in usage:
        price = PRICES[entry["model"]]
        worked_out = (
            entry["input_tokens"] * price["input"] + entry["output_tokens"] * price["output"]
        ) / 1e6
        assert entry["estimated"] is False and entry["output_tokens"] > 0
        assert entry["cost"] == pytest.approx(worked_out, abs=1e-12)
    # Each decision and each worker model call is recorded, those before the review too.
    assert sum(u["role"] == "supervisor" for u in usage) == 6
    assert sum(u["worker"] == "billing" and u["role"] == "worker" for u in usage) == 4
    # The turn limit is far above what a turn spends: no warning, nothing halted.
    assert out.get("budget_events", []) == []
    assert (
        max(
            sum(u["input_tokens"] + u["output_tokens"] for u in usage if u["turn"] == t)
            for t in (1, 2, 3)
        )
        < TURN_TOKEN_LIMIT / 20
    )


def test_the_budget_prices_only_the_models_in_use() -> None:
    own = FunctionChatModel(name="house-model", reply=lambda call: "hi")
    large = FunctionChatModel(name="gpt-4.1", reply=lambda call: "hi")
    budget = budget_for([own, large])
    assert budget.prices == {"gpt-4.1": PRICES["gpt-4.1"]}
    assert (budget.max_tokens, budget.per) == (TURN_TOKEN_LIMIT, "turn")
    assert budget.cost({"model": "house-model", "input_tokens": 10}) is None  # unpriced
    assert budget_for([own]).prices == {}


def test_the_offline_supervisor_decides_from_its_prompt() -> None:
    def shown(text):
        return ScriptedCall(index=7, messages=(SystemMessage("You route."), HumanMessage(text)))

    first = "Task: Please change my email\n\nWorkers: ...\n\nLedger: No hops yet.\n\nHop budget"
    assert supervisor_reply(shown(first)) == {"next": "account", "instructions": ""}
    later = "Task: Please change my email\n\nWorkers: ...\n\nLedger: 1 hops so far (1 succeeded)"
    assert supervisor_reply(shown(later))["next"] == "FINISH"


def test_one_graph_serves_interleaved_threads_alike(app) -> None:
    # The offline models decide from what they are shown, never from call order.
    first, second = config(), config()
    for text in DEMO_CONVERSATION[1:]:
        ask(app, text, first)
        ask(app, text, second)
    a, b = (app.get_state(c).values for c in (first, second))
    assert [m.content for m in a["messages"]] == [m.content for m in b["messages"]]
    strip = ("turn", "step", "role", "worker", "model", "input_tokens", "output_tokens", "cost")
    assert [{k: u[k] for k in strip} for u in a["usage"]] == [
        {k: u[k] for k in strip} for u in b["usage"]
    ]

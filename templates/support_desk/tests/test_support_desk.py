"""The support desk, offline: triage, the refund review, approve, reject, other workers."""

from __future__ import annotations

import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from support_desk.graph import build_graph

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


def test_the_autonomous_tier_refunds_without_a_review(app) -> None:
    out = ask(app, DUPLICATE, config(autonomy="autonomous"))
    assert "__interrupt__" not in out
    assert "refunded 29.00" in out["messages"][-1].content


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

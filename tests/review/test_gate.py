from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command
from pydantic import ValidationError

from langgraph_supervisor_pro.review.gate import request_review, response_schema, review_payload


class S(TypedDict):
    out: str


def graph(allowed=("approve", "reject")):
    def node(state):
        decision = request_review(
            review_payload(
                kind="tool",
                action="refund",
                args={"amount": 30},
                description="Refund 30",
                allowed=list(allowed),
                context={"reviewers": "support", "deadline": "2026-01-01T00:00:00"},
            ),
            escalation_timeout=3600,
        )
        return {"out": decision.type}

    g = StateGraph(S)
    g.add_node("n", node)
    g.add_edge(START, "n")
    return g.compile(checkpointer=InMemorySaver())


def test_response_schema_accepts_only_the_allowed_decisions_and_escalation():
    schema = response_schema(["approve", "reject"])
    schema.model_validate({"decisions": [{"type": "reject", "message": "no"}]})
    schema.model_validate({"decisions": [{"type": "escalate", "to": "leads"}]})
    bad: dict[str, Any]
    for bad in (
        {"decisions": [{"type": "edit", "edited_action": {"name": "x"}}]},
        {"decisions": []},
        {"decisions": [{"type": "approve", "extra": 1}]},
    ):
        with pytest.raises(ValidationError):
            schema.model_validate(bad)
    with pytest.raises(ValueError, match="unknown decision types"):
        response_schema(["approve", "veto"])


def test_escalation_reopens_the_review_for_another_group_with_a_new_deadline():
    app = graph()
    config = {"configurable": {"thread_id": "1"}}
    first = app.invoke({"out": ""}, config)["__interrupt__"][0].value
    assert first["context"]["reviewers"] == "support"
    out = app.invoke(
        Command(
            resume={"decisions": [{"type": "escalate", "to": "leads", "reason": "deadline passed"}]}
        ),
        config,
    )
    second = out["__interrupt__"][0].value
    assert second["context"]["reviewers"] == "leads"
    assert second["context"]["deadline"] == "2026-01-01T01:00:00"  # previous + 1 h
    (record,) = second["context"]["escalations"]
    assert (record["from"], record["to"], record["reason"]) == (
        "support",
        "leads",
        "deadline passed",
    )
    assert second["action_requests"] == first["action_requests"]
    out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert out["out"] == "approve"


def test_disallowed_decision_is_refused_and_the_review_stays_open():
    app = graph(allowed=("approve",))
    config = {"configurable": {"thread_id": "2"}}
    app.invoke({"out": ""}, config)
    before = app.get_state(config)
    with pytest.raises(ValidationError):
        app.invoke(Command(resume={"decisions": [{"type": "reject"}]}), config)
    after = app.get_state(config)
    assert [i.id for i in after.interrupts] == [i.id for i in before.interrupts]
    assert app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)["out"] == (
        "approve"
    )


def test_double_escalation_keeps_a_stable_history():
    app = graph()
    config = {"configurable": {"thread_id": "3"}}
    app.invoke({"out": ""}, config)
    app.invoke(Command(resume={"decisions": [{"type": "escalate", "to": "leads"}]}), config)
    out = app.invoke(Command(resume={"decisions": [{"type": "escalate", "to": "heads"}]}), config)
    ctx = out["__interrupt__"][0].value["context"]
    assert [e["to"] for e in ctx["escalations"]] == ["leads", "heads"]
    assert ctx["escalations"][0]["previous_deadline"] == "2026-01-01T00:00:00"
    assert ctx["escalations"][1]["previous_deadline"] == "2026-01-01T01:00:00"
    assert ctx["deadline"] == "2026-01-01T02:00:00"

import asyncio
import logging
import uuid
from typing import Any, TypedDict

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command
from pydantic import ValidationError

from langgraph_supervisor_pro.review.gate import (
    invalid_answer_summary,
    request_review,
    response_schema,
    review_payload,
)
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import task_errors, without_invalid_answer


class S(TypedDict):
    out: str


def _payload(allowed=("approve", "reject")):
    return review_payload(
        kind="tool",
        action="refund",
        args={"amount": 30},
        description="Refund 30",
        allowed=list(allowed),
        context={"reviewers": "support", "deadline": "2026-01-01T00:00:00"},
    )


def graph(allowed=("approve", "reject"), *, depth=1, decided=None):
    """A node that asks for a review, `depth - 1` subgraphs down; `decided` gets each decision."""

    def node(state):
        decision = request_review(_payload(allowed), escalation_timeout=3600)
        if decided is not None:
            decided.append(decision.type)
        return {"out": decision.type}

    g = StateGraph(S)
    g.add_node("n", node)
    g.add_edge(START, "n")
    for level in range(depth - 1):
        inner = g.compile()
        g = StateGraph(S)
        g.add_node(f"level{level}", inner)
        g.add_edge(START, f"level{level}")
    return g.compile(checkpointer=InMemorySaver())


def _thread():
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def _resume(pending, value, by_id):
    return Command(resume={pending.id: value} if by_id else value)


BAD_ANSWERS: list[Any] = [
    "approve",
    {"decisions": []},
    {"decisions": [{"type": "maybe"}]},
    {"decisions": [{"type": "edit"}]},
    {"decisions": [{"type": "approve"}, {"type": "approve"}]},
    {"decisions": [{"type": "approve", "extra": 1}]},
    {"decision": {"type": "approve"}},
]
APPROVE = {"decisions": [{"type": "approve"}]}


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
    out = app.invoke(Command(resume={"decisions": [{"type": "reject"}]}), config)
    (again,) = out["__interrupt__"]
    assert "'reject'" in again.value["context"]["invalid_answer"]
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


# -- an invalid answer: the same review, pending again, and no error saved -----------------


@pytest.mark.parametrize("bad", BAD_ANSWERS)
@pytest.mark.parametrize("by_id", [False, True], ids=["plain", "by_id"])
def test_an_invalid_answer_pauses_again_on_the_same_review(bad, by_id):
    decided: list[str] = []
    app = graph(decided=decided)
    config = _thread()
    (pending,) = app.invoke({"out": ""}, config)["__interrupt__"]
    checkpoint = app.get_state(config).config["configurable"]["checkpoint_id"]

    out = app.invoke(_resume(pending, bad, by_id), config)  # no ValidationError

    (again,) = out["__interrupt__"]
    assert again.id == pending.id
    assert again.response_schema == pending.response_schema
    assert without_invalid_answer(again.value) == pending.value
    problem = again.value["context"]["invalid_answer"]
    assert problem and "\n" not in problem and len(problem) <= 240
    state = app.get_state(config, subgraphs=True)
    assert task_errors(state) == []
    assert [i.id for i in state.interrupts] == [pending.id]
    assert state.config["configurable"]["checkpoint_id"] == checkpoint
    assert decided == []
    # Nothing left to fail on: the run is still just waiting for its answer.
    (still,) = app.invoke(None, config)["__interrupt__"]
    assert still.id == pending.id and task_errors(app.get_state(config, subgraphs=True)) == []
    out = app.invoke(_resume(pending, APPROVE, by_id), config)
    assert out["out"] == "approve" and "__interrupt__" not in out
    assert decided == ["approve"]


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("escalations", [0, 1, 2])
@pytest.mark.parametrize("by_id", [False, True], ids=["plain", "by_id"])
def test_the_reposted_review_has_langgraphs_own_interrupt_id(depth, escalations, by_id):
    """Pins the id scheme `request_review` copies from LangGraph (the task's namespace,
    then `|<answers consumed>`): if a LangGraph upgrade changes it, this fails."""
    app = graph(depth=depth)
    config = _thread()
    (pending,) = app.invoke({"out": ""}, config)["__interrupt__"]
    for n in range(escalations):
        escalate = {"decisions": [{"type": "escalate", "to": f"group{n}"}]}
        (pending,) = app.invoke(_resume(pending, escalate, by_id), config)["__interrupt__"]
    out = app.invoke(_resume(pending, {"decisions": [{"type": "maybe"}]}, by_id), config)
    (again,) = out["__interrupt__"]
    assert again.id == pending.id, (
        "the review re-posted after an invalid answer no longer has LangGraph's interrupt id: "
        "LangGraph changed how it derives interrupt ids (langgraph.types.interrupt); update "
        "review/gate.py::_pause_again"
    )
    assert again.response_schema == pending.response_schema
    assert without_invalid_answer(again.value) == pending.value
    assert len(again.value["context"].get("escalations", [])) == escalations
    assert task_errors(app.get_state(config, subgraphs=True)) == []
    (still,) = app.invoke(None, config)["__interrupt__"]
    assert still.id == pending.id
    # The answer keyed to the pending id is the one the review gets.
    out = app.invoke(_resume(again, APPROVE, by_id), config)
    assert out["out"] == "approve" and "__interrupt__" not in out


def test_an_invalid_answer_is_logged_once_as_a_warning(caplog):
    app = graph()
    config = _thread()
    (pending,) = app.invoke({"out": ""}, config)["__interrupt__"]
    with caplog.at_level(logging.WARNING, logger="langgraph_supervisor_pro.review"):
        app.invoke(Command(resume={pending.id: {"decisions": [{"type": "maybe"}]}}), config)
    (record,) = [r for r in caplog.records if r.name == "langgraph_supervisor_pro.review"]
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert config["configurable"]["thread_id"] in message
    assert "'refund'" in message and pending.id in message and "'maybe'" in message


def test_the_summary_of_an_invalid_answer_never_carries_the_answer():
    secret = "s3cr3t-" * 200
    summaries = []
    for bad in (
        secret,
        {"decisions": [{"type": "approve", "note": secret}]},
        {"decisions": [{"type": "respond"}], "a": secret, "b": secret, "c": secret},
        {secret: 1},
    ):
        with pytest.raises(ValidationError) as err:
            response_schema(["approve", "respond"]).model_validate(bad)
        summary = invalid_answer_summary(err.value)
        assert summary and len(summary) <= 240 and "\n" not in summary
        assert secret not in summary and secret[:60] not in summary
        summaries.append(summary)
    assert summaries[1] == "decisions.0.approve.note: Extra inputs are not permitted"
    assert summaries[2] == (
        "decisions.0.respond.message: Field required; a: Extra inputs are not permitted; "
        "b: Extra inputs are not permitted (and 1 more)"
    )


async def test_an_invalid_answer_under_ainvoke_pauses_again_on_the_same_review():
    decided: list[str] = []
    app = graph(depth=2, decided=decided)
    config = _thread()
    (pending,) = (await app.ainvoke({"out": ""}, config))["__interrupt__"]
    out = await app.ainvoke(Command(resume={pending.id: "approve"}), config)
    (again,) = out["__interrupt__"]
    assert again.id == pending.id and again.value["context"]["invalid_answer"]
    assert task_errors(await app.aget_state(config, subgraphs=True)) == []
    (still,) = (await app.ainvoke(None, config))["__interrupt__"]
    assert still.id == pending.id
    out = await app.ainvoke(Command(resume={pending.id: APPROVE}), config)
    assert out["out"] == "approve" and decided == ["approve"]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_review_inside_a_tool_of_an_agent_refuses_an_invalid_answer_alike(asynchronous):
    """`ToolNode` re-raises an invalid resume; the gate's re-posted interrupt passes too."""
    ran: list[int] = []

    @tool
    def refund(amount: int) -> str:
        """Refund an amount."""
        decision = request_review(_payload(("approve", "reject")))
        if decision.type != "approve":
            return "not refunded"
        ran.append(amount)
        return f"refunded {amount}"

    model = ScriptedChatModel(
        script=[
            AIMessage(
                content="", tool_calls=[{"name": "refund", "args": {"amount": 30}, "id": "c1"}]
            ),
            "Done.",
        ]
    )
    agent = create_agent(model, tools=[refund], checkpointer=InMemorySaver())
    config = _thread()

    def run(value):
        if asynchronous:
            return asyncio.run(agent.ainvoke(value, config))
        return agent.invoke(value, config)

    (pending,) = run({"messages": [("user", "Refund 30")]})["__interrupt__"]
    for bad in ("approve", {"decisions": [{"type": "edit"}]}):
        out = run(Command(resume=bad))
        (again,) = out["__interrupt__"]
        assert again.id == pending.id and again.value["context"]["invalid_answer"]
        assert task_errors(agent.get_state(config, subgraphs=True)) == []
    out = run(Command(resume={pending.id: APPROVE}))
    assert ran == [30] and out["messages"][-1].content == "Done."


def test_a_review_payload_holds_only_storable_text():
    payload = review_payload(
        kind="tool",
        action="refund",
        args={"order\x00id": "A\ud8001", "lines": ["x\x00", 2]},
        description="Refund \x00",
        allowed=["approve"],
        context={"task": "T\ud800", "summary": "S\x00", "step": 1},
    )
    assert payload["action_requests"][0]["args"] == {
        "order\ufffdid": "A\ufffd1",
        "lines": ["x\ufffd", 2],
    }
    assert payload["action_requests"][0]["description"] == "Refund \ufffd"
    assert payload["context"] == {
        "kind": "tool",
        "task": "T\ufffd",
        "summary": "S\ufffd",
        "step": 1,
    }


def test_an_escalation_reason_that_cannot_be_stored_is_recorded_replaced():
    app = graph()
    config = _thread()
    app.invoke({"out": ""}, config)
    resume = {"decisions": [{"type": "escalate", "to": "le\x00ads", "reason": "late\ud800"}]}
    second = app.invoke(Command(resume=resume), config)["__interrupt__"][0].value
    assert second["context"]["reviewers"] == "le\ufffdads"
    (record,) = second["context"]["escalations"]
    assert (record["to"], record["reason"]) == ("le\ufffdads", "late\ufffd")

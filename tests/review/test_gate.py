import asyncio
import logging
import uuid
from datetime import UTC, datetime
from typing import Any, TypedDict

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command
from pydantic import ValidationError

from langgraph_supervisor_pro.review._gate import (
    ApproveDecision,
    ReviewAnswer,
    invalid_answer_summary,
    request_review,
    request_review_answer,
    response_schema,
    review_payload,
)
from langgraph_supervisor_pro.review._policy import SWEEP_REVIEWER, ReviewPolicy
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


# -- who answers, and who may -------------------------------------------------------------

SUPPORT = ReviewPolicy(
    reviewers="support", escalate_to="leads", members={"support": ["alice"], "leads": ["carol"]}
)


def answering_graph(policy=None, *, depth=1, answers=None):
    """A node that asks for a review with `policy`; `answers` gets each `ReviewAnswer`."""

    payload = _payload()
    payload["context"]["escalate_to"] = "leads"

    def node(state):
        answer = request_review_answer(payload, escalation_timeout=3600, policy=policy)
        if answers is not None:
            answers.append(answer)
        return {"out": answer.decision.type}

    g = StateGraph(S)
    g.add_node("n", node)
    g.add_edge(START, "n")
    for level in range(depth - 1):
        inner = g.compile()
        g = StateGraph(S)
        g.add_node(f"level{level}", inner)
        g.add_edge(START, f"level{level}")
    return g.compile(checkpointer=InMemorySaver())


def test_the_response_schema_takes_who_answers_and_when():
    schema = response_schema(["approve"])
    parsed = schema.model_validate(
        {
            "decisions": [{"type": "approve"}],
            "reviewer": " alice ",
            "answered_at": "2030-01-01T10:00:00+01:00",
        }
    )
    assert getattr(parsed, "reviewer") == "alice"  # noqa: B009
    assert getattr(parsed, "answered_at").isoformat() == "2030-01-01T10:00:00+01:00"  # noqa: B009
    assert {"reviewer", "answered_at", "decisions"} <= set(schema.model_json_schema()["properties"])
    for bad in (
        {"reviewer": ""},
        {"reviewer": "   "},
        {"reviewer": "x" * 201},
        {"reviewer": 7},
        {"answered_at": "2030-01-01T10:00:00"},  # naive
        {"answered_at": "soon"},
    ):
        with pytest.raises(ValidationError):
            schema.model_validate({"decisions": [{"type": "approve"}], **bad})


def test_an_answer_carries_its_reviewer_and_time():
    answers: list[ReviewAnswer] = []
    app = answering_graph(answers=answers)
    config = _thread()
    (pending,) = app.invoke({"out": ""}, config)["__interrupt__"]
    resume = {"decisions": [{"type": "approve"}], "reviewer": "alice"}
    resume["answered_at"] = "2030-01-01T10:00:00+01:00"
    app.invoke(Command(resume={pending.id: resume}), config)
    (answer,) = answers
    assert isinstance(answer.decision, ApproveDecision)
    assert (answer.reviewer, answer.answered_at, answer.interrupt_id) == (
        "alice",
        "2030-01-01T09:00:00+00:00",  # in UTC
        pending.id,
    )
    assert answer.review == pending.value
    entry = answer.entry(turn=2, step=3)
    assert entry == {
        "turn": 2,
        "step": 3,
        "interrupt_id": pending.id,
        "kind": "tool",
        "action": "refund",
        "worker": None,
        "path": [],
        "decision": "approve",
        "reviewer": "alice",
        "reviewers": "support",
        "answered_at": "2030-01-01T09:00:00+00:00",
        "escalations": [],
    }


def test_without_a_reviewer_the_answer_is_the_servers_authenticated_users():
    answers: list[ReviewAnswer] = []
    app = answering_graph(answers=answers)
    # What langgraph-api puts in a run's config for its authenticated user.
    config = {"configurable": {"thread_id": "auth-1", "langgraph_auth_user_id": "alice"}}
    app.invoke({"out": ""}, config)
    before = datetime.now(UTC)
    app.invoke(Command(resume=APPROVE), config)
    (answer,) = answers
    assert answer.reviewer == "alice"
    assert before <= datetime.fromisoformat(answer.answered_at) <= datetime.now(UTC)
    # A reviewer named in the answer wins; an unauthenticated server user ("") is nobody.
    answers.clear()
    config = {"configurable": {"thread_id": "auth-2", "langgraph_auth_user_id": ""}}
    app.invoke({"out": ""}, config)
    app.invoke(Command(resume=APPROVE), config)
    assert answers[0].reviewer is None


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("by_id", [False, True], ids=["plain", "by_id"])
@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({**APPROVE, "reviewer": "mallory"}, "'mallory' may not answer review"),
        ({**APPROVE, "reviewer": "carol"}, "not a member of the reviewer group 'support'"),
        (APPROVE, "names no reviewer"),
        (
            {"decisions": [{"type": "escalate", "to": "leads"}], "reviewer": "carol"},
            "'carol' may not answer review",
        ),
        (
            {"decisions": [{"type": "approve"}], "reviewer": SWEEP_REVIEWER},
            f"{SWEEP_REVIEWER!r} may not answer review",
        ),
    ],
)
def test_an_answer_by_someone_the_policy_refuses_pauses_again_on_the_same_review(
    depth, by_id, answer, says
):
    answers: list[ReviewAnswer] = []
    app = answering_graph(SUPPORT, depth=depth, answers=answers)
    config = _thread()
    (pending,) = app.invoke({"out": ""}, config)["__interrupt__"]
    checkpoint = app.get_state(config).config["configurable"]["checkpoint_id"]

    out = app.invoke(_resume(pending, answer, by_id), config)

    (again,) = out["__interrupt__"]
    assert again.id == pending.id
    assert again.response_schema == pending.response_schema
    assert without_invalid_answer(again.value) == pending.value
    problem = again.value["context"]["invalid_answer"]
    assert says in problem and "\n" not in problem
    state = app.get_state(config, subgraphs=True)
    assert task_errors(state) == [] and answers == []
    assert state.config["configurable"]["checkpoint_id"] == checkpoint
    # A member's answer, keyed to the pending id, is taken.
    out = app.invoke(_resume(again, {**APPROVE, "reviewer": "alice"}, by_id), config)
    assert out["out"] == "approve" and "__interrupt__" not in out
    assert [(a.reviewer, a.interrupt_id) for a in answers] == [("alice", pending.id)]


def test_the_policy_holds_for_the_servers_user_too():
    app = answering_graph(SUPPORT)
    config = {"configurable": {"thread_id": "auth-3", "langgraph_auth_user_id": "mallory"}}
    app.invoke({"out": ""}, config)
    out = app.invoke(Command(resume=APPROVE), config)
    assert "'mallory' may not answer" in out["__interrupt__"][0].value["context"]["invalid_answer"]
    config["configurable"]["langgraph_auth_user_id"] = "alice"
    assert app.invoke(Command(resume=APPROVE), config)["out"] == "approve"


def test_an_escalation_records_who_sent_it_and_moves_the_review_to_the_new_group():
    answers: list[ReviewAnswer] = []
    app = answering_graph(SUPPORT, answers=answers)
    config = _thread()
    (pending,) = app.invoke({"out": ""}, config)["__interrupt__"]
    sweep = {
        "decisions": [{"type": "escalate", "to": "leads", "reason": "late"}],
        "reviewer": SWEEP_REVIEWER,
        "answered_at": "2026-01-01T00:00:01+00:00",
    }
    (second,) = app.invoke(_resume(pending, sweep, True), config)["__interrupt__"]
    (record,) = second.value["context"]["escalations"]
    assert (record["by"], record["at"], record["to"]) == (
        SWEEP_REVIEWER,
        "2026-01-01T00:00:01+00:00",
        "leads",
    )
    # Only an escalation to the review's own escalate_to is the sweep's to send.
    # support's alice no longer may answer; carol, a lead, may.
    out = app.invoke(_resume(second, {**APPROVE, "reviewer": "alice"}, True), config)
    assert "group 'leads'" in out["__interrupt__"][0].value["context"]["invalid_answer"]
    assert out["__interrupt__"][0].id == second.id
    out = app.invoke(_resume(second, {**APPROVE, "reviewer": "carol"}, True), config)
    assert out["out"] == "approve"
    (answer,) = answers
    assert (answer.reviewer, answer.interrupt_id) == ("carol", second.id)
    assert answer.entry(turn=1, step=1)["escalations"] == [record]
    # An escalation sent without a time records none.
    app = answering_graph()
    config = _thread()
    app.invoke({"out": ""}, config)
    escalate = {"decisions": [{"type": "escalate", "to": "leads"}]}
    out = app.invoke(Command(resume=escalate), config)
    (record,) = out["__interrupt__"][0].value["context"]["escalations"]
    assert (record["by"], record["at"]) == (None, None)


def test_the_sweep_may_not_escalate_a_restricted_review_anywhere_but_its_escalate_to():
    app = answering_graph(SUPPORT)
    config = _thread()
    (pending,) = app.invoke({"out": ""}, config)["__interrupt__"]
    elsewhere = {"decisions": [{"type": "escalate", "to": "friends"}], "reviewer": SWEEP_REVIEWER}
    out = app.invoke(_resume(pending, elsewhere, True), config)
    assert out["__interrupt__"][0].id == pending.id
    assert (
        f"{SWEEP_REVIEWER!r} may not answer"
        in (out["__interrupt__"][0].value["context"]["invalid_answer"])
    )
    reject = {"decisions": [{"type": "reject", "message": "late"}], "reviewer": SWEEP_REVIEWER}
    assert app.invoke(_resume(pending, reject, True), config)["out"] == "reject"


def test_request_review_takes_the_policy_too():
    decided: list[str] = []

    def node(state):
        decided.append(request_review(_payload(), policy=SUPPORT).type)
        return {"out": decided[-1]}

    g = StateGraph(S)
    g.add_node("n", node)
    g.add_edge(START, "n")
    app = g.compile(checkpointer=InMemorySaver())
    config = _thread()
    app.invoke({"out": ""}, config)
    out = app.invoke(Command(resume={**APPROVE, "reviewer": "mallory"}), config)
    assert out["__interrupt__"] and decided == []
    assert app.invoke(Command(resume={**APPROVE, "reviewer": "alice"}), config)["out"] == "approve"

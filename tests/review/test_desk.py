"""The review desk: list pending reviews across threads, resolve them, sweep expired ones.

Real graphs on real checkpointers (memory and Postgres): a billing worker whose
`refund` tool is high risk pauses in the supervised tier; the manual tier pauses each
dispatch; a hand-built graph pauses twice at once.
"""

from __future__ import annotations

import dataclasses
import operator
import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict

from langgraph_supervisor_pro import (
    ReviewPolicy,
    Worker,
    aopen_checkpointer,
    create_supervisor,
    open_checkpointer,
)
from langgraph_supervisor_pro.errors import (
    InvalidDecisionError,
    ReviewerNotAllowedError,
    ReviewError,
    ReviewNotFoundError,
)
from langgraph_supervisor_pro.review._desk import (
    INTERRUPT_CHANNEL,
    Approve,
    Edit,
    Reject,
    Respond,
    alist_reviews,
    aresolve_review,
    asweep_reviews,
    check_decision,
    check_reviewer,
    get_review,
    list_reviews,
    resolve_review,
    sweep_reviews,
)
from langgraph_supervisor_pro.review._gate import (
    ApproveDecision,
    EditDecision,
    EditedAction,
    RejectDecision,
    request_review,
    review_payload,
)
from langgraph_supervisor_pro.review._payload import PendingReview, is_review_payload
from langgraph_supervisor_pro.review._policy import SWEEP_REVIEWER
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel
from tests._helpers import task_errors

TASK = "Refund order O-7: it arrived broken"
ARGS = {"order_id": "O-7", "amount": 30}
RAN: list[dict[str, Any]] = []


@tool
def refund(order_id: str, amount: int) -> str:
    """Refund an order."""
    RAN.append({"order_id": order_id, "amount": amount})
    return f"refunded {amount} on {order_id}"


@pytest.fixture(autouse=True)
def _clear():
    RAN.clear()


def billing_step(call: ScriptedCall) -> Any:
    """Ask for the refund; once the tool answered, report what it said."""
    last = call.messages[-1]
    if isinstance(last, ToolMessage):
        return f"Done: {last.content}"
    return AIMessage(content="", tool_calls=[{"name": "refund", "args": ARGS, "id": "call_1"}])


def route_once(worker: str):
    def router(view):
        return worker if not view.ledger else "FINISH"

    return router


def billing_team(policy: ReviewPolicy | None = None):
    model = ScriptedChatModel(name="billing-model", script=[billing_step] * 20)
    worker = Worker(
        name="billing",
        description="Handles refunds.",
        model=model,
        tools=[refund],
        risks={"refund": "high"},
    )
    graph = create_supervisor(
        [worker],
        router=route_once("billing"),
        review=policy or ReviewPolicy(tier="supervised", review_timeout=3600),
    )
    return graph, model


def config_for(thread_id: str, **configurable: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, **configurable}}


@pytest.fixture(params=["memory", "postgres"])
def saver(request):
    if request.param == "memory":
        yield InMemorySaver()
        return
    uri = request.getfixturevalue("pg_database")
    with open_checkpointer(uri) as pg:
        yield pg


def paused_billing(saver, policy: ReviewPolicy | None = None, thread_id: str | None = None):
    graph, model = billing_team(policy)
    app = graph.compile(checkpointer=saver)
    thread_id = thread_id or f"t-{uuid.uuid4().hex[:8]}"
    before = datetime.now(UTC)
    out = app.invoke({"messages": [("user", TASK)]}, config_for(thread_id))
    after = datetime.now(UTC)
    assert out["__interrupt__"], out
    assert RAN == []
    return app, model, thread_id, (before, after)


def root_tuple(saver, thread_id: str):
    return saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})


def frozen_state(app, saver, thread_id: str):
    """What must not change when a decision is refused."""
    snapshot = app.get_state(config_for(thread_id))
    item = root_tuple(saver, thread_id)
    return (
        snapshot.config["configurable"]["checkpoint_id"],
        [(i.id, i.value) for i in snapshot.interrupts],
        sorted((w[0], w[1]) for w in item.pending_writes),
        len(list(saver.list(config_for(thread_id)))),
    )


def last_tool_message(model: ScriptedChatModel) -> ToolMessage:
    message = model.calls[-1].messages[-1]
    assert isinstance(message, ToolMessage), model.calls[-1].messages
    return message


# ----------------------------------------------------------------------- listing


def test_list_finds_a_paused_tool_call_with_its_context(saver):
    app, _, thread_id, (before, after) = paused_billing(saver)

    (review,) = list_reviews(saver)
    assert isinstance(review, PendingReview)
    assert review.thread_id == thread_id
    assert (review.kind, review.action, dict(review.args)) == ("tool", "refund", ARGS)
    assert (review.worker, review.risk, review.reviewers) == ("billing", "high", "default")
    assert review.allowed == ("approve", "edit", "reject", "respond")
    assert review.description == "Worker 'billing' wants to call 'refund' (high risk)."
    assert review.task == TASK
    assert review.reason == "high-risk tool in the supervised tier"
    context = review.context
    assert context["summary"].startswith("Hop 1")
    assert (context["on_timeout"], context["escalate_to"]) == ("reject", None)
    assert context["thread_id"] == thread_id
    # The deadline is one review_timeout after the pause, in UTC.
    assert review.deadline is not None and review.deadline.tzinfo is not None
    assert before + timedelta(seconds=3600) <= review.deadline <= after + timedelta(seconds=3600)
    assert not review.expired(after)
    assert review.expired(after + timedelta(hours=2))
    assert review.payload["action_requests"][0]["args"] == ARGS
    # The ids are LangGraph's: what get_state shows, on the run's latest checkpoint.
    snapshot = app.get_state(config_for(thread_id))
    assert review.interrupt_id == snapshot.interrupts[0].id
    assert review.checkpoint_id == snapshot.config["configurable"]["checkpoint_id"]
    # Reading through the graph gives the same reviews.
    assert list_reviews(saver, graph=app) == [review]
    assert review.to_dict(now=after)["expired"] is False


def test_the_interrupt_of_a_worker_subgraph_is_on_the_parents_latest_checkpoint(saver):
    _, _, thread_id, _ = paused_billing(saver)
    item = root_tuple(saver, thread_id)
    assert item.config["configurable"]["checkpoint_ns"] == ""
    channels = [w[1] for w in item.pending_writes]
    assert INTERRUPT_CHANNEL in channels


def test_list_spans_threads_filters_and_skips_finished_runs(saver):
    app, _, first, _ = paused_billing(saver)
    _, _, second, _ = paused_billing(saver)
    done = f"done-{uuid.uuid4().hex[:6]}"
    app.invoke({"messages": [("user", TASK)]}, config_for(done))
    resolve_review(app, thread_id=done, decision=Approve())

    assert sorted(r.thread_id for r in list_reviews(saver)) == sorted([first, second])
    assert [r.thread_id for r in list_reviews(saver, thread_ids=[second, "missing"])] == [second]
    assert list_reviews(saver, thread_ids=[done]) == []
    later = datetime.now(UTC) + timedelta(hours=2)
    assert list_reviews(saver, expired_only=True) == []
    assert len(list_reviews(saver, expired_only=True, now=later)) == 2


def test_naive_times_are_refused(saver):
    with pytest.raises(ValueError, match="timezone-aware"):
        list_reviews(saver, now=datetime(2030, 1, 1))
    review = PendingReview.from_payload(
        review_payload(
            kind="tool", action="x", args={}, description="", allowed=["approve"], context={}
        ),
        thread_id="t",
        interrupt_id="i",
    )
    with pytest.raises(ValueError, match="timezone-aware"):
        review.expired(datetime(2030, 1, 1))
    assert review.deadline is None and not review.expired()


def test_review_payloads_are_recognised():
    payload = review_payload(
        kind="tool", action="x", args={}, description="", allowed=["approve"], context={}
    )
    assert is_review_payload(payload)
    for other in ("What is your name?", {"question": "?"}, {**payload, "action_requests": []}):
        assert not is_review_payload(other)
    with pytest.raises(ValueError, match="not a review payload"):
        PendingReview.from_payload({"x": 1}, thread_id="t", interrupt_id="i")


# ----------------------------------------------------------------------- decisions


def test_approve_runs_the_tool_and_the_run_completes(saver):
    app, model, thread_id, _ = paused_billing(saver)
    result = resolve_review(app, thread_id=thread_id, decision=Approve())
    assert RAN == [ARGS]
    assert result["status"] == "done" and "__interrupt__" not in result
    assert last_tool_message(model).content == "refunded 30 on O-7"
    assert result["messages"][-1].content == "Done: refunded 30 on O-7"
    assert list_reviews(saver) == []


def test_reject_sends_the_message_back_to_the_worker(saver):
    app, model, thread_id, _ = paused_billing(saver)
    result = resolve_review(
        app, thread_id=thread_id, decision=Reject(message="Refunds need a manager's sign-off.")
    )
    assert RAN == []
    message = last_tool_message(model)
    assert message.content == "The reviewer rejected this call: Refunds need a manager's sign-off."
    assert message.status == "error"
    assert result["status"] == "done"
    assert list_reviews(saver) == []


def test_edit_changes_the_arguments_the_tool_receives(saver):
    app, model, thread_id, _ = paused_billing(saver)
    result = resolve_review(
        app, thread_id=thread_id, decision=Edit(args={"order_id": "O-7", "amount": 20})
    )
    assert RAN == [{"order_id": "O-7", "amount": 20}]
    assert last_tool_message(model).content == "refunded 20 on O-7"
    assert result["status"] == "done"


def test_respond_stands_in_for_the_result(saver):
    app, model, thread_id, _ = paused_billing(saver)
    result = resolve_review(
        app, thread_id=thread_id, decision=Respond(message="Already refunded by phone.")
    )
    assert RAN == []
    message = last_tool_message(model)
    assert (message.content, message.status) == ("Already refunded by phone.", "success")
    assert result["messages"][-1].content == "Done: Already refunded by phone."


def test_decision_models_and_dicts_are_both_accepted(saver):
    app, _, thread_id, _ = paused_billing(saver)
    review = get_review(app, thread_id=thread_id)
    assert check_decision(review, ApproveDecision(type="approve")) == {"type": "approve"}
    assert check_decision(review, {"type": "reject"}) == {"type": "reject", "message": ""}
    edited = EditDecision(type="edit", edited_action=EditedAction(name="refund", args={"a": 1}))
    assert check_decision(review, edited)["edited_action"] == {"name": "refund", "args": {"a": 1}}
    resolve_review(
        app,
        thread_id=thread_id,
        decision=RejectDecision(type="reject", message="no"),
        interrupt_id=review.interrupt_id[:6],  # a unique prefix is enough
    )
    assert RAN == [] and list_reviews(saver) == []


def test_desk_decisions_say_only_what_varies(saver):
    app, _, thread_id, _ = paused_billing(saver)
    review = get_review(app, thread_id=thread_id)
    assert check_decision(review, Approve()) == {"type": "approve"}
    assert check_decision(review, Reject()) == {"type": "reject", "message": ""}
    assert check_decision(review, Reject(message="no")) == {"type": "reject", "message": "no"}
    assert check_decision(review, Respond(message="done")) == {
        "type": "respond",
        "message": "done",
    }
    # An edit names the reviewed action unless it says otherwise.
    assert check_decision(review, Edit(args={"amount": 5})) == {
        "type": "edit",
        "edited_action": {"name": "refund", "args": {"amount": 5}},
    }
    assert check_decision(review, Edit(args={}, name="refund"))["edited_action"]["name"] == (
        "refund"
    )


def test_desk_decisions_are_frozen_and_keyword_only():
    decision = Reject(message="no")
    with pytest.raises(dataclasses.FrozenInstanceError):
        decision.message = "yes"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Respond("positional")  # type: ignore[misc]
    with pytest.raises(TypeError):
        Edit()  # type: ignore[call-arg]
    assert Approve() == Approve() and Reject(message="a") != Reject(message="b")


BAD_DECISIONS = [
    pytest.param("garbage", "got str 'garbage'", id="a-string"),
    pytest.param(42, "got int 42", id="an-int"),
    pytest.param(None, "got NoneType", id="none"),
    pytest.param(["approve"], "got list", id="a-list"),
    pytest.param({"type": "maybe"}, "'maybe' is not allowed", id="unknown-type"),
    pytest.param({}, "None is not allowed", id="no-type"),
    pytest.param({"type": "respond"}, "message: Field required", id="respond-without-message"),
    pytest.param(
        {"type": "edit", "args": {}}, "edited_action: Field required", id="edit-no-action"
    ),
    pytest.param({"type": "approve", "note": "ok"}, "Extra inputs", id="extra-field"),
    pytest.param({"type": "reject", "message": 7}, "valid string", id="wrong-type"),
    pytest.param(
        {"type": "edit", "edited_action": {"name": "wipe_database", "args": {}}},
        "not the tool",
        id="edit-another-tool",
    ),
    pytest.param({"type": "escalate", "to": ""}, "at least 1 character", id="escalate-nowhere"),
    pytest.param(Edit(args={}, name="wipe_database"), "not the tool", id="desk-edit-another-tool"),
    pytest.param(Edit(args=[1]), "valid dictionary", id="desk-edit-args-not-a-dict"),  # type: ignore[arg-type]
    pytest.param(Reject(message=7), "valid string", id="desk-reject-wrong-type"),  # type: ignore[arg-type]
    pytest.param(Respond(message=None), "valid string", id="desk-respond-no-message"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("bad", "says"), BAD_DECISIONS)
def test_an_invalid_decision_is_refused_and_the_run_is_untouched(saver, bad, says):
    app, model, thread_id, _ = paused_billing(saver)
    before = frozen_state(app, saver, thread_id)
    calls = len(model.calls)

    with pytest.raises(InvalidDecisionError, match="invalid") as caught:
        resolve_review(app, thread_id=thread_id, decision=bad)
    assert says in str(caught.value)
    assert caught.value.review.action == "refund"
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ReviewError)

    assert frozen_state(app, saver, thread_id) == before  # same checkpoint, same interrupt
    assert len(model.calls) == calls and RAN == []
    # The run is still waiting for a (valid) answer.
    assert resolve_review(app, thread_id=thread_id, decision=Approve())["status"] == "done"
    assert RAN == [ARGS]


@pytest.mark.parametrize("by_id", [False, True], ids=["plain", "by_id"])
def test_a_review_answered_invalidly_outside_the_desk_is_still_listed(saver, by_id):
    """An invalid answer given straight to the graph (Studio, `Command(resume=...)`) leaves
    the same review pending: listed, found and resolved under the same interrupt id."""
    from langgraph.types import Command

    app, _, thread_id, _ = paused_billing(saver)
    (review,) = list_reviews(saver)
    assert review.invalid_answer is None and review.to_dict()["invalid_answer"] is None
    bad = {"decisions": [{"type": "maybe"}]}
    out = app.invoke(
        Command(resume={review.interrupt_id: bad} if by_id else bad), config_for(thread_id)
    )
    assert [i.id for i in out["__interrupt__"]] == [review.interrupt_id]

    (listed,) = list_reviews(saver)
    found = get_review(app, thread_id=thread_id)
    for again in (listed, found, *list_reviews(saver, graph=app)):
        assert again.interrupt_id == review.interrupt_id
        assert (again.action, dict(again.args), again.deadline) == (
            review.action,
            dict(review.args),
            review.deadline,
        )
        assert again.invalid_answer is not None and "'maybe'" in again.invalid_answer
        assert again.to_dict()["invalid_answer"] == again.invalid_answer
    assert RAN == []
    assert resolve_review(app, thread_id=thread_id, decision=Approve())["status"] == "done"
    assert RAN == [ARGS] and list_reviews(saver) == []


class Pair(TypedDict, total=False):
    answers: Annotated[list[str], operator.add]


def two_gates(allowed_a=("approve", "reject"), allowed_b=("approve", "reject", "respond")):
    """A hand-built graph whose two parallel nodes each pause for a review."""

    def gate(name: str, allowed: tuple[str, ...]):
        def node(state: Pair) -> dict[str, Any]:
            decision = request_review(
                review_payload(
                    kind="tool",
                    action=f"do_{name}",
                    args={"n": name},
                    description=f"Do {name}.",
                    allowed=list(allowed),
                    context={
                        "task": "two things",
                        "worker": name,
                        "risk": "medium",
                        "reason": "hand-built gate",
                        "deadline": "2030-01-01T00:00:00+00:00",
                        "reviewers": "ops",
                        "on_timeout": "reject",
                    },
                ),
                escalation_timeout=60,
            )
            return {"answers": [f"{name}:{decision.type}"]}

        return node

    graph = StateGraph(Pair)
    graph.add_node("a", gate("a", allowed_a))
    graph.add_node("b", gate("b", allowed_b))
    graph.add_edge(START, "a")
    graph.add_edge(START, "b")
    return graph


def test_a_decision_the_review_does_not_allow_is_refused(saver):
    app = two_gates().compile(checkpointer=saver)
    app.invoke({"answers": []}, config_for("gates"))
    reviews = {r.action: r for r in list_reviews(saver)}
    assert set(reviews) == {"do_a", "do_b"}
    assert reviews["do_a"].allowed == ("approve", "reject")
    before = frozen_state(app, saver, "gates")
    with pytest.raises(InvalidDecisionError, match="'respond' is not allowed; it allows"):
        resolve_review(
            app,
            thread_id="gates",
            decision=Respond(message="hi"),
            interrupt_id=reviews["do_a"].interrupt_id,
        )
    with pytest.raises(InvalidDecisionError, match="'edit' is not allowed"):
        resolve_review(
            app,
            thread_id="gates",
            decision=Edit(args={}),
            interrupt_id=reviews["do_a"].interrupt_id,
        )
    assert frozen_state(app, saver, "gates") == before


def test_several_pending_reviews_on_a_thread_are_answered_one_by_one(saver):
    app = two_gates().compile(checkpointer=saver)
    app.invoke({"answers": []}, config_for("gates"))
    reviews = {r.action: r for r in list_reviews(saver)}
    with pytest.raises(ReviewNotFoundError, match="has 2 pending reviews; say which one"):
        resolve_review(app, thread_id="gates", decision=Approve())
    with pytest.raises(ReviewNotFoundError, match="no pending review 'nope'"):
        resolve_review(app, thread_id="gates", decision=Approve(), interrupt_id="nope")

    out = resolve_review(
        app, thread_id="gates", decision=Approve(), interrupt_id=reviews["do_a"].interrupt_id
    )
    assert len(out["__interrupt__"]) == 1
    (left,) = list_reviews(saver)
    assert (left.action, left.interrupt_id) == ("do_b", reviews["do_b"].interrupt_id)
    out = resolve_review(app, thread_id="gates", decision=Respond(message="done by hand"))
    assert sorted(out["answers"]) == ["a:approve", "b:respond"]
    assert list_reviews(saver) == []


def test_the_sweep_answers_all_expired_reviews_of_a_thread_at_once(saver):
    app = two_gates().compile(checkpointer=saver)
    app.invoke({"answers": []}, config_for("gates"))
    assert sweep_reviews(app, saver, now=datetime(2029, 12, 31, tzinfo=UTC)) == []
    actions = sweep_reviews(app, saver, now=datetime(2030, 1, 2, tzinfo=UTC))
    assert sorted((a.review.action, a.action) for a in actions) == [
        ("do_a", "reject"),
        ("do_b", "reject"),
    ]
    assert all(a.error is None for a in actions)
    final = app.get_state(config_for("gates")).values
    assert sorted(final["answers"]) == ["a:reject", "b:reject"]
    assert list_reviews(saver) == []


def test_interrupts_that_are_not_reviews_are_ignored(saver):
    class State(TypedDict, total=False):
        name: str

    graph = StateGraph(State)
    graph.add_node("ask", lambda state: {"name": interrupt("What is your name?")})
    graph.add_edge(START, "ask")
    app = graph.compile(checkpointer=saver)
    app.invoke({}, config_for("question"))
    assert list_reviews(saver) == [] and list_reviews(saver, graph=app) == []
    with pytest.raises(ReviewNotFoundError, match="has no pending review"):
        resolve_review(app, thread_id="question", decision=Approve())


def test_unknown_and_finished_threads_are_clear_errors(saver):
    app, _, thread_id, _ = paused_billing(saver)
    with pytest.raises(ReviewNotFoundError, match="thread 'nope' has no checkpoints"):
        resolve_review(app, thread_id="nope", decision=Approve())
    resolve_review(app, thread_id=thread_id, decision=Approve())
    with pytest.raises(ReviewNotFoundError, match=r"has no pending review \(status 'done'\)"):
        resolve_review(app, thread_id=thread_id, decision=Reject(message="too late"))
    assert RAN == [ARGS]


# ----------------------------------------------------------------------- the deadline sweep


def test_the_sweep_rejects_an_expired_review_by_default(saver):
    app, model, thread_id, _ = paused_billing(saver)
    (review,) = list_reviews(saver)
    assert sweep_reviews(app, saver) == []  # nothing has expired yet
    assert list_reviews(saver) == [review]

    (action,) = sweep_reviews(app, saver, now=datetime.now(UTC) + timedelta(days=2))
    expected = f"review deadline passed at {review.deadline.isoformat()}; rejected by the sweep"
    assert (action.action, action.message, action.to, action.error) == (
        "reject",
        expected,
        None,
        None,
    )
    assert action.review == review and action.thread_id == thread_id
    assert action.decision == {"type": "reject", "message": expected}
    assert action.result["status"] == "done"
    assert last_tool_message(model).content == f"The reviewer rejected this call: {expected}"
    assert RAN == [] and list_reviews(saver) == []
    assert action.to_dict()["action"] == "reject"


def test_the_sweep_escalates_then_rejects_when_the_deadline_passes_again(saver):
    policy = ReviewPolicy(
        tier="supervised",
        review_timeout=600,
        reviewers="support",
        on_timeout="escalate",
        escalate_to="leads",
    )
    app, model, thread_id, _ = paused_billing(saver, policy)
    (first,) = list_reviews(saver)
    assert (first.reviewers, first.context["on_timeout"], first.escalated) == (
        "support",
        "escalate",
        False,
    )

    opened = datetime.now(UTC)
    (action,) = sweep_reviews(app, saver, now=opened + timedelta(days=1))
    assert (action.action, action.to) == ("escalate", "leads")
    assert action.message == (
        f"review deadline passed at {first.deadline.isoformat()}; escalated to leads by the sweep"
    )
    assert "__interrupt__" in action.result and RAN == []

    # The sweep answered by interrupt id: a later `invoke(None)` does not escalate again.
    app.invoke(None, {"configurable": {"thread_id": thread_id}})
    (second,) = list_reviews(saver)
    assert len(second.escalations) == 1
    assert second.thread_id == thread_id and second.interrupt_id != first.interrupt_id
    assert second.reviewers == "leads" and second.escalated
    (record,) = second.escalations
    assert (record["from"], record["to"], record["reason"]) == ("support", "leads", action.message)
    assert record["previous_deadline"] == first.deadline.isoformat()
    # A new deadline, one review_timeout after the one that passed.
    assert second.deadline == first.deadline + timedelta(seconds=600)
    assert (dict(second.args), second.action, second.worker) == (ARGS, "refund", "billing")

    assert sweep_reviews(app, saver, now=second.deadline - timedelta(seconds=1)) == []
    (final,) = sweep_reviews(app, saver, now=second.deadline + timedelta(seconds=1))
    assert final.action == "reject"  # escalated once already: fail closed
    assert final.message == (
        f"review deadline passed at {second.deadline.isoformat()}; rejected by the sweep"
    )
    assert final.result["status"] == "done" and RAN == []
    assert last_tool_message(model).content == f"The reviewer rejected this call: {final.message}"
    assert list_reviews(saver) == []


def test_an_escalated_review_can_still_be_approved_by_the_new_group(saver):
    policy = ReviewPolicy(review_timeout=600, on_timeout="escalate", escalate_to="leads")
    app, _, thread_id, _ = paused_billing(saver, policy)
    sweep_reviews(app, saver, now=datetime.now(UTC) + timedelta(days=1))
    assert [r.reviewers for r in list_reviews(saver)] == ["leads"]
    assert resolve_review(app, thread_id=thread_id, decision=Approve())["status"] == "done"
    assert RAN == [ARGS]


def test_a_review_that_allows_no_reject_is_left_for_a_human(saver):
    app = two_gates(allowed_a=("approve",), allowed_b=("approve",)).compile(checkpointer=saver)
    app.invoke({"answers": []}, config_for("gates"))
    actions = sweep_reviews(app, saver, now=datetime(2031, 1, 1, tzinfo=UTC))
    assert [a.action for a in actions] == ["error", "error"]
    assert all("does not allow 'reject'" in (a.error or "") for a in actions)
    assert len(list_reviews(saver)) == 2


# ----------------------------------------------------------------------- dispatch reviews


def research(task) -> str:
    return f"facts about {task.task}"


def write(task) -> str:
    return f"report on {task.task}"


def manual_team():
    def router(view):
        return ["researcher", "writer", "FINISH"][min(len(view.ledger), 2)]

    workers = [
        Worker(name="researcher", description="Finds facts.", agent=research),
        Worker(name="writer", description="Writes the report.", agent=write),
    ]
    return create_supervisor(workers, router=router, review=ReviewPolicy(review_timeout=900))


def test_dispatch_reviews_in_the_manual_tier_are_listed_and_resolved(saver):
    app = manual_team().compile(checkpointer=saver)
    config = config_for("manual-1", autonomy="manual")
    out = app.invoke({"messages": [("user", "Cats")]}, config)
    assert out["__interrupt__"]

    (review,) = list_reviews(saver)
    assert (review.kind, review.action, review.worker, review.risk) == (
        "dispatch",
        "dispatch:researcher",
        "researcher",
        None,
    )
    assert dict(review.args) == {"worker": "researcher", "instructions": ""}
    assert review.reason == "manual tier: a human approves each worker dispatch"
    assert review.task == "Cats" and review.deadline is not None

    # Resumed without the run's config: the tier the run recorded (manual) is kept, so
    # the next dispatch pauses for a human too.
    out = resolve_review(app, thread_id="manual-1", decision=Approve())
    (following,) = list_reviews(saver)
    assert following.action == "dispatch:writer"
    assert out["ledger"][0]["status"] == "success"

    out = resolve_review(app, thread_id="manual-1", decision=Reject(message="No report today."))
    assert out["status"] == "done"
    assert out["ledger"][1]["status"] == "failed"
    assert out["ledger"][1]["error"] == "dispatch rejected by the reviewer: No report today."
    assert list_reviews(saver) == []


def test_a_dispatch_edit_changes_the_instructions(saver):
    app = manual_team().compile(checkpointer=saver)
    app.invoke({"messages": [("user", "Cats")]}, config_for("manual-2", autonomy="manual"))
    out = resolve_review(
        app,
        thread_id="manual-2",
        decision=Edit(args={"worker": "researcher", "instructions": "Only sleeping habits."}),
    )
    assert out["ledger"][0]["instructions"] == "Only sleeping habits."


def test_a_dispatch_edit_may_name_another_worker(saver):
    app = manual_team().compile(checkpointer=saver)
    app.invoke({"messages": [("user", "Cats")]}, config_for("manual-3", autonomy="manual"))
    review = get_review(app, thread_id="manual-3")
    assert review.action == "dispatch:researcher"
    assert check_decision(review, Edit(args={}, name="dispatch:writer"))["edited_action"] == {
        "name": "dispatch:writer",
        "args": {},
    }
    out = resolve_review(
        app,
        thread_id="manual-3",
        decision=Edit(args={"instructions": "Write it up."}, name="dispatch:writer"),
    )
    assert (out["ledger"][0]["worker"], out["ledger"][0]["instructions"]) == (
        "writer",
        "Write it up.",
    )


def test_the_sweep_rejects_an_expired_dispatch(saver):
    app = manual_team().compile(checkpointer=saver)
    app.invoke({"messages": [("user", "Cats")]}, config_for("manual-3", autonomy="manual"))
    (action,) = sweep_reviews(app, saver, now=datetime.now(UTC) + timedelta(hours=1))
    assert action.action == "reject" and action.review.kind == "dispatch"
    ledger = action.result.get("ledger") or app.get_state(config_for("manual-3")).values["ledger"]
    assert ledger[0]["error"] == f"dispatch rejected by the reviewer: {action.message}"


# ----------------------------------------------------------------------- who answers

MEMBERS = {"support": ["alice", "bob"], "leads": ["carol"]}


def members_policy(**extra: Any) -> ReviewPolicy:
    return ReviewPolicy(
        tier="supervised", review_timeout=3600, reviewers="support", members=MEMBERS, **extra
    )


def test_every_answer_records_who_gave_it_and_when(saver):
    app, _, thread_id, _ = paused_billing(saver)
    (review,) = list_reviews(saver)
    before = datetime.now(UTC)
    out = resolve_review(app, thread_id=thread_id, decision=Approve(), reviewer="  alice ")
    after = datetime.now(UTC)
    assert out["status"] == "done" and RAN == [ARGS]
    (record,) = out["reviews"]
    assert record == {
        "turn": 1,
        "step": 1,
        "interrupt_id": review.interrupt_id,
        "kind": "tool",
        "action": "refund",
        "worker": "billing",
        "path": ["billing"],
        "decision": "approve",
        "reviewer": "alice",
        "reviewers": "default",
        "answered_at": record["answered_at"],
        "escalations": [],
    }
    answered = datetime.fromisoformat(record["answered_at"])
    assert answered.utcoffset() == timedelta(0) and before <= answered <= after
    # Stored with the run: read back through the checkpointer.
    assert app.get_state(config_for(thread_id)).values["reviews"] == [record]


def test_an_answer_without_a_reviewer_is_recorded_as_anonymous(saver):
    app, _, thread_id, _ = paused_billing(saver)
    out = resolve_review(app, thread_id=thread_id, decision=Reject(message="no"))
    (record,) = out["reviews"]
    assert (record["decision"], record["reviewer"]) == ("reject", None)


def test_without_a_rule_anyone_may_answer():
    policy = ReviewPolicy(tier="supervised", review_timeout=3600)
    app, _, thread_id, _ = paused_billing(InMemorySaver(), policy)
    out = resolve_review(app, thread_id=thread_id, decision=Approve(), reviewer="x", policy=policy)
    assert out["status"] == "done" and out["reviews"][0]["reviewer"] == "x"


@pytest.mark.parametrize("who", ["mallory", "carol", None])
def test_the_desk_refuses_a_reviewer_the_policy_refuses_before_touching_the_run(saver, who):
    policy = members_policy()
    app, _, thread_id, _ = paused_billing(saver, policy)
    frozen = frozen_state(app, saver, thread_id)
    with pytest.raises(ReviewerNotAllowedError) as caught:
        resolve_review(app, thread_id=thread_id, decision=Approve(), reviewer=who, policy=policy)
    message = caught.value.message  # str() adds the troubleshooting link on a new line
    assert "\n" not in message and message.endswith("(the run was not changed)")
    assert str(caught.value).startswith(f"{message}\nFor troubleshooting, visit: https://")
    if who is None:
        assert "names no reviewer" in message
    else:
        assert f"{who!r} may not answer review" in message
        assert "not a member of the reviewer group 'support'" in message
    assert caught.value.reviewer == who and caught.value.review.reviewers == "support"
    assert isinstance(caught.value, ReviewError) and isinstance(caught.value, PermissionError)
    assert frozen_state(app, saver, thread_id) == frozen
    assert RAN == []
    out = resolve_review(
        app, thread_id=thread_id, decision=Approve(), reviewer="bob", policy=policy
    )
    assert out["status"] == "done" and out["reviews"][0]["reviewer"] == "bob"


def test_the_graphs_own_gate_refuses_when_the_desk_is_not_given_the_policy(saver):
    app, _, thread_id, _ = paused_billing(saver, members_policy())
    (review,) = list_reviews(saver)
    checkpoint = app.get_state(config_for(thread_id)).config["configurable"]["checkpoint_id"]
    with pytest.raises(ReviewerNotAllowedError, match="the run is paused on the same review"):
        resolve_review(app, thread_id=thread_id, decision=Approve(), reviewer="mallory")
    snapshot = app.get_state(config_for(thread_id))
    assert snapshot.config["configurable"]["checkpoint_id"] == checkpoint
    (again,) = list_reviews(saver)
    assert again.interrupt_id == review.interrupt_id
    assert "'mallory' may not answer review" in (again.invalid_answer or "")
    assert RAN == [] and task_errors(app.get_state(config_for(thread_id), subgraphs=True)) == []
    out = resolve_review(app, thread_id=thread_id, decision=Approve(), reviewer="alice")
    assert out["status"] == "done" and RAN == [ARGS]
    assert [r["reviewer"] for r in out["reviews"]] == ["alice"]


@pytest.mark.parametrize(
    ("who", "says"),
    [
        ("", "give the identity of who answers"),
        ("   ", "give the identity of who answers"),
        (42, "give the identity of who answers"),
        ("x" * 201, "give at most 200"),
        ("lgsp:sweep", "reserved for the package's own reviewers"),
    ],
)
def test_bad_reviewer_identities_are_refused_before_the_run_is_read(who, says):
    app, _, thread_id, _ = paused_billing(InMemorySaver())
    with pytest.raises(ValueError, match="resolve_review\\(reviewer\\)") as caught:
        resolve_review(app, thread_id=thread_id, decision=Approve(), reviewer=who)
    assert says in str(caught.value)
    assert check_reviewer(" bob ") == "bob" and check_reviewer(None) is None
    with pytest.raises(ValueError, match=r"^--as: "):
        check_reviewer("", where="--as")


def test_the_sweep_answers_as_itself_at_its_time_even_for_a_restricted_group(saver):
    policy = members_policy(on_timeout="escalate", escalate_to="leads")
    app, _, thread_id, _ = paused_billing(saver, policy)
    (first,) = list_reviews(saver)
    moment = datetime.now(UTC) + timedelta(days=1)
    (action,) = sweep_reviews(app, saver, now=moment)
    assert action.action == "escalate" and action.error is None
    (second,) = list_reviews(saver)
    (escalation,) = second.escalations
    assert (escalation["by"], escalation["at"]) == (SWEEP_REVIEWER, moment.isoformat())
    # The review is now the leads': support's alice may no longer answer it, carol may.
    with pytest.raises(ReviewerNotAllowedError, match="not a member of the reviewer group 'leads'"):
        resolve_review(
            app, thread_id=thread_id, decision=Approve(), reviewer="alice", policy=policy
        )
    with pytest.raises(ReviewerNotAllowedError, match="the run is paused on the same review"):
        resolve_review(app, thread_id=thread_id, decision=Approve(), reviewer="alice")
    out = resolve_review(app, thread_id=thread_id, decision=Approve(), reviewer="carol")
    assert out["status"] == "done" and RAN == [ARGS]
    (record,) = out["reviews"]
    assert (record["reviewer"], record["reviewers"], record["interrupt_id"]) == (
        "carol",
        "leads",
        second.interrupt_id,
    )
    assert record["interrupt_id"] != first.interrupt_id
    assert [(e["from"], e["to"], e["by"]) for e in record["escalations"]] == [
        ("support", "leads", SWEEP_REVIEWER)
    ]


def test_the_sweep_rejects_a_restricted_review_as_itself(saver):
    app, _, _, _ = paused_billing(saver, members_policy())
    moment = datetime.now(UTC) + timedelta(days=1)
    (action,) = sweep_reviews(app, saver, now=moment)
    assert action.action == "reject" and action.result["status"] == "done"
    (record,) = action.result["reviews"]
    assert (record["reviewer"], record["answered_at"], record["decision"]) == (
        SWEEP_REVIEWER,
        moment.isoformat(),
        "reject",
    )


def test_dispatch_reviews_are_recorded_by_the_review_step(saver):
    app = manual_team().compile(checkpointer=saver)
    app.invoke({"messages": [("user", "Cats")]}, config_for("audit-1", autonomy="manual"))
    first = get_review(app, thread_id="audit-1")
    resolve_review(app, thread_id="audit-1", decision=Approve(), reviewer="alice")
    second = get_review(app, thread_id="audit-1")
    out = resolve_review(
        app, thread_id="audit-1", decision=Reject(message="no report"), reviewer="bob"
    )
    assert out["status"] == "done"
    assert [
        (r["kind"], r["action"], r["step"], r["decision"], r["reviewer"], r["interrupt_id"])
        for r in out["reviews"]
    ] == [
        ("dispatch", "dispatch:researcher", 1, "approve", "alice", first.interrupt_id),
        ("dispatch", "dispatch:writer", 2, "reject", "bob", second.interrupt_id),
    ]
    assert [r["path"] for r in out["reviews"]] == [["researcher"], ["writer"]]


@pytest.mark.parametrize(
    ("decision", "reviewer"),
    [
        (Edit(args={"instructions": "Only naps."}), "alice"),
        (Respond(message="Cats sleep a lot."), "bob"),
        (Edit(args={}, name="dispatch:nobody"), "carol"),
    ],
)
def test_every_dispatch_decision_is_recorded(decision, reviewer):
    app = manual_team().compile(checkpointer=InMemorySaver())
    app.invoke({"messages": [("user", "Cats")]}, config_for("audit-2", autonomy="manual"))
    out = resolve_review(app, thread_id="audit-2", decision=decision, reviewer=reviewer)
    record = (out.get("reviews") or app.get_state(config_for("audit-2")).values["reviews"])[0]
    assert (record["decision"], record["reviewer"]) == (
        "edit" if isinstance(decision, Edit) else "respond",
        reviewer,
    )


def test_the_manual_tiers_dispatch_review_applies_the_policy():
    workers = [Worker(name="researcher", description="Finds facts.", agent=research)]
    policy = ReviewPolicy(tier="manual", reviewers="support", members=MEMBERS)
    app = create_supervisor(
        workers, router=lambda v: "FINISH" if v.ledger else "researcher", review=policy
    ).compile(checkpointer=InMemorySaver())
    app.invoke({"messages": [("user", "Cats")]}, config_for("audit-3"))
    with pytest.raises(ReviewerNotAllowedError, match="'carol' may not answer review"):
        resolve_review(app, thread_id="audit-3", decision=Approve(), reviewer="carol")
    out = resolve_review(app, thread_id="audit-3", decision=Approve(), reviewer="alice")
    assert out["status"] == "done" and out["reviews"][0]["reviewer"] == "alice"


# ----------------------------------------------------------------------- async


async def _async_flow(saver) -> None:
    graph, _ = billing_team(
        ReviewPolicy(review_timeout=60, on_timeout="escalate", escalate_to="leads")
    )
    app = graph.compile(checkpointer=saver)
    for thread_id in ("x1", "x2", "x3"):
        await app.ainvoke({"messages": [("user", TASK)]}, config_for(thread_id))
    reviews = await alist_reviews(saver)
    assert sorted(r.thread_id for r in reviews) == ["x1", "x2", "x3"]
    assert await alist_reviews(saver, graph=app) == reviews
    assert [r.thread_id for r in await alist_reviews(saver, thread_ids=["x2"])] == ["x2"]

    out = await aresolve_review(app, thread_id="x1", decision=Approve(), reviewer="alice")
    assert out["status"] == "done" and RAN == [ARGS]
    assert [r["reviewer"] for r in out["reviews"]] == ["alice"]
    with pytest.raises(ReviewerNotAllowedError, match="group 'default' has no members"):
        await aresolve_review(
            app,
            thread_id="x2",
            decision=Approve(),
            reviewer="mallory",
            policy=ReviewPolicy(reviewers="support", members={"support": ["alice"]}),
        )
    out = await aresolve_review(app, thread_id="x2", decision=Reject(message="no"))
    assert out["status"] == "done" and RAN == [ARGS]
    with pytest.raises(InvalidDecisionError, match="'nope' is not allowed"):
        await aresolve_review(app, thread_id="x3", decision={"type": "nope"})

    (action,) = await asweep_reviews(app, saver, now=datetime.now(UTC) + timedelta(hours=1))
    assert (action.thread_id, action.action, action.to) == ("x3", "escalate", "leads")
    (again,) = await asweep_reviews(app, saver, now=datetime.now(UTC) + timedelta(hours=2))
    assert again.action == "reject"
    assert [r["reviewer"] for r in again.result["reviews"]] == [SWEEP_REVIEWER]
    assert await alist_reviews(saver) == [] and RAN == [ARGS]


async def test_async_twins_on_memory():
    await _async_flow(InMemorySaver())


async def test_async_twins_on_async_postgres(pg_database):
    async with aopen_checkpointer(pg_database) as saver:
        await _async_flow(saver)


def test_docstring_examples_run():
    import doctest

    from langgraph_supervisor_pro.review import _desk as desk

    result = doctest.testmod(desk, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0

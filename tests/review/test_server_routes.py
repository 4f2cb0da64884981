"""`server_auth` guards every route around a review (issue 33, item 2).

The handlers are called as LangGraph's server calls them, with the thread read (the
server's own API in a deployment) replaced by a thread given here;
`tests/integration/test_dev_server_auth.py` drives every route on a real `langgraph dev`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from langgraph_sdk import Auth

from langgraph_supervisor_pro.review import server_auth
from langgraph_supervisor_pro.review._server import (
    _guard_run,
    _guard_thread_update,
    _how_to_answer,
    _reviews_of,
)
from tests.review.test_server import ID_A, ID_B, RESTRICTED, ctx, run_value

TID = "4f3c2b1a-0000-4000-8000-000000000001"


def _review(interrupt_id: str = ID_A, reviewers: str | None = "support") -> dict[str, Any]:
    context: dict[str, Any] = {"worker": "billing", "risk": "high"}
    if reviewers is not None:
        context["reviewers"] = reviewers
    return {
        "id": interrupt_id,
        "value": {
            "action_requests": [{"name": "refund", "args": {"order_id": "A1"}}],
            "review_configs": [{"action_name": "refund", "allowed_decisions": ["approve"]}],
            "context": context,
        },
    }


PAUSED: dict[str, Any] = {"interrupts": [_review()], "status": "interrupted"}
IDLE: dict[str, Any] = {"interrupts": [], "status": "idle"}
BUSY: dict[str, Any] = {"interrupts": [], "status": "busy"}
ASKED = {"decisions": [{"type": "approve"}]}


def _reader(thread: Mapping[str, Any] | None) -> Any:
    async def read(thread_id: str, with_status: bool = False) -> Mapping[str, Any] | None:
        assert thread_id == TID
        return thread

    return read


async def _unread(thread_id: str, with_status: bool = False) -> Mapping[str, Any] | None:
    raise AssertionError("the thread was read")


def _run(value: Any, thread: Mapping[str, Any] | None, who: str = "alice") -> None:
    asyncio.run(_guard_run(ctx(who), value, RESTRICTED, read=_reader(thread)))


def _refused(call: Any) -> str:
    with pytest.raises(Auth.exceptions.HTTPException) as caught:
        asyncio.run(call)
    assert caught.value.status_code == 403
    detail = str(caught.value.detail)
    assert detail.startswith("server_auth: ") and "\n" not in detail
    return detail


def _run_refused(value: Any, thread: Mapping[str, Any] | None, who: str = "alice") -> str:
    return _refused(_guard_run(ctx(who), value, RESTRICTED, read=_reader(thread)))


def test_server_auth_registers_a_thread_update_handler() -> None:
    async def authenticate(authorization: str | None) -> str:
        return "alice"

    auth = server_auth(authenticate=authenticate, policy=RESTRICTED)
    assert ("threads", "update") in auth._handlers
    with pytest.raises(ValueError):  # one handler per (resource, action): it is taken
        auth.on.threads.update(lambda ctx, value: None)  # type: ignore[arg-type]


@pytest.mark.parametrize("who", ["alice", "mallory"])
def test_a_state_update_of_a_paused_thread_is_refused_for_everyone(who: str) -> None:
    # LangGraph sends `threads.update_state(values, as_node=...)` as the thread id alone.
    detail = _refused(_guard_thread_update({"thread_id": TID}, read=_reader(PAUSED)))  # type: ignore[typeddict-item]
    assert "a state update would discard or skip the pending review" in detail
    assert f"thread {TID} is paused on review {ID_A}" in detail
    assert "a member of 'support' sends runs.create(thread_id, assistant_id," in detail
    assert "command={'resume': {interrupt_id: {'decisions': [{'type': 'approve'}]}}}" in detail


def test_a_state_update_of_a_thread_not_paused_on_a_review_passes() -> None:
    for thread in (IDLE, None, {"interrupts": [{"id": ID_B, "value": "Your name?"}]}):
        asyncio.run(_guard_thread_update({"thread_id": TID}, read=_reader(thread)))  # type: ignore[typeddict-item]


def test_a_metadata_patch_or_a_cancellation_passes_without_a_read() -> None:
    for value in (
        {"thread_id": TID, "metadata": {}},
        {"thread_id": TID, "metadata": {"note": "seen"}},
        {"thread_id": TID, "action": "interrupt", "metadata": {"run_ids": None}},
        {"thread_id": TID, "action": "rollback"},
        {},  # no thread
    ):
        asyncio.run(_guard_thread_update(value, read=_unread))  # type: ignore[arg-type]


@pytest.mark.parametrize("who", ["alice", "mallory"])
@pytest.mark.parametrize(
    ("value", "says"),
    [
        (run_value(thread_id=TID, input={"messages": []}), "new input would discard"),
        (run_value(thread_id=TID), "new input would discard"),  # no input, no command
        (run_value(thread_id=TID, command={"goto": "billing"}), "new input would discard"),
        (
            run_value(
                thread_id=TID,
                input={"messages": []},
                config={"configurable": {"checkpoint_id": "1f0-abc"}},
            ),
            "a fork (checkpoint_id) is refused",
        ),
        (
            run_value(
                thread_id=TID,
                command={"resume": "approve"},
                config={"configurable": {"checkpoint_id": "1f0-abc"}},
            ),
            "a fork (checkpoint_id) is refused",
        ),
        (
            run_value(thread_id=TID, command={"resume": "approve", "update": {"x": 1}}),
            "routes it (update, goto) is refused",
        ),
    ],
)
def test_anything_but_an_answer_on_a_paused_thread_is_refused_for_everyone(
    value: Any, says: str, who: str
) -> None:
    detail = _run_refused(value, PAUSED, who=who)
    assert says in detail


def test_the_refusal_says_how_to_answer() -> None:
    detail = _run_refused(run_value(thread_id=TID, input={"messages": []}), PAUSED)
    assert f"thread {TID} is paused on review {ID_A}; answer it first" in detail
    assert "a member of 'support' sends runs.create(" in detail


def test_an_answer_from_a_checkpoint_is_refused_without_reading_the_thread() -> None:
    value = run_value(
        thread_id=TID,
        command={"resume": {ID_A: dict(ASKED)}},
        config={"configurable": {"checkpoint_id": "1f0-abc"}},
    )
    detail = _refused(_guard_run(ctx("alice"), value, RESTRICTED, read=_unread))
    assert "answer the review the thread is paused on now, without a checkpoint" in detail


def test_a_members_answer_passes_and_an_outsiders_is_refused() -> None:
    _run(run_value(thread_id=TID, command={"resume": {ID_A: dict(ASKED)}}), PAUSED)
    _run(run_value(thread_id=TID, command={"resume": dict(ASKED)}), PAUSED)
    detail = _run_refused(
        run_value(thread_id=TID, command={"resume": {ID_A: dict(ASKED)}}), PAUSED, who="mallory"
    )
    assert "'mallory' may not answer review" in detail
    # A resume that is no answer reaches the gate, which refuses it and pauses again.
    _run(run_value(thread_id=TID, command={"resume": "approve"}), PAUSED, who="mallory")


def test_runs_on_a_thread_not_paused_on_a_review_pass() -> None:
    fork = {"configurable": {"checkpoint_id": "1f0-abc"}}
    for thread in (IDLE, None, {"interrupts": [{"id": ID_B, "value": "Your name?"}]}):
        _run(run_value(thread_id=TID, input={"messages": []}), thread, who="mallory")
        _run(run_value(thread_id=TID, input={"messages": []}, config=fork), thread)
        _run(run_value(thread_id=TID, command={"goto": "x"}), thread)


def test_a_run_queued_behind_a_running_one_is_refused() -> None:
    def queued(**kwargs: Any) -> Any:
        return {**run_value(thread_id=TID, **kwargs), "multitask_strategy": "enqueue"}

    detail = _run_refused(queued(input={"messages": []}), BUSY, who="mallory")
    assert "multitask_strategy 'enqueue'" in detail and "wait until the thread is idle" in detail
    _run(queued(input={"messages": []}), IDLE)
    _run({**queued(input={"messages": []}), "multitask_strategy": "reject"}, BUSY)
    _run(queued(command={"resume": "approve"}), BUSY)


def test_a_stateless_run_is_not_looked_up() -> None:
    asyncio.run(
        _guard_run(ctx("mallory"), run_value(input={"messages": []}), RESTRICTED, read=_unread)
    )


def test_reviews_are_read_from_the_checkpoints_interrupts_only() -> None:
    assert [r.interrupt_id for r in _reviews_of(PAUSED, TID)] == [ID_A]
    for thread in (None, {}, {"interrupts": None}, {"interrupts": {"task": [_review()]}}):
        assert _reviews_of(thread, TID) == []
    mixed = {"interrupts": [_review(ID_B), {"id": ID_A, "value": "Your name?"}, "junk"]}
    assert [r.interrupt_id for r in _reviews_of(mixed, TID)] == [ID_B]


def test_how_to_answer_names_the_groups_and_cuts_long_lists() -> None:
    many = _reviews_of(
        {"interrupts": [_review(f"{i:032x}", reviewers=None) for i in range(5)]}, TID
    )
    text = _how_to_answer(TID, many)
    assert f"{3:032x}" not in text and ", ..." in text
    assert "answer it first: a reviewer sends" in text
    two = _reviews_of({"interrupts": [_review(ID_A, "ops"), _review(ID_B, "support")]}, TID)
    assert "a member of 'ops', 'support' sends" in _how_to_answer(TID, two)


def test_reading_the_thread_outside_a_server_fails_closed() -> None:
    with pytest.raises(Auth.exceptions.HTTPException) as caught:
        asyncio.run(_guard_thread_update({"thread_id": TID}))  # type: ignore[typeddict-item]
    assert caught.value.status_code == 503
    assert f"cannot read the pending reviews of thread {TID}" in str(caught.value.detail)

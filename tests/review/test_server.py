"""`server_auth`: review answers over the LangGraph server's API, stamped and checked.

The handler is called here as LangGraph's server calls it (`ctx`, `value`) for what needs
no server; `tests/integration/test_dev_server_auth.py` runs it in a real `langgraph dev`
(the policy's refusals, which read the thread's pending reviews through the server).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from langgraph_sdk import Auth

from langgraph_supervisor_pro.review import server_auth
from langgraph_supervisor_pro.review._policy import ReviewPolicy
from langgraph_supervisor_pro.review._server import _guard_run

ID_A = "a" * 32
ID_B = "0123456789abcdef" * 2
ANYONE = ReviewPolicy()
RESTRICTED = ReviewPolicy(reviewers="support", members={"support": ["alice"]})


@dataclass
class User:
    identity: str
    is_authenticated: bool = True
    display_name: str = ""
    permissions: tuple[str, ...] = ()


def ctx(identity: str = "alice") -> Auth.types.AuthContext:
    return Auth.types.AuthContext(
        user=User(identity), permissions=[], resource="threads", action="create_run"
    )


def run_value(command: Any = None, thread_id: Any = None, **kwargs: Any) -> Any:
    payload = {"input": None, **kwargs}
    if command is not None:
        payload["command"] = command
    return {"thread_id": thread_id, "assistant_id": None, "kwargs": payload}


def guard(value: Any, *, who: str = "alice", policy: ReviewPolicy = ANYONE) -> Any:
    asyncio.run(_guard_run(ctx(who), value, policy))
    return value


def refused(value: Any, *, who: str = "alice", policy: ReviewPolicy = ANYONE) -> str:
    with pytest.raises(Auth.exceptions.HTTPException) as caught:
        guard(value, who=who, policy=policy)
    assert caught.value.status_code == 403
    detail = str(caught.value.detail)
    assert detail.startswith("server_auth: ") and "\n" not in detail
    return detail


def test_server_auth_is_a_langgraph_auth_object():
    async def authenticate(authorization: str | None) -> str:
        return "alice"

    auth = server_auth(authenticate=authenticate, policy=RESTRICTED)
    assert isinstance(auth, Auth)
    with pytest.raises(ValueError):  # the create_run handler is taken
        auth.on.threads.create_run(lambda ctx, value: None)  # type: ignore[arg-type]


def test_a_run_that_answers_no_review_passes_untouched():
    for value in (
        run_value(),  # new input
        run_value(command={"resume": "approve"}),  # not an answer: the gate refuses it
        run_value(command={"resume": {ID_A: "approve"}}),
        run_value(command={"resume": None}),
    ):
        before = repr(value)
        assert repr(guard(value, policy=RESTRICTED)) == before


def test_each_answer_is_stamped_with_the_user_and_the_servers_time():
    plain = {"decisions": [{"type": "approve"}]}
    value = guard(run_value(command={"resume": plain}))
    stamped = value["kwargs"]["command"]["resume"]
    assert stamped["reviewer"] == "alice"
    at = datetime.fromisoformat(stamped["answered_at"])
    assert at.utcoffset() is not None
    assert abs((datetime.now(UTC) - at).total_seconds()) < 60

    keyed = {
        ID_A: {"decisions": [{"type": "approve"}]},
        ID_B: {"decisions": [{"type": "reject"}], "reviewer": " alice "},
    }
    value = guard(run_value(command={"resume": keyed}))
    answers = value["kwargs"]["command"]["resume"]
    assert [answers[i]["reviewer"] for i in (ID_A, ID_B)] == ["alice", "alice"]
    assert answers[ID_A]["answered_at"] == answers[ID_B]["answered_at"]
    # A client's own time is replaced by the server's.
    value = guard(
        run_value(command={"resume": {**plain, "answered_at": "2000-01-01T00:00:00+00:00"}})
    )
    assert not value["kwargs"]["command"]["resume"]["answered_at"].startswith("2000")


@pytest.mark.parametrize("named", ["carol", "", 7])
def test_an_answer_naming_someone_else_is_refused(named):
    answer = {"decisions": [{"type": "approve"}], "reviewer": named}
    detail = refused(run_value(command={"resume": {ID_A: answer}}))
    assert f"names the reviewer {named!r}, but you are 'alice'" in detail


@pytest.mark.parametrize(
    ("who", "says"),
    [("", "has no identity"), ("   ", "has no identity"), ("lgsp:sweep", "is reserved")],
)
def test_a_user_without_an_identity_or_with_a_reserved_one_cannot_answer(who, says):
    detail = refused(run_value(command={"resume": {"decisions": [{"type": "approve"}]}}), who=who)
    assert says in detail


def test_a_run_without_a_thread_is_not_looked_up():
    # Stateless runs have nothing paused to answer; the answer is still stamped.
    answer = {"decisions": [{"type": "approve"}]}
    value = guard(run_value(command={"resume": answer, "goto": "x"}), policy=RESTRICTED)
    assert value["kwargs"]["command"]["resume"]["reviewer"] == "alice"


def test_looking_the_thread_up_outside_a_server_fails_closed():
    answer = {"decisions": [{"type": "approve"}]}
    with pytest.raises(Auth.exceptions.HTTPException) as caught:
        guard(run_value(command={"resume": answer}, thread_id="t-1"), policy=RESTRICTED)
    assert caught.value.status_code == 503
    assert "cannot read the pending reviews of thread t-1" in str(caught.value.detail)

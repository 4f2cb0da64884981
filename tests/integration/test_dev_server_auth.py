"""Who may answer a review over the LangGraph server's API, on a real `langgraph dev`.

The server serves `tests/integration/_studio/auth_app.py` (the clerk's `rollback` review at
the root and three levels down, every level's policy giving reviews to `support`: alice)
with the custom auth of `_studio/auth.py`: bearer tokens name alice, carol and mallory.

- `server_auth`: an answer by someone outside the group is refused with HTTP 403 and the
  thread stays interrupted on the same review, at the same checkpoint; an answer naming
  another reviewer is refused too; alice's answer resumes the run, which records alice and
  the server's time at the root.
- LangGraph's own `Auth` (no `server_auth`): the graph reads the authenticated user the
  server puts in the run's config; the gate refuses mallory's answer (the run pauses again
  on the same review, with the reason) and records alice's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.integration._devserver import serve

pytestmark = pytest.mark.integration

PATHS = {"flat": ["clerk"], "tree": ["ops", "incident", "clerk"]}
TASK = {"messages": [{"role": "user", "content": "The database is down: roll back"}]}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server whose auth is `server_auth`."""
    with serve("langgraph.auth.json", tmp_path_factory.mktemp("dev") / "auth.log") as url:
        yield url


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server whose auth is LangGraph's `Auth` with the same users, and nothing else."""
    with serve("langgraph.plain.json", tmp_path_factory.mktemp("dev") / "plain.log") as url:
        yield url


def _client(url: str, user: str) -> Any:
    from langgraph_sdk import get_client

    return get_client(url=url, api_key=None, headers={"Authorization": f"Bearer token-{user}"})


def _interrupts(thread: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for group in (thread.get("interrupts") or {}).values() for i in group]


async def _paused(url: str, graph: str) -> tuple[str, str, dict[str, Any]]:
    """A thread (started by mallory: anyone may start one) paused at the clerk's review."""
    client = _client(url, "mallory")
    (assistant,) = await client.assistants.search(graph_id=graph)
    thread = await client.threads.create()
    await client.runs.wait(thread["thread_id"], assistant["assistant_id"], input=TASK)
    state = await client.threads.get(thread["thread_id"])
    assert state["status"] == "interrupted"
    (pending,) = _interrupts(state)
    assert pending["value"]["context"]["path"] == PATHS[graph]
    assert pending["value"]["context"]["reviewers"] == "support"
    return thread["thread_id"], assistant["assistant_id"], pending


async def _checkpoint(client: Any, thread_id: str) -> str:
    state = await client.threads.get_state(thread_id)
    return str(state["checkpoint"]["checkpoint_id"])


def _approve(pending: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"resume": {pending["id"]: {"decisions": [{"type": "approve"}], **extra}}}


def test_an_unknown_token_is_not_let_in(guarded: str) -> None:
    async def go() -> None:
        with pytest.raises(httpx.HTTPStatusError) as caught:
            await _client(guarded, "eve").threads.create()
        assert caught.value.response.status_code == 401

    asyncio.run(go())


@pytest.mark.parametrize("graph", ["flat", "tree"])
def test_server_auth_refuses_outsiders_and_records_the_member_who_answers(
    guarded: str, graph: str
) -> None:
    async def go() -> None:
        tid, assistant, pending = await _paused(guarded, graph)
        mallory, alice = _client(guarded, "mallory"), _client(guarded, "alice")
        before = await _checkpoint(mallory, tid)

        # Not a member of `support`: 403, with the policy's reason; the run is untouched.
        with pytest.raises(httpx.HTTPStatusError) as caught:
            await mallory.runs.wait(tid, assistant, command=_approve(pending))
        assert caught.value.response.status_code == 403
        assert "'mallory' may not answer review" in caught.value.response.text
        assert "not a member of the reviewer group 'support'" in caught.value.response.text
        # A member's answer naming someone else: 403 as well.
        with pytest.raises(httpx.HTTPStatusError) as caught:
            await alice.runs.wait(tid, assistant, command=_approve(pending, reviewer="carol"))
        assert caught.value.response.status_code == 403
        assert "names the reviewer 'carol', but you are 'alice'" in caught.value.response.text
        # Moving the paused run on without answering: 403.
        with pytest.raises(httpx.HTTPStatusError) as caught:
            await alice.runs.wait(tid, assistant, command={"goto": "synthesis"})
        assert caught.value.response.status_code == 403

        state = await mallory.threads.get(tid)
        assert state["status"] == "interrupted"
        (still,) = _interrupts(state)
        assert still["id"] == pending["id"]
        assert "invalid_answer" not in still["value"]["context"]  # no run ever saw them
        assert await _checkpoint(mallory, tid) == before

        # alice, a member, answers; the server stamps her identity and its time.
        started = datetime.now(UTC)
        out = await alice.runs.wait(tid, assistant, command=_approve(pending))
        assert out["status"] == "done", out
        assert out["messages"][-1]["content"] == "Rolled back the database service."
        (record,) = out["reviews"]  # at the root, wherever the review paused
        assert record["interrupt_id"] == pending["id"]
        assert (record["reviewer"], record["reviewers"], record["decision"]) == (
            "alice",
            "support",
            "approve",
        )
        assert record["path"] == PATHS[graph]
        answered = datetime.fromisoformat(record["answered_at"])
        assert answered.utcoffset() is not None
        assert abs((answered - started).total_seconds()) < 600  # the server's clock, UTC
        assert (await mallory.threads.get(tid))["status"] == "idle"

    asyncio.run(go())


def test_the_graph_takes_the_server_user_and_applies_the_policy_itself(plain: str) -> None:
    async def go() -> None:
        tid, assistant, pending = await _paused(plain, "flat")
        mallory, alice = _client(plain, "mallory"), _client(plain, "alice")

        # No server_auth: the run starts, and the gate refuses the server's user mallory.
        out = await mallory.runs.wait(tid, assistant, command=_approve(pending))
        state = await mallory.threads.get(tid)
        assert state["status"] == "interrupted"
        (again,) = _interrupts(state)
        assert again["id"] == pending["id"]
        assert "'mallory' may not answer review" in again["value"]["context"]["invalid_answer"]
        assert "reviews" not in out or not out["reviews"]

        out = await alice.runs.wait(tid, assistant, command=_approve(pending))
        assert out["status"] == "done", out
        (record,) = out["reviews"]
        assert (record["reviewer"], record["interrupt_id"]) == ("alice", pending["id"])

    asyncio.run(go())

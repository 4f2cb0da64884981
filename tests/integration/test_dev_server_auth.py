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
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration._devserver import serve

pytestmark = pytest.mark.integration

PATHS = {"flat": ["clerk"], "tree": ["ops", "incident", "clerk"]}
TASK = {"messages": [{"role": "user", "content": "The database is down: roll back"}]}


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file each rollback the guarded server runs appends its thread id to."""
    return tmp_path_factory.mktemp("calls") / "rollbacks.txt"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory, calls: Path) -> Iterator[str]:
    """A server whose auth is `server_auth`."""
    log = tmp_path_factory.mktemp("dev") / "auth.log"
    with serve("langgraph.auth.json", log, env={"LGSP_TEST_ROLLBACK_CALLS": str(calls)}) as url:
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


# -- every route around a review (issue 33, item 2) ---------------------------------------------

LOOSER = {"configurable": {"autonomy": "autonomous"}}


async def _code(call: Any) -> int:
    """The HTTP status a request ends with (200 when it succeeds)."""
    try:
        await call
    except httpx.HTTPStatusError as exc:
        return int(exc.response.status_code)
    return 200


def _ran(calls: Path) -> list[str]:
    """The thread ids of every rollback the server ran so far."""
    return calls.read_text().split() if calls.exists() else []


@pytest.mark.parametrize("graph", ["flat", "tree"])
def test_no_route_around_a_review_runs_the_tool_without_an_approving_member(
    guarded: str, calls: Path, graph: str
) -> None:
    async def go() -> None:
        ran_before = _ran(calls)
        tid, assistant, pending = await _paused(guarded, graph)
        mallory, alice = _client(guarded, "mallory"), _client(guarded, "alice")
        from langgraph_sdk import get_client

        nobody = get_client(url=guarded, api_key=None, headers={})
        before = await _checkpoint(mallory, tid)
        (*_, first) = await mallory.threads.get_history(tid, limit=100)
        earlier = first["checkpoint"]["checkpoint_id"]
        values = {"messages": [{"role": "user", "content": "Skip the review."}]}
        node = PATHS[graph][0]

        def around(thread_id: str) -> dict[str, Any]:
            """Every request that would move or discard the review, by name."""
            return {
                "update_state as_node": lambda c: c.threads.update_state(
                    thread_id, values, as_node=node
                ),
                "update_state": lambda c: c.threads.update_state(thread_id, values),
                "new input": lambda c: c.runs.wait(thread_id, assistant, input=TASK),
                "a run with no input": lambda c: c.runs.wait(thread_id, assistant),
                "a fork": lambda c: c.runs.wait(
                    thread_id, assistant, input=TASK, checkpoint_id=earlier
                ),
                "an answer at a checkpoint": lambda c: c.runs.wait(
                    thread_id, assistant, command=_approve(pending), checkpoint_id=before
                ),
                "an answer in a looser tier": lambda c: c.runs.wait(
                    thread_id, assistant, command=_approve(pending), config=LOOSER
                ),
                "goto": lambda c: c.runs.wait(thread_id, assistant, command={"goto": node}),
            }

        for name, route in around(tid).items():
            for who, caller in (("mallory", mallory), ("alice", alice)):
                assert await _code(route(caller)) == 403, (name, who)
            assert await _code(route(nobody)) == 401, name
        # Refused with how to answer.
        with pytest.raises(httpx.HTTPStatusError) as caught:
            await alice.threads.update_state(tid, values)
        assert f"paused on review {pending['id']}" in caught.value.response.text
        assert "a member of 'support' sends runs.create(" in caught.value.response.text
        with pytest.raises(httpx.HTTPStatusError) as caught:
            await mallory.runs.wait(tid, assistant, input=TASK)
        assert "new input would discard the pending review" in caught.value.response.text

        # Harmless: reading, a metadata patch (the thread stays paused).
        assert await _code(mallory.threads.update(tid, metadata={"note": "seen"})) == 200
        assert await _code(nobody.threads.update(tid, metadata={"note": "x"})) == 401
        state = await mallory.threads.get(tid)
        assert state["status"] == "interrupted"
        assert [i["id"] for i in _interrupts(state)] == [pending["id"]]
        assert await _checkpoint(mallory, tid) == before

        # A copy is a thread paused on the same review: the same rules apply to it.
        assert await _code(nobody.threads.copy(tid)) == 401
        copy = (await mallory.threads.copy(tid))["thread_id"]
        # (The server lists the copy as `idle` with no interrupts; its checkpoint has them.)
        copied = await mallory.threads.get_state(copy)
        assert [i["id"] for i in copied["interrupts"]] == [pending["id"]]
        for name, route in around(copy).items():
            for who, caller in (("mallory", mallory), ("alice", alice)):
                assert await _code(route(caller)) == 403, ("copy", name, who)
        assert await _code(mallory.runs.wait(copy, assistant, command=_approve(pending))) == 403

        # A stateless run reviews on its own thread; in a looser tier it is refused.
        out = await mallory.runs.wait(None, assistant, input=TASK)
        assert "reviews" not in out or not out["reviews"]
        assert await _code(mallory.runs.wait(None, assistant, input=TASK, config=LOOSER)) == 403
        assert await _code(nobody.runs.wait(None, assistant, input=TASK)) == 401

        # Assistants and crons: a looser tier is refused, the rest passes.
        for caller in (mallory, alice):
            assert await _code(caller.assistants.create(graph, config=LOOSER)) == 403
            assert await _code(caller.assistants.update(assistant, config=LOOSER)) == 403
            assert (
                await _code(
                    caller.crons.create(assistant, schedule="0 0 1 1 *", input=TASK, config=LOOSER)
                )
                == 403
            )
        assert await _code(nobody.assistants.create(graph)) == 401
        mine = await mallory.assistants.create(
            graph, config={"configurable": {"autonomy": "manual"}}
        )
        try:  # (the dev server keeps its assistants between runs: the others search by graph)
            other = await mallory.threads.create()
            await mallory.runs.wait(other["thread_id"], mine["assistant_id"], input=TASK)
            assert (await mallory.threads.get(other["thread_id"]))["status"] == "interrupted"
        finally:
            await mallory.assistants.delete(mine["assistant_id"])
        cron = await mallory.crons.create(assistant, schedule="0 0 1 1 *", input=TASK)
        await mallory.crons.delete(cron["cron_id"])
        assert await _code(nobody.crons.create(assistant, schedule="0 0 1 1 *", input=TASK)) == 401

        # Nothing above ran the tool.
        assert _ran(calls) == ran_before

        # alice, a member, answers each paused thread: the tool runs once for each.
        for thread_id in (tid, copy):
            out = await alice.runs.wait(thread_id, assistant, command=_approve(pending))
            assert out["status"] == "done", out
            assert [r["reviewer"] for r in out["reviews"]] == ["alice"]
        assert sorted(_ran(calls)[len(ran_before) :]) == sorted([tid, copy])
        # Nothing is paused any more: a state update passes.
        assert await _code(mallory.threads.update_state(tid, values)) == 200

    asyncio.run(go())

"""A three-level tree served by `langgraph dev` (the server LangGraph Studio talks to).

The server runs as a real process on a free loopback port, serving
`tests/integration/_studio/app.py` (root -> ops -> incident -> clerk, whose `rollback` tool
is high risk), and is driven with `langgraph_sdk` as Studio drives it: the graph with
xray, a thread, a run to the review three levels down, a refused answer, a good one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration._devserver import serve

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a `langgraph dev` server serving the tree; stopped afterwards."""
    with serve("langgraph.json", tmp_path_factory.mktemp("dev") / "server.log") as url:
        yield url


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _assistant(client: Any, graph: str = "tree") -> str:
    (assistant,) = await client.assistants.search(graph_id=graph)
    return str(assistant["assistant_id"])


def _client(url: str) -> Any:
    from langgraph_sdk import get_client

    return get_client(url=url)


def test_the_graph_schemas_are_served(server: str) -> None:
    async def go() -> None:
        client = _client(server)
        schemas = await client.assistants.get_schemas(await _assistant(client))
        assert "messages" in schemas["input_schema"]["properties"]
        assert {"ledger", "status", "workers"} <= set(schemas["state_schema"]["properties"])

    _run(go())


def test_the_graph_with_xray_shows_every_level(server: str) -> None:
    async def go() -> None:
        client = _client(server)
        assistant = await _assistant(client)
        deep = {n["id"] for n in (await client.assistants.get_graph(assistant, xray=True))["nodes"]}
        # The root, the ops domain, the incident domain inside it, the clerk's agent.
        assert {"supervisor", "comms", "synthesis"} <= deep
        assert {"ops:ops", "ops:review", "ops:synthesis"} <= deep
        assert {"ops:incident:incident", "ops:incident:synthesis"} <= deep
        assert {"ops:incident:clerk:model", "ops:incident:clerk:tools"} <= deep
        one = {n["id"] for n in (await client.assistants.get_graph(assistant, xray=1))["nodes"]}
        assert "ops:incident" in one and "ops:incident:clerk:model" not in one
        subgraphs = await client.assistants.get_subgraphs(assistant, recurse=True)
        assert set(subgraphs) == {"ops", "ops|incident", "ops|incident|clerk"}

    _run(go())


def _interrupts(thread: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for group in (thread.get("interrupts") or {}).values() for i in group]


PATHS = {
    "flat": ["clerk"],
    "two": ["incident", "clerk"],
    "tree": ["ops", "incident", "clerk"],
}


@pytest.mark.parametrize("graph", ["flat", "two", "tree"])
def test_a_review_pauses_refuses_a_bad_answer_and_resumes_at_any_depth(
    server: str, graph: str
) -> None:
    async def go() -> None:
        client = _client(server)
        assistant = await _assistant(client, graph)
        thread = await client.threads.create()
        tid = thread["thread_id"]
        await client.runs.wait(
            tid,
            assistant,
            input={"messages": [{"role": "user", "content": "The database is down: roll back"}]},
        )
        thread = await client.threads.get(tid)
        assert thread["status"] == "interrupted"
        (pending,) = _interrupts(thread)
        value = pending["value"]
        # LangChain's HITL payload, plus our context with the path from the root.
        assert value["action_requests"][0]["name"] == "rollback"
        assert value["review_configs"][0]["action_name"] == "rollback"
        assert value["context"]["path"] == PATHS[graph]
        assert value["context"]["kind"] == "tool"

        # A refused answer leaves the thread interrupted on the same review, not in error.
        await client.runs.wait(tid, assistant, command={"resume": "approve"})
        thread = await client.threads.get(tid)
        assert thread["status"] == "interrupted"
        (again,) = _interrupts(thread)
        assert again["id"] == pending["id"]
        assert again["value"]["action_requests"] == value["action_requests"]
        assert "invalid_answer" in again["value"]["context"]

        # A good answer, by interrupt id, resumes exactly there.
        out = await client.runs.wait(
            tid,
            assistant,
            command={"resume": {pending["id"]: {"decisions": [{"type": "approve"}]}}},
        )
        thread = await client.threads.get(tid)
        assert thread["status"] == "idle"
        assert out["status"] == "done"
        assert [(e["worker"], e["status"]) for e in out["ledger"]] == [(PATHS[graph][0], "success")]
        assert out["messages"][-1]["content"] == "Rolled back the database service."
        # The answer is recorded at the root, wherever it paused; nobody was named (no
        # auth, no reviewer in the answer).
        (record,) = out["reviews"]
        assert (record["interrupt_id"], record["path"], record["decision"]) == (
            pending["id"],
            PATHS[graph],
            "approve",
        )
        assert record["reviewer"] is None and record["answered_at"]

    _run(go())


def test_the_server_serves_many_runs_of_the_offline_models(server: str) -> None:
    async def go() -> None:
        client = _client(server)
        assistant = await _assistant(client)
        for _ in range(3):
            thread = await client.threads.create()
            await client.runs.wait(
                thread["thread_id"],
                assistant,
                input={"messages": [{"role": "user", "content": "Roll back the database"}]},
            )
            out = await client.runs.wait(
                thread["thread_id"],
                assistant,
                command={"resume": {"decisions": [{"type": "approve"}]}},
            )
            assert out["status"] == "done"

    _run(go())

"""The ops_tree project `lgsp new` writes, served by a real `langgraph dev`, driven as Studio does.

`lgsp new ops_tree <tmp>/ops` writes the project; `langgraph dev` serves its
`langgraph.json` on a free loopback port (the package imports from this checkout), and
`langgraph_sdk` drives it: the assistant, the graph with xray down to every domain's
workers, the schemas, a thread, a run to the rollback review inside the `infrastructure`
domain (LangChain's HITL payload), an approval and a rejection, an invalid answer, and
several runs on the same server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration._devserver import assistant_id, interrupts, serve_template
from tests.integration._devserver import client as sdk_client

pytestmark = pytest.mark.integration

INCIDENT = (
    "Checkout is returning 500s since the 14:02 deploy of payments v2.3.1: page on-call, "
    "roll back the deploy and post a status update"
)
PATH = ["infrastructure", "deployer"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a `langgraph dev` serving the ops_tree project; stopped after."""
    with serve_template("ops_tree", tmp_path_factory.mktemp("ops_tree")) as url:
        yield url


def test_the_graph_with_xray_shows_every_level_of_the_tree(server: str) -> None:
    async def go() -> None:
        client = sdk_client(server)
        assistant = await assistant_id(client, "ops_tree")
        deep = {n["id"] for n in (await client.assistants.get_graph(assistant, xray=True))["nodes"]}
        # The root: its supervisor (named after the graph), review and synthesis.
        assert {"ops_tree", "review", "synthesis"} <= deep
        # Each domain's supervisor, review and synthesis, and each worker's agent.
        for domain, workers in [
            ("incident", ["triage", "oncall"]),
            ("infrastructure", ["deployer"]),
            ("communications", ["status_page"]),
        ]:
            assert {f"{domain}:{domain}", f"{domain}:review", f"{domain}:synthesis"} <= deep
            for worker in workers:
                assert {f"{domain}:{worker}:model", f"{domain}:{worker}:tools"} <= deep
        one = {n["id"] for n in (await client.assistants.get_graph(assistant, xray=1))["nodes"]}
        assert "infrastructure:deployer" in one and "infrastructure:deployer:model" not in one
        subgraphs = await client.assistants.get_subgraphs(assistant, recurse=True)
        assert set(subgraphs) == {
            "incident",
            "incident|triage",
            "incident|oncall",
            "infrastructure",
            "infrastructure|deployer",
            "communications",
            "communications|status_page",
        }

    asyncio.run(go())


def test_the_input_and_output_schemas_are_served(server: str) -> None:
    async def go() -> None:
        client = sdk_client(server)
        schemas = await client.assistants.get_schemas(await assistant_id(client, "ops_tree"))
        # Null on Python < 3.12 when a state schema is a `typing.TypedDict`.
        assert schemas["input_schema"] is not None and schemas["output_schema"] is not None
        assert "messages" in schemas["input_schema"]["properties"]
        assert {"ledger", "status", "reviews"} <= set(schemas["output_schema"]["properties"])
        assert {"ledger", "status", "workers"} <= set(schemas["state_schema"]["properties"])

    asyncio.run(go())


async def _to_the_review(client: Any, assistant: str) -> tuple[str, dict[str, Any]]:
    """A new thread, run to the rollback review; its id and the pending interrupt."""
    thread = await client.threads.create()
    tid = str(thread["thread_id"])
    await client.runs.wait(
        tid, assistant, input={"messages": [{"role": "user", "content": INCIDENT}]}
    )
    thread = await client.threads.get(tid)
    assert thread["status"] == "interrupted"
    (pending,) = interrupts(thread)
    value = pending["value"]
    (request,) = value["action_requests"]
    assert (request["name"], request["args"]) == (
        "rollback",
        {"service": "payments", "to_version": "v2.3.0"},
    )
    assert value["review_configs"][0]["action_name"] == "rollback"
    assert "approve" in value["review_configs"][0]["allowed_decisions"]
    assert value["context"]["path"] == PATH
    assert (value["context"]["worker"], value["context"]["tier"]) == ("deployer", "supervised")
    return tid, pending


def test_a_run_pauses_inside_the_domain_and_resumes_to_an_answer_run_after_run(
    server: str,
) -> None:
    async def go() -> None:
        client = sdk_client(server)
        assistant = await assistant_id(client, "ops_tree")
        # The offline models serve every run of a long-lived server, whatever was answered.
        for decision in ["approve", "reject", "approve"]:
            tid, pending = await _to_the_review(client, assistant)
            out = await client.runs.wait(
                tid, assistant, command={"resume": {"decisions": [{"type": decision}]}}
            )
            assert (await client.threads.get(tid))["status"] == "idle"
            assert out["status"] == "done"
            assert [(e["worker"], e["status"]) for e in out["ledger"]] == [
                ("incident", "success"),
                ("infrastructure", "success"),
                ("communications", "success"),
            ]
            incident, infrastructure, communications = out["messages"][-1]["content"].splitlines()
            assert incident.startswith("Incident: SEV1 on checkout")
            assert "Paged Priya Raman (payments on-call)" in incident
            if decision == "approve":
                assert infrastructure.startswith(
                    "Infrastructure: Rolled back payments from v2.3.1 to v2.3.0."
                )
                assert "(monitoring)" in communications
            else:
                assert infrastructure.startswith(
                    "Infrastructure: The rollback of payments was not approved; "
                    "nothing was rolled back."
                )
                assert "(identified)" in communications
            (record,) = out["reviews"]
            assert (record["interrupt_id"], record["path"], record["decision"]) == (
                pending["id"],
                PATH,
                decision,
            )

    asyncio.run(go())


def test_an_invalid_answer_leaves_the_thread_interrupted_not_in_error(server: str) -> None:
    async def go() -> None:
        client = sdk_client(server)
        assistant = await assistant_id(client, "ops_tree")
        tid, pending = await _to_the_review(client, assistant)
        for bad in ["approve", {"decisions": [{"type": "maybe"}]}]:
            await client.runs.wait(tid, assistant, command={"resume": bad})
            thread = await client.threads.get(tid)
            assert thread["status"] == "interrupted"
            (again,) = interrupts(thread)
            assert again["id"] == pending["id"]
            assert again["value"]["action_requests"] == pending["value"]["action_requests"]
            assert "invalid_answer" in again["value"]["context"]
        out = await client.runs.wait(
            tid,
            assistant,
            command={"resume": {pending["id"]: {"decisions": [{"type": "approve"}]}}},
        )
        assert (await client.threads.get(tid))["status"] == "idle"
        assert out["status"] == "done"
        assert "Rolled back payments" in out["messages"][-1]["content"]

    asyncio.run(go())

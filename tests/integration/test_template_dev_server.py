"""The support desk `lgsp new` writes, served by a real `langgraph dev` and driven as Studio does.

`lgsp new support_desk <tmp>/desk` writes the project; `langgraph dev` serves its
`langgraph.json` on a free loopback port (the package imports from this checkout), and
`langgraph_sdk` drives it: the assistant, the graph with xray, the schemas, a thread, a run
to the refund review (LangChain's HITL payload), an approval, and more runs on the same
server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration._devserver import assistant_id, interrupts, serve_template
from tests.integration._devserver import client as sdk_client

pytestmark = pytest.mark.integration

DUPLICATE = "I was charged twice for order A1001, please refund the duplicate"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a `langgraph dev` serving a project `lgsp new` wrote; stopped after."""
    with serve_template("support_desk", tmp_path_factory.mktemp("support_desk")) as url:
        yield url


def test_the_assistant_graph_and_schemas_are_served(server: str) -> None:
    async def go() -> None:
        client = sdk_client(server)
        assistant = await assistant_id(client, "support_desk")
        nodes = {
            n["id"] for n in (await client.assistants.get_graph(assistant, xray=True))["nodes"]
        }
        # The supervisor node is named after the supervisor (`name="support_desk"`).
        assert {"support_desk", "synthesis", "billing", "tech_support", "account"} <= {
            node.split(":")[0] for node in nodes
        }
        assert {"billing:model", "billing:tools"} <= nodes
        schemas = await client.assistants.get_schemas(assistant)
        assert schemas["input_schema"] is not None and schemas["output_schema"] is not None
        assert "messages" in schemas["input_schema"]["properties"]
        assert {"ledger", "status"} <= set(schemas["output_schema"]["properties"])

    asyncio.run(go())


async def _refund_run(client: Any, assistant: str) -> dict[str, Any]:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    await client.runs.wait(
        tid, assistant, input={"messages": [{"role": "user", "content": DUPLICATE}]}
    )
    thread = await client.threads.get(tid)
    assert thread["status"] == "interrupted"
    (pending,) = interrupts(thread)
    request = pending["value"]["action_requests"][0]
    assert request["name"] == "refund"
    assert request["args"]["order_id"] == "A1001"
    assert pending["value"]["review_configs"][0]["action_name"] == "refund"
    assert pending["value"]["context"]["worker"] == "billing"
    out = await client.runs.wait(
        tid, assistant, command={"resume": {"decisions": [{"type": "approve"}]}}
    )
    assert (await client.threads.get(tid))["status"] == "idle"
    return dict(out)


def test_a_refund_pauses_for_review_and_an_approval_refunds_twice_over(server: str) -> None:
    async def go() -> None:
        client = sdk_client(server)
        assistant = await assistant_id(client, "support_desk")
        for _ in range(2):  # the offline models serve every run of a long-lived server
            out = await _refund_run(client, assistant)
            assert out["status"] == "done"
            assert [(e["worker"], e["status"]) for e in out["ledger"]] == [("billing", "success")]
            assert "refunded 29.00 on order A1001" in out["messages"][-1]["content"]
            (record,) = out["reviews"]
            assert record["decision"] == "approve"

    asyncio.run(go())


def test_other_requests_reach_the_other_workers(server: str) -> None:
    async def go() -> None:
        client = sdk_client(server)
        assistant = await assistant_id(client, "support_desk")
        for text, worker in [
            ("The app crashes when I open a note", "tech_support"),
            ("Please change my account email", "account"),
        ]:
            thread = await client.threads.create()
            out = await client.runs.wait(
                thread["thread_id"],
                assistant,
                input={"messages": [{"role": "user", "content": text}]},
            )
            assert out["status"] == "done"
            assert [e["worker"] for e in out["ledger"]] == [worker]

    asyncio.run(go())


def test_an_invalid_answer_leaves_the_thread_interrupted_then_a_reject_ends_it(
    server: str,
) -> None:
    async def go() -> None:
        client = sdk_client(server)
        assistant = await assistant_id(client, "support_desk")
        thread = await client.threads.create()
        tid = str(thread["thread_id"])
        await client.runs.wait(
            tid, assistant, input={"messages": [{"role": "user", "content": DUPLICATE}]}
        )
        (pending,) = interrupts(await client.threads.get(tid))
        for bad in ["approve", {"decisions": [{"type": "maybe"}]}]:
            await client.runs.wait(tid, assistant, command={"resume": bad})
            thread = await client.threads.get(tid)
            assert thread["status"] == "interrupted"  # not "error": the review is re-asked
            (again,) = interrupts(thread)
            assert again["id"] == pending["id"]
            assert "invalid_answer" in again["value"]["context"]
        reject = {"decisions": [{"type": "reject", "message": "over the refund limit"}]}
        out = await client.runs.wait(tid, assistant, command={"resume": {pending["id"]: reject}})
        assert (await client.threads.get(tid))["status"] == "idle"
        assert out["status"] == "done"
        assert "nothing was refunded" in out["messages"][-1]["content"]
        (record,) = out["reviews"]
        assert record["decision"] == "reject"

    asyncio.run(go())

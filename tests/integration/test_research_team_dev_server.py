"""The research team `lgsp new` writes, served by a real `langgraph dev` and driven as Studio does.

`lgsp new research_team <tmp>/team` writes the project; `langgraph dev` serves its
`langgraph.json` on a free loopback port (the package imports from this checkout), and
`langgraph_sdk` drives it: the assistant, the graph with xray, the schemas, a thread, a
run to `done` with the report (researcher and analyst in one step, then the writer), the
sources in the server's store, a follow-up question on the same thread, more runs on the
same server, and a run streamed as Studio streams it (updates and messages, subgraphs).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration._devserver import assistant_id, serve_template
from tests.integration._devserver import client as sdk_client

pytestmark = pytest.mark.integration

HEAT_PUMP = (
    "Should I replace my gas boiler with a heat pump? Compare running costs and emissions, "
    "and write a short report with sources."
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a `langgraph dev` serving a project `lgsp new` wrote; stopped after."""
    with serve_template("research_team", tmp_path_factory.mktemp("research_team")) as url:
        yield url


def test_the_assistant_graph_and_schemas_are_served(server: str) -> None:
    async def go() -> None:
        client = sdk_client(server)
        assistant = await assistant_id(client, "research_team")
        nodes = {
            n["id"] for n in (await client.assistants.get_graph(assistant, xray=True))["nodes"]
        }
        # The supervisor node is named after the supervisor (`name="research_team"`).
        assert {"research_team", "compaction", "synthesis"} <= nodes
        for worker in ("researcher", "analyst", "writer"):
            assert {f"{worker}:model", f"{worker}:tools"} <= nodes
        schemas = await client.assistants.get_schemas(assistant)
        assert schemas["input_schema"] is not None and schemas["output_schema"] is not None
        assert "messages" in schemas["input_schema"]["properties"]
        assert {"ledger", "status", "compactions"} <= set(schemas["output_schema"]["properties"])

    asyncio.run(go())


async def _ask(client: Any, assistant: str, thread_id: str, text: str) -> dict[str, Any]:
    out = await client.runs.wait(
        thread_id, assistant, input={"messages": [{"role": "user", "content": text}]}
    )
    assert (await client.threads.get(thread_id))["status"] == "idle"
    return dict(out)


def _this_turn(out: dict[str, Any]) -> list[tuple[int, str, str]]:
    return sorted(
        (e["step"], e["worker"], e["status"]) for e in out["ledger"] if e["turn"] == out["turn"]
    )


def test_a_question_fans_out_and_ends_with_a_cited_report_run_after_run(server: str) -> None:
    async def go() -> None:
        client = sdk_client(server)
        assistant = await assistant_id(client, "research_team")
        reports = []
        for _ in range(2):  # the offline models serve every run of a long-lived server
            thread = await client.threads.create()
            tid = thread["thread_id"]
            out = await _ask(client, assistant, tid, HEAT_PUMP)
            assert out["status"] == "done"
            assert _this_turn(out) == [
                (1, "researcher", "success"),
                (2, "analyst", "success"),
                (3, "writer", "success"),
            ]
            # The researcher and the analyst were scheduled in the same super-step.
            history = await client.threads.get_history(tid, limit=50)
            assert any(set(state["next"]) == {"researcher", "analyst"} for state in history)
            report = out["messages"][-1]["content"]
            assert report.startswith(f"# {HEAT_PUMP}")
            assert "1,161 EUR and 968 kg CO2" in report
            assert (
                "[S2] What a heat pump installation really costs. Home Retrofit Quarterly, 2023."
                in report
            )
            # The sources live in the server's store, under the thread.
            found = await client.store.search_items(("research_team", "sources", tid), limit=100)
            keys = {item["key"] for item in found["items"]}
            assert {"S1", "S2", "D1", "D5"} <= keys
            assert set(re.findall(r"\[([SD]\d+)\]", report)) <= keys
            reports.append(report)
        assert reports[0] == reports[1]

    asyncio.run(go())


def test_a_follow_up_question_on_the_same_thread_researches_again(server: str) -> None:
    async def go() -> None:
        client = sdk_client(server)
        assistant = await assistant_id(client, "research_team")
        thread = await client.threads.create()
        tid = thread["thread_id"]
        await _ask(client, assistant, tid, HEAT_PUMP)
        out = await _ask(client, assistant, tid, "Is rooftop solar worth it in central Europe?")
        assert out["status"] == "done" and out["turn"] == 2
        assert [w for _, w, _ in _this_turn(out)] == ["researcher", "analyst", "writer"]
        report = out["messages"][-1]["content"]
        assert "[S4] Rooftop solar yield across European latitudes" in report

    asyncio.run(go())


def test_a_streamed_run_shows_every_worker_and_the_writers_report_as_studio_does(
    server: str,
) -> None:
    async def go() -> None:
        client = sdk_client(server)
        assistant = await assistant_id(client, "research_team")
        thread = await client.threads.create()
        events: list[tuple[str, Any]] = []
        async for part in client.runs.stream(
            thread["thread_id"],
            assistant,
            input={"messages": [{"role": "user", "content": HEAT_PUMP}]},
            stream_mode=["updates", "messages-tuple"],
            stream_subgraphs=True,
        ):
            events.append((part.event, part.data))
        assert not [data for event, data in events if event == "error"]
        # Root updates, one per node that ran; then each worker's agent in its namespace.
        ran = {node for event, data in events if event == "updates" and data for node in data}
        assert {"research_team", "researcher", "analyst", "writer", "synthesis"} <= ran
        namespaces = {event.split("|")[1].split(":")[0] for event, _ in events if "|" in event}
        assert namespaces == {"researcher", "analyst", "writer"}
        # The writer's model streamed its report token by token, in the writer's namespace.
        streamed: dict[str, list[str]] = {}
        for event, data in events:
            if event.startswith("messages") and event != "messages/metadata" and "writer" in event:
                content = data[0].get("content", "")
                if isinstance(content, str):
                    streamed.setdefault(data[0].get("id") or "", []).append(content)
        reports = ["".join(parts) for parts in streamed.values() if len(parts) > 1]
        assert any("## Sources" in report for report in reports), list(streamed.values())[:3]
        state = await client.threads.get_state(thread["thread_id"])
        assert state["values"]["status"] == "done"

    asyncio.run(go())

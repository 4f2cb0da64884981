"""The online judge under `langgraph dev` (the server LangGraph Studio talks to).

The server runs as a real process on a free loopback port, serving
`tests/integration/_judge_studio/app.py`, and is driven with `langgraph_sdk` as Studio
drives it: the drawing has the judge step, a run's state holds its verdict, and a low
score waits in the server's own store.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.integration._devserver import serve

pytestmark = pytest.mark.integration

APP = Path(__file__).resolve().parent / "_judge_studio"


def test_the_judge_step_runs_under_the_dev_server_and_queues_in_its_store(tmp_path):
    from langgraph_sdk import get_client

    async def go(url: str) -> None:
        client: Any = get_client(url=url)  # (its stubs type `input` too narrowly)
        (assistant,) = await client.assistants.search(graph_id="judged")
        drawing = await client.assistants.get_graph(assistant["assistant_id"])
        assert "judge" in {node["id"] for node in drawing["nodes"]}
        keys = {}
        for task in ("a refund for order 7", "opening hours"):
            thread = await client.threads.create()
            out = await client.runs.wait(
                thread["thread_id"],
                assistant["assistant_id"],
                input={"messages": [{"role": "user", "content": task}]},
            )
            assert out["status"] == "done"
            (entry,) = out["judgements"]
            keys[task] = entry["key"]
            assert entry["key"] == f"{thread['thread_id']}:1"
            assert entry["queued"] is (task.startswith("a refund"))
        found = await client.store.search_items(["lgsp", "judge"], filter={"review": "open"})
        assert [item["key"] for item in found["items"]] == [keys["a refund for order 7"]]
        assert found["items"][0]["value"]["score"] == 0.2

    # A copy of the app: `langgraph dev` keeps its threads and store in the app's folder
    # (`.langgraph_api/`), and the queue must start empty.
    app = tmp_path / "app"
    shutil.copytree(APP, app, ignore=shutil.ignore_patterns(".langgraph_api"))
    with serve("langgraph.json", tmp_path / "server.log", app=app) as url:
        asyncio.run(go(url))

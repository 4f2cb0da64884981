"""The research team `lgsp new` writes, run on a real Postgres checkpointer and store.

A long research conversation (eight questions, one thread) runs on Postgres: the sources
and figures found are rows of the Postgres store under the thread, the workers' histories
are compacted inside the 8,192-token window, and after the pools are closed a new
checkpointer and store (as another process would open) carry the thread on: a ninth
question is turn 9, and its report cites sources found in turn 1 and kept in the store.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langgraph_supervisor_pro import open_checkpointer, open_store
from langgraph_supervisor_pro.cli import app
from tests.cli._project import load_graph_module

pytestmark = pytest.mark.integration

CONVERSATION = [
    "Should I replace my gas boiler with a heat pump? Compare running costs and emissions, "
    "and write a short report with sources.",
    "How loud are heat pumps, and where should the outdoor unit go?",
    "Is rooftop solar worth it in central Europe?",
    "Would a home battery help me use more of my solar power?",
    "Should I insulate the loft before installing a heat pump?",
    "How long do home batteries last?",
    "What does a heat pump cost to install?",
    "Do heat pumps still work in a cold winter?",
]
WINDOW = 8192


def test_a_long_research_conversation_on_postgres_survives_a_restart(
    tmp_path: Path, pg_database: str
) -> None:
    project = tmp_path / "team"
    assert CliRunner().invoke(app, ["new", "research_team", str(project)]).exit_code == 0
    module = load_graph_module(project, "research_team")
    config = {"configurable": {"thread_id": "study.1"}}  # a dot: not a valid store label
    with open_checkpointer(pg_database) as saver, open_store(pg_database) as store:
        team = module.build_graph({}).compile(checkpointer=saver, store=store)
        for question in CONVERSATION:
            out = team.invoke({"messages": [("user", question)]}, config, durability="sync")
            assert out["status"] == "done"
            assert out["messages"][-1].content.startswith(f"# {question}")
        assert {c["worker"] for c in out["compactions"]} == {"writer", "researcher"}
        assert max(u["tokens"] for u in out["usage"]) <= WINDOW
    # A new checkpointer and store, as another process would open them.
    with open_checkpointer(pg_database) as saver, open_store(pg_database) as store:
        team = module.build_graph({}).compile(checkpointer=saver, store=store)
        kept = {item.key for item in store.search(module.sources_namespace("study.1"), limit=100)}
        assert {f"S{n}" for n in range(1, 9)} <= kept
        assert {f"D{n}" for n in range(1, 10)} <= kept
        out = team.invoke(
            {"messages": [("user", "Should I add a battery to my rooftop solar?")]},
            config,
            durability="sync",
        )
        assert out["status"] == "done" and out["turn"] == len(CONVERSATION) + 1
        report = out["messages"][-1].content
        listed = re.findall(r"^\[([SD]\d+)\] (.+)$", report, re.MULTILINE)
        assert {"S4", "S5", "S6"} <= {sid for sid, _ in listed}
        assert all("not found in the store" not in line for _, line in listed)

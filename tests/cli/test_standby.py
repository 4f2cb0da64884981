"""`lgsp standby`, through typer's CliRunner: usage errors, and `--once` on real Postgres.

The long-running standby against a SIGKILLed primary is in tests/integration/
test_standby.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro.cli import app
from tests.persistence.test_standby import die_holding, stop_before_b

WIDE = {"COLUMNS": "220"}

APP_FILE = """
from typing_extensions import TypedDict
from langgraph.graph import START, StateGraph


class State(TypedDict):
    trail: list[str]


def a(state):
    return {"trail": [*state["trail"], "a"]}


def b(state):
    if state["trail"] == ["a", "broken"]:
        raise RuntimeError("b broke")
    return {"trail": [*state["trail"], "b"]}


graph = StateGraph(State)
graph.add_node("a", a)
graph.add_node("b", b)
graph.add_edge(START, "a")
graph.add_edge("a", "b")
"""


def run(*args: str):
    return CliRunner().invoke(app, ["standby", *args], env=WIDE)


@pytest.fixture
def app_file(tmp_path: Path) -> str:
    path = tmp_path / "team.py"
    path.write_text(APP_FILE)
    return f"{path}:graph"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--db", "sqlite:///x.db"], "lgsp standby needs Postgres"),
        (["--db", "x.db"], "lgsp standby needs Postgres"),
        (["--db", "postgresql://u:pw@h/db", "--interval", "0"], "--interval: got '0'"),
        (["--db", "postgresql://u:pw@h/db", "--interval", "nan"], "--interval: got 'nan'"),
        (["--db", "postgresql://u:pw@h/db", "--expire-after", "2"], "--expire-after: got '2'"),
        (["--db", "postgresql://u:pw@h/db", "--expire-after", "2h"], "--expire-after: got '2h'"),
        (["--db", "postgresql://u:pw@h/db", "--interval", "soon"], "--interval: got 'soon'"),
        (["--db", "postgresql://u:pw@h/db", "--owner", " "], "--owner: give a non-empty"),
    ],
)
def test_usage_errors_exit_2_in_one_line(args, message, app_file):
    result = run(*args, "--graph", app_file)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "pw" not in result.output


def test_a_bad_graph_is_a_usage_error(pg_database):
    result = run("--db", pg_database, "--graph", "no/such/file.py:graph", "--once")
    assert result.exit_code == 2
    assert "--graph: no such file" in result.output


def test_once_resumes_the_orphans_and_reports(pg_database, app_file):
    from tests.persistence.test_standby import builder

    with open_checkpointer(pg_database) as saver:
        stop_before_b(saver, "orphan-1", [])
        stop_before_b(saver, "orphan-2", [])
        # The file's `b` raises on this trail: orphan-2's resumed run fails.
        builder([]).compile(checkpointer=saver).update_state(
            {"configurable": {"thread_id": "orphan-2"}}, {"trail": ["a", "broken"]}, as_node="a"
        )
    die_holding(pg_database, "orphan-1")
    die_holding(pg_database, "orphan-2")

    result = run("--db", pg_database, "--graph", app_file, "--once")
    assert result.exit_code == 1, result.output  # one resumed run failed
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("thread orphan-1: resumed at ['b'] from checkpoint ")
    assert lines[0].endswith("; finished")
    assert lines[1].startswith("thread orphan-2: resumed at ['b'] from checkpoint ")
    assert lines[1].endswith("; failed: RuntimeError: b broke")
    assert lines[2] == "Swept: 2 runs taken over."

    again = run("--db", pg_database, "--graph", app_file, "--once", "--json")
    assert again.exit_code == 0, again.output
    assert again.output.strip() == ""  # nothing left to take over

    stop_before_b_json(pg_database)
    out = run("--db", pg_database, "--graph", app_file, "--once", "--json")
    assert out.exit_code == 0, out.output
    [line] = out.output.strip().splitlines()
    assert json.loads(line) == {
        "thread_id": "orphan-3",
        "checkpoint_id": json.loads(line)["checkpoint_id"],
        "outcome": "finished",
        "pending": ["b"],
        "status": None,
        "error": None,
    }


def stop_before_b_json(url: str) -> None:
    with open_checkpointer(url) as saver:
        stop_before_b(saver, "orphan-3", [])
    die_holding(url, "orphan-3")


def test_unreachable_database_is_one_line_without_the_password(app_file):
    result = run("--db", "postgresql://u:s3cret@127.0.0.1:1/db", "--graph", app_file, "--once")
    assert result.exit_code != 0
    assert "s3cret" not in result.output
    assert "cannot open the checkpoint database" in result.output


STORE_APP_FILE = APP_FILE.replace(
    '    return {"trail": [*state["trail"], "b"]}',
    "    from langgraph.config import get_store\n\n"
    '    get_store().put(("standby",), "b", {"ran": True})\n'
    '    return {"trail": [*state["trail"], "b"]}',
)


def test_the_store_option_compiles_the_resumed_graph_with_it(pg_database, tmp_path):
    from langgraph_supervisor_pro import open_store

    path = tmp_path / "store_team.py"
    path.write_text(STORE_APP_FILE)
    with open_checkpointer(pg_database) as saver:
        stop_before_b(saver, "orphan-s", [])
    die_holding(pg_database, "orphan-s")
    result = run("--db", pg_database, "--graph", f"{path}:graph", "--store", pg_database, "--once")
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[0].endswith("; finished")
    with open_store(pg_database) as store:
        item = store.get(("standby",), "b")
    assert item is not None and item.value == {"ran": True}


def test_a_bad_store_is_a_usage_error(pg_database, app_file, tmp_path):
    missing = tmp_path / "nope.db"
    result = run("--db", pg_database, "--graph", app_file, "--store", str(missing), "--once")
    assert result.exit_code == 2, result.output
    assert f"no store database at {missing} (--store)" in " ".join(result.output.split())

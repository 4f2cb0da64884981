"""`lgsp runs`: the threads of a checkpoint database, on SQLite and on real Postgres."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.types import Command
from typer.testing import CliRunner

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro.cli import app
from langgraph_supervisor_pro.cli._demo import load_desk
from langgraph_supervisor_pro.cli._runs import RunRow, list_runs
from tests.cli._output import error_line

WIDE = {"COLUMNS": "160"}


def lgsp(*args: str):
    return CliRunner().invoke(app, list(args), env=WIDE)


def record(url: str) -> None:
    """Three demo threads, oldest first: one finished, one paused at its review, one on turn 2."""
    with open_checkpointer(url) as saver:
        desk = load_desk()
        graph = desk.compile(saver)

        def ask(thread: str, turn: int) -> dict[str, Any]:
            config = {"configurable": {"thread_id": thread}}
            out = graph.invoke({"messages": [HumanMessage(desk.conversation[turn])]}, config)
            while "__interrupt__" in out and thread != "paused":
                out = graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
            return out

        for turn in range(len(desk.conversation)):
            ask("finished", turn)
        ask("paused", 0)
        ask("second-turn", 0)
        ask("second-turn", 1)


def rows(output: str) -> list[tuple[str, ...]]:
    """(thread, status, turn, step, pending) of each table row."""
    pattern = re.compile(
        r"^\s+([\w-]+)\s+(done|running|halted|failed|-)\s+(\d+|-)\s+(\d+|-)\s+(\d+)\s", re.M
    )
    return pattern.findall(output)


def test_runs_lists_each_thread_newest_first_with_its_status_and_reviews(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    record(f"sqlite:///{db}")
    result = lgsp("runs", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert f"Runs in {db}" in result.output
    assert rows(result.output) == [
        ("second-turn", "done", "2", "1", "0"),
        ("paused", "running", "1", "1", "1"),
        ("finished", "done", "3", "1", "0"),
    ]
    assert "The app crashes when I open a note" in result.output  # the latest task
    assert "3 runs, 1 paused for review (lgsp review list --db ...)." in result.output
    # The sqlite:/// form names the same database.
    same = lgsp("runs", "--db", f"sqlite:///{db}")
    assert rows(same.output) == rows(result.output)


def test_runs_json_has_every_field_and_the_times_go_back(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    record(f"sqlite:///{db}")
    result = lgsp("runs", "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)
    assert [(r["thread_id"], r["status"], r["turn"], r["pending_reviews"]) for r in listed] == [
        ("second-turn", "done", 2, 0),
        ("paused", "running", 1, 1),
        ("finished", "done", 3, 0),
    ]
    assert set(listed[0]) == {
        "thread_id",
        "status",
        "turn",
        "step",
        "pending_reviews",
        "task",
        "last_activity",
    }
    times = [datetime.fromisoformat(r["last_activity"]) for r in listed]
    assert times == sorted(times, reverse=True)


def test_an_empty_database_has_no_runs(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    with open_checkpointer(f"sqlite:///{db}"):
        pass
    result = lgsp("runs", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"No runs in {db}."
    assert json.loads(lgsp("runs", "--db", str(db), "--json").output) == []


def test_list_runs_reads_a_thread_without_supervisor_state(tmp_path: Path) -> None:
    # A checkpoint of some other graph: no status, turn or step; still listed.
    from langgraph.graph import START, MessagesState, StateGraph

    graph = StateGraph(MessagesState)
    graph.add_node("echo", lambda state: {"messages": [("ai", "hi")]})
    graph.add_edge(START, "echo")
    with open_checkpointer(f"sqlite:///{tmp_path / 'other.db'}") as saver:
        graph.compile(checkpointer=saver).invoke(
            {"messages": [("user", "hello")]}, {"configurable": {"thread_id": "plain"}}
        )
        (row,) = list_runs(saver)
    assert isinstance(row, RunRow)
    assert (row.thread_id, row.status, row.turn, row.step, row.pending, row.task) == (
        "plain",
        "-",
        None,
        None,
        0,
        "",
    )
    assert row.last_activity is not None


@pytest.mark.parametrize(
    ("db", "says"),
    [
        ("{dir}/missing.db", "no checkpoint database at"),
        ("sqlite:///{dir}/missing.db", "no checkpoint database at"),
        ("{dir}", "is a directory"),
        ("{dir}/notes.txt", "cannot"),
        ("mysql://x@y/z", "unsupported scheme 'mysql'"),
        ("memory", "is a fresh, empty in-process database"),
        ("", "--db must not be empty"),
        ("postgresql://nobody:secret@127.0.0.1:1/none", "cannot open the checkpoint database"),
    ],
)
def test_bad_databases_are_one_line_errors_with_code_2(tmp_path: Path, db: str, says: str) -> None:
    (tmp_path / "notes.txt").write_text("not a database " * 100)
    line = error_line(lgsp("runs", "--db", db.format(dir=tmp_path)), says)
    assert "secret" not in line  # a password in the URL is masked
    assert not (tmp_path / "missing.db").exists()


def test_a_database_that_is_not_a_checkpoint_database_is_a_one_line_error(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE checkpoints (x TEXT)")
    error_line(lgsp("runs", "--db", str(db)), f"cannot read the runs in {db}", "thread_id")


def test_missing_db_option_is_a_one_line_error() -> None:
    error_line(lgsp("runs"), "Missing option '--db'", "(see lgsp runs --help)")


def test_runs_on_postgres(pg_database: str) -> None:
    record(pg_database)
    result = lgsp("runs", "--db", pg_database)
    assert result.exit_code == 0, result.output
    assert rows(result.output) == [
        ("second-turn", "done", "2", "1", "0"),
        ("paused", "running", "1", "1", "1"),
        ("finished", "done", "3", "1", "0"),
    ]
    listed = json.loads(lgsp("runs", "--db", pg_database, "--json").output)
    assert [r["thread_id"] for r in listed] == ["second-turn", "paused", "finished"]
    assert [r["pending_reviews"] for r in listed] == [0, 1, 0]

"""`lgsp audit`: one run's timeline on SQLite and on real Postgres, as text and as JSON."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import START, MessagesState, StateGraph
from typer.testing import CliRunner

from langgraph_supervisor_pro import (
    Worker,
    create_supervisor,
    open_checkpointer,
    open_store,
    register_secret,
)
from langgraph_supervisor_pro.cli import app
from langgraph_supervisor_pro.persistence._effects import open_effects
from tests._helpers import ask
from tests.cli._output import error_line
from tests.observability._record import record_spend
from tests.observability.test_audit import (
    CHARGE_KEY,
    EXPECTED_CHECKING,
    EXPECTED_TREE,
    checking_run,
    tree_run,
)

WIDE = {"COLUMNS": "220"}


def lgsp(*args: str):
    return CliRunner().invoke(app, list(args), env=WIDE)


def table_rows(output: str) -> list[tuple[str, str, str, str]]:
    """(turn.step, where, kind, what) of each row of the text table."""
    pattern = re.compile(
        r"^\s*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\s+(\S+)\s+(\S+)\s+"
        r"(turn|decision|hop|review|refusal|effect|compaction|budget|end)\s+(.*?)\s*$",
        re.M,
    )
    return [m.groups() for m in pattern.finditer(output)]  # type: ignore[misc]


def expected_rows(expected: list[tuple[Any, ...]] = EXPECTED_CHECKING) -> list[tuple[Any, ...]]:
    return [
        (f"{turn}.{step}" if step is not None else str(turn), path or "root", kind, line)
        for kind, path, turn, step, line in expected
    ]


def record_sqlite(tmp_path: Path) -> tuple[Path, Path]:
    db, memory = tmp_path / "runs.db", tmp_path / "store.db"
    with open_checkpointer(f"sqlite:///{db}") as saver, open_store(f"sqlite:///{memory}") as store:
        checking_run(saver, store=store)
    return db, memory


def test_audit_prints_the_timeline_on_sqlite(tmp_path: Path) -> None:
    db, memory = record_sqlite(tmp_path)
    result = lgsp("audit", "--db", str(db), "--thread", "run-1", "--store", str(memory))
    assert result.exit_code == 0, result.output
    assert f"Audit trail of run-1 in {db}" in result.output
    assert table_rows(result.output) == expected_rows()
    assert "10 events: 4 decisions, 3 hops." in result.output
    # Without --store the effect is not shown (SQLite has no effects table); sqlite:/// works.
    plain = lgsp("audit", "--db", f"sqlite:///{db}", "--thread", "run-1")
    assert plain.exit_code == 0, plain.output
    assert table_rows(plain.output) == [r for r in expected_rows() if r[2] != "effect"]


def test_audit_shows_a_tree_s_domains_by_path(tmp_path: Path) -> None:
    db = tmp_path / "tree.db"
    with open_checkpointer(f"sqlite:///{db}") as saver:
        tree_run(saver)
    result = lgsp("audit", "--db", str(db), "--thread", "tree")
    assert result.exit_code == 0, result.output
    assert table_rows(result.output) == expected_rows(EXPECTED_TREE)


def test_audit_says_a_run_is_paused_at_a_review(tmp_path: Path) -> None:
    from langgraph_supervisor_pro.testing import ScriptedChatModel
    from tests.observability.test_audit import _clerk, refund

    db = tmp_path / "paused.db"
    billing = Worker(
        name="billing",
        description="Refunds orders.",
        model=ScriptedChatModel(script=[_clerk] * 10),
        tools=[refund],
        risks={"refund": "high"},
    )
    with open_checkpointer(f"sqlite:///{db}") as saver:
        graph = create_supervisor(
            [billing], router=lambda view: "FINISH" if view.step >= 1 else "billing"
        ).compile(checkpointer=saver)
        graph.invoke(ask("Refund order A2"), {"configurable": {"thread_id": "p"}})
    result = lgsp("audit", "--db", str(db), "--thread", "p")
    assert result.exit_code == 0, result.output
    assert [r[2] for r in table_rows(result.output)] == ["turn", "decision"]
    assert "Paused: 1 review pending (lgsp review list --db ...)." in result.output
    data = json.loads(lgsp("audit", "--db", str(db), "--thread", "p", "--json").output)
    assert data["pending_reviews"] == 1


def test_audit_json_is_the_trail(tmp_path: Path) -> None:
    db, memory = record_sqlite(tmp_path)
    result = lgsp("audit", "--db", str(db), "--thread", "run-1", "--store", str(memory), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["thread_id"], data["pending_reviews"]) == ("run-1", 0)
    assert [(e["kind"], e["turn"], e["step"]) for e in data["events"]] == [
        (kind, turn, step) for kind, _, turn, step, _ in EXPECTED_CHECKING
    ]
    effect = next(e for e in data["events"] if e["kind"] == "effect")
    assert (effect["key"], effect["worker"], effect["outcome"]) == (
        CHARGE_KEY,
        "cashier",
        {"payment_id": 7},
    )
    assert all(e["at"] for e in data["events"])


def test_audit_lists_budget_events_as_text_and_json(tmp_path: Path) -> None:
    db = tmp_path / "spend.db"
    with open_checkpointer(f"sqlite:///{db}") as saver:
        record_spend(saver)
    result = lgsp("audit", "--db", str(db), "--thread", "spend")
    assert result.exit_code == 0, result.output
    assert [r for r in table_rows(result.output) if r[2] == "budget"] == [
        ("1.1", "root", "budget", "budget warning: tokens 850/1,000 (turn)"),
        ("2.1", "root", "budget", "budget warning: cost 0.0041/0.005 (turn) [worker billing]"),
        ("2.1", "root", "budget", "budget exceeded: cost 0.0057/0.005 (turn) [worker billing]"),
    ]
    assert "11 events: 2 decisions, 2 hops, 3 budget events." in result.output
    data = json.loads(lgsp("audit", "--db", str(db), "--thread", "spend", "--json").output)
    budgets = [e for e in data["events"] if e["kind"] == "budget"]
    assert [(e["budget_kind"], e["measure"], e["spent"], e["limit"]) for e in budgets] == [
        ("warning", "tokens", 850, 1000),
        ("warning", "cost", 0.0041, 0.005),
        ("exceeded", "cost", 0.0057, 0.005),
    ]


def test_audit_on_postgres_reads_the_effects_table(pg_database: str) -> None:
    with open_checkpointer(pg_database) as saver, open_effects(pg_database) as effects:
        checking_run(saver, effects=effects)
    result = lgsp("audit", "--db", pg_database, "--thread", "run-1")
    assert result.exit_code == 0, result.output
    assert table_rows(result.output) == expected_rows()
    data = json.loads(lgsp("audit", "--db", pg_database, "--thread", "run-1", "--json").output)
    assert [e["kind"] for e in data["events"]] == [r[0] for r in EXPECTED_CHECKING]
    # Another thread of the same database: no effects of run-1.
    with open_checkpointer(pg_database) as saver:
        checking_run(saver, "run-2", store=None)
    other = json.loads(lgsp("audit", "--db", pg_database, "--thread", "run-2", "--json").output)
    assert [e["key"] for e in other["events"] if e["kind"] == "effect"] == []


def test_audit_on_postgres_without_an_effects_table(pg_database: str) -> None:
    with open_checkpointer(pg_database) as saver:
        checking_run(saver)
    result = lgsp("audit", "--db", pg_database, "--thread", "run-1", "--json")
    assert result.exit_code == 0, result.output
    kinds = [e["kind"] for e in json.loads(result.output)["events"]]
    assert kinds == [r[0] for r in EXPECTED_CHECKING if r[0] != "effect"]


def test_audit_shows_scrubbed_text_only(tmp_path: Path) -> None:
    secret = "sk-live-0123456789abcdef"
    register_secret(secret)

    def login(task: Any) -> str:
        raise RuntimeError(f"login with {secret} was refused")

    db = tmp_path / "secret.db"
    with open_checkpointer(f"sqlite:///{db}") as saver:
        graph = create_supervisor(
            [Worker(name="login", description="Logs in.", agent=login)],
            router=lambda view: "FINISH" if view.ledger else "login",
        ).compile(checkpointer=saver)
        graph.invoke(ask("Log in"), {"configurable": {"thread_id": "s"}})
    for extra in ((), ("--json",)):
        result = lgsp("audit", "--db", str(db), "--thread", "s", *extra)
        assert result.exit_code == 0, result.output
        assert "login with *** was refused" in result.output
        assert secret not in result.output
    # The database itself never held it.
    assert secret.encode() not in db.read_bytes()


# ------------------------------------------------------------------------------ errors


def test_an_unknown_thread_is_an_error(tmp_path: Path) -> None:
    db, _ = record_sqlite(tmp_path)
    error_line(lgsp("audit", "--db", str(db), "--thread", "nobody"), "no run with thread 'nobody'")


def test_an_empty_thread_id_is_an_error(tmp_path: Path) -> None:
    db, _ = record_sqlite(tmp_path)
    error_line(lgsp("audit", "--db", str(db), "--thread", "  "), "--thread must not be empty")


def test_a_thread_without_supervisor_events_is_an_error(tmp_path: Path) -> None:
    graph = StateGraph(MessagesState)
    graph.add_node("echo", lambda state: {"messages": [("ai", "hi")]})
    graph.add_edge(START, "echo")
    db = tmp_path / "plain.db"
    with open_checkpointer(f"sqlite:///{db}") as saver:
        graph.compile(checkpointer=saver).invoke(
            {"messages": [("user", "hello")]}, {"configurable": {"thread_id": "plain"}}
        )
    error_line(
        lgsp("audit", "--db", str(db), "--thread", "plain", "--json"),
        "thread 'plain'",
        "no supervisor events",
    )


@pytest.mark.parametrize(
    ("db", "needle"),
    [
        ("missing.db", "no checkpoint database at"),
        ("mysql://u@h/db", "unsupported scheme 'mysql'"),
        ("", "--db must not be empty"),
        ("memory", "fresh, empty in-process database"),
    ],
)
def test_a_bad_db_is_an_error(tmp_path: Path, db: str, needle: str) -> None:
    error_line(lgsp("audit", "--db", db, "--thread", "t"), needle)


def test_a_file_that_is_not_a_database_is_an_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("not a database " * 100)
    error_line(lgsp("audit", "--db", str(junk), "--thread", "t"), "junk.db")


def test_an_unreachable_postgres_is_an_error() -> None:
    error_line(
        lgsp("audit", "--db", "postgresql://nobody:pw@127.0.0.1:1/none", "--thread", "t"),
        "cannot open the checkpoint database",
        "postgresql://nobody:***@127.0.0.1:1/none",
    )


def test_a_bad_store_is_an_error(tmp_path: Path) -> None:
    db, _ = record_sqlite(tmp_path)
    error_line(
        lgsp("audit", "--db", str(db), "--thread", "run-1", "--store", str(tmp_path / "no.db")),
        "no store database at",
    )


def test_a_corrupt_checkpoint_table_is_an_error(tmp_path: Path) -> None:
    db, _ = record_sqlite(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE checkpoints")
        conn.execute("CREATE TABLE checkpoints (x TEXT)")  # kept by the saver's setup
    error_line(lgsp("audit", "--db", str(db), "--thread", "run-1"), "cannot read thread 'run-1'")


def test_an_unreadable_effects_table_on_postgres_is_an_error(pg_database: str) -> None:
    import psycopg

    with open_checkpointer(pg_database) as saver:
        checking_run(saver)
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("CREATE TABLE lgsp_effects (x int)")  # not the effects table
    error_line(
        lgsp("audit", "--db", pg_database, "--thread", "run-1"),
        "cannot read thread 'run-1'",
        "UndefinedColumn",
    )
    error_line(
        lgsp("audit", "--db", pg_database, "--thread", "nobody"), "no run with thread 'nobody'"
    )

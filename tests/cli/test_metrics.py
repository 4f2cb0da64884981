"""`lgsp metrics`: the figures of real runs on SQLite and on real Postgres; every error path."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from langgraph_supervisor_pro import open_checkpointer, open_store
from langgraph_supervisor_pro.cli import app
from langgraph_supervisor_pro.persistence._effects import StoreEffects, open_effects
from tests.cli._output import error_line
from tests.observability._record import leave_an_effect_in_doubt, record, record_spend

WIDE = {"COLUMNS": "200"}


def lgsp(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env=WIDE)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("metrics") / "runs.db"
    with open_checkpointer(f"sqlite:///{path}") as saver:
        record(saver)
    yield path


def _labels(tmp_path: Path) -> Path:
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"retry": ["flaky", "writer"], "nowhere": ["x"]}))
    return labels


def _row(output: str, first: str, table: str = "") -> list[str]:
    """The cells of the first row that starts with `first` (after the `table` title)."""
    for line in output[output.index(table) :].splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in:\n{output}")


def check_table(output: str, shown: str) -> None:
    assert f"Delegation metrics of 8 runs in {shown}: 16 hops, completion 62.5%." in output
    assert "Status: done 5, failed 1, halted 1, running 1" in output
    assert "Halt reasons: max_steps 1, supervisor_error 1" in output
    assert _row(output, "supervisor -> flaky") == [
        "supervisor -> flaky",
        "2",
        "1",
        "1",
        "0",
        "50.0%",
    ]
    assert _row(output, "ops -> notes") == ["ops -> notes", "2", "1", "1", "0", "50.0%"]
    assert _row(output, "ops/incident -> pager")[1:] == ["1", "1", "0", "0", "100.0%"]
    assert _row(output, "looper") == ["looper", "3", "0", "0", "1", "0"]
    assert _row(output, "ops/notes") == ["ops/notes", "2", "1", "1", "0", "0"]
    assert _row(output, "tech_support") == ["tech_support", "1", "0", "0", "0", "1"]
    assert _row(output, "summarizer")[-1] == "ALERT (>= 70%)"
    assert _row(output, "worker")[-1] == "ok"
    assert "Compactions: 1 (within_hop 1), 0 failed," in output
    assert "Refused tool calls: 1 (refund 1)." in output
    assert re.search(
        r"Reviews: 3 answered \(approve 3\), escalation rate 33\.3%, time in review average "
        r"\d+\.\ds, p99 \d+\.\ds, 2 deadline breaches, 1 pending \(0 overdue\)\.",
        output,
    ), output


def test_metrics_prints_the_tables(db: Path) -> None:
    result = lgsp("metrics", "--db", str(db))
    assert result.exit_code == 0, result.output
    check_table(result.output, str(db))
    assert "Routing" not in result.output


def test_metrics_scores_routing_against_expected_routes(db: Path, tmp_path: Path) -> None:
    result = lgsp("metrics", "--db", f"sqlite:///{db}", "--expected", str(_labels(tmp_path)))
    assert result.exit_code == 0, result.output
    assert _row(result.output, "flaky", "Routing") == [
        "flaky",
        "1",
        "1",
        "0",
        "50.0%",
        "100.0%",
        "66.7%",
    ]
    assert _row(result.output, "writer", "Routing") == [
        "writer",
        "1",
        "0",
        "0",
        "100.0%",
        "100.0%",
        "100.0%",
    ]
    assert (
        "Routing: 1 labelled run, 0 exact, micro precision 66.7%, recall 100.0%, F1 80.0%; "
        "not found: nowhere." in result.output
    )
    data = json.loads(
        lgsp("metrics", "--db", str(db), "--expected", str(_labels(tmp_path)), "--json").output
    )
    assert data["routing"]["per_worker"][0] == {
        "worker": "flaky",
        "true_positives": 1,
        "false_positives": 1,
        "false_negatives": 0,
        "precision": 0.5,
        "recall": 1.0,
        "f1": 0.666667,
    }
    assert data["routing"]["micro_f1"] == 0.8


def test_metrics_json(db: Path) -> None:
    result = lgsp("metrics", "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["completion"] == {
        "runs": 8,
        "by_status": {"done": 5, "failed": 1, "halted": 1, "running": 1},
        "by_halt_reason": {"max_steps": 1, "supervisor_error": 1},
        "completion_rate": 0.625,
    }
    assert data["hops"] == 16 and data["routing"] is None
    assert [(e["source"], e["target"], e["hops"]) for e in data["edges"]] == [
        ("ops", "incident", 1),
        ("ops", "notes", 2),
        ("ops/incident", "pager", 1),
        ("supervisor", "billing", 4),
        ("supervisor", "flaky", 2),
        ("supervisor", "looper", 3),
        ("supervisor", "ops", 1),
        ("supervisor", "tech_support", 1),
        ("supervisor", "writer", 1),
    ]
    assert {w["worker"]: w["retries"] for w in data["workers"] if w["retries"]} == {
        "flaky": 1,
        "ops/notes": 1,
    }
    assert data["alerts"] == ["summarizer"] and data["utilisation_alert"] == 0.7
    assert data["refusals"] == {
        "total": 1,
        "by_worker": {"tech_support": 1},
        "by_tool": {"refund": 1},
    }
    assert data["reviews"]["answered"] == 3 and data["reviews"]["deadline_breaches"] == 2
    assert data["reviews"]["escalation_rate"] == 0.333333
    assert data["reviews"]["pending"] == 1


def test_metrics_filters_by_since_and_graph(db: Path) -> None:
    data = json.loads(lgsp("metrics", "--db", str(db), "--graph", "team", "--json").output)
    assert data["completion"]["runs"] == 3
    assert data["completion"]["by_status"] == {"done": 1, "failed": 1, "halted": 1}
    recent = json.loads(lgsp("metrics", "--db", str(db), "--since", "1h", "--json").output)
    assert recent["completion"]["runs"] == 8
    future = lgsp("metrics", "--db", str(db), "--since", "2999-01-01T00:00:00", "--json")
    assert json.loads(future.output)["completion"] == {
        "runs": 0,
        "by_status": {},
        "by_halt_reason": {},
        "completion_rate": None,
    }
    text = lgsp("metrics", "--db", str(db), "--since", "2999-01-01")
    assert text.exit_code == 0, text.output
    assert f"Delegation metrics of 0 runs in {db}: 0 hops, completion -." in text.output


def test_metrics_alert_and_loop_visits_options(db: Path) -> None:
    data = json.loads(
        lgsp("metrics", "--db", str(db), "--alert", "0.4", "--loop-visits", "2", "--json").output
    )
    assert data["utilisation_alert"] == 0.4 and data["loop_visits"] == 2
    assert data["alerts"] == ["worker", "summarizer"]
    assert {w["worker"] for w in data["workers"] if w["loop_flags"]} == {
        "flaky",
        "looper",
        "ops/notes",
    }


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--since", "yesterday"], "--since: got 'yesterday'; give a duration such as 30m"),
        (["--graph", " "], "--graph: give a graph id"),
        (["--alert", "0"], "--alert: got 0.0; give a share of the window in (0, 1]"),
        (["--alert", "1.5"], "--alert: got 1.5;"),
        (["--alert", "nan"], "--alert: got nan;"),
        (["--loop-visits", "1"], "--loop-visits: got 1; give a whole number of visits >= 2"),
        (["--alert", "x"], "Invalid value for '--alert'"),
        (["--expected", "{dir}/missing.json"], "--expected {dir}/missing.json: cannot read it"),
        (["--expected", "{dir}/bad.json"], "--expected {dir}/bad.json: not JSON (line 1"),
        (["--expected", "{dir}/shape.json"], "--expected {dir}/shape.json['t']: got str"),
    ],
)
def test_bad_options_are_one_line_errors_with_code_2(
    db: Path, tmp_path: Path, args: list[str], says: str
) -> None:
    (tmp_path / "bad.json").write_text("{oops")
    (tmp_path / "shape.json").write_text('{"t": "billing"}')
    given = [a.format(dir=tmp_path) for a in args]
    error_line(lgsp("metrics", "--db", str(db), *given), says.format(dir=tmp_path))


@pytest.mark.parametrize(
    ("db", "says"),
    [
        ("{dir}/missing.db", "no checkpoint database at"),
        ("{dir}", "is a directory"),
        ("mysql://x@y/z", "unsupported scheme 'mysql'"),
        ("memory", "is a fresh, empty in-process database"),
        ("", "--db must not be empty"),
        ("postgresql://nobody:secret@127.0.0.1:1/none", "cannot open the checkpoint database"),
    ],
)
def test_bad_databases_are_one_line_errors_with_code_2(tmp_path: Path, db: str, says: str) -> None:
    line = error_line(lgsp("metrics", "--db", db.format(dir=tmp_path)), says)
    assert "secret" not in line


def test_a_database_that_is_not_a_checkpoint_database_is_a_one_line_error(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE checkpoints (x TEXT)")
    error_line(lgsp("metrics", "--db", str(db)), f"cannot read the runs in {db}")


def test_missing_db_option_is_a_one_line_error() -> None:
    error_line(lgsp("metrics"), "Missing option '--db'", "(see lgsp metrics --help)")


def test_metrics_on_postgres(pg_database: str, tmp_path: Path) -> None:
    with open_checkpointer(pg_database) as saver:
        record(saver)
    result = lgsp("metrics", "--db", pg_database)
    assert result.exit_code == 0, result.output
    shown = re.search(r"runs in (\S+):", result.output)
    assert shown is not None and "postgresql://" in shown.group(1)
    check_table(result.output, shown.group(1))
    data = json.loads(
        lgsp(
            "metrics",
            "--db",
            pg_database,
            "--json",
            "--graph",
            "tree",
            "--expected",
            str(_labels(tmp_path)),
        ).output
    )
    assert data["completion"]["runs"] == 1
    assert [(e["source"], e["target"], e["success_rate"]) for e in data["edges"]] == [
        ("ops", "incident", 1.0),
        ("ops", "notes", 0.5),
        ("ops/incident", "pager", 1.0),
        ("supervisor", "ops", 1.0),
    ]
    assert data["routing"]["labelled"] == 0
    assert data["routing"]["missing"] == ["nowhere", "retry"]


def test_metrics_html_writes_the_page(db: Path, tmp_path: Path) -> None:
    page = tmp_path / "metrics.html"
    page.write_text("an older page")
    result = lgsp("metrics", "--db", str(db), "--html", str(page))
    assert result.exit_code == 0, result.output
    assert result.output == f"Wrote the delegation metrics of 8 runs in {db} to {page}.\n"
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "<script" not in text
    assert f"8 runs, 16 hops in <bdi>{db}</bdi>" in text
    for chart in ("utilisation-chart", "handoffs-chart", "reviews-chart"):
        assert f'data-chart="{chart}"' in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.html"]
    # With --json the JSON is printed too, and the page holds the same filters' figures.
    both = lgsp("metrics", "--db", str(db), "--graph", "team", "--json", "--html", str(page))
    assert both.exit_code == 0, both.output
    data = json.loads(both.output)
    assert (data["completion"]["runs"], data["hops"]) == (3, 6)
    assert "3 runs, 6 hops in" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("{dir}", "--html {dir}: is a folder; give a file path such as {dir}/metrics.html"),
        ("{dir}/nowhere/m.html", "--html {dir}/nowhere/m.html: the folder {dir}/nowhere does not"),
        ("{dir}/file/m.html", "--html {dir}/file/m.html: the folder {dir}/file does not exist"),
        ("", "--html .: is a folder; give a file path such as metrics.html"),
    ],
)
def test_a_bad_html_path_is_a_one_line_error_before_anything_is_read(
    tmp_path: Path, target: str, says: str
) -> None:
    (tmp_path / "file").write_text("x")
    # The database does not exist: the path is checked first.
    error_line(
        lgsp("metrics", "--db", str(tmp_path / "none.db"), "--html", target.format(dir=tmp_path)),
        says.format(dir=tmp_path),
    )


def test_metrics_count_an_effect_left_in_doubt_on_postgres(pg_database: str) -> None:
    with open_checkpointer(pg_database) as saver, open_effects(pg_database) as effects:
        leave_an_effect_in_doubt(saver, effects, "mail-1")
    result = lgsp("metrics", "--db", pg_database)
    assert result.exit_code == 0, result.output
    assert "Effects: 1 recorded (intent 1), 1 not done: 1 in doubt, 0 settled after a doubt." in (
        result.output
    )
    data = json.loads(lgsp("metrics", "--db", pg_database, "--json").output)
    assert data["effects"] == {
        "recorded": 1,
        "doubted": 1,
        "in_doubt": 1,
        "settled_after_doubt": 0,
        "by_state": {"intent": 1},
    }


def test_metrics_read_effects_from_a_store_and_none_without_one(db: Path, tmp_path: Path) -> None:
    plain = lgsp("metrics", "--db", str(db), "--json")
    assert json.loads(plain.output)["effects"] is None
    assert "Effects:" not in lgsp("metrics", "--db", str(db)).output
    store = tmp_path / "effects.db"
    with open_store(f"sqlite:///{store}") as memory:
        StoreEffects(memory).run("retry/1/1/flaky/email", lambda key: "sent")
    result = lgsp("metrics", "--db", str(db), "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["effects"]["by_state"] == {"done": 1}
    text = lgsp("metrics", "--db", str(db), "--store", str(store)).output
    assert "Effects: 1 recorded (done 1), 0 not done: 0 in doubt" in text
    page = tmp_path / "m.html"
    assert (
        lgsp("metrics", "--db", str(db), "--store", str(store), "--html", str(page)).exit_code == 0
    )
    assert 'data-card="Effects in doubt"' in page.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def spend_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("spend") / "runs.db"
    with open_checkpointer(f"sqlite:///{path}") as saver:
        record_spend(saver)
    yield path


def test_metrics_show_cost_per_model_and_per_worker_and_the_budget(spend_db: Path) -> None:
    result = lgsp("metrics", "--db", str(spend_db))
    assert result.exit_code == 0, result.output
    output = result.output
    assert (
        "Model calls: 8 (1 estimated), 2,260 input and 260 output tokens, cost 0.00482 + 3 "
        "unpriced calls." in output
    )
    assert _row(output, "openai/gpt-4.1", "Cost per model") == [
        "openai/gpt-4.1",
        "5",
        "1,490",
        "230",
        "0",
        "0.00482",
    ]
    assert _row(output, "unknown", "Cost per model")[-1] == "unpriced (2 calls)"
    assert _row(output, "ollama/llama3", "Cost per model")[-2:] == ["1", "unpriced (1 call)"]
    assert _row(output, "billing", "Cost per worker") == [
        "billing",
        "5",
        "1,680",
        "170",
        "1",
        "0.0029 + 3 unpriced calls",
    ]
    assert (
        "Per ended turn (3): 840 tokens on average (max 1,200), cost 0.0021 on average over "
        "the 1 turn whose every call was priced." in output
    )
    assert "Budget: 2 warnings (0 approved, 0 rejected), 1 exceeded, 1 halted turn." in output
    assert "Halt reasons: budget_exceeded 1" in output


def test_metrics_json_carries_the_cost_and_budget_figures(spend_db: Path) -> None:
    data = json.loads(lgsp("metrics", "--db", str(spend_db), "--json").output)
    assert data["spend"]["cost"] == 0.00482 and data["spend"]["unpriced_calls"] == 3
    assert [(m["name"], m["spend"]["cost"]) for m in data["models"]] == [
        ("openai/gpt-4.1", 0.00482),
        ("unknown", None),
        ("ollama/llama3", None),
    ]
    assert data["workers"][0]["spend"]["total_tokens"] == 1850
    assert data["edges"][0]["spend"] == data["workers"][0]["spend"]
    assert data["turns"]["completed"] == 3
    assert data["budget"] == {
        "warnings": 2,
        "approved": 0,
        "rejected": 0,
        "exceeded": 1,
        "halts": 1,
    }


def test_metrics_without_calls_show_no_cost_tables(db: Path) -> None:
    result = lgsp("metrics", "--db", str(db), "--graph", "team")
    assert result.exit_code == 0, result.output
    assert "Cost per model" not in result.output and "Model calls:" not in result.output
    assert "Budget: 0 warnings (0 approved, 0 rejected), 0 exceeded, 0 halted turns." in (
        result.output
    )

"""`lgsp prune`: the dry run and the deletion on SQLite and real Postgres; every error path."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from langgraph_supervisor_pro import open_checkpointer, open_store
from langgraph_supervisor_pro.cli import app
from tests.cli._output import error_line
from tests.persistence._threads import ALL, FINISHED, heads, record, store_items

WIDE = {"COLUMNS": "200"}


def lgsp(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env=WIDE)


def recorded(url: str) -> None:
    with open_checkpointer(url) as saver, open_store(url) as store:
        record(saver, store)


def left(url: str) -> tuple[set[str], list[int]]:
    with open_checkpointer(url) as saver, open_store(url) as store:
        return heads(saver), [store_items(store, t) for t in FINISHED]


def rows(output: str) -> dict[str, list[str]]:
    """The table's rows by thread: status, age, then the counts."""
    found = {}
    for line in output.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and cells[0] in ALL and len(cells) > 3:
            found[cells[0]] = cells[1:]
    return found


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        db = f"sqlite:///{tmp_path / 'runs.db'}"
    else:
        db = request.getfixturevalue("pg_database")
    recorded(db)
    return db


def test_the_default_is_a_dry_run_that_says_what_would_go(url: str) -> None:
    result = lgsp("prune", "--db", url, "--older-than", "0s", "--store", url)
    assert result.exit_code == 0, result.output
    out = result.output
    first = out.splitlines()[0]
    assert re.match(r"Dry run: 4 finished threads \(done\) of 7 in \S+, last active before", first)
    assert first.endswith(" UTC, would be deleted.")
    table = rows(out)
    assert set(table) == {*FINISHED, "recent"}
    assert all(cells[0] == "done" and cells[1].endswith("min") for cells in table.values())
    # Store items: the recent thread's output; done-1's output and effect (its source is in
    # a namespace of the template's, cleared only with --store-namespace).
    assert [table["recent"][-1], table["done-1"][-1]] == ["1", "2"]
    assert re.search(r"^Would delete: \d+ checkpoints, \d+ writes, .*store items\.$", out, re.M)
    assert "Kept: 2 paused or mid-run, 1 with another status." in out
    assert "Nothing was deleted: run again with --yes to delete them." in out
    assert left(url) == (ALL, [3, 3, 3])


def test_yes_deletes_and_a_second_run_finds_nothing(url: str) -> None:
    args = ["prune", "--db", url, "--older-than", "0s", "--store", url]
    result = lgsp(*args, "--store-namespace", "research_team/sources", "--status", "done", "--yes")
    assert result.exit_code == 0, result.output
    assert "finished threads (done) of 7 in" in result.output
    assert ", deleted." in result.output.splitlines()[0]
    assert {cells[-1] for cells in rows(result.output).values()} == {"3", "1"}
    assert "Nothing was deleted" not in result.output
    assert left(url) == ({"halted", "paused", "mid-run"}, [0, 0, 0])
    again = lgsp(*args, "--yes", "--status", "halted", "--status", "failed")
    assert again.exit_code == 0, again.output
    assert again.output.startswith("1 finished thread (halted/failed) of 3 in")
    assert "Kept: 2 paused or mid-run." in again.output
    assert lgsp(*args, "--yes").output.startswith("0 finished threads (done) of 2 in")


def test_json_and_no_store(url: str) -> None:
    result = lgsp("prune", "--db", url, "--older-than", "1h", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["dry_run"] is True and data["scanned"] == 7
    assert data["threads"] == [] and data["kept"] == {"recent": 7}
    result = lgsp(
        "prune", "--db", url, "--older-than", "0s", "--json", "--yes", "--batch-size", "2"
    )
    data = json.loads(result.output)
    assert data["deleted"] == 4 and data["would_delete"] == 0
    assert {t["thread_id"] for t in data["threads"]} == {*FINISHED, "recent"}
    assert all("store_items" not in t["rows"] for t in data["threads"])
    assert data["totals"]["checkpoints"] == sum(t["rows"]["checkpoints"] for t in data["threads"])
    assert left(url)[1] == [3, 3, 3]  # no --store: the store is left alone


def test_text_without_store_says_so(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    recorded(f"sqlite:///{db}")
    result = lgsp("prune", "--db", str(db), "--older-than", "0s", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "Store items were not looked at: give --store to delete them too." in result.output
    assert "Store items" not in result.output.split("Would delete")[0].splitlines()[2]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--older-than", "-1d"], "--older-than: got '-1d'; give an age such as 30d"),
        (["--older-than", "NaNd"], "--older-than: got 'NaNd';"),
        (["--older-than", "1e999d"], "--older-than: got '1e999d';"),
        (["--older-than", ""], "--older-than: got '';"),
        (["--older-than", "30d\x00"], "--older-than: got '30d\\x00';"),
        (["--older-than", "36501d"], "--older-than: got '36501d'; give an age of at most 100"),
        (["--older-than", "30"], "--older-than: got '30';"),
        (["--older-than", "1d", "--status", "running"], "--status: got 'running'; give done"),
        (["--older-than", "1d", "--dry-run", "--yes"], "--dry-run and --yes: give one"),
        (["--older-than", "1d", "--batch-size", "0"], "--batch-size: got 0; give 1 to 10000"),
        (["--older-than", "1d", "--batch-size", "x"], "Invalid value for '--batch-size'"),
        (["--older-than", "1d", "--store-namespace", "a.b/c"], "--store-namespace: got 'a.b/c'"),
        (["--older-than", "1d", "--store-namespace", "a//c"], "--store-namespace: got 'a//c'"),
        (["--older-than", "1d", "--store", "{dir}/none.db"], "no store database at"),
        (["--older-than", "1d", "--store", "mysql://x"], "--store mysql://x: unsupported"),
    ],
)
def test_bad_options_are_one_line_errors_with_code_2(
    tmp_path: Path, args: list[str], says: str
) -> None:
    db = tmp_path / "runs.db"
    with open_checkpointer(f"sqlite:///{db}"):
        pass
    given = [a.format(dir=tmp_path) for a in args]
    error_line(lgsp("prune", "--db", str(db), *given), says.format(dir=tmp_path))


@pytest.mark.parametrize(
    ("db", "says"),
    [
        ("{dir}/missing.db", "no checkpoint database at"),
        ("{dir}", "is a directory"),
        ("memory", "is a fresh, empty in-process database"),
        ("", "--db must not be empty"),
        ("postgresql://nobody:secret@127.0.0.1:1/none", "cannot open the checkpoint database"),
    ],
)
def test_bad_databases_are_one_line_errors_with_code_2(tmp_path: Path, db: str, says: str) -> None:
    line = error_line(lgsp("prune", "--db", db.format(dir=tmp_path), "--older-than", "1d"), says)
    assert "secret" not in line


def test_a_database_that_is_not_a_checkpoint_database_is_a_one_line_error(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE checkpoints (x TEXT)")
    error_line(lgsp("prune", "--db", str(db), "--older-than", "1d"), f"the prune of {db} failed")


def test_missing_options_are_one_line_errors() -> None:
    error_line(lgsp("prune", "--older-than", "1d"), "Missing option '--db'", "lgsp prune --help")
    error_line(lgsp("prune", "--db", "x.db"), "Missing option '--older-than'")

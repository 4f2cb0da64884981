"""The `lgsp` command line: `lgsp demo` end to end, in-process and as a real console script."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro.cli import app
from langgraph_supervisor_pro.cli._demo import build_demo_team
from langgraph_supervisor_pro.cli._demo_render import DemoRenderer

WIDE = {"COLUMNS": "120"}  # rich reads the width from COLUMNS when not on a terminal


def run_demo(*args: str, env: dict[str, str] | None = None):
    result = CliRunner().invoke(app, ["demo", *args], env={**WIDE, **(env or {})})
    return result


def stored_state(db: Path, thread: str):
    with open_checkpointer(f"sqlite:///{db.resolve()}") as saver:
        graph = build_demo_team().compile(saver)
        config = {"configurable": {"thread_id": thread}}
        snapshot = graph.get_state(config)
        checkpoints = len(list(saver.list({"configurable": {"thread_id": thread}})))
    return snapshot, checkpoints


def ledger_rows(output: str) -> list[tuple[str, str, str, str]]:
    """(step, worker, routed by, status) for each row of the ledger table."""
    pattern = re.compile(r"^│\s+(\d+) │ (\w+)\s+│ (\w+)\s+│ (\w+)\s+│", re.M)
    return pattern.findall(output)


def flat(text: str) -> str:
    """Fold white space (rich wraps long lines) to single spaces."""
    return " ".join(text.split())


def in_order(text: str, *needles: str) -> None:
    """Each needle occurs in `text`, after the previous one (white space folded)."""
    text, position = flat(text), 0
    for needle in needles:
        found = text.find(flat(needle), position)
        assert found >= 0, f"{needle!r} not found after position {position} in:\n{text}"
        position = found + len(flat(needle))


# --------------------------------------------------------------------------- the demo


def test_demo_shows_every_decision_the_recovery_the_ledger_and_the_answer(tmp_path):
    db = tmp_path / "demo.db"
    result = run_demo("--delay", "0", "--db", str(db), "--thread-id", "launch-de")
    out = result.output
    assert result.exit_code == 0, out
    assert "Traceback" not in out
    assert "\x1b[" not in out  # not a terminal: no colour codes

    # Each routing decision, as it happened, in order; with the worker events in between.
    in_order(
        out,
        "Step 1",
        "supervisor → researcher   decided by model",
        "researcher calls search_market_data(country='DE', segment='team note-taking software')",
        "search_market_data returned",
        "✔ researcher success  EUR 1.9bn market",
        "Step 2",
        # the hallucinated route: rejected with the validation error, re-asked, recovered
        "✗ supervisor chose 'marketing' — rejected: next: Input should be 'researcher', "
        "'analyst', 'writer' or 'FINISH' (got 'marketing'). Re-asked with the error.",
        "supervisor → analyst   decided by model, after 1 re-ask",
        "▰▱▱▱ analyst loading the pilot cohort",
        # the failed hop
        "✘ analyst failed  ValueError: pilot churn data has gaps (Jul, Aug missing)",
        "Step 3",
        "supervisor → analyst   decided by model",
        "“Retry, and impute the missing churn months with the cohort median",
        "▰▰▱▱ analyst imputed 2 missing months (Jul, Aug)",
        "▰▰▰▰ analyst break-even: conservative month 20, base month 16, optimistic month 13",
        "✔ analyst success  Base case: EUR 313k year-one revenue, break-even in month 16",
        "Step 4",
        "supervisor → writer   decided by model",
        "✔ writer success  Memo drafted: Go",
        "FINISH",
        "supervisor → FINISH   decided by model",
        "Ledger",
        "Final answer",
        "Recommendation: launch",
        "Go: launch in Germany next quarter",
        "Synthesised from the successful hops: researcher (hop 1), analyst (hop 3), "
        "writer (hop 4).",
        "done · 4 hops · 1 failed, re-routed · 1 invalid route re-asked",
        "launch-de",
    )
    assert out.count("✗ supervisor chose") == 1  # one rejected proposal, no more
    assert ledger_rows(out) == [
        ("1", "researcher", "model", "success"),
        ("2", "analyst", "model", "failed"),
        ("3", "analyst", "model", "success"),
        ("4", "writer", "model", "success"),
    ]
    assert f"lgsp demo --db {db} --thread-id launch-de" in flat(out)
    assert "12 of the supervisor graph (17 with worker subgraphs)" in out

    # The SQLite file holds the thread's checkpoints, and its final state.
    snapshot, checkpoints = stored_state(db, "launch-de")
    assert checkpoints == 17
    assert snapshot.next == ()
    values = snapshot.values
    assert values["status"] == "done"
    assert [(e["worker"], e["status"]) for e in values["ledger"]] == [
        ("researcher", "success"),
        ("analyst", "failed"),
        ("analyst", "success"),
        ("writer", "success"),
    ]
    assert "ValueError" in values["ledger"][1]["error"]
    assert values["messages"][-1].content.startswith("### Recommendation: launch")


def test_demo_is_deterministic(tmp_path):
    first = run_demo("--delay", "0", "--db", str(tmp_path / "a" / "demo.db"), "--thread-id", "t")
    second = run_demo("--delay", "0", "--db", str(tmp_path / "b" / "demo.db"), "--thread-id", "t")
    assert first.exit_code == second.exit_code == 0
    assert first.output.replace(f"{tmp_path}/a", "X") == second.output.replace(f"{tmp_path}/b", "X")


def test_rerunning_a_thread_shows_its_stored_state_without_running_again(tmp_path):
    db = tmp_path / "demo.db"
    assert run_demo("--delay", "0", "--db", str(db), "--thread-id", "t1").exit_code == 0
    _, before = stored_state(db, "t1")

    result = run_demo("--delay", "0", "--db", str(db), "--thread-id", "t1")
    out = result.output
    assert result.exit_code == 0, out
    assert "Thread t1 already ran: showing its stored state." in flat(out)
    assert "supervisor →" not in out  # nothing was routed again
    assert len(ledger_rows(out)) == 4
    assert "Recommendation: launch" in out
    assert "done · 4 hops" in out
    assert stored_state(db, "t1")[1] == before  # no new checkpoints


def test_an_interrupted_thread_resumes_from_its_checkpoint(tmp_path):
    db = tmp_path / "demo.db"
    config = {"configurable": {"thread_id": "crash"}}
    with open_checkpointer(f"sqlite:///{db}") as saver:
        team = build_demo_team()
        graph = team.compile(saver)
        stream = graph.stream(
            {"messages": [("user", team.task)]},
            config,
            stream_mode="updates",
            durability="sync",
        )
        for update in stream:
            entries = [
                e for v in update.values() if isinstance(v, dict) for e in v.get("ledger", [])
            ]
            if any(e["status"] == "failed" for e in entries):
                break  # the process "dies" right after the analyst's failed hop
        stream.close()
        assert graph.get_state(config).values["status"] == "running"

    result = run_demo("--delay", "0", "--db", str(db), "--thread-id", "crash")
    out = result.output
    assert result.exit_code == 0, out
    assert "Resuming crash from its last checkpoint" in flat(out)
    assert "Step 1" not in out  # the researcher's hop is not run again
    in_order(out, "supervisor → writer", "supervisor → FINISH", "Recommendation: launch")
    values = stored_state(db, "crash")[0].values
    assert values["status"] == "done"
    assert [e["worker"] for e in values["ledger"]] == ["researcher", "analyst", "analyst", "writer"]


def test_default_database_is_lgsp_demo_db_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_demo("--delay", "0")
    assert result.exit_code == 0, result.output
    assert ".lgsp/demo.db (default)" in result.output
    thread = re.search(r"thread (demo-[0-9a-f]{8})", result.output)
    assert thread, result.output
    snapshot, checkpoints = stored_state(tmp_path / ".lgsp" / "demo.db", thread.group(1))
    assert snapshot.values["status"] == "done"
    assert checkpoints > 0


def test_plain_turns_colour_off_even_when_colour_is_forced(tmp_path):
    coloured = run_demo("--delay", "0", "--db", str(tmp_path / "a.db"), env={"FORCE_COLOR": "1"})
    plain = run_demo(
        "--delay", "0", "--plain", "--db", str(tmp_path / "b.db"), env={"FORCE_COLOR": "1"}
    )
    assert coloured.exit_code == plain.exit_code == 0
    assert "\x1b[" in coloured.output
    assert "\x1b[" not in plain.output
    assert "Recommendation: launch" in plain.output


# --------------------------------------------------------------------------- errors


def test_database_under_a_regular_file_fails_with_a_clear_message(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("just a file")
    result = run_demo("--delay", "0", "--db", str(blocker / "demo.db"))
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "Error: cannot open the checkpoint database" in flat(result.output)
    assert str(blocker / "demo.db") in result.output.replace("\n", "")


def test_database_that_is_not_sqlite_fails_with_a_clear_message(tmp_path):
    bogus = tmp_path / "notes.txt"
    bogus.write_text("this is not a database, " * 200)
    result = run_demo("--delay", "0", "--db", str(bogus))
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "Error: cannot open the checkpoint database" in flat(result.output)
    assert "not a database" in flat(result.output)


def test_database_that_is_a_directory_fails_with_a_clear_message(tmp_path):
    result = run_demo("--delay", "0", "--db", str(tmp_path))
    assert result.exit_code != 0
    assert "Traceback" not in result.output


def test_negative_delay_is_a_usage_error(tmp_path):
    result = run_demo("--delay", "-1", "--db", str(tmp_path / "d.db"))
    assert result.exit_code == 2
    assert "--delay" in result.output


def test_help_and_version():
    runner = CliRunner()
    top = runner.invoke(app, ["--help"], env=WIDE)
    assert top.exit_code == 0
    assert "demo" in top.output
    sub = runner.invoke(app, ["demo", "--help"], env=WIDE)
    assert sub.exit_code == 0
    for option in ("--db", "--thread-id", "--delay", "--plain"):
        assert option in sub.output
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0
    assert version.output.startswith("lgsp ")


# --------------------------------------------------------------------------- the renderer


def test_renderer_pauses_after_each_event_and_reports_a_halt():
    pauses: list[float] = []
    out = io.StringIO()
    renderer = DemoRenderer(
        console=Console(file=out, width=100),
        team=build_demo_team(),
        delay=0.5,
        sleep=pauses.append,
    )
    renderer.handle(
        {
            "type": "updates",
            "ns": (),
            "data": {
                "supervisor": {
                    "route": None,
                    "status": "halted",
                    "halt_reason": "max_steps",
                    "halt_detail": "the run used its budget of 8 hops",
                }
            },
        }
    )
    renderer.handle({"type": "custom", "ns": (), "data": {"note": "free-form event"}})
    renderer.finish()
    text = out.getvalue()
    assert "run stopped: max_steps — the run used its budget of 8 hops" in flat(text)
    assert "free-form event" in text
    assert pauses and all(p > 0 for p in pauses)


# --------------------------------------------------------------------------- real processes


def _commands() -> list[list[str]]:
    script = shutil.which("lgsp", path=str(Path(sys.executable).parent)) or shutil.which("lgsp")
    commands = [[sys.executable, "-m", "langgraph_supervisor_pro.cli"]]
    if script:
        commands.insert(0, [script])
    return commands


@pytest.mark.parametrize("command", _commands(), ids=lambda c: Path(c[-1]).name)
def test_console_script_runs_the_demo_in_a_real_process(tmp_path, command):
    db = tmp_path / "demo.db"
    env = {**os.environ, **WIDE, "PYTHONWARNINGS": "error"}
    env.pop("FORCE_COLOR", None)
    proc = subprocess.run(
        [*command, "demo", "--delay", "0", "--db", str(db), "--thread-id", "proc"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    in_order(
        proc.stdout,
        "supervisor → researcher",
        "✗ supervisor chose 'marketing'",
        "✘ analyst failed",
        "✔ writer success",
        "supervisor → FINISH",
        "Recommendation: launch",
        "done · 4 hops",
    )
    assert stored_state(db, "proc")[0].values["status"] == "done"


def test_console_script_reports_a_bad_database_without_a_traceback(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = subprocess.run(
        [*_commands()[0], "demo", "--delay", "0", "--db", str(blocker / "demo.db")],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, **WIDE},
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "Error: cannot open the checkpoint database" in flat(proc.stderr)

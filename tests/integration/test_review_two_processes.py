"""Durable reviews: a run paused on Postgres in one process is resumed by another, later.

Process A (`tests/integration/_review_app.py`) starts a billing run on Postgres; the
high-risk refund pauses it at a review and the process exits without resuming.
Process B, started afterwards, is the real `lgsp` command (the console script, or
`python -m langgraph_supervisor_pro.cli`): `lgsp review list` shows the review and
`lgsp review approve ... --graph tests/integration/_review_app.py:build` answers it;
the run completes in process B. This test process then reads the final state back
from Postgres: the run is done and the refund ran exactly once, in process B.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro.review._desk import list_reviews
from tests.integration import _review_app as app_module
from tests.integration._proc import ROOT, child_env, read_jsonl

pytestmark = pytest.mark.integration

SCRIPT = Path(app_module.__file__).resolve()
TIMEOUT = 120.0
"""Seconds a child process gets (it imports the package and runs one or two hops)."""


def commands() -> list[list[str]]:
    """The `lgsp` command: the installed console script, and `python -m`."""
    script = shutil.which("lgsp", path=str(Path(sys.executable).parent))
    found = [[sys.executable, "-m", "langgraph_supervisor_pro.cli"]]
    if script:
        found.insert(0, [script])
    return found


def review_env(log: Path) -> dict[str, str]:
    env = child_env({"PYTHONWARNINGS": "error", "COLUMNS": "200", app_module.LOG_ENV: str(log)})
    env.pop("FORCE_COLOR", None)
    return env


def run(args: list[str], log: Path) -> tuple[int, subprocess.CompletedProcess[str]]:
    """Run one child process to its end; return its pid and what it printed."""
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        env=review_env(log),
    )
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        pytest.fail(f"{args} did not finish in {TIMEOUT:g} s\n{stdout}\n{stderr}")
    return proc.pid, subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)


def refunds(log: Path) -> list[dict[str, Any]]:
    return read_jsonl(log)


def pause_in_process_a(uri: str, thread: str, log: Path) -> tuple[int, dict[str, Any]]:
    pid, done = run([sys.executable, str(SCRIPT), "--uri", uri, "--thread", thread], log)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["pid"] == pid
    assert [(p["kind"], p["action"]) for p in summary["pending"]] == [("tool", "refund")]
    assert refunds(log) == []  # paused before the refund ran
    return pid, summary


def final_state(uri: str, thread: str) -> Any:
    with open_checkpointer(uri) as saver:
        graph = app_module.build().compile(checkpointer=saver)
        snapshot = graph.get_state({"configurable": {"thread_id": thread}})
        pending = list_reviews(saver)
    return snapshot, pending


@pytest.mark.parametrize("command", commands(), ids=lambda c: Path(c[-1]).name)
def test_a_review_paused_in_one_process_is_approved_in_another(pg_database, tmp_path, command):
    thread = f"review-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "refunds.jsonl"
    pid_a, summary = pause_in_process_a(pg_database, thread, log)

    # Process A is gone; the review waits in Postgres, visible to any process.
    _, listed = run([*command, "review", "list", "--db", pg_database, "--json"], log)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    (review,) = json.loads(listed.stdout)
    assert (review["thread_id"], review["interrupt_id"]) == (thread, summary["pending"][0]["id"])
    assert (review["action"], review["worker"], review["reviewers"]) == (
        "refund",
        "billing",
        "support",
    )

    graph_spec = f"{SCRIPT.relative_to(ROOT)}:build"
    pid_b, approved = run(
        [
            *command, "review", "approve", "--db", pg_database, "--graph", graph_spec,
            "--thread", thread, "--json",
        ],
        log,
    )  # fmt: skip
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert approved.stderr == ""
    report = json.loads(approved.stdout)
    assert report["status"] == "done" and report["pending"] == []
    assert report["answer"] == "Done: refunded 30 on O-7"
    assert pid_b != pid_a

    # Read back from Postgres here: the run completed, and the refund ran once, in B.
    snapshot, pending = final_state(pg_database, thread)
    values = snapshot.values
    assert values["status"] == "done" and snapshot.next == ()
    assert [(e["worker"], e["status"]) for e in values["ledger"]] == [("billing", "success")]
    assert values["messages"][-1].content == "Done: refunded 30 on O-7"
    tool_messages = [
        m for m in values["workers"]["billing"]["messages"] if isinstance(m, ToolMessage)
    ]
    assert [m.content for m in tool_messages] == ["refunded 30 on O-7"]
    assert tool_messages[0].additional_kwargs["lgsp_review"]["decision"] == "approve"
    assert refunds(log) == [{"pid": pid_b, "order_id": "O-7", "amount": 30}]
    assert pending == []


def test_an_expired_review_is_swept_by_another_process(pg_database, tmp_path):
    thread = f"sweep-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "refunds.jsonl"
    pause_in_process_a(pg_database, thread, log)

    graph_spec = f"{SCRIPT}:build"
    _, swept = run(
        [
            *commands()[0], "review", "sweep", "--db", pg_database, "--graph", graph_spec,
            "--now", "2100-01-01T00:00:00+00:00", "--json",
        ],
        log,
    )  # fmt: skip
    assert swept.returncode == 0, swept.stdout + swept.stderr
    (action,) = json.loads(swept.stdout)
    assert (action["thread_id"], action["action"]) == (thread, "reject")
    assert action["message"].endswith("; rejected by the sweep")

    snapshot, pending = final_state(pg_database, thread)
    assert snapshot.values["status"] == "done" and pending == []
    tool_messages = [
        m.content
        for m in snapshot.values["workers"]["billing"]["messages"]
        if isinstance(m, ToolMessage)
    ]
    assert tool_messages == [f"The reviewer rejected this call: {action['message']}"]
    assert refunds(log) == []  # fail closed: the refund never ran

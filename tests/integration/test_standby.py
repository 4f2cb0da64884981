"""One writer per thread and hot standby, with real processes on real Postgres.

The child is `tests/integration/_standby_app.py`: a four-hop team (the first hop
charges exactly once through `PostgresEffects`) run under `thread_lease`. The standby
is the real command, `lgsp standby --db ... --graph tests/integration/_standby_app.py:graph`,
in a process of its own.

- Takeover: the standby runs first and leaves the live primary alone; the primary is
  SIGKILLed inside hop 3; the standby takes the thread over within the lease time and
  finishes the run: every hop in the ledger once, hops 1-2 (and the charge) never
  re-run, the killed hop re-run once.
- Two processes at once on one thread: the second gets `ThreadBusyError` naming the
  first (exit 4); with `--wait` it runs after the first has finished.
"""

from __future__ import annotations

import itertools
import json
import signal
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest

from langgraph_supervisor_pro.persistence._effects import _legacy_key
from langgraph_supervisor_pro.persistence._leases import DEFAULT_EXPIRE_AFTER
from tests.integration import _standby_app as app_module
from tests.integration._app_common import LOG_NAME, MARKER_NAME, RELEASE_NAME
from tests.integration._proc import (
    ROOT,
    Child,
    Children,
    head_and_history,
    read_jsonl,
    wait_for_marker,
)
from tests.integration._standby_app import DB_ENV, PLAN, WORKDIR_ENV, Context, build_graph

pytestmark = pytest.mark.integration

SCRIPT = Path(app_module.__file__).resolve()
CLI = ROOT / "langgraph_supervisor_pro" / "cli" / "__main__.py"
GRAPH_SPEC = "tests/integration/_standby_app.py:graph"
TAKEOVER_TIMEOUT = 60.0


def ran(log: list[dict[str, Any]], phase: str, kind: str) -> list[tuple[str, int]]:
    return [(e["name"], e["step"]) for e in log if e["phase"] == phase and e["kind"] == kind]


def lease_rows(uri: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(uri) as conn:
        return conn.execute("SELECT thread_id, owner FROM lgsp_thread_leases").fetchall()


def payments(uri: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(uri) as conn:
        return conn.execute("SELECT key, amount FROM payments").fetchall()


def json_lines(child: Child) -> list[dict[str, Any]]:
    lines = child.stdout_path.read_text().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def wait_for_takeover(standby: Child, thread_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + TAKEOVER_TIMEOUT
    while time.monotonic() < deadline:
        found = [t for t in json_lines(standby) if t["thread_id"] == thread_id]
        if found:
            return found[0]
        if standby.proc.poll() is not None:
            pytest.fail(f"the standby exited\n{standby.output()}")
        time.sleep(0.05)
    pytest.fail(f"no takeover of {thread_id} within {TAKEOVER_TIMEOUT:g} s\n{standby.output()}")


def assert_single_chain(uri: str, thread_id: str) -> Any:
    head, history = head_and_history(
        build_graph(Context(Path("."), "inspect"), uri), uri, thread_id
    )
    for parent, child in itertools.pairwise(history):
        assert child.parent_config is not None
        assert (
            child.parent_config["configurable"]["checkpoint_id"]
            == (parent.config["configurable"]["checkpoint_id"])
        )
    return head


def test_standby_takes_over_a_killed_primary(pg_database, tmp_path, monkeypatch):
    monkeypatch.setenv(DB_ENV, pg_database)
    monkeypatch.setenv(WORKDIR_ENV, str(tmp_path))
    thread_id = f"standby-{uuid.uuid4().hex[:8]}"
    with Children(SCRIPT, tmp_path) as children:
        standby = Child(
            CLI,
            tmp_path,
            "standby",
            ["standby", "--db", pg_database, "--graph", GRAPH_SPEC, "--interval", "0.2",
             "--owner", "standby-1", "--json"],
        )  # fmt: skip
        children.started.append(standby)
        primary = children.start(
            "primary",
            ["--uri", pg_database, "--thread", thread_id, "--workdir", str(tmp_path),
             "--phase", "run", "--block", "worker:3"],
        )  # fmt: skip
        marker = wait_for_marker(primary, tmp_path / MARKER_NAME)
        assert marker == {"pid": primary.proc.pid, "kind": "worker", "name": "writer", "step": 3}
        # The primary is alive: its lease is held, and the standby leaves it alone.
        assert lease_rows(pg_database) == [(thread_id, f"primary:{primary.proc.pid}")]
        time.sleep(1.5)  # several sweeps
        assert json_lines(standby) == [], standby.output()
        assert ran(read_jsonl(tmp_path / LOG_NAME), "standby", "worker") == []

        primary.sigkill()
        killed_at = time.monotonic()
        takeover = wait_for_takeover(standby, thread_id)
        took = time.monotonic() - killed_at
        assert took < DEFAULT_EXPIRE_AFTER, f"took {took:.1f} s"
        assert takeover["outcome"] == "finished", takeover
        assert takeover["pending"] == ["writer"]
        assert takeover["status"] == "done"

        standby.proc.send_signal(signal.SIGTERM)  # stops between sweeps, exit 0
        assert standby.wait() == 0, standby.output()

    log = read_jsonl(tmp_path / LOG_NAME)
    # Before the kill: hops 1-3 started, the charge ran once (hop 3 was killed inside).
    assert ran(log, "run", "worker") == [("cashier", 1), ("researcher", 2), ("writer", 3)]
    assert ran(log, "run", "effect") == [("charge", 1)]
    # The standby re-ran the killed hop once and the one after it; nothing completed before
    # the kill ran again, and the charge was not made again.
    assert ran(log, "standby", "worker") == [("writer", 3), ("reviewer", 4)]
    assert ran(log, "standby", "effect") == []
    runs = Counter(name for e in log if e["kind"] == "worker" for name in [e["name"]])
    assert runs == {"cashier": 1, "researcher": 1, "writer": 2, "reviewer": 1}
    ((key, amount),) = payments(pg_database)
    assert (_legacy_key(key), amount) == (f"{thread_id}/1/1/cashier/charge", 42)

    head = assert_single_chain(pg_database, thread_id)
    values = head.values
    assert head.next == () and values["status"] == "done"
    assert [(e["step"], e["worker"], e["status"]) for e in values["ledger"]] == [
        (i, w, "success") for i, w in enumerate(PLAN, start=1)
    ]
    assert values["ledger"][0]["summary"].startswith("cashier result for hop 1 (payment ")
    assert lease_rows(pg_database) == []  # the standby released its lease


def test_two_processes_at_once_one_writer(pg_database, tmp_path):
    thread_id = f"two-{uuid.uuid4().hex[:8]}"
    common = ["--uri", pg_database, "--thread", thread_id, "--workdir", str(tmp_path),
              "--phase", "run"]  # fmt: skip
    with Children(SCRIPT, tmp_path) as children:
        first = children.start("first", [*common, "--block", "worker:2"])
        wait_for_marker(first, tmp_path / MARKER_NAME)

        second = children.start("second", common)
        assert second.wait() == 4, second.output()
        [busy] = json_lines(second)
        assert busy["busy"] == thread_id
        assert busy["holder"] == f"primary:{first.proc.pid}"
        assert f"held by primary:{first.proc.pid}" in busy["error"]

        third = children.start("third", [*common, "--wait", "60"])
        time.sleep(1.0)
        assert third.proc.poll() is None  # waiting for the lease
        (tmp_path / RELEASE_NAME).touch()
        assert first.wait() == 0, first.output()
        assert third.wait() == 0, third.output()

    log = read_jsonl(tmp_path / LOG_NAME)
    by_pid = Counter(e["pid"] for e in log if e["kind"] == "worker")
    assert by_pid == {first.proc.pid: len(PLAN), third.proc.pid: len(PLAN)}
    assert second.proc.pid not in {e["pid"] for e in log}  # it never ran a hop
    # The third took the lease after the first had finished: its first line comes after
    # the first's last.
    order = [e["pid"] for e in log]
    last_first = max(i for i, pid in enumerate(order) if pid == first.proc.pid)
    first_third = min(i for i, pid in enumerate(order) if pid == third.proc.pid)
    assert last_first < first_third
    head = assert_single_chain(pg_database, thread_id)
    assert head.values["status"] == "done" and head.values["turn"] == 2
    assert lease_rows(pg_database) == []

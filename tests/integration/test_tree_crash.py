"""A three-level tree of supervisors survives SIGKILL at depth 2 and 3 (real processes)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.integration import _tree_crash_app as app_module
from tests.integration._proc import kill_and_resume
from tests.integration._tree_crash_app import LEAVES, leaf_result

pytestmark = pytest.mark.integration

SCRIPT = Path(app_module.__file__).resolve()


def ran(log: list[dict[str, Any]], phase: str, kind: str) -> list[tuple[str, int]]:
    return [(e["name"], e["step"]) for e in log if e["phase"] == phase and e["kind"] == kind]


def crash(
    uri: str, workdir: Path, block: str, mode: str, *, fanout: bool = False, **kwargs: Any
) -> dict[str, Any]:
    common = [
        "--uri", uri, "--thread", f"tree-{uuid.uuid4().hex[:8]}",
        "--workdir", str(workdir), "--mode", mode, *(["--fanout"] if fanout else []),
    ]  # fmt: skip
    return kill_and_resume(SCRIPT, workdir, common, ["--block", block], **kwargs)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("hop", [1, 2, 3])
def test_a_kill_inside_a_leaf_three_levels_down_resumes_with_no_hop_lost_or_repeated(
    pg_database, tmp_path, mode, hop
):
    result = crash(pg_database, tmp_path, f"leaf:{hop}", mode)
    assert result["marker"]["step"] == hop
    everything = [(name, step) for step, name in enumerate(LEAVES, start=1)]
    # Before the kill: the leaves up to the blocked one ran once each.
    assert ran(result["log"], "run", "leaf") == everything[:hop]
    # After it: the killed hop ran again (it never completed), the rest once;
    # no hop that had completed ran twice.
    assert ran(result["log"], "resume", "leaf") == everything[hop - 1 :]
    summary = result["summary"]
    assert summary["status"] == "done"
    assert summary["ledger"] == [[1, "ops", "success"]]
    assert summary["answer"] == leaf_result(LEAVES[-1], len(LEAVES))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_kill_in_a_domains_decision_resumes(pg_database, tmp_path, mode):
    result = crash(pg_database, tmp_path, "ops:1", mode)
    assert ran(result["log"], "run", "leaf") == []
    assert ran(result["log"], "resume", "leaf") == [
        (name, step) for step, name in enumerate(LEAVES, start=1)
    ]
    assert result["summary"]["status"] == "done"
    assert result["summary"]["ledger"] == [[1, "ops", "success"]]


def _root_ledger_writes(uri: str) -> int:
    """Ledger writes the root has saved for its pending super-step (finished branches)."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        row = conn.execute(
            "select count(*) from checkpoint_writes where checkpoint_ns = '' and channel = 'ledger'"
        ).fetchone()
    return int(row[0]) if row else 0


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("hop", [1, 3])
def test_a_kill_in_one_branch_of_a_fan_out_keeps_the_finished_branch(
    pg_database, tmp_path, mode, hop
):
    import time

    def sibling_saved() -> None:
        deadline = time.monotonic() + 60
        while _root_ledger_writes(pg_database) < 1:
            assert time.monotonic() < deadline, "the comms branch never saved its hop"
            time.sleep(0.05)

    result = crash(
        pg_database, tmp_path, f"leaf:{hop}", mode, fanout=True, while_blocked=sibling_saved
    )
    everything = [(name, step) for step, name in enumerate(LEAVES, start=1)]
    assert ran(result["log"], "run", "sibling") == [("comms", 2)]
    # The finished branch's writes were kept: it did not run again after the kill.
    assert ran(result["log"], "resume", "sibling") == []
    assert ran(result["log"], "resume", "leaf") == everything[hop - 1 :]
    summary = result["summary"]
    assert summary["status"] == "done"
    # One line per branch (their order is the order LangGraph applied the writes).
    assert sorted(summary["ledger"]) == [[1, "ops", "success"], [2, "comms", "success"]]

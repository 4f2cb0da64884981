"""Crash tests: SIGKILL a real process in the middle of a run, resume in a new one.

The child process is `tests/integration/_crash_app.py`: a four-hop team
(researcher: sync function, analyst: async function, writer: sync function,
reviewer: a compiled LangGraph graph) on Postgres with `durability="sync"`. In
the `run` phase one hop (a worker, the supervisor's decision, or a node inside
the subgraph worker) logs its execution, writes a marker file and blocks; the
test then kills the process with SIGKILL and starts a new one with `--phase
resume`, which continues the same thread with `invoke(None, config)`.

Every execution is appended (fsynced) to `executions.jsonl` with the phase it ran
in, so the test can count what ran before and after the crash. The final state
is read back from Postgres in the test process.
"""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from tests.integration import _crash_app as app_module
from tests.integration._app_common import RELEASE_NAME
from tests.integration._crash_app import PLAN, Context, build_graph, instructions_for, worker_result
from tests.integration._proc import head_and_history, kill_and_resume

pytestmark = pytest.mark.integration

SCRIPT = Path(app_module.__file__).resolve()
HOPS = len(PLAN)
# The root checkpoints of a clean four-hop run, oldest first.
CLEAN_NEXT = [
    ("__start__",),
    ("supervisor",),
    *[x for worker in PLAN for x in ((worker,), ("supervisor",))],
    ("synthesis",),
    (),
]


def ran(log: list[dict[str, Any]], phase: str, kind: str) -> list[tuple[str, int]]:
    return [(e["name"], e["step"]) for e in log if e["phase"] == phase and e["kind"] == kind]


def read_final_state(uri: str, thread_id: str) -> tuple[Any, list[Any]]:
    """The thread's head snapshot and its root history (oldest first), read in this process."""
    return head_and_history(build_graph(Context(Path("."), phase="inspect")), uri, thread_id)


def crash_and_resume(
    uri: str, workdir: Path, *, block: str, mode: str, decider: str
) -> dict[str, Any]:
    """Run until the blocking point, SIGKILL, resume in a new process; return what happened."""
    thread_id = f"crash-{uuid.uuid4().hex[:8]}"
    common = [
        "--uri", uri, "--thread", thread_id, "--workdir", str(workdir),
        "--mode", mode, "--decider", decider,
    ]  # fmt: skip

    def not_released() -> None:
        assert not (workdir / RELEASE_NAME).exists()

    result = kill_and_resume(
        SCRIPT, workdir, common, ["--block", block], while_blocked=not_released
    )
    result["head"], result["history"] = read_final_state(uri, thread_id)
    return result


def assert_completed_exactly_once(result: dict[str, Any], decider: str) -> None:
    """The run finished, and the ledger holds every hop 1..HOPS exactly once, in order."""
    head, history, summary = result["head"], result["history"], result["summary"]
    values = head.values
    assert head.next == ()
    assert values["status"] == "done", values.get("halt_detail")
    assert summary["status"] == "done"
    expected: list[dict[str, Any]] = [
        {
            "turn": 1,
            "step": hop,
            "worker": worker,
            "instructions": instructions_for(hop),
            "decided_by": decider,
            "status": "success",
            "summary": worker_result(worker, hop),
            "error": None,
            "refused": [],
        }
        for hop, worker in enumerate(PLAN, start=1)
    ]
    assert values["ledger"] == expected
    assert [e["step"] for e in values["ledger"]] == list(range(1, HOPS + 1))
    assert (values["turn"], values["step"], values["route"]) == (1, HOPS, None)
    assert values["messages"][-1].content == worker_result(PLAN[-1], HOPS)
    assert [type(m).__name__ for m in values["messages"]] == ["HumanMessage", "AIMessage"]
    # Each worker slot holds its single hop: one prompt, one answer, one result.
    for hop, worker in enumerate(PLAN, start=1):
        slot = values["workers"][worker]
        assert [r["result"] for r in slot["results"]] == [worker_result(worker, hop)], worker
        prompts = [m for m in slot["messages"] if isinstance(m, HumanMessage)]
        assert len(prompts) == 1, (worker, slot["messages"])
        assert slot["messages"][-1].content == worker_result(worker, hop)
    # The checkpoints across both processes form the same chain as a clean run:
    # nothing was checkpointed twice, nothing skipped.
    assert [s.next for s in history] == CLEAN_NEXT
    assert [s.metadata["step"] for s in history] == list(range(-1, len(CLEAN_NEXT) - 1))
    lengths = [len(s.values.get("ledger") or []) for s in history]
    assert lengths == sorted(lengths) and lengths[-1] == HOPS


# --------------------------------------------------------------------------- tests

MODES = pytest.mark.parametrize(
    ("mode", "decider"),
    [(m, d) for m in ("sync", "async") for d in ("model", "router")],
    ids=lambda value: value,
)


@MODES
def test_kill_inside_a_worker_then_resume_in_a_new_process(pg_database, tmp_path, mode, decider):
    killed_hop = 3  # the writer's hop
    result = crash_and_resume(
        pg_database, tmp_path, block=f"worker:{killed_hop}", mode=mode, decider=decider
    )
    assert result["marker"] == {
        "pid": result["run_pid"], "kind": "worker", "name": "writer", "step": killed_hop
    }  # fmt: skip
    # The new process found the thread waiting at the killed hop: the route to the writer
    # had been checkpointed before the writer started.
    assert result["summary"]["pending_at_start"] == ["writer"]
    assert_completed_exactly_once(result, decider)

    log = result["log"]
    assert result["before"] == [e for e in log if e["phase"] == "run"]
    # Before the kill: decisions for hops 1-3 and workers 1-3 (the writer was killed inside).
    assert ran(log, "run", "decision") == [(decider, 1), (decider, 2), (decider, 3)]
    assert ran(log, "run", "worker") == [("researcher", 1), ("analyst", 2), ("writer", 3)]
    # After: the interrupted hop re-ran once, the supervisor was not asked again for it
    # and continued with the hops after it; the hops completed before the kill never re-ran.
    assert ran(log, "resume", "worker") == [("writer", 3), ("reviewer", 4)]
    assert ran(log, "resume", "decision") == [(decider, 4), (decider, 5)]
    runs = Counter(name for name, _ in ran(log, "run", "worker") + ran(log, "resume", "worker"))
    assert runs == {"researcher": 1, "analyst": 1, "writer": 2, "reviewer": 1}
    assert {e["pid"] for e in log if e["phase"] == "resume"} == {result["resume_pid"]}


@MODES
def test_kill_during_the_supervisors_decision_then_resume(pg_database, tmp_path, mode, decider):
    deciding_hop = 3  # killed while choosing who runs hop 3
    result = crash_and_resume(
        pg_database, tmp_path, block=f"supervisor:{deciding_hop}", mode=mode, decider=decider
    )
    assert result["marker"] == {
        "pid": result["run_pid"], "kind": "supervisor", "name": decider, "step": deciding_hop
    }  # fmt: skip
    assert result["summary"]["pending_at_start"] == ["supervisor"]
    assert_completed_exactly_once(result, decider)

    log = result["log"]
    assert ran(log, "run", "decision") == [(decider, 1), (decider, 2), (decider, 3)]
    assert ran(log, "run", "worker") == [("researcher", 1), ("analyst", 2)]
    # The decision that was cut off is taken again, from the same ledger, and the run
    # continues; the two hops completed before the kill never run again.
    assert ran(log, "resume", "decision") == [(decider, 3), (decider, 4), (decider, 5)]
    assert ran(log, "resume", "worker") == [("writer", 3), ("reviewer", 4)]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_kill_inside_a_subgraph_worker_then_resume(pg_database, tmp_path, mode):
    """The reviewer is a compiled graph (`draft` -> `check`); the kill lands in `check`.

    LangGraph checkpoints the subgraph's own steps under the worker's namespace, so
    the resumed process continues the subgraph at `check`: `draft` does not re-run.
    The reviewer's slot must still hold one prompt and the subgraph's messages once.
    """
    result = crash_and_resume(
        pg_database, tmp_path, block=f"subgraph:{HOPS}", mode=mode, decider="model"
    )
    assert result["marker"]["kind"] == "subgraph"
    assert result["summary"]["pending_at_start"] == ["reviewer"]
    log = result["log"]
    assert ran(log, "run", "node") == [("reviewer.draft", HOPS)]
    assert ran(log, "resume", "node") == []  # the subgraph resumed after its `draft` step
    assert ran(log, "resume", "worker") == [("reviewer", HOPS)]
    assert ran(log, "resume", "decision") == [("model", HOPS + 1)]
    reviewer = result["head"].values["workers"]["reviewer"]["messages"]
    prompts = [m for m in reviewer if isinstance(m, HumanMessage)]
    assert len(prompts) == 1, f"the reviewer's prompt is stored {len(prompts)} times: {reviewer}"
    assert [m.content for m in reviewer[1:]] == [
        f"reviewer draft for hop {HOPS}",
        worker_result("reviewer", HOPS),
    ]
    assert_completed_exactly_once(result, "model")

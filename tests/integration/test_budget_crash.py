"""Budgets across a crash: SIGKILL a real process mid-hop, resume in a new one, spend exactly.

The child process is `tests/integration/_budget_crash_app.py`: a planner model, a
researcher (two model calls and a `lookup` per hop) and a writer, on Postgres with
`durability="sync"`, under `Budget(max_tokens=..., prices=...)`. Every model reports its
usage and answers from what it is shown, so each call spends the same tokens in any
process. In the `run` phase one call (the researcher's `lookup`, its second model call, or
the supervisor's decision) logs itself, writes a marker file and blocks; the test reads
the thread's last checkpoint, kills the process with SIGKILL and resumes the thread in a
new one. The same team also runs uninterrupted in another thread.

What must hold: the resumed thread's `usage` is the uninterrupted run's, entry for entry
(every call once: none of the committed ones twice, none of the interrupted hop's lost),
its spent figures are the sums of those entries, the budget halts (or the run finishes)
at the same figure, and the resumed process counts on from what the checkpoint holds,
never from 0.
"""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro._budget import entry_tokens, spend_of
from tests.integration import _budget_crash_app as app_module
from tests.integration._app_common import LOG_NAME, MARKER_NAME
from tests.integration._budget_crash_app import (
    IN_HOP_LIMIT,
    LIMITS,
    PLAN,
    PRICES,
    WARN_AT,
    Context,
    build_graph,
)
from tests.integration._proc import Children, head_and_history, read_jsonl, wait_for_marker

pytestmark = pytest.mark.integration

SCRIPT = Path(app_module.__file__).resolve()
LEDGER_KEYS = ("turn", "step", "worker", "instructions", "decided_by", "status", "summary", "error")
CALLS_PER_HOP = {"researcher": 2, "writer": 1}


def _graph() -> Any:
    return build_graph(Context(Path("."), phase="inspect"))


def _head(uri: str, thread_id: str) -> Any:
    """The thread's last checkpoint, read in this process."""
    with open_checkpointer(uri) as saver:
        app = _graph().compile(checkpointer=saver)
        return app.get_state({"configurable": {"thread_id": thread_id}})


def _common(uri: str, thread_id: str, workdir: Path, mode: str, limit: str) -> list[str]:
    return [
        "--uri", uri, "--thread", thread_id, "--workdir", str(workdir),
        "--mode", mode, "--limit", limit,
    ]  # fmt: skip


def uninterrupted(uri: str, workdir: Path, *, mode: str, limit: str) -> dict[str, Any]:
    """The same team, run to its end in one process, in a thread of its own."""
    workdir.mkdir()
    thread_id = f"clean-{uuid.uuid4().hex[:8]}"
    with Children(SCRIPT, workdir) as children:
        child = children.start("clean", [*_common(uri, thread_id, workdir, mode, limit),
                                         "--phase", "run"])  # fmt: skip
        assert child.wait() == 0, child.output()
        summary = child.summary()
    head, history = head_and_history(_graph(), uri, thread_id)
    return {"summary": summary, "head": head, "history": history}


def crash_and_resume(
    uri: str, workdir: Path, *, block: str, mode: str, limit: str
) -> dict[str, Any]:
    """Run to the blocking point, read the last checkpoint, SIGKILL, resume in a new process."""
    workdir.mkdir()
    thread_id = f"budget-crash-{uuid.uuid4().hex[:8]}"
    common = _common(uri, thread_id, workdir, mode, limit)
    with Children(SCRIPT, workdir) as children:
        first = children.start("run", [*common, "--phase", "run", "--block", block])
        marker = wait_for_marker(first, workdir / MARKER_NAME)
        assert marker["pid"] == first.proc.pid
        first.sigkill()
        at_kill = _head(uri, thread_id)
        before = read_jsonl(workdir / LOG_NAME)
        second = children.start("resume", [*common, "--phase", "resume"])
        assert second.wait() == 0, second.output()
        summary = second.summary()
    head, history = head_and_history(_graph(), uri, thread_id)
    return {
        "marker": marker,
        "at_kill": at_kill,
        "before": before,
        "log": read_jsonl(workdir / LOG_NAME),
        "summary": summary,
        "head": head,
        "history": history,
        "run_pid": first.proc.pid,
        "resume_pid": second.proc.pid,
    }


def _events(values: dict[str, Any]) -> list[dict[str, Any]]:
    """The budget events without their clock time."""
    return [{k: v for k, v in e.items() if k != "at"} for e in values.get("budget_events") or ()]


def _ledger(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: e[k] for k in LEDGER_KEYS} for e in values["ledger"]]


def assert_each_entry_is_one_call(usage: list[dict[str, Any]], ledger: list[Any]) -> None:
    """One supervisor entry per decision and one worker entry per model call of each hop
    (a hop the budget stopped made its calls up to the refused one)."""
    calls = Counter((u["step"], u["role"], u["worker"]) for u in usage)
    expected: Counter[tuple[int, str, str | None]] = Counter()
    for entry in ledger:
        made = CALLS_PER_HOP[entry["worker"]]
        if entry["status"] == "failed":
            assert "BudgetExceededError" in entry["error"], entry
            made -= 1  # its last call was refused before it was made
        expected[(entry["step"], "worker", entry["worker"])] = made
        expected[(entry["step"], "supervisor", None)] = 1
    decisions_after = [u for u in usage if u["role"] == "supervisor" and u["step"] > len(ledger)]
    assert len(decisions_after) <= 1  # the FINISH decision, if the run finished
    for entry in decisions_after:
        expected[(entry["step"], "supervisor", None)] = 1
    assert calls == expected


def assert_priced_and_reported(usage: list[dict[str, Any]]) -> None:
    """Every entry carries its model, the tokens its provider reported, and its cost."""
    for entry in usage:
        assert entry["turn"] == 1 and entry["estimated"] is False, entry
        assert entry["input_tokens"] > 0 and entry["output_tokens"] > 0, entry
        price = PRICES[entry["model"]]
        cost = entry["input_tokens"] * price["input"] + entry["output_tokens"] * price["output"]
        assert entry["cost"] == pytest.approx(cost / 1_000_000, abs=1e-12), entry
        assert entry["path"] == ([] if entry["role"] == "supervisor" else [entry["worker"]])


def assert_spent_exactly_as_uninterrupted(
    result: dict[str, Any], clean: dict[str, Any], limit: str
) -> None:
    """The resumed thread spent what the uninterrupted one did, and stopped at that figure."""
    values, reference = result["head"].values, clean["head"].values
    assert result["head"].next == () and clean["head"].next == ()
    assert (values["status"], values.get("halt_reason"), values.get("halt_detail")) == (
        reference["status"],
        reference.get("halt_reason"),
        reference.get("halt_detail"),
    )
    assert result["summary"]["status"] == values["status"]
    usage = values["usage"]
    # Entry for entry, in call order, the same calls, tokens and costs as the run nobody
    # killed (a resumed hop records the calls made before the kill first).
    assert usage == reference["usage"]
    hops = len(values["ledger"])
    assert _ledger(values) == _ledger(reference)
    assert [e["step"] for e in values["ledger"]] == list(range(1, hops + 1))
    assert_each_entry_is_one_call(usage, values["ledger"])
    # The root checkpoints across both processes form the uninterrupted run's chain.
    assert [s.next for s in result["history"]] == [s.next for s in clean["history"]]
    assert_priced_and_reported(usage)

    # The spent figures are the sums of the recorded entries.
    spend = spend_of(usage, turn=1)
    assert spend.tokens == sum(u["input_tokens"] + u["output_tokens"] for u in usage)
    assert spend.tokens == sum(entry_tokens(u) for u in usage)
    assert spend.cost == pytest.approx(sum(u["cost"] for u in usage), abs=1e-9)
    assert (spend.calls, spend.unpriced) == (len(usage), 0)
    assert spend == spend_of(reference["usage"], turn=1)

    # The budget's events: the same, at the same figures, each figure a sum of entries.
    events = _events(values)
    assert events == _events(reference)
    kinds = [e["kind"] for e in events]
    maximum = LIMITS[limit]
    if limit == "complete":
        assert values["status"] == "done" and hops == len(PLAN)
        assert kinds == ["warning"] and spend.tokens < maximum
    else:
        assert values["status"] == "halted" and values["halt_reason"] == "budget_exceeded"
        assert kinds == ["warning", "exceeded"]
        exceeded = events[-1]
        assert (exceeded["spent"], exceeded["limit"]) == (float(spend.tokens), float(maximum))
        assert exceeded["step"] == hops
        # It stopped at the first call past the limit: without that call it was below it.
        assert spend.tokens - entry_tokens(_last_call(usage)) < maximum <= spend.tokens
        assert hops < len(PLAN)
    warning = events[0]
    assert warning["limit"] == float(maximum) and warning["measure"] == "tokens"
    assert warning["spent"] == _spent_by(usage, warning["step"]) >= WARN_AT * maximum


def _spent_by(usage: list[dict[str, Any]], step: int) -> float:
    """The tokens spent when the decision for hop `step + 1` was checked: every entry of
    the hops up to `step` (and of their decisions)."""
    return float(spend_of([u for u in usage if u["step"] <= step], turn=1).tokens)


def _last_call(usage: list[dict[str, Any]]) -> dict[str, Any]:
    """The last call in call order: of the last hop, its worker's last call (a worker's input
    grows within a hop), else the decision for it."""
    last = [u for u in usage if u["step"] == max(u["step"] for u in usage)]
    return max(last, key=lambda u: (u["role"] == "worker", u["input_tokens"]))


def assert_nothing_counted_twice_or_reset(result: dict[str, Any]) -> None:
    """What the last checkpoint before the kill held is in the final usage once, unchanged,
    and the resumed process counted on from it, never from 0."""
    values = result["head"].values
    usage = values["usage"]
    committed = list(result["at_kill"].values.get("usage") or [])
    assert committed, "no usage was checkpointed before the kill"
    assert usage[: len(committed)] == committed
    calls = Counter((u["step"], u["role"], u["worker"]) for u in usage)
    for key, count in Counter((u["step"], u["role"], u["worker"]) for u in committed).items():
        assert calls[key] == count, f"{key}: {calls[key]} entries, {count} before the kill"
    resumed = usage[len(committed) :]
    assert resumed, "the resumed process recorded no call"
    assert spend_of(usage) == spend_of(committed) + spend_of(resumed)
    # Every budget event of the resumed process measured the checkpoint's spending and its
    # own: what it alone spent, counted from 0, is less (and would have stopped elsewhere).
    before = _events(result["at_kill"].values)
    after = [e for e in _events(values) if e not in before]
    assert after, "the resumed process recorded no budget event"
    for event in after:
        own = _spent_by(resumed, event["step"])
        assert event["spent"] == _spent_by(usage, event["step"]) > own, event
    for event in after:
        if event["kind"] == "exceeded":  # counted from 0 the resumed process was under it
            assert spend_of(resumed).tokens < event["limit"] <= event["spent"], event


def ran(log: list[dict[str, Any]], phase: str, kind: str, name: str | None = None) -> list[int]:
    return [
        e["step"]
        for e in log
        if e["phase"] == phase and e["kind"] == kind and (name is None or e["name"] == name)
    ]


# --------------------------------------------------------------------------- tests

KILL_HOP = 3  # the researcher's second visit: hops 1 and 2 are committed before the kill


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_kill_between_a_hops_model_calls_then_resume_spends_exactly_once(
    pg_database, tmp_path, mode
):
    """The kill lands in the researcher's `lookup`: its first model call of the hop is done,
    the second not yet. The resumed thread halts on budget at the uninterrupted figure."""
    clean = uninterrupted(pg_database, tmp_path / "clean", mode=mode, limit="halt")
    result = crash_and_resume(
        pg_database, tmp_path / "crash", block=f"lookup:{KILL_HOP}", mode=mode, limit="halt"
    )
    assert result["marker"] == {
        "pid": result["run_pid"], "kind": "lookup", "name": "researcher", "step": KILL_HOP
    }  # fmt: skip
    assert result["summary"]["pending_at_start"] == ["researcher"]
    committed = result["at_kill"].values["usage"]
    # The kill came after the decision for hop 3 was checkpointed, inside hop 3.
    assert {u["step"] for u in committed} == {1, 2, KILL_HOP}
    assert [u["role"] for u in committed if u["step"] == KILL_HOP] == ["supervisor"]
    assert ran(result["before"], "run", "model", "researcher:1") == [1, KILL_HOP]
    assert_spent_exactly_as_uninterrupted(result, clean, "halt")
    assert_nothing_counted_twice_or_reset(result)
    assert {e["pid"] for e in result["log"] if e["phase"] == "resume"} == {result["resume_pid"]}


def test_kill_inside_a_workers_model_call_then_resume_finishes_at_the_same_figure(
    pg_database, tmp_path
):
    """The kill lands inside the researcher's second model call of hop 5 (after its lookup);
    with a limit it never reaches, the resumed run finishes with the uninterrupted spend."""
    hop = 5
    clean = uninterrupted(pg_database, tmp_path / "clean", mode="sync", limit="complete")
    result = crash_and_resume(
        pg_database, tmp_path / "crash", block=f"model:{hop}", mode="sync", limit="complete"
    )
    assert result["marker"] == {
        "pid": result["run_pid"], "kind": "model", "name": "researcher", "step": hop
    }  # fmt: skip
    assert result["summary"]["pending_at_start"] == ["researcher"]
    assert ran(result["before"], "run", "tool", "lookup") == [1, 3, hop]
    assert_spent_exactly_as_uninterrupted(result, clean, "complete")
    assert_nothing_counted_twice_or_reset(result)


def test_kill_during_the_supervisors_decision_then_resume_spends_exactly_once(
    pg_database, tmp_path
):
    """The kill lands in the planner's call for hop 4: that decision is taken again, once."""
    hop = 4
    clean = uninterrupted(pg_database, tmp_path / "clean", mode="sync", limit="halt")
    result = crash_and_resume(
        pg_database, tmp_path / "crash", block=f"supervisor:{hop}", mode="sync", limit="halt"
    )
    assert result["marker"] == {
        "pid": result["run_pid"], "kind": "supervisor", "name": "planner", "step": hop
    }  # fmt: skip
    assert result["summary"]["pending_at_start"] == ["supervisor"]
    committed = result["at_kill"].values["usage"]
    assert max(u["step"] for u in committed) == hop - 1
    assert ran(result["log"], "resume", "decision")[0] == hop
    assert_spent_exactly_as_uninterrupted(result, clean, "halt")
    assert_nothing_counted_twice_or_reset(result)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_limit_passed_inside_the_killed_hop_stops_it_as_in_an_uninterrupted_run(
    pg_database, tmp_path, mode
):
    """The researcher's first model call of hop 3 passes the limit; its lookup is killed.

    Uninterrupted, the hop's second model call is refused (the hop fails with
    `BudgetExceededError`) and the run halts. Resumed, the call made before the kill must
    count against the budget before the second call is let through: the same refusal,
    the same halt, the same spend.
    """
    clean = uninterrupted(pg_database, tmp_path / "clean", mode=mode, limit="in_hop")
    (failed,) = [e for e in clean["head"].values["ledger"] if e["status"] == "failed"]
    assert failed["step"] == KILL_HOP and "BudgetExceededError" in failed["error"]
    result = crash_and_resume(
        pg_database, tmp_path / "crash", block=f"lookup:{KILL_HOP}", mode=mode, limit="in_hop"
    )
    assert result["summary"]["pending_at_start"] == ["researcher"]
    before_kill = spend_of(result["at_kill"].values["usage"]).tokens
    assert before_kill < IN_HOP_LIMIT  # only the call in flight in the killed hop passed it
    assert_spent_exactly_as_uninterrupted(result, clean, "in_hop")
    assert_nothing_counted_twice_or_reset(result)
    # The refused call was made in neither process: the researcher's second calls are hop 1's.
    assert [e["step"] for e in result["log"] if e["name"] == "researcher:2"] == [1]

"""Crash tests for exactly-once side effects: SIGKILL at each crash point, resume, count.

The child process is `tests/integration/_effects_crash_app.py`: a two-hop team on
Postgres (`durability="sync"`) whose `cashier` charges through
`PostgresEffects.run` (a row in `payments`, written in the recording transaction)
and whose `mailer` sends a receipt through `run_external` (a line in an outbox
file). The run phase stops at a crash point and is killed with SIGKILL; a new
process resumes the thread with `invoke(None, config)`.

Whatever the crash point, the resumed run completes, `payments` holds exactly one
row, and each worker ends with the outcome recorded in `lgsp_effects`. The
external effect is never re-sent silently across a crash between the send and the
record: its intent was committed before the send, so the resumed run finds it in
doubt and asks `reconcile` (the outbox, standing in for the provider) or, without
one, pauses on a review that a third process answers.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro.persistence._effects import _legacy_key
from tests.integration import _effects_crash_app as app_module
from tests.integration._app_common import LOG_NAME, MARKER_NAME
from tests.integration._effects_crash_app import AMOUNT, CRASH_POINTS, OUTBOX_NAME
from tests.integration._proc import Children, read_jsonl, wait_for_marker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

SCRIPT = Path(app_module.__file__).resolve()


def crash_and_resume(
    uri: str,
    workdir: Path,
    *,
    crash: str,
    mode: str,
    reconcile: bool = True,
    answer: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run to the crash point, SIGKILL, resume in a new process; return what happened.

    With `answer`, the resume is expected to pause on a review, and a third process
    resumes the thread with that decision.
    """
    thread_id = f"effects-{uuid.uuid4().hex[:8]}"
    common = ["--uri", uri, "--thread", thread_id, "--workdir", str(workdir), "--mode", mode]
    if reconcile:
        common.append("--reconcile")
    with Children(SCRIPT, workdir) as children:
        first = children.start("run", [*common, "--phase", "run", "--crash", crash])
        marker = wait_for_marker(
            first,
            workdir / MARKER_NAME,
            exited="exited before its crash point",
            missed="did not reach its crash point",
            show_output=False,
        )
        assert marker == {"pid": first.proc.pid, "point": crash}
        first.sigkill()

        second = children.start("resume", [*common, "--phase", "resume"])
        paused: dict[str, Any] | None = None
        if answer is not None:
            assert second.wait() == 1, second.output()  # paused on the review
            paused = second.summary()
            with psycopg.connect(uri) as conn:
                paused["states"] = dict(
                    conn.execute("SELECT key, state FROM lgsp_effects").fetchall()
                )
            second = children.start(
                "answer", [*common, "--phase", "resume", "--answer", json.dumps(answer)]
            )
        assert second.wait() == 0, second.output()
        summary = second.summary()
    with psycopg.connect(uri) as conn:
        payments = conn.execute("SELECT id, key, amount, pid FROM payments ORDER BY id").fetchall()
        rows = conn.execute("SELECT key, outcome, state FROM lgsp_effects").fetchall()
    recorded: dict[str, Any] = {key: outcome for key, outcome, _ in rows}
    states = {key: state for key, _, state in rows}
    with open_checkpointer(uri) as saver:
        head = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    assert head is not None
    return {
        "thread_id": thread_id,
        "run_pid": first.proc.pid,
        "resume_pid": second.proc.pid,
        "summary": summary,
        "paused": paused,
        "states": states,
        "payments": payments,
        "recorded": recorded,
        "log": read_jsonl(workdir / LOG_NAME),
        "outbox": read_jsonl(workdir / OUTBOX_NAME),
        "checkpoint": head,
    }


def executions(result: dict[str, Any], kind: str) -> Counter[tuple[str, str]]:
    """How often each `kind` ran, per (phase, name)."""
    return Counter((e["phase"], e["name"]) for e in result["log"] if e["kind"] == kind)


# What runs in which process, per crash point: (charge effect, receipt effect) executions
# before and after the kill, and whether each worker re-runs after the resume.
EXPECTED = {
    #                 charges (run, resume)  receipts (run, resume)   re-run on resume
    "before-charge": ((0, 1), (0, 1), {"cashier", "mailer"}),
    "inside-charge": ((1, 1), (0, 1), {"cashier", "mailer"}),
    "after-charge": ((1, 0), (0, 1), {"cashier", "mailer"}),
    "after-cashier": ((1, 0), (0, 1), {"mailer"}),
    "inside-receipt": ((1, 0), (1, 0), {"mailer"}),  # reconciled: found in the outbox
    "after-receipt": ((1, 0), (1, 0), {"mailer"}),
}
assert set(EXPECTED) == set(CRASH_POINTS)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("crash", CRASH_POINTS)
def test_a_side_effect_survives_a_kill_at_every_crash_point(pg_database, tmp_path, crash, mode):
    result = crash_and_resume(pg_database, tmp_path, crash=crash, mode=mode)
    thread_id, summary = result["thread_id"], result["summary"]
    # The keys carry each hop prompt's digest (the same in the run and in the resume).
    (charge_key,) = [
        k for k in result["recorded"] if _legacy_key(k) == f"{thread_id}/1/1/cashier/charge"
    ]
    (receipt_key,) = [
        k for k in result["recorded"] if _legacy_key(k) == f"{thread_id}/1/2/mailer/receipt"
    ]
    (charges_run, charges_resumed), (receipts_run, receipts_resumed), rerun = EXPECTED[crash]

    # The run completed in the new process.
    assert summary["status"] == "done"
    assert summary["ledger"] == [[1, "cashier", "success"], [2, "mailer", "success"]]
    assert result["checkpoint"].checkpoint["channel_values"]["status"] == "done"

    # Exactly one payment, whatever the crash point: a charge killed before its commit
    # rolled back and ran again; a committed charge was never repeated.
    assert len(result["payments"]) == 1, result["payments"]
    payment_id, key, amount, paid_by = result["payments"][0]
    assert (key, amount) == (charge_key, AMOUNT)
    charges = executions(result, "effect")
    assert (charges[("run", "charge")], charges[("resume", "charge")]) == (
        charges_run,
        charges_resumed,
    )
    assert paid_by == (result["resume_pid"] if charges_resumed else result["run_pid"])
    # Each execution of the charge took an id; a rolled-back one left a gap, not a row.
    assert payment_id == charges_run + charges_resumed

    # Every worker ended with the outcome recorded in lgsp_effects: a cashier re-run
    # after its charge committed got the recorded outcome back, from the killed process.
    assert set(result["recorded"]) == {charge_key, receipt_key}
    charge = result["recorded"][charge_key]
    assert charge == {"payment_id": payment_id, "pid": paid_by}
    assert summary["results"]["cashier"] == [{"key": charge_key, "charge": charge}]
    receipt = result["recorded"][receipt_key]
    assert summary["results"]["mailer"] == [{"key": receipt_key, "receipt": receipt}]

    # The external effect: sent once, whatever the crash point. Killed between the send
    # and the record, the resumed run found the intent without an outcome and asked
    # reconcile (the outbox), which found the send: its outcome was recorded, not re-sent.
    assert result["states"][receipt_key] == ("reconciled" if crash == "inside-receipt" else "done")
    reconciled = executions(result, "reconcile")
    assert sum(reconciled.values()) == (1 if crash == "inside-receipt" else 0)
    assert (charges[("run", "receipt")], charges[("resume", "receipt")]) == (
        receipts_run,
        receipts_resumed,
    )
    assert [line["key"] for line in result["outbox"]] == [receipt_key] * (
        receipts_run + receipts_resumed
    )
    assert receipt == {"message_id": f"msg-{result['outbox'][-1]['pid']}", "key": receipt_key}

    # Only the hop that was cut off re-ran after the resume; checkpointed hops did not.
    workers = executions(result, "worker")
    assert {name for (phase, name) in workers if phase == "resume"} == rerun
    assert all(count == 1 for count in workers.values()), workers


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    ("answer", "sends", "state"),
    [
        ({"type": "approve"}, 2, "redone"),
        ({"type": "respond", "message": '{"message_id": "confirmed"}'}, 1, "confirmed"),
        ({"type": "reject"}, 1, "skipped"),
    ],
    ids=["run-again", "confirm", "skip"],
)
def test_a_kill_between_send_and_record_pauses_on_a_review_without_reconcile(
    pg_database, tmp_path, mode, answer, sends, state
):
    result = crash_and_resume(
        pg_database, tmp_path, crash="inside-receipt", mode=mode, reconcile=False, answer=answer
    )
    (receipt_key,) = [k for k in result["recorded"] if k.endswith("/receipt")]
    # The resumed run did not send again: it paused on a review of the receipt in doubt.
    paused = result["paused"]
    assert paused["interrupts"] == ["effect:receipt"]
    assert paused["states"][receipt_key] == "in_doubt"
    receipts = executions(result, "effect")
    assert (receipts[("run", "receipt")], receipts[("resume", "receipt")]) == (1, sends - 1)
    # The reviewer's choice: run again (same idempotency key), confirm, or skip.
    assert [line["key"] for line in result["outbox"]] == [receipt_key] * sends
    assert result["states"][receipt_key] == state
    assert result["summary"]["status"] == "done"
    assert len(result["payments"]) == 1
    expected = {
        "redone": {"message_id": f"msg-{result['outbox'][-1]['pid']}", "key": receipt_key},
        "confirmed": {"message_id": "confirmed"},
        "skipped": None,
    }[state]
    assert result["recorded"][receipt_key] == expected
    assert result["summary"]["results"]["mailer"] == [{"key": receipt_key, "receipt": expected}]

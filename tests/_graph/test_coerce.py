"""Coercion of what a worker's agent returns; here, a domain supervisor's final state."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from langgraph_supervisor_pro import WorkerResult, register_secret
from langgraph_supervisor_pro._graph.coerce import coerce_worker_output

SECRET = "sk-coerce-0123456789"


def _state(status: str, **extra: object) -> dict[str, object]:
    prompt = HumanMessage("Task: restore the database", id="p")
    answer = AIMessage("Restored from the 02:00 backup. Lost 3 minutes.", id="a")
    return {"messages": [prompt, answer], "ledger": [], "status": status, **extra}


def test_a_domain_that_ended_done_is_a_success_with_its_answer():
    result, new = coerce_worker_output(
        _state("done"), worker="db", sent=[HumanMessage("Task: restore the database", id="p")]
    )
    assert result.status == "success"
    assert result.result == "Restored from the 02:00 backup. Lost 3 minutes."
    assert result.summary == "Restored from the 02:00 backup."
    assert [m.id for m in new] == ["a"]


def test_a_domain_that_halted_or_failed_is_a_failed_hop_with_reason_and_detail():
    for status, reason in (("halted", "ping_pong"), ("failed", "synthesis_error")):
        result, _ = coerce_worker_output(
            _state(status, halt_reason=reason, halt_detail="workers 'a' and 'b' alternated"),
            worker="db",
        )
        assert result.status == "failed"
        assert result.error == f"domain 'db' {status} ({reason}): workers 'a' and 'b' alternated"
        assert result.result == "Restored from the 02:00 backup. Lost 3 minutes."
        assert result.summary == "Restored from the 02:00 backup."


def test_a_state_without_a_ledger_or_a_final_status_is_not_a_domain():
    running = _state("running")
    no_ledger = {k: v for k, v in _state("done").items() if k != "ledger"}
    for output in (running, no_ledger):
        result, _ = coerce_worker_output(output, worker="agent")
        # Read as an agent's state: its last AI message is the result.
        assert result.status == "success"
        assert result.error is None


# -- error text is scrubbed of the run's secrets -------------------------------------------


def test_a_failed_result_is_scrubbed_and_its_summary_derived_again():
    register_secret(SECRET)
    # The derived summary cuts the error at 120 characters, through the secret.
    error = "x" * 100 + f" key {SECRET} refused"
    given = WorkerResult(status="failed", error=error)
    assert given.summary.endswith(" key sk-coe…")
    result, _ = coerce_worker_output(given, worker="crm")
    assert result.error == "x" * 100 + " key *** refused"
    assert SECRET[:6] not in result.summary and result.summary.startswith("failed: xxx")
    assert result == WorkerResult(status="failed", error=result.error)


def test_a_summary_the_worker_gave_is_scrubbed_as_it_is():
    register_secret(SECRET)
    output = {"status": "failed", "summary": f"login {SECRET} refused", "error": f"key {SECRET}"}
    result, _ = coerce_worker_output(output, worker="crm")
    assert (result.summary, result.error) == ("login *** refused", "key ***")


def test_successful_results_and_clean_errors_are_left_alone():
    register_secret(SECRET)
    result, _ = coerce_worker_output(WorkerResult(status="failed", error="boom"), worker="w")
    assert result == WorkerResult(status="failed", error="boom")
    ok = WorkerResult(status="success", result="done")
    assert coerce_worker_output(ok, worker="w")[0] is ok


def test_a_domains_halt_detail_and_an_invalid_result_are_scrubbed():
    register_secret(SECRET)
    state = _state("failed", halt_reason="supervisor_error", halt_detail=f"key {SECRET} refused")
    result, _ = coerce_worker_output(state, worker="db")
    assert result.error == "domain 'db' failed (supervisor_error): key *** refused"
    invalid, _ = coerce_worker_output({"status": "done", "note": SECRET}, worker="w")
    assert invalid.status == "failed" and "invalid result" in (invalid.error or "")
    assert SECRET not in (invalid.error or "") and "***" in (invalid.error or "")


def test_an_explicit_scrubber_is_used():
    result, _ = coerce_worker_output(
        WorkerResult(status="failed", error="token abcd-1234"),
        worker="w",
        scrub=lambda text: text.replace("abcd-1234", "***"),
    )
    assert result.error == "token ***"

"""Coercion of what a worker's agent returns; here, a domain supervisor's final state."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from langgraph_supervisor_pro._graph.coerce import coerce_worker_output


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

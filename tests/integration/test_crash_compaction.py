"""Crash tests around the compaction step: SIGKILL a real process, resume in a new one.

The child process is `tests/integration/_compaction_crash_app.py`: an eight-hop
team (researcher: a `create_agent` agent with ~450-token answers, writer: a
function worker) on Postgres with `durability="sync"`, a 2,000-token window and
a 0.7 trigger, so the researcher's history is compacted exactly once, before its
fourth visit (hop 7): hops 1 and 3 (prompt and answer each) are replaced by one
summary and hop 5's prompt and answer are kept.

Two kill points:

- inside the compaction step (the summarizer blocks on its first call): the
  resumed process re-runs the compaction, which writes the summary once, with the
  same deterministic id, and replaces exactly the messages before the kept tail;
- inside the researcher's hop right after the compaction step (its model blocks):
  the compaction was checkpointed before the hop started, so the resumed process
  does not call the summarizer at all and only the worker hop runs again.

Every call (decision, model, summarizer, writer) is appended (fsynced) to
`executions.jsonl` with the phase it ran in, so the test can count what ran in
which process. The final state is read back from Postgres in the test process.
"""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_supervisor_pro.compaction._compactor import Compaction, Compactor, is_summary_message
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel
from tests.integration import _compaction_crash_app as app_module
from tests.integration._compaction_crash_app import (
    COMPACTION_HOP,
    HOPS,
    KEEP,
    PLAN,
    TASK,
    TRIGGER,
    WINDOW,
    Context,
    build_graph,
    fact_for,
    instructions_for,
    research_answer,
    summary_for,
    writer_answer,
)
from tests.integration._proc import head_and_history, kill_and_resume

pytestmark = pytest.mark.integration

SCRIPT = Path(app_module.__file__).resolve()
RESEARCH_HOPS = [hop for hop in range(1, HOPS + 1) if PLAN[hop - 1] == "researcher"]
WRITER_HOPS = [hop for hop in range(1, HOPS + 1) if PLAN[hop - 1] == "writer"]
COMPACTED_HOPS = [1, 3]
"""The researcher hops the summary replaces (prompt and answer each)."""
KEPT_HOPS = [5]
"""The researcher hop kept verbatim before hop 7 (keep=2: its prompt and answer)."""
# The root checkpoints of a clean run, oldest first: the compaction step is a
# super-step of its own between the supervisor's decision and the researcher's hop 7.
CLEAN_NEXT = [
    ("__start__",),
    ("supervisor",),
    *[
        x
        for hop, worker in enumerate(PLAN, start=1)
        for x in (
            (("compaction",), (worker,), ("supervisor",))
            if hop == COMPACTION_HOP
            else ((worker,), ("supervisor",))
        )
    ],
    ("synthesis",),
    (),
]


def ran(log: list[dict[str, Any]], phase: str, kind: str) -> list[int]:
    return [e["step"] for e in log if e["phase"] == phase and e["kind"] == kind]


def read_final_state(uri: str, thread_id: str) -> tuple[Any, list[Any]]:
    """The thread's head snapshot and its root history (oldest first), read in this process."""
    return head_and_history(build_graph(Context(Path("."), phase="inspect")), uri, thread_id)


def crash_and_resume(uri: str, workdir: Path, *, block: str, mode: str) -> dict[str, Any]:
    """Run until the blocking point, SIGKILL, resume in a new process; return what happened."""
    thread_id = f"compaction-crash-{uuid.uuid4().hex[:8]}"
    common = ["--uri", uri, "--thread", thread_id, "--workdir", str(workdir), "--mode", mode]
    result = kill_and_resume(SCRIPT, workdir, common, ["--block", block])
    result["head"], result["history"] = read_final_state(uri, thread_id)
    return result


def prompt_of(hop: int) -> str:
    return f"Task: {TASK}\n\nInstructions for you: {instructions_for(hop)}"


def expected_compaction(pre: list[Any]) -> Any:
    """Compact the checkpointed pre-compaction history again, here, with the same rules."""

    def summarise(call: ScriptedCall) -> dict[str, Any]:
        return summary_for("\n".join(str(m.content) for m in call.messages))

    config = Compaction(
        summarizer=ScriptedChatModel(script=[summarise]),
        max_context_tokens=WINDOW,
        trigger=TRIGGER,
        keep=KEEP,
    )
    return Compactor(config, window=WINDOW).compact(pre, task=TASK)


def assert_compacted_once_and_nothing_lost(result: dict[str, Any]) -> None:
    """The run finished; the researcher's slot holds one summary, then everything after it."""
    head, history, summary = result["head"], result["history"], result["summary"]
    values = head.values
    assert head.next == ()
    assert summary["status"] == "done"
    assert values["status"] == "done", values.get("halt_detail")

    # Every hop 1..HOPS is in the ledger exactly once, in order, and succeeded.
    assert [(e["step"], e["worker"], e["status"]) for e in values["ledger"]] == [
        (hop, PLAN[hop - 1], "success") for hop in range(1, HOPS + 1)
    ]
    assert [e["summary"] for e in values["ledger"] if e["worker"] == "writer"] == [
        writer_answer(hop) for hop in WRITER_HOPS
    ]
    assert values["messages"][-1].content == writer_answer(HOPS)

    # One compaction in the log, for the researcher before hop 7; it removed hops 1 and 3.
    compactions = values["compactions"]
    assert len(compactions) == 1, compactions
    entry = compactions[0]
    assert (entry["worker"], entry["step"], entry["reason"]) == (
        "researcher",
        COMPACTION_HOP,
        "trigger",
    )
    assert (entry["removed"], entry["attempts"], entry["error"]) == (
        2 * len(COMPACTED_HOPS),
        1,
        None,
    )

    # The checkpoints across both processes form the chain of a clean run: nothing
    # checkpointed twice, nothing skipped, the compaction step once.
    assert [s.next for s in history] == CLEAN_NEXT
    assert [s.metadata["step"] for s in history] == list(range(-1, len(CLEAN_NEXT) - 1))

    # The researcher's history as checkpointed just before the compaction step.
    at_compaction = [s for s in history if s.next == ("compaction",)]
    assert len(at_compaction) == 1
    pre = list(at_compaction[0].values["workers"]["researcher"]["messages"])
    assert [type(m).__name__ for m in pre] == ["HumanMessage", "AIMessage"] * 3
    assert [m.content for m in pre] == [
        x for hop in (*COMPACTED_HOPS, *KEPT_HOPS) for x in (prompt_of(hop), research_answer(hop))
    ]
    cut = 2 * len(COMPACTED_HOPS)
    expected = expected_compaction(pre)
    assert expected.removed_ids == [m.id for m in pre[:cut]]  # exactly the ones before the tail

    slot = values["workers"]["researcher"]["messages"]
    for name, worker_slot in values["workers"].items():
        ids = [m.id for m in worker_slot["messages"]]
        assert None not in ids and len(ids) == len(set(ids)), (name, ids)
    summaries = [m for m in slot if is_summary_message(m)]
    assert len(summaries) == 1, slot
    written = summaries[0]
    # The summary first, with the id derived from the ids it replaced (so a re-run of the
    # step writes the same message), then the kept tail, then hop 7, all verbatim.
    assert slot[0] is written
    assert written.id == expected.messages[0].id
    assert written.content == expected.messages[0].content
    assert [m.id for m in slot[1:]][: len(pre) - cut] == [m.id for m in pre[cut:]]
    assert [(type(m).__name__, m.content) for m in slot[1:]] == [
        x
        for hop in (*KEPT_HOPS, COMPACTION_HOP)
        for x in (("HumanMessage", prompt_of(hop)), ("AIMessage", research_answer(hop)))
    ]
    prompts = [str(m.content) for m in slot if isinstance(m, HumanMessage) and m is not written]
    assert prompts == [prompt_of(hop) for hop in (*KEPT_HOPS, COMPACTION_HOP)]
    assert all(isinstance(m, AIMessage) for m in slot[2::2])
    # What was replaced lives on in the summary: its facts and its hops.
    summary_data = written.additional_kwargs["lgsp_summary"]
    assert summary_data["key_facts"] == [fact_for(hop) for hop in COMPACTED_HOPS]
    assert summary_data["done"] == [f"hop {hop} done" for hop in COMPACTED_HOPS]

    # The writer's slot: one prompt and one answer per hop, nothing duplicated.
    writer_slot = values["workers"]["writer"]["messages"]
    assert [str(m.content) for m in writer_slot if isinstance(m, HumanMessage)] == [
        prompt_of(hop) for hop in WRITER_HOPS
    ]
    assert len(writer_slot) == 2 * len(WRITER_HOPS)
    for name in ("researcher", "writer"):
        results = values["workers"][name]["results"]
        assert len(results) == len(RESEARCH_HOPS if name == "researcher" else WRITER_HOPS)
        assert all(r["ref"] and r["result"] is None for r in results)  # outputs in the store


MODES = pytest.mark.parametrize("mode", ["sync", "async"])


@MODES
def test_kill_inside_the_compaction_step_then_resume(pg_database, tmp_path, mode):
    result = crash_and_resume(pg_database, tmp_path, block="summarizer", mode=mode)
    assert result["marker"] == {
        "pid": result["run_pid"], "kind": "summarizer", "name": "researcher",
        "step": COMPACTION_HOP,
    }  # fmt: skip
    # The new process found the thread waiting at the compaction step: the route to it was
    # checkpointed, and nothing of the killed step was.
    assert result["summary"]["pending_at_start"] == ["compaction"]
    assert_compacted_once_and_nothing_lost(result)

    log = result["log"]
    assert result["before"] == [e for e in log if e["phase"] == "run"]
    through = max(COMPACTED_HOPS)  # what the summarizer logs: the last hop it compacts
    assert ran(log, "run", "summarizer") == [through]
    assert ran(log, "run", "model") == RESEARCH_HOPS[:-1]
    assert ran(log, "run", "worker") == [hop for hop in WRITER_HOPS if hop < COMPACTION_HOP]
    # After the kill: the compaction ran again, once, then hop 7 and the rest.
    assert ran(log, "resume", "summarizer") == [through]
    assert ran(log, "resume", "model") == [COMPACTION_HOP]
    assert ran(log, "resume", "worker") == [hop for hop in WRITER_HOPS if hop > COMPACTION_HOP]
    # The supervisor is not asked again for hop 7: its decision was checkpointed.
    assert ran(log, "resume", "decision") == list(range(COMPACTION_HOP + 1, HOPS + 2))
    assert {e["pid"] for e in log if e["phase"] == "resume"} == {result["resume_pid"]}


@MODES
def test_kill_in_the_hop_after_the_compaction_does_not_compact_again(pg_database, tmp_path, mode):
    result = crash_and_resume(pg_database, tmp_path, block=f"model:{COMPACTION_HOP}", mode=mode)
    assert result["marker"] == {
        "pid": result["run_pid"], "kind": "model", "name": "researcher", "step": COMPACTION_HOP,
    }  # fmt: skip
    # The compaction step's checkpoint was written before the researcher's hop started.
    assert result["summary"]["pending_at_start"] == ["researcher"]
    assert_compacted_once_and_nothing_lost(result)

    log = result["log"]
    through = max(COMPACTED_HOPS)
    assert ran(log, "run", "summarizer") == [through]
    assert ran(log, "run", "model") == RESEARCH_HOPS  # killed inside hop 7's model call
    # After the kill: no summarizer call at all, the researcher's hop 7 ran again, once.
    assert ran(log, "resume", "summarizer") == []
    assert ran(log, "resume", "model") == [COMPACTION_HOP]
    assert ran(log, "resume", "worker") == [hop for hop in WRITER_HOPS if hop > COMPACTION_HOP]
    assert ran(log, "resume", "decision") == list(range(COMPACTION_HOP + 1, HOPS + 2))
    calls = Counter(e["step"] for e in log if e["kind"] == "model")
    assert calls == {**{hop: 1 for hop in RESEARCH_HOPS}, COMPACTION_HOP: 2}

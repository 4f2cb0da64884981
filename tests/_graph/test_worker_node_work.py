"""A hop's work in the worker node does not grow with the worker's history (counted, not timed)."""

from __future__ import annotations

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_supervisor_pro import Worker, create_supervisor
from langgraph_supervisor_pro._graph import worker_node
from langgraph_supervisor_pro.compaction import is_summary_message
from langgraph_supervisor_pro.testing import FunctionChatModel
from tests._helpers import routes, thread


def _summary_checks(monkeypatch) -> list[int]:
    """Count the worker node's summary checks (one per message it looks at)."""
    seen = [0]
    check = is_summary_message

    def counted(message):
        seen[0] += 1
        return check(message)

    monkeypatch.setattr(worker_node, "is_summary_message", counted)
    return seen


def test_an_agent_that_compacts_nothing_costs_no_summary_scan_however_long_its_history(
    monkeypatch,
):
    seen = _summary_checks(monkeypatch)
    model = FunctionChatModel(reply=lambda call: f"answer {len(call.messages)}")
    agent = create_agent(model, tools=[])
    hops = 8
    app = create_supervisor(
        [Worker(name="writer", description="Writes.", agent=agent)],
        router=routes(*["writer"] * hops),
        max_steps=hops,
    ).compile(checkpointer=InMemorySaver())
    final = app.invoke({"messages": [("user", "Write.")]}, thread())
    assert final["status"] == "done" and len(final["ledger"]) == hops
    # The slot holds 2 messages per hop, all given back to the agent the next time: it
    # returned every one of them, so there was nothing it compacted to look for.
    assert len(final["workers"]["writer"]["messages"]) == 2 * hops
    assert seen[0] == 0

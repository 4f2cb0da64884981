"""Compaction before each model call inside a worker's agent."""

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool

from langgraph_supervisor_pro import Compaction, Worker
from langgraph_supervisor_pro.compaction._compactor import is_summary_message, is_truncation_marker
from langgraph_supervisor_pro.compaction._middleware import CompactionMiddleware
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._graph.test_compaction_node import summarizer
from tests._helpers import ask, compile_team, routes, thread


@tool
def fetch_page(n: int) -> str:
    """Fetch page n of a long document."""
    return f"FACT-{n} " + "text " * 250  # ~300 tokens per tool result


def reader_script(pages):
    steps = []
    for n in range(1, pages + 1):
        steps.append(
            AIMessage(
                content="", tool_calls=[{"name": "fetch_page", "args": {"n": n}, "id": f"p{n}"}]
            )
        )
    steps.append("Read everything.")
    return steps


def test_a_long_tool_loop_is_compacted_before_each_model_call():
    model = ScriptedChatModel(script=reader_script(12) + reader_script(2))
    window = 2000
    compaction = Compaction(summarizer=summarizer(), max_context_tokens=window, keep=2)
    worker = Worker(
        name="reader",
        description="Reads documents.",
        model=model,
        tools=[fetch_page],
        risks={"fetch_page": "low"},
    )
    app = compile_team([worker], router=routes("reader", "reader"), compaction=compaction)
    out = app.invoke(ask("Read the report"), thread())
    assert out["status"] == "done"
    # Without compaction the 13th call would see ~3,900 tokens; every call stayed near
    # the trigger (plus one tool step's growth).
    sizes = [count_tokens_approximately(list(c.messages)) for c in model.calls]
    assert max(sizes) <= 0.7 * window + 400, sizes
    within = [e for e in out["compactions"] if e["reason"] == "within_hop"]
    assert within and all(e["removed"] > 0 for e in within)
    # The slot holds the compacted history: one summary first, the removed pages gone,
    # and the planted page ids survive in the summary's key facts.
    slot = out["workers"]["reader"]["messages"]
    assert is_summary_message(slot[0])
    assert sum(1 for m in slot if is_summary_message(m)) == 1
    assert "FACT-1" in slot[0].additional_kwargs["lgsp_summary"]["key_facts"]
    assert not any(str(m.content).startswith("FACT-5 ") for m in slot)  # compacted away
    # The second hop's first call starts from the compacted history, not the full one.
    second_hop_first = model.calls[13]
    assert is_summary_message(second_hop_first.messages[0])
    # Summarizer calls are recorded as such, not as the worker's model calls.
    roles = {u["role"] for u in out["usage"]}
    assert {"worker", "summarizer"} <= roles
    assert len([u for u in out["usage"] if u["role"] == "worker"]) == len(model.calls)


def test_a_failing_summarizer_inside_the_agent_truncates():
    # Issue 35: the agent's oldest turns are dropped instead of keeping them all.
    model = ScriptedChatModel(script=reader_script(8))
    broken = ScriptedChatModel(script=[RuntimeError("down")] * 50)
    compaction = Compaction(
        summarizer=broken, max_context_tokens=2000, keep=2, max_attempts=1, breaker=None
    )
    worker = Worker(
        name="reader",
        description="Reads.",
        model=model,
        tools=[fetch_page],
        risks={"fetch_page": "low"},
    )
    out = compile_team([worker], router=routes("reader"), compaction=compaction).invoke(
        ask(), thread()
    )
    assert out["status"] == "done"
    slot = out["workers"]["reader"]["messages"]
    assert not any(is_summary_message(m) for m in slot)
    assert any(is_truncation_marker(m) for m in slot)
    assert 0 < sum(1 for m in slot if getattr(m, "tool_call_id", None)) < 8
    entries = out["compactions"]
    assert entries and all(
        e["reason"] == "within_hop" and e["kind"] == "truncated" and "down" in e["error"]
        for e in entries
    )
    assert all(u["utilisation"] < 1 for u in out["usage"] if u["role"] == "worker")


def test_middleware_needs_a_compactor():
    with pytest.raises(TypeError, match=r"CompactionMiddleware\.compactor"):
        CompactionMiddleware(Compaction(summarizer=summarizer(), max_context_tokens=10))
    compactor = Compaction(summarizer=summarizer(), max_context_tokens=10_000).compactor()
    middleware = CompactionMiddleware(compactor)
    assert middleware.before_model({"messages": [HumanMessage("hi", id="1")]}, None) is None


def test_a_truncation_inside_the_agent_is_archived_and_shares_the_breaker_state():
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from langgraph_supervisor_pro import create_supervisor
    from langgraph_supervisor_pro.compaction._archive import dropped_messages
    from langgraph_supervisor_pro.compaction._compactor import summarizer_breaker_namespace

    model = ScriptedChatModel(script=reader_script(8))
    broken = ScriptedChatModel(script=[RuntimeError("down")] * 50)
    compaction = Compaction(summarizer=broken, max_context_tokens=2000, keep=2, max_attempts=1)
    worker = Worker(
        name="reader",
        description="Reads.",
        model=model,
        tools=[fetch_page],
        risks={"fetch_page": "low"},
    )
    store = InMemoryStore()
    app = create_supervisor([worker], router=routes("reader"), compaction=compaction).compile(
        checkpointer=InMemorySaver(), store=store
    )
    out = app.invoke(ask(), thread())
    assert out["status"] == "done"
    (entry,) = out["compactions"]
    assert entry["reason"] == "within_hop" and entry["kind"] == "truncated"
    item = store.get(tuple(entry["stored"]["namespace"]), entry["stored"]["key"])
    assert item is not None and dropped_messages(item.value)
    assert tuple(entry["stored"]["namespace"])[3:] == ("reader",)
    state = store.get(summarizer_breaker_namespace(("supervisor", "reader")), "state")
    assert state is not None and state.value["failures"]  # counted in the shared store

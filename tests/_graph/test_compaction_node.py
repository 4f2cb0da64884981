"""Compaction wired into the graph: when it fires, what it writes, what it records."""

import re

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage

from langgraph_supervisor_pro import Worker, create_supervisor
from langgraph_supervisor_pro.compaction._compactor import (
    Compaction,
    is_summary_message,
    is_truncation_marker,
)
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, routes, thread

FACT = re.compile(r"FACT-\d+")


def summarise(call):
    text = "\n".join(str(m.content) for m in call.messages)
    facts = sorted(set(FACT.findall(text)))
    return {
        "task": "the task",
        "done": [f"{len(facts)} facts found"],
        "current_state": "working",
        "remaining": ["more"],
        "key_facts": facts,
    }


def summarizer(n=50):
    return ScriptedChatModel(script=[summarise] * n)


def long_answer(call):
    hop = sum(
        1
        for m in call.messages
        if isinstance(m, HumanMessage) and str(m.content).startswith("Task:")
    )
    return f"FACT-{hop} " + "word " * 300  # ~300+ tokens


def agent_worker(name="researcher", **kw):
    model = ScriptedChatModel(script=[long_answer] * 50)
    return Worker(
        name=name, description="Researches.", agent=create_agent(model, tools=[]), **kw
    ), model


def test_worker_history_is_compacted_before_it_would_pass_the_trigger():
    worker, model = agent_worker()
    compaction = Compaction(summarizer=summarizer(), max_context_tokens=2000, trigger=0.7, keep=2)
    app = compile_team(
        [worker], router=routes(*["researcher"] * 8), max_steps=8, compaction=compaction
    )
    out = app.invoke(ask("the task"), thread())
    assert out["status"] == "done" and len(out["ledger"]) == 8
    entries = out["compactions"]
    assert entries and all(e["error"] is None and e["reason"] == "trigger" for e in entries)
    assert all(e["tokens_after"] < e["tokens_before"] for e in entries)
    # every model call the worker made stayed under trigger + one hop's growth
    worker_usage = [u for u in out["usage"] if u["role"] == "worker"]
    assert len(worker_usage) == 8 == len(model.calls)
    one_hop = 400 / 2000
    assert max(u["utilisation"] for u in worker_usage) <= 0.7 + one_hop
    assert all(u["window"] == 2000 for u in worker_usage)
    # the slot starts with the summary, and early facts survived into it
    slot = out["workers"]["researcher"]["messages"]
    assert is_summary_message(slot[0])
    summary = slot[0].additional_kwargs["lgsp_summary"]
    assert "FACT-1" in summary["key_facts"] and "FACT-2" in summary["key_facts"]
    # compaction is a step of its own in the graph, between supervisor and worker
    assert "compaction" in app.get_graph().nodes


async def test_compaction_runs_async_too():
    worker, _ = agent_worker()
    compaction = Compaction(summarizer=summarizer(), max_context_tokens=2000, keep=2)
    app = compile_team(
        [worker], router=routes(*["researcher"] * 6), max_steps=6, compaction=compaction
    )
    out = await app.ainvoke(ask(), thread())
    assert out["status"] == "done" and out["compactions"]
    assert is_summary_message(out["workers"]["researcher"]["messages"][0])


def test_failed_summarizer_truncates_and_records_the_error():
    # Issue 35: a failed summarizer no longer keeps the history: the oldest turns go.
    worker, _ = agent_worker()
    broken = ScriptedChatModel(script=[RuntimeError("summarizer down")] * 30)
    compaction = Compaction(
        summarizer=broken, max_context_tokens=2000, keep=2, max_attempts=2, breaker=None
    )
    app = compile_team(
        [worker], router=routes(*["researcher"] * 7), max_steps=7, compaction=compaction
    )
    out = app.invoke(ask(), thread())
    assert out["status"] == "done" and len(out["ledger"]) == 7
    failed = out["compactions"]
    assert failed and all(
        e["kind"] == "truncated" and e["removed"] > 0 and e["attempts"] == 2 for e in failed
    )
    assert all(e["tokens_after"] < e["tokens_before"] for e in failed)
    assert "summarizer down" in failed[0]["error"]
    slot = out["workers"]["researcher"]["messages"]
    assert not any(is_summary_message(m) for m in slot)
    assert sum(1 for m in slot if is_truncation_marker(m)) == 1  # the latest one
    assert slot[0].type == "human" and "FACT" not in slot[0].content  # the task is kept


def test_cadence_compacts_on_schedule_even_when_small():
    calls = []

    def small(task):
        calls.append(len(task.messages))
        return f"FACT-{task.step}"

    compaction = Compaction(
        summarizer=summarizer(), max_context_tokens=100_000, every_n_steps=2, keep=1
    )
    app = compile_team(
        [Worker(name="a", description="A.", agent=small)],
        router=routes(*["a"] * 5),
        max_steps=5,
        compaction=compaction,
    )
    out = app.invoke(ask(), thread())
    assert [e["reason"] for e in out["compactions"]] == ["cadence", "cadence"]
    assert [e["step"] for e in out["compactions"]] == [3, 5]
    assert calls[2] < calls[1] + 2  # hop 3 saw a compacted history


def test_per_worker_compaction_overrides_the_default():
    own = Compaction(summarizer=summarizer(), max_context_tokens=100_000, every_n_steps=1, keep=1)
    worker = Worker(name="a", description="A.", agent=lambda t: "x", compaction=own)
    app = compile_team(
        [worker, Worker(name="b", description="B.", agent=lambda t: "y")],
        router=routes("a", "b", "a", "b"),
    )
    out = app.invoke(ask(), thread())
    assert {e["worker"] for e in out["compactions"]} == {"a"}


def test_supervisor_usage_is_recorded_and_its_view_shrinks_to_fit():
    decisions = [{"next": "a", "instructions": "go " * 20}] * 10 + [{"next": "FINISH"}]
    model = ScriptedChatModel(script=decisions)
    compaction = Compaction(summarizer=summarizer(), max_context_tokens=600, trigger=0.7)
    app = compile_team(
        [Worker(name="a", description="A.", agent=lambda t: "summary " * 30)],
        model=model,
        compaction=compaction,
        max_steps=12,
    )
    out = app.invoke(ask(), thread())
    sup = [u for u in out["usage"] if u["role"] == "supervisor"]
    assert len(sup) == len(model.calls) == 11
    assert all(u["window"] == 600 for u in sup)
    assert max(u["utilisation"] for u in sup) < 0.7 + 0.1
    last_prompt = model.calls[-1].messages[1].content
    assert "10 hops so far" in last_prompt
    assert last_prompt.count("\n#") < 8  # fewer than ledger_window lines fit


def test_unknown_window_fails_at_build_time():
    compaction = Compaction(summarizer=summarizer())
    with pytest.raises(ValueError, match="max_context_tokens"):
        create_supervisor(
            [Worker(name="a", description="A.", agent=lambda t: "x")],
            router=routes(),
            compaction=compaction,
        )


def test_window_comes_from_the_model_profile():
    model = ScriptedChatModel(
        script=[{"next": "a"}, {"next": "FINISH"}], profile={"max_input_tokens": 5000}
    )
    own = Compaction(summarizer=summarizer(), max_context_tokens=3000)
    worker, _ = agent_worker("a", compaction=own)
    app = compile_team([worker], model=model, compaction=Compaction(summarizer=summarizer()))
    out = app.invoke(ask(), thread())
    windows = {(u["role"], u["window"]) for u in out["usage"]}
    assert windows == {("supervisor", 5000), ("worker", 3000)}


def test_unknown_worker_window_names_the_worker():
    model = ScriptedChatModel(script=[], profile={"max_input_tokens": 5000})
    with pytest.raises(ValueError, match=r"worker 'a'.*max_context_tokens"):
        create_supervisor(
            [Worker(name="a", description="A.", agent=lambda t: "x")],
            model=model,
            compaction=Compaction(summarizer=summarizer()),
        )


def test_compaction_must_be_a_compaction():
    with pytest.raises(TypeError, match="compaction"):
        create_supervisor(
            [Worker(name="a", description="A.", agent=lambda t: "x")],
            router=routes(),
            compaction={"trigger": 0.7},
        )
    with pytest.raises(TypeError, match=r"Worker\.compaction"):
        Worker(name="a", description="A.", agent=lambda t: "x", compaction=0.7)

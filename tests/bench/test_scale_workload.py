"""The scale bench's served models decide from what they are shown; TimedModel's time."""

from __future__ import annotations

import asyncio
import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from bench._scale_workload import (
    TimedModel,
    fan_out_decision,
    hops_used,
    round_robin_decision,
    served_models,
    visit_of,
)
from bench._workload import WorkloadError, answer_text, instructions
from langgraph_supervisor_pro.testing import ScriptedCall


def _call(*messages):
    return ScriptedCall(index=0, messages=tuple(messages))


def _prompt(used: int, budget: int) -> HumanMessage:
    return HumanMessage(f"Task: x\n\nHop budget: {used}/{budget} used. Who goes next?")


def test_the_supervisor_routes_from_the_hop_budget_it_is_shown():
    assert hops_used(_call(SystemMessage("s"), _prompt(4, 6))) == (4, 6)
    assert round_robin_decision(_call(_prompt(0, 6))) == {
        "next": "researcher",
        "instructions": instructions(1),
    }
    assert round_robin_decision(_call(_prompt(4, 6)))["next"] == "analyst"
    assert round_robin_decision(_call(_prompt(6, 6))) == {"next": "FINISH", "instructions": ""}
    # A re-ask after an invalid answer: the latest budget line counts.
    again = HumanMessage("Your previous answer was not a valid decision")
    assert hops_used(_call(_prompt(1, 6), again)) == (1, 6)


def test_a_prompt_without_a_hop_budget_is_a_workload_error():
    with pytest.raises(WorkloadError, match="Hop budget"):
        round_robin_decision(_call(HumanMessage("Who goes next?"), AIMessage("Hop budget: 1/2")))


def test_the_fan_out_decision_sends_every_worker_once_then_finishes():
    first = fan_out_decision(_call(_prompt(0, 3)))
    assert [first["next"], *(b["next"] for b in first["parallel"])] == [
        "researcher",
        "analyst",
        "writer",
    ]
    assert fan_out_decision(_call(_prompt(3, 3))) == {"next": "FINISH", "instructions": ""}


def test_a_worker_answers_for_the_visit_its_history_shows():
    history = [HumanMessage("a"), AIMessage("one"), HumanMessage("b"), AIMessage("two")]
    assert visit_of(_call(*history, HumanMessage("c"))) == 3
    model = served_models().workers["writer"]
    assert model.invoke([*history, HumanMessage("c")]).content == answer_text("writer", 3)
    assert model.calls == ()  # served models keep no calls


def test_a_timed_model_takes_the_same_time_for_the_same_prompt_within_the_jitter():
    model = TimedModel(name="m", reply=lambda call: "ok", latency=0.02, jitter=0.5)
    delays = {model.delay([HumanMessage(f"prompt {i}")]) for i in range(20)}
    assert all(0.01 <= d <= 0.03 for d in delays) and len(delays) > 1
    assert model.delay([HumanMessage("prompt 1")]) == model.delay([HumanMessage("prompt 1")])
    start = time.perf_counter()
    model.invoke("prompt 1")
    asyncio.run(model.ainvoke("prompt 2"))
    assert time.perf_counter() - start >= sum(model.slept()) > 0
    assert len(model.slept()) == 2
    model.clear()
    assert model.slept() == ()
    assert TimedModel(name="m", reply=lambda call: "ok").delay([HumanMessage("x")]) == 0.0


def test_a_timed_model_without_latency_never_sleeps_or_yields(monkeypatch):
    slept: list[float] = []

    async def no_async_sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr("bench._scale_workload.time.sleep", slept.append)
    monkeypatch.setattr("bench._scale_workload.asyncio.sleep", no_async_sleep)
    model = TimedModel(name="m", reply=lambda call: "ok")
    model.invoke("one")
    asyncio.run(model.ainvoke("two"))
    assert slept == [] and model.slept() == (0.0, 0.0)
    timed = TimedModel(name="m", reply=lambda call: "ok", latency=0.01)
    timed.invoke("three")
    asyncio.run(timed.ainvoke("four"))
    assert slept == [0.01, 0.01]


def test_a_timed_model_sleeps_when_streaming_too():
    model = TimedModel(name="m", reply=lambda call: "ok done", latency=0.01)
    assert "".join(str(c.content) for c in model.stream("hi")) == "ok done"

    async def astream() -> str:
        return "".join([str(c.content) async for c in model.astream("hi")])

    assert asyncio.run(astream()) == "ok done"
    assert model.slept() == (0.01, 0.01)


def test_the_timed_model_validates_its_settings():
    with pytest.raises(ValueError, match="jitter"):
        TimedModel(reply=lambda call: "x", jitter=1.5)
    with pytest.raises(ValueError, match="latency"):
        TimedModel(reply=lambda call: "x", latency=-1)

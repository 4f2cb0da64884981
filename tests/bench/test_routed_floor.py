"""The routed floor (the bare loop whose routing node asks the supervisor's model) and
ours by function (our graph deciding with a function, as the bare floor does)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from bench._per_hop import BY_FUNCTION, SIDES, rotated, timed_run
from bench._per_hop import builder as per_hop_builder
from bench._scale_workload import served_models
from bench._workload import (
    AGENT_FACTORIES,
    TASK,
    WORKER_NAMES,
    ServedModels,
    WorkloadError,
    build_floor,
    build_pro,
    router_prompt,
    schedule,
)
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall

AGENT = AGENT_FACTORIES["create_react_agent"]


def _config() -> Any:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def test_the_routed_floor_asks_the_model_before_every_hop_and_once_to_finish():
    prepared = per_hop_builder("routed floor", "create_react_agent")(4, InMemorySaver())
    timed_run(prepared, None)  # runs and checks: the round-robin answers, 4 + 1 decisions
    assert prepared.supervisor is not None
    budgets = [call.messages[-1].content.rsplit("\n", 1)[-1] for call in prepared.supervisor.calls]
    assert budgets == [f"Hop budget: {k}/4 used" for k in range(5)]
    assert {tuple(call.tools) for call in prepared.supervisor.calls} == {("RouteDecision",)}


def test_the_routed_floor_goes_where_the_model_says():
    # A router that sends every hop to the writer: the run does what it was told, and the
    # check (round-robin answers) refuses it.
    def writer_always(call: ScriptedCall) -> dict[str, str]:
        used = int(str(call.messages[-1].content).rsplit(" ", 2)[-2].split("/")[0])
        return {"next": "writer" if used < 3 else "FINISH", "instructions": ""}

    base = served_models().served
    models = ServedModels(
        supervisor=FunctionChatModel(name="supervisor", reply=writer_always),
        workers=base.workers,
    )
    prepared = build_floor(3, InMemorySaver(), AGENT, models=models, routed=True)
    final = prepared.graph.invoke({"messages": [HumanMessage(TASK)]}, _config())
    assert len(final["answers"]) == 3
    assert all(answer.startswith("[writer") for answer in final["answers"])
    with pytest.raises(WorkloadError, match="floor: answer 1 is not researcher's answer 1"):
        prepared.check(final)


def test_the_routed_floor_serves_concurrent_async_runs_with_the_served_models():
    prepared = build_floor(
        3, InMemorySaver(), AGENT, models=served_models().served, asynchronous=True, routed=True
    )

    async def burst() -> list[Any]:
        runs = [
            prepared.graph.ainvoke({"messages": [HumanMessage(TASK)]}, _config()) for _ in range(5)
        ]
        return list(await asyncio.gather(*runs))

    for final in asyncio.run(burst()):
        prepared.check(final)


def test_the_router_is_shown_the_catalogue_and_the_hop_budget():
    system, human = router_prompt(2, 5)
    assert all(f"- {name}:" in str(system.content) for name in WORKER_NAMES)
    assert str(human.content).endswith("Hop budget: 2/5 used")


def test_every_side_takes_every_place_in_turn():
    orders = [rotated(SIDES, turn) for turn in range(len(SIDES))]
    for place in range(len(SIDES)):
        assert {order[place] for order in orders} == set(SIDES)
    assert rotated(SIDES, len(SIDES)) == orders[0]


def test_ours_by_function_does_the_same_hops_with_no_model_call():
    prepared = per_hop_builder(BY_FUNCTION, "create_react_agent")(4, InMemorySaver())
    assert prepared.supervisor is None  # no supervisor model to call
    final = prepared.graph.invoke({"messages": [HumanMessage(TASK)]}, _config())
    prepared.check(final)  # the round-robin answers, one worker model call per hop
    assert [entry["worker"] for entry in final["ledger"]] == schedule(4)
    assert {entry["decided_by"] for entry in final["ledger"]} == {"router"}
    assert [entry["instructions"] for entry in final["ledger"]] == [
        f"Work on part {k} of the report." for k in range(1, 5)
    ]


def test_ours_by_function_decides_from_what_it_is_shown_so_one_graph_serves_many_runs():
    prepared = build_pro(3, InMemorySaver(), None, by_function=True)  # function workers
    for _ in range(3):
        final = prepared.graph.invoke({"messages": [HumanMessage(TASK)]}, _config())
        prepared.check(final)
        assert [entry["worker"] for entry in final["ledger"]] == schedule(3)

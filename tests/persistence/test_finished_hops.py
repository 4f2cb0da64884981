"""A finished hop's agent checkpoints are forgotten, on every backend (no mocks).

Unit tests of `persistence/_finished_hops.py`'s rule, then whole runs of tool-calling
agent workers on memory, SQLite and Postgres, sync and async, through the
checkpointers of `open_checkpointer`.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.channels import DeltaChannel
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt

from langgraph_supervisor_pro import aopen_checkpointer, open_checkpointer
from langgraph_supervisor_pro._internal.hop import TRANSIENT_KEY
from langgraph_supervisor_pro.persistence._finished_hops import (
    SPECIAL_CHANNELS,
    finished_namespace,
    finished_of,
    is_transient,
    keys_of,
    parents_of,
    recast,
    sweeps,
    write_keys,
)
from tests._agents import answer, pausing_agent, tool_team

HOPS = 6
NAMES = ("researcher", "analyst")


def _config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def _ask(text: str = "Write a report on heat pumps") -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


def namespaces(saver: Any, thread: str) -> set[str]:
    """Every namespace the thread has checkpoints in."""
    return {c.config["configurable"]["checkpoint_ns"] for c in saver.list(_config(thread))}


async def anamespaces(saver: Any, thread: str) -> set[str]:
    return {c.config["configurable"]["checkpoint_ns"] async for c in saver.alist(_config(thread))}


def agent_namespaces(found: set[str]) -> set[str]:
    return {ns for ns in found if ":" in ns}


def assert_hops_done(out: dict[str, Any], hops: int = HOPS) -> None:
    assert out["status"] == "done", out.get("halt_detail")
    ledger = out["ledger"]
    assert [e["status"] for e in ledger] == ["success"] * hops
    assert [e["worker"] for e in ledger] == [NAMES[i % 2] for i in range(hops)]
    # The hop's transcript (tool call, tool output, answer) lives on in the worker's slot.
    slot = out["workers"]["researcher"]["messages"]
    assert sum(isinstance(m, ToolMessage) for m in slot) == (hops + 1) // 2
    assert slot[-1].content == answer("researcher", (hops + 1) // 2)


# ----------------------------------------------------------------------------- the rule


def test_recast_and_write_keys_name_where_a_parent_stores_its_writes():
    assert recast("") == ""
    assert recast("ops:1|incident:2") == "ops|incident"
    assert write_keys({}) == []
    assert write_keys({"": "c0"}) == [("", "c0")]
    assert write_keys({"": "c0", "ops:t": "c1"}) == [("", "c0"), ("ops:t", "c1"), ("ops", "c1")]


def test_a_namespace_is_finished_only_by_a_regular_write_of_its_own_task():
    parents = {"": "c0"}
    regular = {("", "c0"): [("t1", "ledger")]}
    assert finished_namespace("w:t1", parents, regular)
    assert finished_namespace("w:t1|inner:t9", parents, regular)  # a graph the agent ran
    assert not finished_namespace("w:t2", parents, regular)  # someone else's task
    assert not finished_namespace("w:t11", parents, regular)  # a longer id is not t1
    assert not finished_namespace("w:t1", {"": "c9"}, regular)  # written elsewhere
    assert not finished_namespace("w:t1", {}, regular)  # no parents recorded
    for channel in SPECIAL_CHANNELS:  # an error, an interrupt, a resume value: not done
        assert not finished_namespace("w:t1", parents, {("", "c0"): [("t1", channel)]})
    # Under a stateful domain the parent's writes are stored without task ids.
    nested = {("ops", "c5"): [("t3", "workers")]}
    assert finished_namespace("ops:t0|clerk:t3", {"": "c0", "ops:t0": "c5"}, nested)


def test_the_marked_namespaces_are_judged_together():
    marked = [("w:t1", {"parents": {"": "c0"}}), ("w:t2", {"parents": {"": "c0"}}), ("x:t3", {})]
    assert keys_of(marked) == [("", "c0")]  # asked once for both
    assert finished_of(marked, {("", "c0"): [("t1", "workers"), ("t2", "__interrupt__")]}) == [
        "w:t1"
    ]


def test_marks_and_parents_are_read_strictly():
    assert is_transient({TRANSIENT_KEY: True})
    for metadata in (None, {}, {TRANSIENT_KEY: "true"}, {TRANSIENT_KEY: 1}):
        assert not is_transient(metadata)
    assert sweeps({"metadata": {}}) and sweeps({})
    assert not sweeps({"metadata": {TRANSIENT_KEY: True}})
    assert parents_of({"parents": {"": "c0", "x": 3}}) == {"": "c0"}
    assert parents_of({"parents": ["c0"]}) == {} == parents_of({})


def test_keep_agent_checkpoints_must_be_a_bool():
    with (
        pytest.raises(TypeError, match="keep_agent_checkpoints: got str; give False"),
        open_checkpointer("memory", keep_agent_checkpoints="yes"),  # type: ignore[arg-type]
    ):
        pass

    async def main() -> None:
        async with aopen_checkpointer("memory", keep_agent_checkpoints=1):  # type: ignore[arg-type]
            pass

    with pytest.raises(TypeError, match="keep_agent_checkpoints: got int"):
        asyncio.run(main())


# ------------------------------------------------------------------------- whole runs


def test_a_finished_hops_agent_checkpoints_are_forgotten(url):
    with open_checkpointer(url) as saver:
        app = tool_team(HOPS, NAMES).compile(checkpointer=saver)
        out = app.invoke(_ask(), _config("t1"), durability="sync")
        assert_hops_done(out)
        assert namespaces(saver, "t1") == {""}
        # The thread reads back whole through a new checkpointer (not memory's: per object).
        if url != "memory":
            with open_checkpointer(url) as again:
                fresh = tool_team(HOPS, NAMES).compile(checkpointer=again)
                assert fresh.get_state(_config("t1")).values["ledger"] == out["ledger"]


def test_async_runs_forget_them_too(url):
    async def main() -> tuple[dict[str, Any], set[str]]:
        async with aopen_checkpointer(url) as saver:
            app = tool_team(HOPS, NAMES).compile(checkpointer=saver)
            out = await app.ainvoke(_ask(), _config("t1"))  # durability "async"
            return out, await anamespaces(saver, "t1")

    out, found = asyncio.run(main())
    assert_hops_done(out)
    assert found == {""}


def test_keep_agent_checkpoints_keeps_every_hops_agent(url):
    with open_checkpointer(url, keep_agent_checkpoints=True) as saver:
        app = tool_team(HOPS, NAMES).compile(checkpointer=saver)
        assert_hops_done(app.invoke(_ask(), _config("t1"), durability="sync"))
        found = namespaces(saver, "t1")
    assert len(agent_namespaces(found)) == HOPS
    assert {ns.split(":")[0] for ns in agent_namespaces(found)} == set(NAMES)


def test_agent_checkpoints_left_behind_go_at_the_threads_next_checkpoint(url):
    if url == "memory":
        pytest.skip("a memory saver's checkpoints do not outlive it")
    with open_checkpointer(url, keep_agent_checkpoints=True) as saver:
        app = tool_team(2, NAMES).compile(checkpointer=saver)
        app.invoke(_ask(), _config("t1"), durability="sync")
        assert len(agent_namespaces(namespaces(saver, "t1"))) == 2
    # As after a crash between a hop's result and the deletion: the next run's first
    # root checkpoint removes them.
    with open_checkpointer(url) as saver:
        app = tool_team(2, NAMES).compile(checkpointer=saver)
        out = app.invoke(_ask("And the next section"), _config("t1"), durability="sync")
        assert out["status"] == "done" and out["turn"] == 2
        assert namespaces(saver, "t1") == {""}


def test_a_pending_interrupt_keeps_its_agent_until_the_hop_completes(url):
    calls: list[int] = []  # the researcher's fourth visit (hop 7) asks first
    question = {"question": "look it up?"}
    agents = {"researcher": pausing_agent("researcher", part=4, question=question, calls=calls)}
    with open_checkpointer(url) as saver:
        app = tool_team(8, NAMES, agents=agents).compile(checkpointer=saver)
        paused = app.invoke(_ask(), _config("t1"), durability="sync")
        assert [i.value for i in paused["__interrupt__"]] == [{"question": "look it up?"}]
        # Only the paused hop's agent is kept; its state holds the tool call waiting.
        (held,) = agent_namespaces(namespaces(saver, "t1"))
        assert held.startswith("researcher:")
        (task,) = app.get_state(_config("t1"), subgraphs=True).tasks
        waiting = task.state.values["messages"][-1]
        assert waiting.tool_calls[0]["args"] == {"part": 4}
        before = len(calls)
        out = app.invoke(Command(resume="yes"), _config("t1"), durability="sync")
        assert_hops_done(out, 8)
        # Resumed from the agent's checkpoint: the model call that chose the tool was not
        # made again, only the one after the tool's answer.
        assert len(calls) == before + 1
        assert namespaces(saver, "t1") == {""}


# ------------------------------------------------- graphs the package did not build


class _Outer(TypedDict):
    trail: Annotated[list[str], operator.add]


def _extend(state: list[str], batches: list[list[str]]) -> list[str]:
    return [*state, *(item for batch in batches for item in batch)]


class _Root(TypedDict):
    """The outer graph's state: a delta channel, as the worker node's hop writes (`ledger`,
    `workers`). LangGraph stores a step's delta-channel writes before the next checkpoint
    (it rebuilds delta channels from them); with `durability="async"` a plain channel's
    writes may still be on their way when that checkpoint's sweep reads the task's
    writes, so a hop that wrote only plain channels would be swept one checkpoint later."""

    trail: Annotated[list[str], DeltaChannel(_extend)]


def _inner_graph(*, pause: bool = False) -> Any:
    def work(state: _Outer) -> dict[str, list[str]]:
        if pause:
            interrupt("wait")
        return {"trail": ["inner"]}

    return StateGraph(_Outer).add_node("work", work).add_edge(START, "work").compile()


def _outer_graph(saver: Any, inner: Any, *, marked: bool, fail: bool = False) -> Any:
    def call(state: _Root) -> dict[str, list[str]]:
        config: RunnableConfig = {"metadata": {TRANSIENT_KEY: True}} if marked else {}
        inner.invoke({"trail": []}, config)
        if fail:
            raise RuntimeError("the node failed after its subgraph ran")
        return {"trail": ["outer"]}

    builder = StateGraph(_Root).add_node("call", call).add_edge(START, "call")
    return builder.compile(checkpointer=saver)


def test_an_unmarked_subgraph_is_kept_as_langgraph_keeps_it(url):
    with open_checkpointer(url) as saver:
        app = _outer_graph(saver, _inner_graph(), marked=False)
        app.invoke({"trail": []}, _config("t1"))
        assert len(agent_namespaces(namespaces(saver, "t1"))) == 1
        app = _outer_graph(saver, _inner_graph(), marked=True)
        app.invoke({"trail": []}, _config("t2"))
        assert namespaces(saver, "t2") == {""}


def test_a_marked_subgraph_whose_task_failed_or_paused_is_kept(url):
    with open_checkpointer(url) as saver:
        failing = _outer_graph(saver, _inner_graph(), marked=True, fail=True)
        with pytest.raises(RuntimeError, match="failed after its subgraph"):
            failing.invoke({"trail": []}, _config("t1"), durability="sync")
        # Another root checkpoint (a fork by update_state) sweeps: the failed task has
        # only its error written, so its subgraph stays (a retry of the run resumes it).
        failing.update_state(_config("t1"), {"trail": ["edited"]})
        assert len(agent_namespaces(namespaces(saver, "t1"))) == 1

        paused = _outer_graph(saver, _inner_graph(pause=True), marked=True)
        out = paused.invoke({"trail": []}, _config("t2"), durability="sync")
        assert out["__interrupt__"]
        paused.update_state(_config("t2"), {"trail": ["edited"]})
        assert len(agent_namespaces(namespaces(saver, "t2"))) == 1

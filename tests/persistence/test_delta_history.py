"""`get_delta_channel_history` of the Postgres checkpointers of `open_checkpointer` (no mocks).

Ours (`persistence/_delta_history.py`) must return what LangGraph's `PostgresSaver` /
`AsyncPostgresSaver` return, for every checkpoint of every namespace of a thread: a
supervisor thread whose delta channels were copied several times, a tree's domain, a
forked thread (the other branch's writes lie inside the id range read), a thread written
before its channels were delta channels (a plain value's blob, an inline primitive), a
walk over many pages, and every edge of the contract. A spy on the statements counts them.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import operator
import threading
from collections.abc import Sequence
from typing import Annotated, Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph
from packaging.version import Version
from psycopg.rows import dict_row
from typing_extensions import TypedDict

import langgraph_supervisor_pro._state as state_module
import langgraph_supervisor_pro.persistence._delta_history as delta_history
from langgraph_supervisor_pro import (
    aopen_checkpointer,
    open_checkpointer,
)
from langgraph_supervisor_pro.persistence._checkpointers import _PostgresSaver, _PostgresSql
from tests._agents import tool_team
from tests.persistence._threads import ops_tree

DELTAS = ["ledger", "workers", "usage", "security", "reviews", "compactions", "judgements"]
CHANNELS = [*DELTAS, "messages", "route", "status", "never_written"]
"""The root's delta channels, a plain channel kept as a blob per version (`messages`),
channels kept inline (`route`, `status`) and one no checkpoint has."""


def _config(thread: str, **more: Any) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, **more}}


def _ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


# The comparisons' oracle is LangGraph's own reader, which before langgraph-checkpoint-postgres
# 3.1.2 read a seed kept in `checkpoint_blobs` (not inline) as missing; the server extra's
# langgraph-runtime-pg pins 3.1.0, so the package supports it, and those cells skip the
# comparisons with the wrong oracle (the latest cells run them).
_UPSTREAM = Version(importlib.metadata.version("langgraph-checkpoint-postgres"))
upstream_reads_blob_seeds = pytest.mark.skipif(
    Version("3.1.2") > _UPSTREAM,
    reason="langgraph-checkpoint-postgres < 3.1.2 reads a seed kept in checkpoint_blobs as "
    "missing (fixed in 3.1.2): LangGraph's reader is the wrong oracle there",
)


def _every_checkpoint(upstream: PostgresSaver, thread: str) -> list[RunnableConfig]:
    return [t.config for t in upstream.list(_config(thread))]


def assert_same_everywhere(
    uri: str, saver: BaseCheckpointSaver[Any], thread: str, channels: Sequence[str] = CHANNELS
) -> int:
    """Ours equals LangGraph's at every checkpoint of the thread; how many were compared."""
    with PostgresSaver.from_conn_string(uri) as upstream:
        configs = _every_checkpoint(upstream, thread)
        assert configs
        for config in configs:
            ours = saver.get_delta_channel_history(config=config, channels=channels)
            theirs = upstream.get_delta_channel_history(config=config, channels=channels)
            assert ours == theirs, config
        return len(configs)


@pytest.fixture
def small_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Graphs built while it is active copy their root delta channels every 3 updates."""
    monkeypatch.setattr(state_module, "DELTA_SNAPSHOT_FREQUENCY", 3)


@pytest.fixture(params=["default pages", "pages of 2, doubling"])
def pages(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param != "default pages":
        monkeypatch.setattr(delta_history, "FIRST_PAGE", 2)
        monkeypatch.setattr(delta_history, "PAGE_GROWTH", 2)
    return str(request.param)


class Spy:
    """Counts the statements the Postgres saver runs (each still runs on the database)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.statements: list[str] = []
        run, arun = _PostgresSql.run, _PostgresSql.arun
        spy = self

        def counted_run(query: _PostgresSql) -> list[Any]:
            spy.statements.append(query.statement)
            return run(query)

        async def counted_arun(query: _PostgresSql) -> list[Any]:
            spy.statements.append(query.statement)
            return await arun(query)

        monkeypatch.setattr(_PostgresSql, "run", counted_run)
        monkeypatch.setattr(_PostgresSql, "arun", counted_arun)

    def pages(self) -> int:
        return sum(1 for s in self.statements if "parent_checkpoint_id" in s)


# -- what is read ----------------------------------------------------------------------


@upstream_reads_blob_seeds
@pytest.mark.usefixtures("small_copies")
def test_a_supervisor_thread_reads_as_langgraphs_at_every_checkpoint(pg_database, pages):
    with open_checkpointer(pg_database) as saver:
        app = tool_team(7).compile(checkpointer=saver)
        app.invoke(_ask("Report on heat pumps"), _config("t"), durability="sync")
        app.invoke(_ask("And on tariffs"), _config("t"), durability="sync")
        assert assert_same_everywhere(pg_database, saver, "t") > 20
        # copies were taken: the head's history starts from one
        head = saver.get_delta_channel_history(config=_config("t"), channels=DELTAS)
        assert "seed" in head["ledger"] and len(head["ledger"]["writes"]) < 3
        assert app.get_state(_config("t")).values["ledger"][-1]["step"] == 7


@upstream_reads_blob_seeds
@pytest.mark.usefixtures("small_copies")
def test_a_domains_namespace_reads_as_langgraphs(pg_database):
    root = ops_tree(pages=4)
    with open_checkpointer(pg_database) as saver:
        app = root.compile(checkpointer=saver)
        app.invoke(_ask("Page the on-call"), _config("tree"), durability="sync")
        with PostgresSaver.from_conn_string(pg_database) as upstream:
            spaces = {
                c["configurable"]["checkpoint_ns"] for c in _every_checkpoint(upstream, "tree")
            }
        assert any(ns.startswith("ops") for ns in spaces)
        assert assert_same_everywhere(pg_database, saver, "tree") > 10


def _extend(state: list[str], batches: Sequence[list[str]]) -> list[str]:
    """A delta channel's reducer: the state, then each batch's items."""
    return [*state, *(item for batch in batches for item in batch)]


class Trail(TypedDict):
    trail: Annotated[list[str], DeltaChannel(_extend, snapshot_frequency=2)]


class UncopiedTrail(TypedDict):
    trail: Annotated[list[str], DeltaChannel(_extend, snapshot_frequency=10_000)]


def _trail_graph(saver: BaseCheckpointSaver[Any], steps: int, schema: Any = Trail) -> Any:
    def step(state: Any) -> dict[str, list[str]]:
        return {"trail": [f"step {len(state['trail'])}"]}

    g = StateGraph(schema)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: END if len(s["trail"]) >= steps else "step")
    return g.compile(checkpointer=saver)


@pytest.mark.parametrize("fork_input", [None, {"trail": ["forked"]}], ids=["rerun", "new input"])
def test_a_forked_thread_reads_each_branch_as_langgraph(pg_database, fork_input):
    # Run again from an older checkpoint (time travel): the fork's checkpoints have
    # larger ids than the other branch's, so the id range ours reads for the fork holds
    # the other branch's writes too: they must be left out. (A new input makes
    # LangGraph copy the channel where the fork starts; a rerun does not.)
    with open_checkpointer(pg_database) as saver:
        app = _trail_graph(saver, 8, UncopiedTrail)
        first = app.invoke({"trail": ["in"]}, _config("fork"), durability="sync")
        older = next(
            s.config for s in app.get_state_history(_config("fork")) if len(s.values["trail"]) == 3
        )
        forked = {"configurable": {**older["configurable"], "lgsp_fork": True}}
        out = app.invoke(fork_input, forked, durability="sync")
        assert first["trail"] == ["in", *(f"step {n}" for n in range(1, 8))]
        if fork_input is None:
            assert out["trail"] == first["trail"]
        else:
            assert out["trail"] == [*first["trail"][:3], "forked", *first["trail"][4:]]
        assert assert_same_everywhere(pg_database, saver, "fork", ["trail", "nothing"]) > 12
        head = saver.get_delta_channel_history(config=_config("fork"), channels=["trail"])
        seed = head["trail"]["seed"].value if "seed" in head["trail"] else []  # type: ignore[attr-defined]
        writes = [item for w in head["trail"]["writes"] for item in w[2]]
        assert [*seed, *writes] == out["trail"]
        assert app.get_state(_config("fork")).values["trail"] == out["trail"]


def test_a_race_fork_without_a_copy_reads_each_branch_as_langgraph(pg_database):
    # With fence=False, two runs that read the same head each store a child of it, and
    # LangGraph copies nothing there (each loaded the newest checkpoint). The later
    # branch's chain then spans the earlier branch's checkpoints in id order, writes
    # and all: the id range ours reads holds them, and they must be left out.
    entered, gate = threading.Event(), threading.Event()

    def step(state: Any, config: RunnableConfig) -> dict[str, list[str]]:
        if config["configurable"].get("hold"):
            entered.set()
            assert gate.wait(30)
        return {"trail": [f"step {len(state['trail'])}"]}

    g = StateGraph(UncopiedTrail)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_edge("step", "step")
    with open_checkpointer(pg_database, fence=False) as saver:
        app = g.compile(checkpointer=saver, interrupt_before=["step"])
        app.invoke({"trail": ["in"]}, _config("race"), durability="sync")
        held = threading.Thread(
            target=app.invoke,
            args=(None, _config("race", hold=True)),
            kwargs={"durability": "sync"},
        )
        held.start()
        assert entered.wait(30)
        app.invoke(None, _config("race"), durability="sync")  # B: a child of the same head
        b1 = app.get_state(_config("race")).config
        gate.set()
        held.join(30)
        a1 = app.get_state(_config("race")).config  # A's child, stored after B's
        a1_id, b1_id = a1["configurable"]["checkpoint_id"], b1["configurable"]["checkpoint_id"]
        assert a1_id > b1_id
        app.invoke(None, b1, durability="sync")  # B's branch: a write at B1
        app.invoke(None, a1, durability="sync")  # A's: its chain spans B1 by id
        assert assert_same_everywhere(pg_database, saver, "race", ["trail"]) >= 6
        with PostgresSaver.from_conn_string(pg_database) as upstream:
            a2 = next(
                t.config
                for t in upstream.list(_config("race"))
                if (t.parent_config or {}).get("configurable", {}).get("checkpoint_id") == a1_id
            )
        history = saver.get_delta_channel_history(config=a2, channels=["trail"])
        assert [item for w in history["trail"]["writes"] for item in w[2]] == ["in", "step 1"]


class Plain(TypedDict):
    items: Annotated[list[str], operator.add]
    count: int


class Delta(TypedDict):
    items: Annotated[list[str], DeltaChannel(_extend)]
    count: int


def _counting(schema: Any, saver: BaseCheckpointSaver[Any]) -> Any:
    def add(state: Any) -> dict[str, Any]:
        return {"items": [f"item {state['count']}"], "count": state["count"] + 1}

    g = StateGraph(schema)
    g.add_node("add", add)
    g.add_edge(START, "add")
    g.add_conditional_edges("add", lambda s: END if s["count"] % 3 == 0 else "add")
    return g.compile(checkpointer=saver)


@upstream_reads_blob_seeds
def test_a_thread_written_before_its_channels_were_delta_channels(pg_database):
    # A plain channel's value is a blob at every version, an int stays inline: both are
    # seeds; the thread then carries on as a delta channel.
    with open_checkpointer(pg_database) as saver:
        _counting(Plain, saver).invoke({"items": [], "count": 0}, _config("old"))
        assert assert_same_everywhere(pg_database, saver, "old", ["items", "count"]) > 3
        history = saver.get_delta_channel_history(config=_config("old"), channels=["count"])
        assert history["count"]["seed"] == 2  # inline: the head's parent's count
        app = _counting(Delta, saver)
        out = app.invoke({"items": ["new turn"], "count": 3}, _config("old"))
        assert out["items"][3:] == ["new turn", "item 3", "item 4", "item 5"]
        assert assert_same_everywhere(pg_database, saver, "old", ["items", "count"]) > 6
        assert app.get_state(_config("old")).values == out


def test_the_edges_of_the_contract(pg_database):
    with open_checkpointer(pg_database) as saver:
        _trail_graph(saver, 3).invoke({"trail": ["in"]}, _config("e"), durability="sync")
        with PostgresSaver.from_conn_string(pg_database) as upstream:
            for config, channels in [
                (_config("e"), ["trail"]),  # no checkpoint id: the newest
                (_config("nobody"), ["trail"]),  # no such thread
                (_config("e", checkpoint_id="1ef00000-0000-6000-8000-000000000000"), ["trail"]),
                (_config("e", checkpoint_ns="no|such"), ["trail"]),
                (_config("e"), []),
            ]:
                ours = saver.get_delta_channel_history(config=config, channels=channels)
                theirs = upstream.get_delta_channel_history(config=config, channels=channels)
                assert ours == theirs, (config, channels)
        assert saver.get_delta_channel_history(config=_config("nobody"), channels=["a"]) == {
            "a": {"writes": []}
        }
        assert saver.get_delta_channel_history(config=_config("e"), channels=[]) == {}
        # a name given twice is read once (LangGraph's saver returns its writes twice)
        once = saver.get_delta_channel_history(config=_config("e"), channels=["trail"])
        twice = saver.get_delta_channel_history(config=_config("e"), channels=["trail"] * 2)
        assert twice == once and len(once["trail"]["writes"]) == 1


def test_a_saver_on_one_connection_reads_the_same(pg_database):
    with open_checkpointer(pg_database) as pooled:
        _trail_graph(pooled, 6).invoke({"trail": ["in"]}, _config("c"), durability="sync")
    with psycopg.connect(
        pg_database, autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as conn:
        assert assert_same_everywhere(pg_database, _PostgresSaver(conn), "c", ["trail"]) > 5


# -- how it is read ---------------------------------------------------------------------


def test_the_statements_do_not_grow_with_the_channels_or_the_chain(pg_database, monkeypatch):
    with open_checkpointer(pg_database) as saver:
        _trail_graph(saver, 300).invoke(
            {"trail": ["in"]}, {**_config("long"), "recursion_limit": 400}, durability="sync"
        )
        # a copy every 2 updates: the walk stops in the first page
        spy = Spy(monkeypatch)
        got = saver.get_delta_channel_history(config=_config("long"), channels=["trail"])
        assert len(got["trail"]["writes"]) <= 2 and "seed" in got["trail"]
        # the head, the stored values, one page of the chain, the writes and seeds
        assert len(spy.statements) == 4 and spy.pages() == 1
        spy.statements.clear()
        # eleven channels, most never stored: they walk the whole chain of 302
        # checkpoints, in pages of 128 and 512 (short: the chain's end), no more statements
        saver.get_delta_channel_history(config=_config("long"), channels=[*CHANNELS, "trail"])
        assert spy.pages() == 2 and len(spy.statements) == 5
        assert assert_same_everywhere(pg_database, saver, "long", ["trail"]) > 300


def test_pages_grow_and_the_walk_crosses_them(pg_database, monkeypatch):
    monkeypatch.setattr(delta_history, "FIRST_PAGE", 2)
    monkeypatch.setattr(delta_history, "PAGE_GROWTH", 3)
    with open_checkpointer(pg_database) as saver:
        app = _trail_graph(saver, 40)
        app.invoke({"trail": ["in"]}, _config("p"), durability="sync")
        spy = Spy(monkeypatch)
        got = saver.get_delta_channel_history(config=_config("p"), channels=["nothing"])
        assert got == {"nothing": {"writes": []}}
        assert spy.pages() == 4  # 2, 6, 18, 54 rows asked; 42 checkpoints


# -- async ------------------------------------------------------------------------------


@upstream_reads_blob_seeds
@pytest.mark.usefixtures("small_copies")
async def test_the_async_saver_reads_as_langgraphs_and_its_sync_bridge_too(pg_database):
    async with aopen_checkpointer(pg_database) as saver:
        app = tool_team(5).compile(checkpointer=saver)
        await app.ainvoke(_ask("Report on heat pumps"), _config("a"), durability="sync")
        async with AsyncPostgresSaver.from_conn_string(pg_database) as upstream:
            configs = [t.config async for t in upstream.alist(_config("a"))]
            assert len(configs) > 10
            for config in configs:
                ours = await saver.aget_delta_channel_history(config=config, channels=CHANNELS)
                theirs = await upstream.aget_delta_channel_history(config=config, channels=CHANNELS)
                assert ours == theirs, config
            bridged = await asyncio.to_thread(
                saver.get_delta_channel_history, config=_config("a"), channels=CHANNELS
            )
            assert bridged == await upstream.aget_delta_channel_history(
                config=_config("a"), channels=CHANNELS
            )
        state = await app.aget_state(_config("a"))
        assert state.values["status"] == "done" and len(state.values["ledger"]) == 5

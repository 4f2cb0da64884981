"""Storage that stays small with tool-calling agents, on real Postgres and SQLite.

Each worker is a `create_agent` graph calling a tool once per hop (2,000 characters of
output): its checkpoints are deleted once the hop is recorded, so a thread's bytes grow
by the same amount per hop however long it runs. What must keep working does: an
interrupt inside an agent after many hops, time travel of the root, the domains of a
tree, and fan-out branches of which one pauses. (SIGKILL mid-agent:
`test_agent_storage_crash.py`.)
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.channels import DeltaChannel
from langgraph.types import Command

from langgraph_supervisor_pro import (
    SupervisorView,
    Worker,
    aopen_checkpointer,
    create_supervisor,
    open_checkpointer,
)
from langgraph_supervisor_pro import _state as state_module
from langgraph_supervisor_pro.observability import audit_trail
from tests._agents import answer, pausing_agent, tool_agent, tool_team

pytestmark = pytest.mark.integration

NAMES = ("researcher", "analyst")
TURN_HOPS = 6


@pytest.fixture(params=["postgres", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'checkpoints.db'}"
    return str(request.getfixturevalue("pg_database"))


def _config(thread: str, **extra: Any) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, **extra}}


def _ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


def stored_bytes(url: str, thread: str) -> tuple[int, int]:
    """The thread's stored bytes: (root namespace, every other namespace)."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            queries = (
                "SELECT checkpoint_ns = '', sum(length(checkpoint) + length(metadata))"
                " FROM checkpoints WHERE thread_id = ? GROUP BY 1",
                "SELECT checkpoint_ns = '', sum(length(value)) FROM writes"
                " WHERE thread_id = ? GROUP BY 1",
            )
            rows = [row for query in queries for row in conn.execute(query, (thread,))]
    else:
        with psycopg.connect(url) as conn:
            rows = [
                row
                for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
                for row in conn.execute(
                    f"SELECT checkpoint_ns = '', sum(pg_column_size(t.*)) FROM {table} AS t"
                    " WHERE thread_id = %s GROUP BY 1",
                    (thread,),
                )
            ]
    root = sum(int(size) for is_root, size in rows if is_root)
    return root, sum(int(size) for is_root, size in rows if not is_root)


def namespaces(saver: Any, thread: str) -> set[str]:
    return {c.config["configurable"]["checkpoint_ns"] for c in saver.list(_config(thread))}


def growth_per_range(
    url: str, thread: str, *, keep: bool, ranges: int = 3
) -> list[tuple[int, int]]:
    """(root, subgraph) bytes each range of `TURN_HOPS` hops of one run added, in order.

    The thread's bytes are read at the first update after each range's last hop: with
    `durability="sync"` that step started only once the hop's checkpoint was stored.
    """
    hops = TURN_HOPS * ranges
    samples = [(0, 0)]
    done, due = 0, False
    with open_checkpointer(url, keep_agent_checkpoints=keep) as saver:
        app = tool_team(hops, NAMES).compile(checkpointer=saver)
        updates = app.stream(
            _ask("Write it all"), _config(thread), stream_mode="updates", durability="sync"
        )
        for update in updates:
            if due:
                samples.append(stored_bytes(url, thread))
            done += sum(node in NAMES for node in update)
            due = done % TURN_HOPS == 0 and len(samples) <= done // TURN_HOPS
        assert done == hops and len(samples) == ranges + 1
    return [
        (after[0] - before[0], after[1] - before[1])
        for before, after in itertools.pairwise(samples)
    ]


def test_bytes_per_hop_stay_flat_and_the_agents_keep_nothing(url):
    ours = growth_per_range(url, "ours", keep=False)
    assert all(sub == 0 for _, sub in ours), ours  # no agent checkpoint outlives its hop
    assert ours[-1][0] <= 1.3 * ours[0][0], ours  # hops 13-18 cost what hops 1-6 did
    # The same run with every agent checkpoint kept (LangGraph's behaviour): each agent
    # checkpoint repeats the worker's growing history, so the agents' bytes grow range
    # after range and dwarf the root's.
    kept = growth_per_range(url, "kept", keep=True)
    assert kept[-1][1] > 1.3 * kept[0][1], kept
    assert sum(sub for _, sub in kept) > 2 * sum(root for root, _ in kept), kept


def test_an_interrupt_inside_an_agent_after_many_hops_resumes(url):
    calls: list[int] = []  # the researcher's eighth visit (hop 15) asks first
    question = {"question": "use part 8?"}
    agents = {"researcher": pausing_agent("researcher", part=8, question=question, calls=calls)}
    with open_checkpointer(url) as saver:
        app = tool_team(16, NAMES, agents=agents).compile(checkpointer=saver)
        paused = app.invoke(_ask("Write it all"), _config("t1"), durability="sync")
        assert [i.value for i in paused["__interrupt__"]] == [{"question": "use part 8?"}]
        assert len(app.get_state(_config("t1")).values["ledger"]) == 14
        (held,) = namespaces(saver, "t1") - {""}  # only the paused hop's agent is kept
    made = len(calls)
    # Resumed by a new checkpointer, as a new process would.
    with open_checkpointer(url) as saver:
        app = tool_team(16, NAMES, agents=agents).compile(checkpointer=saver)
        (task,) = app.get_state(_config("t1"), subgraphs=True).tasks
        assert task.state.config["configurable"]["checkpoint_ns"] == held
        out = app.invoke(Command(resume="yes"), _config("t1"), durability="sync")
        assert out["status"] == "done" and len(out["ledger"]) == 16
        assert out["workers"]["researcher"]["messages"][-1].content == answer("researcher", 8)
        assert len(calls) == made + 1  # the agent went on from its checkpoint
        assert namespaces(saver, "t1") == {""}


def test_time_travel_of_the_root_still_works(url):
    with open_checkpointer(url) as saver:
        app = tool_team(TURN_HOPS, NAMES).compile(checkpointer=saver)
        out = app.invoke(_ask("Write it"), _config("t1"), durability="sync")
        history = list(app.get_state_history(_config("t1")))
        assert history[0].values == out
        # An older checkpoint, routed to a worker: its agent's state is gone, the rest is
        # there (and reading it does not fail).
        routed = next(s for s in history if s.next == ("analyst",))
        assert app.get_state(routed.config, subgraphs=True).values == routed.values
        after_3 = next(
            s
            for s in history
            if len(s.values.get("ledger") or []) == 3 and s.next == ("supervisor",)
        )
        fork = {"configurable": {**after_3.config["configurable"], "lgsp_fork": True}}
        again = app.invoke(None, fork, durability="sync")
        assert again["status"] == "done"
        assert again["ledger"][:3] == out["ledger"][:3]
        assert [e["summary"] for e in again["ledger"]] == [e["summary"] for e in out["ledger"]]
        assert app.get_state(_config("t1")).values["ledger"] == again["ledger"]
        assert namespaces(saver, "t1") == {""}


def _delta_frequencies(app: Any) -> set[int]:
    return {c.snapshot_frequency for c in app.channels.values() if isinstance(c, DeltaChannel)}


def test_a_thread_copied_at_another_snapshot_frequency_loads_and_carries_on(url, monkeypatch):
    """Threads written when the root's delta channels were copied at another frequency
    (LangGraph's default of 100 before `DELTA_SNAPSHOT_FREQUENCY`; 2 here, so six hops
    hold copies) read back and carry on: a copy is found by its blob, not its frequency."""
    current = state_module.DELTA_SNAPSHOT_FREQUENCY
    monkeypatch.setattr(state_module, "DELTA_SNAPSHOT_FREQUENCY", 2)
    with open_checkpointer(url) as saver:
        old = tool_team(TURN_HOPS, NAMES).compile(checkpointer=saver)
        assert _delta_frequencies(old) == {2}
        written = old.invoke(_ask("Write it"), _config("old"), durability="sync")
        old_history = [s.values for s in old.get_state_history(_config("old"), limit=8)]
        latest = saver.get_tuple(_config("old"))
        assert latest is not None
        replay = saver.get_delta_channel_history(
            config=latest.config, channels=["ledger", "workers"]
        )
        assert "seed" in replay["ledger"] and "seed" in replay["workers"]  # copies were made
        assert len(replay["ledger"]["writes"]) < TURN_HOPS
    monkeypatch.setattr(state_module, "DELTA_SNAPSHOT_FREQUENCY", current)
    with open_checkpointer(url) as saver:
        new = tool_team(TURN_HOPS, NAMES).compile(checkpointer=saver)
        assert _delta_frequencies(new) == {current} != {2}
        assert new.get_state(_config("old")).values == written
        history = [s.values for s in new.get_state_history(_config("old"), limit=8)]
        assert history == old_history
        assert sum(e.kind == "hop" for e in audit_trail(saver, "old").events) == TURN_HOPS
        out = new.invoke(_ask("And the rest"), _config("old"), durability="sync")
        assert out["status"] == "done" and len(out["ledger"]) == 2 * TURN_HOPS
        assert out["ledger"][:TURN_HOPS] == written["ledger"]
        for name in NAMES:
            before = written["workers"][name]
            after = out["workers"][name]
            assert after["messages"][: len(before["messages"])] == before["messages"]
            assert after["results"][: len(before["results"])] == before["results"]
            assert len(after["results"]) == 2 * len(before["results"])
        assert new.get_state(_config("old")).values == out


def test_tree_domains_keep_their_state_and_lose_their_agents(url):
    ops = tool_team(2, ("clerk",), name="ops")  # uncompiled: a stateful domain
    mine = tool_team(2, ("scribe",), name="mine").compile()  # a fresh run per visit
    workers = [
        Worker(name="ops", description="Operations.", agent=ops),
        Worker(name="mine", description="Records.", agent=mine),
    ]

    def router(view: SupervisorView) -> str:
        return ("ops", "mine")[len(view.ledger) % 2] if len(view.ledger) < 4 else "FINISH"

    with open_checkpointer(url) as saver:
        app = create_supervisor(workers, router=router, max_steps=4).compile(checkpointer=saver)
        out = app.invoke(_ask("Run the week"), _config("t1"), durability="sync")
        assert out["status"] == "done" and [e["status"] for e in out["ledger"]] == ["success"] * 4
        found = namespaces(saver, "t1")
        # The root, the stateful domain, and each visit of the compiled domain remain;
        # no agent of either domain does.
        assert "ops" in found
        assert {ns.split(":")[0] for ns in found} == {"", "ops", "mine"}
        assert all("|" not in ns for ns in found), found
        domain = app.get_state(_config("t1", checkpoint_ns="ops")).values
        assert [e["worker"] for e in domain["ledger"]] == ["clerk"] * 4  # two visits, 2 each
        assert domain["workers"]["clerk"]["messages"][-1].content == answer("clerk", 4)


def test_fan_out_branches_keep_a_paused_branch_until_it_completes(url):
    agents = {"researcher": pausing_agent("researcher", part=1, question="go on?")}
    workers = [
        Worker(name=n, description=f"The {n}.", agent=agents.get(n) or tool_agent(n)) for n in NAMES
    ]

    def router(view: SupervisorView) -> Any:
        return list(NAMES) if not view.ledger else "FINISH"

    with open_checkpointer(url) as saver:
        team = create_supervisor(workers, router=router, parallel=True, max_steps=2)
        app = team.compile(checkpointer=saver)
        paused = app.invoke(_ask("Both at once"), _config("t1"), durability="sync")
        assert [i.value for i in paused["__interrupt__"]] == ["go on?"]
        held = namespaces(saver, "t1") - {""}
        assert any(ns.startswith("researcher:") for ns in held)
        out = app.invoke(Command(resume="yes"), _config("t1"), durability="sync")
        assert out["status"] == "done"
        assert sorted(e["worker"] for e in out["ledger"]) == sorted(NAMES)
        assert namespaces(saver, "t1") == {""}


def test_two_domains_fanned_out_at_once_lose_their_agents_and_nothing_else(url):
    # Each domain stores its own checkpoints while the other does: two sweeps of one
    # thread at once (async, so the branches really interleave).
    domains = {n: tool_team(2, (f"{n}_clerk",), name=n).compile() for n in ("east", "west")}
    workers = [Worker(name=n, description=f"The {n}.", agent=g) for n, g in domains.items()]

    def router(view: SupervisorView) -> Any:
        return list(domains) if not view.ledger else "FINISH"

    async def main() -> tuple[dict[str, Any], set[str]]:
        async with aopen_checkpointer(url) as saver:
            team = create_supervisor(workers, router=router, parallel=True, max_steps=2)
            app = team.compile(checkpointer=saver)
            out = await app.ainvoke(_ask("Both regions"), _config("t1"))
            return out, {
                c.config["configurable"]["checkpoint_ns"] async for c in saver.alist(_config("t1"))
            }

    out, found = asyncio.run(main())
    assert out["status"] == "done"
    assert sorted(e["worker"] for e in out["ledger"]) == ["east", "west"]
    assert all(e["status"] == "success" for e in out["ledger"])
    assert {ns.split(":")[0] for ns in found} == {"", "east", "west"}
    assert all("|" not in ns for ns in found), found  # no clerk's agent is left

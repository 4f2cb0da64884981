"""Tests for langgraph_supervisor_pro.persistence._standby, in one process on real Postgres.

A dead holder is made by taking a lease on a connection of its own and closing that
connection without releasing: Postgres drops the lock, the `lgsp_thread_leases` row
stays, as after a killed process. (Real processes and SIGKILL: tests/integration/
test_standby.py.)
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import psycopg
import pytest
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict

from langgraph_supervisor_pro import aopen_checkpointer, open_checkpointer
from langgraph_supervisor_pro.persistence import aresume_orphans, astandby, resume_orphans, standby
from langgraph_supervisor_pro.persistence._leases import (
    _connect,
    _options,
    _postgres_lease,
    thread_lease,
)
from langgraph_supervisor_pro.persistence._standby import Takeover


class State(TypedDict):
    trail: list[str]


def builder(bodies: list[str], *, fail_b: bool = False, ask_b: bool = False) -> Any:
    def a(state: State) -> dict[str, Any]:
        bodies.append("a")
        return {"trail": [*state["trail"], "a"]}

    def b(state: State) -> dict[str, Any]:
        bodies.append("b")
        if fail_b:
            raise RuntimeError("b broke")
        if ask_b:
            interrupt({"question": "go on?"})
        return {"trail": [*state["trail"], "b"]}

    graph = StateGraph(State)
    graph.add_node("a", a)
    graph.add_node("b", b)
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    return graph


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def die_holding(url: str, thread: str, owner: str = "dead-primary") -> None:
    """Take the lease as a process would, then lose the session without releasing it."""
    opts = _options(thread, None, owner, 30.0, 5.0, "test")
    conn = _connect(url, opts)
    _postgres_lease(conn, url, opts)
    conn.close()


def stop_before_b(saver: Any, thread: str, bodies: list[str]) -> None:
    """Run `a` only: the head's next task is `b`, as if the process died before it ran."""
    paused = builder(bodies).compile(checkpointer=saver, interrupt_before=["b"])
    paused.invoke({"trail": []}, cfg(thread), durability="sync")
    assert paused.get_state(cfg(thread)).next == ("b",)


def rows(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT thread_id, owner FROM lgsp_thread_leases").fetchall()


def test_resumes_a_run_whose_holder_died(pg_database):
    bodies: list[str] = []
    with open_checkpointer(pg_database) as saver:
        stop_before_b(saver, "orphan", bodies)
        die_holding(pg_database, "orphan")
        assert rows(pg_database) == [("orphan", "dead-primary")]
        app = builder(bodies).compile(checkpointer=saver)
        [takeover] = resume_orphans(app, owner="standby-1")
        assert takeover.thread_id == "orphan" and takeover.outcome == "finished"
        assert takeover.pending == ("b",) and takeover.error is None
        assert takeover.checkpoint_id is not None
        assert takeover.line().startswith("thread orphan: resumed at ['b'] from checkpoint")
        assert bodies == ["a", "b"]  # `a` did not run again
        assert app.get_state(cfg("orphan")).values == {"trail": ["a", "b"]}
        assert rows(pg_database) == []
        assert resume_orphans(app) == []  # nothing left


def test_leaves_a_live_holder_alone(pg_database):
    bodies: list[str] = []
    with open_checkpointer(pg_database) as saver:
        stop_before_b(saver, "alive", bodies)
        app = builder(bodies).compile(checkpointer=saver)
        with thread_lease(app, "alive", owner="primary"):
            assert resume_orphans(app) == []
        assert bodies == ["a"]
        assert rows(pg_database) == []


def test_nothing_to_do_for_finished_and_interrupted_runs(pg_database):
    bodies: list[str] = []
    with open_checkpointer(pg_database) as saver:
        done = builder(bodies).compile(checkpointer=saver)
        done.invoke({"trail": []}, cfg("finished"), durability="sync")
        asking = builder(bodies, ask_b=True).compile(checkpointer=saver)
        asking.invoke({"trail": []}, cfg("asking"), durability="sync")
        assert asking.get_state(cfg("asking")).interrupts
        die_holding(pg_database, "finished")
        die_holding(pg_database, "asking")
        bodies.clear()
        found = {t.thread_id: t for t in resume_orphans(asking)}
        assert {k: t.outcome for k, t in found.items()} == {
            "finished": "nothing_to_do",
            "asking": "nothing_to_do",
        }
        assert bodies == []  # nothing ran; the review still waits
        assert asking.get_state(cfg("asking")).interrupts
        assert found["finished"].line().endswith("nothing to resume from checkpoint " + str(
            found["finished"].checkpoint_id) + " (the run had stopped)")  # fmt: skip
        assert rows(pg_database) == []


def test_a_task_that_failed_before_the_crash_is_left_for_a_person(pg_database):
    bodies: list[str] = []
    with open_checkpointer(pg_database) as saver:
        broken = builder(bodies, fail_b=True).compile(checkpointer=saver)
        with pytest.raises(RuntimeError, match="b broke"):
            broken.invoke({"trail": []}, cfg("broken"), durability="sync")
        die_holding(pg_database, "broken")
        bodies.clear()
        [takeover] = resume_orphans(broken)
        assert takeover.outcome == "skipped"
        assert takeover.error is not None and "(b: RuntimeError('b broke'))" in takeover.error
        assert "resume it by hand" in takeover.line()
        assert bodies == []


def test_a_resumed_run_that_fails_is_reported_once(pg_database):
    bodies: list[str] = []
    with open_checkpointer(pg_database) as saver:
        stop_before_b(saver, "fails", bodies)
        die_holding(pg_database, "fails")
        broken = builder(bodies, fail_b=True).compile(checkpointer=saver)
        [takeover] = resume_orphans(broken)
        assert takeover.outcome == "failed"
        assert takeover.error == "RuntimeError: b broke"
        assert takeover.line().endswith("; failed: RuntimeError: b broke")
        assert takeover.to_dict()["outcome"] == "failed"
        assert resume_orphans(broken) == []  # its lease row is gone: not retried in a loop
        assert bodies == ["a", "b"]


def test_standby_loop_until_stopped(pg_database):
    bodies: list[str] = []
    seen: list[Takeover] = []
    stop = threading.Event()
    with open_checkpointer(pg_database) as saver:
        app = builder(bodies).compile(checkpointer=saver)

        def report(takeover: Takeover) -> None:
            seen.append(takeover)
            stop.set()

        loop = threading.Thread(
            target=standby, args=(app,), kwargs={"interval": 0.1, "stop": stop,
                                                 "on_takeover": report},
        )  # fmt: skip
        loop.start()
        stop_before_b(saver, "later", bodies)
        die_holding(pg_database, "later")
        loop.join(30)
        assert not loop.is_alive()
        assert [(t.thread_id, t.outcome) for t in seen] == [("later", "finished")]


def test_needs_a_postgres_graph_and_a_good_interval(pg_database):
    with open_checkpointer("memory") as saver:
        app = builder([]).compile(checkpointer=saver)
        with pytest.raises(TypeError, match="the standby needs the Postgres checkpointer"):
            resume_orphans(app)
    with pytest.raises(TypeError, match="got StateGraph; give a graph compiled"):
        resume_orphans(builder([]))
    with open_checkpointer(pg_database) as saver:
        app = builder([]).compile(checkpointer=saver)
        assert resume_orphans(app) == []  # no lease table yet
        for bad in (0, -1, float("nan"), float("inf")):
            with pytest.raises(ValueError, match="standby interval"):
                standby(app, interval=bad)
        with pytest.raises(ValueError, match="resume_orphans expire_after"):
            resume_orphans(app, expire_after=1)
        with pytest.raises(ValueError, match="standby owner"):
            standby(app, owner="")


def async_builder(bodies: list[str]) -> Any:
    """`a` then `b`, both async only (no sync function: `invoke` could not run them)."""

    async def a(state: State) -> dict[str, Any]:
        bodies.append("a")
        return {"trail": [*state["trail"], "a"]}

    async def b(state: State) -> dict[str, Any]:
        bodies.append("b")
        return {"trail": [*state["trail"], "b"]}

    graph = StateGraph(State)
    graph.add_node("a", a)
    graph.add_node("b", b)
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    return graph


async def test_async_twins_resume_an_async_graph(pg_database):
    bodies: list[str] = []
    async with aopen_checkpointer(pg_database) as saver:
        paused = async_builder(bodies).compile(checkpointer=saver, interrupt_before=["b"])
        await paused.ainvoke({"trail": []}, cfg("async-orphan"), durability="sync")
        await asyncio.to_thread(die_holding, pg_database, "async-orphan")
        app = async_builder(bodies).compile(checkpointer=saver)
        [takeover] = await aresume_orphans(app, owner="standby-a")
        assert (takeover.thread_id, takeover.outcome, takeover.pending) == (
            "async-orphan",
            "finished",
            ("b",),
        )
        assert bodies == ["a", "b"]
        assert (await app.aget_state(cfg("async-orphan"))).values == {"trail": ["a", "b"]}
        assert await aresume_orphans(app) == []

        seen: list[Takeover] = []
        stop = asyncio.Event()

        def report(takeover: Takeover) -> None:
            seen.append(takeover)
            stop.set()

        loop = asyncio.create_task(astandby(app, interval=0.1, stop=stop, on_takeover=report))
        await paused.ainvoke({"trail": []}, cfg("async-later"), durability="sync")
        await asyncio.to_thread(die_holding, pg_database, "async-later")
        await asyncio.wait_for(loop, 30)
        assert [(t.thread_id, t.outcome) for t in seen] == [("async-later", "finished")]


async def test_async_twins_need_the_async_postgres_checkpointer(pg_database):
    with open_checkpointer(pg_database) as saver:
        app = builder([]).compile(checkpointer=saver)
        with pytest.raises(TypeError, match="aopen_checkpointer"):
            await aresume_orphans(app)
    async with aopen_checkpointer(pg_database) as saver:
        app = builder([]).compile(checkpointer=saver)
        with pytest.raises(ValueError, match="astandby interval"):
            await astandby(app, interval=0)
        with pytest.raises(TypeError, match="needs the Postgres checkpointer open_checkpointer"):
            resume_orphans(app)

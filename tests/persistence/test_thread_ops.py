"""`copy_thread` and `delete_for_runs` of the checkpointers of `open_checkpointer` (no mocks).

On memory, SQLite and Postgres, sync and async: a copy reads back as its source and runs
on its own; a copied review paused inside a worker's agent resumes in the copy without
running its recorded effect again (Postgres, `lgsp_effects`); deleting a thread's newest
run leaves it as the run before left it, and a new run works; every refusal.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.channels import DeltaChannel, EphemeralValue
from langgraph.graph import START, StateGraph
from langgraph.pregel import NodeBuilder, Pregel
from langgraph.types import Command, interrupt

from langgraph_supervisor_pro import aopen_checkpointer, open_checkpointer
from langgraph_supervisor_pro.persistence import aopen_effects, open_effects
from langgraph_supervisor_pro.persistence._effects import effect_key
from langgraph_supervisor_pro.persistence._leases import thread_lease
from langgraph_supervisor_pro.persistence._thread_ops import (
    Stored,
    checked_run_ids,
    checked_threads,
    effect_part,
    input_task_id,
    plan_deletion,
)
from tests._agents import lookup_tool, pausing_agent, tool_agent, tool_team
from tests.persistence._threads import ops_tree, team

NAMES = ("researcher", "analyst")
ODD = "copy/100%-zürich-\U0001f600"
"""A target id with `/` and `%` (escaped in effect keys) and characters beyond ASCII."""


def _config(thread: str, run: str | None = None) -> RunnableConfig:
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    if run is not None:
        config["metadata"] = {"run_id": run}  # as a LangGraph server passes it
    return config


def _ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


def history(app: Any, thread: str) -> list[tuple[Any, ...]]:
    """What `get_state_history` shows of a thread, without its thread id."""
    return [_shown(s) for s in app.get_state_history(_config(thread))]


async def ahistory(app: Any, thread: str) -> list[tuple[Any, ...]]:
    return [_shown(s) async for s in app.aget_state_history(_config(thread))]


def _shown(snapshot: Any) -> tuple[Any, ...]:
    parent = (snapshot.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    tasks = [(t.name, [i.value for i in t.interrupts]) for t in snapshot.tasks]
    checkpoint_id = snapshot.config["configurable"]["checkpoint_id"]
    return (snapshot.values, snapshot.next, snapshot.metadata, checkpoint_id, parent, tasks)


def stored(saver: Any, thread: str) -> list[tuple[Any, ...]]:
    """Every checkpoint of every namespace of a thread, with its pending writes."""
    return sorted((_row(t) for t in saver.list(_config(thread))), key=lambda r: r[:2])


async def astored(saver: Any, thread: str) -> list[tuple[Any, ...]]:
    rows = [_row(t) async for t in saver.alist(_config(thread))]
    return sorted(rows, key=lambda r: r[:2])


def _row(t: Any) -> tuple[Any, ...]:
    configurable = t.config["configurable"]
    parent = (t.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    writes = sorted((w[0], w[1], repr(w[2])) for w in t.pending_writes or [])
    values = repr(sorted(t.checkpoint["channel_values"].items()))
    return (
        configurable["checkpoint_ns"],
        configurable["checkpoint_id"],
        parent,
        t.metadata,
        writes,
        values,
    )


def blob_count(url: str, saver: Any, thread: str) -> int:
    """A thread's blobs (a SQLite checkpoint holds its values: none there)."""
    if url == "memory":
        return sum(1 for key in saver.blobs if key[0] == thread)
    if url.startswith("sqlite"):
        return 0
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM checkpoint_blobs WHERE thread_id = %s", (thread,)
        ).fetchone()
    assert row is not None
    return int(row[0])


# -- graphs ----------------------------------------------------------------------------


def delta_graph(saver: Any) -> Any:
    """A graph whose input channel is a `DeltaChannel` (LangGraph's low-level `Pregel`).

    LangGraph stores such an input on the checkpoint the run starts from (a
    `StateGraph`'s input goes through its `__start__` node instead).
    """
    count = (
        NodeBuilder()
        .subscribe_to("go")
        .read_from("items")
        .do(lambda read: [f"saw {len(read['items'])}"])
        .write_to("items")
    )
    return Pregel(
        nodes={"count": count},
        channels={"items": DeltaChannel(operator.add), "go": EphemeralValue(int)},
        input_channels=["items", "go"],
        output_channels=["items"],
        checkpointer=saver,
    )


def results(out: dict[str, Any]) -> list[str]:
    return [entry["summary"] for entry in out["ledger"]]


# -- copy_thread ------------------------------------------------------------------------


def test_a_copy_reads_back_as_its_source_and_runs_on_its_own(url):
    with open_checkpointer(url) as saver:
        app = tool_team(2, NAMES).compile(checkpointer=saver)
        app.invoke(_ask("Report on heat pumps"), _config("src"), durability="sync")
        app.invoke(_ask("And on tariffs"), _config("src"), durability="sync")
        before, rows = history(app, "src"), stored(saver, "src")
        saver.copy_thread("src", ODD)  # any text id every backend stores
        assert history(app, ODD) == before
        assert stored(saver, ODD) == rows
        assert app.get_state(_config(ODD)).values == app.get_state(_config("src")).values
        out = app.invoke(_ask("And on subsidies"), _config(ODD), durability="sync")
        assert out["status"] == "done" and out["turn"] == 3
        assert len(history(app, ODD)) > len(before)
        assert history(app, "src") == before  # the source is untouched
        assert stored(saver, "src") == rows


async def test_a_copy_reads_back_as_its_source_async(url):
    async with aopen_checkpointer(url) as saver:
        app = tool_team(2, NAMES).compile(checkpointer=saver)
        await app.ainvoke(_ask("Report on heat pumps"), _config("src"), durability="sync")
        before, rows = await ahistory(app, "src"), await astored(saver, "src")
        await saver.acopy_thread("src", "dst")
        assert await ahistory(app, "dst") == before
        assert await astored(saver, "dst") == rows
        out = await app.ainvoke(_ask("And on tariffs"), _config("dst"), durability="sync")
        assert out["status"] == "done" and out["turn"] == 2
        assert await ahistory(app, "src") == before


def test_a_copy_keeps_every_namespace_and_the_delta_chain(url):
    # A stateful subgraph (a domain) keeps its own namespace; the root's delta channels
    # are rebuilt from the whole chain of the copy.
    root = ops_tree()
    with open_checkpointer(url) as saver:
        app = root.compile(checkpointer=saver)
        for text in ("page the team", "page again"):
            app.invoke(_ask(text), _config("src"), durability="sync")
        rows = stored(saver, "src")
        assert {r[0] for r in rows} == {"", "ops"}
        saver.copy_thread("src", "dst")
        assert stored(saver, "dst") == rows
        out = app.invoke(_ask("page a third time"), _config("dst"), durability="sync")
        assert out["status"] == "done"
        assert [e["turn"] for e in out["ledger"]] == [1, 2, 3]  # the delta chain, rebuilt
        assert stored(saver, "src") == rows


def test_a_copied_paused_review_resumes_in_the_copy(url):
    with open_checkpointer(url) as saver:
        app = team().compile(checkpointer=saver)
        paused = app.invoke(_ask("ask about the refund"), _config("src"), durability="sync")
        assert paused["__interrupt__"]
        waiting = app.get_state(_config("src")).next
        saver.copy_thread("src", "dst")
        assert waiting and app.get_state(_config("dst")).next == waiting
        assert history(app, "dst") == history(app, "src")  # the interrupt included
        out = app.invoke(Command(resume="yes"), _config("dst"), durability="sync")
        assert results(out) == ["told yes"]
        assert app.get_state(_config("src")).next == waiting  # still paused
        assert results(app.invoke(Command(resume="no"), _config("src"))) == ["told no"]


# The paused review with a recorded effect: on Postgres, whose lgsp_effects rows the
# saver copies. The tool charges (an exactly-once effect), then asks for approval.


def _charging_team(charge: Callable[[int], None]) -> Any:
    def ask(visit: int) -> None:
        if visit == 2:
            charge(visit)
            if interrupt({"approve": "the charge"}) != "yes":
                raise ValueError("expected yes")

    agents = {"researcher": tool_agent("researcher", tools=[lookup_tool("researcher", ask)])}
    return tool_team(4, NAMES, agents=agents)


def _payments(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM payments").fetchone()
    assert row is not None
    return int(row[0])


def _effect_rows(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT key, thread_id FROM lgsp_effects").fetchall()
    return sorted((str(k), str(t)) for k, t in rows)


def test_a_copied_review_resumes_without_running_its_recorded_effect_again(pg_database):
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("CREATE TABLE payments (id serial PRIMARY KEY, thread text)")
    keys: list[str] = []
    with open_effects(pg_database) as effects, open_checkpointer(pg_database) as saver:

        def pay(conn: Any) -> int:
            row = conn.execute("INSERT INTO payments (thread) VALUES ('any') RETURNING id")
            return int(row.fetchone()["id"])

        def charge(visit: int) -> None:
            key = effect_key("charge")
            keys.append(key)
            effects.run(key, pay)

        app = _charging_team(charge).compile(checkpointer=saver)
        paused = app.invoke(_ask("Report"), _config("src"), durability="sync")
        assert paused["__interrupt__"] and _payments(pg_database) == 1
        saver.copy_thread("src", ODD)
        (src_key,) = keys
        copied = effect_part(ODD) + src_key[len("src") :]
        assert _effect_rows(pg_database) == sorted([(src_key, "src"), (copied, ODD)])
        out = app.invoke(Command(resume="yes"), _config(ODD), durability="sync")
        assert out["status"] == "done" and len(out["ledger"]) == 4
        assert keys[-1] == copied  # the copy's hop asked for its own key: recorded
        assert _payments(pg_database) == 1
        assert app.get_state(_config("src")).next  # the source is still paused
        out = app.invoke(Command(resume="yes"), _config("src"), durability="sync")
        assert out["status"] == "done" and _payments(pg_database) == 1
        # A lease belongs to the live run that holds it: never copied.
        with thread_lease(saver, "src"):
            saver.copy_thread("src", "again")
            with psycopg.connect(pg_database) as conn:
                held = conn.execute("SELECT thread_id FROM lgsp_thread_leases").fetchall()
        assert held == [("src",)]
        assert history(app, "again") == history(app, "src")


async def test_a_copied_review_resumes_without_its_effect_async(pg_database):
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("CREATE TABLE payments (id serial PRIMARY KEY, thread text)")
    charged: list[str] = []
    async with aopen_effects(pg_database) as effects, aopen_checkpointer(pg_database) as saver:
        # The tool is sync: it records through the sync effects of the same database.
        with open_effects(pg_database) as sync_effects:

            def pay(conn: Any) -> int:
                conn.execute("INSERT INTO payments (thread) VALUES ('any')")
                return 1

            def charge(visit: int) -> None:
                key = effect_key("charge")
                charged.append(key)
                sync_effects.run(key, pay)

            app = _charging_team(charge).compile(checkpointer=saver)
            await app.ainvoke(_ask("Report"), _config("src"), durability="sync")
            await saver.acopy_thread("src", "dst")
            out = await app.ainvoke(Command(resume="yes"), _config("dst"), durability="sync")
        assert out["status"] == "done" and charged[-1].startswith("dst/")
        assert _payments(pg_database) == 1
        assert await effects.adelete_thread("dst") == 1


def test_copy_refusals(url):
    with open_checkpointer(url) as saver:
        app = team().compile(checkpointer=saver)
        app.invoke(_ask("write it"), _config("src"))
        app.invoke(_ask("write more"), _config("taken"))
        rows = stored(saver, "taken")
        with pytest.raises(ValueError, match="target thread 'taken' already has checkpoints"):
            saver.copy_thread("src", "taken")
        assert stored(saver, "taken") == rows
        with pytest.raises(ValueError, match="source thread 'nope' has no checkpoints"):
            saver.copy_thread("nope", "fresh")
        with pytest.raises(ValueError, match="source and target are both 'src'"):
            saver.copy_thread("src", "src")
        with pytest.raises(ValueError, match=r"target_thread_id: 'a\\x00b' holds a NUL"):
            saver.copy_thread("src", "a\x00b")
        with pytest.raises(ValueError, match=r"source_thread_id: .* surrogate code point"):
            saver.copy_thread("x\ud800", "fresh")
        with pytest.raises(ValueError, match="target_thread_id: got an empty string"):
            saver.copy_thread("src", "")
        with pytest.raises(TypeError, match="source_thread_id: got int; give the thread id"):
            saver.copy_thread(7, "fresh")
        # Writes without a checkpoint (left by a run that stopped) occupy a thread too.
        stray: RunnableConfig = {
            "configurable": {"thread_id": "stray", "checkpoint_ns": "", "checkpoint_id": "c1"}
        }
        saver.put_writes(stray, [("messages", [])], "task-1")
        with pytest.raises(ValueError, match="target thread 'stray' already has checkpoint writes"):
            saver.copy_thread("src", "stray")
        assert stored(saver, "fresh") == []
        saver.copy_thread("src", "fresh")  # a refusal left nothing behind
        assert history(app, "fresh") == history(app, "src")


async def test_copy_refusals_async(url):
    async with aopen_checkpointer(url) as saver:
        app = team().compile(checkpointer=saver)
        await app.ainvoke(_ask("write it"), _config("src"))
        with pytest.raises(ValueError, match="acopy_thread: source thread 'nope'"):
            await saver.acopy_thread("nope", "fresh")
        await saver.acopy_thread("src", "dst")
        with pytest.raises(ValueError, match="acopy_thread: target thread 'dst' already has"):
            await saver.acopy_thread("src", "dst")


def test_copy_refuses_a_target_with_recorded_effects(pg_database):
    with open_effects(pg_database) as effects, open_checkpointer(pg_database) as saver:
        team().compile(checkpointer=saver).invoke(_ask("write it"), _config("src"))
        effects.run("old/1/1/writer/mail", lambda conn: "sent")
        with pytest.raises(ValueError, match=r"recorded effects .*PostgresEffects.delete_thread"):
            saver.copy_thread("src", "old")
        assert stored(saver, "old") == []
        assert effects.delete_thread("old") == 1
        saver.copy_thread("src", "old")


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_the_sync_twins_of_the_async_savers(kind, tmp_path, request):
    url = (
        f"sqlite:///{tmp_path / 'c.db'}"
        if kind == "sqlite"
        else request.getfixturevalue("pg_database")
    )
    async with aopen_checkpointer(url) as saver:
        app = team().compile(checkpointer=saver)
        await app.ainvoke(_ask("write it"), _config("src", "r1"))
        with pytest.raises(asyncio.InvalidStateError, match="from a different thread"):
            saver.copy_thread("src", "dst")
        with pytest.raises(asyncio.InvalidStateError, match="from a different thread"):
            saver.delete_for_runs(["r1"])
        await asyncio.to_thread(saver.copy_thread, "src", "dst")
        assert await ahistory(app, "dst") == await ahistory(app, "src")
        with pytest.raises(ValueError, match="copy_thread: target thread 'dst'"):
            await asyncio.to_thread(saver.copy_thread, "src", "dst")
        await asyncio.to_thread(saver.delete_for_runs, ["r1"])
        assert await ahistory(app, "src") == []
        assert await ahistory(app, "dst") == []  # the copy's checkpoints carry the run id


# -- delete_for_runs -------------------------------------------------------------------


def test_deleting_the_newest_run_leaves_the_run_before_and_a_new_run_works(url):
    with open_checkpointer(url) as saver:
        app = tool_team(2, NAMES).compile(checkpointer=saver)
        app.invoke(_ask("Report on heat pumps"), _config("t", "r1"), durability="sync")
        after_r1 = history(app, "t"), stored(saver, "t"), blob_count(url, saver, "t")
        out = app.invoke(_ask("And on tariffs"), _config("t", "r2"), durability="sync")
        assert out["turn"] == 2
        saver.delete_for_runs(["r2"])
        assert (history(app, "t"), stored(saver, "t"), blob_count(url, saver, "t")) == after_r1
        out = app.invoke(_ask("And on subsidies"), _config("t", "r3"), durability="sync")
        assert out["status"] == "done" and out["turn"] == 2
        said = [m.content for m in out["messages"]]
        assert "Report on heat pumps" in said and "And on subsidies" in said
        assert "And on tariffs" not in said  # the deleted run's turn is gone
        saver.delete_for_runs(["no-such-run"])  # nothing to delete
        saver.delete_for_runs([])


async def test_deleting_the_newest_run_async(url):
    async with aopen_checkpointer(url) as saver:
        app = tool_team(2, NAMES).compile(checkpointer=saver)
        await app.ainvoke(_ask("Report on heat pumps"), _config("t", "r1"), durability="sync")
        after_r1 = await ahistory(app, "t"), await astored(saver, "t")
        await app.ainvoke(_ask("And on tariffs"), _config("t", "r2"), durability="sync")
        await saver.adelete_for_runs(["r2"])
        assert (await ahistory(app, "t"), await astored(saver, "t")) == after_r1
        out = await app.ainvoke(_ask("And on subsidies"), _config("t", "r3"))
        assert out["status"] == "done" and out["turn"] == 2


def test_a_deleted_runs_delta_input_goes_with_it(url):
    # LangGraph stores a run's DeltaChannel input on the checkpoint the run starts from,
    # under a task id derived from that checkpoint's id: the next run from there uses it.
    with open_checkpointer(url) as saver:
        graph = delta_graph(saver)
        graph.invoke({"items": ["a"], "go": 1}, _config("t", "r1"))
        head = graph.get_state(_config("t")).config
        task = input_task_id(head["configurable"]["checkpoint_id"])
        graph.invoke({"items": ["b"], "go": 1}, _config("t", "r2"))
        assert [(w[0], w[2]) for w in saver.get_tuple(head).pending_writes] == [(task, ["b"])]
        saver.delete_for_runs(["r2"])
        assert saver.get_tuple(head).pending_writes == []
        out = graph.invoke({"items": ["c"], "go": 1}, _config("t", "r3"))
        assert out["items"] == [["a"], ["saw 1"], ["c"], ["saw 3"]]
        assert graph.get_state(_config("t")).values == out
        # The new run's input is stored where the deleted one's was.
        assert [(w[0], w[2]) for w in saver.get_tuple(head).pending_writes] == [(task, ["c"])]


def test_deleting_a_resume_run_pauses_the_thread_again(url):
    with open_checkpointer(url) as saver:
        app = team().compile(checkpointer=saver)
        app.invoke(_ask("ask about the refund"), _config("t", "r1"), durability="sync")
        paused = history(app, "t"), stored(saver, "t")
        out = app.invoke(Command(resume="yes"), _config("t", "r2"), durability="sync")
        assert results(out) == ["told yes"]
        saver.delete_for_runs(["r2"])
        assert (history(app, "t"), stored(saver, "t")) == paused
        out = app.invoke(Command(resume="no"), _config("t", "r3"), durability="sync")
        assert results(out) == ["told no"]  # the asker ran again, with the new answer


def test_deleting_the_resume_of_a_review_inside_an_agent(url):
    # The resumed hop finished, so its agent's checkpoints went (_finished_hops.py): the
    # review is pending again and the next answer runs the hop's agent from its start.
    question = {"question": "look it up?"}
    agents = {"researcher": pausing_agent("researcher", part=2, question=question)}
    with open_checkpointer(url) as saver:
        app = tool_team(4, NAMES, agents=agents).compile(checkpointer=saver)
        paused = app.invoke(_ask("Report"), _config("t", "r1"), durability="sync")
        assert [i.value for i in paused["__interrupt__"]] == [question]
        before = history(app, "t")
        out = app.invoke(Command(resume="yes"), _config("t", "r2"), durability="sync")
        assert out["status"] == "done"
        saver.delete_for_runs(["r2"])
        assert history(app, "t") == before
        out = app.invoke(Command(resume="yes"), _config("t", "r3"), durability="sync")
        assert out["status"] == "done" and len(out["ledger"]) == 4


def test_deleting_runs_of_several_threads_is_one_transaction(url):
    with open_checkpointer(url) as saver:
        app = team().compile(checkpointer=saver)
        for thread in ("a", "b"):
            app.invoke(_ask("write one"), _config(thread, f"{thread}1"))
            app.invoke(_ask("write two"), _config(thread, f"{thread}2"))
        before = {t: stored(saver, t) for t in ("a", "b")}
        # b1 is not b's newest run: refused, and a2 stays too.
        with pytest.raises(ValueError, match=r"nothing was deleted\. In thread 'b'.*add 'b2'"):
            saver.delete_for_runs(["a2", "b1"])
        assert {t: stored(saver, t) for t in ("a", "b")} == before
        saver.delete_for_runs(["a2", "b1", "b2"])
        assert history(app, "a")[0][0]["turn"] == 1
        assert stored(saver, "b") == []


class Trail(TypedDict):
    trail: Annotated[list[str], operator.add]


def trail_graph(saver: Any) -> Any:
    """A graph without a `DeltaChannel`: each checkpoint holds its whole state."""
    builder = StateGraph(Trail)
    builder.add_node("step", lambda state: {"trail": ["step"]})
    builder.add_edge(START, "step")
    return builder.compile(checkpointer=saver)


def test_deleting_an_earlier_run_keeps_the_later_ones_without_delta_channels(url):
    # As LangGraph's savers do (and its conformance suite asks): the later run's
    # checkpoints stay, whole, and the thread goes on from its head.
    with open_checkpointer(url) as saver:
        app = trail_graph(saver)
        app.invoke({"trail": ["a"]}, _config("t", "r1"))
        app.invoke({"trail": ["b"]}, _config("t", "r2"))
        head = app.get_state(_config("t"))
        saver.delete_for_runs(["r1"])
        runs = {t.metadata.get("run_id") for t in saver.list(_config("t"))}
        assert runs == {"r2"}
        assert app.get_state(_config("t")).values == head.values
        out = app.invoke({"trail": ["c"]}, _config("t", "r3"))
        assert out["trail"] == ["a", "step", "b", "step", "c", "step"]
        # A DeltaChannel's value is rebuilt from the ancestors: there, still refused.
        graph = delta_graph(saver)
        graph.invoke({"items": ["a"], "go": 1}, _config("d", "d1"))
        graph.invoke({"items": ["b"], "go": 1}, _config("d", "d2"))
        before = stored(saver, "d")
        with pytest.raises(ValueError, match=r"nothing was deleted.*uses a DeltaChannel"):
            saver.delete_for_runs(["d1"])
        assert stored(saver, "d") == before


async def test_delete_refusal_async(url):
    async with aopen_checkpointer(url) as saver:
        app = team().compile(checkpointer=saver)
        await app.ainvoke(_ask("write one"), _config("t", "r1"))
        await app.ainvoke(_ask("write two"), _config("t", "r2"))
        before = await astored(saver, "t")
        with pytest.raises(ValueError, match="adelete_for_runs: nothing was deleted"):
            await saver.adelete_for_runs(["r1"])
        assert await astored(saver, "t") == before


def test_delete_for_runs_argument_errors(url):
    with open_checkpointer(url) as saver:
        with pytest.raises(TypeError, match="run_ids: got str; give a sequence of run ids"):
            saver.delete_for_runs("r1")
        with pytest.raises(TypeError, match="run_ids: got int"):
            saver.delete_for_runs(42)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="every run id must be a non-empty str"):
            saver.delete_for_runs(["r1", 7])  # type: ignore[list-item]
        with pytest.raises(ValueError, match="holds a NUL character"):
            saver.delete_for_runs(["r\x001"])


# -- the rules, unit by unit -----------------------------------------------------------


def test_plan_deletion_reopens_the_parent_and_refuses_an_orphan():
    rows = [
        Stored("", "1", None, "r1"),
        Stored("", "2", "1", "r1"),
        Stored("", "3", "2", "r2"),
        Stored("ns:x", "a", None, "r2"),
        Stored("", "4", "3", None),
    ]
    plan = plan_deletion("t", rows[:4], ["r2"], "delete_for_runs")
    assert plan.doomed == {"": ["3"], "ns:x": ["a"]}
    assert plan.reopened == {"": ["2"]}
    with pytest.raises(ValueError, match=r"checkpoint 4 \(no run id\).*delete_thread"):
        plan_deletion("t", rows, ["r2"], "delete_for_runs")
    # Without a DeltaChannel a kept checkpoint holds its state: its parent may go.
    plain = [Stored(r.namespace, r.checkpoint_id, r.parent_id, r.run_id, False) for r in rows]
    assert plan_deletion("t", plain, ["r2"], "delete_for_runs").doomed == plan.doomed
    # A parent that keeps another child (a fork) is not reopened: its writes stay.
    forked = [*rows[:3], Stored("", "3b", "2", "r3")]
    assert plan_deletion("t", forked, ["r2"], "delete_for_runs").reopened == {}


def test_checked_arguments():
    assert checked_threads("a", "b", "w") == ("a", "b")
    assert checked_run_ids(("x", "y", "x"), "w") == ["x", "y"]
    assert checked_run_ids(iter([]), "w") == []
    assert input_task_id("nope") is None
    assert effect_part("a/b%c") == "a%2Fb%25c"

"""Trees of supervisors: a supervisor graph as a worker's agent, reporting as a typed hop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import SupervisorView, Worker, WorkerTask, create_supervisor
from tests._helpers import ask, compile_team, thread

NO_WAIT = RetryPolicy(max_attempts=1)


def _leaf(name: str) -> Worker:
    def work(task: WorkerTask) -> str:
        return f"{name} handled it. Details for the log."

    return Worker(name=name, description=f"The {name} specialist.", agent=work)


def _once(worker: str):
    """A router that sends the task to `worker` once, then finishes."""

    def router(view: SupervisorView) -> str:
        return "FINISH" if view.ledger else worker

    return router


def _in_order(*workers: str):
    """A router that visits `workers` in order, each once, then finishes."""

    def router(view: SupervisorView) -> str:
        done = [entry["worker"] for entry in view.ledger]
        return next((w for w in workers if w not in done), "FINISH")

    return router


def _domain(name: str, *workers: Worker, **kwargs: Any):
    names = [w.name for w in workers]
    return create_supervisor(
        list(workers), router=kwargs.pop("router", _in_order(*names)), name=name, **kwargs
    )


def _three_levels(compiled: bool):
    incident = _domain("incident", _leaf("pager"))
    ops = _domain(
        "ops",
        Worker(
            name="incident",
            description="Handles incidents.",
            agent=incident.compile() if compiled else incident,
        ),
    )
    return Worker(
        name="ops", description="Operations domain.", agent=ops.compile() if compiled else ops
    )


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "uncompiled"])
def test_a_three_level_tree_runs_and_each_level_keeps_its_own_ledger(compiled):
    seen: list[SupervisorView] = []

    def root_router(view: SupervisorView) -> str:
        seen.append(view)
        return "FINISH" if view.ledger else "ops"

    app = compile_team([_three_levels(compiled)], router=root_router)
    out = app.invoke(ask("The database is down"), thread())
    assert out["status"] == "done"
    # The root's ledger has its own hop only; the domains' hops stay in their namespaces.
    assert [(e["worker"], e["status"]) for e in out["ledger"]] == [("ops", "success")]
    assert out["ledger"][0]["summary"] == "pager handled it."
    assert set(out["workers"]) == {"ops"}
    # The root's supervisor saw the one-line summary, never the domain's transcript.
    assert [e["summary"] for e in seen[-1].ledger] == ["pager handled it."]
    assert out["messages"][-1].content == "pager handled it. Details for the log."


def test_an_uncompiled_graph_is_compiled_without_a_checkpointer_of_its_own():
    worker = Worker(name="ops", description="Ops.", agent=_domain("ops", _leaf("pager")))
    assert isinstance(worker.agent, Pregel)
    assert worker.agent.checkpointer is None  # inherits the parent's

    plain: StateGraph[Any, Any, Any, Any] = StateGraph(dict)
    plain.add_node("only", lambda state: {})
    plain.set_entry_point("only")
    assert isinstance(Worker(name="p", description="P.", agent=plain).agent, Pregel)


def test_a_domain_that_halts_is_a_failed_hop_and_the_parent_routes_around_it():
    looping = _domain("stuck", _leaf("spinner"), router=lambda view: "spinner", max_steps=2)
    working = _domain("steady", _leaf("fixer"))
    app = compile_team(
        [
            Worker(name="stuck", description="A domain that loops.", agent=looping),
            Worker(name="steady", description="A domain that works.", agent=working),
        ],
        router=_in_order("stuck", "steady"),
    )
    out = app.invoke(ask("Fix the outage"), thread())
    assert out["status"] == "done"
    stuck, steady = out["ledger"]
    assert (stuck["worker"], stuck["status"]) == ("stuck", "failed")
    assert stuck["error"].startswith("domain 'stuck' halted (max_steps): ")
    assert "max_steps=2" in stuck["error"]
    assert stuck["summary"].startswith("Stopped early (max_steps)")
    # The sibling domain kept working and its result is the answer.
    assert (steady["worker"], steady["status"]) == ("steady", "success")
    assert out["messages"][-1].content == "fixer handled it. Details for the log."


def test_a_domain_whose_supervisor_fails_is_a_failed_hop_with_its_reason():
    def broken(view: SupervisorView) -> str:
        raise RuntimeError("routing table missing")

    failing = _domain("flaky", _leaf("x"), router=broken, supervisor_retry=NO_WAIT)
    app = compile_team(
        [
            Worker(name="flaky", description="A domain that fails.", agent=failing),
            _leaf("backup"),
        ],
        router=_in_order("flaky", "backup"),
    )
    out = app.invoke(ask("Restore service"), thread())
    flaky, backup = out["ledger"]
    assert flaky["status"] == "failed"
    assert flaky["error"].startswith("domain 'flaky' failed (supervisor_error): ")
    assert "routing table missing" in flaky["error"]
    assert backup["status"] == "success"
    assert out["status"] == "done"


def test_a_domain_that_fails_under_ainvoke_is_contained_too():
    looping = _domain("stuck", _leaf("spinner"), router=lambda view: "spinner", max_steps=1)
    app = compile_team(
        [Worker(name="stuck", description="Loops.", agent=looping), _leaf("backup")],
        router=_in_order("stuck", "backup"),
    )
    out = asyncio.run(app.ainvoke(ask("Restore service"), thread()))
    assert [(e["worker"], e["status"]) for e in out["ledger"]] == [
        ("stuck", "failed"),
        ("backup", "success"),
    ]


def test_a_three_level_tree_is_durable_on_postgres(pg_database):
    from langgraph_supervisor_pro import open_checkpointer
    from tests._pg import table_names

    with open_checkpointer(pg_database) as saver:
        app = create_supervisor([_three_levels(compiled=False)], router=_once("ops")).compile(
            checkpointer=saver
        )
        config = thread()
        out = app.invoke(ask("The database is down"), config, durability="sync")
        assert out["status"] == "done"
        assert [(e["worker"], e["status"]) for e in out["ledger"]] == [("ops", "success")]
        namespaces = {
            item.config["configurable"]["checkpoint_ns"]
            for item in saver.list(
                {"configurable": {"thread_id": config["configurable"]["thread_id"]}}
            )
        }
    assert "checkpoints" in table_names(pg_database)
    # Each level checkpoints under its own namespace: root, ops, ops|incident.
    depths = {ns.count("|") + 1 if ns else 0 for ns in namespaces}
    assert depths == {0, 1, 2}
    assert any(ns.startswith("ops:") and "|incident:" in ns for ns in namespaces)

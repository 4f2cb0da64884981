"""Trees of supervisors: a supervisor graph as a worker's agent, reporting as a typed hop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.types import RetryPolicy, StateSnapshot

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


def test_an_uncompiled_graph_is_compiled_as_a_stateful_subgraph():
    worker = Worker(name="ops", description="Ops.", agent=_domain("ops", _leaf("pager")))
    assert isinstance(worker.agent, Pregel)
    assert worker.agent.checkpointer is True  # the parent's, with state across visits

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
    # Each level checkpoints under its own namespace, named after its worker.
    assert namespaces == {"", "ops", "ops|incident"}


# -- tiers: a domain may be stricter than its parent, never looser ------------------------


def _domain_tiers(saver: Any, config: dict[str, Any]) -> set[str]:
    """The tiers the domains' supervisors recorded (checkpoints under a namespace)."""
    return {
        item.checkpoint["channel_values"]["autonomy"]
        for item in saver.list({"configurable": {"thread_id": config["configurable"]["thread_id"]}})
        if item.config["configurable"]["checkpoint_ns"]
        and "autonomy" in item.checkpoint["channel_values"]
    }


def test_a_domain_is_never_looser_than_the_run():
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_supervisor_pro import ReviewPolicy

    loose = _domain("loose", _leaf("worker"), review=ReviewPolicy(tier="autonomous"))
    saver = InMemorySaver()
    app = create_supervisor(
        [Worker(name="loose", description="A loose domain.", agent=loose)],
        router=_once("loose"),
        review=ReviewPolicy(tier="supervised"),
    ).compile(checkpointer=saver)
    config = thread()
    out = app.invoke(ask("Anything"), config)
    assert out["status"] == "done" and out["autonomy"] == "supervised"
    assert _domain_tiers(saver, config) == {"supervised"}


def test_a_stricter_domain_keeps_its_tier_against_a_per_run_tier_and_across_resumes():
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from langgraph_supervisor_pro import ReviewPolicy

    strict = _domain("strict", _leaf("first"), _leaf("second"), review=ReviewPolicy(tier="manual"))
    saver = InMemorySaver()
    app = create_supervisor(
        [Worker(name="strict", description="A manual domain.", agent=strict)],
        router=_once("strict"),
    ).compile(checkpointer=saver)
    config = thread()
    autonomous = {"configurable": {**config["configurable"], "autonomy": "autonomous"}}
    out = app.invoke(ask("Anything"), autonomous)
    # The root runs autonomously, but the manual domain asks before each dispatch.
    assert out["autonomy"] == "autonomous"
    (pending,) = out["__interrupt__"]
    assert pending.value["action_requests"][0]["name"] == "dispatch:first"
    assert pending.value["context"]["tier"] == "manual"
    assert pending.value["context"]["path"] == ["strict", "first"]
    # Resumed with the run's per-run tier (what the review desk passes): still manual.
    out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), autonomous)
    (pending,) = out["__interrupt__"]
    assert pending.value["action_requests"][0]["name"] == "dispatch:second"
    out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), autonomous)
    assert out["status"] == "done"
    assert out["messages"][-1].content.startswith("second handled it.")
    assert _domain_tiers(saver, config) == {"manual"}


def test_strictest_tier():
    from langgraph_supervisor_pro.review import strictest_tier

    assert strictest_tier("autonomous", None, "supervised") == "supervised"
    with pytest.raises(ValueError, match="strictest_tier"):
        strictest_tier("yolo")
    with pytest.raises(ValueError, match="at least one tier"):
        strictest_tier(None)


def test_a_tool_inside_a_stricter_domain_is_reviewed_in_the_domains_tier():
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from langgraph_supervisor_pro import ReviewPolicy

    ran: list[str] = []
    clerk = _clerk(ran, risk="medium")
    strict = _domain("orders", clerk, review=ReviewPolicy(tier="manual"))
    app = create_supervisor(
        [Worker(name="orders", description="The orders domain.", agent=strict)],
        router=_once("orders"),
    ).compile(checkpointer=InMemorySaver())
    config = thread()
    autonomous = {"configurable": {**config["configurable"], "autonomy": "autonomous"}}
    out = app.invoke(ask("Fix the address of A1"), autonomous)
    assert out["__interrupt__"][0].value["context"]["kind"] == "dispatch"
    out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), autonomous)
    # The per-run tier is autonomous, but the tool runs in the domain's manual tier.
    (pending,) = out["__interrupt__"]
    assert pending.value["context"]["kind"] == "tool"
    assert pending.value["context"]["tier"] == "manual"
    assert ran == []
    out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), autonomous)
    assert ran == ["A1"] and out["status"] == "done"


# -- interrupts from any depth carry their path -------------------------------------------


def _clerk(ran: list[str], *, risk: str) -> Worker:
    """A model worker whose agent calls `refund` once (a `risk` tool), then answers."""
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from langgraph_supervisor_pro.testing import ScriptedChatModel

    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        ran.append(order_id)
        return f"refunded {order_id}"

    model = ScriptedChatModel(
        script=[
            AIMessage(
                content="",
                tool_calls=[{"name": "refund", "args": {"order_id": "A1"}, "id": "c1"}],
            ),
            "Refunded A1.",
        ]
    )
    return Worker(
        name="clerk",
        description="Refunds orders.",
        model=model,
        tools=(refund,),
        risks={"refund": risk},  # type: ignore[dict-item]
    )


def test_a_tool_review_at_the_root_has_a_one_name_path():
    from langgraph.checkpoint.memory import InMemorySaver

    ran: list[str] = []
    app = create_supervisor([_clerk(ran, risk="high")], router=_once("clerk")).compile(
        checkpointer=InMemorySaver()
    )
    out = app.invoke(ask("Refund A1"), thread())
    assert out["__interrupt__"][0].value["context"]["path"] == ["clerk"]


def test_a_tool_review_three_levels_down_surfaces_with_its_path_and_resumes(pg_database):
    from langgraph_supervisor_pro import open_checkpointer
    from langgraph_supervisor_pro.review import Approve, list_reviews, resolve_review

    ran: list[str] = []
    orders = _domain("orders", _clerk(ran, risk="high"))
    ops = _domain("ops", Worker(name="orders", description="The orders domain.", agent=orders))
    with open_checkpointer(pg_database) as saver:
        app = create_supervisor(
            [Worker(name="ops", description="Operations.", agent=ops)], router=_once("ops")
        ).compile(checkpointer=saver)
        config = thread()
        out = app.invoke(ask("Refund A1"), config, durability="sync")
        (pending,) = out["__interrupt__"]
        assert pending.value["context"]["kind"] == "tool"
        assert pending.value["context"]["path"] == ["ops", "orders", "clerk"]
        assert ran == []
        (review,) = list_reviews(saver)
        assert review.path == ("ops", "orders", "clerk")
        assert review.thread_id == config["configurable"]["thread_id"]
        out = resolve_review(app, thread_id=review.thread_id, decision=Approve())
        assert ran == ["A1"]
        assert out["status"] == "done"
        assert [(e["worker"], e["status"]) for e in out["ledger"]] == [("ops", "success")]
        assert list_reviews(saver) == []


# -- a domain visited again is its next turn, and its workers remember ---------------------


def test_a_domain_visited_again_starts_its_next_turn_and_its_workers_remember():
    from langgraph.checkpoint.memory import InMemorySaver

    seen: list[int] = []

    def pager(task: WorkerTask) -> str:
        seen.append(len(task.messages))  # the pager's own earlier messages in the domain
        return f"Paged on-call, visit {len(seen)}."

    incident = _domain("incident", Worker(name="pager", description="Pages on-call.", agent=pager))
    saver = InMemorySaver()

    def twice(view: SupervisorView) -> str:
        return "FINISH" if len(view.ledger) >= 2 else "incident"

    app = create_supervisor(
        [Worker(name="incident", description="Incidents.", agent=incident)], router=twice
    ).compile(checkpointer=saver)
    config = thread()
    out = app.invoke(ask("The database is down"), config)
    assert [e["summary"] for e in out["ledger"]] == [
        "Paged on-call, visit 1.",
        "Paged on-call, visit 2.",
    ]
    assert seen == [0, 2]  # the second visit's pager has its first prompt and answer
    domain = next(
        item.checkpoint["channel_values"]
        for item in saver.list(config)
        if item.config["configurable"]["checkpoint_ns"] == "incident"
    )
    assert domain["turn"] == 2  # each visit is a turn of the domain
    assert domain["status"] == "done" and domain["step"] == 1


# -- what LangGraph sees of a tree: drawings, nested state, each domain's history ----------


def _tree_with_a_clerk(ran: list[str], *, risk: str, compiled: bool = False):
    """root -> "ops" (triage, then the "orders" domain) -> "orders" -> clerk (a model agent)."""
    orders = _domain("orders", _clerk(ran, risk=risk))
    ops = _domain(
        "ops",
        _leaf("triage"),
        Worker(
            name="orders",
            description="The orders domain.",
            agent=orders.compile() if compiled else orders,
        ),
    )
    return create_supervisor(
        [Worker(name="ops", description="Operations.", agent=ops.compile() if compiled else ops)],
        router=_once("ops"),
    )


@pytest.mark.parametrize("compiled", [False, True], ids=["uncompiled", "compiled"])
def test_xray_draws_every_level_of_a_tree(compiled):
    app = _tree_with_a_clerk([], risk="high", compiled=compiled).compile()
    ops = {"ops:ops", "ops:review", "ops:triage", "ops:synthesis"}
    orders = {"ops:orders:orders", "ops:orders:review", "ops:orders:synthesis"}
    agent = {"ops:orders:clerk:model", "ops:orders:clerk:tools"}

    flat = set(app.get_graph().nodes)
    assert {"supervisor", "ops", "synthesis"} <= flat and not any(":" in n for n in flat)
    one = set(app.get_graph(xray=1).nodes)
    assert ops | {"ops:orders"} <= one and "ops" not in one
    assert not any(n.startswith("ops:orders:") for n in one)
    two = set(app.get_graph(xray=2).nodes)
    assert ops | orders | {"ops:orders:clerk"} <= two and "ops:orders" not in two
    assert not any(n.startswith("ops:orders:clerk:") for n in two)
    graph = app.get_graph(xray=True)
    full = set(graph.nodes)
    assert ops | orders | agent <= full
    assert not {"ops", "ops:orders", "ops:orders:clerk"} & full  # each replaced by its nodes
    # Every drawn node is on an edge (LangGraph's error-handler nodes included), which
    # is what lets LangGraph put a subgraph's drawing in the place of its node.
    on_edges = {e.source for e in graph.edges} | {e.target for e in graph.edges}
    assert full == on_edges
    mermaid = graph.draw_mermaid()  # no duplicate-subgraph error
    for box in ("ops", "orders", "clerk"):
        assert f"\tsubgraph {box}\n" in mermaid


@contextlib.contextmanager
def _saver(backend: str, request: pytest.FixtureRequest) -> Iterator[BaseCheckpointSaver[Any]]:
    if backend == "memory":
        yield InMemorySaver()
        return
    from langgraph_supervisor_pro import open_checkpointer

    with open_checkpointer(request.getfixturevalue("pg_database")) as saver:
        yield saver


def _task_state(snapshot: StateSnapshot, name: str) -> StateSnapshot:
    """The nested state of `snapshot`'s one pending task, which must be `name`."""
    (task,) = snapshot.tasks
    assert task.name == name
    assert isinstance(task.state, StateSnapshot), task.state
    return task.state


def _hops(values: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["worker"], e["status"]) for e in values["ledger"]]


@pytest.mark.parametrize("backend", ["memory", "postgres"])
def test_get_state_with_subgraphs_nests_every_level_down_to_a_paused_tool(backend, request):
    from langgraph.types import Command

    ran: list[str] = []
    with _saver(backend, request) as saver:
        app = _tree_with_a_clerk(ran, risk="high").compile(checkpointer=saver)
        config = thread()
        out = app.invoke(ask("Refund A1"), config, durability="sync")
        assert out["__interrupt__"][0].value["context"]["path"] == ["ops", "orders", "clerk"]

        root = app.get_state(config, subgraphs=True)
        ops = _task_state(root, "ops")
        orders = _task_state(ops, "orders")
        clerk = _task_state(orders, "clerk")
        # Each level's own values: the root is waiting on its first hop, the "ops" domain
        # has triaged and dispatched "orders", which has dispatched its clerk.
        assert root.values["status"] == "running" and _hops(root.values) == []
        assert ops.config["configurable"]["checkpoint_ns"] == "ops"
        assert ops.values["status"] == "running"
        assert _hops(ops.values) == [("triage", "success")]
        assert ops.values["route"]["next"] == "orders"
        assert orders.config["configurable"]["checkpoint_ns"] == "ops|orders"
        assert _hops(orders.values) == [] and orders.values["route"]["next"] == "clerk"
        # The clerk's agent, paused in its tools step with the review at the leaf.
        assert clerk.config["configurable"]["checkpoint_ns"].startswith("ops|orders|clerk:")
        assert clerk.next == ("tools",)
        assert clerk.values["messages"][-1].tool_calls[0]["name"] == "refund"
        (pending,) = clerk.interrupts
        assert pending.value["context"]["path"] == ["ops", "orders", "clerk"]
        assert [i.id for s in (root, ops, orders) for i in s.interrupts] == [pending.id] * 3
        if backend == "memory":  # the async twin reads the same (the sync Postgres saver is sync)
            nested = asyncio.run(app.aget_state(config, subgraphs=True))
            assert _task_state(_task_state(nested, "ops"), "orders").values == orders.values

        # Reading changes nothing: the review resumes where it paused.
        out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
        assert ran == ["A1"] and out["status"] == "done"


def test_after_a_run_each_domain_state_and_history_is_read_by_its_namespace():
    ran: list[str] = []
    app = _tree_with_a_clerk(ran, risk="low").compile(checkpointer=InMemorySaver())
    config = thread()
    out = app.invoke(ask("Refund A1"), config)
    assert out["status"] == "done" and ran == ["A1"]

    def at(namespace: str) -> dict[str, Any]:
        return {"configurable": {**config["configurable"], "checkpoint_ns": namespace}}

    # Nothing is pending once the run has ended, so the root shows no nested state...
    assert app.get_state(config, subgraphs=True).tasks == ()
    # ...and each domain is read by its namespace: its final state, and its own history.
    ops = app.get_state(at("ops"))
    assert ops.values["status"] == "done" and ops.next == ()
    assert _hops(ops.values) == [("triage", "success"), ("orders", "success")]
    orders = app.get_state(at("ops|orders"))
    assert orders.values["status"] == "done" and _hops(orders.values) == [("clerk", "success")]
    history = list(app.get_state_history(at("ops|orders")))
    assert {s.config["configurable"]["checkpoint_ns"] for s in history} == {"ops|orders"}
    # The domain's own steps, oldest first: its nodes, not the root's.
    steps = [s.next for s in reversed(history)]
    assert steps == [("__start__",), ("orders",), ("clerk",), ("orders",), ("synthesis",), ()]
    # A worker's agent ran under a namespace with its task id, which the domain's history
    # names; its state is read the same way.
    (agent_ns,) = {
        t.state["configurable"]["checkpoint_ns"]
        for s in history
        for t in s.tasks
        if t.name == "clerk" and isinstance(t.state, dict)
    }
    assert agent_ns.startswith("ops|orders|clerk:")
    clerk = app.get_state(at(agent_ns))
    assert clerk.values["messages"][-1].content == "Refunded A1."
    assert [s.next for s in app.get_state_history(at(agent_ns))][-1] == ("__start__",)

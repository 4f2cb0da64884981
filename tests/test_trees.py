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

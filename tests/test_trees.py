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


async def test_a_domain_that_times_out_is_a_failed_hop_and_its_sibling_still_works():
    async def slow(task: WorkerTask) -> str:
        await asyncio.sleep(30)
        return "never"

    stuck = _domain("stuck", Worker(name="slow", description="Slow.", agent=slow))
    app = compile_team(
        [
            Worker(name="stuck", description="Times out.", agent=stuck, timeout=0.2, retry=NO_WAIT),
            _leaf("backup"),
        ],
        router=_in_order("stuck", "backup"),
    )
    out = await app.ainvoke(ask("Restore service"), thread())
    stuck_hop, backup = out["ledger"]
    assert stuck_hop["status"] == "failed"
    assert stuck_hop["error"].startswith("WorkerTimeoutError: worker 'stuck'")
    assert backup["status"] == "success" and out["status"] == "done"


def test_a_domain_that_raises_is_a_failed_hop():
    from langgraph.graph import END, START

    def explode(state: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the domain's own graph broke")

    graph: StateGraph[Any, Any, Any, Any] = StateGraph(dict)
    graph.add_node("explode", explode)  # type: ignore[type-var]
    graph.add_edge(START, "explode")
    graph.add_edge("explode", END)
    app = compile_team(
        [
            Worker(name="broken", description="Raises.", agent=graph, retry=NO_WAIT),
            _leaf("backup"),
        ],
        router=_in_order("broken", "backup"),
    )
    out = app.invoke(ask("Restore service"), thread())
    broken, backup = out["ledger"]
    assert broken["status"] == "failed"
    assert broken["error"] == "RuntimeError: the domain's own graph broke"
    assert backup["status"] == "success"


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
        review=ReviewPolicy(allow_run_override=True),  # the root lets a run loosen its tier
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
    from langgraph_supervisor_pro.review._policy import strictest_tier

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
        review=ReviewPolicy(allow_run_override=True),  # the root lets a run loosen its tier
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
    from langgraph_supervisor_pro.review import list_reviews, resolve_review
    from langgraph_supervisor_pro.review._desk import Approve

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


# -- an invalid answer to a review, at any depth: the same review, pending again ------------

BAD_ANSWERS: list[Any] = [
    "approve",
    {"decisions": [{"type": "maybe"}]},
    {"decisions": [{"type": "edit"}]},
]
APPROVE = {"decisions": [{"type": "approve"}]}


def _reviewed_tree(kind: str, depth: int, ran: list[str], saver: Any, **policy: Any) -> Any:
    """A tree whose run pauses `depth` levels down: on the `refund` tool of the `clerk`
    model worker (`kind="tool"`), or on the dispatch of the `clerk` function worker by a
    manual-tier supervisor (`kind="dispatch"`); `policy` goes to that supervisor."""
    from langgraph_supervisor_pro import ReviewPolicy

    if kind == "tool":
        leaf = _clerk(ran, risk="high")
        review = ReviewPolicy(**policy)
    else:

        def clerk(task: WorkerTask) -> str:
            ran.append("A1")
            return "Refunded A1."

        leaf = Worker(name="clerk", description="Refunds orders.", agent=clerk)
        review = ReviewPolicy(tier="manual", **policy)
    if depth == 1:
        team = create_supervisor([leaf], router=_once("clerk"), review=review)
        return team.compile(checkpointer=saver)
    top = Worker(
        name="orders",
        description="The orders domain.",
        agent=_domain("orders", leaf, review=review),
    )
    if depth == 3:
        top = Worker(name="ops", description="Operations.", agent=_domain("ops", top))
    return create_supervisor([top], router=_once(top.name)).compile(checkpointer=saver)


def _resume(pending: Any, value: Any, by_id: bool) -> Any:
    from langgraph.types import Command

    return Command(resume={pending.id: value} if by_id else value)


def _refused(
    app: Any, config: Any, pending: Any, bad: Any, by_id: bool, *, then_none: bool = True
) -> Any:
    """Answer `pending` with `bad`: the same review is pending again, and no error is saved;
    then (`then_none`) `invoke(None)` finds it as it was."""
    from tests._helpers import task_errors, without_invalid_answer

    out = app.invoke(_resume(pending, bad, by_id), config)  # no ValidationError
    (again,) = out["__interrupt__"]
    assert again.id == pending.id
    assert again.value["action_requests"] == pending.value["action_requests"]
    assert without_invalid_answer(again.value) == without_invalid_answer(pending.value)
    assert again.response_schema == pending.response_schema
    assert again.value["context"]["invalid_answer"]
    assert task_errors(app.get_state(config, subgraphs=True)) == []
    if not then_none:
        return again
    # Nothing left to fail on: `invoke(None)` finds the run waiting on the same review.
    (still,) = app.invoke(None, config)["__interrupt__"]
    assert still.id == pending.id
    assert still.value["action_requests"] == pending.value["action_requests"]
    assert task_errors(app.get_state(config, subgraphs=True)) == []
    return again


@pytest.mark.parametrize("bad", BAD_ANSWERS)
@pytest.mark.parametrize("by_id", [False, True], ids=["plain", "by_id"])
@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("kind", ["tool", "dispatch"])
def test_an_invalid_answer_at_any_depth_leaves_the_same_review_pending(kind, depth, by_id, bad):
    from langgraph.checkpoint.memory import InMemorySaver

    ran: list[str] = []
    app = _reviewed_tree(kind, depth, ran, InMemorySaver())
    config = thread()
    (pending,) = app.invoke(ask("Refund A1"), config)["__interrupt__"]
    assert pending.value["context"]["kind"] == kind
    assert len(pending.value["context"]["path"]) == depth
    _refused(app, config, pending, bad, by_id)
    _refused(app, config, pending, BAD_ANSWERS[0], not by_id)  # and again, the other way
    assert ran == []
    out = app.invoke(_resume(pending, APPROVE, by_id), config)
    assert ran == ["A1"]  # resumed where it paused: the action ran, once
    assert out["status"] == "done" and "__interrupt__" not in out
    assert out["messages"][-1].content == "Refunded A1."


@pytest.mark.parametrize("by_id", [False, True], ids=["plain", "by_id"])
@pytest.mark.parametrize("kind", ["tool", "dispatch"])
def test_an_escalated_review_three_levels_down_refuses_an_invalid_answer(kind, by_id):
    from datetime import UTC, datetime

    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_supervisor_pro.review import list_reviews, sweep_reviews

    ran: list[str] = []
    saver = InMemorySaver()
    app = _reviewed_tree(kind, 3, ran, saver, on_timeout="escalate", escalate_to="leads")
    config = thread()
    (first,) = app.invoke(ask("Refund A1"), config)["__interrupt__"]
    (action,) = sweep_reviews(app, saver, now=datetime(2999, 1, 1, tzinfo=UTC))
    assert action.action == "escalate"
    (pending,) = app.get_state(config).interrupts
    assert pending.id != first.id  # the escalated review is the task's second question
    assert pending.value["context"]["reviewers"] == "leads"
    # The sweep answers by interrupt id, so `invoke(None)` does not escalate it again.
    (still,) = app.invoke(None, config)["__interrupt__"]
    assert still.id == pending.id and len(still.value["context"]["escalations"]) == 1
    maybe = {"decisions": [{"type": "maybe"}]}
    again = _refused(app, config, pending, maybe, by_id, then_none=not by_id)
    assert again.value["context"]["escalations"] == pending.value["context"]["escalations"]
    (review,) = list_reviews(saver)
    assert review.interrupt_id == pending.id and review.escalated
    out = app.invoke(_resume(pending, APPROVE, by_id), config)
    assert ran == ["A1"] and out["status"] == "done"


@pytest.mark.parametrize("kind", ["tool", "dispatch"])
def test_an_invalid_answer_three_levels_down_under_ainvoke(kind):
    from langgraph.checkpoint.memory import InMemorySaver

    from tests._helpers import task_errors

    ran: list[str] = []
    app = _reviewed_tree(kind, 3, ran, InMemorySaver())
    config = thread()

    async def scenario() -> dict[str, Any]:
        (pending,) = (await app.ainvoke(ask("Refund A1"), config))["__interrupt__"]
        for bad in BAD_ANSWERS:
            out = await app.ainvoke(_resume(pending, bad, by_id=True), config)
            (again,) = out["__interrupt__"]
            assert again.id == pending.id and again.value["context"]["invalid_answer"]
            assert task_errors(await app.aget_state(config, subgraphs=True)) == []
        (still,) = (await app.ainvoke(None, config))["__interrupt__"]
        assert still.id == pending.id and ran == []
        return dict(await app.ainvoke(_resume(pending, APPROVE, by_id=True), config))

    out = asyncio.run(scenario())
    assert ran == ["A1"] and out["status"] == "done"


@pytest.mark.parametrize("by_id", [False, True], ids=["plain", "by_id"])
@pytest.mark.parametrize("kind", ["tool", "dispatch"])
def test_an_invalid_answer_three_levels_down_leaves_no_error_on_postgres(pg_database, kind, by_id):
    import psycopg

    from langgraph_supervisor_pro import open_checkpointer
    from langgraph_supervisor_pro.review import list_reviews, resolve_review
    from langgraph_supervisor_pro.review._desk import Approve, get_review

    ran: list[str] = []
    with open_checkpointer(pg_database) as saver:
        app = _reviewed_tree(kind, 3, ran, saver)
        config = thread()
        thread_id = config["configurable"]["thread_id"]
        out = app.invoke(ask("Refund A1"), config, durability="sync")
        (pending,) = out["__interrupt__"]
        for bad in BAD_ANSWERS:
            _refused(app, config, pending, bad, by_id)
        with psycopg.connect(pg_database) as conn:
            channels = {
                row[0]
                for row in conn.execute(
                    "SELECT channel FROM checkpoint_writes WHERE thread_id = %s", (thread_id,)
                )
            }
        assert "__interrupt__" in channels and "__error__" not in channels
        (listed,) = list_reviews(saver)
        got = get_review(app, thread_id=thread_id)
        assert listed.interrupt_id == got.interrupt_id == pending.id
        assert listed.path == got.path == ("ops", "orders", "clerk")
        assert ran == []
        out = resolve_review(app, thread_id=thread_id, decision=Approve())
        assert ran == ["A1"] and out["status"] == "done"
        assert list_reviews(saver) == []


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


# -- a stateful domain is sent the hop's prompt only ---------------------------------------


def test_a_stateful_domain_is_sent_only_the_new_prompt_and_its_slot_compacts_cleanly():
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_supervisor_pro import Compaction
    from tests._graph.test_compaction_node import summarizer

    given: list[int] = []

    def pager(task: WorkerTask) -> str:
        return f"Paged on-call for hop {task.step}."

    incident = _domain("incident", Worker(name="pager", description="Pages.", agent=pager))
    worker = Worker(
        name="incident",
        description="Incidents.",
        agent=incident,
        compaction=Compaction(
            summarizer=summarizer(), max_context_tokens=100_000, every_n_steps=1, keep=1
        ),
    )

    def four(view: SupervisorView) -> str:
        return "FINISH" if len(view.ledger) >= 4 else "incident"

    app = create_supervisor([worker], router=four).compile(checkpointer=InMemorySaver())
    from langchain_core.callbacks import BaseCallbackHandler

    class Inputs(BaseCallbackHandler):
        """Records the size of every input the domain graph is invoked with."""

        def on_chain_start(self, serialized, inputs, **kwargs):  # type: ignore[no-untyped-def]
            if isinstance(inputs, dict) and set(inputs) == {"messages"}:
                messages = inputs["messages"]
                if messages and str(getattr(messages[-1], "content", "")).startswith("Task:"):
                    given.append(len(messages))

    config = {**thread(), "callbacks": [Inputs()]}
    out = app.invoke(ask("The database is down"), config)
    assert out["status"] == "done" and len(out["ledger"]) == 4
    assert given and set(given) == {1}  # every visit: the prompt only
    slot = out["workers"]["incident"]["messages"]
    ids = [m.id for m in slot]
    assert len(ids) == len(set(ids))  # compaction never brings old messages back twice
    assert len(out["compactions"]) == 3 and len(slot) <= 4


# -- compaction and the store inside domains -------------------------------------------------


def test_outputs_of_same_named_workers_in_two_domains_never_collide_in_the_store():
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from langgraph_supervisor_pro.persistence import recall_tool

    recalled: list[str] = []

    def region(name: str) -> Worker:
        def clerk(task: WorkerTask) -> str:
            return f"{name} clerk refunded the order."

        def auditor(task: WorkerTask) -> str:
            # Reads its own domain's clerk from the store, as an agent's tool would.
            recalled.append(str(recall_tool().invoke({"worker": "clerk"})))
            return f"{name} audit done."

        domain = _domain(
            name,
            Worker(name="clerk", description="Refunds.", agent=clerk),
            Worker(name="auditor", description="Audits.", agent=auditor),
        )
        return Worker(name=name, description=f"The {name} region.", agent=domain)

    store = InMemoryStore()
    app = create_supervisor(
        [region("emea"), region("amer")], router=_in_order("emea", "amer")
    ).compile(checkpointer=InMemorySaver(), store=store)
    out = app.invoke(ask("Refund both orders"), thread())
    assert out["status"] == "done"
    namespaces = sorted(ns for ns in store.list_namespaces(prefix=("lgsp", "outputs")))
    assert [ns[3:] for ns in namespaces] == [
        ("amer",),
        ("amer", "auditor"),
        ("amer", "clerk"),
        ("emea",),
        ("emea", "auditor"),
        ("emea", "clerk"),
    ]
    assert [r.splitlines()[-1] for r in recalled] == [
        "emea clerk refunded the order.",
        "amer clerk refunded the order.",
    ]


def test_a_domain_compacts_its_own_workers_histories():
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_supervisor_pro import Compaction
    from tests._graph.test_compaction_node import summarizer

    sizes: list[int] = []

    def pager(task: WorkerTask) -> str:
        sizes.append(len(task.messages))
        return f"FACT-{task.step} paged."

    compaction = Compaction(
        summarizer=summarizer(), max_context_tokens=100_000, every_n_steps=2, keep=1
    )
    incident = create_supervisor(
        [Worker(name="pager", description="Pages.", agent=pager)],
        router=lambda view: "FINISH" if len(view.ledger) >= 5 else "pager",
        name="incident",
        compaction=compaction,
    )
    saver = InMemorySaver()
    app = create_supervisor(
        [Worker(name="incident", description="Incidents.", agent=incident)],
        router=_once("incident"),
    ).compile(checkpointer=saver)
    config = thread()
    out = app.invoke(ask("The database is down"), config)
    assert out["status"] == "done" and not out.get("compactions")  # the root compacted nothing
    domain = app.get_state(
        {"configurable": {**config["configurable"], "checkpoint_ns": "incident"}}
    ).values
    assert [(c["worker"], c["step"], c["reason"]) for c in domain["compactions"]] == [
        ("pager", 3, "cadence"),
        ("pager", 5, "cadence"),
    ]
    assert sizes[2] < sizes[1] + 2  # hop 3 saw a compacted history


# -- who answered a review, at any depth: recorded at every level up to the root -----------


def _namespaced_values(app: Any, config: dict[str, Any], ns: str) -> dict[str, Any]:
    """The latest state of the domain checkpointed under `ns` (a stateful domain)."""
    return dict(
        app.get_state({"configurable": {**config["configurable"], "checkpoint_ns": ns}}).values
    )


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("kind", ["tool", "dispatch"])
def test_a_review_at_any_depth_is_recorded_at_every_level_up_to_the_root(kind, depth):
    from langgraph.types import Command

    from langgraph_supervisor_pro.errors import ReviewerNotAllowedError
    from langgraph_supervisor_pro.review import resolve_review
    from langgraph_supervisor_pro.review._desk import Approve

    ran: list[str] = []
    saver = InMemorySaver()
    members = {"reviewers": "support", "members": {"support": ["alice"]}}
    app = _reviewed_tree(kind, depth, ran, saver, **members)
    config = thread()
    (pending,) = app.invoke(ask("Refund A1"), config)["__interrupt__"]
    path = pending.value["context"]["path"]
    assert len(path) == depth

    # The gate `depth` levels down applies its policy: a raw answer by an outsider is
    # refused there, and the same review stays pending.
    refused = {"decisions": [{"type": "approve"}], "reviewer": "mallory"}
    (again,) = app.invoke(Command(resume={pending.id: refused}), config)["__interrupt__"]
    assert (
        again.id == pending.id
        and "'mallory' may not answer" in (again.value["context"]["invalid_answer"])
    )
    with pytest.raises(ReviewerNotAllowedError):
        resolve_review(app, thread_id=config["configurable"]["thread_id"], decision=Approve())

    out = resolve_review(
        app, thread_id=config["configurable"]["thread_id"], decision=Approve(), reviewer="alice"
    )
    assert out["status"] == "done" and ran == ["A1"]
    (record,) = out["reviews"]
    assert (record["interrupt_id"], record["kind"], record["path"]) == (pending.id, kind, path)
    assert (record["reviewer"], record["reviewers"], record["decision"]) == (
        "alice",
        "support",
        "approve",
    )
    assert (record["turn"], record["step"]) == (1, 1)  # the root's hop
    # Each domain keeps its own record too, with its own numbering.
    for level in range(1, depth):
        ns = "|".join(path[:level])
        (own,) = _namespaced_values(app, config, ns)["reviews"]
        assert {k: v for k, v in own.items() if k not in ("turn", "step")} == {
            k: v for k, v in record.items() if k not in ("turn", "step")
        }


def test_a_domain_visited_twice_reports_each_visits_reviews_once():
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import tool

    from langgraph_supervisor_pro.review import resolve_review
    from langgraph_supervisor_pro.review._desk import Approve, Reject
    from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel

    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    def reply(call: ScriptedCall) -> Any:
        if isinstance(call.messages[-1], ToolMessage):
            return "Handled."
        args = {"order_id": "A1"}
        return AIMessage(content="", tool_calls=[{"name": "refund", "args": args, "id": "c1"}])

    clerk = Worker(
        name="clerk",
        description="Refunds orders.",
        model=ScriptedChatModel(script=[reply] * 10),
        tools=(refund,),
        risks={"refund": "high"},
    )
    orders = _domain("orders", clerk)

    def twice(view: SupervisorView) -> str:
        return "FINISH" if len(view.ledger) >= 2 else "orders"

    saver = InMemorySaver()
    app = create_supervisor(
        [Worker(name="orders", description="Orders.", agent=orders)], router=twice
    ).compile(checkpointer=saver)
    config = thread()
    tid = config["configurable"]["thread_id"]
    app.invoke(ask("Refund A1, twice"), config)
    resolve_review(app, thread_id=tid, decision=Approve(), reviewer="alice")
    out = resolve_review(
        app, thread_id=tid, decision=Reject(message="once is enough"), reviewer="bob"
    )
    assert out["status"] == "done"
    assert [(r["step"], r["decision"], r["reviewer"]) for r in out["reviews"]] == [
        (1, "approve", "alice"),
        (2, "reject", "bob"),
    ]
    domain = _namespaced_values(app, config, "orders")
    assert [(r["turn"], r["reviewer"]) for r in domain["reviews"]] == [(1, "alice"), (2, "bob")]

"""Parallel fan-out: one decision names several workers; they run at once, each its own hop."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, RetryPolicy

from langgraph_supervisor_pro import (
    Compaction,
    ReviewPolicy,
    SupervisorView,
    Worker,
    WorkerTask,
    create_supervisor,
)
from langgraph_supervisor_pro._graph.loop_guards import check_fan_out
from langgraph_supervisor_pro.review import list_reviews, resolve_review
from langgraph_supervisor_pro.review._desk import Approve, Reject
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, thread

NO_WAIT = RetryPolicy(max_attempts=1)


def _fan(*names: str):
    """A router that fans out to `names` once (instructions name the worker), then finishes."""

    def router(view: SupervisorView) -> Any:
        if view.ledger:
            return "FINISH"
        return [{"next": n, "instructions": f"part {n}"} for n in names]

    return router


def _echo(name: str, calls: list[str] | None = None) -> Worker:
    def work(task: WorkerTask) -> str:
        if calls is not None:
            calls.append(name)
        return f"{name} did {task.instructions}."

    return Worker(name=name, description=f"The {name} worker.", agent=work)


# -- concurrency, proved without timing ---------------------------------------------------


async def test_two_async_branches_that_wait_for_each_other_both_finish():
    a_ready, b_ready = asyncio.Event(), asyncio.Event()

    async def a(task: WorkerTask) -> str:
        a_ready.set()
        await asyncio.wait_for(b_ready.wait(), 10)  # only returns if b runs meanwhile
        return "A found the prices."

    async def b(task: WorkerTask) -> str:
        b_ready.set()
        await asyncio.wait_for(a_ready.wait(), 10)
        return "B found the reviews."

    app = create_supervisor(
        [
            Worker(name="a", description="A.", agent=a),
            Worker(name="b", description="B.", agent=b),
        ],
        router=_fan("a", "b"),
        parallel=True,
    ).compile(checkpointer=InMemorySaver())
    out = await app.ainvoke(ask(), thread())
    assert out["status"] == "done"
    assert [(e["step"], e["worker"], e["status"]) for e in out["ledger"]] == [
        (1, "a", "success"),
        (2, "b", "success"),
    ]
    assert out["step"] == 2
    # FINISH keeps the last fan-out for synthesis: the default answer holds both branches.
    assert out["messages"][-1].content == (
        "a (hop 1):\nA found the prices.\n\nb (hop 2):\nB found the reviews."
    )


def test_two_sync_branches_that_wait_for_each_other_both_finish():
    a_ready, b_ready = threading.Event(), threading.Event()

    def a(task: WorkerTask) -> str:
        a_ready.set()
        assert b_ready.wait(10)
        return "A done."

    def b(task: WorkerTask) -> str:
        b_ready.set()
        assert a_ready.wait(10)
        return "B done."

    app = compile_team(
        [
            Worker(name="a", description="A.", agent=a, retry=NO_WAIT),
            Worker(name="b", description="B.", agent=b, retry=NO_WAIT),
        ],
        router=_fan("a", "b"),
        parallel=True,
    )
    out = app.invoke(ask(), thread())
    assert [(e["worker"], e["status"]) for e in out["ledger"]] == [
        ("a", "success"),
        ("b", "success"),
    ]


# -- each branch is its own hop ------------------------------------------------------------


def test_each_branch_gets_its_own_instructions_slot_and_ledger_line_and_the_supervisor_waits():
    views: list[SupervisorView] = []

    def router(view: SupervisorView) -> Any:
        views.append(view)
        if not view.ledger:
            return ["a", {"next": "b", "instructions": "the second part"}]
        return "FINISH"

    app = compile_team([_echo("a"), _echo("b"), _echo("c")], router=router, parallel=True)
    out = app.invoke(ask(), thread())
    # The supervisor decided twice: once to fan out, once when both branches had finished.
    assert len(views) == 2 and [e["worker"] for e in views[1].ledger] == ["a", "b"]
    a, b = out["ledger"]
    assert (a["step"], a["instructions"], a["summary"]) == (1, "", "a did .")
    assert (b["step"], b["instructions"]) == (2, "the second part")
    assert set(out["workers"]) == {"a", "b"}
    assert out["workers"]["b"]["results"][0]["result"] == "b did the second part."
    assert out["workers"]["a"]["messages"][0].content.startswith("Task:")


def test_a_failing_branch_loses_none_of_the_others_results():
    def broken(task: WorkerTask) -> str:
        raise RuntimeError("the search index is down")

    app = compile_team(
        [_echo("a"), Worker(name="b", description="B.", agent=broken, retry=NO_WAIT)],
        router=_fan("a", "b"),
        parallel=True,
    )
    out = app.invoke(ask(), thread())
    assert out["status"] == "done"
    (a, b) = out["ledger"]
    assert (a["worker"], a["status"]) == ("a", "success")
    assert (b["worker"], b["status"]) == ("b", "failed")
    assert b["error"] == "RuntimeError: the search index is down"
    assert out["messages"][-1].content == "a did part a."


def test_a_single_route_from_a_parallel_graph_is_an_ordinary_hop():
    app = compile_team([_echo("a"), _echo("b")], router=_fan("a"), parallel=True)
    out = app.invoke(ask(), thread())
    assert [e["worker"] for e in out["ledger"]] == ["a"] and out["fanout"] == {}


def test_fan_out_twice_in_one_turn_then_finish():
    def router(view: SupervisorView) -> Any:
        return [["a", "b"], ["b", "c"]][len(view.ledger) // 2] if len(view.ledger) < 4 else "FINISH"

    calls: list[str] = []
    app = compile_team(
        [_echo("a", calls), _echo("b", calls), _echo("c", calls)], router=router, parallel=True
    )
    out = app.invoke(ask(), thread())
    assert [(e["step"], e["worker"]) for e in out["ledger"]] == [
        (1, "a"),
        (2, "b"),
        (3, "b"),
        (4, "c"),
    ]
    assert sorted(calls) == ["a", "b", "b", "c"]
    assert len(out["workers"]["b"]["results"]) == 2


def test_a_serial_hop_after_a_fan_out_clears_it_and_a_new_turn_starts_clean():
    def router(view: SupervisorView) -> Any:
        if not view.ledger:
            return ["a", "b"]
        return "c" if len(view.ledger) == 2 else "FINISH"

    app = compile_team([_echo("a"), _echo("b"), _echo("c")], router=router, parallel=True)
    config = thread()
    out = app.invoke(ask(), config)
    assert out["fanout"] == {} and out["messages"][-1].content == "c did ."
    fan = compile_team([_echo("a"), _echo("b")], router=_fan("a", "b"), parallel=True)
    out = fan.invoke(ask(), config)
    assert set(out["fanout"]) == {"a", "b"}
    # A new turn: the first decision's intake clears the old fan-out.
    out = fan.invoke(ask("Another question"), config)
    assert out["turn"] == 2 and [e["worker"] for e in out["ledger"] if e["turn"] == 2] == [
        "a",
        "b",
    ]
    assert out["messages"][-1].content.startswith("a (hop 1):\na did part a.")


# -- the model decides a fan-out ------------------------------------------------------------


def test_the_model_names_parallel_workers_through_the_decision_schema():
    model = ScriptedChatModel(
        script=[
            {
                "next": "a",
                "instructions": "prices",
                "parallel": [{"next": "b", "instructions": "reviews"}],
            },
            {"next": "FINISH"},
        ]
    )
    app = compile_team([_echo("a"), _echo("b")], model=model, parallel=True)
    out = app.invoke(ask("Compare the two phones"), thread())
    assert [(e["worker"], e["instructions"], e["decided_by"]) for e in out["ledger"]] == [
        ("a", "prices", "model"),
        ("b", "reviews", "model"),
    ]
    first = model.calls[0]
    assert "`parallel`" in str(first.messages[0].content)
    assert first.tools == ("RouteDecision",)


def test_a_model_naming_a_worker_twice_is_re_asked_then_obeyed():
    model = ScriptedChatModel(
        script=[
            {"next": "a", "parallel": [{"next": "a"}]},
            {"next": "a", "parallel": [{"next": "b"}]},
            {"next": "FINISH"},
        ]
    )
    app = compile_team([_echo("a"), _echo("b")], model=model, parallel=True)
    out = app.invoke(ask(), thread())
    assert [e["worker"] for e in out["ledger"]] == ["a", "b"]
    reask = model.calls[1].messages[-1].content
    assert "named more than once" in str(reask)


@pytest.mark.parametrize(
    ("routes", "error"),
    [
        (["a", "a"], "named more than once"),
        ([], "an empty list of routes"),
        (["a", "FINISH"], "parallel.0.next"),
        ([{"next": "FINISH"}, "b"], "FINISH ends the delegation"),
        (["a", 7], "a list of routes holds a int"),
    ],
)
def test_an_invalid_list_of_routes_halts_with_the_reason(routes, error):
    calls: list[str] = []
    app = compile_team(
        [_echo("a", calls), _echo("b", calls)], router=lambda view: routes, parallel=True
    )
    out = app.invoke(ask(), thread())
    assert out["status"] == "halted" and out["halt_reason"] == "invalid_route"
    assert error in out["halt_detail"] and calls == []


def test_a_list_of_routes_needs_parallel_true():
    app = compile_team([_echo("a"), _echo("b")], router=lambda view: ["a", "b"])
    out = app.invoke(ask(), thread())
    assert out["halt_reason"] == "invalid_route"
    assert "needs create_supervisor(..., parallel=True)" in out["halt_detail"]


def test_parallel_must_be_a_bool():
    with pytest.raises(TypeError, match="parallel: got str"):
        create_supervisor([_echo("a")], router=_fan("a"), parallel="yes")  # type: ignore[arg-type]


# -- guards count hops, not decisions ---------------------------------------------------------


def test_a_fan_out_wider_than_the_hop_budget_does_not_start():
    calls: list[str] = []
    app = compile_team(
        [_echo(n, calls) for n in "abc"], router=_fan("a", "b", "c"), parallel=True, max_steps=2
    )
    out = app.invoke(ask(), thread())
    assert out["status"] == "halted" and out["halt_reason"] == "max_steps"
    assert out["halt_detail"].startswith("the supervisor asked for 3 parallel hops with 2 of")
    assert calls == [] and out.get("ledger", []) == []


def test_the_budget_counts_every_branch():
    def router(view: SupervisorView) -> Any:
        return ["a", "b"]  # would fan out forever

    app = compile_team([_echo("a"), _echo("b")], router=router, parallel=True, max_steps=5)
    out = app.invoke(ask(), thread())
    assert out["halt_reason"] == "max_steps" and len(out["ledger"]) == 4


def test_visit_budgets_apply_to_each_branch():
    def router(view: SupervisorView) -> Any:
        return ["a", "b"]

    app = compile_team(
        [Worker(name="a", description="A.", agent=lambda t: "ok", max_visits=1), _echo("b")],
        router=router,
        parallel=True,
    )
    out = app.invoke(ask(), thread())
    assert out["halt_reason"] == "max_visits" and len(out["ledger"]) == 2


@pytest.mark.parametrize(
    ("step", "width", "budget", "halts"),
    [(0, 3, 3, False), (0, 4, 3, True), (18, 2, 20, False), (18, 3, 20, True), (20, 1, 20, True)],
)
def test_check_fan_out(step, width, budget, halts):
    assert (check_fan_out(step, width, budget) is not None) is halts


# -- interrupts in branches -------------------------------------------------------------------


def _clerk(name: str, ran: list[str]) -> Worker:
    """A model worker whose agent calls a high-risk `refund_<name>` tool once, then answers."""

    @tool(f"refund_{name}")
    def refund(order_id: str) -> str:
        """Refund an order."""
        ran.append(f"{name}:{order_id}")
        return f"refunded {order_id}"

    model = ScriptedChatModel(
        script=[
            AIMessage(
                content="",
                tool_calls=[{"name": f"refund_{name}", "args": {"order_id": name}, "id": "c1"}],
            ),
            f"{name} refunded.",
        ]
    )
    return Worker(
        name=name,
        description=f"Refunds {name} orders.",
        model=model,
        tools=(refund,),
        risks={f"refund_{name}": "high"},
    )


def test_an_interrupt_in_one_branch_keeps_the_others_result_and_resumes_alone():
    ran: list[str] = []
    calls: list[str] = []
    app = compile_team(
        [_clerk("eu", ran), _echo("b", calls)], router=_fan("eu", "b"), parallel=True
    )
    config = thread()
    out = app.invoke(ask("Refund both"), config)
    (pending,) = out["__interrupt__"]
    assert pending.value["context"]["path"] == ["eu"] and calls == ["b"]
    out = app.invoke(Command(resume={pending.id: {"decisions": [{"type": "approve"}]}}), config)
    assert out["status"] == "done" and ran == ["eu:eu"]
    assert calls == ["b"]  # the finished branch did not run again
    assert sorted((e["worker"], e["status"]) for e in out["ledger"]) == [
        ("b", "success"),
        ("eu", "success"),
    ]


def _domain(name: str, clerk: Worker):
    return create_supervisor(
        [clerk], router=lambda v: "FINISH" if v.ledger else clerk.name, name=name
    )


def test_two_pending_reviews_in_parallel_domains_are_listed_and_resumed_by_id(pg_database):
    from langgraph_supervisor_pro import open_checkpointer

    ran: list[str] = []
    domains = [
        Worker(name="emea", description="EMEA orders.", agent=_domain("emea", _clerk("eu", ran))),
        Worker(name="amer", description="US orders.", agent=_domain("amer", _clerk("us", ran))),
    ]
    with open_checkpointer(pg_database) as saver:
        app = create_supervisor(domains, router=_fan("emea", "amer"), parallel=True).compile(
            checkpointer=saver
        )
        config = thread()
        out = app.invoke(ask("Refund both orders"), config, durability="sync")
        assert len(out["__interrupt__"]) == 2
        reviews = list_reviews(saver)
        assert sorted(r.path for r in reviews) == [("amer", "us"), ("emea", "eu")]
        assert len({r.interrupt_id for r in reviews}) == 2 and ran == []
        us = next(r for r in reviews if r.path[0] == "amer")
        out = resolve_review(
            app, thread_id=us.thread_id, interrupt_id=us.interrupt_id, decision=Reject()
        )
        # The other review is still pending, unchanged; nothing ran.
        (left,) = list_reviews(saver)
        assert left.path == ("emea", "eu") and ran == []
        assert [i.id for i in out["__interrupt__"]] == [left.interrupt_id]
        out = resolve_review(
            app, thread_id=left.thread_id, interrupt_id=left.interrupt_id, decision=Approve()
        )
        assert out["status"] == "done" and ran == ["eu:eu"]
        assert sorted((e["worker"], e["status"]) for e in out["ledger"]) == [
            ("amer", "success"),
            ("emea", "success"),
        ]
        assert list_reviews(saver) == []


# -- the manual tier reviews each branch on its own ---------------------------------------


def test_in_the_manual_tier_each_branch_has_its_own_dispatch_review():
    calls: list[str] = []
    app = compile_team(
        [_echo("a", calls), _echo("b", calls), _echo("c", calls)],
        router=_fan("a", "b", "c"),
        parallel=True,
        review=ReviewPolicy(tier="manual"),
    )
    config = thread()
    out = app.invoke(ask(), config)
    pending = {i.value["action_requests"][0]["name"]: i for i in out["__interrupt__"]}
    assert sorted(pending) == ["dispatch:a", "dispatch:b", "dispatch:c"]
    assert {i.value["context"]["step"] for i in pending.values()} == {1, 2, 3}
    edit = {
        "type": "edit",
        "edited_action": {"name": "dispatch:b", "args": {"instructions": "only the summary"}},
    }
    out = app.invoke(
        Command(
            resume={
                pending["dispatch:a"].id: {"decisions": [{"type": "approve"}], "reviewer": "ann"},
                pending["dispatch:b"].id: {"decisions": [edit], "reviewer": "bob"},
                pending["dispatch:c"].id: {
                    "decisions": [{"type": "reject", "message": "no"}],
                    "reviewer": "cy",
                },
            }
        ),
        config,
    )
    assert out["status"] == "done" and sorted(calls) == ["a", "b"]
    by_worker = {e["worker"]: e for e in out["ledger"]}
    assert by_worker["b"]["instructions"] == "only the summary"
    assert by_worker["c"]["status"] == "failed"
    assert by_worker["c"]["error"] == "dispatch rejected by the reviewer: no"
    # Each branch's review step recorded its own answer, in the same super-step.
    assert sorted(
        (r["action"], r["step"], r["decision"], r["reviewer"], r["interrupt_id"])
        for r in out["reviews"]
    ) == [
        (
            "dispatch:a",
            pending["dispatch:a"].value["context"]["step"],
            "approve",
            "ann",
            pending["dispatch:a"].id,
        ),
        (
            "dispatch:b",
            pending["dispatch:b"].value["context"]["step"],
            "edit",
            "bob",
            pending["dispatch:b"].id,
        ),
        (
            "dispatch:c",
            pending["dispatch:c"].value["context"]["step"],
            "reject",
            "cy",
            pending["dispatch:c"].id,
        ),
    ]


def test_a_manual_branch_answered_alone_waits_for_its_siblings():
    calls: list[str] = []
    app = compile_team(
        [_echo("a", calls), _echo("b", calls)],
        router=_fan("a", "b"),
        parallel=True,
        review=ReviewPolicy(tier="manual"),
    )
    config = thread()
    out = app.invoke(ask(), config)
    pending = {i.value["action_requests"][0]["args"]["worker"]: i for i in out["__interrupt__"]}
    first, second = pending["a"], pending["b"]
    out = app.invoke(Command(resume={first.id: {"decisions": [{"type": "approve"}]}}), config)
    # No worker ran yet: the approved branch waits until every branch is answered.
    assert calls == [] and [i.id for i in out["__interrupt__"]] == [second.id]
    edit_other = {
        "type": "edit",
        "edited_action": {"name": "dispatch:a", "args": {}},
    }
    out = app.invoke(Command(resume={second.id: {"decisions": [edit_other]}}), config)
    assert out["status"] == "done"
    name = "a"
    assert calls == [name]
    other = next(e for e in out["ledger"] if e["worker"] != name)
    assert other["status"] == "failed" and "not the worker" in other["error"]
    # Answered in two runs, both recorded once.
    assert [(r["interrupt_id"], r["decision"]) for r in out["reviews"]] == [
        (first.id, "approve"),
        (second.id, "edit"),
    ]


# -- compaction before a fan-out -------------------------------------------------------------


def test_branch_workers_due_for_compaction_are_compacted_before_the_fan_out():
    from tests._graph.test_compaction_node import summarizer

    seen: dict[str, list[int]] = {"a": [], "b": [], "c": []}

    def worker(name: str) -> Worker:
        def work(task: WorkerTask) -> str:
            seen[name].append(len(task.messages))
            return f"FACT-{task.step} from {name}"

        return Worker(name=name, description=f"{name}.", agent=work)

    def router(view: SupervisorView) -> Any:
        return ["a", "b", "c"] if len(view.ledger) < 9 else "FINISH"

    compaction = Compaction(
        summarizer=summarizer(), max_context_tokens=100_000, every_n_steps=2, keep=1
    )
    app = compile_team(
        [worker("a"), worker("b"), Worker(name="c", description="c.", agent=lambda t: "ok")],
        router=router,
        parallel=True,
        compaction=compaction,
        max_steps=9,
    )
    out = app.invoke(ask(), thread())
    assert out["status"] == "done"
    # Before the third fan-out, a and b (two results each) were compacted, in one step.
    assert [(c["worker"], c["step"], c["reason"]) for c in out["compactions"]] == [
        ("a", 7, "cadence"),
        ("b", 8, "cadence"),
        ("c", 9, "cadence"),
    ]
    assert seen["a"][2] < seen["a"][1] + 2 and seen["b"][2] < seen["b"][1] + 2
    assert len(out["ledger"]) == 9

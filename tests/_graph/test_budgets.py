"""Budgets at run time: usage recorded per call, halts, warnings, reviews, trees, fan-outs."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_supervisor_pro import FINISH, Budget, SupervisorView, Worker, create_supervisor
from langgraph_supervisor_pro._budget import entry_tokens, spend_of
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall

WORDS = 60  # a worker's answer: about 80 tokens by LangChain's approximate counter


@tool
def lookup(part: int) -> str:
    """Look up one part of the material."""
    return f"part {part}: " + "fact " * 20


def _calls_this_hop(call: ScriptedCall) -> int:
    """Tool results since the hop's prompt (the last human message)."""
    seen = 0
    for message in reversed(call.messages):
        if isinstance(message, HumanMessage):
            break
        seen += isinstance(message, ToolMessage)
    return seen


def worker_model(name: str, *, calls: int = 1, words: int = WORDS) -> FunctionChatModel:
    """A worker's model: `calls - 1` lookups in a hop, then an answer (from what it sees)."""

    def reply(call: ScriptedCall) -> Any:
        done = _calls_this_hop(call)
        if done < calls - 1:
            tool_call = {"name": "lookup", "args": {"part": done}, "id": f"c{uuid.uuid4().hex}"}
            return AIMessage(content="", tool_calls=[tool_call])
        return f"{name} found " + "word " * words

    return FunctionChatModel(name=name, reply=reply, report_usage=True)


def worker(name: str, model_name: str = "small", **kwargs: Any) -> Worker:
    calls = kwargs.pop("calls", 1)
    return Worker(
        name=name,
        description=f"The {name}.",
        model=worker_model(model_name, calls=calls),
        tools=(lookup,),
        risks={"lookup": "low"},
        **kwargs,
    )


def always(name: str, hops: int = 50):
    def router(view: SupervisorView) -> str:
        return name if view.step < hops else FINISH

    return router


PRICES = {"small": {"input": 0.4, "output": 1.6}, "big": {"input": 2.0, "output": 8.0}}


def prices(*models: str) -> dict[str, dict[str, float]]:
    """The price table of the models a graph uses (a price for any other is refused)."""
    return {m: PRICES[m] for m in models or ("small",)}


def run(graph: Any, thread: str = "t", text: str = "Research tea", saver: Any = None):
    app = graph.compile(checkpointer=saver or InMemorySaver())
    config = {"configurable": {"thread_id": thread}}
    return app, config, app.invoke({"messages": [("user", text)]}, config)


def spent_tokens(state: dict[str, Any], **filters: Any) -> int:
    return spend_of(state.get("usage") or [], **filters).tokens


def test_every_call_records_reported_usage_model_path_and_cost():
    supervisor = FunctionChatModel(
        name="big", reply=lambda call: {"next": "a", "instructions": "go"}, report_usage=True
    )
    graph = create_supervisor(
        [worker("a")], model=supervisor, max_steps=2, budget=Budget(prices=prices("big", "small"))
    )
    _, _, out = run(graph)
    roles = [(u["role"], u["model"], u["worker"]) for u in out["usage"]]
    assert roles == [
        ("supervisor", "big", None),
        ("worker", "small", "a"),
        ("supervisor", "big", None),
        ("worker", "small", "a"),
        ("supervisor", "big", None),  # the third decision, refused by max_steps
    ]
    for entry in out["usage"]:
        assert entry["estimated"] is False and entry["output_tokens"] > 0
        price = PRICES[entry["model"]]
        expected = (
            entry["input_tokens"] * price["input"] + entry["output_tokens"] * price["output"]
        ) / 1_000_000
        assert entry["cost"] == pytest.approx(expected)
        assert entry["path"] == ([] if entry["role"] == "supervisor" else ["a"])
    assert out["halt_reason"] == "max_steps"  # a price table alone limits nothing
    assert not out.get("budget_events")


def test_prices_that_name_no_model_of_the_graph_are_refused():
    with pytest.raises(ValueError, match=r"Budget.prices: \['gpt-typo'\] name no model.*small"):
        create_supervisor(
            [worker("a")],
            router=always("a"),
            budget=Budget(prices={"gpt-typo": {"input": 1, "output": 1}}),
        )


def test_a_cost_limit_needs_a_price_for_every_model():
    with pytest.raises(ValueError, match=r"worker 'a'.*small, which has no price; with max_cost"):
        create_supervisor(
            [worker("a"), worker("b", model_name="big")],
            router=always("a"),
            budget=Budget(max_cost=1.0, prices={"big": {"input": 1, "output": 1}}),
        )


def test_unpriced_and_estimated_calls_are_reported_as_such():
    silent = FunctionChatModel(name="quiet", reply=lambda call: "done " * 10)
    graph = create_supervisor(
        [Worker(name="a", description="A.", model=silent), worker("b")],
        router=lambda view: ["a", "b", FINISH][min(view.step, 2)],
        budget=Budget(max_tokens=100_000, prices={"small": PRICES["small"]}),
    )
    _, _, out = run(graph)
    quiet, small = out["usage"]
    assert quiet["model"] == "quiet" and quiet["estimated"] is True and quiet["cost"] is None
    assert quiet["input_tokens"] == quiet["tokens"] and quiet["output_tokens"] > 0
    assert small["estimated"] is False and small["cost"] > 0
    spend = spend_of(out["usage"])
    assert spend.unpriced == 1 and spend.cost == pytest.approx(small["cost"])


def test_the_run_halts_at_the_limit_and_the_answer_is_synthesised_from_what_was_done():
    graph = create_supervisor(
        [worker("a")], router=always("a"), budget=Budget(max_tokens=500, prices=prices())
    )
    _, _, out = run(graph)
    assert out["status"] == "halted" and out["halt_reason"] == "budget_exceeded"
    assert "the graph's budget is spent" in out["halt_detail"]
    per_hop = [entry_tokens(u) for u in out["usage"]]
    assert sum(per_hop[:-1]) < 500 <= sum(per_hop)  # halted at the first decision past it
    assert len(out["ledger"]) == len(per_hop)
    answer = out["messages"][-1].content
    assert answer.startswith("Stopped early (budget_exceeded)") and "small found" in answer
    (event,) = [e for e in out["budget_events"] if e["kind"] == "exceeded"]
    assert event["measure"] == "tokens" and event["limit"] == 500
    assert event["spent"] == sum(per_hop) and event["worker"] is None


def test_a_cost_limit_halts_the_same_way():
    graph = create_supervisor(
        [worker("a", model_name="big")],
        router=always("a"),
        budget=Budget(max_cost=0.003, prices=prices("big")),
    )
    _, _, out = run(graph)
    assert out["halt_reason"] == "budget_exceeded"
    costs = [u["cost"] for u in out["usage"]]
    assert sum(costs[:-1]) < 0.003 <= sum(costs)


def test_a_turn_budget_starts_again_each_turn_and_a_thread_budget_does_not():
    def graph(per: str) -> Any:
        return create_supervisor(
            [worker("a")],
            router=always("a", 3),
            # the first turn spends 93 + 186 + 279 = 558 tokens, the second 370 + 461 + 552
            budget=Budget(max_tokens=1_500, per=per, prices=prices()),  # type: ignore[arg-type]
        )

    app, config, first = run(graph("turn"))
    assert first["status"] == "done"
    second = app.invoke({"messages": [("user", "Again")]}, config)
    assert second["status"] == "done"
    app, config, first = run(graph("thread"))
    assert first["status"] == "done"
    second = app.invoke({"messages": [("user", "Again")]}, config)
    assert second["halt_reason"] == "budget_exceeded"
    assert [entry_tokens(u) for u in second["usage"]] == [93, 186, 279, 370, 461, 552]
    assert second["budget_events"][-1]["spent"] == 1_941  # halted at the turn's last decision


def test_the_warning_is_an_event_recorded_once_and_the_run_goes_on():
    graph = create_supervisor(
        [worker("a")],
        router=always("a", 5),
        budget=Budget(max_tokens=2_000, warn_at=0.3, prices=prices()),
    )
    _, _, out = run(graph)
    assert out["status"] == "done"
    (warning,) = out["budget_events"]
    assert warning["kind"] == "warning" and warning["spent"] >= 600 and warning["limit"] == 2_000


def _review_graph() -> Any:
    return create_supervisor(
        [worker("a")],
        router=always("a", 8),
        budget=Budget(max_tokens=600, warn_at=0.5, on_warning="review", prices=prices()),
    )


def _paused_budget_review(app: Any, config: dict[str, Any]) -> dict[str, Any]:
    (task,) = [t for t in app.get_state(config).tasks if t.interrupts]
    (pending,) = task.interrupts
    assert pending.value["context"]["kind"] == "budget"
    assert pending.value["action_requests"][0]["name"] == "budget:raise"
    return pending.value


def test_the_warning_review_approved_raises_the_limit_for_the_turn():
    app, config, out = run(_review_graph())
    payload = _paused_budget_review(app, config)
    assert payload["action_requests"][0]["args"] == {"max_tokens": 1_200.0}
    assert "Approve to raise the limit" in payload["action_requests"][0]["description"]
    out = app.invoke(
        Command(resume={"decisions": [{"type": "approve"}], "reviewer": "ana"}), config
    )
    # past the raised limit's own warning the run pauses again; reject ends it with what is done
    payload = _paused_budget_review(app, config)
    assert payload["action_requests"][0]["args"] == {"max_tokens": 1_800.0}
    out = app.invoke(Command(resume={"decisions": [{"type": "reject"}]}), config)
    assert out["status"] == "done" and out["halt_reason"] is None
    kinds = [(e["kind"], e["limit"]) for e in out["budget_events"]]
    assert kinds == [
        ("warning", 600),
        ("approved", 1_200),
        ("warning", 1_200),
        ("rejected", 1_200),
    ]
    assert out["budget_events"][1]["reviewer"] == "ana"
    assert [r["kind"] for r in out["reviews"]] == ["budget", "budget"]
    assert spent_tokens(out) > 600  # it ran past the first limit


def test_the_warning_review_rejected_finishes_with_what_is_done():
    app, config, out = run(_review_graph())
    _paused_budget_review(app, config)
    hops_before = len(app.get_state(config).values["ledger"])
    out = app.invoke(
        Command(resume={"decisions": [{"type": "reject", "message": "enough"}]}), config
    )
    assert out["status"] == "done" and len(out["ledger"]) == hops_before
    assert out["messages"][-1].content.startswith("small found")
    assert [e["kind"] for e in out["budget_events"]] == ["warning", "rejected"]


def test_the_warning_review_edited_sets_the_limit():
    app, config, _ = run(_review_graph())
    _paused_budget_review(app, config)
    edit = {
        "type": "edit",
        "edited_action": {"name": "budget:raise", "args": {"max_tokens": 700}},
    }
    out = app.invoke(Command(resume={"decisions": [edit]}), config)
    assert out["halt_reason"] == "budget_exceeded"
    assert [(e["kind"], e["limit"]) for e in out["budget_events"]][:2] == [
        ("warning", 600),
        ("approved", 700),
    ]
    assert spent_tokens(out) >= 700


def test_a_resumed_decision_counts_nothing_twice():
    app, config, _ = run(_review_graph())
    before = app.get_state(config).values["usage"]
    app.invoke(Command(resume={"decisions": [{"type": "reject"}]}), config)
    after = app.get_state(config).values["usage"]
    assert after[: len(before)] == before and len(after) == len(before)


def test_a_long_hop_is_stopped_before_the_model_call_that_would_pass_the_limit():
    graph = create_supervisor(
        [worker("a", calls=12)], router=always("a"), budget=Budget(max_tokens=800, prices=prices())
    )
    _, _, out = run(graph)
    (hop,) = out["ledger"]
    assert hop["status"] == "failed" and "BudgetExceededError" in hop["error"]
    assert "the graph's budget is spent" in hop["error"]
    calls = [entry_tokens(u) for u in out["usage"]]
    assert len(calls) < 12 and sum(calls[:-1]) < 800 <= sum(calls)
    assert out["halt_reason"] == "budget_exceeded"


def test_a_workers_own_budget_takes_it_out_of_rotation():
    seen: list[dict[str, str]] = []

    def router(view: SupervisorView) -> str:
        seen.append(dict(view.unavailable))
        if view.step >= 5:
            return FINISH
        return "b" if "a" in view.unavailable else "a"

    graph = create_supervisor(
        [worker("a", budget=Budget(max_tokens=250)), worker("b")],
        router=router,
        budget=Budget(max_tokens=5_000, prices=prices()),
    )
    _, _, out = run(graph)
    assert out["status"] == "done"
    # a's hops spend 93, then 186: it is out after two, as its 250 are spent
    assert [e["worker"] for e in out["ledger"]] == ["a", "a", "b", "b", "b"]
    assert "its budget is spent" in seen[-1]["a"]
    (event,) = out["budget_events"]
    assert event["kind"] == "exceeded" and event["worker"] == "a" and event["limit"] == 250


def test_the_view_shows_spent_and_remaining():
    views: list[SupervisorView] = []

    def router(view: SupervisorView) -> str:
        views.append(view)
        return "a" if view.step < 2 else FINISH

    graph = create_supervisor(
        [worker("a")], router=router, budget=Budget(max_tokens=5_000, max_cost=1.0, prices=prices())
    )
    _, _, out = run(graph)
    assert views[0].spent == {"tokens": 0.0, "cost": 0.0}
    assert views[0].remaining == {"tokens": 5_000.0, "cost": 1.0}
    spend = spend_of(out["usage"])
    assert views[-1].spent == {"tokens": float(spend.tokens), "cost": spend.cost}
    assert views[-1].remaining["tokens"] == 5_000 - spend.tokens
    assert views[-1].remaining["cost"] == pytest.approx(1.0 - spend.cost)


def test_parallel_branches_draw_from_one_budget_without_overspending_it():
    def router(view: SupervisorView) -> Any:
        return [{"next": "a"}, {"next": "b"}] if view.step == 0 else FINISH

    graph = create_supervisor(
        [worker("a", calls=10), worker("b", calls=10)],
        router=router,
        parallel=True,
        budget=Budget(max_tokens=1_000, prices=prices()),
    )
    _, _, out = run(graph)
    calls = [entry_tokens(u) for u in out["usage"]]
    biggest = max(calls)
    # Alone, each branch would spend up to the whole limit; together they stop near it:
    # at most one call per branch in flight when the limit is reached.
    assert 1_000 <= sum(calls) < 1_000 + 2 * biggest
    assert {e["status"] for e in out["ledger"]} == {"failed"}
    assert out["halt_reason"] == "budget_exceeded"


def _tree(root: Budget, mid: Budget | None, leaf: Budget | None, record: list[Any]) -> Any:
    def watching(name: str):
        def router(view: SupervisorView) -> str:
            record.append((name, dict(view.remaining)))
            return name if view.step < 50 else FINISH

        return router

    leaf_domain = create_supervisor(
        [worker("pager")], router=watching("pager"), name="incident", budget=leaf
    )
    mid_domain = create_supervisor(
        [Worker(name="incident", description="Incidents.", agent=leaf_domain)],
        router=watching("incident"),
        name="ops",
        budget=mid,
    )
    return create_supervisor(
        [Worker(name="ops", description="Operations.", agent=mid_domain)],
        router=watching("ops"),
        budget=root,
    )


def test_each_level_of_a_three_level_tree_holds_its_own_budget():
    record: list[Any] = []
    graph = _tree(
        Budget(max_tokens=3_000, prices=prices()),
        Budget(max_tokens=1_500),
        Budget(max_tokens=400),
        record,
    )
    _, _, out = run(graph)
    # The leaf domain halts at its 400: one hop of the middle domain, one of the root, ...
    paths = {tuple(u["path"]) for u in out["usage"]}
    assert paths == {("ops", "incident", "pager")}
    assert out["halt_reason"] == "budget_exceeded"
    total = spent_tokens(out)
    call = max(entry_tokens(u) for u in out["usage"])
    assert 3_000 <= total < 3_000 + call
    # ... and each domain's view counted what is left above it.
    leaf_views = [r for name, r in record if name == "pager"]
    assert all(v["tokens"] <= 400 for v in leaf_views)
    mid_views = [r for name, r in record if name == "incident"]
    assert all(v["tokens"] <= 1_500 for v in mid_views)
    assert min(v["tokens"] for v in mid_views) < 1_500  # it went down as the leaf spent


def test_a_domain_with_no_budget_of_its_own_inherits_what_is_left_above():
    record: list[Any] = []
    graph = _tree(Budget(max_tokens=600, prices=prices()), None, None, record)
    _, _, out = run(graph)
    calls = [entry_tokens(u) for u in out["usage"]]
    assert 600 <= sum(calls) < 600 + max(calls)
    assert out["halt_reason"] == "budget_exceeded"
    deep = [r for name, r in record if name == "pager"]
    assert deep[0]["tokens"] == 600 and min(r["tokens"] for r in deep) < 600


def test_a_budget_below_may_only_be_stricter():
    with pytest.raises(
        ValueError, match=r"Worker.budget: worker 'a' is looser than the supervisor"
    ):
        create_supervisor(
            [worker("a", budget=Budget(max_tokens=2_000))],
            router=always("a"),
            budget=Budget(max_tokens=1_000),
        )
    with pytest.raises(ValueError, match=r"domain 'ops'.*looser than the supervisor's.*2000"):
        _tree(Budget(max_tokens=1_000), Budget(max_tokens=2_000), None, [])
    with pytest.raises(ValueError, match=r"warn_at=0.9 warns later"):
        create_supervisor(
            [worker("a", budget=Budget(max_tokens=500, warn_at=0.9))],
            router=always("a"),
            budget=Budget(max_tokens=1_000),
        )


def test_a_workers_budget_carries_no_prices():
    with pytest.raises(ValueError, match=r"Worker.budget: worker 'a' gives prices"):
        worker("a", budget=Budget(max_tokens=5, prices=prices()))


async def test_the_async_path_records_and_halts_the_same_way():
    graph = create_supervisor(
        [worker("a")], router=always("a"), budget=Budget(max_tokens=500, prices=prices())
    )
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "async"}}
    out = await app.ainvoke({"messages": [("user", "Research tea")]}, config)
    _, _, sync = run(graph)
    assert out["halt_reason"] == "budget_exceeded"
    assert [entry_tokens(u) for u in out["usage"]] == [entry_tokens(u) for u in sync["usage"]]


@tool
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


def _refunding(name: str) -> Worker:
    def reply(call: ScriptedCall) -> Any:
        if _calls_this_hop(call) == 0:
            tool_call = {"name": "refund", "args": {"order": "A-1"}, "id": f"r{uuid.uuid4().hex}"}
            return AIMessage(content="", tool_calls=[tool_call])
        return "refunded " + "word " * 20

    model = FunctionChatModel(name="small", reply=reply, report_usage=True)
    return Worker(
        name=name, description="Refunds.", model=model, tools=(refund,), risks={"refund": "high"}
    )


def _approve_all(app: Any, config: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    while app.get_state(config).interrupts:
        out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    return out


def test_a_call_made_before_an_interrupt_inside_a_hop_is_counted_once():
    graph = create_supervisor(
        [_refunding("clerk")],
        router=always("clerk", 1),
        budget=Budget(max_tokens=100_000, prices=prices()),
    )
    app, config, _ = run(graph)
    assert app.get_state(config).interrupts  # the refund waits for a reviewer
    out = _approve_all(app, config)
    assert out["status"] == "done"
    calls = [(u["role"], u["model"], u["path"]) for u in out["usage"]]
    # the tool call's reply (made before the pause) and the answer (after it): once each
    assert calls == [("worker", "small", ["clerk"]), ("worker", "small", ["clerk"])]
    first, answer = out["usage"]  # in the order they were made
    assert first["input_tokens"] < answer["input_tokens"]
    assert all(u["cost"] is not None and not u["estimated"] for u in out["usage"])


def test_a_domain_paused_mid_hop_is_counted_from_its_own_record():
    domain = create_supervisor([_refunding("clerk")], router=always("clerk", 1), name="billing")
    graph = create_supervisor(
        [Worker(name="billing", description="Billing.", agent=domain)],
        router=always("billing", 1),
        budget=Budget(max_tokens=100_000, prices=prices()),
    )
    app, config, _ = run(graph)
    out = _approve_all(app, config)
    assert out["status"] == "done"
    deep = [u for u in out["usage"] if u["path"] == ["billing", "clerk"]]
    assert len(deep) == 2 and all(u["worker"] == "billing" for u in deep)
    assert spend_of(out["usage"]).tokens == sum(entry_tokens(u) for u in deep)


def test_a_budget_review_is_listed_and_answered_at_the_review_desk():
    from langgraph_supervisor_pro.review import list_reviews, resolve_review

    saver = InMemorySaver()
    app, _, _ = run(_review_graph(), thread="desk", saver=saver)
    (pending,) = list_reviews(saver)
    assert pending.kind == "budget" and pending.thread_id == "desk"
    assert pending.action == "budget:raise"
    out = resolve_review(app, thread_id="desk", decision={"type": "reject"}, reviewer="omar")
    assert out["status"] == "done"
    assert [e["kind"] for e in out["budget_events"]] == ["warning", "rejected"]
    assert out["reviews"][-1]["reviewer"] == "omar" and out["reviews"][-1]["kind"] == "budget"


def test_the_supervisor_model_is_told_what_is_left():
    supervisor = FunctionChatModel(
        name="big",
        reply=lambda call: {
            "next": "FINISH" if len(call.messages) and "#1" in call.messages[-1].text else "a",
            "instructions": "go",
        },
        report_usage=True,
        record=True,
    )
    graph = create_supervisor(
        [worker("a")],
        model=supervisor,
        budget=Budget(max_tokens=10_000, prices=prices("big", "small")),
    )
    _, _, out = run(graph)
    first, second = (call.messages[-1].text for call in supervisor.calls)
    assert "Hop budget: 0/20 used. Budget left: 10,000 tokens. Who goes next?" in first
    spent = spend_of(out["usage"][:2]).tokens
    assert f"Budget left: {10_000 - spent:,} tokens." in second


def test_a_token_counter_that_fails_never_fails_the_call():
    from langgraph_supervisor_pro._graph.usage import UsageMeter, UsageRecorder

    def broken(messages: Any) -> int:
        raise RuntimeError("tokenizer missing")

    recorder = UsageRecorder(UsageMeter(counter=broken, window=1_000))
    model = worker_model("small")
    model.invoke("hello there", {"callbacks": [recorder]})
    (entry,) = recorder.entries(turn=1, step=1, role="worker", worker="a")
    assert entry["tokens"] > 0 and entry["utilisation"] == entry["tokens"] / 1_000


@pytest.mark.parametrize("backend", ["memory", "sqlite", "postgres"])
def test_every_checkpointer_keeps_the_same_record_and_halts_at_the_same_figure(
    backend: str, tmp_path: Any, request: pytest.FixtureRequest
):
    from langgraph_supervisor_pro import open_checkpointer

    url = {
        "memory": "memory",
        "sqlite": f"sqlite:///{tmp_path / 'budget.db'}",
    }.get(backend) or request.getfixturevalue("pg_database")
    graph = create_supervisor(
        [worker("a", calls=3)],
        router=always("a"),
        budget=Budget(max_tokens=1_500, warn_at=0.5, prices=prices()),
    )
    with open_checkpointer(url) as saver:
        app = graph.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": f"budget-{backend}"}}
        out = app.invoke({"messages": [("user", "Research tea")]}, config)
        stored = app.get_state(config).values
    _, _, reference = run(graph, thread="reference")
    assert out["halt_reason"] == "budget_exceeded"
    assert stored["usage"] == out["usage"]
    assert [entry_tokens(u) for u in out["usage"]] == [entry_tokens(u) for u in reference["usage"]]
    assert [(e["kind"], e["spent"]) for e in out["budget_events"]] == [
        (e["kind"], e["spent"]) for e in reference["budget_events"]
    ]


def test_the_recorder_is_handed_only_model_events_and_still_sees_a_model_deep_in_a_chain():
    from langchain_core.runnables import RunnableLambda

    from langgraph_supervisor_pro._graph.usage import UsageRecorder

    seen: list[str] = []

    class Watching(UsageRecorder):
        def on_chain_start(self, *args: Any, **kwargs: Any) -> None:
            seen.append("chain")

        def on_tool_start(self, *args: Any, **kwargs: Any) -> None:
            seen.append("tool")

        def on_custom_event(self, *args: Any, **kwargs: Any) -> None:
            seen.append("custom")

    @tool
    def ask(question: str) -> str:
        """Ask the model."""
        return str(worker_model("small").invoke(question).content)

    def outer(question: str) -> Any:
        from langchain_core.callbacks import dispatch_custom_event

        dispatch_custom_event("progress", {"q": question})
        return ask.invoke({"question": question})

    recorder = Watching()
    RunnableLambda(outer).invoke("hello there", {"callbacks": [recorder]})
    assert seen == []  # LangChain skips the recorder for chain, tool and custom events
    (entry,) = recorder.entries(turn=1, step=1, role="worker", worker="a")
    assert entry["tokens"] > 0

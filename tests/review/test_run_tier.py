"""The tier is the deployment's: a run may make it stricter, never looser (issue 33, item 1).

Through every entry point that passes a config: `invoke` / `stream` and their async twins,
new input on a paused thread, a fork, a hand-built agent's `ToolGuard`, a domain of a
tree, the review desk (`resolve_review`, `sweep_reviews`), standby (`resume_orphans`) and
`server_auth` (its handlers called as LangGraph's server calls them). The CLI passes no
per-run tier: its `review resolve` goes through `resolve_review` with the thread's config.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from langgraph_sdk import Auth

from langgraph_supervisor_pro import ReviewPolicy, Worker, create_supervisor
from langgraph_supervisor_pro.review import resolve_review, server_auth, sweep_reviews
from langgraph_supervisor_pro.review._desk import Approve
from langgraph_supervisor_pro.review._guard import ToolGuard
from langgraph_supervisor_pro.review._server import _guard_run
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, routes, thread
from tests.review.test_server import ctx, run_value

RAN: list[str] = []
LOOSER = "looser than the deployment's tier 'supervised'"


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    RAN.append(order_id)
    return f"refunded {order_id}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def _call() -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "refund", "args": {"order_id": "A1"}, "id": "c1"}]
    )


def _billing() -> Worker:
    return Worker(
        name="billing",
        description="Refunds orders.",
        model=ScriptedChatModel(script=[_call(), "done"]),
        tools=[refund],
        risks={"refund": "high"},
    )


def _graph(policy: ReviewPolicy | None = None, checkpointer: Any = None) -> Any:
    return create_supervisor(
        [_billing()],
        router=routes("billing"),
        review=policy if policy is not None else ReviewPolicy(tier="supervised"),
    ).compile(checkpointer=checkpointer if checkpointer is not None else InMemorySaver())


def _with(config: dict[str, Any], autonomy: str) -> dict[str, Any]:
    return {**config, "configurable": {**config["configurable"], "autonomy": autonomy}}


def _refused(out: dict[str, Any], asked: str = "autonomous") -> None:
    assert out["status"] == "failed", out
    detail = out["halt_detail"]
    assert f"configurable.autonomy: got {asked!r}, {LOOSER}" in detail
    assert "ReviewPolicy.allow_run_override=True" in detail
    assert "__interrupt__" not in out
    assert RAN == []  # nothing ran: no worker was dispatched
    assert out["ledger"] == []


# -- in process ------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["invoke", "stream", "ainvoke", "astream"])
def test_a_looser_per_run_tier_is_refused_when_the_run_starts(how: str) -> None:
    app = _graph()
    config = _with(thread(), "autonomous")
    if how == "invoke":
        out = app.invoke(ask(), config)
    elif how == "stream":
        out = [c for c in app.stream(ask(), config, stream_mode="values")][-1]
    elif how == "ainvoke":
        out = asyncio.run(app.ainvoke(ask(), config))
    else:

        async def last() -> Any:
            return [c async for c in app.astream(ask(), config, stream_mode="values")][-1]

        out = asyncio.run(last())
    _refused(out)


def test_the_policy_tier_still_pauses_the_risky_tool() -> None:
    app = _graph()
    out = app.invoke(ask(), thread())
    (pending,) = out["__interrupt__"]
    assert pending.value["context"]["tier"] == "supervised"
    assert RAN == []


def test_new_input_on_a_thread_paused_at_a_review_cannot_loosen_it() -> None:
    app = _graph()
    config = thread()
    assert app.invoke(ask(), config)["__interrupt__"]
    out = app.invoke(ask("Refund it now"), _with(config, "autonomous"))
    _refused(out)


def test_a_fork_with_a_looser_tier_still_reviews() -> None:
    saver = InMemorySaver()
    app = _graph(checkpointer=saver)
    config = thread()
    app.invoke(ask(), config)
    before_worker = next(s for s in app.get_state_history(config) if s.next == ("billing",))
    fork = _with(before_worker.config, "autonomous")  # type: ignore[arg-type]
    out = _graph(checkpointer=saver).invoke(None, fork)  # a fresh script: it asks to refund
    (pending,) = out["__interrupt__"]  # the worker runs in the tier the run recorded
    assert pending.value["context"]["tier"] == "supervised"
    assert RAN == []


def test_a_stricter_per_run_tier_is_honoured() -> None:
    app = _graph()
    config = _with(thread(), "manual")
    out = app.invoke(ask(), config)
    (pending,) = out["__interrupt__"]
    assert pending.value["context"]["kind"] == "dispatch"  # manual: the dispatch first
    out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    (pending,) = out["__interrupt__"]
    assert pending.value["context"]["tier"] == "manual"
    assert RAN == []


def test_allow_run_override_lets_a_run_loosen_the_tier() -> None:
    app = _graph(ReviewPolicy(tier="supervised", allow_run_override=True))
    out = app.invoke(ask(), _with(thread(), "autonomous"))
    assert "__interrupt__" not in out
    assert out["status"] == "done" and out["autonomy"] == "autonomous"
    assert RAN == ["A1"]


def test_no_policy_means_the_default_policy_not_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LGSP_AUTONOMY", "autonomous")
    app = create_supervisor([_billing()], router=routes("billing")).compile(
        checkpointer=InMemorySaver()
    )
    out = app.invoke(ask(), thread())
    (pending,) = out["__interrupt__"]  # ReviewPolicy(): supervised, whatever the env says
    assert pending.value["context"]["tier"] == "supervised"
    _refused(app.invoke(ask(), _with(thread(), "autonomous")))
    # Asked for explicitly, the environment is the deployment's policy.
    asked = _graph(ReviewPolicy.from_env())
    assert "__interrupt__" not in asked.invoke(ask(), thread())
    assert RAN == ["A1"]


def test_a_hand_built_agents_guard_refuses_a_looser_tier() -> None:
    guard = ToolGuard(worker="billing", tools=[refund], risks={"refund": "high"})
    agent = create_agent(
        ScriptedChatModel(script=[_call(), "done"]),
        tools=[refund],
        middleware=[guard],
        checkpointer=InMemorySaver(),
    )
    with pytest.raises(ValueError, match=LOOSER):
        agent.invoke({"messages": [("user", "refund A1")]}, _with(thread(), "autonomous"))
    assert RAN == []


def test_a_domain_whose_policy_allows_it_runs_in_the_runs_looser_tier() -> None:
    def domain(policy: ReviewPolicy) -> Any:
        return create_supervisor([_billing()], router=routes("billing"), review=policy)

    for own, expected in (
        (ReviewPolicy(tier="supervised", allow_run_override=True), "autonomous"),
        (ReviewPolicy(tier="supervised"), "supervised"),  # its own tier is its floor
    ):
        RAN.clear()
        app = create_supervisor(
            [Worker(name="orders", description="Orders.", agent=domain(own))],
            router=routes("orders"),
            review=ReviewPolicy(tier="supervised", allow_run_override=True),
        ).compile(checkpointer=InMemorySaver())
        out = app.invoke(ask(), _with(thread(), "autonomous"))
        if expected == "autonomous":
            assert "__interrupt__" not in out and RAN == ["A1"]
        else:
            (pending,) = out["__interrupt__"]
            assert pending.value["context"]["tier"] == "supervised" and RAN == []


# -- the review desk -----------------------------------------------------------------------


def test_resolve_review_refuses_a_looser_tier_before_touching_the_run() -> None:
    app = _graph()
    config = thread()
    app.invoke(ask(), config)
    tid = config["configurable"]["thread_id"]
    before = app.get_state(config)
    with pytest.raises(ValueError) as caught:
        resolve_review(
            app,
            thread_id=tid,
            decision=Approve(),
            config={"configurable": {"autonomy": "autonomous"}},
        )
    text = str(caught.value)
    assert "configurable.autonomy is 'autonomous', looser than the tier thread" in text
    assert "a resume cannot loosen a run's tier" in text and "(the run was not changed)" in text
    after = app.get_state(config)
    assert after.config == before.config and [i.id for i in after.interrupts] == [
        i.id for i in before.interrupts
    ]
    assert RAN == []
    # With the policy given, a tier the policy refuses is refused the same way.
    with pytest.raises(ValueError, match=r"resolve_review\(config\): configurable.autonomy"):
        resolve_review(
            app,
            thread_id=tid,
            decision=Approve(),
            config={"configurable": {"autonomy": "supervised"}},
            policy=ReviewPolicy(tier="manual"),
        )
    assert RAN == []
    # The run's own tier, or a stricter one, resumes it.
    out = resolve_review(
        app, thread_id=tid, decision=Approve(), config={"configurable": {"autonomy": "manual"}}
    )
    assert out["status"] == "done" and RAN == ["A1"]


def test_sweep_reviews_with_a_looser_tier_reports_an_error_and_leaves_the_run() -> None:
    saver = InMemorySaver()
    app = _graph(checkpointer=saver)
    config = thread()
    app.invoke(ask(), config)
    later = datetime.now(UTC) + timedelta(days=2)
    (action,) = sweep_reviews(
        app, saver, now=later, config={"configurable": {"autonomy": "autonomous"}}
    )
    assert action.action == "error"
    assert "looser than the tier thread" in str(action.error)
    assert app.get_state(config).interrupts  # still paused on its review
    assert RAN == []


# -- standby ---------------------------------------------------------------------------------


def _die_holding(url: str, thread_id: str) -> None:
    from langgraph_supervisor_pro.persistence._leases import _connect, _options, _postgres_lease

    opts = _options(thread_id, None, "dead-primary", 30.0, 5.0, "test")
    conn = _connect(url, opts)
    _postgres_lease(conn, url, opts)
    conn.close()


@pytest.mark.parametrize(
    ("asked", "stop", "kind"), [(None, "billing", "tool"), ("manual", "review", "dispatch")]
)
def test_standby_resumes_an_orphan_in_the_tier_it_started_in(
    pg_database: str, asked: str | None, stop: str, kind: str
) -> None:
    from langgraph_supervisor_pro import open_checkpointer
    from langgraph_supervisor_pro.persistence import resume_orphans

    config = thread()
    if asked is not None:
        config = _with(config, asked)
    tid = config["configurable"]["thread_id"]
    with open_checkpointer(pg_database) as saver:
        paused = create_supervisor(
            [_billing()], router=routes("billing"), review=ReviewPolicy(tier="supervised")
        ).compile(checkpointer=saver, interrupt_before=[stop])
        paused.invoke(ask(), config, durability="sync")
        assert paused.get_state(config).next == (stop,)
        _die_holding(pg_database, tid)
        app = _graph(checkpointer=saver)
        (takeover,) = resume_orphans(app, owner="standby-1")
        assert takeover.thread_id == tid
        (pending,) = app.get_state({"configurable": {"thread_id": tid}}).interrupts
        assert pending.value["context"]["kind"] == kind
        assert pending.value["context"]["tier"] == (asked or "supervised")
    assert RAN == []


# -- server_auth --------------------------------------------------------------------------------


def _auth(policy: ReviewPolicy) -> Auth:
    async def authenticate(authorization: str | None) -> str:
        return "mallory"

    return server_auth(authenticate=authenticate, policy=policy)


def _handler(auth: Auth, resource: str, action: str) -> Any:
    (handler,) = auth._handlers[(resource, action)]
    return handler


def _forbidden(call: Any) -> str:
    with pytest.raises(Auth.exceptions.HTTPException) as caught:
        asyncio.run(call)
    assert caught.value.status_code == 403
    detail = str(caught.value.detail)
    assert detail.startswith("server_auth: ") and "\n" not in detail
    return detail


SUPERVISED = ReviewPolicy(tier="supervised")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"config": {"configurable": {"autonomy": "autonomous"}}}, "config.configurable.autonomy"),
        ({"context": {"autonomy": "Autonomous"}}, "context.autonomy"),
    ],
)
@pytest.mark.parametrize("thread_id", [None, "t-1"])  # a stateless run, a run on a thread
def test_server_auth_refuses_a_run_asking_for_a_looser_tier(
    kwargs: dict[str, Any], field: str, thread_id: str | None
) -> None:
    value = run_value(thread_id=thread_id, **kwargs)
    detail = _forbidden(_guard_run(ctx("mallory"), value, SUPERVISED))
    assert f"the run is refused: {field}: got 'autonomous', {LOOSER}" in detail
    assert "allow_run_override" in detail
    # Also a run that answers a review while asking for a looser tier.
    value = run_value(
        thread_id="t-1", command={"resume": {"decisions": [{"type": "approve"}]}}, **kwargs
    )
    _forbidden(_guard_run(ctx("alice"), value, SUPERVISED))


def test_server_auth_refuses_a_tier_that_is_no_tier() -> None:
    value = run_value(config={"configurable": {"autonomy": "yolo"}})
    detail = _forbidden(_guard_run(ctx(), value, SUPERVISED))
    assert "config.configurable.autonomy: got 'yolo'; give one of" in detail


def test_server_auth_lets_a_stricter_or_the_same_tier_through() -> None:
    for value in (
        run_value(config={"configurable": {"autonomy": "manual"}}),
        run_value(context={"autonomy": "supervised"}),
        run_value(config={"configurable": {"autonomy": ""}}),
        run_value(config={"configurable": {"thread_id": "x"}}, context=None),
        run_value(config=None),
    ):
        asyncio.run(_guard_run(ctx(), value, SUPERVISED))
    loose = ReviewPolicy(tier="supervised", allow_run_override=True)
    asyncio.run(_guard_run(ctx(), run_value(context={"autonomy": "autonomous"}), loose))


@pytest.mark.parametrize("action", ["create", "update"])
def test_server_auth_refuses_an_assistant_with_a_looser_tier(action: str) -> None:
    handler = _handler(_auth(SUPERVISED), "assistants", action)
    for value, field in (
        ({"graph_id": "g", "config": {"configurable": {"autonomy": "autonomous"}}}, "config"),
        ({"graph_id": "g", "context": {"autonomy": "autonomous"}}, "context"),
    ):
        detail = _forbidden(handler(ctx("mallory"), value))
        assert f"the assistant is refused: {field}." in detail and LOOSER in detail
    asyncio.run(handler(ctx(), {"graph_id": "g", "context": {"autonomy": "manual"}}))
    asyncio.run(handler(ctx(), {"graph_id": "g", "config": {}, "metadata": {"a": 1}}))
    loose = _handler(_auth(ReviewPolicy(allow_run_override=True)), "assistants", action)
    asyncio.run(loose(ctx(), {"graph_id": "g", "context": {"autonomy": "autonomous"}}))


@pytest.mark.parametrize("action", ["create", "update"])
def test_server_auth_refuses_a_cron_with_a_looser_tier(action: str) -> None:
    handler = _handler(_auth(SUPERVISED), "crons", action)
    payload = {"assistant_id": "g", "config": {"configurable": {"autonomy": "autonomous"}}}
    detail = _forbidden(handler(ctx("mallory"), {"schedule": "* * * * *", "payload": payload}))
    assert "the cron is refused: config.configurable.autonomy: got 'autonomous'" in detail
    payload = {"assistant_id": "g", "context": {"autonomy": "autonomous"}}
    _forbidden(handler(ctx("mallory"), {"payload": payload}))
    asyncio.run(
        handler(ctx(), {"payload": {"assistant_id": "g", "context": {"autonomy": "manual"}}})
    )
    asyncio.run(handler(ctx(), {"schedule": "* * * * *"}))


def test_server_auth_defaults_to_the_default_policy_not_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LGSP_AUTONOMY", "autonomous")

    async def authenticate(authorization: str | None) -> str:
        return "alice"

    handler = _handler(server_auth(authenticate=authenticate), "assistants", "create")
    _forbidden(handler(ctx(), {"graph_id": "g", "context": {"autonomy": "autonomous"}}))

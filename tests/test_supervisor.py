import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import (
    RouteDecision,
    SupervisorView,
    Worker,
    WorkerResult,
    register_secret,
)
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, routes, thread

BIG = "x" * 2000


def w(name, agent=None, **kw):
    return Worker(
        name=name,
        description=f"Does {name} work.",
        agent=agent or (lambda t, n=name: f"{n} output {t.step}"),
        **kw,
    )


def decisions(*names):
    return [{"next": n, "instructions": f"please {n}" if n != "FINISH" else ""} for n in names]


# ----------------------------------------------------------------------- what it sees


def test_prompt_holds_task_catalogue_and_ledger_never_transcripts():
    secret = "SECRET-TRANSCRIPT-" + BIG
    model = ScriptedChatModel(script=decisions("a", "b", "FINISH"))
    app = compile_team(
        [
            w("a", lambda t: WorkerResult(status="success", result=secret, summary="a found 3")),
            w("b"),
        ],
        model=model,
    )
    out = app.invoke(ask("Compare cats and dogs"), thread())
    assert out["status"] == "done"
    assert len(model.calls) == 3
    system, human = model.calls[2].messages
    assert isinstance(system, SystemMessage) and isinstance(human, HumanMessage)
    assert "- a: Does a work." in system.content and "- b: Does b work." in system.content
    assert "a, b, FINISH" in system.content
    assert "Task: Compare cats and dogs" in human.content
    assert "#1 a [success] a found 3" in human.content
    assert "#2 b [success]" in human.content
    for call in model.calls:  # never a worker's transcript or full output
        text = "".join(str(m.content) for m in call.messages)
        assert "SECRET-TRANSCRIPT" not in text
    # The synthesis step, not the supervisor, sees the full output.
    assert out["messages"][-1].content == "b output 2"


def test_prompt_stays_flat_as_hops_grow():
    names = ["a", "b", "c"]
    hops = 40
    model = ScriptedChatModel(script=decisions(*[names[i % 3] for i in range(hops)], "FINISH"))
    app = compile_team(
        [w(n, lambda t, n=n: f"{n}: " + BIG) for n in names], model=model, max_steps=hops
    )
    out = app.invoke(ask(), thread())
    assert len(out["ledger"]) == hops
    sizes = [count_tokens_approximately(list(c.messages)) for c in model.calls]
    assert max(sizes[6:]) <= sizes[6] * 1.1  # flat once the ledger window is full
    assert sizes[-1] < 1200  # well under one worker output per hop
    last = model.calls[-1].messages[1].content
    assert "40 hops so far (40 succeeded); the last 6:" in last
    assert "#35" in last and "#34 " not in last


def test_custom_prompt_replaces_the_header_only():
    model = ScriptedChatModel(script=decisions("FINISH"))
    app = compile_team([w("a")], model=model, prompt="You run a newsroom.")
    app.invoke(ask(), thread())
    system = model.calls[0].messages[0].content
    assert system.startswith("You run a newsroom.")
    assert "- a: Does a work." in system and "exactly one of: a, FINISH" in system


# ----------------------------------------------------------------------- invalid routes


def test_hallucinated_worker_is_reasked_once_with_the_error():
    model = ScriptedChatModel(script=[{"next": "marketing"}, *decisions("a", "FINISH")])
    app = compile_team([w("a")], model=model)
    out = app.invoke(ask(), thread())
    assert [e["worker"] for e in out["ledger"]] == ["a"]
    reask = model.calls[1].messages[-1].content
    assert "not a valid decision" in reask and "marketing" in reask
    assert "exactly one of: a, FINISH" in reask
    assert out["status"] == "done"


@pytest.mark.parametrize(
    "bad",
    [
        {"next": "marketing"},
        "I think the researcher should go next.",  # free text, no structured reply
        {"instructions": "no next at all"},
        {"next": "a", "instructions": 42},
    ],
)
def test_twice_invalid_halts_closed_without_fallback(bad):
    ran = []
    model = ScriptedChatModel(script=[bad, bad])
    app = compile_team([w("a", lambda t: ran.append(1) or "x")], model=model)
    out = app.invoke(ask(), thread())
    assert ran == []  # never executed
    assert out["status"] == "halted"
    assert out["halt_reason"] == "invalid_route"
    assert "twice invalid" in out["halt_detail"]
    assert out["messages"][-1].content.startswith("Stopped early (invalid_route)")
    model.assert_complete()


def test_twice_invalid_goes_to_the_fallback():
    model = ScriptedChatModel(script=[{"next": "nobody"}, {"next": "nobody"}, *decisions("FINISH")])
    seen = []
    app = compile_team(
        [w("a"), w("helper", lambda t: seen.append(t.instructions) or "rescued")],
        model=model,
        fallback="helper",
    )
    out = app.invoke(ask(), thread())
    assert out["ledger"][0]["worker"] == "helper"
    assert out["ledger"][0]["decided_by"] == "fallback"
    assert "could not choose a valid route" in seen[0] and "nobody" in seen[0]
    assert out["status"] == "done" and out["messages"][-1].content == "rescued"


# ----------------------------------------------------------------------- router


def test_router_decides_first_and_defers_to_the_model():
    views: list[SupervisorView] = []

    def router(view):
        views.append(view)
        if view.step == 0:
            return RouteDecision(next="a", instructions="start here")
        return None

    model = ScriptedChatModel(script=decisions("b", "FINISH"))
    app = compile_team([w("a"), w("b")], model=model, router=router)
    out = app.invoke(ask("T"), thread())
    assert [(e["worker"], e["decided_by"]) for e in out["ledger"]] == [
        ("a", "router"),
        ("b", "model"),
    ]
    assert out["ledger"][0]["instructions"] == "start here"
    assert len(model.calls) == 2
    assert views[1].visits == {"a": 1, "b": 0} and views[1].ledger[0]["worker"] == "a"


async def test_async_router_and_dict_routes():
    async def router(view):
        return {"next": "a", "instructions": "go"} if view.step == 0 else "FINISH"

    app = compile_team([w("a")], router=router)
    out = await app.ainvoke(ask(), thread())
    assert [e["worker"] for e in out["ledger"]] == ["a"] and out["status"] == "done"
    out = compile_team([w("a")], router=router).invoke(ask(), thread())
    assert out["status"] == "done"


def test_invalid_router_output_halts_without_reask():
    app = compile_team([w("a")], router=lambda v: "ghost")
    out = app.invoke(ask(), thread())
    assert out["halt_reason"] == "invalid_route"
    assert "router returned an invalid route" in out["halt_detail"]


def test_router_deferring_without_model_halts():
    app = compile_team([w("a")], router=lambda v: None)
    out = app.invoke(ask(), thread())
    assert out["halt_reason"] == "invalid_route"
    assert "no model is configured" in out["halt_detail"]


# ----------------------------------------------------------------------- guards


def test_max_steps_halts_with_its_reason():
    app = compile_team(
        [w("a"), w("b")], router=routes(*"abababab"), max_steps=3, ping_pong_window=None
    )
    out = app.invoke(ask(), thread())
    assert len(out["ledger"]) == 3
    assert out["status"] == "halted" and out["halt_reason"] == "max_steps"
    assert "max_steps=3" in out["halt_detail"]
    assert "Last result, from a (hop 3)" in out["messages"][-1].content


def test_max_visits_halts_with_its_reason():
    app = compile_team([w("a", max_visits=2), w("b")], router=routes("a", "b", "a", "a"))
    out = app.invoke(ask(), thread())
    assert [e["worker"] for e in out["ledger"]] == ["a", "b", "a"]
    assert out["halt_reason"] == "max_visits"
    assert "'a' already ran 2 times" in out["halt_detail"]


def _fails(t):
    raise ValueError("cannot")


def test_ping_pong_without_success_halts():
    app = compile_team(
        [w("a", _fails), w("b", lambda t: WorkerResult(status="needs_review"))],
        router=routes(*"abababab"),
    )
    out = app.invoke(ask(), thread())
    assert [e["worker"] for e in out["ledger"]] == ["a", "b", "a"]
    assert out["halt_reason"] == "ping_pong"
    assert "'a' and 'b'" in out["halt_detail"]


def test_alternating_with_success_is_a_pipeline_not_a_loop():
    app = compile_team([w("a"), w("b")], router=routes(*"ababab"))
    out = app.invoke(ask(), thread())
    assert len(out["ledger"]) == 6 and out["status"] == "done"


# ----------------------------------------------------------------------- errors and turns


def test_model_error_fails_the_run_closed_after_retries():
    model = ScriptedChatModel(script=[ConnectionError("api down")] * 3)
    # The default's 3 attempts (tests/test_builder.py), without its back-off waits.
    retry = RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False)
    app = compile_team([w("a")], model=model, supervisor_retry=retry)
    out = app.invoke(ask(), thread())
    assert len(model.calls) == 3  # retried
    assert out["status"] == "failed" and out["halt_reason"] == "supervisor_error"
    assert "ConnectionError: api down" in out["halt_detail"]
    assert out["messages"][-1].content.startswith("Stopped early (supervisor_error)")


def test_a_supervisor_error_and_an_invalid_route_are_stored_scrubbed():
    secret = "sk-supervisor-0123456789"
    register_secret(secret)
    model = ScriptedChatModel(script=[PermissionError(f"401: key {secret} revoked")])
    out = compile_team([w("a")], model=model).invoke(ask(), thread())
    assert out["halt_reason"] == "supervisor_error"
    assert out["halt_detail"] == "the supervisor failed: PermissionError: 401: key *** revoked"
    assert secret not in out["messages"][-1].content
    # An invalid route's detail quotes what the router answered.
    halted = compile_team([w("a")], router=lambda view: f"ask {secret}").invoke(ask(), thread())
    assert halted["halt_reason"] == "invalid_route"
    assert secret not in halted["halt_detail"] and "***" in halted["halt_detail"]


def test_missing_user_message_is_a_clear_failure():
    app = compile_team([w("a")], router=routes("a"))
    out = app.invoke({"messages": [AIMessage(content="hi")]}, thread())
    assert out["status"] == "failed"
    assert "needs at least one user message" in out["halt_detail"]


def test_second_turn_starts_fresh_but_keeps_history_and_worker_memory():
    app = compile_team([w("a"), w("b")], router=routes("a", "b", "FINISH", "a"))
    config = thread()
    first = app.invoke(ask("first task"), config)
    second = app.invoke(ask("second task"), config)
    assert first["turn"] == 1 and second["turn"] == 2
    assert second["task"] == "second task" and second["step"] == 1
    assert [(e["turn"], e["step"], e["worker"]) for e in second["ledger"]] == [
        (1, 1, "a"),
        (1, 2, "b"),
        (2, 1, "a"),
    ]
    # worker a remembers its turn-1 hop
    assert len(second["workers"]["a"]["messages"]) == 4
    human = [m.content for m in second["messages"] if m.type == "human"]
    assert human == ["first task", "second task"]
    assert [m.content for m in second["messages"] if m.type == "ai"] == ["b output 2", "a output 1"]


def test_supervisor_retry_policy_is_langgraphs():
    # A non-transient model error is not retried.
    model = ScriptedChatModel(script=[TypeError("bad request")])
    out = compile_team([w("a")], model=model).invoke(ask(), thread())
    assert len(model.calls) == 1 and out["halt_reason"] == "supervisor_error"
    assert isinstance(RetryPolicy(), RetryPolicy)


# ----------------------------------------------------------------------- text no backend stores


@pytest.mark.parametrize(("bad", "named"), [("\x00", "U+0000"), ("\ud800", "U+D800")])
def test_a_user_message_that_cannot_be_stored_halts_its_turn_before_any_decision(bad, named):
    seen = []

    def router(view):
        seen.append(view.task)
        return "a" if len(seen) == 1 else "FINISH"

    app = compile_team([w("a")], router=router)
    config = thread()
    blocks = [{"type": "text", "text": "ok "}, {"type": "text", "text": f"go{bad}"}]
    out = app.invoke({"messages": [HumanMessage(content=blocks)]}, config)
    assert out["status"] == "halted" and out["halt_reason"] == "invalid_input"
    assert out["halt_detail"] == (
        f"the last user message cannot be stored: its text holds "
        f"{'a NUL character' if bad == chr(0) else 'a surrogate code point'} ({named}) at "
        "index 5, which Postgres refuses (as it does every NUL and surrogate); send it again "
        "without that character"
    )
    assert out["task"] == "ok go\ufffd" and out["turn"] == 1 and out["step"] == 0
    assert seen == [] and out["ledger"] == []
    assert out["messages"][-1].content == (
        f"Stopped early (invalid_input): {out['halt_detail']}.\nFor troubleshooting, visit: "
        "https://langgraph-supervisor-pro.readthedocs.io/en/latest/reference/errors/invalid_input/"
    )
    # the same thread serves the next message, as a new turn
    nxt = app.invoke(ask("go"), config)
    assert nxt["status"] == "done" and nxt["turn"] == 2 and nxt["halt_detail"] is None
    assert seen == ["go", "go"] and nxt["messages"][-1].content == "a output 1"


def test_a_message_id_that_cannot_be_stored_is_named_as_the_id():
    out = compile_team([w("a")], router=routes("a")).invoke(
        {"messages": [HumanMessage("fine text", id="msg-\x00")]}, thread()
    )
    assert out["halt_reason"] == "invalid_input" and out["task_message_id"] == "msg-\ufffd"
    assert "its id holds a NUL character (U+0000) at index 4" in out["halt_detail"]


def test_instructions_that_cannot_be_stored_reach_workers_and_the_ledger_replaced():
    seen = []

    def a(task):
        seen.append(task.instructions)
        return "done"

    app = compile_team(
        [w("a", a), w("b", a)],
        router=routes(
            [{"next": "a", "instructions": "x\x00y"}, {"next": "b", "instructions": "\ud800z"}]
        ),
        parallel=True,
    )
    out = app.invoke(ask(), thread())
    assert out["status"] == "done"
    assert sorted(seen) == ["x\ufffdy", "\ufffdz"]
    assert sorted(e["instructions"] for e in out["ledger"]) == ["x\ufffdy", "\ufffdz"]


def test_a_model_error_that_cannot_be_stored_is_a_storable_halt_detail():
    model = ScriptedChatModel(script=[TypeError("bad \x00 request \ud800")])
    out = compile_team([w("a")], model=model).invoke(ask(), thread())
    assert out["halt_reason"] == "supervisor_error"
    assert out["halt_detail"] == "the supervisor failed: TypeError: bad \ufffd request \ufffd"

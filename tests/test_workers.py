import asyncio
import math
import threading
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.types import Command, RetryPolicy
from pydantic import BaseModel

from langgraph_supervisor_pro import Worker, WorkerResult, WorkerTask
from langgraph_supervisor_pro._graph.coerce import coerce_worker_output
from langgraph_supervisor_pro._internal import twins
from langgraph_supervisor_pro._internal.aio import abandoned
from langgraph_supervisor_pro._workers import default_worker_retry
from langgraph_supervisor_pro.errors import WorkerTimeoutError
from tests._helpers import ask, compile_team, routes, thread

FAST_RETRY = RetryPolicy(max_attempts=2, initial_interval=0.01, jitter=False)


def w(name, agent, **kw):
    return Worker(name=name, description=f"The {name}.", agent=agent, **kw)


# ----------------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "has space"}, "Worker.name"),
        ({"name": "9lives"}, "Worker.name"),
        ({"name": ""}, "Worker.name"),
        ({"name": "finish"}, "reserved"),
        ({"description": "   "}, "Worker.description"),
        ({"description": "x" * 301}, "one sentence"),
        ({"timeout": 0}, "Worker.timeout"),
        ({"timeout": -1.5}, "Worker.timeout"),
        ({"timeout": "5"}, "Worker.timeout"),
        # Timeouts a thread or an event loop cannot wait for.
        ({"timeout": math.nan}, r"Worker\.timeout: worker 'ok' got nan; .* finite"),
        ({"timeout": math.inf}, r"Worker\.timeout: worker 'ok' got inf"),
        ({"timeout": -math.inf}, "Worker.timeout"),
        ({"timeout": threading.TIMEOUT_MAX * 2}, r"Worker\.timeout: .* at most"),
        pytest.param({"timeout": 10**400}, "Worker.timeout", id="huge-int"),
        ({"timeout": True}, "Worker.timeout"),
        # Retry policies LangGraph accepts but a hop cannot follow.
        ({"retry": RetryPolicy(initial_interval=-1)}, r"Worker\.retry\.initial_interval: worker"),
        ({"retry": RetryPolicy(max_interval=-1)}, r"Worker\.retry\.max_interval"),
        ({"retry": RetryPolicy(max_interval=math.inf)}, r"Worker\.retry\.max_interval"),
        ({"retry": RetryPolicy(initial_interval=math.nan)}, r"Worker\.retry\.initial_interval"),
        ({"retry": RetryPolicy(backoff_factor=0.5)}, r"Worker\.retry\.backoff_factor.*>= 1"),
        ({"retry": RetryPolicy(backoff_factor=math.nan)}, r"Worker\.retry\.backoff_factor"),
        ({"retry": RetryPolicy(backoff_factor=math.inf)}, r"Worker\.retry\.backoff_factor"),
        ({"retry": RetryPolicy(max_attempts=0)}, r"Worker\.retry\.max_attempts.*>= 1"),
        ({"retry": RetryPolicy(max_attempts=2.5)}, r"Worker\.retry\.max_attempts"),  # type: ignore[arg-type]
        ({"retry": RetryPolicy(jitter="yes")}, r"Worker\.retry\.jitter"),  # type: ignore[arg-type]
        ({"retry": RetryPolicy(retry_on="ConnectionError")}, r"Worker\.retry\.retry_on"),  # type: ignore[arg-type]
        ({"max_visits": 0}, "Worker.max_visits"),
        ({"max_visits": True}, "Worker.max_visits"),
        ({"tools": ["a", "a"]}, "more than once"),
    ],
)
def test_worker_rejects_bad_configuration(kwargs, match):
    base = {"name": "ok", "description": "Does things.", "agent": lambda t: "x"}
    with pytest.raises(ValueError, match=match):
        Worker(**{**base, **kwargs})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"agent": 42}, "Worker.agent.*not supported"),
        ({"agent": "researcher"}, "Worker.agent"),
        ({"retry": {"max_attempts": 3}}, "Worker.retry"),
        ({"tools": "search"}, "Worker.tools"),
        ({"tools": [42]}, "Worker.tools"),
    ],
)
def test_worker_rejects_bad_types(kwargs, match):
    base = {"name": "ok", "description": "Does things.", "agent": lambda t: "x"}
    with pytest.raises(TypeError, match=match):
        Worker(**{**base, **kwargs})


def test_worker_normalises_description_and_tools():
    def search(q: str) -> str:
        return q

    worker = Worker(
        name="r", description=" Finds\n facts. ", agent=lambda t: "x", tools=["lookup", search]
    )
    assert worker.description == "Finds facts."
    assert worker.tools == ("lookup", search)
    assert worker.tool_names == ("lookup", "search")
    assert default_worker_retry().max_attempts == 3


# ----------------------------------------------------------------------- coercion


class Report(BaseModel):
    title: str


@pytest.mark.parametrize(
    ("output", "status", "result"),
    [
        ("plain text", "success", "plain text"),
        (WorkerResult(status="needs_review", result="draft"), "needs_review", "draft"),
        ({"status": "failed", "error": "no data"}, "failed", None),
        ({"rows": 3}, "success", {"rows": 3}),
        (Report(title="T"), "success", {"title": "T"}),
        (AIMessage(content="from a message"), "success", "from a message"),
        ([HumanMessage(content="q"), AIMessage(content="answer")], "success", "answer"),
        (
            {
                "messages": [
                    AIMessage(content="", tool_calls=[{"name": "t", "args": {}, "id": "1"}])
                ]
            },
            "failed",
            None,
        ),
        (
            {"messages": [AIMessage(content="x")], "structured_response": Report(title="S")},
            "success",
            {"title": "S"},
        ),
        (None, "failed", None),
        ({1, 2}, "failed", None),
        ({"status": "success", "result": object()}, "failed", None),
        ({"status": "bogus"}, "failed", None),
    ],
)
def test_coerce_worker_output(output, status, result):
    coerced, _ = coerce_worker_output(output, worker="w")
    assert coerced.status == status
    if result is not None:
        assert coerced.result == result
    if status == "failed":
        assert coerced.error


def test_coerce_skips_messages_the_worker_was_given():
    sent = HumanMessage(content="task", id="sent-1")
    out = {"messages": [sent, AIMessage(content="done", id="new-1")]}
    result, produced = coerce_worker_output(out, worker="w", sent=[sent])
    assert result.result == "done"
    assert [m.id for m in produced] == ["new-1"]


# ----------------------------------------------------------------------- scoping


def test_worker_task_holds_only_its_own_history():
    seen: dict[str, list[WorkerTask]] = {"a": [], "b": []}

    def make(name):
        def agent(task: WorkerTask) -> str:
            seen[name].append(task)
            return f"{name}-secret-output-{task.step}"

        return agent

    app = compile_team([w("a", make("a")), w("b", make("b"))], router=routes("a", "b", "a"))
    out = app.invoke(ask("the task"), thread())
    first, second = seen["a"]
    assert first.messages == []
    assert second.step == 3
    texts = [m.content for m in second.messages]
    assert any("a-secret-output-1" in t for t in texts)
    assert not any("b-secret-output" in t for t in texts)  # never another worker's transcript
    assert all(t.task == "the task" for t in seen["a"] + seen["b"])
    # Each slot holds its own messages only.
    assert all("b-secret" not in m.content for m in out["workers"]["a"]["messages"])
    assert [r["result"] for r in out["workers"]["b"]["results"]] == ["b-secret-output-2"]


def test_worker_cannot_write_the_supervisors_state():
    def escaping(task):
        raise AssertionError("unreachable")

    sub: StateGraph[Any] = StateGraph(dict)  # type: ignore[type-var]

    def escape(state):
        return Command(graph=Command.PARENT, goto="synthesis", update={"status": "done"})

    sub.add_node("escape", escape)
    sub.add_edge(START, "escape")
    agent = sub.compile()
    app = compile_team(
        [w("sneaky", agent), w("ok", lambda t: "fine")], router=routes("sneaky", "ok")
    )
    out = app.invoke(ask(), thread())
    first = out["ledger"][0]
    assert first["status"] == "failed"
    assert "Command.PARENT" in first["error"]
    assert [e["worker"] for e in out["ledger"]] == ["sneaky", "ok"]  # routing stayed ours
    assert out["status"] == "done"


# ----------------------------------------------------------------------- failures


def test_raising_worker_becomes_failed_result_and_run_continues():
    calls = []

    def broken(task):
        calls.append(task.step)
        raise ValueError("bad input")

    app = compile_team(
        [w("broken", broken, retry=FAST_RETRY), w("ok", lambda t: "fine")],
        router=routes("broken", "ok"),
    )
    out = app.invoke(ask(), thread())
    assert calls == [1]  # ValueError is not transient: no retry
    assert out["ledger"][0]["status"] == "failed"
    assert out["ledger"][0]["error"] == "ValueError: bad input"
    assert out["workers"]["broken"]["results"][0]["status"] == "failed"
    assert out["status"] == "done"
    assert out["messages"][-1].content == "fine"


def test_transient_errors_are_retried_then_succeed(monkeypatch):
    attempts = []
    slept: list[float] = []
    # The hop's waits between attempts are recorded instead of slept.
    monkeypatch.setattr(twins, "time", SimpleNamespace(sleep=slept.append))

    def flaky(task):
        attempts.append(task.step)
        if len(attempts) < 3:
            raise ConnectionError("reset by peer")
        return "third time lucky"

    retry = RetryPolicy(max_attempts=3, initial_interval=0.05, backoff_factor=2.0, jitter=False)
    app = compile_team([w("flaky", flaky, retry=retry)], router=routes("flaky"))
    out = app.invoke(ask(), thread())
    assert attempts == [1, 1, 1]
    assert slept == pytest.approx([0.05, 0.1])  # exponential backoff, as the policy says
    assert out["ledger"][0]["status"] == "success"
    assert out["messages"][-1].content == "third time lucky"


def test_many_retries_do_not_overflow_the_backoff(monkeypatch):
    # 2.0 ** 1100 is too large for a float: the wait is capped by max_interval instead.
    slept: list[float] = []
    monkeypatch.setattr(twins, "time", SimpleNamespace(sleep=slept.append))
    attempts = []

    def flaky(task):
        attempts.append(1)
        if len(attempts) <= 1100:
            raise ConnectionError("reset by peer")
        return "finally"

    retry = RetryPolicy(max_attempts=1101, initial_interval=0.001, max_interval=0.002, jitter=False)
    app = compile_team([w("flaky", flaky, retry=retry)], router=routes("flaky"))
    out = app.invoke(ask(), thread())
    assert len(attempts) == 1101
    assert slept[-1] == 0.002
    assert out["ledger"][0]["status"] == "success"


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(3)])
@pytest.mark.parametrize("timeout", [None, 30])  # with a timeout the attempt runs in a thread
def test_keyboard_interrupt_and_system_exit_propagate(exc, timeout):
    # Not an Exception: the hop is not failed, the run stops with it, as Python's would.
    calls = []

    def stopper(task):
        calls.append(task.step)
        raise exc

    app = compile_team([w("stopper", stopper, timeout=timeout)], router=routes("stopper"))
    config = thread()
    with pytest.raises(type(exc)):
        app.invoke(ask(), config)
    assert calls == [1]  # not retried either
    state = app.get_state(config)
    assert state.values["ledger"] == []  # no failed hop was written
    assert state.next == ("stopper",)  # the hop is still to run


@pytest.mark.parametrize("timeout", [None, 30])  # with a timeout: asyncio.wait_for
async def test_a_cancelled_run_is_cancelled_not_a_failed_hop(timeout):
    started = asyncio.Event()
    cancelled = []

    async def slow(task):
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(task.step)
            raise
        return "late"

    app = compile_team([w("slow", slow, timeout=timeout)], router=routes("slow"))
    config = thread()
    run = asyncio.create_task(app.ainvoke(ask(), config))
    await asyncio.wait_for(started.wait(), 30)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert run.cancelled()
    assert cancelled == [1]  # cancelled once, not retried
    state = await app.aget_state(config)
    assert state.values["ledger"] == []
    assert state.next == ("slow",)


def test_sync_timeout_fails_the_hop_after_retries():
    attempts = []
    finished = []
    release = threading.Event()

    def slow(task):
        attempts.append(abandoned())
        release.wait(timeout=60)  # blocked until the test lets go
        finished.append(abandoned())
        return "late"

    app = compile_team([w("slow", slow, timeout=0.05, retry=FAST_RETRY)], router=routes("slow"))
    try:
        out = app.invoke(ask(), thread())
        # The run returned while both attempts were still blocked on the event.
        assert finished == []
    finally:
        release.set()
    assert attempts == [False, False]  # WorkerTimeoutError is transient: retried once
    # Each abandoned attempt's thread sees it was abandoned (what a remote hop's relay
    # asks before writing to the run's stream).
    for _ in range(500):
        if len(finished) == 2:
            break
        threading.Event().wait(0.01)
    assert finished == [True, True]
    entry = out["ledger"][0]
    assert entry["status"] == "failed"
    assert entry["error"].startswith("WorkerTimeoutError")
    assert "0.05s" in entry["error"]


async def test_async_timeout_cancels_the_worker():
    cancelled = []

    async def slow(task):
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(task.step)
            raise
        return "late"

    app = compile_team([w("slow", slow, timeout=0.05, retry=FAST_RETRY)], router=routes("slow"))
    out = await app.ainvoke(ask(), thread())
    assert cancelled == [1, 1]
    assert out["ledger"][0]["error"].startswith("WorkerTimeoutError")
    # Not the built-in TimeoutError (an OSError), and transient for the default policy.
    assert not isinstance(WorkerTimeoutError("x", 1.0), TimeoutError)
    retry_on = default_worker_retry().retry_on
    assert callable(retry_on) and retry_on(WorkerTimeoutError("x", 1.0))


def test_garbage_output_becomes_failed_result():
    app = compile_team([w("odd", lambda t: {1, 2, 3})], router=routes("odd"))
    out = app.invoke(ask(), thread())
    assert out["ledger"][0]["status"] == "failed"
    assert "set" in out["ledger"][0]["error"]


# ----------------------------------------------------------------------- sync and async


async def test_async_worker_runs_natively_on_the_event_loop():
    where = []

    async def agent(task):
        where.append(
            (
                threading.current_thread() is threading.main_thread(),
                asyncio.get_running_loop() is loop,
            )
        )
        await asyncio.sleep(0)
        return "async ok"

    loop = asyncio.get_running_loop()
    app = compile_team([w("a", agent)], router=routes("a"))
    out = await app.ainvoke(ask(), thread())
    assert where == [(True, True)]
    assert out["messages"][-1].content == "async ok"


def test_async_worker_also_runs_under_sync_invoke():
    async def agent(task):
        await asyncio.sleep(0)
        return f"async under sync at step {task.step}"

    app = compile_team([w("a", agent)], router=routes("a"))
    out = app.invoke(ask(), thread())
    assert out["messages"][-1].content == "async under sync at step 1"


async def test_sync_worker_under_ainvoke():
    app = compile_team([w("s", lambda t: "sync ok")], router=routes("s"))
    out = await app.ainvoke(ask(), thread())
    assert out["messages"][-1].content == "sync ok"


async def test_async_worker_under_sync_invoke_inside_a_running_loop():
    # e.g. a notebook: sync invoke while an event loop runs in this thread
    async def agent(task):
        await asyncio.sleep(0)
        return "notebook ok"

    app = compile_team([w("a", agent)], router=routes("a"))
    out = app.invoke(ask(), thread())
    assert out["messages"][-1].content == "notebook ok"


def test_agent_worker_visited_twice_stores_each_message_once():
    from langchain.agents import create_agent

    from langgraph_supervisor_pro.testing import ScriptedChatModel

    agent = create_agent(ScriptedChatModel(script=["first answer", "second answer"]), tools=[])
    app = compile_team(
        [w("researcher", agent)], router=routes("researcher", "FINISH", "researcher", "FINISH")
    )
    config = thread()
    app.invoke(ask("T1"), config)
    out = app.invoke(ask("T2"), config)
    texts = [m.content for m in out["workers"]["researcher"]["messages"]]
    assert texts == ["Task: T1", "first answer", "Task: T2", "second answer"]

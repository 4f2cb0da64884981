"""The deterministic fallback: `Worker(fallback=...)` answers a hop that would fail.

The breaker-open trigger is tested with the breakers (tests/test_breakers.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import RetryPolicy
from pydantic import BaseModel

from langgraph_supervisor_pro import Worker, WorkerResult, WorkerTask, create_supervisor
from langgraph_supervisor_pro.persistence._memory import output_namespace
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, routes, thread

NO_RETRY = RetryPolicy(max_attempts=1)


class Quote(BaseModel):
    symbol: str
    price: float


def broken(task: WorkerTask) -> str:
    raise RuntimeError("feed down")


def cached(task: WorkerTask) -> dict[str, Any]:
    return {"symbol": "ACME", "price": 9.9}


async def acached(task: WorkerTask) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"symbol": "ACME", "price": 9.9}


def quotes(agent: Any = broken, **kwargs: Any) -> Worker:
    return Worker(
        name="quotes",
        description="Fetches quotes.",
        agent=agent,
        retry=kwargs.pop("retry", NO_RETRY),
        **kwargs,
    )


BACKUP = Worker(name="backup", description="Backup quotes.", agent=lambda t: "ACME at 10.4")


def run(*workers: Worker, driver: str = "invoke", **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("router", routes(workers[0].name))
    app = compile_team(list(workers), **kwargs)
    if driver == "invoke":
        return app.invoke(ask("Quote ACME"), thread())
    return asyncio.run(app.ainvoke(ask("Quote ACME"), thread()))


# -- the triggers --------------------------------------------------------------------------


@pytest.mark.parametrize("driver", ["invoke", "ainvoke"])
@pytest.mark.parametrize("fallback", [cached, acached], ids=["sync", "async"])
def test_an_exception_after_the_retries_goes_to_the_fallback(driver, fallback):
    calls: list[int] = []

    def flaky(task: WorkerTask) -> str:
        calls.append(task.step)
        raise ConnectionError("feed down")

    retry = RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False)
    out = run(quotes(flaky, retry=retry, fallback=fallback), driver=driver)
    (entry,) = out["ledger"]
    assert calls == [1, 1, 1]  # the retries first
    assert entry["status"] == "success" and entry["error"] is None
    assert entry["fallback"] == "error: ConnectionError: feed down"
    assert out["workers"]["quotes"]["results"][0]["result"] == {"symbol": "ACME", "price": 9.9}
    assert out["messages"][-1].content == '{"symbol": "ACME", "price": 9.9}'


@pytest.mark.parametrize(
    ("worker", "why"),
    [
        (quotes(lambda t: "ACME, no price", output_schema=Quote), "output_schema: "),
        (quotes(lambda t: "ACME at 10", verify=lambda task, result: "stale"), "verify: stale"),
        (
            quotes(lambda t: WorkerResult(status="failed", error="market closed")),
            "failed: market closed",
        ),
        (quotes(lambda t: 42), "failed: worker 'quotes' returned int"),
    ],
    ids=["output_schema", "verify", "failed-result", "not-a-result"],
)
def test_every_failed_hop_goes_to_the_fallback(worker, why):
    from dataclasses import replace

    out = run(replace(worker, fallback=cached))
    (entry,) = out["ledger"]
    assert entry["status"] == "success"
    assert entry["fallback"].startswith(why)


def test_a_successful_hop_never_calls_the_fallback():
    called: list[int] = []
    out = run(quotes(lambda t: "ACME at 10", fallback=lambda t: called.append(1)))
    (entry,) = out["ledger"]
    assert entry["status"] == "success" and "fallback" not in entry and called == []


def test_the_fallback_gets_the_hop_s_task():
    seen: list[WorkerTask] = []

    def fallback(task: WorkerTask) -> str:
        seen.append(task)
        return "ACME at 9.9"

    worker = quotes(reads=("backup",), fallback=fallback)
    run(worker, BACKUP, router=routes("backup", "quotes"))
    (task,) = seen
    assert (task.worker, task.step, task.task) == ("quotes", 2, "Quote ACME")
    assert task.reads["backup"].result == "ACME at 10.4"


# -- a worker named as the fallback --------------------------------------------------------


@pytest.mark.parametrize("driver", ["invoke", "ainvoke"])
def test_a_named_worker_s_agent_answers_the_hop(driver):
    seen: list[WorkerTask] = []

    def backup(task: WorkerTask) -> str:
        seen.append(task)
        return "ACME at 10.4"

    named = Worker(name="backup", description="Backup quotes.", agent=backup)
    out = run(quotes(fallback="backup"), named, driver=driver)
    (entry,) = out["ledger"]
    assert (entry["worker"], entry["status"], entry["summary"]) == (
        "quotes",
        "success",
        "ACME at 10.4",
    )
    assert entry["fallback"] == "error: RuntimeError: feed down"
    assert [t.worker for t in seen] == ["quotes"]  # this hop's task
    assert "backup" not in out["workers"]  # the hop is quotes's: its slot, its ledger line
    assert out["workers"]["quotes"]["messages"][-1].content == "ACME at 10.4"


def test_a_named_model_worker_answers_in_messages_with_its_own_retries():
    model = ScriptedChatModel(script=[RuntimeError("overloaded"), "ACME at 10.4 (from the model)"])
    named = Worker(
        name="backup",
        description="Backup quotes.",
        model=model,
        retry=RetryPolicy(
            max_attempts=2, initial_interval=0.0, jitter=False, retry_on=RuntimeError
        ),
    )
    out = run(quotes(fallback="backup"), named)
    (entry,) = out["ledger"]
    assert entry["status"] == "success" and entry["summary"] == "ACME at 10.4 (from the model)"
    messages = out["workers"]["quotes"]["messages"]
    assert isinstance(messages[0], HumanMessage) and isinstance(messages[-1], AIMessage)
    assert "Quote ACME" in str(model.calls[-1].messages[-1].content)


def test_a_named_worker_s_own_fallback_is_not_followed():
    third: list[int] = []
    named = Worker(
        name="backup",
        description="Backup quotes.",
        agent=broken,
        retry=NO_RETRY,
        fallback=lambda t: third.append(1),
    )
    out = run(quotes(fallback="backup"), named)
    (entry,) = out["ledger"]
    assert entry["status"] == "failed" and third == []
    assert entry["error"] == (
        "error: RuntimeError: feed down; then the fallback 'backup': error: RuntimeError: feed down"
    )


def test_two_workers_may_fall_back_on_each_other():
    a = Worker(name="a", description="A.", agent=broken, retry=NO_RETRY, fallback="b")
    b = Worker(name="b", description="B.", agent=lambda t: "b's answer", fallback="a")
    out = run(a, b, router=routes("a", "b"))
    assert [(e["worker"], e["status"]) for e in out["ledger"]] == [
        ("a", "success"),
        ("b", "success"),
    ]
    assert out["ledger"][0]["summary"] == "b's answer" and "fallback" not in out["ledger"][1]


# -- checks and failures -------------------------------------------------------------------


def test_the_fallback_s_result_must_pass_the_output_schema_but_not_verify():
    verified: list[Any] = []
    worker = quotes(
        lambda t: "ACME at 10",
        output_schema=Quote,
        verify=lambda task, result: verified.append(result.result),
        fallback=lambda task: '{"symbol": "ACME", "price": "9.9"}',
    )
    (entry,) = run(worker)["ledger"]
    assert entry["status"] == "success" and entry["fallback"].startswith("output_schema: ")
    assert verified == []  # the agent's text never reached verify; the fallback is not verified

    off_schema = quotes(output_schema=Quote, fallback=lambda task: "about 9.9")
    (entry,) = run(off_schema)["ledger"]
    assert entry["status"] == "failed"
    assert entry["error"].startswith(
        "error: RuntimeError: feed down; then the fallback '<lambda>': output_schema: "
    )


@pytest.mark.parametrize("driver", ["invoke", "ainvoke"])
def test_a_fallback_that_raises_fails_the_hop_with_both_reasons(driver):
    async def empty(task: WorkerTask) -> str:
        raise LookupError("cache empty")

    out = run(quotes(fallback=empty), driver=driver)
    (entry,) = out["ledger"]
    assert entry["status"] == "failed"
    assert entry["fallback"] == "error: RuntimeError: feed down"
    assert entry["error"] == (
        "error: RuntimeError: feed down; then the fallback 'empty': error: LookupError: cache empty"
    )
    assert out["status"] == "done"  # a failed hop, not a crash


def test_a_fallback_returning_a_failed_result_fails_the_hop_with_both_reasons():
    worker = quotes(fallback=lambda t: WorkerResult(status="failed", error="no cache"))
    (entry,) = run(worker)["ledger"]
    assert entry["error"] == (
        "error: RuntimeError: feed down; then the fallback '<lambda>': failed: no cache"
    )


# -- what the supervisor sees --------------------------------------------------------------


def test_the_supervisor_s_ledger_line_says_the_fallback_answered():
    model = ScriptedChatModel(
        script=[{"next": "quotes", "instructions": "quote ACME"}, {"next": "FINISH"}]
    )
    run(quotes(fallback=lambda t: "ACME at 9.9 (cached)"), BACKUP, model=model, router=None)
    human = str(model.calls[1].messages[1].content)
    assert (
        "#1 quotes [success via fallback (error: RuntimeError: feed down)] ACME at 9.9 (cached)"
        in human
    )


def test_the_fallback_s_result_goes_to_external_memory():
    store = InMemoryStore()
    app = create_supervisor([quotes(fallback=cached), BACKUP], router=routes("quotes")).compile(
        checkpointer=InMemorySaver(), store=store
    )
    config = thread()
    out = app.invoke(ask(), config)
    ref = out["workers"]["quotes"]["results"][0]
    (item,) = store.search(output_namespace(config["configurable"]["thread_id"], "quotes"))
    assert ref["ref"]["key"] == item.key
    assert item.value["result"] == {"symbol": "ACME", "price": 9.9}


# -- configuration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fallback", "error"),
    [
        ("quotes", r"Worker\.fallback: worker 'quotes' names itself"),
        ("not a name", r"Worker\.fallback: worker 'quotes' got 'not a name', which is not"),
        (42, r"Worker\.fallback: worker 'quotes' got int; give a function"),
        (ScriptedChatModel(script=[]), r"Worker\.fallback: .* got ScriptedChatModel.*Runnable"),
    ],
)
def test_a_bad_fallback_is_refused_when_the_worker_is_created(fallback, error):
    with pytest.raises((TypeError, ValueError), match=error):
        quotes(fallback=fallback)


def test_a_fallback_must_name_a_worker_of_the_supervisor():
    with pytest.raises(ValueError, match=r"falls back to 'nobody', which is not a worker"):
        create_supervisor([quotes(fallback="nobody"), BACKUP], router=routes())

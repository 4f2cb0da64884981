"""Verification at the handoff: `Worker(output_schema=...)` and `Worker(verify=...)`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from langgraph.types import RetryPolicy
from pydantic import BaseModel
from typing_extensions import TypedDict

from langgraph_supervisor_pro import SupervisorView, Worker, WorkerResult, WorkerTask
from langgraph_supervisor_pro._verification import (
    DEFAULT_CHECKER_PROMPT,
    Verdict,
    failed_verification,
    verdict_of,
)
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, routes, thread

NO_WAIT = RetryPolicy(max_attempts=1)


class Quote(BaseModel):
    symbol: str
    price: float


class QuoteDict(TypedDict):
    symbol: str
    price: float


@dataclass
class QuoteData:
    symbol: str
    price: float


QUOTE_JSON_SCHEMA = {
    "type": "object",
    "properties": {"symbol": {"type": "string"}, "price": {"type": "number"}},
    "required": ["symbol", "price"],
}


def _returning(value: Any, **kwargs: Any) -> Worker:
    calls: list[int] = []

    def work(task: WorkerTask) -> Any:
        calls.append(task.step)
        return value

    return Worker(name="quotes", description="Fetches quotes.", agent=work, retry=NO_WAIT, **kwargs)


def _run(worker: Worker, *others: Worker, router: Any = None) -> dict[str, Any]:
    app = compile_team([worker, *others], router=router or routes(worker.name))
    return app.invoke(ask("Quote ACME"), thread())


# -- output_schema --------------------------------------------------------------------------


@pytest.mark.parametrize("schema", [Quote, QuoteDict, QuoteData, QUOTE_JSON_SCHEMA])
@pytest.mark.parametrize(
    "value",
    [{"symbol": "ACME", "price": 10.5}, '{"symbol": "ACME", "price": 10.5}'],
    ids=["dict", "json-text"],
)
def test_a_result_matching_the_schema_is_stored_as_validated_data(schema, value):
    out = _run(_returning(value, output_schema=schema))
    (entry,) = out["ledger"]
    assert entry["status"] == "success"
    assert out["workers"]["quotes"]["results"][0]["result"] == {"symbol": "ACME", "price": 10.5}


@pytest.mark.parametrize("schema", [Quote, QuoteDict, QuoteData, QUOTE_JSON_SCHEMA])
@pytest.mark.parametrize(
    "value",
    [{"symbol": "ACME"}, {"symbol": "ACME", "price": "cheap"}, "ACME is at 10", {"symbol": 5}],
)
def test_a_result_off_the_schema_is_a_failed_hop_with_the_reason(schema, value):
    out = _run(_returning(value, output_schema=schema))
    (entry,) = out["ledger"]
    assert entry["status"] == "failed"
    assert entry["error"].startswith("output_schema: ")
    assert out["workers"]["quotes"]["results"][0]["result"] is None
    # Synthesis never takes it for a good result.
    assert out["messages"][-1].content != str(value)


def test_the_supervisor_sees_the_refusal_and_routes_elsewhere():
    seen: list[SupervisorView] = []

    def router(view: SupervisorView) -> str:
        seen.append(view)
        return ["quotes", "backup", "FINISH"][len(view.ledger)]

    backup = Worker(name="backup", description="Backup quotes.", agent=lambda t: "ACME at 10.4")
    out = _run(_returning({"symbol": "ACME"}, output_schema=Quote), backup, router=router)
    assert [e["status"] for e in seen[1].ledger] == ["failed"]
    assert "price: Field required" in seen[1].ledger[0]["error"]
    assert out["messages"][-1].content == "ACME at 10.4"


def test_a_failed_hop_is_not_checked():
    def broken(task: WorkerTask) -> str:
        raise RuntimeError("feed down")

    checked: list[int] = []
    worker = Worker(
        name="quotes",
        description="Quotes.",
        agent=broken,
        retry=NO_WAIT,
        output_schema=Quote,
        verify=lambda task, result: checked.append(1),
    )
    (entry,) = _run(worker)["ledger"]
    assert entry["error"] == "RuntimeError: feed down" and checked == []


@pytest.mark.parametrize(
    ("schema", "error"),
    [
        ({"type": "objekt"}, "not a valid JSON Schema"),
        ("Quote", "got str; give a pydantic model"),
        (42, "got int"),
    ],
)
def test_a_bad_schema_is_refused_when_the_worker_is_created(schema, error):
    with pytest.raises((TypeError, ValueError), match=error) as info:
        _returning("x", output_schema=schema)
    assert "Worker.output_schema: worker 'quotes'" in str(info.value)


# -- verify ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "error"),
    [
        (True, "success", None),
        (None, "success", None),
        (Verdict(passed=True), "success", None),
        (False, "failed", "verify: rejected by the verifier"),
        ("the price is stale", "failed", "verify: the price is stale"),
        (Verdict(passed=False, reason="no source"), "failed", "verify: no source"),
        ({"passed": False, "reason": "odd"}, "failed", "verify: odd"),
        (3, "failed", "verify: the verifier returned int"),
    ],
)
def test_a_verify_function_passes_or_fails_the_hop(reply, status, error):
    seen: list[tuple[str, Any]] = []

    def verify(task: WorkerTask, result: WorkerResult) -> Any:
        seen.append((task.instructions, result.result))
        return reply

    (entry,) = _run(_returning("ACME at 10", verify=verify))["ledger"]
    assert entry["status"] == status
    if error is None:
        assert entry["error"] is None
    else:
        assert entry["error"].startswith(error)
    assert seen == [("", "ACME at 10")]


def test_an_async_verify_function_runs_under_invoke_and_ainvoke():
    async def verify(task: WorkerTask, result: WorkerResult) -> str | None:
        await asyncio.sleep(0)
        return None if "10" in str(result.result) else "no price"

    app = compile_team(
        [_returning("ACME", verify=verify)],
        router=lambda view: "FINISH" if view.ledger else "quotes",
    )
    (entry,) = app.invoke(ask(), thread())["ledger"]
    assert entry["error"] == "verify: no price"
    (entry,) = asyncio.run(app.ainvoke(ask(), thread()))["ledger"]
    assert entry["error"] == "verify: no price"


def test_verify_sees_the_schema_validated_result():
    seen: list[Any] = []
    worker = _returning(
        '{"symbol": "ACME", "price": "10"}',
        output_schema=Quote,
        verify=lambda task, result: seen.append(result.result),
    )
    assert _run(worker)["ledger"][0]["status"] == "success"
    assert seen == [{"symbol": "ACME", "price": 10.0}]


def test_a_verifier_that_raises_fails_the_hop_closed():
    def verify(task: WorkerTask, result: WorkerResult) -> bool:
        raise ValueError("checker crashed")

    (entry,) = _run(_returning("ACME at 10", verify=verify))["ledger"]
    assert entry["status"] == "failed"
    assert entry["error"] == "verify: the verifier raised ValueError: checker crashed"


def test_a_chat_model_checks_the_result_with_a_structured_verdict():
    checker = ScriptedChatModel(
        script=[
            {"passed": False, "reason": "the price has no currency"},
            {"passed": True, "reason": ""},
        ]
    )
    worker = _returning("ACME at 10", verify=checker)
    app = compile_team([worker], router=routes("quotes", "quotes"))
    out = app.invoke(ask("Quote ACME in euros"), thread())
    first, second = out["ledger"]
    assert first["error"] == "verify: the price has no currency"
    assert second["status"] == "success"
    call = checker.calls[0]
    assert call.tools == ("Verdict",)
    assert call.messages[0].content == DEFAULT_CHECKER_PROMPT
    assert "Task: Quote ACME in euros" in str(call.messages[1].content)
    assert "ACME at 10" in str(call.messages[1].content)


def test_a_checker_model_that_fails_fails_the_hop_closed():
    checker = ScriptedChatModel(script=[RuntimeError("checker offline")])
    (entry,) = _run(_returning("ACME at 10", verify=checker))["ledger"]
    assert entry["error"] == "verify: the verifier raised RuntimeError: checker offline"


def test_verify_must_be_callable_or_a_chat_model():
    with pytest.raises(TypeError, match=r"Worker\.verify: worker 'quotes' got str"):
        _returning("x", verify="strict")  # type: ignore[arg-type]


def test_a_domain_can_be_verified_too():
    from langgraph_supervisor_pro import create_supervisor

    inner = create_supervisor(
        [Worker(name="pager", description="Pages.", agent=lambda t: "paged nobody")],
        router=routes("pager"),
        name="incident",
    )
    domain = Worker(
        name="incident",
        description="Incidents.",
        agent=inner,
        verify=lambda task, result: None if "on-call" in str(result.result) else "nobody paged",
    )
    (entry,) = _run(domain)["ledger"]
    assert entry["error"] == "verify: nobody paged"


# -- the helpers ---------------------------------------------------------------------------


def test_verdict_of_and_failed_verification():
    assert verdict_of(True).passed and verdict_of(None).passed
    assert verdict_of("  ").reason == "rejected by the verifier"
    assert not verdict_of({"passed": "maybe"}).passed
    failed = failed_verification("verify", "x" * 1000)
    assert failed.status == "failed" and failed.error is not None and len(failed.error) <= 340

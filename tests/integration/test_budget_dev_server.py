"""Budgets under `langgraph dev` (the server LangGraph Studio talks to).

The server runs as a real process on a free loopback port, serving
`tests/integration/_budget_server/app.py` (a planner model and an analyst, both reporting
their usage, with a price table), and is driven with `langgraph_sdk` and `RemoteGraph` as
a client would: a run past its limit halts with `budget_exceeded`, every model call's
`usage` entry carries its model, tokens and cost, and a warning under
`Budget(on_warning="review")` pauses the run as a `budget` review, which an approval
answers by raising the limit and a rejection by finishing with what was done.
Skipped when the `langgraph` CLI is not installed (`_devserver.serve`).
"""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_supervisor_pro._budget import entry_tokens, spend_of
from tests.integration._devserver import assistant_id, client, interrupts, serve

pytestmark = pytest.mark.integration

APP = Path(__file__).resolve().parent / "_budget_server"


def _load_app() -> Any:
    """The served module, loaded here under a name of its own: its limits and prices."""
    spec = importlib.util.spec_from_file_location("_lgsp_budget_server_app", APP / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


served = _load_app()

TASK = {"messages": [{"role": "user", "content": "Analyse the Q3 figures"}]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a `langgraph dev` server for a copy of the app; stopped afterwards.

    A copy: `langgraph dev` keeps its threads in the app's folder (`.langgraph_api/`).
    """
    root = tmp_path_factory.mktemp("budget-dev")
    app = root / "app"
    shutil.copytree(APP, app, ignore=shutil.ignore_patterns(".langgraph_api", "__pycache__"))
    with serve("langgraph.json", root / "server.log", app=app) as url:
        yield url


def assert_usage_carries_model_tokens_and_cost(usage: list[dict[str, Any]]) -> None:
    """One entry per model call: its role, model, reported tokens and priced cost."""
    assert usage
    for entry in usage:
        model = {"supervisor": "planner", "worker": "analyst-model"}[entry["role"]]
        assert entry["model"] == model, entry
        assert entry["estimated"] is False and entry["turn"] == 1, entry
        assert entry["input_tokens"] > 0 and entry["output_tokens"] > 0, entry
        assert entry["tokens"] == entry["input_tokens"], entry
        price = served.PRICES[model]
        cost = entry["input_tokens"] * price["input"] + entry["output_tokens"] * price["output"]
        assert entry["cost"] == pytest.approx(cost / 1_000_000, abs=1e-12), entry
        assert entry["path"] == ([] if entry["role"] == "supervisor" else ["analyst"]), entry
    steps = [entry["step"] for entry in usage]
    assert steps == sorted(steps)
    # each hop: one decision, then one call of the analyst (and the FINISH decision)
    calls = Counter((entry["step"], entry["role"]) for entry in usage)
    assert set(calls.values()) == {1}, calls
    hops = [step for step, role in calls if role == "worker"]
    assert hops == list(range(1, len(hops) + 1))
    assert [step for step, role in calls if role == "supervisor"][: len(hops)] == hops


def assert_every_hop_succeeded(values: dict[str, Any]) -> None:
    """The analyst's hops ran (the budget stops runs between hops here, never inside one)."""
    failed = [(e["step"], e["error"]) for e in values["ledger"] if e["status"] != "success"]
    assert not failed, f"hops failed on the server: {failed}"


def _budget_review(thread: dict[str, Any]) -> dict[str, Any]:
    """The one pending interrupt of a thread, checked to be a budget review."""
    assert thread["status"] == "interrupted", thread["status"]
    (pending,) = interrupts(thread)
    value = pending["value"]
    assert value["context"]["kind"] == "budget"
    (action,) = value["action_requests"]
    assert action["name"] == "budget:raise"
    assert action["args"] == {"max_tokens": 2.0 * served.REVIEW_TOKENS}
    assert "Approve to raise the limit" in action["description"]
    return pending


async def _paused_at_the_warning(sdk: Any) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
    """A new thread of `reviewed`, run until its budget warning pauses it."""
    assistant = await assistant_id(sdk, "reviewed")
    thread_id = (await sdk.threads.create())["thread_id"]
    await sdk.runs.wait(thread_id, assistant, input=TASK)
    assert_every_hop_succeeded((await sdk.threads.get_state(thread_id))["values"])
    thread = await sdk.threads.get(thread_id)
    pending = _budget_review(thread)
    state = await sdk.threads.get_state(thread_id)
    return assistant, thread_id, pending, state["values"]


def test_a_run_past_its_limit_halts_with_budget_exceeded(server: str) -> None:
    async def go() -> None:
        sdk = client(server)
        assistant = await assistant_id(sdk, "halting")
        thread_id = (await sdk.threads.create())["thread_id"]
        out = await sdk.runs.wait(thread_id, assistant, input=TASK)
        assert (await sdk.threads.get(thread_id))["status"] == "idle"
        assert_every_hop_succeeded(out)
        assert out["status"] == "halted" and out["halt_reason"] == "budget_exceeded"
        usage = out["usage"]
        assert_usage_carries_model_tokens_and_cost(usage)
        spend = spend_of(usage)
        assert spend.tokens == sum(u["input_tokens"] + u["output_tokens"] for u in usage)
        assert spend.cost == pytest.approx(sum(u["cost"] for u in usage), abs=1e-9)
        limit = served.HALT_TOKENS
        # it halted at the first decision past the limit, before the plan was done
        assert spend.tokens - entry_tokens(usage[-1]) < limit <= spend.tokens
        assert len(out["ledger"]) < served.HOPS
        assert out["halt_detail"] == (
            f"the graph's budget is spent: {spend.tokens:,} tokens of {limit:,} tokens this turn"
        )
        *warnings, event = out["budget_events"]
        assert [w["kind"] for w in warnings] in ([], ["warning"])
        assert (event["kind"], event["measure"], event["scope"]) == ("exceeded", "tokens", "turn")
        assert (event["spent"], event["limit"]) == (float(spend.tokens), float(limit))
        assert event["worker"] is None and event["path"] == [] and event["at"]
        # the answer says why it stopped, and gives what was done: the last hop's analysis
        answer = out["messages"][-1]["content"]
        assert answer.startswith(f"Stopped early (budget_exceeded): {out['halt_detail']}")
        assert answer.endswith(served.analysis(len(out["ledger"])))

    asyncio.run(go())


def test_remote_graph_reads_the_same_halt_and_spend(server: str) -> None:
    from langgraph.pregel.remote import RemoteGraph

    remote = RemoteGraph("halting", url=server)
    config: Any = {"configurable": {"thread_id": None}}

    async def new_thread() -> str:
        return str((await client(server).threads.create())["thread_id"])

    config["configurable"]["thread_id"] = asyncio.run(new_thread())
    out = remote.invoke(TASK, config)
    assert_every_hop_succeeded(out)
    assert out["halt_reason"] == "budget_exceeded"
    state = remote.get_state(config)
    assert state.next == ()
    assert state.values["usage"] == out["usage"]
    assert spend_of(state.values["usage"]).tokens == state.values["budget_events"][-1]["spent"]


def test_an_approved_budget_review_raises_the_limit_and_the_run_goes_on(server: str) -> None:
    async def go() -> None:
        sdk = client(server)
        assistant, thread_id, pending, paused = await _paused_at_the_warning(sdk)
        limit = served.REVIEW_TOKENS
        spent = spend_of(paused["usage"]).tokens
        assert served.WARN_AT * limit <= spent < limit
        # the warning is written with the decision it paused, once the review is answered
        assert not paused.get("budget_events")
        assert pending["value"]["action_requests"][0]["description"].startswith(
            f"{spent:,} tokens of {limit:,} tokens spent this turn"
        )
        hops_before = len(paused["ledger"])

        out = await sdk.runs.wait(
            thread_id,
            assistant,
            command={
                "resume": {pending["id"]: {"decisions": [{"type": "approve"}], "reviewer": "ana"}}
            },
        )
        assert (await sdk.threads.get(thread_id))["status"] == "idle"
        assert_every_hop_succeeded(out)
        assert out["status"] == "done" and out["halt_reason"] is None
        assert len(out["ledger"]) == served.HOPS > hops_before
        assert out["messages"][-1]["content"] == served.analysis(served.HOPS)
        usage = out["usage"]
        assert usage[: len(paused["usage"])] == paused["usage"]  # nothing counted twice
        assert_usage_carries_model_tokens_and_cost(usage)
        # At the last decision (FINISH) it had spent past the old limit, and not yet the
        # new limit's warning (which would have paused it again).
        last_check = spend_of([u for u in usage if u["step"] <= served.HOPS]).tokens
        assert limit < last_check < served.WARN_AT * 2 * limit
        events = [(e["kind"], e["spent"], e["limit"]) for e in out["budget_events"]]
        assert events == [
            ("warning", float(spent), float(limit)),
            ("approved", float(spent), 2.0 * limit),
        ]
        assert out["budget_events"][1]["reviewer"] == "ana"
        (record,) = out["reviews"]
        assert (record["kind"], record["decision"], record["interrupt_id"]) == (
            "budget", "approve", pending["id"]
        )  # fmt: skip

    asyncio.run(go())


def test_a_rejected_budget_review_finishes_with_what_was_done(server: str) -> None:
    async def go() -> None:
        sdk = client(server)
        assistant, thread_id, pending, paused = await _paused_at_the_warning(sdk)
        out = await sdk.runs.wait(
            thread_id,
            assistant,
            command={
                "resume": {"decisions": [{"type": "reject", "message": "enough for this quarter"}]}
            },
        )
        assert (await sdk.threads.get(thread_id))["status"] == "idle"
        assert out["status"] == "done" and out["halt_reason"] is None
        hops = len(paused["ledger"])
        assert len(out["ledger"]) == hops < served.HOPS  # no hop after the warning
        assert out["messages"][-1]["content"] == served.analysis(hops)
        assert out["usage"] == paused["usage"]  # no model call after the warning
        spent = float(spend_of(out["usage"]).tokens)
        events = [(e["kind"], e["spent"], e["limit"]) for e in out["budget_events"]]
        limit = float(served.REVIEW_TOKENS)
        assert events == [("warning", spent, limit), ("rejected", spent, limit)]
        (record,) = out["reviews"]
        assert (record["kind"], record["decision"], record["interrupt_id"]) == (
            "budget", "reject", pending["id"]
        )  # fmt: skip

    asyncio.run(go())

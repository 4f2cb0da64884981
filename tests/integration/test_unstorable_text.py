"""Text Postgres cannot store (NUL, lone surrogates) never crashes a run nor sticks a thread.

Postgres refuses `\\u0000` in JSONB and text columns, and lone surrogates anywhere (they
are not Unicode scalar values). LangGraph's Postgres saver keeps string channels
(`task`, `task_message_id`, `halt_detail`, ...) inline in the checkpoint's JSONB, and
the Postgres store keeps values as JSONB; its msgpack blobs take NUL but turn a lone
surrogate into `?`. Every case here runs on a real Postgres (never mocked): a user's
message that cannot be stored ends its turn `halted` with `invalid_input` and the thread
takes the next message; text the library writes (errors, results, summaries, halt
details, instructions, review payloads, compaction summaries) has U+FFFD in place of
what Postgres cannot store, and reads back from the database exactly as the run
returned it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.types import Command, RetryPolicy

from langgraph_supervisor_pro import (
    Compaction,
    ReviewPolicy,
    Worker,
    aopen_checkpointer,
    create_supervisor,
    open_checkpointer,
)
from langgraph_supervisor_pro.persistence._memory import output_namespace
from langgraph_supervisor_pro.persistence._stores import aopen_store, open_store
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, routes, thread

pytestmark = pytest.mark.integration

BAD = {"nul": "\x00", "surrogate": "\ud800"}
"""One character of each kind Postgres cannot store."""

NO_RETRY = RetryPolicy(max_attempts=1)


def storable_strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every string in `value` (keys too, message contents) with where it is."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, BaseMessage):
        yield from storable_strings(value.content, f"{where}.content")
        yield from storable_strings(value.additional_kwargs, f"{where}.additional_kwargs")
        if value.id is not None:
            yield f"{where}.id", value.id
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from storable_strings(key, f"{where}<key>")
            yield from storable_strings(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from storable_strings(item, f"{where}[{index}]")


def assert_storable(value: Any) -> None:
    """Every string in `value` encodes to UTF-8 and holds no NUL."""
    for where, text in storable_strings(value):
        assert "\x00" not in text, f"NUL at {where}: {text!r}"
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise AssertionError(f"lone surrogate at {where}: {text!r}") from exc


def library_written(values: Mapping[str, Any]) -> dict[str, Any]:
    """What the library writes into state: everything but the users' and agents' messages
    (the final answers, named after the supervisor, are the library's)."""
    out = {k: v for k, v in values.items() if k not in ("messages", "workers")}
    out["answers"] = [
        m for m in values.get("messages", []) if isinstance(m, AIMessage) and m.name == "supervisor"
    ]
    out["results"] = {name: slot["results"] for name, slot in values.get("workers", {}).items()}
    return out


def echo(task: Any) -> str:
    return f"done: {task.task}"


def team(*workers: Worker, **kwargs: Any) -> Any:
    return create_supervisor(list(workers), **kwargs)


def fn_worker(agent: Any = echo, name: str = "w") -> Worker:
    return Worker(name=name, description="Works.", agent=agent)


def url_of(backend: str, pg_database: str | None, tmp_path: Path) -> str:
    if backend == "postgres":
        assert pg_database is not None
        return pg_database
    return f"sqlite:///{tmp_path / 'checkpoints.db'}"


# ------------------------------------------------------------------ the user's message


@pytest.mark.parametrize("kind", list(BAD))
@pytest.mark.parametrize("field", ["content", "id"])
@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
def test_a_message_that_cannot_be_stored_ends_the_turn_and_the_thread_goes_on(
    kind: str, field: str, backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    bad = BAD[kind]
    message = (
        HumanMessage(f"Plan{bad} the launch", id="m-1")
        if field == "content"
        else HumanMessage("Plan the launch", id=f"m{bad}1")
    )
    ran: list[str] = []

    def worker(task: Any) -> str:
        ran.append(task.task)
        return f"done: {task.task}"

    pg = request.getfixturevalue("pg_database") if backend == "postgres" else None
    url = url_of(backend, pg, tmp_path)
    config = thread()
    with open_checkpointer(url) as saver:
        app = team(fn_worker(worker), router=routes("w", "FINISH", "w")).compile(checkpointer=saver)
        out = app.invoke({"messages": [message]}, config)
        assert out["status"] == "halted" and out["halt_reason"] == "invalid_input"
        codepoint = "U+0000" if kind == "nul" else "U+D800"
        position = 4 if field == "content" else 1
        what = "text" if field == "content" else "id"
        assert f"{what} holds" in out["halt_detail"]
        assert f"({codepoint}) at index {position}" in out["halt_detail"]
        assert out["messages"][-1].content.startswith("Stopped early (invalid_input): ")
        assert ran == []  # no worker saw the message
        assert_storable(library_written(out))
        # not stuck: resuming runs nothing and raises nothing
        again = app.invoke(None, config)
        assert again["status"] == "halted" and again["halt_reason"] == "invalid_input"
        # the next message is a new turn, served as usual
        nxt = app.invoke({"messages": [HumanMessage("Plan the launch", id="m-2")]}, config)
        assert nxt["status"] == "done" and nxt["turn"] == 2 and nxt["halt_reason"] is None
        assert ran == ["Plan the launch"]
        assert nxt["messages"][-1].content == "done: Plan the launch"
    with open_checkpointer(url) as saver:  # what the database holds, read back fresh
        stored = team(fn_worker(worker), router=routes()).compile(checkpointer=saver)
        values = stored.get_state(config).values
        assert values["status"] == "done" and values["turn"] == 2
        assert_storable(library_written(values))


@pytest.mark.parametrize("kind", list(BAD))
def test_langgraphs_own_write_of_the_input_takes_any_text(kind: str, pg_database: str) -> None:
    """What the intake check relies on: the input is in the checkpoint before our node runs.

    LangGraph keeps messages as msgpack (bytea): a NUL survives, a surrogate reads back
    as `?`. Were this write to fail, no node of ours could turn it into an outcome.
    """
    config = thread()
    graph = team(fn_worker(), router=routes("w"))
    message = HumanMessage(f"Plan{BAD[kind]}", id=f"m{BAD[kind]}")
    with open_checkpointer(pg_database) as saver:
        paused = graph.compile(checkpointer=saver, interrupt_before=["supervisor"])
        paused.invoke({"messages": [message]}, config)
    with open_checkpointer(pg_database) as saver:
        state = graph.compile(checkpointer=saver).get_state(config)
    assert state.next == ("supervisor",)
    (stored,) = state.values["messages"]
    expected = BAD[kind] if kind == "nul" else "?"
    assert (stored.content, stored.id) == (f"Plan{expected}", f"m{expected}")


@pytest.mark.parametrize("kind", list(BAD))
async def test_a_message_that_cannot_be_stored_ends_the_turn_async(
    kind: str, pg_database: str
) -> None:
    config = thread()
    async with aopen_checkpointer(pg_database) as saver:
        app = team(fn_worker(), router=routes("w", "FINISH", "w")).compile(checkpointer=saver)
        out = await app.ainvoke(ask(f"Plan{BAD[kind]} the launch"), config)
        assert out["status"] == "halted" and out["halt_reason"] == "invalid_input"
        again = await app.ainvoke(None, config)
        assert again["halt_reason"] == "invalid_input"
        nxt = await app.ainvoke(ask("Plan the launch"), config)
        assert nxt["status"] == "done" and nxt["messages"][-1].content == "done: Plan the launch"
        stored = (await app.aget_state(config)).values
        assert_storable(library_written(stored))


# ------------------------------------------------------------- text the library writes


def run_and_read_back(
    url: str, graph: Any, inp: Any, *, store: Any = None
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Run once (and `invoke(None)` after), then read the thread back through a new saver."""
    config = thread()
    with open_checkpointer(url) as saver:
        app = graph.compile(checkpointer=saver, store=store)
        out = app.invoke(inp, config)
        again = app.invoke(None, config)
    with open_checkpointer(url) as saver:
        values = graph.compile(checkpointer=saver, store=store).get_state(config).values
    return out, again, values


def assert_same_as_stored(out: Mapping[str, Any], stored: Mapping[str, Any]) -> None:
    """The database holds what the run returned (nothing altered on the way), all storable."""
    assert_storable(library_written(out))
    assert library_written(stored) == library_written(out)


@pytest.mark.parametrize("kind", list(BAD))
def test_a_worker_exception_text_is_stored_with_a_replacement_character(
    kind: str, pg_database: str
) -> None:
    def broken(task: Any) -> str:
        raise RuntimeError(f"bad{BAD[kind]}text")

    graph = team(fn_worker(broken), router=routes("w"))
    out, again, stored = run_and_read_back(pg_database, graph, ask())
    assert out["status"] == "done" and again["status"] == "done"
    entry = out["ledger"][0]
    assert entry["status"] == "failed" and entry["error"] == "RuntimeError: bad\ufffdtext"
    assert entry["summary"] == "failed: RuntimeError: bad\ufffdtext"
    assert_same_as_stored(out, stored)


@pytest.mark.parametrize("kind", list(BAD))
@pytest.mark.parametrize("with_store", [False, True])
def test_a_worker_result_is_stored_with_a_replacement_character(
    kind: str, with_store: bool, pg_database: str
) -> None:
    graph = team(fn_worker(lambda task: f"res{BAD[kind]}ult. More."), router=routes("w"))
    if with_store:
        with open_store(pg_database) as store:
            out, again, stored = run_and_read_back(pg_database, graph, ask(), store=store)
            assert out["ledger"][0]["status"] == "success"  # the store took the result
            namespace = output_namespace(thread_of_slot(out), "w")
            item = store.get(namespace, "t00001.s00001")
            assert item is not None and item.value["result"] == "res\ufffdult. More."
            assert_storable(item.value)
    else:
        out, again, stored = run_and_read_back(pg_database, graph, ask())
    assert out["status"] == "done" and again["status"] == "done"
    assert out["ledger"][0]["status"] == "success"
    assert out["ledger"][0]["summary"] == "res\ufffdult."
    assert out["messages"][-1].content == "res\ufffdult. More."
    slot_messages = out["workers"]["w"]["messages"]  # the function worker's, made by the node
    assert_storable(slot_messages)
    assert_same_as_stored(out, stored)


def thread_of_slot(out: Mapping[str, Any]) -> str:
    """The thread id a slot's reference names (`("lgsp", "outputs", <thread>, <worker>)`)."""
    return str(out["workers"]["w"]["results"][0]["ref"]["namespace"][2])


@pytest.mark.parametrize("kind", list(BAD))
async def test_a_worker_result_reaches_the_async_store(kind: str, pg_database: str) -> None:
    config = thread()
    graph = team(fn_worker(lambda task: f"res{BAD[kind]}ult"), router=routes("w"))
    async with aopen_checkpointer(pg_database) as saver, aopen_store(pg_database) as store:
        out = await graph.compile(checkpointer=saver, store=store).ainvoke(ask(), config)
        assert out["ledger"][0]["status"] == "success"
        assert out["messages"][-1].content == "res\ufffdult"
        item = await store.aget(
            output_namespace(config["configurable"]["thread_id"], "w"), "t00001.s00001"
        )
        assert item is not None and item.value["result"] == "res\ufffdult"


@pytest.mark.parametrize("kind", list(BAD))
def test_a_supervisor_model_error_ends_the_run_failed_not_crashed(
    kind: str, pg_database: str
) -> None:
    model = ScriptedChatModel(script=[RuntimeError(f"api{BAD[kind]}down")] * 4)
    graph = team(fn_worker(), model=model, supervisor_retry=NO_RETRY)
    out, again, stored = run_and_read_back(pg_database, graph, ask())
    assert out["status"] == "failed" and out["halt_reason"] == "supervisor_error"
    assert out["halt_detail"] == "the supervisor failed: RuntimeError: api\ufffddown"
    assert again["status"] == "failed"
    assert_same_as_stored(out, stored)


@pytest.mark.parametrize("kind", list(BAD))
def test_a_synthesizer_error_ends_the_run_failed_not_crashed(kind: str, pg_database: str) -> None:
    def synthesizer(inp: Any) -> str:
        raise RuntimeError(f"syn{BAD[kind]}thesis")

    graph = team(
        fn_worker(), router=routes("w"), synthesizer=synthesizer, supervisor_retry=NO_RETRY
    )
    out, again, stored = run_and_read_back(pg_database, graph, ask())
    assert out["status"] == "failed" and out["halt_reason"] == "synthesis_error"
    assert out["halt_detail"] == "the synthesizer failed: RuntimeError: syn\ufffdthesis"
    assert again["status"] == "failed"
    assert_same_as_stored(out, stored)


@pytest.mark.parametrize("kind", list(BAD))
def test_a_synthesizer_answer_is_stored_with_a_replacement_character(
    kind: str, pg_database: str
) -> None:
    graph = team(fn_worker(), router=routes("w"), synthesizer=lambda inp: f"ans{BAD[kind]}wer")
    out, _, stored = run_and_read_back(pg_database, graph, ask())
    assert out["status"] == "done" and out["messages"][-1].content == "ans\ufffdwer"
    assert_same_as_stored(out, stored)


@pytest.mark.parametrize("kind", list(BAD))
def test_a_routers_instructions_reach_an_agent_and_the_ledger_storable(
    kind: str, pg_database: str
) -> None:
    model = ScriptedChatModel(script=["fine"])
    worker = Worker(name="w", description="Works.", agent=create_agent(model, tools=[]))
    graph = team(worker, router=routes({"next": "w", "instructions": f"do{BAD[kind]}it"}))
    out, _, stored = run_and_read_back(pg_database, graph, ask())
    assert out["status"] == "done" and out["ledger"][0]["status"] == "success"
    assert out["ledger"][0]["instructions"] == "do\ufffdit"
    assert "Instructions for you: do\ufffdit" in str(model.calls[0].messages[-1].content)
    assert_same_as_stored(out, stored)


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


@pytest.mark.parametrize("kind", list(BAD))
def test_tool_args_reach_a_review_payload_storable(kind: str, pg_database: str) -> None:
    bad_call = AIMessage(
        "", tool_calls=[{"name": "refund", "args": {"order_id": f"A{BAD[kind]}1"}, "id": "c1"}]
    )
    model = ScriptedChatModel(script=[bad_call, "refunded"])
    worker = Worker(
        name="billing",
        description="Refunds.",
        model=model,
        tools=[refund],
        risks={"refund": "high"},
    )
    graph = team(worker, router=routes("billing"), review=ReviewPolicy(tier="supervised"))
    config = thread()
    with open_checkpointer(pg_database) as saver:
        app = graph.compile(checkpointer=saver)
        out = app.invoke(ask("Refund it"), config)
        payload = out["__interrupt__"][0].value
        assert payload["action_requests"][0]["args"] == {"order_id": "A\ufffd1"}
        assert_storable(payload)
        assert app.get_state(config).interrupts[0].value == payload  # stored as returned
        # Not stuck: the review is still pending. The resumed guard rebuilds the payload
        # from the agent's own message, which LangGraph's msgpack stored with `?` for the
        # surrogate (the agent's transcript is its own; NUL survives there).
        again = app.invoke(None, config)["__interrupt__"][0].value
        args = {"order_id": "A\ufffd1" if kind == "nul" else "A?1"}
        assert again == {
            **payload,
            "action_requests": [{**payload["action_requests"][0], "args": args}],
        }
    with open_checkpointer(pg_database) as saver:
        app = graph.compile(checkpointer=saver)
        assert app.get_state(config).interrupts[0].value == again  # stored as returned
        done = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
        assert done["status"] == "done" and done["ledger"][0]["status"] == "success"
        assert_storable(library_written(done))


@pytest.mark.parametrize("kind", list(BAD))
def test_a_compaction_summary_is_stored_with_a_replacement_character(
    kind: str, pg_database: str
) -> None:
    def summarise(call: Any) -> dict[str, Any]:
        return {
            "task": "the task",
            "done": [f"step{BAD[kind]}one"],
            "current_state": f"work{BAD[kind]}ing",
            "remaining": ["more"],
            "key_facts": [f"FACT{BAD[kind]}1"],
        }

    def long_answer(call: Any) -> str:
        return "FACT " + "word " * 300

    agent_model = ScriptedChatModel(script=[long_answer] * 10)
    worker = Worker(name="w", description="Works.", agent=create_agent(agent_model, tools=[]))
    compaction = Compaction(
        summarizer=ScriptedChatModel(script=[summarise] * 10),
        max_context_tokens=1200,
        trigger=0.5,
        keep=1,
    )
    graph = team(worker, router=routes(*["w"] * 4), max_steps=4, compaction=compaction)
    out, _, stored = run_and_read_back(pg_database, graph, ask("the task"))
    assert out["status"] == "done" and out["compactions"]
    summary = out["workers"]["w"]["messages"][0]
    assert summary.additional_kwargs["lgsp_summary"]["key_facts"] == ["FACT\ufffd1"]
    assert "Current state: work\ufffding" in str(summary.content)
    assert_storable(summary)
    assert_same_as_stored(out, stored)
    assert stored["workers"]["w"]["messages"][0] == summary

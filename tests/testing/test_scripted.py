"""Tests for `langgraph_supervisor_pro.testing.ScriptedChatModel`."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import pickle
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, Literal

import pytest
from langchain_core.caches import InMemoryCache
from langchain_core.globals import set_llm_cache
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict

from langgraph_supervisor_pro.errors import ScriptExhaustedError
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall, ScriptedChatModel

# --------------------------------------------------------------------------- fixtures


class Route(BaseModel):
    """Where the supervisor sends the conversation next."""

    next: Literal["researcher", "writer", "FINISH"]
    reason: str = ""


class Aliased(BaseModel):
    """Schema whose field has an alias."""

    model_config = ConfigDict(populate_by_name=True)

    next_worker: str = Field(alias="nextWorker")


class RouteDict(TypedDict):
    """A TypedDict schema (parsed without validation)."""

    next: str


@tool
def search(query: str) -> str:
    """Search the web."""
    return query


@tool
def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return city


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _tool_call_message(*names: str) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[
            {"name": name, "args": {"query": name}, "id": f"id_{name}", "type": "tool_call"}
            for name in names
        ],
    )


def _join(chunks: Sequence[AIMessage]) -> AIMessageChunk:
    assert chunks
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    typed = [c for c in chunks if isinstance(c, AIMessageChunk)]
    total = typed[0]
    for chunk in typed[1:]:
        total = total + chunk
    return total


@pytest.fixture
def llm_cache() -> Iterator[InMemoryCache]:
    cache = InMemoryCache()
    set_llm_cache(cache)
    try:
        yield cache
    finally:
        set_llm_cache(None)


# --------------------------------------------------------------------------- basics


def test_text_replies_in_order() -> None:
    model = ScriptedChatModel(script=["first", "second"])
    first = model.invoke("hi")
    second = model.invoke([HumanMessage("again")])
    assert isinstance(first, AIMessage)
    assert (first.content, second.content) == ("first", "second")
    assert first.tool_calls == []
    assert model.remaining == 0
    model.assert_complete()


async def test_ainvoke_text_reply() -> None:
    model = ScriptedChatModel(script=["async hello"])
    reply = await model.ainvoke("hi")
    assert reply.content == "async hello"
    assert len(model.calls) == 1


def test_metadata_properties() -> None:
    model = ScriptedChatModel(script=["x"], name="supervisor", profile={"max_input_tokens": 1000})
    assert model._llm_type == "scripted-chat-model"
    assert model._identifying_params["name"] == "supervisor"
    assert model.profile == {"max_input_tokens": 1000}
    assert model.name == "supervisor"
    assert model.cache is False


def test_aimessage_step_with_tool_calls_is_returned_as_is() -> None:
    scripted = _tool_call_message("search")
    model = ScriptedChatModel(script=[scripted, scripted])
    reply = model.invoke("find")
    assert isinstance(reply, AIMessage)
    assert reply.tool_calls == scripted.tool_calls
    assert reply.content == ""
    # LangChain stamps ids on the returned message: the script must not be mutated.
    assert reply is not scripted
    assert scripted.id is None
    again = model.invoke("find")
    assert again.tool_calls == scripted.tool_calls


def test_aimessage_chunk_step_is_converted() -> None:
    model = ScriptedChatModel(script=[AIMessageChunk(content="chunky")])
    reply = model.invoke("x")
    assert type(reply) is AIMessage
    assert reply.content == "chunky"


def test_callable_step_sees_prior_messages() -> None:
    seen: list[ScriptedCall] = []

    def reply(call: ScriptedCall) -> str:
        seen.append(call)
        last = call.messages[-1]
        assert isinstance(last, ToolMessage)
        return f"{len(call.messages)} messages; tool said {last.content}"

    model = ScriptedChatModel(script=[_tool_call_message("search"), reply])
    history: list[BaseMessage] = [SystemMessage("be brief"), HumanMessage("look it up")]
    first = model.invoke(history)
    history += [first, ToolMessage("42", tool_call_id="id_search")]
    second = model.invoke(history)
    assert second.content == "4 messages; tool said 42"
    assert seen[0] is model.calls[1]
    assert [type(m).__name__ for m in seen[0].messages] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
    ]


def test_callable_step_can_return_any_reply_kind() -> None:
    def structured(call: ScriptedCall) -> dict[str, Any]:
        return {"next": "writer"} if call.tools == ("Route",) else {"bad": True}

    def fail(_: ScriptedCall) -> BaseException:
        return ConnectionError("flaky")

    model = ScriptedChatModel(script=[structured, fail, lambda call: _tool_call_message("search")])
    assert model.with_structured_output(Route).invoke("x") == Route(next="writer")
    with pytest.raises(ConnectionError, match="flaky"):
        model.invoke("x")
    assert model.invoke("x").tool_calls[0]["name"] == "search"


def test_callable_returning_invalid_reply_raises_type_error() -> None:
    model = ScriptedChatModel(script=[lambda call: None, lambda call: lambda c: "x"])
    with pytest.raises(TypeError, match=r"step 0: the callable returned .*NoneType"):
        model.invoke("x")
    with pytest.raises(TypeError, match=r"step 1: the callable returned"):
        model.invoke("x")


def test_async_callable_is_rejected_without_warning() -> None:
    async def reply(call: ScriptedCall) -> str:
        return "never"

    model = ScriptedChatModel(script=[reply])
    with pytest.raises(TypeError, match="async callables are not supported"):
        model.invoke("x")


def test_exception_step_is_raised_and_consumed() -> None:
    boom = TimeoutError("provider timed out")
    model = ScriptedChatModel(script=[boom, "recovered"])
    with pytest.raises(TimeoutError) as info:
        model.invoke("x")
    assert info.value is boom
    assert model.invoke("x").content == "recovered"
    assert len(model.calls) == 2
    model.assert_complete()


async def test_exception_step_async() -> None:
    model = ScriptedChatModel(script=[ValueError("nope")])
    with pytest.raises(ValueError, match="nope"):
        await model.ainvoke("x")


# ----------------------------------------------------------------- exhaustion / completeness


def test_exhaustion_error_message() -> None:
    model = ScriptedChatModel(name="worker", script=["a", "b"])
    model.invoke("one")
    model.invoke("two")
    with pytest.raises(ScriptExhaustedError) as info:
        model.invoke([HumanMessage("first"), HumanMessage("the very last question")])
    err = info.value
    assert isinstance(err, RuntimeError)
    text = str(err)
    assert "'worker'" in text
    assert "had 2 steps" in text
    assert "the very last question" in text
    assert err.script_length == 2
    assert err.call_index == 2
    assert isinstance(err.last_message, HumanMessage)
    # The failed call is still recorded (it is a call the model received).
    assert [c.index for c in model.calls] == [0, 1, 2]
    assert model.remaining == 0


def test_exhaustion_error_is_picklable() -> None:
    model = ScriptedChatModel(script=[])
    with pytest.raises(ScriptExhaustedError) as info:
        model.invoke("x")
    clone = pickle.loads(pickle.dumps(info.value))
    assert isinstance(clone, ScriptExhaustedError)
    assert str(clone) == str(info.value)
    assert clone.script_length == 0
    assert "had 0 steps" in str(clone)


async def test_exhaustion_async_and_singular_wording() -> None:
    model = ScriptedChatModel(script=["only"])
    await model.ainvoke("x")
    with pytest.raises(ScriptExhaustedError, match=r"had 1 step and"):
        await model.ainvoke("y")


def test_assert_complete_lists_unused_steps() -> None:
    model = ScriptedChatModel(
        name="sup",
        script=[
            "used",
            "unused text",
            _tool_call_message("search"),
            {"next": "writer"},
            KeyError("k"),
            lambda call: "x",
        ],
    )
    model.invoke("x")
    assert model.remaining == 5
    with pytest.raises(AssertionError) as info:
        model.assert_complete()
    text = str(info.value)
    assert "5 of 6 script steps were not used" in text
    assert "[1] 'unused text'" in text
    assert "[2] AIMessage(" in text and "search" in text
    assert "[3] structured output {'next': 'writer'}" in text
    assert "[4] raise KeyError('k')" in text
    assert "[5] callable" in text
    assert "[0]" not in text


# --------------------------------------------------------------------------- bind_tools


def test_bind_tools_records_tools_choice_and_kwargs() -> None:
    model = ScriptedChatModel(script=["ok", "plain"])
    bound = model.bind_tools([search, get_weather], tool_choice="any", parallel_tool_calls=False)
    bound.invoke("weather?", stop=["\n"])
    model.invoke("no tools")
    with_tools, plain = model.calls
    assert with_tools.tools == ("search", "get_weather")
    assert with_tools.tool_choice == "any"
    assert dict(with_tools.kwargs) == {"parallel_tool_calls": False}
    assert with_tools.stop == ("\n",)
    assert plain.tools == ()
    assert plain.tool_choice is None
    assert dict(plain.kwargs) == {}
    assert plain.stop is None


def test_bind_tools_accepts_functions_schemas_and_dicts() -> None:
    def lookup(term: str) -> str:
        """Look a term up."""
        return term

    oai = {
        "type": "function",
        "function": {"name": "raw_tool", "description": "d", "parameters": {"type": "object"}},
    }
    model = ScriptedChatModel(script=["ok"])
    model.bind_tools([lookup, Route, oai]).invoke("x")
    assert model.calls[0].tools == ("lookup", "Route", "raw_tool")


def test_bind_tools_rejects_unknown_named_tool_choice() -> None:
    model = ScriptedChatModel(script=[])
    with pytest.raises(ValueError, match="does not name a bound tool"):
        model.bind_tools([search], tool_choice="get_weather")
    with pytest.raises(ValueError, match="does not name a bound tool"):
        model.bind_tools([search], tool_choice={"type": "function", "function": {"name": "x"}})


def test_structured_step_uses_named_tool_choice_when_several_tools_are_bound() -> None:
    model = ScriptedChatModel(script=[{"city": "Paris"}])
    reply = model.bind_tools([search, get_weather], tool_choice="get_weather").invoke("x")
    assert reply.tool_calls == [
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_0", "type": "tool_call"}
    ]


def test_structured_step_ambiguous_or_without_tools_raises() -> None:
    model = ScriptedChatModel(script=[{"q": 1}, {"q": 2}])
    with pytest.raises(ValueError, match=r"step 0 .*no tool is bound"):
        model.invoke("x")
    with pytest.raises(ValueError, match=r"step 1 .*2 tools are bound"):
        model.bind_tools([search, get_weather], tool_choice="any").invoke("x")


def test_structured_step_with_bind_tools_produces_tool_call() -> None:
    model = ScriptedChatModel(script=[{"query": "cats"}])
    reply = model.bind_tools([search]).invoke("x")
    assert reply.tool_calls == [
        {"name": "search", "args": {"query": "cats"}, "id": "call_0", "type": "tool_call"}
    ]


# -------------------------------------------------------------------- structured output


def test_structured_output_valid_dict_and_model_steps() -> None:
    model = ScriptedChatModel(
        script=[
            {"next": "researcher", "reason": "needs facts"},
            Route(next="FINISH"),
        ]
    )
    structured = model.with_structured_output(Route)
    assert structured.invoke("go") == Route(next="researcher", reason="needs facts")
    assert structured.invoke("go") == Route(next="FINISH")
    call = model.calls[0]
    assert call.tools == ("Route",)
    assert call.tool_choice == "any"
    # ls_structured_output_format is a tracing-only kwarg: LangChain strips it.
    assert "ls_structured_output_format" not in call.kwargs


def test_structured_output_model_step_dumps_by_alias() -> None:
    model = ScriptedChatModel(script=[Aliased(next_worker="writer")])
    assert model.with_structured_output(Aliased).invoke("x") == Aliased(next_worker="writer")


def test_structured_output_invalid_dict_raises_validation_error() -> None:
    model = ScriptedChatModel(script=[{"next": "nobody"}])
    with pytest.raises(ValidationError, match="next"):
        model.with_structured_output(Route).invoke("go")


def test_structured_output_invalid_dict_include_raw() -> None:
    model = ScriptedChatModel(script=[{"next": "nobody"}])
    result = model.with_structured_output(Route, include_raw=True).invoke("go")
    assert isinstance(result, dict)
    assert result["parsed"] is None
    assert isinstance(result["parsing_error"], ValidationError)
    raw = result["raw"]
    assert isinstance(raw, AIMessage)
    assert raw.tool_calls == [
        {"name": "Route", "args": {"next": "nobody"}, "id": "call_0", "type": "tool_call"}
    ]


def test_structured_output_valid_include_raw() -> None:
    model = ScriptedChatModel(script=[{"next": "writer"}])
    result = model.with_structured_output(Route, include_raw=True).invoke("go")
    assert isinstance(result, dict)
    assert result["parsed"] == Route(next="writer")
    assert result["parsing_error"] is None


def test_structured_output_free_text_reply() -> None:
    model = ScriptedChatModel(script=["I would rather chat.", "Still chatting."])
    assert model.with_structured_output(Route).invoke("go") is None
    result = model.with_structured_output(Route, include_raw=True).invoke("go")
    assert isinstance(result, dict)
    assert result["parsed"] is None
    assert result["parsing_error"] is None
    assert isinstance(result["raw"], AIMessage)
    assert result["raw"].content == "Still chatting."
    assert result["raw"].tool_calls == []


def test_structured_output_typeddict_schema_is_not_validated() -> None:
    model = ScriptedChatModel(script=[{"next": 123}])
    assert model.with_structured_output(RouteDict).invoke("x") == {"next": 123}
    assert model.calls[0].tools == ("RouteDict",)


async def test_structured_output_async_and_streamed() -> None:
    model = ScriptedChatModel(script=[{"next": "writer"}, {"next": "FINISH"}])
    structured = model.with_structured_output(Route)
    assert await structured.ainvoke("x") == Route(next="writer")
    streamed = [part async for part in structured.astream("x")]
    assert streamed[-1] == Route(next="FINISH")


# --------------------------------------------------------------------------- streaming


def test_stream_text_yields_several_chunks_matching_invoke() -> None:
    text = "The quick  brown fox\njumps over the lazy dog."
    streamed_model = ScriptedChatModel(script=[text])
    chunks = list(streamed_model.stream("x"))
    assert len(chunks) > 1
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert [c.content for c in chunks][:3] == ["The ", "quick  ", "brown "]
    joined = _join(chunks)
    invoked = ScriptedChatModel(script=[text]).invoke("x")
    assert joined.content == invoked.content == text
    assert joined.tool_calls == invoked.tool_calls == []
    assert len(streamed_model.calls) == 1


def test_stream_chunk_chars() -> None:
    model = ScriptedChatModel(script=["abcdefghij"], stream_chunk_chars=4)
    chunks = list(model.stream("x"))
    assert [c.content for c in chunks] == ["abcd", "efgh", "ij"]


def test_stream_tool_call_reply_as_tool_call_chunks() -> None:
    scripted = _tool_call_message("search", "get_weather")
    chunks = list(ScriptedChatModel(script=[scripted]).stream("x"))
    assert len(chunks) == 1
    chunk = chunks[0]
    assert [tc["name"] for tc in chunk.tool_call_chunks] == ["search", "get_weather"]
    assert chunk.tool_call_chunks[0]["args"] == '{"query": "search"}'
    invoked = ScriptedChatModel(script=[scripted]).invoke("x")
    joined = _join(chunks)
    assert joined.tool_calls == invoked.tool_calls == scripted.tool_calls


def test_stream_text_and_tool_calls_together() -> None:
    scripted = AIMessage(
        content="Let me search for that.",
        tool_calls=[{"name": "search", "args": {"query": "q"}, "id": "c1", "type": "tool_call"}],
        usage_metadata={"input_tokens": 3, "output_tokens": 5, "total_tokens": 8},
    )
    chunks = list(ScriptedChatModel(script=[scripted]).stream("x"))
    assert len(chunks) == 5
    assert all(not c.tool_call_chunks for c in chunks[:-1])
    joined = _join(chunks)
    assert joined.content == scripted.content
    assert joined.tool_calls == scripted.tool_calls
    assert joined.usage_metadata == scripted.usage_metadata


def test_stream_structured_step() -> None:
    model = ScriptedChatModel(script=[{"next": "writer"}])
    chunks = list(model.bind_tools([Route], tool_choice="any").stream("x"))
    joined = _join(chunks)
    assert joined.tool_calls == [
        {"name": "Route", "args": {"next": "writer"}, "id": "call_0", "type": "tool_call"}
    ]


def test_stream_exception_step() -> None:
    model = ScriptedChatModel(script=[RuntimeError("mid-stream")])
    with pytest.raises(RuntimeError, match="mid-stream"):
        list(model.stream("x"))


async def test_astream_text_and_tool_calls() -> None:
    model = ScriptedChatModel(script=["one two three", _tool_call_message("search")])
    text_chunks = [c async for c in model.astream("x")]
    assert [c.content for c in text_chunks] == ["one ", "two ", "three"]
    tool_chunks = [c async for c in model.astream("x")]
    assert len(tool_chunks) == 1
    assert _join(tool_chunks).tool_calls == _tool_call_message("search").tool_calls
    assert len(model.calls) == 2


def _graph(model: ScriptedChatModel) -> Any:
    def call_model(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("agent", call_model)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile()


def test_langgraph_messages_stream_mode_receives_token_chunks() -> None:
    model = ScriptedChatModel(script=["alpha beta gamma delta"])
    graph = _graph(model)
    events = list(graph.stream({"messages": [HumanMessage("hi")]}, stream_mode="messages"))
    chunks = [msg for msg, meta in events if isinstance(msg, AIMessageChunk)]
    assert len(chunks) == 4
    assert "".join(str(c.content) for c in chunks) == "alpha beta gamma delta"
    assert all(meta["langgraph_node"] == "agent" for _, meta in events)
    final = graph.get_graph()  # graph still usable
    assert final is not None
    model.assert_complete()


async def test_langgraph_messages_stream_mode_async() -> None:
    model = ScriptedChatModel(script=["x y z"])

    async def call_model(state: State) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("agent", call_model)
    builder.add_edge(START, "agent")
    graph = builder.compile()
    chunks = [
        msg
        async for msg, _ in graph.astream(
            {"messages": [HumanMessage("hi")]}, stream_mode="messages"
        )
        if isinstance(msg, AIMessageChunk)
    ]
    assert [c.content for c in chunks] == ["x ", "y ", "z"]


def test_langgraph_invoke_final_state_matches_script() -> None:
    model = ScriptedChatModel(script=["done here"])
    out = _graph(model).invoke({"messages": [HumanMessage("hi")]})
    assert out["messages"][-1].content == "done here"
    assert model.calls[0].messages[0].content == "hi"


# ------------------------------------------------------------------------ snapshots


def test_snapshots_are_frozen_and_deep_copied() -> None:
    model = ScriptedChatModel(script=["ok"])
    message = HumanMessage(content="original", additional_kwargs={"meta": {"k": [1]}})
    options: dict[str, Any] = {"nested": {"a": 1}}
    model.bind(tools=[], extra=options).invoke([message])
    call = model.calls[0]

    message.content = "mutated"
    message.additional_kwargs["meta"]["k"].append(2)
    options["nested"]["a"] = 2

    assert call.messages[0].content == "original"
    assert call.messages[0].additional_kwargs == {"meta": {"k": [1]}}
    assert call.messages[0] is not message
    assert call.kwargs["extra"] == {"nested": {"a": 1}}
    assert isinstance(call.messages, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.index = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        call.kwargs["new"] = 1  # type: ignore[index]
    # `calls` is a tuple snapshot, not a live list.
    calls = model.calls
    assert isinstance(calls, tuple)
    with pytest.raises(ScriptExhaustedError):
        model.invoke("again")
    assert len(calls) == 1
    assert len(model.calls) == 2


def test_script_is_stored_as_tuple_and_frozen() -> None:
    steps = ["a", "b"]
    model = ScriptedChatModel(script=steps)
    steps.append("c")
    assert model.script == ("a", "b")
    with pytest.raises(ValidationError):
        model.script = ["x"]  # type: ignore[misc]


def test_deepcopy_gets_an_independent_cursor() -> None:
    model = ScriptedChatModel(script=["a", "b"])
    model.invoke("x")
    clone = copy.deepcopy(model)
    assert clone.invoke("x").content == "b"
    assert model.invoke("x").content == "b"
    assert clone.remaining == model.remaining == 0


def test_global_llm_cache_does_not_skip_steps(llm_cache: InMemoryCache) -> None:
    model = ScriptedChatModel(script=["first", "second"])
    assert model.invoke("same").content == "first"
    assert model.invoke("same").content == "second"
    model.assert_complete()


# ---------------------------------------------------------------------- construction


@pytest.mark.parametrize(
    ("script", "match"),
    [
        ("just text", r"sequence of steps .*got str; wrap a single step in a list"),
        ({"next": "x"}, r"got dict; wrap a single step"),
        (iter(["a"]), r"sequence of steps .*got list_iterator"),
        (None, r"sequence of steps .*got NoneType"),
        (["ok", 42], r"step 1 has unsupported type int .*expected a str, an AIMessage"),
        (["ok", "ok", HumanMessage("x")], r"step 2 is a HumanMessage; only AIMessage"),
        ([ValueError], r"step 0 is the class ValueError; pass an instance"),
        ([Route], r"step 0 is the class Route; pass an instance"),
        ([b"bytes"], r"step 0 has unsupported type bytes"),
    ],
)
def test_construction_errors(script: Any, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        ScriptedChatModel(script=script)


def test_construction_requires_script_and_valid_chunk_size() -> None:
    with pytest.raises(ValidationError, match="script"):
        ScriptedChatModel()  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="stream_chunk_chars"):
        ScriptedChatModel(script=["x"], stream_chunk_chars=0)


def test_all_step_kinds_are_accepted() -> None:
    model = ScriptedChatModel(
        script=(
            "text",
            AIMessage("msg"),
            {"a": 1},
            Route(next="FINISH"),
            KeyboardInterrupt(),
            lambda call: "fn",
        )
    )
    assert model.remaining == 6


# ------------------------------------------------------------------------ concurrency


def test_thread_safety_each_step_used_exactly_once() -> None:
    n = 50
    model = ScriptedChatModel(script=[f"reply-{i}" for i in range(n)])
    barrier = threading.Barrier(10)

    def call(i: int) -> str:
        if i < 10:
            barrier.wait(timeout=10)
        return str(model.invoke(f"question {i}").content)

    with ThreadPoolExecutor(max_workers=10) as pool:
        replies = list(pool.map(call, range(n)))

    assert sorted(replies) == sorted(f"reply-{i}" for i in range(n))
    assert len(set(replies)) == n
    assert model.remaining == 0
    assert [c.index for c in model.calls] == list(range(n))
    model.assert_complete()
    with pytest.raises(ScriptExhaustedError):
        model.invoke("one too many")


def test_thread_safety_with_streaming_and_callables() -> None:
    n = 40
    lock = threading.Lock()
    seen: list[int] = []

    def step(call: ScriptedCall) -> str:
        with lock:
            seen.append(call.index)
        return f"a b {call.index}"

    model = ScriptedChatModel(script=[step] * n)

    def run(_: int) -> str:
        return "".join(str(c.content) for c in model.stream("x"))

    with ThreadPoolExecutor(max_workers=8) as pool:
        outputs = list(pool.map(run, range(n)))
    assert sorted(seen) == list(range(n))
    assert sorted(outputs) == sorted(f"a b {i}" for i in range(n))


async def test_asyncio_concurrency() -> None:
    n = 30
    model = ScriptedChatModel(script=[f"r{i}" for i in range(n)])
    replies = await asyncio.gather(*(model.ainvoke(f"q{i}") for i in range(n)))
    assert sorted(str(r.content) for r in replies) == sorted(f"r{i}" for i in range(n))
    model.assert_complete()


def test_batch_consumes_one_step_per_input() -> None:
    model = ScriptedChatModel(script=["a", "b", "c"])
    replies = model.batch(["1", "2", "3"])
    assert sorted(str(r.content) for r in replies) == ["a", "b", "c"]
    model.assert_complete()


# ----------------------------------------------------------------------- FunctionChatModel


def _echo_count(call: ScriptedCall) -> str:
    return f"{len(call.messages)} seen"


def test_function_model_never_runs_out_and_keeps_nothing():
    model = FunctionChatModel(reply=_echo_count)
    for _ in range(20_000):
        assert model.invoke(["a", "b"]).content == "2 seen"
    assert model.calls == ()
    model.assert_complete()  # no script: nothing can be left over


def test_function_model_records_calls_when_asked():
    model = FunctionChatModel(reply=_echo_count, record=True)
    model.invoke("x")
    model.invoke(["x", "y"])
    assert [(c.index, len(c.messages)) for c in model.calls] == [(0, 1), (1, 2)]


def test_function_model_reply_decides_from_what_it_is_shown_not_from_order():
    def reply(call: ScriptedCall) -> str | AIMessage:
        if isinstance(call.messages[-1], ToolMessage):
            return f"The tool said {call.messages[-1].text}."
        return AIMessage(
            content="", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "t1"}]
        )

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    from langchain.agents import create_agent

    agent = create_agent(FunctionChatModel(reply=reply), tools=[add])
    for _ in range(3):  # the same agent serves any number of runs
        out = agent.invoke({"messages": [("user", "1 + 2?")]})
        assert out["messages"][-1].content == "The tool said 3."


def test_function_model_streams_and_gives_structured_output():
    class Route(BaseModel):
        next: str

    model = FunctionChatModel(reply=lambda call: {"next": "billing"})
    assert model.with_structured_output(Route).invoke("refund") == Route(next="billing")
    text = FunctionChatModel(reply=lambda call: "two words")
    assert [c.content for c in text.stream("x")] == ["two ", "words"]


async def test_function_model_works_async():
    model = FunctionChatModel(reply=_echo_count)
    assert (await model.ainvoke(["a"])).content == "1 seen"
    assert [c.content async for c in model.astream(["a", "b"])] == ["2 ", "seen"]


def test_function_model_refuses_a_reply_that_is_not_a_function():
    with pytest.raises(TypeError, match=r"reply must be a function \(ScriptedCall\) -> reply"):
        FunctionChatModel(reply="hello")  # type: ignore[arg-type]


def test_function_model_raises_what_reply_returns_as_an_exception():
    model = FunctionChatModel(reply=lambda call: ValueError("provider down"))
    with pytest.raises(ValueError, match="provider down"):
        model.invoke("x")


def test_function_model_refuses_a_bad_or_async_reply_value():
    model = FunctionChatModel(reply=lambda call: None, name="m")  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match=r"FunctionChatModel 'm' step 0: the callable returned"):
        model.invoke("x")

    async def later(call: ScriptedCall) -> str:
        return "x"

    slow = FunctionChatModel(reply=later)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="returned an awaitable"):
        slow.invoke("x")

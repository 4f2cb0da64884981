"""Deterministic, scripted chat models for testing LangGraph / LangChain code.

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/testing/
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeAlias, cast

from langchain_core.caches import BaseCache
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LangSmithParams, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ToolCall,
    ToolCallChunk,
    UsageMetadata,
    message_chunk_to_message,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field, PrivateAttr, field_validator

from langgraph_supervisor_pro.errors import ScriptExhaustedError

_MAX_REPR = 200
_TOOL_CHOICE_KEYWORDS = frozenset({"auto", "any", "required", "none"})
_WORD_RE = re.compile(r"\s*\S+\s*|\s+")


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """Immutable record of one call made to a `ScriptedChatModel` (a callable step gets it).

    Taken when the call arrives, from deep copies, so later changes to the input don't show.

    Attributes:
        index: Zero-based position of the call: the index of the step it consumed
            (`>= len(script)` once the script ran out).
        messages: The messages the model received (deep copies).
        tools: Names of the tools bound to the model for this call, in order.
        tool_choice: The bound `tool_choice` (`None` when none was bound).
        kwargs: Read-only mapping of every other keyword the model was called with (e.g.
            `parallel_tool_calls` from `bind_tools`, or anything passed to `bind`).
        stop: Stop sequences passed to the call, if any.

    Example:
        ```python
        model = ScriptedChatModel(script=["hi"])
        model.bind_tools([search], parallel_tool_calls=False).invoke("hello")
        call = model.calls[0]
        assert call.messages[-1].content == "hello"
        assert call.tools == ("search",)
        assert call.kwargs["parallel_tool_calls"] is False
        ```
    """

    index: int
    messages: tuple[BaseMessage, ...]
    tools: tuple[str, ...] = ()
    tool_choice: Any = None
    kwargs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    stop: tuple[str, ...] | None = None


ScriptReply: TypeAlias = str | AIMessage | Mapping[str, Any] | BaseModel | BaseException
"""A concrete reply: text, an `AIMessage`, a structured payload or an exception."""

ScriptStep: TypeAlias = ScriptReply | Callable[[ScriptedCall], ScriptReply]
"""One script step: a `ScriptReply`, or a callable mapping a `ScriptedCall` to one."""


class _ScriptState:
    """Mutable, lock-protected cursor and call log shared by a model and its copies."""

    __slots__ = ("calls", "lock", "position")

    def __init__(self, position: int = 0, calls: list[ScriptedCall] | None = None) -> None:
        self.lock = threading.Lock()
        self.position = position
        self.calls: list[ScriptedCall] = calls if calls is not None else []

    def __deepcopy__(self, memo: dict[int, Any]) -> _ScriptState:
        # Locks cannot be copied: a deep copy of the model gets an independent cursor.
        with self.lock:
            return _ScriptState(self.position, list(self.calls))


class ScriptedChatModel(BaseChatModel):
    """A deterministic chat model that replies from a fixed script.

    Each call (`invoke`, `ainvoke`, `stream`, `batch`, a LangGraph node's, ...) consumes
    the next step of `script`, and is recorded in `calls`. A step is one of:

    * `str`: the reply text;
    * `AIMessage`: returned as is (a copy), e.g. to script tool calls;
    * `dict` or pydantic `BaseModel` instance: a structured-output reply, an `AIMessage`
      with one tool call (id `call_<step index>`) to the bound tool (the one
      `with_structured_output` binds, or the one `tool_choice` names) whose `args` are
      the mapping or `model_dump(mode="json", by_alias=True)`; it is *not* validated,
      so invalid payloads can be scripted;
    * a `BaseException` instance: raised when the step is reached;
    * a callable `(ScriptedCall) -> reply` returning any of the above (not a coroutine).

    Past the script's end it raises `ScriptExhaustedError`; `assert_complete()` checks every
    step was used. Taking a step is thread-safe; the async methods run on the event loop.
    Streaming yields word-sized chunks (or `stream_chunk_chars` pieces), tool calls last.

    Example:
        ```python
        from pydantic import BaseModel
        from langgraph_supervisor_pro.testing import ScriptedChatModel


        class Route(BaseModel):
            next: str


        model = ScriptedChatModel(
            name="supervisor",
            script=[
                {"next": "researcher"},  # structured output
                "All done.",  # free text
            ],
        )
        assert model.with_structured_output(Route).invoke("go") == Route(next="researcher")
        assert model.invoke("status?").content == "All done."
        assert model.calls[0].tools == ("Route",)
        model.assert_complete()
        ```
    """

    script: Sequence[ScriptStep] = Field(frozen=True, exclude=True)
    """The steps, consumed one per call. Stored as a tuple."""

    stream_chunk_chars: int | None = Field(default=None, gt=0)
    """If set, streamed text arrives in pieces of at most this many characters;
    by default it streams word by word."""

    cache: BaseCache | bool | None = Field(default=False, exclude=True)
    """LLM cache setting; `False` by default so every call consumes a step."""

    report_usage: bool = False
    """Report `usage_metadata` on replies that script none, as a provider would: input and
    output tokens counted with LangChain's `count_tokens_approximately`."""

    _state: _ScriptState = PrivateAttr(default_factory=_ScriptState)

    @field_validator("script", mode="plain")
    @classmethod
    def _validate_script(cls, value: Any) -> tuple[ScriptStep, ...]:
        if isinstance(value, str | bytes | bytearray) or not isinstance(value, Sequence):
            hint = (
                "; wrap a single step in a list, e.g. script=[step]"
                if isinstance(value, str | bytes | bytearray | Mapping | BaseModel)
                else ""
            )
            raise TypeError(
                "ScriptedChatModel script must be a sequence of steps (e.g. a list), "
                f"got {type(value).__name__}{hint}"
            )
        steps = tuple(value)
        for index, step in enumerate(steps):
            problem = _step_problem(step, allow_callable=True)
            if problem is not None:
                raise TypeError(f"ScriptedChatModel script step {index} {problem}")
        return steps

    @property
    def calls(self) -> tuple[ScriptedCall, ...]:
        """Snapshots of every call made so far, in the order the calls arrived.

        Example:
            ```python
            model = ScriptedChatModel(script=["a", "b"])
            model.invoke("x")
            assert [c.index for c in model.calls] == [0]
            ```
        """
        with self._state.lock:
            return tuple(self._state.calls)

    @property
    def remaining(self) -> int:
        """Number of script steps not yet consumed.

        Example:
            ```python
            model = ScriptedChatModel(script=["a", "b"])
            model.invoke("x")
            assert model.remaining == 1
            ```
        """
        with self._state.lock:
            return max(0, len(self.script) - self._state.position)

    def assert_complete(self) -> None:
        """Assert that every step of the script has been consumed.

        Raises:
            AssertionError: If some steps were never used; the message lists them.

        Example:
            ```python
            model = ScriptedChatModel(script=["a", "b"])
            model.invoke("x")
            model.assert_complete()  # AssertionError: 1 of 2 steps ... [1] 'b'
            ```
        """
        with self._state.lock:
            position = self._state.position
        unused = list(enumerate(self.script))[position:]
        if unused:
            listing = "\n".join(f"  [{i}] {_describe_step(step)}" for i, step in unused)
            raise AssertionError(
                f"{self._label()}: {len(unused)} of {len(self.script)} script steps "
                f"were not used:\n{listing}"
            )

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | dict[str, Any] | bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools (converted with `convert_to_openai_tool`) and a tool choice to the model.

        Nothing is enforced at call time: the tools, `tool_choice` (`"auto"`, `"any"`,
        `"required"`, `"none"`, a bound tool's name, an OpenAI-style dict or a bool) and
        any extra keyword arguments are recorded on each `ScriptedCall`.

        Raises:
            ValueError: If `tool_choice` names a tool that is not bound.

        Example:
            ```python
            model = ScriptedChatModel(script=["ok"])
            model.bind_tools([get_weather], tool_choice="any").invoke("weather?")
            assert model.calls[0].tools == ("get_weather",)
            assert model.calls[0].tool_choice == "any"
            ```
        """
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        named = _named_tool_choice(tool_choice)
        if named is not None:
            names = [_tool_name(tool) for tool in formatted]
            if named not in names:
                msg = f"tool_choice {tool_choice!r} does not name a bound tool; bound: {names}"
                raise ValueError(msg)
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "script_length": len(self.script),
            "stream_chunk_chars": self.stream_chunk_chars,
        }

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages, stop, kwargs))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages, stop, kwargs))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        # The base class reports each chunk to the callbacks (on_llm_new_token).
        message = self._reply(messages, stop, kwargs)
        for chunk in self._to_chunks(message):
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        message = self._reply(messages, stop, kwargs)
        for chunk in self._to_chunks(message):
            yield ChatGenerationChunk(message=chunk)
            await asyncio.sleep(0)  # let other tasks interleave, like a real stream

    def _label(self) -> str:
        return f"ScriptedChatModel {self.name!r}" if self.name else "ScriptedChatModel"

    def _reply(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> AIMessage:
        """Record the call, take the next step and turn it into an `AIMessage`."""
        tools = [_as_openai_tool(t) for t in kwargs.pop("tools", None) or []]
        tool_choice = kwargs.pop("tool_choice", None)
        # Copy outside the lock; only the cursor update and the log append are locked.
        snapshot = (
            tuple(copy.deepcopy(m) for m in messages),
            tuple(_tool_name(t) for t in tools),
            _copy_or_keep(tool_choice),
            MappingProxyType(_copy_or_keep(kwargs)),
            tuple(stop) if stop is not None else None,
        )
        state = self._state
        with state.lock:
            index = state.position
            state.position += 1
            call = ScriptedCall(index, *snapshot)
            if self._records():
                state.calls.append(call)

        step = self._step(index, messages)
        reply: object = step
        if _is_callable_step(step):
            reply = step(call)  # type: ignore[operator]
            if inspect.isawaitable(reply):
                close = getattr(reply, "close", None)
                if callable(close):
                    close()  # avoid a "coroutine was never awaited" warning
                raise TypeError(
                    f"{self._label()} step {index}: the callable returned an "
                    "awaitable; async callables are not supported, return the reply "
                    "directly"
                )
            problem = _step_problem(reply, allow_callable=False)
            if problem is not None:
                raise TypeError(f"{self._label()} step {index}: the callable returned {problem}")
        message = self._to_message(reply, index, tools, tool_choice)
        if self.report_usage and message.usage_metadata is None:
            inputs = count_tokens_approximately(messages)
            outputs = count_tokens_approximately([message])
            message.usage_metadata = UsageMetadata(
                input_tokens=inputs, output_tokens=outputs, total_tokens=inputs + outputs
            )
        return message

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        """LangSmith's model metadata; the model's `name` is its model name."""
        params = super()._get_ls_params(stop=stop, **kwargs)
        if self.name:
            params["ls_model_name"] = self.name
        return params

    def _records(self) -> bool:
        """Whether each call is kept in `calls` (always, for a script)."""
        return True

    def _step(self, index: int, messages: list[BaseMessage]) -> ScriptStep:
        """The step call `index` takes; `ScriptExhaustedError` past the script's end."""
        if index >= len(self.script):
            last = messages[-1] if messages else None
            shown = _describe_message(last) if last is not None else "(no messages)"
            n = len(self.script)
            raise ScriptExhaustedError(
                f"{self._label()} script exhausted: the script had {n} "
                f"step{'' if n == 1 else 's'} and all were used, but the model was "
                f"called again (call index {index}). Last message received: {shown}",
                script_length=n,
                call_index=index,
                last_message=last,
            )
        return self.script[index]

    def _to_message(
        self,
        reply: object,
        index: int,
        tools: list[dict[str, Any]],
        tool_choice: object,
    ) -> AIMessage:
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, str):
            return AIMessage(content=reply)
        if isinstance(reply, AIMessage):
            if isinstance(reply, AIMessageChunk):
                converted = message_chunk_to_message(reply)
                assert isinstance(converted, AIMessage)
                return converted
            # Copy: LangChain sets ids / metadata on the returned message in place.
            return reply.model_copy(deep=True)
        if isinstance(reply, BaseModel):
            args: dict[str, Any] = reply.model_dump(mode="json", by_alias=True)
        else:  # a mapping: validation excludes anything else
            args = copy.deepcopy(dict(cast(Mapping[str, Any], reply)))
        names = [_tool_name(t) for t in tools]
        named = names[0] if len(names) == 1 else _named_tool_choice(tool_choice)
        if named is None or named not in names:
            problem = (
                f"{len(names)} tools are bound ({names}) and tool_choice does not name one; "
                "script an AIMessage with explicit tool_calls instead"
                if names
                else "no tool is bound; call the model through with_structured_output(...) or "
                "bind_tools(...), or script an AIMessage with explicit tool_calls"
            )
            raise ValueError(
                f"{self._label()} script step {index} is a structured-output reply "
                f"(dict / BaseModel) but {problem}"
            )
        tool_call = ToolCall(name=named, args=args, id=f"call_{index}", type="tool_call")
        return AIMessage(content="", tool_calls=[tool_call])

    def _to_chunks(self, message: AIMessage) -> list[AIMessageChunk]:
        content, size = message.content, self.stream_chunk_chars
        pieces: list[str | list[str | dict[str, Any]]]
        if not isinstance(content, str):
            pieces = [copy.deepcopy(content)]
        elif size is not None:
            pieces = [content[i : i + size] for i in range(0, len(content), size)] or [""]
        else:
            pieces = _WORD_RE.findall(content) or [""]
        calls: list[tuple[str | None, str | None, str | None]]
        calls = [(tc["name"], self._args_json(tc), tc["id"]) for tc in message.tool_calls]
        calls += [(tc["name"], tc["args"], tc["id"]) for tc in message.invalid_tool_calls]
        tool_call_chunks = [
            ToolCallChunk(name=name, args=args, id=id_, index=position, type="tool_call_chunk")
            for position, (name, args, id_) in enumerate(calls)
        ]
        chunks = [AIMessageChunk(content=piece, id=message.id) for piece in pieces[:-1]]
        chunks.append(
            AIMessageChunk(
                content=pieces[-1],
                id=message.id,
                name=message.name,
                additional_kwargs=copy.deepcopy(message.additional_kwargs),
                response_metadata=copy.deepcopy(message.response_metadata),
                usage_metadata=copy.deepcopy(message.usage_metadata),
                tool_call_chunks=tool_call_chunks,
                chunk_position="last",
            )
        )
        return chunks

    def _args_json(self, tool_call: ToolCall) -> str:
        try:
            return json.dumps(tool_call["args"])
        except TypeError as exc:
            raise TypeError(
                f"{self._label()}: cannot stream tool call {tool_call['name']!r}: its args "
                f"are not JSON-serialisable ({exc})"
            ) from exc


class FunctionChatModel(ScriptedChatModel):
    """A chat model whose every reply is computed by a function of the call: no script.

    For offline models that serve any number of runs (a template's under `langgraph dev`):
    it never runs out, and calls are not recorded unless `record=True`. Everything else
    (reply forms, `bind_tools`, `with_structured_output`, streaming) is `ScriptedChatModel`'s.

    Example:
        >>> from langgraph_supervisor_pro.testing import FunctionChatModel
        >>> model = FunctionChatModel(reply=lambda call: f"{len(call.messages)} seen")
        >>> model.invoke(["hello", "again"]).content
        '2 seen'
        >>> model.calls
        ()
    """

    script: Sequence[ScriptStep] = Field(default=(), frozen=True, exclude=True)
    """Unused: every call is `reply`'s."""

    reply: Callable[[ScriptedCall], ScriptReply] = Field(exclude=True)
    """Decides each reply from the call (not from how many calls came before)."""

    record: bool = False
    """Keep every call in `calls` (for tests; a long-lived server should not)."""

    @field_validator("reply", mode="plain")
    @classmethod
    def _validate_reply(cls, value: Any) -> Callable[[ScriptedCall], ScriptReply]:
        if not _is_callable_step(value):
            raise TypeError(
                "FunctionChatModel reply must be a function (ScriptedCall) -> reply, "
                f"got {type(value).__name__}"
            )
        return value  # type: ignore[no-any-return]

    def _label(self) -> str:
        return f"FunctionChatModel {self.name!r}" if self.name else "FunctionChatModel"

    def _records(self) -> bool:
        return self.record

    def _step(self, index: int, messages: list[BaseMessage]) -> ScriptStep:
        return self.reply


def _is_callable_step(step: object) -> bool:
    return (
        callable(step)
        and not isinstance(step, type)
        and not isinstance(step, str | AIMessage | Mapping | BaseModel | BaseException)
    )


def _step_problem(step: object, *, allow_callable: bool) -> str | None:
    """Return why `step` is not a valid step/reply, or `None` if it is valid."""
    allowed = "a str, an AIMessage, a dict, a pydantic BaseModel instance, a BaseException instance"
    if allow_callable:
        allowed += " or a callable taking a ScriptedCall"
    # Other messages are BaseModels too, but a HumanMessage is never a sensible reply.
    if isinstance(step, BaseMessage) and not isinstance(step, AIMessage):
        return f"is a {type(step).__name__}; only AIMessage replies are allowed ({allowed})"
    if isinstance(step, str | AIMessage | Mapping | BaseModel | BaseException):
        return None
    if isinstance(step, type):
        return f"is the class {step.__qualname__}; pass an instance instead (expected {allowed})"
    if allow_callable and _is_callable_step(step):
        return None
    return f"has unsupported type {type(step).__name__} ({_short(repr(step))}); expected {allowed}"


def _named_tool_choice(tool_choice: object) -> str | None:
    """Return the tool name a `tool_choice` forces, if it names one."""
    if isinstance(tool_choice, str):
        return None if tool_choice in _TOOL_CHOICE_KEYWORDS else tool_choice
    if isinstance(tool_choice, Mapping):
        function = tool_choice.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return str(function["name"])
        if isinstance(tool_choice.get("name"), str):
            return str(tool_choice["name"])
    return None


def _tool_name(tool: Mapping[str, Any]) -> str:
    function = tool.get("function")
    if isinstance(function, Mapping) and "name" in function:
        return str(function["name"])
    return str(tool.get("name") or tool.get("type") or "<unnamed tool>")


def _as_openai_tool(tool: Any) -> dict[str, Any]:
    """Normalise a tool passed via `bind(tools=...)`; `bind_tools` already did this."""
    try:
        return convert_to_openai_tool(tool)
    except Exception:
        return dict(tool) if isinstance(tool, Mapping) else {"name": repr(tool)}


def _copy_or_keep(value: Any) -> Any:
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def _short(text: str) -> str:
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


def _describe_message(message: BaseMessage) -> str:
    parts = [f"content={_short(repr(message.content))}"]
    tool_calls = getattr(message, "tool_calls", None)
    if tool_calls:
        parts.append(f"tool_calls={[tc['name'] for tc in tool_calls]}")
    return f"{type(message).__name__}({', '.join(parts)})"


def _describe_step(step: object) -> str:
    if isinstance(step, str):
        return _short(repr(step))
    if isinstance(step, BaseMessage):
        return _describe_message(step)
    if isinstance(step, BaseException):
        return f"raise {_short(repr(step))}"
    if isinstance(step, Mapping | BaseModel):
        return (
            f"structured output {_short(repr(dict(step) if isinstance(step, Mapping) else step))}"
        )
    name = getattr(step, "__qualname__", None) or type(step).__name__
    return f"callable {name}"

"""Worker specs, and the node that runs one worker hop inside its own namespace.

A worker node reads only what its `WorkerTask` needs (the task, the route's
instructions, its own slot's messages), runs the worker's agent, turns whatever
comes back into a `WorkerResult`, and writes only its own slot plus one ledger
entry. Exceptions, time-outs and garbage become a `failed` result (after the
retry policy has had its turn), never a crash of the graph.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import merge_configs
from langchain_core.tools import BaseTool
from langgraph.errors import NodeError, ParentCommand
from langgraph.types import Command, RetryPolicy
from pydantic import BaseModel, ValidationError

from langgraph_supervisor_pro._aio import run_sync
from langgraph_supervisor_pro._node import GraphNode
from langgraph_supervisor_pro._text import message_text, one_line, truncate
from langgraph_supervisor_pro.contracts import (
    FINISH,
    WorkerResult,
    WorkerTask,
)
from langgraph_supervisor_pro.state import LedgerEntry, RouteState, SupervisorState

__all__ = ["Worker", "WorkerAgent", "WorkerTimeoutError", "default_worker_retry"]

WorkerAgent: TypeAlias = (
    Runnable[Any, Any] | Callable[[WorkerTask], Any] | Callable[[WorkerTask], Awaitable[Any]]
)
"""A compiled graph / Runnable taking `{"messages": [...]}`, or a sync or async function
taking a `WorkerTask`."""

_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
_DESCRIPTION_MAX_CHARS = 300
_ERROR_MAX_CHARS = 500


class WorkerTimeoutError(Exception):
    """A worker hop ran longer than its `Worker.timeout`.

    Not a subclass of the built-in `TimeoutError` (an `OSError`), so LangGraph's
    default retry predicate treats it as transient and retries it.

    Example:
        >>> WorkerTimeoutError("researcher", 5.0).timeout
        5.0
    """

    def __init__(self, worker: str, timeout: float) -> None:
        super().__init__(f"worker {worker!r} exceeded its timeout of {timeout:g}s")
        self.worker = worker
        self.timeout = timeout


_LANGGRAPH_RETRY_ON = RetryPolicy().retry_on


def _is_transient(exc: Exception) -> bool:
    if isinstance(exc, WorkerTimeoutError):
        return True
    retry_on = _LANGGRAPH_RETRY_ON
    if callable(retry_on) and not isinstance(retry_on, type):
        return bool(retry_on(exc))
    return False  # pragma: no cover - LangGraph's default is a predicate


def default_worker_retry() -> RetryPolicy:
    """The retry policy workers get by default: 3 attempts, exponential backoff.

    Time-outs and LangGraph's transient errors (connection errors, HTTP 5xx) are
    retried; programming errors (`ValueError`, `TypeError`, ...) are not.

    Returns:
        A `RetryPolicy` with `initial_interval=0.5`, `backoff_factor=2.0`, jitter.

    Example:
        >>> default_worker_retry().max_attempts
        3
    """
    return RetryPolicy(
        max_attempts=3, initial_interval=0.5, backoff_factor=2.0, retry_on=_is_transient
    )


@dataclass(frozen=True, kw_only=True)
class Worker:
    """A worker the supervisor can route to.

    Example:
        >>> def research(task: WorkerTask) -> str:
        ...     return f"Findings about {task.task}"
        >>> Worker(name="researcher", description="Finds facts and sources.",
        ...        agent=research, timeout=30, max_visits=4).name
        'researcher'
    """

    name: str
    """Identifier-like (letters, digits, `_`, `-`; starts with a letter), unique, not FINISH."""
    description: str
    """One sentence the supervisor sees in its catalogue."""
    agent: WorkerAgent
    """A compiled LangGraph graph (e.g. from `create_agent`) or any Runnable taking
    `{"messages": [...]}`, or a plain sync or async function taking a `WorkerTask`."""
    tools: tuple[str, ...] | None = None
    """The worker's tool allowlist (names, or tools whose names are taken)."""
    timeout: float | None = None
    """Seconds one attempt may take; past it the attempt fails with `WorkerTimeoutError`."""
    retry: RetryPolicy = field(default_factory=default_worker_retry)
    """LangGraph retry policy for transient errors (see `default_worker_retry`)."""
    max_visits: int | None = None
    """How many hops this worker may take per run before the run halts."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.fullmatch(self.name):
            raise ValueError(
                f"Worker.name: {self.name!r} is not a valid worker name; use 1-64 letters, "
                "digits, '_' or '-', starting with a letter (e.g. 'researcher')"
            )
        if self.name.upper() == FINISH:
            raise ValueError(
                f"Worker.name: {self.name!r} is reserved for ending the run; pick another name"
            )
        description = " ".join(str(self.description).split())
        if not description:
            raise ValueError(
                f"Worker.description: worker {self.name!r} needs a one-sentence description "
                "(the supervisor routes on it)"
            )
        if len(description) > _DESCRIPTION_MAX_CHARS:
            raise ValueError(
                f"Worker.description: worker {self.name!r} has a {len(description)}-character "
                f"description; keep it to one sentence of at most {_DESCRIPTION_MAX_CHARS} "
                "characters (the supervisor reads it at every decision)"
            )
        object.__setattr__(self, "description", description)
        _agent_kind(self.name, self.agent)  # raises TypeError for unsupported agents
        if self.tools is not None:
            object.__setattr__(self, "tools", _tool_names(self.name, self.tools))
        if self.timeout is not None and (
            isinstance(self.timeout, bool)
            or not isinstance(self.timeout, int | float)
            or self.timeout <= 0
        ):
            raise ValueError(
                f"Worker.timeout: worker {self.name!r} got {self.timeout!r}; give a number of "
                "seconds > 0, or None for no timeout"
            )
        if not isinstance(self.retry, RetryPolicy):
            raise TypeError(
                f"Worker.retry: worker {self.name!r} got {type(self.retry).__name__}; give a "
                "langgraph.types.RetryPolicy"
            )
        if self.max_visits is not None and (
            isinstance(self.max_visits, bool)
            or not isinstance(self.max_visits, int)
            or self.max_visits < 1
        ):
            raise ValueError(
                f"Worker.max_visits: worker {self.name!r} got {self.max_visits!r}; give an "
                "integer >= 1, or None for no per-worker limit"
            )


def _tool_names(worker: str, tools: Sequence[Any]) -> tuple[str, ...]:
    if isinstance(tools, str):
        raise TypeError(
            f"Worker.tools: worker {worker!r} got a string; give a list of tool names or tools"
        )
    names: list[str] = []
    for tool in tools:
        if isinstance(tool, str):
            names.append(tool)
        elif isinstance(tool, BaseTool):
            names.append(tool.name)
        elif callable(tool) and hasattr(tool, "__name__"):
            names.append(tool.__name__)
        else:
            raise TypeError(
                f"Worker.tools: worker {worker!r} got {tool!r}; give tool names, "
                "BaseTool instances or functions"
            )
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"Worker.tools: worker {worker!r} lists {duplicates} more than once")
    return tuple(names)


def _agent_kind(worker: str, agent: Any) -> str:
    if isinstance(agent, Runnable):
        return "runnable"
    if callable(agent):
        return "async" if _is_async_callable(agent) else "function"
    raise TypeError(
        f"Worker.agent: worker {worker!r} got {type(agent).__name__}, which is not supported; "
        "give a compiled LangGraph graph or Runnable taking {'messages': [...]}, or a sync or "
        "async function taking a WorkerTask"
    )


def _is_async_callable(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    )


# --------------------------------------------------------------------------- the node


@dataclass(frozen=True)
class _Hop:
    """Everything a worker node needs for one hop, read from state."""

    task: WorkerTask
    route: RouteState
    turn: int


class WorkerNode:
    """Runs one worker hop; `invoke` and `ainvoke` share one implementation of the parts.

    Built by `create_supervisor`; not public API.
    """

    def __init__(self, worker: Worker, *, supervisor: str) -> None:
        self.worker = worker
        self.supervisor = supervisor
        kind = _agent_kind(worker.name, worker.agent)
        self._takes_messages = kind == "runnable"
        self._is_async = kind == "async"
        self._runnable: Runnable[Any, Any] = (
            worker.agent
            if isinstance(worker.agent, Runnable)
            else RunnableLambda(worker.agent, name=f"{worker.name}.agent")
        )

    def runnable(self) -> GraphNode[SupervisorState, dict[str, Any]]:
        """The node as a Runnable with native sync and async bodies."""
        return GraphNode(self.worker.name, self.invoke, self.ainvoke)

    # -- reading the hop --------------------------------------------------------------

    def _hop(self, state: SupervisorState) -> _Hop:
        route = state.get("route")
        if not route or route["next"] != self.worker.name:
            raise RuntimeError(
                f"worker {self.worker.name!r} ran without a route addressed to it "
                f"(route={route!r}); worker nodes are only reached from the supervisor"
            )
        slot = (state.get("workers") or {}).get(self.worker.name)
        task = WorkerTask(
            worker=self.worker.name,
            step=route["step"],
            task=state.get("task", ""),
            instructions=route["instructions"],
            messages=list(slot["messages"]) if slot else [],
        )
        return _Hop(task=task, route=route, turn=state.get("turn", 1))

    def _payload(self, hop: _Hop, config: RunnableConfig) -> tuple[Any, list[BaseMessage]]:
        # The prompt's id is derived from the task's namespace (which embeds LangGraph's
        # task id), so a hop re-run after a crash or an interrupt sends the same message
        # a checkpointed sub-agent already holds, and it is not stored twice.
        namespace = str(config.get("configurable", {}).get("checkpoint_ns", ""))
        prompt_id = (
            str(uuid.uuid5(uuid.NAMESPACE_URL, f"lgsp:{namespace}:prompt"))
            if namespace
            else str(uuid.uuid4())
        )
        prompt = HumanMessage(content=hop.task.prompt(), id=prompt_id)
        if self._takes_messages:
            return {"messages": [*hop.task.messages, prompt]}, [prompt]
        return hop.task, [prompt]

    def _config(self, config: RunnableConfig, hop: _Hop) -> RunnableConfig:
        return merge_configs(
            config,
            {
                "metadata": {
                    "lgsp_worker": self.worker.name,
                    "lgsp_step": hop.route["step"],
                    "lgsp_turn": hop.turn,
                    "lgsp_instructions": hop.route["instructions"],
                },
                "tags": [f"lgsp:worker:{self.worker.name}"],
            },
        )

    # -- running -----------------------------------------------------------------------

    def invoke(self, state: SupervisorState, config: RunnableConfig) -> dict[str, Any]:
        """Run the hop synchronously."""
        hop = self._hop(state)
        payload, sent = self._payload(hop, config)
        child = self._config(config, hop)
        if self._is_async:
            call: Callable[[], Any] = lambda: run_sync(  # noqa: E731
                lambda: self._runnable.ainvoke(payload, child)
            )
        else:
            call = lambda: self._runnable.invoke(payload, child)  # noqa: E731
        try:
            output = self._call_with_timeout(call)
        except ParentCommand as exc:
            output = _namespace_violation(self.worker.name, exc)
        return self._update(hop, sent, output)

    async def ainvoke(self, state: SupervisorState, config: RunnableConfig) -> dict[str, Any]:
        """Run the hop natively on the event loop (sync agents go to the executor)."""
        hop = self._hop(state)
        payload, sent = self._payload(hop, config)
        child = self._config(config, hop)
        call = self._runnable.ainvoke(payload, child)
        timeout = self.worker.timeout
        try:
            if timeout is None:
                output = await call
            else:
                try:
                    output = await asyncio.wait_for(call, timeout)
                except TimeoutError as exc:
                    raise WorkerTimeoutError(self.worker.name, timeout) from exc
        except ParentCommand as exc:
            output = _namespace_violation(self.worker.name, exc)
        return self._update(hop, sent, output)

    def _call_with_timeout(self, call: Callable[[], Any]) -> Any:
        timeout = self.worker.timeout
        if timeout is None:
            return call()
        # Sync Python cannot be cancelled in-process: the attempt runs in a thread
        # that carries this context (callbacks, stream writer), and is abandoned
        # when it overruns. Async runs cancel the worker for real.
        ctx = contextvars.copy_context()
        pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"lgsp-{self.worker.name}"
        )
        try:
            future = pool.submit(ctx.run, call)
            try:
                return future.result(timeout=timeout)
            except concurrent.futures.TimeoutError as exc:
                raise WorkerTimeoutError(self.worker.name, timeout) from exc
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    # -- writing the hop ---------------------------------------------------------------

    def _update(self, hop: _Hop, sent: list[BaseMessage], output: Any) -> dict[str, Any]:
        # The agent echoes back its own history: none of it is new output.
        given = [*hop.task.messages, *sent]
        result, produced = coerce_worker_output(output, worker=self.worker.name, sent=given)
        if not self._takes_messages and not produced:
            produced = [
                AIMessage(
                    content=result.result_text() or result.summary,
                    name=self.worker.name,
                    id=str(uuid.uuid4()),
                )
            ]
        return hop_update(self.worker.name, hop.route, hop.turn, [*sent, *produced], result)

    def on_error(self, state: SupervisorState, error: NodeError) -> Command[str]:
        """LangGraph error handler: after retries, record a `failed` hop and go back."""
        exc = error.error
        text = truncate(f"{type(exc).__name__}: {exc}", _ERROR_MAX_CHARS)
        route = state.get("route") or RouteState(
            next=self.worker.name,
            instructions="",
            step=state.get("step", 0),
            decided_by="model",
        )
        slot = (state.get("workers") or {}).get(self.worker.name)
        task = WorkerTask(
            worker=self.worker.name,
            step=max(route["step"], 1),
            task=state.get("task", ""),
            instructions=route["instructions"],
            messages=list(slot["messages"]) if slot else [],
        )
        prompt = HumanMessage(content=task.prompt(), id=str(uuid.uuid4()))
        result = WorkerResult(status="failed", error=text)
        update = hop_update(self.worker.name, route, state.get("turn", 1), [prompt], result)
        return Command(goto=self.supervisor, update=update)


def _namespace_violation(worker: str, exc: ParentCommand) -> WorkerResult:
    """A worker tried to write the supervisor's state (`Command(graph=Command.PARENT)`)."""
    goto = getattr(exc.args[0], "goto", None) if exc.args else None
    return WorkerResult(
        status="failed",
        error=(
            f"worker {worker!r} tried to update the supervisor's state or route to {goto!r} "
            "with Command(graph=Command.PARENT); workers only write their own slot, so the "
            "command was refused. Return a result instead and let the supervisor route."
        ),
    )


def hop_update(
    worker: str,
    route: RouteState,
    turn: int,
    messages: Sequence[BaseMessage],
    result: WorkerResult,
) -> dict[str, Any]:
    """The state update for one finished hop: the worker's slot, one ledger line, no route."""
    entry = LedgerEntry(
        turn=turn,
        step=route["step"],
        worker=worker,
        instructions=one_line(route["instructions"], 200),
        decided_by=route["decided_by"],
        status=result.status,
        summary=result.summary,
        error=result.error,
    )
    return {
        "workers": {worker: {"messages": list(messages), "results": [result.model_dump()]}},
        "ledger": [entry],
        "route": None,
    }


def coerce_worker_output(
    output: Any, *, worker: str, sent: Sequence[BaseMessage] = ()
) -> tuple[WorkerResult, list[BaseMessage]]:
    """Turn whatever a worker returned into a valid `WorkerResult` and its new messages.

    Accepted: a `WorkerResult`; a `str`; an AI message or a list of messages; an
    agent state dict with `messages` (and `structured_response`, as `create_agent`
    returns); a dict with a `status` key (validated as a `WorkerResult`); any other
    JSON-serialisable dict; a pydantic model. Anything else becomes `failed`.

    Args:
        output: What the agent returned.
        worker: The worker's name (for error messages).
        sent: The messages the worker was given, which are not new output.

    Returns:
        The result, and the messages the worker produced during the hop.
    """
    sent_ids = {m.id for m in sent if m.id}
    try:
        if isinstance(output, WorkerResult):
            return output, []
        if isinstance(output, str):
            return WorkerResult(status="success", result=output), []
        if isinstance(output, BaseMessage):
            return _from_messages([output], None), [output]
        if isinstance(output, list) and output and all(isinstance(m, BaseMessage) for m in output):
            new = [m for m in output if m.id not in sent_ids or m.id is None]
            return _from_messages(new, None), new
        if isinstance(output, Mapping):
            if "messages" in output and isinstance(output["messages"], list):
                new = [
                    m
                    for m in output["messages"]
                    if isinstance(m, BaseMessage) and (m.id is None or m.id not in sent_ids)
                ]
                return _from_messages(new, output.get("structured_response")), new
            if "status" in output:
                return WorkerResult.model_validate(dict(output)), []
            return WorkerResult(status="success", result=dict(output)), []
        if isinstance(output, BaseModel):
            return WorkerResult(status="success", result=output.model_dump(mode="json")), []
    except ValidationError as exc:
        return WorkerResult(
            status="failed",
            error=truncate(
                f"worker {worker!r} returned an invalid result: {exc}", _ERROR_MAX_CHARS
            ),
        ), []
    return WorkerResult(
        status="failed",
        error=(
            f"worker {worker!r} returned {type(output).__name__}, which is not a result; "
            "return a WorkerResult, str, dict, pydantic model or messages"
        ),
    ), []


def _from_messages(messages: Sequence[BaseMessage], structured: Any) -> WorkerResult:
    if structured is not None:
        value = (
            structured.model_dump(mode="json")
            if isinstance(structured, BaseModel)
            else (structured)
        )
        return WorkerResult(status="success", result=value)
    for message in reversed(messages):
        if isinstance(message, AIMessage) and not message.tool_calls:
            return WorkerResult(status="success", result=message_text(message))
    return WorkerResult(
        status="failed",
        error="the worker produced no final AI message (it ended on a tool call or said nothing)",
    )

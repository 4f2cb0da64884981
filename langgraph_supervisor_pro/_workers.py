"""Worker specs: who a worker is, what runs it, and the limits it runs under.

The node that runs a hop is `_graph/worker_node.py`.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/workers/
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.graph import StateGraph
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro._breakers import Breaker
from langgraph_supervisor_pro._budget import Budget
from langgraph_supervisor_pro._contracts import FINISH, WorkerTask
from langgraph_supervisor_pro._internal.checks import (
    check_retry_policy,
    check_seconds,
    check_type,
    is_count,
)
from langgraph_supervisor_pro._internal.tools import tool_name
from langgraph_supervisor_pro._verification import OutputSchema, SchemaCheck, Verifier
from langgraph_supervisor_pro.compaction._compactor import Compaction
from langgraph_supervisor_pro.errors import WorkerTimeoutError
from langgraph_supervisor_pro.review._risks import RISK_LEVELS, Risk

WorkerAgent: TypeAlias = (
    Runnable[Any, Any] | Callable[[WorkerTask], Any] | Callable[[WorkerTask], Awaitable[Any]]
)
"""A compiled graph or Runnable taking `{"messages": [...]}`, or a function of a `WorkerTask`."""

WorkerFallback: TypeAlias = Callable[[WorkerTask], Any] | Callable[[WorkerTask], Awaitable[Any]]
"""A deterministic fallback: a sync or async function of the hop's `WorkerTask` returning
anything a worker may return."""

_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
_DESCRIPTION_MAX_CHARS = 300
_LANGGRAPH_RETRY_ON = RetryPolicy().retry_on


def _is_transient(exc: Exception) -> bool:
    if isinstance(exc, WorkerTimeoutError):
        return True
    retry_on = _LANGGRAPH_RETRY_ON
    if callable(retry_on) and not isinstance(retry_on, type):
        return bool(retry_on(exc))
    return False  # pragma: no cover - LangGraph's default is a predicate


def default_worker_retry() -> RetryPolicy:
    """The retry policy workers get by default: 3 attempts, backoff from 0.5 s doubling.

    Time-outs and LangGraph's transient errors (connection errors, HTTP 5xx) are
    retried; programming errors (`ValueError`, `TypeError`, ...) are not.

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
    agent: WorkerAgent | StateGraph[Any, Any, Any, Any] | None = None
    """A LangGraph graph (another supervisor: a domain), a Runnable taking `{"messages": [...]}`,
    or a sync or async function of a `WorkerTask`. Give either `agent` or `model`."""
    model: BaseChatModel | None = None
    """A chat model: the worker becomes a `create_agent` agent over `tools`, with a `ToolGuard`."""
    prompt: str | None = None
    """The system prompt of the agent built from `model`."""
    tools: tuple[BaseTool | Callable[..., Any] | str, ...] | None = None
    """The worker's tool allowlist: tools (or functions), or tool names for an `agent`."""
    risks: Mapping[str, Risk] = field(default_factory=dict)
    """Risk levels of this worker's tools by name (`low`, `medium`, `high`)."""
    timeout: float | None = None
    """Seconds one attempt may take; past it the attempt fails with `WorkerTimeoutError`."""
    retry: RetryPolicy = field(default_factory=default_worker_retry)
    """LangGraph retry policy for transient errors (see `default_worker_retry`)."""
    max_visits: int | None = None
    """How many hops this worker may take per run before the run halts."""
    reads: tuple[str, ...] = ()
    """Workers whose latest full output this worker is given (`WorkerTask.reads`)."""
    compaction: Compaction | None = None
    """How this worker's history is compacted (default: the supervisor's `compaction`)."""
    output_schema: OutputSchema | None = None
    """The shape a `success` result must have: a pydantic model, a TypedDict, a dataclass or
    a JSON Schema dict; a result that does not match is a `failed` hop."""
    verify: Verifier | None = None
    """A check of every `success` result: a function of `(WorkerTask, WorkerResult)` (sync or
    async) or a chat model answering a `Verdict`; a refused result is a `failed` hop."""
    fallback: WorkerFallback | str | None = None
    """What answers the hop when it would end `failed` or the breaker is open: a function of
    the hop's `WorkerTask`, or the name of another worker of the same supervisor."""
    breaker: Breaker | None = None
    """A circuit breaker: after `failures` failed hops within `window` seconds, the worker
    is out of rotation for `cooldown` seconds, then one probe hop decides."""
    budget: Budget | None = None
    """This worker's own limit, stricter than the supervisor's `budget` (no `prices`: the
    supervisor's price the calls); when spent, the worker is unavailable for the rest of
    the budget's scope."""

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            raise ValueError(
                f"Worker.name: {name!r} is not a valid worker name; use 1-64 letters, "
                "digits, '_' or '-', starting with a letter (e.g. 'researcher')"
            )
        if name.upper() == FINISH:
            raise ValueError(
                f"Worker.name: {name!r} is reserved for ending the run; pick another name"
            )
        who = f"worker {name!r}"
        description = " ".join(str(self.description).split())
        if not description:
            raise ValueError(
                f"Worker.description: {who} needs a one-sentence description "
                "(the supervisor routes on it)"
            )
        if len(description) > _DESCRIPTION_MAX_CHARS:
            raise ValueError(
                f"Worker.description: {who} has a {len(description)}-character "
                f"description; keep it to one sentence of at most {_DESCRIPTION_MAX_CHARS} "
                "characters (the supervisor reads it at every decision)"
            )
        object.__setattr__(self, "description", description)
        if (self.agent is None) == (self.model is None):
            raise ValueError(
                f"Worker.agent: {who} needs exactly one of `agent` (a graph, "
                "Runnable or function) or `model` (a chat model to build a guarded agent from)"
            )
        if isinstance(self.agent, StateGraph):
            # Compiled as a stateful subgraph: its state lives in the parent's thread under
            # the worker's namespace and persists from one visit (turn) to the next.
            object.__setattr__(self, "agent", self.agent.compile(checkpointer=True))
        if self.agent is not None:
            agent_kind(name, self.agent)  # raises TypeError for unsupported agents
        else:
            check_type(self.model, BaseChatModel, "Worker.model", "a LangChain chat model", who=who)
        if self.tools is not None:
            _tool_names(name, self.tools)  # validates
            object.__setattr__(self, "tools", tuple(self.tools))
        if self.model is not None and any(isinstance(t, str) for t in self.tools or ()):
            raise TypeError(
                f"Worker.tools: {who} builds its agent from `model`, so give "
                "the tools themselves (BaseTool or functions), not their names"
            )
        if self.prompt is not None and self.model is None:
            raise ValueError(
                f"Worker.prompt: {who} has an `agent`; `prompt` only applies "
                "to agents built from `model`"
            )
        object.__setattr__(self, "risks", _risk_map(name, self.risks))
        if self.timeout is not None:
            timeout = check_seconds(
                self.timeout, "Worker.timeout", who=who, fix=", or None for no timeout"
            )
            object.__setattr__(self, "timeout", timeout)  # a timedelta becomes seconds
        check_retry_policy(self.retry, "Worker.retry", who=who)
        if self.output_schema is not None:
            SchemaCheck(self.output_schema, where=f"Worker.output_schema: {who}")
        if self.verify is not None and not (
            isinstance(self.verify, BaseChatModel) or callable(self.verify)
        ):
            raise TypeError(
                f"Worker.verify: {who} got {type(self.verify).__name__}; give a "
                "function of (WorkerTask, WorkerResult) or a chat model"
            )
        self._check_fallback(who)
        breaker = "a Breaker(failures=..., window=..., cooldown=...) or None"
        check_type(self.breaker, Breaker | None, "Worker.breaker", breaker, who=who)
        check_type(self.budget, Budget | None, "Worker.budget", "a Budget(...) or None", who=who)
        if self.budget is not None and self.budget.prices:
            raise ValueError(
                f"Worker.budget: {who} gives prices; give the price table once, on "
                "create_supervisor(budget=Budget(prices=...)), and only limits here"
            )
        if isinstance(self.reads, str) or not all(
            isinstance(read, str) and _NAME_RE.fullmatch(read) for read in self.reads
        ):
            raise ValueError(
                f"Worker.reads: {who} got {self.reads!r}; give a list of "
                "worker names whose outputs it should be given"
            )
        object.__setattr__(self, "reads", tuple(self.reads))
        compaction = "a Compaction(...) or None"
        check_type(self.compaction, Compaction | None, "Worker.compaction", compaction, who=who)
        if self.max_visits is not None and not is_count(self.max_visits):
            raise ValueError(
                f"Worker.max_visits: {who} got {self.max_visits!r}; give an "
                "integer >= 1, or None for no per-worker limit"
            )

    def _check_fallback(self, who: str) -> None:
        fallback = self.fallback
        if isinstance(fallback, str):
            if not _NAME_RE.fullmatch(fallback):
                raise ValueError(
                    f"Worker.fallback: {who} got {fallback!r}, which is not a "
                    "worker name; name another worker of the supervisor, or give a function"
                )
            if fallback == self.name:
                raise ValueError(
                    f"Worker.fallback: {who} names itself; name another worker "
                    "of the supervisor, or give a function"
                )
        elif fallback is not None and (isinstance(fallback, Runnable) or not callable(fallback)):
            raise TypeError(
                f"Worker.fallback: {who} got {type(fallback).__name__}; give a "
                "function (sync or async) of WorkerTask, or the name of another worker (make "
                "a Runnable a Worker of its own and name it)"
            )

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names in the allowlist (empty when `tools` is None).

        Example:
            >>> Worker(name="a", description="A.", agent=lambda t: "x",
            ...        tools=["lookup"]).tool_names
            ('lookup',)
        """
        return _tool_names(self.name, self.tools or ())


def _risk_map(worker: str, risks: Mapping[str, Any]) -> dict[str, Risk]:
    give = "a mapping of tool name to 'low', 'medium' or 'high'"
    check_type(risks, Mapping, "Worker.risks", give, who=f"worker {worker!r}")
    bad = {name: level for name, level in risks.items() if level not in RISK_LEVELS}
    if bad:
        raise ValueError(
            f"Worker.risks: worker {worker!r} has unknown levels {bad}; use 'low', 'medium' "
            "or 'high'"
        )
    return dict(risks)


def _tool_names(worker: str, tools: Sequence[Any]) -> tuple[str, ...]:
    if isinstance(tools, str):
        raise TypeError(
            f"Worker.tools: worker {worker!r} got a string; give a list of tool names or tools"
        )
    names: list[str] = []
    for tool in tools:
        try:
            names.append(tool_name(tool))
        except TypeError:
            raise TypeError(
                f"Worker.tools: worker {worker!r} got {tool!r}; give tool names, "
                "BaseTool instances or functions"
            ) from None
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"Worker.tools: worker {worker!r} lists {duplicates} more than once")
    return tuple(names)


def agent_kind(worker: str, agent: Any) -> str:
    """How a hop calls `agent`: `runnable`, `async` or `function` (else a TypeError)."""
    if isinstance(agent, Runnable):
        return "runnable"
    if callable(agent):
        return "async" if _is_async_callable(agent) else "function"
    raise TypeError(
        f"Worker.agent: worker {worker!r} got {type(agent).__name__}, which is not supported; "
        "give a LangGraph graph (compiled or not) or a Runnable taking {'messages': [...]}, "
        "or a sync or async function taking a WorkerTask"
    )


def _is_async_callable(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    )

"""Worker specs: who a worker is, what runs it, and the limits it runs under.

The node that runs a hop lives in `_worker_node.py`; the coercion of whatever an
agent returns into a `WorkerResult` in `_coerce.py`.
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
from langgraph_supervisor_pro._contracts import FINISH, WorkerTask
from langgraph_supervisor_pro._internal.checks import check_retry_policy, check_seconds
from langgraph_supervisor_pro._internal.tools import tool_name
from langgraph_supervisor_pro._verification import OutputSchema, SchemaCheck, Verifier
from langgraph_supervisor_pro.compaction._compactor import Compaction
from langgraph_supervisor_pro.errors import WorkerTimeoutError
from langgraph_supervisor_pro.review._risks import RISK_LEVELS, Risk

__all__ = [
    "Worker",
    "WorkerAgent",
    "WorkerFallback",
    "default_worker_retry",
]

WorkerAgent: TypeAlias = (
    Runnable[Any, Any] | Callable[[WorkerTask], Any] | Callable[[WorkerTask], Awaitable[Any]]
)
"""A compiled graph / Runnable taking `{"messages": [...]}`, or a sync or async function
taking a `WorkerTask`."""

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
    agent: WorkerAgent | StateGraph[Any, Any, Any, Any] | None = None
    """A compiled LangGraph graph (e.g. from `create_agent`, or another supervisor from
    `create_supervisor`: a domain of a tree) or any Runnable taking `{"messages": [...]}`,
    or a plain sync or async function taking a `WorkerTask`. An uncompiled `StateGraph`
    is compiled here as a stateful subgraph (`compile(checkpointer=True)`: it keeps its
    state from one visit to the next, in the parent's thread).
    Give either `agent` or `model`."""
    model: BaseChatModel | None = None
    """A chat model: the worker becomes a `create_agent` agent over `tools`, guarded by
    `ToolGuard` (allowlist, risk levels, review gates)."""
    prompt: str | None = None
    """The system prompt of the agent built from `model`."""
    tools: tuple[BaseTool | Callable[..., Any] | str, ...] | None = None
    """The worker's tool allowlist: tools (or functions), or tool names for an `agent`."""
    risks: Mapping[str, Risk] = field(default_factory=dict)
    """Risk levels of this worker's tools by name (`low`, `medium`, `high`)."""
    timeout: float | None = None
    """Seconds one attempt may take (a finite number > 0); past it the attempt fails with
    `WorkerTimeoutError`."""
    retry: RetryPolicy = field(default_factory=default_worker_retry)
    """LangGraph retry policy for transient errors (see `default_worker_retry`); checked
    here: finite waits >= 0, `backoff_factor` >= 1, `max_attempts` >= 1, a bool `jitter`."""
    max_visits: int | None = None
    """How many hops this worker may take per run before the run halts."""
    reads: tuple[str, ...] = ()
    """Workers whose latest full output this worker is given (`WorkerTask.reads`)."""
    compaction: Compaction | None = None
    """How this worker's history is compacted (default: the supervisor's `compaction`)."""
    output_schema: OutputSchema | None = None
    """The shape a `success` result must have: a pydantic model, a TypedDict, a dataclass or
    a JSON Schema dict (a JSON text result is parsed first). A result that does not match
    is a `failed` hop with the reason; a matching one is stored as validated JSON data."""
    verify: Verifier | None = None
    """A check of every `success` result before the supervisor sees it: a function (sync
    or async) of `(WorkerTask, WorkerResult)` returning True/None to pass, or False, a
    reason or a `Verdict` to fail; or a chat model that answers a `Verdict`. A refused
    result (or a check that raises) is a `failed` hop with the reason."""
    fallback: WorkerFallback | str | None = None
    """What answers the hop when it would end `failed` (an exception after the retries, a
    refused or failed result) or when the worker's breaker is open: a function (sync or
    async) of the hop's `WorkerTask`, or the name of another worker of the same
    supervisor, whose agent then runs this hop (once: that worker's own fallback is not
    followed). Its result must pass this worker's `output_schema` (not `verify`); the
    ledger entry's `fallback` says why it answered."""
    breaker: Breaker | None = None
    """A circuit breaker (`langgraph_supervisor_pro._breakers.Breaker`): after
    `failures` failed hops within `window` seconds, the worker is taken out of rotation
    for `cooldown` seconds, then one probe hop decides. Its state is shared through the
    graph's store by every run and process."""

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
        if (self.agent is None) == (self.model is None):
            raise ValueError(
                f"Worker.agent: worker {self.name!r} needs exactly one of `agent` (a graph, "
                "Runnable or function) or `model` (a chat model to build a guarded agent from)"
            )
        if isinstance(self.agent, StateGraph):
            # An uncompiled graph (e.g. a domain supervisor from `create_supervisor`) is
            # compiled as a stateful subgraph (`checkpointer=True`): its state lives in
            # the parent's thread under a namespace named after the worker, and persists
            # from one visit to the next (a domain's next visit is its next turn, and its
            # workers remember the earlier ones). It inherits the parent's checkpointer.
            object.__setattr__(self, "agent", self.agent.compile(checkpointer=True))
        if self.agent is not None:
            agent_kind(self.name, self.agent)  # raises TypeError for unsupported agents
        elif not isinstance(self.model, BaseChatModel):
            raise TypeError(
                f"Worker.model: worker {self.name!r} got {type(self.model).__name__}; give a "
                "LangChain chat model"
            )
        if self.tools is not None:
            _tool_names(self.name, self.tools)  # validates
            object.__setattr__(self, "tools", tuple(self.tools))
        if self.model is not None and any(isinstance(t, str) for t in self.tools or ()):
            raise TypeError(
                f"Worker.tools: worker {self.name!r} builds its agent from `model`, so give "
                "the tools themselves (BaseTool or functions), not their names"
            )
        if self.prompt is not None and self.model is None:
            raise ValueError(
                f"Worker.prompt: worker {self.name!r} has an `agent`; `prompt` only applies "
                "to agents built from `model`"
            )
        object.__setattr__(self, "risks", _risk_map(self.name, self.risks))
        if self.timeout is not None:
            timeout = check_seconds(
                self.timeout,
                "Worker.timeout",
                who=f"worker {self.name!r}",
                fix=", or None for no timeout",
            )
            object.__setattr__(self, "timeout", timeout)  # a timedelta becomes seconds
        check_retry_policy(self.retry, "Worker.retry", who=f"worker {self.name!r}")
        if self.output_schema is not None:
            SchemaCheck(self.output_schema, where=f"Worker.output_schema: worker {self.name!r}")
        if self.verify is not None and not (
            isinstance(self.verify, BaseChatModel) or callable(self.verify)
        ):
            raise TypeError(
                f"Worker.verify: worker {self.name!r} got {type(self.verify).__name__}; give a "
                "function of (WorkerTask, WorkerResult) or a chat model"
            )
        self._check_fallback()
        if self.breaker is not None and not isinstance(self.breaker, Breaker):
            raise TypeError(
                f"Worker.breaker: worker {self.name!r} got {type(self.breaker).__name__}; give "
                "a Breaker(failures=..., window=..., cooldown=...) or None"
            )
        if isinstance(self.reads, str) or not all(
            isinstance(name, str) and _NAME_RE.fullmatch(name) for name in self.reads
        ):
            raise ValueError(
                f"Worker.reads: worker {self.name!r} got {self.reads!r}; give a list of "
                "worker names whose outputs it should be given"
            )
        object.__setattr__(self, "reads", tuple(self.reads))
        if self.compaction is not None and not isinstance(self.compaction, Compaction):
            raise TypeError(
                f"Worker.compaction: worker {self.name!r} got "
                f"{type(self.compaction).__name__}; give a Compaction(...) or None"
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

    def _check_fallback(self) -> None:
        fallback = self.fallback
        if fallback is None:
            return
        if isinstance(fallback, str):
            if not _NAME_RE.fullmatch(fallback):
                raise ValueError(
                    f"Worker.fallback: worker {self.name!r} got {fallback!r}, which is not a "
                    "worker name; name another worker of the supervisor, or give a function"
                )
            if fallback == self.name:
                raise ValueError(
                    f"Worker.fallback: worker {self.name!r} names itself; name another worker "
                    "of the supervisor, or give a function"
                )
            return
        if isinstance(fallback, Runnable) or not callable(fallback):
            raise TypeError(
                f"Worker.fallback: worker {self.name!r} got {type(fallback).__name__}; give a "
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
    if not isinstance(risks, Mapping):
        raise TypeError(
            f"Worker.risks: worker {worker!r} got {type(risks).__name__}; give a mapping of "
            "tool name to 'low', 'medium' or 'high'"
        )
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

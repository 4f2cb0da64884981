"""Recording model calls: tokens as reported, the model, where, the cost; budget checks (private).

Every node that calls models runs them under a `UsageRecorder` (a LangChain callback, so it
sees every call made under the node, at any depth: a domain's calls too). It checks each
call against the budgets in force before the call (`Level`), and records the call's usage
when it ends. A summarizer's calls (compaction) are measured against its own window and
counter. The recorded entries are written with the node's update, so a replayed or resumed
node never counts a call twice (docs/architecture.md, "Budgets").
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, LLMResult

from langgraph_supervisor_pro._budget import Budget, Measure, Spend
from langgraph_supervisor_pro._internal.model_calls import ModelCallSource, current_source
from langgraph_supervisor_pro._state import UsageEntry, UsageRole
from langgraph_supervisor_pro.compaction._compactor import TokenCounter
from langgraph_supervisor_pro.errors import BudgetExceededError

_POOLS_KEPT = 4096  # in-flight pools remembered (one per decision in flight, per level)


@dataclass(frozen=True)
class UsageMeter:
    """How a role's model calls are measured: its token counter and input window."""

    counter: TokenCounter
    window: int


class Pool:
    """What the calls under one decision have spent so far, before their hops are written.

    The branches of a parallel decision share one, so they cannot overspend between them.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.spend = Spend()

    def add(self, tokens: int, cost: float | None) -> None:
        """Count one finished call."""
        with self._lock:
            self.spend = self.spend + Spend(tokens, cost or 0.0, 1, int(cost is None))


_POOLS: OrderedDict[str, Pool] = OrderedDict()
_POOLS_LOCK = threading.Lock()


def pool(key: str) -> Pool:
    """The in-flight pool for `key` (thread, level, turn and decision), made on first use."""
    with _POOLS_LOCK:
        found = _POOLS.get(key)
        if found is None:
            found = _POOLS[key] = Pool()
            while len(_POOLS) > _POOLS_KEPT:
                _POOLS.popitem(last=False)
        else:
            _POOLS.move_to_end(key)
        return found


@dataclass(frozen=True)
class Level:
    """One budget a model call is checked against: its limits, what was spent before."""

    label: str
    """Who it is, for errors and events: "the graph's budget", "worker 'x''s budget"."""
    limits: Mapping[Measure, float]
    """The limits in force (raised by approved warnings)."""
    committed: Spend
    """Spent before this node ran (read from state)."""
    pool: Pool = field(default_factory=Pool)

    def spent(self) -> Spend:
        """Spent so far: before this node, and by the calls in flight under its decision."""
        return self.committed + self.pool.spend

    def over(self) -> tuple[Measure, float, float] | None:
        """The first limit reached, as (measure, spent, limit), else None."""
        spent = self.spent()
        for measure, limit in self.limits.items():
            if spent.of(measure) >= limit:
                return measure, spent.of(measure), limit
        return None

    def remaining(self) -> dict[str, float]:
        """What is left of each limit (never below 0)."""
        spent = self.spent()
        return {m: max(0.0, limit - spent.of(m)) for m, limit in self.limits.items()}


@dataclass(frozen=True)
class _Call:
    tokens: int
    source: ModelCallSource | None
    provider: str | None
    model: str | None
    path: list[str]
    usage: dict[str, Any] = field(default_factory=dict)


def _identity(
    metadata: Mapping[str, Any], params: Mapping[str, Any]
) -> tuple[str | None, str | None]:
    """(provider, model name) as the model reports them to LangSmith."""
    provider = metadata.get("ls_provider")
    model = metadata.get("ls_model_name") or params.get("model") or params.get("model_name")
    return (
        str(provider) if provider else None,
        str(model) if model else None,
    )


def _usage_of(usage: Mapping[str, Any]) -> dict[str, int]:
    """A message's `usage_metadata` as a usage entry's token counts (absent: 0)."""
    inputs = usage.get("input_token_details") or {}
    outputs = usage.get("output_token_details") or {}
    return {
        "input_tokens": int(usage.get("input_tokens", 0) or 0),
        "output_tokens": int(usage.get("output_tokens", 0) or 0),
        "cache_read": int(inputs.get("cache_read", 0) or 0),
        "cache_creation": int(inputs.get("cache_creation", 0) or 0),
        "reasoning": int(outputs.get("reasoning", 0) or 0),
    }


def _reported(response: LLMResult) -> tuple[dict[str, int] | None, list[BaseMessage]]:
    """The provider's usage of the call (None: it reported none), and its reply messages."""
    messages = [
        g.message for batch in response.generations for g in batch if isinstance(g, ChatGeneration)
    ]
    for message in messages:
        usage = getattr(message, "usage_metadata", None)
        if usage:
            return _usage_of(usage), messages
    return None, messages


class UsageRecorder(BaseCallbackHandler):
    """Checks every chat-model call made under a config against budgets, and records it."""

    run_inline = True
    raise_error = True  # a budget's refusal stops the call (nothing else here raises)
    # Only model calls are seen: LangChain skips this handler for every other event.
    ignore_chain = ignore_agent = ignore_retriever = ignore_retry = ignore_custom_event = True

    def __init__(
        self,
        meter: UsageMeter | None = None,
        *,
        summarizer: UsageMeter | None = None,
        budget: Budget | None = None,
        levels: Sequence[Level] = (),
    ) -> None:
        self.meter = meter
        self.summarizer = summarizer if summarizer is not None else meter
        self.budget = budget
        self.levels = tuple(levels)
        self.calls: list[_Call] = []
        self.replies: set[str] = set()
        """The ids of the reply messages of the recorded calls."""
        self._open: dict[UUID, _Call] = {}
        self._lock = threading.Lock()

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        invocation_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Refuse the call if a budget is spent; else note its input and model.

        The replies in its input after the hop's prompt (its last human message) that this
        recorder never saw (an agent resumed from its own checkpoint after a crash or an
        interrupt) are counted first, from their own usage, so the check sees them. A
        summarizer's input is a history, counted before: skipped.
        """
        meta = metadata or {}
        path = [p for p in str(meta.get("lgsp_path") or "").split("/") if p]
        provider, model = _identity(meta, invocation_params or {})
        source = current_source()
        for batch in messages if source != "compaction" else ():  # not a history
            since = len(batch) - next(
                (i for i, m in enumerate(reversed(batch)) if isinstance(m, HumanMessage)),
                len(batch),
            )
            self.replayed(batch[since:], model=(provider, model), path=path)
        for level in self.levels:
            reached = level.over()
            if reached is not None:
                raise BudgetExceededError(level.label, *reached)
        meter = self.summarizer if source == "compaction" else self.meter
        counter = meter.counter if meter is not None else count_tokens_approximately
        try:
            tokens = sum(counter(batch) for batch in messages)
        except Exception:  # a configured counter that fails: never the call's failure
            tokens = sum(count_tokens_approximately(batch) for batch in messages)
        call = _Call(tokens, source, provider, model, path)
        with self._lock:
            self._open[run_id] = call

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """Record the call with the usage its provider reported (else counted: estimated)."""
        with self._lock:
            call = self._open.pop(run_id, None)
        if call is None:
            return
        usage, replies = _reported(response)
        estimated = usage is None
        if usage is None:
            usage = {
                "input_tokens": call.tokens,
                "output_tokens": count_tokens_approximately(replies) if replies else 0,
                "cache_read": 0,
                "cache_creation": 0,
                "reasoning": 0,
            }
        self._finish(call, usage, estimated=estimated)
        with self._lock:
            self.replies.update(m.id for m in replies if m.id)

    def _finish(self, call: _Call, usage: dict[str, Any], *, estimated: bool) -> None:
        """Price a finished call, count it against the budgets in force, keep it."""
        call.usage.update(usage, estimated=estimated)
        cost = None
        if self.budget is not None and self.budget.table:
            cost = self.budget.cost({**usage, "provider": call.provider, "model": call.model})
            call.usage["cost"] = cost
        spent = usage["input_tokens"] + usage["output_tokens"]
        for level in self.levels:
            level.pool.add(spent, cost)
        with self._lock:
            self.calls.append(call)

    def replayed(
        self,
        messages: Sequence[BaseMessage],
        *,
        model: tuple[str | None, str | None],
        path: Sequence[str],
    ) -> None:
        """Record the calls behind replies this recorder never saw, from their own usage.

        A hop run again after an interrupt gets the replies its agent made before it from
        the agent's checkpoint, without calling the model again: they are counted once here.
        `model` is the hop's own model (`Worker.model`) when known, else the reply's. They
        are earlier than every call this recorder saw, and are kept first.
        """
        before = len(self.calls)
        for message in messages:
            usage = getattr(message, "usage_metadata", None)
            if not usage or message.id in self.replies:
                continue
            meta = message.response_metadata or {}
            provider = model[0] or meta.get("model_provider")
            name = model[1] or meta.get("model_name") or meta.get("model")
            reported = _usage_of(usage)
            call = _Call(reported["input_tokens"], None, provider, name, list(path))
            self._finish(call, reported, estimated=False)
            if message.id:
                self.replies.add(message.id)
        if len(self.calls) > before:
            with self._lock:
                self.calls = [*self.calls[before:], *self.calls[:before]]

    def adopt(self, entries: Sequence[Mapping[str, Any]], *, under: Sequence[str]) -> None:
        """Take a domain's own record of its calls in place of those seen under `under`.

        The domain's `usage` of its last turn holds every call made in it, those made before
        an interrupt too: the record is exact however often the hop ran.
        """
        prefix = list(under)
        with self._lock:
            self.calls = [c for c in self.calls if c.path[: len(prefix)] != prefix]
        keys = ("input_tokens", "output_tokens", "cache_read", "cache_creation", "reasoning")
        for entry in entries:
            call = _Call(
                int(entry.get("tokens", 0)),
                None,
                entry.get("provider"),
                entry.get("model"),
                list(entry.get("path") or prefix),
            )
            reported = {k: int(entry.get(k, 0) or 0) for k in keys}
            if "input_tokens" not in entry:  # an entry of an older domain: its input only
                reported["input_tokens"] = call.tokens
            self._finish(call, reported, estimated=bool(entry.get("estimated", False)))

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """A failed call reports no usage: forget it."""
        with self._lock:
            self._open.pop(run_id, None)

    def entries(
        self, *, turn: int, step: int, role: UsageRole, worker: str | None
    ) -> list[UsageEntry]:
        """The recorded calls as usage entries (compaction calls as `summarizer`)."""
        out: list[UsageEntry] = []
        for call in self.calls:
            summarizing = call.source == "compaction"
            entry = UsageEntry(
                turn=turn,
                step=step,
                role="summarizer" if summarizing else role,
                worker=worker,
                tokens=call.tokens,
                provider=call.provider,
                model=call.model,
                path=call.path,
            )
            meter = self.summarizer if summarizing else self.meter
            if meter is not None:
                entry["window"] = meter.window
                entry["utilisation"] = round(call.tokens / meter.window, 4)
            entry.update(call.usage)  # type: ignore[typeddict-item]
            out.append(entry)
        return out

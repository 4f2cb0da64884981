"""Compaction before each model call inside a worker's agent.

The supervisor compacts a worker's history before each hop; within a hop an agent
can still grow its context with a long tool loop. `CompactionMiddleware` is a
LangChain agent middleware that runs the same `Compactor` before every model call
of the agent, so no call passes the trigger. `Worker(model=...)` agents get it
when the worker compacts; add it yourself to a `create_agent` you build.

The worker node notices what the agent compacted (the messages it was given that
came back replaced by a summary) and applies the same replacement to the worker's
slot, so the next hop starts from the compacted history.

When the summarizer fails every attempt, or its breaker is open, the oldest turns are
dropped instead (a truncation marker takes their place; the agent's store, if any,
archives them). The summarizer's breaker state lives in the agent's store under
`("lgsp", "summarizer_breakers", supervisor, *worker path)`, shared with the compaction
step; without a store it is kept in the `Compactor` (per process).
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.config import get_config
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.store.base import BaseStore

from langgraph_supervisor_pro._internal.hop import first_human_text, hop_context
from langgraph_supervisor_pro.compaction._archive import Archive
from langgraph_supervisor_pro.compaction._compactor import (
    CompactionOutcome,
    Compactor,
    is_summary_message,
    truncation_note,
)

_TRUNCATED = "lgsp_truncated"

__all__ = ["CompactionMiddleware"]


class CompactionMiddleware(AgentMiddleware):
    """Compacts an agent's messages before a model call that would pass the trigger.

    Example:
        ```python
        from langchain.agents import create_agent
        compactor = Compaction(summarizer=cheap_model, model=model).compactor()
        agent = create_agent(model, tools=tools,
                             middleware=[CompactionMiddleware(compactor)])
        ```
    """

    def __init__(
        self,
        compactor: Compactor,
        *,
        name: str = "CompactionMiddleware",
        supervisor: str = "agent",
    ) -> None:
        """Compact with `compactor` (its window, trigger, keep and summarizer).

        Args:
            compactor: From `Compaction(...).compactor(model)`.
            name: The middleware's name (unique within one agent).
            supervisor: Whose summarizer breaker this is: the supervisor's name inside a
                supervisor graph (its state is then shared with the compaction step's,
                under the worker's path), any label for an agent on its own.
        """
        super().__init__()
        if not isinstance(compactor, Compactor):
            raise TypeError(
                f"CompactionMiddleware.compactor: got {type(compactor).__name__}; give "
                "Compaction(...).compactor(model)"
            )
        if not isinstance(supervisor, str) or not supervisor:
            raise ValueError(
                f"CompactionMiddleware.supervisor: got {supervisor!r}; give a non-empty "
                "name (the supervisor's, or any label for an agent on its own)"
            )
        self.compactor = compactor
        self.supervisor = supervisor
        self._name = name

    @property
    def name(self) -> str:
        """The middleware's name."""
        return self._name

    def _due(self, messages: list[BaseMessage]) -> bool:
        compactor = self.compactor
        return (
            bool(messages)
            and compactor.utilisation(messages) >= compactor.config.trigger
            and compactor.split(messages) > 0
        )

    def _scope(self) -> tuple[str, ...]:
        hop = hop_context()
        return (self.supervisor, *(hop.path if hop is not None else ()))

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Compact the messages when the next call would pass the trigger.

        When the summarizer fails (or its breaker is open) the oldest turns are dropped
        instead, and archived in the agent's store when it has one.
        """
        messages = list(state["messages"])
        if not self._due(messages):
            return None
        store = _store_of(runtime)
        outcome = self.compactor.compact(
            messages, task=_task(messages), store=store, scope=self._scope()
        )
        archive = _archive(outcome, self._scope())
        stored = archive.write(store) if archive is not None and store is not None else None
        return _update(outcome, stored)

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Async twin of `before_model`."""
        messages = list(state["messages"])
        if not self._due(messages):
            return None
        store = _store_of(runtime)
        outcome = await self.compactor.acompact(
            messages, task=_task(messages), store=store, scope=self._scope()
        )
        archive = _archive(outcome, self._scope())
        stored = await archive.awrite(store) if archive is not None and store is not None else None
        return _update(outcome, stored)


def _store_of(runtime: Any) -> BaseStore | None:
    store = getattr(runtime, "store", None)
    return store if isinstance(store, BaseStore) else None


def _archive(outcome: CompactionOutcome, scope: tuple[str, ...]) -> Archive | None:
    """The dropped messages of a truncation, to write to the store."""
    if not outcome.truncated:
        return None
    hop = hop_context()
    try:
        thread = str((get_config().get("configurable") or {}).get("thread_id") or "")
    except RuntimeError:  # called outside a graph
        thread = ""
    return Archive(
        outcome,
        thread_id=thread,
        path=scope[1:],
        turn=hop.turn if hop is not None else 0,
        step=hop.step if hop is not None else 0,
    )


def _task(messages: list[BaseMessage]) -> str:
    """The worker's task: the hop's, else an earlier summary's, else the first human message.

    Inside a supervisor graph the worker node passes the task with the hop; an agent
    used on its own has only its messages.
    """
    hop = hop_context()
    if hop is not None:
        return hop.task
    for message in messages:  # the first request was compacted away: the summary keeps it
        summary = message.additional_kwargs.get("lgsp_summary")
        if is_summary_message(message) and isinstance(summary, dict):
            return str(summary.get("task", ""))
    return first_human_text(messages)


def _update(outcome: CompactionOutcome, stored: dict[str, Any] | None) -> dict[str, Any] | None:
    # Nothing to drop or summarise leaves the history as it was (no update).
    replacement = outcome.replacement
    if replacement is None:
        return None
    messages = list(outcome.messages)
    if stored is not None and outcome.truncated:  # the worker node records where they went
        note = {**truncation_note(replacement), "stored": stored}
        marked = replacement.model_copy(
            update={"additional_kwargs": {**replacement.additional_kwargs, _TRUNCATED: note}}
        )
        messages = [marked if m is replacement else m for m in messages]
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages]}

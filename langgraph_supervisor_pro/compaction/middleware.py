"""Compaction before each model call inside a worker's agent.

The supervisor compacts a worker's history before each hop; within a hop an agent
can still grow its context with a long tool loop. `CompactionMiddleware` is a
LangChain agent middleware that runs the same `Compactor` before every model call
of the agent, so no call passes the trigger. `Worker(model=...)` agents get it
when the worker compacts; add it yourself to a `create_agent` you build.

The worker node notices what the agent compacted (the messages it was given that
came back replaced by a summary) and applies the same replacement to the worker's
slot, so the next hop starts from the compacted history.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from langgraph_supervisor_pro._internal.hop import first_human_text, hop_context
from langgraph_supervisor_pro.compaction.compactor import (
    CompactionOutcome,
    Compactor,
    is_summary_message,
)

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

    def __init__(self, compactor: Compactor, *, name: str = "CompactionMiddleware") -> None:
        """Compact with `compactor` (its window, trigger, keep and summarizer).

        Args:
            compactor: From `Compaction(...).compactor(model)`.
            name: The middleware's name (unique within one agent).
        """
        super().__init__()
        if not isinstance(compactor, Compactor):
            raise TypeError(
                f"CompactionMiddleware.compactor: got {type(compactor).__name__}; give "
                "Compaction(...).compactor(model)"
            )
        self.compactor = compactor
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

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Compact the messages when the next call would pass the trigger."""
        messages = list(state["messages"])
        if not self._due(messages):
            return None
        return _update(self.compactor.compact(messages, task=_task(messages)))

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Async twin of `before_model`."""
        messages = list(state["messages"])
        if not self._due(messages):
            return None
        return _update(await self.compactor.acompact(messages, task=_task(messages)))


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


def _update(outcome: CompactionOutcome) -> dict[str, Any] | None:
    # A summarizer that failed every attempt leaves the history as it was (no update).
    if not outcome.compacted:
        return None
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *outcome.messages]}

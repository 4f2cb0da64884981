"""`CompactionMiddleware`: the same `Compactor` before each model call inside an agent.

Within a hop an agent's tool loop can grow its context; the worker node applies what the
agent compacted to the worker's slot, so the next hop starts from the compacted history.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/compaction/
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.config import get_config
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.store.base import BaseStore

from langgraph_supervisor_pro._internal.hop import first_human_text, hop_context
from langgraph_supervisor_pro._internal.twins import Steps, adrive, drive
from langgraph_supervisor_pro.compaction._archive import archive
from langgraph_supervisor_pro.compaction._compactor import (
    CompactionOutcome,
    Compactor,
    is_summary_message,
    truncation_note,
)

_TRUNCATED = "lgsp_truncated"


class CompactionMiddleware(AgentMiddleware):
    """Compacts an agent's messages before a model call that would pass the trigger.

    When the summarizer fails (or its breaker is open) the oldest turns are dropped
    instead, and archived in the agent's store when it has one. The breaker's state lives
    in that store under `("lgsp", "summarizer_breakers", supervisor, *worker path)`,
    shared with the compaction step; without a store, in the `Compactor` (per process).

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

    def _compacting(self, state: Any, runtime: Any) -> Steps[dict[str, Any] | None]:
        messages: list[BaseMessage] = list(state["messages"])
        compactor = self.compactor
        if not (
            messages
            and compactor.utilisation(messages) >= compactor.config.trigger
            and compactor.split(messages) > 0
        ):
            return None
        store = getattr(runtime, "store", None)
        store = store if isinstance(store, BaseStore) else None
        hop = hop_context()
        scope = (self.supervisor, *(hop.path if hop is not None else ()))
        outcome = yield from compactor._steps(messages, _task(messages), None, store, scope)
        try:
            thread = str((get_config().get("configurable") or {}).get("thread_id") or "")
        except RuntimeError:  # called outside a graph
            thread = ""
        stored = yield from archive(
            outcome,
            store,
            thread_id=thread,
            path=scope[1:],
            turn=hop.turn if hop is not None else 0,
            step=hop.step if hop is not None else 0,
        )
        return _update(outcome, stored)

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Compact the messages when the next call would pass the trigger."""
        return drive(self._compacting(state, runtime))

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Async twin of `before_model`."""
        return await adrive(self._compacting(state, runtime))


def _task(messages: list[BaseMessage]) -> str:
    """The worker's task: the hop's, else an earlier summary's, else the first human message."""
    hop = hop_context()
    if hop is not None:
        return hop.task
    for message in messages:  # the first request was compacted away: the summary keeps it
        summary = message.additional_kwargs.get("lgsp_summary")
        if is_summary_message(message) and isinstance(summary, dict):
            return str(summary.get("task", ""))
    return first_human_text(messages)


def _update(outcome: CompactionOutcome, stored: dict[str, Any] | None) -> dict[str, Any] | None:
    replacement = outcome.replacement
    if replacement is None:  # nothing dropped or summarised: no update
        return None
    messages = list(outcome.messages)
    if stored is not None and outcome.truncated:  # the worker node records where they went
        note = {**truncation_note(replacement), "stored": stored}
        marked = replacement.model_copy(
            update={"additional_kwargs": {**replacement.additional_kwargs, _TRUNCATED: note}}
        )
        messages = [marked if m is replacement else m for m in messages]
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages]}

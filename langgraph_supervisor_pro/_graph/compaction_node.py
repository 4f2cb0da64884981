"""The compaction step: compacts a worker's history before its hop (private).

The supervisor routes through this node when the worker's history plus the hop's prompt
reaches the trigger or its cadence. Being its own super-step, the summary is checkpointed
before the worker runs: a crash in it re-runs only the summarizer, and the summary's id
derives from the ids it replaces, so a re-run writes the same one. A truncation (the
summarizer failed or its breaker is open) archives the dropped messages with a store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.store.base import BaseStore
from langgraph.types import Command

from langgraph_supervisor_pro._budget import Budget
from langgraph_supervisor_pro._contracts import WorkerResult, WorkerTask
from langgraph_supervisor_pro._graph.fanout import dispatched
from langgraph_supervisor_pro._graph.names import COMPACTION_NODE
from langgraph_supervisor_pro._graph.node import GraphNode
from langgraph_supervisor_pro._graph.usage import UsageMeter, UsageRecorder
from langgraph_supervisor_pro._internal.hop import hop_context
from langgraph_supervisor_pro._internal.twins import Steps, adrive, drive
from langgraph_supervisor_pro._state import CompactionEntry, RouteState, SupervisorState
from langgraph_supervisor_pro.compaction._archive import archive
from langgraph_supervisor_pro.compaction._compactor import CompactionOutcome, Compactor
from langgraph_supervisor_pro.persistence._memory import latest_results, thread_of

Reason = Literal["trigger", "cadence"]
_Done = tuple[RouteState, CompactionOutcome, UsageRecorder, dict[str, Any] | None]


class CompactionNode:
    """Compacts the routed worker's slot, then hands over to that worker."""

    def __init__(
        self,
        compactors: Mapping[str, Compactor],
        *,
        reads: Mapping[str, tuple[str, ...]] | None = None,
        supervisor: str = "supervisor",
        prices: Budget | None = None,
    ) -> None:
        self.compactors = dict(compactors)
        self.prices = prices
        self.reads = dict(reads or {})
        self.supervisor = supervisor

    def runnable(self) -> GraphNode[SupervisorState, Command[str]]:
        """The node as a Runnable with native sync and async bodies."""
        return GraphNode(COMPACTION_NODE, self.invoke, self.ainvoke)

    def needed(self, state: SupervisorState, route: RouteState, task: str) -> Reason | None:
        """Whether the routed worker's history must be compacted before its hop."""
        compactor = self.compactors.get(route["next"])
        if compactor is None:
            return None
        slot = (state.get("workers") or {}).get(route["next"])
        history: list[BaseMessage] = list(slot["messages"]) if slot else []
        done = len(slot["results"]) if slot else 0
        if not history:
            return None
        prompt = WorkerTask(
            worker=route["next"],
            step=route["step"],
            task=task,
            instructions=route["instructions"],
            reads=self._reads_estimate(state, route["next"]),
        ).prompt()
        upcoming = [*history, HumanMessage(content=prompt)]
        if compactor.utilisation(upcoming) >= compactor.config.trigger:
            return "trigger" if compactor.split(history) > 0 else None
        return "cadence" if compactor.should_compact(history, step=done) else None

    def _reads_estimate(self, state: SupervisorState, worker: str) -> dict[str, WorkerResult]:
        """The outputs the worker will be given (`Worker.reads`), for counting.

        An output in the store is stood in for by text of its recorded length (`chars`),
        so the trigger counts it without a store round trip.
        """
        slots = state.get("workers") or {}
        out: dict[str, WorkerResult] = {}
        for name, entry in latest_results(slots, self.reads.get(worker, ())).items():
            if entry.get("ref"):
                text = "x" * int(entry.get("chars", 0))
                out[name] = WorkerResult(
                    status=entry["status"], result=text, summary=entry.get("summary", "")
                )
            else:
                out[name] = WorkerResult.model_validate(dict(entry))
        return out

    def _targets(self, state: SupervisorState) -> list[RouteState]:
        """The routed hop (unconditionally), or a parallel decision's branches that need it."""
        route = state.get("route")
        if route is not None:
            if route["next"] not in self.compactors:
                raise RuntimeError(
                    "the compaction step ran without a route to a compacting worker "
                    f"(route={route!r})"
                )
            return [route]
        task = state.get("task", "")
        branches = dispatched(state)
        targets = [r for r in branches if self.needed(state, r, task) is not None]
        if not branches:
            raise RuntimeError("the compaction step ran with no hop in flight")
        return targets

    def _compacting(
        self,
        state: SupervisorState,
        config: RunnableConfig,
        store: BaseStore | None,
        route: RouteState,
    ) -> Steps[_Done]:
        worker = route["next"]
        compactor = self.compactors[worker]
        # The summarizer's calls are metered against its own window.
        meter = UsageMeter(counter=compactor.summarizer_counter, window=compactor.summarizer_window)
        recorder = UsageRecorder(meter, summarizer=meter, budget=self.prices)
        parent = hop_context(config)  # the worker's path from the root of a tree
        path = (*(parent.path if parent is not None else ()), worker)
        slot = (state.get("workers") or {}).get(worker)
        outcome = yield from compactor._steps(
            list(slot["messages"]) if slot else [],
            state.get("task", ""),
            {"callbacks": [recorder]},
            store,
            (self.supervisor, *path),
        )
        stored = yield from archive(
            outcome,
            store,
            thread_id=thread_of(config),
            path=path,
            turn=state.get("turn", 1),
            step=route["step"],
        )
        return route, outcome, recorder, stored

    def invoke(self, state: SupervisorState, config: RunnableConfig) -> Command[Any]:
        """Compact synchronously."""
        store = get_store()
        done = [drive(self._compacting(state, config, store, r)) for r in self._targets(state)]
        return self._command(state, done)

    async def ainvoke(self, state: SupervisorState, config: RunnableConfig) -> Command[Any]:
        """Compact on the event loop (a parallel decision's workers concurrently)."""
        store = get_store()
        targets = self._targets(state)
        done = await asyncio.gather(
            *(adrive(self._compacting(state, config, store, r)) for r in targets)
        )
        return self._command(state, list(done))

    def _command(
        self,
        state: SupervisorState,
        done: list[_Done],
    ) -> Command[Any]:
        entries: list[CompactionEntry] = []
        usage: list[Any] = []
        slots: dict[str, Any] = {}
        for route, outcome, recorder, stored in done:
            worker = route["next"]
            reason = self.needed(state, route, state.get("task", "")) or "trigger"
            entry = CompactionEntry(
                turn=state.get("turn", 1),
                step=route["step"],
                worker=worker,
                reason=reason,
                tokens_before=outcome.tokens_before,
                tokens_after=outcome.tokens_after,
                removed=len(outcome.removed_ids) if outcome.kind is not None else 0,
                attempts=outcome.attempts,
                error=outcome.error,
            )
            if outcome.kind is not None:
                entry["kind"] = outcome.kind
            if stored is not None:
                entry["stored"] = stored
            entries.append(entry)
            usage.extend(
                recorder.entries(
                    turn=entry["turn"], step=entry["step"], role="summarizer", worker=worker
                )
            )
            replacement = outcome.replacement
            if replacement is not None:  # a summary, or the marker of a truncation
                slots[worker] = {"compact": {"remove": outcome.removed_ids, "summary": replacement}}
        update: dict[str, Any] = {"compactions": entries}
        if usage:
            update["usage"] = usage
        if slots:
            update["workers"] = slots
        serial = state.get("route")
        if serial is not None:
            return Command(goto=serial["next"], update=update)
        return Command(goto=[r["next"] for r in dispatched(state)], update=update)

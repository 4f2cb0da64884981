"""The synthesis step: writes the run's answer from the workers' full results.

By default the answer is the last successful worker's full result (every branch's after a
parallel fan-out); `synthesizer=` (a chat model or a function) writes it otherwise. Halted
and failed runs get a closing message that says why, without calling the synthesizer.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeAlias, get_args

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import merge_configs
from langgraph.config import get_store
from langgraph.errors import NodeError
from pydantic import BaseModel, ConfigDict

from langgraph_supervisor_pro._budget import Budget
from langgraph_supervisor_pro._contracts import FINISH, HaltReason, RunStatus, WorkerResult
from langgraph_supervisor_pro._graph.names import SYNTHESIS_NODE
from langgraph_supervisor_pro._graph.node import GraphNode
from langgraph_supervisor_pro._graph.usage import UsageMeter, UsageRecorder
from langgraph_supervisor_pro._internal.scrub import RunSecrets
from langgraph_supervisor_pro._internal.storable import storable
from langgraph_supervisor_pro._internal.text import content_text, truncate
from langgraph_supervisor_pro._internal.twins import Call, Invoke, Steps, adrive, drive
from langgraph_supervisor_pro._state import SupervisorState
from langgraph_supervisor_pro.compaction._compactor import TokenCounter
from langgraph_supervisor_pro.errors import LGSPError, troubleshooting
from langgraph_supervisor_pro.persistence._memory import aload_result, load_result

DEFAULT_SYNTHESIS_PROMPT = (
    "You write the final answer to the user's task from the workers' results below. "
    "Use only what the results say; be complete and concise."
)
"""System prompt used when `synthesizer` is a chat model."""


class HopOutput(BaseModel):
    """One hop's full output, as the synthesis step sees it."""

    model_config = ConfigDict(frozen=True)

    step: int
    worker: str
    result: WorkerResult


class SynthesisInput(BaseModel):
    """What a synthesizer function receives.

    Example:
        >>> def synthesize(inp: SynthesisInput) -> str:
        ...     return " / ".join(h.result.result_text() for h in inp.successes())
    """

    model_config = ConfigDict(frozen=True)

    task: str
    """The user's task for this turn."""
    hops: list[HopOutput]
    """Every hop of this turn, oldest first, with full results."""
    status: RunStatus
    """`running` when the supervisor said FINISH; `halted`/`failed` otherwise."""
    halt_reason: str | None = None
    halt_detail: str | None = None
    finish_note: str = ""
    """The supervisor's instructions that came with FINISH, if any."""
    parallel_steps: list[int] = []
    """The steps of the last decision's hops when it was a parallel fan-out (else empty)."""

    def successes(self) -> list[HopOutput]:
        """The hops that ended in `success`, oldest first.

        Example:
            >>> SynthesisInput(task="t", hops=[], status="running").successes()
            []
        """
        return [hop for hop in self.hops if hop.result.status == "success"]


Synthesizer: TypeAlias = (
    Runnable[Any, Any]
    | Callable[[SynthesisInput], "str | BaseMessage"]
    | Callable[[SynthesisInput], Awaitable["str | BaseMessage"]]
)
"""A chat model (or Runnable taking messages), or a sync/async function of `SynthesisInput`."""


def default_answer(inp: SynthesisInput) -> str:
    """The answer when no synthesizer is given, and the closing message of halted runs."""
    done = inp.successes()
    last = done[-1] if done else None
    if inp.status in ("halted", "failed"):
        text = f"Stopped early ({inp.halt_reason}): {inp.halt_detail}."
        if inp.halt_reason is not None and inp.halt_reason in get_args(HaltReason):
            text += f"\n{troubleshooting(inp.halt_reason)}"  # the halt reason's page
        if last is not None:
            text += (
                f"\n\nLast result, from {last.worker} (hop {last.step}):\n"
                f"{last.result.result_text()}"
            )
        return text
    branches = [hop for hop in done if hop.step in inp.parallel_steps]
    if len(branches) > 1:  # the last decision ran several workers at once: all of them
        return "\n\n".join(
            f"{hop.worker} (hop {hop.step}):\n{hop.result.result_text()}" for hop in branches
        )
    if last is not None:
        return last.result.result_text()
    return inp.finish_note or "The supervisor finished without any successful worker result."


def _turn_entries(state: SupervisorState) -> list[tuple[int, str, Mapping[str, Any]]]:
    """This turn's hops as (step, worker, slot result entry), oldest first."""
    turn = state.get("turn", 1)
    slots = state.get("workers") or {}
    seen: dict[str, int] = {}
    entries: list[tuple[int, str, Mapping[str, Any]]] = []
    # The k-th ledger entry of a worker and its k-th result were written together.
    for entry in state.get("ledger") or ():
        index = seen.get(entry["worker"], 0)
        seen[entry["worker"]] = index + 1
        if entry["turn"] != turn:
            continue
        results = slots.get(entry["worker"], {"results": []})["results"]
        if index < len(results):
            entries.append((entry["step"], entry["worker"], results[index]))
    # In step order: the branches of a parallel decision land in the ledger in the order
    # LangGraph applied their writes, which a resume after a crash may change.
    return sorted(entries, key=lambda e: e[0])


def synthesis_input(state: SupervisorState, results: Sequence[WorkerResult]) -> SynthesisInput:
    """The synthesizer's input: this turn's hops with their full (resolved) results."""
    entries = _turn_entries(state)
    route = state.get("route")
    return SynthesisInput(
        task=state.get("task", ""),
        hops=[
            HopOutput(step=step, worker=worker, result=result)
            for (step, worker, _), result in zip(entries, results, strict=True)
        ],
        status=state.get("status", "running"),
        halt_reason=state.get("halt_reason"),
        halt_detail=state.get("halt_detail"),
        finish_note=route["instructions"] if route and route["next"] == FINISH else "",
        parallel_steps=sorted(b["step"] for b in (state.get("fanout") or {}).values()),
    )


def _loading(state: SupervisorState) -> Steps[SynthesisInput]:
    """The synthesis input, with this turn's results loaded from the store if need be."""
    store = get_store()
    results: list[WorkerResult] = []
    for _, _, entry in _turn_entries(state):
        results.append(
            (yield Call(partial(load_result, store, entry), partial(aload_result, store, entry)))
        )
    return synthesis_input(state, results)


def _model_messages(
    inp: SynthesisInput, *, budget: int | None = None, counter: TokenCounter | None = None
) -> list[BaseMessage]:
    """The synthesizer model's input, within `budget` tokens when given.

    Full results go in newest first while they fit, the others as summaries; a single
    result larger than the budget is cut to fit.
    """

    def render(parts: list[str]) -> list[BaseMessage]:
        return [
            SystemMessage(content=DEFAULT_SYNTHESIS_PROMPT),
            HumanMessage(content="\n\n".join(parts)),
        ]

    head = [f"Task: {inp.task}"]
    tail = [f"Supervisor's note: {inp.finish_note}"] if inp.finish_note else []
    hops = inp.successes()
    full = [f"Result of {h.worker} (hop {h.step}):\n{h.result.result_text()}" for h in hops]
    if budget is None or counter is None:
        return render([*head, *full, *tail])
    short = [f"Result of {h.worker} (hop {h.step}), summary only: {h.result.summary}" for h in hops]
    chosen = list(short)
    for index in reversed(range(len(hops))):
        trial = [*chosen[:index], full[index], *chosen[index + 1 :]]
        if counter(render([*head, *trial, *tail])) <= budget:
            chosen = trial
    messages = render([*head, *chosen, *tail])
    while counter(messages) > budget and len(messages[-1].content) > 200:
        text = str(messages[-1].content)
        messages = render([text[: int(len(text) * 0.8)] + "…"])
    return messages


class SynthesisNode:
    """The synthesis node. Built by `create_supervisor`; not public API."""

    def __init__(
        self,
        synthesizer: Synthesizer | None,
        *,
        answer_name: str,
        meter: UsageMeter | None = None,
        trigger: float = 0.7,
        prices: Budget | None = None,
    ) -> None:
        self.answer_name = answer_name
        self.meter = meter
        self.prices = prices
        self.trigger = trigger
        self._takes_messages = isinstance(synthesizer, Runnable)
        self._runnable: Runnable[Any, Any] | None = None
        if isinstance(synthesizer, Runnable):
            self._runnable = synthesizer
        elif callable(synthesizer):
            self._runnable = RunnableLambda(synthesizer, name="synthesizer")
        elif synthesizer is not None:
            raise TypeError(
                f"synthesizer: got {type(synthesizer).__name__}; give a chat model, a Runnable "
                "taking messages, or a function taking a SynthesisInput"
            )

    def runnable(self) -> GraphNode[SupervisorState, dict[str, Any]]:
        return GraphNode(SYNTHESIS_NODE, self.invoke, self.ainvoke)

    def _payload(self, inp: SynthesisInput) -> Any:
        if not self._takes_messages:
            return inp
        if self.meter is None:
            return _model_messages(inp)
        budget = int(self.meter.window * self.trigger)
        return _model_messages(inp, budget=budget, counter=self.meter.counter)

    def _config(self, config: RunnableConfig) -> tuple[RunnableConfig, UsageRecorder]:
        # Never checked against a budget: a halted run's answer is still written.
        recorder = UsageRecorder(self.meter if self._takes_messages else None, budget=self.prices)
        return merge_configs(config, {"callbacks": [recorder]}), recorder

    def invoke(self, state: SupervisorState, config: RunnableConfig) -> dict[str, Any]:
        return drive(self._writing(state, config))

    async def ainvoke(self, state: SupervisorState, config: RunnableConfig) -> dict[str, Any]:
        return await adrive(self._writing(state, config))

    def _writing(self, state: SupervisorState, config: RunnableConfig) -> Steps[dict[str, Any]]:
        """The answer, for both drivers: the synthesizer's, or the default one."""
        inp = yield from _loading(state)
        if self._runnable is None or inp.status != "running":
            return self._update(inp, default_answer(inp))
        child, recorder = self._config(config)
        answer = yield Invoke(self._runnable, self._payload(inp), child)
        return self._update(inp, answer, state, recorder)

    def _update(
        self,
        inp: SynthesisInput,
        answer: Any,
        state: SupervisorState | None = None,
        recorder: UsageRecorder | None = None,
    ) -> dict[str, Any]:
        text = content_text(answer.content) if isinstance(answer, BaseMessage) else str(answer)
        text = storable(text)  # a NUL or lone surrogate becomes U+FFFD (Postgres refuses both)
        message = AIMessage(content=text, name=self.answer_name, id=str(uuid.uuid4()))
        status = "done" if inp.status == "running" else inp.status
        update: dict[str, Any] = {"messages": [message], "status": status, "route": None}
        if recorder is not None and state is not None:
            update["usage"] = recorder.entries(
                turn=state.get("turn", 1), step=state.get("step", 0), role="synthesis", worker=None
            )
        return update

    def on_error(self, state: SupervisorState, error: NodeError) -> dict[str, Any]:
        """LangGraph error handler: the synthesizer failed; answer with what the run has."""
        inp = drive(_loading(state))
        exc = error.error
        text = exc.message if isinstance(exc, LGSPError) else exc  # state holds no doc link
        detail = storable(
            truncate(
                RunSecrets().scrub(f"the synthesizer failed: {type(exc).__name__}: {text}"), 500
            )
        )
        failed = inp.model_copy(
            update={"status": "failed", "halt_reason": "synthesis_error", "halt_detail": detail}
        )
        update = self._update(failed, default_answer(failed))
        return {**update, "halt_reason": "synthesis_error", "halt_detail": detail}

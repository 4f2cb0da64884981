"""The scale benchmark's models: they serve any number of runs at once, and may take time.

The comparison's workload (`bench/_workload.py`: N hops round-robin over researcher,
analyst and writer, 2,000-character answers, then FINISH) with models that decide from
what they are shown, never from call order, so one compiled graph serves hundreds of
concurrent threads:

- the supervisor reads the hop budget our supervisor shows it ("Hop budget: k/N
  used") and routes hop k+1 to the round-robin worker, or FINISH at k = N; with
  `fan_out=True` its first decision sends all three workers at once, then FINISH;
- a worker answers `answer_text(worker, visit)`, its visit counted from its own
  answers in the history it is given.

`TimedModel` adds a simulated model latency: each call sleeps `latency` seconds
+/- `jitter` (a fraction), drawn from a generator seeded by the call's messages (the
same prompt always takes the same time), with `time.sleep` under `invoke` and
`asyncio.sleep` under `ainvoke`; the time slept is logged per call.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from pydantic import Field, PrivateAttr

from bench._workload import (
    WORKER_NAMES,
    ServedModels,
    WorkloadError,
    answer_text,
    instructions,
    schedule,
)
from langgraph_supervisor_pro import FINISH
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall

_BUDGET = re.compile(r"Hop budget: (\d+)/(\d+) used")


def hops_used(call: ScriptedCall) -> tuple[int, int]:
    """(hops used, hop budget) from the supervisor prompt's last 'Hop budget' line.

    Raises:
        WorkloadError: The prompt shows no hop budget (not our supervisor's prompt).
    """
    for message in reversed(call.messages):
        if isinstance(message, HumanMessage) and isinstance(message.content, str):
            found = _BUDGET.findall(message.content)
            if found:
                used, budget = found[-1]
                return int(used), int(budget)
    raise WorkloadError("the supervisor prompt shows no 'Hop budget: k/N used' line")


def round_robin_decision(call: ScriptedCall) -> dict[str, str]:
    """Hop k+1 to `schedule(N)[k]`, or FINISH once the N hops of the budget are used."""
    used, budget = hops_used(call)
    if used >= budget:
        return {"next": FINISH, "instructions": ""}
    return {"next": schedule(budget)[used], "instructions": instructions(used + 1)}


def fan_out_decision(call: ScriptedCall) -> dict[str, Any]:
    """All three workers at once on the first decision, then FINISH."""
    used, _ = hops_used(call)
    if used:
        return {"next": FINISH, "instructions": ""}
    first, *others = WORKER_NAMES
    return {
        "next": first,
        "instructions": f"Cover the {first} part.",
        "parallel": [{"next": n, "instructions": f"Cover the {n} part."} for n in others],
    }


def visit_of(call: ScriptedCall) -> int:
    """A worker's visit (from 1): one more than the answers in the history it was given."""
    return 1 + sum(isinstance(m, AIMessage) for m in call.messages)


def worker_reply(worker: str) -> Any:
    """`worker`'s reply function: its answer for the visit it is on."""

    def reply(call: ScriptedCall) -> str:
        return answer_text(worker, visit_of(call))

    return reply


class TimedModel(FunctionChatModel):
    """A `FunctionChatModel` whose every call takes `latency` s +/- `jitter` (simulated)."""

    latency: float = Field(default=0.0, ge=0.0)
    """Mean seconds per call."""
    jitter: float = Field(default=0.0, ge=0.0, lt=1.0)
    """Each call takes latency * (1 +/- up to jitter), seeded by the call's messages."""
    _log: list[float] = PrivateAttr(default_factory=list)
    _log_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def delay(self, messages: Sequence[BaseMessage]) -> float:
        """The seconds a call with these messages takes (the same messages, the same time)."""
        if not self.latency:
            return 0.0
        digest = hashlib.sha256(f"{self.name}\x00".encode())
        for message in messages:
            digest.update(f"{message.type}\x00{message.content}\x00".encode())
        rng = random.Random(digest.digest())
        return self.latency * (1.0 + rng.uniform(-self.jitter, self.jitter))

    def slept(self) -> tuple[float, ...]:
        """The seconds each call since the last `clear` took, in order of completion."""
        with self._log_lock:
            return tuple(self._log)

    def clear(self) -> None:
        """Forget the logged calls."""
        with self._log_lock:
            self._log.clear()

    def _wait(self, messages: Sequence[BaseMessage]) -> None:
        seconds = self.delay(messages)
        if seconds:  # a model without latency does not yield (sleep(0) would)
            time.sleep(seconds)
        self._logged(seconds)

    async def _await(self, messages: Sequence[BaseMessage]) -> None:
        seconds = self.delay(messages)
        if seconds:
            await asyncio.sleep(seconds)
        self._logged(seconds)

    def _logged(self, seconds: float) -> None:
        with self._log_lock:
            self._log.append(seconds)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._wait(messages)
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        await self._await(messages)
        return await super()._agenerate(messages, stop, run_manager, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        self._wait(messages)
        yield from super()._stream(messages, stop, run_manager, **kwargs)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        await self._await(messages)
        async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
            yield chunk


@dataclass(frozen=True)
class TimedModels:
    """The served models of one graph, each a `TimedModel`, and their logged time."""

    supervisor: TimedModel
    workers: dict[str, TimedModel]

    @property
    def served(self) -> ServedModels:
        """The models as the workload builders take them."""
        return ServedModels(supervisor=self.supervisor, workers=self.workers)

    def clear(self) -> None:
        """Forget every model's logged calls (before a run)."""
        for model in (self.supervisor, *self.workers.values()):
            model.clear()


def served_models(
    *, latency: float = 0.0, jitter: float = 0.0, fan_out: bool = False
) -> TimedModels:
    """The supervisor (round-robin or fan-out) and the three workers' models."""
    decide = fan_out_decision if fan_out else round_robin_decision
    return TimedModels(
        supervisor=TimedModel(name="supervisor", reply=decide, latency=latency, jitter=jitter),
        workers={
            name: TimedModel(name=name, reply=worker_reply(name), latency=latency, jitter=jitter)
            for name in WORKER_NAMES
        },
    )

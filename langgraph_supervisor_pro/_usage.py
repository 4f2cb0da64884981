"""Measuring context utilisation of model calls (private)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage

from langgraph_supervisor_pro.state import UsageEntry, UsageRole

TokenCounter = Callable[[Sequence[BaseMessage]], int]


@dataclass(frozen=True)
class UsageMeter:
    """How a role's model calls are measured: its token counter and input window."""

    counter: TokenCounter
    window: int

    def entry(
        self, *, turn: int, step: int, role: UsageRole, worker: str | None, tokens: int
    ) -> UsageEntry:
        """One usage record."""
        return UsageEntry(
            turn=turn,
            step=step,
            role=role,
            worker=worker,
            tokens=tokens,
            window=self.window,
            utilisation=round(tokens / self.window, 4),
        )


class UsageRecorder(BaseCallbackHandler):
    """Counts the input tokens of every chat-model call made under a config."""

    run_inline = True

    def __init__(self, meter: UsageMeter) -> None:
        self.meter = meter
        self.tokens: list[int] = []
        self._lock = threading.Lock()

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        """Count each prompt of the call."""
        counts = [self.meter.counter(batch) for batch in messages]
        with self._lock:
            self.tokens.extend(counts)

    def entries(
        self, *, turn: int, step: int, role: UsageRole, worker: str | None
    ) -> list[UsageEntry]:
        """The recorded calls as usage entries."""
        return [
            self.meter.entry(turn=turn, step=step, role=role, worker=worker, tokens=t)
            for t in self.tokens
        ]

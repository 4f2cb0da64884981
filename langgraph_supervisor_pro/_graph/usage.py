"""Measuring context utilisation of model calls (private).

A summarizer's calls (compaction) are measured against its own window and counter.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage

from langgraph_supervisor_pro._internal.model_calls import current_source
from langgraph_supervisor_pro._state import UsageEntry, UsageRole
from langgraph_supervisor_pro.compaction._compactor import TokenCounter


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

    def __init__(self, meter: UsageMeter, *, summarizer: UsageMeter | None = None) -> None:
        self.meter = meter
        self.summarizer = summarizer if summarizer is not None else meter
        self.calls: list[tuple[int, str | None]] = []
        self._lock = threading.Lock()

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        **kwargs: Any,
    ) -> None:
        """Count each prompt of the call (a summarizer's call is noted as such)."""
        source = current_source()
        meter = self.summarizer if source == "compaction" else self.meter
        counts = [(meter.counter(batch), source) for batch in messages]
        with self._lock:
            self.calls.extend(counts)

    def entries(
        self, *, turn: int, step: int, role: UsageRole, worker: str | None
    ) -> list[UsageEntry]:
        """The recorded calls as usage entries (compaction calls as `summarizer`)."""
        return [
            (self.summarizer if source == "compaction" else self.meter).entry(
                turn=turn,
                step=step,
                role="summarizer" if source == "compaction" else role,
                worker=worker,
                tokens=tokens,
            )
            for tokens, source in self.calls
        ]

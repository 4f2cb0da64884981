"""Where a truncation's dropped messages go: the graph's store (private).

When the summarizer fails (or its breaker is open) the compaction falls back to dropping
the oldest turns. With a store, the dropped messages are written under
`("lgsp", "compacted", <thread_id>, *<worker path>)`, key `t<turn>.s<step>.<marker id>`,
as `{"messages": messages_to_dict(...), "removed": n, "error": ..., "at": ...}`: moved out
of the prompt, not lost. The key derives from the dropped ids, so a compaction re-run after
a crash writes the same item again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict
from langgraph.store.base import BaseStore

from langgraph_supervisor_pro._internal.storable import storable_value
from langgraph_supervisor_pro.compaction._compactor import CompactionOutcome

__all__ = ["Archive", "archive_namespace", "dropped_messages"]

_log = logging.getLogger("langgraph_supervisor_pro.compaction")


def _label(text: str) -> str:
    """A store namespace label: no `.` (percent-encoded), never empty."""
    return text.replace("%", "%25").replace(".", "%2E") or "%"


def archive_namespace(thread_id: str, path: Sequence[str]) -> tuple[str, ...]:
    """The store namespace of a worker's dropped messages in one thread.

    Example:
        >>> archive_namespace("t-1", ("ops", "pager"))
        ('lgsp', 'compacted', 't-1', 'ops', 'pager')
    """
    return ("lgsp", "compacted", _label(thread_id), *(_label(p) for p in path))


class Archive:
    """One truncation's dropped messages, ready to be written to a store."""

    def __init__(
        self,
        outcome: CompactionOutcome,
        *,
        thread_id: str,
        path: Sequence[str],
        turn: int,
        step: int,
    ) -> None:
        marker = outcome.replacement
        self.namespace = archive_namespace(thread_id, path)
        self.key = f"t{turn:05d}.s{step:05d}.{marker.id if marker is not None else 'x'}"
        self.value: dict[str, Any] = {
            "messages": storable_value(messages_to_dict(list(outcome.dropped))),
            "removed": len(outcome.dropped),
            "error": outcome.error,
            "at": datetime.now(UTC).isoformat(),
        }

    @property
    def ref(self) -> dict[str, Any]:
        """Where it is: `{"namespace": [...], "key": ...}` (for the `CompactionEntry`)."""
        return {"namespace": list(self.namespace), "key": self.key}

    def write(self, store: BaseStore) -> dict[str, Any] | None:
        """Write it; the reference, or None when the store failed (logged)."""
        try:
            store.put(self.namespace, self.key, self.value, index=False)
        except Exception as exc:  # the truncation stands; the checkpoints still hold them
            _log.warning(
                "compaction: dropped messages not archived (%s: %s)", type(exc).__name__, exc
            )
            return None
        return self.ref

    async def awrite(self, store: BaseStore) -> dict[str, Any] | None:
        """Async twin of `write`."""
        try:
            await store.aput(self.namespace, self.key, self.value, index=False)
        except Exception as exc:
            _log.warning(
                "compaction: dropped messages not archived (%s: %s)", type(exc).__name__, exc
            )
            return None
        return self.ref


def dropped_messages(value: dict[str, Any]) -> list[BaseMessage]:
    """The messages an archived item holds.

    Example:
        ```python
        item = store.get(namespace, key)
        messages = dropped_messages(item.value)
        ```
    """
    return messages_from_dict(value.get("messages") or [])

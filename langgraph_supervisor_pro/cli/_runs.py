"""The runs (threads) in a checkpoint database, for `lgsp runs` (private).

Each thread's newest root checkpoint holds its status, turn and step, and the reviews it
waits on (read as the review desk's `list_reviews` reads them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from langgraph_supervisor_pro._internal.records import aware_time, whole_int
from langgraph_supervisor_pro.review._desk import each_newest_root, reviews_of_tuple


@dataclass(frozen=True, kw_only=True)
class RunRow:
    """One thread: where its run stands and when it last moved."""

    thread_id: str
    """The thread."""
    status: str
    """The run's status (`running`, `done`, `halted`, `failed`), or `-` when unknown."""
    turn: int | None
    """The conversation's turn (1 for a single request)."""
    step: int | None
    """The supervisor's step within the turn."""
    pending: int
    """Reviews the run is paused on."""
    task: str
    """The turn's task (the latest user message)."""
    last_activity: datetime | None
    """When the newest checkpoint was written."""

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready values (the time in ISO-8601).

        Example:
            >>> RunRow(thread_id="t", status="-", turn=None, step=None, pending=1,
            ...        task="", last_activity=None).to_dict()["pending_reviews"]
            1
        """
        return {
            "thread_id": self.thread_id,
            "status": self.status,
            "turn": self.turn,
            "step": self.step,
            "pending_reviews": self.pending,
            "task": self.task,
            "last_activity": self.last_activity.isoformat() if self.last_activity else None,
        }


def list_runs(checkpointer: BaseCheckpointSaver[Any]) -> list[RunRow]:
    """One row per thread of the open `checkpointer`, newest activity first."""
    rows: list[RunRow] = []

    def take(thread: str, item: CheckpointTuple) -> None:
        values = item.checkpoint.get("channel_values") or {}
        row = RunRow(
            thread_id=thread,
            status=str(values.get("status") or "-"),
            turn=whole_int(values.get("turn")),
            step=whole_int(values.get("step")),
            pending=len(reviews_of_tuple(thread, item)),
            task=str(values.get("task") or ""),
            last_activity=aware_time(item.checkpoint.get("ts")),
        )
        rows.append(row)

    each_newest_root(checkpointer, take)
    rows.sort(key=lambda r: (r.last_activity is not None, r.last_activity, r.thread_id))
    rows.reverse()
    return rows

"""The runs (threads) in a checkpoint database, for `lgsp runs` (private; used by `commands.py`).

Each thread's newest root checkpoint holds its status, turn and step, and the reviews it is
waiting on (read as the review desk's `list_reviews` reads them). On Postgres a page of 500
threads' newest root checkpoints is read in two statements (their inline values and pending
writes, no blobs); on SQLite the threads are listed by query and each newest checkpoint
read with `get_tuple`, a thread at a time; other checkpointers are listed once with
`list(None)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from langgraph_supervisor_pro._internal.records import aware_time, whole_int
from langgraph_supervisor_pro.review._desk import each_newest_root, reviews_of_tuple

__all__ = ["RunRow", "list_runs"]


@dataclass(frozen=True, kw_only=True)
class RunRow:
    """One thread: where its run stands and when it last moved.

    Example:
        >>> RunRow(thread_id="t1", status="done", turn=1, step=2, pending=0,
        ...        task="Refund A1001", last_activity=None).to_dict()["status"]
        'done'
    """

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

        Returns:
            A dict with the row's fields.

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
    """Every thread in the database, newest activity first.

    Args:
        checkpointer: An open checkpointer (e.g. from `open_checkpointer`).

    Returns:
        One row per thread.

    Example:
        ```python
        with open_checkpointer("postgresql://app@db/app") as saver:
            for row in list_runs(saver):
                print(row.thread_id, row.status, row.pending)
        ```
    """
    rows: list[RunRow] = []

    def take(thread: str, item: CheckpointTuple) -> None:
        rows.append(_row(thread, item, len(reviews_of_tuple(thread, item))))

    each_newest_root(checkpointer, take)
    rows.sort(key=lambda r: (r.last_activity is not None, r.last_activity, r.thread_id))
    rows.reverse()
    return rows


def _row(thread: str, item: CheckpointTuple, pending: int) -> RunRow:
    values = item.checkpoint.get("channel_values") or {}
    return RunRow(
        thread_id=thread,
        status=str(values.get("status") or "-"),
        turn=whole_int(values.get("turn")),
        step=whole_int(values.get("step")),
        pending=pending,
        task=str(values.get("task") or ""),
        last_activity=aware_time(item.checkpoint.get("ts")),
    )

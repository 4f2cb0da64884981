"""What each node's own trace run records (private): a slim view of the state, not all of it.

A node's metadata says its role (and worker) and clears the keys of an enclosing hop
(`node_metadata`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import TracePolicy

_LEDGER_TAIL = 8


def slim_state(state: Any) -> Any:
    """The task, where the run stands, the hop in flight and the last ledger lines."""
    if not isinstance(state, Mapping):
        return state
    ledger = list(state.get("ledger") or ())
    return {
        "task": state.get("task"),
        "turn": state.get("turn"),
        "step": state.get("step"),
        "status": state.get("status"),
        "route": state.get("route"),
        "ledger_size": len(ledger),
        "ledger_tail": ledger[-_LEDGER_TAIL:],
    }


NODE_TRACE_POLICY = TracePolicy(process_inputs=slim_state)

# One hop's metadata keys on its agent's run (`lgsp_path` holds for every run below it).
HOP_METADATA_KEYS = (
    "lgsp_worker",
    "lgsp_step",
    "lgsp_turn",
    "lgsp_instructions",
    "lgsp_autonomy",
    "lgsp_dispatched_at",
)


def node_metadata(role: str, worker: str | None = None) -> dict[str, Any]:
    """A node's trace metadata: its role and worker, with an enclosing hop's keys cleared.

    A domain's nodes run inside their parent's hop, and LangChain copies a run's metadata
    to every run below it: without this they would show the parent hop's step and turn.

    Example:
        >>> meta = node_metadata("worker", "pager")
        >>> meta["lgsp_role"], meta["lgsp_worker"], meta["lgsp_step"]
        ('worker', 'pager', None)
    """
    return {**dict.fromkeys(HOP_METADATA_KEYS), "lgsp_role": role, "lgsp_worker": worker}

"""What each node's own trace run records (private).

A node's input is the whole graph state, worker transcripts included; recording it
on every node run would make traces grow with every hop. Nodes record the slim view
instead: the task, where the run stands, the hop in flight and the last ledger lines.

A node's metadata says its role (and worker) and clears the keys of an enclosing hop
(`node_metadata`): in a tree of supervisors a domain's nodes run inside their parent's
hop, and LangChain copies a run's metadata to every run below it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import TracePolicy

_LEDGER_TAIL = 8


def slim_state(state: Any) -> Any:
    """The part of the state worth recording on a node's run."""
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

HOP_METADATA_KEYS = (
    "lgsp_worker",
    "lgsp_step",
    "lgsp_turn",
    "lgsp_instructions",
    "lgsp_autonomy",
    "lgsp_dispatched_at",
)
"""The metadata keys of one worker hop (on its agent's run). `lgsp_path` is not one: it
says where in a tree of supervisors a run is, which holds for every run below the hop."""


def node_metadata(role: str, worker: str | None = None) -> dict[str, Any]:
    """A node's trace metadata: its role and worker, with an enclosing hop's keys cleared.

    A domain (a supervisor graph used as a worker's agent) runs inside its parent's hop,
    whose agent run carries that hop's `lgsp_step`, `lgsp_instructions`, ...; LangChain
    copies a run's metadata to every run below it, so without this a domain's decisions
    and hops would show the parent hop's step, turn and instructions. A node's metadata
    takes precedence over what it inherits, and `None` reads as "not this run's".

    Example:
        >>> meta = node_metadata("worker", "pager")
        >>> meta["lgsp_role"], meta["lgsp_worker"], meta["lgsp_step"]
        ('worker', 'pager', None)
    """
    return {**dict.fromkeys(HOP_METADATA_KEYS), "lgsp_role": role, "lgsp_worker": worker}

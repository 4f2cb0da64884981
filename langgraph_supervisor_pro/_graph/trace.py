"""What each node's own trace run records (private).

A node's input is the whole graph state, worker transcripts included; recording it
on every node run would make traces grow with every hop. Nodes record the slim view
instead: the task, where the run stands, the hop in flight and the last ledger lines.
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

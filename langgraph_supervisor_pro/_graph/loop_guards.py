"""Loop guards (private): hop budget, visit budgets, ping-pong; see docs/concepts/halts.md.

Each returns a `(reason, detail)` pair when the proposed hop must not run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langgraph_supervisor_pro._contracts import HaltReason
from langgraph_supervisor_pro._state import LedgerEntry

Halt = tuple[HaltReason, str]


def check_max_steps(step: int, max_steps: int) -> Halt | None:
    """Halt when `step` hops have already run and the budget is `max_steps`."""
    if step >= max_steps:
        return (
            "max_steps",
            f"the run used its budget of {max_steps} hops (max_steps={max_steps}) and the "
            "supervisor still wanted another worker",
        )
    return None


def check_max_visits(
    worker: str, ledger: Sequence[LedgerEntry], max_visits: Mapping[str, int | None]
) -> Halt | None:
    """Halt when `worker` already ran as often as its `max_visits` allows in this turn."""
    limit = max_visits.get(worker)
    if limit is None:
        return None
    visits = sum(1 for entry in ledger if entry["worker"] == worker)
    if visits >= limit:
        return (
            "max_visits",
            f"worker {worker!r} already ran {visits} times this run (max_visits={limit})",
        )
    return None


def check_ping_pong(worker: str, ledger: Sequence[LedgerEntry], window: int | None) -> Halt | None:
    """Halt when the hop makes `window` hops alternating A, B, A, B with no success between.

    Alternating workers that keep succeeding are a pipeline, not a loop.
    """
    if window is None or len(ledger) < window - 1:
        return None
    tail = list(ledger[len(ledger) - (window - 1) :])
    sequence = [entry["worker"] for entry in tail] + [worker]
    a, b = sequence[0], sequence[1]
    if (
        a == b
        or any(name != (a, b)[i % 2] for i, name in enumerate(sequence))
        or any(entry["status"] == "success" for entry in tail)
    ):
        return None
    return (
        "ping_pong",
        f"workers {a!r} and {b!r} were about to alternate for {window} hops in a row with no "
        f"success in between (ping_pong_window={window})",
    )


def check_fan_out(step: int, width: int, max_steps: int) -> Halt | None:
    """Halt when a parallel decision's `width` hops would overrun the hop budget."""
    if step + width > max_steps:
        left = max(max_steps - step, 0)
        return (
            "max_steps",
            f"the supervisor asked for {width} parallel hops with {left} of its budget of "
            f"{max_steps} hops left (max_steps={max_steps})",
        )
    return None

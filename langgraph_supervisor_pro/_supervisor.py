"""The supervisor's public vocabulary: what it sees for a decision, and a deterministic router.

The routing node itself is `_graph/supervisor_node.py`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from langgraph_supervisor_pro._contracts import RouteDecision
from langgraph_supervisor_pro._state import LedgerEntry

DEFAULT_SUPERVISOR_PROMPT = (
    "You are a supervisor: you route work to workers and never do it yourself. Pick the "
    "worker best placed to make progress and give it short, specific instructions (it sees "
    "only the task and them), or FINISH when the task is done or cannot progress."
)
"""The instructions at the top of the supervisor's system message (`prompt` replaces them)."""


@dataclass(frozen=True, kw_only=True)
class SupervisorView:
    """What the supervisor sees for one decision; also what a `router` receives.

    Example:
        >>> def router(view: SupervisorView) -> str | None:
        ...     if not view.ledger:
        ...         return "researcher"  # always start with research
        ...     return None  # let the model decide the rest
    """

    task: str
    """The user's task for this turn."""
    step: int
    """Hops already run in this turn."""
    turn: int
    """The conversation turn, from 1."""
    ledger: tuple[LedgerEntry, ...]
    """This turn's ledger, oldest first."""
    visits: Mapping[str, int]
    """Hops per worker in this turn."""
    workers: tuple[str, ...]
    """The worker names, in catalogue order."""
    unavailable: Mapping[str, str] = field(default_factory=dict)
    """Workers whose circuit breaker is open (or whose own budget is spent), and why; a
    route to one is invalid unless it has a `fallback`."""
    spent: Mapping[str, float] = field(default_factory=dict)
    """With a budget: `{"tokens": ..., "cost": ...}` spent in the budget's scope (this turn
    or this thread), as recorded; empty without one."""
    remaining: Mapping[str, float] = field(default_factory=dict)
    """With a budget: what is left of each limit (`tokens`, `cost`), counting the budgets of
    the levels above a domain; empty without one."""


_Decision: TypeAlias = str | RouteDecision | Mapping[str, Any]

_RouterAnswer: TypeAlias = _Decision | Sequence[_Decision] | None

Router: TypeAlias = (
    Callable[[SupervisorView], _RouterAnswer] | Callable[[SupervisorView], Awaitable[_RouterAnswer]]
)
"""Deterministic routing: return a worker name, "FINISH", a RouteDecision (or dict), a list
of them for a parallel fan-out, or None to let the model decide."""

"""A supervisor graph's budgets at run time (private).

`Budgets.levels` gives a node's model calls the limits they are checked against (the graph's
budget and the worker's own); `Budgets.check` runs before each decision: it halts a run
whose budget is spent, warns (or pauses for a review) past `warn_at`, and marks workers
whose own budget is spent as unavailable. Spending is read from the state's `usage`, so it
survives crashes and resumes exactly (docs/architecture.md, "Budgets").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from langchain_core.runnables import RunnableConfig

from langgraph_supervisor_pro._budget import Budget, Measure, spend_of
from langgraph_supervisor_pro._graph.usage import Level, Pool, UsageMeter, UsageRecorder, pool
from langgraph_supervisor_pro._internal.hop import hop_context
from langgraph_supervisor_pro._state import BudgetEvent, ReviewEntry, SupervisorState
from langgraph_supervisor_pro.review._gate import (
    ApproveDecision,
    EditDecision,
    gate_request,
    request_review_answer,
)
from langgraph_supervisor_pro.review._policy import ReviewPolicy

_RAISE = "budget:raise"
"""The review's action name: approve raises the limit, edit sets it, reject finishes."""


@dataclass
class BudgetCheck:
    """What the check before a decision found."""

    events: list[BudgetEvent] = field(default_factory=list)
    reviews: list[ReviewEntry] = field(default_factory=list)
    halt: str | None = None
    """Why the run halts with `budget_exceeded`, else None."""
    finish: str | None = None
    """Why the run finishes now (a reviewer rejected more spending), else None."""
    spent: dict[str, float] = field(default_factory=dict)
    remaining: dict[str, float] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)

    def update(self) -> dict[str, Any]:
        """The state writes of the check: its events and answered reviews."""
        writes: dict[str, Any] = {}
        if self.events:
            writes["budget_events"] = self.events
        if self.reviews:
            writes["reviews"] = self.reviews
        return writes


def _shown(measure: str, amount: float) -> str:
    return f"{amount:,.0f} tokens" if measure == "tokens" else f"{amount:,.4f} (cost)"


@dataclass(frozen=True)
class Budgets:
    """The budgets of one graph: its own (with the price table) and its workers'."""

    budget: Budget | None = None
    workers: Mapping[str, Budget] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        """Whether any limit is set here (a price table alone only prices the calls)."""
        return bool(
            (self.budget is not None and self.budget.limits)
            or any(b.limits for b in self.workers.values())
        )

    def _scope_turn(self, budget: Budget, turn: int) -> int | None:
        return turn if budget.per == "turn" else None

    def in_force(
        self, budget: Budget, state: Mapping[str, Any], turn: int, worker: str | None
    ) -> dict[Measure, float]:
        """The limits of `budget`, raised by approved warnings within its scope."""
        limits = budget.limits
        for event in state.get("budget_events") or ():
            if (
                event.get("kind") == "approved"
                and event.get("worker") == worker
                and event.get("measure") in limits
                and (budget.per == "thread" or event.get("turn") == turn)
            ):
                measure = cast(Measure, event["measure"])
                limits[measure] = max(limits[measure], float(event["limit"]))
        return limits

    def level(
        self,
        budget: Budget,
        state: Mapping[str, Any],
        turn: int,
        worker: str | None,
        in_flight: Pool | None = None,
        entries: Iterable[Mapping[str, Any]] | None = None,
    ) -> Level:
        """One budget's level: its limits in force and what its scope spent so far.

        `entries`: the usage entries to count (default: the state's).
        """
        label = f"worker {worker!r}'s budget" if worker else "the graph's budget"
        committed = spend_of(
            entries if entries is not None else state.get("usage") or (),
            turn=self._scope_turn(budget, turn),
            worker=worker,
        )
        return Level(
            label=label,
            limits=self.in_force(budget, state, turn, worker),
            committed=committed,
            pool=in_flight if in_flight is not None else Pool(),
        )

    def levels(
        self, state: Mapping[str, Any], config: RunnableConfig, *, worker: str | None
    ) -> list[Level]:
        """The budgets a node's model calls are checked against (shared by its branches)."""
        graph = self.budget if self.budget is not None and self.budget.limits else None
        own = self.workers.get(worker) if worker is not None else None
        if own is not None and not own.limits:
            own = None
        if graph is None and own is None:  # nothing limited: no pool to find
            return []
        turn = int(state.get("turn", 1))
        key = _pool_key(config, state)
        found: list[Level] = []
        if graph is not None:
            found.append(self.level(graph, state, turn, None, pool(f"{key}|graph")))
        if own is not None:
            found.append(self.level(own, state, turn, worker, pool(f"{key}|worker:{worker}")))
        return found

    def recorder(
        self,
        state: Mapping[str, Any] | None = None,
        config: RunnableConfig | None = None,
        *,
        worker: str | None = None,
        meter: UsageMeter | None = None,
        summarizer: UsageMeter | None = None,
    ) -> UsageRecorder:
        """A recorder for a node's calls; checked against the budgets when `state` is given."""
        levels = self.levels(state, config or {}, worker=worker) if state is not None else ()
        return UsageRecorder(meter, summarizer=summarizer, budget=self.budget, levels=levels)

    def check(
        self,
        state: SupervisorState,
        intake: Mapping[str, Any],
        config: RunnableConfig,
        *,
        policy: ReviewPolicy,
        step: int,
    ) -> BudgetCheck:
        """The check before a decision (it may pause for a review of a warning)."""
        values: dict[str, Any] = {**state, **intake}
        turn = int(values.get("turn", 1))
        parent = hop_context(config)
        path = list(parent.path) if parent is not None else []
        out = BudgetCheck()
        budget = self.budget
        scope_turn = turn if budget is None or budget.per == "turn" else None
        out.spent = spend_of(values.get("usage") or (), turn=scope_turn).as_dict()
        levels: list[Level] = []
        if budget is not None and budget.limits:
            own = self.level(budget, values, turn, None)
            levels.append(own)
            reached = own.over()
            if reached is not None:
                self._exceeded(out, values, own, budget, reached, None, path, step)
            else:
                self._warning(out, values, own, budget, config, policy, path, step)
        for above in parent.budgets if parent is not None else ():
            levels.append(above)
            reached = above.over()
            if reached is not None and out.halt is None:
                measure, spent, limit = reached
                out.halt = f"{above.label} (above this domain) is spent: " + (
                    f"{_shown(measure, spent)} of {_shown(measure, limit)}"
                )
        by_worker: dict[str, list[Mapping[str, Any]]] = {}  # one pass, not one per budget
        if self.workers:
            for entry in values.get("usage") or ():
                by_worker.setdefault(entry.get("worker"), []).append(entry)
        for name, own_budget in self.workers.items():
            level = self.level(own_budget, values, turn, name, entries=by_worker.get(name, []))
            reached = level.over()
            if reached is not None:
                measure, spent, limit = reached
                out.unavailable[name] = (
                    f"its budget is spent ({_shown(measure, spent)} of {_shown(measure, limit)})"
                )
                if not _recorded(values, "exceeded", measure, limit, name, own_budget, turn):
                    event = _event(
                        turn, step, "exceeded", measure, spent, limit, own_budget, name, path
                    )
                    out.events.append(event)
        for level in levels:
            for measure, left in level.remaining().items():
                out.remaining[measure] = min(out.remaining.get(measure, math.inf), left)
        return out

    def _exceeded(
        self,
        out: BudgetCheck,
        values: Mapping[str, Any],
        level: Level,
        budget: Budget,
        reached: tuple[Measure, float, float],
        worker: str | None,
        path: list[str],
        step: int,
    ) -> None:
        measure, spent, limit = reached
        turn = int(values.get("turn", 1))
        event = _event(turn, step, "exceeded", measure, spent, limit, budget, worker, path)
        out.events.append(event)
        scope = "this turn" if budget.per == "turn" else "this thread"
        out.halt = (
            f"{level.label} is spent: {_shown(measure, spent)} of {_shown(measure, limit)} {scope}"
        )

    def _warning(
        self,
        out: BudgetCheck,
        values: Mapping[str, Any],
        level: Level,
        budget: Budget,
        config: RunnableConfig,
        policy: ReviewPolicy,
        path: list[str],
        step: int,
    ) -> None:
        turn = int(values.get("turn", 1))
        spent = level.spent()
        for measure, limit in level.limits.items():
            amount = spent.of(measure)
            if amount < budget.warn_at * limit or _recorded(
                values, "warning", measure, limit, None, budget, turn
            ):
                continue
            warning = _event(turn, step, "warning", measure, amount, limit, budget, None, path)
            out.events.append(warning)
            if budget.on_warning == "review":
                self._review(out, values, budget, measure, amount, limit, config, policy, path)
            return

    def _review(
        self,
        out: BudgetCheck,
        values: Mapping[str, Any],
        budget: Budget,
        measure: Measure,
        spent: float,
        limit: float,
        config: RunnableConfig,
        policy: ReviewPolicy,
        path: list[str],
    ) -> None:
        turn = int(values.get("turn", 1))
        step = int(values.get("step", 0))
        raised = limit + budget.limits[measure]
        key = "max_tokens" if measure == "tokens" else "max_cost"
        scope = "this turn" if budget.per == "turn" else "this thread"
        route = values.get("route") or {}
        answer = request_review_answer(
            gate_request(
                kind="budget",
                action=_RAISE,
                args={key: raised},
                description=(
                    f"{_shown(measure, spent)} of {_shown(measure, limit)} spent {scope} "
                    f"({spent / limit:.0%}). Approve to raise the limit to "
                    f"{_shown(measure, raised)}; edit `{key}` to set another; reject to finish "
                    "with what is done."
                ),
                task=str(values.get("task", "")),
                worker=None,
                risk=None,
                tier=str(values.get("autonomy") or policy.tier),
                reason=f"budget warning: {budget.warn_at:.0%} of the {measure} limit",
                summary=f"{len([e for e in values.get('ledger') or () if e['turn'] == turn])} "
                "hops this turn",
                dispatched_at=route.get("at") if isinstance(route, Mapping) else None,
                step=step,
                turn=turn,
                path=path,
                policy=policy,
                config=config,
            ),
            escalation_timeout=policy.review_timeout,
            policy=policy,
        )
        out.reviews.append(answer.entry(turn=turn, step=step or None))
        decision = answer.decision
        if isinstance(decision, ApproveDecision | EditDecision):
            if isinstance(decision, EditDecision):
                raised = _edited_limit(decision.edited_action.args.get(key), raised)
            event = _event(turn, step, "approved", measure, spent, raised, budget, None, path)
            event["reviewer"] = answer.reviewer
            out.events.append(event)
            return
        event = _event(turn, step, "rejected", measure, spent, limit, budget, None, path)
        event["reviewer"] = answer.reviewer
        out.events.append(event)
        why = getattr(decision, "message", None)
        out.finish = "the reviewer stopped at the budget warning" + (f": {why}" if why else "")


def _edited_limit(value: object, default: float) -> float:
    """A reviewer's edited limit; one that is not a finite number >= 0 keeps `default`."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return default
    try:
        number = float(value)
    except ValueError:
        return default
    return number if math.isfinite(number) and number >= 0 else default


def _recorded(
    values: Mapping[str, Any],
    kind: str,
    measure: str,
    limit: float,
    worker: str | None,
    budget: Budget,
    turn: int,
) -> bool:
    """Whether an event of `kind` was recorded for this limit in the budget's scope."""
    return any(
        e.get("kind") == kind
        and e.get("measure") == measure
        and e.get("worker") == worker
        and float(e.get("limit", -1)) == limit
        and (budget.per == "thread" or e.get("turn") == turn)
        for e in values.get("budget_events") or ()
    )


def _event(
    turn: int,
    step: int,
    kind: Any,
    measure: Measure,
    spent: float,
    limit: float,
    budget: Budget,
    worker: str | None,
    path: Sequence[str],
) -> BudgetEvent:
    return BudgetEvent(
        turn=turn,
        step=step,
        kind=kind,
        measure=measure,
        spent=round(spent, 10),
        limit=limit,
        scope=budget.per,
        worker=worker,
        path=list(path),
        at=datetime.now(UTC).isoformat(),
    )


def _pool_key(config: RunnableConfig, state: Mapping[str, Any]) -> str:
    """The decision a node's calls belong to: its graph's checkpoint (one per super-step)."""
    configurable = config.get("configurable") or {}
    ns = str(configurable.get("checkpoint_ns", ""))
    level = ns.rpartition("|")[0]  # the graph the node belongs to
    checkpoints = configurable.get("checkpoint_map") or {}
    at = checkpoints.get(level) if isinstance(checkpoints, Mapping) else None
    if at is None:  # no checkpointer: the decision's turn, step and time
        route = state.get("route") or {}
        at = f"{state.get('turn')}:{state.get('step')}:{route.get('at') if route else ''}"
    return f"{configurable.get('thread_id', '')}|{level}|{at}"

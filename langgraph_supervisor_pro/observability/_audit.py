"""The audit trail of one run: a readable, typed timeline for a compliance reader.

One frozen event per thing that happened, oldest first, from the thread's checkpoint history
(`_history.History`); the trail scrubs the secrets registered in this process once more.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/audit/
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, LiteralString, cast

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.store.base import BaseStore

from langgraph_supervisor_pro._budget import spend_of
from langgraph_supervisor_pro._internal.records import aware_time, namespace_path, whole_int
from langgraph_supervisor_pro._internal.scrub import registered, scrub
from langgraph_supervisor_pro._internal.text import shown_id
from langgraph_supervisor_pro.observability._history import History
from langgraph_supervisor_pro.persistence._effects import (
    PostgresEffects,
    StoreEffects,
    worker_of,
)
from langgraph_supervisor_pro.review._desk import reviews_pending_at

EventKind = Literal[
    "turn",
    "decision",
    "hop",
    "review",
    "refusal",
    "effect",
    "compaction",
    "budget",
    "end",
    "judgement",
]


def shown_amount(measure: str, value: float) -> str:
    """A budget's amount as text: whole tokens; a cost to 2 places, 4 digits under 1.

    Example:
        >>> shown_amount("tokens", 8100.0), shown_amount("cost", 12.5)
        ('8,100', '12.50')
        >>> shown_amount("cost", 0.00123), shown_amount("cost", 0.0000015)
        ('0.00123', '0.0000015')
    """
    if measure == "tokens":
        return f"{value:,.0f}"
    if value >= 1 or value <= 0:
        return f"{value:,.2f}"
    digits = 3 - math.floor(math.log10(value))  # 4 significant digits, never an exponent
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")


@dataclass(frozen=True, kw_only=True)
class AuditEvent:
    """What every event of the trail has: when, what kind, which turn and hop, where.

    Example:
        >>> from datetime import UTC, datetime
        >>> TurnEvent(at=datetime(2026, 1, 1, tzinfo=UTC), turn=1, step=None, path=(),
        ...           task="Refund A1001").to_dict()["kind"]
        'turn'
    """

    kind: EventKind = field(init=False)
    at: datetime | None
    """When the checkpoint that recorded it was written (UTC)."""
    turn: int | None
    step: int | None
    path: tuple[str, ...]
    """Where it happened: () at the root, else the domain workers from the root down."""

    def line(self) -> str:
        """The event in one readable sentence (without its time).

        Example:
            >>> HopEvent(at=None, turn=1, step=1, path=(), worker="a", status="success",
            ...          summary="Done.", error=None, fallback=None).line()
            'a: success: Done.'
        """
        return self.kind

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON-ready values (the time in ISO 8601, the path a list).

        Example:
            >>> TurnEvent(at=None, turn=2, step=None, path=(), task="Hi").to_dict()
            {'kind': 'turn', 'at': None, 'turn': 2, 'step': None, 'path': [], 'task': 'Hi'}
        """
        out = asdict(self)
        out["at"] = self.at.isoformat() if self.at else None
        for name in ("path", "review_path", "budget_path"):
            if name in out:
                out[name] = list(out[name])
        return out


@dataclass(frozen=True, kw_only=True)
class TurnEvent(AuditEvent):
    """A user message started a turn."""

    kind: EventKind = field(default="turn", init=False)
    task: str

    def line(self) -> str:
        return f"turn {self.turn}: {self.task}"


@dataclass(frozen=True, kw_only=True)
class DecisionEvent(AuditEvent):
    """The supervisor chose the next worker (or `FINISH`)."""

    kind: EventKind = field(default="decision", init=False)
    worker: str
    instructions: str
    decided_by: str
    """Who decided: `router`, `model` or `fallback`."""

    def line(self) -> str:
        said = f": {self.instructions}" if self.instructions else ""
        return f"{self.decided_by} chose {self.worker}{said}"


@dataclass(frozen=True, kw_only=True)
class HopEvent(AuditEvent):
    """A worker's hop ended (a ledger entry)."""

    kind: EventKind = field(default="hop", init=False)
    worker: str
    status: str
    summary: str
    error: str | None
    fallback: str | None
    """Why the worker's fallback answered the hop, when it did."""
    tokens: int = 0
    """Input plus output tokens of the hop's model calls (every call under it), when the
    graph prices its calls (`Budget(prices=...)`); else 0."""
    cost: float | None = None
    """Their cost; None when none was priced (see `unpriced`)."""
    unpriced: int = 0
    """Model calls of the hop with no price."""

    def line(self) -> str:
        text = f"{self.worker}: {self.status}"
        if self.summary and not (self.error and self.error in self.summary):
            text += f": {self.summary}"  # (a failed hop's summary is often its error)
        if self.error:
            text += f" (error: {self.error})"
        if self.fallback:
            text += f" (fallback answered: {self.fallback})"
        if self.tokens:
            spent = f"{self.tokens:,} tokens"
            if self.cost is not None:
                spent += f", cost {shown_amount('cost', self.cost)}"
            if self.unpriced:
                spent += f", {self.unpriced} unpriced calls"
            text += f" [{spent}]"
        return text


@dataclass(frozen=True, kw_only=True)
class ReviewEvent(AuditEvent):
    """A review was answered (a `ReviewEntry` of the `reviews` channel)."""

    kind: EventKind = field(default="review", init=False)
    action: str
    """The tool's name, or `dispatch:<worker>`."""
    review_kind: str
    worker: str | None
    decision: str
    reviewer: str | None
    answered_at: str
    interrupt_id: str
    review_path: tuple[str, ...]
    """Where the review paused (worker names from the root down)."""

    def line(self) -> str:
        who = self.reviewer or "nobody named"
        where = f" in {'/'.join(self.review_path)}" if len(self.review_path) > 1 else ""
        return f"{self.decision} by {who} on {self.action}{where} at {self.answered_at}"


@dataclass(frozen=True, kw_only=True)
class RefusalEvent(AuditEvent):
    """A tool call refused for least privilege (never executed)."""

    kind: EventKind = field(default="refusal", init=False)
    worker: str
    tool: str
    reason: str

    def line(self) -> str:
        return f"{self.worker} was refused {self.tool}: {self.reason}"


@dataclass(frozen=True, kw_only=True)
class EffectEvent(AuditEvent):
    """A side effect recorded under its idempotency key (`persistence.effects`)."""

    kind: EventKind = field(default="effect", init=False)
    key: str
    worker: str | None
    name: str
    outcome: Any
    state: str = "done"
    """`done`, or how an external effect in doubt stands (`run_external`): `intent`,
    `in_doubt`, `reconciled`, `redone`, `confirmed` or `skipped`."""

    @property
    def in_doubt(self) -> bool:
        """Whether the effect was (or is) in doubt: it may have run twice or not at all."""
        return self.state != "done"

    def line(self) -> str:
        outcome = json.dumps(self.outcome, ensure_ascii=False, default=str)
        doubt = {
            "intent": " (IN DOUBT: intent recorded, no outcome)",
            "in_doubt": " (IN DOUBT: waiting for a review)",
        }.get(self.state, f" (was in doubt: {self.state})" if self.in_doubt else "")
        return f"{self.worker or '-'} effect {self.name} [{self.key}] -> {outcome}{doubt}"


@dataclass(frozen=True, kw_only=True)
class CompactionEvent(AuditEvent):
    """A worker's history was compacted (a `CompactionEntry`)."""

    kind: EventKind = field(default="compaction", init=False)
    worker: str
    reason: str
    tokens_before: int
    tokens_after: int
    removed: int
    error: str | None
    how: str = "summary"
    """`summary`, or `truncated` (the summarizer failed or its breaker was open)."""

    def line(self) -> str:
        truncated = self.how == "truncated"
        text = (
            f"{self.worker}'s history {'truncated' if truncated else 'compacted'} "
            f"({self.reason}): {self.tokens_before} -> {self.tokens_after} tokens, "
            f"{self.removed} messages{' dropped' if truncated else ''}"
        )
        if self.error:
            text += f" ({'summarizer' if truncated else 'failed'}: {self.error})"
        return text


@dataclass(frozen=True, kw_only=True)
class BudgetEvent(AuditEvent):
    """A budget warning, a reviewer's answer to one, or a budget spent (a `budget_events` entry).

    Example:
        >>> BudgetEvent(at=None, turn=1, step=2, path=(), budget_kind="warning",
        ...     measure="tokens", spent=8100.0, limit=10000.0, scope="turn", worker="x",
        ...     budget_path=(), occurred_at="2030-01-01T00:00:00+00:00").line()
        'budget warning: tokens 8,100/10,000 (turn) [worker x]'
    """

    kind: EventKind = field(default="budget", init=False)
    budget_kind: str
    """`warning`, `approved` (a reviewer raised the limit), `rejected` (a reviewer stopped
    the run) or `exceeded` (the limit was reached: the run halted)."""
    measure: str
    """`tokens` or `cost` (in the price table's currency)."""
    spent: float
    limit: float
    """The limit in force (for `approved`: the raised one)."""
    scope: str
    """`turn` or `thread`: what the limit runs over."""
    worker: str | None
    """The worker whose own budget it is (`Worker(budget=...)`), else None: the graph's."""
    budget_path: tuple[str, ...]
    """The level that recorded it: worker names from the root down (() is the root)."""
    occurred_at: str
    """When the budget recorded it (ISO 8601, UTC)."""
    reviewer: str | None = None
    """Who answered the warning (`approved`, `rejected`)."""

    def line(self) -> str:
        by = f" by {self.reviewer}" if self.reviewer else ""
        text = (
            f"budget {self.budget_kind}{by}: {self.measure} "
            f"{shown_amount(self.measure, self.spent)}/{shown_amount(self.measure, self.limit)} "
            f"({self.scope})"
        )
        if self.worker:
            text += f" [worker {self.worker}]"
        if self.budget_path != self.path:
            text += f" in {'/'.join(self.budget_path) or 'the root'}"
        return text

    @property
    def key(self) -> tuple[object, ...]:
        """What tells it from another event (a copy recorded at another level has the same)."""
        return (
            self.budget_kind,
            self.measure,
            self.scope,
            self.worker,
            self.budget_path,
            self.occurred_at,
            self.spent,
            self.limit,
        )


@dataclass(frozen=True, kw_only=True)
class EndEvent(AuditEvent):
    """The run ended (`done`, `failed` or `halted`), or a domain halted or failed."""

    kind: EventKind = field(default="end", init=False)
    status: str
    halt_reason: str | None
    halt_detail: str | None
    tokens: int = 0
    """Tokens the thread's model calls spent so far (this level's record, every turn), when
    the graph prices its calls; else 0."""
    cost: float | None = None
    """Their cost; None when none was priced."""
    unpriced: int = 0

    def line(self) -> str:
        text = f"run {self.status}"
        if self.halt_reason:
            text += f": {self.halt_reason}"
        if self.halt_detail:
            text += f" ({self.halt_detail})"
        if self.tokens:
            cost = f", cost {shown_amount('cost', self.cost)}" if self.cost is not None else ""
            unpriced = f", {self.unpriced} unpriced calls" if self.unpriced else ""
            text += f" [thread so far: {self.tokens:,} tokens{cost}{unpriced}]"
        return text


@dataclass(frozen=True, kw_only=True)
class JudgementEvent(AuditEvent):
    """The online judge's verdict on a turn's answer (a `JudgementEntry`)."""

    kind: EventKind = field(default="judgement", init=False)
    judge: str
    score: float | None
    """From 0 to 1; None when the judge gave no verdict (see `error`)."""
    threshold: float
    queued: bool
    reasons: tuple[str, ...]
    error: str | None
    key: str

    def line(self) -> str:
        """One sentence: the score against the threshold, queued or not, and why.

        Example:
            >>> JudgementEvent(at=None, turn=1, step=None, path=(), judge="acme/j",
            ...     score=0.2, threshold=0.5, queued=True, reasons=("thin",), error=None,
            ...     key="t:1").line()
            'acme/j scored the answer 0.20 (below 0.50, queued for review): thin'
        """
        if self.score is None:
            return f"{self.judge} gave no verdict: {self.error}"
        low = self.score < self.threshold
        where = ", queued for review" if self.queued else ""
        text = f"{self.judge} scored the answer {self.score:.2f} "
        text += f"({'below' if low else 'at or above'} {self.threshold:.2f}{where})"
        if self.reasons:
            text += ": " + "; ".join(self.reasons)
        return text + (f" ({self.error})" if self.error else "")


@dataclass(frozen=True, kw_only=True)
class AuditTrail:
    """The timeline of one thread, oldest event first.

    Example:
        >>> AuditTrail(thread_id="t", events=()).to_dict()
        {'thread_id': 't', 'pending_reviews': 0, 'events': []}
    """

    thread_id: str
    events: tuple[AuditEvent, ...]
    pending_reviews: int = 0
    """Reviews the run is paused on now (its latest events are not its end)."""

    def to_dict(self) -> dict[str, Any]:
        """The trail as JSON-ready values."""
        return {
            "thread_id": self.thread_id,
            "pending_reviews": self.pending_reviews,
            "events": [e.to_dict() for e in self.events],
        }


# -- reading ---------------------------------------------------------------------------


def _clean(text: object) -> str:
    value = "" if text is None else str(text)
    secrets = registered()
    return scrub(value, secrets) if secrets and value else value


def _opt(text: object) -> str | None:
    return None if text is None else _clean(text)


def _texts(entry: Mapping[str, Any], *names: str) -> dict[str, Any]:
    return {name: _clean(entry.get(name)) for name in names}


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _spent(entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """An event's spend fields, for a graph with a price table (its calls carry `cost`).

    Tokens, the priced calls' cost (None: none priced) and the unpriced calls; none when the
    graph prices nothing.
    """
    priced = [e for e in entries if "cost" in e]
    if not priced:
        return {}
    unpriced = sum(1 for e in priced if e["cost"] is None)
    cost = spend_of(priced).cost if unpriced < len(priced) else None
    return {"tokens": spend_of(entries).tokens, "cost": cost, "unpriced": unpriced}


def _unwrap(value: object) -> object:
    """The value of an `Overwrite` write (the supervisor replaces `fanout` with one)."""
    inner = getattr(value, "value", None)
    return inner if type(value).__name__ == "Overwrite" else value


class _Level:
    """Folds one namespace's checkpoints, oldest first, into events."""

    def __init__(self, path: tuple[str, ...]) -> None:
        self.path = path
        self.turn: int | None = None
        self.status: object = None
        self.events: list[AuditEvent] = []
        self._decided: set[tuple[int | None, int | None, str]] = set()
        self._usage: list[Mapping[str, Any]] = []

    def fold(self, writes: Sequence[tuple[str, Any]], at: datetime | None) -> None:
        by_channel: dict[str, list[Any]] = {}
        for channel, value in writes:
            by_channel.setdefault(channel, []).append(value)
        # Parallel branches write in one step, in the order their tasks were saved (which
        # need not be the branches' order): list their entries by hop.
        by_hop = {
            channel: sorted(
                (e for batch in by_channel.get(channel, ()) for e in batch or ()),
                key=lambda e: (whole_int(e.get("turn")) or 0, whole_int(e.get("step")) or 0),
            )
            for channel in ("ledger", "security", "reviews", "compactions", "budget_events")
        }
        usage = [e for batch in by_channel.get("usage", ()) for e in batch or ()]
        self._usage.extend(usage)
        for value in by_channel.get("turn", ()):
            if whole_int(value) is not None:
                self.turn = cast(int, value)
        if not self.path:
            for value in by_channel.get("task", ()):
                self.events.append(
                    TurnEvent(at=at, turn=self.turn, step=None, path=(), task=_clean(value))
                )
        for value in by_channel.get("route", ()):
            self._decision(value, at)
        for value in by_channel.get("fanout", ()):
            branches = _unwrap(value)
            if isinstance(branches, Mapping):
                for branch in branches.values():
                    self._decision(branch, at)
        # In the order they happened within a step: compactions run before the hop,
        # tools are refused or reviewed during it, its ledger line ends it.
        self.events.extend(self._compaction(e, at) for e in by_hop["compactions"])
        self.events.extend(
            RefusalEvent(**self._where(e, at), **_texts(e, "worker", "tool", "reason"))
            for e in by_hop["security"]
        )
        if not self.path:  # a domain's reviews are copied to each level above
            self.events.extend(self._review(e, at) for e in by_hop["reviews"])
        self.events.extend(self._budget(e, at) for e in by_hop["budget_events"])
        self.events.extend(self._hop(e, at, usage) for e in by_hop["ledger"])
        for status in by_channel.get("status", ()):
            previous, self.status = self.status, status
            if status not in ("done", "failed", "halted") or status == previous:
                continue  # running, or the same end written again (the answer's node)
            if self.path and status == "done":
                continue  # a domain that finished is its parent's hop
            reasons = by_channel.get("halt_reason") or [None]
            details = by_channel.get("halt_detail") or [None]
            self.events.append(
                EndEvent(
                    at=at,
                    turn=self.turn,
                    step=None,
                    path=self.path,
                    status=str(status),
                    halt_reason=_opt(reasons[-1]),
                    halt_detail=_opt(details[-1]),
                    **_spent(self._usage),
                )
            )

        for entries in by_channel.get("judgements", ()):  # after the answer: the judge step
            self.events.extend(self._judgement(e, at) for e in entries or ())

    def _where(self, entry: Mapping[str, Any], at: datetime | None) -> dict[str, Any]:
        """The fields every event of an entry has: when, its turn and step, where."""
        turn, step = whole_int(entry.get("turn")), whole_int(entry.get("step"))
        return {"at": at, "turn": turn, "step": step, "path": self.path}

    def _compaction(self, entry: Mapping[str, Any], at: datetime | None) -> CompactionEvent:
        return CompactionEvent(
            **self._where(entry, at),
            **_texts(entry, "worker", "reason"),
            tokens_before=int(entry.get("tokens_before") or 0),
            tokens_after=int(entry.get("tokens_after") or 0),
            removed=int(entry.get("removed") or 0),
            error=_opt(entry.get("error")),
            how="truncated" if entry.get("kind") == "truncated" else "summary",
        )

    def _budget(self, entry: Mapping[str, Any], at: datetime | None) -> BudgetEvent:
        path = entry.get("path")
        return BudgetEvent(
            **self._where(entry, at),
            budget_kind=_clean(entry.get("kind")),
            **_texts(entry, "measure", "scope"),
            spent=_number(entry.get("spent")),
            limit=_number(entry.get("limit")),
            worker=_opt(entry.get("worker")),
            budget_path=tuple(map(_clean, path)) if isinstance(path, list | tuple) else self.path,
            occurred_at=_clean(entry.get("at")),
            reviewer=_opt(entry.get("reviewer")),
        )

    def _judgement(self, entry: Mapping[str, Any], at: datetime | None) -> JudgementEvent:
        score = entry.get("score")
        threshold = entry.get("threshold")
        return JudgementEvent(
            **self._where(entry, at),  # (a judgement has no step)
            judge=_clean(entry.get("judge")),
            score=float(score) if isinstance(score, int | float) else None,
            threshold=float(threshold) if isinstance(threshold, int | float) else 0.5,
            queued=entry.get("queued") is True,
            reasons=tuple(_clean(r) for r in entry.get("reasons") or ()),
            error=_opt(entry.get("error")),
            key=_clean(entry.get("key")),
        )

    def _decision(self, route: object, at: datetime | None) -> None:
        if not isinstance(route, Mapping) or "next" not in route:
            return
        step = whole_int(route.get("step"))
        worker = _clean(route.get("next"))
        key = (self.turn, step, worker)
        if key in self._decided:
            return  # the same decision, written again (a review re-ran, a branch moved on)
        self._decided.add(key)
        self.events.append(
            DecisionEvent(
                at=at,
                turn=self.turn,
                step=step,
                path=self.path,
                worker=worker,
                instructions=_clean(route.get("instructions")),
                decided_by=_clean(route.get("decided_by")),
            )
        )

    def _hop(
        self, entry: Mapping[str, Any], at: datetime | None, usage: Sequence[Mapping[str, Any]]
    ) -> HopEvent:
        mine = [
            u
            for u in usage
            if u.get("role") != "supervisor"
            and u.get("worker") == entry.get("worker")
            and u.get("turn") == entry.get("turn")
            and u.get("step") == entry.get("step")
        ]
        return HopEvent(
            **self._where(entry, at),
            **_texts(entry, "worker", "status", "summary"),
            error=_opt(entry.get("error")),
            fallback=_opt(entry.get("fallback")),
            **_spent(mine),
        )

    def _review(self, entry: Mapping[str, Any], at: datetime | None) -> ReviewEvent:
        return ReviewEvent(
            **self._where(entry, at),
            **_texts(entry, "action", "decision", "answered_at", "interrupt_id"),
            review_kind=_clean(entry.get("kind")),
            worker=_opt(entry.get("worker")),
            reviewer=_opt(entry.get("reviewer")),
            review_path=tuple(_clean(p) for p in entry.get("path") or ()),
        )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_PAGE = 500  # effects read from a store per search

EffectsSource = PostgresEffects | StoreEffects | BaseStore
"""Where side effects were recorded: `open_effects(url)`, a `StoreEffects`, or its store."""


def _events_of(namespace: str, chain: Sequence[CheckpointTuple]) -> list[AuditEvent]:
    """A namespace's events: the writes pending on checkpoint N formed checkpoint N+1."""
    level = _Level(namespace_path(namespace))
    for index, item in enumerate(chain):
        writes = [(str(w[1]), w[2]) for w in item.pending_writes or ()]
        if not writes:
            continue
        recorded = chain[index + 1] if index + 1 < len(chain) else item
        level.fold(writes, aware_time(recorded.checkpoint.get("ts")))
    return level.events


def _once(events: list[AuditEvent]) -> list[AuditEvent]:
    """The events with each budget event once (a level above may hold a copy of it)."""
    seen: set[tuple[object, ...]] = set()
    kept: list[AuditEvent] = []
    for event in events:
        if isinstance(event, BudgetEvent):
            if event.key in seen:
                continue
            seen.add(event.key)
        kept.append(event)
    return kept


def _effect(key: str, outcome: Any, at: object, state: object = "done") -> EffectEvent:
    parts = key.split("/")
    turn = step = None
    worker: str | None = None
    name = key
    if len(parts) >= 5:
        turn = int(parts[1]) if parts[1].isdigit() else None
        step = int(parts[2]) if parts[2].isdigit() else None
        worker = worker_of(parts[3]).replace("%2F", "/").replace("%25", "%")
        name = "/".join(parts[4:])
    return EffectEvent(
        at=aware_time(at),
        turn=turn,
        step=step,
        path=(),
        key=_clean(key),
        worker=_opt(worker),
        name=_clean(name),
        outcome=outcome,
        state=_clean(state) if isinstance(state, str) and state else "done",
    )


_HAS_STATE: LiteralString = (
    "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('lgsp_effects') "
    "AND attname = 'state' AND NOT attisdropped) AS found"
)


def _found(conn: Any, query: LiteralString) -> bool:
    row = conn.execute(query).fetchone()
    return bool(row["found"] if isinstance(row, dict) else row and row[0])


def _effects(effects: EffectsSource, thread_ids: Sequence[str]) -> list[EffectEvent]:
    if not thread_ids:
        return []
    if isinstance(effects, PostgresEffects):
        with effects.pool.connection() as conn:
            if not _found(conn, "SELECT to_regclass('lgsp_effects') IS NOT NULL AS found"):
                return []  # no effect was ever recorded in this database
            # A table made before effects had a state (setup=False skips the migration).
            state: LiteralString = "state" if _found(conn, _HAS_STATE) else "'done'"
            rows = conn.execute(
                "SELECT key, outcome, created_at, " + state + " AS state FROM lgsp_effects "
                "WHERE thread_id = ANY(%s) ORDER BY created_at, key",
                (list(thread_ids),),
            ).fetchall()
        return [
            _effect(str(key), outcome, created, state)
            for key, outcome, created, state in (
                row.values() if isinstance(row, dict) else row for row in rows
            )
        ]
    store = effects.store if isinstance(effects, StoreEffects) else effects
    recorded: list[EffectEvent] = []
    for thread_id in dict.fromkeys(thread_ids):
        namespace = StoreEffects.thread_namespace(thread_id)
        offset = 0
        while True:
            page = store.search(namespace, limit=_PAGE, offset=offset)
            offset += len(page)
            recorded.extend(
                _effect(item.key, (item.value or {}).get("outcome"), item.created_at)
                for item in page
            )
            if len(page) < _PAGE:
                break
    recorded.sort(key=lambda e: (e.at is None, e.at or _EPOCH, e.key))
    return recorded


def recorded_effects(
    effects: EffectsSource | Sequence[EffectsSource] | None, thread_ids: Sequence[str]
) -> list[EffectEvent]:
    """The effects recorded for some threads in one or several sources, oldest first per source.

    None reads nothing; anything but effects sources (see `EffectsSource`) raises TypeError.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> store = InMemoryStore()
        >>> StoreEffects(store).run("t-1/1/1/mailer/email", lambda key: "sent")
        'sent'
        >>> [(e.name, e.state) for e in recorded_effects(store, ["t-1"])]
        [('email', 'done')]
    """
    kinds = (PostgresEffects, StoreEffects, BaseStore)
    if isinstance(effects, kinds):
        sources: list[EffectsSource] = [effects]
    elif effects is None or (isinstance(effects, Sequence) and not isinstance(effects, str)):
        sources = list(effects or ())
    else:
        sources = [cast(EffectsSource, effects)]
    for source in sources:
        if not isinstance(source, kinds):
            raise TypeError(
                f"effects: got {type(source).__name__}; give open_effects(url), a StoreEffects "
                "or a BaseStore (or a list of them)"
            )
    return [e for source in sources for e in _effects(source, thread_ids)]


def _with_effects(events: list[AuditEvent], effects: list[EffectEvent]) -> list[AuditEvent]:
    """Each effect just before the end of the hop its key names (with the hop's path).

    Not by time: an effect store's clock is not the checkpoints' (SQLite's is to the second).
    An effect whose hop never ended (the hop crashed after it) is placed by its own time.
    """
    pending: dict[tuple[int | None, int | None, str | None], list[EffectEvent]] = {}
    for effect in effects:
        pending.setdefault((effect.turn, effect.step, effect.worker), []).append(effect)
    out: list[AuditEvent] = []
    for event in events:
        if isinstance(event, HopEvent):
            for effect in pending.pop((event.turn, event.step, event.worker), ()):
                out.append(replace(effect, path=event.path))
        out.append(event)
    for effect in (e for group in pending.values() for e in group):
        at = effect.at
        out.insert(
            next((i for i, e in enumerate(out) if at and e.at and e.at > at), len(out)), effect
        )
    return out


def audit_trail(
    checkpointer_or_graph: BaseCheckpointSaver[Any] | Any,
    thread_id: str,
    *,
    effects: EffectsSource | Sequence[EffectsSource] | None = None,
) -> AuditTrail:
    """The timeline of one thread: decisions, hops, reviews, refusals, effects, budgets, ends.

    Args:
        checkpointer_or_graph: The checkpointer the runs used (`open_checkpointer`),
            or a graph compiled with it.
        thread_id: The thread (run) to read.
        effects: Where the run's side effects were recorded (`open_effects(url)`,
            a `StoreEffects`, or its store; or a list of them), to list them with
            their keys; None leaves effects out (the checkpoints do not hold them).

    Returns:
        The trail, oldest event first (events of equal time in the order written).

    Raises:
        LookupError: The thread has no checkpoints.
        TypeError: `checkpointer_or_graph` is neither a checkpointer nor a graph
            compiled with one, or `effects` is not an effects source.

    Example:
        ```python
        with open_checkpointer(url) as saver, open_effects(url) as effects:
            trail = audit_trail(saver, "order-7", effects=effects)
        [(e.kind, e.line()) for e in trail.events][:2]
        # [('turn', 'turn 1: Refund A1001'), ('decision', 'router chose cashier')]
        ```
    """
    saver = checkpointer_or_graph
    if not isinstance(saver, BaseCheckpointSaver):
        saver = getattr(saver, "checkpointer", None)
    if not isinstance(saver, BaseCheckpointSaver):
        raise TypeError(
            "audit_trail(checkpointer_or_graph, ...): give a checkpointer (e.g. from "
            "open_checkpointer) or a graph compiled with one, got "
            f"{type(checkpointer_or_graph).__name__}"
        )
    thread = str(thread_id)
    history = History.read(saver, thread)
    levels = history.namespaces(thread)
    if not levels:
        raise LookupError(f"thread {shown_id(thread)} has no checkpoints")
    events = _once([e for namespace, chain in levels.items() for e in _events_of(namespace, chain)])
    events.sort(key=lambda e: (e.at is None, e.at or datetime.min))  # stable: equal times kept
    recorded = recorded_effects(effects, [thread])
    if recorded:
        events = _with_effects(events, recorded)
    newest = history.newest(thread)
    pending = len(reviews_pending_at({thread: newest}) if newest is not None else [])
    return AuditTrail(thread_id=thread, events=tuple(events), pending_reviews=pending)

"""Delegation metrics computed from a checkpoint database (`lgsp metrics` and its Python API).

Everything is read from one listing of the checkpoints (`_history.History`), without the graph.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/metrics/
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar, cast

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.types import Interrupt

from langgraph_supervisor_pro._internal.checks import is_count
from langgraph_supervisor_pro._internal.durations import duration_seconds
from langgraph_supervisor_pro._internal.records import aware_time, namespace_path, whole_int
from langgraph_supervisor_pro._internal.text import plural, shown_id
from langgraph_supervisor_pro._internal.twins import Steps, adrive, drive
from langgraph_supervisor_pro._state import (
    CompactionEntry,
    LedgerEntry,
    ReviewEntry,
    SecurityEntry,
    UsageEntry,
)
from langgraph_supervisor_pro.observability._audit import (
    EffectsSource,
    recorded_effects,
    shown_amount,
)
from langgraph_supervisor_pro.observability._history import History
from langgraph_supervisor_pro.observability._history_rows import reads_tables
from langgraph_supervisor_pro.persistence._effects import DONE, IN_DOUBT, INTENT
from langgraph_supervisor_pro.persistence._thread_index import indexed_heads
from langgraph_supervisor_pro.review._desk import INTERRUPT_CHANNEL, reviews_pending_at
from langgraph_supervisor_pro.review._policy import SWEEP_REVIEWER

DEFAULT_UTILISATION_ALERT = 0.7
"""The context utilisation (tokens / window) at or over which a role's p99 raises the alert."""

DEFAULT_LOOP_VISITS = 3
"""Visits of one worker in one turn that flag a loop."""

REVIEW_TIME_BUCKETS: tuple[float, ...] = (60.0, 300.0, 900.0, 3600.0, 14400.0, 86400.0)
"""The upper bounds (seconds, exclusive) of the time-in-review histogram's buckets (and more)."""

_DELTA = ("ledger", "usage", "security", "reviews", "compactions", "budget_events")
_ROLES = ("supervisor", "worker", "summarizer", "synthesis")

ExpectedRoutes = Mapping[str, Sequence[str]]
"""Expected routes by thread id: the workers the root should have run, in order."""


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, kw_only=True)
class DomainRecord:
    """One domain of a tree, as its newest checkpoint holds it."""

    path: tuple[str, ...]
    ledger: tuple[LedgerEntry, ...]
    usage: tuple[UsageEntry, ...]
    compactions: tuple[CompactionEntry, ...]
    security: tuple[SecurityEntry, ...]
    budget_events: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, kw_only=True)
class ReviewOpening:
    """When a run first paused on a review, and its deadline then (before any escalation)."""

    first_seen: datetime | None
    first_deadline: datetime | None


@dataclass(frozen=True, kw_only=True)
class ThreadRecord:
    """What the checkpoints say about one run (thread), for `compute_metrics`."""

    thread_id: str
    status: str
    """The run's status (`running`, `done`, `failed`, `halted`), or `-` when unknown."""
    halt_reason: str | None
    last_activity: datetime | None
    graph_id: str | None
    ledger: tuple[LedgerEntry, ...] = ()
    usage: tuple[UsageEntry, ...] = ()
    compactions: tuple[CompactionEntry, ...] = ()
    security: tuple[SecurityEntry, ...] = ()
    reviews: tuple[ReviewEntry, ...] = ()
    """Every answered review of the tree."""
    domains: tuple[DomainRecord, ...] = ()
    pending_reviews: int = 0
    overdue_reviews: int = 0
    openings: Mapping[str, ReviewOpening] = field(default_factory=dict, repr=False)
    """By interrupt id."""
    budget_events: tuple[Mapping[str, Any], ...] = ()
    """The root's budget warnings, answers and halts (none in threads older than budgets)."""
    turn: int | None = None
    """The turn the run is on (its last), or None when unknown."""


def parse_since(value: str, *, now: datetime | None = None, where: str = "since") -> datetime:
    """A point in time: a duration (`90s`, `15m`, `24h`, `7d`, `2w`) back from `now`, or ISO text.

    A naive ISO time is taken as UTC; anything else raises ValueError naming `where`.

    Example:
        >>> from datetime import datetime, UTC
        >>> parse_since("2h", now=datetime(2030, 1, 1, 12, tzinfo=UTC)).isoformat()
        '2030-01-01T10:00:00+00:00'
        >>> parse_since("2030-01-01T09:30:00").isoformat()
        '2030-01-01T09:30:00+00:00'
    """
    text = value.strip() if isinstance(value, str) else ""
    seconds = duration_seconds(text)
    if seconds is not None:
        start = now if now is not None else datetime.now(UTC)
        return start - timedelta(seconds=seconds)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{where}: got {value!r}; give a duration such as 30m, 24h or 7d, or an ISO-8601 "
            "time such as 2030-01-01T09:00:00+00:00"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _values(history: History, item: CheckpointTuple) -> dict[str, tuple[Any, ...]]:
    """The delta channels' values at `item` (empty for one never written)."""
    values = history.delta_values(item, _DELTA)
    return {name: tuple(values.get(name) or ()) for name in _DELTA}


def _record(
    history: History, thread_id: str, graph_id: str | None, pending: int, overdue: int
) -> ThreadRecord:
    """The thread's record: its root's values, each domain's, its reviews' openings."""
    chain = history.chain(thread_id)
    root = chain[-1]
    openings: dict[str, ReviewOpening] = {}
    for item in chain:
        seen = aware_time(item.checkpoint.get("ts"))
        for write in item.pending_writes or ():
            if len(write) < 3 or write[1] != INTERRUPT_CHANNEL:
                continue
            for interrupt in write[2] if isinstance(write[2], list | tuple) else [write[2]]:
                if isinstance(interrupt, Interrupt):
                    opening = _earliest(openings.get(interrupt.id), seen, interrupt.value)
                    openings[interrupt.id] = opening
    domains: list[DomainRecord] = []
    for namespace, items in history.namespaces(thread_id).items():
        if namespace and "ledger" in (items[-1].checkpoint.get("channel_versions") or {}):
            own = _values(history, items[-1])
            del own["reviews"]  # already in the root's
            domains.append(DomainRecord(path=namespace_path(namespace), **own))
    values = root.checkpoint.get("channel_values") or {}
    status = values.get("status")
    halt = values.get("halt_reason")
    return ThreadRecord(
        thread_id=thread_id,
        status=str(status) if status else "-",
        halt_reason=str(halt) if halt else None,
        last_activity=aware_time(root.checkpoint.get("ts")),
        graph_id=graph_id,
        **_values(history, root),
        domains=tuple(domains),
        pending_reviews=pending,
        overdue_reviews=overdue,
        openings=openings,
        turn=whole_int(values.get("turn")),
    )


def _filters(
    since: datetime | str | None, graph: str | None, now: datetime | None
) -> tuple[datetime, datetime | None]:
    """The time reviews are judged at (`now`, checked) and the start `since` names."""
    if now is None:
        now = datetime.now(UTC)
    elif not isinstance(now, datetime) or now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"now: got {now!r}; give a timezone-aware datetime")
    if isinstance(since, str):
        since = parse_since(since, now=now)
    elif isinstance(since, datetime) and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    elif since is not None and not isinstance(since, datetime):
        raise ValueError(f"since: got {type(since).__name__}; give a datetime or text such as 24h")
    if graph is not None and (not isinstance(graph, str) or not graph.strip()):
        raise ValueError(f"graph: got {graph!r}; give a graph id (a non-empty name)")
    return now, since


def _records(
    history: History, since: datetime | str | None, graph: str | None, now: datetime | None
) -> list[ThreadRecord]:
    """The kept threads' records, from one listing of every checkpoint."""
    moment, start = _filters(since, graph, now)
    latest = {t: item for t in history.threads() if (item := history.newest(t)) is not None}
    pending: Counter[str] = Counter()
    overdue: Counter[str] = Counter()
    for review in reviews_pending_at(latest):
        pending[review.thread_id] += 1
        overdue[review.thread_id] += review.expired(moment)
    records: list[ThreadRecord] = []
    for thread_id, root in latest.items():
        # The newest `graph_id` (a resume by `lgsp review` writes none).
        ids = ((item.metadata or {}).get("graph_id") for item in reversed(history.chain(thread_id)))
        graph_id = next((str(found) for found in ids if found is not None), None)
        last = aware_time(root.checkpoint.get("ts"))
        if (graph is None or graph_id == graph) and (
            start is None or (last is not None and last >= start)
        ):
            records.append(
                _record(history, thread_id, graph_id, pending[thread_id], overdue[thread_id])
            )
    records.sort(key=lambda r: (r.last_activity is not None, r.last_activity, r.thread_id))
    return records[::-1]  # newest first


def read_threads(
    checkpointer: BaseCheckpointSaver[Any],
    *,
    since: datetime | str | None = None,
    graph: str | None = None,
    now: datetime | None = None,
) -> list[ThreadRecord]:
    """Every run in a checkpoint database, as `compute_metrics` needs it, newest first.

    Args:
        checkpointer: An open checkpointer that lists across threads (SQLite, Postgres,
            `InMemorySaver`).
        since: Keep the threads active at or after this time (a datetime, or text for
            `parse_since`).
        graph: Keep the threads whose checkpoints' metadata has this `graph_id`.
        now: The time durations count back from and overdue reviews are judged at.

    Raises:
        ValueError: If `since`, `graph` or `now` is invalid (naming the field).

    Example:
        ```python
        with open_checkpointer("sqlite:///runs.db") as saver:
            records = read_threads(saver, since="7d", graph="support")
        ```
    """
    now, start = _filters(since, graph, now)  # one clock for the listing and the records
    threads = drive(_active_threads(checkpointer, start))
    return _records(History.read(checkpointer, threads), start, graph, now)


async def aread_threads(
    checkpointer: BaseCheckpointSaver[Any],
    *,
    since: datetime | str | None = None,
    graph: str | None = None,
    now: datetime | None = None,
) -> list[ThreadRecord]:
    """Async twin of `read_threads`, for async checkpointers (`alist`, ...).

    Example:
        ```python
        async with aopen_checkpointer("postgresql://app@db/app") as saver:
            records = await aread_threads(saver, since="24h")
        ```
    """
    now, start = _filters(since, graph, now)  # one clock for the listing and the records
    threads = await adrive(_active_threads(checkpointer, start))
    return _records(await History.aread(checkpointer, threads), start, graph, now)


def _active_threads(
    saver: BaseCheckpointSaver[Any], start: datetime | None
) -> Steps[list[str] | None]:
    """On Postgres with `since`, the threads active since then (to list only those), else None."""
    if start is None or not reads_tables(saver):
        return None
    heads = yield from indexed_heads(saver)
    return [thread for thread, when in heads if when is None or when >= start]


def _first_deadline(escalations: object) -> datetime | None:
    """The deadline a review had before its first escalation (which moved it), if any."""
    if isinstance(escalations, list | tuple) and escalations:
        first = escalations[0]
        if isinstance(first, Mapping):
            return aware_time(first.get("previous_deadline"))
    return None


def _earliest(held: ReviewOpening | None, seen: datetime | None, payload: object) -> ReviewOpening:
    deadline = None
    if isinstance(payload, Mapping):
        context = payload.get("context")
        if isinstance(context, Mapping):
            deadline = _first_deadline(context.get("escalations")) or aware_time(
                context.get("deadline")
            )
    if held is None:
        return ReviewOpening(first_seen=seen, first_deadline=deadline)
    if seen is not None and (held.first_seen is None or seen < held.first_seen):
        return ReviewOpening(first_seen=seen, first_deadline=deadline or held.first_deadline)
    return held


# --------------------------------------------------------------------------- expected routes


def expected_routes(value: object, *, where: str = "expected") -> dict[str, tuple[str, ...]]:
    """Validate expected routes: thread id -> worker names, or a list of cases.

    A case is `{"thread_id": ..., "expected": [...]}` (or `"routes"`); a wrong field raises
    ValueError naming it (under `where`).

    Example:
        >>> expected_routes([{"thread_id": "t1", "expected": ["billing"]}])
        {'t1': ('billing',)}
        >>> expected_routes({"t2": ["a", "b"]})
        {'t2': ('a', 'b')}
    """
    pairs: list[tuple[object, object, str, str]] = []
    if isinstance(value, Mapping):
        pairs = [(k, v, f"{where}[{k!r}]", f"{where}[{k!r}]") for k, v in value.items()]
    elif isinstance(value, list | tuple):
        for index, case in enumerate(value):
            at = f"{where}[{index}]"
            if not isinstance(case, Mapping):
                raise ValueError(
                    f"{at}: got {type(case).__name__}; give an object with thread_id and expected"
                )
            unknown = set(case) - {"thread_id", "expected", "routes"}
            if unknown:
                raise ValueError(
                    f"{at}: unknown keys {sorted(unknown)}; a case has thread_id and expected"
                )
            if "thread_id" not in case:
                raise ValueError(f"{at}.thread_id: missing; name the case's thread")
            key = "expected" if "expected" in case else "routes"
            if key not in case:
                raise ValueError(f"{at}.expected: missing; give the expected workers in order")
            pairs.append((case["thread_id"], case[key], f"{at}.thread_id", f"{at}.{key}"))
    else:
        raise ValueError(
            f"{where}: got {type(value).__name__}; give a mapping thread_id -> workers or a "
            "list of cases {thread_id, expected}"
        )
    routes: dict[str, tuple[str, ...]] = {}
    for thread, workers, named, at in pairs:
        if not isinstance(thread, str) or not thread:
            raise ValueError(
                f"{named}: the thread id must be a non-empty string, got {shown_id(thread)}"
            )
        if thread in routes:
            raise ValueError(
                f"{named}: thread {shown_id(thread)} is labelled twice; label each thread once"
            )
        if isinstance(workers, str) or not isinstance(workers, list | tuple):
            raise ValueError(
                f"{at}: got {type(workers).__name__}; give a list of worker names in order"
            )
        for index, name in enumerate(workers):
            if not isinstance(name, str) or not name:
                raise ValueError(f"{at}[{index}]: give a worker name, got {name!r}")
        routes[thread] = tuple(workers)
    return routes


def load_expected(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Read expected routes (either form `expected_routes` takes) from JSON, or raise ValueError."""
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{where}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{where}: not UTF-8 text; give a JSON file") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{where}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    return expected_routes(data, where=where)


# --------------------------------------------------------------------------- results


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


class _Figures:
    """`to_dict` for the figures: `_keys` (the fields, then the `_extra` properties)."""

    _extra: ClassVar[tuple[str, ...]] = ()
    _rounded: ClassVar[frozenset[str]] = frozenset()
    """The keys whose values are rounded to 6 places."""

    @property
    def _keys(self) -> tuple[str, ...]:
        return (*(f.name for f in fields(cast(Any, self))), *self._extra)

    def _dict(self, names: Iterable[str]) -> dict[str, Any]:
        return {name: self._plain(name, getattr(self, name)) for name in names}

    def _plain(self, name: str, value: Any) -> Any:
        if name in self._rounded:
            return None if value is None else round(value, 6)
        if isinstance(value, _Figures):
            return value.to_dict()
        if isinstance(value, Mapping):
            return dict(value)
        if isinstance(value, tuple):
            return [v.to_dict() if isinstance(v, _Figures) else v for v in value]
        return value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> CompletionMetrics(runs=0, by_status={}, by_halt_reason={}).to_dict()
            {'runs': 0, 'by_status': {}, 'by_halt_reason': {}, 'completion_rate': None}
        """
        return self._dict(self._keys)


@dataclass(frozen=True, kw_only=True)
class CompletionMetrics(_Figures):
    """Runs by how they ended."""

    _extra = ("completion_rate",)
    _rounded = frozenset(_extra)

    runs: int
    by_status: Mapping[str, int]
    by_halt_reason: Mapping[str, int]

    @property
    def completion_rate(self) -> float | None:
        """The share of runs that ended `done` (None without runs)."""
        return _ratio(self.by_status.get("done", 0), self.runs)


@dataclass(frozen=True, kw_only=True)
class RoutingScore(_Figures):
    """One worker's routing against the labels.

    Example:
        >>> s = RoutingScore(worker="billing", true_positives=3, false_positives=1,
        ...                  false_negatives=0)
        >>> s.precision, s.recall, round(s.f1 or 0, 4), s.to_dict()["recall"]
        (0.75, 1.0, 0.8571, 1.0)
    """

    _extra = ("precision", "recall", "f1")
    _rounded = frozenset(_extra)

    worker: str
    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float | None:
        """True positives over the worker's hops (None when it never ran)."""
        return _ratio(self.true_positives, self.true_positives + self.false_positives)

    @property
    def recall(self) -> float | None:
        """True positives over its expected hops (None when it was never expected)."""
        return _ratio(self.true_positives, self.true_positives + self.false_negatives)

    @property
    def f1(self) -> float | None:
        """The harmonic mean of precision and recall (None when either is None)."""
        return _f1(self.precision, self.recall)


def _f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


@dataclass(frozen=True, kw_only=True)
class RoutingMetrics(_Figures):
    """The root's routes against expected routes."""

    _keys = (
        "labelled",
        "missing",
        "exact_matches",
        "micro_precision",
        "micro_recall",
        "micro_f1",
        "per_worker",
    )
    _rounded = frozenset({"micro_precision", "micro_recall", "micro_f1"})

    labelled: int
    missing: tuple[str, ...]
    exact_matches: int
    per_worker: tuple[RoutingScore, ...]

    @property
    def micro_precision(self) -> float | None:
        """Precision over every hop."""
        tp = sum(s.true_positives for s in self.per_worker)
        return _ratio(tp, tp + sum(s.false_positives for s in self.per_worker))

    @property
    def micro_recall(self) -> float | None:
        """Recall over every expected hop."""
        tp = sum(s.true_positives for s in self.per_worker)
        return _ratio(tp, tp + sum(s.false_negatives for s in self.per_worker))

    @property
    def micro_f1(self) -> float | None:
        """F1 of the micro precision and recall."""
        return _f1(self.micro_precision, self.micro_recall)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True, kw_only=True)
class SpendMetrics(_Figures):
    """Tokens and cost of some model calls: the sums of their `usage` entries.

    A call without a cost (its model has no price, the graph no price table, or its thread is
    older than prices) is counted in `unpriced_calls`, never as free: `cost` sums the priced
    calls only. An entry without the provider's counts (an older thread) counts its `tokens`
    (input, by the configured counter) as input.

    Example:
        >>> spend = SpendMetrics.of([
        ...     {"input_tokens": 900, "output_tokens": 100, "cost": 0.002},
        ...     {"input_tokens": 50, "output_tokens": 5, "cost": None, "estimated": True},
        ... ])
        >>> spend.total_tokens, spend.cost, spend.unpriced_calls, spend.shown_cost
        (1055, 0.002, 1, '0.002 + 1 unpriced call')
    """

    _extra = ("total_tokens",)

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0
    """The priced calls' cost, in the price table's currency; None when no call was priced."""
    unpriced_calls: int = 0
    estimated_calls: int = 0
    """Calls whose provider reported no usage: their tokens were counted here."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    @property
    def shown_cost(self) -> str:
        """The cost as text, naming the unpriced calls (`unpriced` when none was priced)."""
        unpriced = plural(self.unpriced_calls, "unpriced call")
        if self.cost is None:
            return f"unpriced ({plural(self.unpriced_calls, 'call')})"
        cost = shown_amount("cost", self.cost)
        return f"{cost} + {unpriced}" if self.unpriced_calls else cost

    @classmethod
    def of(cls, entries: Iterable[Mapping[str, Any]]) -> SpendMetrics:
        """The sums of some usage entries."""
        calls = tokens_in = tokens_out = unpriced = estimated = 0
        cost = 0.0
        for entry in entries:
            calls += 1
            tokens_in += _count(entry.get("input_tokens", entry.get("tokens")))
            tokens_out += _count(entry.get("output_tokens"))
            value = entry.get("cost")
            if isinstance(value, int | float) and not isinstance(value, bool):
                cost += value
            else:
                unpriced += 1
            estimated += entry.get("estimated") is True
        return cls(
            calls=calls,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cost=None if calls and unpriced == calls else round(cost, 10),
            unpriced_calls=unpriced,
            estimated_calls=estimated,
        )


@dataclass(frozen=True, kw_only=True)
class ModelSpend(_Figures):
    """The calls of one model (at the roots: a domain's calls are its parent's as well)."""

    _keys = ("name", "provider", "model", "spend")

    provider: str | None
    model: str | None
    """The model's name as it reports it; None for calls that did not record it (older threads)."""
    spend: SpendMetrics

    @property
    def name(self) -> str:
        """`provider/model`, the model alone, or `unknown`."""
        if not self.model:
            return "unknown"
        return f"{self.provider}/{self.model}" if self.provider else self.model


@dataclass(frozen=True, kw_only=True)
class TurnSpend(_Figures):
    """The calls of one ended turn of a run (its root's entries)."""

    thread_id: str
    turn: int
    spend: SpendMetrics


@dataclass(frozen=True, kw_only=True)
class TurnMetrics(_Figures):
    """Spend per ended turn (a task: one user message, done, failed or halted).

    Example:
        >>> one = TurnSpend(thread_id="t", turn=1, spend=SpendMetrics(calls=1, cost=0.5))
        >>> two = TurnSpend(thread_id="t", turn=2, spend=SpendMetrics(calls=1, cost=None,
        ...                                                           unpriced_calls=1))
        >>> turns = TurnMetrics(by_turn=(one, two))
        >>> turns.completed, turns.priced, turns.average_cost
        (2, 1, 0.5)
    """

    _keys = (
        "completed",
        "average_tokens",
        "max_tokens",
        "priced",
        "average_cost",
        "max_cost",
        "by_turn",
    )
    _rounded = frozenset({"average_tokens"})

    by_turn: tuple[TurnSpend, ...] = ()

    @property
    def completed(self) -> int:
        """The ended turns."""
        return len(self.by_turn)

    @property
    def average_tokens(self) -> float | None:
        """Tokens per ended turn (None without one)."""
        return _ratio(sum(t.spend.total_tokens for t in self.by_turn), self.completed)

    @property
    def max_tokens(self) -> int | None:
        """The most tokens one turn spent."""
        return max((t.spend.total_tokens for t in self.by_turn), default=None)

    @property
    def priced(self) -> int:
        """The turns whose every call was priced (their cost is known)."""
        return len(self._costs)

    @property
    def average_cost(self) -> float | None:
        """The cost per turn, over the turns whose every call was priced."""
        costs = self._costs
        return round(sum(costs) / len(costs), 10) if costs else None

    @property
    def max_cost(self) -> float | None:
        """The highest cost of a turn whose every call was priced."""
        return max(self._costs, default=None)

    @property
    def _costs(self) -> list[float]:
        return [
            t.spend.cost
            for t in self.by_turn
            if t.spend.cost is not None and not t.spend.unpriced_calls
        ]


@dataclass(frozen=True, kw_only=True)
class BudgetMetrics(_Figures):
    """Budget events (`budget_events`, each counted once however many levels hold it)."""

    warnings: int = 0
    approved: int = 0
    """Warnings a reviewer answered by raising the limit."""
    rejected: int = 0
    """Warnings a reviewer answered by stopping the run."""
    exceeded: int = 0
    """Limits reached (at any level, a worker's own budget included)."""
    halts: int = 0
    """Turns of runs that halted on a budget (`halt_reason="budget_exceeded"`)."""


@dataclass(frozen=True, kw_only=True)
class EdgeMetrics(_Figures):
    """Handoffs along one edge of the delegation tree (`supervisor` or a domain's path)."""

    _extra = ("success_rate",)
    _rounded = frozenset(_extra)

    source: str
    target: str
    hops: int
    succeeded: int
    failed: int
    needs_review: int
    spend: SpendMetrics = field(default_factory=SpendMetrics)
    """The model calls of the hops along the edge (a domain's: every call inside it)."""

    @property
    def success_rate(self) -> float | None:
        """The share of hops that succeeded."""
        return _ratio(self.succeeded, self.hops)


@dataclass(frozen=True, kw_only=True)
class WorkerMetrics(_Figures):
    """One worker's visits (by path in a tree)."""

    worker: str
    visits: int
    succeeded: int
    failed: int
    retries: int
    loop_flags: int
    refused_tools: int
    spend: SpendMetrics = field(default_factory=SpendMetrics)
    """The model calls of its hops (a domain's: every call inside it)."""


@dataclass(frozen=True, kw_only=True)
class UtilisationMetrics(_Figures):
    """Context utilisation of one role's calls measured against a window (p99: nearest rank)."""

    _extra = ("alert",)
    _rounded = frozenset({"average", "p99", "peak"})

    role: str
    calls: int
    average: float
    p99: float
    peak: float
    over_threshold: int
    threshold: float

    @property
    def alert(self) -> bool:
        """Whether the p99 is at or over the threshold."""
        return self.p99 >= self.threshold


@dataclass(frozen=True, kw_only=True)
class HopUtilisation(_Figures):
    """Context utilisation of the model calls serving the Nth hop of a run, per role."""

    hop: int
    roles: tuple[UtilisationMetrics, ...]

    @property
    def peak(self) -> float:
        """The highest utilisation of any call for the hop."""
        return max((u.peak for u in self.roles), default=0.0)


@dataclass(frozen=True, kw_only=True)
class CompactionMetrics(_Figures):
    """Compactions of workers' histories."""

    total: int
    by_reason: Mapping[str, int]
    failed: int
    tokens_saved: int
    truncated: int = 0


@dataclass(frozen=True, kw_only=True)
class RefusalMetrics(_Figures):
    """Tool calls refused for least privilege."""

    total: int
    by_worker: Mapping[str, int]
    by_tool: Mapping[str, int]


@dataclass(frozen=True, kw_only=True)
class ReviewTimeBucket(_Figures):
    """One bar of the time-in-review histogram: reviews answered within its bounds.

    Example:
        >>> ReviewTimeBucket(lower_seconds=60.0, upper_seconds=300.0, reviews=2).label
        '1 min - 5 min'
    """

    _extra = ("label",)

    lower_seconds: float
    upper_seconds: float | None
    """Exclusive; None for the last bucket."""
    reviews: int

    @property
    def label(self) -> str:
        """The bounds as text (`< 1 min`, `1 min - 5 min`, `1 d or more`)."""
        if self.upper_seconds is None:
            return f"{_span(self.lower_seconds)} or more"
        if self.lower_seconds <= 0:
            return f"< {_span(self.upper_seconds)}"
        return f"{_span(self.lower_seconds)} - {_span(self.upper_seconds)}"


def _span(seconds: float) -> str:
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


def _histogram(durations: Sequence[float]) -> tuple[ReviewTimeBucket, ...]:
    lowers = (0.0, *REVIEW_TIME_BUCKETS)
    uppers: tuple[float | None, ...] = (*REVIEW_TIME_BUCKETS, None)
    return tuple(
        ReviewTimeBucket(
            lower_seconds=low,
            upper_seconds=high,
            reviews=sum(1 for d in durations if d >= low and (high is None or d < high)),
        )
        for low, high in zip(lowers, uppers, strict=True)
    )


@dataclass(frozen=True, kw_only=True)
class ReviewMetrics(_Figures):
    """Human reviews: decisions, escalations, time in review, deadlines."""

    _rounded = frozenset({"escalation_rate", "average_seconds", "p99_seconds", "max_seconds"})

    answered: int
    by_decision: Mapping[str, int]
    escalated: int
    timed: int
    """Answered reviews whose opening was found in the history."""
    average_seconds: float | None
    p99_seconds: float | None
    max_seconds: float | None
    deadline_breaches: int
    pending: int
    overdue: int
    histogram: tuple[ReviewTimeBucket, ...] = ()

    @property
    def escalation_rate(self) -> float | None:
        """The share of answered reviews that were escalated."""
        return _ratio(self.escalated, self.answered)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values, the time in review's figures grouped."""
        timing = ("timed", "average_seconds", "p99_seconds", "max_seconds", "histogram")
        return {
            **self._dict(("answered", "by_decision", "escalated", "escalation_rate")),
            "time_in_review": self._dict(timing),
            **self._dict(("deadline_breaches", "pending", "overdue")),
        }


@dataclass(frozen=True, kw_only=True)
class EffectMetrics(_Figures):
    """The side effects the runs recorded (`effects=`), and those that were in doubt.

    Example:
        >>> e = EffectMetrics(recorded=3, by_state={"done": 1, "intent": 1, "skipped": 1})
        >>> e.doubted, e.in_doubt, e.settled_after_doubt
        (2, 1, 1)
    """

    _keys = ("recorded", "doubted", "in_doubt", "settled_after_doubt", "by_state")

    recorded: int
    by_state: Mapping[str, int]

    @property
    def doubted(self) -> int:
        """Effects not `done`: in doubt now, or settled after a doubt."""
        return self.recorded - self.by_state.get(DONE, 0)

    @property
    def in_doubt(self) -> int:
        """Effects still in doubt: an intent without an outcome, or one paused on a review."""
        return self.by_state.get(INTENT, 0) + self.by_state.get(IN_DOUBT, 0)

    @property
    def settled_after_doubt(self) -> int:
        """Effects reconciled, confirmed, redone or skipped: they may have run twice, or not."""
        return self.doubted - self.in_doubt


@dataclass(frozen=True, kw_only=True)
class DelegationMetrics(_Figures):
    """Every delegation figure of a set of runs (`compute_metrics`, `delegation_metrics`).

    `to_dict()` gives them as JSON-ready values (what `lgsp metrics --json` prints).

    Example:
        ```python
        report = delegation_metrics(saver)
        print(json.dumps(report.to_dict(), indent=2))
        ```
    """

    _keys = (
        "completion",
        "routing",
        "hops",
        "edges",
        "workers",
        "utilisation",
        "hop_utilisation",
        "utilisation_alert",
        "alerts",
        "loop_visits",
        "compactions",
        "refusals",
        "reviews",
        "effects",
        "spend",
        "models",
        "turns",
        "budget",
    )

    completion: CompletionMetrics
    routing: RoutingMetrics | None
    """None when no expected routes were given."""
    edges: tuple[EdgeMetrics, ...]
    workers: tuple[WorkerMetrics, ...]
    utilisation: tuple[UtilisationMetrics, ...]
    """One per role whose calls recorded a context window: supervisor, worker, summarizer,
    synthesis, others."""
    compactions: CompactionMetrics
    refusals: RefusalMetrics
    reviews: ReviewMetrics
    hops: int
    """Hops at every level."""
    utilisation_alert: float
    loop_visits: int
    hop_utilisation: tuple[HopUtilisation, ...] = ()
    """The same per hop number of a run (1, 2, ...), for the hops whose calls were recorded."""
    effects: EffectMetrics | None = None
    """The runs' side effects; None when no `effects=` was given."""
    spend: SpendMetrics = field(default_factory=SpendMetrics)
    """Every model call of the runs (their roots' entries, which hold their domains' calls)."""
    models: tuple[ModelSpend, ...] = ()
    """The same per model, most expensive first."""
    turns: TurnMetrics = field(default_factory=TurnMetrics)
    """The same per ended turn (a task)."""
    budget: BudgetMetrics = field(default_factory=BudgetMetrics)
    """Budget warnings, answers, limits exceeded and the turns they halted."""

    @property
    def alerts(self) -> tuple[str, ...]:
        """The roles whose utilisation raised the alert."""
        return tuple(u.role for u in self.utilisation if u.alert)


# --------------------------------------------------------------------------- computing


def _p99(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(0.99 * len(ordered)) - 1, 0)]


def _levels(record: ThreadRecord) -> Iterable[DomainRecord]:
    """The root's figures (as a domain at path ()), then each domain's."""
    yield DomainRecord(
        path=(),
        ledger=record.ledger,
        usage=record.usage,
        compactions=record.compactions,
        security=record.security,
        budget_events=record.budget_events,
    )
    yield from record.domains


def _check_settings(utilisation_alert: object, loop_visits: object) -> None:
    if (
        isinstance(utilisation_alert, bool)
        or not isinstance(utilisation_alert, int | float)
        or not 0 < utilisation_alert <= 1
    ):
        raise ValueError(
            f"utilisation_alert: got {utilisation_alert!r}; give a share of the window in "
            "(0, 1], e.g. 0.7"
        )
    if not is_count(loop_visits, 2):
        raise ValueError(f"loop_visits: got {loop_visits!r}; give a whole number of visits >= 2")


def compute_metrics(
    records: Sequence[ThreadRecord],
    *,
    expected: ExpectedRoutes | Sequence[Mapping[str, Any]] | None = None,
    utilisation_alert: float = DEFAULT_UTILISATION_ALERT,
    loop_visits: int = DEFAULT_LOOP_VISITS,
    effects: EffectsSource | Sequence[EffectsSource] | None = None,
) -> DelegationMetrics:
    """The delegation figures of some runs (from `read_threads`).

    Args:
        records: The runs.
        expected: Expected routes (see `expected_routes`); routing is scored when given.
        utilisation_alert: The utilisation share at or over which a role's p99 alerts.
        loop_visits: Visits of one worker in one turn that flag a loop.
        effects: Where the runs recorded their side effects (`open_effects(url)`, a
            `StoreEffects`, or its store; or a list of them), to count them and those in
            doubt (`report.effects`); None leaves effects out.

    Raises:
        ValueError: If a setting or the expected routes are invalid (naming the field).
        TypeError: If `effects` is not an effects source.

    Example:
        ```python
        with open_effects(url) as effects:
            report = compute_metrics(read_threads(saver), expected={"t1": ["billing"]},
                                     utilisation_alert=0.8, effects=effects)
        print(report.effects.in_doubt)
        ```
    """
    _check_settings(utilisation_alert, loop_visits)
    recorded = (
        None if effects is None else recorded_effects(effects, [r.thread_id for r in records])
    )
    utilisation_alert = float(utilisation_alert)
    labels = None if expected is None else expected_routes(expected)
    edges: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    workers: dict[str, Counter[str]] = defaultdict(Counter)
    calls: dict[str, list[float]] = defaultdict(list)
    per_hop: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    compaction_reasons: Counter[str] = Counter()
    compacted = Counter(total=0, failed=0, tokens_saved=0, truncated=0)
    refused_by_worker: Counter[str] = Counter()
    refused_by_tool: Counter[str] = Counter()
    spent: dict[tuple[tuple[str, ...], str], list[Mapping[str, Any]]] = defaultdict(list)
    hops = 0
    for level in (level for record in records for level in _levels(record)):
        source = "/".join(level.path) or "supervisor"  # the root's edges: supervisor -> worker
        failed_before: set[tuple[int, str]] = set()
        per_turn: Counter[tuple[int, str]] = Counter()
        for entry in level.ledger:
            hops += 1
            name, status = entry["worker"], entry["status"]
            edges[(source, name)].update(("hops", status))
            figures = workers["/".join((*level.path, name))]
            figures.update(("visits", status))
            turn_key = (entry["turn"], name)
            figures["retries"] += turn_key in failed_before
            if status == "failed":
                failed_before.add(turn_key)
            per_turn[turn_key] += 1
            figures["loop_flags"] += per_turn[turn_key] == loop_visits
        # Each (turn, step) of the level's run: its hop number, from 1, across turns.
        steps = sorted({(e["turn"], e["step"]) for e in (*level.ledger, *level.usage)})
        numbers = {key: index for index, key in enumerate(steps, start=1)}
        for call in level.usage:
            if call.get("worker") is not None:  # a hop's call (its domain's, for a domain)
                spent[(level.path, str(call["worker"]))].append(call)
            if call.get("utilisation") is None:
                continue  # no window to measure it against (compaction off)
            utilisation = float(call["utilisation"])
            calls[call["role"]].append(utilisation)
            per_hop[numbers[(call["turn"], call["step"])]][call["role"]].append(utilisation)
        for done in level.compactions:
            truncation = done.get("kind") == "truncated"
            compaction_reasons[done["reason"]] += 1
            compacted.update(total=1, failed=done["error"] is not None, truncated=truncation)
            if done["error"] is None or truncation:
                compacted["tokens_saved"] += done["tokens_before"] - done["tokens_after"]
        for refusal in level.security:
            key = "/".join((*level.path, refusal["worker"]))
            refused_by_worker[key] += 1
            refused_by_tool[refusal["tool"]] += 1
            workers[key]["refused"] += 1
    by_edge: dict[tuple[str, str], SpendMetrics] = {}
    by_worker: dict[str, SpendMetrics] = {}  # (the same figures: a worker's is its edge's)
    for (path, name), entries in spent.items():
        edge, worker = ("/".join(path) or "supervisor", name), "/".join((*path, name))
        by_edge[edge] = by_worker[worker] = SpendMetrics.of(entries)
        edges.setdefault(edge, Counter())  # the calls of a hop that has not ended are listed
        workers.setdefault(worker, Counter())
    return DelegationMetrics(
        completion=CompletionMetrics(
            runs=len(records),
            by_status=_sorted(Counter(r.status for r in records)),
            by_halt_reason=_sorted(Counter(r.halt_reason for r in records if r.halt_reason)),
        ),
        routing=None if labels is None else _routing(records, labels),
        edges=tuple(
            EdgeMetrics(
                source=source,
                target=target,
                hops=c["hops"],
                succeeded=c["success"],
                failed=c["failed"],
                needs_review=c["needs_review"],
                spend=by_edge.get((source, target), SpendMetrics()),
            )
            for (source, target), c in sorted(edges.items())
        ),
        workers=tuple(
            WorkerMetrics(
                worker=key,
                visits=c["visits"],
                succeeded=c["success"],
                failed=c["failed"],
                retries=c["retries"],
                loop_flags=c["loop_flags"],
                refused_tools=c["refused"],
                spend=by_worker.get(key, SpendMetrics()),
            )
            for key, c in sorted(workers.items())
        ),
        utilisation=_utilisation(calls, utilisation_alert),
        hop_utilisation=tuple(
            HopUtilisation(hop=hop, roles=_utilisation(per_hop[hop], utilisation_alert))
            for hop in sorted(per_hop)
        ),
        compactions=CompactionMetrics(by_reason=_sorted(compaction_reasons), **compacted),
        refusals=RefusalMetrics(
            total=sum(refused_by_tool.values()),
            by_worker=_sorted(refused_by_worker),
            by_tool=_sorted(refused_by_tool),
        ),
        reviews=_reviews(records),
        hops=hops,
        utilisation_alert=utilisation_alert,
        loop_visits=loop_visits,
        effects=None
        if recorded is None
        else EffectMetrics(
            recorded=len(recorded), by_state=_sorted(Counter(e.state for e in recorded))
        ),
        spend=SpendMetrics.of(call for record in records for call in record.usage),
        models=_models(records),
        turns=TurnMetrics(by_turn=tuple(t for record in records for t in _turns(record))),
        budget=_budget(records),
    )


def _models(records: Sequence[ThreadRecord]) -> tuple[ModelSpend, ...]:
    """The roots' calls per model (provider, name), the most expensive first."""
    by_model: dict[tuple[str | None, str | None], list[Mapping[str, Any]]] = defaultdict(list)
    for call in (call for record in records for call in record.usage):
        provider, model = call.get("provider"), call.get("model")
        by_model[(provider if model else None, model or None)].append(call)
    found = [
        ModelSpend(provider=provider, model=model, spend=SpendMetrics.of(calls))
        for (provider, model), calls in by_model.items()
    ]
    return tuple(sorted(found, key=lambda m: (-(m.spend.cost or 0.0), -m.spend.calls, m.name)))


_ENDED = ("done", "failed", "halted")


def _turns(record: ThreadRecord) -> Iterable[TurnSpend]:
    """Each turn of the run that ended (those before its current, and that one once it ended)."""
    by_turn: dict[Any, list[Mapping[str, Any]]] = defaultdict(list)
    for call in record.usage:
        by_turn[call.get("turn")].append(call)
    turns = map(whole_int, (*by_turn, *(e.get("turn") for e in record.ledger)))
    last = record.turn or max((t for t in turns if t is not None), default=0)
    for turn in range(1, last + (record.status in _ENDED)):
        yield TurnSpend(thread_id=record.thread_id, turn=turn, spend=SpendMetrics.of(by_turn[turn]))


def _budget(records: Sequence[ThreadRecord]) -> BudgetMetrics:
    """Budget events, each once (a level above may hold a copy), and the turns they halted."""
    kinds: Counter[str] = Counter()
    halts = 0
    for record in records:
        seen: set[tuple[object, ...]] = set()
        halted: set[object] = set()
        for level in _levels(record):
            for event in level.budget_events:
                names = ("kind", "measure", "scope", "worker", "at", "spent", "limit")
                key = (*(event.get(n) for n in names), tuple(event.get("path") or ()))
                if key in seen:
                    continue
                seen.add(key)
                kinds[str(event.get("kind"))] += 1
                if event.get("kind") == "exceeded" and not level.path and not event.get("path"):
                    halted.add(event.get("turn"))  # the root's own (not a domain's, copied)
        if record.halt_reason == "budget_exceeded" and (record.turn is not None or not halted):
            halted.add(record.turn)  # (its event may be in a domain, or not recorded)
        halts += len(halted)
    return BudgetMetrics(
        warnings=kinds["warning"],
        approved=kinds["approved"],
        rejected=kinds["rejected"],
        exceeded=kinds["exceeded"],
        halts=halts,
    )


def _sorted(counts: Mapping[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items()))


def _utilisation(
    calls: Mapping[str, Sequence[float]], threshold: float
) -> tuple[UtilisationMetrics, ...]:
    """One figure per role with calls: the known roles first, in their order."""
    return tuple(
        UtilisationMetrics(
            role=role,
            calls=len(calls[role]),
            average=sum(calls[role]) / len(calls[role]),
            p99=_p99(calls[role]),
            peak=max(calls[role]),
            over_threshold=sum(1 for u in calls[role] if u >= threshold),
            threshold=threshold,
        )
        for role in (*_ROLES, *sorted(set(calls) - set(_ROLES)))
        if calls.get(role)
    )


def _routing(
    records: Sequence[ThreadRecord], labels: Mapping[str, Sequence[str]]
) -> RoutingMetrics:
    found = {r.thread_id: r for r in records}
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    exact = labelled = 0
    for thread, wanted in labels.items():
        record = found.get(thread)
        if record is None:
            continue
        labelled += 1
        actual = [e["worker"] for e in record.ledger]
        exact += actual == list(wanted)
        ran, expected = Counter(actual), Counter(wanted)
        for worker in set(ran) | set(expected):
            tp = min(ran[worker], expected[worker])
            counts[worker].update(
                true_positives=tp,
                false_positives=ran[worker] - tp,
                false_negatives=expected[worker] - tp,
            )
    return RoutingMetrics(
        labelled=labelled,
        missing=tuple(sorted(t for t in labels if t not in found)),
        exact_matches=exact,
        per_worker=tuple(RoutingScore(worker=w, **c) for w, c in sorted(counts.items())),
    )


def _reviews(records: Sequence[ThreadRecord]) -> ReviewMetrics:
    decisions: Counter[str] = Counter()
    durations: list[float] = []
    escalated = breaches = answered = 0
    for record in records:
        for review in record.reviews:
            answered += 1
            decisions[review["decision"]] += 1
            if review.get("escalations"):
                escalated += 1
            opening = record.openings.get(review["interrupt_id"])
            at = aware_time(review.get("answered_at"))
            if opening is None or at is None:
                if review.get("reviewer") == SWEEP_REVIEWER:
                    breaches += 1
                continue
            if opening.first_seen is not None:
                durations.append(max((at - opening.first_seen).total_seconds(), 0.0))
            deadline = _first_deadline(review.get("escalations")) or opening.first_deadline
            if (deadline is not None and at >= deadline) or (
                deadline is None and review.get("reviewer") == SWEEP_REVIEWER
            ):
                breaches += 1
    overdue = sum(r.overdue_reviews for r in records)
    return ReviewMetrics(
        answered=answered,
        by_decision=_sorted(decisions),
        escalated=escalated,
        timed=len(durations),
        average_seconds=sum(durations) / len(durations) if durations else None,
        p99_seconds=_p99(durations) if durations else None,
        max_seconds=max(durations) if durations else None,
        deadline_breaches=breaches + overdue,
        pending=sum(r.pending_reviews for r in records),
        overdue=overdue,
        histogram=_histogram(durations),
    )


def delegation_metrics(
    checkpointer: BaseCheckpointSaver[Any],
    *,
    since: datetime | str | None = None,
    graph: str | None = None,
    expected: ExpectedRoutes | Sequence[Mapping[str, Any]] | None = None,
    utilisation_alert: float = DEFAULT_UTILISATION_ALERT,
    loop_visits: int = DEFAULT_LOOP_VISITS,
    now: datetime | None = None,
    effects: EffectsSource | Sequence[EffectsSource] | None = None,
) -> DelegationMetrics:
    """Read the runs of a checkpoint database and compute their delegation figures.

    `read_threads` then `compute_metrics` (the settings are checked before reading).

    Args:
        checkpointer: An open checkpointer (SQLite, Postgres, `InMemorySaver`).
        since: Only runs active at or after this time (a datetime, `24h`, `7d`, ISO text).
        graph: Only runs whose checkpoints' metadata has this `graph_id`.
        expected: Expected routes by thread, to score routing.
        utilisation_alert: The utilisation alert threshold (default 0.7).
        loop_visits: Visits of one worker in one turn that flag a loop (default 3).
        now: The time durations count back from and overdue reviews are judged at.
        effects: Where the runs recorded their side effects (`open_effects(url)`, a
            `StoreEffects`, or its store; or a list of them), to count those not `done`
            (`report.effects`: in doubt, or settled after a doubt); None leaves them out.

    Raises:
        ValueError: If an argument is invalid (naming it).
        TypeError: If `effects` is not an effects source.

    Example:
        ```python
        with open_checkpointer(url) as saver, open_effects(url) as effects:
            report = delegation_metrics(saver, since="7d", effects=effects)
        for edge in report.edges:
            print(edge.source, "->", edge.target, edge.success_rate)
        print(report.effects.in_doubt, "effects in doubt")
        ```
    """
    _check_settings(utilisation_alert, loop_visits)
    labels = None if expected is None else expected_routes(expected)
    records = read_threads(checkpointer, since=since, graph=graph, now=now)
    return compute_metrics(
        records,
        expected=labels,
        utilisation_alert=utilisation_alert,
        loop_visits=loop_visits,
        effects=effects,
    )


async def adelegation_metrics(
    checkpointer: BaseCheckpointSaver[Any],
    *,
    since: datetime | str | None = None,
    graph: str | None = None,
    expected: ExpectedRoutes | Sequence[Mapping[str, Any]] | None = None,
    utilisation_alert: float = DEFAULT_UTILISATION_ALERT,
    loop_visits: int = DEFAULT_LOOP_VISITS,
    now: datetime | None = None,
    effects: EffectsSource | Sequence[EffectsSource] | None = None,
) -> DelegationMetrics:
    """Async twin of `delegation_metrics` (the figures, `effects` included, in a worker thread).

    Example:
        ```python
        async with aopen_checkpointer("postgresql://app@db/app") as saver:
            report = await adelegation_metrics(saver, since="24h")
        ```
    """
    _check_settings(utilisation_alert, loop_visits)
    labels = None if expected is None else expected_routes(expected)
    records = await aread_threads(checkpointer, since=since, graph=graph, now=now)
    return await asyncio.to_thread(
        compute_metrics,
        records,
        expected=labels,
        utilisation_alert=utilisation_alert,
        loop_visits=loop_visits,
        effects=effects,
    )

"""Delegation metrics computed from a checkpoint database (`lgsp metrics` and its Python API).

Everything is read from the checkpoints, without the graph: each thread's newest root
checkpoint (its status, halt reason, ledger, usage, compactions, refused tools and answered
reviews), the newest checkpoint of each domain's namespace in a tree (the domain's own
ledger, usage, compactions and refused tools; its reviews are already in the root's), and
the root namespace's history for the reviews' interrupts (when each review was first
pending, and its deadline). The checkpoints are listed once (`_history.History`), and the
append-only channels (`ledger`, `usage`, ...), which are `DeltaChannel`s, are folded from
the listed checkpoints' writes the way LangGraph rebuilds them (no further read).

Figures:

- completion: runs by status and by halt reason, and the share that ended `done`;
- routing: precision, recall and F1 per worker against expected routes (each labelled
  thread's root ledger, as a multiset of workers, against its expected workers), micro
  averages and exact sequence matches;
- handoffs per edge (`supervisor -> billing` at the root, `ops -> incident` inside a tree):
  hops and the share that ended `success`;
- workers (by path, `ops/incident/pager` in a tree): visits, successes, failures, retries
  (a visit after a failed hop of the same worker in the same turn), loop flags (turns in
  which the worker ran `loop_visits` times or more) and refused tool calls;
- context utilisation per role (supervisor, worker, summarizer, synthesis): average, p99
  (nearest rank), peak, calls at or over the alert threshold (70% by default) and the
  alert (p99 at or over it); and the same per hop (the calls serving the Nth hop of a run,
  counted across its turns, at every level), to show how the context grows hop after hop;
- compactions by reason, failed ones, truncations (the fallback) and tokens saved; refused
  tool calls by worker and tool;
- reviews: by decision, escalation rate (escalated / answered), time in review (from the
  first checkpoint the run paused on the review to the answer's `answered_at`, with a
  histogram over `REVIEW_TIME_BUCKETS`), deadline
  breaches (answered at or after the deadline it was first given) and pending reviews,
  overdue ones included;
- effects, when `effects=` names where they were recorded (they are not in the
  checkpoints; read as `audit_trail` reads them): the reported runs' effects by state, and
  those not `done`: in doubt (`intent`, `in_doubt`: `run_external` cannot tell whether
  the call happened) or settled after a doubt (`reconciled`, `confirmed`, `redone`,
  `skipped`).

Example:
    ```python
    from langgraph_supervisor_pro import open_checkpointer
    from langgraph_supervisor_pro.observability import delegation_metrics

    with open_checkpointer("postgresql://app@db/app") as saver:
        report = delegation_metrics(saver, since="24h",
                                    expected={"order-7": ["billing", "writer"]})
    print(report.completion.completion_rate, report.utilisation[0].alert)
    ```
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.types import Interrupt

from langgraph_supervisor_pro._internal.durations import duration_seconds
from langgraph_supervisor_pro._internal.records import aware_time, namespace_path
from langgraph_supervisor_pro._internal.text import shown_id
from langgraph_supervisor_pro._internal.twins import Steps, adrive, drive
from langgraph_supervisor_pro._state import (
    CompactionEntry,
    LedgerEntry,
    ReviewEntry,
    SecurityEntry,
    UsageEntry,
)
from langgraph_supervisor_pro.observability._audit import (
    EffectEvent,
    EffectsSource,
    recorded_effects,
)
from langgraph_supervisor_pro.observability._history import History
from langgraph_supervisor_pro.observability._history_rows import reads_tables
from langgraph_supervisor_pro.persistence._effects import DONE, IN_DOUBT, INTENT
from langgraph_supervisor_pro.persistence._thread_index import indexed_heads
from langgraph_supervisor_pro.review._desk import INTERRUPT_CHANNEL, reviews_pending_at
from langgraph_supervisor_pro.review._payload import PendingReview
from langgraph_supervisor_pro.review._policy import SWEEP_REVIEWER

__all__ = [
    "DEFAULT_LOOP_VISITS",
    "DEFAULT_UTILISATION_ALERT",
    "REVIEW_TIME_BUCKETS",
    "CompactionMetrics",
    "CompletionMetrics",
    "DelegationMetrics",
    "DomainRecord",
    "EdgeMetrics",
    "EffectMetrics",
    "ExpectedRoutes",
    "HopUtilisation",
    "RefusalMetrics",
    "ReviewMetrics",
    "ReviewOpening",
    "ReviewTimeBucket",
    "RoutingMetrics",
    "RoutingScore",
    "ThreadRecord",
    "UtilisationMetrics",
    "WorkerMetrics",
    "adelegation_metrics",
    "aread_threads",
    "compute_metrics",
    "delegation_metrics",
    "expected_routes",
    "load_expected",
    "parse_since",
    "read_threads",
]

DEFAULT_UTILISATION_ALERT = 0.7
"""The context utilisation (tokens / window) at or over which a role's p99 raises the alert."""

DEFAULT_LOOP_VISITS = 3
"""Visits of one worker in one turn that flag a loop."""

REVIEW_TIME_BUCKETS: tuple[float, ...] = (60.0, 300.0, 900.0, 3600.0, 14400.0, 86400.0)
"""The upper bounds (seconds, exclusive) of the time-in-review histogram's buckets: under a
minute, 5 minutes, 15 minutes, an hour, 4 hours, a day; a last bucket holds the rest."""

ROOT = "supervisor"
"""The source of the root's edges (`supervisor -> <worker>`)."""

_DELTA = ("ledger", "usage", "security", "reviews", "compactions")
_ROLES = ("supervisor", "worker", "summarizer", "synthesis")

ExpectedRoutes = Mapping[str, Sequence[str]]
"""Expected routes by thread id: the workers the root should have run, in order."""


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, kw_only=True)
class DomainRecord:
    """One domain of a tree, as its newest checkpoint holds it.

    Example:
        >>> DomainRecord(path=("ops",), ledger=(), usage=(), compactions=(), security=()).path
        ('ops',)
    """

    path: tuple[str, ...]
    """The worker names from the root down to the domain (`("ops", "incident")`)."""
    ledger: tuple[LedgerEntry, ...]
    """The domain's own hops (across every visit)."""
    usage: tuple[UsageEntry, ...]
    """Its model calls."""
    compactions: tuple[CompactionEntry, ...]
    """Its compactions."""
    security: tuple[SecurityEntry, ...]
    """Its refused tool calls."""


@dataclass(frozen=True, kw_only=True)
class ReviewOpening:
    """When a run first paused on a review, and the deadline the review then had.

    Example:
        >>> ReviewOpening(first_seen=None, first_deadline=None).first_seen is None
        True
    """

    first_seen: datetime | None
    """The time of the first root checkpoint whose pending writes hold the review's interrupt."""
    first_deadline: datetime | None
    """The deadline it was first given: the payload's, or, once escalated (which moves the
    deadline), the first escalation's `previous_deadline`."""


@dataclass(frozen=True, kw_only=True)
class ThreadRecord:
    """What the checkpoints say about one run (thread), for `compute_metrics`.

    Example:
        >>> r = ThreadRecord(thread_id="t1", status="done", halt_reason=None,
        ...                  last_activity=None, graph_id=None)
        >>> r.ledger, r.domains
        ((), ())
    """

    thread_id: str
    """The thread."""
    status: str
    """The run's status (`running`, `done`, `failed`, `halted`), or `-` when unknown."""
    halt_reason: str | None
    """Why it stopped early, if it did."""
    last_activity: datetime | None
    """When its newest root checkpoint was written."""
    graph_id: str | None
    """The `graph_id` of its checkpoints' metadata (the LangGraph server sets it): the
    newest root checkpoint's that has one."""
    ledger: tuple[LedgerEntry, ...] = ()
    """The root's hops."""
    usage: tuple[UsageEntry, ...] = ()
    """The root's model calls."""
    compactions: tuple[CompactionEntry, ...] = ()
    """The root's compactions."""
    security: tuple[SecurityEntry, ...] = ()
    """The root's refused tool calls."""
    reviews: tuple[ReviewEntry, ...] = ()
    """Every answered review of the tree."""
    domains: tuple[DomainRecord, ...] = ()
    """The domains of a tree, by path."""
    pending_reviews: int = 0
    """Reviews the run is paused on."""
    overdue_reviews: int = 0
    """Those whose deadline has passed."""
    openings: Mapping[str, ReviewOpening] = field(default_factory=dict, repr=False)
    """By interrupt id: when the run first paused on it and the deadline it first had."""


def parse_since(value: str, *, now: datetime | None = None, where: str = "since") -> datetime:
    """A point in time: a duration back from `now`, or an ISO-8601 time.

    Durations are `90s`, `15m`, `24h`, `7d`, `2w`; a naive ISO time is taken as UTC.

    Args:
        value: The text.
        now: The time a duration counts back from (default: the current time).
        where: The field's name in the error message.

    Returns:
        A timezone-aware time.

    Raises:
        ValueError: If `value` is neither, naming `where`.

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


def _config_of(item: CheckpointTuple) -> Mapping[str, Any]:
    return item.config.get("configurable") or {}


def _values(history: History, item: CheckpointTuple) -> dict[str, tuple[Any, ...]]:
    """The delta channels' values at `item` (empty for one never written)."""
    values = history.delta_values(item, _DELTA)
    return {name: tuple(values.get(name) or ()) for name in _DELTA}


def _interrupts(writes: Iterable[Sequence[Any]]) -> Iterable[Interrupt]:
    for write in writes:
        if len(write) < 3 or write[1] != INTERRUPT_CHANNEL:
            continue
        value = write[2]
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, Interrupt):
                yield item


@dataclass(frozen=True, kw_only=True)
class _Thread:
    """One kept thread's newest root checkpoint and its domains' newest checkpoints."""

    root: CheckpointTuple
    domains: tuple[tuple[str, CheckpointTuple], ...]


class _Scan:
    """What one pass over every checkpoint finds: the newest per namespace, the openings."""

    def __init__(self) -> None:
        self.newest: dict[str, dict[str, CheckpointTuple]] = defaultdict(dict)
        self.openings: dict[str, dict[str, ReviewOpening]] = defaultdict(dict)
        self.graph_ids: dict[str, tuple[str, str]] = {}
        """By thread: the newest root checkpoint's id that names a `graph_id`, and it."""

    def add(self, item: CheckpointTuple) -> None:
        configurable = _config_of(item)
        thread = str(configurable.get("thread_id", ""))
        namespace = str(configurable.get("checkpoint_ns", ""))
        held = self.newest[thread].get(namespace)
        checkpoint_id = str(configurable.get("checkpoint_id", ""))
        if held is None or checkpoint_id > str(_config_of(held).get("checkpoint_id", "")):
            self.newest[thread][namespace] = item
        if namespace:
            return
        graph_id = (item.metadata or {}).get("graph_id")
        if graph_id is not None and checkpoint_id > self.graph_ids.get(thread, ("", ""))[0]:
            self.graph_ids[thread] = (checkpoint_id, str(graph_id))
        seen = aware_time(item.checkpoint.get("ts"))
        for interrupt in _interrupts(item.pending_writes or ()):
            openings = self.openings[thread]
            openings[interrupt.id] = _earliest(openings.get(interrupt.id), seen, interrupt.value)

    def kept(self, start: datetime | None, graph: str | None) -> list[_Thread]:
        """The threads the filters keep, with their supervisor-state domains."""
        out: list[_Thread] = []
        for thread, namespaces in self.newest.items():
            root = namespaces.get("")
            if root is None:
                continue
            if graph is not None and self.graph_id(thread) != graph:
                continue
            last = aware_time(root.checkpoint.get("ts"))
            if start is not None and (last is None or last < start):
                continue
            domains = tuple(
                (ns, item)
                for ns, item in sorted(namespaces.items())
                if ns and "ledger" in (item.checkpoint.get("channel_versions") or {})
            )
            out.append(_Thread(root=root, domains=domains))
        return out

    def graph_id(self, thread: str) -> str | None:
        """The thread's `graph_id`: the newest root checkpoint's that has one.

        A resume without the metadata (e.g. by `lgsp review`) writes checkpoints without it.
        """
        held = self.graph_ids.get(thread)
        return None if held is None else held[1]

    def record(
        self, thread: _Thread, history: History, pending: Counter[str], overdue: Counter[str]
    ) -> ThreadRecord:
        """The thread's record: its root's values, then each domain's."""
        root = thread.root
        thread_id = str(_config_of(root).get("thread_id", ""))
        values = root.checkpoint.get("channel_values") or {}
        delta = _values(history, root)
        domains: list[DomainRecord] = []
        for namespace, item in thread.domains:
            own = _values(history, item)
            domains.append(
                DomainRecord(
                    path=namespace_path(namespace),
                    ledger=cast(tuple[LedgerEntry, ...], own["ledger"]),
                    usage=cast(tuple[UsageEntry, ...], own["usage"]),
                    compactions=cast(tuple[CompactionEntry, ...], own["compactions"]),
                    security=cast(tuple[SecurityEntry, ...], own["security"]),
                )
            )
        status = values.get("status")
        halt = values.get("halt_reason")
        graph_id = self.graph_id(thread_id)
        return ThreadRecord(
            thread_id=thread_id,
            status=str(status) if status else "-",
            halt_reason=str(halt) if halt else None,
            last_activity=aware_time(root.checkpoint.get("ts")),
            graph_id=graph_id,
            ledger=cast(tuple[LedgerEntry, ...], delta["ledger"]),
            usage=cast(tuple[UsageEntry, ...], delta["usage"]),
            compactions=cast(tuple[CompactionEntry, ...], delta["compactions"]),
            security=cast(tuple[SecurityEntry, ...], delta["security"]),
            reviews=cast(tuple[ReviewEntry, ...], delta["reviews"]),
            domains=tuple(domains),
            pending_reviews=pending[thread_id],
            overdue_reviews=overdue[thread_id],
            openings=dict(self.openings.get(thread_id, {})),
        )


def _filters(
    since: datetime | str | None, graph: str | None, now: datetime | None
) -> tuple[datetime, datetime | None]:
    moment = _aware(now, "now")
    start = _since(since, moment)
    if graph is not None and (not isinstance(graph, str) or not graph.strip()):
        raise ValueError(f"graph: got {graph!r}; give a graph id (a non-empty name)")
    return moment, start


def _pending(
    reviews: Iterable[PendingReview], moment: datetime
) -> tuple[Counter[str], Counter[str]]:
    pending: Counter[str] = Counter()
    overdue: Counter[str] = Counter()
    for review in reviews:
        pending[review.thread_id] += 1
        if review.expired(moment):
            overdue[review.thread_id] += 1
    return pending, overdue


def _newest_first(records: list[ThreadRecord]) -> list[ThreadRecord]:
    records.sort(key=lambda r: (r.last_activity is not None, r.last_activity, r.thread_id))
    records.reverse()
    return records


def _records(
    history: History, since: datetime | str | None, graph: str | None, now: datetime | None
) -> list[ThreadRecord]:
    """The kept threads' records, from one listing of every checkpoint."""
    moment, start = _filters(since, graph, now)
    scan = _Scan()
    latest: dict[str, CheckpointTuple] = {}
    for thread_id in history.threads():
        for chain in history.namespaces(thread_id).values():
            for item in chain:
                scan.add(item)
        newest = history.newest(thread_id)
        if newest is not None:
            latest[thread_id] = newest
    pending, overdue = _pending(reviews_pending_at(latest), moment)
    records = [scan.record(thread, history, pending, overdue) for thread in scan.kept(start, graph)]
    return _newest_first(records)


def read_threads(
    checkpointer: BaseCheckpointSaver[Any],
    *,
    since: datetime | str | None = None,
    graph: str | None = None,
    now: datetime | None = None,
) -> list[ThreadRecord]:
    """Every run in a checkpoint database, as `compute_metrics` needs it, newest first.

    The checkpoints are listed once; each thread's delta channels are folded from the
    listed writes (one reducer call per checkpoint that wrote them).

    Args:
        checkpointer: An open checkpointer that lists across threads (SQLite, Postgres,
            `InMemorySaver`).
        since: Keep the threads active at or after this time (a datetime, or text for
            `parse_since`).
        graph: Keep the threads whose checkpoints' metadata has this `graph_id`.
        now: The time durations count back from and overdue reviews are judged at.

    Returns:
        One record per thread.

    Raises:
        ValueError: If `since`, `graph` or `now` is invalid (naming the field).

    Example:
        ```python
        with open_checkpointer("sqlite:///runs.db") as saver:
            records = read_threads(saver, since="7d", graph="support")
        ```
    """
    _, start = _filters(since, graph, now)
    threads = drive(_active_threads(checkpointer, start))
    return _records(History.read(checkpointer, threads), since, graph, now)


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
    _, start = _filters(since, graph, now)
    threads = await adrive(_active_threads(checkpointer, start))
    return _records(await History.aread(checkpointer, threads), since, graph, now)


def _active_threads(
    saver: BaseCheckpointSaver[Any], start: datetime | None
) -> Steps[list[str] | None]:
    """On Postgres with `since`: the threads whose newest root checkpoint is at or after it.

    One query per page of thread ids gives each head's time, so the listing then reads
    only those threads' checkpoints, not the whole database's. None (read every thread)
    without `since` or on another saver, which `_Scan.kept` filters after the listing.
    """
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


def _aware(now: datetime | None, where: str) -> datetime:
    if now is None:
        return datetime.now(UTC)
    if not isinstance(now, datetime) or now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"{where}: got {now!r}; give a timezone-aware datetime")
    return now


def _since(since: datetime | str | None, now: datetime) -> datetime | None:
    if since is None:
        return None
    if isinstance(since, datetime):
        return since if since.tzinfo is not None else since.replace(tzinfo=UTC)
    if isinstance(since, str):
        return parse_since(since, now=now)
    raise ValueError(f"since: got {type(since).__name__}; give a datetime or text such as 24h")


# --------------------------------------------------------------------------- expected routes


def expected_routes(value: object, *, where: str = "expected") -> dict[str, tuple[str, ...]]:
    """Validate expected routes: thread id -> worker names, or a list of cases.

    A case is `{"thread_id": ..., "expected": [...]}` (`"routes"` is accepted for
    `"expected"`).

    Args:
        value: The labelled set.
        where: The field's name in error messages.

    Returns:
        The routes by thread id.

    Raises:
        ValueError: Naming the field that is wrong.

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
    """Read expected routes from a JSON file (either form `expected_routes` takes).

    Args:
        path: The file.

    Returns:
        The routes by thread id.

    Raises:
        ValueError: If the file cannot be read, is not JSON, or is not a labelled set.

    Example:
        ```python
        routes = load_expected("labels.json")   # {"order-7": ["billing", "writer"]}
        ```
    """
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


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


@dataclass(frozen=True, kw_only=True)
class CompletionMetrics:
    """Runs by how they ended.

    Example:
        >>> CompletionMetrics(runs=2, by_status={"done": 1, "halted": 1},
        ...                   by_halt_reason={"max_steps": 1}).completion_rate
        0.5
    """

    runs: int
    """Runs counted."""
    by_status: Mapping[str, int]
    """Runs per status."""
    by_halt_reason: Mapping[str, int]
    """Runs per halt reason (halted and failed runs that have one)."""

    @property
    def completion_rate(self) -> float | None:
        """The share of runs that ended `done` (None without runs)."""
        return _ratio(self.by_status.get("done", 0), self.runs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> CompletionMetrics(runs=0, by_status={}, by_halt_reason={}).to_dict()["runs"]
            0
        """
        return {
            "runs": self.runs,
            "by_status": dict(self.by_status),
            "by_halt_reason": dict(self.by_halt_reason),
            "completion_rate": _round(self.completion_rate),
        }


@dataclass(frozen=True, kw_only=True)
class RoutingScore:
    """One worker's routing against the labels.

    Example:
        >>> s = RoutingScore(worker="billing", true_positives=3, false_positives=1,
        ...                  false_negatives=0)
        >>> s.precision, s.recall, round(s.f1 or 0, 4)
        (0.75, 1.0, 0.8571)
    """

    worker: str
    true_positives: int
    """Hops that were expected (per thread, min of actual and expected visits)."""
    false_positives: int
    """Hops that were not expected."""
    false_negatives: int
    """Expected hops that did not happen."""

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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> RoutingScore(worker="w", true_positives=0, false_positives=0,
            ...              false_negatives=1).to_dict()["recall"]
            0.0
        """
        return {
            "worker": self.worker,
            "true_positives": self.true_positives,
            "false_positives": self.false_positives,
            "false_negatives": self.false_negatives,
            "precision": _round(self.precision),
            "recall": _round(self.recall),
            "f1": _round(self.f1),
        }


def _f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


@dataclass(frozen=True, kw_only=True)
class RoutingMetrics:
    """The root's routes against expected routes.

    Example:
        >>> m = RoutingMetrics(labelled=1, missing=(), exact_matches=1, per_worker=(
        ...     RoutingScore(worker="a", true_positives=1, false_positives=0, false_negatives=0),))
        >>> m.micro_f1
        1.0
    """

    labelled: int
    """Labelled threads found in the database (and kept by the filters)."""
    missing: tuple[str, ...]
    """Labelled threads not found."""
    exact_matches: int
    """Threads whose root route is exactly the expected sequence."""
    per_worker: tuple[RoutingScore, ...]
    """One score per worker seen or expected, by name."""

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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> RoutingMetrics(labelled=0, missing=("t",), exact_matches=0,
            ...                per_worker=()).to_dict()["missing"]
            ['t']
        """
        return {
            "labelled": self.labelled,
            "missing": list(self.missing),
            "exact_matches": self.exact_matches,
            "micro_precision": _round(self.micro_precision),
            "micro_recall": _round(self.micro_recall),
            "micro_f1": _round(self.micro_f1),
            "per_worker": [s.to_dict() for s in self.per_worker],
        }


@dataclass(frozen=True, kw_only=True)
class EdgeMetrics:
    """Handoffs along one edge of the delegation tree.

    Example:
        >>> EdgeMetrics(source="supervisor", target="billing", hops=4, succeeded=3,
        ...             failed=1, needs_review=0).success_rate
        0.75
    """

    source: str
    """`supervisor` at the root, else the domain's path (`ops/incident`)."""
    target: str
    """The worker handed to."""
    hops: int
    succeeded: int
    failed: int
    needs_review: int

    @property
    def success_rate(self) -> float | None:
        """The share of hops that succeeded."""
        return _ratio(self.succeeded, self.hops)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> EdgeMetrics(source="s", target="t", hops=0, succeeded=0, failed=0,
            ...             needs_review=0).to_dict()["success_rate"] is None
            True
        """
        return {
            "source": self.source,
            "target": self.target,
            "hops": self.hops,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "needs_review": self.needs_review,
            "success_rate": _round(self.success_rate),
        }


@dataclass(frozen=True, kw_only=True)
class WorkerMetrics:
    """One worker's visits (by path in a tree).

    Example:
        >>> WorkerMetrics(worker="ops/pager", visits=2, succeeded=1, failed=1, retries=1,
        ...               loop_flags=0, refused_tools=0).to_dict()["retries"]
        1
    """

    worker: str
    """The worker's path from the root (`billing`, `ops/incident/pager`)."""
    visits: int
    succeeded: int
    failed: int
    retries: int
    """Visits after a failed hop of the same worker in the same turn."""
    loop_flags: int
    """Turns in which the worker ran `loop_visits` times or more."""
    refused_tools: int
    """Tool calls it made that were refused."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> WorkerMetrics(worker="w", visits=0, succeeded=0, failed=0, retries=0,
            ...               loop_flags=0, refused_tools=0).to_dict()["worker"]
            'w'
        """
        return {
            "worker": self.worker,
            "visits": self.visits,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "retries": self.retries,
            "loop_flags": self.loop_flags,
            "refused_tools": self.refused_tools,
        }


@dataclass(frozen=True, kw_only=True)
class UtilisationMetrics:
    """Context utilisation of one role's model calls.

    Example:
        >>> u = UtilisationMetrics(role="worker", calls=2, average=0.5, p99=0.8, peak=0.8,
        ...                        over_threshold=1, threshold=0.7)
        >>> u.alert
        True
    """

    role: str
    calls: int
    average: float
    p99: float
    """The 99th percentile (nearest rank)."""
    peak: float
    over_threshold: int
    """Calls at or over `threshold`."""
    threshold: float

    @property
    def alert(self) -> bool:
        """Whether the p99 is at or over the threshold."""
        return self.p99 >= self.threshold

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> UtilisationMetrics(role="r", calls=1, average=0.1, p99=0.1, peak=0.1,
            ...                    over_threshold=0, threshold=0.7).to_dict()["alert"]
            False
        """
        return {
            "role": self.role,
            "calls": self.calls,
            "average": _round(self.average),
            "p99": _round(self.p99),
            "peak": _round(self.peak),
            "over_threshold": self.over_threshold,
            "threshold": self.threshold,
            "alert": self.alert,
        }


@dataclass(frozen=True, kw_only=True)
class HopUtilisation:
    """Context utilisation of the model calls serving the Nth hop of a run, per role.

    Hops are numbered across a run's turns (turn 1's hops, then turn 2's, ...), at each
    level: the second hop of a domain's run is hop 2 too. A call belongs to the hop its
    usage record names (by turn and step: the supervisor's decision for it, the worker's
    own calls, a compaction before or inside it, the synthesis after a parallel step); a
    decision no hop followed (`FINISH`) counts as the next hop.

    Example:
        >>> hop = HopUtilisation(hop=2, roles=(UtilisationMetrics(
        ...     role="worker", calls=1, average=0.4, p99=0.4, peak=0.4, over_threshold=0,
        ...     threshold=0.7),))
        >>> hop.peak, hop.to_dict()["roles"][0]["role"]
        (0.4, 'worker')
    """

    hop: int
    """The hop's number in its run, from 1, counting across turns."""
    roles: tuple[UtilisationMetrics, ...]
    """One per role that made calls for the hop, in the order of `DelegationMetrics.utilisation`."""

    @property
    def peak(self) -> float:
        """The highest utilisation of any call for the hop."""
        return max((u.peak for u in self.roles), default=0.0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> HopUtilisation(hop=1, roles=()).to_dict()
            {'hop': 1, 'roles': []}
        """
        return {"hop": self.hop, "roles": [u.to_dict() for u in self.roles]}


@dataclass(frozen=True, kw_only=True)
class CompactionMetrics:
    """Compactions of workers' histories.

    Example:
        >>> CompactionMetrics(total=1, by_reason={"trigger": 1}, failed=0,
        ...                   tokens_saved=900).to_dict()["tokens_saved"]
        900
    """

    total: int
    by_reason: Mapping[str, int]
    failed: int
    """Compactions whose summarizer failed or was skipped (its breaker open)."""
    tokens_saved: int
    """Sum of tokens_before - tokens_after over the summaries and the truncations."""
    truncated: int = 0
    """Compactions that fell back to dropping the oldest turns (`kind="truncated"`)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> CompactionMetrics(total=0, by_reason={}, failed=0, tokens_saved=0).to_dict()
            {'total': 0, 'by_reason': {}, 'failed': 0, 'tokens_saved': 0, 'truncated': 0}
        """
        return {
            "total": self.total,
            "by_reason": dict(self.by_reason),
            "failed": self.failed,
            "tokens_saved": self.tokens_saved,
            "truncated": self.truncated,
        }


@dataclass(frozen=True, kw_only=True)
class RefusalMetrics:
    """Tool calls refused for least privilege.

    Example:
        >>> RefusalMetrics(total=1, by_worker={"tech": 1}, by_tool={"refund": 1}).total
        1
    """

    total: int
    by_worker: Mapping[str, int]
    """By worker path."""
    by_tool: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> RefusalMetrics(total=0, by_worker={}, by_tool={}).to_dict()["total"]
            0
        """
        return {
            "total": self.total,
            "by_worker": dict(self.by_worker),
            "by_tool": dict(self.by_tool),
        }


@dataclass(frozen=True, kw_only=True)
class ReviewTimeBucket:
    """One bar of the time-in-review histogram: reviews answered within its bounds.

    Example:
        >>> ReviewTimeBucket(lower_seconds=60.0, upper_seconds=300.0, reviews=2).label
        '1 min - 5 min'
        >>> ReviewTimeBucket(lower_seconds=86400.0, upper_seconds=None, reviews=0).label
        '1 d or more'
    """

    lower_seconds: float
    """The bucket's lower bound (inclusive)."""
    upper_seconds: float | None
    """Its upper bound (exclusive); None for the last bucket."""
    reviews: int
    """Answered reviews whose time in review falls in it."""

    @property
    def label(self) -> str:
        """The bounds as text (`< 1 min`, `1 min - 5 min`, `1 d or more`)."""
        if self.upper_seconds is None:
            return f"{_span(self.lower_seconds)} or more"
        if self.lower_seconds <= 0:
            return f"< {_span(self.upper_seconds)}"
        return f"{_span(self.lower_seconds)} - {_span(self.upper_seconds)}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> ReviewTimeBucket(lower_seconds=0.0, upper_seconds=60.0, reviews=1).to_dict()
            {'lower_seconds': 0.0, 'upper_seconds': 60.0, 'reviews': 1, 'label': '< 1 min'}
        """
        return {
            "lower_seconds": self.lower_seconds,
            "upper_seconds": self.upper_seconds,
            "reviews": self.reviews,
            "label": self.label,
        }


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
class ReviewMetrics:
    """Human reviews: decisions, escalations, time in review, deadlines.

    Example:
        >>> r = ReviewMetrics(answered=2, by_decision={"approve": 2}, escalated=1,
        ...                   timed=2, average_seconds=30.0, p99_seconds=50.0,
        ...                   max_seconds=50.0, deadline_breaches=1, pending=0, overdue=0)
        >>> r.escalation_rate
        0.5
    """

    answered: int
    by_decision: Mapping[str, int]
    escalated: int
    """Answered reviews that were escalated before their answer."""
    timed: int
    """Answered reviews whose opening was found in the history."""
    average_seconds: float | None
    p99_seconds: float | None
    max_seconds: float | None
    deadline_breaches: int
    """Answered at or after the deadline they were first given (an escalation, or the
    sweep's reject, comes after one), plus pending reviews already overdue."""
    pending: int
    overdue: int
    """Pending reviews whose deadline has passed."""
    histogram: tuple[ReviewTimeBucket, ...] = ()
    """The timed reviews by time in review, one bucket per `REVIEW_TIME_BUCKETS` bound and
    one for the rest (empty buckets included)."""

    @property
    def escalation_rate(self) -> float | None:
        """The share of answered reviews that were escalated."""
        return _ratio(self.escalated, self.answered)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> ReviewMetrics(answered=0, by_decision={}, escalated=0, timed=0,
            ...               average_seconds=None, p99_seconds=None, max_seconds=None,
            ...               deadline_breaches=0, pending=0, overdue=0).to_dict()["answered"]
            0
        """
        return {
            "answered": self.answered,
            "by_decision": dict(self.by_decision),
            "escalated": self.escalated,
            "escalation_rate": _round(self.escalation_rate),
            "time_in_review": {
                "timed": self.timed,
                "average_seconds": _round(self.average_seconds),
                "p99_seconds": _round(self.p99_seconds),
                "max_seconds": _round(self.max_seconds),
                "histogram": [b.to_dict() for b in self.histogram],
            },
            "deadline_breaches": self.deadline_breaches,
            "pending": self.pending,
            "overdue": self.overdue,
        }


@dataclass(frozen=True, kw_only=True)
class EffectMetrics:
    """The side effects the runs recorded (`effects=`), and those that were in doubt.

    Example:
        >>> e = EffectMetrics(recorded=3, by_state={"done": 1, "intent": 1, "skipped": 1})
        >>> e.doubted, e.in_doubt, e.settled_after_doubt
        (2, 1, 1)
    """

    recorded: int
    """Effects recorded for the reported runs."""
    by_state: Mapping[str, int]
    """By state: `done`, `intent`, `in_doubt`, `reconciled`, `confirmed`, `redone`,
    `skipped` (see `PostgresEffects.run_external`)."""

    @property
    def doubted(self) -> int:
        """Effects not `done`: in doubt now, or settled after a doubt."""
        return self.recorded - self.by_state.get(DONE, 0)

    @property
    def in_doubt(self) -> int:
        """Effects still in doubt: an intent without an outcome, or one paused on a review.

        An intent is a call in flight, or one whose execution died after it.
        """
        return self.by_state.get(INTENT, 0) + self.by_state.get(IN_DOUBT, 0)

    @property
    def settled_after_doubt(self) -> int:
        """Effects settled after a doubt: reconciled, confirmed, redone or skipped.

        The call may have happened twice, or not at all.
        """
        return self.doubted - self.in_doubt

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> EffectMetrics(recorded=1, by_state={"intent": 1}).to_dict()["in_doubt"]
            1
        """
        return {
            "recorded": self.recorded,
            "doubted": self.doubted,
            "in_doubt": self.in_doubt,
            "settled_after_doubt": self.settled_after_doubt,
            "by_state": dict(self.by_state),
        }


def _effect_metrics(recorded: Sequence[EffectEvent] | None) -> EffectMetrics | None:
    if recorded is None:
        return None
    states = Counter(e.state for e in recorded)
    return EffectMetrics(recorded=len(recorded), by_state=dict(sorted(states.items())))


@dataclass(frozen=True, kw_only=True)
class DelegationMetrics:
    """Every delegation figure of a set of runs (`compute_metrics`, `delegation_metrics`).

    Example:
        ```python
        report = delegation_metrics(saver)
        print(json.dumps(report.to_dict(), indent=2))
        ```
    """

    completion: CompletionMetrics
    routing: RoutingMetrics | None
    """None when no expected routes were given."""
    edges: tuple[EdgeMetrics, ...]
    workers: tuple[WorkerMetrics, ...]
    utilisation: tuple[UtilisationMetrics, ...]
    """One per role that made model calls, in the order supervisor, worker, summarizer,
    synthesis."""
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

    @property
    def alerts(self) -> tuple[str, ...]:
        """The roles whose utilisation raised the alert."""
        return tuple(u.role for u in self.utilisation if u.alert)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values (what `lgsp metrics --json` prints).

        Example:
            ```python
            json.dumps(delegation_metrics(saver).to_dict())
            ```
        """
        return {
            "completion": self.completion.to_dict(),
            "routing": None if self.routing is None else self.routing.to_dict(),
            "hops": self.hops,
            "edges": [e.to_dict() for e in self.edges],
            "workers": [w.to_dict() for w in self.workers],
            "utilisation": [u.to_dict() for u in self.utilisation],
            "hop_utilisation": [h.to_dict() for h in self.hop_utilisation],
            "utilisation_alert": self.utilisation_alert,
            "alerts": list(self.alerts),
            "loop_visits": self.loop_visits,
            "compactions": self.compactions.to_dict(),
            "refusals": self.refusals.to_dict(),
            "reviews": self.reviews.to_dict(),
            "effects": None if self.effects is None else self.effects.to_dict(),
        }


# --------------------------------------------------------------------------- computing


def _p99(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(0.99 * len(ordered)) - 1, 0)]


def _levels(
    record: ThreadRecord,
) -> Iterable[
    tuple[
        tuple[str, ...],
        Sequence[LedgerEntry],
        Sequence[UsageEntry],
        Sequence[CompactionEntry],
        Sequence[SecurityEntry],
    ]
]:
    yield (), record.ledger, record.usage, record.compactions, record.security
    for domain in record.domains:
        yield domain.path, domain.ledger, domain.usage, domain.compactions, domain.security


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
    if isinstance(loop_visits, bool) or not isinstance(loop_visits, int) or loop_visits < 2:
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

    Returns:
        The figures.

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
    return _compute(records, expected, float(utilisation_alert), loop_visits, recorded)


def _compute(
    records: Sequence[ThreadRecord],
    expected: ExpectedRoutes | Sequence[Mapping[str, Any]] | None,
    utilisation_alert: float,
    loop_visits: int,
    recorded: Sequence[EffectEvent] | None,
) -> DelegationMetrics:
    labels = None if expected is None else expected_routes(expected)
    by_status: Counter[str] = Counter()
    by_halt: Counter[str] = Counter()
    edges: dict[tuple[str, str], Counter[str]] = {}
    workers: dict[str, Counter[str]] = {}
    calls: dict[str, list[float]] = defaultdict(list)
    per_hop: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    compaction_reasons: Counter[str] = Counter()
    compactions = failed_compactions = truncated_compactions = saved = 0
    refused_by_worker: Counter[str] = Counter()
    refused_by_tool: Counter[str] = Counter()
    hops = 0
    for record in records:
        by_status[record.status] += 1
        if record.halt_reason:
            by_halt[record.halt_reason] += 1
        for path, ledger, usage, compacted, security in _levels(record):
            source = "/".join(path) or ROOT
            failed_before: set[tuple[int, str]] = set()
            per_turn: Counter[tuple[int, str]] = Counter()
            for entry in ledger:
                hops += 1
                name = entry["worker"]
                key = "/".join((*path, name))
                edge = edges.setdefault((source, name), Counter())
                edge["hops"] += 1
                edge[entry["status"]] += 1
                figures = workers.setdefault(key, Counter())
                figures["visits"] += 1
                figures[entry["status"]] += 1
                turn_key = (entry["turn"], name)
                if turn_key in failed_before:
                    figures["retries"] += 1
                if entry["status"] == "failed":
                    failed_before.add(turn_key)
                per_turn[turn_key] += 1
                if per_turn[turn_key] == loop_visits:
                    figures["loop_flags"] += 1
            numbers = _hop_numbers(ledger, usage)
            for call in usage:
                calls[call["role"]].append(float(call["utilisation"]))
                hop = numbers[(call["turn"], call["step"])]
                per_hop[hop][call["role"]].append(float(call["utilisation"]))
            for done in compacted:
                compactions += 1
                compaction_reasons[done["reason"]] += 1
                truncation = done.get("kind") == "truncated"
                truncated_compactions += truncation
                if done["error"] is not None:
                    failed_compactions += 1
                if done["error"] is None or truncation:
                    saved += done["tokens_before"] - done["tokens_after"]
            for refusal in security:
                key = "/".join((*path, refusal["worker"]))
                refused_by_worker[key] += 1
                refused_by_tool[refusal["tool"]] += 1
                workers.setdefault(key, Counter())["refused"] += 1
    return DelegationMetrics(
        completion=CompletionMetrics(
            runs=len(records),
            by_status=dict(sorted(by_status.items())),
            by_halt_reason=dict(sorted(by_halt.items())),
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
            )
            for key, c in sorted(workers.items())
        ),
        utilisation=_utilisation(calls, float(utilisation_alert)),
        hop_utilisation=tuple(
            HopUtilisation(hop=hop, roles=_utilisation(per_hop[hop], float(utilisation_alert)))
            for hop in sorted(per_hop)
        ),
        compactions=CompactionMetrics(
            total=compactions,
            by_reason=dict(sorted(compaction_reasons.items())),
            failed=failed_compactions,
            tokens_saved=saved,
            truncated=truncated_compactions,
        ),
        refusals=RefusalMetrics(
            total=sum(refused_by_tool.values()),
            by_worker=dict(sorted(refused_by_worker.items())),
            by_tool=dict(sorted(refused_by_tool.items())),
        ),
        reviews=_reviews(records),
        hops=hops,
        utilisation_alert=float(utilisation_alert),
        loop_visits=loop_visits,
        effects=_effect_metrics(recorded),
    )


def _hop_numbers(
    ledger: Sequence[LedgerEntry], usage: Sequence[UsageEntry]
) -> dict[tuple[int, int], int]:
    """Each (turn, step) of one level's run: its hop number, from 1, across turns."""
    keys = {(e["turn"], e["step"]) for e in ledger} | {(c["turn"], c["step"]) for c in usage}
    return {key: index for index, key in enumerate(sorted(keys), start=1)}


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
            counts[worker]["tp"] += tp
            counts[worker]["fp"] += ran[worker] - tp
            counts[worker]["fn"] += expected[worker] - tp
    return RoutingMetrics(
        labelled=labelled,
        missing=tuple(sorted(t for t in labels if t not in found)),
        exact_matches=exact,
        per_worker=tuple(
            RoutingScore(
                worker=worker,
                true_positives=c["tp"],
                false_positives=c["fp"],
                false_negatives=c["fn"],
            )
            for worker, c in sorted(counts.items())
        ),
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
        by_decision=dict(sorted(decisions.items())),
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

    `read_threads` then `compute_metrics`; the settings are validated before anything
    is read.

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

    Returns:
        The figures.

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
    """Async twin of `delegation_metrics` (`aread_threads`, then `compute_metrics`).

    `effects` takes the same sources as `delegation_metrics` (`open_effects(url)`, a
    `StoreEffects` or its store); they are read in a worker thread.

    Example:
        ```python
        async with aopen_checkpointer("postgresql://app@db/app") as saver:
            report = await adelegation_metrics(saver, since="24h")
        ```
    """
    _check_settings(utilisation_alert, loop_visits)
    labels = None if expected is None else expected_routes(expected)
    records = await aread_threads(checkpointer, since=since, graph=graph, now=now)
    recorded = (
        None
        if effects is None
        else await asyncio.to_thread(recorded_effects, effects, [r.thread_id for r in records])
    )
    return _compute(records, labels, float(utilisation_alert), loop_visits, recorded)

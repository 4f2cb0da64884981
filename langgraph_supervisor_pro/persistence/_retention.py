"""Retention: delete the checkpoints, writes and store items of finished, old threads.

A thread goes when its newest root checkpoint is older than `older_than`, finished and not
under a live `thread_lease`; one that moves on meanwhile stays (the deletion re-reads its
head under the fence lock on Postgres, under its process-local lease elsewhere). Docs:
https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/retention/
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, Literal, LiteralString, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.base import BaseStore, Item, PutOp, SearchOp

from langgraph_supervisor_pro._internal.durations import duration_seconds
from langgraph_supervisor_pro._internal.records import aware_time
from langgraph_supervisor_pro._internal.text import cut_id, store_label, truncate
from langgraph_supervisor_pro._internal.twins import Call, Steps, adrive, drive
from langgraph_supervisor_pro.errors import ThreadBusyError
from langgraph_supervisor_pro.persistence._effects import StoreEffects
from langgraph_supervisor_pro.persistence._leases import _FENCE_KEY, _LEASE_KEY, thread_lease
from langgraph_supervisor_pro.persistence._memory import output_namespace
from langgraph_supervisor_pro.persistence._thread_index import (
    Sql,
    Transaction,
    head_page,
    indexed,
    scan,
)

FINISHED_STATUSES = ("done", "halted", "failed")
"""The statuses a finished run can have (`running` never is)."""
DEFAULT_BATCH_SIZE = 200
"""Threads listed, checked and deleted per batch."""
MAX_BATCH_SIZE = 10_000
MAX_AGE = timedelta(days=36_500)
"""The longest `older_than` accepted (100 years)."""
_STORE_PAGE = 500

Outcome = Literal["would_delete", "deleted", "changed", "leased"]


@dataclass(frozen=True, kw_only=True)
class PrunedThread:
    """A finished, old thread: what goes (or went) and what became of it.

    Example:
        >>> from datetime import UTC, datetime
        >>> row = PrunedThread(thread_id="t-1", status="done", outcome="deleted",
        ...     last_activity=datetime(2030, 1, 1, tzinfo=UTC), age_seconds=86400.0,
        ...     rows={"checkpoints": 4, "writes": 9})
        >>> row.line()
        'thread t-1 (done, 1.0 d old): deleted, 4 checkpoints, 9 writes'
        >>> row.to_dict()["rows"]
        {'checkpoints': 4, 'writes': 9}
    """

    thread_id: str
    status: str
    """Its run's status (`done`, `halted` or `failed`)."""
    outcome: Outcome
    """`would_delete` (a dry run), `deleted`, `changed` (a new checkpoint came between
    the listing and the deletion: kept) or `leased` (a live lease holds it: kept)."""
    last_activity: datetime
    """When its newest root checkpoint was written."""
    age_seconds: float
    """How long before `now` that was."""
    rows: Mapping[str, int] = field(default_factory=dict)
    """What goes (went), per kind: `checkpoints`, `writes` (every namespace), and on
    Postgres `blobs`, `effects` (`lgsp_effects` rows), `leases` (`lgsp_thread_leases`
    rows); `store_items` when a store is given. Empty for a thread that was kept."""

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready values (the time in ISO 8601)."""
        return {
            "thread_id": self.thread_id,
            "status": self.status,
            "outcome": self.outcome,
            "last_activity": self.last_activity.isoformat(),
            "age_seconds": round(self.age_seconds, 3),
            "rows": dict(self.rows),
        }

    def line(self) -> str:
        """One line for a log or a terminal.

        Example:
            >>> from datetime import UTC, datetime
            >>> PrunedThread(thread_id="t", status="halted", outcome="changed",
            ...     last_activity=datetime(2030, 1, 1, tzinfo=UTC), age_seconds=7200.0).line()
            'thread t (halted, 2.0 h old): kept, it has a new checkpoint'
        """
        age = _age_text(self.age_seconds)
        head = f"thread {cut_id(self.thread_id)} ({self.status}, {age} old)"
        if self.outcome == "changed":
            return f"{head}: kept, it has a new checkpoint"
        if self.outcome == "leased":
            return f"{head}: kept, a live lease holds it"
        verb = "deleted" if self.outcome == "deleted" else "would delete"
        counts = ", ".join(f"{n} {kind}" for kind, n in self.rows.items())
        return f"{head}: {verb}{', ' + counts if counts else ''}"


@dataclass(frozen=True, kw_only=True)
class PruneReport:
    """What a prune found and did.

    Example:
        >>> from datetime import UTC, datetime
        >>> report = PruneReport(dry_run=True, cutoff=datetime(2030, 1, 1, tzinfo=UTC),
        ...     statuses=("done",), scanned=3, kept={"recent": 3})
        >>> report.totals(), report.to_dict()["kept"]
        ({}, {'recent': 3})
    """

    dry_run: bool
    """Whether nothing was deleted (only reported)."""
    cutoff: datetime
    """Threads whose newest checkpoint is older than this were candidates."""
    statuses: tuple[str, ...]
    """The statuses that count as finished."""
    scanned: int
    """Threads looked at."""
    threads: tuple[PrunedThread, ...] = ()
    """The finished, old threads (deleted, to delete, or kept at the last check)."""
    kept: Mapping[str, int] = field(default_factory=dict)
    """Threads kept, by why: `recent`, `pending` (paused at a review, mid-run, a new
    turn started), `status` (another status), `leased`, `changed`."""

    def totals(self) -> dict[str, int]:
        """Rows and items per kind over the threads deleted (or to delete, in a dry run)."""
        total: Counter[str] = Counter()
        for thread in self.threads:
            if thread.outcome in ("deleted", "would_delete"):
                total.update(thread.rows)
        return dict(total)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values."""
        outcomes = Counter(t.outcome for t in self.threads)
        return {
            "dry_run": self.dry_run,
            "cutoff": self.cutoff.isoformat(),
            "statuses": list(self.statuses),
            "scanned": self.scanned,
            "deleted": outcomes["deleted"],
            "would_delete": outcomes["would_delete"],
            "kept": dict(self.kept),
            "totals": self.totals(),
            "threads": [t.to_dict() for t in self.threads],
        }


def _age_text(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} d"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.1f} min"


def parse_age(value: float | timedelta | str, *, where: str = "older_than") -> timedelta:
    """An age: seconds (a number), a `timedelta`, or the CLI's text (`90s`, `12h`, `30d`, `2w`).

    Args:
        value: The age.
        where: The field's name in the error message (e.g. `--older-than`).

    Returns:
        The age, between 0 and 100 years.

    Raises:
        ValueError: Not such an age (negative, not finite, too large, no unit).

    Example:
        >>> parse_age("30d"), parse_age("1.5h"), parse_age(86400)
        (datetime.timedelta(days=30), datetime.timedelta(seconds=5400), datetime.timedelta(days=1))
        >>> parse_age("-1d", where="--older-than")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: --older-than: got '-1d'; give an age such as 30d, 12h, 90m or 2w (...)
    """
    hint = "give an age such as 30d, 12h, 90m or 2w (a number >= 0 and a unit: s, m, h, d, w)"
    if isinstance(value, timedelta):
        if value < timedelta(0) or value > MAX_AGE:
            raise ValueError(f"{where}: got {value!r}; give an age from 0 to 100 years")
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value) if math.isfinite(value) else math.inf
        if not 0 <= seconds <= MAX_AGE.total_seconds():
            raise ValueError(
                f"{where}: got {value!r}; give a number of seconds from 0 to "
                f"{MAX_AGE.total_seconds():.0f} (100 years), or a timedelta"
            )
        return timedelta(seconds=seconds)
    if not isinstance(value, str):
        raise ValueError(f"{where}: got {type(value).__name__}; {hint}")
    amount = duration_seconds(value)
    if amount is None or not math.isfinite(amount):
        raise ValueError(f"{where}: got {value!r}; {hint}")
    if amount > MAX_AGE.total_seconds():
        raise ValueError(f"{where}: got {value!r}; give an age of at most 100 years")
    return timedelta(seconds=amount)


def _statuses(value: str | Iterable[str]) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else list(value)
    bad = [n for n in names if not isinstance(n, str) or n not in FINISHED_STATUSES]
    if bad or not names:
        raise ValueError(
            f"statuses: got {bad[0] if bad else 'none'!r}; give one or more of "
            f"{', '.join(FINISHED_STATUSES)} (a run still running is never pruned)"
        )
    return tuple(dict.fromkeys(names))


def _prefixes(value: Sequence[Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    prefixes: list[tuple[str, ...]] = []
    for prefix in value:
        labels = (prefix,) if isinstance(prefix, str) else tuple(prefix)
        if not labels or not all(
            isinstance(label, str) and label and "." not in label and "\x00" not in label
            for label in labels
        ):
            raise ValueError(
                f"store_namespaces: got {prefix!r}; give each as a tuple of non-empty "
                "labels without '.' or NUL, e.g. ('research_team', 'sources')"
            )
        prefixes.append(labels)
    return tuple(prefixes)


@dataclass(frozen=True)
class _Options:
    cutoff: datetime
    now: datetime
    statuses: tuple[str, ...]
    dry_run: bool
    batch_size: int
    prefixes: tuple[tuple[str, ...], ...]


def _options(
    older_than: float | timedelta,
    statuses: str | Iterable[str],
    dry_run: bool,
    batch_size: int,
    store_namespaces: Sequence[Sequence[str]],
    now: datetime | None,
) -> _Options:
    if isinstance(older_than, str):
        raise TypeError(
            f"older_than: got the text {truncate(older_than, 40)!r}; give a number of seconds or a "
            "timedelta (text such as 30d is the CLI's form: lgsp prune --older-than 30d)"
        )
    age = parse_age(older_than)
    if not isinstance(dry_run, bool):
        raise TypeError(f"dry_run: got {type(dry_run).__name__}; give True or False")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int):
        raise TypeError(f"batch_size: got {type(batch_size).__name__}; give an int")
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise ValueError(f"batch_size: got {batch_size}; give 1 to {MAX_BATCH_SIZE} threads")
    if now is not None and (not isinstance(now, datetime) or now.utcoffset() is None):
        raise ValueError("now: give a timezone-aware datetime, e.g. datetime.now(UTC)")
    moment = now if now is not None else datetime.now(UTC)
    return _Options(
        moment - age, moment, _statuses(statuses), dry_run, batch_size, _prefixes(store_namespaces)
    )


def _pending(item: CheckpointTuple) -> bool:
    """Whether the head has work left: pending writes, or a channel that triggers a task."""
    if item.pending_writes:
        return True
    values = item.checkpoint.get("channel_values") or {}
    return any(
        name == "__start__" or name.startswith("branch:to:") or (name == "__pregel_tasks" and v)
        for name, v in values.items()
    )


def _verdict(item: CheckpointTuple | None, opts: _Options) -> str | None:
    """Why the thread stays (`recent`, `pending`, `status`), or None when it may go."""
    if item is None:
        return "changed"  # deleted since the listing
    when = aware_time(item.checkpoint.get("ts"))
    if when is None or when >= opts.cutoff:
        return "recent"
    if _pending(item):
        return "pending"
    status = (item.checkpoint.get("channel_values") or {}).get("status")
    return None if status in opts.statuses else "status"


def _root(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}


def _store_prefixes(thread: str, opts: _Options) -> list[tuple[str, ...]]:
    outputs = output_namespace(thread, "-")[:-1]  # ("lgsp", "outputs", <label>)
    extra = [(*p, store_label(thread) if thread else "no-thread") for p in opts.prefixes]
    return [outputs, StoreEffects.thread_namespace(thread), *extra]


# The lease's and the fence's lock keys are the lease module's own, taken for this
# transaction only: a live lease holder (`thread_lease`) keeps its thread.
_PG_TRY_LEASE: LiteralString = "SELECT pg_try_advisory_xact_lock(" + _LEASE_KEY + ")"
_PG_FENCE: LiteralString = "SELECT pg_advisory_xact_lock(" + _FENCE_KEY + ")"
_PG_NEWEST: LiteralString = (
    "SELECT max(checkpoint_id) FILTER (WHERE checkpoint_ns = ''), max(checkpoint_id), "
    "count(*) FROM checkpoints WHERE thread_id = %s"
)
_PG_COUNTS: LiteralString = (
    "SELECT (SELECT count(*) FROM checkpoint_writes WHERE thread_id = %s), "
    "(SELECT count(*) FROM checkpoint_blobs WHERE thread_id = %s), "
    "to_regclass('lgsp_effects') IS NOT NULL, to_regclass('lgsp_thread_leases') IS NOT NULL"
)
_PG_EFFECTS: LiteralString = "DELETE FROM lgsp_effects WHERE thread_id = %s"
_PG_EFFECTS_COUNT: LiteralString = "SELECT count(*) FROM lgsp_effects WHERE thread_id = %s"
_PG_LEASES: LiteralString = "DELETE FROM lgsp_thread_leases WHERE thread_id = %s"
_PG_LEASES_COUNT: LiteralString = "SELECT count(*) FROM lgsp_thread_leases WHERE thread_id = %s"


def _pg_delete(
    saver: PostgresSaver | AsyncPostgresSaver, thread: str, head: str, dry_run: bool
) -> Steps[tuple[str, dict[str, int]]]:
    """In one transaction: the lease tried, the fence taken, the head re-read, the rows gone."""

    def body(cur: Any, conn: Any) -> Steps[tuple[str, dict[str, int]]]:
        (free,) = (yield Sql(cur, _PG_TRY_LEASE, (thread,)))[0]
        if not free:
            return "leased", {}
        yield Sql(cur, _PG_FENCE, (thread,))
        root, newest, checkpoints = (yield Sql(cur, _PG_NEWEST, (thread,)))[0]
        if root != head or newest != head:  # a new checkpoint, at the root or in a worker
            return "changed", {}
        writes, blobs, effects_table, leases_table = (yield Sql(cur, _PG_COUNTS, (thread, thread)))[
            0
        ]
        rows = {"checkpoints": int(checkpoints), "writes": int(writes), "blobs": int(blobs)}
        if effects_table:
            rows["effects"] = int((yield Sql(cur, _PG_EFFECTS_COUNT, (thread,)))[0][0])
        if leases_table:
            rows["leases"] = int((yield Sql(cur, _PG_LEASES_COUNT, (thread,)))[0][0])
        if dry_run:
            return "would_delete", rows
        yield Call(
            lambda: PostgresSaver(conn, serde=saver.serde).delete_thread(thread),
            lambda: AsyncPostgresSaver(conn, serde=saver.serde).adelete_thread(thread),
        )
        if effects_table:
            yield Sql(cur, _PG_EFFECTS, (thread,))
        if leases_table:
            yield Sql(cur, _PG_LEASES, (thread,))
        return "deleted", rows

    return cast(tuple[str, dict[str, int]], (yield Transaction(saver, body)))


def _counts(items: Iterable[CheckpointTuple]) -> tuple[dict[str, int], str, str]:
    """Checkpoints and writes of a thread, its newest root and newest checkpoint ids."""
    checkpoints = writes = 0
    root = newest = ""
    for item in items:
        checkpoints += 1
        writes += len(item.pending_writes or ())
        configurable = item.config["configurable"]
        checkpoint_id = str(configurable["checkpoint_id"])
        newest = max(newest, checkpoint_id)
        if not configurable.get("checkpoint_ns"):
            root = max(root, checkpoint_id)
    return {"checkpoints": checkpoints, "writes": writes}, root, newest


async def _acounts(
    saver: BaseCheckpointSaver[Any], config: RunnableConfig
) -> tuple[dict[str, int], str, str]:
    return _counts([item async for item in saver.alist(config)])


def _local_delete(
    saver: BaseCheckpointSaver[Any], thread: str, head: str, dry_run: bool
) -> Steps[tuple[str, dict[str, int]]]:
    """Under the thread's process-local lease: the thread re-read, then `delete_thread`."""
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    with ExitStack() as stack:
        try:
            stack.enter_context(thread_lease(saver, thread, owner="lgsp prune"))
        except ThreadBusyError:
            return "leased", {}
        rows, root, newest = yield Call(
            lambda: _counts(saver.list(config)), partial(_acounts, saver, config)
        )
        if root != head or newest != head:  # a new checkpoint, at the root or in a worker
            return "changed", {}
        if not dry_run:
            yield Call(partial(saver.delete_thread, thread), partial(saver.adelete_thread, thread))
        return ("would_delete" if dry_run else "deleted"), rows


def _store_items(store: BaseStore, prefixes: Sequence[tuple[str, ...]], delete: bool) -> Steps[int]:
    """Count (with `delete`, delete) the items under the prefixes, a page of each at a time.

    One `batch` searches every prefix not yet exhausted, one more deletes what it found.
    """
    total = 0
    offsets = dict.fromkeys(prefixes, 0)
    while offsets:
        ops = [
            SearchOp(p, limit=_STORE_PAGE, offset=o, refresh_ttl=False) for p, o in offsets.items()
        ]
        pages = yield Call(partial(store.batch, ops), partial(store.abatch, ops))
        found: list[Item] = []
        for prefix, page in zip(list(offsets), pages, strict=True):
            found.extend(page)
            if len(page) < _STORE_PAGE:
                del offsets[prefix]
            elif not delete:
                offsets[prefix] += len(page)
        total += len(found)
        if delete and found:
            puts = [PutOp(item.namespace, item.key, None) for item in found]
            yield Call(partial(store.batch, puts), partial(store.abatch, puts))
    return total


def _prune_one(
    saver: BaseCheckpointSaver[Any], store: BaseStore | None, opts: _Options, thread: str
) -> Steps[PrunedThread | str]:
    """One listed thread: why it stays (a reason), or what became of it."""
    head = yield Call(
        partial(saver.get_tuple, _root(thread)), partial(saver.aget_tuple, _root(thread))
    )
    why = _verdict(head, opts)
    if why is not None:
        return why
    assert head is not None
    head_id = str(head.config["configurable"]["checkpoint_id"])
    if isinstance(saver, PostgresSaver | AsyncPostgresSaver):
        outcome, rows = yield from _pg_delete(saver, thread, head_id, opts.dry_run)
    else:
        outcome, rows = yield from _local_delete(saver, thread, head_id, opts.dry_run)
    if outcome in ("deleted", "would_delete") and store is not None:
        prefixes = _store_prefixes(thread, opts)
        rows["store_items"] = yield from _store_items(store, prefixes, not opts.dry_run)
    when = aware_time(head.checkpoint.get("ts"))
    assert when is not None  # `_verdict` keeps a head without a time
    return PrunedThread(
        thread_id=thread,
        status=str(head.checkpoint["channel_values"]["status"]),
        outcome=cast(Outcome, outcome),
        last_activity=when,
        age_seconds=(opts.now - when).total_seconds(),
        rows=rows,
    )


def _prune(
    saver: BaseCheckpointSaver[Any], store: BaseStore | None, opts: _Options
) -> Steps[PruneReport]:
    every: list[str] | None = None if indexed(saver) else (yield scan(saver))
    kept: Counter[str] = Counter()
    threads: list[PrunedThread] = []
    scanned, after = 0, ""
    while True:
        heads: list[tuple[str, datetime | None]] = (
            (yield from head_page(saver, after, opts.batch_size))
            if every is None
            else [(t, None) for t in every[scanned : scanned + opts.batch_size]]
        )
        for thread, when in heads:
            scanned += 1
            if when is not None and when >= opts.cutoff:
                kept["recent"] += 1
                continue
            result = yield from _prune_one(saver, store, opts, thread)
            if isinstance(result, str):
                kept[result] += 1
                continue
            if result.outcome in ("leased", "changed"):
                kept[result.outcome] += 1
            threads.append(result)
        if len(heads) < opts.batch_size:
            break
        after = heads[-1][0]
    return PruneReport(
        dry_run=opts.dry_run,
        cutoff=opts.cutoff,
        statuses=opts.statuses,
        scanned=scanned,
        threads=tuple(threads),
        kept=dict(sorted(kept.items())),
    )


def _check_saver(saver: object, store: object, *, asynchronous: bool) -> None:
    where = "aprune_threads" if asynchronous else "prune_threads"
    if not isinstance(saver, BaseCheckpointSaver):
        raise TypeError(
            f"{where}: got {type(saver).__name__}; give a checkpointer, e.g. from "
            f"{'aopen_checkpointer' if asynchronous else 'open_checkpointer'}(url)"
        )
    if not asynchronous and isinstance(saver, AsyncPostgresSaver | AsyncSqliteSaver):
        raise TypeError(f"prune_threads: {type(saver).__name__} is async; use aprune_threads")
    if asynchronous and isinstance(saver, PostgresSaver | SqliteSaver):
        raise TypeError(
            f"aprune_threads: {type(saver).__name__} is sync; use prune_threads, or open "
            "the database with aopen_checkpointer"
        )
    if store is not None and not isinstance(store, BaseStore):
        raise TypeError(f"{where} store: got {type(store).__name__}; give a BaseStore or None")


def prune_threads(
    saver: BaseCheckpointSaver[Any],
    store: BaseStore | None = None,
    *,
    older_than: float | timedelta,
    statuses: str | Iterable[str] = ("done",),
    dry_run: bool = True,
    store_namespaces: Sequence[Sequence[str]] = (),
    batch_size: int = DEFAULT_BATCH_SIZE,
    now: datetime | None = None,
) -> PruneReport:
    """Delete the finished threads whose newest checkpoint is older than `older_than`.

    Finished: no pending write or task at the head, and a `status` of `statuses`. What
    goes: every namespace's checkpoints and writes (on Postgres also the blobs and the
    thread's `lgsp_effects` and `lgsp_thread_leases` rows), and with `store` its items.

    Args:
        saver: The checkpointer (sync): `open_checkpointer`'s Postgres, SQLite or
            memory saver.
        store: The store the runs' graph was compiled with, whose per-thread items go
            too (None: the store is left alone).
        older_than: The age of a thread's newest checkpoint beyond which it goes: a
            number of seconds or a `timedelta` (text such as `30d`, the CLI's form, is
            refused).
        statuses: The run statuses that count as finished: `done` (default),
            `halted`, `failed`.
        dry_run: Report what would go and delete nothing (the default).
        store_namespaces: More per-thread store namespaces to clear, each a prefix
            the thread's label follows (e.g. `("research_team", "sources")`).
        batch_size: Threads listed and handled per batch (1 to 10,000).
        now: The time ages are measured from (default: the current time; aware).

    Returns:
        The report: the threads that went (or would go), and why others stayed.

    Raises:
        ValueError: An option is out of range (the message names it).
        TypeError: `saver` or `store` is of the wrong kind (e.g. an async saver).

    Example:
        ```python
        with open_checkpointer(url) as saver, open_store(url) as store:
            report = prune_threads(saver, store, older_than=timedelta(days=30), dry_run=False)
            print(report.totals())  # {'checkpoints': 812, 'writes': 2210, ...}
        ```
    """
    _check_saver(saver, store, asynchronous=False)
    opts = _options(older_than, statuses, dry_run, batch_size, store_namespaces, now)
    return drive(_prune(saver, store, opts))


async def aprune_threads(
    saver: BaseCheckpointSaver[Any],
    store: BaseStore | None = None,
    *,
    older_than: float | timedelta,
    statuses: str | Iterable[str] = ("done",),
    dry_run: bool = True,
    store_namespaces: Sequence[Sequence[str]] = (),
    batch_size: int = DEFAULT_BATCH_SIZE,
    now: datetime | None = None,
) -> PruneReport:
    """Async twin of :func:`prune_threads`, for `aopen_checkpointer`'s savers.

    Example:
        ```python
        async with aopen_checkpointer(url) as saver:
            report = await aprune_threads(saver, older_than=timedelta(days=30), dry_run=False)
        ```
    """
    _check_saver(saver, store, asynchronous=True)
    opts = _options(older_than, statuses, dry_run, batch_size, store_namespaces, now)
    return await adrive(_prune(saver, store, opts))

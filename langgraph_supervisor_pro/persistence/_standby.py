"""Hot standby: resume the runs whose process died, from their last checkpoint.

A run taken under `thread_lease` on Postgres leaves a row in `lgsp_thread_leases` that a
clean exit deletes; a row whose lock can be taken names a run whose holder is gone.
`resume_orphans` sweeps once: under each such thread's lease it resumes a head that
stopped mid-run (tasks pending, no interrupt, no failed task) with `invoke(None, config)`;
`standby` sweeps every `interval` seconds (`lgsp standby`). A run that held no lease is
never taken over. Docs:
https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/leases/#hot-standby
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, Literal, LiteralString

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel
from langgraph.types import Durability, StateSnapshot
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_supervisor_pro._internal.checks import check_seconds
from langgraph_supervisor_pro._internal.text import cut_id, one_line
from langgraph_supervisor_pro._internal.twins import Call, Steps, adrive, drive
from langgraph_supervisor_pro.errors import ThreadBusyError
from langgraph_supervisor_pro.persistence._connections import DEFAULT_CONNECT_TIMEOUT
from langgraph_supervisor_pro.persistence._leases import (
    _HOLDER_SAFE,
    DEFAULT_EXPIRE_AFTER,
    _options,
    _took,
    athread_lease,
    thread_lease,
)

DEFAULT_INTERVAL = 5.0
"""Seconds between two sweeps of `standby`."""

_CANDIDATES: LiteralString = (
    "SELECT thread_id FROM lgsp_thread_leases "
    "WHERE to_regclass('lgsp_thread_leases') IS NOT NULL ORDER BY acquired_at"
)

Outcome = Literal["finished", "interrupted", "failed", "nothing_to_do", "skipped"]


@dataclass(frozen=True)
class Takeover:
    """What the standby did with one thread whose lease holder was gone.

    Example:
        >>> Takeover("t-1", "1ef0", "finished", pending=("writer",), status="done").line()
        "thread t-1: resumed at ['writer'] from checkpoint 1ef0; finished (status done)"
    """

    thread_id: str
    checkpoint_id: str | None
    """The head checkpoint it found (None for a thread with no checkpoint)."""
    outcome: Outcome
    """`finished`, `interrupted` (it paused, e.g. at a review), `failed` (the resumed run
    raised: `error`), `nothing_to_do` (the head was finished or paused: the lease row is
    cleared), `skipped` (a task on the head had failed before the crash: left for a person)."""
    pending: tuple[str, ...] = ()
    """The tasks pending at the head (what was resumed)."""
    status: str | None = None
    """The run's `status` channel after the resume, if the graph has one."""
    error: str | None = None
    """Why it failed or was skipped."""

    def line(self) -> str:
        """One line for people (what the CLI prints)."""
        at = f" from checkpoint {self.checkpoint_id}" if self.checkpoint_id else ""
        if self.outcome == "nothing_to_do":
            return f"thread {cut_id(self.thread_id)}: nothing to resume{at} (the run had stopped)"
        if self.outcome == "skipped":
            return f"thread {cut_id(self.thread_id)}: not resumed{at}: {self.error}"
        head = (
            f"thread {cut_id(self.thread_id)}: resumed at {list(self.pending)}{at}; {self.outcome}"
        )
        if self.outcome == "failed":
            return f"{head}: {self.error}"
        return f"{head} (status {self.status})" if self.status else head

    def to_dict(self) -> dict[str, Any]:
        """The takeover as JSON-ready data."""
        return {**asdict(self), "pending": list(self.pending)}


def _pool(graph: object, where: str, *, asynchronous: bool) -> Any:
    """The pool of the graph's Postgres checkpointer (the sync or the async one)."""
    if not isinstance(graph, Pregel):
        raise TypeError(
            f"{where}: got {type(graph).__name__}; give a graph compiled with the Postgres "
            "checkpointer open_checkpointer opened"
        )
    conn = getattr(graph.checkpointer, "conn", None)
    if not isinstance(conn, AsyncConnectionPool if asynchronous else ConnectionPool):
        opener = "aopen_checkpointer" if asynchronous else "open_checkpointer"
        raise TypeError(
            f"{where}: the graph's checkpointer is {type(graph.checkpointer).__name__}; the "
            f"standby needs the Postgres checkpointer {opener}('postgresql://...') opens (a "
            "dead run is told from a live one by its Postgres lease)"
        )
    return conn


def _lease_options(
    owner: object, expire_after: object, connect_timeout: object, where: str
) -> dict[str, Any]:
    """The standby's lease options, refused before any sweep as `thread_lease` would."""
    _options("-", None, owner, expire_after, connect_timeout, where)
    return {"owner": owner, "expire_after": expire_after, "connect_timeout": connect_timeout}


def _candidates(pool: ConnectionPool[Any]) -> list[str]:
    """Threads with a lease row: running now, or their holder died."""
    with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        if not _took(cur.execute(_HOLDER_SAFE).fetchone()):
            return []
        return [str(row["thread_id"]) for row in cur.execute(_CANDIDATES).fetchall()]


async def _acandidates(pool: AsyncConnectionPool[Any]) -> list[str]:
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        if not _took(await (await cur.execute(_HOLDER_SAFE)).fetchone()):
            return []
        return [str(row["thread_id"]) for row in await (await cur.execute(_CANDIDATES)).fetchall()]


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def _head_id(snapshot: StateSnapshot) -> str | None:
    value = (snapshot.config.get("configurable") or {}).get("checkpoint_id")
    return str(value) if value else None


def _why_not(snapshot: StateSnapshot) -> tuple[Outcome, str | None] | None:
    """None when the head is a run that stopped mid-run; else what to report."""
    if not snapshot.next or snapshot.interrupts:
        return "nothing_to_do", None
    failed = [t for t in snapshot.tasks if t.error is not None]
    if failed:
        errors = "; ".join(f"{t.name}: {_error_text(t.error)}" for t in failed)
        return "skipped", f"a task failed before the crash ({errors}); resume it by hand"
    return None


def _error_text(error: object) -> str:
    if isinstance(error, BaseException):
        return f"{type(error).__name__}: {one_line(str(error), 120)}"
    return one_line(str(error), 120)


def _status(values: object) -> str | None:
    status = values.get("status") if isinstance(values, Mapping) else None
    return str(status) if status is not None else None


def _state(graph: Pregel[Any, Any, Any, Any], thread_id: str) -> Call:
    return Call(
        partial(graph.get_state, _config(thread_id)), partial(graph.aget_state, _config(thread_id))
    )


def _resume(
    graph: Pregel[Any, Any, Any, Any], thread_id: str, durability: Durability | None
) -> Steps[Takeover]:
    """Under the thread's lease: resume its head if it stopped mid-run."""
    snapshot = yield _state(graph, thread_id)
    head = _head_id(snapshot)
    pending = tuple(snapshot.next)
    refused = _why_not(snapshot)
    if refused is not None:
        return Takeover(thread_id, head, refused[0], pending, error=refused[1])
    kwargs: dict[str, Any] = {} if durability is None else {"durability": durability}
    try:
        yield Call(
            partial(graph.invoke, None, _config(thread_id), **kwargs),
            partial(graph.ainvoke, None, _config(thread_id), **kwargs),
        )
    except Exception as exc:  # the fence's ThreadBusyError included
        return Takeover(thread_id, head, "failed", pending, error=_error_text(exc))
    after = yield _state(graph, thread_id)
    outcome: Outcome = "interrupted" if after.next else "finished"
    return Takeover(thread_id, head, outcome, pending, status=_status(after.values))


def resume_orphans(
    graph: Pregel[Any, Any, Any, Any],
    *,
    owner: str | None = None,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    durability: Durability | None = "sync",
) -> list[Takeover]:
    """Sweep once: resume every leased run whose holder is gone, under its lease.

    Args:
        graph: The runs' graph, compiled with the Postgres checkpointer
            `open_checkpointer` opened (the one the runs use).
        owner: Who the standby's leases name (default `host:pid`).
        expire_after: The `expire_after` of the standby's own leases (see
            `thread_lease`): if the standby dies mid-resume, another takes over.
        connect_timeout: Seconds to wait for Postgres when taking a lease.
        durability: The resumed runs' durability (default `sync`: every step is
            checkpointed before the next starts); None for the graph's default.

    Returns:
        One `Takeover` per thread whose holder was gone, in the order the leases were
        taken (threads whose holder is alive are left alone and not listed).

    Raises:
        TypeError: The graph has no Postgres checkpointer over a pool.
        ValueError: An option is out of range (the message names it).

    Example:
        ```python
        with open_checkpointer("postgresql://app@db/app") as saver:
            app = build_team().compile(checkpointer=saver)
            done = resume_orphans(app, owner="standby-1")
        ```
    """
    pool = _pool(graph, "resume_orphans", asynchronous=False)
    lease = _lease_options(owner, expire_after, connect_timeout, "resume_orphans")
    taken: list[Takeover] = []
    for thread_id in _candidates(pool):
        try:
            with thread_lease(graph, thread_id, **lease):
                taken.append(drive(_resume(graph, thread_id, durability)))
        except ThreadBusyError:
            pass  # its holder is alive
    return taken


def standby(
    graph: Pregel[Any, Any, Any, Any],
    *,
    interval: float = DEFAULT_INTERVAL,
    owner: str | None = None,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    durability: Durability | None = "sync",
    stop: threading.Event | None = None,
    on_takeover: Callable[[Takeover], None] | None = None,
) -> None:
    """Sweep every `interval` seconds (see `resume_orphans`) until `stop` is set.

    Args:
        graph: The runs' graph, compiled with the Postgres checkpointer.
        interval: Seconds between two sweeps (finite, > 0).
        owner: Who the standby's leases name (default `host:pid`).
        expire_after: The `expire_after` of the standby's own leases.
        connect_timeout: Seconds to wait for Postgres when taking a lease.
        durability: The resumed runs' durability (None for the graph's default).
        stop: Set it to end the loop (checked between sweeps and during the wait); None
            runs until the process is stopped.
        on_takeover: Called with each `Takeover` as it happens (e.g. to log it).

    Raises:
        ValueError: `interval` or another option is out of range (the message names it).
        TypeError: The graph has no Postgres checkpointer over a pool.

    Example:
        ```python
        stop = threading.Event()
        threading.Thread(target=standby, args=(app,), kwargs={"stop": stop}).start()
        ...
        stop.set()
        ```
    """
    pause = check_seconds(interval, "standby interval")
    _pool(graph, "standby", asynchronous=False)
    lease = _lease_options(owner, expire_after, connect_timeout, "standby")
    done = stop if stop is not None else threading.Event()
    while not done.is_set():
        started = time.monotonic()
        for takeover in resume_orphans(graph, **lease, durability=durability):
            if on_takeover is not None:
                on_takeover(takeover)
        done.wait(max(0.0, pause - (time.monotonic() - started)))


async def aresume_orphans(
    graph: Pregel[Any, Any, Any, Any],
    *,
    owner: str | None = None,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    durability: Durability | None = "sync",
) -> list[Takeover]:
    """Async twin of :func:`resume_orphans` (same arguments), resuming with `ainvoke`.

    The graph is compiled with the checkpointer `aopen_checkpointer` opened.

    Example:
        ```python
        async with aopen_checkpointer("postgresql://app@db/app") as saver:
            app = build_team().compile(checkpointer=saver)
            done = await aresume_orphans(app, owner="standby-1")
        ```
    """
    pool = _pool(graph, "aresume_orphans", asynchronous=True)
    lease = _lease_options(owner, expire_after, connect_timeout, "aresume_orphans")
    taken: list[Takeover] = []
    for thread_id in await _acandidates(pool):
        try:
            async with athread_lease(graph, thread_id, **lease):
                taken.append(await adrive(_resume(graph, thread_id, durability)))
        except ThreadBusyError:
            pass
    return taken


async def astandby(
    graph: Pregel[Any, Any, Any, Any],
    *,
    interval: float = DEFAULT_INTERVAL,
    owner: str | None = None,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    durability: Durability | None = "sync",
    stop: asyncio.Event | None = None,
    on_takeover: Callable[[Takeover], None] | None = None,
) -> None:
    """Async twin of :func:`standby` (`stop` is an `asyncio.Event`; cancelling works too).

    Example:
        ```python
        stop = asyncio.Event()
        task = asyncio.create_task(astandby(app, stop=stop))
        ...
        stop.set()
        await task
        ```
    """
    pause = check_seconds(interval, "astandby interval")
    _pool(graph, "astandby", asynchronous=True)
    lease = _lease_options(owner, expire_after, connect_timeout, "astandby")
    done = stop if stop is not None else asyncio.Event()
    while not done.is_set():
        started = time.monotonic()
        for takeover in await aresume_orphans(graph, **lease, durability=durability):
            if on_takeover is not None:
                on_takeover(takeover)
        remaining = max(0.0, pause - (time.monotonic() - started))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), remaining)

"""The review desk: list pending reviews across threads, resolve them, sweep expired ones.

A review gate (`request_review`, used by `ToolGuard` for tool calls and by the
dispatch review step in the manual tier) pauses a run with LangGraph's
`interrupt()`. The pause is durable: it lives in the checkpointer until a human,
maybe days later and in another process, answers it. This module is that other
side:

- `list_reviews` finds every pending review in a checkpoint database, across
  threads, without the graph: it reads the latest root checkpoint of each thread
  and the interrupts its tasks are still waiting on (LangGraph records an
  interrupt raised inside a worker's agent subgraph on the parent's checkpoint
  too). Each becomes a `PendingReview` carrying the payload's structured context
  (task, worker, risk, reason, summary, deadline, reviewer group).
- `resolve_review` resumes one review with
  `Command(resume={interrupt_id: {"decisions": [decision]}})`. The decision says
  only what varies: `Approve()`, `Reject(message=...)`, `Edit(args=...)` (the
  action's name is the reviewed one unless `name` says otherwise, e.g. another
  worker for a dispatch review) or `Respond(message=...)`; a `ReviewDecision` model
  or its dict (`{"type": "approve"}`) is accepted too. It is validated first,
  against the review's own allowed decisions, so an invalid one raises
  `InvalidDecisionError` before the run is touched: it stays paused on the same
  checkpoint, with the same pending interrupt.
- Every answer says who gave it and when: `resolve_review(..., reviewer="alice")` sends
  `{"decisions": [...], "reviewer": "alice", "answered_at": <now, UTC>}`, and the
  sweep answers as `lgsp:sweep`. The node that applies the answer records both in the
  run's state (`reviews`). With `policy=` (a `ReviewPolicy` that restricts who may
  answer: `members`, `may_answer`), an identity the policy refuses raises
  `ReviewerNotAllowedError` before the run is touched. The graph's own gates apply
  their policy too: an answer they refuse leaves the run paused on the same review,
  and `resolve_review` raises `ReviewerNotAllowedError` with their reason.
- `sweep_reviews` applies each expired review's `on_timeout` (from its payload):
  `reject` (the default, fail closed) with the message "review deadline passed at
  <deadline>; rejected by the sweep", or `escalate` to the `escalate_to` reviewer
  group (the review re-opens for that group with a new deadline, and the payload
  records the escalation). An escalated review whose deadline passes again is
  rejected.

Every function has an async twin (`alist_reviews`, `aresolve_review`, ...) for
async checkpointers (`AsyncPostgresSaver`, `AsyncSqliteSaver`), whose sync
methods cannot be used from their event loop.

Resuming runs the rest of the run in the calling process, up to its end or its
next pause, so the resolving process needs the graph: compile the same
`StateGraph` with a checkpointer on the same database. A run paused in one process
is resumed by another. The per-run autonomy tier
(`config["configurable"]["autonomy"]`) is not stored in the checkpoint's config,
so `resolve_review` carries the tier the run recorded (its state's `autonomy`)
into the resume unless `config` sets one: a manual-tier run stays manual. A `config`
naming a looser tier than the run's is refused before the run is touched.

Example:
    ```python
    from langgraph_supervisor_pro import create_supervisor, open_checkpointer
    from langgraph_supervisor_pro.review._desk import (
        Approve, Reject, list_reviews, resolve_review, sweep_reviews,
    )

    with open_checkpointer("postgresql://...") as saver:
        for review in list_reviews(saver):
            print(review.thread_id, review.action, review.args, review.context["reason"])
        graph = create_supervisor(workers, model=model).compile(checkpointer=saver)
        result = resolve_review(graph, thread_id="order-7", decision=Approve())
        resolve_review(graph, thread_id="order-8",
                       decision=Reject(message="Refunds over 100 EUR need a manager."))
        for action in sweep_reviews(graph, saver):
            print(action.line())
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeAlias, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT, RESUME
from langgraph.pregel import Pregel
from langgraph.types import Command, Durability, Interrupt, StateSnapshot
from pydantic import BaseModel, ValidationError

from langgraph_supervisor_pro._internal.storable import check_thread_id
from langgraph_supervisor_pro._internal.text import shown_id
from langgraph_supervisor_pro._internal.twins import Steps, adrive, drive
from langgraph_supervisor_pro._internal.validation import validation_summary
from langgraph_supervisor_pro.errors import (
    InvalidDecisionError,
    ReviewerNotAllowedError,
    ReviewNotFoundError,
)
from langgraph_supervisor_pro.persistence._thread_index import (
    each_head,
    heads_read_by_page,
    indexed,
    indexed_threads,
)
from langgraph_supervisor_pro.review._gate import (
    _REVIEWER_CHARS,
    EditDecision,
    EscalateDecision,
    RejectDecision,
    ReviewDecision,
    response_schema,
)
from langgraph_supervisor_pro.review._payload import (
    PendingReview,
    ReviewContext,
    aware_or_now,
    is_review_payload,
    plain,
)
from langgraph_supervisor_pro.review._policy import (
    _RESERVED_PREFIX,
    AUTONOMY_CONFIG_KEY,
    SWEEP_REVIEWER,
    TIERS,
    ReviewPolicy,
)

__all__ = [
    "INTERRUPT_CHANNEL",
    "Approve",
    "DecisionInput",
    "Edit",
    "Reject",
    "Respond",
    "SweepAction",
    "aget_review",
    "alist_reviews",
    "aresolve_review",
    "asweep_reviews",
    "check_decision",
    "check_reviewer",
    "get_review",
    "list_reviews",
    "resolve_review",
    "sweep_reviews",
]

INTERRUPT_CHANNEL = INTERRUPT
"""The channel LangGraph records interrupts under in a checkpoint's pending writes
(`"__interrupt__"`)."""


@dataclass(frozen=True, kw_only=True)
class Approve:
    """Approve a pending review: the action runs as requested.

    Example:
        ```python
        resolve_review(graph, thread_id="order-7", decision=Approve())
        ```
    """


@dataclass(frozen=True, kw_only=True)
class Reject:
    """Reject a pending review: the action does not run; `message` goes back.

    For a tool review the worker's agent gets the message as the tool's (error)
    result; for a dispatch review the hop is recorded as failed with it and the
    supervisor decides again.

    Example:
        ```python
        resolve_review(graph, thread_id="order-7",
                       decision=Reject(message="Refunds over 100 EUR need a manager."))
        ```
    """

    message: str = ""


@dataclass(frozen=True, kw_only=True)
class Edit:
    """Run the reviewed action with the reviewer's arguments.

    `args` replace the requested arguments. `name` is the action's name: by default
    the reviewed one; a dispatch review may name another worker (`dispatch:<worker>`),
    a tool review may not name another tool.

    Example:
        ```python
        resolve_review(graph, thread_id="order-7",
                       decision=Edit(args={"order_id": "O-7", "amount": 20}))
        ```
    """

    args: Mapping[str, Any]
    name: str | None = None


@dataclass(frozen=True, kw_only=True)
class Respond:
    """Answer instead of the action: `message` stands in for its result.

    Example:
        ```python
        resolve_review(graph, thread_id="order-7",
                       decision=Respond(message="Refund already issued by phone."))
        ```
    """

    message: str


DecisionInput: TypeAlias = Approve | Reject | Edit | Respond | ReviewDecision | Mapping[str, Any]
"""A decision: `Approve()`, `Reject(message=...)`, `Edit(args=...)`, `Respond(message=...)`,
a `ReviewDecision` model, or its dict (`{"type": "approve"}`, ...)."""

SweepKind: TypeAlias = Literal["reject", "escalate", "error"]
"""What the sweep did with one expired review (`error`: it could not resolve it)."""

Graph: TypeAlias = Pregel[Any, Any, Any, Any]
"""A compiled graph with a checkpointer: `create_supervisor(...).compile(checkpointer=...)`."""

# Writes that record what happened to a task rather than what it produced (LangGraph's
# task-status rules: a task with any other write finished, so its interrupt was answered).
_CONTROL_WRITES = frozenset({INTERRUPT, RESUME, ERROR, "__error_source_node__"})
_NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
_ROOT_NS = ""


def _pending_interrupts(writes: Iterable[Sequence[Any]]) -> list[Interrupt]:
    """The interrupts still waiting for an answer, from a checkpoint's pending writes.

    The rules LangGraph reads task status by: `INTERRUPT` holds the task's latest
    question; a task with any output write finished, so its question was answered.
    """
    finished: set[str] = set()
    asked: dict[str, list[Interrupt]] = {}
    for write in writes:
        task_id, channel, value = write[0], write[1], write[2]
        if task_id == _NULL_TASK_ID:
            continue
        if channel == INTERRUPT:
            values = value if isinstance(value, list | tuple) else [value]
            asked.setdefault(task_id, []).extend(v for v in values if isinstance(v, Interrupt))
        elif channel not in _CONTROL_WRITES:
            finished.add(task_id)
    return [i for task_id, items in asked.items() if task_id not in finished for i in items]


def _reviews_in(
    thread_id: str, interrupts: Iterable[Interrupt], checkpoint_id: str | None
) -> list[PendingReview]:
    return [
        PendingReview.from_payload(
            i.value, thread_id=thread_id, interrupt_id=i.id, checkpoint_id=checkpoint_id
        )
        for i in interrupts
        if is_review_payload(i.value)
    ]


def _thread_config(thread_id: str, config: RunnableConfig | None = None) -> RunnableConfig:
    check_thread_id(thread_id)  # a thread id no database can encode: said as such
    base: RunnableConfig = dict(config or {})  # type: ignore[assignment]
    configurable = {**(base.get("configurable") or {}), "thread_id": thread_id}
    configurable.pop("checkpoint_id", None)
    configurable.pop("checkpoint_ns", None)
    base["configurable"] = configurable
    return base


def _root_key(item: CheckpointTuple) -> tuple[str, str] | None:
    configurable = item.config.get("configurable") or {}
    if configurable.get("checkpoint_ns", _ROOT_NS) != _ROOT_NS:
        return None
    return str(configurable.get("thread_id")), str(configurable.get("checkpoint_id", ""))


def _latest(items: Iterable[CheckpointTuple]) -> dict[str, CheckpointTuple]:
    """The newest root checkpoint of each thread (checkpoint ids sort by time)."""
    latest: dict[str, CheckpointTuple] = {}
    for item in items:
        key = _root_key(item)
        if key is None:
            continue
        thread_id, checkpoint_id = key
        held = latest.get(thread_id)
        if held is None or checkpoint_id > str(held.config["configurable"]["checkpoint_id"]):
            latest[thread_id] = item
    return latest


def reviews_of_tuple(thread_id: str, item: CheckpointTuple) -> list[PendingReview]:
    checkpoint_id = str(item.config["configurable"].get("checkpoint_id", "")) or None
    return _reviews_in(thread_id, _pending_interrupts(item.pending_writes or ()), checkpoint_id)


def reviews_pending_at(latest: Mapping[str, CheckpointTuple]) -> list[PendingReview]:
    """The reviews pending at each thread's newest root checkpoint, already listed.

    What `list_reviews(checkpointer)` finds, for a reader that listed the checkpoints
    itself (the metrics, the audit trail), so they are not listed twice.

    Args:
        latest: By thread id, its newest root checkpoint.

    Returns:
        The pending reviews, soonest deadline first (no deadline last).

    Example:
        >>> reviews_pending_at({})
        []
    """
    reviews = [r for thread_id, item in latest.items() for r in reviews_of_tuple(thread_id, item)]
    return _finish_listing(reviews, now=None, expired_only=False)


def _reviews_of_snapshot(thread_id: str, snapshot: StateSnapshot) -> list[PendingReview]:
    checkpoint_id = (snapshot.config.get("configurable") or {}).get("checkpoint_id")
    return _reviews_in(thread_id, snapshot.interrupts, checkpoint_id)


def _finish_listing(
    reviews: list[PendingReview], *, now: datetime | None, expired_only: bool
) -> list[PendingReview]:
    moment = aware_or_now(now, "now")
    if expired_only:
        reviews = [r for r in reviews if r.expired(moment)]
    far = datetime.max.replace(tzinfo=UTC)
    return sorted(reviews, key=lambda r: (r.deadline or far, r.thread_id, r.interrupt_id))


def _root_tuple_config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": _ROOT_NS}}


# -- one implementation, two drivers -------------------------------------------------------
#
# Each operation of the desk is a generator (`_listing`, `_resolving`, `_sweeping`, ...)
# that yields the I/O it needs (`_GetState`, `_Invoke`, `_ListCheckpoints`, `_GetTuple`)
# and receives its result; `_internal.twins.drive` performs the I/O with the sync
# methods, `adrive` awaits the async ones. A failed I/O is thrown into the generator
# where it asked.


@dataclass(frozen=True, slots=True)
class _GetState:
    """A thread's state: `graph.get_state(config)`."""

    graph: Graph
    config: RunnableConfig

    def run(self) -> StateSnapshot:
        return self.graph.get_state(self.config)

    async def arun(self) -> StateSnapshot:
        return await self.graph.aget_state(self.config)


@dataclass(frozen=True, slots=True)
class _Invoke:
    """Resume a run: `graph.invoke(command, config)`."""

    graph: Graph
    command: Command[Any]
    config: RunnableConfig
    durability: Durability | None

    def _kwargs(self) -> dict[str, Any]:
        return {} if self.durability is None else {"durability": self.durability}

    def run(self) -> Any:
        return self.graph.invoke(self.command, self.config, **self._kwargs())

    async def arun(self) -> Any:
        return await self.graph.ainvoke(self.command, self.config, **self._kwargs())


@dataclass(frozen=True, slots=True)
class _ListCheckpoints:
    """Every checkpoint in the database: `checkpointer.list(None)`."""

    checkpointer: BaseCheckpointSaver[Any]

    def run(self) -> Iterable[CheckpointTuple]:
        return self.checkpointer.list(None)

    async def arun(self) -> Iterable[CheckpointTuple]:
        return [item async for item in self.checkpointer.alist(None)]


@dataclass(frozen=True, slots=True)
class _GetTuple:
    """One checkpoint: `checkpointer.get_tuple(config)`."""

    checkpointer: BaseCheckpointSaver[Any]
    config: RunnableConfig

    def run(self) -> CheckpointTuple | None:
        return self.checkpointer.get_tuple(self.config)

    async def arun(self) -> CheckpointTuple | None:
        return await self.checkpointer.aget_tuple(self.config)


def _each_newest(
    checkpointer: BaseCheckpointSaver[Any],
    thread_ids: Iterable[str] | None,
    take: Callable[[str, CheckpointTuple], None],
) -> Steps[None]:
    """`take(thread_id, newest root checkpoint)` for each thread (all threads, or `thread_ids`).

    On Postgres the newest root checkpoints are read a page of threads at a time, with
    the values stored inline in their rows and their pending writes, not the state kept
    in blobs (`_thread_index.each_head`: what the desk and `lgsp runs` read). On SQLite
    the threads are listed by query and each one's newest root checkpoint read with
    `get_tuple`, a thread at a time, so neither the database's whole history nor every
    thread's state is in memory at once. Other savers are listed once (`list(None)`).
    """
    given = list(dict.fromkeys(thread_ids)) if thread_ids is not None else None
    if heads_read_by_page(checkpointer):
        yield from each_head(checkpointer, given, take)
        return
    if given is not None:
        listed = given
    elif indexed(checkpointer):
        listed = yield from indexed_threads(checkpointer)
    else:
        for thread_id, item in _latest((yield _ListCheckpoints(checkpointer))).items():
            take(thread_id, item)
        return
    for thread_id in listed:
        item = yield _GetTuple(checkpointer, _root_tuple_config(thread_id))
        if item is not None:  # gone since the listing, or never had a root checkpoint
            take(thread_id, item)


def _paused_threads(
    checkpointer: BaseCheckpointSaver[Any], thread_ids: Iterable[str] | None
) -> Steps[list[str]]:
    """The threads to read through the graph: those given, else those paused at all.

    Across every thread, a thread whose newest root checkpoint has no unanswered
    interrupt is not paused (LangGraph records an interrupt raised anywhere below the
    root, in a worker's agent or a nested domain, on the root task's writes too), so
    only the paused ones cost a `get_state`.
    """
    if thread_ids is not None:
        return list(dict.fromkeys(thread_ids))
    paused: list[str] = []

    def take(thread_id: str, item: CheckpointTuple) -> None:
        if _pending_interrupts(item.pending_writes or ()):
            paused.append(thread_id)

    yield from _each_newest(checkpointer, None, take)
    return sorted(paused)


def _listing(
    checkpointer: BaseCheckpointSaver[Any],
    now: datetime | None,
    thread_ids: Iterable[str] | None,
    expired_only: bool,
    graph: Graph | None,
    where: str,
) -> Steps[list[PendingReview]]:
    """`list_reviews`; `where` names the caller in the error for a naive `now`."""
    aware_or_now(now, where)
    reviews: list[PendingReview] = []
    if graph is not None:
        for thread_id in (yield from _paused_threads(checkpointer, thread_ids)):
            snapshot = yield _GetState(graph, _thread_config(thread_id))
            reviews.extend(_reviews_of_snapshot(thread_id, snapshot))
    else:

        def take(thread_id: str, item: CheckpointTuple) -> None:
            reviews.extend(reviews_of_tuple(thread_id, item))

        yield from _each_newest(checkpointer, thread_ids, take)
    return _finish_listing(reviews, now=now, expired_only=expired_only)


def each_newest_root(
    checkpointer: BaseCheckpointSaver[Any], take: Callable[[str, CheckpointTuple], None]
) -> None:
    """`take(thread_id, newest root checkpoint)` for every thread of a sync checkpointer.

    The reading `list_reviews` does, for a reader that wants more of each thread's
    newest checkpoint than its reviews (`lgsp runs`).

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> each_newest_root(InMemorySaver(), print)
    """
    drive(_each_newest(checkpointer, None, take))


def list_reviews(
    checkpointer: BaseCheckpointSaver[Any],
    *,
    now: datetime | None = None,
    thread_ids: Iterable[str] | None = None,
    expired_only: bool = False,
    graph: Graph | None = None,
) -> list[PendingReview]:
    """The reviews pending in a checkpoint database, across threads, soonest deadline first.

    Reads the latest root checkpoint of each thread (on Postgres a page of 500 threads'
    at a time, their pending writes and inline values only; on SQLite `get_tuple`, a
    thread at a time, the threads listed by query; other savers with
    `checkpointer.list(None)`) and the interrupts its tasks are still
    waiting on, and keeps those whose value is a review payload. No graph is needed:
    LangGraph records an interrupt raised inside a worker's agent subgraph (a
    `ToolGuard` review) on the parent's checkpoint too, like the dispatch review's.
    With `graph` (compiled on the same database), each paused thread is read with
    `graph.get_state(...).interrupts` instead: LangGraph's own reading, for graphs
    that pause in ways the checkpoint alone does not show (across every thread, a
    thread whose newest root checkpoint holds no unanswered interrupt is not paused and
    is not read again).

    Args:
        checkpointer: A sync checkpointer (see `alist_reviews` for async ones).
        now: The time `expired_only` compares deadlines with (default: now; aware).
        thread_ids: Only these threads (default: every thread in the database).
        expired_only: Only reviews whose deadline has passed at `now`.
        graph: Read each thread's pending interrupts through this graph instead.

    Returns:
        The pending reviews, soonest deadline first (no deadline last).

    Raises:
        ValueError: If `now` is naive.

    Example:
        ```python
        with open_checkpointer("postgresql://...") as saver:
            for review in list_reviews(saver):
                print(review.thread_id, review.kind, review.action, review.deadline)
        ```
    """
    return drive(_listing(checkpointer, now, thread_ids, expired_only, graph, "list_reviews(now)"))


async def alist_reviews(
    checkpointer: BaseCheckpointSaver[Any],
    *,
    now: datetime | None = None,
    thread_ids: Iterable[str] | None = None,
    expired_only: bool = False,
    graph: Graph | None = None,
) -> list[PendingReview]:
    """Async twin of `list_reviews`, for async checkpointers (`alist`, `aget_tuple`).

    Example:
        ```python
        async with aopen_checkpointer("postgresql://...") as saver:
            reviews = await alist_reviews(saver, expired_only=True)
        ```
    """
    return await adrive(
        _listing(checkpointer, now, thread_ids, expired_only, graph, "alist_reviews(now)")
    )


# -- resolving -------------------------------------------------------------------------------


def _decision_field(loc: Sequence[int | str]) -> str:
    """Where in one decision an error is (`decisions.0.edit.edited_action.args` -> `args`)."""
    where = ".".join(str(p) for p in loc[2:] if not isinstance(p, int))
    return where.split(".", 1)[-1] if "." in where else where


def _short_errors(exc: ValidationError) -> str:
    return validation_summary(exc, where=_decision_field)


def _as_dict(review: PendingReview, decision: object) -> object:
    """A desk decision (`Approve()`, `Edit(...)`, ...) as its dict; anything else as is.

    An edit's name defaults to the reviewed action.
    """
    if isinstance(decision, Approve):
        return {"type": "approve"}
    if isinstance(decision, Reject):
        return {"type": "reject", "message": decision.message}
    if isinstance(decision, Edit):
        name = review.action if decision.name is None else decision.name
        args = dict(decision.args) if isinstance(decision.args, Mapping) else decision.args
        return {"type": "edit", "edited_action": {"name": name, "args": args}}
    if isinstance(decision, Respond):
        return {"type": "respond", "message": decision.message}
    return decision


def check_decision(review: PendingReview, decision: object) -> dict[str, Any]:
    """Validate a decision for a review, as the run would, without touching the run.

    The decision must be one the review allows (or `escalate`), well formed for its
    type (an edit needs `edited_action`, a respond a `message`); an edit of a tool
    call may change its arguments, not the tool.

    Args:
        review: The review the decision answers.
        decision: `Approve()`, `Reject(...)`, `Edit(...)` (its name defaults to the
            reviewed action), `Respond(...)`, a `ReviewDecision` model or its dict.

    Returns:
        The decision as a plain dict, ready for `{"decisions": [decision]}`.

    Raises:
        InvalidDecisionError: Saying what is wrong and what the review allows.

    Example:
        ```python
        check_decision(review, Approve())             # {'type': 'approve'}
        check_decision(review, {"type": "approve"})  # {'type': 'approve'}
        check_decision(review, {"type": "maybe"})     # InvalidDecisionError
        ```
    """
    allowed = ", ".join(repr(d) for d in review.allowed)
    where = f"review {review.interrupt_id} ({review.kind} {review.action!r})"
    decision = _as_dict(review, decision)
    if isinstance(decision, BaseModel):
        data: Any = decision.model_dump(mode="python")
    elif isinstance(decision, Mapping):
        data = dict(decision)
    else:
        raise InvalidDecisionError(
            f"invalid decision for {where}: got {type(decision).__name__} "
            f"{_preview(decision)}; give a decision like {{'type': 'approve'}} (allowed: "
            f"{allowed})",
            review=review,
        )
    kind = data.get("type")
    if kind not in (*review.allowed, "escalate"):
        raise InvalidDecisionError(
            f"invalid decision for {where}: {kind!r} is not allowed; it allows {allowed}",
            review=review,
        )
    try:
        parsed = response_schema(review.allowed).model_validate({"decisions": [data]})
    except ValidationError as exc:
        raise InvalidDecisionError(
            f"invalid {kind!r} decision for {where}: {_short_errors(exc)}", review=review
        ) from None
    checked = cast(ReviewDecision, parsed.decisions[0])  # type: ignore[attr-defined]
    if (
        isinstance(checked, EditDecision)
        and review.kind == "tool"
        and checked.edited_action.name != review.action
    ):
        raise InvalidDecisionError(
            f"invalid 'edit' decision for {where}: an edit may change the arguments, not "
            f"the tool (got {checked.edited_action.name!r}); give edited_action.name "
            f"{review.action!r}",
            review=review,
        )
    return checked.model_dump(mode="python")


def _preview(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _thread_missing(snapshot: StateSnapshot) -> bool:
    return snapshot.metadata is None and not snapshot.values and snapshot.created_at is None


def _select(thread_id: str, snapshot: StateSnapshot, interrupt_id: str | None) -> PendingReview:
    if _thread_missing(snapshot):
        raise ReviewNotFoundError(
            f"thread {shown_id(thread_id)} has no checkpoints in this database; check the "
            "thread id (lgsp review list shows the pending reviews)"
        )
    reviews = _reviews_of_snapshot(thread_id, snapshot)
    if not reviews:
        values = snapshot.values if isinstance(snapshot.values, Mapping) else {}
        status = values.get("status")
        state = f"status {status!r}" if status else "not paused"
        if snapshot.next:
            state += f", next {list(snapshot.next)}"
        raise ReviewNotFoundError(f"thread {shown_id(thread_id)} has no pending review ({state})")
    if interrupt_id is None:
        if len(reviews) > 1:
            ids = ", ".join(f"{r.interrupt_id} ({r.kind} {r.action})" for r in reviews)
            raise ReviewNotFoundError(
                f"thread {shown_id(thread_id)} has {len(reviews)} pending reviews; say which one "
                f"with its interrupt id: {ids}"
            )
        return reviews[0]
    matches = (
        [r for r in reviews if r.interrupt_id.startswith(interrupt_id)] if interrupt_id else []
    )
    exact = [r for r in matches if r.interrupt_id == interrupt_id]
    if exact:
        return exact[0]
    if len(matches) == 1:
        return matches[0]
    pending = ", ".join(r.interrupt_id for r in reviews)
    if matches:
        raise ReviewNotFoundError(
            f"interrupt id {shown_id(interrupt_id)} matches {len(matches)} pending reviews on "
            f"thread {shown_id(thread_id)}; give more of it: {pending}"
        )
    raise ReviewNotFoundError(
        f"thread {shown_id(thread_id)} has no pending review {shown_id(interrupt_id)} (it was "
        f"answered, or the id is wrong); pending: {pending}"
    )


def _getting(
    graph: Graph, thread_id: str, interrupt_id: str | None, config: RunnableConfig | None
) -> Steps[PendingReview]:
    """`get_review`."""
    snapshot = yield _GetState(graph, _thread_config(thread_id, config))
    return _select(thread_id, snapshot, interrupt_id)


def get_review(
    graph: Graph,
    *,
    thread_id: str,
    interrupt_id: str | None = None,
    config: RunnableConfig | None = None,
) -> PendingReview:
    """The pending review `resolve_review` would answer on a thread.

    Args:
        graph: The run's graph, compiled with a checkpointer on the run's database.
        thread_id: The thread.
        interrupt_id: Which review (the id or a unique prefix), when several are pending.
        config: Extra run config (the thread id is set).

    Returns:
        The review.

    Raises:
        ReviewNotFoundError: The thread is unknown, has no pending review, has several
            and `interrupt_id` is not given, or not the one `interrupt_id` names.

    Example:
        ```python
        review = get_review(graph, thread_id="order-7")
        print(review.action, dict(review.args), review.context["reason"])
        ```
    """
    return drive(_getting(graph, thread_id, interrupt_id, config))


async def aget_review(
    graph: Graph,
    *,
    thread_id: str,
    interrupt_id: str | None = None,
    config: RunnableConfig | None = None,
) -> PendingReview:
    """Async twin of `get_review`.

    Example:
        ```python
        review = await aget_review(graph, thread_id="order-7")
        ```
    """
    return await adrive(_getting(graph, thread_id, interrupt_id, config))


def _resume_config(
    thread_id: str, config: RunnableConfig | None, snapshot: StateSnapshot
) -> RunnableConfig:
    run = _thread_config(thread_id, config)
    configurable = dict(run.get("configurable") or {})
    values = snapshot.values if isinstance(snapshot.values, Mapping) else {}
    recorded = values.get("autonomy")
    asked = configurable.get(AUTONOMY_CONFIG_KEY)
    if asked in (None, "") and isinstance(recorded, str):
        configurable[AUTONOMY_CONFIG_KEY] = recorded
    elif isinstance(recorded, str) and recorded in TIERS and isinstance(asked, str):
        # A resume keeps the run's tier: it may name a stricter one, never a looser one.
        # (A value that is no tier at all fails the run when the graph reads it.)
        tier = asked.strip().lower()
        if tier in TIERS and TIERS.index(tier) > TIERS.index(recorded):
            raise ValueError(
                f"config: configurable.{AUTONOMY_CONFIG_KEY} is {tier!r}, looser than the "
                f"tier thread {shown_id(thread_id)} runs in ({recorded!r}); a resume cannot "
                f"loosen a run's tier: leave configurable.{AUTONOMY_CONFIG_KEY} unset (the "
                "run's own tier is used) or name a stricter one (the run was not changed)"
            )
    run["configurable"] = configurable
    return run


def _resume_command(snapshot: StateSnapshot, answers: Mapping[str, Any]) -> Command[Any]:
    """The resume command for `answers` (interrupt id -> resume value), always keyed by id.

    A value sent without an id is stored with the checkpoint as the thread's answer and
    LangGraph hands it again to the next pause of that task on a later `invoke(None)`, so
    an escalation sent that way would escalate twice; keyed by id it answers that pause
    only. Every id must be pending (`_select` checks it).
    """
    pending = {i.id for i in snapshot.interrupts}
    unknown = sorted(set(answers) - pending)
    if unknown:
        raise ValueError(f"interrupt ids {unknown} are not pending (pending: {sorted(pending)})")
    return Command(resume=dict(answers))


def check_reviewer(reviewer: object, *, where: str = "reviewer") -> str | None:
    """Check who answers a review, as the desk takes it: None, or an identity.

    Args:
        reviewer: None (nobody named), or an identity: a non-empty string of at most 200
            characters, not starting with `lgsp:` (reserved for the package's own
            reviewers, such as the sweep's `lgsp:sweep`).
        where: How the value is named in the error (e.g. `--as`).

    Returns:
        The identity, stripped of surrounding spaces, or None.

    Raises:
        ValueError: Naming `where` and the fix.

    Example:
        >>> check_reviewer("  alice "), check_reviewer(None)
        ('alice', None)
        >>> check_reviewer("lgsp:sweep")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: reviewer: 'lgsp:sweep' starts with 'lgsp:', which is reserved ...
    """
    if reviewer is None:
        return None
    if not isinstance(reviewer, str) or not reviewer.strip():
        raise ValueError(
            f"{where}: got {reviewer!r}; give the identity of who answers (e.g. 'alice'), or None"
        )
    who = reviewer.strip()
    if len(who) > _REVIEWER_CHARS:
        raise ValueError(f"{where}: {len(who)} characters; give at most {_REVIEWER_CHARS}")
    if who.startswith(_RESERVED_PREFIX):
        raise ValueError(
            f"{where}: {who!r} starts with {_RESERVED_PREFIX!r}, which is reserved for the "
            f"package's own reviewers (the sweep answers as {SWEEP_REVIEWER!r}); give your "
            "identity"
        )
    return who


def _answer(
    decision: Mapping[str, Any], reviewer: str | None, at: datetime | None = None
) -> dict[str, Any]:
    """A review's resume value: the decision, who answers and when (UTC)."""
    answer: dict[str, Any] = {
        "decisions": [dict(decision)],
        "answered_at": (at or datetime.now(UTC)).astimezone(UTC).isoformat(),
    }
    if reviewer is not None:
        answer["reviewer"] = reviewer
    return answer


def _refused_by_graph(result: Any, review: PendingReview, reviewer: str | None) -> None:
    """Raise `ReviewerNotAllowedError` when the run paused again on `review`, refused.

    The decision was checked against the review's schema before the run was resumed, so
    a gate that posts the same review again (same interrupt id, `invalid_answer`) refused
    who answered: its own policy restricts who may answer.
    """
    pending = result.get(INTERRUPT) if isinstance(result, Mapping) else None
    for item in pending or ():
        if not isinstance(item, Interrupt) or item.id != review.interrupt_id:
            continue
        value = item.value if is_review_payload(item.value) else None
        problem = value["context"].get("invalid_answer") if value is not None else None
        if problem:
            raise ReviewerNotAllowedError(
                f"{problem} (refused by the graph's review policy; the run is paused on the "
                "same review)",
                review=review,
                reviewer=reviewer,
            )


def _resolving(
    graph: Graph,
    thread_id: str,
    decision: DecisionInput,
    reviewer: str | None,
    interrupt_id: str | None,
    config: RunnableConfig | None,
    durability: Durability | None,
    policy: ReviewPolicy | None,
) -> Steps[Any]:
    """`resolve_review`: find the review, check the decision and who answers, resume."""
    who = check_reviewer(reviewer, where="resolve_review(reviewer)")
    snapshot = yield _GetState(graph, _thread_config(thread_id, config))
    review = _select(thread_id, snapshot, interrupt_id)
    checked = check_decision(review, decision)
    if policy is not None:
        refusal = policy.reviewer_refusal(who, review, decision=checked)
        if refusal is not None:
            raise ReviewerNotAllowedError(
                f"{refusal} (the run was not changed)", review=review, reviewer=who
            )
        asked = policy.requested_tier(config)
        too_loose = None if asked is None else policy.tier_refusal(asked)
        if too_loose is not None:
            raise ValueError(f"resolve_review(config): {too_loose} (the run was not changed)")
    command = _resume_command(snapshot, {review.interrupt_id: _answer(checked, who)})
    run_config = _resume_config(thread_id, config, snapshot)
    result = yield _Invoke(graph, command, run_config, durability)
    _refused_by_graph(result, review, who)
    return result


def resolve_review(
    graph: Graph,
    *,
    thread_id: str,
    decision: DecisionInput,
    reviewer: str | None = None,
    interrupt_id: str | None = None,
    config: RunnableConfig | None = None,
    durability: Durability | None = None,
    policy: ReviewPolicy | None = None,
) -> Any:
    """Answer one pending review and resume the run.

    The review is found with `graph.get_state` (the only one pending on the thread,
    or the one `interrupt_id` names: the id or a unique prefix of it), the decision
    is checked with `check_decision`, who answers with `policy` (when given), and only
    then is the run resumed with `Command(resume={interrupt_id: {"decisions":
    [decision], "reviewer": reviewer, "answered_at": <now, UTC>}})`. It runs on, in
    this process, to its end or its next pause. The node that applies the answer
    records the reviewer and the time in the run's state (`reviews`).

    Args:
        graph: The run's graph, compiled with a checkpointer on the run's database.
        thread_id: The thread the run is paused on.
        decision: `Approve()`, `Reject(message=...)`, `Edit(args=..., name=...)` (the
            name defaults to the reviewed action) or `Respond(message=...)`; a
            `ReviewDecision` model or its dict (`{"type": "approve"}`, ...) works too.
        reviewer: Who answers (an identity, e.g. `"alice"`); None: nobody is named,
            which a policy that restricts who may answer refuses.
        interrupt_id: Which review, when the thread has several pending.
        config: Extra run config (its `configurable` is merged; the thread id is set).
            Without `configurable.autonomy`, the tier the run recorded is kept.
        durability: LangGraph's durability mode for the resumed run (default: the graph's).
        policy: The review policy whose rule on who may answer (`members`, `may_answer`)
            is checked before the run is touched (usually the graph's). The graph's
            gates check their own policy in any case.

    Returns:
        What `graph.invoke` returns: the state's values, with `__interrupt__` when the
        run paused again (e.g. at its next review).

    Raises:
        ReviewNotFoundError: The thread is unknown, has no pending review, has several
            and `interrupt_id` is not given, or not the one `interrupt_id` names.
        InvalidDecisionError: The decision is not valid for the review; the run is
            untouched (same checkpoint, same pending interrupt).
        ReviewerNotAllowedError: `policy` refuses `reviewer` (the run is untouched), or
            the graph's gate refused the answer (the run is paused on the same review).
        ValueError: `reviewer` is empty, too long, or starts with `lgsp:` (reserved);
            or `config` names a tier (`configurable.autonomy`) looser than the run's
            recorded one, or one `policy` refuses (see `ReviewPolicy.tier_refusal`): the
            run is untouched.

    Example:
        ```python
        resolve_review(graph, thread_id="order-7", decision=Approve(), reviewer="alice")
        resolve_review(graph, thread_id="order-7", decision=Reject(message="Not this one."),
                       reviewer="bob", policy=policy)
        resolve_review(graph, thread_id="order-8", decision=Edit(args={"amount": 20}))
        ```
    """
    return drive(
        _resolving(graph, thread_id, decision, reviewer, interrupt_id, config, durability, policy)
    )


async def aresolve_review(
    graph: Graph,
    *,
    thread_id: str,
    decision: DecisionInput,
    reviewer: str | None = None,
    interrupt_id: str | None = None,
    config: RunnableConfig | None = None,
    durability: Durability | None = None,
    policy: ReviewPolicy | None = None,
) -> Any:
    """Async twin of `resolve_review` (`aget_state`, `ainvoke`).

    Example:
        ```python
        await aresolve_review(graph, thread_id="order-7", decision=Approve(), reviewer="alice")
        ```
    """
    return await adrive(
        _resolving(graph, thread_id, decision, reviewer, interrupt_id, config, durability, policy)
    )


# -- the deadline sweep ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SweepAction:
    """What the sweep did with one expired review.

    Example:
        ```python
        for action in sweep_reviews(graph, saver):
            print(action.line())
        # t1 refund: review deadline passed at 2030-01-01T00:00:00+00:00; rejected by the sweep
        ```
    """

    review: PendingReview
    """The review as it was before the sweep (thread, interrupt id, deadline, context)."""
    action: SweepKind
    """`reject`, `escalate`, or `error` (the decision could not be applied)."""
    decision: Mapping[str, Any] | None
    """The decision sent (None for `error` before one could be built)."""
    message: str
    """What happened, in one sentence (the reject message, or the escalation reason)."""
    to: str | None = None
    """The reviewer group the review was escalated to."""
    error: str | None = None
    """Why the review could not be resolved (`error` only)."""
    result: Any = field(default=None, compare=False, repr=False)
    """What resuming the run returned (`graph.invoke`'s result), when it ran."""

    @property
    def thread_id(self) -> str:
        """The thread of the review."""
        return self.review.thread_id

    @property
    def interrupt_id(self) -> str:
        """The interrupt id of the review."""
        return self.review.interrupt_id

    def line(self) -> str:
        """One human-readable line: thread, action and what happened.

        Example:
            ```python
            for action in sweep_reviews(graph, saver):
                print(action.line())
            ```
        """
        text = self.error if self.action == "error" else self.message
        return f"{self.thread_id} {self.review.action}: {text}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (what `lgsp review sweep --json` prints).

        Example:
            ```python
            json.dumps([a.to_dict() for a in actions])
            ```
        """
        return {
            "thread_id": self.thread_id,
            "interrupt_id": self.interrupt_id,
            "action": self.action,
            "to": self.to,
            "message": self.message,
            "error": self.error,
            "deadline": self.review.deadline.isoformat() if self.review.deadline else None,
            "reviewers": self.review.reviewers,
            "decision": plain(self.decision) if self.decision is not None else None,
        }


def _timeout_decision(review: PendingReview) -> SweepAction:
    """The decision the review's own `on_timeout` asks for (fail closed: reject)."""
    deadline = review.deadline.isoformat() if review.deadline else "(none)"
    context = cast(ReviewContext, review.context)
    target = context.get("escalate_to")
    if (
        context.get("on_timeout") == "escalate"
        and isinstance(target, str)
        and target.strip()
        and not review.escalated
        and target != review.reviewers
    ):
        reason = f"review deadline passed at {deadline}; escalated to {target} by the sweep"
        escalate = EscalateDecision(type="escalate", to=target, reason=reason)
        return SweepAction(
            review=review,
            action="escalate",
            decision=escalate.model_dump(mode="python"),
            message=reason,
            to=target,
        )
    message = f"review deadline passed at {deadline}; rejected by the sweep"
    if "reject" not in review.allowed:
        return SweepAction(
            review=review,
            action="error",
            decision=None,
            message=message,
            error=(
                f"review deadline passed at {deadline}, but the review does not allow "
                f"'reject' (it allows {', '.join(review.allowed)}) and cannot be escalated; "
                "left pending for a human"
            ),
        )
    rejection = RejectDecision(type="reject", message=message)
    return SweepAction(
        review=review,
        action="reject",
        decision=rejection.model_dump(mode="python"),
        message=message,
    )


def _by_thread(actions: Sequence[SweepAction]) -> dict[str, list[SweepAction]]:
    grouped: dict[str, list[SweepAction]] = {}
    for action in actions:
        if action.decision is not None:
            grouped.setdefault(action.thread_id, []).append(action)
    return grouped


def _failed(action: SweepAction, exc: BaseException) -> SweepAction:
    text = " ".join(str(exc).split())[:300]
    return SweepAction(
        review=action.review,
        action="error",
        decision=action.decision,
        message=action.message,
        to=action.to,
        error=f"could not resume the run: {type(exc).__name__}: {text}",
    )


def _done(action: SweepAction, result: Any) -> SweepAction:
    return SweepAction(
        review=action.review,
        action=action.action,
        decision=action.decision,
        message=action.message,
        to=action.to,
        result=result,
    )


def _sweep_command(
    snapshot: StateSnapshot, actions: Sequence[SweepAction], at: datetime
) -> Command[Any]:
    answers = {a.interrupt_id: _answer(a.decision or {}, SWEEP_REVIEWER, at) for a in actions}
    return _resume_command(snapshot, answers)


def _sweeping(
    graph: Graph,
    listing: Steps[list[PendingReview]],
    config: RunnableConfig | None,
    durability: Durability | None,
    now: datetime | None,
) -> Steps[list[SweepAction]]:
    """`sweep_reviews`: the expired reviews `listing` finds, answered one thread at a time.

    Each answer is the sweep's (`SWEEP_REVIEWER`), answered at `now` (default: now). A
    thread whose resume fails is reported (`action="error"`); the sweep goes on.
    """
    expired = yield from listing
    planned = [_timeout_decision(r) for r in expired]
    outcome: dict[int, SweepAction] = {}
    for thread_id, actions in _by_thread(planned).items():
        try:
            snapshot = yield _GetState(graph, _thread_config(thread_id, config))
            run_config = _resume_config(thread_id, config, snapshot)
            command = _sweep_command(snapshot, actions, now or datetime.now(UTC))
            result = yield _Invoke(graph, command, run_config, durability)
        except Exception as exc:
            outcome.update({id(a): _failed(a, exc) for a in actions})
        else:
            outcome.update({id(a): _done(a, result) for a in actions})
    return [outcome.get(id(a), a) for a in planned]


def sweep_reviews(
    graph: Graph,
    checkpointer: BaseCheckpointSaver[Any],
    *,
    now: datetime | None = None,
    thread_ids: Iterable[str] | None = None,
    config: RunnableConfig | None = None,
    durability: Durability | None = None,
) -> list[SweepAction]:
    """Apply the on-timeout action of every review whose deadline has passed.

    Each expired review gets what its payload's context says (`on_timeout`, from the
    `ReviewPolicy` in force when it opened): `reject`, the default (fail closed), with
    the message "review deadline passed at <deadline>; rejected by the sweep"; or
    `escalate` to `escalate_to` (an `EscalateDecision`: the review re-opens for that
    group with a new deadline, recorded in its payload's `escalations`). A review that
    was already escalated is rejected when its deadline passes again. The sweep answers
    as `lgsp:sweep` (`SWEEP_REVIEWER`, at `now`), which a review policy always lets apply
    a review's own `on_timeout`. The expired
    reviews of one thread are answered in one resume; the run then goes on in this
    process to its end or its next pause. A thread that fails to resume is reported
    (`action="error"`) and the sweep goes on with the others.

    Args:
        graph: The runs' graph, compiled with a checkpointer on the same database.
        checkpointer: Where to find the pending reviews (usually `graph`'s checkpointer).
        now: The time deadlines are compared with (default: now; timezone-aware).
        thread_ids: Only these threads (default: all).
        config: Extra run config for the resumes (see `resolve_review`).
        durability: LangGraph's durability mode for the resumed runs.

    Returns:
        One `SweepAction` per expired review, soonest deadline first.

    Raises:
        ValueError: If `now` is naive.

    Example:
        ```python
        for action in sweep_reviews(graph, saver):
            print(action.line())
        ```
    """
    listing = _listing(checkpointer, now, thread_ids, True, graph, "list_reviews(now)")
    return drive(_sweeping(graph, listing, config, durability, now))


async def asweep_reviews(
    graph: Graph,
    checkpointer: BaseCheckpointSaver[Any],
    *,
    now: datetime | None = None,
    thread_ids: Iterable[str] | None = None,
    config: RunnableConfig | None = None,
    durability: Durability | None = None,
) -> list[SweepAction]:
    """Async twin of `sweep_reviews`, for async checkpointers.

    Example:
        ```python
        actions = await asweep_reviews(graph, saver)
        ```
    """
    listing = _listing(checkpointer, now, thread_ids, True, graph, "alist_reviews(now)")
    return await adrive(_sweeping(graph, listing, config, durability, now))

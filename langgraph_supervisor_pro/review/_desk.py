"""The review desk: list pending reviews across threads, resolve them, sweep expired ones.

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/review-desk/
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
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
from langgraph_supervisor_pro._internal.twins import Call, Steps, adrive, drive
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

INTERRUPT_CHANNEL = INTERRUPT
"""The channel of interrupts in a checkpoint's pending writes (`"__interrupt__"`)."""


@dataclass(frozen=True, kw_only=True)
class Approve:
    """Approve a pending review: the action runs as requested."""


@dataclass(frozen=True, kw_only=True)
class Reject:
    """Reject a pending review: the action does not run; `message` goes back."""

    message: str = ""


@dataclass(frozen=True, kw_only=True)
class Edit:
    """Run the reviewed action with the reviewer's `args` (`name`: default the action's).

    A dispatch review may name another worker (`dispatch:<worker>`), a tool review not.
    """

    args: Mapping[str, Any]
    name: str | None = None


@dataclass(frozen=True, kw_only=True)
class Respond:
    """Answer instead of the action: `message` stands in for its result."""

    message: str


DecisionInput: TypeAlias = Approve | Reject | Edit | Respond | ReviewDecision | Mapping[str, Any]
"""A decision: `Approve()`, `Reject(message=...)`, `Edit(args=...)`, `Respond(message=...)`,
a `ReviewDecision` model, or its dict (`{"type": "approve"}`, ...)."""

Graph: TypeAlias = Pregel[Any, Any, Any, Any]
"""A compiled graph with a checkpointer: `create_supervisor(...).compile(checkpointer=...)`."""

# Writes that record what happened to a task rather than what it produced (LangGraph's
# task-status rules: a task with any other write finished, so its interrupt was answered).
_CONTROL_WRITES = frozenset({INTERRUPT, RESUME, ERROR, "__error_source_node__"})
_NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
_ROOT_NS = ""


def _pending_interrupts(writes: Iterable[Sequence[Any]]) -> list[Interrupt]:
    """The interrupts of a checkpoint's pending writes whose task wrote no output (answered)."""
    finished: set[str] = set()
    asked: dict[str, list[Interrupt]] = {}
    for task_id, channel, value, *_ in writes:
        if task_id == _NULL_TASK_ID:
            continue
        if channel == INTERRUPT:
            values = value if isinstance(value, list | tuple) else [value]
            asked.setdefault(task_id, []).extend(v for v in values if isinstance(v, Interrupt))
        elif channel not in _CONTROL_WRITES:
            finished.add(task_id)
    return [i for task_id, items in asked.items() if task_id not in finished for i in items]


def _reviews_in(
    thread_id: str, interrupts: Iterable[Interrupt], config: RunnableConfig
) -> list[PendingReview]:
    checkpoint_id = (config.get("configurable") or {}).get("checkpoint_id") or None
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


def _latest(items: Iterable[CheckpointTuple]) -> dict[str, CheckpointTuple]:
    """The newest root checkpoint of each thread (checkpoint ids sort by time)."""
    latest: dict[str, CheckpointTuple] = {}
    for item in items:
        configurable = item.config.get("configurable") or {}
        if configurable.get("checkpoint_ns", _ROOT_NS) != _ROOT_NS:
            continue
        thread_id = str(configurable.get("thread_id"))
        checkpoint_id = str(configurable.get("checkpoint_id", ""))
        held = latest.get(thread_id)
        if held is None or checkpoint_id > str(held.config["configurable"]["checkpoint_id"]):
            latest[thread_id] = item
    return latest


def reviews_of_tuple(thread_id: str, item: CheckpointTuple) -> list[PendingReview]:
    return _reviews_in(thread_id, _pending_interrupts(item.pending_writes or ()), item.config)


def reviews_pending_at(latest: Mapping[str, CheckpointTuple]) -> list[PendingReview]:
    """What `list_reviews` finds, from each thread's newest root checkpoint, listed already."""
    reviews = [r for thread_id, item in latest.items() for r in reviews_of_tuple(thread_id, item)]
    return _by_deadline(reviews)


def _reviews_of_snapshot(thread_id: str, snapshot: StateSnapshot) -> list[PendingReview]:
    return _reviews_in(thread_id, snapshot.interrupts, snapshot.config)


def _by_deadline(reviews: Iterable[PendingReview]) -> list[PendingReview]:
    far = datetime.max.replace(tzinfo=UTC)
    return sorted(reviews, key=lambda r: (r.deadline or far, r.thread_id, r.interrupt_id))


def _get_state(graph: Graph, config: RunnableConfig) -> Call:
    return Call(lambda: graph.get_state(config), lambda: graph.aget_state(config))


def _invoke(
    graph: Graph, command: Command[Any], config: RunnableConfig, durability: Durability | None
) -> Call:
    kwargs: dict[str, Any] = {} if durability is None else {"durability": durability}
    return Call(
        lambda: graph.invoke(command, config, **kwargs),
        lambda: graph.ainvoke(command, config, **kwargs),
    )


def _root_tuple(checkpointer: BaseCheckpointSaver[Any], thread_id: str) -> Call:
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": _ROOT_NS}}
    return Call(lambda: checkpointer.get_tuple(config), lambda: checkpointer.aget_tuple(config))


async def _alist(checkpointer: BaseCheckpointSaver[Any]) -> list[CheckpointTuple]:
    return [item async for item in checkpointer.alist(None)]


def _each_newest(
    checkpointer: BaseCheckpointSaver[Any],
    thread_ids: Iterable[str] | None,
    take: Callable[[str, CheckpointTuple], None],
) -> Steps[None]:
    """`take(thread_id, newest root checkpoint)` for each thread (all, or `thread_ids`).

    Postgres and SQLite never hold the whole history in memory; other savers: `list(None)`.
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
        every = yield Call(lambda: checkpointer.list(None), lambda: _alist(checkpointer))
        for thread_id, item in _latest(every).items():
            take(thread_id, item)
        return
    for thread_id in listed:
        item = yield _root_tuple(checkpointer, thread_id)
        if item is not None:  # gone since the listing, or never had a root checkpoint
            take(thread_id, item)


def _paused_threads(
    checkpointer: BaseCheckpointSaver[Any], thread_ids: Iterable[str] | None
) -> Steps[list[str]]:
    """The threads to read through the graph: those given, else every paused one.

    An interrupt raised below the root is on the root's writes too: only those need `get_state`.
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
            snapshot = yield _get_state(graph, _thread_config(thread_id))
            reviews.extend(_reviews_of_snapshot(thread_id, snapshot))
    else:
        yield from _each_newest(
            checkpointer, thread_ids, lambda t, item: reviews.extend(reviews_of_tuple(t, item))
        )
    moment = aware_or_now(now, where)
    return _by_deadline(r for r in reviews if not expired_only or r.expired(moment))


def each_newest_root(
    checkpointer: BaseCheckpointSaver[Any], take: Callable[[str, CheckpointTuple], None]
) -> None:
    """`take(thread_id, newest root checkpoint)` for every thread (as `list_reviews` reads)."""
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

    Reads each thread's latest root checkpoint (an interrupt raised inside a worker's agent
    is recorded there too): no graph is needed.

    Args:
        checkpointer: A sync checkpointer (see `alist_reviews` for async ones).
        now: The time `expired_only` compares deadlines with (default: now; a naive
            time raises `ValueError`).
        thread_ids: Only these threads (default: every thread in the database).
        expired_only: Only reviews whose deadline has passed at `now`.
        graph: Read each paused thread with `graph.get_state(...).interrupts` instead
            (for graphs that pause in ways the checkpoint alone does not show).

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


def _decision_field(loc: Sequence[int | str]) -> str:
    """Where in one decision an error is (`decisions.0.edit.edited_action.args` -> `args`)."""
    return ".".join(str(p) for p in loc[2:] if not isinstance(p, int)).split(".", 1)[-1]


def _as_dict(review: PendingReview, decision: object) -> object:
    """A desk decision (`Approve()`, `Edit(...)`, ...) as its dict; anything else as is."""
    if isinstance(decision, Edit):
        name = review.action if decision.name is None else decision.name
        args = dict(decision.args) if isinstance(decision.args, Mapping) else decision.args
        return {"type": "edit", "edited_action": {"name": name, "args": args}}
    if isinstance(decision, Approve | Reject | Respond):
        return {"type": type(decision).__name__.lower(), **asdict(decision)}
    return decision


def check_decision(review: PendingReview, decision: object) -> dict[str, Any]:
    """Validate a decision for a review as the run would, and return it as a plain dict.

    It must be one the review allows (or `escalate`) and well formed; an edit of a tool
    call may change its arguments, not the tool. Else `InvalidDecisionError`.
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
            f"{shown_id(decision, 60)}; give a decision like {{'type': 'approve'}} "
            f"(allowed: {allowed})",
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
        why = validation_summary(exc, where=_decision_field)
        raise InvalidDecisionError(
            f"invalid {kind!r} decision for {where}: {why}", review=review
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


def _select(thread_id: str, snapshot: StateSnapshot, interrupt_id: str | None) -> PendingReview:
    if snapshot.metadata is None and not snapshot.values and snapshot.created_at is None:
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
    matches = [r for r in reviews if interrupt_id and r.interrupt_id.startswith(interrupt_id)]
    exact = [r for r in matches if r.interrupt_id == interrupt_id]
    if exact or len(matches) == 1:
        return (exact or matches)[0]
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


def get_review(
    graph: Graph,
    *,
    thread_id: str,
    interrupt_id: str | None = None,
    config: RunnableConfig | None = None,
) -> PendingReview:
    """The pending review `resolve_review` would answer (`ReviewNotFoundError` if none)."""
    snapshot = graph.get_state(_thread_config(thread_id, config))
    return _select(thread_id, snapshot, interrupt_id)


def _resume_config(
    thread_id: str, config: RunnableConfig | None, snapshot: StateSnapshot
) -> RunnableConfig:
    """The resume's config: the tier the run recorded unless `config` names a stricter one.

    The checkpoint's config does not keep the run's tier: a resume would take the deployment's.
    """
    run = _thread_config(thread_id, config)
    configurable = run["configurable"]  # a copy (`_thread_config`)
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
    return run


def _resume_command(snapshot: StateSnapshot, answers: Mapping[str, Any]) -> Command[Any]:
    """The resume command for `answers` (interrupt id -> resume value), always keyed by id.

    LangGraph hands a value sent without an id to the task's next pause again (an escalation
    would escalate twice); keyed by id it answers that pause only.
    """
    pending = {i.id for i in snapshot.interrupts}
    unknown = sorted(set(answers) - pending)
    if unknown:
        raise ValueError(f"interrupt ids {unknown} are not pending (pending: {sorted(pending)})")
    return Command(resume=dict(answers))


def check_reviewer(reviewer: object, *, where: str = "reviewer") -> str | None:
    """Check who answers a review: None, or an identity (stripped); else `ValueError`.

    An identity is a non-empty string of at most 200 characters, not starting with
    `lgsp:` (reserved for the package's own reviewers, such as the sweep). `where` names
    the value in the error.

    Example:
        >>> check_reviewer("  alice "), check_reviewer(None)
        ('alice', None)
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

    The decision was checked before the resume, so a gate posting the same review again
    (same interrupt id, `invalid_answer`) refused who answered, by its own policy.
    """
    pending = result.get(INTERRUPT) if isinstance(result, Mapping) else None
    for item in pending or ():
        if not isinstance(item, Interrupt) or item.id != review.interrupt_id:
            continue
        problem = is_review_payload(item.value) and item.value["context"].get("invalid_answer")
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
    snapshot = yield _get_state(graph, _thread_config(thread_id, config))
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
    result = yield _invoke(graph, command, run_config, durability)
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
    """Answer one pending review and resume the run (in this process, to its end or next pause).

    The decision and who answers are checked first: every error but the graph's gate
    refusing the answer leaves the run untouched.

    Args:
        graph: The run's graph, compiled with a checkpointer on the run's database.
        thread_id: The thread the run is paused on.
        decision: `Approve()`, `Reject(message=...)`, `Edit(args=..., name=...)` (the
            name defaults to the reviewed action) or `Respond(message=...)`; a
            `ReviewDecision` model or its dict (`{"type": "approve"}`, ...) works too.
        reviewer: Who answers (an identity, e.g. `"alice"`); None: nobody is named,
            which a policy that restricts who may answer refuses.
        interrupt_id: Which review (the id or a unique prefix), when several are pending.
        config: Extra run config (merged); without `configurable.autonomy`, the tier the
            run recorded is kept.
        durability: LangGraph's durability mode for the resumed run (default: the graph's).
        policy: The review policy whose rule on who may answer is checked before the
            run is touched (the graph's gates check theirs anyway).

    Returns:
        What `graph.invoke` returns (with `__interrupt__` when the run paused again).

    Raises:
        ReviewNotFoundError: No such pending review (or several, and no `interrupt_id`).
        InvalidDecisionError: The decision is not valid for the review.
        ReviewerNotAllowedError: `policy` refuses `reviewer`, or the graph's gate refused
            the answer (the run is then paused on the same review).
        ValueError: `reviewer` is empty, too long, or starts with `lgsp:` (reserved);
            or `config` names a tier looser than the run's, or one `policy` refuses.

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


@dataclass(frozen=True, kw_only=True)
class SweepAction:
    """What the sweep did with one expired review (`line()`: one line for people).

    `decision` is the decision sent, `to` the group escalated to, `result` what resuming
    the run returned; `action="error"`: the decision could not be applied (see `error`).
    """

    review: PendingReview
    action: Literal["reject", "escalate", "error"]
    decision: Mapping[str, Any] | None
    message: str
    to: str | None = None
    error: str | None = None
    result: Any = field(default=None, compare=False, repr=False)

    @property
    def thread_id(self) -> str:
        """The thread of the review."""
        return self.review.thread_id

    @property
    def interrupt_id(self) -> str:
        """The interrupt id of the review."""
        return self.review.interrupt_id

    def line(self) -> str:
        """One human-readable line: thread, action and what happened."""
        text = self.error if self.action == "error" else self.message
        return f"{self.thread_id} {self.review.action}: {text}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (what `lgsp review sweep --json` prints)."""
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
        escalate = EscalateDecision(type="escalate", to=target, reason=reason).model_dump()
        return SweepAction(
            review=review, action="escalate", decision=escalate, message=reason, to=target
        )
    message = f"review deadline passed at {deadline}; rejected by the sweep"
    if "reject" not in review.allowed:
        error = (
            f"review deadline passed at {deadline}, but the review does not allow "
            f"'reject' (it allows {', '.join(review.allowed)}) and cannot be escalated; "
            "left pending for a human"
        )
        return SweepAction(
            review=review, action="error", decision=None, message=message, error=error
        )
    rejection = RejectDecision(type="reject", message=message).model_dump()
    return SweepAction(review=review, action="reject", decision=rejection, message=message)


def _sweeping(
    graph: Graph,
    listing: Steps[list[PendingReview]],
    config: RunnableConfig | None,
    durability: Durability | None,
    now: datetime | None,
) -> Steps[list[SweepAction]]:
    """`sweep_reviews`: the expired reviews `listing` finds, answered one thread at a time."""
    planned = [_timeout_decision(r) for r in (yield from listing)]
    by_thread: dict[str, list[SweepAction]] = {}
    for action in planned:
        if action.decision is not None:
            by_thread.setdefault(action.thread_id, []).append(action)
    outcome: dict[int, SweepAction] = {}
    for thread_id, actions in by_thread.items():
        try:
            snapshot = yield _get_state(graph, _thread_config(thread_id, config))
            run_config = _resume_config(thread_id, config, snapshot)
            at = now or datetime.now(UTC)
            answers = {
                a.interrupt_id: _answer(a.decision or {}, SWEEP_REVIEWER, at) for a in actions
            }
            command = _resume_command(snapshot, answers)
            result = yield _invoke(graph, command, run_config, durability)
        except Exception as exc:
            text = " ".join(str(exc).split())[:300]
            error = f"could not resume the run: {type(exc).__name__}: {text}"
            outcome.update({id(a): replace(a, action="error", error=error) for a in actions})
        else:
            outcome.update({id(a): replace(a, result=result) for a in actions})
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

    `reject` (the default, fail closed), or `escalate` to `escalate_to` once (the review
    re-opens for that group). The sweep answers as `lgsp:sweep`, one resume per thread, in
    this process. Returns one `SweepAction` per expired review, soonest deadline first; a
    thread that fails to resume is reported (`action="error"`) and the sweep goes on.

    Args:
        graph: The runs' graph, compiled with a checkpointer on the same database.
        checkpointer: Where to find the pending reviews (usually `graph`'s checkpointer).
        now: The time deadlines are compared with (default: now; a naive time raises
            `ValueError`).
        thread_ids: Only these threads (default: all).
        config: Extra run config for the resumes (see `resolve_review`).
        durability: LangGraph's durability mode for the resumed runs.

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

"""Review gates: a pause for a human, in LangChain's human-in-the-loop schema.

`request_review` pauses with `interrupt()` and validates the answer against a schema built
for the review; an invalid or refused answer is never acted on: the same review is posted
again (`context["invalid_answer"]` says why). `escalate` re-opens it for another group.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/reviews/
"""

from __future__ import annotations

import functools
import logging
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Literal,
    NoReturn,
    Self,
    TypeAlias,
    cast,
)

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.errors import GraphInterrupt, is_invalid_resume
from langgraph.types import Interrupt, interrupt
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    create_model,
    model_validator,
)
from pydantic_core import PydanticCustomError

from langgraph_supervisor_pro._internal.hop import HOP_CONFIG_KEY, HopContext
from langgraph_supervisor_pro._internal.interrupts import (
    answer_slot_ns,
    interrupt_id_after,
    server_auth_user,
)
from langgraph_supervisor_pro._internal.storable import storable, storable_value
from langgraph_supervisor_pro._internal.text import one_line, truncate
from langgraph_supervisor_pro._internal.validation import validation_summary
from langgraph_supervisor_pro._state import ReviewEntry
from langgraph_supervisor_pro.review._payload import (
    Escalation,
    PendingReview,
    ReviewContext,
    ReviewKind,
    ReviewRequest,
)

if TYPE_CHECKING:
    from langgraph_supervisor_pro.review._policy import ReviewPolicy

DecisionType = Literal["approve", "edit", "reject", "respond"]
"""The decisions a human can make (LangChain's HITL schema)."""

ALL_DECISIONS: tuple[DecisionType, ...] = ("approve", "edit", "reject", "respond")

REVIEW_LOGGER = "langgraph_supervisor_pro.review"
"""The logger invalid answers to a review are reported on (level WARNING)."""

_log = logging.getLogger(REVIEW_LOGGER)

_INVALID_ANSWER_CHARS = 240
_REVIEWER_CHARS = 200


class _Decision(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ApproveDecision(_Decision):
    """Run the action as requested."""

    type: Literal["approve"]


class EditedAction(_Decision):
    """The action as the reviewer changed it."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class EditDecision(_Decision):
    """Run the action with the reviewer's arguments."""

    type: Literal["edit"]
    edited_action: EditedAction


class RejectDecision(_Decision):
    """Do not run the action; `message` goes back to the worker (or the supervisor)."""

    type: Literal["reject"]
    message: str = ""


class RespondDecision(_Decision):
    """Do not run the action; the reviewer's `message` stands in for its result."""

    type: Literal["respond"]
    message: str


class EscalateDecision(_Decision):
    """Hand the review to another reviewer group (sent by the deadline sweep)."""

    type: Literal["escalate"]
    to: str = Field(min_length=1)
    reason: str = ""


ReviewDecision: TypeAlias = (
    ApproveDecision | EditDecision | RejectDecision | RespondDecision | EscalateDecision
)

_BY_TYPE: dict[str, type[_Decision]] = {
    "approve": ApproveDecision,
    "edit": EditDecision,
    "reject": RejectDecision,
    "respond": RespondDecision,
    "escalate": EscalateDecision,
}


_Reviewer = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=_REVIEWER_CHARS)
]
"""Who answers a review: an identity (a user name, an id, `lgsp:sweep`)."""

_AnswerCheck: TypeAlias = Callable[[Any], "str | None"]
"""Checks a parsed answer: a reason to refuse it, or None."""


class _Answer(BaseModel):
    """What every review's answer may carry beside its decisions: who, and when."""

    model_config = ConfigDict(extra="forbid")

    reviewer: _Reviewer | None = None
    """Who answers (default: the LangGraph server's authenticated user, if any)."""
    answered_at: AwareDatetime | None = None
    """When (default: when the gate receives the answer)."""

    answer_check: ClassVar[_AnswerCheck | None] = None

    @model_validator(mode="after")
    def _may_answer(self) -> Self:
        # A refusal is a validation error, so LangGraph saves nothing of the answer (no
        # resume write) and `request_review` posts the review again, as for a bad answer.
        check = type(self).answer_check
        problem = check(self) if check is not None else None
        if problem is not None:
            raise PydanticCustomError("reviewer_not_allowed", "{reason}", {"reason": problem})
        return self


def response_schema(
    allowed: Sequence[str], *, check: _AnswerCheck | None = None
) -> type[BaseModel]:
    """The resume schema of one review: `{"decisions": [<one allowed decision>]}`.

    It may also carry `reviewer` and `answered_at`. `check` (given the parsed answer)
    returns why the answer is refused, or None: the gate checks who may answer with it.
    """
    kinds = tuple(dict.fromkeys([*allowed, "escalate"]))  # the sweep may always escalate
    unknown = [k for k in kinds if k not in _BY_TYPE]
    if unknown:
        raise ValueError(f"allowed_decisions: unknown decision types {unknown}")
    union: Any = functools.reduce(operator.or_, [_BY_TYPE[kind] for kind in kinds])
    item: Any = Annotated[union, Field(discriminator="type")]
    model: type[_Answer] = create_model(
        "ReviewResponse",
        __base__=_Answer,
        decisions=(list[item], Field(min_length=1, max_length=1)),
    )
    model.answer_check = check
    return model


def review_payload(
    *,
    kind: ReviewKind,
    action: str,
    args: Mapping[str, Any],
    description: str,
    allowed: Sequence[DecisionType],
    context: Mapping[str, Any],
) -> ReviewRequest:
    """The interrupt value of one review: the HITL schema plus the reviewer's context.

    `action` is a tool name or `dispatch:<worker>`; `context` the reviewer's (task, worker,
    risk, reason, ...). Every string is made storable: a NUL or a lone surrogate becomes
    U+FFFD, as Postgres refuses both.

    Example:
        >>> p = review_payload(kind="tool", action="refund", args={"amount": 30},
        ...                    description="Refund 30 EUR", allowed=["approve", "reject"],
        ...                    context={"worker": "billing", "risk": "high"})
        >>> p["review_configs"][0]["allowed_decisions"]
        ['approve', 'reject']
    """
    payload: ReviewRequest = {
        "action_requests": [{"name": action, "args": dict(args), "description": description}],
        "review_configs": [{"action_name": action, "allowed_decisions": list(allowed)}],
        "context": cast(ReviewContext, {"kind": kind, **dict(context)}),
    }
    return cast(ReviewRequest, storable_value(payload))


def gate_request(
    *,
    kind: ReviewKind,
    action: str,
    args: Mapping[str, Any],
    description: str,
    task: str,
    worker: str | None,
    risk: str | None,
    tier: str,
    reason: str,
    summary: str,
    dispatched_at: str | None,
    step: int | None,
    turn: int | None,
    path: Sequence[str],
    policy: ReviewPolicy,
    config: RunnableConfig,
) -> ReviewRequest:
    """The review payload of one of this package's gates (a tool call or a dispatch).

    The deadline is `policy.review_timeout` after the hop's dispatch time (stored in
    state, so a re-run builds the same payload); the thread comes from `config`.
    """
    context: ReviewContext = {
        "kind": kind,
        "task": task,
        "worker": worker,
        "risk": risk,
        "tier": tier,
        "reason": reason,
        "summary": summary,
        "deadline": deadline_after(policy.review_timeout, now=dispatched_at),
        "reviewers": policy.reviewers,
        "on_timeout": policy.on_timeout,
        "escalate_to": policy.escalate_to,
        "step": step,
        "turn": turn,
        "thread_id": (config.get("configurable") or {}).get("thread_id"),
        "path": list(path),
    }
    return review_payload(
        kind=kind,
        action=action,
        args=args,
        description=description,
        allowed=ALL_DECISIONS,
        context=context,
    )


def deadline_after(seconds: float, *, now: datetime | str | None = None) -> str:
    """An ISO-8601 deadline `seconds` after `now` (a datetime or ISO text; default: now).

    Gates pass the hop's dispatch time, stored in state, so a re-run computes the same one.
    """
    start = datetime.fromisoformat(now) if isinstance(now, str) else now
    return ((start or datetime.now(UTC)) + timedelta(seconds=seconds)).isoformat()


@dataclass(frozen=True, kw_only=True)
class ReviewAnswer:
    """A review's answer as the gate took it: the decision, who gave it, when, to what.

    Example:
        ```python
        answer = request_review_answer(payload, policy=policy)
        answer.decision.type, answer.reviewer, answer.answered_at
        ```
    """

    decision: ApproveDecision | EditDecision | RejectDecision | RespondDecision
    """The decision (approve, edit, reject or respond)."""
    reviewer: str | None
    """Who answered: the answer's `reviewer`, else the server's authenticated user, or None."""
    answered_at: str
    """When (ISO 8601, UTC): the answer's `answered_at`, else when the gate received it."""
    interrupt_id: str
    """The id of the interrupt the answer resumed."""
    review: ReviewRequest
    """The review as it was answered (after any escalations)."""

    def entry(self, *, turn: int, step: int | None) -> ReviewEntry:
        """The audit record of this answer (a `ReviewEntry`), for a supervisor state's `reviews`."""
        context = self.review["context"]
        request = self.review["action_requests"][0]
        kind = context.get("kind", "tool")
        return cast(
            ReviewEntry,
            storable_value(
                {
                    "turn": turn,
                    "step": step,
                    "interrupt_id": self.interrupt_id,
                    "kind": kind if kind in ("tool", "dispatch", "budget") else "tool",
                    "action": str(request.get("name", "")),
                    "worker": context.get("worker"),
                    "path": list(context.get("path") or ()),
                    "decision": self.decision.type,
                    "reviewer": self.reviewer,
                    "reviewers": context.get("reviewers"),
                    "answered_at": self.answered_at,
                    "escalations": [dict(e) for e in context.get("escalations", ())],
                }
            ),
        )


def request_review(
    payload: Mapping[str, Any],
    *,
    escalation_timeout: float | None = None,
    policy: ReviewPolicy | None = None,
) -> ApproveDecision | EditDecision | RejectDecision | RespondDecision:
    """Pause the run for a human decision on `payload`, and return the decision.

    The first call raises LangGraph's interrupt; when the run is resumed with
    `Command(resume={"decisions": [...]})`, the node re-runs and this returns the
    validated decision (`request_review_answer` also says who gave it and when). An
    invalid answer, or one by a reviewer `policy` refuses, is never acted on: the review
    is posted again under the same interrupt id, with `context["invalid_answer"]` saying
    why. An `escalate` decision re-opens the review for the named group (open for
    `escalation_timeout` seconds) and pauses again. The review must be the only source of
    interrupts in its task (node, tool call or worker function).

    Example:
        ```python
        decision = request_review(review_payload(
            kind="tool", action="refund", args={"amount": 30},
            description="Refund 30 EUR", allowed=["approve", "reject"],
            context={"worker": "billing"}))
        ```
    """
    answer = request_review_answer(payload, escalation_timeout=escalation_timeout, policy=policy)
    return answer.decision


def _with_path(payload: Mapping[str, Any], configurable: Mapping[str, Any]) -> Mapping[str, Any]:
    """`payload` with `context["path"]` set from the running hop when it has none.

    So a review a worker function asks for itself says where in a tree it was asked.
    """
    context = payload.get("context")
    hop = configurable.get(HOP_CONFIG_KEY)
    if not isinstance(context, Mapping) or context.get("path"):
        return payload
    if not isinstance(hop, HopContext) or not hop.path:
        return payload
    return {**payload, "context": {**context, "path": list(hop.path)}}


def request_review_answer(
    payload: Mapping[str, Any],
    *,
    escalation_timeout: float | None = None,
    policy: ReviewPolicy | None = None,
) -> ReviewAnswer:
    """`request_review`, returning a `ReviewAnswer`: the decision, who answered, when, to what.

    Who: the answer's `reviewer`, else the LangGraph server's authenticated user of the
    run, else None. When: the answer's `answered_at` (aware), else now. The desk, the CLI
    and `server_auth` set both, so they are the same however often the node re-runs.

    """
    configurable = get_config().get("configurable") or {}
    current = cast(ReviewRequest, storable_value(_with_path(payload, configurable)))
    ns = str(configurable.get("checkpoint_ns", ""))
    answered = 0  # the answers this task consumed: the escalations so far
    while True:
        allowed = current["review_configs"][0]["allowed_decisions"]
        check = _reviewer_check(policy, current, interrupt_id_after(ns, answered), configurable)
        schema = response_schema(allowed, check=check)
        try:
            # LangGraph validates the resume value against `schema`; an invalid one
            # (or one by a reviewer the policy refuses) raises here, marked
            # `is_invalid_resume`, and nothing of it is saved.
            parsed = interrupt(current, response_schema=schema)
        except ValidationError as exc:
            if not is_invalid_resume(exc):
                raise
            _pause_again(current, schema, answered, exc)
        interrupt_id = interrupt_id_after(ns, answered)
        answered += 1
        decision = cast(ReviewDecision, getattr(parsed, "decisions")[0])  # noqa: B009
        reviewer = _reviewer_of(parsed, configurable)
        at = _answered_at(parsed)
        if not isinstance(decision, EscalateDecision):
            return ReviewAnswer(
                decision=decision,
                reviewer=reviewer,
                answered_at=at,
                interrupt_id=interrupt_id,
                review=current,
            )
        context: ReviewContext = {**current["context"]}
        # Derived from the review and the answer, not the clock, so a re-run of the node
        # (every resume replays it) rebuilds the same payload.
        previous = context.get("deadline")
        history: list[Escalation] = [
            *context.get("escalations", []),
            {
                "from": context.get("reviewers"),
                "to": decision.to,
                "reason": decision.reason,
                "previous_deadline": previous,
                "by": reviewer,
                "at": at if getattr(parsed, "answered_at", None) is not None else None,
            },
        ]
        context["reviewers"], context["escalations"] = decision.to, history
        if escalation_timeout is not None:
            context["deadline"] = deadline_after(escalation_timeout, now=previous)
        current = cast(ReviewRequest, storable_value({**current, "context": context}))


def _reviewer_of(parsed: Any, configurable: Mapping[str, Any]) -> str | None:
    reviewer = getattr(parsed, "reviewer", None)
    who = reviewer if isinstance(reviewer, str) and reviewer else server_auth_user(configurable)
    return None if who is None else storable(who)


def _answered_at(parsed: Any) -> str:
    at = getattr(parsed, "answered_at", None)
    moment = at if isinstance(at, datetime) else datetime.now(UTC)
    return moment.astimezone(UTC).isoformat()


def _reviewer_check(
    policy: ReviewPolicy | None,
    current: ReviewRequest,
    interrupt_id: str,
    configurable: Mapping[str, Any],
) -> _AnswerCheck | None:
    """The check of who answers `current`, for its response schema (None: no rule)."""
    if policy is None or not policy.restricts_reviewers:
        return None
    thread = configurable.get("thread_id", current["context"].get("thread_id"))
    review = PendingReview.from_payload(
        current, thread_id="" if thread is None else str(thread), interrupt_id=interrupt_id
    )

    def check(parsed: Any) -> str | None:
        decisions = getattr(parsed, "decisions", None) or [None]
        return policy.reviewer_refusal(
            _reviewer_of(parsed, configurable), review, decision=decisions[0]
        )

    return check


def _pause_again(
    current: ReviewRequest, schema: type[BaseModel], answered: int, exc: ValidationError
) -> NoReturn:
    """Post the pending review `current` again after the refused answer `exc`.

    Left to propagate, LangGraph's `ValidationError` would be saved as the task's error
    (next to the refused answer): the thread would read as failed, and every
    `invoke(None)` would raise it again. Raising the same interrupt instead leaves the
    task interrupted, as it was. It must keep its id, which LangGraph derives from the
    task's namespace and the answers the task consumed (`answered`, one per escalation):
    calling `interrupt()` again cannot, as after an answer by id (`{id: value}`) the
    refused value holds the task's next answer slot and the new interrupt would get the
    following slot's id, which the next answer by id would not match.
    """
    configurable = get_config().get("configurable") or {}
    ns = str(configurable.get("checkpoint_ns", ""))
    problem = invalid_answer_summary(exc)
    context = cast(ReviewContext, {**current["context"], "invalid_answer": problem})
    again = Interrupt.from_ns(
        {**current, "context": context},
        answer_slot_ns(ns, answered),
        # As `interrupt()` surfaces it, so a client's form is the same as before.
        response_schema=TypeAdapter(schema).json_schema(),
    )
    request = current["action_requests"][0]
    _log.warning(
        "refused an answer to the %s review of %r (thread %r, path %s, interrupt "
        "%s): %s; the review stays open",
        current["context"].get("kind", "tool"),
        request.get("name"),
        configurable.get("thread_id", current["context"].get("thread_id")),
        "/".join(current["context"].get("path") or ()) or "-",
        again.id,
        problem,
    )
    raise GraphInterrupt((again,)) from None


def invalid_answer_summary(exc: ValidationError) -> str:
    """Why a review's answer was refused, in one line (never the answer itself)."""
    summary = validation_summary(
        exc,
        where=lambda loc: ".".join(truncate(str(p), 40) for p in loc),
        count_more=True,
        max_chars=10 * _INVALID_ANSWER_CHARS,
    )
    return storable(one_line(summary, _INVALID_ANSWER_CHARS))

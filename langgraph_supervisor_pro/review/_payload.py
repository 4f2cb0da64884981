"""A review's interrupt payload (`ReviewRequest`), and `PendingReview`, how a reader sees one.

`ReviewRequest` is LangChain's `HITLRequest` plus a `ReviewContext` for the reviewer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Literal, NotRequired, Required, cast

from langchain.agents.middleware.human_in_the_loop import HITLRequest
from pydantic import BaseModel
from typing_extensions import TypedDict

ReviewKind = Literal["tool", "dispatch", "budget"]
"""What is reviewed: a worker's tool call, a dispatch of a worker, or a budget warning."""

_PAYLOAD_KEYS = ("action_requests", "review_configs", "context")

Escalation = TypedDict(
    "Escalation",
    {
        "from": str | None,
        "to": str,
        "reason": str,
        "previous_deadline": str | None,
        "by": str | None,
        "at": str | None,
    },
)
"""One escalation of a review in its context: from and to which group, why, the deadline
it replaced, who sent it and when."""


class ReviewContext(TypedDict, total=False):
    """The reviewer's context of one review (the payload's `context` block).

    `risk` is None for dispatches; `summary` is the work so far; `deadline` is ISO-8601
    UTC; `reviewers` the group the review is assigned to; `path` the worker names from the
    root down; `escalations` oldest first; `invalid_answer` why the last answer was
    refused (never the answer itself). The package's gates fill every key but the last
    two; a payload built by hand with `review_payload` may carry only some.
    """

    kind: Required[ReviewKind]
    task: str
    worker: str | None
    risk: str | None
    tier: str
    reason: str
    summary: str
    deadline: str | None
    reviewers: str | None
    on_timeout: str
    escalate_to: str | None
    step: int | None
    turn: int | None
    thread_id: str | None
    path: list[str]
    escalations: list[Escalation]
    invalid_answer: NotRequired[str]


class ReviewRequest(HITLRequest):
    """A review's interrupt value: LangChain's `HITLRequest` plus the reviewer's context."""

    context: ReviewContext


def _freeze(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


def plain(value: Any) -> Any:
    """A JSON-friendly copy: mappings to dicts, sequences to lists, datetimes to ISO."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return plain(value.model_dump(mode="json"))
    return value


def aware_or_now(now: datetime | None, where: str) -> datetime:
    if now is None:
        return datetime.now(UTC)
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(
            f"{where}: got the naive time {now!r}; give a timezone-aware time, e.g. "
            "datetime.now(UTC)"
        )
    return now


def _parse_deadline(value: object) -> datetime | None:
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str) and value.strip():
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        parsed = parsed.replace(tzinfo=UTC)  # the payload's deadlines are UTC
    return parsed.astimezone(UTC)


@dataclass(frozen=True, kw_only=True)
class PendingReview:
    """One review a run is paused on: what is asked, of whom, until when.

    Built from the interrupt's payload; `context` and `payload` are read-only views of it.

    Example:
        >>> from langgraph_supervisor_pro.review._gate import review_payload
        >>> payload = review_payload(
        ...     kind="tool", action="refund", args={"amount": 30},
        ...     description="Refund 30 EUR", allowed=["approve", "reject"],
        ...     context={"worker": "billing", "reviewers": "support",
        ...              "deadline": "2030-01-01T00:00:00+00:00"})
        >>> review = PendingReview.from_payload(payload, thread_id="t1", interrupt_id="ab12")
        >>> review.action, review.worker, review.reviewers, review.allowed
        ('refund', 'billing', 'support', ('approve', 'reject'))
    """

    thread_id: str
    """The thread the run is on."""
    interrupt_id: str
    """The interrupt's id (resume with `Command(resume={interrupt_id: ...})`)."""
    kind: str
    """`tool` (a worker's tool call) or `dispatch` (the supervisor's dispatch of a worker)."""
    action: str
    """The action's name: a tool name, or `dispatch:<worker>`."""
    args: Mapping[str, Any]
    """The action's arguments."""
    description: str
    """One sentence describing the action to the reviewer."""
    allowed: tuple[str, ...]
    """The decisions the reviewer may make (`escalate` is always accepted too)."""
    worker: str | None
    """The worker that wants to act (or is dispatched)."""
    risk: str | None
    """The tool's risk level (None for dispatches)."""
    reviewers: str | None
    """The reviewer group the review is assigned to (after escalations, the last one)."""
    deadline: datetime | None
    """When the review expires (UTC), or None when it has no deadline."""
    context: Mapping[str, Any]
    """The payload's structured context: task, worker, risk, reason, summary, deadline..."""
    payload: Mapping[str, Any]
    """The whole interrupt value (`action_requests`, `review_configs`, `context`)."""
    checkpoint_id: str | None = None
    """The checkpoint the run is paused on (None when read through a graph)."""

    @classmethod
    def from_payload(
        cls,
        payload: Mapping[str, Any],
        *,
        thread_id: str,
        interrupt_id: str,
        checkpoint_id: str | None = None,
    ) -> PendingReview:
        """Build a review from an interrupt value made by `review_payload` (else `ValueError`)."""
        if not is_review_payload(payload):
            raise ValueError(
                "not a review payload: expected a mapping with "
                f"{', '.join(_PAYLOAD_KEYS)} (see review_payload)"
            )
        review = cast(ReviewRequest, payload)
        request = review["action_requests"][0]
        config = review["review_configs"][0]
        context: ReviewContext = review["context"]
        risk = context.get("risk")
        worker = context.get("worker")
        reviewers = context.get("reviewers")
        return cls(
            thread_id=thread_id,
            interrupt_id=interrupt_id,
            kind=str(context.get("kind", "tool")),
            action=str(request.get("name", config.get("action_name", ""))),
            args=_freeze(request.get("args") or {}),
            description=str(request.get("description", "")),
            allowed=tuple(str(d) for d in config.get("allowed_decisions") or ()),
            worker=None if worker is None else str(worker),
            risk=None if risk is None else str(risk),
            reviewers=None if reviewers is None else str(reviewers),
            deadline=_parse_deadline(context.get("deadline")),
            context=_freeze(cast(Mapping[str, Any], context)),
            payload=_freeze(payload),
            checkpoint_id=checkpoint_id,
        )

    @property
    def _context(self) -> ReviewContext:
        """The context, typed (it was built by `review_payload`)."""
        return cast(ReviewContext, self.context)

    @property
    def task(self) -> str:
        """The user's task for the run (from the context)."""
        return str(self._context.get("task") or "")

    @property
    def reason(self) -> str:
        """Why the action needs review (from the context)."""
        return str(self._context.get("reason") or "")

    @property
    def path(self) -> tuple[str, ...]:
        """Where the run paused: worker names from the root down (empty when not given)."""
        return tuple(str(name) for name in self._context.get("path") or ())

    @property
    def invalid_answer(self) -> str | None:
        """Why the last answer to this review was refused, or None (from the context)."""
        problem = self._context.get("invalid_answer")
        return None if problem is None else str(problem)

    @property
    def escalations(self) -> tuple[Mapping[str, Any], ...]:
        """The escalations recorded so far, oldest first (`from`, `to`, `reason`, `at`)."""
        history = self._context.get("escalations") or ()
        return tuple(e for e in history if isinstance(e, Mapping))

    @property
    def escalated(self) -> bool:
        """Whether the review was already escalated (the sweep then rejects it)."""
        return bool(self.escalations)

    def expired(self, now: datetime | None = None) -> bool:
        """Whether the deadline has passed at `now` (aware; default: now); never without one."""
        moment = aware_or_now(now, "PendingReview.expired(now)")
        return self.deadline is not None and moment >= self.deadline

    def to_dict(self, *, now: datetime | None = None) -> dict[str, Any]:
        """A JSON-friendly dict (what `lgsp review list --json` prints); `expired` at `now`."""
        return {
            "thread_id": self.thread_id,
            "interrupt_id": self.interrupt_id,
            "kind": self.kind,
            "action": self.action,
            "args": plain(self.args),
            "description": self.description,
            "allowed": list(self.allowed),
            "worker": self.worker,
            "risk": self.risk,
            "reviewers": self.reviewers,
            "deadline": self.deadline.isoformat() if self.deadline else None,
            "expired": self.expired(now),
            "task": self.task,
            "reason": self.reason,
            "invalid_answer": self.invalid_answer,
            "context": plain(self.context),
            "checkpoint_id": self.checkpoint_id,
        }


def is_review_payload(value: object) -> bool:
    """Whether an interrupt value is a review payload (as `review_payload` builds it)."""
    if not isinstance(value, Mapping) or not all(k in value for k in _PAYLOAD_KEYS):
        return False
    requests, configs, context = (value[k] for k in _PAYLOAD_KEYS)
    return (
        isinstance(requests, Sequence)
        and not isinstance(requests, str)
        and len(requests) > 0
        and isinstance(requests[0], Mapping)
        and isinstance(configs, Sequence)
        and not isinstance(configs, str)
        and len(configs) > 0
        and isinstance(configs[0], Mapping)
        and isinstance(context, Mapping)
    )

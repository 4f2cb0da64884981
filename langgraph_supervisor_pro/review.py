"""Review gates: a pause for a human, in LangChain's human-in-the-loop schema.

`request_review` pauses the run with `interrupt()`. The payload is what review UIs
built for LangChain's `HumanInTheLoopMiddleware` expect (`action_requests`,
`review_configs`), plus a `context` block for the reviewer: the task, the worker,
the risk, why it needs review, the work so far, the deadline and the reviewer
group. The resume value (`{"decisions": [...]}`) is validated against a schema
built for this review (only its allowed decision types), so an invalid answer is
refused with a clear error and the run stays paused, unchanged.

An `escalate` decision (what the deadline sweep sends when the policy says so)
re-opens the same review for another reviewer group, with a new deadline, recorded
in the payload.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal, TypeAlias, cast

from langgraph.types import interrupt
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

__all__ = [
    "ApproveDecision",
    "DecisionType",
    "EditDecision",
    "EditedAction",
    "EscalateDecision",
    "RejectDecision",
    "RespondDecision",
    "ReviewDecision",
    "ReviewKind",
    "request_review",
    "review_payload",
]

DecisionType = Literal["approve", "edit", "reject", "respond"]
"""The decisions a human can make (LangChain's HITL schema)."""

ReviewKind = Literal["tool", "dispatch"]
"""What is reviewed: a worker's tool call, or the supervisor's dispatch of a worker."""

ALL_DECISIONS: tuple[DecisionType, ...] = ("approve", "edit", "reject", "respond")


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


def response_schema(allowed: Sequence[str]) -> type[BaseModel]:
    """The resume schema of one review: `{"decisions": [<one allowed decision>]}`."""
    kinds = tuple(dict.fromkeys([*allowed, "escalate"]))  # the sweep may always escalate
    unknown = [k for k in kinds if k not in _BY_TYPE]
    if unknown:
        raise ValueError(f"allowed_decisions: unknown decision types {unknown}")
    union: Any = functools.reduce(operator.or_, [_BY_TYPE[kind] for kind in kinds])
    item: Any = Annotated[union, Field(discriminator="type")]
    model: type[BaseModel] = create_model(
        "ReviewResponse",
        __config__=ConfigDict(extra="forbid"),
        decisions=(list[item], Field(min_length=1, max_length=1)),
    )
    return model


def review_payload(
    *,
    kind: ReviewKind,
    action: str,
    args: Mapping[str, Any],
    description: str,
    allowed: Sequence[DecisionType],
    context: Mapping[str, Any],
) -> dict[str, Any]:
    """The interrupt value of one review: the HITL schema plus the reviewer's context.

    Args:
        kind: `tool` or `dispatch`.
        action: The action's name (a tool name, or `dispatch:<worker>`).
        args: The action's arguments.
        description: One sentence describing the action to the reviewer.
        allowed: The decisions the reviewer may make.
        context: Structured context: task, worker, risk, reason, summary, deadline, ...

    Returns:
        `{"action_requests": [...], "review_configs": [...], "context": {...}}`.

    Example:
        >>> p = review_payload(kind="tool", action="refund", args={"amount": 30},
        ...                    description="Refund 30 EUR", allowed=["approve", "reject"],
        ...                    context={"worker": "billing", "risk": "high"})
        >>> p["review_configs"][0]["allowed_decisions"]
        ['approve', 'reject']
    """
    return {
        "action_requests": [{"name": action, "args": dict(args), "description": description}],
        "review_configs": [{"action_name": action, "allowed_decisions": list(allowed)}],
        "context": {"kind": kind, **dict(context)},
    }


def deadline_after(seconds: float, *, now: datetime | None = None) -> str:
    """An ISO-8601 UTC deadline `seconds` from now."""
    start = now or datetime.now(UTC)
    return (start + timedelta(seconds=seconds)).isoformat()


def _short(exc: ValidationError) -> str:
    errors = exc.errors()
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in errors[:3]
    )


def request_review(
    payload: Mapping[str, Any],
    *,
    escalation_timeout: float | None = None,
) -> ApproveDecision | EditDecision | RejectDecision | RespondDecision:
    """Pause the run for a human decision on `payload`, and return the decision.

    Call it from a node, a tool or a worker function. The first call raises
    LangGraph's interrupt; when the run is resumed with
    `Command(resume={"decisions": [...]})`, the node re-runs and this returns the
    validated decision. An `escalate` decision re-opens the review for the named
    group (with a new deadline when `escalation_timeout` is given) and pauses again.
    An invalid answer is never acted on: the review pauses again, with
    `context["invalid_resume"]` saying what was wrong (`resolve_review` validates
    before resuming, so the run is not touched at all).

    Args:
        payload: From `review_payload`.
        escalation_timeout: Seconds an escalated review stays open.

    Returns:
        The human's decision (approve, edit, reject or respond).

    Example:
        >>> decision = request_review(review_payload(
        ...     kind="tool", action="refund", args={"amount": 30},
        ...     description="Refund 30 EUR", allowed=["approve", "reject"],
        ...     context={"worker": "billing"}))
        >>> decision.type
        'approve'
    """
    current = dict(payload)
    while True:
        allowed = current["review_configs"][0]["allowed_decisions"]
        schema = response_schema(allowed)
        try:
            # LangGraph validates the resume value against `schema` when this call
            # replays it; an invalid one is never acted on (`resolve_review` refuses it
            # before resuming, leaving the run unchanged).
            answer = interrupt(current, response_schema=schema)
            parsed = answer if isinstance(answer, schema) else schema.model_validate(answer)
        except ValidationError as exc:
            # Never act on an invalid answer: pause again on the same review.
            context = {**current["context"], "invalid_resume": _short(exc)}
            current = {**current, "context": context}
            continue
        decision = cast(ReviewDecision, getattr(parsed, "decisions")[0])  # noqa: B009
        if not isinstance(decision, EscalateDecision):
            return decision
        context = dict(current["context"])
        history = [
            *context.get("escalations", []),
            {
                "from": context.get("reviewers"),
                "to": decision.to,
                "reason": decision.reason,
                "at": datetime.now(UTC).isoformat(),
            },
        ]
        context.update(reviewers=decision.to, escalations=history)
        if escalation_timeout is not None:
            context["deadline"] = deadline_after(escalation_timeout)
        current = {**current, "context": context}

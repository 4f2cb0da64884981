"""Review gates: a pause for a human, in LangChain's human-in-the-loop schema.

`request_review` pauses the run with `interrupt()`. The payload is what review UIs
built for LangChain's `HumanInTheLoopMiddleware` expect (`action_requests`,
`review_configs`), plus a `context` block for the reviewer: the task, the worker,
the risk, why it needs review, the work so far, the deadline and the reviewer
group. The resume value (`{"decisions": [...]}`) is validated against a schema
built for this review (only its allowed decision types). An invalid answer is never
acted on: the gate pauses again on the same review (the same interrupt id and
response schema), its context saying what was wrong (`invalid_answer`), and logs a
warning on the `langgraph_supervisor_pro.review` logger. No task error is saved, so
the run stays interrupted and the next answer (or `invoke(None)`) finds it as it was.

An `escalate` decision (what the deadline sweep sends when the policy says so)
re-opens the same review for another reviewer group, with a new deadline, recorded
in the payload.
"""

from __future__ import annotations

import functools
import logging
import operator
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    NoReturn,
    NotRequired,
    Required,
    TypeAlias,
    cast,
)

from langchain.agents.middleware.human_in_the_loop import HITLRequest
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.errors import GraphInterrupt, is_invalid_resume
from langgraph.types import Interrupt, interrupt
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from typing_extensions import TypedDict

from langgraph_supervisor_pro._internal.storable import storable, storable_value
from langgraph_supervisor_pro._internal.text import one_line, truncate

if TYPE_CHECKING:
    from langgraph_supervisor_pro.review.policy import ReviewPolicy

__all__ = [
    "ApproveDecision",
    "DecisionType",
    "EditDecision",
    "EditedAction",
    "EscalateDecision",
    "RejectDecision",
    "RespondDecision",
    "ReviewContext",
    "ReviewDecision",
    "ReviewKind",
    "ReviewRequest",
    "request_review",
    "review_payload",
]

DecisionType = Literal["approve", "edit", "reject", "respond"]
"""The decisions a human can make (LangChain's HITL schema)."""

ReviewKind = Literal["tool", "dispatch"]
"""What is reviewed: a worker's tool call, or the supervisor's dispatch of a worker."""

ALL_DECISIONS: tuple[DecisionType, ...] = ("approve", "edit", "reject", "respond")

REVIEW_LOGGER = "langgraph_supervisor_pro.review"
"""The logger invalid answers to a review are reported on (level WARNING)."""

_log = logging.getLogger(REVIEW_LOGGER)

# LangGraph's namespace separator, which its interrupt ids are built with: the id of a
# task's interrupt is the hash of the task's `checkpoint_ns`, or of `f"{ns}|{k}"` once the
# task consumed k answers. Not exported by LangGraph; tests/review/test_gate.py pins that
# the ids built with it equal LangGraph's own.
_NS_SEP = "|"
_INVALID_ANSWER_CHARS = 240

Escalation = TypedDict(
    "Escalation",
    {"from": str | None, "to": str, "reason": str, "previous_deadline": str | None},
)
"""One escalation of a review, as `request_review` records it in the context."""


class ReviewContext(TypedDict, total=False):
    """The reviewer's context of one review (the payload's `context` block).

    The gates of this package fill every key but `escalations` (added by the first
    escalation) and `invalid_answer` (added when an answer is refused); a payload built
    by hand with `review_payload` may carry only some.
    """

    kind: Required[ReviewKind]
    """`tool` or `dispatch`."""
    task: str
    """The user's task for the run."""
    worker: str | None
    """The worker that wants to act (or is dispatched)."""
    risk: str | None
    """The tool's risk level (None for dispatches)."""
    tier: str
    """The autonomy tier in force."""
    reason: str
    """Why the action needs review."""
    summary: str
    """The work so far."""
    deadline: str | None
    """When the review expires (ISO-8601 UTC)."""
    reviewers: str | None
    """The reviewer group the review is assigned to."""
    on_timeout: str
    """What the deadline sweep does: `reject` or `escalate`."""
    escalate_to: str | None
    """The group an expired review is escalated to."""
    step: int | None
    """The hop's step."""
    turn: int | None
    """The run's turn."""
    thread_id: str | None
    """The run's thread."""
    path: list[str]
    """Where the review paused, as worker names from the root down: `["billing"]` for a
    tool of a root worker, `["incident", "pager"]` for a tool of the `pager` worker of the
    `incident` domain, or for `incident`'s dispatch of `pager`."""
    escalations: list[Escalation]
    """The escalations so far, oldest first."""
    invalid_answer: NotRequired[str]
    """Why the last answer was refused: a one-line summary of its validation errors
    (never the answer itself), e.g. `decisions.0: Input tag 'maybe' found using 'type'
    does not match any of the expected tags: ...`. Present only on a review re-posted by
    `request_review` after an invalid answer; the rest of the payload is unchanged."""


class ReviewRequest(HITLRequest):
    """A review's interrupt value: LangChain's `HITLRequest` plus the reviewer's context."""

    context: ReviewContext


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
) -> ReviewRequest:
    """The interrupt value of one review: the HITL schema plus the reviewer's context.

    Args:
        kind: `tool` or `dispatch`.
        action: The action's name (a tool name, or `dispatch:<worker>`).
        args: The action's arguments.
        description: One sentence describing the action to the reviewer.
        allowed: The decisions the reviewer may make.
        context: Structured context: task, worker, risk, reason, summary, deadline, ...

    Returns:
        `{"action_requests": [...], "review_configs": [...], "context": {...}}`, every
        string in it storable: a NUL or a lone surrogate (in a tool's arguments, say)
        becomes U+FFFD, as Postgres refuses both.

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

    Every key of `ReviewContext` but `escalations` is filled: the deadline is
    `policy.review_timeout` after the hop's dispatch time (stored in state, so a
    re-run builds the same payload), the reviewer group and timeout handling come
    from `policy`, the thread from `config`.

    Example:
        >>> from langgraph_supervisor_pro.review.policy import ReviewPolicy
        >>> p = gate_request(kind="tool", action="refund", args={"amount": 30},
        ...                  description="Refund 30 EUR", task="T", worker="billing",
        ...                  risk="high", tier="supervised", reason="high risk",
        ...                  summary="Hop 1", dispatched_at="2030-01-01T00:00:00+00:00",
        ...                  step=1, turn=1, path=["billing"], policy=ReviewPolicy(),
        ...                  config={})
        >>> p["context"]["worker"], p["context"]["thread_id"], p["context"]["path"]
        ('billing', None, ['billing'])
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
    payload = review_payload(
        kind=kind,
        action=action,
        args=args,
        description=description,
        allowed=ALL_DECISIONS,
        context={k: v for k, v in context.items() if k != "kind"},
    )
    return payload


def deadline_after(seconds: float, *, now: datetime | str | None = None) -> str:
    """An ISO-8601 UTC deadline `seconds` after `now` (a datetime or ISO text; default: now).

    Review gates pass the hop's dispatch time, which is stored in state, so a node that
    re-runs (every resume replays it) computes the same deadline.
    """
    start = datetime.fromisoformat(now) if isinstance(now, str) else now
    return ((start or datetime.now(UTC)) + timedelta(seconds=seconds)).isoformat()


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

    An invalid answer (one LangGraph's `interrupt` refuses against the review's
    response schema, `is_invalid_resume`) is never acted on: the review is posted
    again under the same interrupt id, with the same response schema, its payload
    unchanged but for `context["invalid_answer"]` (what was wrong, in one line), and a
    warning goes to the `langgraph_supervisor_pro.review` logger. `invoke` returns
    with the review pending, no task error is saved, and the run resumes from there
    on a valid answer.

    The interrupt ids assume, as in this package's gates, that the review is the
    only source of interrupts in its task (node, tool call or worker function).

    Args:
        payload: From `review_payload`.
        escalation_timeout: Seconds an escalated review stays open.

    Returns:
        The human's decision (approve, edit, reject or respond).

    Example:
        ```python
        decision = request_review(review_payload(
            kind="tool", action="refund", args={"amount": 30},
            description="Refund 30 EUR", allowed=["approve", "reject"],
            context={"worker": "billing"}))
        decision.type
        # 'approve'
        ```
    """
    current = cast(ReviewRequest, storable_value(payload))
    answered = 0  # the answers this task consumed: the escalations so far
    while True:
        allowed = current["review_configs"][0]["allowed_decisions"]
        schema = response_schema(allowed)
        try:
            # LangGraph validates the resume value against `schema`; an invalid one
            # raises here, marked `is_invalid_resume`.
            parsed = interrupt(current, response_schema=schema)
        except ValidationError as exc:
            if not is_invalid_resume(exc):
                raise
            _pause_again(current, schema, answered, exc)
        answered += 1
        decision = cast(ReviewDecision, getattr(parsed, "decisions")[0])  # noqa: B009
        if not isinstance(decision, EscalateDecision):
            return decision
        context: ReviewContext = {**current["context"]}
        # Derived from the review itself, not the clock, so a re-run of the node (every
        # resume replays it) rebuilds the same payload.
        previous = context.get("deadline")
        history: list[Escalation] = [
            *context.get("escalations", []),
            {
                "from": context.get("reviewers"),
                "to": decision.to,
                "reason": decision.reason,
                "previous_deadline": previous,
            },
        ]
        context["reviewers"], context["escalations"] = decision.to, history
        if escalation_timeout is not None:
            context["deadline"] = deadline_after(escalation_timeout, now=previous)
        current = cast(ReviewRequest, storable_value({**current, "context": context}))


def _pause_again(
    current: ReviewRequest, schema: type[BaseModel], answered: int, exc: ValidationError
) -> NoReturn:
    """Post the pending review `current` again after the invalid answer `exc`.

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
        f"{ns}{_NS_SEP}{answered}" if answered else ns,
        # As `interrupt()` surfaces it, so a client's form is the same as before.
        response_schema=TypeAdapter(schema).json_schema(),
    )
    request = current["action_requests"][0]
    _log.warning(
        "refused an invalid answer to the %s review of %r (thread %r, path %s, interrupt "
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
    """A one-line summary of why a review's answer was refused (never the answer itself).

    At most three errors (`location: message`), then how many more, cut to 240 characters.

    Example:
        >>> from pydantic import ValidationError
        >>> try:
        ...     response_schema(["approve"]).model_validate({"decisions": []})
        ... except ValidationError as exc:
        ...     print(invalid_answer_summary(exc))
        decisions: List should have at least 1 item after validation, not 0
    """
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    parts = []
    for error in errors[:3]:
        where = ".".join(truncate(str(p), 40) for p in error["loc"])
        parts.append(f"{where}: {error['msg']}" if where else error["msg"])
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return storable(one_line("; ".join(parts) + more, _INVALID_ANSWER_CHARS))

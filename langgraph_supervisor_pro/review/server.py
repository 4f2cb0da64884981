"""Who may answer a review over the LangGraph server's API: a ready custom-auth object.

`server_auth(authenticate=...)` returns a `langgraph_sdk.Auth` for `langgraph.json`
(`"auth": {"path": "./auth.py:auth"}`). Your `authenticate` function says who sends
each request; the object then guards every run created on a thread (`runs.create`,
`runs.wait`, `runs.stream`: LangGraph's `threads.create_run` action) that answers a
review, that is, whose command has `resume`:

- Each review answer in it (`{"decisions": [...]}`, bare or keyed by interrupt id) is
  stamped with the authenticated user (`reviewer`) and the server's time
  (`answered_at`), so the gate records who answered and when; an answer naming another
  reviewer is refused (HTTP 403), and so is a user whose identity is empty or starts
  with `lgsp:` (reserved for the package's own reviewers, e.g. the sweep).
- With a policy that restricts who may answer (`ReviewPolicy.members`, `may_answer`),
  the thread's pending reviews are read (in-process, with `langgraph_sdk.get_client()`)
  and an answer by someone the policy refuses is refused (HTTP 403, with the policy's
  reason): no run is created and the thread stays interrupted on the same review. The
  graph's own gates apply their policy again when the run resumes.
- A command that also carries `update` or `goto` on a thread paused on a review is
  refused (HTTP 403): a paused run moves on by answering its review.

Other requests pass (add handlers of your own to the returned object for them).

Example:
    `auth.py`, next to `langgraph.json`:

    ```python
    from langgraph_sdk import Auth
    from langgraph_supervisor_pro.review import ReviewPolicy, server_auth

    TOKENS = {"token-a": "alice", "token-c": "carol"}

    async def authenticate(authorization: str | None) -> str:
        user = TOKENS.get((authorization or "").removeprefix("Bearer "))
        if user is None:
            raise Auth.exceptions.HTTPException(status_code=401, detail="Unknown token")
        return user

    auth = server_auth(authenticate=authenticate, policy=ReviewPolicy(
        reviewers="support", members={"support": ["alice"]}))
    ```
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, NoReturn

from langgraph_sdk import Auth

from langgraph_supervisor_pro._internal.text import one_line
from langgraph_supervisor_pro.review.desk import PendingReview, is_review_payload
from langgraph_supervisor_pro.review.policy import _RESERVED_PREFIX, ReviewPolicy

__all__ = ["server_auth"]

_log = logging.getLogger("langgraph_supervisor_pro.review")

# LangGraph reads a resume value as "by interrupt id" when every key is an interrupt id
# (an xxh3-128 hex digest).
_INTERRUPT_ID = re.compile(r"[0-9a-f]{32}")
_DETAIL_CHARS = 400


def server_auth(
    *,
    authenticate: Callable[..., Awaitable[Any]],
    policy: ReviewPolicy | None = None,
) -> Auth:
    """A LangGraph server auth object that applies the review policy to answers.

    Args:
        authenticate: Your authentication handler, as `Auth.authenticate` takes it: an
            async function whose parameters LangGraph fills by name (`authorization`,
            `headers`, `request`, ...) and which returns the user (an identity string,
            a dict with `identity`, or a user object) or raises
            `Auth.exceptions.HTTPException`.
        policy: The review policy whose rule on who may answer (`members`,
            `may_answer`) is applied before a run is created (default:
            `ReviewPolicy.from_env()`, the deployment's policy file). Pass the policy your
            graph's gates use.

    Returns:
        The `Auth` object to name in `langgraph.json` (`"auth": {"path":
        "./auth.py:auth"}`).

    Example:
        ```python
        auth = server_auth(authenticate=authenticate,
                           policy=ReviewPolicy(reviewers="support",
                                               members={"support": ["alice", "bob"]}))
        ```
    """
    rule = policy if policy is not None else ReviewPolicy.from_env()
    auth = Auth()
    auth.authenticate(authenticate)

    async def answer_reviews(ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate) -> None:
        """Stamp each review answer with its reviewer; refuse those the policy refuses."""
        await _guard_run(ctx, value, rule)

    auth.on.threads.create_run(answer_reviews)
    return auth


def _forbidden(detail: str) -> NoReturn:
    raise Auth.exceptions.HTTPException(
        status_code=403, detail=one_line(f"server_auth: {detail}", _DETAIL_CHARS)
    )


def _identity(ctx: Auth.types.AuthContext) -> str:
    try:
        identity = ctx.user.identity
    except (AttributeError, NotImplementedError):
        identity = ""
    who = identity.strip() if isinstance(identity, str) else ""
    if not who:
        _forbidden("the request's user has no identity, so its answer cannot be recorded")
    if who.startswith(_RESERVED_PREFIX):
        _forbidden(f"the identity {who!r} is reserved for the package's own reviewers")
    return who


def _keyed(resume: Mapping[str, Any]) -> bool:
    """Whether LangGraph reads `resume` as answers by interrupt id."""
    return bool(resume) and all(isinstance(k, str) and _INTERRUPT_ID.fullmatch(k) for k in resume)


def _answers(resume: object) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """The review answers a resume value holds: (interrupt id or None, answer)."""
    if isinstance(resume, dict) and _keyed(resume):
        for interrupt_id, answer in resume.items():
            if isinstance(answer, dict) and "decisions" in answer:
                yield interrupt_id, answer
    elif isinstance(resume, dict) and "decisions" in resume:
        yield None, resume


def _stamp(answer: dict[str, Any], who: str, at: str) -> None:
    named = answer.get("reviewer")
    if named is not None and (not isinstance(named, str) or named.strip() != who):
        _forbidden(f"the answer names the reviewer {named!r}, but you are {who!r}")
    answer["reviewer"] = who
    answer["answered_at"] = at


async def _pending_reviews(thread_id: str) -> list[PendingReview]:
    """The reviews the thread is paused on, read through the server itself."""
    from langgraph_sdk import get_client  # in-process: only inside a LangGraph server

    try:
        async with get_client() as client:
            thread = await client.threads.get(thread_id)
    except Exception as exc:
        _log.warning("server_auth: cannot read thread %s: %s", thread_id, exc)
        raise Auth.exceptions.HTTPException(
            status_code=503,
            detail=one_line(
                f"server_auth: cannot read the pending reviews of thread {thread_id} "
                f"({type(exc).__name__}: {exc}); try again",
                _DETAIL_CHARS,
            ),
        ) from None
    groups = thread.get("interrupts") or {}
    return [
        PendingReview.from_payload(item["value"], thread_id=thread_id, interrupt_id=item["id"])
        for items in groups.values()
        for item in items or ()
        if isinstance(item, Mapping) and is_review_payload(item.get("value"))
    ]


async def _guard_run(
    ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate, policy: ReviewPolicy
) -> None:
    kwargs = value.get("kwargs") or {}
    command = kwargs.get("command")
    if not isinstance(command, dict):
        return
    answers = list(_answers(command.get("resume")))
    moves = bool(command.get("update")) or bool(command.get("goto"))
    thread = value.get("thread_id")
    if not answers and not moves:
        return
    who = _identity(ctx) if answers else ""
    at = datetime.now(UTC).isoformat()
    for _, answer in answers:
        _stamp(answer, who, at)
    if thread is None or not (moves or policy.restricts_reviewers):
        return
    pending = await _pending_reviews(str(thread))
    if moves and pending:
        _forbidden(
            f"thread {thread} is paused on a review; a command that also updates its state or "
            "routes it (update, goto) is refused: answer the review"
        )
    if not policy.restricts_reviewers:
        return
    for interrupt_id, answer in answers:
        targets = [r for r in pending if interrupt_id is None or r.interrupt_id == interrupt_id]
        decisions = answer.get("decisions")
        decision = decisions[0] if isinstance(decisions, list) and decisions else None
        for review in targets:
            refusal = policy.reviewer_refusal(who, review, decision=decision)
            if refusal is not None:
                _log.warning("server_auth refused an answer on thread %s: %s", thread, refusal)
                _forbidden(refusal)

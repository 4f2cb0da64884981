"""Who may answer a review over the LangGraph server's API: a ready custom-auth object.

`server_auth` stamps each review answer with the authenticated user, applies the policy's
rule on who may answer and its tier, and refuses anything that would walk around a paused
review. Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/server/
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, NoReturn

from langgraph_sdk import Auth

from langgraph_supervisor_pro._internal.text import cut_id, one_line, shown_id
from langgraph_supervisor_pro.review._payload import PendingReview, is_review_payload
from langgraph_supervisor_pro.review._policy import (
    _RESERVED_PREFIX,
    AUTONOMY_CONFIG_KEY,
    ReviewPolicy,
)

_log = logging.getLogger("langgraph_supervisor_pro.review")

# LangGraph reads a resume value as "by interrupt id" when every key is an interrupt id
# (an xxh3-128 hex digest).
_INTERRUPT_ID = re.compile(r"[0-9a-f]{32}")
_DETAIL_CHARS = 600


def server_auth(
    *,
    authenticate: Callable[..., Awaitable[Any]],
    policy: ReviewPolicy | None = None,
) -> Auth:
    """A LangGraph server auth object that applies the review policy to answers.

    Each review answer is stamped with the authenticated user (`reviewer`) and the
    server's time (`answered_at`); one naming someone else, or by someone the policy
    refuses, gets HTTP 403, and so does a run, assistant or cron asking for a looser tier
    (unless `allow_run_override`). On a thread paused on a review only an answer passes.
    The object holds the handlers for `threads.create_run`, `threads.update`,
    `assistants.create/update` and `crons.create/update`.

    Args:
        authenticate: Your authentication handler, as `Auth.authenticate` takes it: an
            async function whose parameters LangGraph fills by name (`authorization`,
            `headers`, ...) returning the user, or raising `Auth.exceptions.HTTPException`.
        policy: The review policy whose rule on who may answer and whose tier are
            applied (default: `ReviewPolicy()`; no environment variable is read). Pass the
            one your graph's gates use, e.g. `ReviewPolicy.from_env()`.

    Returns:
        The `Auth` object to name in `langgraph.json` (`"auth": {"path": "./auth.py:auth"}`).

    Example:
        ```python
        auth = server_auth(authenticate=authenticate, policy=ReviewPolicy.from_env())
        ```
    """
    rule = policy if policy is not None else ReviewPolicy()
    auth = Auth()
    auth.authenticate(authenticate)

    async def answer_reviews(ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate) -> None:
        """Refuse a looser tier; stamp and check each review answer."""
        await _guard_run(ctx, value, rule)

    async def assistant_tier(
        ctx: Auth.types.AuthContext,
        value: Auth.types.AssistantsCreate | Auth.types.AssistantsUpdate,
    ) -> None:
        """Refuse an assistant whose config or context asks for a looser tier."""
        _refuse_looser_tier(rule, "the assistant", value.get("config"), value.get("context"))

    async def cron_tier(
        ctx: Auth.types.AuthContext, value: Auth.types.CronsCreate | Auth.types.CronsUpdate
    ) -> None:
        """Refuse a cron whose runs' config or context asks for a looser tier."""
        payload = value.get("payload") or {}
        _refuse_looser_tier(rule, "the cron", payload.get("config"), payload.get("context"))

    async def thread_update(ctx: Auth.types.AuthContext, value: Auth.types.ThreadsUpdate) -> None:
        """Refuse a state update of a thread paused on a review."""
        await _guard_thread_update(value)

    auth.on.threads.create_run(answer_reviews)
    auth.on.threads.update(thread_update)
    auth.on.assistants.create(assistant_tier)
    auth.on.assistants.update(assistant_tier)
    auth.on.crons.create(cron_tier)
    auth.on.crons.update(cron_tier)
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


ThreadReader = Callable[[str, bool], Awaitable["Mapping[str, Any] | None"]]
"""Reads a thread: `interrupts` (a list) and, when asked, `status`; None when absent."""


async def _read_thread(thread_id: str, with_status: bool = False) -> Mapping[str, Any] | None:
    """The thread's pending interrupts (and status), read through the server itself.

    An auth handler gets only the thread's id: `get_client()` without a URL calls the
    server in-process, past the auth handlers. From the latest checkpoint, not the
    thread record, whose `interrupts` a `threads.copy` does not carry. None when the
    thread does not exist; a failed read is a 503 (fail closed).
    """
    from langgraph_sdk import get_client  # in-process: only inside a LangGraph server

    try:
        async with get_client() as client:
            state = await client.threads.get_state(thread_id)
            read: dict[str, Any] = {"interrupts": state.get("interrupts") or []}
            if with_status:
                read["status"] = (await client.threads.get(thread_id)).get("status")
            return read
    except Exception as exc:
        if getattr(getattr(exc, "response", None), "status_code", None) == 404:
            return None
        _log.warning("server_auth: cannot read thread %s: %s", shown_id(thread_id), exc)
        raise Auth.exceptions.HTTPException(
            status_code=503,
            detail=one_line(
                f"server_auth: cannot read the pending reviews of thread {cut_id(thread_id)} "
                f"({type(exc).__name__}: {exc}); try again",
                _DETAIL_CHARS,
            ),
        ) from None


def _reviews_of(thread: Mapping[str, Any] | None, thread_id: str) -> list[PendingReview]:
    """The reviews a thread is paused on (its checkpoint's interrupts, at any depth)."""
    items = (thread or {}).get("interrupts") or []
    if not isinstance(items, list):
        return []
    return [
        PendingReview.from_payload(item["value"], thread_id=thread_id, interrupt_id=item["id"])
        for item in items
        if isinstance(item, Mapping) and is_review_payload(item.get("value"))
    ]


def _how_to_answer(thread_id: str, pending: list[PendingReview]) -> str:
    """How to answer the reviews a thread is paused on (for a refusal's detail)."""
    ids = ", ".join(r.interrupt_id for r in pending[:3]) + (", ..." if len(pending) > 3 else "")
    groups = sorted({r.reviewers for r in pending if r.reviewers})
    who = f"a member of {', '.join(repr(g) for g in groups)}" if groups else "a reviewer"
    return (
        f"thread {cut_id(thread_id)} is paused on review {ids}; answer it first: {who} sends "
        "runs.create(thread_id, assistant_id, command={'resume': {interrupt_id: "
        "{'decisions': [{'type': 'approve'}]}}}) (or 'reject', 'edit')"
    )


def _forks(kwargs: Mapping[str, Any]) -> bool:
    """Whether a run starts from a given checkpoint (`checkpoint_id` / `checkpoint`)."""
    config = kwargs.get("config")
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    return isinstance(configurable, Mapping) and bool(configurable.get("checkpoint_id"))


def _refuse_looser_tier(policy: ReviewPolicy, what: str, config: object, context: object) -> None:
    """Refuse (HTTP 403) a config or context asking for a tier the policy does not allow."""
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    for field, holder in (
        (f"config.configurable.{AUTONOMY_CONFIG_KEY}", configurable),
        (f"context.{AUTONOMY_CONFIG_KEY}", context),
    ):
        if not isinstance(holder, Mapping):
            continue
        value = holder.get(AUTONOMY_CONFIG_KEY)
        try:
            asked = policy.requested_tier({"configurable": {AUTONOMY_CONFIG_KEY: value}})
            refusal = None if asked is None else policy.tier_refusal(asked, field=field)
        except ValueError as exc:
            refusal = str(exc).replace(f"configurable.{AUTONOMY_CONFIG_KEY}", field, 1)
        if refusal is not None:
            _log.warning("server_auth refused %s: %s", what, refusal)
            _forbidden(f"{what} is refused: {refusal}")


async def _guard_run(
    ctx: Auth.types.AuthContext,
    value: Auth.types.RunsCreate,
    policy: ReviewPolicy,
    read: ThreadReader = _read_thread,
) -> None:
    """Refuse a looser tier; stamp and check each answer; guard a thread paused on a review.

    On a paused thread only an answer passes: new input or a command without `resume`
    would discard the review, `update`/`goto` or a fork would skip it. A run queued
    behind a running one could start on the review that run pauses on.
    """
    kwargs = value.get("kwargs") or {}
    _refuse_looser_tier(policy, "the run", kwargs.get("config"), kwargs.get("context"))
    command = kwargs.get("command")
    command = command if isinstance(command, dict) else {}
    resumes = command.get("resume") is not None
    answers = list(_answers(command.get("resume")))
    moves = bool(command.get("update")) or bool(command.get("goto"))
    forks = _forks(kwargs)
    thread = value.get("thread_id")
    who = ""
    if answers:
        who = _identity(ctx)
        at = datetime.now(UTC).isoformat()
        for _, answer in answers:
            _stamp(answer, who, at)
    if thread is None:
        return  # a stateless run: a new thread, nothing paused on it
    if answers and forks:
        _forbidden(
            f"a review answer on thread {cut_id(thread)} from a given checkpoint (checkpoint_id) "
            "is refused: answer the review the thread is paused on now, without a checkpoint"
        )
    enqueues = not resumes and value.get("multitask_strategy") == "enqueue"
    state = await read(str(thread), enqueues)
    pending = _reviews_of(state, str(thread))
    if not pending:
        if enqueues and (state or {}).get("status") == "busy":
            _forbidden(
                f"thread {cut_id(thread)} is running; a run queued behind it (multitask_strategy "
                "'enqueue') could start on a review the running run pauses on and discard it: "
                "wait until the thread is idle or paused, then send the input or the answer"
            )
        return
    if forks:
        _forbidden(f"a fork (checkpoint_id) is refused: {_how_to_answer(str(thread), pending)}")
    if not resumes:
        _forbidden(
            f"new input would discard the pending review: {_how_to_answer(str(thread), pending)}"
        )
    if moves:
        _forbidden(
            f"thread {cut_id(thread)} is paused on a review; a command that also updates its state "
            "or routes it (update, goto) is refused: answer the review"
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
                _log.warning(
                    "server_auth refused an answer on thread %s: %s", shown_id(thread), refusal
                )
                _forbidden(refusal)


async def _guard_thread_update(
    value: Auth.types.ThreadsUpdate, read: ThreadReader = _read_thread
) -> None:
    """Refuse a state update (`threads.update_state`, `bulk_update_state`) on a paused thread.

    The server sends a state update here with the thread's id alone (no values, no
    `as_node`), so whether it would move past the review cannot be told: on a paused
    thread every state update is refused, for everyone. A metadata patch and a run's
    cancellation (`action`) carry more fields and pass.
    """
    if "metadata" in value or value.get("action") is not None:
        return
    thread = value.get("thread_id")
    if thread is None:
        return
    pending = _reviews_of(await read(str(thread), False), str(thread))
    if pending:
        _log.warning("server_auth refused a state update of thread %s", shown_id(thread))
        _forbidden(
            "a state update would discard or skip the pending review (the server shows an "
            "auth handler neither its values nor as_node, so none passes): "
            + _how_to_answer(str(thread), pending)
        )

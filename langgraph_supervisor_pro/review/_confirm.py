"""Confirmation: the supervised tier's check of a medium-risk action before it runs.

`ReviewPolicy.confirm` is a (sync or async) function of a `ConfirmRequest` or a chat model;
anything but a clear yes denies (fail closed), and the action then goes to a human.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.constants import TAG_NOSTREAM
from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from langgraph_supervisor_pro._internal.text import one_line, truncate
from langgraph_supervisor_pro._internal.twins import Invoke, MaybeAwait, Steps, adrive, drive
from langgraph_supervisor_pro._internal.validation import validation_summary
from langgraph_supervisor_pro.review._policy import ConfirmRequest, ReviewPolicy

CONFIRM_PROMPT = """\
You check one action that an agent in a supervisor/worker team wants to take, before \
it runs. Approve it only if it is clearly what the task asks for, its arguments match \
the task, and it does nothing beyond it (no other accounts, amounts, recipients or side \
effects than the task implies). If anything is unclear, missing or surprising, do not \
approve it: a human will look at it instead. Give approve (true or false) and a \
one-sentence reason."""
"""The system prompt a confirmation model receives."""

_NO_CONFIRM_POLICY = "no confirmation policy configured"
_REASON_MAX_CHARS = 300
_ARGS_MAX_CHARS = 4000


class ConfirmVerdict(BaseModel):
    """Decide whether the proposed action may run without a human's review."""

    model_config = ConfigDict(frozen=True, title="ConfirmVerdict")

    approve: bool = Field(
        description="True to let the action run now; false if a human should look at it."
    )
    reason: str = Field(description="One sentence: why.")


def _failed(who: str, exc: BaseException) -> tuple[bool, str]:
    text = one_line(str(exc), _REASON_MAX_CHARS)
    detail = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return False, f"{who} failed ({detail}); denied (fail closed)"


def _check_verdict(who: str, result: object) -> tuple[bool, str]:
    if result is True:
        return True, f"approved by the {who}"
    if result is False:
        return False, f"denied by the {who}"
    return False, (
        f"the {who} returned {truncate(repr(result), 80)}, not True or False; denied (fail closed)"
    )


def _model_call(
    model: BaseChatModel, request: ConfirmRequest, config: RunnableConfig | None
) -> tuple[Runnable[Any, Any], list[BaseMessage], RunnableConfig]:
    structured = model.with_structured_output(ConfirmVerdict)
    args = truncate(
        json.dumps(dict(request.args), ensure_ascii=False, default=str, sort_keys=True),
        _ARGS_MAX_CHARS,
    )
    prompt = (
        f"Task: {request.task.strip() or '(none given)'}\n"
        f"Worker: {request.worker}\n"
        f"Tool: {request.tool} (risk: {request.risk})\n"
        f"Arguments: {args}"
    )
    own: RunnableConfig = {
        "run_name": "confirm_action",
        "tags": [TAG_NOSTREAM],
        "metadata": {"lgsp_source": "confirmation", "lgsp_tool": request.tool},
    }
    messages: list[BaseMessage] = [SystemMessage(CONFIRM_PROMPT), HumanMessage(prompt)]
    return structured, messages, merge_configs(config, own)


def _model_verdict(raw: object) -> tuple[bool, str]:
    if raw is None:
        return False, "the confirmation model gave no verdict; denied (fail closed)"
    try:
        data = raw.model_dump() if isinstance(raw, BaseModel) else raw
        verdict = ConfirmVerdict.model_validate(data)
    except ValidationError as exc:
        why = validation_summary(exc, empty="verdict", max_errors=1)
        return False, f"the confirmation model's verdict is invalid ({why}); denied (fail closed)"
    reason = one_line(verdict.reason, _REASON_MAX_CHARS)
    if verdict.approve:
        return True, f"approved by the confirmation model: {reason or '(no reason given)'}"
    return False, f"denied by the confirmation model: {reason or '(no reason given)'}"


def _confirming(
    policy: ReviewPolicy, request: ConfirmRequest, config: RunnableConfig | None
) -> Steps[tuple[bool, str]]:
    """`confirm_action` for both drivers.

    A failed check or model call denies, except a LangGraph interrupt, which propagates.
    """
    check = policy.confirm
    if check is None:
        return False, _NO_CONFIRM_POLICY
    if isinstance(check, BaseChatModel):
        try:
            structured, messages, call_config = _model_call(check, request, config)
            raw = yield Invoke(structured, messages, call_config)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return _failed("the confirmation model", exc)
        return _model_verdict(raw)
    name = getattr(check, "__qualname__", None) or type(check).__name__
    who = f"confirmation check {name!r}"
    try:
        result: object = yield MaybeAwait(lambda: check(request))
    except GraphBubbleUp:
        raise
    except Exception as exc:
        return _failed(f"the {who}", exc)
    return _check_verdict(who, result)


def confirm_action(
    policy: ReviewPolicy,
    request: ConfirmRequest,
    *,
    config: RunnableConfig | None = None,
) -> tuple[bool, str]:
    """Ask the policy's confirmation check whether a (medium) action may run.

    A callable approves only by returning `True` (an awaitable result is awaited); a chat
    model is asked through `with_structured_output(ConfirmVerdict)` with
    `CONFIRM_PROMPT`. Anything else (an exception, a non-bool, an invalid or missing
    verdict, no check configured) denies (fail closed); LangGraph interrupts propagate.

    `config` is the run's, for the model call's tracing (a run named `confirm_action`,
    not streamed). Returns `(approved, reason)`.

    Example:
        >>> from langgraph_supervisor_pro.review._policy import ReviewPolicy
        >>> policy = ReviewPolicy(confirm=lambda r: float(r.args["amount"]) <= 50)
        >>> request = ConfirmRequest(tool="refund", args={"amount": 30}, risk="medium",
        ...                          worker="billing", task="Refund ORDER-7")
        >>> confirm_action(policy, request)
        (True, "approved by the confirmation check '<lambda>'")
        >>> confirm_action(ReviewPolicy(), request)
        (False, 'no confirmation policy configured')
    """
    return drive(_confirming(policy, request, config))


async def aconfirm_action(
    policy: ReviewPolicy,
    request: ConfirmRequest,
    *,
    config: RunnableConfig | None = None,
) -> tuple[bool, str]:
    """Async twin of `confirm_action`: the model is called with `ainvoke`.

    Example:
        ```python
        approved, reason = await aconfirm_action(policy, request, config=config)
        ```
    """
    return await adrive(_confirming(policy, request, config))

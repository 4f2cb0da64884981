"""Least privilege and review gates on every tool call a worker's agent makes.

`ToolGuard` is a LangChain agent middleware (`create_agent(middleware=[...])`). For
each tool call it:

1. refuses a tool outside the worker's allowlist (another worker's tool, a name a
   worker's output tricked the model into calling, a tool that does not exist):
   the agent gets an error tool message, the call is never executed, and the
   refusal is recorded (in the tool message, which the worker node copies to the
   ledger and the `security` log, and on the `langgraph_supervisor_pro.security`
   logger);
2. looks up the tool's risk (policy file > worker mapping > `@risk` > `high`) and
   the autonomy tier in force (per run > environment > policy), and runs it,
   asks the confirmation policy (supervised tier, medium risk), or pauses for a
   human review (`request_review`) and applies the decision: approve, edit
   (changed arguments), reject (the message goes back to the worker) or respond.

`Worker(model=..., tools=[...])` gets a guarded agent built for it; add
`ToolGuard(...)` yourself when you build your own `create_agent`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from langgraph_supervisor_pro._internal.text import one_line
from langgraph_supervisor_pro.review.confirm import ConfirmRequest, aconfirm_action, confirm_action
from langgraph_supervisor_pro.review.gate import (
    ALL_DECISIONS,
    EditDecision,
    RejectDecision,
    RespondDecision,
    deadline_after,
    request_review,
    review_payload,
)
from langgraph_supervisor_pro.review.policy import ReviewPolicy
from langgraph_supervisor_pro.review.risk import Risk, declared_always_review, declared_risk

__all__ = ["SECURITY_LOGGER", "ToolGuard"]

SECURITY_LOGGER = "langgraph_supervisor_pro.security"
"""The logger refusals are written to (level WARNING)."""

_log = logging.getLogger(SECURITY_LOGGER)

ToolResult = ToolMessage | Command[Any]


@dataclass(frozen=True)
class _Run:
    request: ToolCallRequest
    note: dict[str, Any] | None = None


@dataclass(frozen=True)
class _Done:
    message: ToolMessage


@dataclass(frozen=True)
class _Confirm:
    request: ToolCallRequest
    confirm: ConfirmRequest
    risk: Risk
    tier: str


@dataclass(frozen=True)
class _Review:
    request: ToolCallRequest
    risk: Risk
    tier: str
    reason: str


class ToolGuard(AgentMiddleware):
    """Enforces a worker's tool allowlist, risk levels and review gates.

    Example:
        ```python
        from langchain.agents import create_agent
        guard = ToolGuard(worker="billing", tools=[lookup, refund],
                          risks={"lookup": "low", "refund": "high"})
        agent = create_agent(model, tools=[lookup, refund], middleware=[guard])
        ```
    """

    def __init__(
        self,
        *,
        worker: str,
        tools: Sequence[BaseTool | Callable[..., Any] | str],
        risks: Mapping[str, Risk] | None = None,
        policy: ReviewPolicy | None = None,
    ) -> None:
        """Guard the tool calls of `worker`.

        Args:
            worker: The worker's name (recorded with every refusal and review).
            tools: The allowlist: tools, functions or tool names.
            risks: Per-worker risk levels by tool name (a policy file's mapping wins).
            policy: Tiers, confirmation, deadlines (default: `ReviewPolicy.from_env()`).
        """
        super().__init__()
        self.worker = worker
        self.policy = policy if policy is not None else ReviewPolicy.from_env()
        mapping = dict(risks or {})
        self.allowed: dict[str, Risk | None] = {}
        self.always: set[str] = set()
        for tool in tools:
            name = tool if isinstance(tool, str) else _tool_name(tool)
            self.allowed[name] = declared_risk(tool, mapping=mapping)
            if declared_always_review(tool):
                self.always.add(name)

    @property
    def name(self) -> str:
        """The middleware's name (one per worker)."""
        return f"ToolGuard[{self.worker}]"

    # -- deciding ------------------------------------------------------------------------

    def _plan(self, request: ToolCallRequest) -> _Run | _Done | _Confirm | _Review:
        call = request.tool_call
        name = call["name"]
        if name not in self.allowed:
            return _Done(self._refusal(request))
        config = _config_of(request)
        # The tier the worker node passed down (the run's recorded tier) unless the
        # config names one: a resume without the original config keeps the run's tier.
        tier = self.policy.tier_for(
            config, recorded=config.get("metadata", {}).get("lgsp_autonomy")
        )
        config = {**config, "configurable": {**config.get("configurable", {}), "autonomy": tier}}
        risk = self.policy.risk_of(name, self.allowed[name])
        always = name in self.always
        action = self.policy.action(name, self.allowed[name], config, always_review=always)
        if action == "run":
            return _Run(request, {"risk": risk, "tier": tier, "decision": "auto"})
        if action == "confirm":
            metadata = config.get("metadata", {})
            confirm = ConfirmRequest(
                tool=name,
                args=dict(call.get("args", {})),
                risk=risk,
                worker=self.worker,
                task=_task_of(request, metadata),
            )
            return _Confirm(request, confirm, risk, tier)
        reason = (
            "tool marked always-review"
            if always or name in self.policy.always_review
            else f"{risk}-risk tool in the {tier} tier"
        )
        return _Review(request, risk, tier, reason)

    def _refusal(self, request: ToolCallRequest) -> ToolMessage:
        call = request.tool_call
        allowed = ", ".join(sorted(self.allowed)) or "none"
        record = {
            "kind": "out_of_scope",
            "worker": self.worker,
            "tool": call["name"],
            "args": dict(call.get("args", {})),
            "reason": "not in the worker's allowlist",
        }
        _log.warning(
            "refused tool call %r by worker %r: not in its allowlist (%s)",
            call["name"],
            self.worker,
            allowed,
        )
        return ToolMessage(
            content=(
                f"Refused: '{call['name']}' is not one of your tools ({allowed}). "
                "The call was not executed."
            ),
            tool_call_id=call["id"] or "",
            name=call["name"],
            status="error",
            additional_kwargs={"lgsp_security": record},
        )

    def _payload(self, review: _Review) -> dict[str, Any]:
        call = review.request.tool_call
        config = _config_of(review.request)
        metadata = config.get("metadata", {})
        done = [
            c["name"]
            for m in _messages(review.request)
            for c in getattr(m, "tool_calls", None) or []
        ][:-1]
        summary = (
            f"Hop {metadata.get('lgsp_step', '?')}: "
            f"{one_line(str(metadata.get('lgsp_instructions', '')), 200)}"
        )
        if done:
            summary += f"; tool calls so far this hop: {', '.join(done)}"
        return review_payload(
            kind="tool",
            action=call["name"],
            args=call.get("args", {}),
            description=f"Worker '{self.worker}' wants to call '{call['name']}' "
            f"({review.risk} risk).",
            allowed=ALL_DECISIONS,
            context={
                "task": _task_of(review.request, metadata),
                "worker": self.worker,
                "risk": review.risk,
                "tier": review.tier,
                "reason": review.reason,
                "summary": summary,
                "deadline": deadline_after(
                    self.policy.review_timeout, now=metadata.get("lgsp_dispatched_at")
                ),
                "reviewers": self.policy.reviewers,
                "on_timeout": self.policy.on_timeout,
                "escalate_to": self.policy.escalate_to,
                "step": metadata.get("lgsp_step"),
                "turn": metadata.get("lgsp_turn"),
                "thread_id": config.get("configurable", {}).get("thread_id"),
            },
        )

    def _reviewed(self, review: _Review) -> _Run | _Done:
        decision = request_review(
            self._payload(review), escalation_timeout=self.policy.review_timeout
        )
        call = review.request.tool_call
        note = {"risk": review.risk, "tier": review.tier, "decision": decision.type}
        if isinstance(decision, EditDecision):
            edited = cast(ToolCall, {**call, "args": dict(decision.edited_action.args)})
            if decision.edited_action.name != call["name"]:
                return _Done(
                    self._message(
                        call,
                        "The reviewer changed the tool, which is not "
                        "allowed; the call was not executed.",
                        "error",
                        note,
                    )
                )
            return _Run(
                review.request.override(tool_call=edited), {**note, "edited_args": edited["args"]}
            )
        if isinstance(decision, RejectDecision):
            text = (
                f"The reviewer rejected this call: {decision.message}"
                if decision.message
                else "The reviewer rejected this call; do not retry it unless asked."
            )
            return _Done(self._message(call, text, "error", note))
        if isinstance(decision, RespondDecision):
            return _Done(self._message(call, decision.message, "success", note))
        return _Run(review.request, note)

    def _message(self, call: Any, text: str, status: str, note: dict[str, Any]) -> ToolMessage:
        return ToolMessage(
            content=text,
            tool_call_id=call["id"] or "",
            name=call["name"],
            status=status,
            additional_kwargs={"lgsp_review": note},
        )

    def _unconfirmed(self, confirm: _Confirm, ok: bool, reason: str) -> _Run | _Review:
        if ok:
            return _Run(
                confirm.request,
                {
                    "risk": confirm.risk,
                    "tier": confirm.tier,
                    "decision": "confirmed",
                    "reason": reason,
                },
            )
        return _Review(
            confirm.request,
            confirm.risk,
            confirm.tier,
            f"the confirmation policy did not approve it: {reason}",
        )

    # -- running -------------------------------------------------------------------------

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        """Check, confirm or review the call, then run it (or not)."""
        plan = self._plan(request)
        if isinstance(plan, _Confirm):
            verdict = confirm_action(self.policy, plan.confirm, config=_config_of(request))
            plan = self._unconfirmed(plan, *verdict)
        if isinstance(plan, _Review):
            plan = self._reviewed(plan)
        if isinstance(plan, _Done):
            return plan.message
        return _noted(handler(plan.request), plan.note)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """Async twin of `wrap_tool_call`."""
        plan = self._plan(request)
        if isinstance(plan, _Confirm):
            verdict = await aconfirm_action(self.policy, plan.confirm, config=_config_of(request))
            plan = self._unconfirmed(plan, *verdict)
        if isinstance(plan, _Review):
            plan = self._reviewed(plan)
        if isinstance(plan, _Done):
            return plan.message
        return _noted(await handler(plan.request), plan.note)


def _noted(result: ToolResult, note: dict[str, Any] | None) -> ToolResult:
    if note is None or not isinstance(result, ToolMessage):
        return result
    return result.model_copy(
        update={"additional_kwargs": {**result.additional_kwargs, "lgsp_review": note}}
    )


def _tool_name(tool: BaseTool | Callable[..., Any]) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    return str(getattr(tool, "__name__", repr(tool)))


def _config_of(request: ToolCallRequest) -> RunnableConfig:
    runtime_config = getattr(request.runtime, "config", None)
    if runtime_config:
        return runtime_config  # type: ignore[no-any-return]
    try:
        return get_config()
    except RuntimeError:
        return {}


def _messages(request: ToolCallRequest) -> list[Any]:
    state = request.state
    if isinstance(state, Mapping):
        return list(state.get("messages", []))
    return list(getattr(state, "messages", []) or [])


def _task_of(request: ToolCallRequest, metadata: Mapping[str, Any]) -> str:
    for message in _messages(request):
        content = getattr(message, "content", "")
        if getattr(message, "type", "") == "human" and str(content).startswith("Task: "):
            return one_line(str(content).split("\n\n", 1)[0][len("Task: ") :], 300)
    return str(metadata.get("lgsp_task", ""))

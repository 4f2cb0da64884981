"""Least privilege and review gates on every tool call a worker's agent makes.

`ToolGuard` (a LangChain agent middleware) refuses a tool outside the worker's allowlist
(never executed, recorded on the `langgraph_supervisor_pro.security` logger), then runs,
confirms or reviews each call by its risk and the tier in force.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/reviews/
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware
from langchain_core.callbacks import adispatch_custom_event, dispatch_custom_event
from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from langgraph_supervisor_pro._internal.hop import HopContext, first_human_text, hop_context
from langgraph_supervisor_pro._internal.scrub import RunSecrets, scrubbed_error
from langgraph_supervisor_pro._internal.storable import storable, storable_value
from langgraph_supervisor_pro._internal.text import one_line
from langgraph_supervisor_pro._internal.tools import tool_name
from langgraph_supervisor_pro._internal.twins import Call, Steps, adrive, drive
from langgraph_supervisor_pro.review._confirm import _confirming
from langgraph_supervisor_pro.review._gate import (
    EditDecision,
    RejectDecision,
    RespondDecision,
    gate_request,
    request_review_answer,
)
from langgraph_supervisor_pro.review._payload import ReviewRequest
from langgraph_supervisor_pro.review._policy import ConfirmRequest, ReviewPolicy, strictest_tier
from langgraph_supervisor_pro.review._risks import Risk, declared_always_review, declared_risk

SECURITY_LOGGER = "langgraph_supervisor_pro.security"
"""The logger refusals are written to (level WARNING)."""

REFUSED_TOOL_EVENT = "lgsp.tool_refused"
"""The custom event a refusal dispatches (`tool`, `tool_call_id`, `reason`, `args`): a
refused call starts no tool run, so this is how `OTelCallbackHandler` gives it a span."""

_log = logging.getLogger(SECURITY_LOGGER)

ToolResult = ToolMessage | Command[Any]


@dataclass(frozen=True)
class _Run:
    request: ToolCallRequest
    note: dict[str, Any] | None = None


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
            policy: Tiers, confirmation, deadlines (default: `ReviewPolicy()`, the
                supervised tier; pass `ReviewPolicy.from_env()` for the deployment's).
        """
        super().__init__()
        self.worker = worker
        self.policy = policy if policy is not None else ReviewPolicy()
        mapping = dict(risks or {})
        self.allowed: dict[str, Risk | None] = {}
        self.always: set[str] = set()
        for tool in tools:
            name = tool_name(tool)
            self.allowed[name] = declared_risk(tool, mapping=mapping)
            if declared_always_review(tool):
                self.always.add(name)

    @property
    def name(self) -> str:
        """The middleware's name (one per worker)."""
        return f"ToolGuard[{self.worker}]"

    # -- deciding ------------------------------------------------------------------------

    def _plan(self, request: ToolCallRequest) -> _Run | ToolMessage | _Confirm | _Review:
        """What to do with the call; a `ToolMessage` is the answer, and the tool does not run."""
        call = request.tool_call
        name = call["name"]
        if name not in self.allowed:
            return self._refusal(request)
        config = _config_of(request)
        hop = hop_context(config)
        if hop is not None and hop.tier:
            # Inside a supervisor graph: the tier the hop runs in (the supervisor settled
            # it, the run's per-run tier included), or a stricter one the config names;
            # never looser (a domain may be stricter than the run, a resume cannot loosen).
            tier = strictest_tier(hop.tier, self.policy.requested_tier(config))
        else:
            # A hand-built agent: the per-run tier, which may only be stricter than the
            # policy's (unless it allows run overrides).
            tier = self.policy.tier_for(config)
        config = {**config, "configurable": {**config.get("configurable", {}), "autonomy": tier}}
        risk = self.policy.risk_of(name, self.allowed[name])
        always = name in self.always
        action = self.policy.action(
            name, self.allowed[name], config, always_review=always, tier=tier
        )
        if action == "run":
            return _Run(request, {"risk": risk, "tier": tier, "decision": "auto"})
        if action == "confirm":
            confirm = ConfirmRequest(
                tool=name,
                args=dict(call.get("args", {})),
                risk=risk,
                worker=self.worker,
                task=_task_of(request, hop),
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
        text = f"Refused: '{call['name']}' is not one of your tools ({allowed}). "
        return self._message(
            call, text + "The call was not executed.", "error", record, "lgsp_security"
        )

    def _payload(self, review: _Review) -> ReviewRequest:
        call = review.request.tool_call
        config = _config_of(review.request)
        hop = hop_context(config)
        done = [
            c["name"]
            for m in _messages(review.request)
            for c in getattr(m, "tool_calls", None) or []
        ][:-1]
        step = hop.step if hop is not None else None
        instructions = hop.instructions if hop is not None else ""
        summary = f"Hop {'?' if step is None else step}"
        if instructions.strip():
            summary += f": {one_line(instructions, 200)}"
        if done:
            summary += f"; tool calls so far this hop: {', '.join(done)}"
        return gate_request(
            kind="tool",
            action=call["name"],
            args=call.get("args", {}),
            description=f"Worker '{self.worker}' wants to call '{call['name']}' "
            f"({review.risk} risk).",
            task=_task_of(review.request, hop),
            worker=self.worker,
            risk=review.risk,
            tier=review.tier,
            reason=review.reason,
            summary=summary,
            dispatched_at=hop.dispatched_at if hop is not None else None,
            step=step,
            turn=hop.turn if hop is not None else None,
            path=hop.path if hop is not None and hop.path else (self.worker,),
            policy=self.policy,
            config=config,
        )

    def _reviewed(self, review: _Review) -> _Run | ToolMessage:
        answer = request_review_answer(
            self._payload(review), escalation_timeout=self.policy.review_timeout, policy=self.policy
        )
        decision = answer.decision
        call = review.request.tool_call
        hop = hop_context(_config_of(review.request))
        note = {
            "risk": review.risk,
            "tier": review.tier,
            "decision": decision.type,
            "answer": answer.entry(
                turn=hop.turn if hop is not None else 1, step=hop.step if hop is not None else None
            ),
        }
        if isinstance(decision, EditDecision):
            edited = cast(ToolCall, {**call, "args": dict(decision.edited_action.args)})
            if decision.edited_action.name != call["name"]:
                changed = "The reviewer changed the tool, which is not allowed"
                return self._message(call, f"{changed}; the call was not executed.", "error", note)
            return _Run(
                review.request.override(tool_call=edited), {**note, "edited_args": edited["args"]}
            )
        if isinstance(decision, RejectDecision):
            text = (
                f"The reviewer rejected this call: {decision.message}"
                if decision.message
                else "The reviewer rejected this call; do not retry it unless asked."
            )
            return self._message(call, text, "error", note)
        if isinstance(decision, RespondDecision):
            return self._message(call, decision.message, "success", note)
        return _Run(review.request, note)

    def _message(
        self, call: Any, text: str, status: str, note: dict[str, Any], key: str = "lgsp_review"
    ) -> ToolMessage:
        return ToolMessage(
            content=storable(text),
            tool_call_id=call["id"] or "",
            name=call["name"],
            status=status,
            additional_kwargs={key: storable_value(note)},
        )

    def _unconfirmed(self, confirm: _Confirm, ok: bool, reason: str) -> _Run | _Review:
        if ok:
            note = {"risk": confirm.risk, "tier": confirm.tier, "decision": "confirmed"}
            return _Run(confirm.request, {**note, "reason": reason})
        return _Review(
            confirm.request,
            confirm.risk,
            confirm.tier,
            f"the confirmation policy did not approve it: {reason}",
        )

    # -- running -------------------------------------------------------------------------

    def _deciding(self, request: ToolCallRequest) -> Steps[_Run | ToolMessage]:
        """Whether (and how) the call runs, for both drivers: plan, confirm, review.

        A refusal also dispatches `REFUSED_TOOL_EVENT`, unless there is no run to tell
        (a guard called directly, outside any run).
        """
        plan = self._plan(request)
        if isinstance(plan, _Confirm):
            verdict = yield from _confirming(self.policy, plan.confirm, _config_of(request))
            plan = self._unconfirmed(plan, *verdict)
        if isinstance(plan, _Review):
            plan = self._reviewed(plan)
        event = _refusal_event(plan) if isinstance(plan, ToolMessage) else None
        if event is not None:
            config = _config_of(request)
            try:
                yield Call(
                    lambda: dispatch_custom_event(REFUSED_TOOL_EVENT, event, config=config),
                    lambda: adispatch_custom_event(REFUSED_TOOL_EVENT, event, config=config),
                )
            except RuntimeError as exc:
                if "without a parent run id" not in str(exc):
                    raise
        return plan

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        """Check, confirm or review the call, then run it (or not)."""
        plan = drive(self._deciding(request))
        if isinstance(plan, ToolMessage):
            return plan
        try:
            result = handler(plan.request)
        except Exception as exc:
            _raise_scrubbed(exc, request)
            raise
        return _noted(result, plan.note)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """Async twin of `wrap_tool_call`."""
        plan = await adrive(self._deciding(request))
        if isinstance(plan, ToolMessage):
            return plan
        try:
            result = await handler(plan.request)
        except Exception as exc:
            _raise_scrubbed(exc, request)
            raise
        return _noted(result, plan.note)


def _refusal_event(message: ToolMessage) -> dict[str, Any] | None:
    """The refusal event's data for a refusal's tool message (None: not a refusal)."""
    record = message.additional_kwargs.get("lgsp_security")
    if not isinstance(record, Mapping):
        return None
    return {
        "tool": record.get("tool"),
        "tool_call_id": message.tool_call_id,
        "worker": record.get("worker"),
        "reason": record.get("reason"),
        "args": record.get("args", {}),
    }


def _raise_scrubbed(exc: Exception, request: ToolCallRequest) -> None:
    """Raise a `ScrubbedError` for a tool's exception whose text holds a secret of the run.

    So the tool node, its saved task error, its traces and the hop never see the secret.
    Returns when there is nothing to scrub, and for a LangGraph interrupt (propagates).
    """
    if isinstance(exc, GraphBubbleUp):
        return
    runtime = getattr(request, "runtime", None)
    secrets = RunSecrets(
        getattr(runtime, "config", None), context=getattr(runtime, "context", None)
    )
    stand_in = scrubbed_error(exc, secrets.values)
    if stand_in is not None:
        raise stand_in from None


def _noted(result: ToolResult, note: dict[str, Any] | None) -> ToolResult:
    if note is None or not isinstance(result, ToolMessage):
        return result
    return result.model_copy(
        update={
            "additional_kwargs": {**result.additional_kwargs, "lgsp_review": storable_value(note)}
        }
    )


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


def _task_of(request: ToolCallRequest, hop: HopContext | None) -> str:
    """The run's task: the hop's, else (an agent used on its own) its first human message."""
    task = hop.task if hop is not None else first_human_text(_messages(request))
    return one_line(task, 300)

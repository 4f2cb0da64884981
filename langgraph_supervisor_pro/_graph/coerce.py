"""Turning whatever a worker's agent returned into a valid `WorkerResult` (private)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.pregel import Pregel
from pydantic import BaseModel, ValidationError

from langgraph_supervisor_pro._contracts import WorkerResult
from langgraph_supervisor_pro._internal.scrub import RunSecrets
from langgraph_supervisor_pro._internal.text import message_text, truncate

ERROR_MAX_CHARS = 500


def coerce_worker_output(
    output: Any,
    *,
    worker: str,
    sent: Sequence[BaseMessage] = (),
    scrub: Callable[[str], str] | None = None,
) -> tuple[WorkerResult, list[BaseMessage]]:
    """Turn whatever a worker returned into a valid `WorkerResult` and its new messages.

    Accepted: a `WorkerResult`, a `str`, messages, an agent state (`messages`, and
    `structured_response`), a dict with `status` (validated), any other JSON dict, a
    pydantic model; anything else is `failed`. `sent` (what the worker was given) is not
    new output. Error text is scrubbed (`scrub`, default the run's secrets) before any cut.
    """
    scrub = scrub if scrub is not None else RunSecrets().scrub
    result, produced = _coerce(output, worker, sent, scrub)
    if not result.error or (error := scrub(result.error)) == result.error:
        return result, produced
    # A summary derived from the error is derived again from the scrubbed text (the cut to
    # length could have split a secret); a summary the worker gave is scrubbed as it is.
    derived = WorkerResult(status=result.status, result=result.result, error=result.error)
    summary = "" if result.summary == derived.summary else scrub(result.summary)
    scrubbed = WorkerResult(
        status=result.status, result=result.result, summary=summary, error=error
    )
    return scrubbed, produced


def _coerce(
    output: Any, worker: str, sent: Sequence[BaseMessage], scrub: Callable[[str], str]
) -> tuple[WorkerResult, list[BaseMessage]]:
    sent_ids = {m.id for m in sent if m.id}
    try:
        if isinstance(output, WorkerResult):
            return output, []
        if isinstance(output, str):
            return WorkerResult(status="success", result=output), []
        if isinstance(output, BaseMessage):
            return _from_messages([output], None), [output]
        if isinstance(output, list) and output and all(isinstance(m, BaseMessage) for m in output):
            new = [m for m in output if m.id not in sent_ids or m.id is None]
            return _from_messages(new, None), new
        if isinstance(output, Mapping):
            if is_domain_state(output):
                new = _after_sent(output["messages"], sent_ids)
                return _from_domain(output, new, worker, scrub), new
            if "messages" in output and isinstance(output["messages"], list):
                new = [
                    m
                    for m in output["messages"]
                    if isinstance(m, BaseMessage) and (m.id is None or m.id not in sent_ids)
                ]
                return _from_messages(new, output.get("structured_response")), new
            if "status" in output:
                return WorkerResult.model_validate(dict(output)), []
            return WorkerResult(status="success", result=dict(output)), []
        if isinstance(output, BaseModel):
            return WorkerResult(status="success", result=output.model_dump(mode="json")), []
    except ValidationError as exc:
        return WorkerResult(
            status="failed",
            error=truncate(
                scrub(f"worker {worker!r} returned an invalid result: {exc}"), ERROR_MAX_CHARS
            ),
        ), []
    return WorkerResult(
        status="failed",
        error=(
            f"worker {worker!r} returned {type(output).__name__}, which is not a result; "
            "return a WorkerResult, str, dict, pydantic model or messages"
        ),
    ), []


_DOMAIN_END = ("done", "halted", "failed")


def _after_sent(messages: Sequence[Any], sent_ids: set[str]) -> list[BaseMessage]:
    """A domain's messages after the last one it was given (its answer to this visit).

    A domain returns its whole conversation, and the slot may hold a compacted version
    of it: "new" is what follows the last given message, not what the slot lacks.
    """
    listed = [m for m in messages if isinstance(m, BaseMessage)]
    last = max((i for i, m in enumerate(listed) if m.id in sent_ids), default=None)
    if last is None:
        return [m for m in listed if m.id is None or m.id not in sent_ids]
    return listed[last + 1 :]


_DOMAIN_CHANNELS = frozenset({"ledger", "workers", "route", "status"})


def is_domain_graph(agent: Pregel[Any, Any, Any, Any]) -> bool:
    """Whether a compiled graph is a supervisor graph (a domain of a tree): its channels."""
    return set(agent.channels) >= _DOMAIN_CHANNELS


def is_domain_state(output: Mapping[str, Any]) -> bool:
    """Whether `output` is the final state of a supervisor graph (a domain of a tree)."""
    return (
        isinstance(output.get("messages"), list)
        and isinstance(output.get("ledger"), list)
        and output.get("status") in _DOMAIN_END
    )


def _from_domain(
    output: Mapping[str, Any],
    new: Sequence[BaseMessage],
    worker: str,
    scrub: Callable[[str], str],
) -> WorkerResult:
    """A domain's run as one hop of its parent: its answer; `failed` unless it ended `done`."""
    answer = next(
        (message_text(m) for m in reversed(new) if isinstance(m, AIMessage) and not m.tool_calls),
        "",
    )
    if output["status"] == "done":
        return WorkerResult(status="success", result=answer)
    reason = output.get("halt_reason") or "unknown"
    detail = output.get("halt_detail") or "no detail given"
    return WorkerResult(
        status="failed",
        result=answer or None,
        summary=WorkerResult(status="success", result=answer).summary if answer else "",
        error=truncate(
            scrub(f"domain {worker!r} {output['status']} ({reason}): {detail}"), ERROR_MAX_CHARS
        ),
    )


def _from_messages(messages: Sequence[BaseMessage], structured: Any) -> WorkerResult:
    if structured is not None:
        if isinstance(structured, BaseModel):
            structured = structured.model_dump(mode="json")
        return WorkerResult(status="success", result=structured)
    for message in reversed(messages):
        if isinstance(message, AIMessage) and not message.tool_calls:
            return WorkerResult(status="success", result=message_text(message))
    return WorkerResult(
        status="failed",
        error="the worker produced no final AI message (it ended on a tool call or said nothing)",
    )

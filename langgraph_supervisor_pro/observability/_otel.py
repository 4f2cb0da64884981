"""OpenTelemetry traces of a supervisor run, after the GenAI semantic conventions.

`OTelCallbackHandler` turns a run's LangChain callbacks into one trace: an `invoke_agent`
span for the run, each supervisor decision and each worker hop (a domain's spans nest under
its hop), `execute_tool` spans (refused calls included), and `lgsp.review` /
`lgsp.compaction` spans. Model calls are left to a provider instrumentation, which nests its
spans under the current hop or decision; the tokens and cost a decision, hop or synthesis
recorded (its `usage` entries) are on its span. Requires the `otel` extra.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/opentelemetry/
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.types import Command, Send
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from langgraph_supervisor_pro._internal.checks import is_count
from langgraph_supervisor_pro.observability._metrics import SpendMetrics
from langgraph_supervisor_pro.observability._propagation import TRACE_CONTEXT_KEYS
from langgraph_supervisor_pro.review._guard import REFUSED_TOOL_EVENT

_SCOPE = "langgraph_supervisor_pro.observability"
_AGENT_ROLES = frozenset({"supervisor", "worker", "synthesis"})
_INTERNAL_ROLES = frozenset({"review", "compaction"})


@dataclass
class _Run:
    """One LangChain run the handler saw start: the span it opened, if any."""

    parent: UUID | None
    span: Span | None = None
    previous: otel_context.Context | None = None
    """The OpenTelemetry context current before the span was made current."""
    role: str | None = None
    name: str = ""
    handed_to: set[str] = field(default_factory=set)
    """For a hop: whose agents it has handed the task to (its own, then a fallback's)."""
    last_decider: str | None = None
    """For a span a graph runs in: the name of its latest supervisor decision."""
    decider: str | None = None
    """For a hop: the supervisor that sent it."""


class OTelCallbackHandler(BaseCallbackHandler):
    """Turns a supervisor run's callbacks into OpenTelemetry spans (GenAI conventions).

    Args:
        tracer_provider: Where spans go; the global provider when None.
        capture_content: Record text the models and tools saw or wrote (a hop's
            instructions, tool arguments and results). Off by default: spans then carry
            names, ids, counts and statuses only.
        max_content_chars: The longest text recorded when `capture_content` is on.

    Raises:
        ValueError: `max_content_chars` is not a positive integer.

    Example:
        >>> from opentelemetry.sdk.trace import TracerProvider
        >>> handler = OTelCallbackHandler(tracer_provider=TracerProvider())
        >>> handler.capture_content
        False
        >>> # graph.invoke(inputs, {"callbacks": [handler], "configurable": {...}})
    """

    run_inline = True
    """Callbacks run in the caller's context, so a span can be made current for the run."""
    ignore_llm = ignore_chat_model = ignore_retriever = True
    """Model calls are left to a provider instrumentation; retrievers get no span."""
    ignore_custom_event = False
    """Read for one event only: the tool guard's refusal (`on_custom_event`)."""

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        capture_content: bool = False,
        max_content_chars: int = 2000,
    ) -> None:
        if not isinstance(capture_content, bool):
            raise ValueError(
                f"capture_content must be True or False, not {capture_content!r}; "
                "pass capture_content=True to record text"
            )
        if not is_count(max_content_chars):
            raise ValueError(
                f"max_content_chars must be a positive integer, not {max_content_chars!r}; "
                "e.g. max_content_chars=2000"
            )
        super().__init__()
        self.capture_content = capture_content
        self.max_content_chars = max_content_chars
        self._tracer = trace.get_tracer(_SCOPE, tracer_provider=tracer_provider)
        self._runs: dict[UUID, _Run] = {}
        self._lock = threading.Lock()

    # -- LangChain callbacks -----------------------------------------------------------

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Open the root span, a decision's or hop's span, or just note the run."""
        meta = metadata or {}
        name = str(kwargs.get("name") or (serialized or {}).get("name") or "")
        run = _Run(parent=parent_run_id, name=name)
        if parent_run_id is None:
            self._agent_span(run, _root_context(meta), meta)
        elif _is_node_run(name, tags, meta):
            role = str(meta["lgsp_role"])
            run.role = role
            owner = self._owner(parent_run_id)
            parent = owner.span if owner is not None else None
            if owner is not None and role == "supervisor":
                owner.last_decider = name
            elif owner is not None and role == "worker":
                run.decider = owner.last_decider
            if role in _AGENT_ROLES:
                self._agent_span(run, parent, meta)
            elif role in _INTERNAL_ROLES:
                self._open(run, f"lgsp.{role}", parent, meta)
        elif meta.get("lgsp_step") is not None and meta.get("lgsp_worker") is not None:
            self._hand_off(parent_run_id, meta)
        with self._lock:
            self._runs[run_id] = run

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Record what a decision or hop produced, then close its span."""
        run = self._pop(run_id)
        if run is None or run.span is None:
            return
        if run.role in _AGENT_ROLES:
            _record_usage(run.span, outputs)
        if run.role == "supervisor":
            _record_decision(run.span, outputs)
        elif run.role == "worker":
            _record_hop(run.span, run.name, outputs)
        elif run.parent is None:
            _record_outcome(run.span, outputs)
        self._close(run)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Close the run's span in error (an interrupt is an event, not an error)."""
        run = self._pop(run_id)
        if run is None:
            return
        if run.span is None:
            if not isinstance(error, GraphBubbleUp) and run.parent is not None:
                self._note_agent_error(run.parent, error)
            return
        _record_error(run.span, error)
        self._close(run)

    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Open an `execute_tool` span beneath the hop that called the tool."""
        meta = metadata or {}
        name = str(kwargs.get("name") or (serialized or {}).get("name") or "tool")
        run = _Run(parent=parent_run_id, name=name, role="tool")
        parent = self._span_of(parent_run_id) if parent_run_id is not None else None
        span = self._tool_span(run, parent, meta, kwargs.get("tool_call_id"))
        if self.capture_content:
            arguments = input_str if inputs is None else repr(inputs)
            span.set_attribute("gen_ai.tool.call.arguments", self._text(arguments))
        with self._lock:
            self._runs[run_id] = run

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Close a tool's span; an error `ToolMessage` is an error status."""
        run = self._pop(run_id)
        if run is None or run.span is None:
            return
        content = output.content if isinstance(output, ToolMessage) else output
        if self.capture_content:
            run.span.set_attribute("gen_ai.tool.call.result", self._text(content))
        if isinstance(output, ToolMessage) and output.status == "error":
            run.span.set_attribute("error.type", "tool_error")
            run.span.set_status(Status(StatusCode.ERROR, _first_line(content)))
        self._close(run)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Close a tool's span in error (an interrupt is an event, not an error)."""
        run = self._pop(run_id)
        if run is None or run.span is None:
            return
        _record_error(run.span, error)
        self._close(run)

    def on_custom_event(
        self,
        name: str,
        data: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """A tool call the guard refused (`REFUSED_TOOL_EVENT`): an `execute_tool` span in error.

        The refusal starts no tool run, so this event is its only trace; others are ignored.
        """
        if name != REFUSED_TOOL_EVENT or not isinstance(data, Mapping):
            return
        tool = str(data.get("tool") or "tool")
        run = _Run(parent=run_id, name=tool, role="tool")
        span = self._tool_span(run, self._span_of(run_id), metadata or {}, data.get("tool_call_id"))
        reason = str(data.get("reason") or "refused")
        span.set_attributes(
            {"lgsp.refused": True, "lgsp.refusal.reason": reason, "error.type": "refused"}
        )
        if self.capture_content:
            span.set_attribute("gen_ai.tool.call.arguments", self._text(data.get("args")))
        span.set_status(Status(StatusCode.ERROR, _first_line(reason)))
        self._close(run)

    # -- spans -------------------------------------------------------------------------

    def _agent_span(
        self, run: _Run, parent: otel_context.Context | Span | None, meta: Mapping[str, Any]
    ) -> None:
        span = self._open(run, f"invoke_agent {run.name}", parent, meta)
        span.set_attributes(
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": run.name}
        )

    def _tool_span(
        self,
        run: _Run,
        parent: otel_context.Context | Span | None,
        metadata: Mapping[str, Any],
        call_id: object,
    ) -> Span:
        """Open a tool call's `execute_tool` span with its GenAI attributes."""
        span = self._open(run, f"execute_tool {run.name}", parent, metadata)
        span.set_attributes(
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": run.name,
                "gen_ai.tool.type": "function",
            }
        )
        if call_id:
            span.set_attribute("gen_ai.tool.call.id", str(call_id))
        return span

    def _open(
        self,
        run: _Run,
        span_name: str,
        parent: otel_context.Context | Span | None,
        meta: Mapping[str, Any],
    ) -> Span:
        context = trace.set_span_in_context(parent) if isinstance(parent, Span) else parent
        span = self._tracer.start_span(span_name, context=context, kind=SpanKind.INTERNAL)
        attributes: dict[str, Any] = {}
        thread_id = meta.get("thread_id")
        if thread_id is not None:
            attributes["gen_ai.conversation.id"] = str(thread_id)
        if run.role is not None and run.role != "tool":
            attributes["lgsp.role"] = run.role
        path = meta.get("lgsp_path")
        if path:
            attributes["lgsp.path"] = str(path)
        span.set_attributes(attributes)
        run.span = span
        # Current while the run runs: a model call's provider instrumentation finds it as
        # its parent, and so does the W3C trace context the hop sends a remote graph.
        run.previous = otel_context.get_current()
        otel_context.attach(trace.set_span_in_context(span))
        return span

    def _close(self, run: _Run) -> None:
        assert run.span is not None
        # Restore what was current, where the span still is. Not `detach(token)`: under
        # `ainvoke` a run may end in a copy of the context it started in, where the
        # token is foreign (each task's context is its own copy, dropped with the task).
        if run.previous is not None and trace.get_current_span() is run.span:
            otel_context.attach(run.previous)
        run.span.end()

    def _pop(self, run_id: UUID) -> _Run | None:
        with self._lock:
            return self._runs.pop(run_id, None)

    def _owner(self, run_id: UUID | None) -> _Run | None:
        """The nearest run at or above `run_id` that opened a span."""
        with self._lock:
            while run_id is not None:
                run = self._runs.get(run_id)
                if run is None:
                    return None
                if run.span is not None:
                    return run
                run_id = run.parent
        return None

    def _span_of(self, run_id: UUID) -> Span | None:
        owner = self._owner(run_id)
        return owner.span if owner is not None else None

    def _hand_off(self, parent_run_id: UUID, meta: Mapping[str, Any]) -> None:
        """A hop's agent run starts: the handoff event on the hop's span (once per hop)."""
        owner = self._owner(parent_run_id)
        fallback = meta.get("lgsp_fallback")
        to = str(fallback or meta["lgsp_worker"])
        if owner is None or owner.role != "worker" or to in owner.handed_to:
            return  # not a hop's agent run, or a retry of an agent already handed to
        assert owner.span is not None
        owner.handed_to.add(to)
        path = str(meta.get("lgsp_path") or meta["lgsp_worker"]).split("/")
        instructions = str(meta.get("lgsp_instructions") or "")
        attributes: dict[str, Any] = {
            "lgsp.handoff.from": owner.decider or (path[-2] if len(path) > 1 else "supervisor"),
            "lgsp.handoff.to": to,
            "lgsp.handoff.step": int(meta["lgsp_step"]),
            "lgsp.handoff.instructions_length": len(instructions),
        }
        if meta.get("lgsp_turn") is not None:
            attributes["lgsp.handoff.turn"] = int(meta["lgsp_turn"])
        if fallback is not None:
            attributes["lgsp.handoff.fallback_for"] = str(meta["lgsp_worker"])
        if self.capture_content:
            attributes["lgsp.handoff.instructions"] = self._text(instructions)
        owner.span.add_event("lgsp.handoff", attributes)
        owner.span.set_attribute("lgsp.step", attributes["lgsp.handoff.step"])
        if "lgsp.handoff.turn" in attributes:
            owner.span.set_attribute("lgsp.turn", attributes["lgsp.handoff.turn"])

    def _note_agent_error(self, parent_run_id: UUID, error: BaseException) -> None:
        """An exception inside a hop (its agent raised): an exception event on the hop."""
        owner = self._owner(parent_run_id)
        if owner is not None and owner.span is not None and owner.role == "worker":
            owner.span.record_exception(error)

    def _text(self, value: Any) -> str:
        text = value if isinstance(value, str) else repr(value)
        return text[: self.max_content_chars]


# -- reading runs ------------------------------------------------------------------------


def _is_node_run(name: str, tags: Sequence[str] | None, meta: Mapping[str, Any]) -> bool:
    """A supervisor graph's own node run (not a run inside it that inherited its metadata).

    LangGraph tags a node's run `graph:step:N`; the package's node metadata clears
    `lgsp_step`, which the runs inside a hop's agent inherit set.
    """
    return (
        "lgsp_role" in meta
        and "lgsp_step" in meta
        and meta["lgsp_step"] is None
        and name == meta.get("langgraph_node")
        and any(tag.startswith("graph:step:") for tag in tags or ())
    )


def _root_context(meta: Mapping[str, Any]) -> otel_context.Context | None:
    """The parent of a run's root span: a `traceparent` in its metadata, else the current."""
    carrier = {key: str(meta[key]) for key in TRACE_CONTEXT_KEYS if meta.get(key)}
    if "traceparent" not in carrier:
        return None
    return TraceContextTextMapPropagator().extract(carrier)


def _targets(goto: Any) -> list[str]:
    items = goto if isinstance(goto, Sequence) and not isinstance(goto, str) else [goto]
    return [
        item.node if isinstance(item, Send) else item
        for item in items
        if isinstance(item, Send | str)
    ]


def _record_decision(span: Span, outputs: Any) -> None:
    if not isinstance(outputs, Command):
        return
    targets = _targets(outputs.goto)
    span.set_attribute("lgsp.route", targets)
    update = outputs.update
    route = update.get("route") if isinstance(update, Mapping) else None
    if isinstance(route, Mapping) and route.get("next") in targets:
        if route.get("decided_by") is not None:
            span.set_attribute("lgsp.decided_by", str(route["decided_by"]))
        if route.get("step") is not None:
            span.set_attribute("lgsp.step", int(route["step"]))
    _record_outcome(span, update)


def _record_usage(span: Span, outputs: Any) -> None:
    """The tokens and cost of the model calls a node recorded (its `usage` entries).

    `lgsp.cost` only when every call was priced, else `lgsp.cost.unpriced_calls`; the
    model when the node used exactly one.
    """
    update = outputs.update if isinstance(outputs, Command) else outputs
    usage = update.get("usage") if isinstance(update, Mapping) else None
    entries = [e for e in usage if isinstance(e, Mapping)] if isinstance(usage, list) else []
    if not entries:
        return
    spend = SpendMetrics.of(entries)
    span.set_attributes(
        {
            "gen_ai.usage.input_tokens": spend.input_tokens,
            "gen_ai.usage.output_tokens": spend.output_tokens,
        }
    )
    if spend.unpriced_calls:
        span.set_attribute("lgsp.cost.unpriced_calls", spend.unpriced_calls)
    elif spend.cost is not None:
        span.set_attribute("lgsp.cost", spend.cost)
    models = {(e.get("provider"), e.get("model")) for e in entries}
    if len(models) == 1:
        ((provider, model),) = models
        if model:
            name = str(model)
            span.set_attributes({"gen_ai.request.model": name, "gen_ai.response.model": name})
        if provider:
            span.set_attribute("gen_ai.provider.name", str(provider))


def _record_outcome(span: Span, values: Any) -> None:
    """A run's (or a decision's) status and halt: a failed run is an error span."""
    if not isinstance(values, Mapping):
        return
    if values.get("halt_reason"):
        span.set_attribute("lgsp.halt_reason", str(values["halt_reason"]))
    if values.get("status") in ("done", "failed", "halted"):
        span.set_attribute("lgsp.status", str(values["status"]))
    if values.get("status") == "failed":
        span.set_attribute("error.type", str(values.get("halt_reason") or "failed"))
        detail = values.get("halt_detail") or values.get("halt_reason") or "failed"
        span.set_status(Status(StatusCode.ERROR, _first_line(detail)))


def _record_hop(span: Span, worker: str, outputs: Any) -> None:
    update = outputs.update if isinstance(outputs, Command) else outputs
    ledger = update.get("ledger") if isinstance(update, Mapping) else None
    if not isinstance(ledger, Sequence):
        return
    entry = next(
        (e for e in reversed(ledger) if isinstance(e, Mapping) and e.get("worker") == worker), None
    )
    if entry is None:
        return
    status = str(entry.get("status"))
    span.set_attribute("lgsp.status", status)
    if entry.get("fallback"):
        span.set_attribute("lgsp.fallback_reason", _first_line(entry["fallback"]))
    if status == "failed":
        error = str(entry.get("error") or "failed")
        span.set_attribute("error.type", error.split(":", 1)[0] or "failed")
        span.set_status(Status(StatusCode.ERROR, _first_line(error)))


def _record_error(span: Span, error: BaseException) -> None:
    if isinstance(error, GraphInterrupt):
        span.add_event("lgsp.interrupt")
        return
    if isinstance(error, GraphBubbleUp):
        return
    span.record_exception(error)
    span.set_attribute("error.type", type(error).__qualname__)
    span.set_status(Status(StatusCode.ERROR, _first_line(str(error))))


def _first_line(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text.splitlines()[0][:200] if text else ""

"""The remote domains server B serves in the remote-domain tests.

- `ops`: a domain whose clerk's high-risk `rollback` tool pauses for a review: the clerk's
  model calls `rollback` while its messages hold no tool result, and answers once they do.
- `desk`: a domain whose one function worker answers at once (no review), writing one
  custom stream event (`{"filing": <task>}`) as it does.
- `broken`: a graph whose one node raises, so its runs end in error.
- `slow`: a graph whose one node takes two seconds to answer.
- `asks`: a graph whose one node asks a plain question (`interrupt("Which region?")`)
  and answers with the region it was given.

Both decide from what they are shown (routers send their one worker once, then FINISH),
never from call order, so the server serves any number of runs. With `LGSP_SPANS_FILE`
set, each graph traces itself with `OTelCallbackHandler` into that file (one JSON span
per line), so a test can read the server's spans.

Exported compiled without a checkpointer: the server supplies it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.config import get_stream_writer
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt

from langgraph_supervisor_pro import SupervisorView, Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel


@tool
def rollback(service: str) -> str:
    """Roll a service back to its last good release."""
    return f"rolled back {service}"


def _clerk_reply(call: ScriptedCall) -> AIMessage:
    if any(isinstance(m, ToolMessage) for m in call.messages):
        return AIMessage(content="Rolled back the database service.")
    return AIMessage(
        content="",
        tool_calls=[{"name": "rollback", "args": {"service": "database"}, "id": "rb1"}],
    )


def _once(worker: str) -> Any:
    def router(view: SupervisorView) -> str:
        return "FINISH" if view.ledger else worker

    return router


def _notes(task: WorkerTask) -> str:
    get_stream_writer()({"filing": task.task})  # a custom event the root's stream relays
    return f"Filed a note about: {task.task}"


class _FileExporter:
    """An OpenTelemetry span exporter appending one JSON object per span to a file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        lines = []
        for span in spans:
            lines.append(
                json.dumps(
                    {
                        "name": span.name,
                        "trace_id": format(span.context.trace_id, "032x"),
                        "span_id": format(span.context.span_id, "016x"),
                        "parent_id": (format(span.parent.span_id, "016x") if span.parent else None),
                        "attributes": {k: str(v) for k, v in (span.attributes or {}).items()},
                    }
                )
            )
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write("".join(f"{line}\n" for line in lines))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _traced(graph: Any) -> Any:
    path = os.environ.get("LGSP_SPANS_FILE")
    if not path:
        return graph
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from langgraph_supervisor_pro.observability import OTelCallbackHandler

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_FileExporter(path)))  # type: ignore[arg-type]
    return graph.with_config(callbacks=[OTelCallbackHandler(tracer_provider=provider)])


ops = _traced(
    create_supervisor(
        [
            Worker(
                name="clerk",
                description="Rolls services back.",
                model=ScriptedChatModel(script=[_clerk_reply] * 10_000),
                tools=(rollback,),
                risks={"rollback": "high"},
            )
        ],
        router=_once("clerk"),
        name="ops",
    ).compile()
)
desk = _traced(
    create_supervisor(
        [Worker(name="notes", description="Files notes.", agent=_notes)],
        router=_once("notes"),
        name="desk",
    ).compile()
)


def _explode(state: MessagesState) -> dict[str, Any]:
    raise RuntimeError("the disk is full")


broken = (
    StateGraph(MessagesState).add_node("explode", _explode).add_edge(START, "explode").compile()
)


def _ask(state: MessagesState) -> dict[str, Any]:
    region = interrupt("Which region?")
    return {"messages": [AIMessage(content=f"Deploying to {region}.")]}


asks = StateGraph(MessagesState).add_node("ask", _ask).add_edge(START, "ask").compile()


def _slowly(state: MessagesState) -> dict[str, Any]:
    time.sleep(2)
    return {"messages": [AIMessage(content="Finally done.")]}


slow = StateGraph(MessagesState).add_node("work", _slowly).add_edge(START, "work").compile()

"""OTelCallbackHandler: a supervisor run as OpenTelemetry spans (SDK in-memory exporter)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.errors import GraphRecursionError
from langgraph.types import Command
from langgraph.types import RetryPolicy as LGRetryPolicy
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from langgraph_supervisor_pro import SupervisorView, Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro.observability import OTelCallbackHandler
from langgraph_supervisor_pro.observability._propagation import trace_context_metadata
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall, ScriptedChatModel
from tests._helpers import ask, thread
from tests.observability._record import OLD_TURNS, SPEND_TURNS, budgeted_team, spend_app
from tests.test_trees import _clerk, _once, _three_levels

SECRET_TASK = "Summarise the Zanzibar ledger"
SECRET_INSTRUCTIONS = "Look under the blue carpet"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    found = InMemorySpanExporter()
    yield found
    found.clear()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return tp


def _traced(provider: TracerProvider, **kwargs: Any) -> tuple[dict[str, Any], str]:
    handler = OTelCallbackHandler(tracer_provider=provider, **kwargs)
    config = thread()
    config["callbacks"] = [handler]
    return config, config["configurable"]["thread_id"]


def _tree(spans: tuple[ReadableSpan, ...]) -> list[Any]:
    """The spans as nested (name, children) pairs, children in start order."""
    children: dict[int | None, list[ReadableSpan]] = {}
    ids = {s.context.span_id for s in spans}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in ids else None, []).append(span)

    def build(parent: int | None) -> list[Any]:
        kids = sorted(children.get(parent, []), key=lambda s: s.start_time or 0)
        return [(s.name, build(s.context.span_id)) for s in kids]

    return build(None)


def _named(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return sorted((s for s in spans if s.name == name), key=lambda s: s.start_time or 0)


def _leaf(name: str) -> Worker:
    def work(task: WorkerTask) -> str:
        return f"{name} handled it."

    return Worker(name=name, description=f"The {name} specialist.", agent=work)


def _with_instructions(*names: str):
    def router(view: SupervisorView) -> Any:
        done = [entry["worker"] for entry in view.ledger]
        todo = [n for n in names if n not in done]
        return {"next": todo[0], "instructions": SECRET_INSTRUCTIONS} if todo else "FINISH"

    return router


def _flat_team() -> Any:
    return create_supervisor(
        [_leaf("researcher"), _leaf("writer")], router=_with_instructions("researcher", "writer")
    ).compile(checkpointer=InMemorySaver())


FLAT_TREE: list[Any] = [
    (
        "invoke_agent LangGraph",
        [
            ("invoke_agent supervisor", []),
            ("invoke_agent researcher", []),
            ("invoke_agent supervisor", []),
            ("invoke_agent writer", []),
            ("invoke_agent supervisor", []),
            ("invoke_agent synthesis", []),
        ],
    )
]


# -- the span tree is the delegation tree ---------------------------------------------------


def test_a_flat_team_is_one_trace_of_decisions_and_hops(provider, exporter):
    config, thread_id = _traced(provider)
    out = _flat_team().invoke(ask(SECRET_TASK), config)
    assert out["status"] == "done"
    spans = exporter.get_finished_spans()
    assert _tree(spans) == FLAT_TREE
    assert len({s.context.trace_id for s in spans}) == 1
    assert {s.attributes["gen_ai.conversation.id"] for s in spans} == {thread_id}
    decisions = _named(spans, "invoke_agent supervisor")
    assert [d.attributes["lgsp.route"] for d in decisions] == [
        ("researcher",),
        ("writer",),
        ("synthesis",),
    ]
    assert [d.attributes["lgsp.decided_by"] for d in decisions[:2]] == ["router", "router"]
    for decision in decisions:
        assert decision.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert decision.attributes["gen_ai.agent.name"] == "supervisor"
    (hop,) = _named(spans, "invoke_agent writer")
    assert hop.attributes["gen_ai.agent.name"] == "writer"
    assert hop.attributes["lgsp.role"] == "worker"
    assert hop.attributes["lgsp.status"] == "success"
    assert hop.attributes["lgsp.step"] == 2
    assert hop.status.status_code is StatusCode.UNSET


def test_each_hop_has_one_handoff_event_from_its_supervisor(provider, exporter):
    config, _ = _traced(provider)
    _flat_team().invoke(ask(SECRET_TASK), config)
    spans = exporter.get_finished_spans()
    (researcher,) = _named(spans, "invoke_agent researcher")
    (writer,) = _named(spans, "invoke_agent writer")
    assert [e.name for e in researcher.events] == ["lgsp.handoff"]
    assert dict(writer.events[0].attributes or {}) == {
        "lgsp.handoff.from": "supervisor",
        "lgsp.handoff.to": "writer",
        "lgsp.handoff.step": 2,
        "lgsp.handoff.turn": 1,
        "lgsp.handoff.instructions_length": len(SECRET_INSTRUCTIONS),
    }


@pytest.mark.parametrize(
    ("compiled", "mode"),
    [(True, "invoke"), (False, "invoke"), (True, "ainvoke")],
    ids=["compiled", "uncompiled", "compiled-ainvoke"],
)
async def test_a_three_level_tree_nests_each_domain_under_its_hop_in_one_trace(
    provider, exporter, compiled, mode
):
    app = create_supervisor([_three_levels(compiled)], router=_once("ops")).compile(
        checkpointer=InMemorySaver()
    )
    config, thread_id = _traced(provider)
    if mode == "invoke":
        out = app.invoke(ask(), config)
    else:
        out = await app.ainvoke(ask(), config)
    assert out["status"] == "done"
    spans = exporter.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 1
    assert {s.attributes["gen_ai.conversation.id"] for s in spans} == {thread_id}
    domain = lambda name, worker, inner: (  # noqa: E731
        f"invoke_agent {worker}",
        [
            (f"invoke_agent {name}", []),
            (f"invoke_agent {inner[0]}", inner[1]),
            (f"invoke_agent {name}", []),
            ("invoke_agent synthesis", []),
        ],
    )
    incident = domain("incident", "incident", ("pager", []))
    ops = domain("ops", "ops", ("incident", incident[1]))
    assert _tree(spans) == [
        (
            "invoke_agent LangGraph",
            [
                ("invoke_agent supervisor", []),
                ops,
                ("invoke_agent supervisor", []),
                ("invoke_agent synthesis", []),
            ],
        )
    ]
    (pager,) = _named(spans, "invoke_agent pager")
    assert pager.attributes["lgsp.path"] == "ops/incident"
    assert pager.events[0].attributes["lgsp.handoff.from"] == "incident"
    (incident_hop,) = [
        s for s in _named(spans, "invoke_agent incident") if s.attributes["lgsp.role"] == "worker"
    ]
    assert incident_hop.events[0].attributes["lgsp.handoff.from"] == "ops"


def test_parallel_branches_are_sibling_spans(provider, exporter):
    def fan(view: SupervisorView) -> Any:
        return "FINISH" if view.ledger else ["a", "b", "c"]

    app = create_supervisor(
        [_leaf("a"), _leaf("b"), _leaf("c")], router=fan, parallel=True
    ).compile(checkpointer=InMemorySaver())
    config, _ = _traced(provider)
    assert app.invoke(ask(), config)["status"] == "done"
    spans = exporter.get_finished_spans()
    (root,) = [s for s in spans if s.parent is None]
    branches = [s for s in spans if s.name in {"invoke_agent a", "invoke_agent b"}]
    branches += _named(spans, "invoke_agent c")
    assert len(branches) == 3
    assert {b.parent.span_id for b in branches if b.parent} == {root.context.span_id}
    (first,) = _named(spans, "invoke_agent supervisor")[:1]
    assert first.attributes["lgsp.route"] == ("a", "b", "c")
    # each branch ran in its own context: none is another's parent
    assert not {b.context.span_id for b in branches} & {
        s.parent.span_id for s in spans if s.parent is not None
    }


async def test_ainvoke_gives_the_same_tree(provider, exporter):
    config, _ = _traced(provider)
    out = await _flat_team().ainvoke(ask(SECRET_TASK), config)
    assert out["status"] == "done"
    spans = exporter.get_finished_spans()
    assert _tree(spans) == FLAT_TREE
    assert len({s.context.trace_id for s in spans}) == 1


# -- tools, errors and interrupts -----------------------------------------------------------


def _tool_worker(*tools: Any, calls: list[dict[str, Any]]) -> Worker:
    script: list[Any] = [
        AIMessage(content="", tool_calls=[{**call, "id": f"c{i}"} for i, call in enumerate(calls)]),
        "Done with the tools.",
    ]
    return Worker(
        name="clerk",
        description="Uses tools.",
        model=ScriptedChatModel(script=script),
        tools=tools,
        risks=dict.fromkeys((t.name for t in tools), "low"),  # type: ignore[arg-type]
    )


def test_tool_calls_are_execute_tool_spans_under_their_hop(provider, exporter):
    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return f"order {order_id} shipped"

    @tool
    def cancel(order_id: str) -> str:
        """Cancel an order."""
        raise ToolException(f"{order_id} already shipped")

    cancel.handle_tool_error = True  # the tool answers with an error ToolMessage

    worker = _tool_worker(
        lookup,
        cancel,
        calls=[
            {"name": "lookup", "args": {"order_id": "A1"}},
            {"name": "cancel", "args": {"order_id": "A1"}},
        ],
    )
    app = create_supervisor([worker], router=_once("clerk")).compile(checkpointer=InMemorySaver())
    config, _ = _traced(provider)
    assert app.invoke(ask(), config)["status"] == "done"
    spans = exporter.get_finished_spans()
    (hop,) = _named(spans, "invoke_agent clerk")
    (ok,) = _named(spans, "execute_tool lookup")
    (refused,) = _named(spans, "execute_tool cancel")
    for span, call_id in ((ok, "c0"), (refused, "c1")):
        assert span.parent is not None and span.parent.span_id == hop.context.span_id
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.tool.type"] == "function"
        assert span.attributes["gen_ai.tool.call.id"] == call_id
    assert ok.status.status_code is StatusCode.UNSET
    assert refused.status.status_code is StatusCode.ERROR
    assert refused.attributes["error.type"] == "tool_error"
    assert "already shipped" in (refused.status.description or "")


def test_a_tool_that_raises_and_its_failing_hop_are_errors(provider, exporter):
    @tool
    def explode(order_id: str) -> str:
        """Always fails."""
        raise RuntimeError("the warehouse is on fire")

    worker = _tool_worker(explode, calls=[{"name": "explode", "args": {"order_id": "A1"}}])
    worker = Worker(
        name=worker.name,
        description=worker.description,
        model=worker.model,
        tools=worker.tools,
        risks=worker.risks,
        retry=LGRetryPolicy(max_attempts=1),
    )
    app = create_supervisor([worker], router=_once("clerk")).compile(checkpointer=InMemorySaver())
    config, _ = _traced(provider)
    out = app.invoke(ask(), config)
    assert [e["status"] for e in out["ledger"]] == ["failed"]
    spans = exporter.get_finished_spans()
    (boom,) = _named(spans, "execute_tool explode")
    assert boom.status.status_code is StatusCode.ERROR
    assert boom.attributes["error.type"] == "RuntimeError"
    assert [e.name for e in boom.events] == ["exception"]
    (hop,) = _named(spans, "invoke_agent clerk")
    assert hop.status.status_code is StatusCode.ERROR
    assert hop.attributes["lgsp.status"] == "failed"
    assert "warehouse is on fire" in (hop.status.description or "")
    assert "exception" in [e.name for e in hop.events]  # what the agent raised


def test_a_failing_function_worker_is_an_error_span_and_the_run_goes_on(provider, exporter):
    def broken(task: WorkerTask) -> str:
        raise ValueError("feed down")

    flaky = Worker(
        name="flaky",
        description="Fails.",
        agent=broken,
        retry=LGRetryPolicy(max_attempts=1),
    )
    app = create_supervisor(
        [flaky, _leaf("steady")], router=_with_instructions("flaky", "steady")
    ).compile(checkpointer=InMemorySaver())
    config, _ = _traced(provider)
    assert app.invoke(ask(), config)["status"] == "done"
    spans = exporter.get_finished_spans()
    (failed,) = _named(spans, "invoke_agent flaky")
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes["error.type"] == "ValueError"
    assert failed.status.description == "ValueError: feed down"
    (steady,) = _named(spans, "invoke_agent steady")
    assert steady.status.status_code is StatusCode.UNSET
    (root,) = [s for s in spans if s.parent is None]
    assert root.status.status_code is StatusCode.UNSET


def test_a_fallback_worker_is_a_second_handoff_on_the_same_hop(provider, exporter):
    attempts: list[int] = []

    def broken(task: WorkerTask) -> str:
        attempts.append(1)
        raise RuntimeError("quotes feed down")

    quotes = Worker(
        name="quotes",
        description="Fetches quotes.",
        agent=broken,
        retry=LGRetryPolicy(
            max_attempts=2, initial_interval=0.01, jitter=False, retry_on=RuntimeError
        ),
        fallback="backup",
    )
    backup = Worker(name="backup", description="Backup quotes.", agent=lambda t: "ACME at 10")
    app = create_supervisor([quotes, backup], router=_once("quotes")).compile(
        checkpointer=InMemorySaver()
    )
    config, _ = _traced(provider)
    out = app.invoke(ask(), config)
    assert [(e["worker"], e["status"]) for e in out["ledger"]] == [("quotes", "success")]
    assert len(attempts) == 2
    (hop,) = _named(exporter.get_finished_spans(), "invoke_agent quotes")
    handoffs = [dict(e.attributes or {}) for e in hop.events if e.name == "lgsp.handoff"]
    assert [(h["lgsp.handoff.to"], h.get("lgsp.handoff.fallback_for")) for h in handoffs] == [
        ("quotes", None),
        ("backup", "quotes"),
    ]
    assert hop.status.status_code is StatusCode.UNSET
    assert "quotes feed down" in str(hop.attributes["lgsp.fallback_reason"])


def test_a_supervisor_that_fails_is_an_error_decision_and_a_failed_run(provider, exporter):
    def broken(view: SupervisorView) -> str:
        raise RuntimeError("router bug")

    app = create_supervisor([_leaf("a")], router=broken).compile(checkpointer=InMemorySaver())
    config, _ = _traced(provider)
    assert app.invoke(ask(), config)["halt_reason"] == "supervisor_error"
    spans = exporter.get_finished_spans()
    (decision,) = _named(spans, "invoke_agent supervisor")
    (root,) = [s for s in spans if s.parent is None]
    assert decision.status.status_code is StatusCode.ERROR
    assert decision.status.description == "router bug"
    assert decision.attributes["error.type"] == "RuntimeError"
    assert [e.name for e in decision.events] == ["exception"]
    assert root.status.status_code is StatusCode.ERROR
    assert root.status.description == "the supervisor failed: RuntimeError: router bug"
    assert root.attributes["error.type"] == "supervisor_error"
    assert root.attributes["lgsp.halt_reason"] == "supervisor_error"
    assert root.attributes["lgsp.status"] == "failed"


def test_a_graph_that_raises_is_an_error_root_span(provider, exporter):
    app = create_supervisor([_leaf("a")], router=_once("a")).compile(checkpointer=InMemorySaver())
    config, _ = _traced(provider)
    config["recursion_limit"] = 1
    with pytest.raises(GraphRecursionError):
        app.invoke(ask(), config)
    (root,) = [s for s in exporter.get_finished_spans() if s.parent is None]
    assert root.status.status_code is StatusCode.ERROR
    assert root.attributes["error.type"] == "GraphRecursionError"


def test_a_run_resumed_after_a_review_is_a_second_trace_of_the_same_conversation(
    provider, exporter
):
    ran: list[str] = []
    app = create_supervisor([_clerk(ran, risk="high")], router=_once("clerk")).compile(
        checkpointer=InMemorySaver()
    )
    config, thread_id = _traced(provider)
    out = app.invoke(ask("Refund A1"), config)
    assert out["__interrupt__"] and ran == []
    first = exporter.get_finished_spans()
    (hop,) = _named(first, "invoke_agent clerk")
    assert hop.status.status_code is StatusCode.UNSET  # an interrupt is no error
    assert "lgsp.interrupt" in [e.name for e in hop.events]
    assert not [s for s in first if s.status.status_code is StatusCode.ERROR]
    assert not _named(first, "execute_tool refund")
    exporter.clear()

    out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert out["status"] == "done" and ran == ["A1"]
    second = exporter.get_finished_spans()
    assert len({s.context.trace_id for s in second}) == 1
    assert {s.context.trace_id for s in second} != {s.context.trace_id for s in first}
    assert {s.attributes["gen_ai.conversation.id"] for s in second} == {thread_id}
    (resumed,) = _named(second, "invoke_agent clerk")
    (refund,) = _named(second, "execute_tool refund")
    assert refund.parent is not None and refund.parent.span_id == resumed.context.span_id
    assert refund.status.status_code is StatusCode.UNSET


# -- content capture -------------------------------------------------------------------------


def _all_text(spans: tuple[ReadableSpan, ...]) -> str:
    parts: list[str] = []
    for span in spans:
        parts.extend(str(v) for v in (span.attributes or {}).values())
        for event in span.events:
            parts.extend(str(v) for v in (event.attributes or {}).values())
    return "\n".join(parts)


def _lookup_team() -> Any:
    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return f"order {order_id} is in the Zanzibar ledger"

    worker = _tool_worker(lookup, calls=[{"name": "lookup", "args": {"order_id": "Q-77"}}])
    return create_supervisor([worker], router=_with_instructions("clerk")).compile(
        checkpointer=InMemorySaver()
    )


def test_no_prompt_or_tool_text_is_recorded_by_default(provider, exporter):
    config, _ = _traced(provider)
    _lookup_team().invoke(ask(SECRET_TASK), config)
    text = _all_text(exporter.get_finished_spans())
    for secret in (SECRET_TASK, SECRET_INSTRUCTIONS, "Zanzibar", "Q-77"):
        assert secret not in text


def test_capture_content_records_instructions_and_tool_text(provider, exporter):
    config, _ = _traced(provider, capture_content=True, max_content_chars=30)
    _lookup_team().invoke(ask(SECRET_TASK), config)
    spans = exporter.get_finished_spans()
    (hop,) = _named(spans, "invoke_agent clerk")
    assert hop.events[0].attributes["lgsp.handoff.instructions"] == SECRET_INSTRUCTIONS
    (lookup,) = _named(spans, "execute_tool lookup")
    assert "Q-77" in lookup.attributes["gen_ai.tool.call.arguments"]
    assert lookup.attributes["gen_ai.tool.call.result"] == "order Q-77 is in the Zanzibar "


def test_configuration_is_validated():
    with pytest.raises(ValueError, match="max_content_chars must be a positive integer"):
        OTelCallbackHandler(max_content_chars=0)
    with pytest.raises(ValueError, match="max_content_chars"):
        OTelCallbackHandler(max_content_chars=True)
    with pytest.raises(ValueError, match="capture_content must be True or False"):
        OTelCallbackHandler(capture_content="yes")  # type: ignore[arg-type]


# -- context: model calls, nested and remote graphs -----------------------------------------


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_provider_instrumentations_model_span_nests_under_the_hop(provider, exporter, mode):
    # What a provider instrumentation (opentelemetry-instrumentation-openai-v2, ...) does:
    # start its `chat` span in the current context, at the call.
    provider_tracer = trace.get_tracer("fake.provider", tracer_provider=provider)

    def reply(call: ScriptedCall) -> str:
        with provider_tracer.start_as_current_span("chat fake-model"):
            return "Answered."

    worker = Worker(name="talker", description="Talks.", model=FunctionChatModel(reply=reply))
    app = create_supervisor([worker], router=_once("talker")).compile(checkpointer=InMemorySaver())
    config, _ = _traced(provider)
    if mode == "invoke":
        app.invoke(ask(), config)
    else:
        await app.ainvoke(ask(), config)
    spans = exporter.get_finished_spans()
    (hop,) = _named(spans, "invoke_agent talker")
    (chat,) = _named(spans, "chat fake-model")
    assert chat.parent is not None and chat.parent.span_id == hop.context.span_id
    assert chat.context.trace_id == hop.context.trace_id


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_parallel_branches_model_spans_nest_under_their_own_branch(provider, exporter, mode):
    provider_tracer = trace.get_tracer("fake.provider", tracer_provider=provider)

    def talker(name: str) -> Worker:
        def reply(call: ScriptedCall) -> str:
            with provider_tracer.start_as_current_span(f"chat {name}-model"):
                return f"{name} answered."

        return Worker(name=name, description=name, model=FunctionChatModel(reply=reply))

    def fan(view: SupervisorView) -> Any:
        return "FINISH" if view.ledger else ["a", "b"]

    app = create_supervisor([talker("a"), talker("b")], router=fan, parallel=True).compile(
        checkpointer=InMemorySaver()
    )
    config, _ = _traced(provider)
    out = app.invoke(ask(), config) if mode == "invoke" else await app.ainvoke(ask(), config)
    assert out["status"] == "done"
    spans = exporter.get_finished_spans()
    for name in ("a", "b"):
        (hop,) = _named(spans, f"invoke_agent {name}")
        (chat,) = _named(spans, f"chat {name}-model")
        assert chat.parent is not None and chat.parent.span_id == hop.context.span_id


def test_a_hops_agent_carries_the_hops_traceparent_and_a_root_continues_one(provider, exporter):
    seen: list[dict[str, Any]] = []

    def remote_like(task: WorkerTask) -> str:
        seen.append(dict(get_config()["metadata"]))
        return "done"

    app = create_supervisor(
        [Worker(name="remote", description="Remote.", agent=remote_like)],
        router=_once("remote"),
    ).compile(checkpointer=InMemorySaver())
    config, _ = _traced(provider)
    app.invoke(ask(), config)
    spans = exporter.get_finished_spans()
    (hop,) = _named(spans, "invoke_agent remote")
    trace_id = format(hop.context.trace_id, "032x")
    span_id = format(hop.context.span_id, "016x")
    assert seen[0]["traceparent"].startswith(f"00-{trace_id}-{span_id}-")
    exporter.clear()

    # The remote side: a graph whose run metadata carries that traceparent joins the trace
    # beneath the hop (what a RemoteGraph's server sees in its run's metadata).
    remote = create_supervisor([_leaf("leaf")], router=_once("leaf")).compile(
        checkpointer=InMemorySaver()
    )
    config, _ = _traced(provider)
    config["metadata"] = {"traceparent": seen[0]["traceparent"]}
    remote.invoke(ask(), config)
    remote_spans = exporter.get_finished_spans()
    (root,) = [s for s in remote_spans if s.name == "invoke_agent LangGraph"]
    assert root.parent is not None and root.parent.span_id == hop.context.span_id
    assert {s.context.trace_id for s in remote_spans} == {hop.context.trace_id}


def test_a_run_inside_a_callers_span_joins_its_trace(provider, exporter):
    caller = trace.get_tracer("caller", tracer_provider=provider)
    config, _ = _traced(provider)
    with caller.start_as_current_span("http request") as outer:
        _flat_team().invoke(ask(), config)
        assert trace.get_current_span() is outer  # the run leaves the caller's context
    assert not trace.get_current_span().get_span_context().is_valid
    spans = exporter.get_finished_spans()
    (root,) = _named(spans, "invoke_agent LangGraph")
    assert root.parent is not None and root.parent.span_id == outer.get_span_context().span_id


def test_no_span_means_no_trace_context():
    assert trace_context_metadata() == {}


# -- without OpenTelemetry ----------------------------------------------------------------------


def test_the_package_runs_without_opentelemetry_installed():
    script = textwrap.dedent(
        """
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "opentelemetry" or name.startswith("opentelemetry."):
                    raise ImportError(f"blocked: {name}")
                return None

        sys.meta_path.insert(0, Block())
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph_supervisor_pro import Worker, create_supervisor
        import langgraph_supervisor_pro.observability as obs
        from langgraph_supervisor_pro.observability._propagation import trace_context_metadata

        assert trace_context_metadata() == {}
        worker = Worker(name="a", description="A.", agent=lambda task: "ok")
        app = create_supervisor(
            [worker], router=lambda view: "FINISH" if view.ledger else "a"
        ).compile(checkpointer=InMemorySaver())
        out = app.invoke(
            {"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t"}}
        )
        assert out["status"] == "done", out
        assert not any(m.startswith("opentelemetry") for m in sys.modules)
        try:
            obs.OTelCallbackHandler
        except ImportError as exc:
            print("refused:", exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "refused: OTelCallbackHandler needs OpenTelemetry: " in done.stdout
    assert 'pip install "langgraph-supervisor-pro[otel]"' in done.stdout


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_refused_tool_call_is_an_execute_tool_error_span_without_its_arguments(
    provider, exporter, mode
):
    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return f"order {order_id} shipped"

    worker = _tool_worker(lookup, calls=[{"name": "refund", "args": {"amount": SECRET_TASK}}])
    app = create_supervisor([worker], router=_once("clerk")).compile(checkpointer=InMemorySaver())
    config, _ = _traced(provider)
    out = app.invoke(ask(), config) if mode == "sync" else await app.ainvoke(ask(), config)
    assert out["ledger"][0]["refused"] == ["refund"]
    spans = exporter.get_finished_spans()
    (hop,) = _named(spans, "invoke_agent clerk")
    (refused,) = _named(spans, "execute_tool refund")
    assert refused.parent is not None and refused.parent.span_id == hop.context.span_id
    assert refused.context.trace_id == hop.context.trace_id
    assert refused.status.status_code is StatusCode.ERROR
    attributes = dict(refused.attributes or {})
    assert attributes["lgsp.refused"] is True
    assert attributes["lgsp.refusal.reason"] == "not in the worker's allowlist"
    assert attributes["error.type"] == "refused"
    assert attributes["gen_ai.tool.call.id"] == "c0"
    assert attributes["gen_ai.conversation.id"] == config["configurable"]["thread_id"]
    assert "gen_ai.tool.call.arguments" not in attributes
    assert not any(SECRET_TASK in str(v) for s in spans for v in (s.attributes or {}).values())


def test_a_refused_tool_call_carries_its_arguments_with_capture_content(provider, exporter):
    worker = _tool_worker(calls=[{"name": "refund", "args": {"amount": 30}}])
    app = create_supervisor([worker], router=_once("clerk")).compile(checkpointer=InMemorySaver())
    config, _ = _traced(provider, capture_content=True)
    app.invoke(ask(), config)
    (refused,) = _named(exporter.get_finished_spans(), "execute_tool refund")
    assert "30" in str(refused.attributes["gen_ai.tool.call.arguments"])


def test_other_custom_events_make_no_span(provider, exporter):
    from langchain_core.callbacks import dispatch_custom_event

    def work(task: WorkerTask) -> str:
        dispatch_custom_event("progress", {"tool": "refund"})
        return "done"

    app = create_supervisor(
        [Worker(name="clerk", description="Works.", agent=work)], router=_once("clerk")
    ).compile(checkpointer=InMemorySaver())
    config, _ = _traced(provider)
    app.invoke(ask(), config)
    assert not [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool")]


# -- tokens and cost ------------------------------------------------------------------------

_USAGE_KEYS = ("gen_ai.usage.", "gen_ai.request.", "gen_ai.response.", "gen_ai.provider.")


def _usage(span: ReadableSpan) -> dict[str, Any]:
    return {
        k: v
        for k, v in (span.attributes or {}).items()
        if k.startswith(_USAGE_KEYS) or k.startswith("lgsp.cost")
    }


def test_a_hop_decision_and_synthesis_carry_the_tokens_and_cost_they_recorded(provider, exporter):
    """Summed from the `usage` entries each node wrote: cost only when every call was priced."""
    config, _ = _traced(provider)
    app = spend_app(InMemorySaver(), SPEND_TURNS)
    for turn in (1, 2):
        app.invoke(ask(f"Task {turn}"), config)
    spans = exporter.get_finished_spans()
    decisions = _named(spans, "invoke_agent supervisor")
    hops = _named(spans, "invoke_agent billing")
    syntheses = _named(spans, "invoke_agent synthesis")
    assert (len(decisions), len(hops), len(syntheses)) == (2, 2, 2)
    gpt = {
        "gen_ai.request.model": "gpt-4.1",
        "gen_ai.response.model": "gpt-4.1",
        "gen_ai.provider.name": "openai",
    }
    # Turn 1's hop: two models, one of them unpriced: no cost, no model, the count.
    assert _usage(hops[0]) == {
        "gen_ai.usage.input_tokens": 610,
        "gen_ai.usage.output_tokens": 90,
        "lgsp.cost.unpriced_calls": 1,
    }
    assert _usage(hops[1]) == {
        "gen_ai.usage.input_tokens": 500,
        "gen_ai.usage.output_tokens": 80,
        "lgsp.cost": 0.0016,
        **gpt,
    }
    assert hops[1].attributes["lgsp.status"] == "failed"
    # A decision (a Command) and a synthesis (a dict update) the same way.
    assert _usage(decisions[0]) == {
        "gen_ai.usage.input_tokens": 130,
        "gen_ai.usage.output_tokens": 20,
        "lgsp.cost": 0.00042,
        **gpt,
    }
    assert decisions[0].attributes["lgsp.route"] == ("billing",)
    assert _usage(syntheses[0])["lgsp.cost"] == 0.001
    assert _usage(syntheses[1]) == {}  # it made no call
    # The spans' sums are the recorded calls' (the run's root span adds none of its own).
    recorded = app.get_state(config).values["usage"]
    assert not any(_usage(root) for root in _named(spans, "invoke_agent LangGraph"))
    for name in ("input_tokens", "output_tokens"):
        on_spans = sum((s.attributes or {}).get(f"gen_ai.usage.{name}", 0) for s in spans)
        assert on_spans == sum(e[name] for e in recorded)


def test_entries_of_an_older_thread_count_their_tokens_as_input_and_unpriced(provider, exporter):
    config, _ = _traced(provider)
    spend_app(InMemorySaver(), OLD_TURNS).invoke(ask("Task 1"), config)
    (hop,) = _named(exporter.get_finished_spans(), "invoke_agent billing")
    assert _usage(hop) == {
        "gen_ai.usage.input_tokens": 570,
        "gen_ai.usage.output_tokens": 0,
        "lgsp.cost.unpriced_calls": 2,
    }


def test_a_real_runs_hop_spans_carry_their_model_tokens_and_cost(provider, exporter):
    config, _ = _traced(provider)
    app = budgeted_team(max_tokens=150, warn_at=1.0).compile(checkpointer=InMemorySaver())
    out = app.invoke(ask(), config)
    assert out["halt_reason"] == "budget_exceeded"
    spans = exporter.get_finished_spans()
    (researcher, *_), (writer,) = (
        _named(spans, "invoke_agent researcher"),
        _named(spans, "invoke_agent writer"),
    )
    first, second = out["usage"][:2]
    assert (first["worker"], second["worker"]) == ("researcher", "writer")
    assert _usage(researcher) == {
        "gen_ai.usage.input_tokens": first["input_tokens"],
        "gen_ai.usage.output_tokens": first["output_tokens"],
        "lgsp.cost": first["cost"],
        "gen_ai.request.model": "small",
        "gen_ai.response.model": "small",
        "gen_ai.provider.name": "functionchatmodel",
    }
    assert _usage(writer) == {
        "gen_ai.usage.input_tokens": second["input_tokens"],
        "gen_ai.usage.output_tokens": second["output_tokens"],
        "lgsp.cost.unpriced_calls": 1,  # big has no price: no cost, not a free one
        "gen_ai.request.model": "big",
        "gen_ai.response.model": "big",
        "gen_ai.provider.name": "functionchatmodel",
    }
    on_spans = sum((s.attributes or {}).get("gen_ai.usage.output_tokens", 0) for s in spans)
    assert on_spans == sum(e["output_tokens"] for e in out["usage"])

import inspect
import math
from dataclasses import dataclass

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.tools import tool
from langchain_core.tracers.base import BaseTracer
from langgraph.config import get_stream_writer
from langgraph.runtime import get_runtime
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, routes, thread
from tests.test_supervisor import decisions, w

# ----------------------------------------------------------------------- build-time errors


@pytest.mark.parametrize(
    ("workers", "kwargs", "error", "match"),
    [
        ([], {}, ValueError, "workers: give at least one Worker"),
        (["a"], {}, TypeError, r"workers\[0\]"),
        ("a", {}, TypeError, "workers: give a list"),
        ([w("a"), w("a")], {}, ValueError, r"duplicate worker names \['a'\]"),
        ([w("supervisor")], {}, ValueError, "taken by the graph"),
        ([w("synthesis")], {}, ValueError, "taken by the graph"),
        ([w("review")], {}, ValueError, "taken by the graph"),
        ([w("compaction")], {}, ValueError, "taken by the graph"),
        ([w("a")], {"name": "review"}, ValueError, "name"),
        ([w("a")], {"fallback": "b"}, ValueError, "fallback: 'b' is not one of the workers"),
        ([w("a")], {"max_steps": 0}, ValueError, "max_steps"),
        ([w("a")], {"max_steps": True}, ValueError, "max_steps"),
        ([w("a")], {"model": None, "router": None}, ValueError, "model: give a chat model"),
        ([w("a")], {"router": "a"}, TypeError, "router"),
        ([w("a")], {"ping_pong_window": 2}, ValueError, "ping_pong_window"),
        ([w("a")], {"ledger_window": 0}, ValueError, "ledger_window"),
        ([w("a")], {"name": "synthesis"}, ValueError, "name"),
        ([w("a")], {"synthesizer": 42}, TypeError, "synthesizer"),
        ([w("a")], {"supervisor_retry": 3}, TypeError, "supervisor_retry: got int"),
        ([w("a")], {"context_schema": {}}, TypeError, "context_schema: got dict"),
        (
            [w("a")],
            {"supervisor_retry": RetryPolicy(max_attempts=0)},
            ValueError,
            r"supervisor_retry\.max_attempts: got 0; give an integer >= 1",
        ),
        (
            [w("a")],
            {"supervisor_retry": RetryPolicy(initial_interval=-1.0)},
            ValueError,
            r"supervisor_retry\.initial_interval: got -1\.0; give a number of seconds >= 0",
        ),
    ],
)
def test_bad_configuration_fails_at_build_time(workers, kwargs, error, match):
    kwargs = {"router": routes("a"), **kwargs}
    with pytest.raises(error, match=match):
        create_supervisor(workers, **kwargs)


@pytest.mark.parametrize(
    ("retry", "field"),
    [
        (RetryPolicy(max_interval=-1), "max_interval"),
        (RetryPolicy(initial_interval=math.nan), "initial_interval"),
        (RetryPolicy(max_interval=math.inf), "max_interval"),
        (RetryPolicy(backoff_factor=0.5), "backoff_factor"),
        (RetryPolicy(backoff_factor=math.nan), "backoff_factor"),
        (RetryPolicy(backoff_factor=math.inf), "backoff_factor"),
        (RetryPolicy(max_attempts=2.5), "max_attempts"),  # type: ignore[arg-type]
        (RetryPolicy(max_attempts=True), "max_attempts"),
        (RetryPolicy(jitter="no"), "jitter"),  # type: ignore[arg-type]
        (RetryPolicy(retry_on="ValueError"), "retry_on"),  # type: ignore[arg-type]
    ],
)
def test_supervisor_retry_values_that_would_fail_mid_run(retry, field):
    # LangGraph takes these and fails when the supervisor or synthesis is first retried.
    with pytest.raises(ValueError, match=rf"^supervisor_retry\.{field}: got .*; give "):
        create_supervisor([w("a")], router=routes("a"), supervisor_retry=retry)


def test_finish_and_unsupported_agents_fail_when_the_worker_is_declared():
    with pytest.raises(ValueError, match="reserved"):
        Worker(name="FINISH", description="d", agent=lambda t: "x")
    with pytest.raises(TypeError, match="not supported"):
        Worker(name="a", description="d", agent=object())


def test_supervisor_retry_replaces_the_supervisor_and_synthesis_policies():
    default = create_supervisor([w("a")], router=routes("a"))
    assert default.nodes["supervisor"].retry_policy == RetryPolicy(max_attempts=3)
    assert default.nodes["synthesis"].retry_policy == RetryPolicy(max_attempts=2)
    now = RetryPolicy(max_attempts=4, initial_interval=0.0, jitter=False)
    graph = create_supervisor([w("a")], router=routes("a"), supervisor_retry=now)
    assert graph.nodes["supervisor"].retry_policy is now
    assert graph.nodes["synthesis"].retry_policy is now


def test_the_context_schema_is_the_graphs():
    @dataclass
    class Context:
        user_id: str

    seen: list[object] = []

    def read(task: WorkerTask) -> str:
        seen.append(get_runtime().context)
        return "ok"

    graph = create_supervisor([w("a", read)], router=routes("a"), context_schema=Context)
    assert graph.context_schema is Context
    assert create_supervisor([w("a")], router=routes("a")).context_schema is None
    app = graph.compile()
    app.invoke(ask(), context={"user_id": "u-1"})  # a dict becomes the schema's type
    assert seen == [Context(user_id="u-1")]


def test_model_without_structured_output_is_refused():
    class NoStructured(ScriptedChatModel):
        def with_structured_output(self, *a, **k):
            raise NotImplementedError

    with pytest.raises(TypeError, match="cannot produce structured output"):
        create_supervisor([w("a")], model=NoStructured(script=[]))


def test_signature_is_keyword_only_after_workers():
    params = inspect.signature(create_supervisor).parameters
    assert list(params)[:9] == [
        "workers",
        "model",
        "router",
        "prompt",
        "max_steps",
        "fallback",
        "synthesizer",
        "name",
        "ledger_window",
    ]
    assert all(p.kind is p.KEYWORD_ONLY for n, p in params.items() if n != "workers")


def test_mermaid_shows_every_node_and_route():
    graph = create_supervisor([w("researcher"), w("writer")], router=routes()).compile()
    mermaid = graph.get_graph().draw_mermaid()
    for node in ("supervisor", "researcher", "writer", "synthesis"):
        assert f"\t{node}(" in mermaid
    for edge in (
        "supervisor -.-> researcher",
        "supervisor -.-> writer",
        "supervisor -.-> synthesis",
        "researcher --> supervisor",
        "writer --> supervisor",
        "synthesis -.-> __end__",
        # LangGraph's error-handler nodes, where they sit (drawn only: see the builder)
        "supervisor -.-> __error_handler__supervisor",
        "__error_handler__supervisor --> synthesis",
        "synthesis -.-> __error_handler__synthesis",
        "__error_handler__synthesis --> __end__",
    ):
        assert f"\t{edge};\n" in mermaid


# ----------------------------------------------------------------------- real agents


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts on {topic}: 42"


def _agent_worker():
    model = ScriptedChatModel(
        script=[
            AIMessage(
                content="", tool_calls=[{"name": "lookup", "args": {"topic": "cats"}, "id": "c1"}]
            ),
            "Cats sleep sixteen hours a day.",
        ]
    )
    return create_agent(model, tools=[lookup]), model


def test_create_agent_worker_end_to_end_sync_and_history_is_scoped():
    agent, agent_model = _agent_worker()
    sup = ScriptedChatModel(script=decisions("researcher", "FINISH"))
    app = compile_team(
        [
            Worker(
                name="researcher",
                description="Looks things up.",
                agent=agent,
                tools=[lookup],
                risks={"lookup": "low"},
            )
        ],
        model=sup,
    )
    out = app.invoke(ask("Tell me about cats"), thread())
    assert out["status"] == "done"
    assert out["messages"][-1].content == "Cats sleep sixteen hours a day."
    slot = out["workers"]["researcher"]["messages"]
    assert [m.type for m in slot] == ["human", "ai", "tool", "ai"]
    assert slot[0].content == "Task: Tell me about cats\n\nInstructions for you: please researcher"
    # The agent saw only its task, never the supervisor's prompt or the user's raw thread.
    first_call = agent_model.calls[0].messages
    assert [m.type for m in first_call] == ["human"]
    assert agent_model.calls[0].tools == ("lookup",)


async def test_create_agent_worker_end_to_end_async():
    agent, _ = _agent_worker()
    sup = ScriptedChatModel(script=decisions("researcher", "FINISH"))
    app = compile_team([Worker(name="researcher", description="Looks.", agent=agent)], model=sup)
    out = await app.ainvoke(ask(), thread())
    assert out["messages"][-1].content == "Cats sleep sixteen hours a day."


# ----------------------------------------------------------------------- streaming


def _streaming_team():
    agent, _ = _agent_worker()

    def analyst(task: WorkerTask) -> str:
        writer = get_stream_writer()
        writer({"worker": "analyst", "progress": 0.5})
        writer({"worker": "analyst", "progress": 1.0})
        return "analysis done"

    sup = ScriptedChatModel(script=decisions("researcher", "analyst", "FINISH"))
    return compile_team(
        [
            Worker(name="researcher", description="Looks.", agent=agent),
            Worker(name="analyst", description="Analyses.", agent=analyst),
        ],
        model=sup,
    )


def _check_stream(chunks):
    tokens = [
        (ns, c[0])
        for ns, mode, c in chunks
        if mode == "messages"
        and isinstance(c[0], AIMessageChunk)
        and c[1].get("lgsp_worker") == "researcher"
    ]
    text = "".join(str(chunk.content) for _, chunk in tokens)
    assert "Cats sleep sixteen hours a day." in text
    assert len(tokens) > 3  # token by token, not one blob
    assert all(ns and ns[0].startswith("researcher:") for ns, _ in tokens)
    custom = [c for ns, mode, c in chunks if mode == "custom"]
    assert custom == [
        {"worker": "analyst", "progress": 0.5},
        {"worker": "analyst", "progress": 1.0},
    ]
    updates = [c for ns, mode, c in chunks if mode == "updates" and ns == ()]
    assert [next(iter(u)) for u in updates] == [
        "supervisor",
        "researcher",
        "supervisor",
        "analyst",
        "supervisor",
        "synthesis",
    ]


def test_stream_reaches_worker_tokens_and_custom_events():
    app = _streaming_team()
    chunks = list(
        app.stream(ask(), thread(), stream_mode=["updates", "messages", "custom"], subgraphs=True)
    )
    _check_stream(chunks)


async def test_astream_reaches_worker_tokens_and_custom_events():
    app = _streaming_team()
    chunks = [
        c
        async for c in app.astream(
            ask(), thread(), stream_mode=["updates", "messages", "custom"], subgraphs=True
        )
    ]
    _check_stream(chunks)


# ----------------------------------------------------------------------- tracing


class Collect(BaseTracer):
    def __init__(self):
        super().__init__()
        self.roots = []

    def _persist_run(self, run):
        self.roots.append(run)


def _walk(run, depth=0):
    yield depth, run
    for child in run.child_runs:
        yield from _walk(child, depth + 1)


def test_each_node_is_a_named_run_with_delegation_metadata():
    agent, _ = _agent_worker()
    sup = ScriptedChatModel(script=decisions("researcher", "writer", "FINISH"))
    app = compile_team(
        [Worker(name="researcher", description="Looks.", agent=agent), w("writer")], model=sup
    )
    tracer = Collect()
    app.invoke(ask(), {**thread(), "callbacks": [tracer]})
    (root,) = tracer.roots
    top = [r for d, r in _walk(root) if d == 1]
    assert [r.name for r in top] == [
        "supervisor",
        "researcher",
        "supervisor",
        "writer",
        "supervisor",
        "synthesis",
    ]
    meta = [r.extra["metadata"] for r in top]
    assert meta[0]["lgsp_role"] == "supervisor"
    assert meta[1]["lgsp_role"] == "worker" and meta[1]["lgsp_worker"] == "researcher"
    assert meta[5]["lgsp_role"] == "synthesis"
    # The routing decision's model call carries the hop number; the worker's agent run
    # carries the hop, the worker and the supervisor's instructions.
    model_calls = [r for d, r in _walk(top[2]) if r.run_type == "llm"]
    assert model_calls[0].extra["metadata"]["lgsp_step"] == 2
    agent_run = next(r for d, r in _walk(top[1]) if d == 2)
    assert agent_run.extra["metadata"]["lgsp_step"] == 1
    assert agent_run.extra["metadata"]["lgsp_instructions"] == "please researcher"
    assert top[0].outputs is not None

"""The typed hop context: what the worker node passes to its agent, and who reads it."""

import uuid
from dataclasses import replace
from datetime import datetime, timedelta

import psycopg
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_supervisor_pro import ReviewPolicy, Worker, create_supervisor
from langgraph_supervisor_pro._internal.hop import (
    HOP_CONFIG_KEY,
    HopContext,
    first_human_text,
    hop_context,
    prompt_digest,
    url_id,
    with_hop,
)
from langgraph_supervisor_pro.persistence._checkpointers import open_checkpointer
from langgraph_supervisor_pro.review._guard import ToolGuard
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, routes, thread

SEEN: list[HopContext | None] = []


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    SEEN.append(hop_context())
    return f"order {order_id}: 30 EUR"


@tool
def refund(order_id: str, amount: int) -> str:
    """Refund an order."""
    return f"refunded {amount} on {order_id}"


RISKS = {"lookup": "low", "refund": "high"}


def _call(name, args, call_id):
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def test_with_hop_and_hop_context_round_trip():
    hop = HopContext(
        worker="w", step=2, turn=3, task="T", instructions="i", dispatched_at=None, tier="manual"
    )
    config = with_hop({"configurable": {"thread_id": "t"}}, hop)
    assert hop_context(config) == hop and config["configurable"]["thread_id"] == "t"
    assert hop_context({"configurable": {HOP_CONFIG_KEY: {"worker": "w"}}}) is None
    assert hop_context() is None  # outside a runnable: no hop


def test_first_human_text():
    assert first_human_text([AIMessage("a")]) == ""
    assert first_human_text([AIMessage("a"), ("human", "x")]) == ""  # tuples are not messages
    from langchain_core.messages import HumanMessage

    assert first_human_text([AIMessage("a"), HumanMessage("b"), HumanMessage("c")]) == "b"


def test_guard_and_review_get_the_hop_and_checkpoints_do_not_keep_it(pg_database):
    SEEN.clear()
    model = ScriptedChatModel(
        script=[
            _call("lookup", {"order_id": "A1"}, "c1"),
            _call("refund", {"order_id": "A1", "amount": 30}, "c2"),
            "done",
        ]
    )
    worker = Worker(
        name="billing", description="B.", model=model, tools=[lookup, refund], risks=RISKS
    )
    policy = ReviewPolicy(tier="supervised", review_timeout=600)
    graph = create_supervisor([worker], router=routes("billing"), review=policy)
    config = thread()
    with open_checkpointer(pg_database) as saver:
        app = graph.compile(checkpointer=saver)
        out = app.invoke(ask("Refund order A1\n\nwithin a day"), config)
        route = app.get_state(config).values["route"]
    hop = SEEN[0]
    assert hop == HopContext(
        worker="billing",
        step=1,
        turn=1,
        task="Refund order A1\n\nwithin a day",
        instructions=route["instructions"],
        dispatched_at=route["at"],
        tier="supervised",
        path=("billing",),
        digest=prompt_digest("Task: Refund order A1\n\nwithin a day"),
    )
    context = out["__interrupt__"][0].value["context"]
    deadline = datetime.fromisoformat(route["at"]) + timedelta(seconds=600)
    assert (context["task"], context["step"], context["turn"], context["tier"]) == (
        "Refund order A1 within a day",
        1,
        1,
        "supervised",
    )
    assert context["deadline"] == deadline.isoformat()
    with psycopg.connect(pg_database) as conn:
        rows = conn.execute("SELECT checkpoint_ns, metadata::text FROM checkpoints").fetchall()
    assert any(ns for ns, _ in rows), "the worker's agent checkpoints in its own namespace"
    # LangGraph copies primitive config values (the trace metadata) into checkpoint
    # metadata, but not the hop context, which is not one.
    assert any('"lgsp_step"' in text for ns, text in rows if ns)
    assert all(HOP_CONFIG_KEY not in text and "HopContext" not in text for _, text in rows)


def test_guard_outside_a_supervisor_graph_uses_the_first_human_message():
    guard = ToolGuard(
        worker="billing",
        tools=[lookup, refund],
        risks=RISKS,
        policy=ReviewPolicy(tier="supervised"),
    )
    model = ScriptedChatModel(script=[_call("refund", {"order_id": "A1", "amount": 30}, "c1")])
    agent = create_agent(
        model, tools=[lookup, refund], middleware=[guard], checkpointer=InMemorySaver()
    )
    out = agent.invoke({"messages": [("user", "Refund order A1")]}, thread())
    context = out["__interrupt__"][0].value["context"]
    assert (context["task"], context["tier"], context["step"], context["turn"]) == (
        "Refund order A1",
        "supervised",
        None,
        None,
    )
    assert context["summary"] == "Hop ?"  # no hop, no instructions


def test_effect_key_inside_a_hop_reads_the_hop_not_the_trace_metadata():
    from langgraph_supervisor_pro.persistence import effect_key

    hop = HopContext(
        worker="mailer", step=3, turn=2, task="T", instructions="", dispatched_at=None, tier=None
    )
    config = with_hop(
        {"configurable": {"thread_id": "t-1"}, "metadata": {"lgsp_step": 9, "lgsp_worker": "x"}},
        hop,
    )
    assert effect_key("send-email", config=config) == "t-1/2/3/mailer/send-email"
    # With the prompt's digest (what the worker node passes), the key carries it.
    digested = with_hop(config, replace(hop, digest=prompt_digest("Task: T")))
    assert effect_key("send-email", config=digested) == (
        f"t-1/2/3/mailer@{prompt_digest('Task: T')}/send-email"
    )


def test_compaction_middleware_task_comes_from_the_hop_not_the_prompt_text():
    from langchain_core.messages import HumanMessage
    from langchain_core.runnables import RunnableLambda

    from langgraph_supervisor_pro.compaction._middleware import _task

    messages = [HumanMessage("Task: not parsed\n\nInstructions for you: x"), HumanMessage("y")]
    # An agent used on its own: its first human message.
    assert _task(messages) == "Task: not parsed\n\nInstructions for you: x"
    hop = HopContext(
        worker="w",
        step=1,
        turn=1,
        task="The real task",
        instructions="x",
        dispatched_at=None,
        tier=None,
    )

    def read(_: object) -> str:
        return _task(messages)

    inside = RunnableLambda(read).invoke(None, with_hop({}, hop))
    assert inside == "The real task"


@settings(max_examples=300)
@given(seed=st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_url_id_is_uuid5_of_the_url_namespace(seed: str) -> None:
    assert url_id(seed) == str(uuid.uuid5(uuid.NAMESPACE_URL, seed))

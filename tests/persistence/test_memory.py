import json

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from langgraph_supervisor_pro import Worker, WorkerResult, create_supervisor, open_store
from langgraph_supervisor_pro.persistence._memory import (
    output_key,
    output_namespace,
    recall_tool,
    stored_value,
)
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, routes, thread
from tests.test_supervisor import BIG, w


def compile_with_store(workers, store=None, **kwargs):
    store = store if store is not None else InMemoryStore()
    graph = create_supervisor(list(workers), **kwargs)
    return graph.compile(checkpointer=InMemorySaver(), store=store), store


def test_full_outputs_go_to_the_store_and_state_keeps_references():
    app, store = compile_with_store(
        [
            w("a", lambda t: WorkerResult(status="success", result="A" + BIG, summary="a done")),
            w("b", lambda t: {"table": [1, 2, 3]}),
        ],
        router=routes("a", "b", "a"),
    )
    config = thread()
    out = app.invoke(ask(), config)
    thread_id = config["configurable"]["thread_id"]
    # state holds no blob
    state_text = json.dumps(out["workers"], default=str)
    assert "A" + BIG not in state_text
    first = out["workers"]["a"]["results"][0]
    assert first["result"] is None and first["summary"] == "a done"
    assert first["ref"] == {
        "namespace": list(output_namespace(thread_id, "a")),
        "key": "t00001.s00001",
    }
    assert [m.content for m in out["workers"]["a"]["messages"] if m.type == "ai"] == [
        "a done",
        "a done",
    ]
    # the store holds the full outputs, keyed by thread, worker and step
    item = store.get(output_namespace(thread_id, "a"), "t00001.s00001")
    assert item.value["result"] == "A" + BIG and item.value["step"] == 1
    assert store.get(output_namespace(thread_id, "b"), "t00001.s00002").value["result"] == {
        "table": [1, 2, 3]
    }
    assert len(store.search(output_namespace(thread_id, "a"))) == 2
    # synthesis reads the full output back from the store
    assert out["messages"][-1].content == "A" + BIG


async def test_async_run_writes_and_reads_the_store():
    app, _ = compile_with_store([w("a", lambda t: "A" + BIG)], router=routes("a"))
    config = thread()
    out = await app.ainvoke(ask(), config)
    assert out["workers"]["a"]["results"][0]["ref"]["key"] == "t00001.s00001"
    assert out["messages"][-1].content == "A" + BIG


def test_reads_gives_a_worker_the_latest_output_of_another():
    seen = []

    def analyst(task):
        seen.append(task.reads)
        return "analysis"

    for store in (InMemoryStore(), None):
        seen.clear()
        workers = [
            w("research", lambda t: f"FACTS-{t.step} " + BIG),
            Worker(name="analyst", description="Analyses.", agent=analyst, reads=["research"]),
        ]
        if store is None:
            app = create_supervisor(
                workers, router=routes("analyst", "research", "research", "analyst")
            ).compile()
        else:
            app, _ = compile_with_store(
                workers, store, router=routes("analyst", "research", "research", "analyst")
            )
        app.invoke(ask(), thread())
        assert seen[0] == {}  # nothing to read yet
        latest = seen[1]["research"]
        assert latest.result.startswith("FACTS-3 ")  # the latest, in full
        assert latest.status == "success"


def test_reads_appear_in_an_agents_prompt():
    model = ScriptedChatModel(script=["done"])
    agent = create_agent(model, tools=[])
    app, _ = compile_with_store(
        [
            w("research", lambda t: "FACT-42"),
            Worker(name="writer", description="Writes.", agent=agent, reads=["research"]),
        ],
        router=routes("research", "writer"),
    )
    app.invoke(ask(), thread())
    prompt = model.calls[0].messages[-1].content
    assert "Latest output of research (success):\nFACT-42" in prompt


def recall(call_id: str, **args: object) -> AIMessage:
    """An agent's call of `recall_output` with these arguments."""
    return AIMessage(
        content="", tool_calls=[{"name": "recall_output", "args": args, "id": call_id}]
    )


def test_recall_tool_reads_earlier_outputs_in_this_thread():
    calls = [
        recall("r1", worker="research"),
        recall("r2", worker="research", step=1),
        recall("r3", worker="nobody"),
        "written",
    ]
    model = ScriptedChatModel(script=calls)
    agent = create_agent(model, tools=[recall_tool()])
    app, _ = compile_with_store(
        [w("research", lambda t: f"FACT-{t.step}"), w("writer", agent)],
        router=routes("research", "research", "writer"),
    )
    out = app.invoke(ask(), thread())
    tool_results = [m.content for m in out["workers"]["writer"]["messages"] if m.type == "tool"]
    assert tool_results[0].endswith("FACT-2")  # latest
    assert "hop 1" in tool_results[1] and tool_results[1].endswith("FACT-1")
    assert tool_results[2] == "No stored output from 'nobody' yet."
    # another thread sees nothing of this one
    other = app.invoke(ask(), thread())
    assert other["status"] == "done"


def test_missing_store_blob_is_reported_not_fatal():
    app, store = compile_with_store([w("a", lambda t: "A")], router=routes("a"))
    config = thread()
    out = app.invoke(ask(), config)
    ref = out["workers"]["a"]["results"][0]["ref"]
    store.delete(tuple(ref["namespace"]), ref["key"])
    from langgraph_supervisor_pro.persistence._memory import load_result

    result = load_result(store, out["workers"]["a"]["results"][0])
    assert result.result is None and "missing from the store" in result.error


def test_reads_must_name_workers():
    with pytest.raises(ValueError, match=r"Worker.reads: worker 'a' reads \['ghost'\]"):
        create_supervisor(
            [Worker(name="a", description="d", agent=lambda t: "x", reads=["ghost"])],
            router=routes(),
        )
    with pytest.raises(ValueError, match=r"Worker\.reads"):
        Worker(name="a", description="d", agent=lambda t: "x", reads="b")


def test_thread_ids_with_dots_work_with_a_store():
    app, store = compile_with_store([w("a", lambda t: "A")], router=routes("a"))
    out = app.invoke(ask(), {"configurable": {"thread_id": "run.1%x"}})
    assert out["status"] == "done" and out["ledger"][0]["status"] == "success"
    assert output_namespace("run.1%x", "a") == ("lgsp", "outputs", "run%2E1%25x", "a")
    assert store.search(output_namespace("run.1%x", "a"))[0].value["result"] == "A"


def test_a_stored_value_holds_only_storable_text():
    result = WorkerResult.model_construct(
        status="success", result={"k\x00": "v\ud800"}, summary="s"
    )
    value = stored_value("w", 1, 2, "do\x00it", result)
    assert value["instructions"] == "do\ufffdit" and value["result"] == {"k\ufffd": "v\ufffd"}


def test_a_result_that_cannot_be_stored_reaches_the_store_replaced():
    app, store = compile_with_store([w("a", lambda t: "res\x00ult")], router=routes("a"))
    config = thread()
    out = app.invoke(ask(), config)
    item = store.get(output_namespace(config["configurable"]["thread_id"], "a"), "t00001.s00001")
    assert item is not None and item.value["result"] == "res\ufffdult"
    assert out["messages"][-1].content == "res\ufffdult"


@pytest.fixture(params=["memory", "postgres"])
def big_store(request):
    """A store with 1,005 earlier outputs of `research` (turn 0) for one thread."""
    config = thread()
    namespace = output_namespace(config["configurable"]["thread_id"], "research")
    ops = [
        PutOp(
            namespace,
            output_key(0, step),
            stored_value(
                "research", 0, step, "", WorkerResult(status="success", result=f"OLD-{step}")
            ),
        )
        for step in range(1, 1006)
    ]
    if request.param == "memory":
        memory = InMemoryStore()
        memory.batch(ops)
        yield memory, config
        return
    with open_store(request.getfixturevalue("pg_database")) as store:
        store.batch(ops)
        yield store, config


def test_recall_reads_every_page_of_a_long_threads_outputs(big_store):
    """Past a page of outputs: the latest, and an early hop, are both found."""
    store, config = big_store
    calls = [
        recall("r1", worker="research"),
        recall("r2", worker="research", step=3),
        recall("r3", worker="research", step=1004),
        "written",
    ]
    agent = create_agent(ScriptedChatModel(script=calls), tools=[recall_tool()])
    graph = create_supervisor(
        [w("research", lambda t: f"FACT-{t.step}"), w("writer", agent)],
        router=routes("research", "writer"),
    )
    app = graph.compile(checkpointer=InMemorySaver(), store=store)
    out = app.invoke(ask(), config)
    tool_results = [m.content for m in out["workers"]["writer"]["messages"] if m.type == "tool"]
    assert "turn 1, hop 1" in tool_results[0] and tool_results[0].endswith("FACT-1")  # latest
    assert "turn 0, hop 3" in tool_results[1] and tool_results[1].endswith("OLD-3")
    assert "turn 0, hop 1004" in tool_results[2] and tool_results[2].endswith("OLD-1004")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_store_without_a_checkpointer_keeps_outputs_in_state(mode):
    # No checkpointer: no thread to file outputs under, and two such runs would share one.
    import asyncio

    seen = []

    def analyst(task):
        seen.append(task.reads)
        return "analysis"

    store = InMemoryStore()
    workers = [
        w("research", lambda t: f"FACTS-{t.step} " + BIG),
        Worker(name="analyst", description="Analyses.", agent=analyst, reads=["research"]),
    ]
    app = create_supervisor(workers, router=routes("research", "analyst")).compile(store=store)
    out = app.invoke(ask()) if mode == "sync" else asyncio.run(app.ainvoke(ask()))
    first = out["workers"]["research"]["results"][0]
    assert first["status"] == "success" and first["result"] == "FACTS-1 " + BIG
    assert "ref" not in first
    assert seen[0]["research"].result == "FACTS-1 " + BIG
    assert out["messages"][-1].content == "analysis"
    assert store.search(("lgsp", "outputs")) == []

"""A worker node names its graph agent as its subgraph, so LangGraph sees it; no more."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import ensure_config
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.store.memory import InMemoryStore
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import Worker, WorkerTask, create_supervisor, register_secret
from langgraph_supervisor_pro._graph.node import GraphNode
from langgraph_supervisor_pro.errors import ScrubbedError
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedChatModel
from tests._helpers import ask, compile_team, routes, thread


def _function(task: WorkerTask) -> str:
    return "done. More."


def _domain() -> StateGraph[Any, Any, Any, Any]:
    return create_supervisor(
        [Worker(name="pager", description="Pages.", agent=_function)],
        router=routes("pager"),
        name="domain",
    )


def test_a_graph_agent_is_its_worker_nodes_subgraph_and_nothing_else_is():
    built = create_agent(ScriptedChatModel(script=["hi"]), tools=[])
    inner = create_agent(ScriptedChatModel(script=["hi"]), tools=[])
    wrapped = RunnableLambda(lambda payload: payload) | inner  # a graph inside a Runnable
    domain = Worker(name="domain", description="A domain.", agent=_domain())
    app = create_supervisor(
        [
            Worker(
                name="modelled", description="From a model.", model=ScriptedChatModel(script=["hi"])
            ),
            Worker(name="compiled", description="A compiled agent.", agent=built),
            domain,
            Worker(name="function", description="A function.", agent=_function),
            Worker(name="runnable", description="A Runnable.", agent=RunnableLambda(_function)),
            Worker(name="wrapped", description="A wrapped graph.", agent=wrapped),
        ],
        router=routes(),
    ).compile()
    subgraphs = dict(app.get_subgraphs())
    # Compiled graphs are, under their worker's name; functions, other Runnables (even
    # one holding a graph) and the supervisor, review and synthesis nodes are not.
    assert set(subgraphs) == {"modelled", "compiled", "domain"}
    assert subgraphs["compiled"] is built
    assert subgraphs["domain"] is domain.agent
    # Recursively, a domain's own workers' graphs too (none here: its worker is a function).
    assert set(dict(app.get_subgraphs(recurse=True))) == {"modelled", "compiled", "domain"}


def test_a_graph_agent_that_keeps_no_checkpoints_is_not_a_subgraph():
    # LangGraph's rule: a graph compiled with checkpointer=False has no state to read.
    stateless = _domain().compile(checkpointer=False)
    app = create_supervisor(
        [Worker(name="stateless", description="No checkpoints.", agent=stateless)],
        router=routes(),
    ).compile()
    assert dict(app.get_subgraphs()) == {}


class _ChainRuns(BaseCallbackHandler):
    def __init__(self) -> None:
        self.names: list[str] = []

    def on_chain_start(
        self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        self.names.append(str(kwargs.get("name")))


def test_a_graph_node_opens_no_run_of_its_own_however_it_is_called():
    def double(value: int, config: RunnableConfig) -> int:
        return value * 2

    async def adouble(value: int, config: RunnableConfig) -> int:
        return value * 2

    node: GraphNode[int, int] = GraphNode("n", double, adouble)
    runs = _ChainRuns()
    config: RunnableConfig = {"callbacks": [runs]}
    assert node.invoke(2, config) == 4
    assert list(node.stream(2, config)) == [4]
    assert list(node.transform(iter([2]), config)) == [4]

    async def run_async() -> list[int]:
        async def chunks():
            yield 2

        streamed = [c async for c in node.astream(2, config)]
        transformed = [c async for c in node.atransform(chunks(), config)]
        return [await node.ainvoke(2, config), *streamed, *transformed]

    assert asyncio.run(run_async()) == [4, 4, 4]
    assert runs.names == []
    assert node.deps == [] and node.config_specs == [] and repr(node) == "GraphNode('n')"
    assert node == node and node != GraphNode("n", double, adouble)
    assert len({node, GraphNode("n", double, adouble)}) == 2


def test_a_graph_node_gives_its_bodies_a_complete_config_and_takes_langgraphs_as_it_is():
    seen: list[RunnableConfig] = []

    def body(value: int, config: RunnableConfig) -> int:
        seen.append(config)
        return value

    async def abody(value: int, config: RunnableConfig) -> int:
        seen.append(config)
        return value

    node: GraphNode[int, int] = GraphNode("n", body, abody)
    node.invoke(1, {"configurable": {"thread_id": "t"}})  # a partial config is ensured
    node.invoke(1)
    asyncio.run(node.ainvoke(1, {"tags": ["x"]}))
    for config in seen:
        assert set(config) >= {"tags", "metadata", "callbacks", "recursion_limit", "configurable"}
    assert seen[0]["configurable"]["thread_id"] == "t" and seen[2]["tags"] == ["x"]
    complete = ensure_config({"configurable": {"thread_id": "t"}})  # as LangGraph passes it
    node.invoke(1, complete)
    asyncio.run(node.ainvoke(1, complete))
    assert seen[3] is complete and seen[4] is complete


@pytest.mark.parametrize("mode", ["invoke", "astream_events"])
def test_each_worker_hop_is_one_run_when_the_agent_is_a_subgraph(mode):
    agent = create_agent(ScriptedChatModel(script=["Found it. Details."]), tools=[], name="inner")
    app = compile_team(
        [Worker(name="researcher", description="Looks.", agent=agent)],
        router=routes("researcher"),
    )
    runs = _ChainRuns()
    config = {**thread(), "callbacks": [runs]}
    if mode == "invoke":
        out = app.invoke(ask(), config)
        assert out["status"] == "done"
    else:

        async def stream() -> None:  # LangGraph then runs each node with `astream`
            async for _ in app.astream_events(ask(), config, version="v2"):
                pass

        asyncio.run(stream())
    # LangGraph's run of each node, and the agent's own run under the worker's: the
    # node adds none of its own.
    assert runs.names == [
        "LangGraph",
        "supervisor",
        "researcher",
        "inner",
        "model",
        "supervisor",
        "synthesis",
    ]


def test_an_exception_text_that_cannot_be_stored_is_a_storable_failed_hop():
    def broken(task: WorkerTask) -> str:
        raise ValueError("bad\x00 \ud800")

    out = compile_team(
        [Worker(name="w", description="Breaks.", agent=broken)], router=routes("w")
    ).invoke(ask(), thread())
    (entry,) = out["ledger"]
    assert entry["status"] == "failed" and entry["error"] == "ValueError: bad\ufffd \ufffd"
    assert out["workers"]["w"]["results"][0]["error"] == "ValueError: bad\ufffd \ufffd"


# -- a worker's exception holding a secret --------------------------------------------------


class _Errors(BaseCallbackHandler):
    """The exceptions the runs of a graph ended with, by run name."""

    def __init__(self) -> None:
        self.errors: list[tuple[str, BaseException]] = []
        self.names: dict[UUID, str] = {}

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kw: Any) -> None:
        self.names[run_id] = kw.get("name") or ""

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self.errors.append((self.names.get(run_id, ""), error))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_function_workers_exception_leaves_its_run_scrubbed_and_retries_see_the_original(
    mode,
):
    secret = "sk-worker-0123456789"
    register_secret(secret)
    attempts: list[int] = []

    def sync_call(task: WorkerTask) -> str:
        attempts.append(task.step)
        raise ConnectionError(f"reset while sending key {secret}")

    async def async_call(task: WorkerTask) -> str:
        return sync_call(task)

    # ConnectionError is transient: the worker's three attempts all run (no waits).
    retry = RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False)
    agent = sync_call if mode == "sync" else async_call
    app = compile_team(
        [Worker(name="crm", description="Syncs.", agent=agent, retry=retry)], router=routes("crm")
    )
    errors = _Errors()
    config = {**thread(), "callbacks": [errors]}
    out = app.invoke(ask(), config) if mode == "sync" else asyncio.run(app.ainvoke(ask(), config))
    assert attempts == [1, 1, 1]
    assert out["ledger"][0]["error"] == "ConnectionError: reset while sending key ***"
    function_errors = [e for name, e in errors.errors if name == "crm.agent"]
    assert len(function_errors) == 3
    assert all(isinstance(e, ScrubbedError) for e in function_errors)
    assert {str(e) for e in function_errors} == {"ConnectionError: reset while sending key ***"}
    assert all(e.__suppress_context__ for e in function_errors)


def test_a_clean_exception_leaves_a_function_worker_as_it_is():
    def broken(task: WorkerTask) -> str:
        raise ValueError("bad input")

    app = compile_team([Worker(name="w", description="W.", agent=broken)], router=routes("w"))
    errors = _Errors()
    out = app.invoke(ask(), {**thread(), "callbacks": [errors]})
    assert out["ledger"][0]["error"] == "ValueError: bad input"
    assert [type(e) for name, e in errors.errors if name == "w.agent"] == [ValueError]


class _FlakyOutputStore(InMemoryStore):
    """A store whose writes of worker outputs fail the first `failures` times."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures
        self.puts = 0

    def put(self, namespace: tuple[str, ...], key: str, value: Any, *args: Any, **kw: Any) -> None:
        if namespace[:2] == ("lgsp", "outputs"):
            self.puts += 1
            if self.puts <= self.failures:
                raise ConnectionError("store unreachable")
        super().put(namespace, key, value, *args, **kw)


@pytest.mark.parametrize(("failures", "status"), [(1, "success"), (2, "failed")])
def test_a_failed_output_write_is_retried_then_fails_the_hop(failures, status):
    calls: list[int] = []

    def work(task: WorkerTask) -> str:
        calls.append(task.step)
        return "done"

    retry = RetryPolicy(max_attempts=2, initial_interval=0.0, jitter=False)
    store = _FlakyOutputStore(failures)
    app = create_supervisor(
        [Worker(name="w", description="W.", agent=work, retry=retry)], router=routes("w")
    ).compile(checkpointer=InMemorySaver(), store=store)
    (entry,) = app.invoke(ask(), thread())["ledger"]
    assert entry["status"] == status and store.puts == 2
    assert calls == [1]  # the agent is not run again for a write
    if status == "failed":
        assert entry["error"] == "ConnectionError: store unreachable"


# -- a function worker's own run ------------------------------------------------------------


class _Starts(BaseCallbackHandler):
    """The names of the chain runs a graph opened."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kw: Any) -> None:
        self.names.append(kw.get("name") or "")


def _model_calling(task: WorkerTask) -> str:
    """A function worker that asks a model (whose usage the hop records)."""
    model = FunctionChatModel(name="inner", reply=lambda call: "the answer.", report_usage=True)
    return str(model.invoke(task.prompt()).content)


async def _amodel_calling(task: WorkerTask) -> str:
    model = FunctionChatModel(name="inner", reply=lambda call: "the answer.", report_usage=True)
    return str((await model.ainvoke(task.prompt())).content)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("watched", [True, False])
def test_a_function_worker_has_its_own_run_when_a_handler_listens_and_its_calls_count_either_way(
    mode, watched, monkeypatch
):
    import langgraph_supervisor_pro._graph.worker_node as worker_node

    opened: list[str] = []  # the function runs the hop opened, seen or not
    for name in ("get_callback_manager_for_config", "get_async_callback_manager_for_config"):
        real = getattr(worker_node, name)

        def counting(config: Any, _real: Any = real) -> Any:
            opened.append("run")
            return _real(config)

        monkeypatch.setattr(worker_node, name, counting)
    agent = _model_calling if mode == "sync" else _amodel_calling
    app = compile_team([Worker(name="w", description="W.", agent=agent)], router=routes("w"))
    starts = _Starts()
    config = {**thread(), "callbacks": [starts]} if watched else thread()
    out = app.invoke(ask(), config) if mode == "sync" else asyncio.run(app.ainvoke(ask(), config))
    assert out["ledger"][0]["status"] == "success"
    # Only usage recorders listening: nothing could see the run, so none is opened.
    assert opened == (["run"] if watched else [])
    assert ("w.agent" in starts.names) is watched
    (entry,) = [u for u in out["usage"] if u.get("worker") == "w"]
    assert entry["model"] == "inner" and entry["path"] == ["w"] and not entry["estimated"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_function_returning_a_runnable_is_a_failed_hop_and_the_runnable_never_runs(mode):
    ran: list[Any] = []

    def record(payload: Any) -> str:
        ran.append(payload)
        return "ran"

    inner: RunnableLambda[Any, str] = RunnableLambda(record)

    def returns_runnable(task: WorkerTask) -> Any:
        return inner

    app = compile_team(
        [Worker(name="w", description="W.", agent=returns_runnable)], router=routes("w")
    )
    out = (
        app.invoke(ask(), thread()) if mode == "sync" else asyncio.run(app.ainvoke(ask(), thread()))
    )
    assert ran == []
    (entry,) = out["ledger"]
    assert entry["status"] == "failed"
    assert "returned RunnableLambda, which is not a result" in entry["error"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_function_raising_stop_iteration_fails_its_hop_and_never_hangs(mode):
    def stops(task: WorkerTask) -> str:
        raise StopIteration

    app = compile_team([Worker(name="w", description="W.", agent=stops)], router=routes("w"))
    if mode == "sync":
        out = app.invoke(ask(), thread())
    else:
        out = asyncio.run(asyncio.wait_for(app.ainvoke(ask(), thread()), timeout=30))
    (entry,) = out["ledger"]
    assert entry["status"] == "failed"
    assert "StopIteration" in entry["error"]

"""A function worker's run: its model calls are recorded whether or not a handler sees the hop;
a handler sees the `<worker>.agent` run with the model's run beneath it; a node takes
LangGraph's config without copying it."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import AsyncCallbackManager, BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config

from langgraph_supervisor_pro import Worker, WorkerTask
from langgraph_supervisor_pro._graph.node import GraphNode
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, routes, thread


class _Runs(BaseCallbackHandler):
    """Every chain and chat model run started: (name, run id, parent run id)."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, UUID, UUID | None]] = []

    def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self.runs.append((str(kwargs.get("name")), run_id, parent_run_id))

    def on_chat_model_start(
        self,
        serialized: Any,
        messages: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self.runs.append(("chat model", run_id, parent_run_id))


def _asking(model: ScriptedChatModel, mode: str) -> Any:
    """A function worker that asks `model` once and answers with its reply."""

    def sync_work(task: WorkerTask) -> str:
        return str(model.invoke(f"help with {task.instructions}").content)

    async def async_work(task: WorkerTask) -> str:
        return str((await model.ainvoke(f"help with {task.instructions}")).content)

    return sync_work if mode == "sync" else async_work


def _run(app: Any, config: dict[str, Any], driver: str) -> dict[str, Any]:
    if driver == "invoke":
        return app.invoke(ask(), config)  # type: ignore[no-any-return]
    return asyncio.run(app.ainvoke(ask(), config))  # type: ignore[no-any-return]


@pytest.mark.parametrize("seen", [False, True])
@pytest.mark.parametrize(
    ("mode", "driver"), [("sync", "invoke"), ("sync", "ainvoke"), ("async", "ainvoke")]
)
def test_a_function_workers_model_calls_are_recorded_seen_or_not(mode, driver, seen):
    model = ScriptedChatModel(script=["Here it is."])
    worker = Worker(name="helper", description="Asks a model.", agent=_asking(model, mode))
    app = compile_team([worker], router=routes("helper"))
    runs = _Runs()
    out = _run(app, {**thread(), **({"callbacks": [runs]} if seen else {})}, driver)
    assert out["status"] == "done" and out["ledger"][0]["summary"] == "Here it is."
    (usage,) = out["usage"]
    assert (usage["role"], usage["worker"], usage["path"], usage["step"]) == (
        "worker",
        "helper",
        ["helper"],
        1,
    )
    assert usage["input_tokens"] > 0 and usage["estimated"] is True
    if seen:  # the function's own run, and the model's beneath it
        ids = {name: (run_id, parent) for name, run_id, parent in runs.runs}
        agent_id, _ = ids["helper.agent"]
        assert ids["chat model"][1] == agent_id


def test_a_sync_function_raising_stop_iteration_fails_its_hop_under_ainvoke():
    def stopped(task: WorkerTask) -> str:
        raise StopIteration

    app = compile_team([Worker(name="w", description="W.", agent=stopped)], router=routes("w"))
    out = asyncio.run(asyncio.wait_for(app.ainvoke(ask(), thread()), timeout=30))
    assert out["ledger"][0]["status"] == "failed"
    assert out["ledger"][0]["error"].startswith("RuntimeError")


def test_a_node_completes_langgraphs_config_as_ensure_config_would_without_copying_it():
    seen: list[RunnableConfig] = []

    async def abody(value: int, config: RunnableConfig) -> int:
        seen.append(config)
        return value

    node: GraphNode[int, int] = GraphNode("n", lambda value, config: value, abody)
    manager = AsyncCallbackManager(handlers=[])
    langgraphs: RunnableConfig = {
        "callbacks": manager,
        "metadata": {"langgraph_node": "n"},
        "configurable": {"thread_id": "t", "checkpoint_ns": "n:1"},
    }

    async def as_langgraph_runs_it() -> int:
        var_child_runnable_config.set(langgraphs)  # LangGraph runs a node in its config
        return await node.ainvoke(1, langgraphs)

    assert asyncio.run(as_langgraph_runs_it()) == 1
    (config,) = seen
    assert config["tags"] == [] and config["recursion_limit"] == 25
    assert config["metadata"] == {"langgraph_node": "n", "checkpoint_ns": "n:1"}
    assert config["callbacks"] is manager and config["configurable"] is langgraphs["configurable"]
    assert langgraphs["metadata"] == {"langgraph_node": "n"}  # LangGraph's own is unchanged

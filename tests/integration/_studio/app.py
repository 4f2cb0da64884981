"""The graph `langgraph dev` serves in the dev-server tests: a three-level tree with reviews.

`root -> ops (domain) -> incident (domain) -> clerk (a model worker with a high-risk
`rollback` tool)`, beside a `comms` worker at the root. Every model here decides from what
it is shown, never from call order, so the server can serve any number of runs:

- routers send each level's one worker once, then FINISH;
- the clerk's model calls `rollback` when its messages hold no tool result yet, and answers
  once they do.

Exported uncompiled: the server supplies the checkpointer. `flat` and `two` hold the same
clerk one and two levels down.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

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


def _comms(task: WorkerTask) -> str:
    return "Posted a status update."


def _clerk() -> Worker:
    return Worker(
        name="clerk",
        description="Rolls services back.",
        model=ScriptedChatModel(script=[_clerk_reply] * 10_000),
        tools=(rollback,),
        risks={"rollback": "high"},
    )


def _incident() -> Any:
    return create_supervisor([_clerk()], router=_once("clerk"), name="incident")


incident = _incident()
ops = create_supervisor(
    [Worker(name="incident", description="Handles incidents.", agent=incident)],
    router=_once("incident"),
    name="ops",
)
graph = create_supervisor(
    [
        Worker(name="ops", description="Operations.", agent=ops),
        Worker(name="comms", description="Status page.", agent=_comms),
    ],
    router=_once("ops"),
)

# The same review one and two levels down, for the tests that compare depths.
flat = create_supervisor([_clerk()], router=_once("clerk"))
two = create_supervisor(
    [Worker(name="incident", description="Handles incidents.", agent=_incident())],
    router=_once("incident"),
)

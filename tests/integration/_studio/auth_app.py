"""The graphs the auth dev-server tests serve: the clerk's review, for a reviewer group.

Every level's review policy is `policy.toml` (shared with `auth.py`): reviews go to the
`support` group (alice) and escalate to `leads` (carol). `flat` holds the clerk (its
`rollback` tool is high risk) at the root, `tree` three levels down (root -> ops ->
incident -> clerk), so the tests see where each level records the answer. Models decide
from what they are shown, never from call order, so the server can serve any number of
runs. Exported uncompiled: the server supplies the checkpointer. Each rollback appends the
root thread's id to the file `LGSP_TEST_ROLLBACK_CALLS` names, so tests see what ran.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool

from langgraph_supervisor_pro import ReviewPolicy, SupervisorView, Worker, create_supervisor
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel

CALLS_ENV = "LGSP_TEST_ROLLBACK_CALLS"
"""A file each rollback appends its thread id to (when set)."""
POLICY = ReviewPolicy.from_file(Path(__file__).resolve().parent / "policy.toml")


@tool
def rollback(service: str, config: RunnableConfig) -> str:
    """Roll a service back to its last good release."""
    calls = os.environ.get(CALLS_ENV)
    if calls:  # the tests read which threads' rollbacks ran
        with open(calls, "a", encoding="utf-8") as out:
            out.write(f"{config['configurable'].get('thread_id')}\n")
    return f"rolled back {service}"


def _clerk_reply(call: ScriptedCall) -> AIMessage:
    if any(isinstance(m, ToolMessage) for m in call.messages):
        return AIMessage(content="Rolled back the database service.")
    return AIMessage(
        content="",
        tool_calls=[{"name": "rollback", "args": {"service": "database"}, "id": "rb1"}],
    )


def _clerk() -> Worker:
    return Worker(
        name="clerk",
        description="Rolls services back.",
        model=ScriptedChatModel(script=[_clerk_reply] * 10_000),
        tools=(rollback,),
        risks={"rollback": "high"},
    )


def _once(worker: str) -> Any:
    def router(view: SupervisorView) -> str:
        return "FINISH" if view.ledger else worker

    return router


def _level(name: str, worker: Worker) -> Any:
    return create_supervisor([worker], router=_once(worker.name), name=name, review=POLICY)


flat = create_supervisor([_clerk()], router=_once("clerk"), review=POLICY)
incident = _level("incident", _clerk())
ops = _level("ops", Worker(name="incident", description="Handles incidents.", agent=incident))
tree = create_supervisor(
    [Worker(name="ops", description="Operations.", agent=ops)],
    router=_once("ops"),
    review=POLICY,
)

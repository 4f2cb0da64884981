"""The graph `langgraph dev` serves in the online judge's dev-server test.

One worker answers; an offline judge (a different model from the router's) scores every
turn from the answer it is shown: an answer that mentions a refund scores low. Exported
uncompiled: the server supplies the checkpointer and the store (where low scores queue).
"""

from __future__ import annotations

from typing import Any

from langgraph_supervisor_pro import SupervisorView, Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro.evals._judge import OnlineJudge
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall


def answer(task: WorkerTask) -> str:
    return f"About {task.task}"


def route(view: SupervisorView) -> str:
    return "FINISH" if view.ledger else "desk"


def verdict(call: ScriptedCall) -> dict[str, Any]:
    low = "refund" in str(call.messages[-1].content).split("Answer:")[-1]
    return {"score": 0.2 if low else 0.9, "passed": not low, "reasons": ["read the answer"]}


graph = create_supervisor(
    [Worker(name="desk", description="Answers customers.", agent=answer)],
    router=route,
    judge=OnlineJudge(model=FunctionChatModel(name="studio-judge", reply=verdict), sample=1.0),
)

"""Child process and graph module for the two-process review test.

`build` is the graph both processes use: a billing team whose `refund` tool is high
risk, so the supervised tier pauses the run at the refund's review. Every execution
of `refund` is appended (fsynced) to the file named by `LGSP_REVIEW_LOG`, with the
pid of the process that ran it, so the test can tell which process ran it and how
often.

Process A runs this file: it starts a run on Postgres, which pauses at the review,
prints one JSON line (the pending interrupts) and exits without resuming::

    PYTHONPATH=. python tests/integration/_review_app.py --uri postgresql://... --thread t1

Process B, later, is the `lgsp` command, loading this file as the graph::

    PYTHONPATH=. lgsp review approve --db postgresql://... \\
        --graph tests/integration/_review_app.py:build --thread t1

It imports the package and the child-side helpers of `_app_common.py` (hence the
repository root on `PYTHONPATH`), never pytest or the test fixtures.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from langgraph_supervisor_pro import (
    ReviewPolicy,
    Worker,
    create_supervisor,
    open_checkpointer,
)
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel
from tests.integration._app_common import app_parser, append_jsonl, thread_config

LOG_ENV = "LGSP_REVIEW_LOG"
TASK = "Refund order O-7: it arrived broken"
ARGS = {"order_id": "O-7", "amount": 30}
POLICY = ReviewPolicy(tier="supervised", review_timeout=3600, reviewers="support")


@tool
def refund(order_id: str, amount: int) -> str:
    """Refund an order."""
    append_jsonl(
        Path(os.environ[LOG_ENV]), {"pid": os.getpid(), "order_id": order_id, "amount": amount}
    )
    return f"refunded {amount} on {order_id}"


def step(call: ScriptedCall) -> Any:
    """Ask for the refund; once the tool answered, report its result.

    A pure function of what the model is shown, so a process that resumes the run
    needs no script position.
    """
    last = call.messages[-1]
    if isinstance(last, ToolMessage):
        return f"Done: {last.content}"
    return AIMessage(content="", tool_calls=[{"name": "refund", "args": ARGS, "id": "call_1"}])


def router(view: Any) -> str:
    """One billing hop, then FINISH."""
    return "billing" if not view.ledger else "FINISH"


def build() -> Any:
    """The uncompiled team (what `--graph ...:build` names)."""
    worker = Worker(
        name="billing",
        description="Handles refunds.",
        model=ScriptedChatModel(name="billing-model", script=[step] * 20),
        tools=[refund],
        risks={"refund": "high"},
    )
    return create_supervisor([worker], router=router, review=POLICY)


def main(argv: list[str] | None = None) -> int:
    parser = app_parser(
        __doc__.splitlines()[0], uri_help="Postgres URI of the checkpoint database", phases=False
    )
    args = parser.parse_args(argv)
    Path(os.environ[LOG_ENV]).touch()
    config = thread_config(args.thread)
    with open_checkpointer(args.uri) as saver:
        graph = build().compile(checkpointer=saver)
        out = graph.invoke({"messages": [("user", TASK)]}, config, durability="sync")
    pending = [
        {
            "id": i.id,
            "kind": i.value["context"]["kind"],
            "action": i.value["action_requests"][0]["name"],
        }
        for i in out.get("__interrupt__", ())
    ]
    print(json.dumps({"pid": os.getpid(), "status": out.get("status"), "pending": pending}))
    return 0 if pending else 1


if __name__ == "__main__":
    sys.exit(main())

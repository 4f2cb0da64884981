"""Child process for the storage crash test: tool-calling agents on Postgres.

`tests/integration/test_agent_storage_crash.py` starts it as a real process: a team of
two `create_agent` workers (`tests/_agents.py`), each calling its `lookup` tool once per
hop, runs `HOPS` hops with `durability="sync"` through `open_checkpointer` (so every
finished hop's agent checkpoints are deleted). In the `run` phase the tool of hop
`--block-hop` logs its execution, writes the marker and blocks until the test SIGKILLs
the process; the `resume` phase continues the thread with `invoke(None)` (or
`ainvoke`). Every model and tool execution is logged (fsynced) with its phase::

    PYTHONPATH=. python tests/integration/_storage_crash_app.py --uri postgresql://... \\
        --thread t1 --workdir /tmp/x --phase run --block-hop 7
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage

from langgraph_supervisor_pro import aopen_checkpointer, open_checkpointer
from langgraph_supervisor_pro.testing import ScriptedCall
from tests._agents import lookup_tool, prompts_in, tool_agent, tool_team
from tests.integration._app_common import (
    app_parser,
    block_until_killed,
    log_execution,
    run_and_report,
    run_input,
    run_summary,
    thread_config,
)

HOPS = 8
NAMES = ("researcher", "analyst")
TASK = "Write a report on heat pumps"


def hop_of(worker: str, part: int) -> int:
    """The hop number of `worker`'s visit `part` (round-robin over NAMES)."""
    return (part - 1) * len(NAMES) + NAMES.index(worker) + 1


def build_graph(workdir: Path, phase: str, block_hop: int | None) -> Any:
    """The team, with every model call and tool execution logged to the workdir."""

    def agent(worker: str) -> Any:
        def before(part: int) -> None:
            hop = hop_of(worker, part)
            log_execution(workdir, phase, "tool", worker, step=hop)
            if phase == "run" and hop == block_hop:
                block_until_killed(
                    workdir,
                    {"pid": os.getpid(), "worker": worker, "step": hop},
                    f"storage app: blocked in {worker}'s tool at hop {hop} and not killed",
                    releasable=False,
                )

        def seen(call: ScriptedCall) -> None:
            after_tool = isinstance(call.messages[-1], ToolMessage)
            hop = hop_of(worker, prompts_in(call.messages))
            log_execution(workdir, phase, "model", worker, step=hop, after_tool=after_tool)

        return tool_agent(worker, tools=[lookup_tool(worker, before)], seen=seen)

    return tool_team(HOPS, NAMES, agents={name: agent(name) for name in NAMES})


def main() -> int:
    parser = app_parser("Run or resume the storage crash team on Postgres.")
    parser.add_argument("--block-hop", type=int, default=None)
    args = parser.parse_args()
    graph = build_graph(args.workdir, args.phase, args.block_hop)
    config = thread_config(args.thread)
    payload = run_input(args.phase, TASK)

    def run_sync(args: Any, ctx: Any) -> dict[str, Any]:
        with open_checkpointer(args.uri) as saver:
            app = graph.compile(checkpointer=saver)
            pending = app.get_state(config).next
            out = app.invoke(payload, config, durability="sync")
            return run_summary(out, pending)

    async def run_async(args: Any, ctx: Any) -> dict[str, Any]:
        async with aopen_checkpointer(args.uri) as saver:
            app = graph.compile(checkpointer=saver)
            pending = (await app.aget_state(config)).next
            out = await app.ainvoke(payload, config, durability="sync")
            return run_summary(out, pending)

    return run_and_report(args, None, run_sync, run_async)


if __name__ == "__main__":
    sys.exit(main())

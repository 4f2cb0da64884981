"""Child process for the budget crash tests: runs, or resumes, a budgeted team on Postgres.

It imports the package and the child-side helpers of `_app_common.py` (with the
repository root on `PYTHONPATH`), never pytest or the test fixtures, so
`tests/integration/test_budget_crash.py` can start it as a real process, SIGKILL it in
the middle of a hop and resume the thread in a new one::

    PYTHONPATH=. python tests/integration/_budget_crash_app.py --uri postgresql://... \\
        --thread t1 --workdir /tmp/x --phase run --limit halt --block lookup:3
    PYTHONPATH=. python tests/integration/_budget_crash_app.py --uri postgresql://... \\
        --thread t1 --workdir /tmp/x --phase resume --limit halt

The team runs `PLAN` in order, then FINISH, under `create_supervisor(budget=Budget(...))`
with a price for each of its three models. Every model reports its usage
(`report_usage=True`) and every reply is a pure function of what the model is shown, with
deterministic tool-call ids, so the tokens of a call are the same in any process:

- the supervisor (`planner`) reads how many hops the ledger holds and names the next
  worker of `PLAN` (a structured reply, written out as an `AIMessage` so its tool-call id
  does not depend on the model's call count);
- the `researcher` (a model worker) calls `lookup` once per hop, then answers: two model
  calls per hop;
- the `writer` (a model worker) answers in one call.

`--limit halt` sets `max_tokens=HALT_LIMIT`: the run halts with `budget_exceeded` before
`PLAN` is done; `--limit complete` sets `COMPLETE_LIMIT`: it finishes; `--limit in_hop`
sets `IN_HOP_LIMIT`: it is passed inside hop 3, between the researcher's two model calls.
All warn (an event) at `WARN_AT` of the limit.

Every model and tool call is appended (fsynced) to `<workdir>/executions.jsonl` with the
phase it ran in, before anything else happens. With `--block lookup:HOP` the researcher's
`lookup` at hop HOP (after the hop's first model call), with `--block model:HOP` the
researcher's second model call at hop HOP (after its lookup), with `--block
supervisor:HOP` the supervisor's call deciding hop HOP, logs itself, writes
`<workdir>/blocked` and waits to be killed (at most `BLOCK_SECONDS`, then exits 3).

On completion it prints one JSON line (status, halt reason, ledger, what was pending
when it started) and exits 0 when the run reached its end (`done` or `halted`), 1 when
it stopped anywhere else.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from langgraph_supervisor_pro import (
    Budget,
    Worker,
    aopen_checkpointer,
    create_supervisor,
    open_checkpointer,
)
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall
from tests.integration._app_common import (
    HopContext,
    app_parser,
    parse_block,
    plan_decision,
    plan_instructions,
    run_input,
    run_summary,
    thread_config,
)

TASK = "Survey the tea harvests of the last three seasons"
PLAN = ("researcher", "writer") * 5
"""Who runs each hop, in order (hop n is PLAN[n - 1])."""
PRICES = {
    "planner": {"input": 1.0, "output": 4.0},
    "researcher-model": {"input": 2.0, "output": 8.0, "cached_input": 0.5},
    "writer-model": {"input": 0.4, "output": 1.6},
}
"""Per million tokens, one price per model of the team (a cost for every call)."""
HALT_LIMIT = 6_000
"""Tokens per turn with `--limit halt`: spent part-way through `PLAN`."""
COMPLETE_LIMIT = 12_000
"""Tokens per turn with `--limit complete`: never reached (its warning is)."""
IN_HOP_LIMIT = 1_100
"""Tokens per turn with `--limit in_hop`: passed by the researcher's first model call of hop
3, so its second call (after the lookup) is refused and the hop fails."""
WARN_AT = 0.5
LIMITS = {"halt": HALT_LIMIT, "complete": COMPLETE_LIMIT, "in_hop": IN_HOP_LIMIT}
_HOPS_SO_FAR = re.compile(r"Ledger: (\d+) hops so far")
_HOP = re.compile(r"hop (\d+):")
FILLER = "the leaves were picked by hand and dried in the shade of the hill "


def instructions_for(hop: int) -> str:
    """The instructions the supervisor gives for hop `hop` (FINISH's note after the plan)."""
    return plan_instructions(PLAN, hop)


def decide(hops_done: int) -> dict[str, str]:
    """The decision after `hops_done` hops of this turn: the next worker of PLAN, or FINISH."""
    return plan_decision(PLAN, hops_done)


def research_answer(hop: int) -> str:
    return f"researcher findings for hop {hop}: " + FILLER * 3


def writer_answer(hop: int) -> str:
    return f"writer draft for hop {hop}: " + FILLER * 2


def prompt_hop(messages: Any) -> int:
    """The hop a worker's model call serves, read from the last prompt it is shown."""
    prompts = [m for m in messages if isinstance(m, HumanMessage)]
    match = _HOP.search(str(prompts[-1].content)) if prompts else None
    if match is None:
        raise AssertionError(f"no hop number in {messages!r}")
    return int(match.group(1))


def looked_up(messages: Any) -> bool:
    """Whether the hop's lookup came back (a tool result after the hop's prompt)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return False
        if isinstance(message, ToolMessage):
            return True
    return False


class Context(HopContext):
    """Where this process logs, and whether (and where) it blocks."""

    app = "_budget_crash_app"


def _planner(ctx: Context) -> FunctionChatModel:
    def step(call: ScriptedCall) -> AIMessage:
        prompt = str(call.messages[-1].content)
        match = _HOPS_SO_FAR.search(prompt)
        if match is None and "Ledger: No hops yet." not in prompt:
            raise AssertionError(f"unexpected supervisor prompt: {prompt!r}")
        hops_done = int(match.group(1)) if match else 0
        ctx.record("decision", "planner", hops_done + 1)
        ctx.maybe_block("supervisor", "planner", hops_done + 1)
        (name,) = call.tools
        route = {"name": name, "args": decide(hops_done), "id": f"route-{hops_done + 1}"}
        return AIMessage(content="", tool_calls=[route])

    return FunctionChatModel(name="planner", reply=step, report_usage=True)


def _researcher_model(ctx: Context) -> FunctionChatModel:
    def reply(call: ScriptedCall) -> AIMessage | str:
        hop = prompt_hop(call.messages)
        if not looked_up(call.messages):
            ctx.record("model", "researcher:1", hop)
            tool_call = {"name": "lookup", "args": {"season": hop}, "id": f"lookup-{hop}"}
            return AIMessage(content="", tool_calls=[tool_call])
        ctx.record("model", "researcher:2", hop)
        ctx.maybe_block("model", "researcher", hop)
        return research_answer(hop)

    return FunctionChatModel(name="researcher-model", reply=reply, report_usage=True)


def _writer_model(ctx: Context) -> FunctionChatModel:
    def reply(call: ScriptedCall) -> str:
        hop = prompt_hop(call.messages)
        ctx.record("model", "writer", hop)
        return writer_answer(hop)

    return FunctionChatModel(name="writer-model", reply=reply, report_usage=True)


def _lookup(ctx: Context) -> Any:
    @tool
    def lookup(season: int) -> str:
        """Look up the harvest records of one season."""
        ctx.record("tool", "lookup", season)
        ctx.maybe_block("lookup", "researcher", season)
        return f"season {season}: " + "record " * 12

    return lookup


def budget_for(limit: str) -> Budget:
    """The team's budget: `LIMITS[limit]` tokens per turn, warning at `WARN_AT`."""
    return Budget(max_tokens=LIMITS[limit], warn_at=WARN_AT, prices=PRICES)


def build_graph(ctx: Context, limit: str = "halt") -> Any:
    """The uncompiled team: a planner model, a researcher with a tool, a writer."""
    workers = [
        Worker(
            name="researcher",
            description="Finds the harvest records.",
            model=_researcher_model(ctx),
            tools=(_lookup(ctx),),
            risks={"lookup": "low"},
        ),
        Worker(name="writer", description="Writes the survey.", model=_writer_model(ctx)),
    ]
    return create_supervisor(
        workers, model=_planner(ctx), max_steps=len(PLAN) + 1, budget=budget_for(limit)
    )


def _summary(values: dict[str, Any], pending: tuple[str, ...]) -> dict[str, Any]:
    return run_summary(values, pending, halt_reason=values.get("halt_reason"))


def run_sync(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config = thread_config(args.thread)
    with open_checkpointer(args.uri) as saver:
        app = build_graph(ctx, args.limit).compile(checkpointer=saver)
        pending = tuple(app.get_state(config).next)
        values = app.invoke(run_input(args.phase, TASK), config, durability="sync")
        return _summary(values, pending)


async def run_async(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config = thread_config(args.thread)
    async with aopen_checkpointer(args.uri) as saver:
        app = build_graph(ctx, args.limit).compile(checkpointer=saver)
        pending = tuple((await app.aget_state(config)).next)
        values = await app.ainvoke(run_input(args.phase, TASK), config, durability="sync")
        return _summary(values, pending)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = app_parser(__doc__.splitlines()[0], uri_help="Postgres URI of the checkpoint database")
    parser.add_argument("--limit", default="halt", choices=tuple(LIMITS))
    parser.add_argument(
        "--block", default=None, help="lookup:HOP, model:HOP or supervisor:HOP (run phase only)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    block = parse_block(args.block, kinds=("lookup", "model", "supervisor"), expected="KIND:HOP")
    ctx = Context(args.workdir, args.phase, *block)
    summary = asyncio.run(run_async(args, ctx)) if args.mode == "async" else run_sync(args, ctx)
    print(json.dumps(summary), flush=True)
    return 0 if summary["status"] in ("done", "halted") else 1


if __name__ == "__main__":
    sys.exit(main())

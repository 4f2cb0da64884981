"""Child process for the crash tests: runs, or resumes, a supervisor team on Postgres.

It imports the package and the child-side helpers of `_app_common.py` (with the
repository root on `PYTHONPATH`), never pytest or the test fixtures, so
`tests/integration/test_crash_resume.py` can start it as a real process,
SIGKILL it in the middle of a hop and resume the thread in a new one::

    PYTHONPATH=. python tests/integration/_crash_app.py --uri postgresql://... --thread t1 \\
        --workdir /tmp/x --phase run --block worker:3
    PYTHONPATH=. python tests/integration/_crash_app.py --uri postgresql://... --thread t1 \\
        --workdir /tmp/x --phase resume

The team runs `PLAN` in order, one hop per worker, then FINISH. Every decision
is a pure function of how many hops the current turn's ledger holds, so a
resumed process needs no script position: with `--decider model` a
`ScriptedChatModel` whose every step reads the ledger from the prompt it is
shown, with `--decider router` a `router` reading `view.ledger`.

Side effects are recorded durably in `<workdir>/executions.jsonl` (one JSON line
per execution, appended and fsynced before anything else happens), so the test
can tell what ran in which process. With `--block KIND:HOP` (run phase only) the
worker running hop HOP (`worker:`), or the supervisor deciding hop HOP
(`supervisor:`), or the second node of the subgraph worker (`subgraph:`) logs
its execution, writes `<workdir>/blocked` and then waits for `<workdir>/release`
(which the test never creates) for at most `BLOCK_SECONDS`; if nobody kills it
by then the process exits with status 3.

On completion it prints one JSON line (status, ledger, what was pending when
it started) and exits 0 when the run ended `done`, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import (
    Worker,
    WorkerTask,
    aopen_checkpointer,
    create_supervisor,
    open_checkpointer,
)
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel
from tests.integration._app_common import (
    HopContext,
    app_parser,
    parse_block,
    plan_decision,
    plan_instructions,
    run_and_report,
    run_input,
    run_summary,
    thread_config,
)

PLAN = ("researcher", "analyst", "writer", "reviewer")
"""Who runs each hop, in order (hop n is PLAN[n - 1])."""
TASK = "Write a short report on the sleeping habits of cats"
NO_RETRY = RetryPolicy(max_attempts=1)
"""Side-effecting workers must not be retried silently: a retry would hide double runs."""
_HOPS_SO_FAR = re.compile(r"Ledger: (\d+) hops so far")
_LEDGER_LINE = re.compile(r"^#(\d+) (\w+) \[(\w+)\]", re.MULTILINE)


def instructions_for(hop: int) -> str:
    """The instructions the supervisor gives for hop `hop` (FINISH's note after the plan)."""
    return plan_instructions(PLAN, hop)


def decide(hops_done: int) -> dict[str, str]:
    """The decision after `hops_done` hops of this turn: the next worker of PLAN, or FINISH."""
    return plan_decision(PLAN, hops_done)


def worker_result(name: str, step: int) -> str:
    """What worker `name` answers at hop `step` (the final answer is the reviewer's)."""
    return f"{name} result for hop {step}"


class Context(HopContext):
    """Where this process logs, and whether (and where) it blocks."""

    app = "_crash_app"


# ----------------------------------------------------------------------------- the team


def _sync_worker(ctx: Context, name: str) -> Any:
    def agent(task: WorkerTask) -> str:
        ctx.record("worker", name, task.step)
        ctx.maybe_block("worker", name, task.step)
        return worker_result(name, task.step)

    agent.__name__ = name
    return agent


def _async_worker(ctx: Context, name: str) -> Any:
    async def agent(task: WorkerTask) -> str:
        ctx.record("worker", name, task.step)
        await ctx.amaybe_block("worker", name, task.step)
        await asyncio.sleep(0)
        return worker_result(name, task.step)

    agent.__name__ = name
    return agent


def _subgraph_worker(ctx: Context, name: str) -> Any:
    """A compiled two-node LangGraph graph: `draft`, then `check` (which may block)."""

    def hop(state: MessagesState) -> int:
        """The hop number, read from the supervisor's instructions in the prompt."""
        prompts = [m for m in state["messages"] if isinstance(m, HumanMessage)]
        match = re.search(r"hop (\d+):", str(prompts[-1].content)) if prompts else None
        if match is None:
            raise AssertionError(f"{name}: no hop number in {state['messages']!r}")
        return int(match.group(1))

    def draft(state: MessagesState) -> dict[str, Any]:
        step = hop(state)
        ctx.record("node", f"{name}.draft", step)
        return {"messages": [AIMessage(content=f"{name} draft for hop {step}")]}

    def check(state: MessagesState) -> dict[str, Any]:
        step = hop(state)
        ctx.record("worker", name, step)
        ctx.maybe_block("subgraph", name, step)
        return {"messages": [AIMessage(content=worker_result(name, step))]}

    graph = StateGraph(MessagesState)
    graph.add_node("draft", draft)
    graph.add_node("check", check)
    graph.add_edge(START, "draft")
    graph.add_edge("draft", "check")
    return graph.compile(name=f"{name}_graph")


def _model_decider(ctx: Context) -> ScriptedChatModel:
    """A scripted supervisor model whose every step decides from the ledger it is shown."""

    def step(call: ScriptedCall) -> dict[str, str]:
        prompt = str(call.messages[-1].content)
        match = _HOPS_SO_FAR.search(prompt)
        hops_done = int(match.group(1)) if match else 0
        if match is None and "Ledger: No hops yet." not in prompt:
            raise AssertionError(f"unexpected supervisor prompt: {prompt!r}")
        shown = [int(m.group(1)) for m in _LEDGER_LINE.finditer(prompt)]
        if shown != list(range(1, hops_done + 1)):
            raise AssertionError(f"ledger lines {shown} do not match {hops_done} hops")
        ctx.record("decision", "model", hops_done + 1)
        ctx.maybe_block("supervisor", "model", hops_done + 1)
        return decide(hops_done)

    return ScriptedChatModel(name="supervisor-model", script=[step] * 50)


def _router_decider(ctx: Context, mode: str) -> Any:
    def router(view: Any) -> dict[str, str]:
        hops_done = len(view.ledger)
        ctx.record("decision", "router", hops_done + 1)
        ctx.maybe_block("supervisor", "router", hops_done + 1)
        return decide(hops_done)

    async def arouter(view: Any) -> dict[str, str]:
        hops_done = len(view.ledger)
        ctx.record("decision", "router", hops_done + 1)
        await ctx.amaybe_block("supervisor", "router", hops_done + 1)
        return decide(hops_done)

    return arouter if mode == "async" else router


def build_graph(ctx: Context, *, decider: str = "model", mode: str = "sync") -> Any:
    """The uncompiled team: researcher (sync), analyst (async), writer (sync), reviewer
    (a compiled LangGraph graph)."""
    team = (
        ("researcher", "Finds facts.", _sync_worker),
        ("analyst", "Analyses the facts.", _async_worker),
        ("writer", "Writes the report.", _sync_worker),
        ("reviewer", "Reviews the report.", _subgraph_worker),
    )
    workers = [
        Worker(name=name, description=description, agent=make(ctx, name), retry=NO_RETRY)
        for name, description, make in team
    ]
    if decider == "model":
        return create_supervisor(workers, model=_model_decider(ctx))
    return create_supervisor(workers, router=_router_decider(ctx, mode))


def _summary(values: dict[str, Any], pending: tuple[str, ...]) -> dict[str, Any]:
    answer = str(values["messages"][-1].content) if values.get("messages") else None
    return run_summary(values, pending, answer=answer)


def run_sync(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config = thread_config(args.thread)
    with open_checkpointer(args.uri) as saver:
        app = build_graph(ctx, decider=args.decider, mode="sync").compile(checkpointer=saver)
        pending = tuple(app.get_state(config).next)
        values = app.invoke(run_input(args.phase, TASK), config, durability="sync")
        return _summary(values, pending)


async def run_async(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config = thread_config(args.thread)
    async with aopen_checkpointer(args.uri) as saver:
        app = build_graph(ctx, decider=args.decider, mode="async").compile(checkpointer=saver)
        pending = tuple((await app.aget_state(config)).next)
        values = await app.ainvoke(run_input(args.phase, TASK), config, durability="sync")
        return _summary(values, pending)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = app_parser(__doc__.splitlines()[0], uri_help="Postgres URI of the checkpoint database")
    parser.add_argument("--decider", default="model", choices=("model", "router"))
    parser.add_argument(
        "--block",
        default=None,
        help="worker:HOP, supervisor:HOP or subgraph:HOP (run phase only)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    block = parse_block(args.block, kinds=("worker", "supervisor", "subgraph"), expected="KIND:HOP")
    return run_and_report(args, Context(args.workdir, args.phase, *block), run_sync, run_async)


if __name__ == "__main__":
    sys.exit(main())

"""Child process for the tree crash tests: a three-level tree of supervisors on Postgres.

`root -> ops (domain) -> incident (domain) -> pager, rollback, status (leaf workers)`. The
incident domain runs its three leaves in order, one hop each; `ops` sends the task to
`incident` once; the root sends it to `ops` once. Routers decide from the ledger only,
so a resumed process needs no memory of the killed one.

    PYTHONPATH=. python tests/integration/_tree_crash_app.py --uri postgresql://... \\
        --thread t1 --workdir /tmp/x --phase run --block leaf:2
    PYTHONPATH=. python tests/integration/_tree_crash_app.py --uri postgresql://... \\
        --thread t1 --workdir /tmp/x --phase resume

`--block leaf:HOP` blocks inside the leaf worker of the incident domain's hop HOP
(depth 3); `--block ops:1` blocks in the ops domain's router deciding its first hop
(depth 2). Executions are logged durably to `<workdir>/executions.jsonl`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import (
    SupervisorView,
    Worker,
    WorkerTask,
    aopen_checkpointer,
    create_supervisor,
    open_checkpointer,
)
from tests.integration._app_common import (
    HopContext,
    app_parser,
    parse_block,
    run_and_report,
    run_input,
    run_summary,
    thread_config,
)

LEAVES = ("pager", "rollback", "status")
TASK = "The database is down: page on-call, roll back, post a status update"
NO_RETRY = RetryPolicy(max_attempts=1)


class Context(HopContext):
    """Where this process logs, and whether (and where) it blocks."""

    app = "_tree_crash_app"


def leaf_result(name: str, step: int) -> str:
    return f"{name} done at hop {step}."


def _leaf(ctx: Context, name: str) -> Worker:
    def agent(task: WorkerTask) -> str:
        ctx.record("leaf", name, task.step)
        ctx.maybe_block("leaf", name, task.step)
        return leaf_result(name, task.step)

    return Worker(name=name, description=f"The {name} step.", agent=agent, retry=NO_RETRY)


def _sibling(ctx: Context) -> Worker:
    """The `comms` worker that runs beside `ops` in the fan-out variant (never blocks)."""

    def agent(task: WorkerTask) -> str:
        ctx.record("sibling", "comms", task.step)
        return "Status page updated."

    return Worker(name="comms", description="Status page.", agent=agent, retry=NO_RETRY)


def build_graph(ctx: Context, *, fanout: bool = False) -> Any:
    """The uncompiled root of the tree (with `fanout`, the root runs ops and comms at once)."""

    def incident_router(view: SupervisorView) -> str:
        done = len(view.ledger)
        return LEAVES[done] if done < len(LEAVES) else "FINISH"

    def ops_router(view: SupervisorView) -> str:
        if view.ledger:
            return "FINISH"
        ctx.record("decision", "ops", 1)
        ctx.maybe_block("ops", "ops", 1)
        return "incident"

    incident = create_supervisor(
        [_leaf(ctx, name) for name in LEAVES], router=incident_router, name="incident"
    )
    ops = create_supervisor(
        [Worker(name="incident", description="Incidents.", agent=incident, retry=NO_RETRY)],
        router=ops_router,
        name="ops",
    )
    ops_worker = Worker(name="ops", description="Operations.", agent=ops, retry=NO_RETRY)
    if fanout:
        return create_supervisor(
            [ops_worker, _sibling(ctx)],
            router=lambda view: "FINISH" if view.ledger else ["ops", "comms"],
            parallel=True,
        )
    return create_supervisor([ops_worker], router=lambda view: "FINISH" if view.ledger else "ops")


def _summary(values: dict[str, Any], pending: tuple[str, ...]) -> dict[str, Any]:
    answer = str(values["messages"][-1].content) if values.get("messages") else None
    return run_summary(values, pending, answer=answer)


def run_sync(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config = thread_config(args.thread)
    with open_checkpointer(args.uri) as saver:
        app = build_graph(ctx, fanout=args.fanout).compile(checkpointer=saver)
        pending = tuple(app.get_state(config).next)
        values = app.invoke(run_input(args.phase, TASK), config, durability="sync")
        return _summary(values, pending)


async def run_async(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config = thread_config(args.thread)
    async with aopen_checkpointer(args.uri) as saver:
        app = build_graph(ctx, fanout=args.fanout).compile(checkpointer=saver)
        pending = tuple((await app.aget_state(config)).next)
        values = await app.ainvoke(run_input(args.phase, TASK), config, durability="sync")
        return _summary(values, pending)


def main(argv: list[str] | None = None) -> int:
    parser = app_parser(__doc__.splitlines()[0], uri_help="Postgres URI")
    parser.add_argument("--block", default=None, help="leaf:HOP or ops:1 (run phase only)")
    parser.add_argument(
        "--fanout", action="store_true", help="the root runs ops and comms in parallel"
    )
    args = parser.parse_args(argv)
    block = parse_block(args.block, kinds=("leaf", "ops"), expected="leaf:HOP or ops:1")
    return run_and_report(args, Context(args.workdir, args.phase, *block), run_sync, run_async)


if __name__ == "__main__":
    sys.exit(main())

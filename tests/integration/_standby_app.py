"""Child process for the standby tests: a team run under a thread lease on Postgres.

It imports the package and the child-side helpers of `_app_common.py` (with the
repository root on `PYTHONPATH`), never pytest or the test fixtures, so
`tests/integration/test_standby.py` can start it as a real process::

    PYTHONPATH=. python tests/integration/_standby_app.py --uri postgresql://... \\
        --thread t1 --workdir /tmp/x --phase run --block worker:3 [--wait SECONDS]

The team (a router deciding from the ledger, `durability="sync"`) runs four hops,
then FINISH: `cashier` charges with `PostgresEffects.run(effect_key("charge"), ...)`
(an INSERT into `payments`, exactly once), then `researcher`, `writer`, `reviewer`.
The run phase takes `thread_lease(app, thread, owner="primary:<pid>", wait=...)`
around `invoke`; a busy thread prints `{"busy": ..., "holder": ...}` and exits 4.

`lgsp standby --graph tests/integration/_standby_app.py:graph` loads the same team
through `graph()`, which reads the database and the work folder from the environment
(`LGSP_STANDBY_DB`, `LGSP_STANDBY_WORKDIR`) and logs its executions as phase
`standby`. Every execution (worker, effect body) is appended, fsynced, to
`<workdir>/executions.jsonl`. With `--block KIND:HOP` the run phase's worker of that
hop logs, writes `<workdir>/blocked` and waits to be killed (or for
`<workdir>/release`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from langgraph.graph import StateGraph
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import Worker, WorkerTask, create_supervisor, open_checkpointer
from langgraph_supervisor_pro.errors import ThreadBusyError
from langgraph_supervisor_pro.persistence._effects import effect_key, open_effects
from langgraph_supervisor_pro.persistence._leases import thread_lease
from tests.integration._app_common import (
    HopContext,
    app_parser,
    log_execution,
    parse_block,
    run_input,
    run_summary,
    thread_config,
)

PLAN = ("cashier", "researcher", "writer", "reviewer")
TASK = "Charge the order, then write the report"
NO_RETRY = RetryPolicy(max_attempts=1)
DB_ENV = "LGSP_STANDBY_DB"
WORKDIR_ENV = "LGSP_STANDBY_WORKDIR"
PAYMENTS = "CREATE TABLE IF NOT EXISTS payments (id serial PRIMARY KEY, key text, amount int)"


class Context(HopContext):
    """Where this process logs, and whether (and where) it blocks."""

    app = "_standby_app"


def result_of(name: str, step: int) -> str:
    return f"{name} result for hop {step}"


def _worker(ctx: Context, uri: str, name: str) -> Any:
    def agent(task: WorkerTask) -> str:
        ctx.record("worker", name, task.step)
        if name == "cashier":
            key = effect_key("charge")  # "<thread>/<turn>/<step>/cashier/charge"
            with open_effects(uri) as effects:

                def charge(conn: Any) -> dict[str, Any]:
                    log_execution(ctx.workdir, ctx.phase, "effect", "charge", step=task.step)
                    conn.execute(PAYMENTS)
                    row = conn.execute(
                        "INSERT INTO payments (key, amount) VALUES (%s, 42) RETURNING id",
                        (key,),
                    ).fetchone()
                    return {"payment": row["id"]}

                outcome = effects.run(key, charge)
            ctx.maybe_block("worker", name, task.step)
            return f"{result_of(name, task.step)} (payment {outcome['payment']})"
        ctx.maybe_block("worker", name, task.step)
        return result_of(name, task.step)

    agent.__name__ = name
    return agent


def build_graph(ctx: Context, uri: str) -> StateGraph[Any, Any, Any, Any]:
    """The uncompiled team (a router that decides from the ledger)."""

    def router(view: Any) -> dict[str, str]:
        done = len(view.ledger)
        nxt = PLAN[done] if done < len(PLAN) else "FINISH"
        return {"next": nxt, "instructions": f"hop {done + 1}"}

    workers = [
        Worker(name=n, description=f"The {n}.", agent=_worker(ctx, uri, n), retry=NO_RETRY)
        for n in PLAN
    ]
    return create_supervisor(workers, router=router)


def graph() -> StateGraph[Any, Any, Any, Any]:
    """The team for `lgsp standby --graph ...:graph` (database and folder from the env)."""
    ctx = Context(Path(os.environ[WORKDIR_ENV]), "standby")
    return build_graph(ctx, os.environ[DB_ENV])


def main(argv: list[str] | None = None) -> int:
    parser = app_parser(__doc__.splitlines()[0], uri_help="Postgres URI")
    parser.add_argument("--block", default=None, help="worker:HOP (run phase only)")
    parser.add_argument("--wait", type=float, default=None, help="thread_lease(wait=...)")
    args: argparse.Namespace = parser.parse_args(argv)
    kind, hop = parse_block(args.block, kinds=("worker",), expected="worker:HOP")
    ctx = Context(args.workdir, args.phase, kind, hop)
    config = thread_config(args.thread)
    with open_checkpointer(args.uri) as saver:
        app = build_graph(ctx, args.uri).compile(checkpointer=saver)
        try:
            with thread_lease(app, args.thread, owner=f"primary:{os.getpid()}", wait=args.wait):
                log_execution(ctx.workdir, ctx.phase, "lease", "taken", step=0)
                pending = tuple(app.get_state(config).next)
                values = app.invoke(run_input(args.phase, TASK), config, durability="sync")
        except ThreadBusyError as exc:
            print(json.dumps({"busy": exc.thread_id, "holder": exc.holder, "error": str(exc)}))
            return 4
    print(json.dumps(run_summary(values, pending)), flush=True)
    return 0 if values.get("status") == "done" else 1


if __name__ == "__main__":
    sys.exit(main())

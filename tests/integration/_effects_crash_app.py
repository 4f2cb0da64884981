"""Child process for the side-effect crash tests: a team that charges, then mails.

It imports the package and the child-side helpers of `_app_common.py` (with the
repository root on `PYTHONPATH`), never pytest or the test fixtures, so
`tests/integration/test_effects_crash.py` can run it as a real process, SIGKILL it
at a chosen crash point and resume the thread in a new process::

    PYTHONPATH=. python tests/integration/_effects_crash_app.py --uri postgresql://... \\
        --thread t1 --workdir /tmp/x --phase run --crash inside-charge
    PYTHONPATH=. python tests/integration/_effects_crash_app.py --uri postgresql://... \\
        --thread t1 --workdir /tmp/x --phase resume

The team (on Postgres, `durability="sync"`) runs two hops, then FINISH:

1. `cashier` charges with `PostgresEffects.run(effect_key("charge"), ...)`
   (`arun` in async mode): the effect inserts a row into `payments` on the
   effect's connection, inside the recording transaction.
2. `mailer` sends a receipt with `run_external(effect_key("receipt"), ...)`: the
   "remote" is `<workdir>/outbox.jsonl`, one fsynced line per send, carrying the
   idempotency key it was given.

With `--crash POINT` (run phase only) the process logs, writes `<workdir>/blocked`
and waits at POINT for at most `BLOCK_SECONDS` (exit status 3 if nobody kills it):

- `before-charge`: in the cashier, before the effect.
- `inside-charge`: inside the charge effect, after its INSERT, before the commit.
- `after-charge`: in the cashier, after the effect committed, before it returns
  (so before the hop's checkpoint).
- `after-cashier`: in the router deciding hop 2 (the cashier's hop is checkpointed).
- `inside-receipt`: inside the external effect, after the outbox line, before the
  outcome is recorded.
- `after-receipt`: in the mailer, after the outcome is recorded, before it returns.

With `--reconcile` the mailer gives `run_external` a `reconcile` that looks for the key
in the outbox (the "provider" asked whether the mail went out). Without it, a receipt
in doubt pauses the resumed run on a review; `--answer JSON` (resume phase) answers it
with `Command(resume={"decisions": [JSON]})`. The summary lists the pending reviews'
actions (`interrupts`) and the receipt's recorded state.

Every execution (worker start, effect body, decision) is appended to
`<workdir>/executions.jsonl` with its phase and pid. On completion the process
prints one JSON line: status, the workers' results, the ledger.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.types import Command, RetryPolicy

from langgraph_supervisor_pro import (
    Worker,
    WorkerTask,
    aopen_checkpointer,
    create_supervisor,
    open_checkpointer,
)
from langgraph_supervisor_pro.persistence._effects import (
    AsyncPostgresEffects,
    PostgresEffects,
    aopen_effects,
    effect_key,
    open_effects,
)
from tests.integration._app_common import (
    app_parser,
    append_jsonl,
    block_until_killed,
    log_execution,
    run_and_report,
    run_input,
    run_summary,
    thread_config,
)

PLAN = ("cashier", "mailer")
CRASH_POINTS = (
    "before-charge",
    "inside-charge",
    "after-charge",
    "after-cashier",
    "inside-receipt",
    "after-receipt",
)
AMOUNT = 4200
OUTBOX_NAME = "outbox.jsonl"
NO_RETRY = RetryPolicy(max_attempts=1)
"""A retry would hide a double run: every execution must be a process's first."""
PAYMENTS_DDL = (
    "CREATE TABLE IF NOT EXISTS payments "
    "(id serial PRIMARY KEY, key text NOT NULL, amount int NOT NULL, pid int NOT NULL)"
)


@dataclass(frozen=True)
class Context:
    """Where this process logs, and where (if anywhere) it stops to be killed."""

    workdir: Path
    phase: str
    crash: str | None = None
    reconciles: bool = False

    def reconcile(self, key: str) -> dict[str, Any] | None:
        """Ask the "provider": the outcome of a send made under `key`, None if none was."""
        self.record("reconcile", "receipt")
        path = self.workdir / OUTBOX_NAME
        lines = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
        sent = [line for line in lines if line["key"] == key]
        return {"message_id": f"msg-{sent[0]['pid']}", "key": key} if sent else None

    def record(self, kind: str, name: str) -> None:
        log_execution(self.workdir, self.phase, kind, name)

    def at(self, point: str) -> None:
        """Stop here if this is the crash point: tell the test, then wait to be killed."""
        if self.phase != "run" or self.crash != point:
            return
        block_until_killed(
            self.workdir,
            {"pid": os.getpid(), "point": point},
            f"_effects_crash_app: nobody killed the process at {point}",
            releasable=False,
        )

    async def aat(self, point: str) -> None:
        await asyncio.to_thread(self.at, point)

    def send_receipt(self, key: str) -> dict[str, Any]:
        """The "remote" mail service: one outbox line per send, with the key it got."""
        self.record("effect", "receipt")
        append_jsonl(self.workdir / OUTBOX_NAME, {"key": key, "pid": os.getpid()})
        return {"message_id": f"msg-{os.getpid()}", "key": key}


def _charge_sql(key: str) -> tuple[str, tuple[Any, ...]]:
    return (
        "INSERT INTO payments (key, amount, pid) VALUES (%s, %s, %s) RETURNING id",
        (key, AMOUNT, os.getpid()),
    )


def sync_workers(ctx: Context, effects: PostgresEffects) -> list[Worker]:
    def cashier(task: WorkerTask) -> dict[str, Any]:
        ctx.record("worker", "cashier")
        ctx.at("before-charge")
        key = effect_key("charge")

        def charge(conn: Any) -> dict[str, Any]:
            ctx.record("effect", "charge")
            row = conn.execute(*_charge_sql(key)).fetchone()
            ctx.at("inside-charge")
            return {"payment_id": row["id"], "pid": os.getpid()}

        outcome = effects.run(key, charge)
        ctx.at("after-charge")
        return {"key": key, "charge": outcome}

    def mailer(task: WorkerTask) -> dict[str, Any]:
        ctx.record("worker", "mailer")
        key = effect_key("receipt")

        def send(idempotency_key: str) -> dict[str, Any]:
            sent = ctx.send_receipt(idempotency_key)
            ctx.at("inside-receipt")
            return sent

        outcome = effects.run_external(
            key, send, reconcile=ctx.reconcile if ctx.reconciles else None
        )
        ctx.at("after-receipt")
        return {"key": key, "receipt": outcome}

    return _team(cashier, mailer)


def async_workers(ctx: Context, effects: AsyncPostgresEffects) -> list[Worker]:
    async def cashier(task: WorkerTask) -> dict[str, Any]:
        ctx.record("worker", "cashier")
        await ctx.aat("before-charge")
        key = effect_key("charge")

        async def charge(conn: Any) -> dict[str, Any]:
            ctx.record("effect", "charge")
            row = await (await conn.execute(*_charge_sql(key))).fetchone()
            await ctx.aat("inside-charge")
            return {"payment_id": row["id"], "pid": os.getpid()}

        outcome = await effects.arun(key, charge)
        await ctx.aat("after-charge")
        return {"key": key, "charge": outcome}

    async def mailer(task: WorkerTask) -> dict[str, Any]:
        ctx.record("worker", "mailer")
        key = effect_key("receipt")

        async def send(idempotency_key: str) -> dict[str, Any]:
            sent = ctx.send_receipt(idempotency_key)
            await ctx.aat("inside-receipt")
            return sent

        outcome = await effects.arun_external(
            key, send, reconcile=ctx.reconcile if ctx.reconciles else None
        )
        await ctx.aat("after-receipt")
        return {"key": key, "receipt": outcome}

    return _team(cashier, mailer)


def _team(cashier: Any, mailer: Any) -> list[Worker]:
    return [
        Worker(name="cashier", description="Charges the card.", agent=cashier, retry=NO_RETRY),
        Worker(name="mailer", description="Sends the receipt.", agent=mailer, retry=NO_RETRY),
    ]


def build_graph(ctx: Context, workers: list[Worker]) -> Any:
    """The team: a router that follows PLAN from the ledger (and may stop at hop 2)."""

    def router(view: Any) -> str:
        hops_done = len(view.ledger)
        ctx.record("decision", f"hop-{hops_done + 1}")
        if hops_done == 1:
            ctx.at("after-cashier")
        return PLAN[hops_done] if hops_done < len(PLAN) else "FINISH"

    return create_supervisor(workers, router=router)


def _summary(values: dict[str, Any], pending: tuple[str, ...]) -> dict[str, Any]:
    workers = values.get("workers") or {}
    results = {name: [r["result"] for r in slot["results"]] for name, slot in workers.items()}
    interrupts = [
        request["name"]
        for item in values.get("__interrupt__") or ()
        for request in item.value.get("action_requests") or ()
    ]
    return run_summary(values, pending, results=results, interrupts=interrupts)


def _payload(args: argparse.Namespace) -> Any:
    if args.answer is not None:
        return Command(resume={"decisions": [json.loads(args.answer)]})
    return run_input(args.phase, "Charge and mail")


def run_sync(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config = thread_config(args.thread)
    with open_checkpointer(args.uri) as saver, open_effects(args.uri) as effects:
        with effects.pool.connection() as conn:
            conn.execute(PAYMENTS_DDL)
        app = build_graph(ctx, sync_workers(ctx, effects)).compile(checkpointer=saver)
        pending = tuple(app.get_state(config).next)
        return _summary(app.invoke(_payload(args), config, durability="sync"), pending)


async def run_async(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config = thread_config(args.thread)
    async with aopen_checkpointer(args.uri) as saver, aopen_effects(args.uri) as effects:
        async with effects.pool.connection() as conn:
            await conn.execute(PAYMENTS_DDL)
        app = build_graph(ctx, async_workers(ctx, effects)).compile(checkpointer=saver)
        pending = tuple((await app.aget_state(config)).next)
        values = await app.ainvoke(_payload(args), config, durability="sync")
        return _summary(values, pending)


def main(argv: list[str] | None = None) -> int:
    parser = app_parser(__doc__.splitlines()[0])
    parser.add_argument("--crash", default=None, choices=CRASH_POINTS)
    parser.add_argument("--reconcile", action="store_true")
    parser.add_argument("--answer", default=None, help="a review decision, as JSON")
    args = parser.parse_args(argv)
    ctx = Context(args.workdir, args.phase, args.crash, args.reconcile)
    return run_and_report(args, ctx, run_sync, run_async)


if __name__ == "__main__":
    sys.exit(main())

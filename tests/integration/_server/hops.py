"""The graph the LangGraph-server burst test serves beside the support desk: three hops a run.

`tests/integration/test_server_pg.py` serves it with `langhost` (the stock `langgraph-api`
on Postgres + Redis), two server processes on one database, and SIGKILLs one mid-burst.
What each hop does, in the server process that runs it, is recorded in that same database
(`DATABASE_URI`, which the server reads too), so the test can tell what ran where:

1. a `hop_log` row `start` (thread, worker, pid, database time);
2. the hop's side effect through the project's exactly-once effects
   (`AsyncPostgresEffects.arun(effect_key(worker), ...)`): a `hop_effects` row, committed
   in one transaction with its `lgsp_effects` record;
3. `HOP_SECONDS` of work (so hops are in flight when the process is killed);
4. a `hop_log` row `end`.

The router sends `first`, `second`, `third` once each, then FINISH: it decides from the
ledger it is shown, never from call order, so one server serves any number of runs.
Exported uncompiled: the server supplies the checkpointer and the store.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import psycopg

from langgraph_supervisor_pro import SupervisorView, Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro.persistence._effects import aopen_effects, effect_key

PLAN = ("first", "second", "third")
HOP_SECONDS = float(os.environ.get("LGSP_HOP_SECONDS", "0.4"))
"""How long a hop works after its side effect (the test sets it through the environment)."""

DDL = (
    "CREATE TABLE IF NOT EXISTS hop_log (id bigserial PRIMARY KEY, thread_id text NOT NULL,"
    " worker text NOT NULL, phase text NOT NULL, pid int NOT NULL,"
    " at timestamptz NOT NULL DEFAULT clock_timestamp())",
    "CREATE TABLE IF NOT EXISTS hop_effects (id bigserial PRIMARY KEY, key text NOT NULL,"
    " thread_id text NOT NULL, worker text NOT NULL, pid int NOT NULL)",
)
"""The test creates these tables before the servers start."""


def _uri() -> str:
    return os.environ["DATABASE_URI"]


async def _log(thread_id: str, worker: str, phase: str) -> None:
    async with await psycopg.AsyncConnection.connect(_uri(), autocommit=True) as conn:
        await conn.execute(
            "INSERT INTO hop_log (thread_id, worker, phase, pid) VALUES (%s, %s, %s, %s)",
            (thread_id, worker, phase, os.getpid()),
        )


def _hop(worker: str) -> Any:
    async def work(task: WorkerTask) -> str:
        from langgraph.config import get_config

        thread_id = str(get_config()["configurable"]["thread_id"])
        await _log(thread_id, worker, "start")
        key = effect_key(worker)

        async def effect(conn: psycopg.AsyncConnection[Any]) -> dict[str, Any]:
            await conn.execute(
                "INSERT INTO hop_effects (key, thread_id, worker, pid) VALUES (%s, %s, %s, %s)",
                (key, thread_id, worker, os.getpid()),
            )
            return {"pid": os.getpid()}

        async with aopen_effects(_uri(), pool_size=1, setup=False) as effects:
            outcome = await effects.arun(key, effect)
        await asyncio.sleep(HOP_SECONDS)
        await _log(thread_id, worker, "end")
        return f"{worker} done (effect by pid {outcome['pid']})"

    return work


def route(view: SupervisorView) -> str:
    """The next worker of `PLAN` not yet in this turn's ledger, else FINISH."""
    done = {entry["worker"] for entry in view.ledger}
    return next((worker for worker in PLAN if worker not in done), "FINISH")


graph = create_supervisor(
    [Worker(name=name, description=f"The {name} hop.", agent=_hop(name)) for name in PLAN],
    router=route,
    name="hops",
)
"""The graph `langgraph.json` serves."""

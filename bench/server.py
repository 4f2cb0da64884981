"""Background runs per second on the stock LangGraph server (langhost, Postgres + Redis).

Starts 1 and then 2 `langhost serve` processes on one fresh Postgres database (and a Redis
database of their own), serving the three-hop graph of `tests/integration/_server/hops.py`
(each hop writes two `hop_log` rows and one exactly-once effect), creates a burst of runs
through the servers in turn (`client.runs.create`, `durability="sync"`), joins them all and
prints the wall time, runs/s and hops/s, and each run's time in the server from its
`created_at` to its last `updated_at` (queue wait included), p50 and p99. Then the floor:
the same graph and burst in this process, compiled with `aopen_checkpointer` on a fresh
database of the same server, at the same concurrency (`ainvoke`, `durability="sync"`).

Needs `LGSP_POSTGRES_URI` and Redis (`LGSP_REDIS_URI`, default redis://127.0.0.1:6379); the
server venv is the test suite's (built on first use, see tests/integration/_langhost.py):

    PYTHONPATH=$PWD LGSP_POSTGRES_URI=postgresql://postgres@127.0.0.1:5432/test \\
        .venv/bin/python bench/server.py --runs 100 --jobs 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.runnables import RunnableConfig

from langgraph_supervisor_pro.persistence import open_effects
from tests._pg import ENV_VAR, create_database, drop_database, unique_database_name
from tests.integration._langhost import fleet, redis_database, server_venv

HOPS = Path(__file__).resolve().parents[1] / "tests" / "integration" / "_server" / "hops.py"


def _setup(uri: str) -> None:
    from tests.integration._server.hops import DDL

    with psycopg.connect(uri, autocommit=True) as conn:
        for statement in DDL:
            conn.execute(statement)
    with open_effects(uri):
        pass


def _when(value: object) -> datetime:
    """A run's time as the server sends it (ISO text; the SDK's types say datetime)."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


async def _burst(urls: list[str], runs: int) -> tuple[float, list[float], int]:
    """Wall time, each run's time in the server, and how many joins returned early."""
    from langgraph_sdk import get_client

    stale: list[bool] = []

    clients = [get_client(url=url, timeout=120) for url in urls]

    async def one(i: int) -> float:
        client = clients[i % len(clients)]
        tid = str((await client.threads.create())["thread_id"])
        message: dict[str, Any] = {"messages": [{"role": "user", "content": f"job {i}"}]}
        run = await client.runs.create(tid, "hops", input=message, durability="sync")
        joined = await client.runs.join(tid, run["run_id"])
        while (got := await client.runs.get(tid, run["run_id"]))["status"] in (
            "pending",
            "running",
        ):
            await asyncio.sleep(0.1)  # `join` through another process can return early
        assert got["status"] == "success", got
        state: Any = await client.threads.get_state(tid)
        values = state["values"]
        assert values["status"] == "done", values
        stale.append(joined != values)
        began = _when(got["created_at"])
        return (_when(got["updated_at"]) - began).total_seconds()

    started = time.monotonic()
    in_server = await asyncio.gather(*(one(i) for i in range(runs)))
    return time.monotonic() - started, list(in_server), sum(stale)


def measure(server_count: int, runs: int, jobs: int, hop_seconds: float) -> dict[str, Any]:
    root = os.environ[ENV_VAR]
    name = unique_database_name("lgsp_bench_server")
    uri = create_database(root, name)
    python = server_venv()
    try:
        _setup(uri)
        with tempfile.TemporaryDirectory() as tmp, redis_database() as redis_uri:
            work = Path(tmp)
            config = work / "langgraph.json"
            config.write_text(
                json.dumps({"dependencies": ["."], "graphs": {"hops": f"{HOPS}:graph"}})
            )
            env = {
                "DATABASE_URI": uri,
                "REDIS_URI": redis_uri,
                "LGSP_HOP_SECONDS": str(hop_seconds),
            }
            with fleet(
                python, project=work, config=config, logs=work, env=env, jobs=jobs
            ) as servers:
                # One at a time: on a fresh database the first process runs the migrations,
                # which two processes starting together race on (the second exits).
                started = [servers.start(str(i)).wait_ready() for i in range(server_count)]
                asyncio.run(_burst([s.url for s in started], min(runs, 2 * jobs)))  # warm up
                wall, in_server, stale = asyncio.run(_burst([s.url for s in started], runs))
        in_server.sort()
        return {
            "servers": server_count,
            "jobs per server": jobs,
            "runs": runs,
            "hop seconds": hop_seconds,
            "wall s": round(wall, 2),
            "runs/s": round(runs / wall, 1),
            "hops/s": round(3 * runs / wall, 1),
            "joins that returned an intermediate state": stale,
            "in server p50 s": round(statistics.median(in_server), 2),
            "in server p99 s": round(
                in_server[min(len(in_server) - 1, int(0.99 * len(in_server)))], 2
            ),
        }
    finally:
        drop_database(root, name)


def floor(runs: int, concurrency: int, hop_seconds: float) -> dict[str, Any]:
    """The same burst without a server: `ainvoke` in this process, `concurrency` at once."""
    from langgraph_supervisor_pro import aopen_checkpointer

    root = os.environ[ENV_VAR]
    name = unique_database_name("lgsp_bench_floor")
    uri = create_database(root, name)
    os.environ["DATABASE_URI"] = uri  # where the hops log and make their effects
    os.environ["LGSP_HOP_SECONDS"] = str(hop_seconds)
    try:
        _setup(uri)
        from tests.integration._server import hops

        hops.HOP_SECONDS = hop_seconds

        async def go() -> float:
            gate = asyncio.Semaphore(concurrency)
            async with aopen_checkpointer(uri, pool_size=concurrency) as saver:
                app = hops.graph.compile(checkpointer=saver)

                async def one(i: int) -> None:
                    async with gate:
                        config: RunnableConfig = {"configurable": {"thread_id": f"floor-{i}"}}
                        message: Any = {"messages": [("user", f"job {i}")]}
                        out = await app.ainvoke(message, config, durability="sync")
                        assert out["status"] == "done", out

                began = time.monotonic()
                await asyncio.gather(*(one(i) for i in range(runs)))
                return time.monotonic() - began

        wall = asyncio.run(go())
        return {
            "servers": 0,
            "concurrency": concurrency,
            "runs": runs,
            "hop seconds": hop_seconds,
            "wall s": round(wall, 2),
            "runs/s": round(runs / wall, 1),
            "hops/s": round(3 * runs / wall, 1),
        }
    finally:
        drop_database(root, name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=100, help="runs in the burst (100)")
    parser.add_argument("--jobs", type=int, default=10, help="--n-jobs-per-worker (10)")
    parser.add_argument("--servers", type=int, nargs="+", default=[1, 2], help="(1 2)")
    parser.add_argument("--hop-seconds", type=float, default=0.0, help="work per hop (0)")
    args = parser.parse_args(argv)
    if not os.environ.get(ENV_VAR):
        print(f"set {ENV_VAR}=postgresql://... (the bench makes its own database)", file=sys.stderr)
        return 2
    for count in args.servers:
        print(json.dumps(measure(count, args.runs, args.jobs, args.hop_seconds)), flush=True)
    print(json.dumps(floor(args.runs, args.jobs, args.hop_seconds)), flush=True)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average (1, 5, 15 min) at the end: {load}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A child process for tests/integration/test_breakers_postgres.py: one run of a team
whose `quotes` worker has a circuit breaker, on a Postgres store shared by every child.

The breaker is open with its cooldown over when the children start, so the first hop to
ask becomes the probe: its agent logs `agent` to `<workdir>/executions.jsonl` and then
waits (bounded) for `<workdir>/release`; a hop the breaker refuses is answered by the
fallback, which logs `fallback`. Prints one JSON line: the ledger entry of its hop.

By hand: `PYTHONPATH=. python tests/integration/_breaker_app.py --uri postgresql://...
--thread t1 --workdir /tmp/x --mode async`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro._breakers import Breaker
from langgraph_supervisor_pro.persistence._stores import aopen_store, open_store
from tests.integration._app_common import (
    BLOCK_SECONDS,
    RELEASE_NAME,
    app_parser,
    log_execution,
    thread_config,
)

BREAKER = Breaker(failures=2, window=60, cooldown=30)


def build(workdir: Path) -> Any:
    def agent(task: WorkerTask) -> str:
        log_execution(workdir, "run", "agent", "quotes", step=task.step)
        deadline = time.monotonic() + BLOCK_SECONDS
        while not (workdir / RELEASE_NAME).exists():
            if time.monotonic() > deadline:
                raise TimeoutError("nobody released the probe")
            time.sleep(0.02)
        return "ACME at 10"

    def fallback(task: WorkerTask) -> str:
        log_execution(workdir, "run", "fallback", "quotes", step=task.step)
        return "ACME at 9.9 (cached)"

    quotes = Worker(
        name="quotes",
        description="Fetches quotes.",
        agent=agent,
        retry=RetryPolicy(max_attempts=1),
        fallback=fallback,
        breaker=BREAKER,
    )
    return create_supervisor([quotes], router=lambda view: "FINISH" if view.ledger else "quotes")


def main() -> int:
    parser = app_parser("One run of the breaker team on a shared Postgres store.", phases=False)
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--mode", default="sync", choices=("sync", "async"))
    args = parser.parse_args()
    graph = build(args.workdir)
    request = {"messages": [("user", "Quote ACME")]}
    if args.mode == "sync":
        with open_store(args.uri, pool_size=1) as store:
            app = graph.compile(checkpointer=InMemorySaver(), store=store)
            out = app.invoke(request, thread_config(args.thread))
    else:

        async def arun() -> dict[str, Any]:
            async with aopen_store(args.uri, pool_size=1) as store:
                app = graph.compile(checkpointer=InMemorySaver(), store=store)
                result: dict[str, Any] = await app.ainvoke(request, thread_config(args.thread))
                return result

        out = asyncio.run(arun())
    print(json.dumps(out["ledger"][0]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

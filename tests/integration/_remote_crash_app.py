"""Child process of the remote-domain crash test: a root whose one worker is remote.

`python _remote_crash_app.py --url URL --db URI --thread T [--mode sync|async]` runs the
root on thread T of the Postgres database URI (durability "sync") with one worker,
`far`, whose agent is server B's `slow` graph (two seconds per run), and prints the
final ledger as JSON. The test SIGKILLs the first child while its remote run is in
flight, and resumes the thread (`invoke(None)`) in a second one with `--resume`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from langgraph.pregel.remote import RemoteGraph

from langgraph_supervisor_pro import (
    SupervisorView,
    Worker,
    aopen_checkpointer,
    create_supervisor,
    open_checkpointer,
)
from tests.integration._remote.root import NO_WAIT

TASK = {"messages": [{"role": "user", "content": "Do the slow thing"}]}


def build(url: str) -> Any:
    def once(view: SupervisorView) -> str:
        return "FINISH" if view.ledger else "far"

    worker = Worker(
        name="far",
        description="Far away and slow.",
        agent=RemoteGraph("slow", url=url),
        retry=NO_WAIT,
        timeout=60,
    )
    return create_supervisor([worker], router=once)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--thread", required=True)
    parser.add_argument("--mode", choices=["sync", "async"], default="sync")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    config: Any = {"configurable": {"thread_id": args.thread}}
    given = None if args.resume else TASK
    if args.mode == "sync":
        with open_checkpointer(args.db) as saver:
            out = (
                build(args.url).compile(checkpointer=saver).invoke(given, config, durability="sync")
            )
    else:

        async def go() -> Any:
            async with aopen_checkpointer(args.db) as saver:
                app = build(args.url).compile(checkpointer=saver)
                return await app.ainvoke(given, config, durability="sync")

        out = asyncio.run(go())
    print(json.dumps({"status": out["status"], "ledger": out["ledger"]}))


if __name__ == "__main__":
    main()

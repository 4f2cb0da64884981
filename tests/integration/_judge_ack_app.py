"""A child process for tests/integration/test_judge_postgres.py: one acknowledgement of a
queued judgement on a Postgres store shared by every child.

The child opens its own store (its own pool), reads with a 0.3 s pause after each store
read (the window in which two acknowledgements without a compare-and-set would both see
the verdict open), writes `<workdir>/<as>.ready`, waits (bounded) for `<workdir>/release`
and acknowledges `--key` as `--as`. Prints one JSON line: who it acknowledged as and when,
or the refusal's who and when.

By hand: `PYTHONPATH=. python tests/integration/_judge_ack_app.py --uri postgresql://...
--key t:1 --as ann --workdir /tmp/x --mode async`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from langgraph.store.postgres import AsyncPostgresStore, PostgresStore

from langgraph_supervisor_pro import aopen_store, open_store
from langgraph_supervisor_pro.errors import JudgementAlreadyAcknowledgedError
from langgraph_supervisor_pro.evals._judge_queue import (
    aacknowledge_judgement,
    acknowledge_judgement,
)
from tests.integration._app_common import BLOCK_SECONDS, RELEASE_NAME

PAUSE = 0.3


def _slow_reads() -> None:
    read, aread = PostgresStore.get, AsyncPostgresStore.aget

    def get(self: Any, *args: Any, **kwargs: Any) -> Any:
        item = read(self, *args, **kwargs)
        time.sleep(PAUSE)
        return item

    async def aget(self: Any, *args: Any, **kwargs: Any) -> Any:
        item = await aread(self, *args, **kwargs)
        await asyncio.sleep(PAUSE)
        return item

    PostgresStore.get = get  # type: ignore[method-assign]
    AsyncPostgresStore.aget = aget  # type: ignore[method-assign]


def _wait_for_release(workdir: Path, name: str) -> None:
    (workdir / f"{name}.ready").touch()
    deadline = time.monotonic() + BLOCK_SECONDS
    while not (workdir / RELEASE_NAME).exists():
        if time.monotonic() > deadline:
            raise TimeoutError("nobody released the acknowledgement")
        time.sleep(0.005)


def _outcome(done: Any) -> dict[str, Any]:
    if isinstance(done, JudgementAlreadyAcknowledgedError):
        return {"refused": True, "by": done.by, "at": done.at, "error": str(done)}
    return {"refused": False, "by": done.acknowledged_by, "at": done.acknowledged_at}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--uri", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--as", dest="name", required=True)
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--mode", default="sync", choices=("sync", "async"))
    args = parser.parse_args()
    _slow_reads()
    if args.mode == "sync":
        with open_store(args.uri) as store:
            _wait_for_release(args.workdir, args.name)
            try:
                done: Any = acknowledge_judgement(store, args.key, by=args.name)
            except JudgementAlreadyAcknowledgedError as exc:
                done = exc
    else:

        async def run() -> Any:
            async with aopen_store(args.uri) as store:
                _wait_for_release(args.workdir, args.name)
                try:
                    return await aacknowledge_judgement(store, args.key, by=args.name)
                except JudgementAlreadyAcknowledgedError as exc:
                    return exc

        done = asyncio.run(run())
    print(json.dumps(_outcome(done)))


if __name__ == "__main__":
    main()

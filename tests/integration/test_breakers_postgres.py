"""Circuit breakers on Postgres: one breaker shared by every store, pool and process.

Each `open_store` / `aopen_store` below has its own connection pool, as separate
processes would; the last test runs real child processes (`_breaker_app.py`).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import (
    Worker,
    WorkerTask,
    aopen_store,
    create_supervisor,
    open_checkpointer,
    open_store,
)
from langgraph_supervisor_pro._breakers import Breaker, breaker_namespace
from langgraph_supervisor_pro._graph.circuit import Admission, Read, Transact, admit
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, routes, thread
from tests.integration import _breaker_app
from tests.integration._app_common import LOG_NAME, RELEASE_NAME
from tests.integration._proc import Children, read_jsonl

pytestmark = pytest.mark.integration

T0 = 1_000_000.0  # 1970-01-12 13:46:40 UTC
QUOTES = breaker_namespace("supervisor", ("quotes",))
NO_RETRY = RetryPolicy(max_attempts=1)


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


OPEN = {
    "state": "open",
    "failures": [{"at": T0, "hop": "t1|quotes|1|1"}, {"at": T0, "hop": "t1|quotes|1|2"}],
    "until": T0 + 30,
    "probe": None,
    "probe_at": None,
    "reason": "error: RuntimeError: feed down",
    "changed_at": T0,
}


def _quotes(clock: Clock, agent: Any, **kwargs: Any) -> Worker:
    return Worker(
        name="quotes",
        description="Fetches quotes.",
        agent=agent,
        retry=NO_RETRY,
        breaker=Breaker(failures=2, window=60, cooldown=30, clock=clock),
        **kwargs,
    )


BACKUP = Worker(name="backup", description="Backup quotes.", agent=lambda t: "ACME at 10.4")


def _down(task: WorkerTask) -> str:
    raise RuntimeError("feed down")


def _store_rows(uri: str) -> list[tuple[str, str, Any]]:
    with psycopg.connect(uri) as conn:
        rows = conn.execute(
            "SELECT prefix, key, value FROM store WHERE prefix LIKE 'lgsp.breakers.%'"
        ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


# -- the read-modify-write is atomic across pools ----------------------------------------------


def test_concurrent_hops_on_separate_pools_let_exactly_one_probe_through(pg_database):
    breaker = Breaker(failures=1, window=60, cooldown=30)
    with (
        open_store(pg_database, pool_size=1) as a,
        open_store(pg_database, pool_size=1) as b,
        open_store(pg_database, pool_size=2) as c,
    ):
        stores: list[BaseStore] = [a, b, c]
        a.put(QUOTES, "state", OPEN)
        barrier = threading.Barrier(9)
        states: list[str] = []

        def hop(index: int) -> None:
            store = stores[index % 3]
            barrier.wait()
            admission: Admission = Transact(
                store, QUOTES, lambda value: admit(value, breaker, T0 + 100, f"hop-{index}")
            ).run()
            states.append(admission.state)

        threads = [threading.Thread(target=hop, args=(i,)) for i in range(9)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(states) == ["half_open"] + ["open"] * 8
        value = Read(b, QUOTES).run()
        assert value is not None and value["state"] == "half_open"
    ((prefix, key, stored),) = _store_rows(pg_database)
    assert (prefix, key, stored["state"]) == (
        "lgsp.breakers.supervisor.quotes",
        "state",
        "half_open",
    )


async def test_concurrent_async_hops_on_separate_pools_let_exactly_one_probe_through(pg_database):
    breaker = Breaker(failures=1, window=60, cooldown=30)
    async with (
        aopen_store(pg_database, pool_size=1) as a,
        aopen_store(pg_database, pool_size=1) as b,
    ):
        await a.aput(QUOTES, "state", OPEN)

        def asking(store: BaseStore, hop: str) -> Transact[Admission]:
            return Transact(store, QUOTES, lambda value: admit(value, breaker, T0 + 100, hop))

        results = await asyncio.gather(
            *(asking(a if i % 2 else b, f"hop-{i}").arun() for i in range(8))
        )
        assert sorted(r.state for r in results) == ["half_open"] + ["open"] * 7


# -- whole runs -----------------------------------------------------------------------------


def test_two_apps_on_two_pools_share_one_breaker(pg_database):
    clock = Clock()
    probe_calls: list[int] = []

    def up(task: WorkerTask) -> str:
        probe_calls.append(task.step)
        return "ACME at 10"

    with (
        open_checkpointer(pg_database) as saver,
        open_store(pg_database) as one_store,
        open_store(pg_database) as two_store,
    ):
        one = create_supervisor(
            [_quotes(clock, _down), BACKUP], router=routes("quotes", "quotes")
        ).compile(checkpointer=saver, store=one_store)
        out = one.invoke(ask(), thread())
        assert [e["breaker"]["changed_to"] for e in out["ledger"]] == [None, "open"]

        # Another app (another process) on its own pool: the worker is unavailable.
        model = ScriptedChatModel(
            script=[{"next": "quotes"}, {"next": "backup"}, {"next": "FINISH"}]
        )
        two = create_supervisor([_quotes(clock, up), BACKUP], model=model).compile(
            checkpointer=saver, store=two_store
        )
        out = two.invoke(ask(), thread())
        assert [e["worker"] for e in out["ledger"]] == ["backup"]
        assert "[unavailable: circuit open until 13:47:10 UTC]" in str(
            model.calls[0].messages[0].content
        )
        assert "worker 'quotes' is unavailable" in str(model.calls[1].messages[-1].content)

        # After the cooldown the second app probes and closes it, for both.
        clock.now = T0 + 31
        two = create_supervisor([_quotes(clock, up), BACKUP], router=routes("quotes")).compile(
            checkpointer=saver, store=two_store
        )
        (probe,) = two.invoke(ask(), thread())["ledger"]
        assert probe["breaker"] == {"state": "half_open", "failures": 0, "changed_to": "closed"}
        assert probe_calls == [1]
        value = Read(one_store, QUOTES).run()
        assert value is not None and value["state"] == "closed"


async def test_two_async_runs_on_two_pools_exactly_one_probes(pg_database):
    clock = Clock(T0 + 30)
    release = asyncio.Event()
    probes: list[int] = []

    async def agent(task: WorkerTask) -> str:
        probes.append(task.step)
        await asyncio.wait_for(release.wait(), 30)  # held until the other hop is refused
        return "ACME at 10"

    async def fallback(task: WorkerTask) -> str:
        release.set()
        return "ACME at 9.9 (cached)"

    worker = _quotes(clock, agent, fallback=fallback)
    async with (
        aopen_store(pg_database, pool_size=1) as one_store,
        aopen_store(pg_database, pool_size=1) as two_store,
    ):
        await one_store.aput(QUOTES, "state", OPEN)
        apps = [
            create_supervisor([worker], router=routes("quotes")).compile(
                checkpointer=InMemorySaver(), store=store
            )
            for store in (one_store, two_store)
        ]
        outs = await asyncio.gather(*(app.ainvoke(ask(), thread()) for app in apps))
    by_state = {o["ledger"][0]["breaker"]["state"]: o["ledger"][0] for o in outs}
    assert probes == [1]
    assert by_state["half_open"]["breaker"]["changed_to"] == "closed"
    assert (
        by_state["open"]["fallback"] == "breaker open: circuit half-open, a probe hop is in flight"
    )


# -- real processes -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_processes_share_one_breaker_and_exactly_one_probes(pg_database, tmp_path, mode):
    with open_store(pg_database) as store:
        store.put(QUOTES, "state", {**OPEN, "until": time.time() - 1})  # cooldown over
    script = Path(_breaker_app.__file__).resolve()
    with Children(script, tmp_path) as children:
        started = [
            children.start(
                f"p{i}",
                [
                    "--uri",
                    pg_database,
                    "--thread",
                    f"t{i}",
                    "--workdir",
                    str(tmp_path),
                    "--mode",
                    mode,
                ],
            )
            for i in range(3)
        ]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # one probe holds; the others are refused
            kinds = sorted(e["kind"] for e in read_jsonl(tmp_path / LOG_NAME))
            if len(kinds) == 3 or any(c.proc.poll() not in (None, 0) for c in started):
                break
            time.sleep(0.05)
        (tmp_path / RELEASE_NAME).touch()
        codes = [child.wait() for child in started]
        assert codes == [0, 0, 0], "\n".join(c.output() for c in started)
        entries = [json.loads(c.stdout_path.read_text().strip().splitlines()[-1]) for c in started]
    assert sorted(e["kind"] for e in read_jsonl(tmp_path / LOG_NAME)) == [
        "agent",
        "fallback",
        "fallback",
    ]
    assert sorted(e["breaker"]["state"] for e in entries) == ["half_open", "open", "open"]
    with open_store(pg_database) as store:
        value = Read(store, QUOTES).run()
    assert value is not None and value["state"] == "closed"

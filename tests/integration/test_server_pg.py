"""The templates on a real LangGraph server: two processes on one Postgres, one SIGKILLed.

`langhost serve` runs the stock `langgraph-api` (edition pg: background runs on a task
queue in Postgres, Redis for wake-ups, heartbeats and streams) from a venv holding the
project's `server` extra (`tests/integration/_langhost.py` builds and caches it). Each
server process serves the support desk `lgsp new` writes, unchanged (its `graph.py`; the
server's `langgraph.json` is the project's own with one graph added), and the `hops` graph
of `_server/hops.py`, whose three hops record what they run, and where, in the database.

The test, on a fresh database and a Redis database of its own:

1. Server A alone: four support-desk runs pause at the refund review.
2. Server B joins on the same database. A burst of 50 `hops` runs (`client.runs.create`,
   `durability="sync"`, created through both servers), and A is SIGKILLed while it has
   hops in flight. Right after the kill, the state of every thread A touched is read back
   through B: the hops in its ledger are the completed (checkpointed) ones.
3. Every run completes (`client.runs.join`, status success): A's runs are swept and re-run
   by B. No completed hop ran twice; a hop in flight on A ran again on B from its start,
   and its side effect (exactly-once effects) still ran once.
4. The pending reviews survived the kill. A new process A' joins; the reviews are answered
   through the API (`command={"resume": ...}`), half through A', half through B, and
   each resumes on whichever process picks it up and ends done.

The guarantee checked: a hop whose completion was checkpointed is never executed again; the
hop a killed process had in flight may be executed again on the survivor (the server
re-runs the run from the thread's last checkpoint); its exactly-once effect is recorded
once whatever runs it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from langgraph_supervisor_pro.cli import app
from langgraph_supervisor_pro.persistence._effects import open_effects
from tests.integration._devserver import interrupts
from tests.integration._langhost import LangServer, fleet, redis_database, server_venv
from tests.integration._server import hops

pytestmark = pytest.mark.integration

HOPS_APP = Path(hops.__file__)
PLAN = hops.PLAN
BURST = 50
REVIEWS = 4
JOBS = 3
"""Background runs each server process executes at once."""
HEARTBEAT = "3"
"""`LG_BG_JOB_HEARTBEAT` (seconds; 120 by default): a dead process's runs are swept after
about two of them, which leaves the test time to read the ledgers before any re-run."""
DUPLICATE = "I was charged twice for order A1001, please refund the duplicate"
RECOVERY_TIMEOUT = 120.0


@pytest.fixture(scope="module")
def python() -> Path:
    """The server venv's python (built once, then cached)."""
    return server_venv()


@pytest.fixture
def redis_uri() -> Iterator[str]:
    with redis_database() as uri:
        yield uri


def _project(root: Path) -> tuple[Path, Path]:
    """The support desk `lgsp new` writes, and a server config: its own plus `hops`."""
    project = root / "desk"
    result = CliRunner().invoke(app, ["new", "support_desk", str(project)])
    assert result.exit_code == 0, result.output
    config = json.loads((project / "langgraph.json").read_text())
    assert config["graphs"] == {"support_desk": "./support_desk/graph.py:graph"}
    config["graphs"]["hops"] = f"{HOPS_APP}:graph"
    server_config = root / "langgraph.server.json"
    server_config.write_text(json.dumps(config))
    return project, server_config


def _sdk(server: LangServer) -> Any:
    from langgraph_sdk import get_client

    return get_client(url=server.url, timeout=60)


def _query(uri: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(uri) as conn:
        return conn.execute(sql, args).fetchall()


def _in_flight(uri: str, pid: int) -> tuple[int, int]:
    """(hops started, hops in flight) on the process `pid`."""
    rows = _query(
        uri,
        "SELECT count(*) FILTER (WHERE phase = 'start'), count(*) FILTER (WHERE phase = 'start')"
        " - count(*) FILTER (WHERE phase = 'end') FROM hop_log WHERE pid = %s",
        pid,
    )
    return int(rows[0][0]), int(rows[0][1])


async def _pause_at_review(client: Any, count: int) -> dict[str, str]:
    """Run `count` support-desk threads to the refund review: thread id -> interrupt id."""

    async def one() -> tuple[str, str]:
        thread = await client.threads.create()
        tid = str(thread["thread_id"])
        message = {"messages": [{"role": "user", "content": DUPLICATE}]}
        run = await client.runs.create(tid, "support_desk", input=message, durability="sync")
        await client.runs.join(tid, run["run_id"])
        thread = await client.threads.get(tid)
        assert thread["status"] == "interrupted"
        (pending,) = interrupts(thread)
        assert pending["value"]["action_requests"][0]["name"] == "refund"
        return tid, str(pending["id"])

    return dict(await asyncio.gather(*(one() for _ in range(count))))


async def _burst(clients: list[Any]) -> list[tuple[str, str, int]]:
    """Create `BURST` hops runs, alternately through each server: (thread, run, client)."""

    async def one(i: int) -> tuple[str, str, int]:
        client = clients[i % len(clients)]
        thread = await client.threads.create()
        tid = str(thread["thread_id"])
        message = {"messages": [{"role": "user", "content": f"job {i}"}]}
        run = await client.runs.create(tid, "hops", input=message, durability="sync")
        return tid, str(run["run_id"]), i % len(clients)

    return list(await asyncio.gather(*(one(i) for i in range(BURST))))


async def _ledgers(client: Any, threads: list[str]) -> dict[str, list[str]]:
    """The workers in each thread's checkpointed ledger, read through `client`."""

    async def one(tid: str) -> tuple[str, list[str]]:
        state = await client.threads.get_state(tid)
        return tid, [entry["worker"] for entry in (state["values"] or {}).get("ledger", [])]

    return dict(await asyncio.gather(*(one(t) for t in threads)))


async def _finish(client: Any, tid: str, run_id: str) -> tuple[dict[str, Any], bool]:
    """Wait for a run (`runs.join`) that must end in success: the thread's values, and
    whether what `join` returned was already them.

    The values are read from the thread's checkpoint (`threads.get_state`): `join` through
    a process other than the one that ran the run can return an intermediate state (seen
    with langgraph-runtime-pg 0.11.1.post1: the run's last `values` event arrives after its
    end), so it only says when.
    """
    joined = await client.runs.join(tid, run_id)
    deadline = time.monotonic() + 30
    while (run := await client.runs.get(tid, run_id))["status"] in ("pending", "running"):
        assert time.monotonic() < deadline, run
        await asyncio.sleep(0.1)
    assert run["status"] == "success", run
    values = dict((await client.threads.get_state(tid))["values"])
    return values, joined == values


def test_two_servers_one_database_a_sigkill_mid_burst_loses_nothing(
    tmp_path: Path, python: Path, pg_database: str, redis_uri: str
) -> None:
    uri = pg_database
    with psycopg.connect(uri, autocommit=True) as conn:
        for statement in hops.DDL:
            conn.execute(statement)
    with open_effects(uri):
        pass  # creates lgsp_effects
    project, config = _project(tmp_path)
    env = {"DATABASE_URI": uri, "REDIS_URI": redis_uri, "LG_BG_JOB_HEARTBEAT": HEARTBEAT}

    def start(label: str) -> LangServer:
        return servers.start(label).wait_ready()

    figures: dict[str, Any] = {}
    deployment = fleet(python, project=project, config=config, logs=tmp_path, env=env, jobs=JOBS)
    with deployment as servers:
        a = start("a")
        reviews = asyncio.run(_pause_at_review(_sdk(a), REVIEWS))
        b = start("b")

        async def burst_and_kill() -> tuple[list[tuple[str, str, int]], dict[str, list[str]]]:
            began = time.monotonic()
            runs = await _burst([_sdk(a), _sdk(b)])
            figures["created_s"] = time.monotonic() - began
            deadline = time.monotonic() + RECOVERY_TIMEOUT
            while True:  # until A has done some hops and has hops in flight
                started_on_a, flying = _in_flight(uri, a.pid)
                if started_on_a >= 2 * JOBS and flying >= 1:
                    break
                assert time.monotonic() < deadline, f"A ran no hops:\n{a.tail()}"
                await asyncio.sleep(0.05)
            a.kill()
            figures["killed_at"] = _query(uri, "SELECT clock_timestamp()")[0][0]
            figures["in_flight_at_kill"] = flying
            touched = [
                str(t)
                for (t,) in _query(
                    uri, "SELECT DISTINCT thread_id FROM hop_log WHERE pid = %s", a.pid
                )
            ]
            snapshot = await _ledgers(_sdk(b), touched)
            figures["snapshot_end"] = _query(uri, "SELECT clock_timestamp()")[0][0]
            finished = await asyncio.gather(
                *(_finish(_sdk(b), tid, run_id) for tid, run_id, _ in runs)
            )
            figures["burst_s"] = time.monotonic() - began
            figures["stale_joins"] = sum(not final for _, final in finished)
            for (tid, _, _), (out, _) in zip(runs, finished, strict=True):
                assert out["status"] == "done", (tid, out)
                assert [(e["worker"], e["status"]) for e in out["ledger"]] == [
                    (w, "success") for w in PLAN
                ]
            return runs, snapshot

        runs, snapshot = asyncio.run(burst_and_kill())

        # -- what ran where ----------------------------------------------------------
        rows = _query(uri, "SELECT thread_id, worker, phase, pid, at FROM hop_log ORDER BY id")
        starts: dict[tuple[str, str], list[tuple[int, Any]]] = defaultdict(list)
        for tid, worker, phase, pid, at in rows:
            if phase == "start":
                starts[(tid, worker)].append((pid, at))
        threads = {tid for tid, _, _ in runs}
        assert set(starts) == {(t, w) for t in threads for w in PLAN}
        assert snapshot, "A touched no thread"
        for tid, ledger in snapshot.items():  # completed hops: never executed again
            assert ledger == list(PLAN[: len(ledger)])
            for worker in ledger:
                assert len(starts[(tid, worker)]) == 1, (tid, worker, starts[(tid, worker)])
        again = {hop: s for hop, s in starts.items() if len(s) > 1}
        for (tid, worker), executions in again.items():  # in flight on A, then run on B
            assert [pid for pid, _ in executions[:-1]] == [a.pid] * (len(executions) - 1)
            assert executions[-1][0] == b.pid
            assert worker not in snapshot[tid]
        assert 1 <= len(again) <= JOBS, again
        # The snapshot was read before B ran anything of A's threads.
        first_rerun = min(
            at for t in snapshot for w in PLAN for pid, at in starts[(t, w)] if pid == b.pid
        )
        assert first_rerun > figures["snapshot_end"]
        assert {pid for s in starts.values() for pid, _ in s} == {a.pid, b.pid}
        # Exactly-once effects: one per hop, whoever ran it, however often.
        effects = _query(uri, "SELECT thread_id, worker, key FROM hop_effects")
        assert Counter((t, w) for t, w, _ in effects) == Counter(set(starts))
        keys = {k for _, _, k in effects}
        recorded = _query(uri, "SELECT key FROM lgsp_effects WHERE key = ANY(%s)", list(keys))
        assert len(recorded) == len(keys) == BURST * len(PLAN)

        # -- the reviews: pending across the kill, answered on whichever process -------
        a2 = start("a2")

        async def answer() -> list[tuple[str, str]]:
            for tid, interrupt_id in reviews.items():
                thread = await _sdk(b).threads.get(tid)
                assert thread["status"] == "interrupted"
                assert [i["id"] for i in interrupts(thread)] == [interrupt_id]
            clients = [_sdk(a2), _sdk(b)]
            approve = {"decisions": [{"type": "approve"}]}
            created = [
                (
                    tid,
                    await clients[i % 2].runs.create(
                        tid, "support_desk", command={"resume": approve}
                    ),
                )
                for i, tid in enumerate(reviews)
            ]
            for tid, run in created:
                out, final = await _finish(clients[0], tid, run["run_id"])
                figures["stale_joins"] += not final
                assert out["status"] == "done"
                assert "refunded 29.00 on order A1001" in out["messages"][-1]["content"]
                assert [r["decision"] for r in out["reviews"]] == ["approve"]
                assert (await clients[1].threads.get(tid))["status"] == "idle"
            return [(tid, str(run["run_id"])) for tid, run in created]

        resumed = asyncio.run(answer())
        ran_on = {
            run_id: [s for s in ("a2", "b") if run_id in {"a2": a2, "b": b}[s].run_ids()]
            for _, run_id in resumed
        }
        assert all(len(where) == 1 for where in ran_on.values()), ran_on
        assert not a.run_ids() & set(ran_on)
        figures["resumes_on"] = dict(Counter(where[0] for where in ran_on.values()))

    recovery = (first_rerun - figures["killed_at"]).total_seconds()
    print(
        f"\nburst of {BURST} runs x {len(PLAN)} hops on 2 x {JOBS} jobs: created in "
        f"{figures['created_s']:.2f} s, all joined {figures['burst_s']:.1f} s after the first "
        f"create ({BURST / figures['burst_s']:.1f} runs/s with the kill); A killed with "
        f"{figures['in_flight_at_kill']} hops in flight, {len(again)} re-executed on B; first "
        f"re-run on B {recovery:.1f} s after the kill (LG_BG_JOB_HEARTBEAT={HEARTBEAT}); "
        f"resumes ran on {figures['resumes_on']}; joins that returned an intermediate state: "
        f"{figures['stale_joins']} of {BURST + REVIEWS}"
    )


HEAT_PUMP = (
    "Should I replace my gas boiler with a heat pump? Compare running costs and emissions, "
    "and write a short report with sources."
)
INCIDENT = (
    "Checkout is returning 500s since the 14:02 deploy of payments v2.3.1: page on-call, "
    "roll back the deploy and post a status update"
)
ASKS = {"support_desk": DUPLICATE, "research_team": HEAT_PUMP, "ops_tree": INCIDENT}
REVIEWED = {"support_desk": "refund", "ops_tree": "rollback"}
"""The templates whose request pauses at a review, and the tool under review."""
WORKERS = {
    "support_desk": ["billing"],
    "research_team": ["researcher", "analyst", "writer"],
    "ops_tree": ["incident", "infrastructure", "communications"],
}


async def _background(client: Any, tid: str, graph: str, **kwargs: Any) -> dict[str, Any]:
    """A background run (`runs.create`, then `runs.join`) that ended in success: the values."""
    run = await client.runs.create(tid, graph, **kwargs)
    values, _ = await _finish(client, tid, run["run_id"])
    return values


@pytest.mark.parametrize("template", sorted(ASKS))
def test_each_template_deploys_unchanged_on_postgres_and_redis(
    template: str, tmp_path: Path, python: Path, pg_database: str, redis_uri: str
) -> None:
    project = tmp_path / template
    result = CliRunner().invoke(app, ["new", template, str(project)])
    assert result.exit_code == 0, result.output
    env = {"DATABASE_URI": pg_database, "REDIS_URI": redis_uri}

    async def go(server: LangServer) -> None:
        client = _sdk(server)
        tid = str((await client.threads.create())["thread_id"])
        message = {"messages": [{"role": "user", "content": ASKS[template]}]}
        out = await _background(client, tid, template, input=message)
        if template in REVIEWED:
            thread = await client.threads.get(tid)
            assert thread["status"] == "interrupted"
            (pending,) = interrupts(thread)
            assert pending["value"]["action_requests"][0]["name"] == REVIEWED[template]
            approve = {"decisions": [{"type": "approve"}]}
            out = await _background(client, tid, template, command={"resume": approve})
            assert [r["decision"] for r in out["reviews"]] == ["approve"]
        assert (await client.threads.get(tid))["status"] == "idle"
        assert out["status"] == "done"
        # (research_team's researcher and analyst share a step: compared in any order)
        assert sorted((e["worker"], e["status"]) for e in out["ledger"]) == sorted(
            (w, "success") for w in WORKERS[template]
        )
        if template == "research_team":  # the sources went to the server's store (Postgres)
            found = await client.store.search_items((template, "sources", tid), limit=100)
            assert {"S1", "S2"} <= {item["key"] for item in found["items"]}

    config = project / "langgraph.json"  # the project's own, unchanged
    with fleet(python, project=project, config=config, logs=tmp_path, env=env) as servers:
        asyncio.run(go(servers.start("server").wait_ready()))
    assert _query(pg_database, "SELECT count(*) FROM checkpoints")[0][0] > 0
    if template == "support_desk":  # the server's own saver keeps the billing agent's
        # checkpoints (`server_checkpointer` does not: test_server_checkpointer.py)
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            kept = _query(
                pg_database, f"SELECT count(*) FROM {table} WHERE checkpoint_ns LIKE 'billing:%%'"
            )
            assert kept[0][0] > 0, table

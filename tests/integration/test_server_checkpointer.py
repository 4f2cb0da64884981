"""`server_checkpointer` on the stock LangGraph server (Postgres + Redis, `langhost`).

The support desk `lgsp new` writes, deployed with its own `langgraph.json` plus one line
naming `server_checkpointer`: the server runs the graph (and reads thread state) with
this package's Postgres saver on its `DATABASE_URI`. Its `billing` worker is a
tool-calling agent (`lookup_order`, then `refund` under review) and `tech_support` calls
`search_help_center`. After the runs no agent checkpoint (a namespace other than the
root) is left in `checkpoints`, `checkpoint_blobs` or `checkpoint_writes`; while the
review is pending inside `billing`, its agent's checkpoints are there, and the review
resumes through the API. Thread state, history and `update_state` from an older
checkpoint (time travel: no fork fence) still work through the API. Without the line the
server keeps the agents' checkpoints: `test_server_pg.py`'s template test asserts it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from langgraph_supervisor_pro.cli import app
from tests.integration._devserver import interrupts
from tests.integration._langhost import LangServer, fleet, redis_database, server_venv

pytestmark = pytest.mark.integration

LINE = {"path": "langgraph_supervisor_pro.persistence.server_checkpointer"}
DUPLICATE = "I was charged twice for order A1001, please refund the duplicate"
CRASH = "The app crashes when I open a note"
SECRET = "hunter2-not-for-metadata"
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


@pytest.fixture
def redis_uri() -> Iterator[str]:
    with redis_database() as uri:
        yield uri


def agent_rows(uri: str, thread: str) -> dict[str, int]:
    """Rows of the thread's non-root namespaces (its agents), by table."""
    with psycopg.connect(uri) as conn:
        return {
            table: int(
                conn.execute(
                    f"SELECT count(*) FROM {table} WHERE thread_id = %s AND checkpoint_ns <> ''",
                    (thread,),
                ).fetchone()[0]  # type: ignore[index]
            )
            for table in TABLES
        }


async def _run(client: Any, tid: str, **kwargs: Any) -> dict[str, Any]:
    """A background run that ended in success: the thread's checkpointed values."""
    run = await client.runs.create(tid, "support_desk", **kwargs)
    await client.runs.join(tid, run["run_id"])
    finished = await client.runs.get(tid, run["run_id"])
    assert finished["status"] == "success", finished
    return dict((await client.threads.get_state(tid))["values"])


def test_server_checkpointer_keeps_no_agent_checkpoints_on_the_server(
    tmp_path: Path, pg_database: str, redis_uri: str
) -> None:
    python = server_venv()
    project = tmp_path / "desk"
    result = CliRunner().invoke(app, ["new", "support_desk", str(project)])
    assert result.exit_code == 0, result.output
    config = json.loads((project / "langgraph.json").read_text())
    config["checkpointer"] = LINE
    (project / "langgraph.json").write_text(json.dumps(config))
    env = {"DATABASE_URI": pg_database, "REDIS_URI": redis_uri}

    async def go(server: LangServer) -> None:
        from langgraph_sdk import get_client

        client = get_client(url=server.url, timeout=60)
        refund = str((await client.threads.create())["thread_id"])
        ask = {"messages": [{"role": "user", "content": DUPLICATE}]}
        await _run(client, refund, input=ask)
        thread = await client.threads.get(refund)
        assert thread["status"] == "interrupted"
        (pending,) = interrupts(thread)
        assert pending["value"]["action_requests"][0]["name"] == "refund"
        paused = agent_rows(pg_database, refund)  # the agent waits for the review
        assert paused["checkpoints"] > 0 and paused["checkpoint_blobs"] > 0, paused

        approve = {"decisions": [{"type": "approve"}]}
        out = await _run(client, refund, command={"resume": approve})
        assert out["status"] == "done"
        assert "refunded 29.00 on order A1001" in out["messages"][-1]["content"]
        assert [r["decision"] for r in out["reviews"]] == ["approve"]
        assert (await client.threads.get(refund))["status"] == "idle"

        crash = str((await client.threads.create())["thread_id"])
        secret = {"configurable": {"db_password": SECRET}}  # the adapter copies configurable
        for text in (CRASH, DUPLICATE.replace("A1001", "A1002")):  # two turns, two agents
            message = {"messages": [{"role": "user", "content": text}]}
            out = await _run(client, crash, input=message, config=secret)
        assert [e["worker"] for e in out["ledger"]] == ["tech_support", "billing"]
        assert (await client.threads.get(crash))["status"] == "idle"
        for tid in (refund, crash):
            assert agent_rows(pg_database, tid) == dict.fromkeys(TABLES, 0), tid
        with psycopg.connect(pg_database) as conn:
            metadata = conn.execute("SELECT metadata::text FROM checkpoints").fetchall()
        assert metadata and not [m for (m,) in metadata if SECRET in m]

        # State and history read through the API; time travel forks (no fence).
        history = await client.threads.get_history(refund, limit=100)
        assert len(history) >= 4
        assert all(h["checkpoint"]["checkpoint_ns"] == "" for h in history)
        head = await client.threads.get_state(refund)
        assert head["values"]["status"] == "done"
        older = next(h for h in history if h["values"].get("status") != "done")
        forked = await client.threads.update_state(
            refund, {"status": "forked"}, checkpoint_id=older["checkpoint"]["checkpoint_id"]
        )
        state = await client.threads.get_state(refund)
        assert state["checkpoint"]["checkpoint_id"] == forked["checkpoint"]["checkpoint_id"]
        assert state["values"]["status"] == "forked"

    with fleet(
        python, project=project, config=project / "langgraph.json", logs=tmp_path, env=env
    ) as servers:
        server = servers.start("server").wait_ready()
        asyncio.run(go(server))
        used = server.events("Using custom checkpointer: _AsyncPostgresSaver")
        assert used, server.tail()


def _ids(history: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(h["checkpoint"]["checkpoint_id"], h["values"]) for h in history]


def _run_rows(uri: str, run_id: str) -> int:
    """Checkpoints (any namespace) whose metadata names the run."""
    with psycopg.connect(uri) as conn:
        row = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE metadata ->> 'run_id' = %s", (run_id,)
        ).fetchone()
    assert row is not None
    return int(row[0])


def _broken_links(uri: str, thread: str) -> int:
    """Root checkpoints of the thread whose parent is not stored."""
    with psycopg.connect(uri) as conn:
        row = conn.execute(
            "SELECT count(*) FROM checkpoints c WHERE c.thread_id = %s AND c.checkpoint_ns = '' "
            "AND c.parent_checkpoint_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM checkpoints p "
            "WHERE p.thread_id = c.thread_id AND p.checkpoint_ns = '' "
            "AND p.checkpoint_id = c.parent_checkpoint_id)",
            (thread,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_threads_copy_and_rollback_go_through_our_saver(
    tmp_path: Path, pg_database: str, redis_uri: str
) -> None:
    from tests.integration._server import hops

    python = server_venv()
    project = tmp_path / "desk"
    result = CliRunner().invoke(app, ["new", "support_desk", str(project)])
    assert result.exit_code == 0, result.output
    config = json.loads((project / "langgraph.json").read_text())
    config["checkpointer"] = LINE
    config["graphs"]["hops"] = f"{Path(hops.__file__)}:graph"
    (project / "langgraph.json").write_text(json.dumps(config))
    with psycopg.connect(pg_database, autocommit=True) as conn:
        for statement in hops.DDL:
            conn.execute(statement)
    env = {
        "DATABASE_URI": pg_database,
        "REDIS_URI": redis_uri,
        "LGSP_HOP_SECONDS": "1.5",
    }

    async def go(server: LangServer) -> None:
        from langgraph_sdk import get_client

        client = get_client(url=server.url, timeout=60)
        # threads.copy: the copy reads back as its source and runs on its own.
        source = str((await client.threads.create())["thread_id"])
        await _run(client, source, input={"messages": [{"role": "user", "content": CRASH}]})
        before = _ids(await client.threads.get_history(source, limit=100))
        copy = str((await client.threads.copy(source))["thread_id"])
        assert _ids(await client.threads.get_history(copy, limit=100)) == before
        second = {"messages": [{"role": "user", "content": DUPLICATE.replace("A1001", "A1002")}]}
        out = await _run(client, copy, input=second)
        assert [e["worker"] for e in out["ledger"]] == ["tech_support", "billing"]
        assert _ids(await client.threads.get_history(source, limit=100)) == before

        # rollback: a run in flight is cancelled and its checkpoints deleted
        # (adelete_for_runs) after the server lets the next run start, which may read the
        # thread first. Whichever comes first, the chain stays whole:
        # - the deletion before the next run reads: the run starts from the run before;
        # - between its read and its first checkpoint: that checkpoint names a parent
        #   that is gone and is refused (ThreadBusyError: the run fails, nothing stored);
        # - after its first checkpoint: the deletion is refused (the server logs it) and
        #   the run goes on from the cancelled run's state, as with the server's own saver.
        thread = str((await client.threads.create())["thread_id"])
        ask = {"messages": [{"role": "user", "content": "go"}]}
        first = await client.runs.create(thread, "hops", input=ask, durability="sync")
        await client.runs.join(thread, first["run_id"])
        doomed = await client.runs.create(thread, "hops", input=ask, durability="sync")
        deadline = asyncio.get_running_loop().time() + 60
        while _run_rows(pg_database, doomed["run_id"]) < 2:  # it has started
            assert asyncio.get_running_loop().time() < deadline, server.tail()
            await asyncio.sleep(0.2)
        last = await client.runs.create(
            thread, "hops", input=ask, durability="sync", multitask_strategy="rollback"
        )
        await client.runs.join(thread, last["run_id"])
        assert _broken_links(pg_database, thread) == 0
        status = (await client.runs.get(thread, last["run_id"]))["status"]
        state = (await client.threads.get_state(thread))["values"]
        ledger = [e["worker"] for e in state["ledger"]]
        if _run_rows(pg_database, doomed["run_id"]) == 0 and status == "success":
            outcome = "rolled back"
            assert state["turn"] == 2 and ledger == [*hops.PLAN, *hops.PLAN]
        elif status == "error":
            outcome = "next run refused"
            assert "which this run started from, is gone" in server.log.read_text(), server.tail()
            assert _run_rows(pg_database, doomed["run_id"]) == 0
            assert state["turn"] == 1 and ledger == list(hops.PLAN)
            again = await client.runs.create(thread, "hops", input=ask, durability="sync")
            await client.runs.join(thread, again["run_id"])
            state = (await client.threads.get_state(thread))["values"]
            assert state["turn"] == 2 and len(state["ledger"]) == 2 * len(hops.PLAN)
        else:
            outcome = "deletion refused"
            assert status == "success" and "nothing was deleted" in server.log.read_text()
            assert state["turn"] == 3
        print(f"rollback: {outcome}")

    with fleet(
        python, project=project, config=project / "langgraph.json", logs=tmp_path, env=env
    ) as servers:
        server = servers.start("server").wait_ready()
        asyncio.run(go(server))
        log = server.log.read_text(errors="replace")
        assert "missing adelete_for_runs" not in log and "missing acopy_thread" not in log

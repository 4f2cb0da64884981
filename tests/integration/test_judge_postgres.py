"""The online judge on real Postgres: the queue is shared by every pool and process.

Each `open_store` below has its own connection pool, as separate processes would; the
CLI runs in real child processes (`python -m langgraph_supervisor_pro.cli judge ...`).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from typer.testing import CliRunner

from langgraph_supervisor_pro import (
    Worker,
    aopen_checkpointer,
    aopen_store,
    create_supervisor,
    open_checkpointer,
    open_store,
)
from langgraph_supervisor_pro.cli import app as lgsp_app
from langgraph_supervisor_pro.errors import JudgementAlreadyAcknowledgedError
from langgraph_supervisor_pro.evals._judge import OnlineJudge
from langgraph_supervisor_pro.evals._judge_queue import (
    JUDGE_NAMESPACE,
    JudgedTurn,
    aacknowledge_judgement,
    acknowledge_judgement,
    judge_reviews,
)
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedChatModel
from tests._helpers import ask
from tests.integration import _judge_ack_app
from tests.integration._app_common import RELEASE_NAME
from tests.integration._proc import ROOT, Children, child_env

pytestmark = pytest.mark.integration


def verdict(call) -> dict[str, Any]:
    low = "refund" in str(call.messages[-1].content).split("Answer:")[-1]
    return {"score": 0.3 if low else 0.95, "passed": not low, "reasons": ["checked the answer"]}


def team(judge_model: Any):
    return create_supervisor(
        [Worker(name="desk", description="Answers.", agent=lambda task: f"On {task.task}")],
        router=lambda view: "FINISH" if view.ledger else "desk",
        judge=OnlineJudge(model=judge_model, sample=1.0, threshold=0.5),
    )


def lgsp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "langgraph_supervisor_pro.cli", *args],
        cwd=ROOT,
        env=child_env({"COLUMNS": "200"}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_low_scores_queue_on_postgres_and_another_process_lists_and_resolves(pg_database):
    judge_model = FunctionChatModel(name="judge", reply=verdict, record=True)
    with open_checkpointer(pg_database) as saver, open_store(pg_database) as store:
        app = team(judge_model).compile(checkpointer=saver, store=store)
        for thread_id, task in {"pg-1": "a refund", "pg-2": "opening hours"}.items():
            out = app.invoke(ask(task), {"configurable": {"thread_id": thread_id}})
            assert out["status"] == "done"
    assert len(judge_model.calls) == 2

    listed = lgsp("judge", "list", "--store", pg_database, "--json")
    assert listed.returncode == 0, listed.stderr
    (item,) = json.loads(listed.stdout)
    assert (item["key"], item["score"], item["review"]) == ("pg-1:1", 0.3, "open")
    assert item["task"] == "a refund" and item["reasons"] == ["checked the answer"]

    resolved = lgsp("judge", "resolve", "pg-1:1", "--store", pg_database, "--as", "alice")
    assert resolved.returncode == 0, resolved.stderr
    assert "Acknowledged pg-1:1" in resolved.stdout and "as alice" in resolved.stdout
    again = CliRunner().invoke(
        lgsp_app, ["judge", "resolve", "pg-1:1", "--store", pg_database, "--as", "bob"]
    )
    assert again.exit_code == 2 and "already acknowledged by alice" in again.output

    with open_store(pg_database) as store:  # a fresh pool sees the acknowledgement
        assert judge_reviews(store) == []
        (done,) = judge_reviews(store, status="all")
        assert done.acknowledged_by == "alice"


def test_a_replay_in_another_pool_reuses_the_stored_verdict(pg_database):
    first_judge = FunctionChatModel(name="judge", reply=verdict, record=True)
    cfg = {"configurable": {"thread_id": "pg-replay"}}
    with open_checkpointer(pg_database) as saver, open_store(pg_database) as store:
        first = (
            team(first_judge).compile(checkpointer=saver, store=store).invoke(ask("a refund"), cfg)
        )
    # Another process (its own pools, its own judge model) replays from before the judge step.
    second_judge = ScriptedChatModel(name="judge", script=[])  # any call would be recorded
    with open_checkpointer(pg_database) as saver, open_store(pg_database) as store:
        app = team(second_judge).compile(checkpointer=saver, store=store)
        (before,) = [s for s in app.get_state_history(cfg) if s.next == ("judge",)]
        fork = {"configurable": {**before.config["configurable"], "lgsp_fork": True}}
        replayed = app.invoke(None, fork)  # time travel: the project's fence wants it said
        assert len(judge_reviews(store)) == 1
    assert replayed["judgements"] == first["judgements"]
    assert len(first_judge.calls) == 1 and second_judge.calls == ()


def odd_verdict(call) -> dict[str, Any]:
    """A low score whose reasons hold what Postgres refuses (NUL, a lone surrogate)."""
    return {"score": 0.1, "passed": False, "reasons": ["cut\x00off", "lone \ud800 half"]}


def test_async_runs_queue_on_postgres_with_text_postgres_refuses(pg_database):
    thread_id = "pg-async/\u00e9:\u4e2d"  # (a NUL in a thread id: LangGraph's saver refuses it)

    async def main() -> list[Any]:
        async with aopen_checkpointer(pg_database) as saver, aopen_store(pg_database) as store:
            app = team(FunctionChatModel(name="judge", reply=odd_verdict)).compile(
                checkpointer=saver, store=store
            )
            out = await app.ainvoke(ask("a refund"), {"configurable": {"thread_id": thread_id}})
            assert out["judgements"][0]["queued"] is True
        with open_store(pg_database) as store:
            return judge_reviews(store)

    (item,) = asyncio.run(main())
    assert item.key == f"{thread_id}:1" and item.thread_id == thread_id
    assert item.reasons == ("cut\ufffdoff", "lone \ufffd half")


# -- two acknowledgements at once: a compare-and-set ---------------------------------------

PAUSE = 0.3
"""Seconds each store read is held up: two acknowledgements without a compare-and-set
would both read the verdict open in that window, and both write."""


def queue_one(uri: str, key: str) -> None:
    with open_store(uri) as store:
        store.put(
            JUDGE_NAMESPACE,
            key,
            {"key": key, "thread_id": key.split(":")[0], "turn": 1, "score": 0.2, "review": "open"},
        )


def stored(uri: str, key: str) -> dict[str, Any]:
    with open_store(uri) as store:
        item = store.get(JUDGE_NAMESPACE, key)
    assert item is not None
    return dict(item.value)


def check_one_winner(results: dict[str, Any], value: dict[str, Any]) -> None:
    """One acknowledgement on record; the other caller was refused, told who and when."""
    winner = value["acknowledged_by"]
    (loser,) = set(results) - {winner}
    assert value["review"] == "acknowledged"
    assert results[winner] == ("ok", winner, value["acknowledged_at"])
    assert results[loser] == ("refused", winner, value["acknowledged_at"])


def test_two_acknowledgements_at_once_on_two_pools_one_is_refused(pg_database, monkeypatch):
    queue_one(pg_database, "cas-1:1")
    read = PostgresStore.get

    def slow_get(self: Any, *args: Any, **kwargs: Any) -> Any:
        item = read(self, *args, **kwargs)
        time.sleep(PAUSE)
        return item

    monkeypatch.setattr(PostgresStore, "get", slow_get)
    gate = threading.Barrier(2)

    def acknowledge(name: str) -> tuple[str, str | None, str | None]:
        with open_store(pg_database) as store:  # a pool of its own, as another process
            gate.wait(10)
            try:
                done = acknowledge_judgement(store, "cas-1:1", by=name)
            except JudgementAlreadyAcknowledgedError as exc:
                assert exc.key == "cas-1:1" and "already acknowledged by" in str(exc)
                return ("refused", exc.by, exc.at)
            return ("ok", done.acknowledged_by, done.acknowledged_at)

    with ThreadPoolExecutor(2) as pool:
        results = dict(zip(["ann", "ben"], pool.map(acknowledge, ["ann", "ben"]), strict=True))
    check_one_winner(results, stored(pg_database, "cas-1:1"))


def test_two_async_acknowledgements_at_once_on_two_pools_one_is_refused(pg_database, monkeypatch):
    queue_one(pg_database, "cas-2:1")
    aread = AsyncPostgresStore.aget

    async def slow_aget(self: Any, *args: Any, **kwargs: Any) -> Any:
        item = await aread(self, *args, **kwargs)
        await asyncio.sleep(PAUSE)
        return item

    monkeypatch.setattr(AsyncPostgresStore, "aget", slow_aget)

    async def acknowledge(name: str) -> tuple[str, str | None, str | None]:
        async with aopen_store(pg_database) as store:
            try:
                done = await aacknowledge_judgement(store, "cas-2:1", by=name)
            except JudgementAlreadyAcknowledgedError as exc:
                return ("refused", exc.by, exc.at)
            return ("ok", done.acknowledged_by, done.acknowledged_at)

    async def main() -> list[tuple[str, str | None, str | None]]:
        return list(await asyncio.gather(acknowledge("cleo"), acknowledge("dan")))

    results = dict(zip(["cleo", "dan"], asyncio.run(main()), strict=True))
    check_one_winner(results, stored(pg_database, "cas-2:1"))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_two_processes_acknowledging_at_once_one_is_refused(pg_database, tmp_path, mode):
    queue_one(pg_database, "cas-3:1")
    script = Path(_judge_ack_app.__file__).resolve()
    names = ["eve", "fred"]
    with Children(script, tmp_path) as children:
        common = ["--uri", pg_database, "--key", "cas-3:1", "--workdir", str(tmp_path)]
        started = [children.start(name, [*common, "--as", name, "--mode", mode]) for name in names]
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"{n}.ready").exists() for n in names):
            assert time.monotonic() < deadline, "\n".join(c.output() for c in started)
            assert all(c.proc.poll() is None for c in started), "\n".join(
                c.output() for c in started
            )
            time.sleep(0.02)
        (tmp_path / RELEASE_NAME).touch()
        codes = [child.wait() for child in started]
        assert codes == [0, 0], "\n".join(c.output() for c in started)
        outcomes = {name: child.summary() for name, child in zip(names, started, strict=True)}
    results = {
        name: ("refused" if out["refused"] else "ok", out["by"], out["at"])
        for name, out in outcomes.items()
    }
    check_one_winner(results, stored(pg_database, "cas-3:1"))
    (refused,) = [o for o in outcomes.values() if o["refused"]]
    assert refused["error"].startswith("judgement 'cas-3:1' was already acknowledged by ")


def test_the_cli_refuses_a_second_resolve_naming_who_and_when(pg_database):
    queue_one(pg_database, "cas-4:1")
    with open_store(pg_database) as store:
        first = acknowledge_judgement(store, "cas-4:1", by="gus")
    assert isinstance(first, JudgedTurn)
    again = CliRunner().invoke(
        lgsp_app, ["judge", "resolve", "cas-4:1", "--store", pg_database, "--as", "hana"]
    )
    assert again.exit_code == 2
    assert f"already acknowledged by gus at {first.acknowledged_at}" in again.output

"""Tests for langgraph_supervisor_pro.persistence._retention: pruning finished, old threads.

Real backends only: memory, SQLite and the Postgres test server (with a real
`PostgresStore`, `lgsp_effects` rows and a lease held by another connection).
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple, empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore
from psycopg.rows import dict_row
from typing_extensions import TypedDict

from langgraph_supervisor_pro import aopen_checkpointer, aopen_store, open_checkpointer, open_store
from langgraph_supervisor_pro.persistence import (
    PruneReport,
    aprune_threads,
    open_effects,
    output_namespace,
    prune_threads,
)
from langgraph_supervisor_pro.persistence._leases import thread_lease
from langgraph_supervisor_pro.persistence._retention import PrunedThread, _pending, parse_age
from tests.persistence._threads import (
    ALL,
    FINISHED,
    SOURCES,
    arecord,
    ask,
    config,
    heads,
    record,
    store_items,
    team,
)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "memory":
        yield "memory"
    elif request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.db'}"
    else:
        yield request.getfixturevalue("pg_database")


@pytest.fixture
def opened(backend: str) -> Iterator[tuple[str, BaseCheckpointSaver[Any], BaseStore]]:
    with open_checkpointer(backend) as saver, open_store(backend) as store:
        yield backend, saver, store


def prune(saver: Any, store: Any, middle: datetime, **kwargs: Any) -> PruneReport:
    kwargs.setdefault("older_than", timedelta(days=30))
    return prune_threads(
        saver, store, now=middle + timedelta(days=30), store_namespaces=[SOURCES], **kwargs
    )


def test_only_finished_old_threads_go_with_their_store_items(opened) -> None:
    url, saver, store = opened
    middle = record(saver, store)
    before = {t: store_items(store, t) for t in FINISHED}
    assert all(n == 3 for n in before.values())  # an output, an effect, a source each
    holder = url if url.startswith("postgresql") else saver  # another connection on Postgres
    with thread_lease(holder, "leased"):
        report = prune(saver, store, middle, dry_run=False)
    outcomes = {t.thread_id: t.outcome for t in report.threads}
    assert outcomes == {"done-1": "deleted", "done.2/x": "deleted", "leased": "leased"}
    assert report.kept == {"leased": 1, "pending": 2, "recent": 1, "status": 1}
    assert report.scanned == len(ALL)
    assert heads(saver) == ALL - {"done-1", "done.2/x"}
    assert [store_items(store, t) for t in FINISHED] == [0, 0, 3]
    assert store_items(store, "recent") == 1  # its output: kept
    deleted = {t.thread_id: t for t in report.threads if t.outcome == "deleted"}
    assert all(t.rows["store_items"] == 3 for t in deleted.values())
    assert all(t.rows["checkpoints"] > 2 and t.status == "done" for t in deleted.values())
    assert report.totals()["store_items"] == 6
    # The survivors still resume or read back: the paused review, the mid-run step.
    app = team().compile(checkpointer=saver, store=store)
    assert app.get_state(config("paused")).interrupts
    assert app.get_state(config("mid-run")).next


def test_a_dry_run_deletes_nothing_and_says_what_would_go(opened) -> None:
    _, saver, store = opened
    middle = record(saver, store)
    report = prune(saver, store, middle, statuses=["done", "halted"])
    assert report.dry_run
    outcomes = {t.thread_id: t.outcome for t in report.threads}
    assert outcomes == dict.fromkeys(["done-1", "done.2/x", "leased", "halted"], "would_delete")
    assert report.kept == {"pending": 2, "recent": 1}
    assert heads(saver) == ALL
    assert [store_items(store, t) for t in FINISHED] == [3, 3, 3]
    halted = next(t for t in report.threads if t.thread_id == "halted")
    assert halted.status == "halted" and halted.rows["store_items"] == 2  # its two hops
    assert 30 * 86400 - 60 < halted.age_seconds < 30 * 86400 + 60
    # The dry run's counts are what the real run then deletes.
    real = prune(saver, store, middle, statuses=["done", "halted"], dry_run=False)
    assert [t.rows for t in real.threads] == [t.rows for t in report.threads]
    assert real.totals() == report.totals()
    assert heads(saver) == {"paused", "mid-run", "recent"}


def test_small_batches_see_every_thread_and_a_second_run_is_a_no_op(opened) -> None:
    _, saver, store = opened
    middle = record(saver, store)
    first = prune(saver, store, middle, dry_run=False, batch_size=1)
    assert first.scanned == len(ALL)
    assert sorted(t.thread_id for t in first.threads) == sorted(FINISHED)
    second = prune(saver, store, middle, dry_run=False)
    assert second.threads == () and second.scanned == 4
    assert second.kept == {"pending": 2, "recent": 1, "status": 1}


def _racing(saver: BaseCheckpointSaver[Any], thread: str, act: Callable[[], None]) -> None:
    """Make `saver`'s first read of `thread`'s head run `act` right after it (a writer racing
    the prune between its listing and its deletion)."""
    fired: list[bool] = []
    base = type(saver)

    def get_tuple(self: Any, config: Any) -> Any:
        item = base.get_tuple(self, config)
        if config["configurable"]["thread_id"] == thread and not fired:
            fired.append(True)
            act()
        return item

    saver.__class__ = type("Racing", (base,), {"get_tuple": get_tuple})


def test_a_new_checkpoint_between_listing_and_deletion_saves_the_thread(opened) -> None:
    _, saver, store = opened
    middle = record(saver, store)
    app = team().compile(checkpointer=saver, store=store)
    _racing(saver, "done-1", lambda: app.invoke(ask("one more report"), config("done-1")))
    report = prune(saver, store, middle, dry_run=False)
    outcomes = {t.thread_id: t.outcome for t in report.threads}
    assert outcomes == {"done-1": "changed", "done.2/x": "deleted", "leased": "deleted"}
    assert report.kept["changed"] == 1
    state = app.get_state(config("done-1")).values
    assert state["status"] == "done" and state["turn"] == 2  # both turns are still there
    assert store_items(store, "done-1") == 4  # and both outputs, the effect, the source


def test_halted_and_failed_go_only_when_asked(opened) -> None:
    _, saver, store = opened
    middle = record(saver, store)
    report = prune(saver, store, middle, statuses="failed")
    assert report.threads == () and report.kept["status"] == 4
    report = prune(saver, store, middle, statuses=("halted",), dry_run=False)
    assert [t.thread_id for t in report.threads] == ["halted"]
    assert "halted" not in heads(saver)


def test_a_thread_in_a_worker_is_kept(opened) -> None:
    # Its newest checkpoint is a worker's (a newer one than the root's head).
    _, saver, store = opened
    middle = record(saver, store)
    head = saver.get_tuple({"configurable": {"thread_id": "done-1", "checkpoint_ns": ""}})
    assert head is not None
    worker_ns = f"writer:{'0' * 8}"
    inner = {**head.checkpoint, "id": str(uuid6(clock_seq=0))}  # newer than the head
    saver.put(
        {"configurable": {"thread_id": "done-1", "checkpoint_ns": worker_ns}},
        inner,
        {"source": "loop", "step": 1, "parents": {}},
        {},
    )
    report = prune(saver, store, middle, dry_run=False)
    assert {t.thread_id: t.outcome for t in report.threads}["done-1"] == "changed"
    assert "done-1" in heads(saver)


def test_postgres_rows_of_the_thread_go_too(pg_database) -> None:
    with (
        open_checkpointer(pg_database) as saver,
        open_store(pg_database) as store,
        open_effects(pg_database) as effects,
    ):
        middle = record(saver, store)
        for thread in ("done-1", "recent"):
            effects.run_external(f"{thread}/1/1/writer/mail", lambda key: "sent")
        with thread_lease(pg_database, "done-1", owner="crashed"):
            pass
        with psycopg.connect(pg_database) as conn:  # a crashed holder's row stays behind
            conn.execute(
                "INSERT INTO lgsp_thread_leases VALUES ('done-1', 'crashed', now(), 0) "
                "ON CONFLICT (thread_id) DO NOTHING"
            )
        dry = prune(saver, store, middle)
        rows = {t.thread_id: t.rows for t in dry.threads}
        assert rows["done-1"]["effects"] == 1 and rows["done-1"]["leases"] == 1
        assert rows["done-1"]["blobs"] > 0 and rows["done.2/x"]["effects"] == 0
        prune(saver, store, middle, dry_run=False)
        with psycopg.connect(pg_database) as conn:
            left = conn.execute("SELECT thread_id FROM lgsp_effects").fetchall()
            leases = conn.execute("SELECT count(*) FROM lgsp_thread_leases").fetchone()
            blobs = conn.execute(
                "SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'done-1'"
            ).fetchone()
        assert left == [("recent",)] and leases == (0,) and blobs == (0,)


def test_postgres_lease_held_by_another_process_keeps_the_thread(pg_database) -> None:
    # The lease is an advisory lock on another connection (as another process holds it).
    with open_checkpointer(pg_database) as saver, open_store(pg_database) as store:
        middle = record(saver, store)
        with psycopg.connect(pg_database, autocommit=True) as other:
            other.execute("SELECT pg_advisory_lock(hashtextextended('lgsp_lease:done-1', 0))")
            report = prune(saver, store, middle, dry_run=False)
            outcomes = {t.thread_id: t.outcome for t in report.threads}
            assert outcomes["done-1"] == "leased" and outcomes["leased"] == "deleted"
        assert "done-1" in heads(saver)
        assert prune(saver, store, middle, dry_run=False).threads[0].outcome == "deleted"


def test_postgres_waits_for_a_checkpoint_being_written_and_keeps_the_thread(pg_database) -> None:
    # A fenced root checkpoint is being written (its transaction holds the thread's fence
    # lock) while the prune reaches the thread: the prune waits for it, sees it, keeps it.
    with open_checkpointer(pg_database) as saver, open_store(pg_database) as store:
        middle = record(saver, store)
        head = saver.get_tuple({"configurable": {"thread_id": "done-1", "checkpoint_ns": ""}})
        assert head is not None
        result: list[PruneReport] = []
        with psycopg.connect(pg_database, autocommit=True, row_factory=dict_row) as writer:
            with writer.transaction():
                writer.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended('lgsp_fence:done-1', 0))"
                )
                pruner = threading.Thread(
                    target=lambda: result.append(prune(saver, store, middle, dry_run=False))
                )
                pruner.start()
                _wait_for_a_waiting_advisory_lock(pg_database)
                PostgresSaver(writer).put(
                    {"configurable": {**head.config["configurable"]}},
                    {
                        **head.checkpoint,
                        "id": str(uuid6(clock_seq=0)),
                        "ts": datetime.now(UTC).isoformat(),
                    },
                    {"source": "update", "step": 99, "parents": {}},
                    {},
                )
            pruner.join(timeout=60)
        outcomes = {t.thread_id: t.outcome for t in result[0].threads}
        assert outcomes == {"done-1": "changed", "done.2/x": "deleted", "leased": "deleted"}
        assert "done-1" in heads(saver)


def _wait_for_a_waiting_advisory_lock(url: str) -> None:
    """Until a session waits for an advisory lock in this database (the prune, on the fence)."""
    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(6000):
            row = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ).fetchone()
            if row and row[0]:
                return
            time.sleep(0.01)
    raise AssertionError("the prune never waited for the fence lock")


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
def test_the_async_twin_prunes_the_same(kind, tmp_path, request) -> None:
    url = {"memory": "memory", "sqlite": f"sqlite:///{tmp_path / 'a.db'}"}.get(kind)
    url = url or request.getfixturevalue("pg_database")

    async def main() -> tuple[PruneReport, PruneReport, set[str]]:
        async with aopen_checkpointer(url) as saver, aopen_store(url) as store:
            middle = await arecord(saver, store)
            now = middle + timedelta(days=30)
            dry = await aprune_threads(saver, store, older_than=timedelta(days=30), now=now)
            real = await aprune_threads(
                saver, store, older_than=timedelta(days=30), now=now, dry_run=False
            )
            left = {str(i.config["configurable"]["thread_id"]) async for i in saver.alist(None)}
            return dry, real, left

    dry, real, left = asyncio.run(main())
    assert [t.outcome for t in dry.threads] == ["would_delete"] * 3
    assert [t.rows for t in real.threads] == [t.rows for t in dry.threads]
    assert all(t.rows["store_items"] == 1 for t in real.threads)
    assert left == {"paused", "recent"}


def test_postgres_savers_over_one_connection_prune_too(pg_database) -> None:
    # LangGraph's own savers over a single connection (not open_checkpointer's pool).
    with open_checkpointer(pg_database) as pooled, open_store(pg_database) as store:
        middle = record(pooled, store)
    with psycopg.connect(pg_database, autocommit=True, row_factory=dict_row) as conn:
        report = prune(PostgresSaver(conn), None, middle)
        assert [t.outcome for t in report.threads] == ["would_delete"] * 3

    async def main() -> PruneReport:
        async with await psycopg.AsyncConnection.connect(
            pg_database, autocommit=True, row_factory=dict_row
        ) as aconn:
            return await aprune_threads(
                AsyncPostgresSaver(aconn),
                older_than=timedelta(days=30),
                now=middle + timedelta(days=30),
                dry_run=False,
            )

    report = asyncio.run(main())
    assert sorted(t.thread_id for t in report.threads) == sorted(FINISHED)
    assert all(t.outcome == "deleted" and "store_items" not in t.rows for t in report.threads)


def test_sync_and_async_savers_are_not_mixed(tmp_path) -> None:
    with (
        open_checkpointer(f"sqlite:///{tmp_path / 's.db'}") as saver,
        pytest.raises(TypeError, match="is sync; use prune_threads"),
    ):
        asyncio.run(aprune_threads(saver, older_than=timedelta(days=1)))

    async def main() -> None:
        async with aopen_checkpointer(f"sqlite:///{tmp_path / 'a.db'}") as saver:
            with pytest.raises(TypeError, match="is async; use aprune_threads"):
                prune_threads(saver, older_than=timedelta(days=1))

    asyncio.run(main())
    with pytest.raises(TypeError, match="give a checkpointer"):
        prune_threads("memory", older_than=timedelta(days=1))  # type: ignore[arg-type]
    with open_checkpointer("memory") as saver, pytest.raises(TypeError, match="store: got str"):
        prune_threads(saver, "memory", older_than=timedelta(days=1))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "age", ["-1d", "NaNd", "nan", "1e999d", "", " ", "30", "d", "3x", "30d\x00", "\x00", "inf"]
)
def test_bad_ages_are_refused_naming_the_field(age) -> None:
    with pytest.raises(ValueError, match=r"^--older-than: got "):
        parse_age(age, where="--older-than")


def test_ages_and_their_limits() -> None:
    assert parse_age("90s") == timedelta(seconds=90)
    assert parse_age(" 2w ") == timedelta(weeks=2)
    assert parse_age("0d") == timedelta(0)
    assert parse_age("36500d") == timedelta(days=36500)
    with pytest.raises(ValueError, match="at most 100 years"):
        parse_age("36501d")
    with pytest.raises(ValueError, match="at most 100 years"):
        parse_age("9" * 300 + "d")  # finite as a float, far too long as an age
    with pytest.raises(ValueError, match="from 0 to 100 years"):
        parse_age(timedelta(seconds=-1))
    # The Python API's form: a number of seconds (issue 30: one way to give a duration).
    assert parse_age(30) == timedelta(seconds=30) and parse_age(1.5) == timedelta(seconds=1.5)
    for bad in (-1, math.nan, math.inf, 36501 * 86400):
        with pytest.raises(ValueError, match="give a number of seconds from 0 to"):
            parse_age(bad)
    with pytest.raises(ValueError, match="got bool"):
        parse_age(True)  # type: ignore[arg-type]
    assert math.isclose(parse_age("1.5h").total_seconds(), 5400)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"statuses": ["running"]}, ValueError, "statuses: got 'running'"),
        ({"statuses": []}, ValueError, "statuses: got 'none'"),
        ({"statuses": [None]}, ValueError, "statuses: got None"),
        ({"dry_run": "no"}, TypeError, "dry_run: got str"),
        ({"batch_size": 0}, ValueError, "batch_size: got 0"),
        ({"batch_size": 10_001}, ValueError, "batch_size: got 10001"),
        ({"batch_size": True}, TypeError, "batch_size: got bool"),
        ({"now": datetime(2030, 1, 1)}, ValueError, "now: give a timezone-aware"),
        ({"store_namespaces": [()]}, ValueError, "store_namespaces: got"),
        ({"store_namespaces": [("a.b",)]}, ValueError, "without '.'"),
        ({"store_namespaces": [("a", "")]}, ValueError, "non-empty labels"),
        ({"store_namespaces": [("a\x00",)]}, ValueError, "or NUL"),
        ({"older_than": float("inf")}, ValueError, "older_than: got inf"),
        ({"older_than": -1}, ValueError, "older_than: got -1"),
        ({"older_than": "1d"}, TypeError, "older_than: got the text '1d'"),
    ],
)
def test_bad_options_are_refused_naming_the_field(kwargs, error, match) -> None:
    kwargs.setdefault("older_than", timedelta(days=1))
    with open_checkpointer("memory") as saver, pytest.raises(error, match=match):
        prune_threads(saver, **kwargs)


def test_a_store_namespace_given_as_text_is_one_label() -> None:
    with open_checkpointer("memory") as saver, open_store("memory") as store:
        middle = record(saver, store)
        report = prune_threads(
            saver,
            store,
            older_than=timedelta(days=30),
            now=middle + timedelta(days=30),
            store_namespaces=["research_team"],  # ("research_team", <thread>): none there
        )
    assert all(t.rows["store_items"] == 2 for t in report.threads)


def test_odd_thread_ids_are_pruned(tmp_path) -> None:
    ids = ["émoji 🎉", "tab\tand space", "dot.dot", "per%cent", "a/b/c", "x" * 300]
    with (
        open_checkpointer(f"sqlite:///{tmp_path / 'odd.db'}") as saver,
        open_store("memory") as store,
    ):
        app = team().compile(checkpointer=saver, store=store)
        for thread in ids:
            app.invoke(ask("report"), config(thread))
        later = datetime.now(UTC) + timedelta(days=2)
        report = prune_threads(saver, store, older_than=timedelta(days=1), now=later, dry_run=False)
        assert sorted(t.thread_id for t in report.threads) == sorted(ids)
        assert all(t.rows["store_items"] == 1 for t in report.threads)
        assert heads(saver) == set()


def test_the_report_reads_as_json_and_lines() -> None:
    now = datetime(2030, 1, 31, tzinfo=UTC)
    row = PrunedThread(
        thread_id="t-1",
        status="done",
        outcome="would_delete",
        last_activity=datetime(2030, 1, 1, tzinfo=UTC),
        age_seconds=30 * 86400.0,
        rows={"checkpoints": 5, "store_items": 2},
    )
    report = PruneReport(
        dry_run=True, cutoff=now, statuses=("done",), scanned=2, threads=(row,), kept={"recent": 1}
    )
    assert row.line() == "thread t-1 (done, 30.0 d old): would delete, 5 checkpoints, 2 store_items"
    data = report.to_dict()
    assert data["would_delete"] == 1 and data["deleted"] == 0
    assert data["totals"] == {"checkpoints": 5, "store_items": 2}
    assert data["threads"][0]["last_activity"] == "2030-01-01T00:00:00+00:00"
    leased = PrunedThread(
        thread_id="t", status="done", outcome="leased", last_activity=now, age_seconds=59.0
    )
    assert leased.line() == "thread t (done, 1.0 min old): kept, a live lease holds it"


def test_store_items_beyond_one_page_are_counted_and_deleted() -> None:
    with open_checkpointer("memory") as saver, open_store("memory") as store:
        middle = record(saver, store)
        namespace = output_namespace("done-1", "writer")
        for index in range(1_234):
            store.put(namespace, f"extra-{index:04d}", {"n": index}, index=False)
        dry = prune(saver, store, middle)
        rows = {t.thread_id: t.rows["store_items"] for t in dry.threads}
        assert rows == {"done-1": 1_237, "done.2/x": 3, "leased": 3}
        real = prune(saver, store, middle, dry_run=False)
        assert [t.rows["store_items"] for t in real.threads] == [1_237, 3, 3]
        assert store.search(namespace, limit=10) == []


@pytest.mark.parametrize(
    ("values", "writes", "pending"),
    [
        ({"status": "done"}, [], False),
        ({"status": "done", "__pregel_tasks": []}, [], False),
        ({"status": "done", "__pregel_tasks": ["a Send"]}, [], True),  # a queued Send
        ({"status": "done", "__start__": {"messages": []}}, [], True),  # a new turn's input
        ({"status": "done", "branch:to:writer": None}, [], True),  # a routed worker
        ({"status": "done"}, [("task-1", "__interrupt__", "a review")], True),
        ({"status": "done"}, [("task-1", "__error__", "boom")], True),
    ],
)
def test_what_counts_as_work_left_on_the_head(values, writes, pending) -> None:
    checkpoint = {**empty_checkpoint(), "channel_values": values}
    item = CheckpointTuple(config("t"), checkpoint, {}, None, writes)
    assert _pending(item) is pending


def test_a_graph_without_a_status_is_never_pruned() -> None:
    # Only runs that say they ended (`status`) go: another graph's threads stay.
    class Count(TypedDict):
        n: int

    builder: StateGraph[Any, Any, Any, Any] = StateGraph(Count)
    builder.add_node("inc", lambda s: {"n": s["n"] + 1}).add_edge(START, "inc")
    with open_checkpointer("memory") as saver:
        builder.compile(checkpointer=saver).invoke({"n": 1}, config("plain"))
        later = datetime.now(UTC) + timedelta(days=2)
        report = prune_threads(saver, older_than=timedelta(days=1), now=later, dry_run=False)
        assert report.threads == () and report.kept == {"status": 1}
        assert heads(saver) == {"plain"}


def test_the_python_api_takes_seconds_or_a_timedelta_not_text():
    with open_checkpointer("memory") as saver:
        with pytest.raises(TypeError, match=r"older_than: got the text '30d'; give a number of se"):
            prune_threads(saver, older_than="30d")  # type: ignore[arg-type]
        assert prune_threads(saver, older_than=86400).threads == ()
        assert prune_threads(saver, older_than=timedelta(days=1)).threads == ()

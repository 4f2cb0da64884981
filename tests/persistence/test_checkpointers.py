"""Tests for persistence._checkpointers against real backends (no mocks)."""

from __future__ import annotations

import itertools
import operator
import socket
import sqlite3
import threading
import time
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, StateGraph
from pydantic import SecretStr

from langgraph_supervisor_pro import register_secret
from langgraph_supervisor_pro.errors import ThreadBusyError
from langgraph_supervisor_pro.persistence._checkpointers import (
    _stored_metadata,
    aopen_checkpointer,
    open_checkpointer,
)
from langgraph_supervisor_pro.persistence._leases import athread_lease
from tests._pg import database_uri, table_names
from tests.persistence.test_connections import assert_password_nowhere

POSTGRES_TABLES = {"checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"}
# Each invoke writes 3 checkpoints: the input (step -1), after START (0), after "step" (1).
CHECKPOINTS_PER_RUN = 3


class State(TypedDict):
    n: Annotated[int, operator.add]
    trail: Annotated[list[str], operator.add]


def step(state: State) -> dict[str, object]:
    return {"n": 1, "trail": ["step"]}


def build(saver):
    builder = StateGraph(State)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    return builder.compile(checkpointer=saver)


def config(thread: str = "thread-1"):
    return {"configurable": {"thread_id": thread}}


AFTER_ONE = {"n": 11, "trail": ["in", "step"]}
AFTER_TWO = {"n": 22, "trail": ["in", "step", "in", "step"]}
RUN_INPUT = {"n": 10, "trail": ["in"]}


def run_twice(saver) -> None:
    graph = build(saver)
    assert graph.invoke(RUN_INPUT, config(), durability="sync") == AFTER_ONE
    assert graph.invoke(RUN_INPUT, config(), durability="sync") == AFTER_TWO
    assert_persisted(saver, runs=2)


def assert_persisted(saver, runs: int) -> None:
    graph = build(saver)
    snapshot = graph.get_state(config())
    assert snapshot.values == (AFTER_TWO if runs == 2 else AFTER_ONE)
    assert snapshot.next == ()
    assert len(list(graph.get_state_history(config()))) == CHECKPOINTS_PER_RUN * runs
    # Other threads are untouched.
    assert graph.get_state(config("other")).values == {}


async def arun_twice(saver) -> None:
    graph = build(saver)
    assert await graph.ainvoke(RUN_INPUT, config(), durability="sync") == AFTER_ONE
    assert await graph.ainvoke(RUN_INPUT, config(), durability="sync") == AFTER_TWO
    await aassert_persisted(saver, runs=2)


async def aassert_persisted(saver, runs: int) -> None:
    graph = build(saver)
    snapshot = await graph.aget_state(config())
    assert snapshot.values == (AFTER_TWO if runs == 2 else AFTER_ONE)
    assert snapshot.next == ()
    history = [s async for s in graph.aget_state_history(config())]
    assert len(history) == CHECKPOINTS_PER_RUN * runs
    assert (await graph.aget_state(config("other"))).values == {}


def open_and_close(url, **options) -> None:
    with open_checkpointer(url, **options):
        pass


def sqlite_tables(path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    finally:
        conn.close()
    return {row[0] for row in rows}


# --- memory -----------------------------------------------------------------------------


def test_memory_persists_within_one_open():
    with open_checkpointer("memory") as saver:
        assert isinstance(saver, InMemorySaver)
        run_twice(saver)
    # Memory is per open: a new checkpointer starts empty.
    with open_checkpointer("memory") as saver:
        assert build(saver).get_state(config()).values == {}


async def test_memory_async():
    async with aopen_checkpointer("memory") as saver:
        assert isinstance(saver, InMemorySaver)
        await arun_twice(saver)


# --- sqlite -----------------------------------------------------------------------------


def test_sqlite_file_durable_across_opens(tmp_path):
    db = tmp_path / "nested" / "dirs" / "checkpoints.db"
    url = f"sqlite:///{db}"  # absolute path: four slashes
    assert url.startswith("sqlite:////")
    with open_checkpointer(url) as saver:
        assert isinstance(saver, SqliteSaver)
        assert {"checkpoints", "writes"} <= sqlite_tables(db)  # setup() ran
        run_twice(saver)
    with open_checkpointer(url) as saver:
        assert_persisted(saver, runs=2)
        graph = build(saver)
        assert graph.invoke(RUN_INPUT, config(), durability="sync")["n"] == 33


def test_sqlite_relative_path_creates_parent_dirs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with open_checkpointer("sqlite:///rel/dir/cp.db") as saver:
        run_twice(saver)
    assert (tmp_path / "rel" / "dir" / "cp.db").is_file()


def test_sqlite_connection_closed_on_exit(tmp_path):
    with open_checkpointer(f"sqlite:///{tmp_path / 'c.db'}") as saver:
        conn = saver.conn  # type: ignore[attr-defined]  # a SqliteSaver
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")


def test_sqlite_memory():
    with open_checkpointer("sqlite:///:memory:") as saver:
        assert isinstance(saver, SqliteSaver)
        run_twice(saver)
    with open_checkpointer("sqlite:///:memory:") as saver:
        assert build(saver).get_state(config()).values == {}


async def test_sqlite_file_async_durable_across_opens(tmp_path):
    db = tmp_path / "a" / "async.db"
    url = f"sqlite:///{db}"
    async with aopen_checkpointer(url) as saver:
        assert isinstance(saver, AsyncSqliteSaver)
        assert {"checkpoints", "writes"} <= sqlite_tables(db)
        await arun_twice(saver)
    async with aopen_checkpointer(url) as saver:
        await aassert_persisted(saver, runs=2)
    # Written by the async saver, read back by the sync one.
    with open_checkpointer(url) as saver:
        assert_persisted(saver, runs=2)


async def test_sqlite_memory_async():
    async with aopen_checkpointer("sqlite:///:memory:") as saver:
        assert isinstance(saver, AsyncSqliteSaver)
        await arun_twice(saver)


# --- postgres ---------------------------------------------------------------------------


def test_postgres_durable_across_opens(pg_database):
    assert table_names(pg_database) == set()
    with open_checkpointer(pg_database, pool_size=3) as saver:
        assert isinstance(saver, PostgresSaver)
        assert saver.conn.max_size == 3
        assert table_names(pg_database) >= POSTGRES_TABLES  # setup() ran
        run_twice(saver)
    assert saver.conn.closed  # pool closed on exit
    with open_checkpointer(pg_database) as saver:
        assert_persisted(saver, runs=2)


def test_postgres_setup_false_creates_nothing_and_setup_is_idempotent(pg_database):
    with open_checkpointer(pg_database, setup=False) as saver:
        assert isinstance(saver, PostgresSaver)
    assert table_names(pg_database) == set()
    for _ in range(2):
        with open_checkpointer(pg_database):
            pass
    assert table_names(pg_database) >= POSTGRES_TABLES


def test_postgres_scheme_alias(pg_database):
    url = "postgres://" + pg_database.split("://", 1)[1]
    with open_checkpointer(url) as saver:
        run_twice(saver)


async def test_postgres_async_durable_across_opens(pg_database):
    async with aopen_checkpointer(pg_database, pool_size=2) as saver:
        assert isinstance(saver, AsyncPostgresSaver)
        assert saver.conn.max_size == 2
        assert table_names(pg_database) >= POSTGRES_TABLES
        await arun_twice(saver)
    assert saver.conn.closed
    async with aopen_checkpointer(pg_database) as saver:
        await aassert_persisted(saver, runs=2)
    # Written by the async saver, read back by the sync one.
    with open_checkpointer(pg_database) as saver:
        assert_persisted(saver, runs=2)


def test_postgres_missing_database_names_it(postgres_uri):
    url = database_uri(postgres_uri, "lgsp_no_such_database")
    with pytest.raises(ConnectionError, match="lgsp_no_such_database"):
        open_and_close(url)


# --- errors -----------------------------------------------------------------------------

ACCEPTED = ("memory", "sqlite:///", "sqlite:///:memory:", "postgresql://")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("mysql://u:secret@db.example/app", "'mysql'"),
        ("redis://:secret@localhost:6379/0", "'redis'"),
        ("sqlite:/relative.db", "sqlite:"),
        ("/var/data/cp.db", "no scheme"),
        ("", "no scheme"),
    ],
)
def test_bad_url_is_rejected(url, shown):
    with pytest.raises(ValueError) as info:
        open_and_close(url)
    message = str(info.value)
    assert "`url`" in message
    assert shown in message
    assert all(form in message for form in ACCEPTED)
    assert "secret" not in message


async def test_bad_url_is_rejected_async():
    with pytest.raises(ValueError, match="'mysql'"):
        async with aopen_checkpointer("mysql://u:secret@h/db"):
            pass


def test_sqlite_without_path_is_rejected():
    with pytest.raises(ValueError, match="no database path"):
        open_and_close("sqlite:///")


@pytest.mark.parametrize("pool_size", [0, -1, True, 2.5])
@pytest.mark.parametrize("url", ["memory", "sqlite:///:memory:", "postgresql://u@h/db"])
def test_bad_pool_size_is_rejected(url, pool_size):
    with pytest.raises(ValueError, match="pool_size must be an integer >= 1"):
        open_and_close(url, pool_size=pool_size)


async def test_bad_pool_size_is_rejected_async():
    with pytest.raises(ValueError, match="pool_size"):
        async with aopen_checkpointer("memory", pool_size=0):
            pass


def test_bad_connect_timeout_is_rejected():
    with pytest.raises(ValueError, match="connect_timeout"):
        open_and_close("memory", connect_timeout=0)


UNREACHABLE = "postgresql://u:secret@127.0.0.1:1/db"


def assert_masked_connection_error(err: BaseException) -> None:
    message = str(err)
    assert "secret" not in message
    assert "postgresql://u:***@127.0.0.1:1/db" in message
    assert "host=127.0.0.1, port=1, dbname=db" in message
    assert "LGSP_POSTGRES_URI" in message
    assert "running" in message
    assert_password_nowhere(err, "secret")


def test_unreachable_postgres_fails_fast_without_leaking_password():
    start = time.monotonic()
    with pytest.raises(ConnectionError) as info:
        open_and_close(UNREACHABLE)
    assert time.monotonic() - start < 5
    assert_masked_connection_error(info.value)


async def test_unreachable_postgres_fails_fast_async():
    start = time.monotonic()
    with pytest.raises(ConnectionError) as info:
        async with aopen_checkpointer(UNREACHABLE):
            pass
    assert time.monotonic() - start < 5
    assert_masked_connection_error(info.value)


@pytest.fixture
def silent_server():
    """A TCP port that accepts connections but never answers (a hung server)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in accepted:
            conn.close()
        listener.close()


def test_hung_postgres_times_out(silent_server):
    url = f"postgresql://u:secret@127.0.0.1:{silent_server}/db"
    start = time.monotonic()
    with pytest.raises(ConnectionError) as info:
        open_and_close(url, connect_timeout=2)
    assert time.monotonic() - start < 8
    assert "secret" not in str(info.value)
    assert f"port={silent_server}" in str(info.value)


# ----------------------------------------------------------------------- stores

from langgraph_supervisor_pro import aopen_store, open_store  # noqa: E402


def _store_url(kind, tmp_path, pg_database=None):
    return {
        "memory": "memory",
        "sqlite": f"sqlite:///{tmp_path}/store.db",
        "postgres": pg_database,
    }[kind]


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
def test_store_put_get_search(kind, tmp_path, request):
    url = _store_url(
        kind, tmp_path, request.getfixturevalue("pg_database") if kind == "postgres" else None
    )
    with open_store(url) as store:
        store.put(("t1", "researcher"), "1:1", {"result": "x" * 2000, "summary": "s"})
        store.put(("t1", "writer"), "1:2", {"result": "draft"})
        assert store.get(("t1", "researcher"), "1:1").value["summary"] == "s"
        assert sorted(i.key for i in store.search(("t1",))) == ["1:1", "1:2"]
    if kind != "memory":  # durable across opens
        with open_store(url) as store:
            assert store.get(("t1", "writer"), "1:2").value == {"result": "draft"}


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
async def test_store_async(kind, tmp_path, request):
    url = _store_url(
        kind, tmp_path, request.getfixturevalue("pg_database") if kind == "postgres" else None
    )
    async with aopen_store(url) as store:
        await store.aput(("t1", "a"), "k", {"n": 1})
        assert (await store.aget(("t1", "a"), "k")).value == {"n": 1}
    if kind != "memory":
        with open_store(url) as store:
            assert store.get(("t1", "a"), "k").value == {"n": 1}


def test_store_setup_creates_tables(pg_database):
    with open_store(pg_database, setup=False):
        pass
    assert "store" not in table_names(pg_database)
    with open_store(pg_database):
        pass
    assert "store" in table_names(pg_database)


def test_store_errors():
    with pytest.raises(ValueError, match="scheme 'redis'"), open_store("redis://x"):
        pass
    with pytest.raises(ValueError, match="pool_size"), open_store("memory", pool_size=0):
        pass
    with pytest.raises(ConnectionError) as err, open_store(UNREACHABLE, connect_timeout=2):
        pass
    assert_masked_connection_error(err.value)


# --- credentials stay out of checkpoint metadata ----------------------------------------

SECRET_CONFIG = {
    "configurable": {
        "thread_id": "thread-s",
        "openai_api_key": "sk-openai-0123456789",  # a secret-looking key
        "partner": "id partner-0123456789",  # holds a registered secret
        "vendor": SecretStr("sk-vendor-0123456789"),  # never copied (not a primitive)
        "max_tokens": 100,  # a secret-looking key, but no string: copied
        "region": "eu-west-1",  # copied, as LangGraph does
    },
    "metadata": {"github_token": "ghp_0123456789", "team": "ops"},
}


def _assert_no_secret_in_metadata(metadata: list[dict[str, object]]) -> None:
    assert len(metadata) == CHECKPOINTS_PER_RUN
    for entry in metadata:
        assert (entry["region"], entry["max_tokens"], entry["team"]) == ("eu-west-1", 100, "ops")
        assert not {"openai_api_key", "partner", "vendor", "github_token"} & set(entry)
        assert "0123456789" not in str(entry)


@pytest.mark.parametrize("url", ["memory", "sqlite:///:memory:", "postgres"])
def test_secrets_stay_out_of_checkpoint_metadata(url, request):
    register_secret("partner-0123456789")
    if url == "postgres":
        url = request.getfixturevalue("pg_database")
    with open_checkpointer(url) as saver:
        build(saver).invoke(RUN_INPUT, SECRET_CONFIG)
        listed = list(saver.list({"configurable": {"thread_id": "thread-s"}}))
    _assert_no_secret_in_metadata([dict(t.metadata) for t in listed])


@pytest.mark.parametrize("url", ["memory", "sqlite:///:memory:", "postgres"])
async def test_secrets_stay_out_of_checkpoint_metadata_async(url, request):
    register_secret("partner-0123456789")
    if url == "postgres":
        url = request.getfixturevalue("pg_database")
    async with aopen_checkpointer(url) as saver:
        await build(saver).ainvoke(RUN_INPUT, SECRET_CONFIG)
        listed = [t async for t in saver.alist({"configurable": {"thread_id": "thread-s"}})]
    _assert_no_secret_in_metadata([dict(t.metadata) for t in listed])


# --- the fence: one writer per thread, even without a lease --------------------------------

FENCE_FIX = "configurable={'lgsp_fork': True}"


def count_rows(url: str, thread: str) -> tuple[int, int]:
    """(checkpoints, blobs) stored for `thread`."""
    with psycopg.connect(url) as conn:
        checkpoints = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,)
        ).fetchone()
        blobs = conn.execute(
            "SELECT count(*) FROM checkpoint_blobs WHERE thread_id = %s", (thread,)
        ).fetchone()
    assert checkpoints is not None and blobs is not None
    return checkpoints[0], blobs[0]


def build_gated(saver, barrier: threading.Barrier, bodies: list[str]):
    """`first` -> `second`, stopped before `second`; `second` waits at `barrier`."""

    def second(state: State) -> dict[str, object]:
        bodies.append(threading.current_thread().name)
        barrier.wait(timeout=30)
        return {"n": 1, "trail": [f"second by {threading.current_thread().name}"]}

    builder = StateGraph(State)
    builder.add_node("first", step)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    return builder.compile(checkpointer=saver, interrupt_before=["second"])


def assert_chain(graph, cfg) -> list[Any]:
    """The root history is one chain: each checkpoint's parent is the one before it."""
    history = list(reversed(list(graph.get_state_history(cfg))))
    for parent, child in itertools.pairwise(history):
        assert (
            child.parent_config["configurable"]["checkpoint_id"]
            == (parent.config["configurable"]["checkpoint_id"])
        )
    return history


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_fence_two_writers_at_once_one_is_refused_no_fork(pg_database, durability):
    bodies: list[str] = []
    barrier = threading.Barrier(2)
    with open_checkpointer(pg_database) as saver:
        graph = build_gated(saver, barrier, bodies)
        cfg = config("race")
        graph.invoke(RUN_INPUT, cfg, durability="sync")
        assert graph.get_state(cfg).next == ("second",)
        before = count_rows(pg_database, "race")
        outcome: dict[str, object] = {}

        def resume() -> None:
            try:
                outcome[threading.current_thread().name] = graph.invoke(
                    None, cfg, durability=durability
                )
            except Exception as exc:
                outcome[threading.current_thread().name] = exc

        callers = [threading.Thread(target=resume, name=name) for name in ("A", "B")]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(60)
        # Without a lease both bodies ran (the lease prevents that); the fence keeps the
        # stored thread single: one caller's checkpoint, the other refused.
        assert sorted(bodies) == ["A", "B"]
        refused = [v for v in outcome.values() if isinstance(v, ThreadBusyError)]
        stored = [v for v in outcome.values() if isinstance(v, dict)]
        assert len(refused) == 1 and len(stored) == 1, outcome
        err = refused[0]
        assert err.thread_id == "race" and err.holder is None
        assert "not forked" in str(err) and FENCE_FIX in str(err) and "fence=False" in str(err)
        [winner] = [name for name, v in outcome.items() if isinstance(v, dict)]
        head = graph.get_state(cfg)
        assert head.values["trail"] == ["in", "step", f"second by {winner}"]
        assert head.next == ()
        history = assert_chain(graph, cfg)
        assert count_rows(pg_database, "race")[0] == before[0] + 1 == len(history)


def test_fence_refuses_a_stale_put_and_writes_nothing(pg_database):
    with open_checkpointer(pg_database) as saver:
        graph = build(saver)
        cfg = config("stale")
        graph.invoke(RUN_INPUT, cfg, durability="sync")
        head = saver.get_tuple(cfg)
        assert head is not None and head.parent_config is not None
        older = head.parent_config
        before = count_rows(pg_database, "stale")
        stale = {**head.checkpoint, "id": "1fffffff-ffff-6fff-8fff-ffffffffffff"}
        stale["channel_values"] = {"trail": ["forked"]}
        with pytest.raises(ThreadBusyError) as caught:
            saver.put(older, stale, {"source": "loop", "step": 9}, {"trail": "99.0"})
        assert caught.value.thread_id == "stale"
        assert head.config["configurable"]["checkpoint_id"] in str(caught.value)
        assert count_rows(pg_database, "stale") == before
        assert saver.get_tuple(cfg).config == head.config
        # A put on the head is the thread's next checkpoint; a first checkpoint needs none.
        nxt = {**head.checkpoint, "id": "1fffffff-ffff-6fff-8fff-fffffffffff0"}
        saver.put(head.config, nxt, {"source": "loop", "step": 2}, {})
        fresh = {"configurable": {"thread_id": "fresh", "checkpoint_ns": ""}}
        saver.put(fresh, nxt, {"source": "input", "step": -1}, {})
        assert count_rows(pg_database, "stale")[0] == before[0] + 1
        # Other namespaces (subgraphs) are not fenced.
        sub = {"configurable": {"thread_id": "stale", "checkpoint_ns": "sub:1"}}
        other = dict(nxt)
        other["id"] = "1fffffff-ffff-6fff-8fff-fffffffffff1"
        saver.put(sub, other, {}, {})  # type: ignore[arg-type]


def test_fence_lets_plain_parentless_puts_through(pg_database):
    # The saver contract (LangGraph's conformance suite) stores root checkpoints without a
    # parent on a thread that has some: no graph run wrote them, so no run forks.
    with open_checkpointer(pg_database) as saver:
        cfg = {"configurable": {"thread_id": "roots", "checkpoint_ns": ""}}
        first = {**empty_checkpoint(), "id": "1fffffff-ffff-6fff-8fff-fffffffffff2"}
        second = {**empty_checkpoint(), "id": "1fffffff-ffff-6fff-8fff-fffffffffff3"}
        saver.put(cfg, first, {"source": "input", "step": -1}, {})
        saver.put(cfg, second, {"source": "input", "step": -1}, {})
        assert [t.checkpoint["id"] for t in saver.list(cfg)] == [second["id"], first["id"]]


@pytest.mark.parametrize("durability", ["sync", "exit"])
def test_fence_two_runs_starting_a_fresh_thread_one_is_refused(pg_database, durability):
    # Both runs read the thread empty, then both store a first checkpoint: a graph run's
    # (LangGraph passes its run's config to `put`), so the second is refused.
    with open_checkpointer(pg_database) as saver:
        graph = build(saver)
        barrier = threading.Barrier(2)
        read = saver.get_tuple

        def get_tuple(cfg):
            found = read(cfg)
            if cfg["configurable"]["thread_id"] == "fresh-race":
                barrier.wait(timeout=30)
            return found

        saver.get_tuple = get_tuple  # type: ignore[method-assign]
        outcome: dict[str, object] = {}

        def run() -> None:
            name = threading.current_thread().name
            try:
                outcome[name] = graph.invoke(RUN_INPUT, config("fresh-race"), durability=durability)
            except Exception as exc:
                outcome[name] = exc

        callers = [threading.Thread(target=run, name=name) for name in ("A", "B")]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(60)
        del saver.get_tuple  # the saver's own again
        refused = [v for v in outcome.values() if isinstance(v, ThreadBusyError)]
        assert len(refused) == 1 and AFTER_ONE in outcome.values(), outcome
        assert "read no checkpoint (a fresh thread)" in str(refused[0])
        assert_chain(graph, config("fresh-race"))
        assert graph.get_state(config("fresh-race")).values == AFTER_ONE


def test_time_travel_needs_lgsp_fork(pg_database):
    with open_checkpointer(pg_database) as saver:
        graph = build(saver)
        cfg = config("travel")
        graph.invoke(RUN_INPUT, cfg, durability="sync")
        graph.invoke(RUN_INPUT, cfg, durability="sync")
        older = next(s for s in graph.get_state_history(cfg) if s.values == AFTER_ONE).config
        before = count_rows(pg_database, "travel")
        with pytest.raises(ThreadBusyError, match="lgsp_fork"):
            graph.invoke(RUN_INPUT, older, durability="sync")
        with pytest.raises(ThreadBusyError, match="time travel"):
            graph.update_state(older, {"trail": ["edited"]})
        assert count_rows(pg_database, "travel") == before
        forked = {"configurable": {**older["configurable"], "lgsp_fork": True}}
        assert graph.invoke(RUN_INPUT, forked, durability="sync") == AFTER_TWO
        assert graph.get_state(cfg).values == AFTER_TWO
        updated = graph.update_state(forked, {"trail": ["edited"]})
        assert graph.get_state(cfg).values["trail"] == ["in", "step", "edited"]
        assert (
            graph.get_state(cfg).config["configurable"]["checkpoint_id"]
            == (updated["configurable"]["checkpoint_id"])
        )
        # The new head continues normally, no flag needed.
        graph.update_state(cfg, {"trail": ["more"]})
        assert graph.get_state(cfg).values["trail"][-1] == "more"


def test_fence_false_allows_forks(pg_database):
    with open_checkpointer(pg_database, fence=False) as saver:
        graph = build(saver)
        cfg = config("free")
        graph.invoke(RUN_INPUT, cfg, durability="sync")
        graph.invoke(RUN_INPUT, cfg, durability="sync")
        older = next(s for s in graph.get_state_history(cfg) if s.values == AFTER_ONE).config
        graph.update_state(older, {"trail": ["edited"]})
        assert graph.get_state(cfg).values["trail"] == ["in", "step", "edited"]


@pytest.mark.parametrize("fence", [None, 1, "yes"])
def test_bad_fence_is_rejected(fence):
    with pytest.raises(TypeError, match=r"fence: got .*give True"):
        open_and_close("memory", fence=fence)


async def test_fence_async(pg_database):
    async with aopen_checkpointer(pg_database) as saver:
        graph = build(saver)
        cfg = config("atravel")
        await graph.ainvoke(RUN_INPUT, cfg, durability="sync")
        await graph.ainvoke(RUN_INPUT, cfg, durability="sync")
        history = [s async for s in graph.aget_state_history(cfg)]
        older = next(s for s in history if s.values == AFTER_ONE).config
        before = count_rows(pg_database, "atravel")
        with pytest.raises(ThreadBusyError, match="is busy: another writer stored"):
            await graph.ainvoke(RUN_INPUT, older, durability="sync")
        with pytest.raises(ThreadBusyError):
            await graph.aupdate_state(older, {"trail": ["edited"]})
        assert count_rows(pg_database, "atravel") == before
        forked = {"configurable": {**older["configurable"], "lgsp_fork": True}}
        assert await graph.ainvoke(RUN_INPUT, forked, durability="sync") == AFTER_TWO
        await graph.aupdate_state(forked, {"trail": ["edited"]})
        assert (await graph.aget_state(cfg)).values["trail"] == ["in", "step", "edited"]


async def test_fence_async_names_the_lease_holder(pg_database):
    async with aopen_checkpointer(pg_database) as saver:
        graph = build(saver)
        cfg = config("held")
        await graph.ainvoke(RUN_INPUT, cfg, durability="sync")
        older = (await saver.aget_tuple(cfg)).parent_config
        async with athread_lease(saver, "held", owner="the-primary"):
            with pytest.raises(ThreadBusyError) as caught:
                await graph.ainvoke(RUN_INPUT, older, durability="sync")
        assert caught.value.holder == "the-primary"
        assert "its lease is held by the-primary" in str(caught.value)


# --- metadata a caller adds: what a LangGraph server's custom-checkpointer adapter does ----


class _Opaque:
    """Not JSON (a worker's `HopContext` is one such value)."""


ADDED_METADATA = {
    "source": "loop",
    "step": 1,
    "parents": {"": "1f0"},
    "counters": {"ledger": [0, 1]},
    "lgsp_context": _Opaque(),  # not JSON: Postgres would refuse the checkpoint
    "deep": {"a": [{"b": _Opaque()}]},
    "openai_api_key": "sk-live-0123456789",
    "partner": "id partner-0123456789",  # holds a registered secret
    "team": "ops",
    "score": float("nan"),
}
KEPT = {"source", "step", "parents", "counters", "team"}


def _checkpoint_config(namespace: str) -> dict[str, Any]:
    """The root (its put forgets finished hops) or a marked agent (a plain put)."""
    metadata = {"lgsp_transient": True} if namespace else {}
    return {
        "configurable": {"thread_id": "thread-m", "checkpoint_ns": namespace},
        "metadata": metadata,
    }


def _assert_added_metadata_cleaned(metadata: dict[str, Any]) -> None:
    assert set(metadata) >= KEPT
    assert not {"lgsp_context", "deep", "openai_api_key", "partner"} & set(metadata)
    assert metadata["counters"] == {"ledger": [0, 1]}


@pytest.mark.parametrize("namespace", ["", "billing:task-1"])
@pytest.mark.parametrize("url", ["memory", "sqlite:///:memory:", "postgres"])
def test_metadata_given_to_put_keeps_only_json_and_no_secrets(url, namespace, request):
    register_secret("partner-0123456789")
    if url == "postgres":
        url = request.getfixturevalue("pg_database")
    with open_checkpointer(url) as saver:
        stored = saver.put(
            _checkpoint_config(namespace),  # type: ignore[arg-type]
            empty_checkpoint(),
            ADDED_METADATA,  # type: ignore[arg-type]
            {},
        )
        found = saver.get_tuple(stored)
    assert found is not None
    _assert_added_metadata_cleaned(dict(found.metadata))


@pytest.mark.parametrize("namespace", ["", "billing:task-1"])
@pytest.mark.parametrize("url", ["memory", "sqlite:///:memory:", "postgres"])
async def test_metadata_given_to_put_keeps_only_json_and_no_secrets_async(url, namespace, request):
    register_secret("partner-0123456789")
    if url == "postgres":
        url = request.getfixturevalue("pg_database")
    async with aopen_checkpointer(url) as saver:
        stored = await saver.aput(
            _checkpoint_config(namespace),  # type: ignore[arg-type]
            empty_checkpoint(),
            ADDED_METADATA,  # type: ignore[arg-type]
            {},
        )
        found = await saver.aget_tuple(stored)
    assert found is not None
    _assert_added_metadata_cleaned(dict(found.metadata))


def test_clean_metadata_is_passed_as_is():
    metadata = {"source": "loop", "step": 2, "parents": {}, "score": 0.5, "none": None}
    assert _stored_metadata(metadata) is metadata  # type: ignore[arg-type]
    odd = {"step": 1, "nan": float("nan"), "inf": [float("inf")], "text": "caf\u00e9 \U0001f600"}
    assert _stored_metadata(odd) == {"step": 1, "text": "caf\u00e9 \U0001f600"}  # type: ignore[arg-type]
    deep: Any = "x"
    for _ in range(12):  # deeper than a checkpoint's metadata ever nests: left out
        deep = [deep]
    nested: Any = {"step": 1, "deep": deep}
    assert _stored_metadata(nested) == {"step": 1}


def _two_runs(graph, thread: str) -> None:
    for run in ("r1", "r2"):
        graph.invoke(RUN_INPUT, {**config(thread), "metadata": {"run_id": run}}, durability="sync")


async def _atwo_runs(graph, thread: str) -> None:
    for run in ("r1", "r2"):
        cfg = {**config(thread), "metadata": {"run_id": run}}
        await graph.ainvoke(RUN_INPUT, cfg, durability="sync")


# A LangGraph server's rollback deletes the cancelled run's checkpoints after it lets the
# next run start, which may have read the thread already: that run's next root
# checkpoint names a parent that is gone, and would break the chain delta channels are
# rebuilt from.
@pytest.mark.parametrize(("fence", "keep"), [(True, False), (False, False), (False, True)])
def test_a_root_checkpoint_whose_parent_was_deleted_is_refused(pg_database, fence, keep):
    with open_checkpointer(pg_database, fence=fence, keep_agent_checkpoints=keep) as saver:
        graph = build(saver)
        _two_runs(graph, "t")
        read = saver.get_tuple(config("t"))  # what the next run read: r2's head
        assert read is not None
        saver.delete_for_runs(["r2"])
        before = count_rows(pg_database, "t")
        nxt = {**read.checkpoint, "id": "1fffffff-ffff-6fff-8fff-fffffffffff0"}
        with pytest.raises(ThreadBusyError, match="which this run started from, is gone") as e:
            saver.put(read.config, nxt, {"source": "loop", "step": 9}, {})
        assert e.value.thread_id == "t" and read.config["configurable"]["checkpoint_id"] in str(
            e.value
        )
        assert count_rows(pg_database, "t") == before
        assert graph.invoke(RUN_INPUT, config("t"), durability="sync") == AFTER_TWO
        # A thread deleted whole: its next root checkpoint names a parent that is gone too.
        saver.delete_thread("t")
        with pytest.raises(ThreadBusyError, match="is gone"):
            saver.put(read.config, nxt, {"source": "loop", "step": 9}, {})


@pytest.mark.parametrize(("fence", "keep"), [(True, False), (False, False), (False, True)])
async def test_a_root_checkpoint_whose_parent_was_deleted_is_refused_async(
    pg_database, fence, keep
):
    async with aopen_checkpointer(pg_database, fence=fence, keep_agent_checkpoints=keep) as saver:
        graph = build(saver)
        await _atwo_runs(graph, "t")
        read = await saver.aget_tuple(config("t"))
        assert read is not None
        await saver.adelete_for_runs(["r2"])
        nxt = {**read.checkpoint, "id": "1fffffff-ffff-6fff-8fff-fffffffffff0"}
        with pytest.raises(ThreadBusyError, match="which this run started from, is gone"):
            await saver.aput(read.config, nxt, {"source": "loop", "step": 9}, {})
        assert await graph.ainvoke(RUN_INPUT, config("t"), durability="sync") == AFTER_TWO
        await saver.adelete_thread("t")
        with pytest.raises(ThreadBusyError, match="is gone"):
            await saver.aput(read.config, nxt, {"source": "loop", "step": 9}, {})


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_root_checkpoint_whose_parent_was_deleted_is_refused_locally(kind, tmp_path):
    url = "memory" if kind == "memory" else f"sqlite:///{tmp_path / 'c.db'}"
    with open_checkpointer(url) as saver:
        graph = build(saver)
        _two_runs(graph, "t")
        read = saver.get_tuple(config("t"))
        assert read is not None
        saver.delete_for_runs(["r2"])
        before = [c.config for c in saver.list(config("t"))]
        nxt = {**read.checkpoint, "id": "1fffffff-ffff-6fff-8fff-fffffffffff0"}
        with pytest.raises(ThreadBusyError, match="which this run started from, is gone"):
            saver.put(read.config, nxt, {"source": "loop", "step": 9}, {})
        assert [c.config for c in saver.list(config("t"))] == before  # nothing stored
        assert graph.invoke(RUN_INPUT, config("t"), durability="sync") == AFTER_TWO


async def test_a_root_checkpoint_whose_parent_was_deleted_is_refused_async_sqlite(tmp_path):
    async with aopen_checkpointer(f"sqlite:///{tmp_path / 'c.db'}") as saver:
        graph = build(saver)
        await _atwo_runs(graph, "t")
        read = await saver.aget_tuple(config("t"))
        assert read is not None
        await saver.adelete_for_runs(["r2"])
        nxt = {**read.checkpoint, "id": "1fffffff-ffff-6fff-8fff-fffffffffff0"}
        with pytest.raises(ThreadBusyError, match="which this run started from, is gone"):
            await saver.aput(read.config, nxt, {"source": "loop", "step": 9}, {})
        refused = {"configurable": {**read.config["configurable"], "checkpoint_id": nxt["id"]}}
        assert await saver.aget_tuple(refused) is None  # undone
        assert await graph.ainvoke(RUN_INPUT, config("t"), durability="sync") == AFTER_TWO

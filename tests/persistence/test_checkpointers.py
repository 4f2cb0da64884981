"""Tests for langgraph_supervisor_pro.persistence.checkpointers against real backends (no mocks)."""

from __future__ import annotations

import operator
import socket
import sqlite3
import threading
import time
from typing import Annotated, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, StateGraph
from pydantic import SecretStr

from langgraph_supervisor_pro import register_secret
from langgraph_supervisor_pro.persistence.checkpointers import aopen_checkpointer, open_checkpointer
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

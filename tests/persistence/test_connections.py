"""Every opener: a bad Postgres URL never shows its password, and options are checked.

The URLs here fail before any network I/O (libpq refuses them) or on a refused
loopback port, so no database is needed. The error must not hold the password
anywhere: its message, its repr, any exception chained to it (`__cause__` and
`__context__`, which `raise ... from None` only hides) or its formatted traceback.
"""

from __future__ import annotations

import math
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager
from typing import Any

import psycopg
import pytest

from langgraph_supervisor_pro.persistence import aopen_effects, open_effects
from langgraph_supervisor_pro.persistence._checkpointers import (
    aopen_checkpointer,
    open_checkpointer,
)
from langgraph_supervisor_pro.persistence._stores import aopen_store, open_store
from tests._pg import wait_until_blocked, while_held

Opener = Callable[..., AbstractContextManager[Any] | AbstractAsyncContextManager[Any]]
OPENERS: dict[str, Opener] = {
    "open_checkpointer": open_checkpointer,
    "aopen_checkpointer": aopen_checkpointer,
    "open_store": open_store,
    "aopen_store": aopen_store,
    "open_effects": open_effects,
    "aopen_effects": aopen_effects,
}

# (URL, its password as written, what the message must say to fix it)
MALFORMED = [
    pytest.param(
        "postgresql://u:s3cretPW@127.0.0.1:notaport/db",
        "s3cretPW",
        'invalid integer value "notaport"',
        id="port-not-a-number",
    ),
    pytest.param(
        "postgresql://u:s3cretPW@/db?sslmode=bogus",
        "s3cretPW",
        'invalid sslmode value: "bogus"',
        id="bad-sslmode",
    ),
    pytest.param(
        # libpq quotes the whole URI in this error.
        "postgresql://u:s3cretPW@[::1/db",
        "s3cretPW",
        'looking for matching "]"',
        id="unbalanced-bracket",
    ),
    pytest.param(
        "postgres://u:s3cretPW@127.0.0.1:1/db?connect_timeout=x",
        "s3cretPW",
        "port=1",
        id="bad-connect-timeout-param",
    ),
    pytest.param(
        "postgresql://u:s3cretPW@127.0.0.1:1/db?bogus=1",
        "s3cretPW",
        'invalid URI query parameter: "bogus"',
        id="unknown-param",
    ),
    pytest.param(
        # libpq quotes the password itself here.
        "postgresql://u:s3c ret PW@127.0.0.1:1/db",
        "s3c ret PW",
        "spaces in the password",  # libpq's message, which quotes it, is withheld
        id="space-in-password",
    ),
    pytest.param(
        "postgresql://u:s3cret%zzPW@127.0.0.1:1/db",
        "s3cret%zzPW",
        "Percent-encode any of",  # libpq's message, which quotes it, is withheld
        id="bad-percent-escape-in-password",
    ),
    pytest.param(
        # An unencoded '#' starts a fragment for Python's parser, not for libpq's.
        "postgresql://u:s3c#retPW@127.0.0.1:1/db",
        "s3c#retPW",
        "port=1",
        id="hash-in-password",
    ),
]


def exception_chain(exc: BaseException) -> list[BaseException]:
    """`exc` and every exception reachable from it by `__cause__` and `__context__`."""
    seen: list[BaseException] = []
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        pending.extend([current.__cause__, current.__context__])
    return seen


def assert_password_nowhere(exc: BaseException, password: str) -> None:
    for linked in exception_chain(exc):
        assert password not in str(linked), type(linked).__name__
        assert password not in repr(linked), type(linked).__name__
        assert password not in "".join(map(str, linked.args)), type(linked).__name__
    assert password not in "".join(traceback.format_exception(exc))


async def open_and_close(opener: Opener, url: str, **options: Any) -> None:
    manager = opener(url, **options)
    if isinstance(manager, AbstractAsyncContextManager):
        async with manager:
            pass
    else:
        with manager:
            pass


@pytest.mark.parametrize("opener", list(OPENERS))
@pytest.mark.parametrize(("url", "password", "fix"), MALFORMED)
async def test_a_malformed_url_never_shows_its_password(
    opener: str, url: str, password: str, fix: str
) -> None:
    with pytest.raises(ConnectionError) as info:
        await open_and_close(OPENERS[opener], url, connect_timeout=2)
    exc = info.value
    assert_password_nowhere(exc, password)
    message = str(exc)
    assert message.startswith("Could not connect to Postgres at ")
    assert "***" in message  # the URL is shown, masked
    assert fix in message  # and the message still says what is wrong
    assert "Hint:" in message


@pytest.mark.parametrize("opener", list(OPENERS))
@pytest.mark.parametrize(
    ("password", "fragments"),
    [("ab/cd", ['"ab"', "port=ab", "cd@"]), ("x/y", ['"x"', "port=x", "y@"])],
)
async def test_no_short_fragment_of_a_password_is_shown(
    opener: str, password: str, fragments: list[str]
) -> None:
    # libpq reads host 'u' and port 'ab' here (issue 33): a fragment shorter than any
    # scrubbing threshold, so its message is not shown at all.
    url = f"postgresql://u:{password}@127.0.0.1:1/db"
    with pytest.raises(ConnectionError) as info:
        await open_and_close(OPENERS[opener], url, connect_timeout=2)
    message = str(info.value)
    assert message.startswith(
        "Could not connect to Postgres at postgresql://u:***@127.0.0.1:1/db: "
    )
    assert "Percent-encode any of" in message
    for fragment in fragments:
        for linked in exception_chain(info.value):
            assert fragment not in str(linked)


@pytest.mark.parametrize("opener", list(OPENERS))
async def test_a_postgres_url_without_slashes_is_refused(opener: str) -> None:
    # libpq would read it as `key=value` settings and quote it whole in its error.
    # (Given as a variable: a literal in the call would be in the traceback's source line.)
    url = "postgresql:u:s3cretPW@127.0.0.1:1/db"
    with pytest.raises(ValueError, match="starts with 'postgresql://'") as info:
        await open_and_close(OPENERS[opener], url)
    assert_password_nowhere(info.value, "s3cretPW")
    assert "postgresql:u:***@127.0.0.1:1/db" in str(info.value)


@pytest.mark.parametrize("opener", list(OPENERS))
@pytest.mark.parametrize(
    "timeout",
    [math.nan, math.inf, -math.inf, 1e300, pytest.param(10**400, id="huge-int"), True, "3"],
)
async def test_connect_timeout_must_be_a_finite_number_of_seconds(
    opener: str, timeout: Any
) -> None:
    # Checked before anything is opened (the port would refuse a connection anyway).
    url = "postgresql://u:s3cretPW@127.0.0.1:1/db"
    with pytest.raises(ValueError, match=r"^connect_timeout: got .*; give a number of seconds"):
        await open_and_close(OPENERS[opener], url, connect_timeout=timeout)


# ----------------------------------------------------------------------- setup across processes


def _open_together(url: str, opener: Any, n: int) -> list[BaseException]:
    """`n` threads open `url` with `opener` (its setup included) at the same moment."""
    import threading

    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def one() -> None:
        barrier.wait()
        try:
            with opener(url, pool_size=1, connect_timeout=10):
                pass
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return errors


@pytest.mark.parametrize("kind", ["checkpointer", "store"])
def test_setups_on_a_fresh_database_at_the_same_moment_do_not_collide(pg_database, kind):
    # LangGraph's migrations (CREATE TABLE IF NOT EXISTS, CREATE INDEX CONCURRENTLY) fail
    # or deadlock when several processes run them at once on a fresh database.
    from langgraph_supervisor_pro import open_checkpointer, open_store

    opener = open_checkpointer if kind == "checkpointer" else open_store
    assert _open_together(pg_database, opener, 6) == []
    with opener(pg_database) as backend:  # migrated once, completely
        assert backend is not None


async def test_async_setups_at_the_same_moment_do_not_collide(pg_database):
    import asyncio

    from langgraph_supervisor_pro import aopen_checkpointer, aopen_store

    async def one(opener: Any) -> None:
        async with opener(pg_database, pool_size=1, connect_timeout=10):
            pass

    await asyncio.gather(*(one(aopen_checkpointer) for _ in range(4)))
    await asyncio.gather(*(one(aopen_store) for _ in range(4)))


# -- the pools' connection check ------------------------------------------------------

CHECKOUTS = 25
PREPARED = "SELECT count(*) AS n FROM pg_prepared_statements"


def test_checking_pooled_connections_leaves_no_prepared_statement(pg_database):
    # psycopg_pool's own check prepared its empty statement on every checkout under the
    # savers' prepare_threshold=0 (two round trips), and never released it: a pooled
    # backend kept one more prepared statement per checkout, without bound.
    from langgraph_supervisor_pro import open_checkpointer

    with open_checkpointer(pg_database, pool_size=1) as saver:
        pool = saver.conn  # type: ignore[attr-defined]
        for _ in range(CHECKOUTS):
            with pool.connection():
                pass
        with pool.connection() as conn:
            row = conn.execute(PREPARED, prepare=False).fetchone()
    # The saver's own statements stay prepared (a handful); the checks add none.
    assert row is not None and row["n"] < 10, row


async def test_async_checking_pooled_connections_leaves_no_prepared_statement(pg_database):
    from langgraph_supervisor_pro import aopen_checkpointer

    async with aopen_checkpointer(pg_database, pool_size=1) as saver:
        pool = saver.conn  # type: ignore[attr-defined]
        for _ in range(CHECKOUTS):
            async with pool.connection():
                pass
        async with pool.connection() as conn:
            row = await (await conn.execute(PREPARED, prepare=False)).fetchone()
    assert row is not None and row["n"] < 10, row


def _terminate(admin_uri: str, pid: int) -> None:
    import psycopg

    with psycopg.connect(admin_uri, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_a_pooled_connection_killed_by_the_server_is_replaced_on_checkout(pg_database):
    # The check still finds a dead connection: the next checkout gets a working one.
    from langgraph_supervisor_pro import open_checkpointer

    with open_checkpointer(pg_database, pool_size=1) as saver:
        pool = saver.conn  # type: ignore[attr-defined]
        with pool.connection() as conn:
            killed = conn.info.backend_pid
        _terminate(pg_database, killed)
        with pool.connection() as conn:
            assert conn.info.backend_pid != killed
            assert conn.execute("SELECT 1 AS one").fetchone() == {"one": 1}


async def test_async_a_pooled_connection_killed_by_the_server_is_replaced(pg_database):
    import asyncio

    from langgraph_supervisor_pro import aopen_checkpointer

    async with aopen_checkpointer(pg_database, pool_size=1) as saver:
        pool = saver.conn  # type: ignore[attr-defined]
        async with pool.connection() as conn:
            killed = conn.info.backend_pid
        await asyncio.to_thread(_terminate, pg_database, killed)
        async with pool.connection() as conn:
            assert conn.info.backend_pid != killed
            row = await (await conn.execute("SELECT 1 AS one")).fetchone()
            assert row == {"one": 1}


# -- pooled savers use every connection (the gate that replaces LangGraph's one lock) ------

# LangGraph's Postgres savers hold one lock per saver around every statement, pool or not
# (langgraph #7259): over a pool, one statement in flight at a time. Each test below holds
# one saver statement in the database (an uncommitted row with the key it inserts) and
# asks the saver for something else meanwhile: with the one lock, the second call waits
# for the first and times out; over the gate it runs on another pooled connection.

BLOCKED_TASK = "task-held-by-the-test"
HOLD_ROW = (
    "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, "
    "task_path, idx, channel, type, blob) VALUES (%s, '', %s, %s, '', 0, 'x', 'null', '')"
)
PATIENCE = 20.0
"""Seconds a call may take before the test calls it stuck (the one lock: forever)."""


def _checkpoint(at: Any) -> tuple[Any, Any, Any, Any]:
    """`put`'s arguments: a thread's first checkpoint (`at` a thread id), or the next after
    the stored checkpoint `at` (its config)."""
    from langgraph.checkpoint.base import create_checkpoint, empty_checkpoint

    if isinstance(at, str):
        config = {"configurable": {"thread_id": at, "checkpoint_ns": ""}}
        return config, empty_checkpoint(), {"source": "input", "step": -1}, {}
    return at, create_checkpoint(empty_checkpoint(), None, 1), {"source": "loop", "step": 0}, {}


def _stored_checkpoint(saver: Any, at: Any) -> Any:
    return saver.put(*_checkpoint(at))


async def _astored_checkpoint(saver: Any, at: Any) -> Any:
    return await saver.aput(*_checkpoint(at))


def _while_a_write_is_held(uri: str, saver: Any, held: Any) -> Any:
    """`saver.put_writes` on `held` in a thread, waiting in the database (`while_held`)."""
    return while_held(
        uri,
        HOLD_ROW,
        _held_key(held),
        lambda: saver.put_writes(held, [("x", 1)], BLOCKED_TASK),
        PATIENCE,
    )


def _held_key(config: Any) -> tuple[str, str, str]:
    configurable = config["configurable"]
    return configurable["thread_id"], configurable["checkpoint_id"], BLOCKED_TASK


@asynccontextmanager
async def _awhile_a_write_is_held(uri: str, saver: Any, held: Any) -> AsyncIterator[None]:
    """Async twin of `_while_a_write_is_held`: `aput_writes` waits in the database."""
    import asyncio

    holder: psycopg.Connection[Any] = await asyncio.to_thread(psycopg.connect, uri)
    try:
        await asyncio.to_thread(holder.execute, HOLD_ROW, _held_key(held))
        write = asyncio.create_task(saver.aput_writes(held, [("x", 1)], BLOCKED_TASK))
        await asyncio.to_thread(wait_until_blocked, uri, PATIENCE)
        yield
        assert not write.done()
    finally:
        await asyncio.to_thread(holder.rollback)
        await asyncio.to_thread(holder.close)
    await asyncio.wait_for(write, PATIENCE)


def test_a_pooled_saver_reads_while_another_of_its_statements_waits(pg_database):
    from langgraph_supervisor_pro import open_checkpointer

    with open_checkpointer(pg_database, pool_size=3) as saver:
        held = _stored_checkpoint(saver, "held")
        other = _stored_checkpoint(saver, "other")
        with _while_a_write_is_held(pg_database, saver, held) as pool:
            read = pool.submit(saver.get_tuple, other)
            found = read.result(timeout=PATIENCE)  # the one lock: waits for the write
        assert found is not None and found.config["configurable"]["thread_id"] == "other"
        stored = saver.get_tuple(held)
        assert stored is not None and [w[1:] for w in stored.pending_writes or []] == [("x", 1)]


async def test_an_async_pooled_saver_reads_while_another_of_its_statements_waits(pg_database):
    import asyncio

    from langgraph_supervisor_pro import aopen_checkpointer

    async with aopen_checkpointer(pg_database, pool_size=3) as saver:
        held = await _astored_checkpoint(saver, "held")
        other = await _astored_checkpoint(saver, "other")
        async with _awhile_a_write_is_held(pg_database, saver, held):
            found = await asyncio.wait_for(saver.aget_tuple(other), PATIENCE)
        assert found is not None and found.config["configurable"]["thread_id"] == "other"
        stored = await saver.aget_tuple(held)
        assert stored is not None and [w[1:] for w in stored.pending_writes or []] == [("x", 1)]


async def test_a_call_beyond_the_pool_waits_its_turn_without_a_pool_timeout(pg_database):
    # One connection, held by a write the database keeps waiting for longer than the
    # pool's deadline: a fenced root checkpoint (our own transaction, past LangGraph's
    # `_cursor`) queues behind it on the gate, never on the pool, so it is stored once
    # the write finishes instead of failing with PoolTimeout after connect_timeout.
    import asyncio

    from langgraph_supervisor_pro import aopen_checkpointer

    timeout = 1.0
    async with aopen_checkpointer(pg_database, pool_size=1, connect_timeout=timeout) as saver:
        held = await _astored_checkpoint(saver, "held")
        parent = await _astored_checkpoint(saver, "next")
        async with _awhile_a_write_is_held(pg_database, saver, held):
            later = asyncio.create_task(_astored_checkpoint(saver, parent))
            await asyncio.sleep(3 * timeout)  # past the pool's deadline
            assert not later.done()
        stored = await asyncio.wait_for(later, PATIENCE)
        assert stored["configurable"]["thread_id"] == "next"
        head = await saver.aget_tuple({"configurable": {"thread_id": "next"}})
        assert head is not None
        stored_id = stored["configurable"]["checkpoint_id"]
        assert head.config["configurable"]["checkpoint_id"] == stored_id


def test_a_sync_call_beyond_the_pool_waits_its_turn_without_a_pool_timeout(pg_database):
    import time

    from langgraph_supervisor_pro import open_checkpointer

    timeout = 1.0
    with open_checkpointer(pg_database, pool_size=1, connect_timeout=timeout) as saver:
        held = _stored_checkpoint(saver, "held")
        parent = _stored_checkpoint(saver, "next")
        with _while_a_write_is_held(pg_database, saver, held) as pool:
            later = pool.submit(_stored_checkpoint, saver, parent)
            time.sleep(3 * timeout)  # past the pool's deadline
            assert not later.done()
        stored = later.result(timeout=PATIENCE)
        head = saver.get_tuple({"configurable": {"thread_id": "next"}})
        assert head is not None
        stored_id = stored["configurable"]["checkpoint_id"]
        assert head.config["configurable"]["checkpoint_id"] == stored_id


# -- the gates themselves ----------------------------------------------------------------


async def test_the_async_gate_admits_as_many_as_its_size_and_queues_the_rest_in_order():
    import asyncio

    from langgraph_supervisor_pro.persistence._connections import AsyncPoolGate

    gate = AsyncPoolGate(2)
    order: list[int] = []
    release = asyncio.Event()

    async def holder(index: int) -> None:
        async with gate:
            order.append(index)
            await release.wait()

    tasks = [asyncio.create_task(holder(i)) for i in range(4)]
    while len(order) < 2:
        await asyncio.sleep(0)
    for _ in range(5):  # the others stay queued
        await asyncio.sleep(0)
    assert order == [0, 1] and gate.locked() and gate.waiting == 2 and gate.size == 2
    release.set()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3] and not gate.locked() and gate.waiting == 0


def test_the_sync_gate_admits_as_many_as_its_size():
    import threading
    import time

    from langgraph_supervisor_pro.persistence._connections import pool_gate

    gate = pool_gate(2)
    assert gate.acquire(timeout=1) and gate.acquire(timeout=1)
    assert not gate.acquire(timeout=0.01)  # a third holder waits
    entered = threading.Event()

    def third() -> None:
        with gate:
            entered.set()

    thread = threading.Thread(target=third)
    thread.start()
    deadline = time.monotonic() + PATIENCE
    while gate.waiting != 1 and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.001)
    assert gate.waiting == 1 and not entered.is_set()  # type: ignore[attr-defined]
    gate.release()
    assert entered.wait(PATIENCE)
    thread.join(PATIENCE)
    assert gate.waiting == 0  # type: ignore[attr-defined]
    gate.release()
    with pytest.raises(ValueError):  # bounded: a release without an acquire is a bug
        gate.release()


@pytest.mark.parametrize("size", [1, 4])
def test_pooled_savers_take_the_gate_of_their_pool_size(pg_database, size):
    from langgraph_supervisor_pro import open_checkpointer

    with open_checkpointer(pg_database, pool_size=size) as saver:
        gate = saver.lock  # type: ignore[attr-defined]
        assert [gate.acquire(timeout=1) for _ in range(size)] == [True] * size
        assert not gate.acquire(timeout=0.01)
        for _ in range(size):
            gate.release()

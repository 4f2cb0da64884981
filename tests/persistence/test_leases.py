"""Tests for langgraph_supervisor_pro.persistence._leases: one writer per thread.

Real backends only: Postgres leases against the test server (advisory locks, the
`lgsp_thread_leases` row, the session's keepalive settings), process-local leases for
memory and SQLite. Two processes at once are in tests/integration/test_standby.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import threading
import time
from typing import Any

import psycopg
import pytest
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro.errors import ThreadBusyError
from langgraph_supervisor_pro.persistence._leases import (
    _Options,
    _settings,
    athread_lease,
    thread_lease,
)

BAD_WAITS = [float("nan"), -1, float("inf"), True, "5"]


class Count(TypedDict):
    n: int


def _graph() -> StateGraph[Any, Any, Any, Any]:
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(Count)
    builder.add_node("inc", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "inc")
    return builder


def hold(lease: Any) -> None:
    """Take `lease` and give it back at once."""
    with lease:
        pass


async def ahold(lease: Any) -> None:
    async with lease:
        pass


def lease_rows(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        present = conn.execute("SELECT to_regclass('lgsp_thread_leases')").fetchone()
        if present is None or present[0] is None:
            return []
        return conn.execute(
            "SELECT thread_id, owner, backend_pid FROM lgsp_thread_leases ORDER BY thread_id"
        ).fetchall()


def lock_free(url: str, thread_id: str) -> bool:
    """Whether the thread's lease lock can be taken now (taken and given back at once)."""
    with psycopg.connect(url, autocommit=True) as conn:
        key = "hashtextextended('lgsp_lease:' || %s, 0)"
        row = conn.execute(f"SELECT pg_try_advisory_lock({key})", (thread_id,)).fetchone()
        if row and row[0]:
            conn.execute(f"SELECT pg_advisory_unlock({key})", (thread_id,))
            return True
        return False


# -- configuration --------------------------------------------------------------------------


@pytest.mark.parametrize("wait", BAD_WAITS)
def test_bad_wait_is_refused(wait):
    with pytest.raises(ValueError, match=r"thread_lease wait: got .*None to fail at once"):
        hold(thread_lease("memory", "t", wait=wait))


@pytest.mark.parametrize("wait", BAD_WAITS)
async def test_bad_wait_is_refused_async(wait):
    with pytest.raises(ValueError, match="athread_lease wait"):
        await ahold(athread_lease("memory", "t", wait=wait))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"owner": ""}, "owner: got ''; give a non-empty name"),
        ({"owner": "a\x00b"}, "owner: got"),
        ({"owner": "x" * 201}, "owner: 201 characters"),
        ({"expire_after": 3}, "expire_after: got 3; give at least 4"),
        ({"expire_after": 3601}, "expire_after: got 3601"),
        ({"expire_after": float("nan")}, "expire_after: got nan"),
        ({"connect_timeout": 0}, "connect_timeout: got 0"),
    ],
)
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match), thread_lease("memory", "t", **kwargs):
        pass


@pytest.mark.parametrize("thread_id", ["", "   ", None, 7, "a\x00"])
def test_bad_thread_id_is_refused(thread_id):
    with pytest.raises(ValueError, match=r"thread_lease thread_id: got .*non-empty thread id"):
        hold(thread_lease("memory", thread_id))


def test_bad_db_is_refused():
    with pytest.raises(TypeError, match="got int; give a database URL, the checkpointer"):
        hold(thread_lease(3, "t"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Unsupported checkpointer `url`"):
        hold(thread_lease("mysql://x", "t"))
    with pytest.raises(TypeError, match="the graph has no checkpointer of its own"):
        hold(thread_lease(_graph().compile(), "t"))


def test_postgres_saver_over_one_connection_needs_the_url(pg_database):
    from langgraph.checkpoint.postgres import PostgresSaver

    with (
        PostgresSaver.from_conn_string(pg_database) as saver,
        pytest.raises(TypeError, match="pass the database URL instead"),
    ):
        hold(thread_lease(saver, "t"))


def test_keepalives_add_up_to_at_most_expire_after():
    for expiry, want in [(4, (1, 1, 3)), (10, (7, 1, 3)), (30, (15, 5, 3)), (3600, (1800, 600, 3))]:
        opts = _Options("t", None, "me", float(expiry), 5.0)
        assert opts.keepalives == want
        assert opts.expires_within <= expiry
        assert opts.expires_within >= expiry - 1


def test_thread_busy_error_carries_thread_and_holder():
    err = ThreadBusyError("t-9", "host:1")
    assert (err.thread_id, err.holder) == ("t-9", "host:1")
    assert "thread 't-9' is busy" in str(err) and "held by host:1" in str(err)
    again = pickle.loads(pickle.dumps(err))
    assert (again.thread_id, again.holder, str(again)) == ("t-9", "host:1", str(err))
    assert ThreadBusyError("t").holder is None
    assert isinstance(err, RuntimeError)


# -- process-local leases (memory, SQLite) -------------------------------------------------


def test_local_second_caller_is_refused_naming_the_holder():
    with open_checkpointer("memory") as saver:
        with thread_lease(saver, "t", owner="first") as lease:
            assert (lease.backend, lease.owner, lease.expires_within) == ("local", "first", None)
            with pytest.raises(ThreadBusyError) as caught:
                hold(thread_lease(saver, "t", owner="second"))
            assert (caught.value.thread_id, caught.value.holder) == ("t", "first")
            with thread_lease(saver, "other-thread"):
                pass  # another thread is free
        with thread_lease(saver, "t"):
            pass  # released on exit


def test_local_lease_is_per_checkpointer_and_per_sqlite_file(tmp_path):
    with (
        open_checkpointer("memory") as one,
        open_checkpointer("memory") as two,
        thread_lease(one, "t"),
        thread_lease(two, "t"),
    ):
        pass
    url = f"sqlite:///{tmp_path / 'a.db'}"
    with thread_lease(url, "t"), pytest.raises(ThreadBusyError):
        hold(thread_lease(f"sqlite:///{tmp_path}/./a.db", "t"))


def test_local_released_on_exception_and_keyboard_interrupt():
    for exc in (RuntimeError("boom"), KeyboardInterrupt()):
        with pytest.raises(type(exc)), thread_lease("memory", "t"):
            raise exc
        with thread_lease("memory", "t"):
            pass


def test_local_wait_runs_the_second_after_the_first():
    order: list[str] = []
    entered = threading.Event()

    def first() -> None:
        with thread_lease("memory", "w", owner="first"):
            entered.set()
            time.sleep(0.3)
            order.append("first done")

    worker = threading.Thread(target=first)
    worker.start()
    assert entered.wait(5)
    with thread_lease("memory", "w", owner="second", wait=5):
        order.append("second runs")
    worker.join()
    assert order == ["first done", "second runs"]
    with (
        thread_lease("memory", "w", owner="first"),
        pytest.raises(ThreadBusyError, match=r"waited for 0\.1 s"),
    ):
        hold(thread_lease("memory", "w", wait=0.1))


async def test_local_async_lease_and_wait():
    async def hold() -> None:
        async with athread_lease("memory", "a", owner="first"):
            await asyncio.sleep(0.3)

    task = asyncio.create_task(hold())
    await asyncio.sleep(0.05)
    with pytest.raises(ThreadBusyError) as caught:
        await ahold(athread_lease("memory", "a"))
    assert caught.value.holder == "first"
    async with athread_lease("memory", "a", wait=5) as lease:
        assert task.done() and lease.backend == "local"


# -- Postgres leases -----------------------------------------------------------------------


def test_postgres_second_caller_in_another_thread_is_refused(pg_database):
    with open_checkpointer(pg_database) as saver:
        app = _graph().compile(checkpointer=saver)
        with thread_lease(app, "t1", owner="primary") as lease:
            assert lease.backend == "postgres" and lease.expires_within == 30.0
            assert lease_rows(pg_database)[0][:2] == ("t1", "primary")
            errors: list[BaseException] = []

            def second() -> None:
                try:
                    with thread_lease(pg_database, "t1", owner="second"):
                        errors.append(AssertionError("the second caller ran"))
                except BaseException as exc:
                    errors.append(exc)

            other = threading.Thread(target=second)
            other.start()
            other.join(30)
            [err] = errors
            assert isinstance(err, ThreadBusyError), err
            assert (err.thread_id, err.holder) == ("t1", "primary")
            assert "held by primary" in str(err) and "wait=SECONDS" in str(err)
            with thread_lease(saver, "t2"):  # another thread is free
                pass
        assert lease_rows(pg_database) == []
        assert lock_free(pg_database, "t1")


def test_postgres_wait_runs_the_second_after_the_first(pg_database):
    order: list[str] = []
    entered = threading.Event()

    def first() -> None:
        with thread_lease(pg_database, "w", owner="first"):
            entered.set()
            time.sleep(0.5)
            order.append("first done")

    worker = threading.Thread(target=first)
    worker.start()
    assert entered.wait(30)
    started = time.monotonic()
    with thread_lease(pg_database, "w", owner="second", wait=10):
        order.append("second runs")
        assert lease_rows(pg_database)[0][:2] == ("w", "second")
    worker.join()
    assert order == ["first done", "second runs"]
    assert time.monotonic() - started < 5
    with thread_lease(pg_database, "w", owner="first"):
        started = time.monotonic()
        with pytest.raises(ThreadBusyError, match=r"held by first; waited for 0\.3 s"):
            hold(thread_lease(pg_database, "w", wait=0.3))
        assert 0.25 < time.monotonic() - started < 5


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt()], ids=repr)
def test_postgres_released_on_exception_and_keyboard_interrupt(pg_database, exc):
    with pytest.raises(type(exc)), thread_lease(pg_database, "t"):
        assert not lock_free(pg_database, "t")
        raise exc
    assert lock_free(pg_database, "t")
    assert lease_rows(pg_database) == []


def test_postgres_lease_dies_with_its_connection(pg_database):
    """A holder whose session ends (the process died) leaves its row, not its lock."""
    with thread_lease(pg_database, "t", owner="doomed"):
        [(_, _, pid)] = lease_rows(pg_database)
        with psycopg.connect(pg_database, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        deadline = time.monotonic() + 10
        while not lock_free(pg_database, "t") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lock_free(pg_database, "t")
        with thread_lease(pg_database, "t", owner="next") as lease:
            assert lease.owner == "next"
            assert lease_rows(pg_database)[0][:2] == ("t", "next")
    # the killed session could not delete its row; the next holder's release did
    assert lease_rows(pg_database) == []


def test_postgres_session_gets_the_keepalives(pg_database):
    opts = _Options("t", None, "me", 10.0, 5.0)
    with psycopg.connect(pg_database, autocommit=True) as conn:
        for statement, params in _settings(conn, opts):
            conn.execute(statement, params)
        over_tcp = not conn.info.host.startswith("/")
        names = ("tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count")
        shown = [conn.execute("SELECT current_setting(%s)", (n,)).fetchone()[0] for n in names]
        user_timeout = conn.execute("SELECT current_setting('tcp_user_timeout')").fetchone()[0]
        shown_name = conn.execute("SELECT current_setting('application_name')").fetchone()[0]
    assert shown_name == "lgsp lease t"
    if over_tcp:
        assert (shown, user_timeout) == (["7", "1", "3"], "10000")
    else:  # Unix sockets ignore keepalives (a dead local process closes its socket)
        assert shown[:3] == ["0", "0", "0"]


def test_postgres_unreachable_fails_fast_without_the_password():
    url = "postgresql://u:s3cret-pw@127.0.0.1:1/db"
    with pytest.raises(ConnectionError) as caught, thread_lease(url, "t", connect_timeout=2):
        pass
    assert "s3cret-pw" not in str(caught.value)
    assert caught.value.__context__ is None and caught.value.__cause__ is None


async def test_postgres_async_lease(pg_database):
    async with athread_lease(pg_database, "a", owner="first") as lease:
        assert lease.backend == "postgres"
        with pytest.raises(ThreadBusyError) as caught:
            await ahold(athread_lease(pg_database, "a", owner="second"))
        assert caught.value.holder == "first"

        async def release_soon() -> None:
            await asyncio.sleep(0.3)

        waiter = asyncio.create_task(release_soon())
        with pytest.raises(ThreadBusyError, match=r"waited for 0\.2 s"):
            await ahold(athread_lease(pg_database, "a", wait=0.2))
        await waiter
    async with athread_lease(pg_database, "a", wait=1):
        assert lease_rows(pg_database)[0][0] == "a"
    assert lease_rows(pg_database) == []
    with pytest.raises(KeyboardInterrupt):
        async with athread_lease(pg_database, "a"):
            raise KeyboardInterrupt
    assert lock_free(pg_database, "a")


async def test_postgres_async_waiter_runs_after_the_holder(pg_database):
    order: list[str] = []

    async def first() -> None:
        async with athread_lease(pg_database, "w", owner="first"):
            await asyncio.sleep(0.4)
            order.append("first done")

    task = asyncio.create_task(first())
    await asyncio.sleep(0.2)
    async with athread_lease(pg_database, "w", wait=10):
        order.append("second runs")
    await task
    assert order == ["first done", "second runs"]


# -- long and unencodable thread ids -------------------------------------------------------

LONG = "t" * 10_000


@pytest.mark.parametrize("where", ["memory", "postgres"])
def test_a_long_thread_id_is_cut_in_the_busy_error(where: str, request: pytest.FixtureRequest):
    with contextlib.ExitStack() as stack:
        target: Any = (
            stack.enter_context(open_checkpointer("memory"))
            if where == "memory"
            else request.getfixturevalue("pg_database")
        )
        with thread_lease(target, LONG, owner="first"), pytest.raises(ThreadBusyError) as caught:
            hold(thread_lease(target, LONG, owner="second"))
    message = str(caught.value)
    assert caught.value.thread_id == LONG  # the error keeps the whole id
    assert LONG not in message and len(message) < 400
    assert "thread 'tttt" in message and "…" in message and "held by first" in message


@pytest.mark.parametrize("bad", ["order-\udcff", "order-\ud800-7"])
async def test_an_unencodable_thread_id_is_a_clear_error_before_any_lease(pg_database, bad):
    pattern = r"^thread_lease thread_id: 'order-.*' cannot be stored or encoded: it holds"
    with pytest.raises(ValueError, match=pattern):
        hold(thread_lease(pg_database, bad))
    with open_checkpointer("memory") as saver, pytest.raises(ValueError, match=pattern):
        hold(thread_lease(saver, bad))
    with pytest.raises(ValueError, match=r"^athread_lease thread_id: .* cannot be stored"):
        await ahold(athread_lease(pg_database, bad))
    assert lease_rows(pg_database) == []

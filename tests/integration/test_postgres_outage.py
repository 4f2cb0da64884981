"""Postgres goes down under an open checkpointer, then comes back (a real server, stopped).

While the server is down, a read through the pool fails within about
`connect_timeout` (psycopg_pool's own default wait is 30 s) with an error naming the
server and the fix; once the server is back, the same checkpointer works again, with
the thread's state intact. Waits are bounded, not timed: a read still blocked after the
bound fails the test.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from psycopg_pool import PoolTimeout

from langgraph_supervisor_pro import (
    Worker,
    aopen_checkpointer,
    create_supervisor,
    open_checkpointer,
)
from tests._helpers import ask, routes, thread
from tests._pg import RestartablePostgres

pytestmark = pytest.mark.integration

CONNECT_TIMEOUT = 2
BOUND = 15.0  # seconds a read may take while the server is down: far below 30


@pytest.fixture
def server() -> Iterator[RestartablePostgres]:
    server = RestartablePostgres()
    try:
        yield server
    finally:
        server.close()


def team() -> Any:
    worker = Worker(name="clerk", description="Files the paperwork.", agent=lambda t: "filed")
    return create_supervisor([worker], router=routes("clerk", "FINISH", "clerk"))


def failure_within(read: Callable[[], object], bound: float) -> BaseException:
    """Run `read` in a thread; the exception it raised, failing the test if it outlasts `bound`."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            read()
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(bound)
    if worker.is_alive():
        pytest.fail(f"a read with Postgres down was still waiting after {bound:g} s")
    error = outcome[0]
    assert error is not None, "the read succeeded with Postgres down"
    return error


def assert_clear_pool_timeout(error: BaseException, server: RestartablePostgres) -> None:
    assert isinstance(error, PoolTimeout), repr(error)
    message = str(error)
    assert f"connect_timeout={CONNECT_TIMEOUT} s" in message
    assert f"no connection to Postgres at {server.uri} " in message  # (it has no password)
    assert "check that the Postgres server is running" in message


def test_a_read_fails_within_the_timeout_while_postgres_is_down(server):
    config = thread()
    with open_checkpointer(server.uri, connect_timeout=CONNECT_TIMEOUT) as saver:
        app = team().compile(checkpointer=saver)
        assert app.invoke(ask("File it"), config)["status"] == "done"

        server.stop()
        # The first read finds the pooled connection broken (it is checked before use),
        # the second finds none: both wait for a new one, at most `connect_timeout`.
        for _ in range(2):
            error = failure_within(lambda: app.get_state(config), BOUND)
            assert_clear_pool_timeout(error, server)

        server.start()
        # The same saver works again: the thread's state is read back and grows.
        assert app.get_state(config).values["status"] == "done"
        out = app.invoke(ask("File another"), config)
        assert [e["turn"] for e in out["ledger"]] == [1, 2]


async def test_an_async_read_fails_within_the_timeout_while_postgres_is_down(server):
    config = thread()
    async with aopen_checkpointer(server.uri, connect_timeout=CONNECT_TIMEOUT) as saver:
        app = team().compile(checkpointer=saver)
        assert (await app.ainvoke(ask("File it"), config))["status"] == "done"

        server.stop()
        for _ in range(2):
            try:
                with pytest.raises(PoolTimeout) as info:
                    await asyncio.wait_for(app.aget_state(config), BOUND)
            except TimeoutError:
                pytest.fail(f"a read with Postgres down was still waiting after {BOUND:g} s")
            assert_clear_pool_timeout(info.value, server)

        server.start()
        assert (await app.aget_state(config)).values["status"] == "done"
        out = await app.ainvoke(ask("File another"), config)
        assert [e["turn"] for e in out["ledger"]] == [1, 2]

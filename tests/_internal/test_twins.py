"""The sync/async twin driver: `drive` and `adrive` run one generator the same way."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_supervisor_pro._internal.twins import (
    Call,
    Invoke,
    MaybeAwait,
    Sleep,
    Steps,
    adrive,
    drive,
)

DRIVERS = ["sync", "async"]


def run(steps: Steps[Any], driver: str) -> Any:
    """Run `steps` under the named driver (the async one on a fresh event loop)."""
    if driver == "sync":
        return drive(steps)
    return asyncio.run(adrive(steps))


class Log:
    """Records which side (sync or async) performed each I/O."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def call(self, value: Any) -> Call:
        def sync() -> Any:
            self.calls.append(f"sync {value!r}")
            return value

        async def asynchronous() -> Any:
            await asyncio.sleep(0)
            self.calls.append(f"async {value!r}")
            return value

        return Call(sync, asynchronous)


class Boom(Exception):
    pass


def fail() -> Any:
    raise Boom("the I/O failed")


async def afail() -> Any:
    await asyncio.sleep(0)
    raise Boom("the I/O failed")


@pytest.mark.parametrize("driver", DRIVERS)
def test_each_reply_is_sent_back_where_it_was_asked(driver: str) -> None:
    log = Log()

    def steps() -> Steps[list[Any]]:
        first = yield log.call(1)
        second = yield log.call(first + 1)
        third = yield log.call([first, second])
        return [*third, "done"]

    assert run(steps(), driver) == [1, 2, "done"]
    assert log.calls == [f"{driver} 1", f"{driver} 2", f"{driver} [1, 2]"]


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_generator_that_asks_nothing_returns_its_value(driver: str) -> None:
    def steps() -> Steps[str]:
        return "no I/O"
        yield  # pragma: no cover - makes this a generator

    assert run(steps(), driver) == "no I/O"


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_failed_io_is_thrown_in_where_it_asked_and_can_be_caught(driver: str) -> None:
    seen: list[str] = []

    def steps() -> Steps[str]:
        try:
            yield Call(fail, afail)
        except Boom as exc:
            seen.append(str(exc))
            recovered = yield Call(lambda: "sync recovery", lambda: asyncio.sleep(0, "async"))
            return f"caught, then {recovered}"
        return "not reached"

    expected = "sync recovery" if driver == "sync" else "async"
    assert run(steps(), driver) == f"caught, then {expected}"
    assert seen == ["the I/O failed"]


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_uncaught_failure_propagates_and_the_generator_stops(driver: str) -> None:
    after: list[str] = []
    cleaned: list[str] = []

    def steps() -> Steps[str]:
        try:
            yield Call(fail, afail)
            after.append("resumed")
            return "not reached"
        finally:
            cleaned.append("finally ran")

    with pytest.raises(Boom, match="the I/O failed"):
        run(steps(), driver)
    assert after == []
    assert cleaned == ["finally ran"]


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_error_the_generator_raises_itself_propagates(driver: str) -> None:
    def steps() -> Steps[str]:
        value = yield Call(lambda: 0, None)
        return str(1 / value)

    with pytest.raises(ZeroDivisionError):
        run(steps(), driver)


@pytest.mark.parametrize("driver", DRIVERS)
def test_the_handler_can_re_raise_some_errors_and_turn_others_into_data(driver: str) -> None:
    def guarded(io: Call) -> Steps[str]:
        try:
            return str((yield io))
        except KeyError:
            raise
        except Exception as exc:
            return f"failed: {type(exc).__name__}"

    def key_error() -> Any:
        raise KeyError("k")

    async def akey_error() -> Any:
        raise KeyError("k")

    assert run(guarded(Call(fail, afail)), driver) == "failed: Boom"
    with pytest.raises(KeyError):
        run(guarded(Call(key_error, akey_error)), driver)


@pytest.mark.parametrize("driver", DRIVERS)
def test_base_exceptions_are_not_thrown_into_the_generator(driver: str) -> None:
    caught: list[BaseException] = []

    def interrupt() -> Any:
        raise KeyboardInterrupt

    async def ainterrupt() -> Any:
        raise KeyboardInterrupt

    def steps() -> Steps[str]:
        try:
            yield Call(interrupt, ainterrupt)
        except Exception as exc:  # pragma: no cover - must not happen
            caught.append(exc)
        return "not reached"

    with pytest.raises(KeyboardInterrupt):
        run(steps(), driver)
    assert caught == []


def test_call_without_an_async_callable_uses_the_sync_one_under_adrive() -> None:
    def steps() -> Steps[int]:
        return (yield Call(lambda: 41, None)) + 1

    assert asyncio.run(adrive(steps())) == 42


def test_drive_never_calls_the_async_side_and_adrive_never_the_sync_side() -> None:
    def only_sync() -> Steps[str]:
        return (yield Call(lambda: "sync", afail))

    def only_async() -> Steps[str]:
        return (yield Call(fail, lambda: asyncio.sleep(0, "async")))

    assert drive(only_sync()) == "sync"
    assert asyncio.run(adrive(only_async())) == "async"


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_maybe_await_takes_sync_and_async_callables_under_both_drivers(
    driver: str, kind: str
) -> None:
    def plain(x: int) -> int:
        return x * 2

    async def coro(x: int) -> int:
        await asyncio.sleep(0)
        return x * 2

    fn: Callable[[int], Any] = plain if kind == "sync" else coro

    def steps() -> Steps[int]:
        a = yield MaybeAwait(lambda: fn(10))
        b = yield MaybeAwait(lambda: fn(a + 1))
        return int(b)

    assert run(steps(), driver) == 42


@pytest.mark.parametrize("driver", DRIVERS)
def test_maybe_await_failures_reach_the_generator(driver: str) -> None:
    async def abroken() -> Any:
        await asyncio.sleep(0)
        raise Boom("async callable failed")

    def steps(fn: Callable[[], Any]) -> Steps[str]:
        try:
            yield MaybeAwait(fn)
        except Boom as exc:
            return f"caught: {exc}"
        return "not reached"

    assert run(steps(fail), driver) == "caught: the I/O failed"
    assert run(steps(abroken), driver) == "caught: async callable failed"


async def test_maybe_await_under_drive_inside_a_running_loop() -> None:
    # Sync code called from async code (a loop is running in this thread): the
    # awaitable runs to completion on a fresh loop in a helper thread.
    threads: list[str] = []

    async def coro() -> str:
        threads.append(threading.current_thread().name)
        return "finished"

    def steps() -> Steps[str]:
        return (yield MaybeAwait(coro))

    assert drive(steps()) == "finished"
    assert threads and threads[0] != threading.current_thread().name


def test_sleep_blocks_under_drive() -> None:
    def steps() -> Steps[str]:
        yield Sleep(0.05)
        return "woke"

    started = time.monotonic()
    assert drive(steps()) == "woke"
    assert time.monotonic() - started >= 0.05


async def test_sleep_yields_to_the_event_loop_under_adrive() -> None:
    order: list[str] = []

    async def other() -> None:
        order.append("other task ran")

    def steps() -> Steps[str]:
        yield Sleep(0.05)
        order.append("sleeper woke")
        return "woke"

    started = time.monotonic()
    sleeper = asyncio.create_task(adrive(steps()))
    await asyncio.gather(sleeper, other())
    assert sleeper.result() == "woke"
    assert order == ["other task ran", "sleeper woke"]
    assert time.monotonic() - started >= 0.05


def test_sleep_uses_time_sleep_under_drive(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)

    def steps() -> Steps[None]:
        yield Sleep(1.5)
        yield Sleep(0.25)

    drive(steps())
    assert slept == [1.5, 0.25]


@pytest.mark.parametrize("driver", DRIVERS)
def test_invoke_calls_invoke_or_ainvoke_with_the_config(driver: str) -> None:
    seen: list[tuple[str, Any]] = []

    def sync(x: int, config: RunnableConfig) -> int:
        seen.append(("invoke", config["metadata"]["who"]))
        return x + 1

    async def asynchronous(x: int, config: RunnableConfig) -> int:
        seen.append(("ainvoke", config["metadata"]["who"]))
        return x + 1

    runnable = RunnableLambda(sync, afunc=asynchronous)

    def steps() -> Steps[int]:
        return (yield Invoke(runnable, 41, {"metadata": {"who": "twins"}}))

    assert run(steps(), driver) == 42
    assert seen == [("invoke" if driver == "sync" else "ainvoke", "twins")]


@pytest.mark.parametrize("driver", DRIVERS)
def test_nested_generators_with_yield_from(driver: str) -> None:
    log = Log()

    def inner(x: int) -> Steps[int]:
        try:
            value = yield log.call(x)
            if x == 2:
                yield Call(fail, afail)
        except Boom:
            return -1
        return int(value) * 10

    def outer() -> Steps[list[int]]:
        results = []
        for x in (1, 2, 3):
            results.append((yield from inner(x)))
        total = yield log.call(sum(results))
        return [*results, int(total)]

    assert run(outer(), driver) == [10, -1, 30, 39]
    assert log.calls == [f"{driver} {v}" for v in (1, 2, 3, 39)]


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_inner_failure_not_caught_inside_reaches_the_outer_generator(driver: str) -> None:
    def inner() -> Steps[int]:
        yield Call(fail, afail)
        return 0  # pragma: no cover - not reached

    def outer() -> Steps[str]:
        try:
            yield from inner()
        except Boom:
            return "outer caught it"
        return "not reached"

    assert run(outer(), driver) == "outer caught it"

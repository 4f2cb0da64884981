"""One implementation for every sync/async twin (private).

A function with an async twin is written once, as a generator that yields each piece
of I/O it needs (an `Io`) and receives its result; `drive` performs the I/O with the sync
methods, `adrive` awaits the async ones. A failed I/O is thrown back into the generator
(docs/architecture.md, "Sync and async twins").
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, TypeVar, cast

from langchain_core.runnables import Runnable, RunnableConfig

from langgraph_supervisor_pro._internal.aio import run_sync

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Io(Protocol[T_co]):
    """One piece of I/O a generator asks its driver to perform."""

    def run(self) -> T_co: ...

    def arun(self) -> Awaitable[T_co]: ...


Steps: TypeAlias = Generator["Io[Any]", Any, T]
"""A twin's single implementation: yields the I/O to perform, receives its result,
returns the twin's result."""


def drive(steps: Steps[T]) -> T:
    """Run `steps` to its result, performing each I/O with its sync method."""
    try:
        io = next(steps)
        while True:
            try:
                reply = io.run()
            except Exception as exc:
                io = steps.throw(exc)
            else:
                io = steps.send(reply)
    except StopIteration as done:
        return cast(T, done.value)


async def adrive(steps: Steps[T]) -> T:
    """Run `steps` to its result on the event loop, awaiting each I/O's async method."""
    try:
        io = next(steps)
        while True:
            try:
                reply = await io.arun()
            except Exception as exc:
                io = steps.throw(exc)
            else:
                io = steps.send(reply)
    except StopIteration as done:
        return cast(T, done.value)


@dataclass(frozen=True, slots=True)
class Call:
    """Call `sync()` under `drive`; await `asynchronous()` (else call `sync()`) under `adrive`."""

    sync: Callable[[], Any]
    asynchronous: Callable[[], Awaitable[Any]] | None

    def run(self) -> Any:
        return self.sync()

    async def arun(self) -> Any:
        if self.asynchronous is None:
            return self.sync()
        return await self.asynchronous()


@dataclass(frozen=True, slots=True)
class Invoke:
    """`runnable.invoke(input, config)`, or `await runnable.ainvoke(input, config)`."""

    runnable: Runnable[Any, Any]
    input: Any
    config: RunnableConfig | None = None

    def run(self) -> Any:
        return self.runnable.invoke(self.input, self.config)

    async def arun(self) -> Any:
        return await self.runnable.ainvoke(self.input, self.config)


@dataclass(frozen=True, slots=True)
class MaybeAwait:
    """Call `fn()`; when it returns an awaitable, wait for its result (`run_sync` under `drive`)."""

    fn: Callable[[], Any]

    def run(self) -> Any:
        result = self.fn()
        return run_sync(lambda: result) if inspect.isawaitable(result) else result

    async def arun(self) -> Any:
        result = self.fn()
        return await result if inspect.isawaitable(result) else result


@dataclass(frozen=True, slots=True)
class Sleep:
    """Wait `seconds`: `time.sleep` under `drive`, `asyncio.sleep` under `adrive`."""

    seconds: float

    def run(self) -> None:
        time.sleep(self.seconds)

    async def arun(self) -> None:
        await asyncio.sleep(self.seconds)

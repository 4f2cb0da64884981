"""One implementation for every sync/async twin (private).

A function with an async twin is written once, as a generator that yields each piece
of I/O it needs (an `Io`: a model call, a checkpointer read, a sleep, ...) and
receives its result. `drive` performs the I/O with the sync methods, `adrive` awaits
the async ones; a failed I/O is thrown back into the generator where it asked, so
the generator's own `try`/`except` decides what a failure means. Nothing else
differs between the twins.

Example:
    ```python
    def _fetch(key: str) -> Steps[str]:
        try:
            value = yield Call(lambda: store.get(key), lambda: store.aget(key))
        except KeyError:
            return "missing"
        return value

    def fetch(key: str) -> str:
        return drive(_fetch(key))

    async def afetch(key: str) -> str:
        return await adrive(_fetch(key))
    ```
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

__all__ = ["Call", "Invoke", "Io", "MaybeAwait", "Sleep", "Steps", "adrive", "drive"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Io(Protocol[T_co]):
    """One piece of I/O a generator asks its driver to perform."""

    def run(self) -> T_co:
        """Perform it synchronously."""
        ...

    def arun(self) -> Awaitable[T_co]:
        """Perform it on the event loop."""
        ...


Steps: TypeAlias = Generator["Io[Any]", Any, T]
"""A twin's single implementation: yields the I/O to perform, receives its result,
returns the twin's result."""


def drive(steps: Steps[T]) -> T:
    """Run `steps` to its result, performing each I/O with its sync method.

    Example:
        >>> def twice() -> Steps[int]:
        ...     a = yield Call(lambda: 20, None)
        ...     return a * 2 + 2
        >>> drive(twice())
        42
    """
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
    """Run `steps` to its result on the event loop, awaiting each I/O's async method.

    Example:
        >>> import asyncio
        >>> def twice() -> Steps[int]:
        ...     a = yield Call(lambda: 0, lambda: asyncio.sleep(0, 20))
        ...     return a * 2 + 2
        >>> asyncio.run(adrive(twice()))
        42
    """
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
    """Call `sync()` under `drive` and await `asynchronous()` under `adrive`.

    With `asynchronous=None` the sync callable serves both (for cheap, non-blocking work).
    """

    sync: Callable[[], Any]
    asynchronous: Callable[[], Awaitable[Any]] | None

    def run(self) -> Any:
        """Call the sync callable."""
        return self.sync()

    async def arun(self) -> Any:
        """Await the async callable (or call the sync one when there is none)."""
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
        """Invoke the runnable."""
        return self.runnable.invoke(self.input, self.config)

    async def arun(self) -> Any:
        """Invoke the runnable on the event loop."""
        return await self.runnable.ainvoke(self.input, self.config)


@dataclass(frozen=True, slots=True)
class MaybeAwait:
    """Call `fn()`; when it returns an awaitable, wait for its result.

    Under `drive` an awaitable result runs to completion with `run_sync` (a fresh event
    loop, or one in a helper thread when a loop is already running); under `adrive` it
    is awaited on the running loop.
    """

    fn: Callable[[], Any]

    def run(self) -> Any:
        """Call, and finish an awaitable result synchronously."""
        result = self.fn()
        if inspect.isawaitable(result):
            awaitable = result
            return run_sync(lambda: awaitable)
        return result

    async def arun(self) -> Any:
        """Call, and await an awaitable result."""
        result = self.fn()
        if inspect.isawaitable(result):
            return await result
        return result


@dataclass(frozen=True, slots=True)
class Sleep:
    """Wait `seconds`: `time.sleep` under `drive`, `asyncio.sleep` under `adrive`."""

    seconds: float

    def run(self) -> None:
        """Block the thread."""
        time.sleep(self.seconds)

    async def arun(self) -> None:
        """Yield to the event loop."""
        await asyncio.sleep(self.seconds)

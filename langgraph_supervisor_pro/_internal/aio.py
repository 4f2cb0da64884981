"""Running async callables from sync graph runs, and abandoned sync attempts (private)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

_ABANDONED: contextvars.ContextVar[tuple[threading.Event, ...]] = contextvars.ContextVar(
    "lgsp_abandoned", default=()
)


def abandonable(ctx: contextvars.Context) -> threading.Event:
    """An event that, once set, marks the work running in `ctx` as abandoned.

    A sync attempt that overruns its deadline goes on in its thread (it cannot be
    cancelled); code there asks `abandoned()` to stop what still shows outside. Marks nest.
    """
    event = threading.Event()
    ctx.run(lambda: _ABANDONED.set((*_ABANDONED.get(), event)))
    return event


def abandoned() -> bool:
    """Whether the sync attempt running this code was abandoned by its deadline."""
    return any(event.is_set() for event in _ABANDONED.get())


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run the awaitable `make()` returns to completion from synchronous code.

    Inside a running loop, a fresh loop runs in a helper thread carrying this context.
    """

    async def main() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    ctx = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        future: concurrent.futures.Future[Any] = pool.submit(ctx.run, asyncio.run, main())
        return future.result()  # type: ignore[no-any-return]

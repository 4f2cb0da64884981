"""Running async callables from sync graph runs (private)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run the awaitable `make()` returns to completion from synchronous code.

    With no event loop running in this thread it uses `asyncio.run`; inside one (a
    notebook, or `invoke` called from async code) it runs a fresh loop in a helper
    thread that carries this context (callbacks, stream writer, config).
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

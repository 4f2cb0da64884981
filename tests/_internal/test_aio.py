"""run_sync from sync and async callers; abandoned sync attempts."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading

from langgraph_supervisor_pro._internal.aio import abandonable, abandoned, run_sync


def test_run_sync_runs_a_coroutine_with_or_without_a_running_loop():
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert run_sync(answer) == 42

    async def inside() -> int:
        return run_sync(answer)  # a loop is running here: a helper thread runs it

    assert asyncio.run(inside()) == 42


def test_an_attempt_marked_abandoned_sees_it_in_its_thread_and_only_there():
    ctx = contextvars.copy_context()
    overrun = abandonable(ctx)
    started, seen = threading.Event(), []

    def attempt() -> None:
        seen.append(abandoned())
        started.set()
        assert overrun.wait(5)
        seen.append(abandoned())

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(ctx.run, attempt)
        assert started.wait(5)
        overrun.set()
        future.result(timeout=5)
    assert seen == [False, True]
    assert abandoned() is False  # the caller's own context is not marked
    # A context copied from the attempt's (LangChain copies it per run) shares the mark.
    assert ctx.run(lambda: contextvars.copy_context().run(abandoned)) is True


def test_marks_nest_an_inner_attempt_is_abandoned_with_its_outer_one():
    outer_ctx = contextvars.copy_context()
    outer = abandonable(outer_ctx)
    inner_ctx = outer_ctx.run(contextvars.copy_context)  # an attempt inside the attempt
    inner = abandonable(inner_ctx)
    assert (outer_ctx.run(abandoned), inner_ctx.run(abandoned)) == (False, False)
    outer.set()
    assert (outer_ctx.run(abandoned), inner_ctx.run(abandoned)) == (True, True)
    # The inner one alone does not mark the outer attempt.
    outer_ctx = contextvars.copy_context()
    outer_only = abandonable(outer_ctx)
    inner_ctx = outer_ctx.run(contextvars.copy_context)
    abandonable(inner_ctx).set()
    assert (outer_ctx.run(abandoned), inner_ctx.run(abandoned)) == (False, True)
    assert not outer_only.is_set() and not inner.is_set()

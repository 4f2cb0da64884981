"""Listing a database's threads by query, and the readers that use it (review desk, `lgsp runs`).

On Postgres and SQLite no reader lists every checkpoint (`saver.list(None)`): the tests
make `list`/`alist` raise and still find every thread, a page at a time, sync and async.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_supervisor_pro import aopen_checkpointer, open_checkpointer
from langgraph_supervisor_pro._internal.twins import adrive, drive
from langgraph_supervisor_pro.cli._runs import list_runs
from langgraph_supervisor_pro.persistence import _thread_index
from langgraph_supervisor_pro.persistence._thread_index import indexed, indexed_threads
from langgraph_supervisor_pro.review import alist_reviews, list_reviews, sweep_reviews
from tests.review.test_desk import RAN, paused_billing

THREADS = ["a", "b b", "c-ü", "d", "\u00e9t\u00e9", "z" * 300]
"""Ids that sort and page like any other: a space, non-ASCII, a long one."""


def put_root(
    saver: BaseCheckpointSaver[Any], thread: str, namespace: str = "", *, after: Any = None
) -> Any:
    """One checkpoint of `thread` in `namespace` (a child of `after`), through `put`."""
    checkpoint = empty_checkpoint()  # a new, time-ordered id each time
    config: Any = after or {"configurable": {"thread_id": thread, "checkpoint_ns": namespace}}
    return saver.put(config, checkpoint, {"source": "input", "step": -1}, {})


@pytest.fixture(autouse=True)
def _no_refunds_yet() -> None:
    RAN.clear()  # `paused_billing` checks that no refund ran before the review


@pytest.fixture(params=["sqlite", "postgres"])
def indexed_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'threads.db'}"
    return str(request.getfixturevalue("pg_database"))


@contextmanager
def unlisted(url: str) -> Iterator[BaseCheckpointSaver[Any]]:
    """The sync saver of `url`, whose `list(None)` fails the test."""
    with open_checkpointer(url) as saver:
        yield _no_listing(saver)


@asynccontextmanager
async def aunlisted(url: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    async with aopen_checkpointer(url) as saver:
        yield _no_listing(saver)


def _no_listing(saver: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    real_list, real_alist = saver.list, saver.alist

    def listing(config: Any, **kwargs: Any) -> Any:
        assert config is not None, "listed every checkpoint of the database"
        return real_list(config, **kwargs)

    def alisting(config: Any, **kwargs: Any) -> Any:
        assert config is not None, "listed every checkpoint of the database"
        return real_alist(config, **kwargs)

    saver.list = listing  # type: ignore[method-assign]
    saver.alist = alisting  # type: ignore[method-assign]
    return saver


def test_only_postgres_and_sqlite_are_listed_by_query(indexed_url: str) -> None:
    with open_checkpointer(indexed_url) as saver:
        assert indexed(saver)
    assert not indexed(InMemorySaver())


@pytest.mark.parametrize("page", [1, 2, 500])
def test_every_root_thread_in_id_order_a_page_at_a_time(
    indexed_url: str, page: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_thread_index, "PAGE_SIZE", page)
    with unlisted(indexed_url) as saver:
        for thread in reversed(THREADS):
            put_root(saver, thread, after=put_root(saver, thread))  # two: listed once
        put_root(saver, "only-a-worker", namespace="billing:1")  # no root checkpoint
        assert drive(indexed_threads(saver)) == sorted(THREADS)


async def test_the_async_savers_page_the_same(
    indexed_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_thread_index, "PAGE_SIZE", 2)
    with open_checkpointer(indexed_url) as saver:
        for thread in THREADS:
            put_root(saver, thread)
    async with aunlisted(indexed_url) as saver:
        assert await adrive(indexed_threads(saver)) == sorted(THREADS)


def test_an_empty_database_lists_no_thread(indexed_url: str) -> None:
    with unlisted(indexed_url) as saver:
        assert drive(indexed_threads(saver)) == []
        assert list_reviews(saver) == [] and list_runs(saver) == []


def test_reviews_and_runs_are_found_without_listing_the_database(
    indexed_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_thread_index, "PAGE_SIZE", 1)
    with open_checkpointer(indexed_url) as saver:
        paused = [paused_billing(saver, thread_id=f"paused-{i}")[2] for i in range(3)]
        put_root(saver, "quiet")
    with unlisted(indexed_url) as saver:
        reviews = list_reviews(saver)
        assert sorted(r.thread_id for r in reviews) == paused
        assert {(r.kind, r.action) for r in reviews} == {("tool", "refund")}
        runs = {row.thread_id: row for row in list_runs(saver)}
        assert sorted(runs) == [*paused, "quiet"]
        assert [runs[t].pending for t in paused] == [1, 1, 1] and runs["quiet"].pending == 0
        assert runs["paused-0"].status == "running" and runs["quiet"].status == "-"


async def test_async_reviews_are_found_without_listing_the_database(
    indexed_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_thread_index, "PAGE_SIZE", 1)
    with open_checkpointer(indexed_url) as saver:
        paused = sorted(paused_billing(saver, thread_id=f"p{i}")[2] for i in range(2))
    async with aunlisted(indexed_url) as saver:
        assert sorted(r.thread_id for r in await alist_reviews(saver)) == paused


def test_a_thread_deleted_after_the_listing_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite: listed, then deleted before its newest checkpoint is read: not a row.

    (Postgres reads a page's ids and newest checkpoints in one statement.)
    """
    with open_checkpointer(f"sqlite:///{tmp_path / 'threads.db'}") as saver:
        first = paused_billing(saver, thread_id="first")[2]
        paused_billing(saver, thread_id="second")
    with unlisted(f"sqlite:///{tmp_path / 'threads.db'}") as saver:
        real = saver.get_tuple

        def get_tuple(config: Any) -> Any:
            if config["configurable"]["thread_id"] == first:
                saver.delete_thread("second")  # while the reader is between the two
            return real(config)

        monkeypatch.setattr(saver, "get_tuple", get_tuple)
        assert [r.thread_id for r in list_reviews(saver)] == [first]


def test_a_memory_saver_is_still_listed_once() -> None:
    saver = InMemorySaver()
    for thread in THREADS:
        put_root(saver, thread)
    put_root(saver, "only-a-worker", namespace="billing:1")
    assert sorted(row.thread_id for row in list_runs(saver)) == sorted(THREADS)
    assert asyncio.run(alist_reviews(saver)) == []


def test_through_the_graph_only_the_paused_threads_are_read_again(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`get_state` (a thread's whole state, delta channels replayed) only where a run waits."""
    with open_checkpointer(url) as saver:
        app, _, paused, _ = paused_billing(saver, thread_id="paused")
        for thread in ("done-1", "done-2"):
            put_root(saver, thread)
        read: list[str] = []
        real = app.get_state

        def get_state(config: Any, **kwargs: Any) -> Any:
            read.append(config["configurable"]["thread_id"])
            return real(config, **kwargs)

        monkeypatch.setattr(app, "get_state", get_state)
        (review,) = list_reviews(saver, graph=app)
        assert review.thread_id == paused and read == [paused]
        read.clear()
        assert list_reviews(saver, graph=app, thread_ids=["done-1", paused]) == [review]
        assert read == ["done-1", paused]  # the threads asked for are all read
        read.clear()
        assert sweep_reviews(app, saver) == [] and read == [paused]  # nothing expired yet


# -- Postgres: each thread's newest root checkpoint, a page of threads at a time -----------


@contextmanager
def _statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The statements `_thread_index` runs from now on."""
    ran: list[str] = []
    real_run, real_arun = _thread_index.Sql.run, _thread_index.Sql.arun

    def run(sql: Any) -> Any:
        ran.append(sql.query)
        return real_run(sql)

    async def arun(sql: Any) -> Any:
        ran.append(sql.query)
        return await real_arun(sql)

    monkeypatch.setattr(_thread_index.Sql, "run", run)
    monkeypatch.setattr(_thread_index.Sql, "arun", arun)
    yield ran


def _no_get_tuple(saver: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("read a thread with get_tuple")

    saver.get_tuple = refused  # type: ignore[method-assign]
    saver.aget_tuple = refused  # type: ignore[method-assign]
    return saver


def _collect(saver: BaseCheckpointSaver[Any], ids: list[str] | None) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    drive(_thread_index.each_head(saver, ids, lambda t, item: found.append((t, item))))
    return found


def _newest(saver: BaseCheckpointSaver[Any], threads: list[str]) -> dict[str, Any]:
    """Each thread's newest root checkpoint, by `get_tuple` (the whole state)."""
    return {
        t: saver.get_tuple({"configurable": {"thread_id": t, "checkpoint_ns": ""}}) for t in threads
    }


def _same_head(head: Any, full: Any) -> None:
    """A head read by page is `get_tuple`'s, less the values kept in blobs."""
    assert head.config == full.config and head.parent_config == full.parent_config
    assert head.metadata == full.metadata
    assert head.pending_writes == full.pending_writes
    inline = head.checkpoint["channel_values"]
    for channel, value in full.checkpoint["channel_values"].items():
        if value is None or isinstance(value, str | int | float | bool):
            assert inline[channel] == value, channel
        else:
            assert channel not in inline or inline[channel] is True, channel  # in a blob
    assert {k: v for k, v in head.checkpoint.items() if k != "channel_values"} == {
        k: v for k, v in full.checkpoint.items() if k != "channel_values"
    }


def test_postgres_heads_are_read_a_page_at_a_time_with_their_writes(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_thread_index, "PAGE_SIZE", 2)
    with open_checkpointer(pg_database) as saver:
        paused = [paused_billing(saver, thread_id=f"paused-{i}")[2] for i in range(3)]
        for thread in THREADS:
            put_root(saver, thread, after=put_root(saver, thread))
        put_root(saver, "only-a-worker", namespace="billing:1")
        full = _newest(saver, [*paused, *THREADS])
        with _statements(monkeypatch) as ran:
            heads = _collect(_no_get_tuple(saver), None)
    assert [t for t, _ in heads] == sorted([*paused, *THREADS])
    for thread, head in heads:
        _same_head(head, full[thread])
    # A paused thread's head holds its interrupt; its messages stay in their blob.
    head = dict(heads)["paused-0"]
    assert any(w[1] == "__interrupt__" for w in head.pending_writes)
    assert "messages" in full["paused-0"].checkpoint["channel_values"]
    assert head.checkpoint["channel_values"].get("messages") in (None, True)
    # Nine threads, pages of two: five pages, heads then writes (none for the empty last).
    assert ran == [_thread_index._HEADS_AFTER, _thread_index._HEAD_WRITES] * 5


def test_postgres_heads_of_the_threads_asked_for_in_their_order(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_thread_index, "PAGE_SIZE", 2)
    with open_checkpointer(pg_database) as saver:
        paused = paused_billing(saver, thread_id="paused")[2]
        for thread in THREADS:
            put_root(saver, thread)
        put_root(saver, "only-a-worker", namespace="billing:1")
        asked = ["d", "missing", paused, "only-a-worker", "a", "z" * 300]
        heads = _collect(_no_get_tuple(saver), asked)
        assert [t for t, _ in heads] == ["d", paused, "a", "z" * 300]
        # Through the desk: duplicates asked once, the order kept, get_tuple never called.
        reviews = list_reviews(saver, thread_ids=[paused, "a", paused])
        assert [r.thread_id for r in reviews] == [paused]


async def test_postgres_heads_are_read_the_same_by_the_async_saver(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_thread_index, "PAGE_SIZE", 2)
    with open_checkpointer(pg_database) as saver:
        paused = sorted(paused_billing(saver, thread_id=f"p{i}")[2] for i in range(2))
        for thread in THREADS:
            put_root(saver, thread)
        full = _newest(saver, [*paused, *THREADS])
    async with aopen_checkpointer(pg_database) as asaver:
        found: list[tuple[str, Any]] = []
        with _statements(monkeypatch) as ran:
            await adrive(
                _thread_index.each_head(
                    _no_get_tuple(asaver), None, lambda t, i: found.append((t, i))
                )
            )
        assert [t for t, _ in found] == sorted([*paused, *THREADS])
        for thread, head in found:
            _same_head(head, full[thread])
        # Eight threads: four full pages, then an empty one (no writes to read).
        assert ran == [_thread_index._HEADS_AFTER, _thread_index._HEAD_WRITES] * 4 + [
            _thread_index._HEADS_AFTER
        ]
        assert sorted(r.thread_id for r in await alist_reviews(_no_get_tuple(asaver))) == paused


def test_a_postgres_thread_deleted_before_its_page_is_read_is_not_listed(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_thread_index, "PAGE_SIZE", 1)
    with open_checkpointer(pg_database) as saver:
        first = paused_billing(saver, thread_id="first")[2]
        paused_billing(saver, thread_id="second")
        real = _thread_index._head_tuples

        def after_first_page(*args: Any) -> Any:
            tuples = real(*args)
            if [t for t, _ in tuples] == [first]:
                saver.delete_thread("second")  # between the first page and the next
            return tuples

        monkeypatch.setattr(_thread_index, "_head_tuples", after_first_page)
        assert [r.thread_id for r in list_reviews(saver)] == [first]
        assert [row.thread_id for row in list_runs(saver)] == [first]

"""LangGraph's checkpointer conformance suite (`langgraph-checkpoint-conformance`), in full.

Every saver we ship runs `validate()` over a `@checkpointer_test` factory and must reach
the FULL level: every capability it implements passes every test. Memory; SQLite (a file)
and Postgres (a fresh database per capability suite), sync and async; and
`server_checkpointer`. The suite calls the async methods: a sync saver goes through
`_SyncAsAsync`, which claims exactly the capabilities the sync saver implements.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    contextmanager,
    nullcontext,
)
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import DetectedCapabilities
from langgraph.checkpoint.conformance.report import CapabilityReport
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from langgraph_supervisor_pro import aopen_checkpointer, open_checkpointer
from langgraph_supervisor_pro.persistence import server_checkpointer
from tests._pg import create_database, drop_database, unique_database_name
from tests.persistence.test_thread_ops import delta_graph

BASE = {"put", "put_writes", "get_tuple", "list", "delete_thread"}
CLAIMED = BASE | {"delete_for_runs", "copy_thread"}
"""What every saver of ours implements; LangGraph's Postgres savers add `prune`."""
POSTGRES = CLAIMED | ({"prune"} if "aprune" in vars(AsyncPostgresSaver) else set())
"""`prune` is LangGraph's own, from langgraph-checkpoint-postgres 3.2.0."""

_SYNC_OF = {
    "aput": "put",
    "aput_writes": "put_writes",
    "aget_tuple": "get_tuple",
    "alist": "list",
    "adelete_thread": "delete_thread",
    "adelete_for_runs": "delete_for_runs",
    "acopy_thread": "copy_thread",
    "aprune": "prune",
}


def _sync_as_async(saver: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    """`saver`'s sync methods behind the async ones the suite calls.

    Only the methods the sync saver implements (overrides `BaseCheckpointSaver`'s) are
    defined, so the suite's capability detection sees what the saver really has.
    """
    inner = type(saver)

    def forward(sync: str) -> Callable[..., Any]:
        if sync == "list":

            async def alist(self: Any, *args: Any, **kwargs: Any) -> AsyncIterator[CheckpointTuple]:
                for item in saver.list(*args, **kwargs):
                    yield item

            return alist

        async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            return getattr(saver, sync)(*args, **kwargs)

        return call

    methods = {
        name: forward(sync)
        for name, sync in _SYNC_OF.items()
        if getattr(inner, sync) is not getattr(BaseCheckpointSaver, sync)
    }
    adapter = type(f"Sync{inner.__name__}", (BaseCheckpointSaver,), methods)
    made: BaseCheckpointSaver[Any] = adapter(serde=saver.serde)
    return made


def _registered(
    name: str, open_saver: Callable[[str], Any], *, sync: bool, database: Callable[[], Any] | None
) -> Any:
    """A `@checkpointer_test` factory: a fresh saver (and database or file) per suite."""

    @checkpointer_test(name=name)
    async def factory() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        with database() if database else nullcontext("memory") as target:
            if sync:
                opened: AbstractContextManager[Any] = open_saver(target)
                with opened as saver:
                    yield _sync_as_async(saver)
            else:
                aopened: AbstractAsyncContextManager[Any] = open_saver(target)
                async with aopened as saver:
                    yield saver

    return factory


def _failures(report: CapabilityReport) -> str:
    passed = sum(r.tests_passed for r in report.results.values())
    total = passed + sum(r.tests_failed for r in report.results.values())
    lines = [f"{report.checkpointer_name}: {report.conformance_level()}, {passed}/{total} passed"]
    for capability, result in sorted(report.results.items()):
        lines += [f"  {capability}: {failure}" for failure in result.failures]
    return "\n".join(lines)


def _detected(report: CapabilityReport) -> set[str]:
    return {name for name, result in report.results.items() if result.detected}


@pytest.fixture
def scratch_databases(postgres_uri: str) -> Callable[[], Any]:
    """A context manager per call: a fresh database's URL, dropped on exit."""

    @contextmanager
    def scratch() -> Iterator[str]:
        name = unique_database_name("lgsp_conf")
        try:
            yield create_database(postgres_uri, name)
        finally:
            drop_database(postgres_uri, name)

    return scratch


@pytest.fixture
def sqlite_files(tmp_path: Path) -> Callable[[], Any]:
    """A context manager per call: the URL of a new SQLite file."""
    count = iter(range(1_000))

    @contextmanager
    def fresh() -> Iterator[str]:
        yield f"sqlite:///{tmp_path / f'conformance-{next(count)}.db'}"

    return fresh


async def _check(registered: Any, expected: set[str]) -> None:
    report = await validate(registered)
    assert report.conformance_level() == "FULL", _failures(report)
    assert _detected(report) == expected, _failures(report)


async def test_memory_saver_conforms_in_full():
    registered = _registered("memory", aopen_checkpointer, sync=False, database=None)
    await _check(registered, CLAIMED)


async def test_sync_memory_saver_conforms_in_full():
    registered = _registered("memory-sync", open_checkpointer, sync=True, database=None)
    await _check(registered, CLAIMED)


async def test_sqlite_saver_conforms_in_full(sqlite_files):
    registered = _registered("sqlite-sync", open_checkpointer, sync=True, database=sqlite_files)
    await _check(registered, CLAIMED)


async def test_async_sqlite_saver_conforms_in_full(sqlite_files):
    registered = _registered("sqlite-async", aopen_checkpointer, sync=False, database=sqlite_files)
    await _check(registered, CLAIMED)


async def test_postgres_saver_conforms_in_full(scratch_databases):
    registered = _registered(
        "postgres-sync", open_checkpointer, sync=True, database=scratch_databases
    )
    await _check(registered, POSTGRES)


async def test_async_postgres_saver_conforms_in_full(scratch_databases):
    registered = _registered(
        "postgres-async", aopen_checkpointer, sync=False, database=scratch_databases
    )
    await _check(registered, POSTGRES)


async def test_server_checkpointer_conforms_in_full(scratch_databases):
    def open_saver(url: str) -> Any:
        return server_checkpointer(environ={"LGSP_CHECKPOINTER_URI": url})

    registered = _registered("server", open_saver, sync=False, database=scratch_databases)
    await _check(registered, POSTGRES)


def test_the_sync_adapter_claims_only_what_the_sync_saver_has():
    with open_checkpointer("sqlite:///:memory:") as saver:
        detected = DetectedCapabilities.from_instance(_sync_as_async(saver)).detected
    assert {c.value for c in detected} == CLAIMED


def test_note_the_suites_delete_for_runs_breaks_a_delta_channel_thread():
    """Where the suite is too lax: `test_delete_for_runs_single` deletes a run whose
    checkpoint is the parent of a kept one. Its checkpoints hold no channels, so the kept
    one stays whole. On a thread with a `DeltaChannel` the same deletion, done as the
    suite accepts it (LangGraph's in-memory server deletes the run's checkpoints and
    nothing else), changes the kept head's state: its value is rebuilt from its
    ancestors' writes. Ours refuses that deletion (test_thread_ops.py,
    `test_deleting_an_earlier_run_keeps_the_later_ones_without_delta_channels`).
    """
    saver = InMemorySaver()
    graph = delta_graph(saver)
    graph.invoke(
        {"items": ["a"], "go": 1},
        {"configurable": {"thread_id": "d"}, "metadata": {"run_id": "d1"}},
    )
    graph.invoke(
        {"items": ["b"], "go": 1},
        {"configurable": {"thread_id": "d"}, "metadata": {"run_id": "d2"}},
    )
    head = graph.get_state({"configurable": {"thread_id": "d"}})
    for entries in saver.storage["d"].values():
        for checkpoint_id, (_, metadata, _) in list(entries.items()):
            if saver.serde.loads_typed(metadata).get("run_id") == "d1":
                del entries[checkpoint_id]
    after = graph.get_state(head.config)
    assert after.config == head.config  # the kept head is there ...
    assert after.values != head.values  # ... with another state
    assert len(after.values["items"]) < len(head.values["items"])

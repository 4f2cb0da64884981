"""The one history reader of the audit trail and the metrics, against LangGraph's own reading.

Every checkpoint's delta channels, folded incrementally by `History`, must equal what
`graph.get_state_history` shows (the root) and what LangGraph's rebuild from
`get_delta_channel_history` gives (every namespace), on memory, SQLite and Postgres,
for a thread with copies at 100 updates, a tree with a fan-out, a domain review and a
refusal, and a compaction. And the work of reading a thread must grow with it, not with
its square.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_supervisor_pro import (
    Compaction,
    Worker,
    WorkerTask,
    create_supervisor,
    open_checkpointer,
)
from langgraph_supervisor_pro import _state as state_module
from langgraph_supervisor_pro.observability import audit_trail, delegation_metrics
from langgraph_supervisor_pro.observability._history import DELTA_SPECS, History, key_of
from langgraph_supervisor_pro.observability._history_rows import Listing, list_once
from tests._graph.test_compaction_node import summarizer
from tests._helpers import ask
from tests.observability.test_audit import forest_run


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver[Any]]:
    if request.param == "memory":
        yield InMemorySaver()
        return
    url = (
        f"sqlite:///{tmp_path / 'history.db'}"
        if request.param == "sqlite"
        else request.getfixturevalue("pg_database")
    )
    with open_checkpointer(url) as opened:
        yield opened


def config(thread_id: str, hops: int = 0) -> Any:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": 4 * hops + 40}


def long_run(
    saver: BaseCheckpointSaver[Any], thread_id: str = "long", hops: int = 105, size: int = 0
) -> Any:
    """`hops` hops in turn 1 (copies of `ledger` and `workers` at 100), 3 more in turn 2;
    each worker's result is `size` characters longer."""
    target = [hops]
    app = create_supervisor(
        [
            Worker(
                name="w",
                description="Works.",
                agent=lambda task: f"part {task.step} " + "x" * size,
            )
        ],
        router=lambda view: "FINISH" if len(view.ledger) >= target[0] else "w",
        max_steps=hops + 10,
    ).compile(checkpointer=saver)
    assert len(app.invoke(ask("Write it"), config(thread_id, hops))["ledger"]) == hops
    target[0] = 3
    assert len(app.invoke(ask("More"), config(thread_id, hops))["ledger"]) == hops + 3
    return app


def compaction_run(saver: BaseCheckpointSaver[Any]) -> Any:
    def pager(task: WorkerTask) -> str:
        return f"FACT-{task.step} paged."

    app = create_supervisor(
        [Worker(name="pager", description="Pages.", agent=pager)],
        router=lambda view: "pager",
        max_steps=5,
        compaction=Compaction(
            summarizer=summarizer(), max_context_tokens=100_000, every_n_steps=2, keep=1
        ),
    ).compile(checkpointer=saver)
    assert app.invoke(ask("Page the on-call"), config("pages"))["compactions"]
    return app


def langgraph_rebuild(saver: BaseCheckpointSaver[Any], item: CheckpointTuple) -> dict[str, Any]:
    """The delta channels at `item` as LangGraph rebuilds them (seed, then the writes)."""
    listed = saver.get_tuple(item.config)
    assert listed is not None
    stored = listed.checkpoint["channel_values"]
    versions = listed.checkpoint["channel_versions"]
    replay = [n for n in DELTA_SPECS if n in versions and n not in stored]
    histories = saver.get_delta_channel_history(config=listed.config, channels=replay)
    out: dict[str, Any] = {}
    for name, spec in DELTA_SPECS.items():
        if name not in versions:
            continue
        if name in histories:
            channel = spec.from_checkpoint(histories[name].get("seed"))
            channel.replay_writes(histories[name]["writes"])
        else:
            channel = spec.from_checkpoint(stored[name])
        out[name] = channel.get()
    return out


def check_thread(app: Any, saver: BaseCheckpointSaver[Any], thread_id: str) -> int:
    """Compare every checkpoint of the thread; returns how many were compared."""
    history = History.read(saver, thread_id)
    compared = 0
    for snapshot in app.get_state_history({"configurable": {"thread_id": thread_id}}):
        configurable = snapshot.config["configurable"]
        (item,) = [
            i for i in history.chain(thread_id) if key_of(i)[2] == configurable["checkpoint_id"]
        ]
        values = history.delta_values(item)
        for name, spec in DELTA_SPECS.items():
            # A channel never written is left out; the graph shows it empty.
            shown = values.get(name, spec.from_checkpoint(None).get())
            assert shown == snapshot.values.get(name), (thread_id, name, snapshot)
        compared += 1
    assert compared == len(history.chain(thread_id))
    checkpoints = 0
    for namespace, chain in history.namespaces(thread_id).items():
        for item, values in history.delta_history(thread_id, namespace):
            assert values == langgraph_rebuild(saver, item), (namespace, key_of(item))
            compared += 1
        checkpoints += len(chain)
    # Every checkpoint rebuilt, at most one reducer call per checkpoint and channel.
    assert 0 < history.folds <= checkpoints * len(DELTA_SPECS)
    return compared


def test_a_long_thread_with_copies_at_100_updates(
    saver: BaseCheckpointSaver[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # LangGraph's default frequency (ours before; threads written then still load)
    monkeypatch.setattr(state_module, "DELTA_SNAPSHOT_FREQUENCY", 100)
    app = long_run(saver)
    history = History.read(saver, "long")
    newest = history.newest("long")
    assert newest is not None
    assert len(history.delta_values(newest)["ledger"]) == 108
    # The copies at 100 updates are there to start from.
    assert any(history.listing.stored(i, "workers")[0] for i in history.chain("long"))
    assert check_thread(app, saver, "long") > 2 * 108


def test_a_tree_with_a_fan_out_and_a_review_in_a_domain(saver: BaseCheckpointSaver[Any]) -> None:
    app = forest_run(saver)
    history = History.read(saver, "forest")
    assert len(history.namespaces("forest")) >= 3  # the root and the domains
    check_thread(app, saver, "forest")


def test_a_compaction(saver: BaseCheckpointSaver[Any]) -> None:
    check_thread(compaction_run(saver), saver, "pages")


def test_every_thread_at_once(saver: BaseCheckpointSaver[Any]) -> None:
    long_run(saver, "a", hops=4)
    long_run(saver, "b", hops=2)
    history = History.read(saver)
    assert history.threads() == ["a", "b"]
    assert [len(history.delta_values(history.newest(t) or _fail())["ledger"]) for t in "ab"] == [
        7,
        5,
    ]
    assert History(Listing([])).threads() == [] and History(Listing([])).newest("a") is None


def _fail() -> CheckpointTuple:
    raise AssertionError("no checkpoint")


def test_the_postgres_listing_is_the_savers_own(pg_database: str) -> None:
    with open_checkpointer(pg_database) as saver:
        forest_run(saver)
        long_run(saver, "long", hops=3)
        listing = list_once(saver, None)
        listed = {key_of(i): i for i in saver.list(None)}
        assert {key_of(i) for i in listing.items} == set(listed)
        for item in listing.items:
            theirs = listed[key_of(item)]
            assert (item.config, item.metadata, item.parent_config) == (
                theirs.config,
                theirs.metadata,
                theirs.parent_config,
            )
            assert item.pending_writes == theirs.pending_writes
            values = theirs.checkpoint["channel_values"]
            for channel in item.checkpoint["channel_versions"]:
                assert listing.stored(item, channel) == (
                    channel in values,
                    values.get(channel),
                ), (key_of(item), channel)
            assert {k: v for k, v in item.checkpoint.items() if k != "channel_values"} == {
                k: v for k, v in theirs.checkpoint.items() if k != "channel_values"
            }


# -- the work grows with the thread -------------------------------------------------------


class CountingSerde:
    """The saver's serializer, counting the bytes it deserializes."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.loaded = 0

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return self.inner.dumps_typed(obj)  # type: ignore[no-any-return]

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        self.loaded += len(data[1] or b"")
        return self.inner.loads_typed(data)


def thread_of(pg_database: str, hops: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Bytes deserialized reading a `hops`-hop thread (copies every 4 updates, then three
    turns without a hop, whose checkpoints all share the last copies)."""
    monkeypatch.setattr(state_module, "DELTA_SNAPSHOT_FREQUENCY", 4)
    with open_checkpointer(pg_database) as saver:
        app = long_run(saver, f"t{hops}", hops=hops, size=2_000)
        for _ in range(3):
            app.invoke(ask("Status?"), config(f"t{hops}", hops))
        counting = CountingSerde(saver.serde)
        saver.serde = counting
        calls: list[object] = []
        monkeypatch.setattr(saver, "get_delta_channel_history", lambda **kw: calls.append(kw))
        sizes: dict[str, int] = {}
        for name, read in {
            "audit_trail": lambda: audit_trail(saver, f"t{hops}"),
            "delegation_metrics": lambda: delegation_metrics(saver),
            "list": lambda: list(saver.list({"configurable": {"thread_id": f"t{hops}"}})),
        }.items():
            counting.loaded = 0
            read()
            sizes[name] = counting.loaded
        assert calls == []  # the readers never ask the saver to walk the chain again
    return sizes


def test_reading_a_thread_four_times_as_long_costs_at_most_four_times_as_much(
    pg_database: str, postgres_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests._pg import create_database, drop_database, unique_database_name

    short = thread_of(pg_database, 16, monkeypatch)
    name = unique_database_name()
    other = create_database(postgres_uri, name)
    try:
        long = thread_of(other, 64, monkeypatch)
    finally:
        drop_database(postgres_uri, name)
    # Four times the hops: at most four times the bytes (2.6x measured: the turns without
    # a hop cost the same), where the saver's `list`, which reads every shared copy again,
    # reads more than four times as much (5x).
    for reader in ("audit_trail", "delegation_metrics"):
        assert long[reader] <= 4 * short[reader], (reader, short, long)
    assert long["list"] >= 4.5 * short["list"], (short, long)


def test_the_async_reading_on_postgres_is_the_same(pg_database: str) -> None:
    import asyncio

    from langgraph_supervisor_pro import aopen_checkpointer
    from langgraph_supervisor_pro.observability import aread_threads, read_threads

    with open_checkpointer(pg_database) as saver:
        forest_run(saver)
        long_run(saver, "long", hops=3)
        expected = read_threads(saver)
        history = History.read(saver)

    async def main() -> tuple[Any, History]:
        async with aopen_checkpointer(pg_database) as asaver:
            return await aread_threads(asaver), await History.aread(asaver)

    records, ahistory = asyncio.run(main())
    assert records == expected and [r.thread_id for r in records] == ["long", "forest"]
    for thread in history.threads():
        for namespace in history.namespaces(thread):
            assert list(ahistory.delta_history(thread, namespace)) == list(
                history.delta_history(thread, namespace)
            )


def test_a_postgres_saver_on_one_connection_lists_the_same(pg_database: str) -> None:
    import asyncio

    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from langgraph_supervisor_pro.observability._history_rows import alist_once, reads_tables

    with open_checkpointer(pg_database) as pooled:
        long_run(pooled, "one", hops=3)
        expected = sorted(map(key_of, list_once(pooled, "one").items))
        assert reads_tables(pooled) and not reads_tables(InMemorySaver())
    with PostgresSaver.from_conn_string(pg_database) as single:
        assert sorted(map(key_of, list_once(single, "one").items)) == expected

    async def main() -> list[Any]:
        async with AsyncPostgresSaver.from_conn_string(pg_database) as asingle:
            return sorted(map(key_of, (await alist_once(asingle, "one")).items))

    assert asyncio.run(main()) == expected


def test_rows_of_an_old_format_go_to_the_savers_list_and_empty_blobs_are_no_value() -> None:
    from langgraph_supervisor_pro.observability._history_rows import _tuples

    saver = InMemorySaver()
    old = {
        "thread_id": "t",
        "checkpoint_ns": "",
        "checkpoint_id": "2",
        "parent_checkpoint_id": "1",
        "checkpoint": {"v": 3, "channel_values": {}, "channel_versions": {}},
        "metadata": {},
    }
    assert _tuples(saver, ([old], [], [])) is None  # pending sends: `list` migrates them
    versions = {"a": "5", "b": "6", "n": "7"}
    new = {**old, "checkpoint": {"v": 4, "channel_values": {"n": 1}, "channel_versions": versions}}
    kind, data = saver.serde.dumps_typed([1, 2])
    where = {"thread_id": "t", "checkpoint_ns": ""}
    blobs = [
        {**where, "channel": "a", "version": "5", "type": "empty", "blob": None},
        {**where, "channel": "b", "version": "6", "type": kind, "blob": memoryview(data)},
    ]
    listing = _tuples(saver, ([new], blobs, []))
    assert listing is not None
    (item,) = listing.items
    assert [listing.stored(item, c) for c in ("a", "b", "n", "z")] == [
        (False, None),
        (True, [1, 2]),
        (True, 1),
        (False, None),
    ]
    assert listing.stored(item, "b")[1] is listing.stored(item, "b")[1] and listing.loads == 1

"""One read-modify-write of one store item: what it writes, and how atomic it is by store."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore

from langgraph_supervisor_pro import aopen_store, open_store
from langgraph_supervisor_pro._internal.item_transaction import (
    ItemTransaction,
    atomic_across_processes,
    item_value,
)

NS = ("test", "items")


def claim(name: str) -> Callable[[Mapping[str, Any] | None], tuple[dict[str, Any] | None, str]]:
    """A compare-and-set: the first name claims the item; later ones learn who has it."""

    def change(value: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, str]:
        if value is not None and value.get("owner"):
            return None, f"taken by {value['owner']}"
        return {"owner": name}, "claimed"

    return change


def transaction(store: Any, name: str, key: str = "job") -> ItemTransaction[str]:
    return ItemTransaction(store, NS, key, claim(name), lock=("test_items", key))


def test_the_change_sees_the_stored_value_and_none_writes_nothing():
    store = InMemoryStore()
    assert transaction(store, "ann").run() == "claimed"
    assert transaction(store, "ben").run() == "taken by ann"
    item = store.get(NS, "job")
    assert item is not None and item.value == {"owner": "ann"}
    nothing = ItemTransaction(store, NS, "other", lambda v: (None, v), lock=("test_items", "o"))
    assert nothing.run() is None and store.get(NS, "other") is None
    assert item_value(None) is None and item_value(item) == {"owner": "ann"}


def test_which_stores_are_atomic_across_processes(tmp_path: Path, pg_database: str):
    assert atomic_across_processes(InMemoryStore())
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as sqlite:
        assert not atomic_across_processes(sqlite)
    with open_store(pg_database) as pooled:
        assert atomic_across_processes(pooled)
    with PostgresStore.from_conn_string(pg_database) as single:  # one connection, no pool
        assert not atomic_across_processes(single)

    async def pooled_async() -> bool:
        async with aopen_store(pg_database) as store:
            return atomic_across_processes(store)

    assert asyncio.run(pooled_async())


def _slow(monkeypatch: pytest.MonkeyPatch, store_class: type[Any], method: str = "get") -> None:
    read = getattr(store_class, method)
    if method == "aget":

        async def aslow(self: Any, *args: Any, **kwargs: Any) -> Any:
            item = await read(self, *args, **kwargs)
            await asyncio.sleep(0.2)
            return item

        monkeypatch.setattr(store_class, method, aslow)
        return

    def slow(self: Any, *args: Any, **kwargs: Any) -> Any:
        item = read(self, *args, **kwargs)
        time.sleep(0.2)
        return item

    monkeypatch.setattr(store_class, method, slow)


def _at_once(stores: list[Any], names: list[str]) -> list[str]:
    gate = threading.Barrier(len(names))

    def run(pair: tuple[Any, str]) -> str:
        gate.wait(10)
        return transaction(*pair).run()

    with ThreadPoolExecutor(len(names)) as pool:
        return sorted(pool.map(run, zip(stores, names, strict=True)))


def test_two_threads_on_a_sqlite_store_are_serialised(tmp_path: Path, monkeypatch):
    url = f"sqlite:///{tmp_path / 's.db'}"
    with open_store(url) as first, open_store(url) as second:
        _slow(monkeypatch, SqliteStore)
        results = _at_once([first, second], ["ann", "ben"])
    assert results in (["claimed", "taken by ann"], ["claimed", "taken by ben"])


def test_two_threads_on_two_postgres_pools_are_one_at_a_time(pg_database: str, monkeypatch):
    with open_store(pg_database) as first, open_store(pg_database) as second:
        _slow(monkeypatch, PostgresStore)
        results = _at_once([first, second], ["ann", "ben"])
    assert results in (["claimed", "taken by ann"], ["claimed", "taken by ben"])


def test_a_single_connection_postgres_store_is_serialised_in_the_process(pg_database, monkeypatch):
    with PostgresStore.from_conn_string(pg_database) as store:
        store.setup()
        _slow(monkeypatch, PostgresStore)
        results = _at_once([store, store], ["ann", "ben"])

        async def on_the_loop() -> str:  # a sync Postgres store on the loop: in a thread
            return await transaction(store, "cleo").arun()

        assert asyncio.run(on_the_loop()) in ("taken by ann", "taken by ben")
    assert results in (["claimed", "taken by ann"], ["claimed", "taken by ben"])


def test_async_callers_on_one_loop_are_serialised(tmp_path: Path, monkeypatch):
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    async def main() -> list[str]:
        async with aopen_store(f"sqlite:///{tmp_path / 'a.db'}") as store:
            _slow(monkeypatch, AsyncSqliteStore, "aget")
            return sorted(
                await asyncio.gather(
                    transaction(store, "ann").arun(), transaction(store, "ben").arun()
                )
            )

    assert asyncio.run(main()) in (["claimed", "taken by ann"], ["claimed", "taken by ben"])


def test_async_callers_on_an_in_memory_store_and_on_postgres_pools(pg_database, monkeypatch):
    from langgraph.store.postgres import AsyncPostgresStore

    memory = InMemoryStore()
    _slow(monkeypatch, AsyncPostgresStore, "aget")

    async def main() -> tuple[list[str], list[str]]:
        in_memory = sorted(
            await asyncio.gather(
                transaction(memory, "ann").arun(), transaction(memory, "ben").arun()
            )
        )
        async with aopen_store(pg_database) as first, aopen_store(pg_database) as second:
            pooled = sorted(
                await asyncio.gather(
                    transaction(first, "cleo").arun(), transaction(second, "dan").arun()
                )
            )
        return in_memory, pooled

    in_memory, pooled = asyncio.run(main())
    assert in_memory in (["claimed", "taken by ann"], ["claimed", "taken by ben"])
    assert pooled in (["claimed", "taken by cleo"], ["claimed", "taken by dan"])

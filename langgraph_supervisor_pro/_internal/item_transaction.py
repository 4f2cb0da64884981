"""One read-modify-write of one store item, as atomic as the store allows (private).

LangGraph's `BaseStore` has no compare-and-set. `ItemTransaction` applies a pure `change`
to one item under the strongest lock the store allows: on a Postgres store over a pool, a
transaction holding an advisory lock (atomic across processes); on an `InMemoryStore`, a
process-wide lock with no await inside (atomic); on any other store, a process or
event-loop lock (serialised within the process only). See docs/architecture.md
("Fallbacks and circuit breakers").
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from psycopg_pool import AsyncConnectionPool, ConnectionPool

T = TypeVar("T")

Change = Callable[[Mapping[str, Any] | None], tuple[dict[str, Any] | None, T]]
"""A change: the stored value (None when there is none) -> (the value to write, or None
to write nothing; what the caller gets back)."""

_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))"

process_lock = threading.Lock()
"""Held around the read and the write of stores that have no lock of their own."""

_loop_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


def _loop_lock() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    with process_lock:
        lock = _loop_locks.get(loop)
        if lock is None:
            lock = _loop_locks[loop] = asyncio.Lock()
        return lock


def item_value(item: Any) -> dict[str, Any] | None:
    """A store item's value as a new dict (None for no item)."""
    return dict(item.value) if item is not None else None


def atomic_across_processes(store: BaseStore) -> bool:
    """Whether `ItemTransaction` on `store` is atomic: a Postgres store over a pool, or memory."""
    if isinstance(store, InMemoryStore):
        return True
    return (isinstance(store, PostgresStore) and isinstance(store.conn, ConnectionPool)) or (
        isinstance(store, AsyncPostgresStore) and isinstance(store.conn, AsyncConnectionPool)
    )


@dataclass(frozen=True, slots=True)
class ItemTransaction(Generic[T]):
    """Apply `change` to the item `namespace` / `key` as one read-modify-write (an `Io`).

    `lock` names the Postgres advisory lock: its class (one per kind of item) and the item.
    """

    store: BaseStore
    namespace: tuple[str, ...]
    key: str
    change: Change[T]
    lock: tuple[str, str]

    def run(self) -> T:
        store = self.store
        if isinstance(store, PostgresStore) and isinstance(store.conn, ConnectionPool):
            return self._postgres(store.conn)
        with process_lock:  # InMemoryStore: atomic; other stores: within this process
            new, out = self.change(item_value(store.get(self.namespace, self.key)))
            if new is not None:
                store.put(self.namespace, self.key, new, index=False)
            return out

    async def arun(self) -> T:
        store = self.store
        if isinstance(store, InMemoryStore):
            return self.run()  # memory only: no await while the lock is held
        if isinstance(store, AsyncPostgresStore) and isinstance(store.conn, AsyncConnectionPool):
            return await self._apostgres(store.conn)
        if isinstance(store, PostgresStore):
            return await asyncio.to_thread(self.run)
        async with _loop_lock():  # within this process's event loop only
            new, out = self.change(item_value(await store.aget(self.namespace, self.key)))
            if new is not None:
                await store.aput(self.namespace, self.key, new, index=False)
            return out

    def _postgres(self, pool: ConnectionPool[Any]) -> T:
        with pool.connection() as conn, conn.transaction():
            conn.execute(_LOCK_SQL, self.lock)
            bound = PostgresStore(conn)  # the same connection: inside the transaction
            new, out = self.change(item_value(bound.get(self.namespace, self.key)))
            if new is not None:
                bound.put(self.namespace, self.key, new, index=False)
            return out

    async def _apostgres(self, pool: AsyncConnectionPool[Any]) -> T:
        async with pool.connection() as conn, conn.transaction():
            await conn.execute(_LOCK_SQL, self.lock)
            bound = AsyncPostgresStore(conn)
            new, out = self.change(item_value(await bound.aget(self.namespace, self.key)))
            if new is not None:
                await bound.aput(self.namespace, self.key, new, index=False)
            return out

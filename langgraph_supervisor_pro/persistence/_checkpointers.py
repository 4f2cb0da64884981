"""Open LangGraph checkpointers from one URL: memory, SQLite or Postgres.

LangGraph's savers, subclassed: no credentials in checkpoint metadata, a finished hop's
agent checkpoints deleted, `copy_thread` and `delete_for_runs`, and `ThreadBusyError` for a
root checkpoint whose parent is gone or (Postgres) that would fork the thread.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/postgres/
"""

from __future__ import annotations

import asyncio
import math
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import Any, LiteralString, Protocol

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    DeltaChannelHistory,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg import AsyncConnection, Connection
from psycopg.rows import dict_row, tuple_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_supervisor_pro._internal.scrub import holds_credential, redact_config, registered
from langgraph_supervisor_pro._internal.text import shown_id
from langgraph_supervisor_pro._internal.twins import Call, MaybeAwait, Steps, adrive, drive
from langgraph_supervisor_pro.errors import ThreadBusyError
from langgraph_supervisor_pro.persistence._connections import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_POOL_SIZE,
    AsyncPoolGate,
    aopened,
    asaver_connection,
    opened,
    pool_gate,
    saver_connection,
)
from langgraph_supervisor_pro.persistence._delta_history import postgres_delta_history
from langgraph_supervisor_pro.persistence._finished_hops import (
    finished_namespace,
    is_transient,
    parents_of,
    postgres_forgetting,
    sqlite_forgetting,
    sweeps,
    write_keys,
)
from langgraph_supervisor_pro.persistence._leases import FORK_KEY, alease_holder, lease_holder
from langgraph_supervisor_pro.persistence._thread_ops import (
    FENCE_LOCK,
    SWEEP_LOCK,
    checked_run_ids,
    checked_threads,
    memory_copy,
    memory_delete_for_runs,
    postgres_copy,
    postgres_delete_for_runs,
    sqlite_copy,
    sqlite_delete_for_runs,
)

_JSON_DEPTH = 8
"""How deep `_storable` looks into a metadata value's lists and mappings."""


def _storable(value: Any, depth: int = 0) -> bool:
    """Whether a metadata value is JSON every saver can store, checked `_JSON_DEPTH` deep."""
    if isinstance(value, float):
        return math.isfinite(value)  # Postgres' jsonb has no NaN or infinity
    if value is None or isinstance(value, str | bool | int):
        return True
    if depth >= _JSON_DEPTH:
        return False
    if isinstance(value, list | tuple):
        return all(_storable(item, depth + 1) for item in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _storable(v, depth + 1) for k, v in value.items())
    return False


def _stored_metadata(metadata: CheckpointMetadata) -> CheckpointMetadata:
    """`metadata` without what no checkpoint may keep: secrets, and values that are not JSON.

    A LangGraph server (`langgraph-api`) adds every `configurable` value to the metadata
    itself before calling the saver: a worker's `HopContext` (not JSON: Postgres would
    refuse it) and any credential passed there (`holds_credential`, at any depth).
    """
    secrets = registered()

    def keep(key: str, value: Any) -> bool:
        return _storable(value) and not holds_credential(key, value, secrets)

    if all(keep(str(k), v) for k, v in metadata.items()):
        return metadata
    return {k: v for k, v in metadata.items() if keep(str(k), v)}  # type: ignore[return-value]


class _NoSecretsInMetadata(BaseCheckpointSaver[str]):
    """Leaves the credentials of the config out of checkpoint metadata (`holds_credential`).

    LangGraph's savers build a checkpoint's metadata from the config given to `put` and
    read nothing else from it but the checkpoint's coordinates, which `redact_config` keeps.
    """

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        cleaned = _stored_metadata(metadata)
        return super().put(redact_config(config), checkpoint, cleaned, new_versions)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        cleaned = _stored_metadata(metadata)
        return await super().aput(redact_config(config), checkpoint, cleaned, new_versions)


class _InMemorySaver(_NoSecretsInMetadata, InMemorySaver):
    """`InMemorySaver` without secrets in checkpoint metadata, forgetting finished hops."""

    def __init__(self, *, keep_agent_checkpoints: bool = False) -> None:
        super().__init__()
        self.keep_agent_checkpoints = keep_agent_checkpoints
        self._forget_lock = threading.Lock()
        self._marks: dict[tuple[str, str], dict[str, str] | None] = {}
        """By (thread, namespace): a marked namespace's `parents`, None if unmarked."""

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        thread = config["configurable"]["thread_id"]
        with self._forget_lock:  # the lock delete_for_runs deletes under
            root = self.storage.get(thread, {}).get("", {})
            if _has_parent(config) and _parent_of(config) not in root:
                raise _parent_gone(config, checkpoint)
            stored = super().put(config, checkpoint, metadata, new_versions)
            if _forgets(self, config):
                self._forget_finished(str(thread))
        return stored

    def _parents(self, thread_id: str, namespace: str, entries: Any) -> dict[str, str] | None:
        key = (thread_id, namespace)
        if key not in self._marks:
            found: dict[str, str] | None = None
            for _, typed_metadata, _ in list(entries.values())[:1]:
                metadata = self.serde.loads_typed(typed_metadata)
                if isinstance(metadata, Mapping) and is_transient(metadata):
                    found = parents_of(metadata)
            self._marks[key] = found
        return self._marks[key]

    def _forget_finished(self, thread_id: str) -> None:
        namespaces = self.storage.get(thread_id, {})
        for namespace, entries in list(namespaces.items()):
            if not namespace or not entries:
                continue
            parents = self._parents(thread_id, namespace, entries)
            if parents is None:
                continue
            # `list()` copies a dict another thread may be adding writes to, in one step.
            writes = {
                key: [(task_id, channel) for task_id, channel, _, _ in list(stored.values())]
                for key in write_keys(parents)
                if (stored := self.writes.get((thread_id, *key)))
            }
            if finished_namespace(namespace, parents, writes):
                self._drop(thread_id, namespace)

    def _drop(self, thread_id: str, namespace: str) -> None:
        entries = self.storage[thread_id].pop(namespace, {})
        for checkpoint_id, (typed_checkpoint, _, _) in entries.items():
            self.writes.pop((thread_id, namespace, checkpoint_id), None)
            checkpoint = self.serde.loads_typed(typed_checkpoint)
            for channel, version in (checkpoint.get("channel_versions") or {}).items():
                self.blobs.pop((thread_id, namespace, channel, version), None)
        self._marks.pop((thread_id, namespace), None)

    def delete_thread(self, thread_id: str) -> None:
        super().delete_thread(thread_id)
        with self._forget_lock:
            for key in [k for k in self._marks if k[0] == thread_id]:
                del self._marks[key]

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, write and blob of a thread into a new thread."""
        self._copy_thread(source_thread_id, target_thread_id, "copy_thread")

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Async twin of `copy_thread`."""
        self._copy_thread(source_thread_id, target_thread_id, "acopy_thread")

    def _copy_thread(self, source_thread_id: str, target_thread_id: str, where: str) -> None:
        source, target = checked_threads(source_thread_id, target_thread_id, where)
        with self._forget_lock:
            memory_copy(self, source, target, where)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints of the runs `run_ids`, with their writes and blobs."""
        self._delete_for_runs(run_ids, "delete_for_runs")

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Async twin of `delete_for_runs`."""
        self._delete_for_runs(run_ids, "adelete_for_runs")

    def _delete_for_runs(self, run_ids: Sequence[str], where: str) -> None:
        if runs := checked_run_ids(run_ids, where):
            with self._forget_lock:
                for key in memory_delete_for_runs(self, runs, where):
                    self._marks.pop(key, None)


class _SqliteSaver(_NoSecretsInMetadata, SqliteSaver):
    """`SqliteSaver` without secrets in checkpoint metadata, forgetting finished hops."""

    def __init__(self, conn: sqlite3.Connection, *, keep_agent_checkpoints: bool = False) -> None:
        super().__init__(conn)
        self.keep_agent_checkpoints = keep_agent_checkpoints

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        stored = super().put(config, checkpoint, metadata, new_versions)
        forget, guard = _forgets(self, config), _has_parent(config)
        if forget or guard:
            with self.lock:
                try:
                    run = partial(_SqliteSql, self.conn)
                    drive(_sqlite_after_put(config, checkpoint, run, guard=guard, forget=forget))
                finally:
                    self.conn.commit()
        return stored

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread into a new thread, in one transaction."""
        source, target = checked_threads(source_thread_id, target_thread_id, "copy_thread")
        self._transaction(partial(sqlite_copy, source, target), "copy_thread")

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints of the runs `run_ids` and their writes, in one transaction."""
        if runs := checked_run_ids(run_ids, "delete_for_runs"):
            self._transaction(partial(sqlite_delete_for_runs, runs), "delete_for_runs")

    def _transaction(self, steps: Callable[..., Steps[None]], where: str) -> None:
        """`steps(run, where, begin)` under the lock, committed, or rolled back and re-raised."""
        self.setup()
        with self.lock:
            begin = not self.conn.in_transaction
            try:
                drive(steps(partial(_SqliteSql, self.conn), where, begin))
            except BaseException:
                self.conn.rollback()
                raise
            self.conn.commit()


class _AsyncThreadOps:
    """`acopy_thread` / `adelete_for_runs` of an async saver, and their sync bridges.

    The saver gives `_acopy_thread` and `_adelete_for_runs` (source/run ids, the caller's
    name for errors: each its own transaction), `loop` and `_saver_name`.
    """

    loop: asyncio.AbstractEventLoop
    _saver_name: str
    _acopy_thread: Callable[[str, str, str], Coroutine[Any, Any, None]]
    _adelete_for_runs: Callable[[Sequence[str], str], Coroutine[Any, Any, None]]

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread into a new one (on Postgres with its `lgsp_effects` rows), at once."""
        await self._acopy_thread(source_thread_id, target_thread_id, "acopy_thread")

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """`acopy_thread` from a thread other than the saver's event loop's."""
        _off_loop(self.loop, self._saver_name)
        coroutine = self._acopy_thread(source_thread_id, target_thread_id, "copy_thread")
        asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the runs' checkpoints, their writes and the blobs only they use, at once."""
        await self._adelete_for_runs(run_ids, "adelete_for_runs")

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """`adelete_for_runs` from a thread other than the saver's event loop's."""
        _off_loop(self.loop, self._saver_name)
        coroutine = self._adelete_for_runs(run_ids, "delete_for_runs")
        asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()


class _AsyncSqliteSaver(_AsyncThreadOps, _NoSecretsInMetadata, AsyncSqliteSaver):
    """`AsyncSqliteSaver` without secrets in checkpoint metadata, forgetting finished hops."""

    _saver_name = "AsyncSqliteSaver"

    def __init__(self, conn: aiosqlite.Connection, *, keep_agent_checkpoints: bool = False) -> None:
        super().__init__(conn)
        self.keep_agent_checkpoints = keep_agent_checkpoints

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        stored = await super().aput(config, checkpoint, metadata, new_versions)
        forget, guard = _forgets(self, config), _has_parent(config)
        if forget or guard:
            async with self.lock:
                try:
                    run = partial(_SqliteSql, self.conn)
                    await adrive(
                        _sqlite_after_put(config, checkpoint, run, guard=guard, forget=forget)
                    )
                finally:
                    await self.conn.commit()
        return stored

    async def _acopy_thread(self, source_thread_id: str, target_thread_id: str, where: str) -> None:
        source, target = checked_threads(source_thread_id, target_thread_id, where)
        await self._atransaction(partial(sqlite_copy, source, target), where)

    async def _adelete_for_runs(self, run_ids: Sequence[str], where: str) -> None:
        if runs := checked_run_ids(run_ids, where):
            await self._atransaction(partial(sqlite_delete_for_runs, runs), where)

    async def _atransaction(self, steps: Callable[..., Steps[None]], where: str) -> None:
        await self.setup()
        async with self.lock:
            begin = not self.conn.in_transaction
            try:
                await adrive(steps(partial(_SqliteSql, self.conn), where, begin))
            except BaseException:
                await self.conn.rollback()
                raise
            await self.conn.commit()


_SQLITE_PARENT = (
    "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?"
)
_SQLITE_UNDO = (
    "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
    "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
)


def _sqlite_after_put(
    config: RunnableConfig, checkpoint: Checkpoint, run: Any, *, guard: bool, forget: bool
) -> Steps[None]:
    """After a SQLite `put`, under the saver's lock: the parent's guard, the finished hops.

    The guard undoes a stored root checkpoint whose parent is gone, and refuses it. Checked
    after the write, under the lock: a `delete_for_runs` before the check deleted the
    parent (the checkpoint goes again), one after it sees the checkpoint as a kept
    descendant (and refuses).
    """
    thread_id = str(config["configurable"]["thread_id"])
    if guard and not (yield run(_SQLITE_PARENT, (thread_id, _parent_of(config)))):
        for statement in _SQLITE_UNDO:
            yield run(statement, (thread_id, checkpoint["id"]))
        raise _parent_gone(config, checkpoint)
    if forget:
        yield from sqlite_forgetting(thread_id, run)


def _off_loop(loop: asyncio.AbstractEventLoop, saver: str) -> None:
    """Refuse a blocking call from the saver's own event loop (it would wait on itself)."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        return
    if running is loop:
        raise asyncio.InvalidStateError(
            f"Synchronous calls to {saver} are only allowed from a different thread. From "
            "the event loop, use the async interface: await saver.acopy_thread(...) or "
            "await saver.adelete_for_runs(...)"
        )


class _SqliteSql:
    """One statement on a SQLite saver's connection (sqlite3 or aiosqlite): its rows."""

    def __init__(
        self, conn: Any, statement: str, params: tuple[Any, ...] | Mapping[str, Any]
    ) -> None:
        self.conn, self.statement, self.params = conn, statement, params

    def run(self) -> list[Any]:
        return list(self.conn.execute(self.statement, self.params).fetchall())

    async def arun(self) -> list[Any]:
        async with self.conn.execute(self.statement, self.params) as cursor:
            return list(await cursor.fetchall())


class _PostgresSql:
    """One statement on a Postgres connection (sync or async), in its transaction.

    `binary`: results in Postgres' binary format (a `bytea` arrives as is, not as hex).
    """

    def __init__(
        self,
        conn: Any,
        statement: LiteralString,
        params: Sequence[Any] | Mapping[str, Any],
        *,
        binary: bool = False,
    ) -> None:
        self.conn, self.statement, self.params, self.binary = conn, statement, params, binary
        # In a pipeline a result is not known before it is fetched: only a SELECT is.
        self.rows = statement.startswith("SELECT")

    def run(self) -> list[Any]:
        with self.conn.cursor(binary=self.binary, row_factory=tuple_row) as cur:
            cur.execute(self.statement, self.params)
            return list(cur.fetchall()) if self.rows else []

    async def arun(self) -> list[Any]:
        async with self.conn.cursor(binary=self.binary, row_factory=tuple_row) as cur:
            await cur.execute(self.statement, self.params)
            return list(await cur.fetchall()) if self.rows else []


_HEAD: LiteralString = (
    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = '' "
    "ORDER BY checkpoint_id DESC LIMIT 1"
)
_PARENT: LiteralString = (
    "SELECT 1 FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = '' AND checkpoint_id = %s"
)


_RUN_KEY = "__pregel_runtime"
"""A `configurable` key LangGraph's run loop passes to every `put` of a graph run."""


def _fenced(saver: _PostgresSaver | _AsyncPostgresSaver, config: RunnableConfig) -> bool:
    """Whether `put` must check the parent: fence on, a root checkpoint, no `lgsp_fork`.

    Only a child of a checkpoint (`config` names its parent), or a graph run's first
    checkpoint (the run read the thread empty): a plain parentless `put` on a thread that
    has checkpoints is the saver contract's, not a run's fork.
    """
    configurable = config.get("configurable") or {}
    return (
        saver.fence
        and not configurable.get("checkpoint_ns")
        and configurable.get(FORK_KEY) is not True
        and (_parent_of(config) is not None or _RUN_KEY in configurable)
    )


def _stale(config: RunnableConfig, checkpoint: Checkpoint, head: str | None) -> bool:
    """Whether a new root checkpoint would fork the thread (its parent is not the head).

    A first checkpoint needs no head; a checkpoint stored again under its own id (the
    head itself) is the same writer's.
    """
    parent = (config.get("configurable") or {}).get("checkpoint_id")
    return head is not None and head != parent and head != checkpoint["id"]


def _fork_refused(
    config: RunnableConfig, checkpoint: Checkpoint, head: str, holder: str | None
) -> ThreadBusyError:
    configurable = config.get("configurable") or {}
    thread_id = str(configurable.get("thread_id"))
    parent = configurable.get("checkpoint_id")
    read = f"checkpoint {parent}" if parent else "no checkpoint (a fresh thread)"
    held = f" (its lease is held by {holder})" if holder else ""
    return ThreadBusyError(
        thread_id,
        holder,
        f"thread {shown_id(thread_id)} is busy: another writer{held} stored checkpoint {head} "
        f"after this run read {read}; checkpoint {checkpoint['id']} was not stored, so the "
        "thread is not forked. Run one writer per thread (take thread_lease(...) around "
        f"each run). To fork on purpose (time travel from an older checkpoint), pass "
        f"configurable={{'{FORK_KEY}': True}} with that call, or open the checkpointer "
        "with fence=False.",
    )


def _parent_of(config: RunnableConfig) -> str | None:
    parent = (config.get("configurable") or {}).get("checkpoint_id")
    return None if parent is None else str(parent)


def _has_parent(config: RunnableConfig) -> bool:
    """Whether `config` stores a root checkpoint after a parent (which must still exist)."""
    configurable = config.get("configurable") or {}
    return not configurable.get("checkpoint_ns") and _parent_of(config) is not None


def _parent_gone(config: RunnableConfig, checkpoint: Checkpoint) -> ThreadBusyError:
    """A root checkpoint whose parent was deleted (`delete_for_runs`) after its run read it.

    Stored, it would leave the thread's history broken where a `DeltaChannel` is rebuilt
    from: a LangGraph server's `rollback` deletes the cancelled run's checkpoints after
    it lets the next run start, which may already have read them.
    """
    thread_id = str((config.get("configurable") or {}).get("thread_id"))
    return ThreadBusyError(
        thread_id,
        None,
        f"thread {shown_id(thread_id)}: checkpoint {_parent_of(config)}, which this run started "
        "from, is gone (delete_for_runs, as a LangGraph server's rollback calls it, deleted "
        "it after the run read the thread; or it was never stored); checkpoint "
        f"{checkpoint['id']} was not stored, so the thread's history stays whole. Run "
        "again: the run starts from the thread's head.",
    )


def _io(fn: Callable[..., Any], *args: Any) -> MaybeAwait:
    """`fn(*args)` of a sync or an async psycopg object (awaited under `adrive`)."""
    return MaybeAwait(partial(fn, *args))


_PutArgs = tuple[RunnableConfig, Checkpoint, CheckpointMetadata, ChannelVersions]


def _postgres_put(
    conn: Any, cur: Any, bound: Any, args: _PutArgs, *, fenced: bool, forget: bool
) -> Steps[RunnableConfig]:
    """A fenced or guarded Postgres `put`, in the caller's pipeline and transaction.

    `cur` is a `dict_row` cursor of `conn`, `bound` LangGraph's saver on `conn`. BEGIN,
    the lock and the head's read go in one round trip (the read runs after the lock is
    granted, so it sees the last committed head), the checkpoint's writes, the finished
    hops' deletion and COMMIT in a second one.
    """
    config, checkpoint, metadata, new_versions = args
    thread_id = str(config["configurable"]["thread_id"])
    if fenced:
        yield _io(cur.execute, FENCE_LOCK, (thread_id,))
        yield _io(cur.execute, _HEAD, (thread_id,))
        row = yield _io(cur.fetchone)
        head = None if row is None else str(row["checkpoint_id"])
        if head is not None and _stale(config, checkpoint, head):
            if _has_parent(config):
                yield _io(cur.execute, _PARENT, (thread_id, _parent_of(config)))
                if (yield _io(cur.fetchone)) is None:
                    raise _parent_gone(config, checkpoint)
            holder = yield Call(
                partial(lease_holder, conn, thread_id), partial(alease_holder, conn, thread_id)
            )
            raise _fork_refused(config, checkpoint, head, holder)
        if head is None and _has_parent(config):
            raise _parent_gone(config, checkpoint)
    # Unfenced, the parent is checked under the fence lock too; its reply is read with the
    # finished hops' (no round trip of its own when they are swept).
    guarded = not fenced and _has_parent(config)
    if guarded:
        yield _io(conn.execute, FENCE_LOCK, (thread_id,))
    put = (redact_config(config), checkpoint, _stored_metadata(metadata), new_versions)
    stored: RunnableConfig = yield Call(partial(bound.put, *put), partial(bound.aput, *put))
    parent = (thread_id, _parent_of(config))
    guard = (yield _io(conn.execute, _PARENT, parent)) if guarded else None
    if forget:
        yield _io(conn.execute, SWEEP_LOCK, (thread_id,))
        yield from postgres_forgetting(thread_id, partial(_PostgresSql, conn))
    if guard is not None and (yield _io(guard.fetchone)) is None:
        raise _parent_gone(config, checkpoint)  # rolls the writes back
    return stored


class _PostgresSaver(_NoSecretsInMetadata, PostgresSaver):
    """`PostgresSaver` without secrets in checkpoint metadata, fenced against forks.

    With `fence` (the default), a graph run's root checkpoint (namespace `""`, see
    `_fenced`) is stored only if its parent (`config`'s `checkpoint_id`) is the thread's
    head, the newest root checkpoint; the check and the write are one transaction
    under a transaction-scoped advisory lock on the thread, so two writers cannot both
    pass it. A stale parent
    raises `ThreadBusyError` and nothing is written. Fenced or not, a root checkpoint
    whose parent is gone (deleted by `delete_for_runs` after its run read the thread) is
    refused the same way, under the same lock, so the thread's history stays whole.
    Unless `keep_agent_checkpoints`, the same transaction deletes the finished hops'
    agent checkpoints (`_finished_hops.py`), under a second per-thread lock, so two of
    them never race.
    """

    def __init__(
        self,
        conn: ConnectionPool[Any] | Connection[Any],
        *,
        fence: bool = True,
        keep_agent_checkpoints: bool = False,
    ) -> None:
        super().__init__(conn)
        if isinstance(conn, ConnectionPool):  # use every pooled connection (pool_gate)
            self.lock = pool_gate(conn.max_size)
        self.fence = fence
        self.keep_agent_checkpoints = keep_agent_checkpoints

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        fenced, forget = _fenced(self, config), _forgets(self, config)
        if not fenced and not forget and not _has_parent(config):
            return super().put(config, checkpoint, metadata, new_versions)
        args = (config, checkpoint, metadata, new_versions)
        with (
            saver_connection(self) as conn,
            conn.pipeline(),
            conn.transaction(),
            conn.cursor(row_factory=dict_row) as cur,
        ):
            bound = PostgresSaver(conn, serde=self.serde)  # inside this transaction
            return drive(_postgres_put(conn, cur, bound, args, fenced=fenced, forget=forget))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Each delta channel's seed and writes on the chain of `config`'s checkpoint.

        LangGraph's contract and result, in fewer, cheaper queries (`_delta_history.py`).
        """
        with saver_connection(self) as conn:
            run = partial(_PostgresSql, conn, binary=True)
            return drive(postgres_delta_history(config, channels, run, self.serde))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread into a new one, with its `lgsp_effects` rows, in one transaction."""
        source, target = checked_threads(source_thread_id, target_thread_id, "copy_thread")
        with saver_connection(self) as conn, conn.transaction():
            drive(postgres_copy(source, target, partial(_PostgresSql, conn), "copy_thread"))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the runs' checkpoints, their writes and blobs, in one transaction."""
        if runs := checked_run_ids(run_ids, "delete_for_runs"):
            with saver_connection(self) as conn, conn.transaction():
                run = partial(_PostgresSql, conn)
                drive(postgres_delete_for_runs(runs, run, "delete_for_runs"))


class _AsyncPostgresSaver(_AsyncThreadOps, _NoSecretsInMetadata, AsyncPostgresSaver):
    """`AsyncPostgresSaver` without secrets in checkpoint metadata, fenced (see the sync)."""

    _saver_name = "AsyncPostgresSaver"

    def __init__(
        self,
        conn: AsyncConnectionPool[Any] | AsyncConnection[Any],
        *,
        fence: bool = True,
        keep_agent_checkpoints: bool = False,
    ) -> None:
        super().__init__(conn)
        if isinstance(conn, AsyncConnectionPool):  # use every pooled connection
            self.lock = AsyncPoolGate(conn.max_size)
        self.fence = fence
        self.keep_agent_checkpoints = keep_agent_checkpoints

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        fenced, forget = _fenced(self, config), _forgets(self, config)
        if not fenced and not forget and not _has_parent(config):
            return await super().aput(config, checkpoint, metadata, new_versions)
        args = (config, checkpoint, metadata, new_versions)
        async with (
            asaver_connection(self) as conn,
            conn.pipeline(),
            conn.transaction(),
            conn.cursor(row_factory=dict_row) as cur,
        ):
            bound = AsyncPostgresSaver(conn, serde=self.serde)
            steps = _postgres_put(conn, cur, bound, args, fenced=fenced, forget=forget)
            return await adrive(steps)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Async twin of `get_delta_channel_history` (LangGraph's sync bridge calls this one)."""
        async with asaver_connection(self) as conn:
            run = partial(_PostgresSql, conn, binary=True)
            return await adrive(postgres_delta_history(config, channels, run, self.serde))

    async def _acopy_thread(self, source_thread_id: str, target_thread_id: str, where: str) -> None:
        source, target = checked_threads(source_thread_id, target_thread_id, where)
        async with asaver_connection(self) as conn, conn.transaction():
            await adrive(postgres_copy(source, target, partial(_PostgresSql, conn), where))

    async def _adelete_for_runs(self, run_ids: Sequence[str], where: str) -> None:
        if runs := checked_run_ids(run_ids, where):
            async with asaver_connection(self) as conn, conn.transaction():
                run = partial(_PostgresSql, conn)
                await adrive(postgres_delete_for_runs(runs, run, where))


class _Forgetting(Protocol):
    keep_agent_checkpoints: bool


def _forgets(saver: _Forgetting, config: RunnableConfig) -> bool:
    """Whether storing this checkpoint also deletes the thread's finished hops' agents."""
    return not saver.keep_agent_checkpoints and sweeps(config)


def _backends(
    fence: object, keep_agent_checkpoints: object, sqlite: type[Any], postgres: type[Any]
) -> dict[str, Any]:
    """The flags checked, and the `memory`, `sqlite` and `postgres` factories of `opened`."""
    if not isinstance(fence, bool):
        raise TypeError(
            f"open_checkpointer fence: got {type(fence).__name__}; give True (refuse "
            "forks, the default) or False"
        )
    if not isinstance(keep_agent_checkpoints, bool):
        raise TypeError(
            "open_checkpointer keep_agent_checkpoints: got "
            f"{type(keep_agent_checkpoints).__name__}; give False (forget a finished hop's "
            "agent checkpoints, the default) or True (keep them, as LangGraph does)"
        )
    keep = keep_agent_checkpoints
    return {
        "memory": lambda: _InMemorySaver(keep_agent_checkpoints=keep),
        "sqlite": lambda conn: sqlite(conn, keep_agent_checkpoints=keep),
        "postgres": lambda pool: postgres(pool, fence=fence, keep_agent_checkpoints=keep),
    }


@contextmanager
def open_checkpointer(
    url: str,
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    fence: bool = True,
    keep_agent_checkpoints: bool = False,
) -> Iterator[BaseCheckpointSaver[str]]:
    """Open a synchronous checkpointer for ``url`` and close its resources on exit.

    Args:
        url: ``memory``, ``sqlite:///path.db`` (``sqlite:////abs/path.db`` for an
            absolute path, ``sqlite:///:memory:``) or ``postgresql://...`` /
            ``postgres://...``.
        pool_size: Maximum number of pooled Postgres connections (at least 1).
        setup: Create or migrate the checkpoint tables on open (SQLite and Postgres).
        connect_timeout: Seconds to wait for Postgres (a finite number > 0), on opening
            and for a pooled connection at every later read or write (then
            `psycopg_pool.PoolTimeout`, naming the server).
        fence: Postgres only: refuse, with `ThreadBusyError` and nothing written, a root
            checkpoint whose parent is not the thread's head, so two writers never fork
            a thread. Fork on purpose with `configurable={"lgsp_fork": True}`.
        keep_agent_checkpoints: Keep every hop's agent checkpoints after the hop is
            recorded (LangGraph's default); by default they are deleted then, so a
            thread's storage grows with its hops, not with their square.

    Yields:
        The checkpointer: ``InMemorySaver``, ``SqliteSaver`` or ``PostgresSaver``.

    Raises:
        ValueError: The URL form is not supported or an option is out of range.
        TypeError: `fence` or `keep_agent_checkpoints` is not a bool.
        ConnectionError: The Postgres server cannot be reached (password masked).

    Example:
        >>> from langgraph.graph import START, StateGraph
        >>> builder = StateGraph(int)
        >>> _ = builder.add_node("inc", lambda x: x + 1).add_edge(START, "inc")
        >>> with open_checkpointer("sqlite:///:memory:") as saver:
        ...     graph = builder.compile(checkpointer=saver)
        ...     graph.invoke(1, {"configurable": {"thread_id": "t1"}})
        2
    """
    backends = _backends(fence, keep_agent_checkpoints, _SqliteSaver, _PostgresSaver)
    with opened(url, pool_size, setup, connect_timeout, **backends) as saver:
        yield saver


@asynccontextmanager
async def aopen_checkpointer(
    url: str,
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    fence: bool = True,
    keep_agent_checkpoints: bool = False,
) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """Open an asynchronous checkpointer for ``url`` and close its resources on exit.

    The same URLs and options as :func:`open_checkpointer`; use it with ``ainvoke`` /
    ``astream``. It yields an ``InMemorySaver``, ``AsyncSqliteSaver`` or
    ``AsyncPostgresSaver``.

    Example:
        >>> import asyncio
        >>> from langgraph.graph import START, StateGraph
        >>> builder = StateGraph(int)
        >>> _ = builder.add_node("inc", lambda x: x + 1).add_edge(START, "inc")
        >>> async def main() -> int:
        ...     async with aopen_checkpointer("sqlite:///:memory:") as saver:
        ...         graph = builder.compile(checkpointer=saver)
        ...         return await graph.ainvoke(1, {"configurable": {"thread_id": "t1"}})
        >>> asyncio.run(main())
        2
    """
    backends = _backends(fence, keep_agent_checkpoints, _AsyncSqliteSaver, _AsyncPostgresSaver)
    async with aopened(url, pool_size, setup, connect_timeout, **backends) as saver:
        yield saver

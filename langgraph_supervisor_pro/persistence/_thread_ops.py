"""`copy_thread` and `delete_for_runs` of the savers of `open_checkpointer` (private).

LangGraph declares both on `BaseCheckpointSaver` and none of its savers implements them; a
LangGraph server calls them. One implementation per backend, written once for the sync and
async savers (`_internal/twins.py`): Postgres and SQLite as generators of statements, memory
over the saver's dicts. The rules (what is copied or deleted, what is refused) are in
docs/architecture.md, "Copying a thread, deleting runs".
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, LiteralString, Protocol
from uuid import UUID, uuid5

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import INTERRUPT, RESUME

from langgraph_supervisor_pro._internal.storable import unstorable_at
from langgraph_supervisor_pro._internal.text import truncate
from langgraph_supervisor_pro._internal.twins import Io, Steps

Run = Callable[[Any, Any], "Io[list[Any]]"]
"""Builds one statement with its parameters; performing it returns its rows."""

FENCE_LOCK: LiteralString = "SELECT pg_advisory_xact_lock(hashtextextended('lgsp_fence:' || %s, 0))"
"""The lock the Postgres savers store a fenced root checkpoint under (one per thread)."""
SWEEP_LOCK: LiteralString = "SELECT pg_advisory_xact_lock(hashtextextended('lgsp_sweep:' || %s, 0))"
"""The lock they delete a thread's finished hops' agent checkpoints under."""

_DELTA_KEYS = frozenset({"counters_since_delta_snapshot", "delta_writes_versioned"})
"""The metadata keys of a checkpoint of a namespace using a `DeltaChannel` (LangGraph's
`prune` recognises such threads by them)."""

INPUT_TASK = "__input__"
"""The task name LangGraph derives the id of a run's stored `DeltaChannel` input from."""


def _thread_id(value: object, field_name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{field_name}: got {type(value).__name__}; give the thread id as a str")
    if not value:
        raise ValueError(f"{field_name}: got an empty string; give a thread id")
    found = unstorable_at(value)
    if found is not None:
        index, what = found
        raise ValueError(
            f"{field_name}: {truncate(repr(value), 60)} holds {what} at index {index}, "
            "which no checkpointer stores in a thread id (Postgres text cannot hold it); "
            "give the id without it"
        )
    return value


def checked_threads(source: object, target: object, where: str) -> tuple[str, str]:
    """`copy_thread`'s two ids, checked: non-empty text every backend stores, not equal.

    Example:
        >>> checked_threads("a", "b", "copy_thread")
        ('a', 'b')
    """
    src = _thread_id(source, f"{where} source_thread_id")
    dst = _thread_id(target, f"{where} target_thread_id")
    if src == dst:
        raise ValueError(
            f"{where}: source and target are both {truncate(repr(src), 60)}; give the id "
            "of a new thread as target_thread_id"
        )
    return src, dst


def checked_run_ids(run_ids: object, where: str) -> list[str]:
    """`delete_for_runs`'s run ids, checked, in order and without repeats.

    Example:
        >>> checked_run_ids(["r1", "r2", "r1"], "delete_for_runs")
        ['r1', 'r2']
    """
    if isinstance(run_ids, str | bytes) or not isinstance(run_ids, Iterable):
        raise TypeError(
            f"{where} run_ids: got {type(run_ids).__name__}; give a sequence of run ids "
            "(a list of str), e.g. [run_id]"
        )
    seen: dict[str, None] = {}
    for run_id in run_ids:
        if not isinstance(run_id, str) or not run_id:
            raise TypeError(
                f"{where} run_ids: got {truncate(repr(run_id), 60)}; every run id must be "
                "a non-empty str"
            )
        found = unstorable_at(run_id)
        if found is not None:
            raise ValueError(
                f"{where} run_ids: {truncate(repr(run_id), 60)} holds {found[1]}, which "
                "no checkpoint's metadata can hold (LangGraph drops NUL from it); give "
                "the run id as the run was started with"
            )
        seen[run_id] = None
    return list(seen)


def input_task_id(checkpoint_id: str) -> str | None:
    """The task id of the `DeltaChannel` input a run stores on `checkpoint_id`, if any.

    Example:
        >>> input_task_id("1f0c5f2a-0000-6000-8000-000000000000") is not None
        True
        >>> input_task_id("not-a-uuid") is None
        True
    """
    try:
        return str(uuid5(UUID(checkpoint_id), INPUT_TASK))
    except ValueError:
        return None


def _occupied(where: str, target: str, what: str) -> ValueError:
    return ValueError(
        f"{where}: target thread {truncate(repr(target), 60)} already has {what}; a copy "
        "goes into a new thread. Give an unused target_thread_id, or delete the target "
        "first (saver.delete_thread(target), and on Postgres its lgsp_effects rows: "
        "PostgresEffects.delete_thread(target))"
    )


def _missing(where: str, source: str) -> ValueError:
    return ValueError(
        f"{where}: source thread {truncate(repr(source), 60)} has no checkpoints; give "
        "the id of a thread that has run (ids are compared exactly, case and Unicode "
        "form included)"
    )


@dataclass(frozen=True, slots=True)
class Stored:
    """One checkpoint of a thread as `plan_deletion` needs it."""

    namespace: str
    checkpoint_id: str
    parent_id: str | None
    run_id: str | None
    delta: bool = True
    """Whether its metadata shows a `DeltaChannel` (LangGraph's counters since a snapshot),
    whose value is rebuilt from the checkpoint's ancestors; unknown counts as shown."""


@dataclass(slots=True)
class DeletionPlan:
    """What `delete_for_runs` deletes in one thread, by namespace."""

    doomed: dict[str, list[str]] = field(default_factory=dict)
    """The checkpoints of the runs, by namespace."""
    reopened: dict[str, list[str]] = field(default_factory=dict)
    """The kept checkpoints a namespace goes back to (a deleted one's parent, no kept child)."""


def plan_deletion(
    thread_id: str, rows: Iterable[Stored], run_ids: Sequence[str], where: str
) -> DeletionPlan:
    """Which of a thread's checkpoints go; refuse when a kept one needs one of them.

    A kept checkpoint whose parent goes keeps its own state, as LangGraph's in-memory
    server deletes runs (its parent id then names a deleted checkpoint), unless its namespace uses a
    `DeltaChannel`: that state is rebuilt from the ancestors, so the deletion is refused.

    Example:
        >>> rows = [Stored("", "1", None, "a"), Stored("", "2", "1", "b")]
        >>> plan_deletion("t", rows, ["b"], "delete_for_runs")
        DeletionPlan(doomed={'': ['2']}, reopened={'': ['1']})
    """
    runs = set(run_ids)
    by_namespace: dict[str, list[Stored]] = defaultdict(list)
    for row in rows:
        by_namespace[row.namespace].append(row)
    plan = DeletionPlan()
    for namespace, stored in sorted(by_namespace.items()):
        doomed = {row.checkpoint_id: row for row in stored if row.run_id in runs}
        if not doomed:
            continue
        kept = [row for row in stored if row.checkpoint_id not in doomed]
        if any(row.delta for row in stored):
            for row in kept:
                if row.parent_id in doomed:
                    raise _orphaning(where, thread_id, namespace, row, doomed[row.parent_id])
        kept_ids = {row.checkpoint_id for row in kept}
        parents_of_kept = {row.parent_id for row in kept}
        reopened = {
            row.parent_id
            for row in doomed.values()
            if row.parent_id in kept_ids and row.parent_id not in parents_of_kept
        }
        plan.doomed[namespace] = sorted(doomed)
        if reopened:
            plan.reopened[namespace] = sorted(str(r) for r in reopened)
    return plan


def _orphaning(
    where: str, thread_id: str, namespace: str, kept: Stored, parent: Stored
) -> Exception:
    ns = f"namespace {namespace!r}" if namespace else "the root namespace"
    later = f"run {kept.run_id!r}" if kept.run_id else "no run id"
    return ValueError(
        f"{where}: nothing was deleted. In thread {truncate(repr(thread_id), 60)} ({ns}), "
        f"checkpoint {kept.checkpoint_id} ({later}) would be kept but its parent "
        f"{parent.checkpoint_id} (run {parent.run_id!r}) would go: the namespace uses a "
        "DeltaChannel, whose value a checkpoint rebuilds from its ancestors. Delete a "
        "thread's newest runs only, with every run after them"
        + (f" (add {kept.run_id!r} to run_ids)" if kept.run_id else "")
        + ", or delete the whole thread (delete_thread)"
    )


_PG_OCCUPIED: LiteralString = (
    "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = %s), "
    "EXISTS (SELECT 1 FROM checkpoint_writes WHERE thread_id = %s), "
    "EXISTS (SELECT 1 FROM checkpoint_blobs WHERE thread_id = %s)"
)
_PG_SOURCE: LiteralString = "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = %s)"
_PG_EFFECTS_TABLE: LiteralString = (
    "SELECT to_regclass('lgsp_effects') IS NOT NULL, EXISTS (SELECT 1 FROM pg_attribute "
    "WHERE attrelid = to_regclass('lgsp_effects') AND attname = 'state' AND NOT attisdropped)"
)
"""Whether there is an effects table, and whether it has the `state` column (an external
effect in doubt has to stay in doubt in the copy)."""
_PG_EFFECTS_OF: LiteralString = "SELECT EXISTS (SELECT 1 FROM lgsp_effects WHERE thread_id = %s)"
_PG_COPY: tuple[LiteralString, ...] = (
    "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
    "type, checkpoint, metadata) "
    "SELECT %(target)s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
    "CASE WHEN metadata ? 'thread_id' "
    "THEN jsonb_set(metadata, '{thread_id}', to_jsonb(%(target)s::text)) ELSE metadata END "
    "FROM checkpoints WHERE thread_id = %(source)s",
    "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) "
    "SELECT %(target)s, checkpoint_ns, channel, version, type, blob "
    "FROM checkpoint_blobs WHERE thread_id = %(source)s",
    "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, "
    "task_path, idx, channel, type, blob) "
    "SELECT %(target)s, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, "
    "blob FROM checkpoint_writes WHERE thread_id = %(source)s",
)
# A key built by `effect_key` starts with its thread's part (`/` and `%` escaped), up to
# the first `/`: the copy's key has the target's part there instead.
_PG_COPY_EFFECTS: LiteralString = (
    "INSERT INTO lgsp_effects (key, thread_id, outcome, created_at) "
    "SELECT %(part)s || substr(key, strpos(key, '/')), %(target)s, outcome, created_at "
    "FROM lgsp_effects WHERE thread_id = %(source)s AND strpos(key, '/') > 0"
)
_PG_COPY_EFFECTS_STATE: LiteralString = (
    "INSERT INTO lgsp_effects (key, thread_id, outcome, created_at, state) "
    "SELECT %(part)s || substr(key, strpos(key, '/')), %(target)s, outcome, created_at, state "
    "FROM lgsp_effects WHERE thread_id = %(source)s AND strpos(key, '/') > 0"
)


def effect_part(thread_id: str) -> str:
    """The thread's part of an `effect_key` (as `effects._part` escapes it).

    Example:
        >>> effect_part("order/7%")
        'order%2F7%25'
    """
    return thread_id.replace("%", "%25").replace("/", "%2F")


def postgres_copy(source: str, target: str, run: Run, where: str) -> Steps[None]:
    """`copy_thread` on Postgres, inside the caller's transaction."""
    # The target's fence lock: no fenced writer starts the target meanwhile; the
    # source's sweep lock: none of its finished hops' agents is deleted meanwhile.
    yield run(FENCE_LOCK, (target,))
    yield run(SWEEP_LOCK, (source,))
    checkpoints, writes, blobs = (yield run(_PG_OCCUPIED, (target, target, target)))[0]
    if checkpoints or writes or blobs:
        found = "checkpoints" if checkpoints else "checkpoint writes or blobs"
        raise _occupied(where, target, found)
    if not (yield run(_PG_SOURCE, (source,)))[0][0]:
        raise _missing(where, source)
    effects, with_state = (bool(found) for found in (yield run(_PG_EFFECTS_TABLE, ()))[0])
    if effects and (yield run(_PG_EFFECTS_OF, (target,)))[0][0]:
        raise _occupied(where, target, "recorded effects (lgsp_effects rows)")
    params = {"source": source, "target": target, "part": effect_part(target)}
    for statement in _PG_COPY:
        yield run(statement, params)
    if effects:
        yield run(_PG_COPY_EFFECTS_STATE if with_state else _PG_COPY_EFFECTS, params)


_PG_RUN_THREADS: LiteralString = (
    "SELECT DISTINCT thread_id FROM checkpoints WHERE metadata ->> 'run_id' = ANY(%s)"
)
_PG_THREAD_ROWS: LiteralString = (
    "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata ->> 'run_id', "
    "metadata ?| array['counters_since_delta_snapshot', 'delta_writes_versioned'] "
    "FROM checkpoints WHERE thread_id = %s"
)
_PG_DELETES: tuple[LiteralString, ...] = (
    "DELETE FROM checkpoint_writes "
    "WHERE thread_id = %(thread)s AND checkpoint_ns = %(ns)s AND checkpoint_id = ANY(%(ids)s)",
    # The blobs the doomed checkpoints reference and no other checkpoint of the namespace does.
    "DELETE FROM checkpoint_blobs b "
    "USING (SELECT DISTINCT v.key, v.value FROM checkpoints c "
    "  CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v "
    "  WHERE c.thread_id = %(thread)s AND c.checkpoint_ns = %(ns)s "
    "  AND c.checkpoint_id = ANY(%(ids)s)) AS d "
    "WHERE b.thread_id = %(thread)s AND b.checkpoint_ns = %(ns)s "
    "AND b.channel = d.key AND b.version = d.value "
    "AND NOT EXISTS (SELECT 1 FROM checkpoints k "
    "  WHERE k.thread_id = %(thread)s AND k.checkpoint_ns = %(ns)s "
    "  AND NOT (k.checkpoint_id = ANY(%(ids)s)) "
    "  AND k.checkpoint -> 'channel_versions' ->> b.channel = b.version)",
    "DELETE FROM checkpoints "
    "WHERE thread_id = %(thread)s AND checkpoint_ns = %(ns)s AND checkpoint_id = ANY(%(ids)s)",
)
_PG_DELETE_LEFT: LiteralString = (
    "DELETE FROM checkpoint_writes AS w "
    "WHERE w.thread_id = %(thread)s AND w.checkpoint_ns = %(ns)s AND w.checkpoint_id = %(id)s "
    "AND (w.task_id = %(input)s OR w.channel = %(resume)s OR (w.idx >= 0 AND EXISTS ("
    "  SELECT 1 FROM checkpoint_writes i WHERE i.thread_id = w.thread_id "
    "  AND i.checkpoint_ns = w.checkpoint_ns AND i.checkpoint_id = w.checkpoint_id "
    "  AND i.task_id = w.task_id AND i.channel = %(interrupt)s)))"
)


@dataclass(frozen=True, slots=True)
class _Dialect:
    """What `_delete_for_runs` runs on one backend."""

    run_threads: str
    thread_rows: str
    locks: tuple[str, ...]
    """Taken on each thread before its rows are read."""
    deletes: tuple[str, ...]
    """Each with the parameters `thread`, `ns` and `ids` (packed by `pack`)."""
    delete_left: str
    pack: Callable[[list[str]], Any]


def _delete_for_runs(run_ids: list[str], run: Run, where: str, sql: _Dialect) -> Steps[None]:
    threads = sorted(str(row[0]) for row in (yield run(sql.run_threads, (sql.pack(run_ids),))))
    plans: list[tuple[str, DeletionPlan]] = []
    for thread_id in threads:  # in order, so two deletions never wait on each other
        for lock in sql.locks:
            yield run(lock, (thread_id,))
        rows = yield run(sql.thread_rows, (thread_id,))
        stored = [
            Stored(str(ns), str(cid), _text(parent), _text(rid), bool(delta))
            for ns, cid, parent, rid, delta in rows
        ]
        plans.append((thread_id, plan_deletion(thread_id, stored, run_ids, where)))
    for thread_id, plan in plans:  # every thread checked before anything is deleted
        for namespace, ids in plan.doomed.items():
            params = {"thread": thread_id, "ns": namespace, "ids": sql.pack(ids)}
            for statement in sql.deletes:
                yield run(statement, params)
        for namespace, heads in plan.reopened.items():
            for head in heads:
                yield run(sql.delete_left, _leftovers(thread_id, namespace, head))


_POSTGRES = _Dialect(
    _PG_RUN_THREADS, _PG_THREAD_ROWS, (FENCE_LOCK, SWEEP_LOCK), _PG_DELETES, _PG_DELETE_LEFT, list
)


def postgres_delete_for_runs(run_ids: list[str], run: Run, where: str) -> Steps[None]:
    """`delete_for_runs` on Postgres, inside the caller's transaction (one for all threads)."""
    return _delete_for_runs(run_ids, run, where, _POSTGRES)


def _leftovers(thread_id: str, namespace: str, head: str) -> dict[str, Any]:
    """The parameters of `delete_left` on a checkpoint a namespace goes back to.

    What only a run continuing from it leaves there goes too (its `DeltaChannel` input,
    resume values, an interrupted task's result), so a new run starts from the state
    before the deleted runs.
    """
    return {
        "thread": thread_id,
        "ns": namespace,
        "id": head,
        "input": input_task_id(head) or "",
        "resume": RESUME,
        "interrupt": INTERRUPT,
    }


def _text(value: object) -> str | None:
    return None if value is None else str(value)


_SQLITE_OCCUPIED = (
    "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?), "
    "EXISTS (SELECT 1 FROM writes WHERE thread_id = ?)"
)
_SQLITE_SOURCE = "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?)"
_SQLITE_COPY = (
    (
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
        "parent_checkpoint_id, type, checkpoint, metadata) "
        "SELECT :target, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
        "CASE WHEN json_type(CAST(metadata AS TEXT), '$.thread_id') IS NOT NULL "
        "THEN CAST(json_set(CAST(metadata AS TEXT), '$.thread_id', :target) AS BLOB) "
        "ELSE metadata END "
        "FROM checkpoints WHERE thread_id = :source"
    ),
    (
        "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, "
        "channel, type, value) "
        "SELECT :target, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, "
        "value FROM writes WHERE thread_id = :source"
    ),
)
_SQLITE_BEGIN = "BEGIN IMMEDIATE"


def sqlite_copy(source: str, target: str, run: Run, where: str, begin: bool) -> Steps[None]:
    """`copy_thread` on SQLite; `begin` takes the write lock first (`BEGIN IMMEDIATE`)."""
    if begin:
        yield run(_SQLITE_BEGIN, ())
    checkpoints, writes = (yield run(_SQLITE_OCCUPIED, (target, target)))[0]
    if checkpoints or writes:
        raise _occupied(where, target, "checkpoints" if checkpoints else "checkpoint writes")
    if not (yield run(_SQLITE_SOURCE, (source,)))[0][0]:
        raise _missing(where, source)
    for statement in _SQLITE_COPY:
        yield run(statement, {"target": target, "source": source})


_SQLITE = _Dialect(
    run_threads="SELECT DISTINCT thread_id FROM checkpoints "
    "WHERE json_extract(CAST(metadata AS TEXT), '$.run_id') IN (SELECT value FROM json_each(?))",
    thread_rows="SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
    "json_extract(CAST(metadata AS TEXT), '$.run_id'), "
    "json_type(CAST(metadata AS TEXT), '$.counters_since_delta_snapshot') IS NOT NULL "
    "OR json_type(CAST(metadata AS TEXT), '$.delta_writes_versioned') IS NOT NULL "
    "FROM checkpoints WHERE thread_id = ?",
    locks=(),
    deletes=tuple(
        f"DELETE FROM {table} WHERE thread_id = :thread AND checkpoint_ns = :ns "
        "AND checkpoint_id IN (SELECT value FROM json_each(:ids))"
        for table in ("writes", "checkpoints")
    ),
    delete_left=re.sub(r"%\((\w+)\)s", r":\1", _PG_DELETE_LEFT).replace(
        "checkpoint_writes", "writes"
    ),
    pack=json.dumps,
)


def sqlite_delete_for_runs(run_ids: list[str], run: Run, where: str, begin: bool) -> Steps[None]:
    """`delete_for_runs` on SQLite (a checkpoint there holds its channel values: no blobs)."""
    if begin:
        yield run(_SQLITE_BEGIN, ())
    yield from _delete_for_runs(run_ids, run, where, _SQLITE)


class MemoryStorage(Protocol):
    """The dicts of an `InMemorySaver` (LangGraph's documented attributes)."""

    storage: Any
    writes: Any
    blobs: Any
    serde: Any


def memory_copy(saver: MemoryStorage, source: str, target: str, where: str) -> None:
    """`copy_thread` on an `InMemorySaver`; the caller holds the saver's lock."""
    serde: SerializerProtocol = saver.serde
    if any(saver.storage.get(target, {}).values()):
        raise _occupied(where, target, "checkpoints")
    if any(key[0] == target for key in [*saver.writes, *saver.blobs]):
        raise _occupied(where, target, "checkpoint writes or blobs")
    namespaces: Mapping[str, Mapping[str, Any]] = saver.storage.get(source, {})
    if not any(namespaces.values()):
        raise _missing(where, source)
    copied: dict[str, dict[str, Any]] = {}
    for namespace, entries in namespaces.items():
        copied[namespace] = {}
        for checkpoint_id, (checkpoint, metadata, parent) in entries.items():
            loaded = serde.loads_typed(metadata)
            if isinstance(loaded, Mapping) and "thread_id" in loaded:
                metadata = serde.dumps_typed({**loaded, "thread_id": target})
            copied[namespace][checkpoint_id] = (checkpoint, metadata, parent)
    writes = {
        (target, *key[1:]): dict(stored)
        for key, stored in list(saver.writes.items())
        if key[0] == source
    }
    blobs = {
        (target, *key[1:]): blob for key, blob in list(saver.blobs.items()) if key[0] == source
    }
    # Everything is read before anything is written: a failure above leaves no part copy.
    for namespace, entries in copied.items():
        saver.storage[target][namespace] = entries
    saver.writes.update(writes)
    saver.blobs.update(blobs)


def memory_delete_for_runs(
    saver: MemoryStorage, run_ids: list[str], where: str
) -> list[tuple[str, str]]:
    """`delete_for_runs` on an `InMemorySaver`; return the (thread, namespace) pairs touched."""
    serde: SerializerProtocol = saver.serde
    plans: list[tuple[str, DeletionPlan]] = []
    runs = set(run_ids)
    for thread_id, namespaces in list(saver.storage.items()):
        rows: list[Stored] = []
        for namespace, entries in list(namespaces.items()):
            for checkpoint_id, (_, metadata, parent) in list(entries.items()):
                loaded = serde.loads_typed(metadata)
                if not isinstance(loaded, Mapping):
                    loaded = {}
                delta = not _DELTA_KEYS.isdisjoint(loaded)
                rows.append(
                    Stored(namespace, checkpoint_id, parent, _text(loaded.get("run_id")), delta)
                )
        if any(row.run_id in runs for row in rows):
            plans.append((thread_id, plan_deletion(thread_id, rows, run_ids, where)))
    touched: list[tuple[str, str]] = []
    for thread_id, plan in plans:
        for namespace, ids in plan.doomed.items():
            entries = saver.storage[thread_id][namespace]
            doomed = {cid: entries.pop(cid) for cid in ids}
            for cid in ids:
                saver.writes.pop((thread_id, namespace, cid), None)
            unreferenced = _versions(serde, doomed.values()) - _versions(serde, entries.values())
            for channel, version in unreferenced:
                saver.blobs.pop((thread_id, namespace, channel, version), None)
            if not entries:
                del saver.storage[thread_id][namespace]
            touched.append((thread_id, namespace))
        for namespace, heads in plan.reopened.items():
            for head in heads:
                _drop_leftovers(saver, thread_id, namespace, head)
    return touched


def _versions(serde: SerializerProtocol, entries: Iterable[Any]) -> set[tuple[str, Any]]:
    """The (channel, version) pairs the stored checkpoints of `entries` reference."""
    found: set[tuple[str, Any]] = set()
    for entry in entries:
        checkpoint = serde.loads_typed(entry[0])
        if isinstance(checkpoint, Mapping):
            found.update((checkpoint.get("channel_versions") or {}).items())
    return found


def _drop_leftovers(saver: MemoryStorage, thread_id: str, namespace: str, head: str) -> None:
    stored = saver.writes.get((thread_id, namespace, head))
    if not stored:
        return
    input_task = input_task_id(head)
    interrupted = {task for (task, _), (_, channel, _, _) in stored.items() if channel == INTERRUPT}
    for key, (task, channel, _, _) in list(stored.items()):
        resumed = key[1] >= 0 and task in interrupted
        if task == input_task or channel == RESUME or resumed:
            del stored[key]

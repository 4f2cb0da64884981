"""Forgetting a finished hop's agent checkpoints (private to `checkpointers.py`).

A worker's compiled-graph agent runs under a namespace of its own per hop, each checkpoint
storing its whole message list again; they are needed only until the hop's task has stored
its writes at its parent's checkpoint (LangGraph never runs the task again from there).
The worker node marks such agents (`TRANSIENT_KEY` in checkpoint metadata). After storing a
checkpoint of an unmarked namespace, the checkpointers of `open_checkpointer` delete every
marked namespace whose task has a regular write at the parent checkpoint its run started
from (`parents` metadata). The rule reads only what is stored, so a namespace left behind
(a crash, another process) goes at the thread's next such checkpoint.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, LiteralString

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import WRITES_IDX_MAP

from langgraph_supervisor_pro._internal.hop import TRANSIENT_KEY
from langgraph_supervisor_pro._internal.twins import Io, Steps

SPECIAL_CHANNELS: frozenset[str] = frozenset(WRITES_IDX_MAP)
"""Writes that do not finish a task: its error, interrupt, resume value, scheduling."""


def is_transient(metadata: Mapping[str, Any] | None) -> bool:
    """Whether checkpoint (or config) metadata marks a hop's agent."""
    return bool(metadata) and metadata.get(TRANSIENT_KEY) is True  # type: ignore[union-attr]


def sweeps(config: RunnableConfig) -> bool:
    """Whether storing a checkpoint with `config` should forget finished hops' agents.

    Those of an unmarked namespace (the root, a domain) do; an agent's own do not.
    """
    return not is_transient(config.get("metadata"))


def recast(namespace: str) -> str:
    """A namespace without its task ids, as a `checkpointer=True` subgraph stores it.

    Example:
        >>> recast("ops:1f2e|incident:9a0b")
        'ops|incident'
    """
    return "|".join(part.split(":", 1)[0] for part in namespace.split("|"))


def write_keys(parents: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Where the owning task's writes may be stored: `(namespace, checkpoint_id)` pairs.

    Each parent namespace as named and recast, at the checkpoint the run started from.

    Example:
        >>> write_keys({"": "c1", "ops:9a": "c2"})
        [('', 'c1'), ('ops:9a', 'c2'), ('ops', 'c2')]
    """
    keys: list[tuple[str, str]] = []
    for parent_ns, checkpoint_id in parents.items():
        for stored in (str(parent_ns), recast(str(parent_ns))):
            if (stored, str(checkpoint_id)) not in keys:
                keys.append((stored, str(checkpoint_id)))
    return keys


def finished_namespace(
    namespace: str,
    parents: Mapping[str, Any],
    writes: Mapping[tuple[str, str], Iterable[tuple[str, str]]],
) -> bool:
    """Whether a marked namespace's task has finished, from what is stored.

    `parents` is its checkpoints' `parents` metadata, `writes` the `(task_id, channel)`
    of the writes stored at each of `write_keys(parents)` (missing keys: none).

    Example:
        >>> writes = {("", "c1"): [("t1", "ledger")]}
        >>> finished_namespace("w:t1", {"": "c1"}, writes)
        True
        >>> finished_namespace("w:t2", {"": "c1"}, writes)
        False
    """
    padded = f"{namespace}|"
    for key in write_keys(parents):
        for task_id, channel in writes.get(key, ()):
            if channel not in SPECIAL_CHANNELS and f":{task_id}|" in padded:
                return True
    return False


def parents_of(metadata: Mapping[str, Any]) -> dict[str, str]:
    """The `parents` map of a checkpoint's metadata (empty when missing or malformed)."""
    parents = metadata.get("parents")
    if not isinstance(parents, Mapping):
        return {}
    return {str(k): str(v) for k, v in parents.items() if isinstance(v, str)}


# What the savers run, per backend: a thread's marked namespaces, the writes where their
# tasks may have written, and the deletion of the finished ones.
MARK_JSON = '{"lgsp_transient": true}'

POSTGRES_MARKED: LiteralString = (
    "SELECT DISTINCT ON (checkpoint_ns) checkpoint_ns, metadata FROM checkpoints"
    " WHERE thread_id = %s AND checkpoint_ns > '' AND metadata @> %s::jsonb"
    " ORDER BY checkpoint_ns"
)
POSTGRES_WRITES: LiteralString = (
    "SELECT checkpoint_ns, checkpoint_id, task_id, channel FROM checkpoint_writes"
    " WHERE thread_id = %s AND checkpoint_ns = ANY(%s) AND checkpoint_id = ANY(%s)"
)
POSTGRES_DELETES: tuple[LiteralString, ...] = (
    "DELETE FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = ANY(%s)",
    "DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = ANY(%s)",
    "DELETE FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = ANY(%s)",
)

# SQLite keeps metadata as JSON bytes and has no blobs table (channel values are inside
# the checkpoint).
SQLITE_MARKED: LiteralString = (
    "SELECT checkpoint_ns, CAST(metadata AS TEXT) FROM checkpoints"
    " WHERE thread_id = ? AND checkpoint_ns > ''"
    " AND json_extract(CAST(metadata AS TEXT), '$.lgsp_transient') = 1"
    " GROUP BY checkpoint_ns"
)
SQLITE_WRITES: LiteralString = (
    "SELECT task_id, channel FROM writes"
    " WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)
SQLITE_DELETES: tuple[LiteralString, ...] = (
    "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ?",
    "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?",
)


def finished_of(
    marked: Iterable[tuple[str, Mapping[str, Any]]],
    writes: Mapping[tuple[str, str], Iterable[tuple[str, str]]],
) -> list[str]:
    """The marked namespaces (with their metadata) whose task has finished."""
    return [
        namespace
        for namespace, metadata in marked
        if finished_namespace(namespace, parents_of(metadata), writes)
    ]


def keys_of(marked: Iterable[tuple[str, Mapping[str, Any]]]) -> list[tuple[str, str]]:
    """Every `(namespace, checkpoint_id)` where the marked namespaces' tasks may have written."""
    keys: list[tuple[str, str]] = []
    for _, metadata in marked:
        keys.extend(k for k in write_keys(parents_of(metadata)) if k not in keys)
    return keys


Run = Callable[[str, tuple[Any, ...]], "Io[list[Any]]"]
"""Runs one statement on the saver's connection (in its transaction): its rows (or [])."""


def postgres_forgetting(thread_id: str, run: Run) -> Steps[list[str]]:
    """Delete the thread's finished hops' agent namespaces on Postgres; return them."""
    rows = yield run(POSTGRES_MARKED, (thread_id, MARK_JSON))
    marked = [(str(ns), metadata if isinstance(metadata, Mapping) else {}) for ns, metadata in rows]
    if not marked:
        return []
    keys = keys_of(marked)
    found = yield run(
        POSTGRES_WRITES, (thread_id, sorted({k[0] for k in keys}), sorted({k[1] for k in keys}))
    )
    writes: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for namespace, checkpoint_id, task_id, channel in found:
        writes[(str(namespace), str(checkpoint_id))].append((str(task_id), str(channel)))
    done = finished_of(marked, writes)
    if done:
        for statement in POSTGRES_DELETES:
            yield run(statement, (thread_id, done))
    return done


def sqlite_forgetting(thread_id: str, run: Run) -> Steps[list[str]]:
    """Delete the thread's finished hops' agent namespaces on SQLite; return them."""
    rows = yield run(SQLITE_MARKED, (thread_id,))
    marked = [(str(ns), _json_object(text)) for ns, text in rows]
    writes: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for key in keys_of(marked):
        found = yield run(SQLITE_WRITES, (thread_id, *key))
        writes[key] = [(str(task_id), str(channel)) for task_id, channel in found]
    done = finished_of(marked, writes)
    for namespace in done:
        for statement in SQLITE_DELETES:
            yield run(statement, (thread_id, namespace))
    return done


def _json_object(text: object) -> Mapping[str, Any]:
    """A checkpoint's metadata as SQLite keeps it (JSON text); {} when unreadable."""
    try:
        value = json.loads(str(text))
    except ValueError:
        return {}
    return value if isinstance(value, Mapping) else {}

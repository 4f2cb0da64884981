"""Forgetting a finished hop's agent checkpoints (private to `checkpointers.py`).

A worker's agent that is a compiled graph (a `create_agent` graph) runs as a subgraph
under a namespace of its own for each hop (`<worker>:<task id>`), and every one of its
checkpoints stores the agent's whole message list again: kept forever, they grow with
the square of the hop count. They are needed only while the hop's task has not finished:
mid-agent crash recovery resumes from them, and so does an interrupt pending inside the
agent. Once the task's own writes are stored at its parent's checkpoint (its slot, its
ledger line), LangGraph never runs the task again from that checkpoint (a resume replays
the stored writes), so its agent's checkpoints are never read again.

The worker node marks the checkpoints of such an agent (`TRANSIENT_KEY` in the agent's
config metadata, which LangGraph copies into each checkpoint's metadata); a domain of a
tree and a stateful subgraph are never marked. After storing a checkpoint of an unmarked
namespace (the root, a domain), the checkpointers of `open_checkpointer` delete every
marked namespace of the thread whose owning task has a regular write (not an interrupt,
an error or a resume value) at the parent checkpoint its run started from (the
`parents` map LangGraph writes into a subgraph checkpoint's metadata). The rule reads
only what is stored, so a namespace left behind (a crash between the two, another
process's run) goes at the thread's next such checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, LiteralString

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import WRITES_IDX_MAP

from langgraph_supervisor_pro._internal.hop import TRANSIENT_KEY

__all__ = [
    "POSTGRES_FORGET",
    "SPECIAL_CHANNELS",
    "SQLITE_DELETE_CHECKPOINTS",
    "SQLITE_DELETE_WRITES",
    "SQLITE_MARKED",
    "SQLITE_WRITES",
    "TRANSIENT_KEY",
    "finished_namespace",
    "is_transient",
    "parents_of",
    "recast",
    "sweeps",
    "write_keys",
]

SPECIAL_CHANNELS: frozenset[str] = frozenset(WRITES_IDX_MAP)
"""Writes that do not finish a task: its error, interrupt, resume value, scheduling."""

_SPECIAL_SQL = ", ".join(f"'{channel}'" for channel in sorted(SPECIAL_CHANNELS))


def is_transient(metadata: Mapping[str, Any] | None) -> bool:
    """Whether checkpoint (or config) metadata marks a hop's agent."""
    return bool(metadata) and metadata.get(TRANSIENT_KEY) is True  # type: ignore[union-attr]


def sweeps(config: RunnableConfig) -> bool:
    """Whether storing a checkpoint with `config` should forget finished hops' agents.

    Checkpoints of an unmarked namespace (the root, a domain) do; an agent's own do not
    (a hop's agent has no finished hops beneath it).
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

    Each parent namespace as the run named it and recast (a `checkpointer=True` parent
    stores its checkpoints without task ids), at the checkpoint the run started from.

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

    Args:
        namespace: The agent's namespace (`researcher:<task id>`, in a tree
            `ops|clerk:<task id>`).
        parents: Its checkpoints' `parents` metadata: parent namespace -> the checkpoint
            id the run started from.
        writes: The `(task_id, channel)` of the writes stored at each of
            `write_keys(parents)` (missing keys: none).

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


# The finished hops' agent namespaces of one thread, deleted in one statement (its data
# modifying parts all see the same snapshot). A write of the owning task is looked up by
# its primary key: the parent namespace (as the run named it, or recast for a stateful
# subgraph) and checkpoint id from `parents`, and the task id, which the agent's
# namespace ends with (`...:<task id>`), or holds before a further level (`...:<id>|...`).
POSTGRES_FORGET: LiteralString = (
    "WITH marked AS ("
    " SELECT DISTINCT ON (checkpoint_ns) checkpoint_ns, metadata -> 'parents' AS parents"
    " FROM checkpoints WHERE thread_id = %(thread)s AND checkpoint_ns > ''"
    " AND metadata @> '{\"lgsp_transient\": true}'"
    "), done AS ("
    " SELECT m.checkpoint_ns FROM marked AS m WHERE EXISTS ("
    "  SELECT 1 FROM jsonb_each_text(coalesce(m.parents, '{}'::jsonb)) AS p(ns, id)"
    "  JOIN checkpoint_writes AS w ON w.thread_id = %(thread)s AND w.checkpoint_id = p.id"
    "  AND w.checkpoint_ns IN (p.ns, regexp_replace(p.ns, ':[^|]*', '', 'g'))"
    "  WHERE strpos(m.checkpoint_ns || '|', ':' || w.task_id || '|') > 0"
    "  AND w.channel NOT IN (" + _SPECIAL_SQL + ")"
    " )"
    "), blobs AS ("
    " DELETE FROM checkpoint_blobs AS b USING done AS d"
    " WHERE b.thread_id = %(thread)s AND b.checkpoint_ns = d.checkpoint_ns"
    "), writes AS ("
    " DELETE FROM checkpoint_writes AS w USING done AS d"
    " WHERE w.thread_id = %(thread)s AND w.checkpoint_ns = d.checkpoint_ns"
    ")"
    " DELETE FROM checkpoints AS c USING done AS d"
    " WHERE c.thread_id = %(thread)s AND c.checkpoint_ns = d.checkpoint_ns"
)

# SQLite keeps metadata as JSON bytes and has no blobs table (channel values are inside
# the checkpoint): the marked namespaces are selected, judged in Python, and deleted in
# one transaction.
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
SQLITE_DELETE_WRITES: LiteralString = "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ?"
SQLITE_DELETE_CHECKPOINTS: LiteralString = (
    "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?"
)

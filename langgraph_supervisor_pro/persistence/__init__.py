"""Durability beyond the checkpointer: effects, leases, standby, retention, external memory.

`open_checkpointer` and `open_store` are top level.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/postgres/
"""

from langgraph_supervisor_pro.persistence._effects import (
    StoreEffects,
    aopen_effects,
    effect_key,
    open_effects,
)
from langgraph_supervisor_pro.persistence._leases import athread_lease, thread_lease
from langgraph_supervisor_pro.persistence._memory import output_namespace, recall_tool
from langgraph_supervisor_pro.persistence._retention import (
    PruneReport,
    aprune_threads,
    prune_threads,
)
from langgraph_supervisor_pro.persistence._server import server_checkpointer
from langgraph_supervisor_pro.persistence._standby import (
    aresume_orphans,
    astandby,
    resume_orphans,
    standby,
)

__all__ = [
    "PruneReport",
    "StoreEffects",
    "aopen_effects",
    "aprune_threads",
    "aresume_orphans",
    "astandby",
    "athread_lease",
    "effect_key",
    "open_effects",
    "output_namespace",
    "prune_threads",
    "recall_tool",
    "resume_orphans",
    "server_checkpointer",
    "standby",
    "thread_lease",
]

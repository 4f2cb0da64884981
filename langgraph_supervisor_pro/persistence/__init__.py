"""Durability: checkpointers, stores, leases, standby, side effects, external memory, retention."""

from langgraph_supervisor_pro.persistence.checkpointers import aopen_checkpointer, open_checkpointer
from langgraph_supervisor_pro.persistence.effects import (
    AsyncPostgresEffects,
    PostgresEffects,
    StoreEffects,
    aopen_effects,
    effect_key,
    open_effects,
)
from langgraph_supervisor_pro.persistence.leases import (
    ThreadBusyError,
    ThreadLease,
    athread_lease,
    thread_lease,
)
from langgraph_supervisor_pro.persistence.memory import (
    OutputRef,
    output_namespace,
    recall_tool,
)
from langgraph_supervisor_pro.persistence.retention import (
    FINISHED_STATUSES,
    PrunedThread,
    PruneReport,
    aprune_threads,
    parse_age,
    prune_threads,
)
from langgraph_supervisor_pro.persistence.server import CHECKPOINTER_URI_ENV, server_checkpointer
from langgraph_supervisor_pro.persistence.standby import (
    Takeover,
    aresume_orphans,
    astandby,
    resume_orphans,
    standby,
)
from langgraph_supervisor_pro.persistence.stores import aopen_store, open_store

__all__ = [
    "CHECKPOINTER_URI_ENV",
    "FINISHED_STATUSES",
    "AsyncPostgresEffects",
    "OutputRef",
    "PostgresEffects",
    "PruneReport",
    "PrunedThread",
    "StoreEffects",
    "Takeover",
    "ThreadBusyError",
    "ThreadLease",
    "aopen_checkpointer",
    "aopen_effects",
    "aopen_store",
    "aprune_threads",
    "aresume_orphans",
    "astandby",
    "athread_lease",
    "effect_key",
    "open_checkpointer",
    "open_effects",
    "open_store",
    "output_namespace",
    "parse_age",
    "prune_threads",
    "recall_tool",
    "resume_orphans",
    "server_checkpointer",
    "standby",
    "thread_lease",
]

"""Durability: checkpointers and stores, exactly-once side effects, and external memory."""

from langgraph_supervisor_pro.persistence.checkpointers import aopen_checkpointer, open_checkpointer
from langgraph_supervisor_pro.persistence.effects import (
    AsyncPostgresEffects,
    PostgresEffects,
    StoreEffects,
    aopen_effects,
    effect_key,
    open_effects,
)
from langgraph_supervisor_pro.persistence.memory import (
    OutputRef,
    output_namespace,
    recall_tool,
)
from langgraph_supervisor_pro.persistence.stores import aopen_store, open_store

__all__ = [
    "AsyncPostgresEffects",
    "OutputRef",
    "PostgresEffects",
    "StoreEffects",
    "aopen_checkpointer",
    "aopen_effects",
    "aopen_store",
    "effect_key",
    "open_checkpointer",
    "open_effects",
    "open_store",
    "output_namespace",
    "recall_tool",
]

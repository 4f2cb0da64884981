"""Compact before overflow: the configuration, the compactor and the agent middleware."""

from langgraph_supervisor_pro.compaction.compactor import (
    COMPACTION_PROMPT,
    SUMMARY_HEADER,
    CompactionOutcome,
    Compactor,
    ContextSummary,
    is_summary_message,
    split_for_compaction,
)
from langgraph_supervisor_pro.compaction.config import (
    Compaction,
    TokenCounter,
)
from langgraph_supervisor_pro.compaction.middleware import (
    CompactionMiddleware,
)

__all__ = [
    "COMPACTION_PROMPT",
    "SUMMARY_HEADER",
    "Compaction",
    "CompactionMiddleware",
    "CompactionOutcome",
    "Compactor",
    "ContextSummary",
    "TokenCounter",
    "is_summary_message",
    "split_for_compaction",
]

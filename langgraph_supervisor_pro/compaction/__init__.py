"""Compact before overflow: the compactor and the agent middleware (`Compaction` is top level).

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/compaction/
"""

from langgraph_supervisor_pro.compaction._compactor import (
    Compactor,
    ContextSummary,
    is_summary_message,
)
from langgraph_supervisor_pro.compaction._middleware import CompactionMiddleware

__all__ = ["CompactionMiddleware", "Compactor", "ContextSummary", "is_summary_message"]

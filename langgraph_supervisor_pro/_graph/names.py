"""The names of the graph's nodes, defined once (private).

Worker nodes are named after their workers; the supervisor node's name is
`create_supervisor(name=...)`, `SUPERVISOR_NODE` by default.
"""

__all__ = ["COMPACTION_NODE", "JUDGE_NODE", "REVIEW_NODE", "SUPERVISOR_NODE", "SYNTHESIS_NODE"]

SUPERVISOR_NODE = "supervisor"
"""The supervisor node's default name."""

SYNTHESIS_NODE = "synthesis"
"""The node that writes the run's answer."""

COMPACTION_NODE = "compaction"
"""The node that compacts a worker's history before its hop."""

REVIEW_NODE = "review"
"""The node that pauses for a human approval of a dispatch (manual tier)."""

JUDGE_NODE = "judge"
"""The node that scores a sample of completed turns (`create_supervisor(judge=...)`)."""

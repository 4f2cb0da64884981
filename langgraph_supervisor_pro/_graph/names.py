"""The names of the graph's nodes, defined once (private); workers' nodes take their names."""

SUPERVISOR_NODE = "supervisor"  # the default of `create_supervisor(name=...)`
SYNTHESIS_NODE = "synthesis"  # writes the run's answer
COMPACTION_NODE = "compaction"  # compacts a worker's history before its hop
REVIEW_NODE = "review"  # pauses for a human approval of a dispatch (manual tier)
JUDGE_NODE = "judge"  # scores a sample of completed turns (`create_supervisor(judge=...)`)

"""The graph's node runtimes and what they share (private).

Supervisor, workers, synthesis, compaction and review steps, output coercion, loop
guards, usage metering and tracing.
"""

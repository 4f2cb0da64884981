"""The graph's node runtimes and what they share (private)."""

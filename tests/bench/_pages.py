"""Text shared by the benchmarks' end-to-end tests."""

OTHER_PAGE = "# Benchmark results\n\n## Comparison\n\n| hops | ms |\n|:---|---:|\n| 6 | 1.00 |\n"
"""A results page holding another script's part, which a bench's `--markdown` must keep."""

"""Benchmarks against langgraph-supervisor; run `python bench/compare.py --help`."""

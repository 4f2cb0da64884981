"""Graphs the LangGraph-server tests serve with `langhost`."""

"""The name of a tool, however it is given (private)."""

from __future__ import annotations

from langchain_core.tools import BaseTool


def tool_name(tool: object) -> str:
    """The name of a LangChain tool, a function, or a tool name given as text."""
    if isinstance(tool, str):
        return tool
    if isinstance(tool, BaseTool):
        return tool.name
    name = getattr(tool, "__name__", None)
    if callable(tool) and isinstance(name, str):
        return name
    raise TypeError(f"got {type(tool).__name__}; give a LangChain tool, a function or a tool name")

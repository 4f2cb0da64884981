"""The name of a tool, however it is given (private)."""

from __future__ import annotations

from langchain_core.tools import BaseTool

__all__ = ["tool_name"]


def tool_name(tool: object) -> str:
    """The name of a LangChain tool, a function, or a tool name given as text.

    Raises:
        TypeError: For anything else.

    Example:
        >>> def refund(order_id: str) -> str:
        ...     return order_id
        >>> tool_name(refund), tool_name("lookup")
        ('refund', 'lookup')
    """
    if isinstance(tool, str):
        return tool
    if isinstance(tool, BaseTool):
        return tool.name
    name = getattr(tool, "__name__", None)
    if callable(tool) and isinstance(name, str):
        return name
    raise TypeError(f"got {type(tool).__name__}; give a LangChain tool, a function or a tool name")

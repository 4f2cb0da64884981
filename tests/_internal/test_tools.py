"""One way to name a tool, however it is given."""

import functools

import pytest
from langchain_core.tools import tool

from langgraph_supervisor_pro._internal.tools import tool_name


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return order_id


def refund(order_id: str) -> str:
    return order_id


def test_names_of_tools_functions_and_text():
    assert [tool_name(t) for t in (lookup, refund, "wipe")] == ["lookup", "refund", "wipe"]


@pytest.mark.parametrize("bad", [42, None, functools.partial(refund, "A1")])
def test_anything_else_is_refused(bad):
    with pytest.raises(TypeError, match="give a LangChain tool, a function or a tool name"):
        tool_name(bad)

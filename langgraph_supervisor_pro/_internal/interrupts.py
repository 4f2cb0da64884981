"""LangGraph's interrupt ids and the LangGraph server's user, as a run sees them (private).

Shared by the review gate and the remote hop, which both re-post or answer a review under
the id LangGraph gives it, and record who answered.

Example:
    >>> server_auth_user({"langgraph_auth_user_id": " alice "})
    'alice'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import Interrupt

# LangGraph's (unexported) separator: a task's interrupt id hashes its `checkpoint_ns`, or
# `f"{ns}|{k}"` after k answers (tests/review/test_gate.py pins it).
_NS_SEP = "|"
# Where LangGraph's server puts the authenticated user's id in a run's `configurable`.
_AUTH_USER_ID = "langgraph_auth_user_id"


def answer_slot_ns(ns: str, answered: int) -> str:
    """What LangGraph hashes into the id of the interrupt a task raises after `answered` answers."""
    return f"{ns}{_NS_SEP}{answered}" if answered else ns


def interrupt_id_after(ns: str, answered: int) -> str:
    """The id LangGraph gives the interrupt a task raises after `answered` answers."""
    return Interrupt.from_ns(None, answer_slot_ns(ns, answered)).id


def server_auth_user(configurable: Mapping[str, Any]) -> str | None:
    """The LangGraph server's authenticated user of the run (None outside a server)."""
    user = configurable.get(_AUTH_USER_ID)
    if not isinstance(user, str) or not user.strip():
        return None
    return user.strip()

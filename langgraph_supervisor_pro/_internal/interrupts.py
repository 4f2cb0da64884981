"""LangGraph's interrupt ids and the LangGraph server's user, as a run sees them (private).

Shared by the review gate and the remote hop, which both re-post or answer a review under
the id LangGraph gives it, and record who answered.

Example:
    >>> interrupt_id_after("", 0) == interrupt_id_after("", 0)
    True
    >>> server_auth_user({"langgraph_auth_user_id": " alice "})
    'alice'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import Interrupt

__all__ = ["answer_slot_ns", "interrupt_id_after", "server_auth_user"]

# LangGraph's namespace separator, which its interrupt ids are built with: the id of a
# task's interrupt is the hash of the task's `checkpoint_ns`, or of `f"{ns}|{k}"` once the
# task consumed k answers. Not exported by LangGraph; tests/review/test_gate.py pins that
# the ids built with it equal LangGraph's own.
_NS_SEP = "|"
# Where LangGraph's server puts the authenticated user's identity in a run's config
# (langgraph-api: `configurable["langgraph_auth_user_id"]`, beside the user object).
_AUTH_USER_ID = "langgraph_auth_user_id"


def answer_slot_ns(ns: str, answered: int) -> str:
    """What LangGraph hashes into the id of the interrupt a task raises after `answered` answers.

    Example:
        >>> answer_slot_ns("worker:1", 0), answer_slot_ns("worker:1", 2)
        ('worker:1', 'worker:1|2')
    """
    return f"{ns}{_NS_SEP}{answered}" if answered else ns


def interrupt_id_after(ns: str, answered: int) -> str:
    """The id LangGraph gives the interrupt a task raises after `answered` answers.

    Example:
        >>> len(interrupt_id_after("worker:1", 2))
        32
    """
    return Interrupt.from_ns(None, answer_slot_ns(ns, answered)).id


def server_auth_user(configurable: Mapping[str, Any]) -> str | None:
    """The LangGraph server's authenticated user of the run (None outside a server).

    Example:
        >>> server_auth_user({}) is None
        True
    """
    user = configurable.get(_AUTH_USER_ID)
    if not isinstance(user, str) or not user.strip():
        return None
    return user.strip()

"""The typed context of one worker hop, passed to the worker's agent (private).

The worker node puts one `HopContext` in the agent's config, under
`configurable[HOP_CONFIG_KEY]`; the tool guard and the compaction middleware read
it back with `hop_context`. It is never copied into checkpoint metadata: LangGraph
only copies `str`, `int`, `float` and `bool` configurable values there. Trace
metadata (`lgsp_*`) may record the same facts for LangSmith; nothing reads them back.

An agent built with `create_agent` and used outside a supervisor graph has no hop
context: readers then fall back to what the agent's own messages say.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config

__all__ = [
    "HOP_CONFIG_KEY",
    "TRANSIENT_KEY",
    "HopContext",
    "first_human_text",
    "hop_context",
    "prompt_digest",
    "with_hop",
]

HOP_CONFIG_KEY = "lgsp_hop"
"""The `configurable` key the worker node passes the `HopContext` under."""

TRANSIENT_KEY = "lgsp_transient"
"""Metadata the worker node gives a hop's graph agent (not a domain): `True`.

LangGraph copies it into each of the agent's checkpoints' metadata, which tells the
checkpointers of `open_checkpointer` that those checkpoints are the hop's scratch, to be
deleted once the hop's result is stored (`persistence/_finished_hops.py`)."""


@dataclass(frozen=True, kw_only=True)
class HopContext:
    """What a worker's agent needs to know about the hop it runs in.

    Example:
        >>> hop = HopContext(worker="billing", step=2, turn=1, task="Refund order 7",
        ...                  instructions="refund it", dispatched_at=None, tier="supervised")
        >>> hop_context(with_hop({}, hop)) == hop
        True
    """

    worker: str
    """The worker's name."""
    step: int
    """The hop's step (1-based, within the turn)."""
    turn: int
    """The run's turn."""
    task: str
    """The user's task for the run."""
    instructions: str
    """The supervisor's instructions for this hop."""
    dispatched_at: str | None
    """When the supervisor dispatched the hop (ISO-8601), stored in state."""
    tier: str | None
    """The autonomy tier the run recorded, if any."""
    path: tuple[str, ...] = ()
    """The worker names from the root of a tree of supervisors down to this hop's worker
    (`("ops", "incident", "pager")`); `(worker,)` at the root."""
    digest: str | None = None
    """`prompt_digest` of the hop's prompt (task, instructions, the outputs it reads): the
    same for a hop run again (a crash, a retry, a replay), another for a root forked with
    a new input that reaches the same turn and step (another hop). None: not known."""


def prompt_digest(prompt: str) -> str:
    """A short digest of a hop's prompt text (16 hex digits of its SHA-256).

    Example:
        >>> prompt_digest("Task: Refund order 7")
        'db6b1ceb2e4016fd'
    """
    return hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def with_hop(config: RunnableConfig, hop: HopContext) -> RunnableConfig:
    """`config` with `hop` in its `configurable` (a new config; `config` is unchanged).

    Example:
        >>> hop = HopContext(worker="w", step=1, turn=1, task="T", instructions="",
        ...                  dispatched_at=None, tier=None)
        >>> with_hop({"configurable": {"thread_id": "t"}}, hop)["configurable"]["thread_id"]
        't'
    """
    configurable = {**(config.get("configurable") or {}), HOP_CONFIG_KEY: hop}
    return {**config, "configurable": configurable}


def hop_context(config: Mapping[str, Any] | None = None) -> HopContext | None:
    """The hop context in `config` (default: the running config), or None outside a hop.

    Example:
        >>> hop_context({"configurable": {}}) is None
        True
    """
    if config is None:
        try:
            config = get_config()
        except RuntimeError:  # not inside a runnable
            return None
    value = (config.get("configurable") or {}).get(HOP_CONFIG_KEY)
    return value if isinstance(value, HopContext) else None


def first_human_text(messages: Sequence[Any]) -> str:
    """The text of the first human message, or "" (the task of an agent used on its own).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> first_human_text([HumanMessage("Refund order 7")])
        'Refund order 7'
    """
    for message in messages:
        if getattr(message, "type", "") == "human":
            if isinstance(message, BaseMessage):
                return message.text
            return str(getattr(message, "content", ""))
    return ""

"""The typed context of one worker hop, passed to the worker's agent (private).

The worker node puts a `HopContext` under `configurable[HOP_CONFIG_KEY]` (a `__` key, never
copied into checkpoint metadata); the tool guard and the compaction middleware read it back.
See docs/architecture.md ("The hop context").
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config

HOP_CONFIG_KEY = "__lgsp_hop"
"""The `configurable` key the worker node passes the `HopContext` under. It starts with `__`,
so no saver copies it into checkpoint metadata (the LangGraph server's copies every other
key, and the context holds live budget levels that cannot be pickled)."""

TRANSIENT_KEY = "lgsp_transient"
"""Metadata (`True`) marking a hop's graph agent's checkpoints as scratch, deleted once the
hop's result is stored (`persistence/_finished_hops.py`)."""


@dataclass(frozen=True, kw_only=True)
class HopContext:
    """What a worker's agent needs to know about the hop it runs in."""

    worker: str
    step: int
    """The hop's step (1-based, within the turn)."""
    turn: int
    task: str
    instructions: str
    dispatched_at: str | None
    """When the supervisor dispatched the hop (ISO-8601), stored in state."""
    tier: str | None
    """The autonomy tier the run recorded, if any."""
    path: tuple[str, ...] = ()
    """The worker names from the root of a tree down to this hop's worker."""
    digest: str | None = None
    """`prompt_digest` of the hop's prompt: the same for a hop run again, another for a
    forked root's hop at the same turn and step. None: not known."""
    budgets: tuple[Any, ...] = ()
    """The budgets in force above this hop's worker (`_graph.usage.Level`s, root first):
    a domain's supervisor halts when one of them is spent."""


def prompt_digest(prompt: str) -> str:
    """A short digest of a hop's prompt text (16 hex digits of its SHA-256)."""
    return hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_URL_NAMESPACE = uuid.NAMESPACE_URL.bytes


def url_id(seed: str) -> str:
    """`str(uuid.uuid5(uuid.NAMESPACE_URL, seed))`, without building a `UUID` (one per hop).

    Example:
        >>> import uuid
        >>> url_id("lgsp:x:prompt") == str(uuid.uuid5(uuid.NAMESPACE_URL, "lgsp:x:prompt"))
        True
    """
    digest = bytearray(hashlib.sha1(_URL_NAMESPACE + seed.encode("utf-8")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def with_hop(config: RunnableConfig, hop: HopContext) -> RunnableConfig:
    """`config` with `hop` in its `configurable` (a new config; `config` is unchanged)."""
    configurable = {**(config.get("configurable") or {}), HOP_CONFIG_KEY: hop}
    return {**config, "configurable": configurable}


def hop_context(config: Mapping[str, Any] | None = None) -> HopContext | None:
    """The hop context in `config` (default: the running config), or None outside a hop."""
    if config is None:
        try:
            config = get_config()
        except RuntimeError:  # not inside a runnable
            return None
    value = (config.get("configurable") or {}).get(HOP_CONFIG_KEY)
    return value if isinstance(value, HopContext) else None


def first_human_text(messages: Sequence[Any]) -> str:
    """The text of the first human message, or "" (the task of an agent used on its own)."""
    for message in messages:
        if getattr(message, "type", "") == "human":
            if isinstance(message, BaseMessage):
                return message.text
            return str(getattr(message, "content", ""))
    return ""

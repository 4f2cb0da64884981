"""Text every backend can store (private): no NUL, no surrogate code points (Postgres refuses both).

Text the library writes goes through `storable`; a user's message that `unstorable_at`
refuses ends the turn (docs/architecture.md, "Text every backend can store").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REPLACEMENT = "\ufffd"
"""What stands in for a character that cannot be stored."""

_NUL = "\x00"


def storable(text: str) -> str:
    r"""`text` with NUL and lone surrogates replaced by U+FFFD, surrogate pairs joined."""
    text = text.replace(_NUL, REPLACEMENT)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 joins a high surrogate followed by a low one; a lone one decodes to U+FFFD.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def storable_value(value: Any) -> Any:
    r"""`value` with `storable` applied to every string in its mappings, lists and tuples."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, Mapping):
        return {storable_value(k): storable_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [storable_value(item) for item in value]
    if isinstance(value, tuple):
        return tuple(storable_value(item) for item in value)
    return value


def unstorable_at(text: str) -> tuple[int, str] | None:
    r"""Where `text` first holds a NUL or a surrogate (paired or not), and which; else None."""
    if text.isascii() and _NUL not in text:
        return None
    for index, char in enumerate(text):
        if char == _NUL:
            return index, "a NUL character (U+0000)"
        if "\ud800" <= char <= "\udfff":
            return index, f"a surrogate code point (U+{ord(char):04X})"
    return None


def check_thread_id(thread_id: str, where: str = "thread_id") -> str:
    r"""`thread_id`, or a `ValueError` when no checkpointer can store or look it up."""
    from langgraph_supervisor_pro._internal.text import shown_id

    found = unstorable_at(thread_id) if isinstance(thread_id, str) else None
    if found is None:
        return thread_id
    index, char = found
    raise ValueError(
        f"{where}: {shown_id(thread_id)} cannot be stored or encoded: it holds {char} at "
        f"index {index} (not valid UTF-8); give the thread id the run was started with"
    )

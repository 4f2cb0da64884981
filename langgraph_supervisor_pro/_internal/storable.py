"""Text every backend can store (private): no NUL, no surrogate code points.

Postgres refuses NUL (U+0000) in `text` and `jsonb` values, and a surrogate code point
(U+D800 to U+DFFF) anywhere: it is not a Unicode character and has no UTF-8 encoding.
LangGraph's Postgres saver keeps a checkpoint's string channels (`task`,
`halt_detail`, ...) in JSONB, and the Postgres store keeps values as JSONB, so one such
character crashes the write; LangGraph's msgpack blobs take NUL but turn a surrogate
into `?`. The policy (docs/architecture.md, "Text every backend can store"):

- text the library writes into state or the store (errors, results, summaries, halt
  details, instructions, review payloads, compaction summaries) goes through `storable`:
  NUL and lone surrogates become U+FFFD, the visible replacement character, and a
  surrogate pair held as two code points becomes the character it encodes;
- a user's message is checked with `unstorable_at` at the turn's intake, and one that
  cannot be stored ends the turn (`halt_reason="invalid_input"`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REPLACEMENT = "\ufffd"
"""What stands in for a character that cannot be stored."""

_NUL = "\x00"


def storable(text: str) -> str:
    r"""`text` with NUL and lone surrogates replaced by U+FFFD; ordinary text is unchanged.

    A surrogate pair held as two code points (as some JSON decoders leave it) is joined
    into the character it encodes. The result encodes to UTF-8 and holds no NUL, so
    Postgres (text and JSONB), SQLite and msgpack all keep it as it is; applying it again
    changes nothing.

    Example:
        >>> storable("bad\x00text") == "bad\ufffdtext"
        True
        >>> storable("lone \ud800 surrogate") == "lone \ufffd surrogate"
        True
        >>> storable("pair \ud83d\ude00") == "pair \U0001f600"
        True
        >>> storable("plain text")
        'plain text'
    """
    if text.isascii():
        return text.replace(_NUL, REPLACEMENT) if _NUL in text else text
    if _NUL in text:
        text = text.replace(_NUL, REPLACEMENT)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 joins a high surrogate followed by a low one; what is left alone
        # decodes to U+FFFD.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def storable_value(value: Any) -> Any:
    r"""`value` with `storable` applied to every string in it, keys included.

    Dicts (any mapping, returned as a `dict`), lists and tuples are walked; other values
    (numbers, booleans, None, objects) are returned as they are.

    Example:
        >>> storable_value({"order\x00id": ["A\x001", 2, None]}) == {
        ...     "order\ufffdid": ["A\ufffd1", 2, None]}
        True
    """
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
    r"""Where `text` first holds a character no backend stores, and what it is; else None.

    Any surrogate code point counts, paired or not: a Python string decoded from valid
    UTF-8 never holds one, and LangGraph's msgpack turns each into `?`.

    Example:
        >>> unstorable_at("Plan\x00 it")
        (4, 'a NUL character (U+0000)')
        >>> unstorable_at("x\ud800"), unstorable_at("fine")
        ((1, 'a surrogate code point (U+D800)'), None)
    """
    if text.isascii() and _NUL not in text:
        return None
    for index, char in enumerate(text):
        if char == _NUL:
            return index, "a NUL character (U+0000)"
        if "\ud800" <= char <= "\udfff":
            return index, f"a surrogate code point (U+{ord(char):04X})"
    return None


def check_thread_id(thread_id: str, where: str = "thread_id") -> str:
    r"""`thread_id`, or a `ValueError` when no checkpointer can store or look it up.

    A thread id with a NUL or a surrogate code point (what Python makes of bytes that
    are not UTF-8, e.g. in a command-line argument) cannot be encoded for SQLite or
    Postgres: said as such, rather than as an encoding error from deep in a driver.

    Example:
        >>> check_thread_id("order-7")
        'order-7'
        >>> check_thread_id("order-\udcff")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: thread_id: 'order-\udcff' cannot be stored or encoded: it holds a ...
    """
    from langgraph_supervisor_pro._internal.text import shown_id

    found = unstorable_at(thread_id) if isinstance(thread_id, str) else None
    if found is None:
        return thread_id
    index, char = found
    raise ValueError(
        f"{where}: {shown_id(thread_id)} cannot be stored or encoded: it holds {char} at "
        f"index {index} (not valid UTF-8); give the thread id the run was started with"
    )

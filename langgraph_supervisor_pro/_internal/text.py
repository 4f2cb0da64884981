"""Small text helpers shared by the package (private)."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage

_WORD = re.compile(r"\S+")


def truncate(text: str, limit: int) -> str:
    """Cut `text` to at most `limit` characters, marking the cut with an ellipsis.

    Example:
        >>> truncate("abcdef", 4)
        'abc…'
    """
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


ID_CHARS = 80
"""How much of an id (a thread id, ...) a message shows, quoted: ids are user input."""


def shown_id(value: object, limit: int = ID_CHARS) -> str:
    """`value` quoted (its `repr`) and cut to `limit` characters, to name an id in a message.

    Example:
        >>> shown_id("order-7"), shown_id("x" * 10_000, 12)
        ("'order-7'", "'xxxxxxxxxx…")
    """
    return truncate(repr(value), limit)


def cut_id(value: object, limit: int = ID_CHARS) -> str:
    """`value` as text (unquoted, where a message names an id bare) cut to `limit` characters.

    Example:
        >>> cut_id("order-7"), cut_id("x" * 10_000, 12)
        ('order-7', 'xxxxxxxxxxx…')
    """
    return truncate(str(value), limit)


def plural(count: int, word: str, many: str | None = None) -> str:
    """`count` and `word`, in the plural (`many`, else `word` + s) unless `count` is 1.

    Example:
        >>> plural(1, "run"), plural(2, "run"), plural(0, "breach", "breaches")
        ('1 run', '2 runs', '0 breaches')
    """
    return f"{count} {word if count == 1 else many or word + 's'}"


def one_line(text: str, limit: int) -> str:
    """Fold white space to single spaces and truncate, for ledger and prompt lines."""
    return truncate(" ".join(text.split()), limit)


def first_sentence(text: str, limit: int) -> str:
    r"""The first sentence of `text`, white space folded, cut to `limit` characters.

    A sentence ends at a word ending in '.', '!' or '?'. Only the words up to that one
    (or up to `limit` characters) are read: a result may be long, its summary is not.

    Example:
        >>> first_sentence("Cats sleep a lot.   They also\npurr.", 120)
        'Cats sleep a lot.'
        >>> first_sentence("no end in sight " * 20, 12)
        'no end in s…'
    """
    words: list[str] = []
    length = -1  # the joined words' length: one space fewer than words
    for match in _WORD.finditer(text):
        word = match.group()
        words.append(word)
        length += len(word) + 1
        if length > limit or word[-1] in ".!?":
            break
    return truncate(" ".join(words), limit)


def content_text(content: Any) -> str:
    """Return a message's content as plain text (joining text blocks of multi-part content)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "".join(parts)
    return str(content)


def message_text(message: BaseMessage) -> str:
    """Return the text of a message."""
    return content_text(message.content)

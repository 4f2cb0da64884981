"""Small text helpers shared by the package (private)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage


def store_label(text: str) -> str:
    """A store namespace label: no `.` and no NUL (percent-encoded), never empty."""
    return text.replace("%", "%25").replace(".", "%2E").replace("\x00", "%00") or "%"


def truncate(text: str, limit: int) -> str:
    """Cut `text` to at most `limit` characters, marking the cut with an ellipsis."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


ID_CHARS = 80  # how much of an id (user input) a message shows


def shown_id(value: object, limit: int = ID_CHARS) -> str:
    """`value` quoted (its `repr`) and cut to `limit` characters, to name an id in a message."""
    return truncate(repr(value), limit)


def cut_id(value: object, limit: int = ID_CHARS) -> str:
    """`value` as text (unquoted, where a message names an id bare) cut to `limit` characters."""
    return truncate(str(value), limit)


def plural(count: int, word: str, many: str | None = None) -> str:
    """`count` and `word`, in the plural (`many`, else `word` + s) unless `count` is 1."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def one_line(text: str, limit: int) -> str:
    """Fold white space to single spaces and truncate, for ledger and prompt lines."""
    return truncate(" ".join(text.split()), limit)


def first_sentence(text: str, limit: int) -> str:
    r"""The first sentence of `text` (to a word ending in '.', '!' or '?'), cut to `limit`.

    Only the words up to there (or up to `limit` characters) are read: past
    `(limit + 1) // 2 + 1` words of one character or more, the joined words exceed `limit`.

    Example:
        >>> first_sentence("  Found  it. Then more.", 120)
        'Found it.'
    """
    most = (limit + 1) // 2 + 1
    words = text.split(None, most)[:most]  # the last part of a full split is the unsplit rest
    length = -1  # the joined words' length: one space fewer than words
    for count, word in enumerate(words, 1):
        length += len(word) + 1
        if length > limit or word[-1] in ".!?":
            del words[count:]
            break
    return truncate(" ".join(words), limit)


def content_text(content: Any) -> str:
    """Return a message's content as plain text (joining text blocks of multi-part content)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text")
        )
    return str(content)


def message_text(message: BaseMessage) -> str:
    """Return the text of a message."""
    return content_text(message.content)

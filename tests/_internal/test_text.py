"""The package's small text helpers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_supervisor_pro._internal.text import first_sentence, plural, truncate


@pytest.mark.parametrize(
    ("count", "word", "many", "shown"),
    [
        (1, "run", None, "1 run"),
        (0, "run", None, "0 runs"),
        (2, "labelled run", None, "2 labelled runs"),
        (-1, "hop", None, "-1 hops"),
        (1, "deadline breach", "deadline breaches", "1 deadline breach"),
        (3, "deadline breach", "deadline breaches", "3 deadline breaches"),
    ],
)
def test_plural_is_the_word_unless_the_count_is_one(
    count: int, word: str, many: str | None, shown: str
) -> None:
    assert plural(count, word, many) == shown


def _first_sentence_by_words(text: str, limit: int) -> str:
    """The definition: whitespace-separated words up to one ending a sentence or `limit`."""
    words: list[str] = []
    length = -1
    for match in re.finditer(r"\S+", text):
        words.append(match.group())
        length += len(match.group()) + 1
        if length > limit or match.group()[-1] in ".!?":
            break
    return truncate(" ".join(words), limit)


_PIECES = ["a", "bb", "ccc.", "end!", "why?", ".", " ", "  ", "\n", "\t", "\x1c", "\x1f"]
_PIECES += ["\u00a0", "\u2003", "\u3000", "\x85", "é", "x" * 50]


@settings(max_examples=500)
@given(
    text=st.lists(st.sampled_from(_PIECES), max_size=60).map("".join)
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=300),
    limit=st.integers(min_value=0, max_value=130),
)
def test_first_sentence_reads_the_words_up_to_a_sentence_end_or_the_limit(
    text: str, limit: int
) -> None:
    assert first_sentence(text, limit) == _first_sentence_by_words(text, limit)


@pytest.mark.parametrize(
    ("text", "limit", "shown"),
    [
        ("  Found  it. Then more.", 120, "Found it."),
        ("no end in sight", 120, "no end in sight"),
        ("", 120, ""),
        ("word " * 100, 20, "word word word word…"),
        ("x" * 300, 10, "xxxxxxxxx…"),
        ("Wait!\n\nThen", 5, "Wait!"),
    ],
)
def test_first_sentence_examples(text: str, limit: int, shown: str) -> None:
    assert first_sentence(text, limit) == shown

"""The package's small text helpers."""

from __future__ import annotations

import pytest

from langgraph_supervisor_pro._internal.text import plural


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

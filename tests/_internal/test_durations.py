"""The duration grammar shared by `--since` and `--older-than`."""

from __future__ import annotations

import math

import pytest

from langgraph_supervisor_pro._internal.durations import UNIT_SECONDS, duration_seconds


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90.0), ("15m", 900.0), (" 24h ", 86400.0), ("7 d", 604800.0), ("0.5w", 302400.0)],
)
def test_a_number_and_a_unit_is_its_seconds(text: str, seconds: float) -> None:
    assert duration_seconds(text) == seconds


@pytest.mark.parametrize("text", ["", "30", "d", "-1d", "1e3s", "1.d", "3y", "1d\x00"])
def test_anything_else_is_none(text: str) -> None:
    assert duration_seconds(text) is None


def test_a_huge_number_is_inf_for_the_caller_to_bound() -> None:
    assert duration_seconds("9" * 400 + "s") == math.inf
    assert set(UNIT_SECONDS) == {"s", "m", "h", "d", "w"}


def test_other_scripts_digits_are_digits() -> None:
    # `\d` and `float` both read Unicode decimal digits: U+0661 is ARABIC-INDIC ONE.
    assert duration_seconds("\u0661d") == 86400.0

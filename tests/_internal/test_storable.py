"""Storable text: what Postgres (text, JSONB), SQLite and msgpack all keep unchanged."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from psycopg.types.json import Jsonb

from langgraph_supervisor_pro._internal.storable import (
    REPLACEMENT,
    storable,
    storable_value,
    unstorable_at,
)

# Every code point, surrogates and NUL included (hypothesis' default text leaves
# surrogates out).
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
ANY_TEXT = st.text(alphabet=ANY_CHAR)
ORDINARY_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
)
SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)


def is_storable(text: str) -> bool:
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@given(ANY_TEXT)
def test_any_text_comes_out_storable(text: str) -> None:
    out = storable(text)
    assert is_storable(out)
    assert unstorable_at(out) is None


@given(ANY_TEXT)
def test_it_is_idempotent(text: str) -> None:
    once = storable(text)
    assert storable(once) == once


@given(ORDINARY_TEXT)
def test_ordinary_text_is_left_unchanged(text: str) -> None:
    assert storable(text) is text
    assert unstorable_at(text) is None


@given(ORDINARY_TEXT, ORDINARY_TEXT)
def test_a_nul_becomes_one_replacement_character_in_its_place(head: str, tail: str) -> None:
    assert storable(f"{head}\x00{tail}") == f"{head}{REPLACEMENT}{tail}"
    assert unstorable_at(f"{head}\x00{tail}") == (len(head), "a NUL character (U+0000)")


@given(ORDINARY_TEXT, SURROGATES, ORDINARY_TEXT)
def test_a_lone_surrogate_becomes_one_replacement_character(
    head: str, surrogate: str, tail: str
) -> None:
    assert storable(f"{head}.{surrogate}.{tail}") == f"{head}.{REPLACEMENT}.{tail}"
    assert unstorable_at(f"{head}.{surrogate}") == (
        len(head) + 1,
        f"a surrogate code point (U+{ord(surrogate):04X})",
    )


def test_a_surrogate_pair_held_as_two_code_points_is_joined() -> None:
    assert storable("smile \ud83d\ude00!") == "smile \U0001f600!"
    assert storable("\ude00\ud83d") == REPLACEMENT * 2  # low then high: no pair
    # Input is stricter: any surrogate is refused, paired or not.
    assert unstorable_at("\ud83d\ude00") == (0, "a surrogate code point (U+D83D)")


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | ANY_TEXT,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.tuples(inner, inner)
            | st.dictionaries(ANY_TEXT, inner, max_size=3)
        ),
        max_leaves=10,
    )
)
def test_every_string_of_a_value_comes_out_storable(value: Any) -> None:
    out = storable_value(value)

    def strings(v: Any) -> list[str]:
        if isinstance(v, str):
            return [v]
        if isinstance(v, dict):
            return [s for k, i in v.items() for s in (*strings(k), *strings(i))]
        if isinstance(v, list | tuple):
            return [s for i in v for s in strings(i)]
        return []

    assert all(is_storable(s) for s in strings(out))
    assert storable_value(out) == out
    json.dumps(out)  # still the same JSON shapes


def test_values_keep_their_shapes() -> None:
    assert storable_value({"a\x00": ("b\x00", [1, None, True])}) == {
        f"a{REPLACEMENT}": (f"b{REPLACEMENT}", [1, None, True])
    }
    marker = object()
    assert storable_value(marker) is marker


@pytest.mark.integration
@given(ANY_TEXT)
def test_postgres_stores_the_result_as_it_is(postgres_uri: str, text: str) -> None:
    """Postgres itself takes what `storable` returns, in text and in JSONB, unchanged."""
    out = storable(text)
    with psycopg.connect(postgres_uri) as conn:
        row = conn.execute("SELECT %s::text, %s::jsonb", (out, Jsonb({"v": out}))).fetchone()
    assert row == (out, {"v": out})

"""Passwords in database URLs are masked in every message, however the URL is written."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_supervisor_pro._internal.urls import mask_url, passwords_in, scrub
from langgraph_supervisor_pro.persistence._connections import connection_error, describe_target


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("postgresql://app:s3cret@db:5432/prod", "postgresql://app:***@db:5432/prod"),
        ("postgresql://app@db/prod", "postgresql://app@db/prod"),
        ("postgresql://app:@db/prod", "postgresql://app:@db/prod"),
        ("postgresql://db/prod?sslmode=require", "postgresql://db/prod?sslmode=require"),
        ("postgresql://u@h/db?PASSWORD=s3cret&x=1", "postgresql://u@h/db?PASSWORD=***&x=1"),
        # Malformed: a parser would give up or read another password; the mask does not.
        ("postgresql://u:s3cret@[::1/db", "postgresql://u:***@[::1/db"),
        ("postgresql://u:pa/ss@h/db", "postgresql://u:***@h/db"),
        ("postgresql://u:pa#ss@h/db", "postgresql://u:***@h/db"),
        ("postgresql://u:pa@ss@h/db", "postgresql://u:***@h/db"),
        ("postgresql:u:s3cret@h/db", "postgresql:u:***@h/db"),
        ("  postgres://u:s3cret@h/db ", "  postgres://u:***@h/db "),
        ("mysql://u:s3cret@h/db", "mysql://u:***@h/db"),
    ],
)
def test_mask_url(url: str, masked: str) -> None:
    assert mask_url(url) == masked


def test_passwords_in_reads_every_way_a_password_can_be_written() -> None:
    # Percent-decoded as well as written; libpq reads up to the first '@', Python and
    # the lenient reading up to the last one.
    assert set(passwords_in("postgresql://u:p%40ss@h/db")) == {"p%40ss", "p@ss"}
    assert {"pa@ssword", "ssword"} <= set(passwords_in("postgresql://u:pa@ssword@h/db"))
    assert passwords_in("postgresql://u@h/db") == []


def test_scrub_shows_a_quoted_url_masked() -> None:
    url = "postgresql://u:s3cret@[::1/db"
    text = f'end of string reached when looking for matching "]" in URI: "{url}"'
    assert scrub(text, url) == (
        'end of string reached when looking for matching "]" in URI: "postgresql://u:***@[::1/db"'
    )


# Passwords built to be recognisable (no accidental match in the rest of a message) and
# to hold the characters that break URLs when left unencoded.
_PASSWORDS = st.builds(
    lambda a, b: f"Zq{a}{b}",
    st.text(alphabet="abcXYZ019", min_size=2, max_size=6),
    st.text(alphabet="abc019/@:?#[]%& =", min_size=0, max_size=8),
)
_TEMPLATES = [
    "postgresql://u:{p}@127.0.0.1:5432/db",
    "postgresql://u:{p}@127.0.0.1:notaport/db",
    "postgresql://u:{p}@/db?sslmode=bogus",
    "postgresql://u:{p}@[::1/db",
    "postgres://u:{p}@127.0.0.1/db?connect_timeout=x",
    "postgresql:u:{p}@127.0.0.1/db",
    "postgresql://u@127.0.0.1/db?password={p}",
]


@settings(deadline=None, derandomize=True, max_examples=200)
@given(_PASSWORDS, st.sampled_from(_TEMPLATES))
def test_no_message_shows_a_password(password: str, template: str) -> None:
    url = template.format(p=password)
    assert password not in mask_url(url)
    assert password not in describe_target(url)
    reason = f'invalid connection option in URI "{url}" (password "{password}")'
    assert password not in scrub(reason, url)
    assert password not in str(connection_error(url, reason))

"""Passwords in database URLs are masked in every message, however the URL is written."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from psycopg.conninfo import conninfo_to_dict

from langgraph_supervisor_pro._internal.urls import (
    WITHHELD,
    agreed_reading,
    driver_reason,
    mask_url,
    passwords_in,
    scrub,
)
from langgraph_supervisor_pro.persistence._connections import connection_error, describe_target


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("postgresql://app:s3cret@db:5432/prod", "postgresql://app:***@db:5432/prod"),
        ("postgresql://app@db/prod", "postgresql://app@db/prod"),
        ("postgresql://app:@db/prod", "postgresql://app:@db/prod"),
        ("postgresql://db/prod?sslmode=require", "postgresql://db/prod?sslmode=require"),
        # A query password is masked to the end: an unencoded `&` or `#` may be part of it.
        ("postgresql://u@h/db?PASSWORD=s3cret&x=1", "postgresql://u@h/db?PASSWORD=***"),
        ("postgresql://u@h:5432/db?password=a:b@c", "postgresql://u@h:***"),
        ("postgresql://u:x?password=y@h/db", "postgresql://u:***"),
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


# Item 5 of issue 33: any password at all (one character, every printable character,
# `/`, `@`, `:`, `%`, unicode), in the URL shapes people write. A short password may
# legitimately appear elsewhere in a message (a 1-character one almost surely does), so
# each message is pinned exactly: it must be what the same URL shows with the password
# replaced by `***`, which holds nothing of the password.
_ANY_PASSWORD = st.one_of(
    st.text(min_size=1, max_size=12),  # any unicode but lone surrogates
    st.text(alphabet="/@:%?#[]&=; \t'\"\\aZ9", min_size=1, max_size=8),
    st.sampled_from(["/", "@", ":", "%", "a", "@PW@", "ab/cd", "x/y", "p@ss/w:rd%zz"]),
)
# (template, what libpq reads of it but the password: host, port, dbname as described)
_SHAPES = {
    "postgresql://u:{p}@db.internal:5432/appdb": ("db.internal", "5432", "appdb"),
    "postgresql://u:{p}@db.internal/appdb": ("db.internal", "5432", "appdb"),
    "postgresql://u:{p}@db.internal": ("db.internal", "5432", "u"),
    "postgres://u:{p}@db.internal:5432/appdb?sslmode=require&application_name=x": (
        "db.internal",
        "5432",
        "appdb",
    ),
    "postgresql://u@db.internal/appdb?password={p}": ("db.internal", "5432", "appdb"),
    "postgresql://u@db.internal/appdb?sslmode=require&password={p}": (
        "db.internal",
        "5432",
        "appdb",
    ),
}


def _driver_says(url: str) -> str:
    """What a driver would say of `url`: its parse error, or the parts it read, quoted."""
    try:
        read = conninfo_to_dict(url)
    except Exception as exc:
        return str(exc)
    return (
        f'connection to server at "{read.get("host")}", port {read.get("port", 5432)} failed: '
        f'FATAL: database "{read.get("dbname")}" does not exist (user "{read.get("user")}", '
        f"options {sorted((k, v) for k, v in read.items() if k != 'password')})"
    )


@settings(deadline=None, derandomize=True, max_examples=400)
@given(_ANY_PASSWORD, st.sampled_from(sorted(_SHAPES)))
def test_no_fragment_of_any_password_is_shown(password: str, template: str) -> None:
    assume(not re.search(r"[?&;]password=", password, re.IGNORECASE))
    url = template.format(p=password)
    masked = template.format(p="***")
    host, port, dbname = _SHAPES[template]
    described = f"{masked} (host={host}, port={port}, dbname={dbname})"

    assert mask_url(url) == masked
    target = describe_target(url)
    # libpq's reading is shown only when it is the masked URL's (no part of it moved).
    assert target == (described if agreed_reading(url) is not None else masked)

    first_line = str(connection_error(url, _driver_says(url))).partition("\nHint: ")[0]
    # Readings that agree: the driver read what the masked URL says, so its message quotes
    # no part of the password (scrubbing can only mask more). Otherwise: withheld.
    agreed = agreed_reading(url) is not None
    reason = scrub(_driver_says(masked), url) if agreed else WITHHELD
    assert first_line == f"Could not connect to Postgres at {target}: {reason}"
    assert driver_reason(url, _driver_says(url)) == reason


@pytest.mark.parametrize(
    ("url", "fragments"),
    [
        # libpq reads host 'u', port 'ab', dbname 'cd@127.0.0.1:1/db' here.
        ("postgresql://u:ab/cd@127.0.0.1:1/db", ['"ab"', "port=ab", "cd@"]),
        ("postgresql://u:x/y@127.0.0.1:1/db", ['"x"', "port=x", "y@"]),
        # libpq reads password 'P', host 'W@127.0.0.1'.
        ("postgresql://u:P@W@127.0.0.1:1/db", ["@W@", '"W@']),
    ],
)
def test_a_short_fragment_is_not_quoted(url: str, fragments: list[str]) -> None:
    message = str(connection_error(url, _driver_says(url)))
    assert mask_url(url) in message
    assert WITHHELD in message
    for fragment in fragments:
        assert fragment not in message


def test_a_short_password_does_not_garble_a_message() -> None:
    url = "postgresql://u:a@127.0.0.1:1/db"
    reason = "connection to server at 127.0.0.1, port 1 failed: Connection refused"
    assert scrub(reason, url) == reason
    assert reason in str(connection_error(url, reason))


def test_our_own_reason_is_shown_for_any_url() -> None:
    url = "postgresql://u:ab/cd@127.0.0.1:1/db"
    message = str(connection_error(url, "no connection within 2 s", driver=False))
    assert "no connection within 2 s" in message
    assert "ab" not in message.partition("\nHint")[0].replace(mask_url(url), "")

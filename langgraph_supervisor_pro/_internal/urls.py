"""Database URLs in messages: passwords masked, never shown (private).

Example:
    >>> mask_url("postgresql://app:s3cret@db:5432/prod")
    'postgresql://app:***@db:5432/prod'
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from psycopg.conninfo import conninfo_to_dict

__all__ = ["mask_url", "passwords_in", "scheme_of", "scrub"]

_MASK = "***"
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def scheme_of(url: str) -> str:
    """Return the lower-cased scheme of ``url`` ('' when it has none)."""
    match = _SCHEME_RE.match(url.strip())
    return match.group(1).lower() if match else ""


def mask_url(url: str) -> str:
    """Return ``url`` with any password (in userinfo or query) replaced by ``***``."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostinfo = netloc.rpartition("@")
            user, has_password, password = userinfo.partition(":")
            shown = f"{user}:{_MASK}" if has_password and password else user
            netloc = f"{shown}@{hostinfo}"
        query = urlencode(
            [
                (key, _MASK if key.lower() == "password" else value)
                for key, value in parse_qsl(parts.query, keep_blank_values=True)
            ],
            safe="/:*",
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return f"{scheme_of(url) or '?'}://<unparsable URL, not shown>"


def passwords_in(url: str) -> list[str]:
    """Return the password strings present in a Postgres URL (to scrub messages)."""
    found: list[str] = []
    try:
        password = conninfo_to_dict(url).get("password")
    except Exception:  # a URL libpq cannot parse has no password to scrub
        password = None
    if password:
        found.append(str(password))
    try:
        parts = urlsplit(url)
        if parts.password:
            found.append(parts.password)
    except ValueError:
        pass
    return found


def scrub(text: str, url: str) -> str:
    """Remove any password of ``url`` from ``text``."""
    for secret in passwords_in(url):
        text = text.replace(secret, _MASK)
    return text

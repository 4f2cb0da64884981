"""Database URLs in messages: passwords masked, never shown (private).

A URL is read leniently here, the way a person wrote it, not the way a parser
accepts it: a malformed URL (an unencoded `/`, `@` or `#` in the password, an
unbalanced bracket, no `//`) still has its password found and masked. Everything
between the first `:` after the scheme's slashes and the last `@` is the password,
and so is every `password=` query value; when in doubt, more is masked.

Example:
    >>> mask_url("postgresql://app:s3cret@db:5432/prod")
    'postgresql://app:***@db:5432/prod'
    >>> mask_url("postgresql://app:pa/ss@[::1/prod")
    'postgresql://app:***@[::1/prod'
    >>> scrub('invalid URI: "postgresql://app:s3cret@db:x/prod"', "postgresql://app:s3cret@db:x/prod")
    'invalid URI: "postgresql://app:***@db:x/prod"'
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from psycopg.conninfo import conninfo_to_dict

__all__ = ["mask_url", "passwords_in", "scheme_of", "scrub"]

_MASK = "***"
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_QUERY_PASSWORD_RE = re.compile(r"([?&;]password=)([^&#]*)", re.IGNORECASE)
# Characters that end a part of a URL: a password holding one unencoded is split by
# the parsers, and a part of it may then be quoted in their messages as a host, a port
# or a database name.
_DELIMITERS_RE = re.compile(r"[/@:?#\[\]&=\s]+")
_MIN_FRAGMENT = 3


def scheme_of(url: str) -> str:
    """Return the lower-cased scheme of ``url`` ('' when it has none)."""
    match = _SCHEME_RE.match(url.strip())
    return match.group(1).lower() if match else ""


def _userinfo_password(url: str) -> tuple[int, int] | None:
    """Where the password of ``url``'s userinfo is, read leniently (None if it has none).

    The authority starts after ``scheme:`` and its slashes (or at the start when there
    is no scheme) and the userinfo ends at the last ``@``; the password follows the
    userinfo's first ``:``.
    """
    text = url.strip()
    offset = len(url) - len(url.lstrip())
    match = _SCHEME_RE.match(text)
    start = match.end() if match else 0
    while start < len(text) and text[start] == "/":
        start += 1
    at = text.rfind("@", start)
    if at < 0:
        return None
    colon = text.find(":", start, at)
    if colon < 0 or colon + 1 == at:
        return None
    return offset + colon + 1, offset + at


def mask_url(url: str) -> str:
    """Return ``url`` with any password (in userinfo or query) replaced by ``***``.

    Example:
        >>> mask_url("postgres://u@h/db?sslmode=require&password=pw")
        'postgres://u@h/db?sslmode=require&password=***'
    """
    span = _userinfo_password(url)
    masked = url if span is None else url[: span[0]] + _MASK + url[span[1] :]
    return _QUERY_PASSWORD_RE.sub(lambda m: m.group(1) + _MASK, masked)


def passwords_in(url: str) -> list[str]:
    """Return the password strings of a database URL, to scrub them from messages.

    Every reading counts: the lenient one of `mask_url`, libpq's and Python's, each as
    written and percent-decoded, and the parts of a password that holds a character
    that ends a URL part (each at least three characters long). Longest first.

    Example:
        >>> passwords_in("postgresql://u:pa/ss@h/db")
        ['pa/ss']
    """
    found: set[str] = set()
    lenient: list[str] = []
    span = _userinfo_password(url)
    if span is not None:
        lenient.append(url[span[0] : span[1]])
    lenient.extend(m.group(2) for m in _QUERY_PASSWORD_RE.finditer(url))
    try:
        password = conninfo_to_dict(url).get("password")
    except Exception:  # a URL libpq cannot parse: the lenient reading covers it
        password = None
    strict = [str(password)] if password else []
    try:
        if urlsplit(url).password:
            strict.append(str(urlsplit(url).password))
    except ValueError:  # a URL Python cannot parse: the lenient reading covers it
        pass
    for secret in [*lenient, *strict]:
        found.update({secret, unquote(secret)})
    for secret in lenient:
        for part in _DELIMITERS_RE.split(secret):
            if len(part) >= _MIN_FRAGMENT:
                found.update({part, unquote(part)})
    return sorted((s for s in found if s), key=lambda s: (-len(s), s))


def scrub(text: str, url: str) -> str:
    """Remove ``url``'s passwords from ``text`` (a quoted ``url`` is shown masked).

    Example:
        >>> scrub("auth failed for s3cret", "postgresql://u:s3cret@h/db")
        'auth failed for ***'
    """
    for form in {url, url.strip()}:
        if form:
            text = text.replace(form, mask_url(form))
    for secret in passwords_in(url):
        text = text.replace(secret, _MASK)
    return text

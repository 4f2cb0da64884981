"""Database URLs in messages: passwords masked, never shown (private).

A URL is read leniently here, the way a person wrote it, not the way a parser
accepts it: a malformed URL (an unencoded `/`, `@` or `#` in the password, an
unbalanced bracket, no `//`) still has its password found and masked. Everything
between the first `:` after the scheme's slashes and the last `@` is the password,
and so is everything after a `password=` query key (to the end of the URL: an
unencoded `&` or `#` may be part of it); when in doubt, more is masked.

What is shown of a URL never depends on how a parser reads it: the masked URL, and
libpq's reading of the host, port and database only when it reads the masked URL the
same way (`agreed_reading`). When the readings differ (an unencoded character moved
part of the password into another part), a driver's message about the URL may quote
any part of the password, however short, and is not shown (`connection_error` in
`persistence/_connections.py`).

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

__all__ = [
    "WITHHELD",
    "agreed_reading",
    "driver_reason",
    "mask_url",
    "passwords_in",
    "scheme_of",
    "scrub",
]

_MASK = "***"
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_QUERY_PASSWORD_RE = re.compile(r"([?&;]password=)([^&#]*)", re.IGNORECASE)
_QUERY_PASSWORD_KEY_RE = re.compile(r"[?&;]password=", re.IGNORECASE)
# Characters that end a part of a URL: a password holding one unencoded is split by
# the parsers, and a part of it may then be quoted in their messages as a host, a port
# or a database name.
_DELIMITERS_RE = re.compile(r"[/@:?#\[\]&=\s]+")
_MIN_FRAGMENT = 3

WITHHELD = (
    "the driver's message is not shown, as it could quote part of the password: libpq "
    "reads this URL differently once its password is masked. Percent-encode any of "
    "/ : @ ? # [ ] % & = and spaces in the password (urllib.parse.quote(password, safe=''))"
)
"""What `driver_reason` says instead of a driver's message it cannot show."""


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
    spans = [_userinfo_password(url), _query_password(url)]
    masked = [False] * len(url)
    for span in spans:
        if span is not None:
            masked[span[0] : span[1]] = [True] * (span[1] - span[0])
    shown: list[str] = []
    for index, char in enumerate(url):
        if not masked[index]:
            shown.append(char)
        elif index == 0 or not masked[index - 1]:
            shown.append(_MASK)
    return "".join(shown)


def _query_password(url: str) -> tuple[int, int] | None:
    """Where the first `password=` query value of ``url`` starts, to the end of the URL.

    To the end: a password with an unencoded `&`, `#` or `=` would be cut by any rule
    that stops earlier, and the cut part shown.
    """
    match = _QUERY_PASSWORD_KEY_RE.search(url)
    if match is None or match.end() == len(url):
        return None
    return match.end(), len(url)


def agreed_reading(url: str) -> dict[str, str] | None:
    """The libpq reading of ``url`` without its password, when it is the masked URL's.

    None when libpq cannot read ``url`` or its masked form, or reads any part other than
    the password differently in them: then part of the password has moved into another
    part (an unencoded `/`, `@`, `&`, ...), and anything libpq says of that part (a host,
    a port, a database name) may be a piece of the password, however short.

    Example:
        >>> agreed_reading("postgresql://u:s3cret@db:5432/prod")
        {'user': 'u', 'dbname': 'prod', 'host': 'db', 'port': '5432'}
        >>> agreed_reading("postgresql://u:ab/cd@db:5432/prod") is None  # libpq: port 'ab'
        True
    """
    try:
        raw = conninfo_to_dict(url.strip())
        masked = conninfo_to_dict(mask_url(url.strip()))
    except Exception:  # unreadable: nothing libpq says of it can be shown
        return None
    raw.pop("password", None)
    masked.pop("password", None)
    if raw != masked:
        return None
    return {str(key): str(value) for key, value in raw.items()}


def driver_reason(url: str, reason: str) -> str:
    """What of a driver's message about ``url`` can be shown.

    The message, with ``url`` and its passwords masked, when libpq reads ``url`` as its
    masked form (`agreed_reading`). Otherwise the message may quote any piece of the
    password, and is replaced: by libpq's complaint about the masked URL when it has
    one (the masked URL holds nothing of the password), else by `WITHHELD`.

    Example:
        >>> driver_reason("postgresql://u:pw@h:x/db", 'invalid integer value "x"')
        'invalid integer value "x"'
        >>> bad = "postgresql://u:ab/cd@h:5432/db"  # libpq: host 'u', port 'ab'
        >>> driver_reason(bad, 'invalid integer value "ab"') == WITHHELD
        True
    """
    if agreed_reading(url) is not None:
        return scrub(reason.strip(), url)
    try:
        conninfo_to_dict(mask_url(url.strip()))
    except Exception as exc:  # the masked URL is malformed too: say why
        return str(exc).strip() or WITHHELD
    return WITHHELD


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
    query = _query_password(url)
    if query is not None:
        lenient.append(url[query[0] : query[1]].strip())
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

    A password (or a part of one) shorter than three characters is not replaced: it
    cannot be told apart from the text around it. A message about a URL whose parts
    read differently to different parsers is not to be shown at all (`agreed_reading`).

    Example:
        >>> scrub("auth failed for s3cret", "postgresql://u:s3cret@h/db")
        'auth failed for ***'
    """
    for form in {url, url.strip()}:
        if form:
            text = text.replace(form, mask_url(form))
    for secret in passwords_in(url):
        if len(secret) >= _MIN_FRAGMENT:  # a shorter one would garble the text
            text = text.replace(secret, _MASK)
    return text

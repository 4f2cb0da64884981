"""Database URLs in messages: passwords masked, never shown (private).

A URL is read leniently, the way a person wrote it: everything between the first `:`
after the scheme's slashes and the last `@` is the password, and so is everything after a
`password=` query key; when in doubt, more is masked. A driver's message is shown only
when libpq reads the URL and its masked form alike (`agreed_reading`): otherwise it may
quote any part of the password (docs/architecture.md, "Connections").

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

_MASK = "***"
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_QUERY_PASSWORD_RE = re.compile(r"([?&;]password=)([^&#]*)", re.IGNORECASE)
_QUERY_PASSWORD_KEY_RE = re.compile(r"[?&;]password=", re.IGNORECASE)
# Characters that end a part of a URL: parsers split a password holding one unencoded,
# and may quote a part of it as a host, a port or a database name.
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
    """Where the password of ``url``'s userinfo is (after its first `:`, to the last `@`)."""
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
    """Return ``url`` with any password (in userinfo or query) replaced by ``***``."""
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
    """The first `password=` query value of ``url``, to the end (an unencoded `&` may be in it)."""
    match = _QUERY_PASSWORD_KEY_RE.search(url)
    if match is None or match.end() == len(url):
        return None
    return match.end(), len(url)


def agreed_reading(url: str) -> dict[str, str] | None:
    """The libpq reading of ``url`` without its password, when it is the masked URL's, else None.

    When they differ, part of the password has moved into another part, and anything
    libpq says of that part may be a piece of the password, however short.
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

    The scrubbed message when libpq reads ``url`` as its masked form (`agreed_reading`);
    else libpq's complaint about the masked URL, or `WITHHELD`.
    """
    if agreed_reading(url) is not None:
        return scrub(reason.strip(), url)
    try:
        conninfo_to_dict(mask_url(url.strip()))
    except Exception as exc:  # the masked URL is malformed too: say why
        return str(exc).strip() or WITHHELD
    return WITHHELD


def passwords_in(url: str) -> list[str]:
    """The password strings of a database URL by every reading (lenient, libpq's, Python's).

    Each as written and percent-decoded, with the parts of a password split by URL
    delimiters (at least three characters each); longest first.
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
    """Remove ``url``'s passwords (and parts of three characters or more) from ``text``."""
    for form in {url, url.strip()}:
        if form:
            text = text.replace(form, mask_url(form))
    for secret in passwords_in(url):
        if len(secret) >= _MIN_FRAGMENT:  # a shorter one would garble the text
            text = text.replace(secret, _MASK)
    return text

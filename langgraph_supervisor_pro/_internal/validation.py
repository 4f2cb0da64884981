"""The one summary of a pydantic `ValidationError` the package writes into messages."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import ValidationError

from langgraph_supervisor_pro._internal.text import truncate

Location = Sequence[int | str]


def dotted(loc: Location) -> str:
    """An error location as `a.b.0`."""
    return ".".join(str(part) for part in loc)


def validation_summary(
    exc: ValidationError,
    *,
    empty: str = "",
    max_errors: int = 3,
    max_chars: int = 400,
    where: Callable[[Location], str] = dotted,
    show_input: bool = False,
    count_more: bool = False,
) -> str:
    """A one-line summary of `exc`: `location: message` for its first `max_errors` errors.

    `empty` is the location shown for the root (`""`: the message alone); `show_input`
    appends `(got <input>)` to each, `count_more` `(and N more)` when some were left out.
    """
    errors = exc.errors(include_url=False, include_context=False)
    parts = []
    for error in errors[:max_errors]:
        location = where(error["loc"]) or empty
        text = f"{location}: {error['msg']}" if location else error["msg"]
        if show_input:
            text += f" (got {error.get('input')!r})"
        parts.append(text)
    more = (
        f" (and {len(errors) - max_errors} more)" if count_more and len(errors) > max_errors else ""
    )
    return truncate("; ".join(parts) + more, max_chars)

"""The one summary of a pydantic `ValidationError` the package writes into messages."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import ValidationError

from langgraph_supervisor_pro._internal.text import truncate

Location = Sequence[int | str]


def dotted(loc: Location) -> str:
    """An error location as `a.b.0`.

    Example:
        >>> dotted(("decisions", 0, "type"))
        'decisions.0.type'
    """
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

    Args:
        exc: The validation error.
        empty: The location shown for an error at the root (`""`: the message alone).
        max_errors: How many errors are listed.
        max_chars: The summary is cut to this many characters.
        where: How a location is written (default: dotted).
        show_input: Append `(got <input>)` to each error.
        count_more: Append `(and N more)` when errors were left out.

    Example:
        >>> from pydantic import BaseModel
        >>> class Point(BaseModel):
        ...     x: int
        >>> try:
        ...     Point.model_validate({"x": "a"})
        ... except ValidationError as exc:
        ...     print(validation_summary(exc))
        x: Input should be a valid integer, unable to parse string as an integer
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

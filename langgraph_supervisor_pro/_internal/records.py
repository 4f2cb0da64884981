"""Values read back from checkpoints: times, counters, namespaces (audit, metrics, `lgsp runs`)."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["aware_time", "namespace_path", "whole_int"]


def aware_time(value: object) -> datetime | None:
    """A checkpoint's or a record's time, timezone-aware (naive is taken as UTC).

    Args:
        value: A `datetime` or an ISO 8601 string; anything else gives None.

    Returns:
        The time, or None when there is none to read.

    Example:
        >>> aware_time("2026-12-01T10:00:00").isoformat()
        '2026-12-01T10:00:00+00:00'
        >>> aware_time("not a time") is None
        True
    """
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str) and value:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
    else:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def whole_int(value: object) -> int | None:
    """`value` when it is an int (not a bool), else None.

    Example:
        >>> whole_int(3), whole_int(True), whole_int("3")
        (3, None, None)
    """
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def namespace_path(namespace: str) -> tuple[str, ...]:
    """The domain path of a checkpoint namespace (task ids removed).

    Example:
        >>> namespace_path("ops:1f2e|incident:9a0b"), namespace_path("")
        (('ops', 'incident'), ())
    """
    return tuple(part.split(":", 1)[0] for part in namespace.split("|") if part)

"""Times read back from checkpoints and records (private to `observability/`)."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["aware_time"]


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

"""Values read back from checkpoints: times, counters, namespaces (audit, metrics, `lgsp runs`)."""

from __future__ import annotations

from datetime import UTC, datetime


def aware_time(value: object) -> datetime | None:
    """A `datetime` or ISO 8601 string as an aware time (naive is UTC); else None."""
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
    """`value` when it is an int (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def namespace_path(namespace: str) -> tuple[str, ...]:
    """The domain path of a checkpoint namespace (task ids removed)."""
    return tuple(part.split(":", 1)[0] for part in namespace.split("|") if part)

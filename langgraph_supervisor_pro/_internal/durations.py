"""Durations written as a number and a unit (`90s`, `15m`, `24h`, `7d`, `2w`).

One grammar for every option that takes one: `parse_since` (`lgsp metrics --since`) and
`parse_age` (`lgsp prune --older-than`).
"""

from __future__ import annotations

import re

UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
"""The seconds in each unit a duration may end with."""
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")


def duration_seconds(text: str) -> float | None:
    """The seconds `text` stands for, or None when it is not a duration (unsigned; may be inf)."""
    match = _DURATION.fullmatch(text.strip())
    return float(match.group(1)) * UNIT_SECONDS[match.group(2)] if match else None

"""Test-side helper: what a failed `lgsp` command printed."""

from __future__ import annotations

from typing import Any


def error_line(result: Any, *needles: str) -> str:
    """The one `Error: ...` line of a usage failure (exit code 2), holding every needle."""
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]

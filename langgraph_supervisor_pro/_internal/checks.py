"""Checks shared by the configuration classes: types, counts, seconds, retry policies (private).

A value that cannot work is refused where it is given, with an error naming the field
and the fix (`<field>: <who> got X; give Y`), rather than failing later in a run
(`time.sleep(-1)`, a NaN timeout, a wait longer than the platform can express).

Example:
    >>> check_seconds(2, "Worker.timeout")
    2.0
    >>> check_seconds(float("nan"), "Worker.timeout")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Worker.timeout: got nan; give a number of seconds > 0, finite and at most ...
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from datetime import timedelta
from types import UnionType

from langgraph.types import RetryPolicy

from langgraph_supervisor_pro._internal.text import truncate

MAX_SECONDS = threading.TIMEOUT_MAX
"""The longest wait the standard library can express (threads, `time.sleep`)."""

MAX_RETRY_INTERVAL = MAX_SECONDS - 1.0
"""Retry waits get up to one second of jitter on top, and must still fit."""


def _number(value: object) -> float | None:
    """`value` as a float (huge ints become infinity), or None when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _shown(value: object) -> str:
    return truncate(repr(value), 60)


def _owner(who: str) -> str:
    return f"{who} " if who else ""


def is_count(value: object, minimum: int = 1, maximum: float = math.inf) -> bool:
    """Whether `value` is an int (not a bool) from `minimum` to `maximum`."""
    return not isinstance(value, bool) and isinstance(value, int) and minimum <= value <= maximum


def check_type(
    value: object,
    kind: type | UnionType | tuple[type, ...],
    field: str,
    give: str,
    *,
    who: str = "",
) -> None:
    """Raise a `TypeError` naming `field` and what to `give` unless `value` is a `kind`."""
    if not isinstance(value, kind):
        raise TypeError(f"{field}: {_owner(who)}got {type(value).__name__}; give {give}")


def check_seconds(
    value: object,
    field: str,
    *,
    who: str = "",
    zero: bool = False,
    maximum: float = MAX_SECONDS,
    what: str = "a number of seconds",
    fix: str = "",
) -> float:
    """Return `value` (a number of seconds or a `timedelta`) as a float, or raise a ValueError.

    `who` (e.g. `worker 'researcher'`) follows the field's name; `zero` allows 0 (a wait);
    `what` says what to give, and `fix` is appended (e.g. `, or None for no timeout`).
    """
    number = value.total_seconds() if isinstance(value, timedelta) else _number(value)
    if (
        number is None
        or not math.isfinite(number)
        or number > maximum
        or (number < 0 if zero else number <= 0)
    ):
        bound = ">= 0" if zero else "> 0"
        raise ValueError(
            f"{field}: {_owner(who)}got {_shown(value)}; give {what} {bound}, finite and at most "
            f"{maximum:.0f}{fix}"
        )
    return number


def check_retry_policy(policy: object, field: str, *, who: str = "") -> RetryPolicy:
    """Return `policy` if LangGraph's `RetryPolicy` can apply it, or raise naming the fix."""
    owner = _owner(who)
    check_type(policy, RetryPolicy, field, "a langgraph.types.RetryPolicy(...)", who=who)
    assert isinstance(policy, RetryPolicy)
    if not is_count(policy.max_attempts):
        raise ValueError(
            f"{field}.max_attempts: {owner}got {_shown(policy.max_attempts)}; give an integer "
            ">= 1 (the first attempt included; 1 means no retry)"
        )
    for name in ("initial_interval", "max_interval"):
        if isinstance(getattr(policy, name), timedelta):
            raise ValueError(
                f"{field}.{name}: {owner}got a timedelta; give a number of seconds "
                "(LangGraph's RetryPolicy takes floats)"
            )
        check_seconds(
            getattr(policy, name),
            f"{field}.{name}",
            who=who,
            zero=True,
            maximum=MAX_RETRY_INTERVAL,
        )
    factor = _number(policy.backoff_factor)
    if factor is None or not math.isfinite(factor) or factor < 1:
        raise ValueError(
            f"{field}.backoff_factor: {owner}got {_shown(policy.backoff_factor)}; give a "
            "finite number >= 1 (each wait is the previous one times this; 1 keeps it "
            "constant)"
        )
    if not isinstance(policy.jitter, bool):
        raise ValueError(
            f"{field}.jitter: {owner}got {_shown(policy.jitter)}; give True (add up to one "
            "second at random to each wait) or False"
        )
    if not _retry_on_ok(policy.retry_on):
        raise ValueError(
            f"{field}.retry_on: {owner}got {_shown(policy.retry_on)}; give an exception "
            "class, a list of exception classes, or a function taking the exception and "
            "returning True to retry"
        )
    return policy


def _retry_on_ok(retry_on: object) -> bool:
    if isinstance(retry_on, type):
        return issubclass(retry_on, Exception)
    if isinstance(retry_on, Sequence) and not isinstance(retry_on, str | bytes):
        return all(isinstance(item, type) and issubclass(item, Exception) for item in retry_on)
    return callable(retry_on)

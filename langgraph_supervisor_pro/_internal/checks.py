"""Checks shared by the configuration classes: seconds and retry policies (private).

A value that cannot work is refused where it is given, with an error naming the field
and the fix, rather than failing later in a run (`time.sleep(-1)`, a NaN timeout, a
wait longer than the platform can express).

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

from langgraph.types import RetryPolicy

from langgraph_supervisor_pro._internal.text import truncate

__all__ = ["MAX_RETRY_INTERVAL", "MAX_SECONDS", "check_retry_policy", "check_seconds"]

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
    """Return `value` as a float number of seconds, or raise naming `field` and the fix.

    A duration in the Python API is a number of seconds; a `datetime.timedelta` is taken
    too (as its `total_seconds()`).

    Args:
        value: The value given: a number of seconds, or a `timedelta`.
        field: The field's name, e.g. `Worker.timeout`.
        who: Whose field it is, shown after the name (e.g. `worker 'researcher'`).
        zero: Whether 0 is allowed (a wait may be 0; a timeout may not).
        maximum: The largest value allowed.
        what: What to give, in words.
        fix: More advice, appended to the message (e.g. `, or None for no timeout`).

    Returns:
        The value as a float.

    Raises:
        ValueError: If `value` is not a finite number (bools are not numbers here), is
            negative (or 0 when `zero` is false) or exceeds `maximum`.

    Example:
        >>> check_seconds(0, "Compaction.retry_delay", zero=True)
        0.0
        >>> from datetime import timedelta
        >>> check_seconds(timedelta(minutes=2), "Worker.timeout")
        120.0
    """
    number = value.total_seconds() if isinstance(value, timedelta) else _number(value)
    if (
        number is None
        or not math.isfinite(number)
        or number > maximum
        or (number < 0 if zero else number <= 0)
    ):
        owner = f"{who} " if who else ""
        bound = ">= 0" if zero else "> 0"
        raise ValueError(
            f"{field}: {owner}got {_shown(value)}; give {what} {bound}, finite and at most "
            f"{maximum:.0f}{fix}"
        )
    return number


def check_retry_policy(policy: object, field: str, *, who: str = "") -> RetryPolicy:
    """Return `policy` if LangGraph's `RetryPolicy` can apply it, or raise naming the fix.

    Args:
        policy: The value given.
        field: The field's name, e.g. `Worker.retry` or `supervisor_retry`.
        who: Whose field it is, shown after the name (e.g. `worker 'researcher'`).

    Returns:
        The policy.

    Raises:
        TypeError: If `policy` is not a `RetryPolicy`.
        ValueError: If one of its values could not work: `max_attempts` not an integer
            >= 1, a negative or non-finite interval, `backoff_factor` below 1 or not
            finite, `jitter` not a bool, or `retry_on` not an exception class, a list of
            them or a predicate. The message names the value (`<field>.<name>`).

    Example:
        >>> check_retry_policy(RetryPolicy(max_attempts=2), "supervisor_retry").max_attempts
        2
        >>> check_retry_policy(RetryPolicy(initial_interval=-1), "supervisor_retry")
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: supervisor_retry.initial_interval: got -1; give a number of seconds >= 0, ...
    """
    owner = f"{who} " if who else ""
    if not isinstance(policy, RetryPolicy):
        raise TypeError(
            f"{field}: {owner}got {type(policy).__name__}; give a langgraph.types.RetryPolicy(...)"
        )
    attempts = policy.max_attempts
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ValueError(
            f"{field}.max_attempts: {owner}got {_shown(attempts)}; give an integer >= 1 "
            "(the first attempt included; 1 means no retry)"
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

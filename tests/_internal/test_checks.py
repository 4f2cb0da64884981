"""The shared checks: a finite number of seconds, and a retry policy that can work."""

from __future__ import annotations

import math
import threading
from typing import Any

import pytest
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro._internal.checks import (
    MAX_RETRY_INTERVAL,
    check_retry_policy,
    check_seconds,
)


@pytest.mark.parametrize("value", [1, 0.5, 2.0, threading.TIMEOUT_MAX])
def test_seconds_accepts_finite_positive_numbers(value: float) -> None:
    assert check_seconds(value, "x.timeout") == float(value)
    assert isinstance(check_seconds(value, "x.timeout"), float)


@pytest.mark.parametrize(
    "value",
    [
        0,
        -1,
        math.nan,
        math.inf,
        -math.inf,
        threading.TIMEOUT_MAX * 2,
        pytest.param(10**400, id="int-too-large-for-a-float"),
        True,
        "5",
        None,
    ],
)
def test_seconds_refuses_what_cannot_be_waited_for(value: Any) -> None:
    with pytest.raises(ValueError, match=r"^x\.timeout: worker 'w' got .*; give a number of "):
        check_seconds(value, "x.timeout", who="worker 'w'")


def test_seconds_zero_and_maximum() -> None:
    assert check_seconds(0, "x.delay", zero=True) == 0.0
    with pytest.raises(ValueError, match=r"x\.delay: got -0\.5; give a number of seconds >= 0"):
        check_seconds(-0.5, "x.delay", zero=True)
    with pytest.raises(ValueError, match="at most 10, or None"):
        check_seconds(11, "x.timeout", maximum=10, fix=", or None")


def test_seconds_message_cuts_a_long_value() -> None:
    with pytest.raises(ValueError) as info:
        check_seconds(10**400, "x.timeout")
    assert len(str(info.value)) < 200


def test_retry_policy_accepts_langgraphs_default_and_no_waits() -> None:
    assert check_retry_policy(RetryPolicy(), "r") == RetryPolicy()
    fast = RetryPolicy(max_attempts=1, initial_interval=0, max_interval=0, jitter=False)
    assert check_retry_policy(fast, "r") is fast
    one = RetryPolicy(backoff_factor=1, retry_on=(ValueError, KeyError))
    assert check_retry_policy(one, "r") is one
    assert check_retry_policy(RetryPolicy(retry_on=lambda exc: True), "r")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_attempts": 0}, "max_attempts"),
        ({"max_attempts": 2.5}, "max_attempts"),
        ({"max_attempts": True}, "max_attempts"),
        ({"initial_interval": -1}, "initial_interval"),
        ({"initial_interval": math.nan}, "initial_interval"),
        ({"max_interval": -0.1}, "max_interval"),
        ({"max_interval": math.inf}, "max_interval"),
        ({"max_interval": MAX_RETRY_INTERVAL + 1}, "max_interval"),
        ({"backoff_factor": 0.5}, "backoff_factor"),
        ({"backoff_factor": math.nan}, "backoff_factor"),
        ({"backoff_factor": math.inf}, "backoff_factor"),
        ({"backoff_factor": "2"}, "backoff_factor"),
        ({"jitter": "yes"}, "jitter"),
        ({"jitter": 1}, "jitter"),
        ({"retry_on": "ConnectionError"}, "retry_on"),
        ({"retry_on": [ValueError, "x"]}, "retry_on"),
        ({"retry_on": KeyboardInterrupt}, "retry_on"),
    ],
)
def test_retry_policy_refuses_values_that_fail_later(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=rf"^supervisor_retry\.{field}: got .*; give "):
        check_retry_policy(RetryPolicy(**kwargs), "supervisor_retry")


def test_retry_policy_must_be_a_retry_policy() -> None:
    with pytest.raises(TypeError, match=r"Worker\.retry: worker 'w' got dict"):
        check_retry_policy({"max_attempts": 3}, "Worker.retry", who="worker 'w'")

"""Durations in the Python API: seconds, or a `datetime.timedelta` (issue 30, item 4)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import Compaction, ReviewPolicy, Worker, open_checkpointer
from langgraph_supervisor_pro._internal.checks import check_retry_policy, check_seconds
from langgraph_supervisor_pro.testing import FunctionChatModel
from langgraph_supervisor_pro.workers import Breaker


def _agent(task: object) -> str:
    return "ok"


def test_a_timedelta_is_taken_as_its_seconds_and_stored_as_seconds() -> None:
    assert check_seconds(timedelta(minutes=2), "Worker.timeout") == 120.0
    worker = Worker(name="w", description="W.", agent=_agent, timeout=timedelta(seconds=90))
    assert worker.timeout == 90.0
    assert (
        Compaction(
            summarizer=FunctionChatModel(reply=lambda m: "s"), retry_delay=timedelta(0)
        ).retry_delay
        == 0.0
    )
    assert ReviewPolicy(review_timeout=timedelta(hours=1)).review_timeout == 3600.0  # type: ignore[arg-type]
    breaker = Breaker(failures=3, window=timedelta(minutes=1), cooldown=timedelta(seconds=30))  # type: ignore[arg-type]
    assert (breaker.window, breaker.cooldown) == (60.0, 30.0)


def test_a_bad_timedelta_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"^Worker\.timeout: worker 'w' got datetime\.timedelta"):
        Worker(name="w", description="W.", agent=_agent, timeout=timedelta(seconds=-1))
    with pytest.raises(ValueError, match=r"^Worker\.timeout: worker 'w' got .*give a number"):
        Worker(name="w", description="W.", agent=_agent, timeout=timedelta(0))


def test_where_a_number_is_passed_on_a_timedelta_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match=r"initial_interval: got a timedelta; give a number"):
        check_retry_policy(RetryPolicy(initial_interval=timedelta(seconds=1)), "Worker.retry")  # type: ignore[arg-type]
    with (
        pytest.raises(
            ValueError, match=r"^connect_timeout: got .*give a number of seconds, e.g. 5"
        ),
        open_checkpointer("memory", connect_timeout=timedelta(seconds=5)),
    ):  # type: ignore[arg-type]
        pass

"""remote_thread_id: stable, distinct per thread, path and graph; validated. remote_stream_event."""

from __future__ import annotations

import uuid

import pytest

from langgraph_supervisor_pro._remote import (
    REMOTE_EVENT_KEY,
    remote_stream_event,
    remote_thread_id,
)
from langgraph_supervisor_pro._workers import default_worker_retry
from langgraph_supervisor_pro.errors import RemoteDomainError, RemoteDomainUnavailable


def test_the_remote_thread_is_stable_and_a_uuid():
    one = remote_thread_id("t-1", ("ops",), "ops")
    assert one == remote_thread_id("t-1", ["ops"], "ops")
    assert str(uuid.UUID(one)) == one


@pytest.mark.parametrize(
    ("thread", "path", "graph"),
    [("t-2", ("ops",), "ops"), ("t-1", ("ops", "db"), "ops"), ("t-1", ("ops",), "ops2")],
)
def test_another_thread_path_or_graph_is_another_remote_thread(thread, path, graph):
    assert remote_thread_id(thread, path, graph) != remote_thread_id("t-1", ("ops",), "ops")


def test_odd_text_is_fine():
    assert remote_thread_id("t\x00é\U0001f600", ("ops|x", "a/b"), "ops") != remote_thread_id(
        "t", ("ops|x", "a/b"), "ops"
    )


def test_an_empty_path_or_blank_graph_is_refused():
    with pytest.raises(ValueError, match="path must name"):
        remote_thread_id("t", (), "ops")
    with pytest.raises(ValueError, match="graph_id"):
        remote_thread_id("t", ("ops",), " ")


def test_an_unavailable_server_is_retried_by_default_and_a_refusal_is_not():
    retry_on = default_worker_retry().retry_on
    assert callable(retry_on)
    assert retry_on(RemoteDomainUnavailable("remote domain 'ops': unreachable"))
    assert not retry_on(RemoteDomainError("remote domain 'ops': HTTP 422"))


# -- relayed stream events -----------------------------------------------------------


def _event(**changes: object) -> dict[str, object]:
    source = {"path": ["ops"], "graph_id": "ops", "thread_id": "t", "run_id": "r"}
    return {REMOTE_EVENT_KEY: source, "mode": "messages", "ns": [], "data": [{}, {}], **changes}


def test_a_relayed_event_is_recognised_as_it_is():
    event = _event(mode="custom", ns=["clerk:1"], data={"progress": 0.5})
    assert remote_stream_event(event) == event
    assert remote_stream_event(_event(data=None)) == _event(data=None)


@pytest.mark.parametrize(
    "chunk",
    [
        None,
        "lgsp_remote",
        ["lgsp_remote"],
        {"progress": 0.5},
        {REMOTE_EVENT_KEY: "ops", "mode": "messages", "ns": [], "data": 1},
        _event(mode="updates"),
        _event(mode=None),
        _event(ns="clerk:1"),
        {k: v for k, v in _event().items() if k != "data"},
    ],
)
def test_anything_else_is_not_a_relayed_event(chunk):
    assert remote_stream_event(chunk) is None

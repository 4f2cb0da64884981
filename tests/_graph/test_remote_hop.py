"""RemoteHop without a server: its refusals before any request, how far back it reads,
how it relays a remote run's stream events."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.pregel.remote import RemoteGraph

from langgraph_supervisor_pro._graph import remote_hop
from langgraph_supervisor_pro._graph.remote_hop import RemoteHop
from langgraph_supervisor_pro._internal.aio import abandonable
from langgraph_supervisor_pro._internal.hop import HopContext, prompt_digest, with_hop
from langgraph_supervisor_pro._internal.twins import drive
from langgraph_supervisor_pro._remote import remote_stream_event
from langgraph_supervisor_pro.errors import RemoteDomainError

# Port 9 (discard): nothing is sent, every refusal comes before a request.
REMOTE = RemoteGraph("ops", url="http://ops:pw-secret@127.0.0.1:9")


def test_outside_a_hop_it_refuses_and_names_the_domain_with_the_password_masked():
    hop = RemoteHop(REMOTE, worker="ops")
    with pytest.raises(RemoteDomainError, match="no hop context") as caught:
        hop.invoke({"messages": [HumanMessage("hi", id="p1")]})
    assert "remote domain 'ops' (graph 'ops' at http://ops:***@127.0.0.1:9)" in str(caught.value)
    assert "pw-secret" not in str(caught.value)


def test_without_a_prompt_it_refuses():
    hop = RemoteHop(REMOTE, worker="ops")
    context = HopContext(
        worker="ops", step=1, turn=1, task="T", instructions="", dispatched_at=None, tier=None
    )
    config = with_hop({"configurable": {"thread_id": "t"}}, context)
    with pytest.raises(RemoteDomainError, match="prompt"):
        hop.invoke({"messages": []}, config)
    with pytest.raises(RemoteDomainError, match="prompt"):
        asyncio.run(hop.ainvoke({}, config))


def test_an_async_run_without_an_async_client_refuses():
    from langgraph_sdk import get_sync_client

    remote = RemoteGraph("ops", sync_client=get_sync_client(url="http://127.0.0.1:9"))
    with pytest.raises(RemoteDomainError, match="has no async client"):
        asyncio.run(RemoteHop(remote, worker="ops").ainvoke({"messages": []}))


# -- how far back a hop reads the remote thread ------------------------------------------


def _hop_at(dispatched_at: str | None) -> HopContext:
    return HopContext(
        worker="ops",
        step=1,
        turn=1,
        task="T",
        instructions="",
        dispatched_at=dispatched_at,
        tier=None,
    )


def test_a_hop_reads_back_to_its_dispatch_less_the_clock_skew_allowed():
    since = remote_hop._read_back_to(_hop_at("2030-01-01T12:00:00+00:00"))
    assert since == datetime(2030, 1, 1, 12, 0, tzinfo=UTC) - remote_hop._CLOCK_SKEW
    # An offset other than UTC is the same instant; a naive time is read as UTC.
    assert remote_hop._read_back_to(_hop_at("2030-01-01T13:00:00+01:00")) == since
    assert remote_hop._read_back_to(_hop_at("2030-01-01T12:00:00")) == since
    # No dispatch time (or one that is not a time): everything is read.
    for unknown in (None, "", "yesterday", "2030-13-01T00:00:00", "\x00"):
        assert remote_hop._read_back_to(_hop_at(unknown)) is None


@pytest.mark.parametrize(
    ("created_at", "older"),
    [
        ("2030-01-01T11:59:59.999999+00:00", True),
        ("2030-01-01T12:00:00+00:00", False),  # at the limit: may be the hop's own
        ("2030-01-01T12:00:01Z", False),
        ("2030-01-01T06:00:00-07:00", False),  # 13:00 UTC
        (None, False),  # no time: never taken as older (the read goes on)
        ("not a time", False),
        (1893499200, False),
    ],
)
def test_a_run_counts_as_older_than_the_hop_only_when_its_time_says_so(
    created_at: object, older: bool
):
    since = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    assert remote_hop._before({"created_at": created_at}, since) is older
    assert remote_hop._before({"created_at": created_at}, None) is False


def test_the_newest_run_of_each_key_is_kept_and_unkeyed_runs_are_not():
    runs = [
        {"run_id": "b", "created_at": "2030-01-01T12:00:02+00:00", "metadata": {"lgsp_run": "1:1"}},
        {"run_id": "a", "created_at": "2030-01-01T12:00:01+00:00", "metadata": {"lgsp_run": "1:1"}},
        {"run_id": "c", "created_at": "2030-01-01T12:00:03+00:00", "metadata": {}},
        {"run_id": "d", "created_at": "2030-01-01T12:00:04+00:00", "metadata": None},
        {"run_id": "e", "created_at": "2030-01-01T12:00:05+00:00", "metadata": {"lgsp_run": 7}},
    ]
    assert {k: r["run_id"] for k, r in remote_hop._runs_by_key(runs).items()} == {"1:1": "b"}


def test_the_hops_last_run_is_the_one_that_took_its_last_answer():
    listed = {
        "2:1": {"run_id": "own"},
        "2:1:resume:0": {"run_id": "answer-0"},
        "2:1:resume:1": {"run_id": "answer-1"},
        "2:10": {"run_id": "another-hop"},
        "2:1:resume:x": {"run_id": "not-an-answer"},
        "12:1": {"run_id": "another-turn"},
    }
    assert remote_hop._last_run("2:1", listed, {}) == "answer-1"
    # A run joined or started by this call counts with the listed ones.
    assert remote_hop._last_run("2:1", listed, {"2:1:resume:2": "answer-2"}) == "answer-2"
    assert remote_hop._last_run("2:10", listed, {}) == "another-hop"
    assert remote_hop._last_run("3:1", {}, {"3:1": "started"}) == "started"


def test_a_prompts_digest_tells_a_forked_hops_prompt_from_the_replayed_one():
    one = remote_hop._digest(HumanMessage("Task: File note one", id="a"))
    assert one == remote_hop._digest(HumanMessage("Task: File note one", id="b"))  # not the id
    assert one != remote_hop._digest(HumanMessage("Task: File note two"))
    # Content blocks, odd Unicode and a lone surrogate digest too, each its own.
    blocks = [{"type": "text", "text": "Task: é \u200b 🙂"}, {"type": "image", "url": "x"}]
    digests = {
        one,
        remote_hop._digest(HumanMessage(content=blocks)),
        remote_hop._digest(HumanMessage("Task: \ud800")),
        remote_hop._digest(HumanMessage("Task: \x00")),
    }
    assert len(digests) == 4 and all(len(d) == 16 for d in digests)
    # A string prompt's digest is the hop context's (the worker node's prompt_digest).
    assert one == prompt_digest("Task: File note one")


def test_a_run_started_before_prompts_were_digested_keeps_its_prompt_id():
    legacy = {"run_id": "r", "metadata": {"lgsp_run": "1:1"}}
    current = {"run_id": "r", "metadata": {"lgsp_run": "1:1", "lgsp_prompt": "d"}}
    old_id = str(uuid.uuid5(uuid.NAMESPACE_URL, "lgsp:t:1:1:prompt"))
    assert remote_hop._remote_prompt_id("t", "1:1", "d", legacy) == old_id
    new_id = remote_hop._remote_prompt_id("t", "1:1", "d", current)
    assert new_id != old_id
    assert remote_hop._remote_prompt_id("t", "1:1", "d", None) == new_id
    assert remote_hop._remote_prompt_id("t", "1:1", "e", None) != new_id


# -- relaying the remote run's stream ----------------------------------------------------


def test_the_relay_writes_tokens_and_custom_events_with_their_source_and_namespace():
    written: list[object] = []
    relay = remote_hop._Relay(written.append, ["root", "ops"], "ops", "remote-t")
    token = [{"type": "AIMessageChunk", "content": "Rolled "}, {"langgraph_node": "model"}]
    assert relay.forward("run-1", "messages|clerk:1|inner:2", token) == 1
    assert relay.forward("run-1", "custom", {"progress": 0.5}) == 1
    # What the root is not streamed: the run's metadata, state updates, values, errors.
    for event in ("metadata", "updates", "values|clerk:1", "error", "messages/partial", ""):
        assert relay.forward("run-1", event, {}) == 0
    source = {"path": ["root", "ops"], "graph_id": "ops", "thread_id": "remote-t"}
    source["run_id"] = "run-1"
    assert written == [
        {"lgsp_remote": source, "mode": "messages", "ns": ["clerk:1", "inner:2"], "data": token},
        {"lgsp_remote": source, "mode": "custom", "ns": [], "data": {"progress": 0.5}},
    ]
    assert all(remote_stream_event(chunk) == chunk for chunk in written)


def test_an_event_relayed_by_the_remote_run_itself_arrives_as_its_own_with_the_full_path():
    # Server A's root relays its remote domain's (server B's) events into its run's
    # stream; a root reading server A's run gets B's event, its path from this root.
    written: list[object] = []
    relay = remote_hop._Relay(written.append, ["far"], "root", "thread-on-a")
    on_b = {"graph_id": "desk", "thread_id": "b", "run_id": "rb"}
    from_b = {
        "lgsp_remote": {"path": ["desk"], **on_b},
        "mode": "custom",
        "ns": [],
        "data": {"filing": "note"},
    }
    assert relay.forward("ra", "custom", from_b) == 1
    (event,) = written
    assert event == {**from_b, "lgsp_remote": {"path": ["far", "desk"], **on_b}}
    assert from_b["lgsp_remote"] == {"path": ["desk"], **on_b}  # not changed
    # Anything else a remote node writes, even shaped alike, is that run's own event.
    relay.forward("ra", "messages", [from_b, {}])
    relay.forward("ra", "custom", {**from_b, "mode": "values"})
    assert [e["lgsp_remote"]["path"] for e in written[1:]] == [["far"], ["far"]]  # type: ignore[index]


def test_without_a_stream_writer_nothing_is_relayed():
    relay = remote_hop._Relay(None, ["ops"], "ops", "t")
    assert relay.forward("r", "custom", {"x": 1}) == 0
    assert remote_hop._stream_writer() is None  # outside a graph run


class _Runs:
    """A client's `runs.join_stream`: yields `events`, marking the attempt abandoned
    (`overrun`) after the `after`-th."""

    def __init__(self, events: list[tuple[str, object]], overrun: threading.Event, after: int):
        self.events, self.overrun, self.after = events, overrun, after
        self.read = 0

    def join_stream(self, thread: str, run_id: str, *, last_event_id: str) -> Iterator[object]:
        assert last_event_id == "-1"  # from the run's first event
        for event, data in self.events:
            self.read += 1
            yield SimpleNamespace(event=event, data=data)
            if self.read == self.after:
                self.overrun.set()


def test_an_abandoned_sync_attempt_stops_relaying_the_remote_stream():
    written: list[object] = []
    relay = remote_hop._Relay(written.append, ["ops"], "ops", "t")
    events = [("custom", {"n": n}) for n in range(5)]
    ctx = contextvars.copy_context()
    overrun = abandonable(ctx)
    runs = _Runs(events, overrun, after=2)
    api = remote_hop._Api(SimpleNamespace(runs=runs), sync=True)
    assert ctx.run(drive, _once(api.relay("t", "r", relay))) == 2
    assert [chunk["data"] for chunk in written] == [{"n": 0}, {"n": 1}]  # type: ignore[index]
    assert runs.read == 3  # it stopped at the first event read once abandoned
    # Not abandoned: every event.
    written.clear()
    runs = _Runs(events, threading.Event(), after=0)
    api = remote_hop._Api(SimpleNamespace(runs=runs), sync=True)
    assert drive(_once(api.relay("t", "r", relay))) == 5 and len(written) == 5


def _once(io: Any) -> Any:
    relayed = yield io
    return relayed

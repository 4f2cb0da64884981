"""Remote domains: a supervisor served by another LangGraph server, as one worker.

Give a worker LangGraph's own `RemoteGraph` as its agent and its hops run on that
server, in a thread of their own there:

```python
from langgraph.pregel.remote import RemoteGraph

ops = Worker(name="ops", description="Operations.",
             agent=RemoteGraph("ops", url="http://ops.internal:8123"))
```

- The remote thread is `remote_thread_id(<root thread>, <worker path>, <graph id>)`:
  stable, so each visit is the remote domain's next turn (as for a domain in the same
  process) and a resume reaches the thread that paused.
- Each hop starts one remote run, tagged with the hop (`lgsp_run` = `<turn>:<step>` in
  the run's metadata). A hop that runs again (a crash and replay of the root, a retry)
  joins that run, or reads the result it left, instead of starting another.
- A review (any interrupt) pending in the remote thread surfaces from the root's
  `invoke` with the same payload and response schema; `context["path"]` starts at the
  root, and `context["remote"]` names the remote thread and interrupt. The root's
  answer is forwarded as `command={"resume": {<remote interrupt id>: answer}}` to the
  remote thread: `RemoteGraph` alone does not forward a nested resume (langgraph #4879).
- A server that is down, times out or answers 5xx (`RemoteDomainUnavailable`, retried
  per `Worker.retry`), refuses the request or whose run fails (`RemoteDomainError`)
  makes a `failed` hop whose error says which, with any password in the URL masked.
- The remote run's tokens (its `messages` stream, subgraphs included) and custom events
  reach the root's stream as custom events (`stream_mode="custom"`), each a
  `RemoteStreamEvent` under `REMOTE_EVENT_KEY`; `remote_stream_event` picks them out.

Example:
    >>> remote_thread_id("t-1", ("ops",), "ops") == remote_thread_id("t-1", ("ops",), "ops")
    True
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from typing_extensions import TypedDict

__all__ = [
    "REMOTE_EVENT_KEY",
    "RemoteSource",
    "RemoteStreamEvent",
    "remote_stream_event",
    "remote_thread_id",
]

REMOTE_EVENT_KEY = "lgsp_remote"
"""The key of a custom stream event relayed from a remote domain's run (its `RemoteSource`)."""


def remote_thread_id(thread_id: str, path: Sequence[str], graph_id: str) -> str:
    """The id of the remote thread a root thread's remote domain runs in.

    A UUID derived from the root's thread id, the worker path from the root down to the
    remote worker, and the remote graph (assistant) id: the same for every visit and
    every resume of that domain in that root thread, different for another thread, path
    or graph. Use it to read the remote domain's state on its server.

    Args:
        thread_id: The root run's thread id.
        path: The worker names from the root down to the remote worker (`("ops",)`).
        graph_id: The `RemoteGraph`'s assistant or graph id.

    Returns:
        The remote thread id (a UUID string).

    Raises:
        ValueError: `path` is empty or `graph_id` is blank.

    Example:
        >>> remote_thread_id("t-1", ("ops",), "ops") != remote_thread_id("t-2", ("ops",), "ops")
        True
    """
    names = [str(name) for name in path]
    if not names:
        raise ValueError("path must name at least the remote worker, e.g. ('ops',)")
    if not isinstance(graph_id, str) or not graph_id.strip():
        raise ValueError(f"graph_id must be the remote graph's id, not {graph_id!r}")
    key = json.dumps(["lgsp-remote", str(thread_id), names, graph_id], ensure_ascii=False)
    return str(uuid.uuid5(uuid.NAMESPACE_URL, key))


class RemoteSource(TypedDict):
    """Where a relayed stream event comes from: the remote run of one hop."""

    path: list[str]
    """The worker names from the root down to the remote worker (`["ops"]`)."""
    graph_id: str
    """The remote graph (assistant) id."""
    thread_id: str
    """The remote thread (`remote_thread_id`)."""
    run_id: str
    """The remote run: the hop's own, or the one that took a forwarded review answer."""


class RemoteStreamEvent(TypedDict):
    """A remote run's stream event, relayed to the root as a custom stream event.

    `mode` is the remote stream mode: `"messages"` (a token: `data` is the LangGraph
    SDK's `[message chunk as a dict, metadata]` of `stream_mode="messages-tuple"`) or
    `"custom"` (what a remote node wrote with its stream writer). `ns` is the
    namespace inside the remote run (`[]` for its root graph, `["clerk:<task id>"]` for
    a worker's agent).
    """

    lgsp_remote: RemoteSource
    mode: Literal["messages", "custom"]
    ns: list[str]
    data: Any


def remote_stream_event(chunk: object) -> RemoteStreamEvent | None:
    """The relayed remote stream event a custom stream chunk is, or None.

    Args:
        chunk: A chunk of the root's `stream_mode="custom"` stream.

    Returns:
        The `RemoteStreamEvent`, or None for any other custom event.

    Example:
        ```python
        for mode, chunk in app.stream(inputs, config, stream_mode=["updates", "custom"]):
            if mode == "custom" and (event := remote_stream_event(chunk)):
                if event["mode"] == "messages":
                    message, metadata = event["data"]
                    print(message["content"], end="")
        ```

        >>> remote_stream_event({"progress": 0.5}) is None
        True
    """
    if not isinstance(chunk, Mapping):
        return None
    source = chunk.get(REMOTE_EVENT_KEY)
    if not isinstance(source, Mapping) or chunk.get("mode") not in ("messages", "custom"):
        return None
    if not isinstance(chunk.get("ns"), list) or "data" not in chunk:
        return None
    return cast(RemoteStreamEvent, dict(chunk))

"""Remote domains: a supervisor served by another LangGraph server, as one worker.

Give a worker LangGraph's `RemoteGraph` as its agent and its hops run on that server, in a
thread of its own there (`remote_thread_id`); its stream events reach the root's custom
stream (`remote_stream_event`).
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/remote-domains/

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

REMOTE_EVENT_KEY = "lgsp_remote"
"""The key of a custom stream event relayed from a remote domain's run (its `RemoteSource`)."""


def remote_thread_id(thread_id: str, path: Sequence[str], graph_id: str) -> str:
    """The id of the remote thread a root thread's remote domain runs in (stable, a UUID).

    Use it to read the remote domain's state on its server.
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

    `mode` is `"messages"` (a token: `data` is `[message chunk as a dict, metadata]`) or
    `"custom"`; `ns` is the namespace inside the remote run (`[]` for its root graph).
    """

    lgsp_remote: RemoteSource
    mode: Literal["messages", "custom"]
    ns: list[str]
    data: Any


def remote_stream_event(chunk: object) -> RemoteStreamEvent | None:
    """The relayed remote stream event a chunk of the root's custom stream is, or None.

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

"""A worker hop on a remote LangGraph server, through a `RemoteGraph` (private).

It uses the `RemoteGraph`'s SDK clients, not its `invoke` (which would run in the root's
thread id and send a resume as new input, langgraph #4879): each run of the hop's node
joins or starts the hop's remote run exactly once, relays its stream, forwards remote
interrupts, and reads the remote state. See docs/architecture.md, "Remote domains".
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, cast

from langchain_core.callbacks import (
    AsyncCallbackManagerForChainRun,
    CallbackManagerForChainRun,
)
from langchain_core.messages import BaseMessage, HumanMessage, convert_to_messages
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.config import get_config, get_stream_writer
from langgraph.errors import GraphBubbleUp, GraphInterrupt, is_invalid_resume
from langgraph.pregel.remote import RemoteGraph
from langgraph.types import Interrupt, StreamWriter, interrupt
from langsmith.run_helpers import get_current_run_tree
from pydantic import TypeAdapter, ValidationError

from langgraph_supervisor_pro._internal.aio import abandoned
from langgraph_supervisor_pro._internal.hop import HopContext, hop_context, prompt_digest
from langgraph_supervisor_pro._internal.interrupts import interrupt_id_after, server_auth_user
from langgraph_supervisor_pro._internal.records import aware_time
from langgraph_supervisor_pro._internal.text import cut_id
from langgraph_supervisor_pro._internal.twins import Call, Steps, adrive, drive
from langgraph_supervisor_pro._internal.urls import scrub
from langgraph_supervisor_pro._remote import (
    REMOTE_EVENT_KEY,
    RemoteSource,
    RemoteStreamEvent,
    remote_stream_event,
    remote_thread_id,
)
from langgraph_supervisor_pro.errors import RemoteDomainError, RemoteDomainUnavailable
from langgraph_supervisor_pro.observability._propagation import TRACE_CONTEXT_KEYS
from langgraph_supervisor_pro.review._gate import invalid_answer_summary, response_schema
from langgraph_supervisor_pro.review._payload import is_review_payload

RUN_KEY = "lgsp_run"  # the remote run's metadata key: the hop (and answer) it ran for
PROMPT_KEY = "lgsp_prompt"  # ... and the digest of the hop's prompt (a fork is another hop)
_REUSABLE = frozenset({"pending", "running", "success"})  # joined (an `error` one: started)
_RUNS_PAGE = 100  # runs read per request, newest first
_CLOCK_SKEW = timedelta(minutes=10)  # how far behind ours the remote server's clock may be
_STREAMED = ("messages-tuple", "custom")  # what the remote run streams (subgraphs included)
_RELAYED = frozenset({"messages", "custom"})  # the events relayed (`messages-tuple` as these)
_FROM_THE_START = "-1"  # `last_event_id` that replays a resumable run's stream from its start

_log = logging.getLogger(__name__)


class RemoteHop(Runnable[dict[str, Any], dict[str, Any]]):
    """The agent of a worker whose `agent` is a `RemoteGraph` (built by the worker node).

    Its input is `{"messages": [prompt]}`, its output the remote thread's state values
    with `messages` from the prompt on.
    """

    def __init__(self, remote: RemoteGraph, *, worker: str) -> None:
        self.remote = remote
        self.worker = worker
        self.name = f"{worker}.remote"

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run the hop on the remote server with the sync client."""
        return self._call_with_config(self._run, input, config, run_type="chain")

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run the hop on the remote server with the async client."""
        return await self._acall_with_config(self._arun, input, config, run_type="chain")

    def _run(
        self,
        input: dict[str, Any],
        run_manager: CallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> dict[str, Any]:
        return drive(self._hop(input, config, self._api(sync=True)))

    async def _arun(
        self,
        input: dict[str, Any],
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> dict[str, Any]:
        return await adrive(self._hop(input, config, self._api(sync=False)))

    def _api(self, *, sync: bool) -> _Api:
        client = self.remote.sync_client if sync else self.remote.client
        if client is None:
            kind, method, given = (
                ("sync", "invoke", "sync_client") if sync else ("async", "ainvoke", "client")
            )
            raise RemoteDomainError(
                f"{self._who()}: the RemoteGraph has no {kind} client, and the root runs "
                f"with {method}; give RemoteGraph(url=...) or {given}=..."
            )
        return _Api(client, sync=sync)

    def _hop(
        self, input: Mapping[str, Any], config: RunnableConfig, api: _Api
    ) -> Steps[dict[str, Any]]:
        hop = hop_context(config)
        if hop is None:
            raise RemoteDomainError(
                f"{self._who()}: a remote domain runs as a worker of a supervisor graph "
                "(no hop context in its config)"
            )
        prompt = _prompt(input)
        kind = "human" if isinstance(prompt, HumanMessage) else prompt.type
        configurable = config.get("configurable") or {}
        root_thread = str(configurable.get("thread_id") or "")
        # A root without a thread (no checkpointer) cannot resume or replay a hop: each
        # hop gets a remote thread of its own, never one shared by unrelated runs.
        thread = remote_thread_id(
            root_thread or f"lgsp-unthreaded-{uuid.uuid4()}", hop.path, self.remote.assistant_id
        )
        key = f"{hop.turn}:{hop.step}"
        digest = hop.digest or _digest(prompt)
        metadata = {**_run_metadata(config, hop), PROMPT_KEY: digest}
        relay = _Relay(_stream_writer(), list(hop.path), self.remote.assistant_id, thread)
        try:
            yield api.call(
                "create_thread",
                thread_id=thread,
                if_exists="do_nothing",
                metadata={"lgsp_root_thread": root_thread, "lgsp_path": "/".join(hop.path)},
            )
            runs = yield from self._hop_runs(api, thread, key, digest, _read_back_to(hop))
            # The prompt's id in the remote thread is the hop's, not the root task's: a
            # replay of the hop (a new root task) finds the answer that follows it.
            remote_prompt = _remote_prompt_id(thread, key, digest, runs.get(key))
            message = {"type": kind, "content": prompt.content, "id": remote_prompt}
            ran: dict[str, str] = {}  # the runs this call joined or started, by key
            ran[key] = yield from self._run_once(
                api, relay, runs, key, metadata, input={"messages": [message]}
            )
            answers: dict[str, str] = {}  # remote interrupt id -> the root's interrupt id
            for known in runs.values():
                meta = known.get("metadata") or {}
                if meta.get("lgsp_remote_interrupt") and meta.get("lgsp_interrupt"):
                    # In the order they were forwarded: a refused answer's later one wins.
                    answers[str(meta["lgsp_remote_interrupt"])] = str(meta["lgsp_interrupt"])
            slot = 0
            while True:
                pending = _pending((yield api.call("get_thread", thread)))
                if not pending:
                    break
                asked = pending[0]
                # The id LangGraph gives this task's interrupt in answer slot `slot`.
                local_id = interrupt_id_after(str(configurable.get("checkpoint_ns", "")), slot)
                # The first time: raises, and the root pauses on this review. After the
                # root's answer (the node runs again): returns the answer of this slot.
                answer = _ask(self._surfaced(asked, hop, root_thread, thread), asked, local_id)
                resume_key = f"{key}:resume:{slot}"
                ids = {"lgsp_interrupt": local_id, "lgsp_remote_interrupt": str(asked["id"])}
                ran[resume_key] = yield from self._run_once(
                    api,
                    relay,
                    runs,
                    resume_key,
                    {**metadata, **ids},
                    command={"resume": {str(asked["id"]): answer}},
                )
                answers[str(asked["id"])] = local_id
                slot += 1
            state = yield api.call("get_state", thread)
            if _later_turn(state, remote_prompt):  # the root went back in time
                last = _last_run(key, runs, ran)
                state = yield from self._state_after(api, thread, remote_prompt, last)
        except (GraphBubbleUp, RemoteDomainError):
            raise
        except Exception as exc:
            raise self._failure(exc) from None
        return self._output(state, prompt, remote_prompt, hop, answers)

    def _hop_runs(
        self, api: _Api, thread: str, key: str, digest: str, since: datetime | None
    ) -> Steps[dict[str, Mapping[str, Any]]]:
        """The remote thread's runs for this prompt that may be this hop's (or answers'), by key.

        Pages newest first until the hop's own run is found, the runs run out, or a page
        ends with a run created before `since` (None: every run is read).
        """
        listed: list[Mapping[str, Any]] = []
        offset = 0
        while True:
            page = list(
                (yield api.call("list_runs", thread, limit=_RUNS_PAGE, offset=offset)) or ()
            )
            offset += len(page)
            runs = [run for run in page if isinstance(run, Mapping)]
            same = [run for run in runs if _digest_of(run) in (digest, None)]
            listed.extend(same)
            if (
                len(page) < _RUNS_PAGE
                or any(_key_of(run) == key for run in same)
                or not runs
                or _before(runs[-1], since)
            ):
                return _runs_by_key(listed)

    def _run_once(
        self,
        api: _Api,
        relay: _Relay,
        runs: Mapping[str, Mapping[str, Any]],
        key: str,
        metadata: dict[str, Any],
        *,
        input: Any = None,
        command: Any = None,
    ) -> Steps[str]:
        """Join the run `key` of `runs` if it can still answer, else start it; wait; its id.

        A run's stream is relayed unless it had finished (it was relayed then).
        """
        thread, existing = relay.thread, runs.get(key)
        live = True
        if existing is not None and existing.get("status") in _REUSABLE:
            run_id = str(existing["run_id"])
            live = existing.get("status") != "success"
        else:
            headers = _tracing_headers() if self.remote.distributed_tracing else None
            created = yield api.call(
                "create_run",
                thread,
                self.remote.assistant_id,
                input=input,
                command=command,
                metadata={**metadata, RUN_KEY: key},
                headers=headers,
                stream_mode=list(_STREAMED),
                stream_subgraphs=True,
                stream_resumable=True,
            )
            run_id = str(created["run_id"])
        if live and relay.writer is not None:
            try:
                yield api.relay(thread, run_id, relay)
            except Exception as exc:  # best effort: the join below says how the run ended
                why = scrub(f"{type(exc).__name__}: {exc}", self._url())
                _log.debug("%s: relaying run %s's stream stopped: %s", self._who(), run_id, why)
        result = yield api.call("join_run", thread, run_id)
        error = result.get("__error__") if isinstance(result, Mapping) else None
        if error is not None:
            raise RemoteDomainError(f"{self._who()}: the remote run failed: {_error_text(error)}")
        return run_id

    def _state_after(
        self, api: _Api, thread: str, remote_prompt: str, run_id: str
    ) -> Steps[Mapping[str, Any]]:
        """The remote state at the end of the hop's turn, after time travel at the root.

        The newest checkpoint its last run (`run_id`) wrote: one request, however far back.
        """
        page = yield api.call("get_history", thread, limit=1, metadata={"run_id": run_id})
        for snapshot in page or ():
            values = snapshot.get("values") if isinstance(snapshot, Mapping) else None
            if (
                isinstance(values, Mapping)
                and values.get("task_message_id") == remote_prompt
                and not snapshot.get("next")
            ):
                return cast(Mapping[str, Any], snapshot)
        raise RemoteDomainError(
            f"{self._who()}: the remote thread {cut_id(thread)} has moved on past this hop and no "
            f"longer holds the hop's result (the last checkpoint of its run {run_id})"
        )

    def _surfaced(
        self, asked: Mapping[str, Any], hop: HopContext, root_thread: str, thread: str
    ) -> Any:
        """A remote interrupt's value as the root shows it: its path from the root down."""
        value = asked.get("value")
        if not isinstance(value, Mapping) or not isinstance(value.get("context"), Mapping):
            return value
        context = dict(value["context"])
        context["path"] = _from_root(hop.path, context.get("path"))
        if "thread_id" in context:
            context["thread_id"] = root_thread
        context["remote"] = {
            "graph_id": self.remote.assistant_id,
            "thread_id": thread,
            "interrupt_id": str(asked.get("id")),
        }
        return {**value, "context": context}

    def _output(
        self,
        state: Mapping[str, Any],
        prompt: BaseMessage,
        remote_prompt: str,
        hop: HopContext,
        answers: Mapping[str, str],
    ) -> dict[str, Any]:
        """The remote state as the agent's output: messages from the hop's prompt on.

        Its reviews get the path from the root and the root's interrupt ids.
        """
        values = dict(state.get("values") or {})
        messages = convert_to_messages(values.get("messages") or [])
        ids = [m.id for m in messages]
        start = ids.index(remote_prompt) + 1 if remote_prompt in ids else len(messages)
        values["messages"] = [prompt, *messages[start:]]
        reviews = values.get("reviews")
        if isinstance(reviews, list):
            values["reviews"] = [
                {
                    **entry,
                    "path": _from_root(hop.path, entry.get("path")),
                    "interrupt_id": answers.get(
                        str(entry.get("interrupt_id")), entry.get("interrupt_id")
                    ),
                }
                for entry in reviews
                if isinstance(entry, Mapping)
            ]
        return values

    def _url(self) -> str:
        for client in (self.remote.sync_client, self.remote.client):
            base = getattr(getattr(getattr(client, "http", None), "client", None), "base_url", None)
            if base is not None:
                return str(base).rstrip("/")
        return "?"

    def _who(self) -> str:
        url = self._url()
        return scrub(
            f"remote domain {self.worker!r} (graph {self.remote.assistant_id!r} at {url})", url
        )

    def _failure(self, exc: Exception) -> RemoteDomainError:
        """The error a failed request becomes: unavailable (retried) or refused."""
        import httpx

        status = getattr(getattr(exc, "response", None), "status_code", None)
        kind: type[RemoteDomainError] = RemoteDomainUnavailable
        if isinstance(exc, httpx.TimeoutException):
            what = "timed out"
        elif isinstance(exc, httpx.TransportError):
            what = "unreachable"
        elif isinstance(status, int) and status >= 500:
            what = f"the server failed (HTTP {status})"
        elif status is not None:
            what, kind = f"the server refused the request (HTTP {status})", RemoteDomainError
        else:
            what, kind = "the remote call failed", RemoteDomainError
        return kind(scrub(f"{self._who()}: {what}: {type(exc).__name__}: {exc}", self._url()))


class _Api:
    """The SDK calls a hop makes, as twin I/O (the sync client under `drive`)."""

    def __init__(self, client: Any, *, sync: bool) -> None:
        self._client = client
        self._sync = sync

    def call(self, name: str, *args: Any, **kwargs: Any) -> Call:
        run = partial(self._method(name), *args, **kwargs)
        return Call(run, None if self._sync else run)

    def relay(self, thread: str, run_id: str, relay: _Relay) -> Call:
        """Read the run's stream from its first event, relaying it; the events relayed."""
        runs = self._client.runs

        def pump() -> int:
            relayed = 0
            for part in runs.join_stream(thread, run_id, last_event_id=_FROM_THE_START):
                if abandoned():  # the attempt overran its timeout: its retry relays now
                    break
                relayed += relay.forward(run_id, part.event, part.data)
            return relayed

        async def apump() -> int:
            relayed = 0
            async for part in runs.join_stream(thread, run_id, last_event_id=_FROM_THE_START):
                relayed += relay.forward(run_id, part.event, part.data)
            return relayed

        return Call(pump, None if self._sync else apump)

    def _method(self, name: str) -> Callable[..., Any]:
        client = self._client
        return cast(
            Callable[..., Any],
            {
                "create_thread": client.threads.create,
                "get_thread": client.threads.get,
                "get_state": client.threads.get_state,
                "get_history": client.threads.get_history,
                "list_runs": client.runs.list,
                "create_run": client.runs.create,
                "join_run": client.runs.join,
            }[name],
        )


@dataclass(frozen=True)
class _Relay:
    """Relays a hop's remote stream events to the root's stream writer (if any)."""

    writer: StreamWriter | None
    path: list[str]
    graph_id: str
    thread: str

    def forward(self, run_id: str, event: str, data: Any) -> int:
        """Write one remote event as a `RemoteStreamEvent` if it is relayed; 1 if it was.

        An event relayed from a remote domain's own remote domain keeps its wrapping, its
        path prefixed with this hop's (never wrapped once per server it crossed).
        """
        mode, _, ns = event.partition("|")
        if self.writer is None or mode not in _RELAYED:
            return 0
        inner = remote_stream_event(data) if mode == "custom" else None
        relayed: dict[str, Any]
        if inner is not None:
            source: Mapping[str, Any] = inner["lgsp_remote"]
            path = _from_root(self.path, source.get("path"))
            relayed = {**inner, REMOTE_EVENT_KEY: {**source, "path": path}}
        else:
            relayed = {
                REMOTE_EVENT_KEY: RemoteSource(
                    path=list(self.path),
                    graph_id=self.graph_id,
                    thread_id=self.thread,
                    run_id=run_id,
                ),
                "mode": mode,
                "ns": ns.split("|") if ns else [],
                "data": data,
            }
        self.writer(cast(RemoteStreamEvent, relayed))
        return 1


def _from_root(path: Sequence[str], below: Any) -> list[str]:
    """A path the remote side reported (`below`, if a list), as seen from the root."""
    return [*path, *(below if isinstance(below, list) else [])]


def _stream_writer() -> StreamWriter | None:
    """The root's stream writer for this hop, or None outside a graph run."""
    try:
        return get_stream_writer()
    except RuntimeError:  # called outside a runnable context
        return None


def _prompt(input: Mapping[str, Any]) -> BaseMessage:
    messages = input.get("messages")
    if (
        not isinstance(messages, Sequence)
        or not messages
        or not isinstance(messages[-1], BaseMessage)
    ):
        raise RemoteDomainError("a remote hop is given {'messages': [..., prompt]}")
    return messages[-1]


def _run_metadata(config: RunnableConfig, hop: HopContext) -> dict[str, Any]:
    """What the remote run is tagged with: the hop's trace facts and its W3C trace context."""
    metadata = config.get("metadata") or {}
    kept: dict[str, Any] = {
        key: value
        for key, value in metadata.items()
        if (key.startswith("lgsp_") or key in TRACE_CONTEXT_KEYS)
        and isinstance(value, str | int | bool)
    }
    kept["lgsp_path"] = "/".join(hop.path)
    return kept


def _tracing_headers() -> dict[str, str] | None:
    """LangSmith's distributed-tracing headers of the hop's own run, if it is traced."""
    run_tree = get_current_run_tree()
    return None if run_tree is None else dict(run_tree.to_headers())


def _runs_by_key(listed: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The thread's runs by their `lgsp_run` key (the newest of each)."""
    found: dict[str, Mapping[str, Any]] = {}
    for run in sorted(listed, key=lambda r: str(r.get("created_at") or "")):
        key = _key_of(run)
        if key is not None:
            found[key] = run
    return found


def _last_run(key: str, listed: Mapping[str, Mapping[str, Any]], ran: Mapping[str, str]) -> str:
    """The id of the hop's last run: the one that took its last answer, else its own."""
    ids = {k: str(run.get("run_id")) for k, run in listed.items() if _slot(k, key) is not None}
    ids.update(ran)
    return ids[max(ids, key=lambda k: _slot(k, key) or 0)]


def _slot(run_key: str, key: str) -> int | None:
    """0 for the hop's own run, k + 1 for its k-th answer's, None for another hop's."""
    if run_key == key:
        return 0
    prefix = f"{key}:resume:"
    if run_key.startswith(prefix) and run_key[len(prefix) :].isdecimal():
        return int(run_key[len(prefix) :]) + 1
    return None


def _digest(prompt: BaseMessage) -> str:
    """`prompt_digest` of the prompt's text (content blocks: of their JSON)."""
    content = prompt.content
    if isinstance(content, str):
        return prompt_digest(content)
    return prompt_digest(json.dumps(content, sort_keys=True, ensure_ascii=False, default=str))


def _digest_of(run: Mapping[str, Any]) -> str | None:
    digest = (run.get("metadata") or {}).get(PROMPT_KEY)
    return digest if isinstance(digest, str) else None


def _remote_prompt_id(thread: str, key: str, digest: str, own: Mapping[str, Any] | None) -> str:
    """The id of the hop's prompt in the remote thread (a run without a digest: the old id)."""
    legacy = own is not None and _digest_of(own) is None
    seed = f"lgsp:{thread}:{key}:prompt" if legacy else f"lgsp:{thread}:{key}:{digest}:prompt"
    return str(uuid.uuid5(uuid.NAMESPACE_URL, seed))


def _key_of(run: Mapping[str, Any]) -> str | None:
    key = (run.get("metadata") or {}).get(RUN_KEY)
    return key if isinstance(key, str) else None


def _read_back_to(hop: HopContext) -> datetime | None:
    """The oldest creation time a run of this hop can have on the server."""
    dispatched = aware_time(hop.dispatched_at)
    return None if dispatched is None else dispatched - _CLOCK_SKEW


def _before(item: Mapping[str, Any], since: datetime | None) -> bool:
    """Whether a run was created before `since` (False when either time is unknown)."""
    created = aware_time(item.get("created_at"))
    return since is not None and created is not None and created < since


def _later_turn(state: Mapping[str, Any], remote_prompt: str) -> bool:
    """Whether a remote supervisor's state is of a later turn than the hop's prompt."""
    values = state.get("values")
    if not isinstance(values, Mapping) or "task_message_id" not in values:
        return False  # not a supervisor graph: its state has no turns to tell apart
    messages = values.get("messages") or []
    ids = {m.get("id") for m in messages if isinstance(m, Mapping)}
    return values["task_message_id"] != remote_prompt and remote_prompt in ids


def _pending(thread: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The remote thread's pending interrupts (every task's), oldest task first."""
    if thread.get("status") != "interrupted":
        return []
    groups = (thread.get("interrupts") or {}).values()
    return [
        i
        for group in groups
        for i in (group if isinstance(group, list) else ())
        if isinstance(i, Mapping) and i.get("id")
    ]


def _ask(value: Any, asked: Mapping[str, Any], local_id: str) -> Any:
    """The root's answer to a remote interrupt, asked with LangGraph's `interrupt()`.

    A review's answer is validated as the remote gate would (an invalid one is asked
    again, never forwarded) and forwarded as JSON, with the root's user as its reviewer.
    """
    if not is_review_payload(value):
        schema = asked.get("response_schema")
        return interrupt(
            value, response_schema=dict(schema) if isinstance(schema, Mapping) else None
        )
    allowed = value["review_configs"][0]["allowed_decisions"]
    schema = response_schema(allowed)
    try:
        parsed = interrupt(value, response_schema=schema)
    except ValidationError as exc:
        if not is_invalid_resume(exc):
            raise
        context = {**value["context"], "invalid_answer": invalid_answer_summary(exc)}
        again = Interrupt(
            value={**value, "context": context},
            id=local_id,
            response_schema=TypeAdapter(schema).json_schema(),
        )
        raise GraphInterrupt((again,)) from None
    answer: dict[str, Any] = parsed.model_dump(mode="json", exclude_none=True)
    user = server_auth_user(get_config().get("configurable") or {})
    if "reviewer" not in answer and user is not None:
        answer["reviewer"] = user
    return answer


def _error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        kind = error.get("error") or "Error"
        return f"{kind}: {error.get('message') or ''}".strip()
    return str(error)

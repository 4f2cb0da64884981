"""The node that runs one worker hop inside its own namespace (private).

It reads only what the hop's `WorkerTask` needs (the task, the route's
instructions, the worker's own messages, and the outputs it declared it `reads`),
runs the agent, turns whatever comes back into a `WorkerResult`, and writes only
its own slot, one ledger entry and the hop's model-call utilisation. With a store,
the full output goes to external memory and the slot keeps a reference.
Exceptions, time-outs and garbage become a `failed` result (after the retry
policy has had its turn), never a crash of the graph.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import math
import random
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import merge_configs
from langgraph.config import get_store
from langgraph.errors import GraphBubbleUp, ParentCommand, is_invalid_resume
from langgraph.pregel import Pregel
from langgraph.store.base import BaseStore
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro._graph.coerce import (
    ERROR_MAX_CHARS,
    coerce_worker_output,
    is_domain_state,
)
from langgraph_supervisor_pro._graph.fanout import route_of
from langgraph_supervisor_pro._graph.node import GraphNode
from langgraph_supervisor_pro._graph.usage import UsageMeter, UsageRecorder
from langgraph_supervisor_pro._internal.aio import run_sync
from langgraph_supervisor_pro._internal.hop import HopContext, hop_context, with_hop
from langgraph_supervisor_pro._internal.scrub import RunSecrets, original_error, scrubbed_error
from langgraph_supervisor_pro._internal.storable import storable, storable_value
from langgraph_supervisor_pro._internal.text import one_line, truncate
from langgraph_supervisor_pro._internal.twins import (
    Call,
    Invoke,
    MaybeAwait,
    Sleep,
    Steps,
    adrive,
    drive,
)
from langgraph_supervisor_pro.compaction.compactor import is_summary_message
from langgraph_supervisor_pro.contracts import WorkerResult, WorkerTask
from langgraph_supervisor_pro.persistence.memory import (
    aload_result,
    latest_results,
    load_result,
    output_key,
    output_namespace,
    reference,
    stored_value,
    thread_of,
)
from langgraph_supervisor_pro.review.guard import SECURITY_LOGGER
from langgraph_supervisor_pro.state import (
    CompactionEntry,
    LedgerEntry,
    ReviewEntry,
    RouteState,
    SecurityEntry,
    SupervisorState,
)
from langgraph_supervisor_pro.verification import (
    SchemaCheck,
    Verdict,
    checker_messages,
    failed_verification,
    verdict_of,
)
from langgraph_supervisor_pro.workers import Worker, WorkerTimeoutError, agent_kind

_log = logging.getLogger(SECURITY_LOGGER)


@dataclass(frozen=True)
class _Hop:
    """Everything a worker node needs for one hop, read from state."""

    task: WorkerTask
    route: RouteState
    turn: int
    autonomy: str | None = None
    serial: bool = True
    """False for one branch of a parallel decision."""


class WorkerNode:
    """Runs one worker hop; `invoke` and `ainvoke` share every part but the awaits.

    Built by `create_supervisor`; not public API.
    """

    def __init__(
        self,
        worker: Worker,
        *,
        supervisor: str,
        meter: UsageMeter | None,
        agent: Runnable[Any, Any] | Callable[..., Any],
    ) -> None:
        self.worker = worker
        self.supervisor = supervisor
        self.meter = meter
        self.allowed = set(worker.tool_names) if worker.tools is not None else None
        where = f"Worker.output_schema: worker {worker.name!r}"
        self._schema = (
            SchemaCheck(worker.output_schema, where=where)
            if worker.output_schema is not None
            else None
        )
        self._checker: Runnable[Any, Any] | None = (
            worker.verify.with_structured_output(Verdict)
            if isinstance(worker.verify, BaseChatModel)
            else None
        )
        kind = agent_kind(worker.name, agent)
        self._takes_messages = kind == "runnable"
        # A stateful subgraph (a domain passed uncompiled, or any graph compiled with
        # `checkpointer=True`) keeps its own messages across visits in its namespace:
        # it is sent the hop's prompt only, not the worker's history again.
        self._keeps_history = isinstance(agent, Pregel) and agent.checkpointer is True
        self._is_async = kind == "async"
        self._runnable: Runnable[Any, Any] = (
            agent
            if isinstance(agent, Runnable)
            else RunnableLambda(_scrubbing(agent, self._is_async), name=f"{worker.name}.agent")
        )

    def runnable(self) -> GraphNode[SupervisorState, dict[str, Any]]:
        """The node as a Runnable with native sync and async bodies.

        A compiled graph agent (a `create_agent` graph, a domain supervisor) is named as
        the node's subgraph, so LangGraph sees it: `get_graph(xray=...)` draws its nodes,
        `get_subgraphs()` lists it and `get_state(subgraphs=True)` reads its state.
        Functions and other Runnables are not graphs: the node names none.
        """
        subgraph = self._runnable if isinstance(self._runnable, Pregel) else None
        return GraphNode(self.worker.name, self.invoke, self.ainvoke, subgraph=subgraph)

    # -- reading the hop --------------------------------------------------------------

    def _route(self, state: SupervisorState) -> RouteState:
        route = route_of(state, self.worker.name)
        if route is None:
            raise RuntimeError(
                f"worker {self.worker.name!r} ran without a route addressed to it "
                f"(route={state.get('route')!r}, fanout={state.get('fanout')!r}); worker "
                "nodes are only reached from the supervisor"
            )
        return route

    def _serial(self, state: SupervisorState) -> bool:
        """Whether this hop is the serial route (not one branch of a parallel decision)."""
        route = state.get("route")
        return route is not None and route["next"] == self.worker.name

    def _reads(self, state: SupervisorState) -> dict[str, Mapping[str, Any]]:
        return latest_results(state.get("workers") or {}, self.worker.reads)

    def _hop(
        self, state: SupervisorState, route: RouteState, reads: Mapping[str, WorkerResult]
    ) -> _Hop:
        slot = (state.get("workers") or {}).get(self.worker.name)
        task = WorkerTask(
            worker=self.worker.name,
            step=route["step"],
            task=state.get("task", ""),
            instructions=route["instructions"],
            messages=list(slot["messages"]) if slot else [],
            reads=dict(reads),
        )
        return _Hop(
            task=task,
            route=route,
            turn=state.get("turn", 1),
            autonomy=state.get("autonomy"),
            serial=self._serial(state),
        )

    def _payload(self, hop: _Hop, config: RunnableConfig) -> tuple[Any, list[BaseMessage]]:
        # The prompt's id is derived from the task's namespace (which embeds LangGraph's
        # task id), so a hop re-run after a crash or an interrupt sends the same message
        # a checkpointed sub-agent already holds, and it is not stored twice.
        namespace = str(config.get("configurable", {}).get("checkpoint_ns", ""))
        prompt_id = (
            str(uuid.uuid5(uuid.NAMESPACE_URL, f"lgsp:{namespace}:prompt"))
            if namespace
            else str(uuid.uuid4())
        )
        prompt = HumanMessage(content=hop.task.prompt(), id=prompt_id)
        if self._keeps_history:
            return {"messages": [prompt]}, [prompt]
        if self._takes_messages:
            return {"messages": [*hop.task.messages, prompt]}, [prompt]
        return hop.task, [prompt]

    def _config(
        self, config: RunnableConfig, hop: _Hop, recorder: UsageRecorder | None
    ) -> RunnableConfig:
        # The agent's middleware reads the hop from this typed context.
        parent = hop_context(config)  # set when this graph is a domain of a tree
        context = HopContext(
            path=(*(parent.path if parent is not None else ()), self.worker.name),
            worker=self.worker.name,
            step=hop.route["step"],
            turn=hop.turn,
            task=hop.task.task,
            instructions=hop.route["instructions"],
            dispatched_at=hop.route.get("at"),
            tier=hop.autonomy,
        )
        # The same facts for traces only (nothing reads them back): every run below the
        # agent's inherits them, until a domain's own nodes clear them (`node_metadata`).
        extra: RunnableConfig = {
            "metadata": {
                "lgsp_worker": self.worker.name,
                "lgsp_step": hop.route["step"],
                "lgsp_turn": hop.turn,
                "lgsp_instructions": hop.route["instructions"],
                "lgsp_autonomy": hop.autonomy,
                "lgsp_dispatched_at": hop.route.get("at"),
                "lgsp_path": "/".join(context.path),
            },
            "tags": [f"lgsp:worker:{self.worker.name}"],
        }
        if recorder is not None:
            extra["callbacks"] = [recorder]
        return with_hop(merge_configs(config, extra), context)

    # -- running -----------------------------------------------------------------------

    def invoke(self, state: SupervisorState, config: RunnableConfig) -> dict[str, Any]:
        """Run the hop synchronously, retrying transient errors per `Worker.retry`."""
        return drive(self._hop_steps(state, config))

    async def ainvoke(self, state: SupervisorState, config: RunnableConfig) -> dict[str, Any]:
        """Run the hop on the event loop, retrying transient errors per `Worker.retry`."""
        return await adrive(self._hop_steps(state, config))

    def _hop_steps(self, state: SupervisorState, config: RunnableConfig) -> Steps[dict[str, Any]]:
        """The hop, for both drivers: attempts until one succeeds or the retries run out.

        An interrupt (`GraphBubbleUp`) passes through; an invalid resume is re-raised.
        """
        attempt = 0
        while True:
            attempt += 1
            try:
                return (yield from self._attempt(state, config))
            except GraphBubbleUp:
                raise
            except Exception as exc:
                error = original_error(exc)  # a function worker's scrubbed stand-in
                delay = self._retry_delay(error, attempt)
                if delay is None:
                    return self._failed(state, error, config)
                yield Sleep(delay)

    def _retry_delay(self, exc: Exception, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or None to give up.

        Retries follow the worker's LangGraph `RetryPolicy` (attempts, backoff, jitter,
        `retry_on`). They run here rather than through `add_node(retry_policy=...,
        error_handler=...)`: a LangGraph error handler on the node also receives an
        invalid resume value (`is_invalid_resume`), and then the run can no longer be
        resumed. This package's review gates never let one out (`request_review` pauses
        again on the same review, a `GraphInterrupt` that passes through above); one
        from the worker's own `interrupt(response_schema=...)` is re-raised untouched
        here, never retried nor turned into a failed hop, so LangGraph handles it as it
        would without this package.
        """
        if is_invalid_resume(exc):
            raise exc
        policy = self.worker.retry
        if attempt >= policy.max_attempts or not _retries(policy, exc):
            return None
        try:
            grown = policy.initial_interval * policy.backoff_factor ** (attempt - 1)
        except OverflowError:  # many attempts: the power outgrows a float
            grown = math.inf if policy.initial_interval else 0.0
        interval = min(policy.max_interval, grown)
        return interval + (random.uniform(0, 1) if policy.jitter else 0.0)

    def _attempt(self, state: SupervisorState, config: RunnableConfig) -> Steps[dict[str, Any]]:
        """One attempt: read the results it depends on, call the agent, store its output."""
        route = self._route(state)
        store = get_store()
        reads: dict[str, WorkerResult] = {}
        for name, entry in self._reads(state).items():
            reads[name] = yield Call(
                partial(load_result, store, entry), partial(aload_result, store, entry)
            )
        hop = self._hop(state, route, reads)
        payload, sent = self._payload(hop, config)
        recorder = UsageRecorder(self.meter) if self.meter else None
        child = self._config(config, hop, recorder)
        try:
            output = yield Call(
                lambda: self._call_agent(payload, child), lambda: self._acall_agent(payload, child)
            )
        except ParentCommand as exc:
            output = _namespace_violation(self.worker.name, exc)
        result, produced = self._coerce(hop, sent, output, config)
        result = yield from self._verifying(hop, result, config)
        update, record = self._finish(
            hop, sent, output, (result, produced), recorder, config, store
        )
        if record is not None and store is not None:
            yield Call(partial(store.put, *record), partial(store.aput, *record))
        return update

    def _call_agent(self, payload: Any, config: RunnableConfig) -> Any:
        """Call the agent from a sync hop, within the worker's timeout."""
        if self._is_async:
            call: Callable[[], Any] = lambda: run_sync(  # noqa: E731
                lambda: self._runnable.ainvoke(payload, config)
            )
        else:
            call = lambda: self._runnable.invoke(payload, config)  # noqa: E731
        return self._call_with_timeout(call)

    async def _acall_agent(self, payload: Any, config: RunnableConfig) -> Any:
        """Call the agent on the event loop, within the worker's timeout.

        Async agents run natively on the event loop; sync agents go to the executor.
        """
        call = self._runnable.ainvoke(payload, config)
        timeout = self.worker.timeout
        if timeout is None:
            return await call
        try:
            return await asyncio.wait_for(call, timeout)
        except TimeoutError as exc:
            raise WorkerTimeoutError(self.worker.name, timeout) from exc

    def _call_with_timeout(self, call: Callable[[], Any]) -> Any:
        timeout = self.worker.timeout
        if timeout is None:
            return call()
        # Sync Python cannot be cancelled in-process: the attempt runs in a thread
        # that carries this context (callbacks, stream writer), and is abandoned
        # when it overruns. Async runs cancel the worker for real.
        ctx = contextvars.copy_context()
        pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"lgsp-{self.worker.name}"
        )
        try:
            future = pool.submit(ctx.run, call)
            try:
                return future.result(timeout=timeout)
            except concurrent.futures.TimeoutError as exc:
                raise WorkerTimeoutError(self.worker.name, timeout) from exc
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    # -- writing the hop ---------------------------------------------------------------

    def _coerce(
        self, hop: _Hop, sent: list[BaseMessage], output: Any, config: RunnableConfig
    ) -> tuple[WorkerResult, list[BaseMessage]]:
        """What the agent returned, as a `WorkerResult` and the messages it produced."""
        # The agent echoes back its own history: none of it is new output.
        given = [*hop.task.messages, *sent]
        return coerce_worker_output(
            output, worker=self.worker.name, sent=given, scrub=RunSecrets(config).scrub
        )

    def _verifying(
        self, hop: _Hop, result: WorkerResult, config: RunnableConfig
    ) -> Steps[WorkerResult]:
        """`Worker.output_schema`, then `Worker.verify`, on a `success` result.

        A result either check refuses (or a check that raises) becomes a `failed` one
        with the reason; an interrupt inside a verifier passes through.
        """
        if result.status != "success":
            return result
        if self._schema is not None:
            value, problem = self._schema.check(result.result)
            if problem is not None:
                return failed_verification("output_schema", problem)
            result = result.model_copy(update={"result": value})
        verify = self.worker.verify
        if verify is None:
            return result
        checked = result
        try:
            if self._checker is not None:
                checker_config = merge_configs(
                    config,
                    {
                        "metadata": {"lgsp_role": "verifier", "lgsp_worker": self.worker.name},
                        "tags": [f"lgsp:verify:{self.worker.name}"],
                    },
                )
                messages = checker_messages(hop.task, checked)
                reply = yield Invoke(self._checker, messages, checker_config)
            else:
                function = verify
                reply = yield MaybeAwait(lambda: function(hop.task, checked))  # type: ignore[operator]
        except GraphBubbleUp:
            raise
        except Exception as exc:
            reason = RunSecrets(config).scrub(f"the verifier raised {type(exc).__name__}: {exc}")
            return failed_verification("verify", reason)
        verdict = verdict_of(reply)
        if not verdict.passed:
            return failed_verification("verify", RunSecrets(config).scrub(verdict.reason))
        return result

    def _finish(
        self,
        hop: _Hop,
        sent: list[BaseMessage],
        output: Any,
        coerced: tuple[WorkerResult, list[BaseMessage]],
        recorder: UsageRecorder | None,
        config: RunnableConfig,
        store: BaseStore | None,
    ) -> tuple[dict[str, Any], tuple[tuple[str, ...], str, dict[str, Any]] | None]:
        """The hop's state update, and the store record to write (None without a store)."""
        name = self.worker.name
        given = [*hop.task.messages, *sent]
        result, produced = coerced
        record = None
        entry: dict[str, Any] = result.model_dump()
        if store is not None:
            thread_id = thread_of(config)
            turn, step = hop.turn, hop.route["step"]
            parent = hop_context(config)  # a domain of a tree: outputs under its path
            within = parent.path if parent is not None else ()
            record = (
                output_namespace(thread_id, name, within=within),
                output_key(turn, step),
                stored_value(name, turn, step, hop.route["instructions"], result),
            )
            entry = reference(thread_id, name, turn, step, result, within=within)
        if not self._takes_messages and not produced:
            text = result.summary if store is not None else (result.result_text() or result.summary)
            produced = [AIMessage(content=text, name=name, id=str(uuid.uuid4()))]
        compacted = _compacted_within_hop(given, output)
        if compacted is not None:  # the agent's CompactionMiddleware replaced part of it
            summary, removed = compacted
            sent = [m for m in sent if m.id not in removed]
            produced = [m for m in produced if m.id != summary.id]
        security = self._security(hop, produced)
        update = hop_update(
            name,
            hop.route,
            hop.turn,
            [*sent, *produced],
            entry,
            result,
            refused=[e["tool"] for e in security],
            serial=hop.serial,
        )
        if compacted is not None:
            summary, removed = compacted
            slot_write = update["workers"][name]
            history = [m.id for m in hop.task.messages if m.id in removed]
            if history:  # the summary takes the place of the replaced history
                slot_write["compact"] = {"remove": history, "summary": summary}
            else:  # only this hop's own messages were replaced: the summary leads them
                slot_write["messages"] = [summary, *slot_write["messages"]]
            update["compactions"] = [
                self._within_hop_entry(hop, [*given, *produced], output, removed)
            ]
        if security:
            update["security"] = security
        reviews = self._reviews(hop, produced, output)
        if reviews:
            update["reviews"] = reviews
        if recorder is not None:
            update["usage"] = recorder.entries(
                turn=hop.turn, step=hop.route["step"], role="worker", worker=name
            )
        return update, record

    def _security(self, hop: _Hop, produced: Sequence[BaseMessage]) -> list[SecurityEntry]:
        """Refused tool calls of this hop.

        The guard's records, and any call outside the allowlist that reached an agent
        without a guard (its ToolNode has no such tool, so it was not executed either).
        """
        entries: list[SecurityEntry] = []
        recorded: set[str] = set()
        for message in produced:
            record = message.additional_kwargs.get("lgsp_security")
            if isinstance(message, ToolMessage) and isinstance(record, Mapping):
                recorded.add(message.tool_call_id)
                entries.append(
                    self._entry(
                        hop, record["tool"], record.get("args", {}), str(record.get("reason", ""))
                    )
                )
        if self.allowed is None:
            return entries
        for message in produced:
            for call in getattr(message, "tool_calls", None) or []:
                if call["name"] not in self.allowed and call.get("id") not in recorded:
                    entries.append(
                        self._entry(
                            hop, call["name"], call.get("args", {}), "not in the worker's allowlist"
                        )
                    )
        return entries

    def _reviews(
        self, hop: _Hop, produced: Sequence[BaseMessage], output: Any
    ) -> list[ReviewEntry]:
        """The reviews answered during this hop, with this hop's turn and step.

        The tool guard's notes on this hop's tool messages (`lgsp_review["answer"]`), and,
        when the agent is a domain of a tree, the reviews the domain recorded in the turn
        this hop ran (its own and its domains'), so the root's `reviews` holds every
        review of the tree.
        """
        found: list[Mapping[str, Any]] = []
        for message in produced:
            note = message.additional_kwargs.get("lgsp_review")
            if isinstance(message, ToolMessage) and isinstance(note, Mapping):
                answer = note.get("answer")
                if isinstance(answer, Mapping):
                    found.append(answer)
        if isinstance(output, Mapping) and is_domain_state(output):
            turn = output.get("turn")
            found.extend(
                entry
                for entry in output.get("reviews") or ()
                if isinstance(entry, Mapping) and entry.get("turn") == turn
            )
        return [
            cast(ReviewEntry, {**entry, "turn": hop.turn, "step": hop.route["step"]})
            for entry in found
        ]

    def _entry(self, hop: _Hop, tool: str, args: Any, reason: str) -> SecurityEntry:
        _log.warning("worker %r: refused tool call %r (%s)", self.worker.name, tool, reason)
        return SecurityEntry(
            turn=hop.turn,
            step=hop.route["step"],
            worker=self.worker.name,
            tool=storable(tool),
            args=storable_value(dict(args)),
            kind="out_of_scope",
            reason=storable(reason),
        )

    def _within_hop_entry(
        self,
        hop: _Hop,
        given: Sequence[BaseMessage],
        output: Mapping[str, Any],
        removed: set[str],
    ) -> CompactionEntry:
        counter = self.meter.counter if self.meter is not None else count_tokens_approximately
        return CompactionEntry(
            turn=hop.turn,
            step=hop.route["step"],
            worker=self.worker.name,
            reason="within_hop",
            tokens_before=counter(list(given)),
            tokens_after=counter(list(output["messages"])),
            removed=len(removed),
            attempts=1,
            error=None,
        )

    def _failed(
        self, state: SupervisorState, exc: BaseException, config: RunnableConfig
    ) -> dict[str, Any]:
        """A `failed` hop for an attempt that raised (after the retries).

        The run's secrets are scrubbed from the exception's text before it is cut to
        length and stored (ledger, slot, the supervisor's next prompt).
        """
        text = truncate(RunSecrets(config).scrub(f"{type(exc).__name__}: {exc}"), ERROR_MAX_CHARS)
        route = route_of(state, self.worker.name) or RouteState(
            next=self.worker.name,
            instructions="",
            step=state.get("step", 0),
            decided_by="model",
        )
        task = WorkerTask(
            worker=self.worker.name,
            step=max(route["step"], 1),
            task=state.get("task", ""),
            instructions=route["instructions"],
        )
        prompt = HumanMessage(content=task.prompt(), id=str(uuid.uuid4()))
        result = WorkerResult(status="failed", error=text)
        return hop_update(
            self.worker.name,
            route,
            state.get("turn", 1),
            [prompt],
            result.model_dump(),
            result,
            serial=self._serial(state),
        )


def _compacted_within_hop(
    given: Sequence[BaseMessage], output: Any
) -> tuple[BaseMessage, set[str]] | None:
    """The summary and the replaced ids, when the agent compacted what it was given."""
    if not isinstance(output, Mapping) or not isinstance(output.get("messages"), list):
        return None
    returned = {getattr(m, "id", None) for m in output["messages"]}
    removed = {m.id for m in given if m.id and m.id not in returned}
    summaries = [
        m for m in output["messages"] if isinstance(m, BaseMessage) and is_summary_message(m)
    ]
    if not removed or not summaries:
        return None
    return summaries[-1], removed


def _scrubbing(fn: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    """A function worker whose exceptions leave it scrubbed of the run's secrets.

    The function's own trace run records the exception it raises; one whose text (or a
    chained exception's) holds a secret is replaced by a `ScrubbedError` (its type and
    scrubbed message), raised `from None`. The worker node unwraps it
    (`original_error`), so retries still see the original.
    """
    if is_async:

        async def acall(task: WorkerTask) -> Any:
            try:
                return await fn(task)
            except GraphBubbleUp:
                raise
            except Exception as exc:
                stand_in = scrubbed_error(exc, RunSecrets().values)
                if stand_in is None:
                    raise
                raise stand_in from None

        return acall

    def call(task: WorkerTask) -> Any:
        try:
            return fn(task)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            stand_in = scrubbed_error(exc, RunSecrets().values)
            if stand_in is None:
                raise
            raise stand_in from None

    return call


def _retries(policy: RetryPolicy, exc: Exception) -> bool:
    """Whether `policy.retry_on` (a predicate, an exception type or several) covers `exc`."""
    retry_on = policy.retry_on
    if isinstance(retry_on, type):
        return isinstance(exc, retry_on)
    if isinstance(retry_on, Sequence):
        return isinstance(exc, tuple(retry_on))
    return bool(retry_on(exc))


def _namespace_violation(worker: str, exc: ParentCommand) -> WorkerResult:
    """A worker tried to write the supervisor's state (`Command(graph=Command.PARENT)`)."""
    goto = getattr(exc.args[0], "goto", None) if exc.args else None
    return WorkerResult(
        status="failed",
        error=(
            f"worker {worker!r} tried to update the supervisor's state or route to {goto!r} "
            "with Command(graph=Command.PARENT); workers only write their own slot, so the "
            "command was refused. Return a result instead and let the supervisor route."
        ),
    )


def hop_update(
    worker: str,
    route: RouteState,
    turn: int,
    messages: Sequence[BaseMessage],
    entry: Mapping[str, Any],
    result: WorkerResult,
    *,
    refused: Sequence[str] = (),
    serial: bool = True,
) -> dict[str, Any]:
    """The state update for one finished hop: the worker's slot, one ledger line, no route.

    A branch of a parallel decision (`serial=False`) leaves `route` alone: its siblings
    finish in the same super-step, and the supervisor clears the fan-out when it decides.
    """
    ledger = LedgerEntry(
        turn=turn,
        step=route["step"],
        worker=worker,
        instructions=one_line(storable(route["instructions"]), 200),
        decided_by=route["decided_by"],
        status=result.status,
        summary=result.summary,
        error=result.error,
        refused=list(refused),
    )
    update: dict[str, Any] = {
        "workers": {worker: {"messages": list(messages), "results": [dict(entry)]}},
        "ledger": [ledger],
    }
    if serial:
        update["route"] = None
    return update

"""The node that runs one worker hop inside its own namespace (private).

It reads only what the hop's `WorkerTask` needs, runs the agent, and writes only its own
slot, one ledger entry and its usage; exceptions, time-outs and garbage become a `failed`
result, never a crash. See docs/concepts/workers.md and docs/architecture.md ("Fallbacks
and circuit breakers").
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
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import (
    DEFAULT_RECURSION_LIMIT,
    ensure_config,
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
    patch_config,
    set_config_context,
    var_child_runnable_config,
)
from langchain_core.runnables.utils import coro_with_context
from langgraph.config import get_store
from langgraph.errors import GraphBubbleUp, ParentCommand, is_invalid_resume
from langgraph.pregel import Pregel
from langgraph.pregel.remote import RemoteGraph
from langgraph.store.base import BaseStore
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro._breakers import BREAKER_LOGGER, Breaker, breaker_namespace
from langgraph_supervisor_pro._contracts import WorkerResult, WorkerTask
from langgraph_supervisor_pro._graph.budgets import Budgets
from langgraph_supervisor_pro._graph.circuit import Admission, Outcome, Transact, admit, report
from langgraph_supervisor_pro._graph.coerce import (
    ERROR_MAX_CHARS,
    coerce_worker_output,
    is_domain_graph,
    is_domain_state,
)
from langgraph_supervisor_pro._graph.fanout import route_of
from langgraph_supervisor_pro._graph.node import GraphNode
from langgraph_supervisor_pro._graph.remote_hop import RemoteHop
from langgraph_supervisor_pro._graph.usage import UsageMeter, UsageRecorder
from langgraph_supervisor_pro._internal.aio import abandonable, run_sync
from langgraph_supervisor_pro._internal.configs import with_handler, with_trace
from langgraph_supervisor_pro._internal.hop import (
    TRANSIENT_KEY,
    HopContext,
    hop_context,
    prompt_digest,
    url_id,
    with_hop,
)
from langgraph_supervisor_pro._internal.model_identity import fingerprint
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
from langgraph_supervisor_pro._state import (
    BreakerMark,
    CompactionEntry,
    LedgerEntry,
    ReviewEntry,
    RouteState,
    SecurityEntry,
    SupervisorState,
)
from langgraph_supervisor_pro._verification import (
    SchemaCheck,
    Verdict,
    checker_messages,
    failed_verification,
    verdict_of,
)
from langgraph_supervisor_pro._workers import Worker, agent_kind
from langgraph_supervisor_pro.compaction._compactor import (
    is_summary_message,
    is_truncation_marker,
    truncation_note,
)
from langgraph_supervisor_pro.errors import BudgetExceededError, LGSPError, WorkerTimeoutError
from langgraph_supervisor_pro.observability._propagation import trace_context_metadata
from langgraph_supervisor_pro.persistence._memory import (
    aload_result,
    latest_results,
    load_result,
    output_key,
    output_namespace,
    reference,
    stored_value,
    thread_of,
)
from langgraph_supervisor_pro.review._guard import SECURITY_LOGGER

_log = logging.getLogger(SECURITY_LOGGER)
_breaker_log = logging.getLogger(BREAKER_LOGGER)


@dataclass(frozen=True)
class _Hop:
    """Everything a worker node needs for one hop, read from state."""

    task: WorkerTask
    route: RouteState
    turn: int
    autonomy: str | None = None
    serial: bool = True  # False for one branch of a parallel decision

    @cached_property
    def prompt(self) -> str:
        """The hop's prompt text (`WorkerTask.prompt`), built once per hop."""
        return self.task.prompt()


@dataclass(frozen=True)
class _Runner:
    """An agent that can answer a hop: the worker's own, or the worker named as its fallback."""

    name: str  # whose agent it is
    runnable: Runnable[Any, Any]
    is_async: bool
    takes_messages: bool
    keeps_history: bool  # a stateful subgraph keeps its own messages: it is sent the prompt
    transient: bool  # a graph agent (not a domain, not stateful): checkpoints are scratch
    timeout: float | None
    retry: RetryPolicy
    allowed: frozenset[str] | None
    breaker: Breaker | None
    model: tuple[str | None, str | None] = (None, None)  # (provider, name) of `Worker.model`

    @classmethod
    def of(cls, worker: Worker, agent: Runnable[Any, Any] | Callable[..., Any]) -> _Runner:
        if isinstance(agent, RemoteGraph):  # a remote domain keeps its history there
            return replace(cls.of(worker, RemoteHop(agent, worker=worker.name)), keeps_history=True)
        kind = agent_kind(worker.name, agent)
        is_async = kind == "async"
        stateful = isinstance(agent, Pregel) and agent.checkpointer is True
        return cls(
            name=worker.name,
            runnable=(
                agent
                if isinstance(agent, Runnable)
                else _FunctionAgent(_scrubbing(agent, is_async), name=f"{worker.name}.agent")
            ),
            is_async=is_async,
            takes_messages=kind == "runnable",
            # A graph compiled with `checkpointer=True` keeps its messages across visits.
            keeps_history=stateful,
            # Else its checkpoints serve only the hop in flight: `open_checkpointer`'s
            # savers delete them once the hop is recorded.
            transient=isinstance(agent, Pregel) and not stateful and not is_domain_graph(agent),
            timeout=worker.timeout,
            retry=worker.retry,
            allowed=frozenset(worker.tool_names) if worker.tools is not None else None,
            breaker=worker.breaker,
            model=(fingerprint(worker.model) or (None, None)) if worker.model else (None, None),
        )


@dataclass(frozen=True)
class _Ran:
    """An agent's answer to the hop, coerced and checked (not yet written)."""

    hop: _Hop
    sent: list[BaseMessage]
    output: Any
    result: WorkerResult
    produced: list[BaseMessage]
    store: BaseStore | None
    refused: bool = False  # a check (`output_schema`, `verify`) refused a success
    allowed: frozenset[str] | None = None  # the allowlist of the agent that answered
    runner: _Runner | None = None  # the agent that answered (None: a fallback function)
    takes_messages: bool = False  # it answered in messages (a Runnable), not a return value

    @property
    def why(self) -> str | None:
        """Why the hop failed, as the ledger's `fallback` field says it; None if it did not."""
        if self.result.status != "failed":
            return None
        error = self.result.error or "no reason given"
        return error if self.refused else f"failed: {error}"


@dataclass(frozen=True)
class _Failure:
    """A hop that produced no result: an exception after the retries, or an open breaker."""

    error: str  # as the ledger's `error` says it (`RuntimeError: feed down`)
    why: str  # as its `fallback` says it (`error: RuntimeError: feed down`)
    mark: BreakerMark | None = None  # the breaker state that refused the hop


_RECORDER_KEY = "__lgsp_usage_recorder"
"""The `configurable` key under which a hop passes its usage recorder to its attempts (a `__`
key: no saver copies it into checkpoint metadata, where its lock could not be pickled)."""


class WorkerNode:
    """Runs one worker hop; `invoke` and `ainvoke` share every part but the awaits."""

    def __init__(
        self,
        worker: Worker,
        *,
        supervisor: str,
        meter: UsageMeter | None,
        agent: Runnable[Any, Any] | Callable[..., Any],
        fallback: tuple[Worker, Runnable[Any, Any] | Callable[..., Any]] | None = None,
        summarizer_meter: UsageMeter | None = None,
        budgets: Budgets | None = None,
    ) -> None:
        self.worker = worker
        self.supervisor = supervisor
        self.meter = meter
        self.summarizer_meter = summarizer_meter
        self.budgets = budgets if budgets is not None else Budgets()
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
        self._own = _Runner.of(worker, agent)
        self._fallback_runner = _Runner.of(*fallback) if fallback is not None else None
        self._fallback_fn = (
            worker.fallback if callable(worker.fallback) and fallback is None else None
        )
        if isinstance(worker.fallback, str) and (
            fallback is None or fallback[0].name != worker.fallback
        ):
            raise ValueError(
                f"Worker.fallback: worker {worker.name!r} falls back to {worker.fallback!r}, "
                "whose agent was not given"
            )

    def runnable(self) -> GraphNode[SupervisorState, dict[str, Any]]:
        """The node as a Runnable; a compiled graph agent is named as its subgraph."""
        runnable = self._own.runnable
        subgraph = runnable if isinstance(runnable, Pregel) else None
        return GraphNode(self.worker.name, self.invoke, self.ainvoke, subgraph=subgraph)

    def _serial(self, state: SupervisorState) -> bool:
        """Whether this hop is the serial route (not one branch of a parallel decision)."""
        route = state.get("route")
        return route is not None and route["next"] == self.worker.name

    def _reading(self, state: SupervisorState, store: BaseStore | None) -> Steps[_Hop]:
        """The hop, with the outputs it `reads` loaded from the store."""
        route = route_of(state, self.worker.name)
        if route is None:
            raise RuntimeError(
                f"worker {self.worker.name!r} ran without a route addressed to it "
                f"(route={state.get('route')!r}, fanout={state.get('fanout')!r}); worker "
                "nodes are only reached from the supervisor"
            )
        workers = state.get("workers") or {}
        reads: dict[str, WorkerResult] = {}
        for name, entry in latest_results(workers, self.worker.reads).items():
            reads[name] = yield Call(
                partial(load_result, store, entry), partial(aload_result, store, entry)
            )
        slot = workers.get(self.worker.name)
        task = WorkerTask(
            worker=self.worker.name,
            step=route["step"],
            task=state.get("task", ""),
            instructions=route["instructions"],
            messages=list(slot["messages"]) if slot else [],
            reads=reads,
        )
        return _Hop(
            task=task,
            route=route,
            turn=state.get("turn", 1),
            autonomy=state.get("autonomy"),
            serial=self._serial(state),
        )

    def _payload(
        self, hop: _Hop, config: RunnableConfig, runner: _Runner
    ) -> tuple[Any, list[BaseMessage]]:
        # The prompt's id comes from the task's namespace (LangGraph's task id): a hop re-run
        # after a crash or an interrupt sends the message a sub-agent already holds.
        namespace = str(config.get("configurable", {}).get("checkpoint_ns", ""))
        seed = f"lgsp:{namespace}:prompt"
        prompt_id = url_id(seed) if namespace else str(uuid.uuid4())
        prompt = HumanMessage(content=hop.prompt, id=prompt_id)
        if runner.keeps_history:
            return {"messages": [prompt]}, [prompt]
        if runner.takes_messages:
            return {"messages": [*hop.task.messages, prompt]}, [prompt]
        return hop.task, [prompt]

    def _path(self, config: RunnableConfig, name: str) -> tuple[str, ...]:
        """A worker's path from the root of the tree (the parent's hop context), down to it."""
        parent = hop_context(config)  # set when this graph is a domain of a tree
        return (*(parent.path if parent is not None else ()), name)

    def _config(self, config: RunnableConfig, hop: _Hop, runner: _Runner) -> RunnableConfig:
        # The agent's middleware reads the hop from this typed context.
        parent = hop_context(config)
        recorder = (config.get("configurable") or {}).get(_RECORDER_KEY)
        levels = recorder.levels if isinstance(recorder, UsageRecorder) else ()
        context = HopContext(
            path=self._path(config, self.worker.name),
            worker=self.worker.name,
            step=hop.route["step"],
            turn=hop.turn,
            task=hop.task.task,
            instructions=hop.route["instructions"],
            dispatched_at=hop.route.get("at"),
            tier=hop.autonomy,
            digest=prompt_digest(hop.prompt),
            budgets=(*(parent.budgets if parent is not None else ()), *levels),
        )
        # The same facts for traces only, inherited below until a domain's nodes clear them.
        metadata: dict[str, Any] = {
            "lgsp_worker": self.worker.name,
            "lgsp_step": hop.route["step"],
            "lgsp_turn": hop.turn,
            "lgsp_instructions": hop.route["instructions"],
            "lgsp_autonomy": hop.autonomy,
            "lgsp_dispatched_at": hop.route.get("at"),
            "lgsp_path": "/".join(context.path),
            # The hop span's W3C trace context: a remote graph's server continues the trace.
            **trace_context_metadata(),
        }
        if runner.transient:
            metadata[TRANSIENT_KEY] = True
        tags = [f"lgsp:worker:{self.worker.name}"]
        if runner is not self._own:
            metadata["lgsp_fallback"] = runner.name
            tags.append(f"lgsp:fallback:{runner.name}")
        return with_hop(with_trace(config, metadata, tags), context)

    def invoke(self, state: SupervisorState, config: RunnableConfig) -> dict[str, Any]:
        """Run the hop synchronously, retrying transient errors per `Worker.retry`."""
        return drive(self._hop_steps(state, config))

    async def ainvoke(self, state: SupervisorState, config: RunnableConfig) -> dict[str, Any]:
        """Run the hop on the event loop, retrying transient errors per `Worker.retry`."""
        return await adrive(self._hop_steps(state, config))

    def _hop_steps(self, state: SupervisorState, config: RunnableConfig) -> Steps[dict[str, Any]]:
        """The hop, for both drivers: admission, attempts, fallback, update.

        An interrupt (`GraphBubbleUp`) passes through; an invalid resume is re-raised.
        Every model call of the hop (attempts, checks, fallback) is checked against the
        budgets in force and recorded in its `usage`.
        """
        name = self.worker.name
        recorder = self.budgets.recorder(
            state, config, worker=name, meter=self.meter, summarizer=self.summarizer_meter
        )
        config = with_handler(config, recorder, {_RECORDER_KEY: recorder})
        update = yield from self._outcome(state, config)
        route = route_of(state, name)
        step = route["step"] if route is not None else state.get("step", 0)
        usage = recorder.entries(turn=state.get("turn", 1), step=step, role="worker", worker=name)
        if usage:
            update["usage"] = usage
        return update

    def _outcome(self, state: SupervisorState, config: RunnableConfig) -> Steps[dict[str, Any]]:
        """The hop's update: its own answer, else its fallback's, else a failed hop."""
        first, mark = yield from self._guarded(state, config, self._own, verify=True)
        why = first.why
        if why is None or (self._fallback_runner is None and self._fallback_fn is None):
            if isinstance(first, _Ran):
                return (yield from self._written(state, first, config, breaker=mark))
            return self._failed(state, first.error, config, breaker=mark)
        second = yield from self._falling_back(state, config, first)
        primary = first if isinstance(first, _Ran) else None
        if isinstance(second, _Failure) or second.why is not None:
            name = (
                self._fallback_runner.name
                if self._fallback_runner is not None
                else getattr(self._fallback_fn, "__name__", "function")
            )
            error = truncate(f"{why}; then the fallback {name!r}: {second.why}", ERROR_MAX_CHARS)
            if isinstance(second, _Failure):
                return self._failed(state, error, config, breaker=mark, fallback=why)
            second = replace(second, result=WorkerResult(status="failed", error=error))
        return (
            yield from self._written(
                state, second, config, breaker=mark, fallback=why, primary=primary
            )
        )

    def _guarded(
        self, state: SupervisorState, config: RunnableConfig, runner: _Runner, *, verify: bool
    ) -> Steps[tuple[_Ran | _Failure, BreakerMark | None]]:
        """`runner`'s attempts, admitted and told how they ended by its breaker if any.

        Returns the outcome and the hop's ledger mark. A breaker whose state cannot be read
        or written refuses the hop (fails closed); one that misses an outcome lets it stand.
        """
        breaker = runner.breaker
        route = route_of(state, self.worker.name)
        if breaker is None or route is None:
            return (yield from self._attempts(state, config, runner, verify=verify)), None
        namespace = breaker_namespace(self.supervisor, self._path(config, runner.name))
        shown = "/".join(namespace[2:])  # for the log: `supervisor/quotes`
        thread = str((config.get("configurable") or {}).get("thread_id") or uuid.uuid4())
        hop = (
            f"{thread}|{'/'.join(self._path(config, self.worker.name))}|"
            f"{state.get('turn', 1)}|{route['step']}"
        )
        store = get_store()
        try:
            admission: Admission = yield Transact(
                store, namespace, lambda value: admit(value, breaker, breaker.clock(), hop)
            )
        except Exception as exc:
            text = RunSecrets(config).scrub(f"{type(exc).__name__}: {exc}")
            _breaker_log.warning("breaker %s: state unavailable (%s)", shown, text)
            reason = truncate(f"breaker state unavailable: {text}", ERROR_MAX_CHARS)
            return _Failure(error=reason, why=reason), None
        if admission.transition is not None:
            _breaker_log.info("breaker %s: %s (hop %s)", shown, admission.transition, hop)
        if admission.state == "open":
            reason = f"breaker open: {admission.detail}"
            mark = BreakerMark(state="open", failures=admission.failures, changed_to=None)
            return _Failure(error=reason, why=reason, mark=mark), mark
        outcome = yield from self._attempts(state, config, runner, verify=verify)
        failure = outcome.why
        try:
            reported: Outcome = yield Transact(
                store,
                namespace,
                lambda value: report(value, breaker, breaker.clock(), admission, hop, failure),
            )
        except Exception as exc:  # the hop's result stands; the breaker misses one outcome
            _breaker_log.warning(
                "breaker %s: could not record the outcome of hop %s (%s: %s)",
                shown,
                hop,
                type(exc).__name__,
                exc,
            )
            return outcome, None
        if reported.transition is not None:
            opened = reported.changed_to == "open"
            _breaker_log.log(
                logging.WARNING if opened else logging.INFO,
                "breaker %s: %s (hop %s)%s",
                shown,
                reported.transition,
                hop,
                f": {failure}" if failure and opened else "",
            )
        mark = BreakerMark(
            state="half_open" if admission.state == "half_open" else "closed",
            failures=reported.failures,
            changed_to=reported.changed_to,
        )
        return outcome, mark

    def _attempts(
        self, state: SupervisorState, config: RunnableConfig, runner: _Runner, *, verify: bool
    ) -> Steps[_Ran | _Failure]:
        """Attempts of `runner`'s agent until one answers or the retries run out."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return (yield from self._attempt(state, config, runner, verify=verify))
            except GraphBubbleUp:
                raise
            except Exception as exc:
                error = original_error(exc)  # a function worker's scrubbed stand-in
                delay = self._retry_delay(runner.retry, error, attempt)
                if delay is None:
                    return _exception_failure(error, config)
                yield Sleep(delay)

    def _retry_delay(self, policy: RetryPolicy, exc: Exception, attempt: int) -> float | None:
        """Seconds to wait before the next attempt per the worker's `RetryPolicy`, or None.

        Retries run here, not through `add_node(retry_policy=..., error_handler=...)`: that
        error handler also receives an invalid resume value, and the run could no longer be
        resumed. One (from the worker's own `interrupt(response_schema=...)`) is re-raised
        untouched here, so LangGraph handles it as it would without this package.
        """
        if is_invalid_resume(exc):
            raise exc
        if isinstance(exc, BudgetExceededError):  # spending again cannot help
            return None
        if attempt >= policy.max_attempts or not _retries(policy, exc):
            return None
        try:
            grown = policy.initial_interval * policy.backoff_factor ** (attempt - 1)
        except OverflowError:  # many attempts: the power outgrows a float
            grown = math.inf if policy.initial_interval else 0.0
        interval = min(policy.max_interval, grown)
        return interval + (random.uniform(0, 1) if policy.jitter else 0.0)

    def _attempt(
        self, state: SupervisorState, config: RunnableConfig, runner: _Runner, *, verify: bool
    ) -> Steps[_Ran]:
        """One attempt: read the results it depends on, call the agent, check its answer."""
        store = get_store()
        hop = yield from self._reading(state, store)
        payload, sent = self._payload(hop, config, runner)
        child = self._config(config, hop, runner)
        try:
            output = yield Call(
                lambda: self._call_agent(runner, payload, child),
                lambda: self._acall_agent(runner, payload, child),
            )
        except ParentCommand as exc:
            output = _namespace_violation(runner.name, exc)
        return (
            yield from self._settling(hop, sent, output, config, runner, verify=verify, store=store)
        )

    def _falling_back(
        self, state: SupervisorState, config: RunnableConfig, first: _Ran | _Failure
    ) -> Steps[_Ran | _Failure]:
        """The fallback's answer, checked by this worker's `output_schema` only.

        A named worker's agent runs as its own (its own fallback is not followed).
        """
        if self._fallback_runner is not None:
            answer, _ = yield from self._guarded(state, config, self._fallback_runner, verify=False)
            return answer
        function = self._fallback_fn
        assert function is not None
        store = get_store()
        try:
            hop = first.hop if isinstance(first, _Ran) else (yield from self._reading(state, store))
            task = hop.task
            output = yield MaybeAwait(lambda: function(task))
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return _exception_failure(exc, config)
        _, sent = self._payload(hop, config, self._own)
        return (
            yield from self._settling(hop, sent, output, config, None, verify=False, store=store)
        )

    def _call_agent(self, runner: _Runner, payload: Any, config: RunnableConfig) -> Any:
        """Call the agent from a sync hop, within its worker's timeout."""
        if runner.is_async:
            call: Callable[[], Any] = lambda: run_sync(  # noqa: E731
                lambda: runner.runnable.ainvoke(payload, config)
            )
        else:
            call = lambda: runner.runnable.invoke(payload, config)  # noqa: E731
        timeout = runner.timeout
        if timeout is None:
            return call()
        # Sync Python cannot be cancelled in-process: the attempt runs in a thread that
        # carries this context (callbacks, stream writer), and is abandoned on overrun.
        ctx = contextvars.copy_context()
        overrun = abandonable(ctx)  # a remote hop's relay stops writing to the stream
        pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"lgsp-{runner.name}"
        )
        try:
            future = pool.submit(ctx.run, call)
            try:
                return future.result(timeout=timeout)
            except concurrent.futures.TimeoutError as exc:
                overrun.set()
                raise WorkerTimeoutError(runner.name, timeout) from exc
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    async def _acall_agent(self, runner: _Runner, payload: Any, config: RunnableConfig) -> Any:
        """Call the agent on the event loop, within its worker's timeout (async cancels it)."""
        call = runner.runnable.ainvoke(payload, config)
        timeout = runner.timeout
        if timeout is None:
            return await call
        try:
            return await asyncio.wait_for(call, timeout)
        except TimeoutError as exc:
            raise WorkerTimeoutError(runner.name, timeout) from exc

    def _settling(
        self,
        hop: _Hop,
        sent: list[BaseMessage],
        output: Any,
        config: RunnableConfig,
        runner: _Runner | None,
        *,
        verify: bool,
        store: BaseStore | None,
    ) -> Steps[_Ran]:
        """What `runner`'s agent (None: the fallback function) returned, coerced and checked."""
        # The agent echoes back its own history: none of it is new output.
        given = [*hop.task.messages, *sent]
        name = runner.name if runner is not None else self.worker.name
        result, produced = coerce_worker_output(
            output, worker=name, sent=given, scrub=RunSecrets(config).scrub
        )
        checked = yield from self._verifying(hop, result, config, verify=verify)
        return _Ran(
            hop=hop,
            sent=sent,
            output=output,
            result=checked,
            produced=produced,
            store=store,
            refused=result.status == "success" and checked.status == "failed",
            allowed=runner.allowed if runner is not None else None,
            takes_messages=runner is not None and runner.takes_messages,
            runner=runner,
        )

    def _verifying(
        self, hop: _Hop, result: WorkerResult, config: RunnableConfig, *, verify: bool
    ) -> Steps[WorkerResult]:
        """`Worker.output_schema`, then `Worker.verify` (when `verify`), on a `success`.

        A refusal (or a check that raises) makes it `failed`; an interrupt passes through.
        """
        if result.status != "success":
            return result
        if self._schema is not None:
            value, problem = self._schema.check(result.result)
            if problem is not None:
                return failed_verification("output_schema", problem)
            result = result.model_copy(update={"result": value})
        check = self.worker.verify
        if check is None or not verify:
            return result
        checked = result
        try:
            if self._checker is not None:
                checker_config = with_trace(
                    config,
                    {"lgsp_role": "verifier", "lgsp_worker": self.worker.name},
                    [f"lgsp:verify:{self.worker.name}"],
                )
                messages = checker_messages(hop.task, checked)
                reply = yield Invoke(self._checker, messages, checker_config)
            else:
                function = check
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

    def _written(
        self,
        state: SupervisorState,
        ran: _Ran,
        config: RunnableConfig,
        *,
        breaker: BreakerMark | None = None,
        fallback: str | None = None,
        primary: _Ran | None = None,
    ) -> Steps[dict[str, Any]]:
        """The hop's state update from the answer `ran`, its output stored (with a store).

        `primary` is the worker's own refused answer when a fallback answered: its refused
        tool calls are recorded, not its messages. A store write that
        fails is retried per the worker's retry policy, then makes the hop `failed`.
        """
        name = self.worker.name
        hop, sent, result, produced, store = ran.hop, ran.sent, ran.result, ran.produced, ran.store
        given = [*hop.task.messages, *sent]
        record = None
        entry: dict[str, Any] = result.model_dump()
        thread_id = thread_of(config)
        if store is not None and thread_id:  # no thread (no checkpointer): kept in state
            turn, step = hop.turn, hop.route["step"]
            parent = hop_context(config)  # a domain of a tree: outputs under its path
            within = parent.path if parent is not None else ()
            record = (
                output_namespace(thread_id, name, within=within),
                output_key(turn, step),
                stored_value(name, turn, step, hop.route["instructions"], result),
            )
            entry = reference(thread_id, name, turn, step, result, within=within)
        if not ran.takes_messages and not produced:
            text = result.summary if record is not None else result.result_text() or result.summary
            produced = [AIMessage(content=text, name=name, id=str(uuid.uuid4()))]
        compacted = _compacted_within_hop(given, ran.output)
        if compacted is not None:  # the agent's CompactionMiddleware replaced part of it
            summary, removed = compacted
            sent = [m for m in sent if m.id not in removed]
            history = [m.id for m in hop.task.messages if m.id in removed]
            if history or not is_truncation_marker(summary):
                produced = [m for m in produced if m.id != summary.id]
        security = self._security(hop, produced, ran.allowed)
        if primary is not None:  # the refused answer's refused tool calls lead
            security = [*self._security(primary.hop, primary.produced, primary.allowed), *security]
        update = hop_update(
            name,
            hop.route,
            hop.turn,
            [*sent, *produced],
            entry,
            result,
            refused=[e["tool"] for e in security],
            serial=hop.serial,
            fallback=fallback,
            breaker=breaker,
        )
        if compacted is not None:
            slot_write = update["workers"][name]
            if history:  # the summary takes the place of the replaced history
                slot_write["compact"] = {"remove": history, "summary": summary}
            elif not is_truncation_marker(summary):  # only this hop's own messages were
                slot_write["messages"] = [summary, *slot_write["messages"]]  # replaced: it leads
            # (a truncation of only this hop's own turns leaves its marker in its place)
            update["compactions"] = [
                self._within_hop_entry(hop, [*given, *produced], ran.output, removed, summary)
            ]
        if security:
            update["security"] = security
        reviews = self._reviews(hop, produced, ran.output)
        if reviews:
            update["reviews"] = reviews
        self._account(ran, produced, config)
        attempt = 0
        while record is not None and store is not None:
            attempt += 1
            try:
                yield Call(partial(store.put, *record), partial(store.aput, *record))
                break
            except Exception as exc:
                delay = self._retry_delay(self.worker.retry, exc, attempt)
                if delay is None:
                    error = _exception_failure(exc, config).error
                    return self._failed(state, error, config, breaker=breaker, fallback=fallback)
                yield Sleep(delay)
        return update

    def _account(self, ran: _Ran, produced: Sequence[BaseMessage], config: RunnableConfig) -> None:
        """Count the calls behind the answer that the hop's recorder did not see.

        A domain's own `usage` of its last turn replaces what the recorder saw under it
        (it holds the calls made before an interrupt, too); an agent's replies replayed from
        its checkpoint after an interrupt are counted from their `usage_metadata`.
        """
        recorder = (config.get("configurable") or {}).get(_RECORDER_KEY)
        runner = ran.runner
        if not isinstance(recorder, UsageRecorder) or runner is None:
            return
        path = self._path(config, runner.name)
        output = ran.output
        if isinstance(output, Mapping) and is_domain_state(output):
            turn = output.get("turn")
            mine = [u for u in output.get("usage") or () if u.get("turn") == turn]
            recorder.adopt(mine, under=path)
        else:
            recorder.replayed(produced, model=runner.model, path=path)

    def _security(
        self, hop: _Hop, produced: Sequence[BaseMessage], allowed: frozenset[str] | None
    ) -> list[SecurityEntry]:
        """Refused tool calls of this hop: the guard's, and calls outside the allowlist."""
        refused: list[tuple[str, Any, str]] = []  # (tool, args, reason)
        recorded: set[str] = set()
        for message in produced:
            record = message.additional_kwargs.get("lgsp_security")
            if isinstance(message, ToolMessage) and isinstance(record, Mapping):
                recorded.add(message.tool_call_id)
                reason = str(record.get("reason", ""))
                refused.append((record["tool"], record.get("args", {}), reason))
        if allowed is not None:  # an agent without a guard: its ToolNode has no such tool
            for message in produced:
                for call in getattr(message, "tool_calls", None) or []:
                    if call["name"] not in allowed and call.get("id") not in recorded:
                        reason = "not in the worker's allowlist"
                        refused.append((call["name"], call.get("args", {}), reason))
        entries: list[SecurityEntry] = []
        for tool, args, reason in refused:
            _log.warning("worker %r: refused tool call %r (%s)", self.worker.name, tool, reason)
            entries.append(
                SecurityEntry(
                    turn=hop.turn,
                    step=hop.route["step"],
                    worker=self.worker.name,
                    tool=storable(tool),
                    args=storable_value(dict(args)),
                    kind="out_of_scope",
                    reason=storable(reason),
                )
            )
        return entries

    def _reviews(
        self, hop: _Hop, produced: Sequence[BaseMessage], output: Any
    ) -> list[ReviewEntry]:
        """The reviews answered during this hop, with this hop's turn and step.

        The tool guard's notes (`lgsp_review["answer"]`), and a domain's reviews of the
        turn this hop ran, so the root's `reviews` holds every review of the tree.
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

    def _within_hop_entry(
        self,
        hop: _Hop,
        given: Sequence[BaseMessage],
        output: Mapping[str, Any],
        removed: set[str],
        replacement: BaseMessage,
    ) -> CompactionEntry:
        counter = self.meter.counter if self.meter is not None else count_tokens_approximately
        entry = CompactionEntry(
            turn=hop.turn,
            step=hop.route["step"],
            worker=self.worker.name,
            reason="within_hop",
            tokens_before=counter(list(given)),
            tokens_after=counter(list(output["messages"])),
            removed=len(removed),
            attempts=1,
            error=None,
            kind="summary",
        )
        if is_truncation_marker(replacement):  # the summarizer failed: the oldest turns went
            note = truncation_note(replacement)
            entry["kind"] = "truncated"
            entry["removed"] = int(note.get("removed") or len(removed))
            entry["attempts"] = int(note.get("attempts") or 0)
            entry["error"] = storable(str(note.get("error") or "")) or None
            stored = note.get("stored")
            if isinstance(stored, Mapping):
                entry["stored"] = {"namespace": list(stored["namespace"]), "key": stored["key"]}
        return entry

    def _failed(
        self,
        state: SupervisorState,
        error: str,
        config: RunnableConfig,
        *,
        breaker: BreakerMark | None = None,
        fallback: str | None = None,
    ) -> dict[str, Any]:
        """A `failed` hop that produced no result: `error` is already scrubbed and cut."""
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
        result = WorkerResult(status="failed", error=error)
        return hop_update(
            self.worker.name,
            route,
            state.get("turn", 1),
            [prompt],
            result.model_dump(),
            result,
            serial=self._serial(state),
            fallback=fallback,
            breaker=breaker,
        )


def _exception_failure(exc: BaseException, config: RunnableConfig) -> _Failure:
    """An attempt that raised (after the retries): its text scrubbed, then cut to length.

    Our errors are stored without their troubleshooting link (`LGSPError.message`).
    """
    detail = exc.message if isinstance(exc, LGSPError) else exc
    text = truncate(RunSecrets(config).scrub(f"{type(exc).__name__}: {detail}"), ERROR_MAX_CHARS)
    return _Failure(error=text, why=truncate(f"error: {text}", ERROR_MAX_CHARS))


def _compacted_within_hop(
    given: Sequence[BaseMessage], output: Any
) -> tuple[BaseMessage, set[str]] | None:
    """The summary and the replaced ids, when the agent compacted what it was given."""
    if not isinstance(output, Mapping) or not isinstance(output.get("messages"), list):
        return None
    returned = {getattr(m, "id", None) for m in output["messages"]}
    removed = {m.id for m in given if m.id and m.id not in returned}
    known = {m.id for m in given}
    markers = [  # a truncation (the summarizer failed) keeps the latest summary as it was
        m
        for m in output["messages"]
        if isinstance(m, BaseMessage) and is_truncation_marker(m) and m.id not in known
    ]
    if markers:  # it may have dropped only the hop's own turns (none of `given`)
        return markers[-1], removed
    if not removed:  # the agent kept what it was given: no summary to look for
        return None
    summaries = [
        m for m in output["messages"] if isinstance(m, BaseMessage) and is_summary_message(m)
    ]
    if not summaries:
        return None
    return summaries[-1], removed


class _FunctionAgent(RunnableLambda[WorkerTask, Any]):
    """A function worker as its hop calls it: one run per call, named `<worker>.agent`.

    What a `RunnableLambda` of a one-argument function does, without inspecting the
    function's signature (and its executor wrapper's) on every call: the run, the child
    config in the context (the models and graphs the function calls inherit the hop's
    callbacks, its usage recorder among them, and its metadata), a sync function in the
    executor under `ainvoke`. When the hop's callbacks are LangGraph's manager holding only
    usage recorders (no tracer, no other handler: LangGraph's own configuration found
    none), nothing could see the run, so none is opened: the function runs in the hop's
    config, and the models it calls still report to the recorder.
    """

    def __init__(self, fn: Callable[[WorkerTask], Any], *, name: str) -> None:
        super().__init__(fn, name=name)
        self._fn = fn
        self._is_async = hasattr(self, "afunc")

    def invoke(self, input: WorkerTask, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Call a sync function in a run of its own."""
        if self._is_async:
            raise TypeError(
                "Cannot invoke a coroutine function synchronously.Use `ainvoke` instead."
            )
        if config is not None and _unseen(config):
            return _in_context(config).run(self._fn, input)
        config = ensure_config(config)
        run = get_callback_manager_for_config(config).on_chain_start(
            None, input, name=config.get("run_name") or self.name, run_id=config.pop("run_id", None)
        )
        try:
            with set_config_context(patch_config(config, callbacks=run.get_child())) as context:
                output = context.run(self._fn, input)
        except BaseException as exc:
            run.on_chain_error(exc)
            raise
        run.on_chain_end(output)
        return output

    async def ainvoke(
        self, input: WorkerTask, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        """Await an async function, or run a sync one in the executor, in a run of its own."""
        if config is not None and _unseen(config):
            return await self._acall(input, _in_context(config))
        config = ensure_config(config)
        run = await get_async_callback_manager_for_config(config).on_chain_start(
            None, input, name=config.get("run_name") or self.name, run_id=config.pop("run_id", None)
        )
        try:
            with set_config_context(patch_config(config, callbacks=run.get_child())) as context:
                output = await self._acall(input, context)
        except BaseException as exc:
            await run.on_chain_error(exc)
            raise
        await run.on_chain_end(output)
        return output

    async def _acall(self, input: WorkerTask, context: contextvars.Context) -> Any:
        if self._is_async:
            return await coro_with_context(self._fn(input), context)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, context.run, _called, self._fn, input)


def _in_context(config: RunnableConfig) -> contextvars.Context:
    """A copy of this context whose runnable config is `config`.

    With LangChain's default recursion limit when `config` sets none, as the child config
    of a run has it (`ensure_config`).
    """
    if "recursion_limit" not in config:
        config = {**config, "recursion_limit": DEFAULT_RECURSION_LIMIT}
    context = contextvars.copy_context()
    context.run(var_child_runnable_config.set, config)
    return context


def _called(fn: Callable[[WorkerTask], Any], task: WorkerTask) -> Any:
    """`fn(task)` in the executor: a `StopIteration` would leave its future pending forever."""
    try:
        return fn(task)
    except StopIteration as exc:
        raise RuntimeError("the function worker raised StopIteration") from exc


def _unseen(config: RunnableConfig) -> bool:
    """Whether a run under `config` is seen by no handler but usage recorders.

    Only for LangGraph's callback manager: its configuration already added whatever the
    environment and the context ask for (a LangSmith tracer, a debug handler, hooks).
    """
    callbacks = config.get("callbacks")
    return isinstance(callbacks, BaseCallbackManager) and all(
        isinstance(handler, UsageRecorder) for handler in callbacks.handlers
    )


def _scrubbing(fn: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    """A function worker whose exceptions leave it scrubbed of the run's secrets.

    One holding a secret is replaced by a `ScrubbedError` (its trace run records that),
    raised `from None`; the node unwraps it (`original_error`) for its retries.
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
    fallback: str | None = None,
    breaker: BreakerMark | None = None,
) -> dict[str, Any]:
    """The state update for one finished hop: the worker's slot, one ledger line, no route.

    A branch of a parallel decision (`serial=False`) leaves `route` alone: the supervisor
    clears the fan-out when it decides. `fallback` and `breaker` go to the ledger entry.
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
    if fallback is not None:
        ledger["fallback"] = storable(fallback)
    if breaker is not None:
        ledger["breaker"] = breaker
    update: dict[str, Any] = {
        "workers": {worker: {"messages": list(messages), "results": [dict(entry)]}},
        "ledger": [ledger],
    }
    if serial:
        update["route"] = None
    return update

"""The judge step: scores a sample of completed turns with the online judge (private).

A `done` turn in the sample with no verdict yet (in the state or the store) is shown to
the judge model; the verdict goes to the store first (queued when low), then the state.
Nothing the judge does changes the run: every failure is recorded in the verdict's `error`.
"""

from __future__ import annotations

import asyncio
import contextvars
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import UTC, datetime
from functools import partial
from typing import Any, NamedTuple

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import merge_configs
from langchain_core.tracers.langchain import LangChainTracer
from langgraph.config import get_store
from langgraph.constants import TAG_NOSTREAM
from langgraph.errors import GraphBubbleUp
from langgraph.graph import END
from pydantic import ValidationError

from langgraph_supervisor_pro._budget import Budget
from langgraph_supervisor_pro._graph.names import JUDGE_NODE
from langgraph_supervisor_pro._graph.node import GraphNode
from langgraph_supervisor_pro._graph.usage import UsageRecorder
from langgraph_supervisor_pro._internal.model_identity import ModelUse, fingerprint, same_model
from langgraph_supervisor_pro._internal.records import namespace_path
from langgraph_supervisor_pro._internal.scrub import RunSecrets
from langgraph_supervisor_pro._internal.storable import storable
from langgraph_supervisor_pro._internal.text import content_text, one_line, truncate
from langgraph_supervisor_pro._internal.twins import Call, Steps, adrive, drive
from langgraph_supervisor_pro._state import JudgementEntry, SupervisorState
from langgraph_supervisor_pro.errors import JudgeTimeoutError
from langgraph_supervisor_pro.evals._judge import JudgeVerdict, OnlineJudge, judge_key, judged
from langgraph_supervisor_pro.evals._judge_queue import JUDGE_NAMESPACE

_ERROR_CHARS = 500
_TASK_CHARS = 500
_FEEDBACK_NAMESPACE = uuid.UUID("6f1d3c1e-9a5b-4c47-8f0e-2b7d5e4a9c11")
"""Feedback ids are uuid5(this, key): one turn's feedback has one id, however often sent."""


def model_label(model: BaseChatModel) -> str:
    """The model as provider/model name (its class name when it names no model)."""
    mark = fingerprint(model)
    return f"{mark[0]}/{mark[1]}" if mark is not None else type(model).__name__


def refuse_same_model(judge: OnlineJudge, uses: Sequence[ModelUse]) -> None:
    """Refuse a judge that is one of the graph's models, naming both places and the fix."""
    for use in uses:
        if not same_model(judge.model, use.model):
            continue
        how = (
            "the same object"
            if judge.model is use.model
            else f"the same provider and model name, {model_label(use.model)!r}"
        )
        raise ValueError(
            f"judge: OnlineJudge.model is the same model as {use.place} ({how}); a judge "
            "must not grade its own work: give OnlineJudge(model=...) a different model "
            "(another provider or model name)"
        )


def _traced_run(config: RunnableConfig) -> Any:
    """The LangSmith run of this node (whose `trace_id` is the root run's id), when traced."""
    manager = config.get("callbacks")
    if not isinstance(manager, BaseCallbackManager) or manager.parent_run_id is None:
        return None
    for handler in [*manager.handlers, *manager.inheritable_handlers]:
        if isinstance(handler, LangChainTracer):
            run = handler.run_map.get(str(manager.parent_run_id))
            if run is not None and run.trace_id is not None:
                return run
    return None


class _Ask(NamedTuple):
    """The judge model's call, bounded by the judge's timeout (an `Io` of the twins).

    Under `drive` a bounded call runs in a worker thread (past the timeout it is left to
    finish, its answer dropped: a blocking call cannot be interrupted); `adrive` cancels it.
    """

    runnable: Runnable[Any, Any]
    input: Any
    config: RunnableConfig
    timeout: float | None

    def run(self) -> Any:
        if self.timeout is None:
            return self.runnable.invoke(self.input, self.config)
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lgsp-judge")
        context = contextvars.copy_context()
        future = pool.submit(context.run, self.runnable.invoke, self.input, self.config)
        try:
            return future.result(timeout=self.timeout)
        except FutureTimeout:
            raise JudgeTimeoutError(self.timeout) from None
        finally:
            pool.shutdown(wait=False)

    async def arun(self) -> Any:
        if self.timeout is None:
            return await self.runnable.ainvoke(self.input, self.config)
        try:
            return await asyncio.wait_for(
                self.runnable.ainvoke(self.input, self.config), self.timeout
            )
        except TimeoutError:
            raise JudgeTimeoutError(self.timeout) from None


class _Turn(NamedTuple):
    """A turn to judge: its key, thread, domain path and number."""

    key: str
    thread: str
    path: list[str]
    turn: int


class JudgeNode:
    """The judge node. Built by `create_supervisor(judge=...)`; not public API."""

    def __init__(self, judge: OnlineJudge, *, graph: str, prices: Budget | None = None) -> None:
        self.judge = judge
        self.prices = prices
        self.graph = graph
        self.label = model_label(judge.model)
        try:
            self._structured = judge.model.with_structured_output(JudgeVerdict)
        except NotImplementedError as exc:
            raise TypeError(
                f"OnlineJudge.model: {type(judge.model).__name__} does not support "
                "with_structured_output; give a chat model that does (the judge answers a "
                "JudgeVerdict)"
            ) from exc
        self._projects: dict[str, Any] = {}

    def runnable(self) -> GraphNode[SupervisorState, dict[str, Any]]:
        """The node as a Runnable with native sync and async bodies."""
        return GraphNode(JUDGE_NODE, self.invoke, self.ainvoke)

    def route(self, state: SupervisorState, config: RunnableConfig) -> str:
        """After synthesis: the judge step for a turn to judge, else END (no step to pay)."""
        return JUDGE_NODE if self._due(state, config) is not None else END

    def _due(self, state: SupervisorState, config: RunnableConfig) -> _Turn | None:
        if state.get("status") != "done":
            return None
        turn = state.get("turn", 1)
        if any(e["turn"] == turn for e in state.get("judgements") or ()):
            return None
        configurable = config.get("configurable") or {}
        thread = str(configurable.get("thread_id") or state.get("task_message_id") or "")
        # The domain path: "ops|judge:<task>" gives ["ops"].
        path = list(namespace_path(str(configurable.get("checkpoint_ns") or ""))[:-1])
        key = judge_key(thread, turn, path)
        return _Turn(key, thread, path, turn) if judged(key, self.judge.sample) else None

    def invoke(self, state: SupervisorState, config: RunnableConfig) -> dict[str, Any]:
        """Judge the turn synchronously."""
        return drive(self._judging(state, config))

    async def ainvoke(self, state: SupervisorState, config: RunnableConfig) -> dict[str, Any]:
        """Judge the turn on the event loop."""
        return await adrive(self._judging(state, config))

    def messages(self, state: SupervisorState, answer: str) -> list[BaseMessage]:
        """What the judge model is shown: the criteria, the task, the hops and the answer."""
        turn = state.get("turn", 1)
        hops = [
            f"- {e['worker']}: {e['status']}: {one_line(e['summary'] or e['error'] or '', 200)}"
            for e in state.get("ledger") or ()
            if e["turn"] == turn
        ]
        limit = self.judge.max_answer_chars
        return [
            SystemMessage(
                content=(
                    "You judge the final answer of a multi-agent run. Criteria: "
                    f"{self.judge.criteria}\nAnswer with a score from 0 (useless) to 1 "
                    "(excellent), whether it passes, and short reasons."
                )
            ),
            HumanMessage(
                content=(
                    f"Task:\n{truncate(state.get('task', ''), limit)}\n\n"
                    f"Work done (one line per hop):\n{chr(10).join(hops) or '(no hops)'}\n\n"
                    f"Answer:\n{truncate(answer, limit)}"
                )
            ),
        ]

    def _judging(self, state: SupervisorState, config: RunnableConfig) -> Steps[dict[str, Any]]:
        """The verdict's update, with the judge's model calls in `usage`."""
        recorder = UsageRecorder(budget=self.prices)
        update = yield from self._verdict(state, merge_configs(config, {"callbacks": [recorder]}))
        usage = recorder.entries(
            turn=state.get("turn", 1), step=state.get("step", 0), role="judge", worker=None
        )
        return {**update, "usage": usage} if usage else update

    def _verdict(self, state: SupervisorState, config: RunnableConfig) -> Steps[dict[str, Any]]:
        due = self._due(state, config)
        if due is None:
            return {}
        key, thread, path, turn = due
        store = get_store()
        if store is not None:
            try:
                item = yield Call(
                    partial(store.get, JUDGE_NAMESPACE, key),
                    partial(store.aget, JUDGE_NAMESPACE, key),
                )
            except Exception:  # an unreadable store: judge, and say so when writing fails
                item = None
            if item is not None and isinstance(item.value.get("entry"), dict):
                return {"judgements": [item.value["entry"]]}  # judged before: a replay
        messages = state.get("messages") or []
        last = messages[-1] if messages else None
        answer = content_text(last.content) if isinstance(last, AIMessage) else ""
        verdict: JudgeVerdict | None = None
        error: str | None = None
        try:
            # Tagged `nostream`: the judge's tokens are not the answer (stream_mode="messages").
            reply = yield _Ask(
                self._structured,
                self.messages(state, answer),
                merge_configs(config, {"tags": [TAG_NOSTREAM]}),
                self.judge.timeout,
            )
            verdict = JudgeVerdict.model_validate(
                reply.model_dump() if isinstance(reply, JudgeVerdict) else reply
            )
        except GraphBubbleUp:
            raise
        except (ValidationError, OutputParserException) as exc:
            error = f"invalid verdict: {exc}"
        except Exception as exc:  # the judge never fails the run
            error = f"the judge failed: {type(exc).__name__}: {exc}"
        low = verdict is not None and verdict.score < self.judge.threshold
        entry = JudgementEntry(
            turn=turn,
            key=key,
            judge=self.label,
            score=verdict.score if verdict is not None else None,
            passed=verdict.passed if verdict is not None else None,
            reasons=[storable(truncate(r, 500)) for r in verdict.reasons] if verdict else [],
            threshold=self.judge.threshold,
            queued=False,
            error=self._clean(error) if error is not None else None,
            feedback_id=None,
            feedback_error=None,
            at=datetime.now(UTC).isoformat(),
        )
        if verdict is not None and self.judge.client is not None:
            yield from self._feedback(entry, verdict, config)
        if store is None:
            if low:
                entry["error"] = (
                    "the score is below the threshold but the graph has no store to queue it "
                    "in; compile the graph with a store (compile(store=...))"
                )
            return {"judgements": [entry]}
        entry["queued"] = low
        try:
            value: dict[str, Any] = {
                **entry,
                "thread_id": storable(thread),
                "path": path,
                "graph": self.graph,
                "task": storable(truncate(state.get("task", ""), _TASK_CHARS)),
                "answer": storable(truncate(answer, self.judge.max_answer_chars)),
                "review": "open" if low else None,
                "acknowledged_by": None,
                "acknowledged_at": None,
                "note": "",
                "entry": dict(entry),
            }
            yield Call(
                partial(store.put, JUDGE_NAMESPACE, key, value, index=False),
                partial(store.aput, JUDGE_NAMESPACE, key, value, index=False),
            )
        except Exception as exc:
            entry["queued"] = False
            entry["error"] = self._clean(
                f"the verdict could not be stored: {type(exc).__name__}: {exc}"
            )
        return {"judgements": [entry]}

    def _clean(self, text: str) -> str:
        return storable(truncate(RunSecrets().scrub(text), _ERROR_CHARS))

    def _feedback(
        self, entry: JudgementEntry, verdict: JudgeVerdict, config: RunnableConfig
    ) -> Steps[None]:
        run = _traced_run(config)
        if run is None:
            entry["feedback_error"] = (
                "the run is not traced to LangSmith, so there is no run to attach feedback "
                "to; enable tracing (LANGSMITH_TRACING=true or langsmith.tracing_context)"
            )
            return
        feedback_id = uuid.uuid5(_FEEDBACK_NAMESPACE, entry["key"])
        send = partial(self._send, run, verdict, entry["key"], feedback_id)
        try:
            yield Call(send, partial(asyncio.to_thread, send))
        except Exception as exc:  # LangSmith unreachable: the verdict stands without it
            entry["feedback_error"] = self._clean(
                f"LangSmith refused the feedback: {type(exc).__name__}: {exc}"
            )
            return
        entry["feedback_id"] = str(feedback_id)

    def _send(self, run: Any, verdict: JudgeVerdict, key: str, feedback_id: uuid.UUID) -> None:
        """Post the score as feedback on the run's trace (its root run), in its project.

        The project: the run's own id for it, else read by name once (kept), else the address.
        """
        client = self.judge.client
        where: dict[str, Any] = {}
        if run.session_id is not None:
            where["session_id"] = run.session_id
        elif run.session_name:
            if run.session_name not in self._projects:
                self._projects[run.session_name] = client.read_project(
                    project_name=run.session_name
                ).id
            where["session_id"] = self._projects[run.session_name]
        elif run.address is not None:
            where["address"] = run.address
        client.create_feedback(
            run_id=run.trace_id,
            trace_id=run.trace_id,
            key=self.judge.feedback_key,
            score=verdict.score,
            comment="; ".join(verdict.reasons) or None,
            feedback_id=feedback_id,
            feedback_source_type="model",
            source_info={
                "judge": self.label,
                "passed": verdict.passed,
                "threshold": self.judge.threshold,
                "judgement_key": key,
            },
            **where,
        )

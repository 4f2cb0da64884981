"""The dispatch review step: in the `manual` tier a human approves each dispatch (private).

The node pauses with a `dispatch` review and applies the decision: approve or edit (go on,
perhaps with other instructions or another worker), reject or respond (the hop is closed
with the reviewer's message; the supervisor decides again). The answer goes to `reviews`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, cast

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from langgraph_supervisor_pro._contracts import WorkerResult, WorkerTask
from langgraph_supervisor_pro._graph.fanout import BRANCH_KEY, with_stage
from langgraph_supervisor_pro._graph.names import REVIEW_NODE
from langgraph_supervisor_pro._graph.node import GraphNode
from langgraph_supervisor_pro._graph.worker_node import hop_update
from langgraph_supervisor_pro._internal.hop import hop_context
from langgraph_supervisor_pro._internal.storable import storable
from langgraph_supervisor_pro._internal.text import one_line
from langgraph_supervisor_pro._state import ReviewEntry, RouteState, SupervisorState
from langgraph_supervisor_pro.review._gate import (
    EditDecision,
    RejectDecision,
    RespondDecision,
    gate_request,
    request_review_answer,
)
from langgraph_supervisor_pro.review._payload import ReviewRequest
from langgraph_supervisor_pro.review._policy import ReviewPolicy

_DISPATCH = "dispatch:"


class DispatchReviewNode:
    """Pauses for a human approval of the supervisor's dispatch, then goes on or back."""

    def __init__(
        self,
        *,
        policy: ReviewPolicy,
        workers: tuple[str, ...],
        supervisor: str,
        next_step: Callable[[SupervisorState, RouteState], str],
    ) -> None:
        self.policy = policy
        self.workers = workers
        self.supervisor = supervisor
        self.next_step = next_step

    def runnable(self) -> GraphNode[SupervisorState, Command[Any]]:
        """The node as a Runnable (the same body sync and async: it only pauses)."""
        return GraphNode(REVIEW_NODE, self.invoke, self.ainvoke)

    def _payload(
        self, state: SupervisorState, route: RouteState, config: RunnableConfig
    ) -> ReviewRequest:
        ledger = [e for e in state.get("ledger") or () if e["turn"] == state.get("turn", 1)]
        summary = "; ".join(
            f"#{e['step']} {e['worker']} [{e['status']}] {one_line(e['summary'], 80)}"
            for e in ledger[-5:]
        )
        return gate_request(
            kind="dispatch",
            action=f"{_DISPATCH}{route['next']}",
            args={"worker": route["next"], "instructions": route["instructions"]},
            description=f"The supervisor wants '{route['next']}' to work on: "
            f"{one_line(route['instructions'], 200) or '(no instructions)'}",
            task=state.get("task", ""),
            worker=route["next"],
            risk=None,
            tier="manual",
            reason="manual tier: a human approves each worker dispatch",
            summary=summary or "No hops yet.",
            dispatched_at=route.get("at"),
            step=route["step"],
            turn=state.get("turn", 1),
            path=_path_to(route["next"], config),
            policy=self.policy,
            config=config,
        )

    def invoke(self, state: SupervisorState, config: RunnableConfig) -> Command[Any]:
        """Pause for the decision and apply it, for the serial hop or one parallel branch.

        A branch (a `Send` holding it) records its decision in `fanout` and goes back to
        the supervisor, which dispatches the approved branches together.
        """
        branch = cast(Mapping[str, Any], state).get(BRANCH_KEY)
        route = branch if branch is not None else state.get("route")
        if not route or route["next"] not in self.workers:
            raise RuntimeError(f"the review step ran without a dispatch to review ({route!r})")
        answer = request_review_answer(
            self._payload(state, route, config),
            escalation_timeout=self.policy.review_timeout,
            policy=self.policy,
        )
        record = answer.entry(turn=state.get("turn", 1), step=route["step"])
        decision = answer.decision
        if isinstance(decision, EditDecision):
            name = decision.edited_action.name
            target = name.removeprefix(_DISPATCH)
            refused = None
            if branch is not None and target != route["next"]:
                refused = (
                    f"the reviewer's edit names {name!r}; in a parallel dispatch an edit may "
                    "change the instructions, not the worker; nothing ran"
                )
            elif target not in self.workers:
                # Fail closed: nothing runs, the hop records why, the supervisor decides.
                refused = (
                    f"the reviewer's edit names {name!r}, which is not a worker "
                    f"(dispatch:<{'|'.join(self.workers)}>); nothing ran"
                )
            if refused is not None:
                failed = WorkerResult(status="failed", error=refused)
                return self._closed(state, route, failed, record, branch=branch is not None)
            edited = RouteState(
                next=target,
                instructions=storable(
                    str(decision.edited_action.args.get("instructions", route["instructions"]))
                ),
                step=route["step"],
                decided_by=route["decided_by"],
            )
            if "at" in route:
                edited["at"] = route["at"]
            route = edited
            if branch is not None:
                return self._approved(route, record)
            return Command(
                goto=self.next_step(state, route), update={"route": route, "reviews": [record]}
            )
        if isinstance(decision, RejectDecision | RespondDecision):
            result = (
                WorkerResult(
                    status="success",
                    result=decision.message,
                    summary=f"answered by the reviewer: {decision.message}",
                )
                if isinstance(decision, RespondDecision)
                else WorkerResult(
                    status="failed",
                    error="dispatch rejected by the reviewer"
                    + (f": {decision.message}" if decision.message else ""),
                )
            )
            return self._closed(state, route, result, record, branch=branch is not None)
        if branch is not None:
            return self._approved(route, record)
        return Command(goto=self.next_step(state, route), update={"reviews": [record]})

    def _approved(self, route: RouteState, record: ReviewEntry) -> Command[Any]:
        """A parallel branch approved (perhaps edited): the supervisor dispatches it."""
        return Command(
            goto=self.supervisor,
            update={
                "fanout": {route["next"]: with_stage(route, "approved")},
                "reviews": [record],
            },
        )

    def _closed(
        self,
        state: SupervisorState,
        route: RouteState,
        result: WorkerResult,
        record: ReviewEntry,
        *,
        branch: bool = False,
    ) -> Command[Any]:
        """Record the hop as the reviewer settled it (no worker ran) and go back."""
        task = WorkerTask(
            worker=route["next"],
            step=route["step"],
            task=state.get("task", ""),
            instructions=route["instructions"],
        )
        prompt = HumanMessage(content=task.prompt(), id=str(uuid.uuid4()))
        update = hop_update(
            route["next"],
            route,
            state.get("turn", 1),
            [prompt],
            result.model_dump(),
            result,
            serial=not branch,
        )
        update["reviews"] = [record]
        if branch:
            update["fanout"] = {route["next"]: with_stage(route, "closed")}
        return Command(goto=self.supervisor, update=update)

    async def ainvoke(self, state: SupervisorState, config: RunnableConfig) -> Command[Any]:
        """Pause for the decision and apply it (nothing to await)."""
        return self.invoke(state, config)


def _path_to(worker: str, config: RunnableConfig) -> tuple[str, ...]:
    """The worker names from the root down to `worker` (this graph may be a domain)."""
    parent = hop_context(config)
    return (*(parent.path if parent is not None else ()), worker)

"""Parallel fan-out (private): the branches of a parallel decision, as state records them.

With `create_supervisor(parallel=True)` one decision may name several workers. The
supervisor writes them to `state["fanout"]` (one `FanoutRoute` per worker, keyed by
name) and sends them on together: in the manual tier each branch to its own dispatch
review (a `Send`, so each review is its own task with its own interrupt id), otherwise
to the compaction step (when a branch's worker needs it) and then to all the workers at
once. All the branch workers run in the same super-step, each in its own task and
namespace; the supervisor runs again once every one of them has finished.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph_supervisor_pro._state import BranchStage, FanoutRoute, RouteState, SupervisorState

BRANCH_KEY = "lgsp_branch"
"""The key of a dispatch review's `Send` argument that holds its branch."""


def as_route(branch: Mapping[str, Any]) -> RouteState:
    """The `RouteState` of a branch (without its stage)."""
    route = RouteState(
        next=branch["next"],
        instructions=branch["instructions"],
        step=branch["step"],
        decided_by=branch["decided_by"],
    )
    if "at" in branch:
        route["at"] = branch["at"]
    return route


def with_stage(route: RouteState, stage: BranchStage) -> FanoutRoute:
    """The branch record of `route` at `stage`."""
    return FanoutRoute(**route, stage=stage)


def branches(state: SupervisorState, *stages: BranchStage) -> list[RouteState]:
    """The parallel decision's branches at one of `stages`, in step order."""
    found = [b for b in (state.get("fanout") or {}).values() if b["stage"] in stages]
    return [as_route(b) for b in sorted(found, key=lambda b: b["step"])]


def dispatched(state: SupervisorState) -> list[RouteState]:
    """The branches sent to their workers."""
    return branches(state, "dispatched")


def route_of(state: SupervisorState, worker: str) -> RouteState | None:
    """The hop `worker` is to run: the serial route addressed to it, or its branch."""
    route = state.get("route")
    if route is not None and route["next"] == worker:
        return route
    branch = (state.get("fanout") or {}).get(worker)
    if branch is not None and branch["stage"] == "dispatched":
        return as_route(branch)
    return None

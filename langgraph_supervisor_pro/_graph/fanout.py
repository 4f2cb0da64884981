"""Parallel fan-out (private): the branches of a parallel decision, as `state["fanout"]` holds them.

See docs/concepts/fan-out.md.
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

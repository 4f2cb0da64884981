"""What LangSmith receives from a tree of supervisors: one nested run tree, each level's
hops with their own metadata (the real LangSmith client posting to a loopback server)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from langsmith import tracing_context

from langgraph_supervisor_pro import Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, thread
from tests._langsmith import Run, children, metadata
from tests.test_supervisor import decisions

HOP_KEYS = ("lgsp_step", "lgsp_turn", "lgsp_instructions", "lgsp_autonomy", "lgsp_dispatched_at")


def _leaf(name: str) -> Worker:
    def work(task: WorkerTask) -> str:
        return f"{name} done."

    return Worker(name=name, description=f"The {name} specialist.", agent=work)


def _tree(compiled: bool):
    """root -> [comms, ops]; ops -> [triage, incident]; incident -> [pager].

    Every supervisor decides with a scripted model, and each visits a leaf first so the
    hop that enters a domain is a different step from the hops inside it.
    """
    incident = create_supervisor(
        [_leaf("pager")],
        model=ScriptedChatModel(script=decisions("pager", "FINISH")),
        name="incident",
    )
    ops = create_supervisor(
        [
            _leaf("triage"),
            Worker(
                name="incident",
                description="Handles incidents.",
                agent=incident.compile() if compiled else incident,
            ),
        ],
        model=ScriptedChatModel(script=decisions("triage", "incident", "FINISH")),
        name="ops",
    )
    return compile_team(
        [
            _leaf("comms"),
            Worker(
                name="ops",
                description="Operations domain.",
                agent=ops.compile() if compiled else ops,
            ),
        ],
        model=ScriptedChatModel(script=decisions("comms", "ops", "FINISH")),
    )


def _descendants(runs: dict[str, Run], run: Run) -> Iterator[Run]:
    for child in children(runs, run):
        yield child
        yield from _descendants(runs, child)


def _decision_steps(runs: dict[str, Run], supervisor_runs: list[Run]) -> list[Any]:
    """The `lgsp_step` of the one model call beneath each supervisor node run."""
    steps = []
    for run in supervisor_runs:
        (llm,) = [r for r in _descendants(runs, run) if r["run_type"] == "llm"]
        steps.append(metadata(llm)["lgsp_step"])
    return steps


def _hop(runs: dict[str, Run], node: Run) -> Run:
    """The one run beneath a worker node: the worker's agent (a domain's graph or a function)."""
    (agent,) = children(runs, node)
    return agent


def _assert_node(run: Run, name: str, role: str, worker: str | None, path: str | None) -> None:
    meta = metadata(run)
    assert (run["name"], meta["lgsp_role"], meta["lgsp_worker"]) == (name, role, worker)
    # A node run never shows an enclosing hop's step, turn or instructions.
    assert all(meta.get(key) is None for key in HOP_KEYS), {k: meta.get(k) for k in HOP_KEYS}
    assert meta.get("lgsp_path") == path


def _assert_hop(run: Run, worker: str, step: int, path: str) -> None:
    meta = metadata(run)
    assert (meta["lgsp_role"], meta["lgsp_worker"], meta["lgsp_step"], meta["lgsp_turn"]) == (
        "worker",
        worker,
        step,
        1,
    )
    assert meta["lgsp_instructions"] == f"please {worker}"
    assert meta["lgsp_path"] == path
    assert meta["lgsp_autonomy"] == "supervised"
    assert meta["lgsp_dispatched_at"]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("compiled", [False, True], ids=["uncompiled", "compiled"])
def test_langsmith_shows_a_three_level_tree(langsmith_server, mode, compiled):
    app = _tree(compiled)
    client = langsmith_server.client()
    with tracing_context(enabled=True, client=client, project_name="lgsp-tree"):
        if mode == "sync":
            out = app.invoke(ask("The database is down"), thread())
        else:
            out = asyncio.run(app.ainvoke(ask("The database is down"), thread()))
    client.flush()
    assert out["status"] == "done"
    assert out["messages"][-1].content == "pager done."
    runs = langsmith_server.runs()

    # One trace: every run is in the root's trace, ordered beneath its parent.
    (root,) = children(runs, None)
    for run in runs.values():
        assert run["trace_id"] == root["id"]
        if run.get("parent_run_id") is not None:
            parent = runs[run["parent_run_id"]]
            assert run["dotted_order"].startswith(parent["dotted_order"] + ".")

    # The root graph: its decisions and its two hops.
    top = children(runs, root)
    assert [r["name"] for r in top] == [
        "supervisor",
        "comms",
        "supervisor",
        "ops",
        "supervisor",
        "synthesis",
    ]
    for run in top[0:6:2]:
        _assert_node(run, "supervisor", "supervisor", None, None)
    assert _decision_steps(runs, top[0:6:2]) == [1, 2, 3]
    _assert_node(top[1], "comms", "worker", "comms", None)
    _assert_hop(_hop(runs, top[1]), "comms", 1, "comms")
    ops_node = top[3]
    _assert_node(ops_node, "ops", "worker", "ops", None)

    # The ops domain's run is the one run beneath the root's hop to it: the hop's agent.
    ops_run = _hop(runs, ops_node)
    assert ops_run["run_type"] == "chain"
    _assert_hop(ops_run, "ops", 2, "ops")

    # Beneath it, the domain's own decisions and hops, with the domain's steps.
    inside_ops = children(runs, ops_run)
    assert [r["name"] for r in inside_ops] == [
        "ops",
        "triage",
        "ops",
        "incident",
        "ops",
        "synthesis",
    ]
    for run in inside_ops[0:6:2]:
        _assert_node(run, "ops", "supervisor", None, "ops")
    assert _decision_steps(runs, inside_ops[0:6:2]) == [1, 2, 3]
    _assert_node(inside_ops[1], "triage", "worker", "triage", "ops")
    _assert_hop(_hop(runs, inside_ops[1]), "triage", 1, "ops/triage")
    _assert_node(inside_ops[3], "incident", "worker", "incident", "ops")
    _assert_node(inside_ops[5], "synthesis", "synthesis", None, "ops")

    # The inner domain beneath its hop, and the leaf worker beneath the inner domain.
    incident_run = _hop(runs, inside_ops[3])
    _assert_hop(incident_run, "incident", 2, "ops/incident")
    inside_incident = children(runs, incident_run)
    assert [r["name"] for r in inside_incident] == ["incident", "pager", "incident", "synthesis"]
    for run in inside_incident[0:4:2]:
        _assert_node(run, "incident", "supervisor", None, "ops/incident")
    assert _decision_steps(runs, inside_incident[0:4:2]) == [1, 2]
    _assert_node(inside_incident[1], "pager", "worker", "pager", "ops/incident")
    pager = _hop(runs, inside_incident[1])
    assert pager["name"] == "pager.agent"
    _assert_hop(pager, "pager", 1, "ops/incident/pager")
    assert children(runs, pager) == []

    # No run inside the domain carries the root's hop to it: each level has its own hops.
    below = list(_descendants(runs, ops_run))
    assert [r for r in below if metadata(r).get("lgsp_instructions") == "please ops"] == []
    assert {metadata(r)["lgsp_worker"] for r in below if metadata(r).get("lgsp_step")} == {
        None,  # the domains' own decisions
        "triage",
        "incident",
        "pager",
    }

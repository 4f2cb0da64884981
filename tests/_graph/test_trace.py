"""What LangSmith receives: the real LangSmith client posting to a loopback server."""

import json

from langchain_core.tracers import LangChainTracer

from langgraph_supervisor_pro import Worker, WorkerResult
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, thread
from tests.test_builder import _agent_worker
from tests.test_supervisor import BIG, decisions


def test_langsmith_receives_the_delegation_tree(langsmith_server):
    agent, _ = _agent_worker()
    supervisor_model = ScriptedChatModel(script=decisions("researcher", "writer", "FINISH"))
    app = compile_team(
        [
            Worker(name="researcher", description="Looks.", agent=agent),
            Worker(
                name="writer",
                description="Writes.",
                agent=lambda t: WorkerResult(status="success", result="W" + BIG, summary="drafted"),
            ),
        ],
        model=supervisor_model,
    )
    client = langsmith_server.client()
    tracer = LangChainTracer(client=client, project_name="lgsp-tests")
    app.invoke(ask(), {**thread(), "callbacks": [tracer]})
    tracer.wait_for_futures()
    client.flush()

    runs = langsmith_server.runs()
    (root,) = [r for r in runs.values() if r.get("parent_run_id") is None]
    children = sorted(
        (r for r in runs.values() if r.get("parent_run_id") == root["id"]),
        key=lambda r: r["dotted_order"],
    )
    assert [r["name"] for r in children] == [
        "supervisor",
        "researcher",
        "supervisor",
        "writer",
        "supervisor",
        "synthesis",
    ]
    roles = [r["extra"]["metadata"].get("lgsp_role") for r in children]
    assert roles == ["supervisor", "worker", "supervisor", "worker", "supervisor", "synthesis"]
    assert children[1]["extra"]["metadata"]["lgsp_worker"] == "researcher"
    # Node runs record the slim view, never worker transcripts or full outputs.
    for run in children:
        assert set(run["inputs"]) == {
            "task",
            "turn",
            "step",
            "status",
            "route",
            "ledger_size",
            "ledger_tail",
        }
        assert "W" + BIG not in json.dumps(run["inputs"])
    assert children[3]["inputs"]["route"]["next"] == "writer"
    assert children[4]["inputs"]["ledger_tail"][-1]["summary"] == "drafted"
    # The researcher's agent is a child run with the hop's metadata, and its model
    # call sits below it: the tree LangSmith shows.
    agent_runs = [r for r in runs.values() if r.get("parent_run_id") == children[1]["id"]]
    assert len(agent_runs) == 1
    meta = agent_runs[0]["extra"]["metadata"]
    assert (meta["lgsp_worker"], meta["lgsp_step"], meta["lgsp_instructions"]) == (
        "researcher",
        1,
        "please researcher",
    )
    below = {r["name"] for r in runs.values() if r.get("parent_run_id") == agent_runs[0]["id"]}
    assert below == {"model", "tools"}, below
    # The routing decision's model call carries the hop number it decides.
    llm = [
        r
        for r in runs.values()
        if r["run_type"] == "llm" and r["extra"]["metadata"].get("lgsp_role") == "supervisor"
    ]
    assert sorted(r["extra"]["metadata"]["lgsp_step"] for r in llm) == [1, 2, 3]

"""What LangSmith receives: the real LangSmith client posting to a loopback server."""

import json
import threading
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_core.tracers import LangChainTracer
from langsmith import Client

from langgraph_supervisor_pro import Worker, WorkerResult
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, thread
from tests.test_builder import _agent_worker
from tests.test_supervisor import BIG, decisions

INFO = {
    "version": "0.0",
    "batch_ingest_config": {
        "use_multipart_endpoint": True,
        "scale_up_qsize_trigger": 1000,
        "scale_up_nthreads_limit": 1,
        "scale_down_nempty_trigger": 4,
        "size_limit": 100,
        "size_limit_bytes": 20_971_520,
    },
}


class _Capture(BaseHTTPRequestHandler):
    posts: list[tuple[str, bytes]]

    def log_message(self, *args):
        pass

    def _reply(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._reply(json.dumps(INFO).encode())

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        self.server.posts.append(  # type: ignore[attr-defined]
            (
                self.headers.get("content-type", ""),
                self.rfile.read(length),
            )
        )
        self._reply(b"{}")

    do_PATCH = do_POST


@pytest.fixture
def langsmith_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    server.posts = []  # type: ignore[attr-defined]
    worker = threading.Thread(target=server.serve_forever, daemon=True)
    worker.start()
    yield server
    server.shutdown()
    server.server_close()


def _runs(posts):
    runs: dict[str, dict[str, Any]] = {}
    for content_type, body in posts:
        if not content_type.startswith("multipart/"):
            continue
        message = BytesParser(policy=policy.default).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + body
        )
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            content = part.get_content()
            data = json.loads(content if isinstance(content, str) else content.decode())
            _, run_id, *field = name.split(".")
            run = runs.setdefault(run_id, {})
            if field:
                run[field[0]] = data
            else:
                run.update(data)
    return runs


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
    client = Client(api_url=f"http://127.0.0.1:{langsmith_server.server_port}", api_key="test-key")
    tracer = LangChainTracer(client=client, project_name="lgsp-tests")
    app.invoke(ask(), {**thread(), "callbacks": [tracer]})
    tracer.wait_for_futures()
    client.flush()

    runs = _runs(langsmith_server.posts)
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

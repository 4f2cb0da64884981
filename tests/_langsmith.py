"""A loopback LangSmith for the tracing tests: the real LangSmith client posts to it.

`CaptureServer` is a local HTTP server that answers the client's `/info` and records
every multipart batch of runs; `runs()` decodes them into one dict per run (its
create fields merged with its later patches), keyed by run id. Nothing leaves the
machine and no real key is needed. The `langsmith_server` fixture (tests/conftest.py)
starts one per test.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from langsmith import Client

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
"""What `/info` answers: multipart ingestion, small batches."""

Run = dict[str, Any]


class _Handler(BaseHTTPRequestHandler):
    server: CaptureServer

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path.rstrip("/") == "/sessions":  # read_project(project_name=...)
            (name,) = parse_qs(url.query)["name"]
            self._reply(json.dumps([project(name)]).encode())
            return
        self._reply(json.dumps(INFO).encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        with self.server.lock:
            self.server.posts.append((self.headers.get("content-type", ""), body))
            if urlsplit(self.path).path.rstrip("/") == "/feedback":
                self.server.feedback.append(json.loads(body))
        self._reply(b"{}")

    do_PATCH = do_POST


class CaptureServer(ThreadingHTTPServer):
    """A loopback HTTP server that records what the LangSmith client posts."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.posts: list[tuple[str, bytes]] = []
        self.feedback: list[dict[str, Any]] = []
        """The bodies of the feedback posted (`POST /feedback`), in order."""
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        """The API URL to give the LangSmith client."""
        return f"http://127.0.0.1:{self.server_port}"

    def client(self) -> Client:
        """A LangSmith client posting here, with a fake key."""
        return Client(api_url=self.url, api_key="test-key")

    def runs(self) -> dict[str, Run]:
        """Every run received so far, by id (call `client.flush()` first)."""
        with self.lock:
            posts = list(self.posts)
        return decode_runs(posts)


def project_id(name: str) -> str:
    """The id the server gives the project (session) of this name."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"lgsp-tests-project:{name}"))


def project(name: str) -> dict[str, Any]:
    """What `GET /sessions?name=...` answers: one project of that name."""
    return {
        "id": project_id(name),
        "name": name,
        "tenant_id": "00000000-0000-0000-0000-000000000001",
        "reference_dataset_id": None,
        "start_time": "2026-01-01T00:00:00+00:00",
    }


def decode_runs(posts: list[tuple[str, bytes]]) -> dict[str, Run]:
    """The runs in multipart batches (`post.<id>`, `patch.<id>`, `post.<id>.inputs`, ...)."""
    runs: dict[str, Run] = {}
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
            _, run_id, *field = str(name).split(".")
            run = runs.setdefault(run_id, {})
            if field:
                run[field[0]] = data
            else:
                run.update(data)
    return runs


def children(runs: Mapping[str, Run], parent: Run | None) -> list[Run]:
    """The runs directly beneath `parent` (the roots for None), in trace order."""
    parent_id = None if parent is None else parent["id"]
    return sorted(
        (r for r in runs.values() if r.get("parent_run_id") == parent_id),
        key=lambda r: r["dotted_order"],
    )


def metadata(run: Run) -> dict[str, Any]:
    """The run's metadata."""
    return dict(run.get("extra", {}).get("metadata") or {})


@contextmanager
def capture_server() -> Iterator[CaptureServer]:
    """A running `CaptureServer`, shut down on exit."""
    server = CaptureServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()

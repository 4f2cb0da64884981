"""`lgsp metrics --otel`: the figures of real runs sent over OTLP/HTTP to a loopback
collector (the real exporter, the request decoded); every error path one line, exit 2."""

from __future__ import annotations

import importlib.util
import logging
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from typer.testing import CliRunner

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro.cli import app
from tests.cli._output import error_line
from tests.observability._record import record

OTEL_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
)


@dataclass
class Collector:
    """A loopback OTLP/HTTP collector: records each request, answers with `status`."""

    port: int = 0
    status: int = 200
    requests: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/metrics"

    def decoded(self) -> ExportMetricsServiceRequest:
        (request,) = self.requests
        message = ExportMetricsServiceRequest()
        message.ParseFromString(request[2])
        return message


@contextmanager
def collector() -> Iterator[Collector]:
    held = Collector()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            held.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            reply = ExportMetricsServiceResponse().SerializeToString()
            self.send_response(held.status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    held.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield held
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("otel-cli") / "runs.db"
    with open_checkpointer(f"sqlite:///{path}") as saver:
        record(saver)
    return path


def lgsp(*args: str, **env: str) -> Any:
    environment: dict[str, str | None] = {name: None for name in OTEL_VARIABLES}
    environment.update({"COLUMNS": "200", **env})
    return CliRunner().invoke(app, list(args), env=environment)


def points(message: ExportMetricsServiceRequest) -> dict[str, dict[tuple[Any, ...], float]]:
    out: dict[str, dict[tuple[Any, ...], float]] = {}
    for resource in message.resource_metrics:
        for scope in resource.scope_metrics:
            assert scope.scope.name == "langgraph_supervisor_pro.observability"
            for metric in scope.metrics:
                kind = metric.WhichOneof("data")
                data = metric.sum if kind == "sum" else metric.gauge
                assert kind in {"sum", "gauge"}, kind
                out[metric.name] = {
                    tuple(sorted((a.key, _value(a.value)) for a in p.attributes)): (
                        p.as_int if p.WhichOneof("value") == "as_int" else p.as_double
                    )
                    for p in data.data_points
                }
    return out


def _value(value: Any) -> Any:
    return getattr(value, value.WhichOneof("value"))


def test_the_figures_reach_the_collector(db: Path) -> None:
    with collector() as otlp:
        result = lgsp(
            "metrics",
            "--db",
            str(db),
            "--otel",
            OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=otlp.endpoint,
            OTEL_SERVICE_NAME="support-metrics",
        )
        assert result.exit_code == 0, result.output
        assert "Delegation metrics of 8 runs" in result.stdout
        message = otlp.decoded()
        path, headers, _ = otlp.requests[0]
    assert path == "/v1/metrics" and headers["content-type"] == "application/x-protobuf"
    (resource,) = message.resource_metrics
    attributes = {a.key: _value(a.value) for a in resource.resource.attributes}
    assert attributes["service.name"] == "support-metrics"
    got = points(message)
    assert got["lgsp.run.count"] == {
        (("lgsp.status", "done"),): 5,
        (("lgsp.status", "failed"),): 1,
        (("lgsp.status", "halted"),): 1,
        (("lgsp.status", "running"),): 1,
    }
    assert got["lgsp.run.completion.ratio"] == {(): 0.625}
    assert sum(got["lgsp.hop.count"].values()) == 16
    assert (
        got["lgsp.hop.count"][
            (
                ("lgsp.edge.source", "ops"),
                ("lgsp.edge.target", "notes"),
                ("lgsp.status", "failed"),
            )
        ]
        == 1
    )
    assert got["lgsp.context.utilization.alert"] == {
        (("lgsp.role", "supervisor"),): 0.0,  # the support desk's supervisor is a model
        (("lgsp.role", "worker"),): 0.0,
        (("lgsp.role", "summarizer"),): 1.0,
    }
    assert got["lgsp.hop.context.utilization.peak"][
        (("lgsp.hop.number", 5), ("lgsp.role", "summarizer"))  # the supervisor's calls count
    ] == pytest.approx(1.2485)
    assert got["lgsp.review.pending.count"] == {(): 1}
    assert got["lgsp.tool.refusal.count"] == {(("gen_ai.tool.name", "refund"),): 1}
    count = len(got)
    data_points = sum(len(v) for v in got.values())
    assert result.stderr == (
        f"Sent {count} metrics ({data_points} data points) over OTLP to {otlp.endpoint}.\n"
    )


def test_with_json_stdout_stays_json_and_the_service_defaults_to_lgsp(db: Path) -> None:
    import json

    with collector() as otlp:
        result = lgsp(
            "metrics",
            "--db",
            str(db),
            "--json",
            "--graph",
            "team",
            "--otel",
            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{otlp.port}",
        )
        assert result.exit_code == 0, result.output
        message = otlp.decoded()
    assert json.loads(result.stdout)["completion"]["runs"] == 3
    (resource,) = message.resource_metrics
    attributes = {a.key: _value(a.value) for a in resource.resource.attributes}
    assert attributes["service.name"] == "lgsp"
    assert sum(points(message)["lgsp.run.count"].values()) == 3


def test_a_collector_that_refuses_is_a_one_line_error(db: Path) -> None:
    with collector() as otlp:
        otlp.status = 400
        line = error_line(
            lgsp(
                "metrics",
                "--db",
                str(db),
                "--otel",
                OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=otlp.endpoint,
            ),
            f"--otel: the collector at {otlp.endpoint} did not take the metrics (",
            "400",
            "check OTEL_EXPORTER_OTLP_ENDPOINT",
        )
        assert len(otlp.requests) == 1  # a 400 is not retried
    assert "Traceback" not in line


def test_an_endpoint_password_is_masked(db: Path) -> None:
    with collector() as otlp:
        otlp.status = 400
        endpoint = f"http://user:secret@127.0.0.1:{otlp.port}/v1/metrics"
        line = error_line(
            lgsp(
                "metrics", "--db", str(db), "--otel", OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=endpoint
            ),
            "did not take the metrics",
        )
    assert "secret" not in line


class _QuotesTheEndpoint(logging.Filter):
    """Makes the exporter's log quote its endpoint, password included (as a chattier one might)."""

    def __init__(self, endpoint: str) -> None:
        super().__init__()
        self.endpoint = endpoint

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = f"POST {self.endpoint} refused: %s", (record.getMessage(),)
        return True


def test_a_password_the_exporter_quotes_is_masked_in_the_error(db: Path) -> None:
    logger = logging.getLogger("opentelemetry.exporter.otlp.proto.http.metric_exporter")
    with collector() as otlp:
        otlp.status = 400
        endpoint = f"http://user:s3cr3t-pw@127.0.0.1:{otlp.port}/v1/metrics"
        quoting = _QuotesTheEndpoint(endpoint)
        logger.addFilter(quoting)
        try:
            line = error_line(
                lgsp(
                    "metrics",
                    "--db",
                    str(db),
                    "--otel",
                    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=endpoint,
                ),
                "did not take the metrics",
            )
        finally:
            logger.removeFilter(quoting)
    assert "refused" in line  # the exporter's words are there...
    assert "s3cr3t-pw" not in line  # ...without the password


@pytest.mark.parametrize(
    ("protocol", "says"),
    [
        ("http/json", "--otel: OTEL_EXPORTER_OTLP_PROTOCOL 'http/json' is not supported here"),
        (
            "grpc",
            "--otel needs the OTLP exporter for grpc: pip install "
            "opentelemetry-exporter-otlp-proto-grpc",
        ),
    ],
)
def test_a_protocol_we_cannot_send_is_a_one_line_error(db: Path, protocol: str, says: str) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    if protocol == "grpc" and importlib.util.find_spec("opentelemetry.exporter.otlp.proto.grpc"):
        pytest.skip("the gRPC exporter is installed here")
    error_line(
        lgsp("metrics", "--db", str(db), "--otel", OTEL_EXPORTER_OTLP_PROTOCOL=protocol), says
    )


def test_without_opentelemetry_otel_says_which_extra(db: Path, tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "opentelemetry" or name.startswith("opentelemetry."):
                    raise ImportError(f"blocked: {{name}}")
                return None

        sys.meta_path.insert(0, Block())
        import langgraph_supervisor_pro.observability as obs
        from langgraph_supervisor_pro.cli import main

        try:
            obs.publish_metrics
        except ImportError as exc:
            print("refused:", exc)
        sys.argv = ["lgsp", "metrics", "--db", {str(db)!r}, "--html", {str(tmp_path / "m.html")!r}]
        try:
            main()
        except SystemExit as exit:
            print("html exit", exit.code)
        assert not any(m.startswith("opentelemetry") for m in sys.modules)
        sys.argv = ["lgsp", "metrics", "--db", {str(db)!r}, "--otel"]
        main()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert (
        'refused: publish_metrics needs OpenTelemetry: pip install "langgraph-supervisor-pro[otel]"'
        in done.stdout
    )
    assert "html exit 0" in done.stdout and (tmp_path / "m.html").is_file()
    assert done.stderr.strip().splitlines() == [
        'Error: --otel needs OpenTelemetry: pip install "langgraph-supervisor-pro[otel]"'
    ]

"""`lgsp metrics --otel`: send the figures once over OTLP, configured by the OTEL_* variables.

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/metrics/
"""

from __future__ import annotations

import logging
import os
from typing import Any

from langgraph_supervisor_pro._internal.text import one_line
from langgraph_supervisor_pro._internal.urls import mask_url, scrub
from langgraph_supervisor_pro.cli._common import diverted
from langgraph_supervisor_pro.errors import ExportError
from langgraph_supervisor_pro.observability._metrics import DelegationMetrics

__all__: list[str] = []

_PROTOCOLS = {"http/protobuf": "http", "grpc": "grpc"}
"""Each protocol's exporter: `opentelemetry-exporter-otlp-proto-<it>`."""


def protocol() -> str:
    """The OTLP protocol the OTEL_* variables ask for (`http/protobuf` by default)."""
    for name in ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return "http/protobuf"


def endpoint(chosen: str) -> str:
    """Where the exporter sends the metrics, as the OTEL_* variables say (password masked)."""
    own = os.environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip()
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if own or chosen == "grpc":
        return mask_url(own or base or "http://localhost:4317")
    return mask_url((base or "http://localhost:4318").rstrip("/") + "/v1/metrics")


def _exporter(chosen: str) -> Any:
    if chosen not in _PROTOCOLS:
        raise ExportError(
            f"--otel: OTEL_EXPORTER_OTLP_PROTOCOL {chosen!r} is not supported here; use "
            "http/protobuf (the default) or grpc"
        )
    kind = _PROTOCOLS[chosen]
    module = f"opentelemetry.exporter.otlp.proto.{kind}.metric_exporter"
    try:
        loaded = __import__(module, fromlist=["OTLPMetricExporter"])
    except ImportError:
        package = f"opentelemetry-exporter-otlp-proto-{kind} (with the otel extra)"
        extra = '"langgraph-supervisor-pro[otel]"' if kind == "http" else package
        raise ExportError(
            f"--otel needs the OTLP exporter for {chosen}: pip install {extra}"
        ) from None
    return loaded.OTLPMetricExporter()


def export(report: DelegationMetrics) -> tuple[int, int, str]:
    """Collect `report`'s instruments once and send them over OTLP.

    Returns:
        The metrics and data points sent, and the endpoint (password masked).

    Raises:
        ExportError: Without OpenTelemetry or the exporter, with a protocol we do not
            support, or when the collector refused or could not be reached.
    """
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricExportResult
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource

        from langgraph_supervisor_pro.observability._otel_metrics import publish_metrics
    except ImportError:
        raise ExportError(
            '--otel needs OpenTelemetry: pip install "langgraph-supervisor-pro[otel]"'
        ) from None
    chosen = protocol()
    exporter = _exporter(chosen)
    where = endpoint(chosen)
    named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    resource = Resource.create({} if named else {SERVICE_NAME: "lgsp"})
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], resource=resource)
    heard = _Heard(level=logging.WARNING)
    try:
        publish_metrics(report, meter_provider=provider)
        data = reader.get_metrics_data()
        metrics = (
            []
            if data is None
            else [m for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics]
        )
        with diverted("opentelemetry.exporter.otlp", heard):
            result = MetricExportResult.SUCCESS if data is None else exporter.export(data)
    finally:
        exporter.shutdown()
        provider.shutdown()
    if result is not MetricExportResult.SUCCESS:
        heard_text = heard.last or ""
        # The exporter's own words may quote the endpoint: no password of it is shown.
        for variable in ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
            heard_text = scrub(heard_text, os.environ.get(variable, ""))
        reason = f" ({one_line(heard_text, 300)})" if heard_text else ""
        raise ExportError(
            f"--otel: the collector at {where} did not take the metrics{reason}; check "
            "OTEL_EXPORTER_OTLP_ENDPOINT and that the collector is up"
        )
    return len(metrics), sum(len(m.data.data_points) for m in metrics), where


class _Heard(logging.Handler):
    """The exporter's log while it sends: kept for the error line, not printed."""

    last = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.last = record.getMessage()

"""What runs did: OpenTelemetry spans and metrics, delegation metrics, the audit trail.

`OTelCallbackHandler` and `publish_metrics` need the `otel` extra; they load on first
use, so the package imports without OpenTelemetry.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/metrics/

Example:
    >>> from langgraph_supervisor_pro.observability import OTelCallbackHandler
    >>> OTelCallbackHandler().capture_content
    False
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from langgraph_supervisor_pro.observability._audit import audit_trail
from langgraph_supervisor_pro.observability._metrics import (
    DelegationMetrics,
    adelegation_metrics,
    aread_threads,
    compute_metrics,
    delegation_metrics,
    read_threads,
)
from langgraph_supervisor_pro.observability._metrics_html import write_metrics_html

if TYPE_CHECKING:
    from langgraph_supervisor_pro.observability._otel import OTelCallbackHandler
    from langgraph_supervisor_pro.observability._otel_metrics import publish_metrics

__all__ = [
    "DelegationMetrics",
    "OTelCallbackHandler",
    "adelegation_metrics",
    "aread_threads",
    "audit_trail",
    "compute_metrics",
    "delegation_metrics",
    "publish_metrics",
    "read_threads",
    "write_metrics_html",
]

_NEEDS_OPENTELEMETRY = {"OTelCallbackHandler": "_otel", "publish_metrics": "_otel_metrics"}
"""The names loaded on first use, from the modules that import OpenTelemetry."""


def __getattr__(name: str) -> Any:
    module = _NEEDS_OPENTELEMETRY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        loaded = importlib.import_module(f"{__name__}.{module}")
    except ImportError as exc:
        raise ImportError(
            f'{name} needs OpenTelemetry: pip install "langgraph-supervisor-pro[otel]"'
        ) from exc
    return getattr(loaded, name)

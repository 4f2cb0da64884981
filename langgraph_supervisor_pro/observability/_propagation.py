"""W3C trace context in a hop's metadata, so remote graphs join the caller's trace (private).

Imported by the worker node whether or not OpenTelemetry is installed: without it, or
with no span in progress, `trace_context_metadata()` is an empty dict and costs one
check. With a span in progress (the hop's, when `OTelCallbackHandler` traces the run),
it is the `traceparent` (and `tracestate`) of that span, which the worker node adds to
its agent's metadata. A `RemoteGraph` sends string metadata to its server, where an
`OTelCallbackHandler` on the server's graph continues the trace from it.
"""

from __future__ import annotations

from typing import Any

try:
    from opentelemetry import trace as _trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ImportError:  # the `otel` extra is not installed
    _trace = None  # type: ignore[assignment]
    _PROPAGATOR: Any = None
else:
    _PROPAGATOR = TraceContextTextMapPropagator()

TRACE_CONTEXT_KEYS = ("traceparent", "tracestate")
"""The W3C Trace Context fields, as metadata keys."""


def trace_context_metadata() -> dict[str, str]:
    """The current span's W3C trace context as metadata (empty without a span).

    Example:
        >>> trace_context_metadata()  # no span in progress
        {}
    """
    if _trace is None:
        return {}
    if not _trace.get_current_span().get_span_context().is_valid:
        return {}
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return {key: carrier[key] for key in TRACE_CONTEXT_KEYS if key in carrier}

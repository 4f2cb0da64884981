"""Observability: OpenTelemetry traces of supervisor runs (the `otel` extra).

The package imports without OpenTelemetry installed: `OTelCallbackHandler` is loaded on
first use, and says which extra to install when OpenTelemetry is missing.

Example:
    >>> from langgraph_supervisor_pro.observability import OTelCallbackHandler
    >>> OTelCallbackHandler().capture_content
    False
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph_supervisor_pro.observability.otel import OTelCallbackHandler

__all__ = ["OTelCallbackHandler"]


def __getattr__(name: str) -> Any:
    if name == "OTelCallbackHandler":
        try:
            from langgraph_supervisor_pro.observability.otel import OTelCallbackHandler
        except ImportError as exc:
            raise ImportError(
                "OTelCallbackHandler needs OpenTelemetry: "
                'pip install "langgraph-supervisor-pro[otel]"'
            ) from exc
        return OTelCallbackHandler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

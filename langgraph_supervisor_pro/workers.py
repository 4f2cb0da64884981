"""What a `Worker` can be given: retries, fallbacks, verification, breakers, synthesis.

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/workers/

Example:
    >>> from langgraph_supervisor_pro.workers import default_worker_retry
    >>> default_worker_retry().max_attempts
    3
"""

from langgraph_supervisor_pro._breakers import Breaker
from langgraph_supervisor_pro._models import model_from_env
from langgraph_supervisor_pro._remote import RemoteStreamEvent, remote_stream_event
from langgraph_supervisor_pro._synthesis import HopOutput, SynthesisInput, Synthesizer
from langgraph_supervisor_pro._verification import Verdict, Verifier
from langgraph_supervisor_pro._workers import WorkerFallback, default_worker_retry

__all__ = [
    "Breaker",
    "HopOutput",
    "RemoteStreamEvent",
    "SynthesisInput",
    "Synthesizer",
    "Verdict",
    "Verifier",
    "WorkerFallback",
    "default_worker_retry",
    "model_from_env",
    "remote_stream_event",
]

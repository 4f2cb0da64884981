"""Who is making a model call, for the usage meter (private).

A compaction's summarizer call is made under the compacted worker's hop, with that
hop's usage recorder among its callbacks; the recorder books it as the `summarizer`'s
rather than the worker's. It learns so from `calling_as`, a context variable set
around the call (LangChain runs an inline callback in the caller's context, and
copies the context into executor threads), not from the call's trace metadata: trace
metadata is for traces only.

Example:
    >>> current_source() is None
    True
    >>> with calling_as("compaction"):
    ...     current_source()
    'compaction'
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal, TypeAlias

__all__ = ["ModelCallSource", "calling_as", "current_source"]

ModelCallSource: TypeAlias = Literal["compaction"]
"""A model call the usage meter books apart from the hop's role."""

_SOURCE: ContextVar[ModelCallSource | None] = ContextVar("lgsp_model_call_source", default=None)


@contextmanager
def calling_as(source: ModelCallSource) -> Iterator[None]:
    """Mark the model calls made inside the block as `source`'s.

    Example:
        >>> with calling_as("compaction"):
        ...     current_source()
        'compaction'
    """
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def current_source() -> ModelCallSource | None:
    """The source of the model calls made here, or None for the hop's own calls.

    Example:
        >>> current_source() is None
        True
    """
    return _SOURCE.get()

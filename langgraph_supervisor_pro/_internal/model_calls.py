"""Who is making a model call, for the usage meter (private).

A compaction's summarizer call runs under the worker's hop; the hop's usage recorder books
it as the `summarizer`'s through a context variable set by `calling_as` (LangChain runs
callbacks in the caller's context), not through trace metadata.

Example:
    >>> with calling_as("compaction"):
    ...     current_source()
    'compaction'
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal, TypeAlias

ModelCallSource: TypeAlias = Literal["compaction"]
"""A model call the usage meter books apart from the hop's role."""

_SOURCE: ContextVar[ModelCallSource | None] = ContextVar("lgsp_model_call_source", default=None)


@contextmanager
def calling_as(source: ModelCallSource) -> Iterator[None]:
    """Mark the model calls made inside the block as `source`'s."""
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def current_source() -> ModelCallSource | None:
    """The source of the model calls made here, or None for the hop's own calls."""
    return _SOURCE.get()

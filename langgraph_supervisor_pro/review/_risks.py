"""Risk levels: how much harm a tool call can do if it is wrong (`low`, `medium`, `high`).

Declared with the `risk` decorator or in a mapping; a tool with none counts as `high`
(fail closed).
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/reviews/
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, TypeVar

from langchain_core.tools import BaseTool

from langgraph_supervisor_pro._internal.tools import tool_name
from langgraph_supervisor_pro.errors import UndeclaredRiskWarning

T = TypeVar("T")

Risk: TypeAlias = Literal["low", "medium", "high"]
"""How much harm a tool call can do if it is wrong."""

RISK_LEVELS: tuple[Risk, ...] = ("low", "medium", "high")
"""The risk levels, least to most dangerous."""

RISK_KEY = "lgsp_risk"
"""Where `risk` records a level: `BaseTool.metadata[RISK_KEY]`, or a function attribute."""

ALWAYS_REVIEW_KEY = "lgsp_always_review"
"""Where `risk` records `always_review`, next to `RISK_KEY`."""

_NO_MAPPING: Mapping[str, Risk] = MappingProxyType({})


def _choices(values: Sequence[str]) -> str:
    return ", ".join(repr(v) for v in values)


def check_risk(value: object, where: str) -> Risk:
    """`value` as a risk level, or a `ValueError` naming `where` and the levels."""
    for level in RISK_LEVELS:
        if value == level:
            return level
    raise ValueError(
        f"{where}: got {value!r}; give one of {_choices(RISK_LEVELS)} (a tool with no level "
        "is treated as 'high')"
    )


def risk(level: Risk, *, always_review: bool = False) -> Callable[[T], T]:
    """Declare a tool's risk level (a decorator).

    Stack it above `@tool` (the level goes into `BaseTool.metadata`), or put it on a plain
    function (a function attribute, which `@tool` placed above it carries over). A level
    in a mapping (per worker, or the policy's `risks`) wins over the decorator.

    `always_review` has every call reviewed by a human, in every tier (even
    `autonomous`). A `level` that is not one raises `ValueError`; decorating something
    that is neither a tool nor a function, `TypeError`.

    Example:
        >>> from langchain_core.tools import tool
        >>> @risk("high", always_review=True)
        ... @tool
        ... def refund(order_id: str) -> str:
        ...     '''Refund an order.'''
        ...     return f"refunded {order_id}"
        >>> refund.metadata["lgsp_risk"], declared_always_review(refund)
        ('high', True)
        >>> @risk("low")
        ... def lookup(order_id: str) -> str:
        ...     return order_id
        >>> declared_risk(lookup)
        'low'
    """
    checked = check_risk(level, "risk(level)")
    if not isinstance(always_review, bool):
        raise TypeError(f"risk(always_review=...): got {always_review!r}; give True or False")

    def mark(target: T) -> T:
        if isinstance(target, BaseTool):
            target.metadata = {
                **(target.metadata or {}),
                RISK_KEY: checked,
                ALWAYS_REVIEW_KEY: always_review,
            }
            return target
        if isinstance(target, str | type) or not callable(target):
            raise TypeError(
                f"@risk({checked!r}): got {type(target).__name__}; decorate a LangChain tool "
                "(put @risk above @tool) or a function, or declare the level in a risks mapping"
            )
        try:
            setattr(target, RISK_KEY, checked)
            setattr(target, ALWAYS_REVIEW_KEY, always_review)
        except (AttributeError, TypeError) as exc:
            raise TypeError(
                f"@risk({checked!r}): cannot mark {target!r} ({exc}); declare its level in a "
                "risks mapping instead"
            ) from exc
        return target

    return mark


def _marks(tool: object) -> tuple[object, object]:
    """The level and always-review flag the decorator recorded on `tool` (or its function)."""
    if isinstance(tool, str):
        return None, False
    if isinstance(tool, BaseTool):
        metadata = tool.metadata or {}
        if RISK_KEY in metadata:
            return metadata[RISK_KEY], metadata.get(ALWAYS_REVIEW_KEY, False)
        # `@tool` above `@risk`: the mark is on the wrapped function.
        for inner in (getattr(tool, "func", None), getattr(tool, "coroutine", None)):
            if inner is not None and hasattr(inner, RISK_KEY):
                return _marks(inner)
        return None, False
    return getattr(tool, RISK_KEY, None), getattr(tool, ALWAYS_REVIEW_KEY, False)


def declared_risk(
    tool: BaseTool | Callable[..., Any] | str,
    *,
    mapping: Mapping[str, Risk] = _NO_MAPPING,
) -> Risk | None:
    """The risk level declared for a tool (`mapping` wins over `@risk`), or None.

    `ValueError` for a bad level; `TypeError` for a `tool` not a tool, function or name.
    """
    name = tool_name(tool)
    if name in mapping:
        return check_risk(mapping[name], f"risks[{name!r}]")
    level, _ = _marks(tool)
    if level is None:
        return None
    return check_risk(level, f"tool {name!r}: {RISK_KEY}")


def declared_always_review(tool: BaseTool | Callable[..., Any] | str) -> bool:
    """Whether the `risk` decorator marked a tool always-review (a name never is)."""
    tool_name(tool)  # raises TypeError for unsupported objects
    _, always = _marks(tool)
    return always is True


def effective_risk(
    tool: BaseTool | Callable[..., Any] | str,
    *,
    mapping: Mapping[str, Risk] = _NO_MAPPING,
) -> Risk:
    """The risk level a tool is treated with: its declared level, else `high` (fail closed).

    Example:
        >>> effective_risk("send_email")
        'high'
    """
    return declared_risk(tool, mapping=mapping) or "high"


def undeclared_tools(
    tools: Iterable[BaseTool | Callable[..., Any] | str],
    mapping: Mapping[str, Risk] = _NO_MAPPING,
) -> list[str]:
    """The names of the tools with no declared risk level, in order, each once.

    Example:
        >>> undeclared_tools(["refund", "send_email"], {"send_email": "medium"})
        ['refund']
    """
    if isinstance(tools, str):
        raise TypeError("undeclared_tools: got a string; give a list of tools or tool names")
    names: list[str] = []
    for tool in tools:
        name = tool_name(tool)
        if name not in names and declared_risk(tool, mapping=mapping) is None:
            names.append(name)
    return names


def warn_undeclared(
    tools: Iterable[BaseTool | Callable[..., Any] | str],
    mapping: Mapping[str, Risk] = _NO_MAPPING,
    *,
    worker: str | None = None,
    stacklevel: int = 1,
) -> list[str]:
    """Warn (`UndeclaredRiskWarning`) when some tools have no declared risk level.

    `stacklevel` is as for `warnings.warn` called where this is called. Returns the
    undeclared tools' names (none: nothing is emitted).
    """
    names = undeclared_tools(tools, mapping)
    if names:
        warnings.warn(
            UndeclaredRiskWarning.for_tools(names, worker=worker), stacklevel=stacklevel + 1
        )
    return names

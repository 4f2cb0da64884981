"""Risk levels: how much harm a tool call can do if it is wrong.

Every tool has a risk level, `low`, `medium` or `high`, declared with the `risk`
decorator or in a mapping (per worker, or the policy file's `risks` table). A tool
with no declared level is treated as `high` (fail closed); `undeclared_tools` and
`warn_undeclared` list such tools when a graph is built.

Example:
    ```python
    from langchain_core.tools import tool
    from langgraph_supervisor_pro.review import risk

    @risk("high", always_review=True)
    @tool
    def wire_transfer(iban: str, amount: float) -> str: ...
    ```
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, TypeVar

from langchain_core.tools import BaseTool

from langgraph_supervisor_pro._internal.tools import tool_name
from langgraph_supervisor_pro.errors import UndeclaredRiskWarning

__all__ = [
    "ALWAYS_REVIEW_KEY",
    "RISK_KEY",
    "RISK_LEVELS",
    "Risk",
    "check_risk",
    "declared_always_review",
    "declared_risk",
    "effective_risk",
    "risk",
    "undeclared_tools",
    "warn_undeclared",
]

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
    """`value` as a risk level, or a `ValueError` naming `where` and the levels.

    Example:
        >>> check_risk("low", "risks['lookup']")
        'low'
    """
    for level in RISK_LEVELS:
        if value == level:
            return level
    raise ValueError(
        f"{where}: got {value!r}; give one of {_choices(RISK_LEVELS)} (a tool with no level "
        "is treated as 'high')"
    )


# -- declaring risk levels ---------------------------------------------------------------


def risk(level: Risk, *, always_review: bool = False) -> Callable[[T], T]:
    """Declare a tool's risk level (a decorator).

    Stack it above `@tool` to mark a LangChain tool (the level goes into
    `BaseTool.metadata`), or put it on a plain function (the level becomes a function
    attribute, which `@tool` placed above it also carries over). A level in a mapping
    (per worker, or the policy file's `risks`) takes precedence over the decorator.
    The tool object is marked in place and returned.

    Args:
        level: `low`, `medium` or `high`.
        always_review: Review every call by a human, in every tier (even `autonomous`).

    Returns:
        The decorator.

    Raises:
        ValueError: If `level` is not a risk level.
        TypeError: If the decorated object is neither a tool nor a function.

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
    """The risk level declared for a tool, or None when it has none.

    Args:
        tool: A LangChain tool, a function or a tool name.
        mapping: Tool name -> level (per worker, or a policy file's `risks`); it wins
            over the `risk` decorator.

    Returns:
        The declared level, or None (callers treat None as `high`: see `effective_risk`).

    Raises:
        ValueError: If the declared level is not a risk level.
        TypeError: If `tool` is not a tool, a function or a name.

    Example:
        >>> @risk("low")
        ... def lookup(order_id: str) -> str:
        ...     return order_id
        >>> declared_risk(lookup), declared_risk(lookup, mapping={"lookup": "medium"})
        ('low', 'medium')
        >>> declared_risk("refund") is None
        True
    """
    name = tool_name(tool)
    if name in mapping:
        return check_risk(mapping[name], f"risks[{name!r}]")
    level, _ = _marks(tool)
    if level is None:
        return None
    return check_risk(level, f"tool {name!r}: {RISK_KEY}")


def declared_always_review(tool: BaseTool | Callable[..., Any] | str) -> bool:
    """Whether the `risk` decorator marked a tool always-review.

    Tool names listed in `ReviewPolicy.always_review` are reviewed too; pass this flag
    to `ReviewPolicy.action`.

    Args:
        tool: A LangChain tool, a function or a tool name (names are never marked).

    Returns:
        True when the tool was declared with `@risk(..., always_review=True)`.

    Example:
        >>> @risk("medium", always_review=True)
        ... def close_account(account_id: str) -> str:
        ...     return account_id
        >>> declared_always_review(close_account), declared_always_review("close_account")
        (True, False)
    """
    tool_name(tool)  # raises TypeError for unsupported objects
    _, always = _marks(tool)
    return always is True


def effective_risk(
    tool: BaseTool | Callable[..., Any] | str,
    *,
    mapping: Mapping[str, Risk] = _NO_MAPPING,
) -> Risk:
    """The risk level a tool is treated with: its declared level, else `high` (fail closed).

    Args:
        tool: A LangChain tool, a function or a tool name.
        mapping: Tool name -> level; it wins over the `risk` decorator.

    Returns:
        The level.

    Example:
        >>> effective_risk("send_email")
        'high'
        >>> effective_risk("send_email", mapping={"send_email": "low"})
        'low'
    """
    return declared_risk(tool, mapping=mapping) or "high"


def undeclared_tools(
    tools: Iterable[BaseTool | Callable[..., Any] | str],
    mapping: Mapping[str, Risk] = _NO_MAPPING,
) -> list[str]:
    """The names of the tools with no declared risk level, for the build-time warning.

    Args:
        tools: Tools, functions or tool names.
        mapping: Tool name -> level (per worker, or a policy file's `risks`).

    Returns:
        The undeclared tools' names, in order, each once.

    Example:
        >>> @risk("low")
        ... def lookup(order_id: str) -> str:
        ...     return order_id
        >>> undeclared_tools([lookup, "refund", "send_email"], {"send_email": "medium"})
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

    Args:
        tools: Tools, functions or tool names.
        mapping: Tool name -> level (per worker, or a policy file's `risks`).
        worker: The worker the tools belong to, named in the message.
        stacklevel: As for `warnings.warn` called where this function is called: 1 (the
            default) points at that call, 2 at its caller, and so on.

    Returns:
        The undeclared tools' names (empty when all are declared: then nothing is emitted).

    Example:
        ```python
        warn_undeclared(worker.tools, policy.risks, worker=worker.name, stacklevel=2)
        ```
    """
    names = undeclared_tools(tools, mapping)
    if names:
        warnings.warn(
            UndeclaredRiskWarning.for_tools(names, worker=worker), stacklevel=stacklevel + 1
        )
    return names

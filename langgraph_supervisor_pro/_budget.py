"""Budgets and prices: what a supervisor graph may spend, and what each model call cost.

A `Budget` limits tokens and/or cost per turn or per thread; its price table (given by the
user, per million tokens, no network) turns each call's reported usage into a cost. The
accounting reads the `usage` entries in state, so a resumed or forked run counts what its
checkpoint holds, once. Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/budgets/

Example:
    >>> budget = Budget(max_cost=0.50, prices={"gpt-4.1": {"input": 2.0, "output": 8.0}})
    >>> budget.price("openai", "gpt-4.1").cost({"input_tokens": 1000, "output_tokens": 500})
    0.006
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from langgraph_supervisor_pro._internal.text import truncate

Measure: TypeAlias = Literal["tokens", "cost"]
"""What a budget limits: tokens (input + output, as reported) or cost (in the price table's
currency)."""

Scope: TypeAlias = Literal["turn", "thread"]
"""Over what a budget's limit runs: one turn (user message), or the whole thread."""

_PRICE_KEYS = ("input", "output", "cached_input", "cache_creation")

_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")
"""A dated snapshot's suffix on a model name (OpenAI's `-2025-04-14`, Anthropic's `-20250514`)."""


@dataclass(frozen=True, slots=True)
class Price:
    """One model's prices per million tokens (private; built from `Budget.prices`)."""

    input: float
    output: float
    cached_input: float
    cache_creation: float

    def cost(self, usage: Mapping[str, Any]) -> float:
        """The cost of one call's usage (its input tokens include the cached ones)."""
        read = int(usage.get("cache_read", 0) or 0)
        created = int(usage.get("cache_creation", 0) or 0)
        plain = max(0, int(usage.get("input_tokens", 0) or 0) - read - created)
        total = (
            plain * self.input
            + read * self.cached_input
            + created * self.cache_creation
            + int(usage.get("output_tokens", 0) or 0) * self.output
        )
        return round(total / 1_000_000, 10)


def _amount(value: object, field_name: str, *, fix: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{field_name}: got {type(value).__name__}; {fix}")
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        number = math.inf
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{field_name}: got {truncate(repr(value), 40)}; {fix}")
    return number


def _prices(table: object) -> dict[str, Price]:
    if not isinstance(table, Mapping):
        raise TypeError(
            f"Budget.prices: got {type(table).__name__}; give a mapping of model name to "
            '{"input": ..., "output": ...} (per million tokens)'
        )
    prices: dict[str, Price] = {}
    for name, entry in table.items():
        where = f"Budget.prices[{name!r}]"
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{where}: name the model (e.g. 'gpt-4.1' or 'openai/gpt-4.1')")
        if not isinstance(entry, Mapping):
            raise TypeError(f'{where}: got {type(entry).__name__}; give {{"input": 2.0, ...}}')
        unknown = sorted(set(entry) - set(_PRICE_KEYS))
        missing = [k for k in ("input", "output") if k not in entry]
        if unknown or missing:
            raise ValueError(
                f"{where}: {'unknown keys ' + str(unknown) if unknown else ''}"
                f"{'; ' if unknown and missing else ''}"
                f"{'missing ' + str(missing) if missing else ''}; give the prices per million "
                f"tokens under {list(_PRICE_KEYS)} ('input' and 'output' required)"
            )
        fix = "give a price per million tokens, a finite number >= 0"
        values = {k: _amount(v, f"{where}[{k!r}]", fix=fix) for k, v in entry.items()}
        prices[name.strip()] = Price(
            input=values["input"],
            output=values["output"],
            cached_input=values.get("cached_input", values["input"]),
            cache_creation=values.get("cache_creation", values["input"]),
        )
    return prices


@dataclass(frozen=True, kw_only=True)
class Budget:
    """What a supervisor graph (or one worker) may spend, and the prices that say the cost.

    Give it to `create_supervisor(budget=...)` (and a stricter one to `Worker(budget=...)`).
    Spending is read from the usage each model call reports; past `warn_at` of a limit the
    run records a warning (or, with `on_warning="review"`, pauses for a human: approve
    raises the limit, reject finishes with what is done); at the limit the run halts with
    `halt_reason="budget_exceeded"` and the answer is synthesised from what was done.
    A domain of a tree inherits what is left of its parent's budget.
    Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/budgets/

    Example:
        >>> budget = Budget(
        ...     max_tokens=200_000,
        ...     max_cost=1.00,
        ...     per="turn",
        ...     prices={"gpt-4.1": {"input": 2.0, "output": 8.0, "cached_input": 0.5}},
        ... )
        >>> budget.limits
        {'tokens': 200000.0, 'cost': 1.0}
    """

    max_tokens: int | None = None
    """Input plus output tokens, as the providers report them (counted when they do not)."""
    max_cost: float | None = None
    """Cost, in the currency of `prices` (every model the graph uses needs a price)."""
    per: Scope = "turn"
    """Whether the limits run over one turn or the whole thread."""
    warn_at: float = 0.8
    """The fraction of a limit at which the run warns (in (0, 1])."""
    on_warning: Literal["event", "review"] = "event"
    """What the warning does: record a budget event, or pause for a human's review."""
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Per model (its name, or `provider/name`): prices per million tokens under `input`,
    `output`, and optionally `cached_input` and `cache_creation` (default: `input`)."""

    def __post_init__(self) -> None:
        fix = "give a limit >= 0, finite, or None for no limit"
        if self.max_tokens is not None:
            tokens = _amount(self.max_tokens, "Budget.max_tokens", fix=fix)
            if not tokens.is_integer():
                raise ValueError(
                    f"Budget.max_tokens: got {self.max_tokens!r}; give a whole number of tokens"
                )
            object.__setattr__(self, "max_tokens", int(tokens))
        if self.max_cost is not None:
            _amount(self.max_cost, "Budget.max_cost", fix=fix)
        if self.per not in ("turn", "thread"):
            raise ValueError(f"Budget.per: got {self.per!r}; give 'turn' or 'thread'")
        warn = self.warn_at
        if isinstance(warn, bool) or not isinstance(warn, int | float) or not 0 < warn <= 1:
            raise ValueError(
                f"Budget.warn_at: got {warn!r}; give the fraction of a limit to warn at, "
                "in (0, 1] (1 warns only at the limit)"
            )
        if self.on_warning not in ("event", "review"):
            raise ValueError(
                f"Budget.on_warning: got {self.on_warning!r}; give 'event' (record it and go "
                "on) or 'review' (pause for a human)"
            )
        object.__setattr__(self, "_table", MappingProxyType(_prices(self.prices)))

    @property
    def limits(self) -> dict[Measure, float]:
        """The limits set, by measure."""
        found: dict[Measure, float] = {}
        if self.max_tokens is not None:
            found["tokens"] = float(self.max_tokens)
        if self.max_cost is not None:
            found["cost"] = float(self.max_cost)
        return found

    @property
    def table(self) -> Mapping[str, Price]:
        """The validated price table."""
        table: Mapping[str, Price] = self._table  # type: ignore[attr-defined]
        return table

    def price(self, provider: str | None, model: str | None) -> Price | None:
        """The price of `provider/model` (or `model`), or None: unpriced.

        A dated snapshot a provider reports (`gpt-4.1-mini-2025-04-14`,
        `claude-sonnet-4-20250514`) takes its model's price unless it has its own.
        """
        if not model:
            return None
        table = self.table
        for name in (model, _SNAPSHOT.sub("", model)):
            found = table.get(f"{provider}/{name}") or table.get(name)
            if found is not None:
                return found
        return None

    def cost(self, entry: Mapping[str, Any]) -> float | None:
        """One usage entry's cost, or None when its model has no price."""
        price = self.price(entry.get("provider"), entry.get("model"))
        return price.cost(entry) if price is not None else None


@dataclass(frozen=True, slots=True)
class Spend:
    """Tokens and cost spent; calls with no price are counted apart (unpriced is not free)."""

    tokens: int = 0
    cost: float = 0.0
    calls: int = 0
    unpriced: int = 0

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            self.tokens + other.tokens,
            round(self.cost + other.cost, 10),
            self.calls + other.calls,
            self.unpriced + other.unpriced,
        )

    def of(self, measure: Measure) -> float:
        """The amount spent in `measure`."""
        return float(self.tokens) if measure == "tokens" else self.cost

    def as_dict(self) -> dict[str, float]:
        """`{"tokens": ..., "cost": ...}` (what `SupervisorView.spent` shows)."""
        return {"tokens": float(self.tokens), "cost": self.cost}


def entry_tokens(entry: Mapping[str, Any]) -> int:
    """The tokens one usage entry spent: input plus output (an old entry: its input)."""
    if "input_tokens" in entry:
        return int(entry["input_tokens"]) + int(entry.get("output_tokens", 0))
    return int(entry.get("tokens", 0))


def spend_of(
    entries: Iterable[Mapping[str, Any]], *, turn: int | None = None, worker: str | None = None
) -> Spend:
    """What the usage entries spent (of one turn and one worker when given)."""
    tokens, cost, calls, unpriced = 0, 0.0, 0, 0
    for entry in entries:
        if turn is not None and entry.get("turn") != turn:
            continue
        if worker is not None and entry.get("worker") != worker:
            continue
        calls += 1
        tokens += entry_tokens(entry)
        value = entry.get("cost")
        if value is None:
            unpriced += 1
        else:
            cost += float(value)
    return Spend(tokens, round(cost, 10), calls, unpriced)


def looser(child: Budget, parent: Budget) -> str | None:
    """Why `child` is looser than `parent` (a limit parent has that child lifts or raises)."""
    if child.per != parent.per and parent.per == "turn" and child.per == "thread":
        # a thread limit can outgrow a turn limit after the first turn
        return f"per={child.per!r} runs longer than the parent's per={parent.per!r}"
    for measure, limit in parent.limits.items():
        mine = child.limits.get(measure)
        if mine is None:
            continue  # the parent's limit still holds over the child
        if mine > limit:
            return f"its {measure} limit {mine:g} is above the parent's {limit:g}"
    if child.warn_at > parent.warn_at:
        return f"warn_at={child.warn_at:g} warns later than the parent's {parent.warn_at:g}"
    return None


_BUDGETS: weakref.WeakKeyDictionary[Any, Budget] = weakref.WeakKeyDictionary()


def register_budget(graph: Any, budget: Budget) -> None:
    """Record the budget a `create_supervisor` graph was built with (for its parent's check)."""
    _BUDGETS[graph] = budget


def registered_budget(graph: Any) -> Budget | None:
    """The budget recorded for `graph` (a StateGraph or a graph compiled from one)."""
    builder = getattr(graph, "builder", graph)
    try:
        return _BUDGETS.get(builder)
    except TypeError:  # not weak-referenceable: never registered
        return None

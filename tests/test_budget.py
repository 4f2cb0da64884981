"""`Budget`: limits and prices validated on construction; costs and spending computed."""

from __future__ import annotations

import math

import pytest

from langgraph_supervisor_pro import Budget
from langgraph_supervisor_pro._budget import Price, Spend, entry_tokens, looser, spend_of


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("max_tokens", -1, r"Budget.max_tokens: got -1; give a limit >= 0"),
        ("max_tokens", math.nan, r"Budget.max_tokens: got nan"),
        ("max_tokens", math.inf, r"Budget.max_tokens: got inf"),
        ("max_tokens", 10**400, r"Budget.max_tokens: got 1000"),
        ("max_tokens", 2.5, r"Budget.max_tokens: got 2.5; give a whole number"),
        ("max_cost", -0.01, r"Budget.max_cost: got -0.01; give a limit >= 0"),
        ("max_cost", math.nan, r"Budget.max_cost: got nan"),
        ("max_cost", -math.inf, r"Budget.max_cost: got -inf"),
        ("warn_at", 0, r"Budget.warn_at: got 0; give the fraction .* in \(0, 1\]"),
        ("warn_at", 1.5, r"Budget.warn_at: got 1.5"),
        ("warn_at", math.nan, r"Budget.warn_at: got nan"),
        ("warn_at", True, r"Budget.warn_at: got True"),
        ("per", "day", r"Budget.per: got 'day'; give 'turn' or 'thread'"),
        ("on_warning", "email", r"Budget.on_warning: got 'email'; give 'event'"),
    ],
)
def test_bad_limits_are_refused_naming_the_field_and_the_fix(field, value, match):
    with pytest.raises(ValueError, match=match):
        Budget(**{field: value})


@pytest.mark.parametrize("value", ["100", True, None.__class__])
def test_limits_of_the_wrong_type_are_a_type_error(value):
    with pytest.raises(TypeError, match=r"Budget.max_cost: got"):
        Budget(max_cost=value)


@pytest.mark.parametrize(
    ("prices", "error", "match"),
    [
        ([("gpt", 1)], TypeError, r"Budget.prices: got list; give a mapping"),
        ({"": {"input": 1, "output": 1}}, ValueError, r"Budget.prices\[''\]: name the model"),
        ({"gpt": 2.0}, TypeError, r"Budget.prices\['gpt'\]: got float"),
        ({"gpt": {"input": 1}}, ValueError, r"missing \['output'\]"),
        ({"gpt": {"input": 1, "output": 1, "ouput": 2}}, ValueError, r"unknown keys \['ouput'\]"),
        ({"gpt": {"input": -1, "output": 1}}, ValueError, r"\['input'\]: got -1; give a price"),
        ({"gpt": {"input": 1, "output": math.nan}}, ValueError, r"\['output'\]: got nan"),
        ({"gpt": {"input": "1", "output": 1}}, TypeError, r"\['input'\]: got str"),
    ],
)
def test_bad_prices_are_refused(prices, error, match):
    with pytest.raises(error, match=match):
        Budget(prices=prices)


def test_a_float_token_limit_that_is_whole_is_taken_as_an_int():
    assert Budget(max_tokens=1e6).max_tokens == 1_000_000
    assert Budget(max_tokens=1e6).limits == {"tokens": 1_000_000.0}
    assert Budget().limits == {}


def test_prices_are_per_million_tokens_and_cached_tokens_default_to_the_input_price():
    budget = Budget(
        prices={
            "gpt-4.1": {"input": 2.0, "output": 8.0, "cached_input": 0.5},
            "anthropic/claude": {"input": 3.0, "output": 15.0, "cache_creation": 3.75},
        }
    )
    gpt = budget.price("openai", "gpt-4.1")
    assert gpt == Price(input=2.0, output=8.0, cached_input=0.5, cache_creation=2.0)
    usage = {"input_tokens": 1_000_000, "output_tokens": 100_000, "cache_read": 400_000}
    assert gpt.cost(usage) == pytest.approx(600_000 * 2 / 1e6 + 400_000 * 0.5 / 1e6 + 0.8)
    claude = budget.price("anthropic", "claude")
    assert claude is not None and budget.price("other", "claude") is None
    created = {"input_tokens": 1000, "output_tokens": 0, "cache_creation": 1000}
    assert claude.cost(created) == pytest.approx(1000 * 3.75 / 1e6)
    assert budget.price("openai", None) is None
    assert budget.cost({"provider": "x", "model": "unknown", "input_tokens": 5}) is None


def test_spending_sums_tokens_and_priced_cost_and_counts_unpriced_calls_apart():
    entries = [
        {"turn": 1, "worker": "a", "input_tokens": 10, "output_tokens": 5, "cost": 0.25},
        {"turn": 1, "worker": "b", "input_tokens": 7, "output_tokens": 3, "cost": None},
        {"turn": 2, "worker": "a", "tokens": 40, "window": 100, "utilisation": 0.4},  # 0.1
    ]
    assert spend_of(entries) == Spend(tokens=65, cost=0.25, calls=3, unpriced=2)
    assert spend_of(entries, turn=1) == Spend(tokens=25, cost=0.25, calls=2, unpriced=1)
    assert spend_of(entries, worker="a").tokens == 55
    assert entry_tokens(entries[2]) == 40
    assert (Spend(1, 0.1, 1, 0) + Spend(2, 0.2, 1, 1)).as_dict() == {"tokens": 3.0, "cost": 0.3}


def test_looser_says_why_a_budget_below_is_not_stricter():
    parent = Budget(max_tokens=1_000, warn_at=0.8)
    assert looser(Budget(max_tokens=500), parent) is None
    assert looser(Budget(max_cost=1.0), parent) is None  # the parent's token limit still holds
    assert "above the parent's 1000" in (looser(Budget(max_tokens=2_000), parent) or "")
    assert "warns later" in (looser(Budget(max_tokens=500, warn_at=0.9), parent) or "")
    assert "runs longer" in (looser(Budget(max_tokens=500, per="thread"), parent) or "")


def test_a_dated_snapshot_takes_its_models_price_unless_it_has_its_own():
    budget = Budget(
        prices={
            "gpt-4.1-mini": {"input": 0.4, "output": 1.6},
            "claude-sonnet-4": {"input": 3.0, "output": 15.0},
            "gpt-4.1-mini-2025-01-01": {"input": 1.0, "output": 1.0},
        }
    )
    assert budget.price("openai", "gpt-4.1-mini-2025-04-14") == budget.price(
        "openai", "gpt-4.1-mini"
    )
    assert budget.price("anthropic", "claude-sonnet-4-20250514") is budget.table["claude-sonnet-4"]
    assert budget.price("openai", "gpt-4.1-mini-2025-01-01").input == 1.0
    assert budget.price("openai", "gpt-4.1-mini-preview") is None

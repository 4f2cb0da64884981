"""Tests for `Compaction`: every field is validated when the configuration is made."""

from __future__ import annotations

import math
from typing import Any

import pytest

from langgraph_supervisor_pro.compaction._compactor import Compaction
from langgraph_supervisor_pro.testing import ScriptedChatModel


@pytest.mark.parametrize(
    ("field", "value", "error", "match"),
    [
        ("trigger", 0, ValueError, r"Compaction\.trigger.*0\.6-0\.8"),
        ("trigger", 1, ValueError, r"Compaction\.trigger.*0\.6-0\.8"),
        ("trigger", 1.5, ValueError, r"Compaction\.trigger"),
        ("trigger", -0.1, ValueError, r"Compaction\.trigger"),
        ("trigger", float("nan"), ValueError, r"Compaction\.trigger"),
        ("trigger", True, ValueError, r"Compaction\.trigger"),
        ("trigger", "0.7", ValueError, r"Compaction\.trigger"),
        ("every_n_steps", 0, ValueError, r"Compaction\.every_n_steps.*>= 1"),
        ("every_n_steps", True, ValueError, r"Compaction\.every_n_steps"),
        ("every_n_steps", 2.0, ValueError, r"Compaction\.every_n_steps"),
        ("keep", 0, ValueError, r"Compaction\.keep.*>= 1"),
        ("keep", False, ValueError, r"Compaction\.keep"),
        ("max_context_tokens", 0, ValueError, r"Compaction\.max_context_tokens.*>= 1"),
        ("max_context_tokens", True, ValueError, r"Compaction\.max_context_tokens"),
        ("max_attempts", 0, ValueError, r"Compaction\.max_attempts.*>= 1"),
        ("max_attempts", True, ValueError, r"Compaction\.max_attempts"),
        ("retry_delay", -1, ValueError, r"Compaction\.retry_delay"),
        # Waits time.sleep cannot take (it raises OverflowError mid-run).
        ("retry_delay", math.inf, ValueError, r"Compaction\.retry_delay: got inf; .* finite"),
        ("retry_delay", -math.inf, ValueError, r"Compaction\.retry_delay"),
        ("retry_delay", math.nan, ValueError, r"Compaction\.retry_delay"),
        ("retry_delay", 1e300, ValueError, r"Compaction\.retry_delay: .* at most"),
        pytest.param("retry_delay", 10**400, ValueError, r"Compaction\.retry_delay", id="huge"),
        ("retry_delay", True, ValueError, r"Compaction\.retry_delay"),
        ("retry_delay", "1", ValueError, r"Compaction\.retry_delay"),
        ("trigger", math.inf, ValueError, r"Compaction\.trigger"),
        ("max_attempts", 2.5, ValueError, r"Compaction\.max_attempts"),
        ("max_attempts", math.inf, ValueError, r"Compaction\.max_attempts"),
        ("every_n_steps", math.nan, ValueError, r"Compaction\.every_n_steps"),
        ("keep", math.inf, ValueError, r"Compaction\.keep"),
        ("max_context_tokens", math.inf, ValueError, r"Compaction\.max_context_tokens"),
        ("summarizer", "gpt-4o", TypeError, r"Compaction\.summarizer.*chat model"),
        ("summarizer", lambda messages: "x", TypeError, r"Compaction\.summarizer"),
        ("model", "gpt-4o", TypeError, r"Compaction\.model"),
        ("token_counter", 5, TypeError, r"Compaction\.token_counter"),
    ],
)
def test_config_validation(field: str, value: Any, error: type[Exception], match: str) -> None:
    kwargs: dict[str, Any] = {"summarizer": ScriptedChatModel(script=[]), field: value}
    with pytest.raises(error, match=match):
        Compaction(**kwargs)


def test_config_defaults_and_keyword_only() -> None:
    model = ScriptedChatModel(script=[])
    config = Compaction(summarizer=model, trigger=0.6, every_n_steps=3)
    assert (config.trigger, config.keep, config.max_attempts) == (0.6, 6, 3)
    assert Compaction(summarizer=model).trigger == 0.7
    # 0.6-0.8 is recommended, but any fraction strictly between 0 and 1 is accepted.
    assert Compaction(summarizer=model, trigger=0.95).trigger == 0.95
    with pytest.raises(TypeError):
        Compaction(model)  # type: ignore[call-arg]


def test_retry_delay_accepts_zero_and_finite_waits() -> None:
    model = ScriptedChatModel(script=[])
    assert Compaction(summarizer=model, retry_delay=0).retry_delay == 0
    assert Compaction(summarizer=model, retry_delay=2.5).retry_delay == 2.5

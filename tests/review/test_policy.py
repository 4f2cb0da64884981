"""Tests for the review policy: risk levels, the tier matrix, policy files, confirmation."""

from __future__ import annotations

import asyncio
import inspect
import json
import warnings
from dataclasses import FrozenInstanceError, replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool, tool
from langgraph.constants import TAG_NOSTREAM
from langgraph.errors import GraphInterrupt

from langgraph_supervisor_pro.errors import UndeclaredRiskWarning
from langgraph_supervisor_pro.review._confirm import (
    CONFIRM_PROMPT,
    ConfirmVerdict,
    aconfirm_action,
    confirm_action,
)
from langgraph_supervisor_pro.review._gate import EscalateDecision, review_payload
from langgraph_supervisor_pro.review._payload import PendingReview
from langgraph_supervisor_pro.review._policy import (
    SWEEP_REVIEWER,
    ConfirmRequest,
    ReviewPolicy,
    decide,
)
from langgraph_supervisor_pro.review._risks import (
    declared_always_review,
    declared_risk,
    effective_risk,
    risk,
    undeclared_tools,
    warn_undeclared,
)
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel

# -- helpers -------------------------------------------------------------------------------


def request(**overrides: Any) -> ConfirmRequest:
    data: dict[str, Any] = {
        "tool": "refund",
        "args": {"order_id": "ORDER-7", "amount": 30},
        "risk": "medium",
        "worker": "billing",
        "task": "Refund ORDER-7",
    }
    data.update(overrides)
    return ConfirmRequest(**data)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


FULL: dict[str, Any] = {
    "tier": "manual",
    "risks": {"lookup_order": "low", "refund": "medium", "wire_transfer": "high"},
    "always_review": ["wire_transfer", "close_account"],
    "review_timeout": 3600,
    "on_timeout": "escalate",
    "escalate_to": "finance-leads",
    "reviewers": "support",
}

FULL_TOML = """\
tier = "manual"
always_review = ["wire_transfer", "close_account"]
review_timeout = 3600
on_timeout = "escalate"
escalate_to = "finance-leads"
reviewers = "support"

[risks]
lookup_order = "low"
refund = "medium"
wire_transfer = "high"
"""


# -- decide: the tier matrix ---------------------------------------------------------------

MATRIX = [
    ("manual", "low", "run"),
    ("manual", "medium", "review"),
    ("manual", "high", "review"),
    ("supervised", "low", "run"),
    ("supervised", "medium", "confirm"),
    ("supervised", "high", "review"),
    ("autonomous", "low", "run"),
    ("autonomous", "medium", "run"),
    ("autonomous", "high", "run"),
]


@pytest.mark.parametrize(("tier", "level", "expected"), MATRIX)
def test_decide_matrix(tier: Any, level: Any, expected: str) -> None:
    assert decide(tier, level) == expected


@pytest.mark.parametrize("tier", ["manual", "supervised", "autonomous"])
@pytest.mark.parametrize("level", ["low", "medium", "high"])
def test_always_review_forces_review_in_every_tier(tier: Any, level: Any) -> None:
    assert decide(tier, level, always_review=True) == "review"


def test_decide_rejects_unknown_values() -> None:
    with pytest.raises(ValueError, match=r"decide\(tier\).*'manual', 'supervised', 'autonomous'"):
        decide("yolo", "low")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"decide\(risk\).*'low', 'medium', 'high'"):
        decide("manual", "critical")  # type: ignore[arg-type]


# -- declaring risk levels -----------------------------------------------------------------


def test_risk_decorator_on_a_tool_object() -> None:
    @risk("high", always_review=True)
    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    assert isinstance(refund, BaseTool)
    assert refund.metadata == {"lgsp_risk": "high", "lgsp_always_review": True}
    assert declared_risk(refund) == "high"
    assert declared_always_review(refund) is True
    assert refund.invoke({"order_id": "ORDER-7"}) == "refunded ORDER-7"


def test_risk_decorator_keeps_existing_tool_metadata() -> None:
    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return order_id

    lookup.metadata = {"team": "support"}
    marked = risk("low")(lookup)
    assert marked is lookup
    assert lookup.metadata == {"team": "support", "lgsp_risk": "low", "lgsp_always_review": False}
    assert declared_always_review(lookup) is False


def test_risk_decorator_on_plain_functions() -> None:
    @risk("medium")
    def send_email(to: str) -> str:
        return to

    assert send_email("a@b.c") == "a@b.c"
    assert declared_risk(send_email) == "medium"
    assert declared_always_review(send_email) is False
    assert send_email.lgsp_risk == "medium"  # type: ignore[attr-defined]


def test_tool_above_risk_carries_the_functions_level() -> None:
    @tool
    @risk("low")
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return order_id

    assert isinstance(lookup, BaseTool)
    assert declared_risk(lookup) == "low"


def test_risk_decorator_on_async_functions() -> None:
    @risk("high", always_review=True)
    async def wire(amount: float) -> float:
        return amount

    assert declared_risk(wire) == "high"
    assert declared_always_review(wire) is True
    assert asyncio.run(wire(2.0)) == 2.0


def test_risk_decorator_validates() -> None:
    with pytest.raises(ValueError, match=r"risk\(level\): got 'critical'"):
        risk("critical")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="always_review"):
        risk("low", always_review="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="decorate a LangChain tool"):
        risk("low")("not a tool")
    with pytest.raises(TypeError, match="risks mapping instead"):
        risk("low")(len)  # builtins take no attributes


def test_mapping_wins_over_the_decorator() -> None:
    @risk("low")
    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return order_id

    assert declared_risk(refund, mapping={"refund": "high"}) == "high"
    assert declared_risk(refund, mapping={"other": "high"}) == "low"
    assert declared_risk("refund", mapping={"refund": "medium"}) == "medium"
    assert effective_risk(refund, mapping={"refund": "medium"}) == "medium"
    with pytest.raises(ValueError, match=r"risks\['refund'\]: got 'severe'"):
        declared_risk(refund, mapping={"refund": "severe"})  # type: ignore[dict-item]


def test_undeclared_tools_are_high() -> None:
    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return order_id

    def plain(x: int) -> int:
        return x

    for undeclared in (refund, plain, "refund"):
        assert declared_risk(undeclared) is None
        assert effective_risk(undeclared) == "high"
        assert declared_always_review(undeclared) is False


def test_a_bad_hand_written_level_is_an_error() -> None:
    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return order_id

    refund.metadata = {"lgsp_risk": "extreme"}
    with pytest.raises(ValueError, match="tool 'refund'"):
        declared_risk(refund)


def test_declared_risk_rejects_unsupported_objects() -> None:
    with pytest.raises(TypeError, match="give a LangChain tool"):
        declared_risk(42)  # type: ignore[arg-type]


def test_undeclared_tools_listing() -> None:
    @risk("low")
    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return order_id

    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return order_id

    def send_email(to: str) -> str:
        return to

    tools: list[Any] = [lookup, refund, send_email, "refund", "wire", "notify"]
    assert undeclared_tools(tools, {"notify": "low"}) == ["refund", "send_email", "wire"]
    assert undeclared_tools([lookup], {}) == []
    assert undeclared_tools(["refund"], {"refund": "high"}) == []
    with pytest.raises(TypeError, match="got a string"):
        undeclared_tools("refund", {})


def test_undeclared_risk_warning_message() -> None:
    warning = UndeclaredRiskWarning.for_tools(["refund", "wire"], worker="billing")
    assert isinstance(warning, UserWarning)
    assert warning.tools == ("refund", "wire")
    assert warning.worker == "billing"
    text = str(warning)
    assert "refund, wire" in text
    assert "treated as high" in text
    assert "'billing'" in text
    # Usable as a plain category with any message too.
    assert UndeclaredRiskWarning("custom").message == "custom"
    assert str(UndeclaredRiskWarning("custom")).startswith("custom\nFor troubleshooting, visit:")
    assert UndeclaredRiskWarning("custom").tools == ()


def test_warn_undeclared_warns_with_the_list() -> None:
    with pytest.warns(UndeclaredRiskWarning, match=r"treated as high.*: refund") as record:
        names = warn_undeclared(["refund", "lookup"], {"lookup": "low"}, worker="billing")
    assert names == ["refund"]
    assert record[0].filename == __file__  # attributed to the caller
    assert record[0].message.tools == ("refund",)  # type: ignore[union-attr]


def test_warn_undeclared_stacklevel_points_further_up() -> None:
    def builder() -> list[str]:
        return warn_undeclared(["refund"], stacklevel=2)

    with pytest.warns(UndeclaredRiskWarning) as record:
        line = _lineno() + 1
        builder()
    assert (record[0].filename, record[0].lineno) == (__file__, line)


def _lineno() -> int:
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


def test_warn_undeclared_is_silent_when_all_are_declared() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_undeclared(["lookup"], {"lookup": "low"}) == []


# -- ReviewPolicy: construction ------------------------------------------------------------


def test_policy_defaults() -> None:
    policy = ReviewPolicy()
    assert policy.tier == "supervised"
    assert dict(policy.risks) == {}
    assert policy.always_review == frozenset()
    assert policy.review_timeout == 86400.0
    assert policy.on_timeout == "reject"
    assert policy.escalate_to is None
    assert policy.reviewers == "default"
    assert policy.confirm is None


def test_policy_is_frozen_and_keyword_only() -> None:
    policy = ReviewPolicy(risks={"refund": "medium"})
    with pytest.raises(FrozenInstanceError):
        policy.tier = "manual"  # type: ignore[misc]
    with pytest.raises(TypeError):
        policy.risks["refund"] = "low"  # type: ignore[index]
    with pytest.raises(TypeError):
        ReviewPolicy("manual")  # type: ignore[call-arg]


def test_policy_normalises() -> None:
    policy = ReviewPolicy(
        tier=" Manual ",  # type: ignore[arg-type]
        always_review=["wire"],  # type: ignore[arg-type]
        review_timeout=60,
        reviewers=" ops ",
    )
    assert policy.tier == "manual"
    assert policy.always_review == frozenset({"wire"})
    assert isinstance(policy.review_timeout, float)
    assert policy.reviewers == "ops"


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"tier": "fast"}, r"ReviewPolicy\.tier: got 'fast'"),
        ({"risks": {"refund": "critical"}}, r"ReviewPolicy\.risks\['refund'\]: got 'critical'"),
        ({"risks": ["refund"]}, r"ReviewPolicy\.risks: got list"),
        ({"always_review": "wire"}, r"ReviewPolicy\.always_review"),
        ({"always_review": [""]}, r"ReviewPolicy\.always_review"),
        ({"review_timeout": 0}, r"ReviewPolicy\.review_timeout: got 0"),
        ({"review_timeout": -5.0}, r"ReviewPolicy\.review_timeout"),
        ({"review_timeout": float("inf")}, r"ReviewPolicy\.review_timeout"),
        ({"review_timeout": True}, r"ReviewPolicy\.review_timeout"),
        ({"review_timeout": "1h"}, r"ReviewPolicy\.review_timeout"),
        ({"on_timeout": "approve"}, r"ReviewPolicy\.on_timeout: got 'approve'"),
        ({"on_timeout": "escalate"}, r"ReviewPolicy\.escalate_to: on_timeout is 'escalate'"),
        ({"escalate_to": ""}, r"ReviewPolicy\.escalate_to"),
        (
            {"on_timeout": "escalate", "escalate_to": "default"},
            r"ReviewPolicy\.escalate_to: .*same group",
        ),
        ({"reviewers": ""}, r"ReviewPolicy\.reviewers"),
    ],
)
def test_policy_validates(kwargs: dict[str, Any], pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        ReviewPolicy(**kwargs)


@pytest.mark.parametrize(
    "timeout",
    [float("nan"), float("-inf"), 1e12, pytest.param(10**400, id="huge-int"), 10 * 365 * 86400 + 1],
)
def test_review_timeout_must_give_a_deadline_a_datetime_can_hold(timeout: Any) -> None:
    # 1e12 s (~31,700 years) passed the old check and then failed in `deadline()`.
    with pytest.raises(
        ValueError, match=r"ReviewPolicy\.review_timeout: got .*at most 315360000 \(ten years"
    ):
        ReviewPolicy(review_timeout=timeout)


def test_review_timeout_of_ten_years_is_accepted() -> None:
    policy = ReviewPolicy(review_timeout=10 * 365 * 86400)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    assert policy.deadline(start) == start + timedelta(days=3650)


def test_policy_file_review_timeout_is_checked_the_same_way(tmp_path: Path) -> None:
    path = write(tmp_path / "policy.json", json.dumps({"review_timeout": 1e12}))
    with pytest.raises(ValueError, match=r"key 'review_timeout': got 1000000000000\.0; .*ten"):
        ReviewPolicy.from_file(path)


def test_policy_rejects_a_bad_confirm() -> None:
    with pytest.raises(TypeError, match=r"ReviewPolicy\.confirm: got str"):
        ReviewPolicy(confirm="yes")  # type: ignore[arg-type]


# -- ReviewPolicy: policy files ------------------------------------------------------------


def test_from_file_json_round_trip(tmp_path: Path) -> None:
    path = write(tmp_path / "policy.json", json.dumps(FULL))
    policy = ReviewPolicy.from_file(path)
    assert policy == ReviewPolicy(**FULL)
    assert policy.tier == "manual"
    assert dict(policy.risks) == FULL["risks"]
    assert policy.always_review == frozenset({"wire_transfer", "close_account"})
    assert policy.review_timeout == 3600.0
    assert (policy.on_timeout, policy.escalate_to, policy.reviewers) == (
        "escalate",
        "finance-leads",
        "support",
    )


def test_from_file_toml_round_trip(tmp_path: Path) -> None:
    toml_policy = ReviewPolicy.from_file(write(tmp_path / "policy.toml", FULL_TOML))
    json_policy = ReviewPolicy.from_file(write(tmp_path / "policy.json", json.dumps(FULL)))
    assert toml_policy == json_policy == ReviewPolicy(**FULL)


def test_from_file_accepts_a_str_path_and_partial_files(tmp_path: Path) -> None:
    path = write(tmp_path / "p.toml", 'tier = "autonomous"\n')
    policy = ReviewPolicy.from_file(str(path))
    assert policy == ReviewPolicy(tier="autonomous")


def test_from_file_keeps_the_base_policys_other_fields(tmp_path: Path) -> None:
    def check(r: ConfirmRequest) -> bool:
        return True

    base = ReviewPolicy(confirm=check, reviewers="ops", risks={"lookup": "low"})
    path = write(tmp_path / "p.json", json.dumps({"risks": {"refund": "medium"}}))
    policy = ReviewPolicy.from_file(path, base=base)
    assert policy.confirm is check
    assert policy.reviewers == "ops"
    assert dict(policy.risks) == {"refund": "medium"}  # a key in the file replaces the field


def test_from_file_null_escalate_to_in_json(tmp_path: Path) -> None:
    path = write(tmp_path / "p.json", json.dumps({"escalate_to": None}))
    assert ReviewPolicy.from_file(path).escalate_to is None


def test_from_file_unknown_keys_are_named(tmp_path: Path) -> None:
    path = write(tmp_path / "p.json", json.dumps({"tier": "manual", "timeout": 5, "colour": 1}))
    with pytest.raises(ValueError, match="unknown keys") as info:
        ReviewPolicy.from_file(path)
    text = str(info.value)
    assert "'timeout' (did you mean 'on_timeout' or 'review_timeout'?)" in text
    assert "'colour'" in text
    assert str(path) in text


@pytest.mark.parametrize(
    ("content", "key", "fix"),
    [
        ('tier = "fast"\n', "tier", "'manual', 'supervised', 'autonomous'"),
        ('[risks]\nrefund = "critical"\n', "risks", "'low', 'medium', 'high'"),
        ("review_timeout = 0\n", "review_timeout", "a number > 0"),
        ('review_timeout = "1h"\n', "review_timeout", "a number > 0"),
        ('on_timeout = "escalate"\n', "escalate_to", "name the reviewer group"),
        ('on_timeout = "ignore"\n', "on_timeout", "'reject'"),
        ('always_review = "wire"\n', "always_review", "list of tool names"),
    ],
)
def test_from_file_bad_values_name_the_key_and_the_fix(
    tmp_path: Path, content: str, key: str, fix: str
) -> None:
    path = write(tmp_path / "p.toml", content)
    with pytest.raises(ValueError) as info:
        ReviewPolicy.from_file(path)
    text = str(info.value)
    assert f"policy file {path}: key {key!r}" in text
    assert fix in text


def test_from_file_bad_format(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        ReviewPolicy.from_file(write(tmp_path / "p.json", "{tier: manual"))
    with pytest.raises(ValueError, match="not valid TOML"):
        ReviewPolicy.from_file(write(tmp_path / "p.toml", "tier = "))
    with pytest.raises(ValueError, match="top level"):
        ReviewPolicy.from_file(write(tmp_path / "list.json", "[1, 2]"))
    with pytest.raises(ValueError, match=r"unsupported extension '\.yaml'"):
        ReviewPolicy.from_file(write(tmp_path / "p.yaml", "tier: manual"))
    with pytest.raises(FileNotFoundError):
        ReviewPolicy.from_file(tmp_path / "missing.toml")


# -- ReviewPolicy: environment -------------------------------------------------------------


def test_from_env_neither_gives_the_default() -> None:
    assert ReviewPolicy.from_env({}) == ReviewPolicy()
    default = ReviewPolicy(tier="manual")
    assert ReviewPolicy.from_env({}, default=default) is default
    assert ReviewPolicy.from_env({"LGSP_AUTONOMY": " ", "LGSP_POLICY_FILE": ""}) == ReviewPolicy()


def test_from_env_tier_only() -> None:
    policy = ReviewPolicy.from_env(
        {"LGSP_AUTONOMY": "autonomous"}, default=ReviewPolicy(reviewers="ops")
    )
    assert policy.tier == "autonomous"
    assert policy.reviewers == "ops"
    assert ReviewPolicy.from_env({"LGSP_AUTONOMY": "MANUAL"}).tier == "manual"


def test_from_env_file_only(tmp_path: Path) -> None:
    path = write(tmp_path / "policy.toml", FULL_TOML)
    assert ReviewPolicy.from_env({"LGSP_POLICY_FILE": str(path)}) == ReviewPolicy(**FULL)


def test_from_env_tier_overrides_the_files_tier(tmp_path: Path) -> None:
    path = write(tmp_path / "policy.toml", FULL_TOML)
    policy = ReviewPolicy.from_env({"LGSP_POLICY_FILE": str(path), "LGSP_AUTONOMY": "supervised"})
    assert policy.tier == "supervised"
    assert policy.risks["refund"] == "medium"  # the rest comes from the file
    assert policy.escalate_to == "finance-leads"


def test_from_env_keeps_the_defaults_confirm(tmp_path: Path) -> None:
    def check(r: ConfirmRequest) -> bool:
        return False

    path = write(tmp_path / "policy.json", json.dumps({"tier": "supervised"}))
    policy = ReviewPolicy.from_env(
        {"LGSP_POLICY_FILE": str(path)}, default=ReviewPolicy(confirm=check)
    )
    assert policy.confirm is check


def test_from_env_invalid_tier() -> None:
    with pytest.raises(ValueError, match=r"LGSP_AUTONOMY: got 'fast'; give one of 'manual'"):
        ReviewPolicy.from_env({"LGSP_AUTONOMY": "fast"})


def test_from_env_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ValueError, match="LGSP_POLICY_FILE: cannot read the policy file"):
        ReviewPolicy.from_env({"LGSP_POLICY_FILE": str(missing)})


def test_from_env_reads_os_environ_by_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("LGSP_POLICY_FILE", raising=False)
    monkeypatch.setenv("LGSP_AUTONOMY", "manual")
    assert ReviewPolicy.from_env().tier == "manual"


# -- ReviewPolicy: tier, risk, action ------------------------------------------------------


def test_tier_for_a_run_may_make_its_tier_stricter() -> None:
    policy = ReviewPolicy(tier="supervised")
    assert policy.tier_for({"configurable": {"autonomy": "Manual"}}) == "manual"
    assert policy.tier_for({"configurable": {"autonomy": "supervised"}}) == "supervised"
    assert ReviewPolicy(tier="autonomous").tier_for({"configurable": {"autonomy": "manual"}}) == (
        "manual"
    )


@pytest.mark.parametrize(
    ("tier", "asked"),
    [("manual", "supervised"), ("manual", "autonomous"), ("supervised", "autonomous")],
)
def test_tier_for_refuses_a_looser_run_tier_naming_the_field_and_the_fix(
    tier: str, asked: str
) -> None:
    policy = ReviewPolicy(tier=tier)  # type: ignore[arg-type]
    with pytest.raises(ValueError) as info:
        policy.tier_for({"configurable": {"autonomy": asked}})
    text = str(info.value)
    assert text.startswith(
        f"configurable.autonomy: got {asked!r}, looser than the deployment's tier {tier!r}"
    )
    assert "ReviewPolicy.allow_run_override=True" in text
    assert "allow_run_override = true in the policy file" in text
    # Even when the run recorded the looser tier (a resume passing it back).
    with pytest.raises(ValueError, match="looser than the deployment's tier"):
        policy.tier_for({"configurable": {"autonomy": asked}}, recorded=asked)
    # The same reason, without raising, for callers that refuse in their own way.
    assert policy.tier_refusal(asked) == text
    assert policy.tier_refusal(asked, field="context.autonomy").startswith(
        f"context.autonomy: got {asked!r}"
    )
    assert policy.tier_refusal(tier) is None


def test_tier_for_allow_run_override_lets_a_run_loosen_it() -> None:
    policy = ReviewPolicy(tier="manual", allow_run_override=True)
    assert policy.tier_for({"configurable": {"autonomy": "autonomous"}}) == "autonomous"
    assert policy.tier_for({"configurable": {"autonomy": "Supervised"}}) == "supervised"
    assert policy.tier_refusal("autonomous") is None
    assert policy.tier_for(None) == "manual"


def test_allow_run_override_is_off_by_default_and_checked() -> None:
    assert ReviewPolicy().allow_run_override is False
    with pytest.raises(ValueError) as info:
        ReviewPolicy(allow_run_override="yes")  # type: ignore[arg-type]
    assert str(info.value).startswith("ReviewPolicy.allow_run_override: got 'yes'; give true")


def test_allow_run_override_in_the_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text('tier = "supervised"\nallow_run_override = true\n')
    policy = ReviewPolicy.from_file(path)
    assert policy.allow_run_override is True
    assert policy.tier_for({"configurable": {"autonomy": "autonomous"}}) == "autonomous"
    path.write_text('allow_run_override = "yes"\n')
    with pytest.raises(ValueError, match=r"key 'allow_run_override': got 'yes'; give true"):
        ReviewPolicy.from_file(path)


def test_requested_tier() -> None:
    policy = ReviewPolicy(tier="manual")
    assert policy.requested_tier(None) is None
    assert policy.requested_tier({"configurable": {"autonomy": " "}}) is None
    assert policy.requested_tier({"configurable": {"autonomy": "AUTONOMOUS"}}) == "autonomous"
    with pytest.raises(ValueError, match=r"configurable\.autonomy: got 'yolo'"):
        policy.requested_tier({"configurable": {"autonomy": "yolo"}})


def test_tier_for_missing_gives_the_policy_tier() -> None:
    policy = ReviewPolicy(tier="manual")
    assert policy.tier_for(None) == "manual"
    assert policy.tier_for({}) == "manual"
    assert policy.tier_for({"configurable": {}}) == "manual"
    assert policy.tier_for({"configurable": {"autonomy": None}}) == "manual"
    assert policy.tier_for({"configurable": {"autonomy": ""}}) == "manual"
    assert policy.tier_for({"configurable": {"thread_id": "t"}}) == "manual"


@pytest.mark.parametrize("value", ["yolo", 3, ["manual"]])
def test_tier_for_invalid_value(value: Any) -> None:
    policy = ReviewPolicy(tier="manual")
    with pytest.raises(ValueError) as info:
        policy.tier_for({"configurable": {"autonomy": value}})
    text = str(info.value)
    assert text.startswith("configurable.autonomy: got")
    assert "'manual', 'supervised', 'autonomous'" in text


def test_risk_of_precedence() -> None:
    policy = ReviewPolicy(risks={"refund": "high"})
    assert policy.risk_of("refund", "low") == "high"  # the file wins
    assert policy.risk_of("lookup", "low") == "low"  # then the declared level
    assert policy.risk_of("send", None) == "high"  # then high (fail closed)
    with pytest.raises(ValueError, match="tool 'x'"):
        policy.risk_of("x", "bad")  # type: ignore[arg-type]


def test_action_combines_tier_risk_and_always_review() -> None:
    policy = ReviewPolicy(
        tier="supervised",
        risks={"refund": "medium"},
        always_review=frozenset({"wire"}),
        confirm=lambda r: True,
    )
    autonomous: RunnableConfig = {"configurable": {"autonomy": "autonomous"}}
    manual: RunnableConfig = {"configurable": {"autonomy": "manual"}}
    assert policy.action("lookup", "low", None) == "run"
    assert policy.action("refund", None, None) == "confirm"
    assert policy.action("refund", None, manual) == "review"
    assert policy.action("unknown", None, None) == "review"  # undeclared -> high
    with pytest.raises(ValueError, match="looser than the deployment's tier 'supervised'"):
        policy.action("refund", None, autonomous)
    # A tier the caller has settled (a domain of a tree runs in its parent's).
    assert policy.action("refund", None, None, tier="autonomous") == "run"
    loose = replace(policy, allow_run_override=True)
    assert loose.action("refund", None, autonomous) == "run"
    assert loose.action("wire", "low", autonomous) == "review"
    assert loose.action("lookup", "low", autonomous, always_review=True) == "review"


def test_action_without_confirm_sends_medium_to_a_human() -> None:
    assert ReviewPolicy().action("refund", "medium", None) == "review"
    assert ReviewPolicy().action("lookup", "low", None) == "run"


def test_dispatch_action() -> None:
    policy = ReviewPolicy(tier="supervised")
    assert policy.dispatch_action(None) == "run"
    assert policy.dispatch_action({"configurable": {"autonomy": "manual"}}) == "review"
    assert ReviewPolicy(tier="manual").dispatch_action(None) == "review"
    assert ReviewPolicy(tier="autonomous").dispatch_action(None) == "run"


# -- deadlines -----------------------------------------------------------------------------


def test_deadline_adds_the_timeout_in_utc() -> None:
    policy = ReviewPolicy(review_timeout=5400)
    now = datetime(2025, 3, 30, 23, 30, tzinfo=UTC)
    deadline = policy.deadline(now)
    assert deadline == datetime(2025, 3, 31, 1, 0, tzinfo=UTC)
    assert deadline.tzinfo is UTC
    assert deadline - now == timedelta(seconds=5400)


def test_deadline_converts_other_timezones_to_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    now = datetime(2025, 1, 1, 12, 0, tzinfo=plus_two)
    deadline = ReviewPolicy(review_timeout=86400).deadline(now)
    assert deadline == datetime(2025, 1, 2, 10, 0, tzinfo=UTC)
    assert deadline.utcoffset() == timedelta(0)


def test_deadline_default_now_and_fractional_seconds() -> None:
    before = datetime.now(UTC)
    deadline = ReviewPolicy(review_timeout=0.5).deadline()
    after = datetime.now(UTC)
    assert before + timedelta(seconds=0.5) <= deadline <= after + timedelta(seconds=0.5)


def test_deadline_rejects_naive_times() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        ReviewPolicy().deadline(datetime(2025, 1, 1))


# -- ConfirmRequest ------------------------------------------------------------------------


def test_confirm_request_is_frozen_with_read_only_args() -> None:
    args = {"amount": 30}
    r = request(args=args)
    args["amount"] = 1000
    assert r.args["amount"] == 30
    with pytest.raises(TypeError):
        r.args["amount"] = 5  # type: ignore[index]
    with pytest.raises(FrozenInstanceError):
        r.tool = "other"  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"ConfirmRequest\.risk"):
        request(risk="severe")
    with pytest.raises(TypeError, match=r"ConfirmRequest\.args"):
        request(args=["amount"])


# -- confirmation: callables ---------------------------------------------------------------


def test_confirm_callable_true_and_false() -> None:
    seen: list[ConfirmRequest] = []

    def small_refunds(r: ConfirmRequest) -> bool:
        seen.append(r)
        return bool(r.args["amount"] <= 50)

    policy = ReviewPolicy(confirm=small_refunds)
    ok, reason = confirm_action(policy, request())
    assert ok is True
    assert "approved" in reason and "small_refunds" in reason
    ok, reason = confirm_action(policy, request(args={"amount": 500}))
    assert ok is False
    assert "denied" in reason and "small_refunds" in reason
    assert [r.args["amount"] for r in seen] == [30, 500]
    assert seen[0].worker == "billing" and seen[0].task == "Refund ORDER-7"


def test_confirm_callable_raising_fails_closed() -> None:
    def broken(r: ConfirmRequest) -> bool:
        raise RuntimeError("limits service down")

    ok, reason = confirm_action(ReviewPolicy(confirm=broken), request())
    assert ok is False
    assert "RuntimeError: limits service down" in reason
    assert "fail closed" in reason


@pytest.mark.parametrize("result", [1, "yes", None, [True]])
def test_confirm_callable_non_bool_fails_closed(result: Any) -> None:
    ok, reason = confirm_action(ReviewPolicy(confirm=lambda r: result), request())
    assert ok is False
    assert "not True or False" in reason


def test_confirm_callable_interrupt_propagates() -> None:
    def asks_a_human(r: ConfirmRequest) -> bool:
        raise GraphInterrupt(())

    with pytest.raises(GraphInterrupt):
        confirm_action(ReviewPolicy(confirm=asks_a_human), request())


def test_confirm_async_callable_from_sync_code() -> None:
    async def check(r: ConfirmRequest) -> bool:
        await asyncio.sleep(0)
        return True

    assert confirm_action(ReviewPolicy(confirm=check), request())[0] is True


def test_confirm_none_denies() -> None:
    assert confirm_action(ReviewPolicy(), request()) == (False, "no confirmation policy configured")


# -- confirmation: models ------------------------------------------------------------------


def test_confirm_model_approves() -> None:
    model = ScriptedChatModel(script=[{"approve": True, "reason": "Matches the task."}])
    ok, reason = confirm_action(ReviewPolicy(confirm=model), request())
    assert ok is True
    assert reason == "approved by the confirmation model: Matches the task."
    call = model.calls[0]
    assert call.tools == ("ConfirmVerdict",)
    assert isinstance(call.messages[0], SystemMessage)
    assert call.messages[0].content == CONFIRM_PROMPT
    prompt = str(call.messages[-1].content)
    for expected in ("Refund ORDER-7", "billing", "refund (risk: medium)", '"amount": 30'):
        assert expected in prompt
    model.assert_complete()


def test_confirm_model_denies() -> None:
    model = ScriptedChatModel(
        script=[ConfirmVerdict(approve=False, reason="Amount differs from the order.")]
    )
    ok, reason = confirm_action(ReviewPolicy(confirm=model), request())
    assert ok is False
    assert reason == "denied by the confirmation model: Amount differs from the order."


@pytest.mark.parametrize(
    "step",
    [
        {"approve": "perhaps", "reason": "?"},
        {"reason": "no verdict field"},
        {"approve": True},  # a verdict without a reason is not accepted either
        "Sure, go ahead!",  # text instead of the structured verdict
        AIMessage(content="", tool_calls=[{"name": "other", "args": {}, "id": "c1"}]),
        RuntimeError("provider down"),
    ],
)
def test_confirm_model_garbage_fails_closed(step: Any) -> None:
    model = ScriptedChatModel(script=[step])
    ok, reason = confirm_action(ReviewPolicy(confirm=model), request())
    assert ok is False
    assert "fail closed" in reason


def test_confirm_model_call_is_traced_and_not_streamed() -> None:
    model = ScriptedChatModel(script=[{"approve": True, "reason": "ok"}])
    seen: list[dict[str, Any]] = []

    class Recorder(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            seen.append({"tags": kwargs.get("tags"), "metadata": kwargs.get("metadata")})

    config: Any = {"callbacks": [Recorder()], "metadata": {"lgsp_step": 3}}
    assert confirm_action(ReviewPolicy(confirm=model), request(), config=config)[0] is True
    assert TAG_NOSTREAM in seen[0]["tags"]
    assert seen[0]["metadata"]["lgsp_source"] == "confirmation"
    assert seen[0]["metadata"]["lgsp_step"] == 3


# -- confirmation: the async twin ----------------------------------------------------------


async def test_aconfirm_callables() -> None:
    async def async_check(r: ConfirmRequest) -> bool:
        await asyncio.sleep(0)
        return bool(r.args["amount"] < 100)

    def raising(r: ConfirmRequest) -> bool:
        raise ValueError("bad")

    assert (await aconfirm_action(ReviewPolicy(confirm=async_check), request()))[0] is True
    assert (await aconfirm_action(ReviewPolicy(confirm=lambda r: True), request()))[0] is True
    assert (await aconfirm_action(ReviewPolicy(confirm=lambda r: False), request()))[0] is False
    ok, reason = await aconfirm_action(ReviewPolicy(confirm=raising), request())
    assert ok is False and "ValueError: bad" in reason
    says_yes: Any = lambda r: "yes"  # noqa: E731
    ok, reason = await aconfirm_action(ReviewPolicy(confirm=says_yes), request())
    assert ok is False and "not True or False" in reason
    assert await aconfirm_action(ReviewPolicy(), request()) == (
        False,
        "no confirmation policy configured",
    )


async def test_aconfirm_models() -> None:
    def verdict(call: ScriptedCall) -> dict[str, Any]:
        return {"approve": "ORDER-7" in str(call.messages[-1].content), "reason": "checked"}

    model = ScriptedChatModel(script=[verdict, verdict, {"approve": 1.5, "reason": "x"}])
    policy = ReviewPolicy(confirm=model)
    assert await aconfirm_action(policy, request()) == (
        True,
        "approved by the confirmation model: checked",
    )
    ok, _ = await aconfirm_action(
        policy, request(task="Refund ORDER-8", args={"order_id": "ORDER-8"})
    )
    assert ok is False
    ok, reason = await aconfirm_action(policy, request())
    assert ok is False and "fail closed" in reason
    model.assert_complete()


async def test_aconfirm_and_confirm_agree() -> None:
    steps: list[Any] = [
        {"approve": True, "reason": "fine"},
        {"approve": False, "reason": "no"},
        "text",
    ]
    sync_model = ScriptedChatModel(script=list(steps))
    async_model = ScriptedChatModel(script=list(steps))
    for _ in steps:
        assert confirm_action(ReviewPolicy(confirm=sync_model), request()) == (
            await aconfirm_action(ReviewPolicy(confirm=async_model), request())
        )


# -- docstring examples ------------------------------------------------------------------


# -- ReviewPolicy: who may answer ----------------------------------------------------------


def _review(reviewers: str | None = "support", **context: Any) -> PendingReview:
    payload = review_payload(
        kind="tool",
        action="refund",
        args={"amount": 30},
        description="Refund 30",
        allowed=["approve", "reject"],
        context={"reviewers": reviewers, "escalate_to": "leads", **context},
    )
    return PendingReview.from_payload(payload, thread_id="t1", interrupt_id="ab12")


GROUPS = {"support": ["alice", "bob"], "leads": ["carol"]}


def test_no_rule_by_default_anyone_may_answer() -> None:
    policy = ReviewPolicy()
    assert dict(policy.members) == {} and policy.may_answer is None
    assert not policy.restricts_reviewers
    for who in ("alice", "mallory", None, ""):
        assert policy.reviewer_refusal(who, _review()) is None


def test_members_are_normalised_and_read_only() -> None:
    policy = ReviewPolicy(
        reviewers="support",
        escalate_to="leads",
        members={" support ": [" alice ", "bob"], **{"leads": ("carol",)}},
    )
    assert dict(policy.members) == {
        "support": frozenset({"alice", "bob"}),
        "leads": frozenset({"carol"}),
    }
    assert policy.restricts_reviewers
    with pytest.raises(TypeError):
        policy.members["x"] = frozenset()  # type: ignore[index]


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"members": ["alice"]}, r"ReviewPolicy\.members: got list; give a mapping"),
        ({"members": {"default": "alice"}}, r"ReviewPolicy\.members\['default'\]: got 'alice'"),
        ({"members": {"default": []}}, r"members\['default'\]: got \[\]; give a non-empty"),
        ({"members": {"default": [""]}}, r"members\['default'\]: .*non-empty list"),
        ({"members": {"": ["a"]}}, r"ReviewPolicy\.members: got the group name ''"),
        (
            {"members": {"default": ["lgsp:sweep"]}},
            r"'lgsp:sweep' starts with 'lgsp:', which is reserved",
        ),
        (
            {"members": {"support": ["alice"]}},
            r"ReviewPolicy\.members: the reviewer group 'default' \(reviewers\) has no members.*"
            r"set reviewers to one of 'support'",
        ),
        (
            {"reviewers": "support", "escalate_to": "leads", "members": {"support": ["a"]}},
            r"the reviewer group 'leads' \(escalate_to\) has no members",
        ),
    ],
)
def test_members_are_validated(kwargs: dict[str, Any], pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        ReviewPolicy(**kwargs)


@pytest.mark.parametrize("bad", ["alice", 3, RunnableLambda(lambda x: x), ReviewPolicy])
def test_may_answer_must_be_a_function(bad: Any) -> None:
    with pytest.raises(TypeError, match=r"ReviewPolicy\.may_answer: got .*; give a function"):
        ReviewPolicy(may_answer=bad)


def test_members_allow_only_the_current_groups_members() -> None:
    policy = ReviewPolicy(reviewers="support", escalate_to="leads", members=GROUPS)
    review = _review()
    assert policy.reviewer_refusal("alice", review) is None
    assert policy.reviewer_refusal(" bob ", review) is None
    assert policy.reviewer_refusal("carol", review) == (
        "'carol' may not answer review ab12 (tool 'refund'): not a member of the reviewer "
        "group 'support'"
    )
    assert "names no reviewer" in (policy.reviewer_refusal(None, review) or "")
    assert "names no reviewer" in (policy.reviewer_refusal("  ", review) or "")
    # Escalated: the leads' review now.
    escalated = _review("leads")
    assert policy.reviewer_refusal("carol", escalated) is None
    assert "group 'leads'" in (policy.reviewer_refusal("alice", escalated) or "")
    # A group the policy does not know (a payload from elsewhere): nobody may answer.
    assert "group 'ops' has no members" in (policy.reviewer_refusal("alice", _review("ops")) or "")
    assert "group None has no members" in (policy.reviewer_refusal("alice", _review(None)) or "")


def test_may_answer_decides_and_fails_closed() -> None:
    seen: list[tuple[str, str]] = []

    def only_seniors(who: str, review: PendingReview) -> bool:
        seen.append((who, review.interrupt_id))
        return who.startswith("senior-")

    policy = ReviewPolicy(may_answer=only_seniors)
    assert policy.restricts_reviewers
    assert policy.reviewer_refusal("senior-ann", _review()) is None
    assert policy.reviewer_refusal("junior-joe", _review()) == (
        "'junior-joe' may not answer review ab12 (tool 'refund'): refused by the policy's "
        "may_answer rule"
    )
    assert seen == [("senior-ann", "ab12"), ("junior-joe", "ab12")]
    assert "names no reviewer" in (policy.reviewer_refusal(None, _review()) or "")
    assert len(seen) == 2  # not asked about nobody

    def broken(who: str, review: PendingReview) -> bool:
        raise LookupError("directory\n down")

    refusal = ReviewPolicy(may_answer=broken).reviewer_refusal("ann", _review())
    assert refusal == (
        "'ann' may not answer review ab12 (tool 'refund'): the may_answer rule raised "
        "LookupError: directory down"
    )
    truthy = ReviewPolicy(may_answer=lambda who, review: 1)  # type: ignore[arg-type,return-value]
    assert truthy.reviewer_refusal("ann", _review()) is not None  # only True allows


def test_members_and_may_answer_must_both_allow() -> None:
    policy = ReviewPolicy(
        reviewers="support",
        members={"support": ["alice", "bob"]},
        may_answer=lambda who, review: who != "bob",
    )
    assert policy.reviewer_refusal("alice", _review()) is None
    assert "may_answer rule" in (policy.reviewer_refusal("bob", _review()) or "")
    assert "not a member" in (policy.reviewer_refusal("carol", _review()) or "")


def test_the_sweep_may_apply_the_reviews_own_on_timeout_only() -> None:
    policy = ReviewPolicy(reviewers="support", escalate_to="leads", members=GROUPS)
    review = _review()
    assert SWEEP_REVIEWER == "lgsp:sweep"
    assert policy.reviewer_refusal(SWEEP_REVIEWER, review, decision={"type": "reject"}) is None
    escalate = EscalateDecision(type="escalate", to="leads")
    assert policy.reviewer_refusal(SWEEP_REVIEWER, review, decision=escalate) is None
    for other in ({"type": "approve"}, {"type": "escalate", "to": "friends"}, None):
        assert policy.reviewer_refusal(SWEEP_REVIEWER, review, decision=other) is not None
    no_target = _review(escalate_to=None)
    assert policy.reviewer_refusal(SWEEP_REVIEWER, no_target, decision=escalate) is not None


def test_members_come_from_the_policy_file_and_may_answer_is_kept(tmp_path: Path) -> None:
    def rule(who: str, review: PendingReview) -> bool:
        return True

    toml = write(
        tmp_path / "p.toml",
        'reviewers = "support"\nescalate_to = "leads"\non_timeout = "escalate"\n'
        '[members]\nsupport = ["alice", "bob"]\nleads = ["carol"]\n',
    )
    policy = ReviewPolicy.from_file(toml, base=ReviewPolicy(may_answer=rule))
    assert dict(policy.members) == {
        "support": frozenset({"alice", "bob"}),
        "leads": frozenset({"carol"}),
    }
    assert policy.may_answer is rule
    as_json = write(
        tmp_path / "p.json",
        json.dumps({"reviewers": "ops", "members": {"ops": ["dan"]}}),
    )
    assert dict(ReviewPolicy.from_file(as_json).members) == {"ops": frozenset({"dan"})}
    env = ReviewPolicy.from_env({"LGSP_POLICY_FILE": str(toml)})
    assert env.reviewers == "support" and "carol" in env.members["leads"]
    bad = write(tmp_path / "bad.toml", '[members]\nsupport = "alice"\n')
    with pytest.raises(ValueError, match=rf"policy file {bad}: key 'members'\['support'\]"):
        ReviewPolicy.from_file(bad)
    lost = write(tmp_path / "lost.toml", '[members]\nsupport = ["alice"]\n')
    with pytest.raises(ValueError, match="group 'default' \\(reviewers\\) has no members"):
        ReviewPolicy.from_file(lost)


def test_docstring_examples_run() -> None:
    import doctest
    import importlib

    # The old policy module is now risk, policy and confirm: their examples together.
    attempted = 0
    for name in ("risks", "policy", "confirm"):
        module = importlib.import_module(f"langgraph_supervisor_pro.review._{name}")
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, name
        attempted += result.attempted
    assert attempted > 30

"""The review policy: autonomy tiers, the tier matrix (`decide`), deadlines and who may answer.

A tool's risk and the tier decide whether a call runs, asks the confirmation check, or
waits for a human. A run may make its tier stricter, never looser (unless allowed).
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/reviews/
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig

from langgraph_supervisor_pro._internal.checks import check_seconds
from langgraph_supervisor_pro.review._payload import PendingReview, aware_or_now
from langgraph_supervisor_pro.review._risks import RISK_LEVELS, Risk, _choices, check_risk

Tier: TypeAlias = Literal["manual", "supervised", "autonomous"]
"""How much runs without a human: the autonomy tier."""

Action: TypeAlias = Literal["run", "confirm", "review"]
"""What happens to one action: run it, ask the confirmation policy, or ask a human."""

OnTimeout: TypeAlias = Literal["reject", "escalate"]
"""What the deadline sweep does with an expired review."""

TIERS: tuple[Tier, ...] = ("manual", "supervised", "autonomous")
"""The autonomy tiers, most to least supervised."""

AUTONOMY_CONFIG_KEY = "autonomy"
"""The per-run tier: `config["configurable"]["autonomy"]`."""

AUTONOMY_ENV = "LGSP_AUTONOMY"
"""The environment variable holding the deployment's tier."""

POLICY_FILE_ENV = "LGSP_POLICY_FILE"
"""The environment variable holding the path of the deployment's policy file."""

SWEEP_REVIEWER = "lgsp:sweep"
"""The identity the deadline sweep answers as: it may always apply a review's own
`on_timeout`, whoever the review's reviewers are (no user may be `lgsp:...`)."""

ReviewerCheck: TypeAlias = "Callable[[str, PendingReview], bool]"
"""`ReviewPolicy.may_answer`: whether an identity may answer a pending review."""


@dataclass(frozen=True)
class ConfirmRequest:
    """What a confirmation check sees: one action a worker wants to take.

    Example:
        ```python
        ConfirmRequest(tool="refund", args={"order_id": "O-7"}, risk="medium",
                       worker="billing", task="Refund O-7")
        ```
    """

    tool: str
    """The tool's name."""
    args: Mapping[str, Any]
    """The call's arguments (a read-only copy)."""
    risk: Risk
    """The tool's effective risk level."""
    worker: str
    """The worker making the call."""
    task: str
    """The user's task for this run."""

    def __post_init__(self) -> None:
        if not isinstance(self.args, Mapping):
            raise TypeError(
                f"ConfirmRequest.args: got {type(self.args).__name__}; give the call's "
                "arguments as a mapping"
            )
        object.__setattr__(self, "args", MappingProxyType(dict(self.args)))
        object.__setattr__(self, "risk", check_risk(self.risk, "ConfirmRequest.risk"))


ConfirmCheck: TypeAlias = (
    Callable[[ConfirmRequest], bool] | Callable[[ConfirmRequest], Awaitable[bool]] | BaseChatModel
)
"""A supervised-tier confirmation check: a (sync or async) function of a `ConfirmRequest`
returning True to let the action run, or a chat model (see `confirm_action`)."""

_MATRIX: Mapping[Tier, Mapping[Risk, Action]] = MappingProxyType(
    {
        "manual": MappingProxyType({"low": "run", "medium": "review", "high": "review"}),
        "supervised": MappingProxyType({"low": "run", "medium": "confirm", "high": "review"}),
        "autonomous": MappingProxyType({"low": "run", "medium": "run", "high": "run"}),
    }
)
_ON_TIMEOUT: tuple[OnTimeout, ...] = ("reject", "escalate")
_MAX_REVIEW_TIMEOUT = 10 * 365 * 86400.0  # ten years: deadlines stay far inside datetime's range
_CODE = {  # fields that are code, not in the policy file: how to give one
    "confirm": "give a function taking a ConfirmRequest and returning True to approve, a chat "
    "model, or None (medium actions then go to a human)",
    "may_answer": "give a function taking the reviewer's identity and the PendingReview and "
    "returning True when they may answer it, or None (no rule: anyone may answer)",
}
_FILE_KEYS = (
    "tier",
    "risks",
    "always_review",
    "review_timeout",
    "on_timeout",
    "escalate_to",
    "reviewers",
    "members",
    "allow_run_override",
)
_RESERVED_PREFIX = "lgsp:"


def _check_tier(value: object, where: str, *, unset: str = "") -> Tier:
    if isinstance(value, str):
        folded = value.strip().lower()
        for tier in TIERS:
            if folded == tier:
                return tier
    raise ValueError(f"{where}: got {value!r}; give one of {_choices(TIERS)}{unset}")


def strictest_tier(*tiers: str | None) -> Tier:
    """The most supervised of `tiers` (None skipped; `ValueError` for a non-tier or none).

    A level of a tree runs in the strictest of its parent's tier and its own policy's.

    Example:
        >>> strictest_tier("autonomous", "supervised", None)
        'supervised'
    """
    given = [_check_tier(tier, "strictest_tier(tiers)") for tier in tiers if tier is not None]
    if not given:
        raise ValueError("strictest_tier: give at least one tier")
    return min(given, key=TIERS.index)


def decide(tier: Tier, risk: Risk, *, always_review: bool = False) -> Action:
    """What happens to one action at a risk level, in an autonomy tier.

    `manual`: low runs, medium and high go to a human. `supervised`: low runs, medium
    asks the confirmation policy, high goes to a human. `autonomous`: everything runs.
    `always_review` (the tool is marked always-review) sends it to a human in every tier.
    A `tier` or `risk` that is not a known value raises `ValueError`.

    Example:
        >>> decide("supervised", "medium"), decide("autonomous", "high")
        ('confirm', 'run')
        >>> decide("autonomous", "low", always_review=True)
        'review'
    """
    checked_tier = _check_tier(tier, "decide(tier)")
    checked_risk = check_risk(risk, "decide(risk)")
    if always_review:
        return "review"
    return _MATRIX[checked_tier][checked_risk]


def _check_fields(values: Mapping[str, Any], label: Callable[[str], str]) -> dict[str, Any]:
    """Validate and normalise a `ReviewPolicy`'s field values; `label(key)` names a field."""
    out = dict(values)
    out["tier"] = _check_tier(values["tier"], label("tier"))

    risks = values["risks"]
    if not isinstance(risks, Mapping):
        raise ValueError(
            f"{label('risks')}: got {type(risks).__name__}; give a mapping of tool name to "
            f"risk level (one of {_choices(RISK_LEVELS)})"
        )
    checked: dict[str, Risk] = {}
    for name, level in risks.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{label('risks')}: got the tool name {name!r}; give tool names")
        checked[name] = check_risk(level, f"{label('risks')}[{name!r}]")
    out["risks"] = MappingProxyType(checked)

    always = values["always_review"]
    if isinstance(always, str) or not isinstance(always, Iterable):
        raise ValueError(
            f"{label('always_review')}: got {always!r}; give a list of tool names "
            '(e.g. ["wire_transfer"])'
        )
    names = list(always)
    if not all(isinstance(n, str) and n.strip() for n in names):
        raise ValueError(
            f"{label('always_review')}: got {names!r}; give a list of non-empty tool names"
        )
    out["always_review"] = frozenset(names)

    out["review_timeout"] = check_seconds(
        values["review_timeout"],
        label("review_timeout"),
        maximum=_MAX_REVIEW_TIMEOUT,
        what="the seconds a review may wait for a decision before on_timeout applies, a number",
        fix=" (ten years; the default is 86400, one day)",
    )

    on_timeout = values["on_timeout"]
    if on_timeout not in _ON_TIMEOUT:
        raise ValueError(
            f"{label('on_timeout')}: got {on_timeout!r}; give 'reject' (the default: expired "
            "reviews are rejected) or 'escalate' (with escalate_to naming the reviewer group)"
        )

    reviewers = values["reviewers"]
    if not isinstance(reviewers, str) or not reviewers.strip():
        raise ValueError(
            f"{label('reviewers')}: got {reviewers!r}; give the name of the reviewer group "
            "reviews are assigned to first (the default is 'default')"
        )
    out["reviewers"] = reviewers.strip()

    escalate_to = values["escalate_to"]
    if escalate_to is not None:
        if not isinstance(escalate_to, str) or not escalate_to.strip():
            raise ValueError(
                f"{label('escalate_to')}: got {escalate_to!r}; give the name of the reviewer "
                "group expired reviews are escalated to"
            )
        escalate_to = escalate_to.strip()
        if escalate_to == out["reviewers"]:
            raise ValueError(
                f"{label('escalate_to')}: got {escalate_to!r}, the same group as reviewers; "
                "name another reviewer group to escalate expired reviews to"
            )
    out["escalate_to"] = escalate_to
    if on_timeout == "escalate" and escalate_to is None:
        raise ValueError(
            f"{label('escalate_to')}: on_timeout is 'escalate' but escalate_to is not set; "
            "name the reviewer group expired reviews go to, or set on_timeout to 'reject'"
        )
    override = values["allow_run_override"]
    if not isinstance(override, bool):
        raise ValueError(
            f"{label('allow_run_override')}: got {override!r}; give true to let a run's "
            "configurable.autonomy loosen the tier, or false (the default: a run may only "
            "make its tier stricter)"
        )
    out["members"] = _check_members(values["members"], label("members"))
    groups = out["members"]
    if groups:
        for key in ("reviewers", "escalate_to"):
            group = out[key]
            if group is not None and group not in groups:
                raise ValueError(
                    f"{label('members')}: the reviewer group {group!r} ({key}) has no members, "
                    f"so nobody could answer its reviews; add it to members or set {key} to "
                    f"one of {_choices(tuple(groups))}"
                )
    return out


def _check_members(members: object, where: str) -> Mapping[str, frozenset[str]]:
    """Validate `members`: reviewer group -> the identities that may answer its reviews."""
    fix = 'give a mapping of reviewer group to identities, e.g. {"support": ["alice", "bob"]}'
    if not isinstance(members, Mapping):
        raise ValueError(f"{where}: got {type(members).__name__}; {fix}")
    checked: dict[str, frozenset[str]] = {}
    for group, identities in members.items():
        if not isinstance(group, str) or not group.strip():
            raise ValueError(f"{where}: got the group name {group!r}; {fix}")
        if isinstance(identities, str) or not isinstance(identities, Iterable):
            raise ValueError(
                f"{where}[{group!r}]: got {identities!r}; give a list of identities "
                f'(e.g. ["alice"])'
            )
        names = list(identities)
        if not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise ValueError(
                f"{where}[{group!r}]: got {names!r}; give a non-empty list of identities "
                "(the users who may answer the group's reviews)"
            )
        reserved = [n for n in names if n.strip().startswith(_RESERVED_PREFIX)]
        if reserved:
            raise ValueError(
                f"{where}[{group!r}]: {reserved[0]!r} starts with {_RESERVED_PREFIX!r}, which "
                f"is reserved for the package's own reviewers (the sweep is {SWEEP_REVIEWER!r} "
                "and may always apply on_timeout); give user identities"
            )
        checked[group.strip()] = frozenset(n.strip() for n in names)
    return MappingProxyType(checked)


def _decision_fields(decision: object) -> tuple[str | None, str | None]:
    """A decision's type and, for an escalation, its target group (a model or a dict)."""
    if isinstance(decision, Mapping):
        kind, to = decision.get("type"), decision.get("to")
    else:
        kind, to = getattr(decision, "type", None), getattr(decision, "to", None)
    return kind if isinstance(kind, str) else None, to if isinstance(to, str) else None


def _read_policy_file(path: Path) -> dict[str, Any]:
    suffix = path.suffix.lower()
    if suffix not in (".json", ".toml"):
        raise ValueError(
            f"policy file {path}: unsupported extension {path.suffix!r}; give a .json or .toml file"
        )
    raw = path.read_bytes()
    try:
        data = json.loads(raw) if suffix == ".json" else tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        kind = "JSON" if suffix == ".json" else "TOML"
        raise ValueError(f"policy file {path}: not valid {kind} ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError(
            f"policy file {path}: got a {type(data).__name__} at the top level; give an "
            f"object with keys among {_choices(_FILE_KEYS)}"
        )
    unknown = [key for key in data if key not in _FILE_KEYS]
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(str(key), _FILE_KEYS, n=2)
            guess = " or ".join(repr(c) for c in close)
            hints.append(f"{key!r} (did you mean {guess}?)" if close else repr(key))
        raise ValueError(
            f"policy file {path}: unknown key{'' if len(unknown) == 1 else 's'} "
            f"{', '.join(hints)}; allowed keys: {_choices(_FILE_KEYS)}"
        )
    return data


@dataclass(frozen=True, kw_only=True)
class ReviewPolicy:
    """Which actions need review, by whom, and until when: the review policy.

    `ReviewPolicy()` is the supervised tier, no risk table (undeclared tools count as high
    risk), no confirmation check (medium actions go to a human), one-day deadlines
    rejected when they pass, and anyone may answer. Also `from_file` and `from_env`.

    Example:
        >>> policy = ReviewPolicy(tier="supervised", risks={"refund": "medium"},
        ...                       always_review=frozenset({"wire_transfer"}))
        >>> policy.action("lookup", "low", None), policy.action("refund", None, None)
        ('run', 'review')
        >>> open_run = ReviewPolicy(allow_run_override=True,
        ...                         always_review=frozenset({"wire_transfer"}))
        >>> open_run.action("wire_transfer", "low", {"configurable": {"autonomy": "autonomous"}})
        'review'
        >>> ReviewPolicy(on_timeout="escalate")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: ReviewPolicy.escalate_to: on_timeout is 'escalate' but escalate_to ...
    """

    tier: Tier = "supervised"
    """The deployment's autonomy tier (a run may make it stricter, see `tier_for`)."""
    risks: Mapping[str, Risk] = field(default_factory=lambda: MappingProxyType({}))
    """Tool name -> risk level; wins over per-worker mappings and the `risk` decorator."""
    always_review: frozenset[str] = frozenset()
    """Tool names whose every call is reviewed by a human, in every tier."""
    review_timeout: float = 86400.0
    """Seconds from a review's opening to its deadline (> 0, at most ten years; one day)."""
    on_timeout: OnTimeout = "reject"
    """What the sweep does with an expired review: `reject` (fail closed) or `escalate`."""
    escalate_to: str | None = None
    """The reviewer group expired reviews are escalated to (required with `escalate`)."""
    reviewers: str = "default"
    """The reviewer group a review is assigned to first."""
    confirm: ConfirmCheck | None = None
    """The supervised tier's check for medium actions (`confirm_action`); None: a human."""
    members: Mapping[str, Collection[str]] = field(default_factory=lambda: MappingProxyType({}))
    """Reviewer group -> the identities that may answer its reviews (empty: no rule). Set,
    only a member of a review's current group may answer it, and `reviewers` and
    `escalate_to` must be groups of it."""
    may_answer: ReviewerCheck | None = None
    """`may_answer(identity, review)` returns True when `identity` may answer the
    `PendingReview` (raising refuses). With `members` as well, both must allow."""
    allow_run_override: bool = False
    """Whether a run's `configurable.autonomy` may loosen `tier`. False (the default): a
    run may only make its tier stricter; True: whoever may start a run chooses how much
    of it is reviewed."""

    def __post_init__(self) -> None:
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _CODE}
        for name, value in _check_fields(values, lambda key: f"ReviewPolicy.{key}").items():
            object.__setattr__(self, name, value)
        for name, fix in _CODE.items():  # None or a plain callable (or a chat model)
            value = getattr(self, name)
            if value is None or (name == "confirm" and isinstance(value, BaseChatModel)):
                continue
            if isinstance(value, Runnable | str | type) or not callable(value):
                raise TypeError(f"ReviewPolicy.{name}: got {type(value).__name__}; {fix}")

    @classmethod
    def from_file(cls, path: str | Path, *, base: ReviewPolicy | None = None) -> ReviewPolicy:
        """Load a policy from a JSON or TOML file (see the policy file reference).

        A key present in the file replaces that field of `base` (default: the defaults);
        `confirm` and `may_answer` (code, not configuration) are kept from `base`. An
        unknown key, a bad value or a file that does not parse raises `ValueError` (naming
        the key and the fix); a file that cannot be read, `OSError`.

        Example:
            ```python
            policy = ReviewPolicy.from_file("policy.toml")
            ```
        """
        file = Path(path)
        data = _read_policy_file(file)
        start = base if base is not None else cls()
        values = {f.name: getattr(start, f.name) for f in fields(start) if f.name not in _CODE}
        values.update(data)
        checked = _check_fields(values, lambda key: f"policy file {file}: key {key!r}")
        return replace(start, **{key: checked[key] for key in data})

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] = os.environ,
        *,
        default: ReviewPolicy | None = None,
    ) -> ReviewPolicy:
        """Load the deployment's policy from the environment: the explicit way to ask for it.

        Nothing else reads these variables. `LGSP_POLICY_FILE` names a policy file whose
        keys override `default` (or `ReviewPolicy()`); `LGSP_AUTONOMY` then overrides the
        tier. Empty values count as unset. A bad tier or policy file raises `ValueError`.

        Example:
            >>> ReviewPolicy.from_env({"LGSP_AUTONOMY": "manual"}).tier
            'manual'
            >>> ReviewPolicy.from_env({}).tier
            'supervised'
        """
        policy = default if default is not None else cls()
        path = environ.get(POLICY_FILE_ENV, "").strip()
        if path:
            try:
                policy = cls.from_file(path, base=policy)
            except OSError as exc:
                raise ValueError(
                    f"{POLICY_FILE_ENV}: cannot read the policy file {path!r} "
                    f"({exc.strerror or exc}); fix the path or unset {POLICY_FILE_ENV}"
                ) from exc
        tier = environ.get(AUTONOMY_ENV, "").strip()
        if tier:
            policy = replace(policy, tier=_check_tier(tier, AUTONOMY_ENV))
        return policy

    def requested_tier(self, config: RunnableConfig | None) -> Tier | None:
        """The tier a run's config asks for (`configurable.autonomy`), or None when unset.

        Only checks that the value is a tier (`ValueError` if not); whether the policy
        accepts it is `tier_refusal`'s answer.
        """
        configurable = (config or {}).get("configurable") or {}
        value = configurable.get(AUTONOMY_CONFIG_KEY)
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        return _check_tier(
            value,
            f"configurable.{AUTONOMY_CONFIG_KEY}",
            unset=f", or leave it unset for the deployment's tier ({self.tier!r})",
        )

    def tier_refusal(self, tier: str, *, field: str = "configurable.autonomy") -> str | None:
        """Why a run may not ask for `tier` (a reason naming `field` and the fix), or None.

        A run may ask for the policy's tier or a stricter one; a looser one only when
        `allow_run_override` is set. `ValueError` if `tier` is not a tier.

        Example:
            >>> ReviewPolicy(tier="supervised").tier_refusal("manual") is None
            True
            >>> print(ReviewPolicy(tier="supervised").tier_refusal("autonomous"))
            ... # doctest: +ELLIPSIS
            configurable.autonomy: got 'autonomous', looser than the deployment's tier ...
        """
        asked = _check_tier(tier, field)
        if self.allow_run_override or TIERS.index(asked) <= TIERS.index(self.tier):
            return None
        stricter = [t for t in TIERS if TIERS.index(t) <= TIERS.index(self.tier)]
        return (
            f"{field}: got {asked!r}, looser than the deployment's "
            f"tier {self.tier!r}; a run may only make its tier stricter: give one of "
            f"{_choices(tuple(stricter))}, or leave it unset, or set "
            "ReviewPolicy.allow_run_override=True (allow_run_override = true in the policy "
            "file) to let runs loosen it"
        )

    def tier_for(self, config: RunnableConfig | None, *, recorded: str | None = None) -> Tier:
        """The tier in force for a run: `config["configurable"]["autonomy"]`, else `tier`.

        A value that is not a tier, or a looser one than the policy's (unless
        `allow_run_override`), raises `ValueError` naming the field and the fix: the run
        fails before any worker runs. `recorded` (the tier the run recorded in its state)
        is used when the config names none, so a resume cannot fall back to a looser tier.

        Example:
            >>> policy = ReviewPolicy(tier="supervised")
            >>> policy.tier_for({"configurable": {"autonomy": "manual"}}), policy.tier_for(None)
            ('manual', 'supervised')
            >>> policy.tier_for(None, recorded="manual")
            'manual'
            >>> ReviewPolicy(allow_run_override=True).tier_for(
            ...     {"configurable": {"autonomy": "autonomous"}})
            'autonomous'
        """
        asked = self.requested_tier(config)
        if asked is None:
            if recorded:
                return _check_tier(recorded, "the run's recorded autonomy", unset="")
            return self.tier
        refusal = self.tier_refusal(asked)
        if refusal is not None:
            raise ValueError(refusal)
        return asked

    def risk_of(self, tool_name: str, declared: Risk | None) -> Risk:
        """A tool's effective risk level: the policy's `risks`, else `declared`, else `high`."""
        if tool_name in self.risks:
            return self.risks[tool_name]
        if declared is None:
            return "high"
        return check_risk(declared, f"tool {tool_name!r}: declared risk")

    def action(
        self,
        tool_name: str,
        declared: Risk | None,
        config: RunnableConfig | None,
        *,
        always_review: bool = False,
        tier: Tier | None = None,
    ) -> Action:
        """What happens to one call of a tool in a run (see `decide`).

        In the supervised tier, medium actions go to a human (`review`) rather than
        `confirm` when the policy has no `confirm` check (fail closed). `always_review`:
        the tool is marked always-review in code; `tier`: the tier in force when the
        caller settled it already (None: `tier_for(config)`).

        Example:
            >>> ReviewPolicy().action("refund", "medium", None)
            'review'
        """
        outcome = decide(
            self.tier_for(config) if tier is None else tier,
            self.risk_of(tool_name, declared),
            always_review=always_review or tool_name in self.always_review,
        )
        if outcome == "confirm" and self.confirm is None:
            return "review"
        return outcome

    def dispatch_action(self, config: RunnableConfig | None) -> Action:
        """What happens to a worker dispatch: `review` in the manual tier, else `run`."""
        return "review" if self.tier_for(config) == "manual" else "run"

    def deadline(self, now: datetime | None = None) -> datetime:
        """The deadline of a review opened at `now` (aware; default: now), in UTC.

        Example:
            >>> from datetime import datetime, UTC
            >>> ReviewPolicy(review_timeout=3600).deadline(datetime(2025, 1, 1, tzinfo=UTC))
            datetime.datetime(2025, 1, 1, 1, 0, tzinfo=datetime.timezone.utc)
        """
        start = aware_or_now(now, "ReviewPolicy.deadline")
        return (start + timedelta(seconds=self.review_timeout)).astimezone(UTC)

    @property
    def restricts_reviewers(self) -> bool:
        """Whether the policy has a rule on who may answer (`members` or `may_answer`)."""
        return self.may_answer is not None or bool(self.members)

    def reviewer_refusal(
        self,
        reviewer: str | None,
        review: PendingReview,
        *,
        decision: object = None,
    ) -> str | None:
        """Why `reviewer` may not answer `review` (one line), or None when they may.

        Without a rule (`members`, `may_answer`) anyone may answer, even anonymously.
        With one, an answer must name its reviewer, a member of the review's current
        group who passes `may_answer`. The sweep (`SWEEP_REVIEWER`) may always apply the
        review's own `on_timeout` (`decision`: a `ReviewDecision` or its dict).

        Example:
            ```python
            policy.reviewer_refusal("mallory", review)
            # "'mallory' may not answer review ab12 (tool 'refund'): not a member of ..."
            ```
        """
        if not self.restricts_reviewers:
            return None
        where = f"review {review.interrupt_id} ({review.kind} {review.action!r})"
        who = reviewer.strip() if isinstance(reviewer, str) else ""
        group = review.reviewers
        if not who:
            return (
                f"the answer to {where} names no reviewer, and its reviewer group "
                f"{group!r} is restricted; answer as one of its members"
            )
        kind, to = _decision_fields(decision)
        if who == SWEEP_REVIEWER and (
            kind == "reject"
            or (kind == "escalate" and to is not None and to == review.context.get("escalate_to"))
        ):
            return None
        if self.members:
            allowed = self.members.get(group) if group is not None else None
            if allowed is None:
                return (
                    f"{who!r} may not answer {where}: its reviewer group {group!r} has no "
                    "members in the review policy"
                )
            if who not in allowed:
                return (
                    f"{who!r} may not answer {where}: not a member of the reviewer group {group!r}"
                )
        if self.may_answer is not None:
            try:
                ok = self.may_answer(who, review)
            except Exception as exc:  # fail closed
                return (
                    f"{who!r} may not answer {where}: the may_answer rule raised "
                    f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
                )
            if ok is not True:
                return f"{who!r} may not answer {where}: refused by the policy's may_answer rule"
        return None

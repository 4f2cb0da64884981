"""The online judge: a judge model scores a sample of completed turns as they end.

`create_supervisor(judge=OnlineJudge(model=...))` adds a `judge` step after the answer; the
sample is decided from the thread id, domain path and turn (`judged`), so a replay decides
the same. Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/evaluation/
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict, Field

from langgraph_supervisor_pro._internal.checks import check_seconds
from langgraph_supervisor_pro._internal.storable import storable

DEFAULT_JUDGE_CRITERIA = (
    "Judge how well the answer does what the user's task asked: correct, complete, "
    "grounded in the workers' results, nothing invented, clear."
)
"""What the judge grades against when `OnlineJudge(criteria=...)` is not given."""

_CRITERIA_MAX_CHARS = 4000


class JudgeVerdict(BaseModel):
    """What the judge model answers for one turn (its structured output).

    Example:
        >>> JudgeVerdict(score=0.8, passed=True, reasons=["complete"]).score
        0.8
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    score: float = Field(ge=0.0, le=1.0, description="How good the answer is, from 0 to 1.")
    passed: bool = Field(description="True when the answer meets the criteria.")
    reasons: list[str] = Field(
        default_factory=list, description="Short reasons for the score (one sentence each)."
    )


def judge_key(thread_id: str, turn: int, path: Sequence[str] = ()) -> str:
    """The key of one turn's judgement: in the store, in the queue and for sampling.

    Made storable (NUL and lone surrogates as U+FFFD), so the key a backend keeps, the
    node's sample and `OnlineJudge.judges` agree for any thread id.

    Example:
        >>> judge_key("t-1", 2)
        't-1:2'
        >>> judge_key("t-1", 1, ["ops"])
        't-1:ops:1'
    """
    return storable(":".join([thread_id, *(["/".join(path)] if path else []), str(turn)]))


def judged(key: str, sample: float) -> bool:
    """Whether the turn with this `judge_key` is in a sample of this size.

    Deterministic: a fixed point in [0, 1) is drawn from the key's SHA-256, and the turn is
    judged when it is below `sample` (so 1.0 judges every turn and 0.0 none).

    Example:
        >>> judged("t-1:1", 1.0), judged("t-1:1", 0.0)
        (True, False)
        >>> judged("t-1:1", 0.5) == judged("t-1:1", 0.5)
        True
    """
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    point = int.from_bytes(digest[:8], "big") / 2**64
    return point < sample


@dataclass(frozen=True, kw_only=True)
class OnlineJudge:
    """An evaluator attached to a graph: a judge model scores a sample of completed turns.

    The judge never fails or changes the run (an error is recorded in the verdict); a score
    below `threshold` is queued for a human (`judge_reviews`, `lgsp judge list`).

    Example:
        >>> from langgraph_supervisor_pro.testing import ScriptedChatModel
        >>> judge = OnlineJudge(model=ScriptedChatModel(name="judge", script=[]), sample=1.0)
        >>> judge.judges("thread-1", 1)
        True
        >>> OnlineJudge(model=judge.model, sample=1.5)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: OnlineJudge.sample: got 1.5; ...
    """

    model: BaseChatModel
    """The judge: a chat model that supports `with_structured_output`. It may not be a
    model the graph itself uses (the same object, or the same provider and model name)."""
    sample: float = 0.1
    """The fraction of completed turns judged, from 0 (none) to 1 (all), decided from the
    thread id and turn (see `judged`)."""
    threshold: float = 0.5
    """A score below this (0 to 1) is queued for human review."""
    criteria: str = DEFAULT_JUDGE_CRITERIA
    """What the judge grades the answer against (its system prompt's core)."""
    client: Any = None
    """A `langsmith.Client`: each score is sent as feedback on the run's trace (when the
    run is traced to LangSmith). None sends nothing."""
    feedback_key: str = "lgsp_judge"
    """The LangSmith feedback key of the scores."""
    max_answer_chars: int = 8000
    """How much of the task and of the answer the judge is shown (longer ones are cut)."""
    timeout: float | None = None
    """Seconds the judge model may take (a finite number > 0); past it the turn's verdict
    records a time-out and the run returns. None waits as long as the model does."""

    def __post_init__(self) -> None:
        if not isinstance(self.model, BaseChatModel):
            raise TypeError(
                f"OnlineJudge.model: got {type(self.model).__name__}; give a LangChain chat "
                "model that supports with_structured_output (not one the graph uses)"
            )
        for name, meaning in (
            ("sample", "a fraction from 0.0 to 1.0"),
            ("threshold", "a score from 0.0 to 1.0 (0.5 by default)"),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"OnlineJudge.{name}: got {type(value).__name__}; give {meaning}")
            if not math.isfinite(value) or not 0.0 <= value <= 1.0:
                raise ValueError(f"OnlineJudge.{name}: got {value!r}; give {meaning}")
            object.__setattr__(self, name, float(value))
        if not isinstance(self.criteria, str) or not self.criteria.strip():
            raise ValueError(
                "OnlineJudge.criteria: give the judge a non-empty description of a good answer"
            )
        if len(self.criteria) > _CRITERIA_MAX_CHARS or "\x00" in self.criteria:
            raise ValueError(
                f"OnlineJudge.criteria: {len(self.criteria)} characters; keep it to at most "
                f"{_CRITERIA_MAX_CHARS}, with no NUL characters"
            )
        if self.client is not None and not callable(getattr(self.client, "create_feedback", None)):
            raise TypeError(
                f"OnlineJudge.client: got {type(self.client).__name__}; give a "
                "langsmith.Client(...) or None"
            )
        key = self.feedback_key
        if not isinstance(key, str) or not key.strip() or len(key) > 200:
            raise ValueError(
                f"OnlineJudge.feedback_key: got {key!r}; give a non-empty key of at most 200 "
                "characters, e.g. 'lgsp_judge'"
            )
        chars = self.max_answer_chars
        if isinstance(chars, bool) or not isinstance(chars, int) or chars < 100:
            raise ValueError(f"OnlineJudge.max_answer_chars: got {chars!r}; give an integer >= 100")
        if self.timeout is not None:
            seconds = check_seconds(self.timeout, "OnlineJudge.timeout", fix=", or None to wait")
            object.__setattr__(self, "timeout", seconds)

    def judges(self, thread_id: str, turn: int, path: Sequence[str] = ()) -> bool:
        """Whether this judge scores the given turn (when it ends `done`) of a thread.

        `path` is the domain path, for a judge on a domain of a tree (else empty).

        Example:
            >>> from langgraph_supervisor_pro.testing import ScriptedChatModel
            >>> OnlineJudge(model=ScriptedChatModel(name="j", script=[]),
            ...             sample=0.0).judges("t", 1)
            False
        """
        return judged(judge_key(thread_id, turn, path), self.sample)

"""Typed contracts at every boundary: routing decisions, worker tasks and worker results.

Both outputs are validated where they cross a boundary, so nothing malformed reaches state.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, cast

from langchain_core.messages import AnyMessage
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    create_model,
    field_validator,
    model_validator,
)

from langgraph_supervisor_pro._internal.storable import storable, storable_value
from langgraph_supervisor_pro._internal.text import first_sentence, truncate

FINISH = "FINISH"
"""The route that ends delegation and hands over to the synthesis step."""

SUMMARY_MAX_CHARS = 200
"""Longest summary kept for a hop; the supervisor sees nothing longer from a worker."""

WorkerStatus = Literal["success", "failed", "needs_review"]
"""How a worker's hop ended."""

RunStatus = Literal["running", "done", "failed", "halted"]
"""Where a run stands: `done` after synthesis, `halted` by a guard, `failed` on an error."""

HaltReason = Literal[
    "budget_exceeded",
    "invalid_input",
    "invalid_route",
    "max_steps",
    "max_visits",
    "ping_pong",
    "supervisor_error",
    "synthesis_error",
]
"""Why a run stopped before the supervisor said FINISH (or why synthesis failed); each has a
page under docs/reference/errors/."""


class RouteDecision(BaseModel):
    """The supervisor's decision for one hop: who goes next, and what they should do.

    Each graph gets its own subclass from `route_decision_model`.

    Example:
        >>> Decision = route_decision_model(["researcher", "writer"])
        >>> Decision(next="writer", instructions="Draft the summary.").next
        'writer'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    next: str = Field(description="The worker to run next, or FINISH when the task is done.")
    instructions: str = Field(
        default="",
        description="Short, specific instructions for that worker (empty for FINISH).",
    )


class Branch(BaseModel):
    """One more worker to run at the same time as the decision's `next` (parallel fan-out).

    Each graph built with `parallel=True` gets its own subclass, whose `next` is a
    `Literal` of that graph's worker names.

    Example:
        >>> Decision = route_decision_model(["search_web", "search_docs"], parallel=True)
        >>> d = Decision(next="search_web", instructions="prices",
        ...              parallel=[{"next": "search_docs", "instructions": "our price list"}])
        >>> [b.next for b in d.parallel]
        ['search_docs']
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    next: str = Field(description="A worker to run in parallel with the others.")
    instructions: str = Field(default="", description="Its own instructions.")


def route_decision_model(
    worker_names: Sequence[str], *, parallel: bool = False
) -> type[RouteDecision]:
    """Build the `RouteDecision` model for a set of workers.

    Args:
        worker_names: The workers the supervisor may route to (`next` accepts only those
            names or `"FINISH"`).
        parallel: Add a `parallel` field: further workers, each with its own
            instructions, to run at the same time as `next` (each once, never with FINISH).

    Example:
        >>> Decision = route_decision_model(["researcher"])
        >>> Decision.model_validate({"next": "FINISH"}).next
        'FINISH'
    """
    names = tuple(worker_names)
    if not names:
        raise ValueError("worker_names: give at least one worker name")
    options = (*names, FINISH)
    next_type: Any = Literal.__getitem__(options)
    next_field = (
        next_type,
        Field(description=f"One of: {', '.join(options)}. FINISH ends the delegation."),
    )
    if not parallel:
        return create_model(
            "RouteDecision",
            __base__=RouteDecision,
            __doc__="Route the task to one worker with instructions, or FINISH.",
            next=next_field,
        )
    branch_type: Any = Literal.__getitem__(names)
    branch: type[Branch] = create_model(
        "Branch",
        __base__=Branch,
        __doc__=Branch.__doc__,
        next=(branch_type, Field(description=f"One of: {', '.join(names)}.")),
    )
    return create_model(
        "RouteDecision",
        __base__=RouteDecision,
        __doc__=(
            "Route the task to one worker with instructions, or FINISH; `parallel` names "
            "more workers to run at the same time, on independent parts of the task."
        ),
        __validators__={"_distinct": cast(Any, model_validator(mode="after")(_distinct_branches))},
        next=next_field,
        parallel=(
            list[branch],
            Field(
                default_factory=list,
                description=(
                    "Other workers to run at the same time as `next`, each with its own "
                    "instructions, for independent parts of the task (empty for one worker "
                    "or FINISH). Each worker at most once per decision."
                ),
            ),
        ),
    )


def _distinct_branches(decision: Any) -> Any:
    """A parallel decision names each worker once, and never runs beside FINISH."""
    branches = getattr(decision, "parallel", [])
    if branches and decision.next == FINISH:
        raise ValueError("parallel: FINISH ends the delegation; give no parallel workers with it")
    names = [decision.next, *(b.next for b in branches)]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(
            f"parallel: {twice} named more than once; give each worker once per decision "
            "(merge their instructions)"
        )
    return decision


class WorkerTask(BaseModel):
    """What a worker receives for one hop: never the supervisor's history or other transcripts.

    Example:
        >>> task = WorkerTask(worker="writer", step=3, task="Report on X",
        ...                   instructions="Draft it")
        >>> print(task.prompt())
        Task: Report on X
        <BLANKLINE>
        Instructions for you: Draft it
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    worker: str = Field(description="The name of the worker this task is for.")
    step: int = Field(ge=1, description="The hop number within the current run (1-based).")
    task: str = Field(description="The user's task for this run.")
    instructions: str = Field(default="", description="The supervisor's instructions.")
    messages: list[AnyMessage] = Field(
        default_factory=list, description="This worker's own earlier messages, oldest first."
    )
    reads: dict[str, WorkerResult] = Field(
        default_factory=dict,
        description="The latest full output of each worker named in `Worker.reads` that has one.",
    )

    def prompt(self) -> str:
        """The task, the instructions and the outputs it reads, as a model-backed worker sees them.

        Example:
            >>> WorkerTask(worker="w", step=1, task="T").prompt()
            'Task: T'
        """
        text = f"Task: {self.task}"
        if self.instructions:
            text += f"\n\nInstructions for you: {self.instructions}"
        for worker, result in self.reads.items():
            text += f"\n\nLatest output of {worker} ({result.status}):\n"
            text += result.result_text() or result.summary
        return text


class WorkerResult(BaseModel):
    r"""The typed outcome of one worker hop.

    `summary`, the only part the supervisor sees, is derived from `result` (or `error`)
    when not given, and cut to `SUMMARY_MAX_CHARS`. A NUL or a lone surrogate in the text
    becomes U+FFFD (Postgres refuses both).

    Example:
        >>> r = WorkerResult(status="success", result={"rows": 3})
        >>> r.summary
        '{"rows": 3}'
        >>> WorkerResult(status="failed", error="boom").summary
        'failed: boom'
        >>> WorkerResult(status="failed", error="bad\x00byte").error == "bad\ufffdbyte"
        True
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: WorkerStatus = Field(description="success, failed or needs_review.")
    result: Any = Field(default=None, description="The worker's output; JSON-serialisable.")
    summary: str = Field(default="", description="One or two sentences for the supervisor.")
    error: str | None = Field(default=None, description="What went wrong, when it failed.")

    @field_validator("result")
    @classmethod
    def _result_is_json(cls, value: Any) -> Any:
        if isinstance(value, str):  # always JSON: the common answer is not encoded to check it
            return storable(value)
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"result must be JSON-serialisable (got {type(value).__name__}): convert it "
                "to str, dict, list, number or bool before returning it"
            ) from exc
        return storable_value(value)

    @field_validator("summary", "error")
    @classmethod
    def _text_is_storable(cls, value: str | None) -> str | None:
        return None if value is None else storable(value)

    def model_post_init(self, context: Any, /) -> None:
        """Derive and truncate the summary: always short, never empty."""
        summary = self.summary.strip() or _derive_summary(self)
        object.__setattr__(self, "summary", truncate(summary, SUMMARY_MAX_CHARS))

    def result_text(self) -> str:
        """`result` as text: strings as they are, anything else as JSON ('' for none).

        Example:
            >>> WorkerResult(status="success", result=[1, 2]).result_text()
            '[1, 2]'
        """
        if self.result is None:
            return ""
        if isinstance(self.result, str):
            return self.result
        return json.dumps(self.result, ensure_ascii=False)


WorkerTask.model_rebuild()


DERIVED_SUMMARY_CHARS = 120  # a derived summary: the first sentence, cut to this


def _derive_summary(result: WorkerResult) -> str:
    if result.status == "failed":
        return truncate(f"failed: {result.error or 'no error given'}", DERIVED_SUMMARY_CHARS)
    first = first_sentence(result.result_text(), DERIVED_SUMMARY_CHARS)
    return first or f"{result.status}: no output"

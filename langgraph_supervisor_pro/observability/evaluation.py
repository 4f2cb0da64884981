"""Offline evaluation: run a labelled dataset through a graph, score it, measure its routing.

`evaluate(graph, dataset, scorers)` runs each `Case` on a fresh thread of the graph (an
uncompiled graph is compiled with an `InMemorySaver`, or with the checkpointer and store
you give; a compiled graph must have a checkpointer), reads each run's final state back,
applies the scorers (`(case, output) -> Score | None`) and computes the routing precision,
recall and F1 of the labelled cases with `compute_metrics`, the same figures
`lgsp metrics --expected` gives. `aevaluate` is its async twin, with a concurrency limit.

A case that raises is recorded with outcome `error` (the evaluation goes on); a case that
pauses at a review is recorded `interrupted`, unless `reviews="approve"`, which answers
each review with `Approve()` through `resolve_review` until the run ends.

A LangSmith dataset is given by name with `client=` (`langsmith_cases` reads its examples).

Example:
    ```python
    from langgraph_supervisor_pro.observability import (
        Case, answer_traits, evaluate, route_exact_match, status_done)

    report = evaluate(builder, [
        Case(id="refund", input="I was charged twice", expected_routes=["billing"],
             must_include=["refund"]),
    ], [answer_traits, route_exact_match, status_done])
    print(report.routing.micro_f1, report.to_dict()["scorers"])
    ```
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.store.base import BaseStore
from langsmith import Client
from langsmith.utils import LangSmithError

from langgraph_supervisor_pro.observability.metrics import (
    RoutingMetrics,
    ThreadRecord,
    compute_metrics,
)
from langgraph_supervisor_pro.review.desk import (
    Approve,
    ReviewError,
    aresolve_review,
    resolve_review,
)
from langgraph_supervisor_pro.state import LedgerEntry

__all__ = [
    "Case",
    "CaseResult",
    "EvaluationReport",
    "Outcome",
    "RunOutput",
    "Score",
    "Scorer",
    "ScorerSummary",
    "aevaluate",
    "answer_traits",
    "dataset_cases",
    "evaluate",
    "langsmith_cases",
    "route_exact_match",
    "status_done",
]

Outcome = Literal["completed", "interrupted", "error"]
"""How a case's run ended: it ran to its end, it is paused (at a review), or it raised."""

ReviewHandling = Literal["interrupt", "approve"]

_CASE_KEYS = frozenset(
    {"id", "input", "expected_routes", "must_include", "pattern", "check", "metadata"}
)


def _messages(value: object, where: str) -> tuple[Any, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value:
        raise ValueError(
            f"{where}: got {value!r}; give the input text or a non-empty list of messages"
        )
    for index, message in enumerate(value):
        ok = (
            isinstance(message, BaseMessage)
            or (
                isinstance(message, tuple)
                and len(message) == 2
                and all(isinstance(part, str) for part in message)
            )
            or (isinstance(message, Mapping) and "role" in message and "content" in message)
        )
        if not ok:
            raise ValueError(
                f"{where}[{index}]: got {message!r}; give a message, a (role, text) pair or "
                "a {'role': ..., 'content': ...} dict"
            )
    return tuple(value)


@dataclass(frozen=True, kw_only=True)
class Case:
    """One labelled example: what to ask, which workers should answer it, what the answer holds.

    Validated on construction; every error names the field.

    Example:
        >>> case = Case(id="refund", input="I was charged twice",
        ...             expected_routes=["billing"], must_include=["refund"])
        >>> case.expected_routes, case.must_include
        (('billing',), ('refund',))
    """

    input: str | Sequence[Any]
    """The user's text (sent as one human message) or the messages to send."""
    id: str | None = None
    """A name for the case (unique in the dataset); default `case-<index>`."""
    expected_routes: Sequence[str] | None = None
    """The workers the supervisor should run, in order; None: routing is not scored."""
    must_include: Sequence[str] = ()
    """Substrings the final answer must contain."""
    pattern: str | None = None
    """A regular expression the final answer must match (`re.search`)."""
    check: Callable[[str], bool] | None = field(default=None, compare=False)
    """A predicate the final answer must satisfy."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Anything else, kept with the case's result."""

    def __post_init__(self) -> None:
        if isinstance(self.input, str):
            if not self.input.strip():
                raise ValueError("input: empty text; give the user's question")
        else:
            object.__setattr__(self, "input", _messages(self.input, "input"))
        if self.id is not None and (not isinstance(self.id, str) or not self.id):
            raise ValueError(f"id: got {self.id!r}; give a non-empty string or leave it out")
        if self.expected_routes is not None:
            routes = self.expected_routes
            if isinstance(routes, str) or not isinstance(routes, Sequence):
                raise ValueError(
                    f"expected_routes: got {type(routes).__name__}; give a list of worker "
                    "names in order"
                )
            for index, name in enumerate(routes):
                if not isinstance(name, str) or not name:
                    raise ValueError(f"expected_routes[{index}]: give a worker name, got {name!r}")
            object.__setattr__(self, "expected_routes", tuple(routes))
        include = self.must_include
        if isinstance(include, str) or not isinstance(include, Sequence):
            raise ValueError(
                f"must_include: got {type(include).__name__}; give a list of substrings"
            )
        for index, part in enumerate(include):
            if not isinstance(part, str) or not part:
                raise ValueError(f"must_include[{index}]: give a non-empty string, got {part!r}")
        object.__setattr__(self, "must_include", tuple(include))
        if self.pattern is not None:
            if not isinstance(self.pattern, str):
                raise ValueError(f"pattern: got {self.pattern!r}; give a regular expression")
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern: not a regular expression ({exc})") from None
        if self.check is not None and not callable(self.check):
            raise ValueError(f"check: got {self.check!r}; give a callable (answer) -> bool")
        if not isinstance(self.metadata, Mapping):
            raise ValueError(f"metadata: got {type(self.metadata).__name__}; give a mapping")

    @property
    def has_traits(self) -> bool:
        """Whether the case says anything about the answer."""
        return bool(self.must_include) or self.pattern is not None or self.check is not None


def dataset_cases(dataset: object, *, where: str = "dataset") -> tuple[Case, ...]:
    """Validate a dataset: a list of `Case`s or of dicts with a case's fields.

    Args:
        dataset: The cases.
        where: The field's name in error messages.

    Returns:
        The cases, with their ids filled in (`case-<index>` when not given).

    Raises:
        ValueError: Naming the case and the field that is wrong.

    Example:
        >>> [c.id for c in dataset_cases([{"input": "hi"}, Case(id="x", input="yo")])]
        ['case-0', 'x']
    """
    if isinstance(dataset, str | bytes | Mapping) or not isinstance(dataset, Sequence):
        raise ValueError(
            f"{where}: got {type(dataset).__name__}; give a list of Case objects or dicts"
        )
    if not dataset:
        raise ValueError(f"{where}: empty; give at least one case")
    cases: list[Case] = []
    seen: set[str] = set()
    for index, item in enumerate(dataset):
        at = f"{where}[{index}]"
        if isinstance(item, Case):
            case = item
        elif isinstance(item, Mapping):
            unknown = set(item) - _CASE_KEYS
            if unknown:
                raise ValueError(
                    f"{at}: unknown keys {sorted(unknown)}; a case has {sorted(_CASE_KEYS)}"
                )
            if "input" not in item:
                raise ValueError(f"{at}.input: missing; give the user's text or messages")
            try:
                case = Case(**item)
            except ValueError as exc:
                raise ValueError(f"{at}.{exc}") from None
        else:
            raise ValueError(f"{at}: got {type(item).__name__}; give a Case or a dict")
        if case.id is None:
            case = Case(
                id=f"case-{index}",
                input=case.input,
                expected_routes=case.expected_routes,
                must_include=case.must_include,
                pattern=case.pattern,
                check=case.check,
                metadata=case.metadata,
            )
        assert case.id is not None
        if case.id in seen:
            raise ValueError(f"{at}.id: {case.id!r} is used twice; give each case its own id")
        seen.add(case.id)
        cases.append(case)
    return tuple(cases)


_LANGSMITH_OUTPUTS = ("expected_routes", "must_include", "pattern")


def langsmith_cases(client: Client, dataset_name: str) -> tuple[Case, ...]:
    """The cases of a LangSmith dataset, read with the client's `list_examples`.

    Each example's `inputs` hold `input` (the text) or `messages`; its `outputs` may hold
    `expected_routes`, `must_include` and `pattern` (other output keys are not used).
    The case's id is the example's id; its metadata is the example's, with
    `langsmith_example_id`.

    Args:
        client: A `langsmith.Client`.
        dataset_name: The dataset's name.

    Returns:
        The validated cases, in the order LangSmith lists them.

    Raises:
        ValueError: If the dataset cannot be read, is empty, or an example is not a case
            (naming the example and the field).

    Example:
        ```python
        from langsmith import Client

        report = evaluate(builder, "support-routing", [status_done], client=Client())
        ```
    """
    if not isinstance(dataset_name, str) or not dataset_name:
        raise ValueError(f"dataset: got {dataset_name!r}; give the LangSmith dataset's name")
    try:
        examples = list(client.list_examples(dataset_name=dataset_name))
    except LangSmithError as exc:
        raise ValueError(
            f"dataset: cannot read the LangSmith dataset {dataset_name!r}: {exc}"
        ) from None
    items: list[dict[str, Any]] = []
    for index, example in enumerate(examples):
        at = f"{dataset_name}[{index}]"
        inputs = dict(example.inputs or {})
        keys = [k for k in ("input", "messages") if k in inputs]
        if len(keys) != 1:
            raise ValueError(
                f"{at}.inputs: has {sorted(inputs)}; give exactly one of 'input' (the text) "
                "or 'messages'"
            )
        outputs = dict(example.outputs or {})
        item: dict[str, Any] = {
            "id": str(example.id),
            "input": inputs[keys[0]],
            "metadata": {**(example.metadata or {}), "langsmith_example_id": str(example.id)},
        }
        item.update({k: outputs[k] for k in _LANGSMITH_OUTPUTS if k in outputs})
        items.append(item)
    return dataset_cases(items, where=dataset_name)


def _dataset(dataset: object, client: Client | None) -> tuple[Case, ...]:
    if isinstance(dataset, str):
        if client is None:
            raise ValueError(
                f"dataset: got the name {dataset!r} without client=; pass a langsmith Client "
                "to read a LangSmith dataset, or give a list of cases"
            )
        return langsmith_cases(client, dataset)
    if client is not None:
        raise ValueError("client: only used with a LangSmith dataset name as the dataset")
    return dataset_cases(dataset)


@dataclass(frozen=True, kw_only=True)
class RunOutput:
    """What one case's run did, as its final state says.

    Example:
        >>> RunOutput(thread_id="t", outcome="completed", status="done",
        ...           answer="Refunded.", routes=("billing",)).answer
        'Refunded.'
    """

    thread_id: str
    """The run's thread (in the checkpointer the evaluation ran with)."""
    outcome: Outcome
    """Whether it completed, paused or raised."""
    status: str | None
    """The state's `status` (`done`, `failed`, `halted`, ...), if it has one."""
    answer: str | None
    """The text of the last AI message, if any."""
    routes: tuple[str, ...] = ()
    """The workers the supervisor ran (the root ledger), in order."""
    error: str | None = None
    """The exception (`Type: message`) when the run raised, or why a pause stayed paused."""
    interrupts: tuple[Any, ...] = ()
    """The values of the interrupts the run is paused on."""
    approved_reviews: int = 0
    """Reviews the evaluation approved (`reviews="approve"`)."""
    seconds: float = 0.0
    """Wall-clock time of the run."""
    values: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The final state's values (empty when they could not be read)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values (without the state's values).

        Example:
            >>> RunOutput(thread_id="t", outcome="error", status=None, answer=None,
            ...           error="RuntimeError: boom").to_dict()["error"]
            'RuntimeError: boom'
        """
        return {
            "thread_id": self.thread_id,
            "outcome": self.outcome,
            "status": self.status,
            "answer": self.answer,
            "routes": list(self.routes),
            "error": self.error,
            "interrupts": len(self.interrupts),
            "approved_reviews": self.approved_reviews,
            "seconds": round(self.seconds, 6),
        }


@dataclass(frozen=True, kw_only=True)
class Score:
    """One scorer's verdict on one case.

    Example:
        >>> Score(name="tone", value=0.5, passed=False, comment="too curt").passed
        False
    """

    name: str
    """The scorer's name."""
    value: float
    """From 0 to 1."""
    passed: bool
    """Whether the case passes this scorer."""
    comment: str | None = None
    """Why."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name: got {self.name!r}; give the scorer's name")
        if (
            isinstance(self.value, bool)
            or not isinstance(self.value, int | float)
            or not 0 <= self.value <= 1
        ):
            raise ValueError(f"value: got {self.value!r}; give a number from 0 to 1")
        if not isinstance(self.passed, bool):
            raise ValueError(f"passed: got {self.passed!r}; give True or False")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> Score(name="s", value=1, passed=True).to_dict()
            {'name': 's', 'value': 1.0, 'passed': True, 'comment': None}
        """
        return {
            "name": self.name,
            "value": round(float(self.value), 6),
            "passed": self.passed,
            "comment": self.comment,
        }


Scorer = Callable[[Case, RunOutput], "Score | None"]
"""A scorer: `(case, output) -> Score`, or None when it does not apply to the case."""


def answer_traits(case: Case, output: RunOutput) -> Score | None:
    """The answer's traits: each `must_include` substring, the `pattern`, the `check`.

    The value is the share of traits met; the case passes when all are. None for a case
    without traits.

    Example:
        >>> case = Case(input="hi", must_include=["refund", "A1001"])
        >>> out = RunOutput(thread_id="t", outcome="completed", status="done",
        ...                 answer="Your refund is on its way.")
        >>> answer_traits(case, out)
        Score(name='answer_traits', value=0.5, passed=False, comment="missing: 'A1001'")
    """
    if not case.has_traits:
        return None
    answer = output.answer or ""
    missing = [f"{part!r}" for part in case.must_include if part not in answer]
    total = len(case.must_include)
    if case.pattern is not None:
        total += 1
        if re.search(case.pattern, answer) is None:
            missing.append(f"pattern {case.pattern!r}")
    if case.check is not None:
        total += 1
        try:
            ok = bool(case.check(answer))
        except Exception as exc:
            ok = False
            missing.append(f"check raised {type(exc).__name__}: {exc}")
        else:
            if not ok:
                missing.append("check")
    met = total - len(missing)
    return Score(
        name="answer_traits",
        value=met / total,
        passed=not missing,
        comment=None if not missing else "missing: " + ", ".join(missing),
    )


def route_exact_match(case: Case, output: RunOutput) -> Score | None:
    """Whether the supervisor ran exactly the expected workers, in order (None if unlabelled).

    Example:
        >>> case = Case(input="hi", expected_routes=["billing"])
        >>> out = RunOutput(thread_id="t", outcome="completed", status="done", answer="ok",
        ...                 routes=("billing",))
        >>> route_exact_match(case, out).passed
        True
    """
    if case.expected_routes is None:
        return None
    ok = tuple(output.routes) == tuple(case.expected_routes)
    return Score(
        name="route_exact_match",
        value=1.0 if ok else 0.0,
        passed=ok,
        comment=None if ok else f"ran {list(output.routes)}, expected {list(case.expected_routes)}",
    )


def status_done(case: Case, output: RunOutput) -> Score:
    """Whether the run ended with status `done`.

    Example:
        >>> out = RunOutput(thread_id="t", outcome="interrupted", status="running", answer=None)
        >>> status_done(Case(input="hi"), out).comment
        'outcome interrupted, status running'
    """
    ok = output.outcome == "completed" and output.status == "done"
    return Score(
        name="status_done",
        value=1.0 if ok else 0.0,
        passed=ok,
        comment=None if ok else f"outcome {output.outcome}, status {output.status}",
    )


@dataclass(frozen=True, kw_only=True)
class CaseResult:
    """One case, its run and its scores.

    Example:
        ```python
        for result in report.cases:
            print(result.case.id, result.output.outcome, [s.value for s in result.scores])
        ```
    """

    case: Case
    output: RunOutput
    scores: tuple[Score, ...]
    """One per scorer that applied, in the scorers' order."""

    @property
    def passed(self) -> bool:
        """Whether the run completed and every score passed."""
        return self.output.outcome == "completed" and all(s.passed for s in self.scores)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            ```python
            json.dumps([r.to_dict() for r in report.cases])
            ```
        """
        return {
            "id": self.case.id,
            "expected_routes": None
            if self.case.expected_routes is None
            else list(self.case.expected_routes),
            "output": self.output.to_dict(),
            "scores": [s.to_dict() for s in self.scores],
            "passed": self.passed,
        }


@dataclass(frozen=True, kw_only=True)
class ScorerSummary:
    """One scorer across the cases it applied to.

    Example:
        >>> s = ScorerSummary(name="status_done", count=4, passed=3, mean=0.75)
        >>> s.pass_rate
        0.75
    """

    name: str
    count: int
    """Cases it scored."""
    passed: int
    """Cases that passed it."""
    mean: float | None
    """The mean value (None when it scored nothing)."""

    @property
    def pass_rate(self) -> float | None:
        """Passed over count (None when it scored nothing)."""
        return self.passed / self.count if self.count else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            >>> ScorerSummary(name="s", count=0, passed=0, mean=None).to_dict()["pass_rate"]
        """
        return {
            "name": self.name,
            "count": self.count,
            "passed": self.passed,
            "mean": None if self.mean is None else round(self.mean, 6),
            "pass_rate": None if self.pass_rate is None else round(self.pass_rate, 6),
        }


@dataclass(frozen=True, kw_only=True)
class EvaluationReport:
    """What `evaluate` found: every case's result, each scorer's aggregate, the routing.

    Example:
        ```python
        report = evaluate(builder, cases, [status_done])
        print(json.dumps(report.to_dict(), indent=2))
        ```
    """

    cases: tuple[CaseResult, ...]
    scorers: tuple[ScorerSummary, ...]
    """One per scorer, in the order given."""
    routing: RoutingMetrics | None
    """Precision, recall and F1 of the labelled cases (`compute_metrics`); None when no
    case has `expected_routes`. A labelled case whose final state could not be read is
    listed in `missing`."""

    @property
    def outcomes(self) -> dict[str, int]:
        """Cases per outcome."""
        counts = {"completed": 0, "interrupted": 0, "error": 0}
        for result in self.cases:
            counts[result.output.outcome] += 1
        return counts

    @property
    def passed(self) -> int:
        """Cases that completed and passed every scorer."""
        return sum(result.passed for result in self.cases)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values.

        Example:
            ```python
            json.dumps(evaluate(builder, cases, [status_done]).to_dict())
            ```
        """
        return {
            "cases": [r.to_dict() for r in self.cases],
            "outcomes": self.outcomes,
            "passed": self.passed,
            "scorers": [s.to_dict() for s in self.scorers],
            "routing": None if self.routing is None else self.routing.to_dict(),
        }


# --------------------------------------------------------------------------- running

Graph = Pregel[Any, Any, Any, Any]


def _compiled(
    graph: object,
    checkpointer: BaseCheckpointSaver[Any] | None,
    store: BaseStore | None,
) -> Graph:
    if isinstance(graph, StateGraph):
        return cast(Graph, graph.compile(checkpointer=checkpointer or InMemorySaver(), store=store))
    if isinstance(graph, Pregel):
        if checkpointer is not None or store is not None:
            raise ValueError(
                "checkpointer: the graph is already compiled; pass the uncompiled graph to "
                "compile it with this checkpointer and store, or leave them out"
            )
        if not isinstance(graph.checkpointer, BaseCheckpointSaver):
            raise ValueError(
                "graph: compiled without a checkpointer; compile it with one (e.g. "
                "InMemorySaver()) or pass the uncompiled graph"
            )
        return graph
    raise ValueError(
        f"graph: got {type(graph).__name__}; give a StateGraph (e.g. create_supervisor(...)) "
        "or a graph compiled with a checkpointer"
    )


def _scorers(scorers: object) -> tuple[Callable[[Case, RunOutput], Score | None], ...]:
    if isinstance(scorers, str | bytes) or not isinstance(scorers, Sequence):
        raise ValueError(
            f"scorers: got {type(scorers).__name__}; give a list of (case, output) -> Score"
        )
    for index, scorer in enumerate(scorers):
        if not callable(scorer):
            raise ValueError(f"scorers[{index}]: got {scorer!r}; give a callable")
    return tuple(scorers)


def _settings(reviews: object, reviewer: object, max_reviews: object) -> None:
    if reviews not in ("interrupt", "approve"):
        raise ValueError(
            f"reviews: got {reviews!r}; give 'interrupt' (leave paused runs paused) or "
            "'approve' (approve every review)"
        )
    if not isinstance(reviewer, str) or not reviewer:
        raise ValueError(f"reviewer: got {reviewer!r}; give the name approvals are made as")
    if isinstance(max_reviews, bool) or not isinstance(max_reviews, int) or max_reviews < 1:
        raise ValueError(f"max_reviews: got {max_reviews!r}; give a positive integer")


def _input(case: Case) -> dict[str, Any]:
    if isinstance(case.input, str):
        return {"messages": [HumanMessage(case.input)]}
    return {"messages": list(case.input)}


def _config(base: RunnableConfig | None, thread_id: str) -> RunnableConfig:
    config: dict[str, Any] = dict(base or {})
    configurable: dict[str, Any] = dict(config.get("configurable") or {})
    configurable["thread_id"] = thread_id
    config["configurable"] = configurable
    return cast(RunnableConfig, config)


def _answer(values: Mapping[str, Any]) -> str | None:
    messages = values.get("messages")
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message.text
    return None


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _pending(result: object) -> tuple[Any, ...]:
    if isinstance(result, Mapping):
        return tuple(result.get("__interrupt__") or ())
    return ()


@dataclass
class _Run:
    """A case's run while it goes."""

    thread_id: str
    started: float = field(default_factory=time.perf_counter)
    result: object = None
    error: str | None = None
    raised: bool = False
    approved: int = 0

    def output(self, values: Mapping[str, Any]) -> RunOutput:
        pending = () if self.raised else _pending(self.result)
        outcome: Outcome = "error" if self.raised else "interrupted" if pending else "completed"
        ledger = cast(Sequence[LedgerEntry], values.get("ledger") or ())
        status = values.get("status")
        return RunOutput(
            thread_id=self.thread_id,
            outcome=outcome,
            status=None if status is None else str(status),
            answer=_answer(values),
            routes=tuple(entry["worker"] for entry in ledger),
            error=self.error,
            interrupts=tuple(getattr(i, "value", i) for i in pending),
            approved_reviews=self.approved,
            seconds=time.perf_counter() - self.started,
            values=dict(values),
        )


def _run_case(
    graph: Graph,
    case: Case,
    thread_id: str,
    config: RunnableConfig | None,
    reviews: ReviewHandling,
    reviewer: str,
    max_reviews: int,
) -> RunOutput:
    run = _Run(thread_id=thread_id)
    where = _config(config, thread_id)
    try:
        run.result = graph.invoke(_input(case), where)
        while reviews == "approve" and _pending(run.result):
            if run.approved >= max_reviews:
                run.error = f"still paused after approving {max_reviews} reviews (max_reviews)"
                break
            first = _pending(run.result)[0]
            try:
                run.result = resolve_review(
                    graph,
                    thread_id=thread_id,
                    decision=Approve(),
                    reviewer=reviewer,
                    interrupt_id=getattr(first, "id", None),
                    config=config,
                )
            except ReviewError as exc:  # not a review, or a refused reviewer: it stays paused
                run.error = f"cannot approve the pause: {exc}"
                break
            run.approved += 1
    except Exception as exc:
        run.raised, run.error = True, _error(exc)
    try:
        values = graph.get_state(where).values
    except Exception:  # the checkpointer cannot be read: the case has no state to score
        values = {}
    return run.output(values)


async def _arun_case(
    graph: Graph,
    case: Case,
    thread_id: str,
    config: RunnableConfig | None,
    reviews: ReviewHandling,
    reviewer: str,
    max_reviews: int,
) -> RunOutput:
    run = _Run(thread_id=thread_id)
    where = _config(config, thread_id)
    try:
        run.result = await graph.ainvoke(_input(case), where)
        while reviews == "approve" and _pending(run.result):
            if run.approved >= max_reviews:
                run.error = f"still paused after approving {max_reviews} reviews (max_reviews)"
                break
            first = _pending(run.result)[0]
            try:
                run.result = await aresolve_review(
                    graph,
                    thread_id=thread_id,
                    decision=Approve(),
                    reviewer=reviewer,
                    interrupt_id=getattr(first, "id", None),
                    config=config,
                )
            except ReviewError as exc:
                run.error = f"cannot approve the pause: {exc}"
                break
            run.approved += 1
    except Exception as exc:
        run.raised, run.error = True, _error(exc)
    try:
        values = (await graph.aget_state(where)).values
    except Exception:  # the checkpointer cannot be read: the case has no state to score
        values = {}
    return run.output(values)


def _scorer_name(scorer: Callable[..., Any], index: int) -> str:
    return str(getattr(scorer, "__name__", None) or f"scorers[{index}]")


def _score(
    case: Case, output: RunOutput, scorers: Sequence[Callable[[Case, RunOutput], Score | None]]
) -> tuple[Score, ...]:
    scores: list[Score] = []
    for index, scorer in enumerate(scorers):
        name = _scorer_name(scorer, index)
        try:
            score = scorer(case, output)
        except Exception as exc:
            score = Score(
                name=name, value=0.0, passed=False, comment=f"scorer raised {_error(exc)}"
            )
        if score is None:
            continue
        if not isinstance(score, Score):
            score = Score(
                name=name,
                value=0.0,
                passed=False,
                comment=f"scorer returned {type(score).__name__}; it must return a Score or None",
            )
        scores.append(score)
    return tuple(scores)


def _report(
    cases: Sequence[Case],
    outputs: Sequence[RunOutput],
    scorers: Sequence[Callable[[Case, RunOutput], Score | None]],
) -> EvaluationReport:
    results = tuple(
        CaseResult(case=case, output=output, scores=_score(case, output, scorers))
        for case, output in zip(cases, outputs, strict=True)
    )
    names = [_scorer_name(s, i) for i, s in enumerate(scorers)]
    by_name: dict[str, list[Score]] = {}
    for result in results:
        for score in result.scores:
            by_name.setdefault(score.name, []).append(score)
    for name in by_name:
        if name not in names:
            names.append(name)
    summaries = []
    for name in dict.fromkeys(names):
        scored = by_name.get(name, [])
        summaries.append(
            ScorerSummary(
                name=name,
                count=len(scored),
                passed=sum(s.passed for s in scored),
                mean=sum(s.value for s in scored) / len(scored) if scored else None,
            )
        )
    expected = {
        output.thread_id: case.expected_routes
        for case, output in zip(cases, outputs, strict=True)
        if case.expected_routes is not None
    }
    routing = None
    if expected:
        records = [
            ThreadRecord(
                thread_id=output.thread_id,
                status=output.status or "-",
                halt_reason=None,
                last_activity=None,
                graph_id=None,
                ledger=tuple(cast(Sequence[LedgerEntry], output.values.get("ledger") or ())),
            )
            for output in outputs
            if output.values
        ]
        routing = compute_metrics(records, expected=expected).routing
    return EvaluationReport(cases=results, scorers=tuple(summaries), routing=routing)


def _prepare(
    graph: object,
    dataset: object,
    scorers: object,
    checkpointer: BaseCheckpointSaver[Any] | None,
    store: BaseStore | None,
    reviews: object,
    reviewer: object,
    max_reviews: object,
    thread_prefix: object,
    client: Client | None,
) -> tuple[Graph, tuple[Case, ...], tuple[Callable[[Case, RunOutput], Score | None], ...], str]:
    cases = _dataset(dataset, client)
    checked = _scorers(scorers)
    _settings(reviews, reviewer, max_reviews)
    if thread_prefix is None:
        prefix = f"eval-{uuid.uuid4().hex[:8]}"
    elif isinstance(thread_prefix, str) and thread_prefix:
        prefix = thread_prefix
    else:
        raise ValueError(f"thread_prefix: got {thread_prefix!r}; give a non-empty string")
    return _compiled(graph, checkpointer, store), cases, checked, prefix


def evaluate(
    graph: StateGraph[Any, Any, Any, Any] | Graph,
    dataset: Sequence[Case | Mapping[str, Any]] | str,
    scorers: Sequence[Scorer] = (),
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
    config: RunnableConfig | None = None,
    reviews: ReviewHandling = "interrupt",
    reviewer: str = "evaluation",
    max_reviews: int = 10,
    thread_prefix: str | None = None,
    client: Client | None = None,
) -> EvaluationReport:
    """Run each case on a fresh thread, score it, and measure the routing of the labelled ones.

    Args:
        graph: An uncompiled graph (compiled here with `checkpointer`, default an
            `InMemorySaver`, and `store`) or a graph compiled with a checkpointer.
        dataset: The cases (`Case` objects or dicts of their fields), or the name of a
            LangSmith dataset read with `client` (see `langsmith_cases`).
        scorers: `(case, output) -> Score | None`; e.g. `answer_traits`,
            `route_exact_match`, `status_done`. A scorer that raises gives a failing
            score saying so.
        checkpointer: The saver to compile an uncompiled graph with.
        store: The store to compile an uncompiled graph with.
        config: Run config for every case (callbacks, `recursion_limit`, `configurable`);
            the thread id is set per case.
        reviews: `"interrupt"`: a run paused at a review is recorded `interrupted`;
            `"approve"`: each review is approved (`resolve_review` with `Approve()`) and
            the run goes on.
        reviewer: Who the approvals are recorded as.
        max_reviews: Approvals per case before the run is left paused.
        thread_prefix: Thread ids are `<prefix>-<index>` (default: `eval-` and a random
            suffix, so each evaluation uses fresh threads).
        client: A `langsmith.Client`, when `dataset` is a LangSmith dataset's name.

    Returns:
        The report.

    Raises:
        ValueError: If the graph, the dataset, a scorer or a setting is invalid (naming
            the field).

    Example:
        ```python
        report = evaluate(create_supervisor(workers, model=model),
                          [{"input": "Refund A1001", "expected_routes": ["billing"]}],
                          [route_exact_match, status_done], reviews="approve")
        assert report.routing is not None and report.routing.micro_f1 == 1.0
        ```
    """
    compiled, cases, checked, prefix = _prepare(
        graph,
        dataset,
        scorers,
        checkpointer,
        store,
        reviews,
        reviewer,
        max_reviews,
        thread_prefix,
        client,
    )
    outputs = [
        _run_case(compiled, case, f"{prefix}-{index}", config, reviews, reviewer, max_reviews)
        for index, case in enumerate(cases)
    ]
    return _report(cases, outputs, checked)


async def aevaluate(
    graph: StateGraph[Any, Any, Any, Any] | Graph,
    dataset: Sequence[Case | Mapping[str, Any]] | str,
    scorers: Sequence[Scorer] = (),
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
    config: RunnableConfig | None = None,
    reviews: ReviewHandling = "interrupt",
    reviewer: str = "evaluation",
    max_reviews: int = 10,
    thread_prefix: str | None = None,
    client: Client | None = None,
    max_concurrency: int = 4,
) -> EvaluationReport:
    """Async twin of `evaluate`: at most `max_concurrency` cases run at once.

    The report lists the cases in the dataset's order whatever order they finish in. A
    LangSmith dataset is read in a worker thread (the client is synchronous).

    Raises:
        ValueError: As `evaluate`, or if `max_concurrency` is not a positive integer.

    Example:
        ```python
        report = await aevaluate(builder, cases, [status_done], max_concurrency=8)
        ```
    """
    if (
        isinstance(max_concurrency, bool)
        or not isinstance(max_concurrency, int)
        or max_concurrency < 1
    ):
        raise ValueError(f"max_concurrency: got {max_concurrency!r}; give a positive integer")
    if isinstance(dataset, str) and client is not None:
        dataset = await asyncio.to_thread(langsmith_cases, client, dataset)
        client = None
    compiled, cases, checked, prefix = _prepare(
        graph,
        dataset,
        scorers,
        checkpointer,
        store,
        reviews,
        reviewer,
        max_reviews,
        thread_prefix,
        client,
    )
    gate = asyncio.Semaphore(max_concurrency)

    async def one(index: int, case: Case) -> RunOutput:
        async with gate:
            return await _arun_case(
                compiled, case, f"{prefix}-{index}", config, reviews, reviewer, max_reviews
            )

    outputs = await asyncio.gather(*(one(i, c) for i, c in enumerate(cases)))
    return _report(cases, list(outputs), checked)

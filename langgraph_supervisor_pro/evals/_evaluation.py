"""Offline evaluation on LangSmith's `evaluate`: our target, our routing scorers (private).

`evaluate`/`aevaluate` call `langsmith.evaluate`/`aevaluate` with a target that runs each
example on a fresh thread of the graph, the scorers below as evaluators and `routing_f1`
as a summary evaluator, offline (`upload_runs=False`, a client without a tracing thread)
unless asked. Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/evaluation/
"""

from __future__ import annotations

import re
import uuid
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.store.base import BaseStore
from langsmith import Client
from langsmith import aevaluate as langsmith_aevaluate
from langsmith import evaluate as langsmith_evaluate
from langsmith.run_helpers import tracing_context
from langsmith.schemas import Example

from langgraph_supervisor_pro._internal.twins import Call, Invoke, Steps, adrive, drive
from langgraph_supervisor_pro.errors import ReviewError
from langgraph_supervisor_pro.review._desk import aresolve_review, resolve_review

if TYPE_CHECKING:
    from langsmith.evaluation._arunner import AsyncExperimentResults
    from langsmith.evaluation._runner import ExperimentResults

Graph = Pregel[Any, Any, Any, Any]
Reviews = Literal["interrupt", "approve"]
NOT_APPLICABLE: dict[str, Any] = {"results": []}
"""What an evaluator returns for an example it says nothing about (LangSmith records none)."""


class _Labels(NamedTuple):
    expected_routes: list[str] | None
    must_include: list[str]
    pattern: str | None


def _strings(value: object, where: str, what: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(f"{where}: got {type(value).__name__}; give a list of {what}")
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item:
            raise ValueError(f"{where}[{index}]: got {item!r}; give a non-empty string")
    return list(value)


def _labels(reference: object, where: str = "reference_outputs") -> _Labels:
    """An example's labels: `expected_routes`, `must_include`, `pattern` (others ignored)."""
    if not isinstance(reference, Mapping):
        raise ValueError(f"{where}: got {type(reference).__name__}; give a dict of labels")
    routes = reference.get("expected_routes")
    pattern = reference.get("pattern")
    if pattern is not None:
        try:
            re.compile(pattern)
        except (re.error, TypeError) as exc:
            raise ValueError(
                f"{where}.pattern: got {pattern!r}; give a regular expression ({exc})"
            ) from None
    return _Labels(
        None if routes is None else _strings(routes, f"{where}.expected_routes", "worker names"),
        _strings(reference.get("must_include", ()), f"{where}.must_include", "substrings"),
        pattern,
    )


def _state_input(inputs: object, where: str = "inputs") -> dict[str, Any]:
    """The graph's input from an example's inputs: `input` (text) or `messages`."""
    keys = sorted(set(inputs) & {"input", "messages"}) if isinstance(inputs, Mapping) else []
    if not isinstance(inputs, Mapping) or len(keys) != 1:
        got = sorted(inputs) if isinstance(inputs, Mapping) else type(inputs).__name__
        raise ValueError(
            f"{where}: got {got}; give exactly one of 'input' (the user's text) or 'messages'"
        )
    value = inputs[keys[0]]
    if keys == ["input"]:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{where}.input: got {value!r}; give the user's text")
        return {"messages": [HumanMessage(value)]}
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ValueError(f"{where}.messages: got {value!r}; give a non-empty list of messages")
    return {"messages": list(value)}


def _examples(data: object, client: Client | None) -> object:
    if isinstance(data, str | uuid.UUID):
        if client is None:
            raise ValueError(
                f"data: got the dataset {str(data)!r} without client=; pass a langsmith "
                "Client to read a LangSmith dataset, or give a list of examples"
            )
        return data
    if isinstance(data, Mapping) or not isinstance(data, Sequence) or not data:
        raise ValueError(
            f"data: got {data!r:.60}; give a non-empty list of examples "
            "({'inputs': ..., 'outputs': ...}) or a LangSmith dataset's name"
        )
    examples: list[Example] = []
    for index, item in enumerate(data):
        at = f"data[{index}]"
        if isinstance(item, Mapping):
            unknown = sorted(set(item) - {"inputs", "outputs", "metadata"})
            if unknown:
                raise ValueError(f"{at}: unknown keys {unknown}; give inputs, outputs, metadata")
            metadata = item.get("metadata")
            if metadata is not None and not isinstance(metadata, Mapping):
                raise ValueError(f"{at}.metadata: got {type(metadata).__name__}; give a dict")
            _state_input(item.get("inputs"), f"{at}.inputs")
            _labels(item.get("outputs") or {}, f"{at}.outputs")
            item = Example(
                id=uuid.uuid4(),
                inputs=dict(item["inputs"]),
                outputs=dict(item.get("outputs") or {}),
                metadata=None if metadata is None else dict(metadata),
            )
        elif isinstance(item, Example):
            _state_input(item.inputs, f"{at}.inputs")
            _labels(item.outputs or {}, f"{at}.outputs")
        else:
            raise ValueError(
                f"{at}: got {type(item).__name__}; give a dict with inputs and outputs, or an "
                "Example"
            )
        examples.append(item)
    return examples


def _compiled(
    graph: object, checkpointer: BaseCheckpointSaver[Any] | None, store: BaseStore | None
) -> Graph:
    if isinstance(graph, StateGraph):
        compiled: Graph = graph.compile(checkpointer=checkpointer or InMemorySaver(), store=store)
        return compiled
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


def _pending(result: object) -> list[Any]:
    return list(result.get("__interrupt__") or ()) if isinstance(result, Mapping) else []


def _approve(
    graph: Graph, thread_id: str, pause: Any, reviewer: str, config: RunnableConfig | None
) -> Call:
    ask: dict[str, Any] = {
        "thread_id": thread_id,
        "decision": {"type": "approve"},
        "reviewer": reviewer,
        "interrupt_id": getattr(pause, "id", None),
        "config": config,
    }
    return Call(lambda: resolve_review(graph, **ask), lambda: aresolve_review(graph, **ask))


def _run(
    graph: Graph,
    inputs: Mapping[str, Any],
    config: RunnableConfig | None,
    reviews: Reviews,
    reviewer: str,
    max_reviews: int,
) -> Steps[dict[str, Any]]:
    thread_id = f"eval-{uuid.uuid4().hex}"
    where: RunnableConfig = {
        **(config or {}),
        "configurable": {**(config or {}).get("configurable", {}), "thread_id": thread_id},
    }
    result = yield Invoke(graph, _state_input(inputs), where)
    approved, note = 0, None
    while reviews == "approve" and (pending := _pending(result)):
        if approved >= max_reviews:
            note = f"still paused after approving {max_reviews} reviews (max_reviews)"
            break
        try:
            result = yield _approve(graph, thread_id, pending[0], reviewer, config)
        except ReviewError as exc:  # not a review, or a refused reviewer: it stays paused
            note = f"cannot approve the pause: {exc}"
            break
        approved += 1
    snapshot = yield Call(lambda: graph.get_state(where), lambda: graph.aget_state(where))
    values = snapshot.values
    answer = next(
        (m.text for m in reversed(values.get("messages") or []) if isinstance(m, AIMessage)),
        None,
    )
    return {
        "thread_id": thread_id,
        "status": values.get("status"),
        "halt_reason": values.get("halt_reason"),
        "answer": answer,
        "routes": [entry["worker"] for entry in values.get("ledger") or ()],
        "interrupts": [getattr(i, "value", i) for i in _pending(result)],
        "approved_reviews": approved,
        "review_note": note,
    }


def answer_traits(
    outputs: Mapping[str, Any], reference_outputs: Mapping[str, Any]
) -> dict[str, Any]:
    """The answer's traits: each `must_include` substring and the `pattern` (`re.search`).

    The score is the share of traits met; no result for an example without traits.

    Example:
        >>> answer_traits({"answer": "Your refund is on its way."},
        ...               {"must_include": ["refund", "A1001"]})
        {'key': 'answer_traits', 'score': 0.5, 'comment': "missing: 'A1001'"}
    """
    labels = _labels(reference_outputs)
    if not labels.must_include and labels.pattern is None:
        return NOT_APPLICABLE
    answer = outputs.get("answer") or ""
    missing = [repr(part) for part in labels.must_include if part not in answer]
    total = len(labels.must_include)
    if labels.pattern is not None:
        total += 1
        if re.search(labels.pattern, answer) is None:
            missing.append(f"pattern {labels.pattern!r}")
    return {
        "key": "answer_traits",
        "score": (total - len(missing)) / total,
        "comment": "missing: " + ", ".join(missing) if missing else None,
    }


def route_exact_match(
    outputs: Mapping[str, Any], reference_outputs: Mapping[str, Any]
) -> dict[str, Any]:
    """1.0 when the supervisor ran exactly the `expected_routes`, in order (else 0.0).

    No result for an example without `expected_routes`.

    Example:
        >>> route_exact_match({"routes": ["tech"]}, {"expected_routes": ["billing"]})
        {'key': 'route_exact_match', 'score': 0.0, 'comment': "ran ['tech'], expected ['billing']"}
    """
    expected = _labels(reference_outputs).expected_routes
    if expected is None:
        return NOT_APPLICABLE
    routes = list(outputs.get("routes") or ())
    ok = routes == expected
    comment = None if ok else f"ran {routes}, expected {expected}"
    return {"key": "route_exact_match", "score": float(ok), "comment": comment}


def status_done(outputs: Mapping[str, Any]) -> dict[str, Any]:
    """1.0 when the run ended with status `done`, not paused (else 0.0).

    Example:
        >>> status_done({"status": "running", "interrupts": [{"action": "refund"}]})
        {'key': 'status_done', 'score': 0.0, 'comment': 'status running, paused'}
    """
    if "status" not in outputs:
        return {"key": "status_done", "score": 0.0, "comment": "no outputs: the run raised"}
    paused = bool(outputs.get("interrupts"))
    ok = outputs["status"] == "done" and not paused
    comment = None if ok else f"status {outputs['status']}" + (", paused" if paused else "")
    return {"key": "status_done", "score": float(ok), "comment": comment}


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def routing_f1(
    outputs: Sequence[Mapping[str, Any]], reference_outputs: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Summary evaluator: routing precision, recall and F1 of the labelled examples.

    Each run's routes count against its `expected_routes` as multisets of workers (as
    `lgsp metrics --expected` counts them): micro `routing_precision`, `routing_recall`
    and `routing_f1`, with each worker's figures in `metadata`. A labelled run without
    outputs (it raised) is left out and counted in the comment; no result when no
    example is labelled.

    Example:
        >>> result = routing_f1([{"routes": ["tech", "writer"]}],
        ...                     [{"expected_routes": ["billing", "writer"]}])
        >>> [(r["key"], r["score"]) for r in result["results"]]
        [('routing_precision', 0.5), ('routing_recall', 0.5), ('routing_f1', 0.5)]
    """
    counts: dict[str, Counter[str]] = {}
    labelled = exact = missing = 0
    for output, reference in zip(outputs, reference_outputs, strict=True):
        expected = _labels(reference).expected_routes
        if expected is None:
            continue
        if "routes" not in output:
            missing += 1
            continue
        labelled += 1
        routes = list(output["routes"])
        exact += routes == expected
        ran, wanted = Counter(routes), Counter(expected)
        for worker in ran | wanted:
            tp = min(ran[worker], wanted[worker])
            counts.setdefault(worker, Counter()).update(
                tp=tp, fp=ran[worker] - tp, fn=wanted[worker] - tp
            )
    if not labelled and not missing:
        return NOT_APPLICABLE
    total = sum(counts.values(), Counter())
    precision = _ratio(total["tp"], total["tp"] + total["fp"])
    recall = _ratio(total["tp"], total["tp"] + total["fn"])
    per_worker = {}
    for worker, c in sorted(counts.items()):
        p, r = _ratio(c["tp"], c["tp"] + c["fp"]), _ratio(c["tp"], c["tp"] + c["fn"])
        per_worker[worker] = {**dict(c), "precision": p, "recall": r, "f1": _f1(p, r)}
    comment = f"{labelled} labelled runs, {exact} exact, {missing} without outputs"
    return {
        "results": [
            {"key": "routing_precision", "score": precision},
            {"key": "routing_recall", "score": recall},
            {
                "key": "routing_f1",
                "score": _f1(precision, recall),
                "comment": comment,
                "metadata": per_worker,
            },
        ]
    }


DEFAULT_EVALUATORS = (answer_traits, route_exact_match, status_done)


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence LangSmith's beta notice for `upload_runs=False` (we ask for it on purpose)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="'upload_runs' parameter is in beta")
        yield


def _settings(
    graph: object,
    data: object,
    checkpointer: BaseCheckpointSaver[Any] | None,
    store: BaseStore | None,
    reviews: object,
    reviewer: object,
    max_reviews: object,
    client: Client | None,
    upload_runs: object,
) -> tuple[Graph, object, Client | None]:
    if reviews not in ("interrupt", "approve"):
        raise ValueError(
            f"reviews: got {reviews!r}; give 'interrupt' (leave paused runs paused) or "
            "'approve' (approve every review)"
        )
    if not isinstance(reviewer, str) or not reviewer:
        raise ValueError(f"reviewer: got {reviewer!r}; give the name approvals are made as")
    if isinstance(max_reviews, bool) or not isinstance(max_reviews, int) or max_reviews < 1:
        raise ValueError(f"max_reviews: got {max_reviews!r}; give a positive integer")
    compiled = _compiled(graph, checkpointer, store)
    examples = _examples(data, client)
    if client is None and upload_runs is False:
        client = Client(auto_batch_tracing=False)  # no tracing thread: no request at all
    return compiled, examples, client


def evaluate(
    graph: StateGraph[Any, Any, Any, Any] | Graph,
    data: Sequence[Mapping[str, Any] | Example] | str | uuid.UUID,
    evaluators: Sequence[Callable[..., Any]] = DEFAULT_EVALUATORS,
    *,
    summary_evaluators: Sequence[Callable[..., Any]] = (routing_f1,),
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
    config: RunnableConfig | None = None,
    reviews: Reviews = "interrupt",
    reviewer: str = "evaluation",
    max_reviews: int = 10,
    client: Client | None = None,
    upload_runs: bool = False,
    max_concurrency: int | None = 0,
    **langsmith_kwargs: Any,
) -> ExperimentResults:
    """Run each example on a fresh thread of the graph with `langsmith.evaluate`, offline.

    Each run's outputs: `thread_id`, `status`, `halt_reason`, `answer` (the last AI
    message's text), `routes` (the root ledger's workers), `interrupts` (the values it is
    paused on), `approved_reviews` and `review_note` (why it stays paused). A run that
    raises is recorded by LangSmith with its error.

    Args:
        graph: An uncompiled graph (compiled with `checkpointer`, default `InMemorySaver`,
            and `store`) or a graph compiled with a checkpointer.
        data: `{"inputs": {"input": text} or {"messages": [...]}, "outputs":
            {"expected_routes": [...], "must_include": [...], "pattern": regex}}` dicts or
            LangSmith `Example`s; or a LangSmith dataset's name or id, read with `client`.
        evaluators: LangSmith evaluators (default: `answer_traits`, `route_exact_match`,
            `status_done`).
        summary_evaluators: Default: `routing_f1`.
        checkpointer: The saver to compile an uncompiled graph with.
        store: The store to compile an uncompiled graph with.
        config: Run config for every example; the thread id is set per run.
        reviews: `"interrupt"` leaves a run paused at a review; `"approve"` approves each
            (`resolve_review`).
        reviewer: Who the approvals are recorded as.
        max_reviews: Approvals per run before it is left paused.
        client: A `langsmith.Client`; default: one without a tracing thread (no request).
        upload_runs: Upload the experiment to LangSmith (default False: nothing leaves
            the process and the graph is not traced).
        max_concurrency: Runs at once (LangSmith's: 0 runs them one by one).
        **langsmith_kwargs: Passed to `langsmith.evaluate` (`num_repetitions`, ...).

    Returns:
        LangSmith's `ExperimentResults`: one row per run (`run`, `example`,
        `evaluation_results`).

    Raises:
        ValueError: If the graph, an example or a setting is invalid (naming the field).

    Example:
        ```python
        rows = list(evaluate(builder, [
            {"inputs": {"input": "Refund A1001"}, "outputs": {"expected_routes": ["billing"]}},
        ], reviews="approve"))
        print(routing_f1([r["run"].outputs for r in rows], [r["example"].outputs for r in rows]))
        ```
    """
    compiled, examples, client = _settings(
        graph, data, checkpointer, store, reviews, reviewer, max_reviews, client, upload_runs
    )

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        with nullcontext() if upload_runs else tracing_context(enabled=False):
            return drive(_run(compiled, inputs, config, reviews, reviewer, max_reviews))

    with _quiet():
        return cast(Any, langsmith_evaluate)(  # type: ignore[no-any-return]
            target,
            data=examples,
            evaluators=list(evaluators),
            summary_evaluators=list(summary_evaluators),
            client=client,
            upload_runs=upload_runs,
            max_concurrency=max_concurrency,
            **langsmith_kwargs,
        )


async def aevaluate(
    graph: StateGraph[Any, Any, Any, Any] | Graph,
    data: Sequence[Mapping[str, Any] | Example] | str | uuid.UUID,
    evaluators: Sequence[Callable[..., Any]] = DEFAULT_EVALUATORS,
    *,
    summary_evaluators: Sequence[Callable[..., Any]] = (routing_f1,),
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
    config: RunnableConfig | None = None,
    reviews: Reviews = "interrupt",
    reviewer: str = "evaluation",
    max_reviews: int = 10,
    client: Client | None = None,
    upload_runs: bool = False,
    max_concurrency: int | None = 4,
    **langsmith_kwargs: Any,
) -> AsyncExperimentResults:
    """Async twin of `evaluate`, on `langsmith.aevaluate`: `max_concurrency` runs at once.

    Returns:
        LangSmith's `AsyncExperimentResults` (`async for row in results`).

    Raises:
        ValueError: As `evaluate`.

    Example:
        ```python
        results = await aevaluate(builder, examples, max_concurrency=8)
        rows = [row async for row in results]
        ```
    """
    compiled, examples, client = _settings(
        graph, data, checkpointer, store, reviews, reviewer, max_reviews, client, upload_runs
    )

    async def target(inputs: dict[str, Any]) -> dict[str, Any]:
        with nullcontext() if upload_runs else tracing_context(enabled=False):
            return await adrive(_run(compiled, inputs, config, reviews, reviewer, max_reviews))

    with _quiet():
        return await cast(Any, langsmith_aevaluate)(  # type: ignore[no-any-return]
            target,
            data=examples,
            evaluators=list(evaluators),
            summary_evaluators=list(summary_evaluators),
            client=client,
            upload_runs=upload_runs,
            max_concurrency=max_concurrency,
            **langsmith_kwargs,
        )

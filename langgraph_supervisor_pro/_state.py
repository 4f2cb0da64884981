"""The supervisor graph's state: the user's conversation, the ledger and one slot per worker.

The growing lists are LangGraph `DeltaChannel`s, so a checkpoint stores each hop's write
once (docs/architecture.md, "State").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.channels import DeltaChannel
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from langgraph_supervisor_pro._contracts import RunStatus, WorkerStatus

DELTA_SNAPSHOT_FREQUENCY = 1_000
"""Updates of a root delta channel between two full copies of it (LangGraph's default: 100;
docs/architecture.md, "What a thread keeps", says why)."""

SCHEMA_VERSION = 1
"""The state schema a new thread records (docs/concepts/state.md, "Schema version"): 1 is
0.1.0's. Raise it only with a migration for older threads and a new tests/golden fixture set."""


class LedgerEntry(TypedDict):
    """One line per hop: the only record of a worker's work the supervisor sees."""

    turn: int
    """The conversation turn (one per user message) the hop belongs to."""
    step: int
    """The hop number within its turn, from 1."""
    worker: str
    instructions: str
    """What the supervisor asked the worker to do."""
    decided_by: Literal["router", "model", "fallback"]
    """Who chose the route: the deterministic router, the model, or the fallback."""
    status: WorkerStatus
    """How the hop ended."""
    summary: str
    """The worker's short summary (never its full output)."""
    error: str | None
    """What went wrong, for failed hops."""
    refused: list[str]
    """Tool calls refused during the hop (outside the worker's allowlist)."""
    fallback: NotRequired[str]
    """Present when the worker's `fallback` answered the hop: why the worker's own hop
    would have failed (`"verify: ..."`, `"breaker open: ..."`, ...)."""
    breaker: NotRequired[BreakerMark]
    """Present for a worker with a `breaker`: the state the hop ran under."""


class BreakerMark(TypedDict):
    """The circuit breaker state one hop ran under (`LedgerEntry["breaker"]`)."""

    state: Literal["closed", "half_open", "open"]
    """What the hop found: closed (it ran), half_open (it ran as the probe) or open (refused)."""
    failures: int
    """Failed hops counted within the breaker's window after this hop."""
    changed_to: Literal["closed", "open"] | None
    """The state this hop moved the breaker to, else None."""


class SecurityEntry(TypedDict):
    """A tool call refused for least privilege (never executed)."""

    turn: int
    step: int
    worker: str
    tool: str
    args: dict[str, Any]
    kind: Literal["out_of_scope"]
    reason: str


class ReviewEntry(TypedDict):
    """One answered review, for the audit trail: what was reviewed, who answered, when.

    A review inside a domain of a tree is copied to each level above, with that level's
    turn and step; `path` says where it was.
    """

    turn: int
    """The turn of the hop the review belongs to (at the level that records it)."""
    step: int | None
    """The hop's step (at the level that records it)."""
    interrupt_id: str
    """The id of the interrupt the answer resumed."""
    kind: Literal["tool", "dispatch", "budget"]
    """A worker's tool call, the supervisor's dispatch of a worker, or a budget warning."""
    action: str
    """The tool's name, or `dispatch:<worker>`."""
    worker: str | None
    """The worker that wanted to act (or was dispatched)."""
    path: list[str]
    """Where the review paused: worker names from the root down."""
    decision: Literal["approve", "edit", "reject", "respond"]
    reviewer: str | None
    """Who answered: the answer's `reviewer`, else the server's authenticated user, or None."""
    reviewers: str | None
    """The reviewer group the review was assigned to when it was answered."""
    answered_at: str
    """When it was answered (ISO 8601, UTC)."""
    escalations: list[dict[str, Any]]
    """The escalations before the answer, oldest first (from, to, reason, by, at, ...)."""


UsageRole = Literal["supervisor", "worker", "summarizer", "synthesis", "judge"]
"""Who made a model call."""


class UsageEntry(TypedDict):
    """One model call: its tokens as the provider reported them, its model, where, its cost.

    Entries of threads from before 0.2 carry only `turn` to `utilisation`.
    """

    turn: int
    step: int
    """The hop the call belongs to (the supervisor's decision for hop `step`)."""
    role: UsageRole
    worker: str | None
    """The worker whose hop (or history, for the summarizer) the call served."""
    tokens: int
    """Input tokens the model received (by the configured counter)."""
    window: NotRequired[int]
    """The model's input window (when compaction gives one)."""
    utilisation: NotRequired[float]
    """`tokens / window` (when compaction gives a window)."""
    input_tokens: NotRequired[int]
    """Input tokens as the provider reported them (cached ones included), else counted."""
    output_tokens: NotRequired[int]
    cache_read: NotRequired[int]
    cache_creation: NotRequired[int]
    reasoning: NotRequired[int]
    estimated: NotRequired[bool]
    """True when the provider reported no usage and the tokens were counted here."""
    provider: NotRequired[str | None]
    model: NotRequired[str | None]
    """The model's name as it reports it (LangSmith's `ls_model_name`)."""
    path: NotRequired[list[str]]
    """Worker names from the root down to where the call was made ([]: this level's own)."""
    cost: NotRequired[float | None]
    """The call's cost by the budget's price table; None: its model has no price (unpriced,
    not free); absent: the graph has no price table."""


class BudgetEvent(TypedDict):
    """A budget warning, a reviewer's answer to one, or a halt (`create_supervisor(budget=...)`)."""

    turn: int
    step: int
    kind: Literal["warning", "approved", "rejected", "exceeded"]
    measure: Literal["tokens", "cost"]
    spent: float
    limit: float
    """The limit in force (for `approved`: the raised one)."""
    scope: Literal["turn", "thread"]
    worker: str | None
    """The worker whose own budget it is (`Worker(budget=...)`), else None: the graph's."""
    path: list[str]
    """The level that recorded it: worker names from the root down ([]: the root)."""
    at: str
    reviewer: NotRequired[str | None]


class CompactionEntry(TypedDict):
    """One compaction of a worker's history."""

    turn: int
    step: int
    worker: str
    reason: Literal["trigger", "cadence", "within_hop"]
    """Before a hop (trigger or cadence), or inside the worker's agent (`within_hop`)."""
    tokens_before: int
    tokens_after: int
    removed: int
    """How many messages the summary replaced, or the truncation dropped."""
    attempts: int
    """Summarizer calls made (0 when its breaker was open)."""
    error: str | None
    """Why the summarizer failed or was not called (the oldest turns were dropped instead)."""
    kind: NotRequired[Literal["summary", "truncated"]]
    """How: replaced by a summary, or the oldest turns dropped (absent: a summary)."""
    stored: NotRequired[dict[str, Any]]
    """Where a truncation's dropped messages were archived: `{"namespace": [...], "key": ...}`."""


class JudgementEntry(TypedDict):
    """The online judge's verdict on one completed turn (`create_supervisor(judge=...)`)."""

    turn: int
    key: str
    """Its `judge_key` (thread, domain path, turn): the item key in the store and queue."""
    judge: str
    """The judge model, as provider/model name."""
    score: float | None
    """The score from 0 to 1; None when the judge failed (see `error`)."""
    passed: bool | None
    """The judge's own pass or fail; None when it failed."""
    reasons: list[str]
    threshold: float
    """Scores below it are queued for human review."""
    queued: bool
    """Queued for human review (a score below the threshold, with a store to queue in)."""
    error: str | None
    """Why there is no verdict, or why a low score could not be queued."""
    feedback_id: str | None
    """The id of the LangSmith feedback sent with the score, if any."""
    feedback_error: str | None
    """Why no feedback was sent although a client is configured, if so."""
    at: str
    """When the verdict was given (ISO 8601, UTC)."""


class WorkerSlot(TypedDict):
    """A worker's own namespace in state: its messages and its results."""

    messages: list[AnyMessage]
    """The worker's own conversation, across hops and turns."""
    results: list[dict[str, Any]]
    """Every `WorkerResult` it produced (as dicts), oldest first."""


class RouteState(TypedDict):
    """The hop in flight: written by the supervisor, read by the chosen worker."""

    next: str
    instructions: str
    step: int
    decided_by: Literal["router", "model", "fallback"]
    at: NotRequired[str]
    """When the supervisor dispatched the hop (ISO 8601, UTC): its review deadlines' start."""


BranchStage = Literal["review", "approved", "closed", "dispatched"]
"""Where one branch of a parallel decision stands (`closed`: settled without running)."""


class FanoutRoute(RouteState):
    """One branch of a parallel decision (`create_supervisor(parallel=True)`)."""

    stage: BranchStage


def _merge_fanout(
    current: Mapping[str, FanoutRoute] | None, update: Mapping[str, FanoutRoute] | None
) -> dict[str, FanoutRoute]:
    """Merge branch records by worker name (the supervisor replaces all with `Overwrite`)."""
    return {**(current or {}), **(update or {})}


def _append(current: Sequence[Any], batches: Sequence[Sequence[Any]]) -> list[Any]:
    return [*current, *chain.from_iterable(batches)]


def _merge_worker_slots(
    current: Mapping[str, WorkerSlot], batches: Sequence[Mapping[str, Mapping[str, Any]]]
) -> dict[str, WorkerSlot]:
    """Append each write to its own worker's slot; never touch another slot.

    Pure, deterministic and batching-invariant, as `DeltaChannel` requires.
    """
    # Each touched slot's lists are copied once (copying per write was quadratic on replay).
    messages: dict[str, list[Any]] = {}
    results: dict[str, list[Any]] = {}
    for batch in batches:
        for name, write in batch.items():
            unknown = set(write) - {"messages", "results", "compact"}
            if unknown:
                raise ValueError(
                    f"workers[{name!r}]: a slot write may only carry 'messages', 'results' "
                    f"and 'compact', got {sorted(unknown)}"
                )
            if name not in messages:
                slot = current.get(name) or WorkerSlot(messages=[], results=[])
                messages[name], results[name] = list(slot["messages"]), list(slot["results"])
            if "compact" in write:
                messages[name] = _apply_compaction(messages[name], write["compact"])
            messages[name].extend(write.get("messages", ()))
            results[name].extend(write.get("results", ()))
    merged: dict[str, WorkerSlot] = dict(current)
    for name, slot_messages in messages.items():
        merged[name] = WorkerSlot(messages=slot_messages, results=results[name])
    return merged


def _apply_compaction(messages: list[Any], compact: Mapping[str, Any]) -> list[Any]:
    """Put `compact["summary"]` in place of the messages in `compact["remove"]` (idempotent)."""
    remove = set(compact["remove"])
    out: list[Any] = []
    placed = False
    for message in messages:
        if getattr(message, "id", None) not in remove:
            out.append(message)
        elif not placed:
            out.append(compact["summary"])
            placed = True
    return out


def _delta(reducer: Any) -> DeltaChannel[Any]:
    """A root delta channel folding with `reducer`, copied every `DELTA_SNAPSHOT_FREQUENCY`."""
    return DeltaChannel(reducer, snapshot_frequency=DELTA_SNAPSHOT_FREQUENCY)


class SupervisorInput(TypedDict):
    """What a run takes: the user's conversation (the last human message is the task)."""

    messages: Annotated[list[AnyMessage], add_messages]


class SupervisorState(SupervisorInput, total=False):
    """The full state of a supervisor graph.

    Example:
        ```python
        final = graph.invoke({"messages": [("user", "Plan the launch")]}, config)
        final["status"], [e["worker"] for e in final["ledger"]]
        # ('done', ['researcher', 'writer'])
        ```
    """

    ledger: Annotated[list[LedgerEntry], _delta(_append)]
    """One entry per completed hop, across turns."""
    workers: Annotated[dict[str, WorkerSlot], _delta(_merge_worker_slots)]
    """One namespaced slot per worker that has run."""
    usage: Annotated[list[UsageEntry], _delta(_append)]
    """Every model call the graph saw (tokens, model, cost), oldest first."""
    security: Annotated[list[SecurityEntry], _delta(_append)]
    """Every refused tool call (least privilege), oldest first."""
    reviews: Annotated[list[ReviewEntry], _delta(_append)]
    """Every answered review, oldest first: this level's and its domains'."""
    autonomy: str
    """The autonomy tier in force for the current turn (manual, supervised, autonomous)."""
    compactions: Annotated[list[CompactionEntry], _delta(_append)]
    """Every compaction of a worker's history (and every failed one), oldest first."""
    judgements: Annotated[list[JudgementEntry], _delta(_append)]
    """The online judge's verdicts, one per judged turn, oldest first."""
    budget_events: Annotated[list[BudgetEvent], _delta(_append)]
    """Budget warnings, reviewers' answers to them and halts, oldest first."""
    route: RouteState | None
    """The hop in flight (None when none is, or when a parallel decision is in flight)."""
    fanout: Annotated[dict[str, FanoutRoute], _merge_fanout]
    """The branches of the parallel decision in flight, by worker name (empty otherwise)."""
    step: int
    """Hops dispatched in the current turn."""
    turn: int
    """The current turn number, from 1."""
    task: str
    """The current turn's task: the text of the last human message."""
    task_message_id: str | None
    """The id of that message, which tells a new turn from a resumed one."""
    status: RunStatus
    """running, done, failed or halted."""
    halt_reason: str | None
    """Why the run stopped early (a `HaltReason`), else None."""
    halt_detail: str | None
    """A sentence that explains the halt, naming the numbers that tripped it."""
    schema_version: int
    """The state schema the thread started with, written once by its first turn (read it
    with `schema_version`: threads of 0.1.0 have none)."""


def schema_version(values: Mapping[str, Any]) -> int:
    """The state schema version of a thread's values: the one it recorded, else 1 (0.1.0)."""
    return int(values.get("schema_version", 1))

"""The long-run section: ours alone, with compaction and external memory, from 6 to 96 hops.

The workload is the comparison's (three workers, researcher / analyst / writer, taking
turns for N hops, each answering 2,000 characters, then FINISH), with every worker an
agent worker (`--agent`, a `ScriptedChatModel` inside `create_react_agent` by default),
and the graph built with

    create_supervisor(workers, model=..., max_steps=N,
                      compaction=Compaction(summarizer=<scripted>,
                                            max_context_tokens=<window>, trigger=0.7,
                                            every_n_steps=<every>, keep=<keep>))

and compiled with `open_checkpointer(uri)` and `open_store(uri)` on Postgres (in memory
with `--no-postgres`). An agent worker's slot keeps its own conversation (prompts and
full answers), so without compaction its next prompt would grow by ~535 tokens per
visit. The store holds each hop's full output; the slots' results keep references.

Each compaction configuration (`LongConfig`) is one series of runs:

- **trigger only** (`every_n_steps=None`, `keep` 6 by default, as the package): the slot
  is compacted before a hop whose prompt would reach 0.7 of the window;
- **trigger + cadence** (`every_n_steps=1, keep=2` by default, the package's "compact on a
  fixed cadence as well"): also, whatever the size, before a worker's hop when its
  completed hops are a multiple of `every_n_steps` (with 1: before each of its hops), once
  its history holds more than the `keep` kept messages to fold in (with keep=2: something
  older than its last visit).

By default (`--long-every` not given) the section runs both; with `--long-every N` it
runs the one configuration `every_n_steps=N, keep=--long-keep`.

The summarizer is a `ScriptedChatModel` whose every step is `summarise`: a deterministic
`ContextSummary` built from the messages it is asked to compact (which answers of which
worker it saw), with one key fact, the worker's first answer, which later summaries
must carry over.

Per configuration and hop count, one verified run measures:

- the largest prompt of any supervisor or worker model call, from `state["usage"]`,
  cross-checked call by call against the scripted models' recorded calls
  (`count_tokens_approximately`); the summarizer's largest input separately (also
  from `usage`, role "summarizer", and cross-checked the same way);
- the compactions (by reason, trigger or cadence; one summarizer call each), and the
  largest utilisation (tokens / window) of any call in `usage`, summarizer included;
- on Postgres: the thread's checkpoint bytes (all namespaces, as in the comparison)
  and the store bytes of the thread's output namespaces, each divided by N; ms per hop
  of that one run (`durability="sync"`).

For contrast, the reference (langgraph-supervisor, no compaction) runs the same hop
counts in memory, and the largest prompt of its supervisor and worker calls is reported.
"""

from __future__ import annotations

import inspect
import re
import uuid
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from rich.console import Console

from bench._postgres import CHECKPOINT_TABLES, store_bytes, thread_bytes
from bench._report import (
    Section,
    Target,
    TextTable,
    fmt_int,
    fmt_ms,
    fmt_ratio,
    fmt_times,
    per_hop,
    ratio,
)
from bench._workload import (
    TASK,
    WORKER_NAMES,
    WORKERS,
    AgentFactory,
    Prepared,
    WorkloadError,
    answer_prefix,
    build_reference,
    check_pro,
    pro_supervisor_model,
    run,
    schedule,
    visits,
    worker_model,
)
from langgraph_supervisor_pro import Compaction, Worker, create_supervisor
from langgraph_supervisor_pro.compaction import is_summary_message
from langgraph_supervisor_pro.persistence import output_namespace
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel

LONG_HOPS = (6, 12, 24, 48, 96)
"""The hop counts of the long runs, by default."""
DEFAULT_WINDOW = 4_000
"""The input window (`max_context_tokens`) of every model, by default."""
TRIGGER = 0.7
"""Compact when a worker's next prompt would reach this fraction of the window."""
FLAT_LIMIT = 1.5
"""Largest prompt and checkpoint bytes per hop: the last hop count within 1.5x of the first."""
DEFAULT_KEEP = int(inspect.signature(Compaction).parameters["keep"].default)
"""`Compaction.keep` when not given: the package's default (6)."""
CADENCE_EVERY, CADENCE_KEEP = 1, 2
"""The cadence configuration run next to trigger-only when `--long-every` is not given."""
WARM_UP_HOPS = 3

_MARKER = re.compile(r"\[(\w+) answer (\d+)\]")
"""An answer's first words (`answer_prefix`): which worker, which visit."""
_DONE = re.compile(r"(\w+) answers (\d+)-(\d+) delivered")
"""A `done` item written by `summarise`, read back from the previous summary."""


# ----------------------------------------------------------------------- the summarizer


def opening_fact(worker: str) -> str:
    """The key fact `summarise` records for a worker's first answer (must never be lost)."""
    return f"{answer_prefix(worker, 1)} opened {worker}'s part of the report"


def summarise(call: ScriptedCall) -> dict[str, Any]:
    """A deterministic `ContextSummary` of what the summarizer was asked to compact.

    It reads the answer markers in the messages and the previous summary's `done`
    ranges, and reports one `done` item per worker (the range of its answers folded in
    so far), the latest answer, and one key fact per worker whose first answer it saw.
    """
    text = "\n".join(str(message.content) for message in call.messages)
    answers: dict[str, set[int]] = defaultdict(set)
    for worker, visit in _MARKER.findall(text):
        answers[worker].add(int(visit))
    for worker, first, last in _DONE.findall(text):
        answers[worker] |= {int(first), int(last)}
    ranges = {worker: (min(seen), max(seen)) for worker, seen in sorted(answers.items())}
    done = [f"{worker} answers {lo}-{hi} delivered" for worker, (lo, hi) in ranges.items()]
    latest = ", ".join(f"{worker} answer {hi}" for worker, (_, hi) in ranges.items())
    return {
        "task": TASK,
        "done": done or ["instructions received"],
        "current_state": f"summarised up to {latest}" if latest else "no answer yet",
        "remaining": ["the further parts of the report"],
        "key_facts": [opening_fact(worker) for worker, (lo, _) in ranges.items() if lo == 1],
    }


# ---------------------------------------------------------------------------- the graph


@dataclass(frozen=True)
class LongConfig:
    """One compaction configuration of the long runs (window and trigger are shared)."""

    every: int | None = None
    """`Compaction.every_n_steps`: None compacts by size (the trigger) only."""
    keep: int = DEFAULT_KEEP
    """`Compaction.keep`: the recent messages kept verbatim."""

    @property
    def label(self) -> str:
        """How the tables and targets name the configuration."""
        if self.every is None:
            return f"trigger only, keep={self.keep}"
        return f"trigger + cadence, every_n_steps={self.every}, keep={self.keep}"

    @property
    def short(self) -> str:
        """A column prefix."""
        return "trigger" if self.every is None else "cadence"

    @property
    def reasons(self) -> frozenset[str]:
        """The compaction reasons this configuration may record before a hop."""
        return frozenset({"trigger"} if self.every is None else {"trigger", "cadence"})

    def arguments(self, window: int) -> str:
        """The `Compaction(...)` arguments, as the header shows them."""
        every = "" if self.every is None else f", every_n_steps={self.every}"
        return (
            f"Compaction(summarizer=<scripted>, max_context_tokens={window:,}, "
            f"trigger={TRIGGER}{every}, keep={self.keep})"
        )

    def compaction(self, summarizer: ScriptedChatModel, window: int) -> Compaction:
        """The graph's compaction configuration."""
        return Compaction(
            summarizer=summarizer,
            max_context_tokens=window,
            trigger=TRIGGER,
            every_n_steps=self.every,
            keep=self.keep,
        )


def long_configs(every: int | None, keep: int) -> tuple[LongConfig, ...]:
    """The configurations to run: with `every`, that one; else trigger only and the cadence."""
    if every is not None:
        return (LongConfig(every=every, keep=keep),)
    return (LongConfig(keep=keep), LongConfig(every=CADENCE_EVERY, keep=CADENCE_KEEP))


@dataclass(frozen=True)
class Backend:
    """Where the long runs keep checkpoints and outputs."""

    saver: BaseCheckpointSaver[Any]
    store: BaseStore
    database_uri: str | None
    """The Postgres database to size the thread in; None in memory."""


def memory_backend() -> Backend:
    """A fresh in-memory checkpointer and store (nothing is sized)."""
    return Backend(saver=InMemorySaver(), store=InMemoryStore(), database_uri=None)


def build_long(
    hops: int, backend: Backend, agent: AgentFactory, window: int, config: LongConfig
) -> tuple[Prepared, ScriptedChatModel]:
    """Our graph with agent workers, compaction and the store; and its summarizer model."""
    supervisor = pro_supervisor_model(hops)
    models = {name: worker_model(name, n) for name, n in visits(hops).items()}
    workers = [
        Worker(name=name, description=description, agent=agent(models[name], name))
        for name, description in WORKERS
    ]
    # At most one compaction per hop (trigger or cadence, before the hop).
    summarizer = ScriptedChatModel(name="summarizer", script=[summarise] * hops)
    compaction = config.compaction(summarizer, window)
    builder = create_supervisor(workers, model=supervisor, max_steps=hops, compaction=compaction)
    graph = builder.compile(checkpointer=backend.saver, store=backend.store)
    prepared = Prepared(
        hops=hops, graph=graph, supervisor=supervisor, workers=models, check_final=check_pro
    )
    return prepared, summarizer


# ---------------------------------------------------------------------------- measuring


@dataclass(frozen=True)
class LongRun:
    """What one verified long run measured."""

    hops: int
    seconds: float
    supervisor_tokens: int
    """The largest input of any supervisor call, from `usage`."""
    worker_tokens: int
    """The largest input of any worker model call, from `usage`."""
    summarizer_tokens: int | None
    """The largest input of any summarizer call, from `usage` (None: never called)."""
    summarizer_total: int
    """The summarizer calls' inputs, summed (from `usage`)."""
    compactions: int
    """Compactions before a hop, one summarizer call each."""
    cadence_compactions: int
    """Of those, the ones recorded with reason "cadence" (the others: "trigger")."""
    max_utilisation: float
    """The largest `utilisation` in `usage` (supervisor, worker and summarizer calls)."""
    checkpoint_bytes: Mapping[str, int] | None
    """Stored bytes of the thread per checkpoint table (None in memory)."""
    store_bytes: int | None
    """Stored bytes of the thread's output items in the `store` table (None in memory)."""
    store_items: int

    @property
    def largest(self) -> int:
        """The largest prompt of any supervisor or worker call."""
        return max(self.supervisor_tokens, self.worker_tokens)

    @property
    def checkpoint_total(self) -> int | None:
        """All of the thread's checkpoint bytes."""
        return None if self.checkpoint_bytes is None else sum(self.checkpoint_bytes.values())


def call_tokens(model: ScriptedChatModel | None) -> list[int]:
    """`count_tokens_approximately` of each call's messages, in order (none without a model)."""
    calls = () if model is None else model.calls
    return [count_tokens_approximately(list(call.messages)) for call in calls]


def warm_up(backend: Backend, agent: AgentFactory, window: int, config: LongConfig) -> None:
    """One untimed small run, so first-call costs are not timed."""
    prepared, _ = build_long(WARM_UP_HOPS, backend, agent, window, config)
    run(prepared, f"long-warm-up-{uuid.uuid4().hex[:8]}", durability="sync")


def measure(
    hops: int, backend: Backend, agent: AgentFactory, window: int, config: LongConfig
) -> LongRun:
    """One verified long run on a fresh thread, sized when the backend is Postgres."""
    prepared, summarizer = build_long(hops, backend, agent, window, config)
    thread_id = f"long-{config.short}-{hops}-{uuid.uuid4().hex[:8]}"
    result = run(prepared, thread_id, durability="sync")
    final = result.final
    check_usage(final, prepared, summarizer, window)
    check_compactions(final, summarizer, config, hops)
    namespaces = [output_namespace(thread_id, name) for name in WORKER_NAMES]
    items = sum(len(backend.store.search(ns, limit=hops + 1)) for ns in namespaces)
    _expect(items == hops, f"{hops} hops: the store holds {items} outputs, expected {hops}")
    usage = final["usage"]
    checkpoint, stored = None, None
    if backend.database_uri is not None:
        checkpoint = thread_bytes(backend.database_uri, thread_id)
        stored, rows = store_bytes(backend.database_uri, namespaces)
        _expect(rows == hops, f"{hops} hops: {rows} store rows, expected {hops}")
    summarized = [u["tokens"] for u in usage if u["role"] == "summarizer"]
    return LongRun(
        hops=hops,
        seconds=result.seconds,
        supervisor_tokens=max(u["tokens"] for u in usage if u["role"] == "supervisor"),
        worker_tokens=max(u["tokens"] for u in usage if u["role"] == "worker"),
        summarizer_tokens=max(summarized) if summarized else None,
        summarizer_total=sum(summarized),
        compactions=len(final["compactions"]),
        cadence_compactions=sum(e["reason"] == "cadence" for e in final["compactions"]),
        max_utilisation=max(u["utilisation"] for u in usage),
        checkpoint_bytes=checkpoint,
        store_bytes=stored,
        store_items=items,
    )


def check_usage(
    final: Mapping[str, Any], prepared: Prepared, summarizer: ScriptedChatModel, window: int
) -> None:
    """`usage` must hold exactly the calls the scripted models received, with their sizes."""
    usage: list[Mapping[str, Any]] = final.get("usage") or []
    hops = prepared.hops
    _expect(
        all(u["window"] == window for u in usage),
        f"{hops} hops: a usage entry has a window other than {window}",
    )
    roles = {u["role"] for u in usage}
    _expect(
        roles <= {"supervisor", "worker", "summarizer"},
        f"{hops} hops: unexpected usage roles {sorted(roles)}",
    )
    for role, model in (("supervisor", prepared.supervisor), ("summarizer", summarizer)):
        logged = [u["tokens"] for u in usage if u["role"] == role]
        _expect(
            logged == call_tokens(model),
            f"{hops} hops: the {role}'s usage entries do not match its model's calls",
        )
    for name, model in prepared.workers.items():
        logged = [u["tokens"] for u in usage if u["role"] == "worker" and u["worker"] == name]
        _expect(
            logged == call_tokens(model),
            f"{hops} hops: {name}'s usage entries do not match its model's calls",
        )


def check_compactions(
    final: Mapping[str, Any], summarizer: ScriptedChatModel, config: LongConfig, hops: int
) -> None:
    """Every compaction succeeded, for a reason the configuration allows and on its cadence,
    at most once per hop; each compacted slot starts with a summary, and the worker's first
    answer is either still kept verbatim or carried by that summary (never lost)."""
    entries: list[Mapping[str, Any]] = final.get("compactions") or []
    failed = [e for e in entries if e["error"] is not None or e["removed"] == 0]
    _expect(not failed, f"compactions failed or removed nothing: {failed[:2]}")
    _expect(
        len(summarizer.calls) == len(entries),
        f"the summarizer was called {len(summarizer.calls)} times for {len(entries)} compactions",
    )
    plan = schedule(hops)
    _expect(
        len({e["step"] for e in entries}) == len(entries),
        f"{config.label}: more than one compaction before a hop",
    )
    for entry in entries:
        worker, step = entry["worker"], entry["step"]
        _expect(
            entry["reason"] in config.reasons,
            f"{config.label}: a compaction with reason {entry['reason']!r} "
            f"(expected {sorted(config.reasons)})",
        )
        _expect(
            1 <= step <= hops and plan[step - 1] == worker,
            f"{config.label}: a compaction of {worker} before hop {step}, which is not its hop",
        )
        # The cadence counts the worker's own completed hops (its slot's results).
        earlier = plan[: step - 1].count(worker)
        _expect(
            entry["reason"] != "cadence" or (earlier >= 1 and earlier % (config.every or 1) == 0),
            f"{config.label}: a cadence compaction of {worker} after {earlier} of its hops, "
            f"not a positive multiple of every_n_steps={config.every}",
        )
    for worker in Counter(e["worker"] for e in entries):
        messages: list[BaseMessage] = final["workers"][worker]["messages"]
        head = messages[0] if messages else None
        if head is None or not is_summary_message(head):
            raise WorkloadError(
                f"long run: {worker}'s compacted slot does not start with a summary"
            )
        summary = head.additional_kwargs["lgsp_summary"]
        done = str(summary["done"][0])
        carried = opening_fact(worker) in summary["key_facts"] and done.startswith(
            f"{worker} answers 1-"
        )
        # A compaction may fold only what precedes the first answer (a cadence compaction,
        # or a tail budget smaller than one answer); the answer is then still kept verbatim.
        first = answer_prefix(worker, 1)
        verbatim = any(str(m.content).startswith(first) for m in messages[1:])
        _expect(
            carried != verbatim,
            f"{worker}'s first answer is "
            + (
                "both kept verbatim and in the summary"
                if carried
                else f"neither kept verbatim nor in the summary (lost): {summary}"
            ),
        )


def reference_largest(hops: int, agent: AgentFactory) -> tuple[int, int]:
    """The reference's largest supervisor and worker prompts at `hops` hops (in memory)."""
    prepared = build_reference(hops, InMemorySaver(), agent)
    result = run(prepared, f"reference-long-{hops}-{uuid.uuid4().hex[:8]}")
    workers = max(t for model in prepared.workers.values() for t in call_tokens(model))
    return max(result.tokens), workers


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise WorkloadError(f"long run: {message}")


# ----------------------------------------------------------------------------- report


@dataclass(frozen=True)
class LongSeries:
    """One configuration's runs, by hop count."""

    config: LongConfig
    runs: Mapping[int, LongRun]

    @property
    def hops(self) -> list[int]:
        """The hop counts run, ascending."""
        return sorted(self.runs)


@dataclass(frozen=True)
class LongResults:
    """The long section's series (one per configuration) and the reference's largest prompts."""

    series: Sequence[LongSeries]
    reference: Mapping[int, tuple[int, int]]
    window: int
    postgres: bool

    @property
    def hops(self) -> list[int]:
        """The hop counts run, ascending (the same for every series)."""
        return self.series[0].hops


def _title(series: LongSeries, what: str) -> str:
    return f"Long run (ours, compaction + store; {series.config.label}): {what}"


def prompt_table(results: LongResults, series: LongSeries) -> TextTable:
    """Largest prompt per model call, compactions and utilisation, per hop count."""
    hops = series.hops
    first = series.runs[hops[0]]
    rows = []
    for n in hops:
        item = series.runs[n]
        rows.append(
            (
                str(n),
                str(item.compactions),
                f"{item.compactions - item.cadence_compactions} / {item.cadence_compactions}",
                fmt_int(item.largest),
                fmt_int(item.supervisor_tokens),
                fmt_int(item.worker_tokens),
                fmt_int(item.summarizer_tokens),
                fmt_int(item.summarizer_total),
                f"{item.max_utilisation:.3f}",
                fmt_times(ratio(item.largest, first.largest)),
            )
        )
    config = series.config
    cadence = (
        "no cadence (every_n_steps=None)"
        if config.every is None
        else f"cadence every_n_steps={config.every} (also compacted before a worker's hop "
        f"when its completed hops are a multiple of {config.every}, if the history holds "
        f"more than the {config.keep} kept messages to fold in)"
    )
    note = (
        "Largest prompt: max tokens over every supervisor and worker model call of the run, "
        "from state['usage'] (count_tokens_approximately of the call's messages, tool schemas "
        "not counted), checked equal call by call to the scripted models' recorded calls. "
        "Compactions: before a worker's hop, one summarizer call each (checked), by reason "
        "(trigger / cadence). Summarizer: the largest input of its calls (usage role "
        "'summarizer', checked the same way); total: their inputs summed. Max "
        "utilisation: largest usage tokens / window over all calls, summarizer included; "
        f"window {results.window:,} tokens for every model, compaction trigger {TRIGGER} "
        f"({int(results.window * TRIGGER):,} tokens), "
        f"{cadence}, keep={config.keep} (recent messages kept verbatim, at most half the "
        f"trigger budget: {int(results.window * TRIGGER / 2):,} tokens)."
    )
    headers = (
        "hops",
        "compactions",
        "trigger / cadence",
        "largest prompt",
        "supervisor",
        "workers",
        "summarizer",
        "summarizer total",
        "max utilisation",
        f"vs {hops[0]} hops",
    )
    return TextTable(_title(series, "largest prompt per model call"), headers, tuple(rows), note)


def bytes_table(series: LongSeries) -> TextTable:
    """Checkpoint and store bytes per hop on Postgres, per hop count."""
    hops = series.hops
    first_total = series.runs[hops[0]].checkpoint_total
    rows = []
    previous: LongRun | None = None
    for n in hops:
        item = series.runs[n]
        total = item.checkpoint_total
        sizes = item.checkpoint_bytes or {}
        marginal = None
        if previous is not None and total is not None and previous.checkpoint_total is not None:
            marginal = (total - previous.checkpoint_total) / (n - previous.hops)
        rows.append(
            (
                str(n),
                fmt_int(per_hop(total, n)),
                *[fmt_int(per_hop(sizes.get(t), n)) for t in CHECKPOINT_TABLES],
                fmt_int(marginal),
                fmt_times(ratio(per_hop(total, n), per_hop(first_total, hops[0]))),
                fmt_int(per_hop(item.store_bytes, n)),
                fmt_ms(item.seconds * 1000 / n),
            )
        )
        previous = item
    note = (
        "Checkpoint bytes: sum(pg_column_size(row)) over the thread's rows in checkpoints, "
        "checkpoint_blobs and checkpoint_writes (all namespaces, so the agents' own "
        "checkpoints count), divided by N, as in the comparison. Marginal: the bytes the "
        "extra hops added over the previous (shorter) run, per extra hop. Store: the "
        "thread's rows in the store table (namespaces ('lgsp', 'outputs', thread, worker), "
        "one item per hop), divided by N. ms/hop: that one run, durability='sync' "
        "(informative; the comparison's timings are medians)."
    )
    headers = (
        "hops",
        "checkpoint B/hop",
        *CHECKPOINT_TABLES,
        "marginal B/hop",
        f"vs {hops[0]} hops",
        "store B/hop",
        "ms/hop",
    )
    return TextTable(_title(series, "Postgres bytes per hop"), headers, tuple(rows), note)


def reference_table(results: LongResults) -> TextTable:
    """Our largest prompt (each configuration) next to the reference's, at the same hop counts."""
    rows = []
    for n in results.hops:
        reference = results.reference.get(n)
        supervisor, workers = reference if reference is not None else (None, None)
        largest = None if reference is None else max(reference)
        row = [str(n), fmt_int(supervisor), fmt_int(workers), fmt_int(largest)]
        for series in results.series:
            ours = series.runs[n].largest
            row += [fmt_int(ours), fmt_ratio(ours, largest)]
        rows.append(tuple(row))
    headers = ["hops", "ref supervisor", "ref workers", "ref largest"]
    for series in results.series:
        headers += [f"ours {series.config.short}", f"{series.config.short}/ref"]
    legend = "; ".join(f"ours {s.config.short}: {s.config.label}" for s in results.series)
    note = (
        "ref: langgraph-supervisor with the same agent workers and no compaction (it has "
        "none), one in-memory run per hop count; its supervisor and workers all read the "
        f"shared message history. Same token count as ours (messages only). {legend}."
    )
    return TextTable(
        "Largest prompt per model call: ours (long runs) vs langgraph-supervisor",
        tuple(headers),
        tuple(rows),
        note,
    )


def prompt_target(series: LongSeries) -> Target:
    """Largest prompt per model call: the last hop count within 1.5x of the first."""
    hops = series.hops
    small, large = series.runs[hops[0]], series.runs[hops[-1]]
    plateau_from = next((n for n in hops if series.runs[n].compactions), None)
    detail = f"ours, largest supervisor/worker prompt at {hops[-1]} / at {hops[0]} hops"
    if plateau_from is not None and plateau_from not in (hops[0], hops[-1]):
        plateau = ratio(large.largest, series.runs[plateau_from].largest)
        detail += f"; {hops[-1]} / {plateau_from} hops (first with compactions): " + (
            fmt_times(plateau)
        )
    detail += (
        f"; compactions (= summarizer calls) at {hops[0]} / {hops[-1]} hops: "
        f"{small.compactions} / {large.compactions}"
    )
    return Target(
        f"largest prompt per model call flat ({series.config.label}): {hops[-1]} hops "
        f"within {FLAT_LIMIT}x of {hops[0]} hops",
        ratio(large.largest, small.largest),
        FLAT_LIMIT,
        detail,
    )


def bytes_target(series: LongSeries) -> Target:
    """Checkpoint bytes per hop: the last hop count within 1.5x of the first."""
    hops = series.hops
    small, large = series.runs[hops[0]], series.runs[hops[-1]]
    return Target(
        f"checkpoint bytes per hop on Postgres (external memory on; {series.config.label}) "
        f"flat: {hops[-1]} hops within {FLAT_LIMIT}x of {hops[0]} hops",
        ratio(
            per_hop(large.checkpoint_total, large.hops),
            per_hop(small.checkpoint_total, small.hops),
        ),
        FLAT_LIMIT,
        "ours, long run, checkpoint bytes / N (store bytes not included)",
    )


def sections(results: LongResults) -> list[Section]:
    """The long section on the results page: per configuration its largest-prompt and bytes
    sections, each with its flatness target, then the reference contrast."""
    out: list[Section] = []
    for series in results.series:
        prompts = prompt_table(results, series)
        prompt_goals = [prompt_target(series)]
        if not results.postgres:
            prompt_goals.append(bytes_target(series))
        out.append(
            Section(prompts.title, prompts, _method(series, prompts.note), tuple(prompt_goals))
        )
        if results.postgres:
            stored = bytes_table(series)
            out.append(
                Section(stored.title, stored, _method(series, stored.note), (bytes_target(series),))
            )
    if results.reference:
        contrast = reference_table(results)
        out.append(Section(contrast.title, contrast, contrast.note))
    return out


def _method(series: LongSeries, note: str) -> str:
    config = series.config
    every = "" if config.every is None else f", every_n_steps={config.every}"
    return (
        f"ours alone, the comparison's workload with all three workers as agent workers, "
        f"built with compaction=Compaction(summarizer=<scripted>, trigger={TRIGGER}{every}, "
        f"keep={config.keep}), one verified run per hop count. {note}"
    )


def measure_all(
    hops: Sequence[int],
    backend: Backend,
    agent: AgentFactory,
    window: int,
    configs: Sequence[LongConfig],
    reference_cap: int,
    progress: Console,
) -> LongResults:
    """Run every configuration at every hop count once on `backend`, then the reference
    up to `reference_cap` hops."""
    warm_up(backend, agent, window, configs[0])
    series = []
    for config in configs:
        runs: dict[int, LongRun] = {}
        for n in sorted(set(hops)):
            progress.print(f"{n:>3} hops, long run: ours, compaction + store ({config.label})")
            runs[n] = measure(n, backend, agent, window, config)
        series.append(LongSeries(config=config, runs=runs))
    reference: dict[int, tuple[int, int]] = {}
    for n in sorted(set(hops)):
        if n <= reference_cap:
            progress.print(f"{n:>3} hops, long run: langgraph-supervisor (largest prompt)")
            reference[n] = reference_largest(n, agent)
    return LongResults(
        series=tuple(series),
        reference=reference,
        window=window,
        postgres=backend.database_uri is not None,
    )

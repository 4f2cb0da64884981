"""Checkpoint storage per hop with tool-calling agent workers: ours against the floor.

The workload: N hops round-robin over three workers (researcher, analyst, writer); each
worker is a `create_agent` graph whose model (a `FunctionChatModel` that decides from
what it is shown) calls the `lookup` tool once per hop, which returns about 2,000
characters, and then answers in about 200 characters. Each graph runs once, on Postgres,
with `durability="sync"`:

- ours: `create_supervisor(workers, router=<round-robin>)` compiled with
  `open_checkpointer(uri)` (a finished hop's agent checkpoints are deleted once the hop
  is recorded);
- ours, kept: the same with `open_checkpointer(uri, keep_agent_checkpoints=True)`
  (LangGraph's behaviour: every agent checkpoint is kept);
- the floor: a bare LangGraph `StateGraph` loop running the same agents for the same
  hops (a routing node, one node per worker invoking its agent on the worker's own
  history plus the hop's prompt), on LangGraph's own `PostgresSaver`.

After every `--every` hops the thread's stored bytes are read (`sum(pg_column_size(row))`
over `checkpoints`, `checkpoint_blobs` and `checkpoint_writes`), split into the root
namespace (`""`) and every other (the agents' subgraphs), so each range of hops gets its
bytes per hop. Targets (issue 12): subgraph bytes at most 2x the root's; bytes per hop
over hops 41-60 within 1.3x of hops 1-20; flat to 300 hops (the last range within 1.3x
of the first).

    PYTHONPATH=$PWD LGSP_POSTGRES_URI=postgresql://postgres@127.0.0.1:5432/test \\
        .venv/bin/python bench/storage.py --hops 300 --snapshot-points 100,180,300 \\
        --markdown bench/RESULTS.md

`--snapshot-points` adds the snapshot-frequency comparison: ours built with the root's
delta channels copied every `LANGGRAPH_FREQUENCY` updates (LangGraph's default) and every
`state.DELTA_SNAPSHOT_FREQUENCY` (ours), each run to every point in turn, with the bytes
per hop by range and the time of each read of the thread (`get_state`, a short history, a new turn's
start, `delegation_metrics`, `audit_trail`) at each point.

`--markdown FILE` rewrites only this benchmark's part of the results page (between its
`<!-- bench/storage.py: ... -->` markers); `bench/compare.py --markdown` keeps it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path
from time import perf_counter
from typing import Annotated, Any, get_type_hints

import psycopg
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command
from rich.console import Console
from typing_extensions import TypedDict

from bench._env import run_lines
from bench._postgres import CHECKPOINT_TABLES, bench_database, server_version
from bench._report import (
    Section,
    Target,
    TextTable,
    fmt_int,
    fmt_ms,
    fmt_times,
    ratio,
    script_part,
    write_part,
)
from bench._workload import TASK, WORKER_NAMES, WORKERS, answer_text, instructions, schedule
from langgraph_supervisor_pro import FINISH, SupervisorView, Worker, create_supervisor
from langgraph_supervisor_pro import _state as state_module
from langgraph_supervisor_pro import open_checkpointer as open_pro_checkpointer
from langgraph_supervisor_pro._state import DELTA_SNAPSHOT_FREQUENCY, SupervisorState
from langgraph_supervisor_pro.observability import audit_trail, delegation_metrics
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall

SCRIPT = "bench/storage.py"
TOOL_CHARS = 2_000
"""Characters of the `lookup` tool's output, one call per hop."""
GRAPHS = ("ours", "ours, kept", "floor")


# ------------------------------------------------------------------------------ workload


def tool_output(worker: str, part: int) -> str:
    """What `lookup` returns for `worker`'s `part`: `TOOL_CHARS` characters of prose."""
    return answer_text(f"lookup:{worker}", part)[:TOOL_CHARS]


def _lookup_tool(worker: str) -> BaseTool:
    @tool
    def lookup(part: int) -> str:
        """Look up the material for one part of the report."""
        return tool_output(worker, part)

    return lookup


def _reply(worker: str) -> Callable[[ScriptedCall], str | AIMessage]:
    """The worker model: a tool call for the newest prompt, then an answer from its result."""

    def reply(call: ScriptedCall) -> str | AIMessage:
        last = call.messages[-1]
        part = sum(isinstance(m, HumanMessage) for m in call.messages)
        if isinstance(last, ToolMessage):
            return f"[{worker} part {part}] {str(last.content)[:180]}"
        rng = random.Random(f"{worker}:{part}:{len(call.messages)}")
        call_id = f"call_{rng.getrandbits(64):016x}"
        return AIMessage(
            content="", tool_calls=[{"name": "lookup", "args": {"part": part}, "id": call_id}]
        )

    return reply


def agent(worker: str) -> Pregel[Any, Any, Any, Any]:
    """A worker's `create_agent` graph: one `lookup` call per hop, then its answer."""
    return create_agent(
        FunctionChatModel(reply=_reply(worker)), tools=[_lookup_tool(worker)], name=worker
    )


def build_ours(
    hops: int,
    checkpointer: BaseCheckpointSaver[Any],
    *,
    turns: Callable[[], tuple[int, int]] | None = None,
) -> Pregel[Any, Any, Any, Any]:
    """Our supervisor, routed round-robin by code (no supervisor model).

    `turns()` says (hops run before this turn, hops the thread stops at for now); the
    default runs all `hops` in one turn.
    """
    plan = schedule(hops)
    bounds = turns or (lambda: (0, hops))

    def router(view: SupervisorView) -> str:
        before, stop = bounds()
        done = before + len(view.ledger)  # `view.ledger` is this turn's
        return plan[done] if done < min(stop, hops) else FINISH

    workers = [Worker(name=n, description=d, agent=agent(n)) for n, d in WORKERS]
    builder = create_supervisor(workers, router=router, max_steps=hops)
    return builder.compile(checkpointer=checkpointer)


def _merge(
    left: Mapping[str, list[BaseMessage]], right: Mapping[str, list[BaseMessage]]
) -> dict[str, list[BaseMessage]]:
    return {**left, **right}


class FloorState(TypedDict, total=False):
    """The floor loop's state: the input, the hop counter, each worker's history."""

    messages: list[BaseMessage]
    hop: int
    slots: Annotated[dict[str, list[BaseMessage]], _merge]


def build_floor(hops: int, checkpointer: BaseCheckpointSaver[Any]) -> Pregel[Any, Any, Any, Any]:
    """A bare LangGraph loop running the same agents for the same hops."""
    plan = schedule(hops)
    agents = {name: agent(name) for name in WORKER_NAMES}

    def route(state: FloorState) -> Command[str]:
        hop = state.get("hop", 0)
        return Command(goto=plan[hop] if hop < hops else END)

    builder = StateGraph(FloorState)
    builder.add_node("route", route, destinations=(*WORKER_NAMES, END))

    def add_worker(name: str) -> None:
        def work(state: FloorState) -> dict[str, Any]:
            hop = state.get("hop", 0)
            history = state.get("slots", {}).get(name, [])
            sent = [*history, HumanMessage(content=instructions(hop + 1))]
            out = agents[name].invoke({"messages": sent})
            return {"hop": hop + 1, "slots": {name: list(out["messages"])}}

        builder.add_node(name, work)
        builder.add_edge(name, "route")

    for name in WORKER_NAMES:
        add_worker(name)
    builder.add_edge(START, "route")
    return builder.compile(checkpointer=checkpointer)


# --------------------------------------------------------------------------- measuring


def namespace_bytes(database_uri: str, thread_id: str) -> tuple[int, int]:
    """Stored bytes of one thread: (root namespace, every other namespace)."""
    root = other = 0
    with psycopg.connect(database_uri) as conn:
        for table in CHECKPOINT_TABLES:
            row = conn.execute(
                "SELECT coalesce(sum(pg_column_size(t.*)) FILTER (WHERE checkpoint_ns = ''), 0),"
                " coalesce(sum(pg_column_size(t.*)) FILTER (WHERE checkpoint_ns <> ''), 0)"
                f" FROM {table} AS t WHERE thread_id = %s",  # one of the saver's tables
                (thread_id,),
            ).fetchone()
            if row is not None:
                root, other = root + int(row[0]), other + int(row[1])
    return root, other


@dataclass(frozen=True)
class Sample:
    """A thread's stored bytes after `hops` hops."""

    hops: int
    root: int
    subgraphs: int

    @property
    def total(self) -> int:
        """Both."""
        return self.root + self.subgraphs


@dataclass(frozen=True)
class Series:
    """One graph's samples, every `every` hops from 0 to its hop count."""

    graph: str
    samples: tuple[Sample, ...]
    seconds: float
    """Wall-clock of the run, the sampling queries left out."""

    def per_hop(self, start: int, end: int) -> tuple[float, float, float]:
        """(root, subgraph, total) bytes per hop over hops `start + 1` to `end`."""
        by_hops = {s.hops: s for s in self.samples}
        a, b = by_hops[start], by_hops[end]
        n = end - start
        return (b.root - a.root) / n, (b.subgraphs - a.subgraphs) / n, (b.total - a.total) / n

    @property
    def last(self) -> Sample:
        """The sample after the last hop."""
        return self.samples[-1]


@dataclass(frozen=True)
class StorageFigures:
    """Every graph's series, and where the server came from."""

    hops: int
    every: int
    series: dict[str, Series]
    postgres: str
    snapshots: SnapshotFigures | None = None
    """The snapshot-frequency comparison, when asked for (`--snapshot-points`)."""


def _hops_done(event: Mapping[str, Any]) -> int:
    """How many worker hops one `stream_mode="updates"` event finished (0 or 1)."""
    return sum(1 for node in event if node in WORKER_NAMES)


def stream_sampled(
    app: Pregel[Any, Any, Any, Any],
    database_uri: str,
    config: RunnableConfig,
    payload: Mapping[str, Any],
    samples: list[Sample],
    *,
    every: int,
    shift: tuple[int, int] = (0, 0),
) -> float:
    """Run one turn of `app`, appending a sample to `samples` every `every` hops.

    A sample is read at the first event after the boundary hop: with `durability="sync"`
    that step started only once the hop's checkpoint was stored. `shift` (root,
    subgraph bytes) is taken off every sample (bytes written by something other than
    the hops). Returns the turn's wall-clock seconds, the sampling queries left out.
    """
    thread_id = str(config["configurable"]["thread_id"])

    def sample(done: int) -> Sample:
        root, subgraphs = namespace_bytes(database_uri, thread_id)
        return Sample(done, root - shift[0], subgraphs - shift[1])

    done = samples[-1].hops
    due = False
    sampling = 0.0
    start = perf_counter()
    for event in app.stream(payload, config, stream_mode="updates", durability="sync"):
        if due:
            before = perf_counter()
            samples.append(sample(done))
            sampling += perf_counter() - before
            due = False
        done += _hops_done(event)
        due = done % every == 0 and done > samples[-1].hops
    seconds = perf_counter() - start - sampling
    if due or samples[-1].hops != done:
        samples.append(sample(done))
    return seconds


def run_series(
    graph_name: str,
    app: Pregel[Any, Any, Any, Any],
    database_uri: str,
    *,
    hops: int,
    every: int,
) -> Series:
    """Run `app` once for `hops` hops, sampling the thread's bytes every `every` hops."""
    config: RunnableConfig = {
        "configurable": {"thread_id": str(uuid.uuid4())},
        "recursion_limit": 4 * hops + 20,
    }
    samples = [Sample(0, 0, 0)]
    payload = {"messages": [HumanMessage(content=TASK)]}
    seconds = stream_sampled(app, database_uri, config, payload, samples, every=every)
    if samples[-1].hops != hops:
        raise RuntimeError(f"{graph_name}: {samples[-1].hops} hops ran, expected {hops}")
    return Series(graph=graph_name, samples=tuple(samples), seconds=seconds)


@contextmanager
def _saver(graph: str, uri: str) -> Iterator[BaseCheckpointSaver[Any]]:
    if graph == "floor":
        with PostgresSaver.from_conn_string(uri) as saver:
            saver.setup()
            yield saver
        return
    with open_pro_checkpointer(uri, keep_agent_checkpoints=graph == "ours, kept") as saver:
        yield saver


def measure(*, hops: int = 60, every: int = 20, graphs: Sequence[str] = GRAPHS) -> StorageFigures:
    """Run each graph once on a fresh Postgres database and sample its bytes."""
    if hops < every or hops % every:
        raise ValueError(f"--hops ({hops}) must be a multiple of --every ({every})")
    series: dict[str, Series] = {}
    with bench_database() as (uri, source):
        for graph in graphs:
            with _saver(graph, uri) as saver:
                build = build_floor if graph == "floor" else build_ours
                series[graph] = run_series(graph, build(hops, saver), uri, hops=hops, every=every)
        postgres = f"{source}, PostgreSQL {server_version(uri).split()[0]}, fresh database"
    return StorageFigures(hops=hops, every=every, series=series, postgres=postgres)


# ------------------------------------------------------------------- snapshot frequency

LANGGRAPH_FREQUENCY = 100
"""LangGraph's default snapshot frequency (ours before), weighed against
`state.DELTA_SNAPSHOT_FREQUENCY`."""
LOADS = ("get_state", "history of 5", "new turn", "delegation_metrics", "audit_trail")
"""The reads of a thread timed at each point, in the order shown."""


@contextmanager
def snapshot_frequency(frequency: int) -> Iterator[None]:
    """Build graphs whose root delta channels are copied every `frequency` updates.

    `SupervisorState`'s annotations are evaluated whenever a graph is built (the module
    defers them), each reading `state.DELTA_SNAPSHOT_FREQUENCY`; it is set for the
    duration of the block and restored after. A graph built inside keeps the frequency
    (`measure_snapshots` checks its channels).
    """
    if frequency <= 0:
        raise ValueError(f"snapshot frequency must be a positive int, got {frequency}")
    before = state_module.DELTA_SNAPSHOT_FREQUENCY
    state_module.DELTA_SNAPSHOT_FREQUENCY = frequency
    try:
        yield
    finally:
        state_module.DELTA_SNAPSHOT_FREQUENCY = before


def delta_frequencies(app: Pregel[Any, Any, Any, Any]) -> set[int]:
    """The snapshot frequencies of a compiled graph's delta channels."""
    return {c.snapshot_frequency for c in app.channels.values() if isinstance(c, DeltaChannel)}


@dataclass(frozen=True)
class Replay:
    """What loading a thread's latest root checkpoint reads for its delta channels."""

    writes: int
    """Delta writes replayed, every delta channel together."""
    seeds: int
    """Delta channels that start from a stored copy."""
    nbytes: int
    """Serialized bytes of the copies and the writes."""


def replay_read(saver: BaseCheckpointSaver[Any], config: RunnableConfig) -> Replay:
    """The delta history `get_state` replays for the thread's latest root checkpoint."""
    latest = saver.get_tuple(config)
    if latest is None:
        raise LookupError(f"no checkpoint for {config}")
    names = [
        name
        for name, hint in get_type_hints(SupervisorState, include_extras=True).items()
        if any(isinstance(m, DeltaChannel) for m in getattr(hint, "__metadata__", ()))
    ]
    histories = saver.get_delta_channel_history(config=latest.config, channels=names)
    writes = seeds = nbytes = 0
    for history in histories.values():
        writes += len(history["writes"])
        for _, _, value in history["writes"]:
            nbytes += len(saver.serde.dumps_typed(value)[1])
        if "seed" in history:
            seeds += 1
            nbytes += len(saver.serde.dumps_typed(history["seed"])[1])
    return Replay(writes=writes, seeds=seeds, nbytes=nbytes)


@dataclass
class SnapshotRun:
    """One thread of ours built with one snapshot frequency, on its own database."""

    frequency: int
    app: Pregel[Any, Any, Any, Any]
    saver: BaseCheckpointSaver[Any]
    uri: str
    config: RunnableConfig
    target: list[int]
    """[hops before the current turn, hops the thread stops at]."""
    samples: list[Sample]
    shift: tuple[int, int] = (0, 0)
    loads: dict[int, dict[str, list[float]]] = field(default_factory=dict)
    replays: dict[int, Replay] = field(default_factory=dict)

    def advance(self, point: int, every: int) -> None:
        """Run a turn of hops until the ledger holds `point` hops, sampling its bytes."""
        self.target[:] = [self.samples[-1].hops, point]
        text = TASK if self.samples[-1].hops == 0 else f"Carry on to part {point}."
        payload = {"messages": [HumanMessage(content=text)]}
        stream_sampled(
            self.app, self.uri, self.config, payload, self.samples, every=every, shift=self.shift
        )
        if self.samples[-1].hops != point:
            raise RuntimeError(f"{self.samples[-1].hops} hops ran, expected {point}")
        self.replays[point] = replay_read(self.saver, self.config)

    def time_loads(self, point: int) -> None:
        """Time each read of the thread once (`LOADS`)."""
        self.target[:] = [point, point]
        thread = str(self.config["configurable"]["thread_id"])
        timed: dict[str, Callable[[], object]] = {
            "get_state": lambda: self.app.get_state(self.config),
            "history of 5": lambda: list(self.app.get_state_history(self.config, limit=5)),
            "new turn": lambda: self._finishing_turn(point),
            "delegation_metrics": lambda: delegation_metrics(self.saver),
            "audit_trail": lambda: audit_trail(self.saver, thread),
        }
        cells = self.loads.setdefault(point, {name: [] for name in LOADS})
        for name in LOADS:
            start = perf_counter()
            timed[name]()
            cells[name].append((perf_counter() - start) * 1000)

    def _finishing_turn(self, point: int) -> None:
        final = self.app.invoke(
            {"messages": [HumanMessage(content="Status?")]}, self.config, durability="sync"
        )
        if len(final["ledger"]) != point or final["status"] != "done":
            raise RuntimeError(f"a finishing turn ran hops: {len(final['ledger'])} != {point}")

    def settle(self) -> None:
        """Leave the bytes the timed reads wrote (finishing turns) out of later samples."""
        thread = str(self.config["configurable"]["thread_id"])
        root, subgraphs = namespace_bytes(self.uri, thread)
        last = self.samples[-1]
        self.shift = (root - last.root, subgraphs - last.subgraphs)


@dataclass(frozen=True)
class SnapshotFigures:
    """Bytes per hop and load costs of ours at each snapshot frequency."""

    points: tuple[int, ...]
    every: int
    repeat: int
    series: dict[int, Series]
    loads: dict[int, dict[int, dict[str, float]]]
    """Median ms by frequency, point and read."""
    replays: dict[int, dict[int, Replay]]


def _reader(cell: list[int]) -> Callable[[], tuple[int, int]]:
    return lambda: (cell[0], cell[1])


def measure_snapshots(
    *,
    points: Sequence[int] = (100, 300),
    every: int = 20,
    frequencies: Sequence[int] = (LANGGRAPH_FREQUENCY, DELTA_SNAPSHOT_FREQUENCY),
    repeat: int = 5,
) -> SnapshotFigures:
    """Run ours once per frequency to each point in turn, timing the thread's reads there.

    Each frequency's thread has its own fresh database (`delegation_metrics` reads every
    thread of one). At each point the threads' reads are timed `repeat` times, the
    frequencies interleaved, so a busy moment of the shared machine hits both.
    """
    if not points or any(p % every for p in points) or list(points) != sorted(set(points)):
        raise ValueError(f"--snapshot-points {list(points)}: increasing multiples of --every")
    if repeat < 1:
        raise ValueError(f"--snapshot-repeat must be at least 1, got {repeat}")
    with ExitStack() as stack:
        runs: list[SnapshotRun] = []
        for frequency in frequencies:
            uri, _ = stack.enter_context(bench_database())
            saver = stack.enter_context(open_pro_checkpointer(uri))
            target = [0, points[0]]
            with snapshot_frequency(frequency):
                app = build_ours(points[-1], saver, turns=_reader(target))
            if delta_frequencies(app) != {frequency}:
                raise RuntimeError(f"built with {delta_frequencies(app)}, not {frequency}")
            config: RunnableConfig = {
                "configurable": {"thread_id": str(uuid.uuid4())},
                "recursion_limit": 4 * points[-1] + 20,
            }
            runs.append(SnapshotRun(frequency, app, saver, uri, config, target, [Sample(0, 0, 0)]))
        for point in points:
            for run in runs:
                run.advance(point, every)
            for _ in range(repeat):
                for run in runs:
                    run.time_loads(point)
            for run in runs:
                run.settle()
        return SnapshotFigures(
            points=tuple(points),
            every=every,
            repeat=repeat,
            series={
                r.frequency: Series(f"every {r.frequency}", tuple(r.samples), 0.0) for r in runs
            },
            loads={
                r.frequency: {
                    p: {name: statistics.median(ms) for name, ms in cells.items()}
                    for p, cells in r.loads.items()
                }
                for r in runs
            },
            replays={r.frequency: dict(r.replays) for r in runs},
        )


# ----------------------------------------------------------------------------- reporting


def sections(figures: StorageFigures) -> list[Section]:
    """The storage section of the results page: bytes per hop by range, per graph."""
    every = figures.every
    rows = []
    for start in range(0, figures.hops, every):
        end = start + every
        row = [f"{start + 1}-{end}"]
        for graph in figures.series.values():
            root, sub, total = graph.per_hop(start, end)
            row += [fmt_int(root), fmt_int(sub), fmt_int(total)]
        rows.append(tuple(row))
    headers = ["hops"]
    for name in figures.series:
        headers += [f"{name}: root", f"{name}: subgraphs", f"{name}: total"]
    end_rows = []
    for name, graph in figures.series.items():
        last = graph.last
        end_rows.append(
            (
                name,
                fmt_int(last.root),
                fmt_int(last.subgraphs),
                fmt_times(ratio(last.subgraphs, last.root)),
                fmt_int(last.total / figures.hops),
                fmt_ms(graph.seconds * 1000 / figures.hops),
            )
        )
    ranges = TextTable("Stored bytes per hop, by range of hops", tuple(headers), tuple(rows))
    totals = TextTable(
        f"Stored bytes after {figures.hops} hops",
        ("graph", "root", "subgraphs", "subgraphs / root", "total per hop", "ms per hop"),
        tuple(end_rows),
    )
    ours = figures.series.get("ours")
    targets: list[Target] = []
    if ours is not None:
        first = ours.per_hop(0, every)[2]
        targets.append(
            Target(
                "subgraph bytes at most 2x the root namespace's (ours)",
                ratio(ours.last.subgraphs, ours.last.root),
                2.0,
                f"after {figures.hops} hops",
            )
        )
        if figures.hops >= 60:
            targets.append(
                Target(
                    "bytes per hop over hops 41-60 within 1.3x of hops 1-20 (ours)",
                    ratio(ours.per_hop(40, 60)[2], ours.per_hop(0, 20)[2]),
                    1.3,
                    "total bytes per hop, both ranges",
                )
            )
        tail = figures.hops - every
        targets.append(
            Target(
                f"flat to {figures.hops} hops: hops {tail + 1}-{figures.hops} within 1.3x of "
                f"hops 1-{every} (ours)",
                ratio(ours.per_hop(tail, figures.hops)[2], first),
                1.3,
                "total bytes per hop, both ranges",
            )
        )
    method = (
        "N hops round-robin over three `create_agent` workers; each hop's model calls the "
        f"`lookup` tool once ({TOOL_CHARS:,} characters of output) and answers in about 200 "
        "characters; our supervisor is routed by code. One run per graph on a fresh Postgres "
        "database, `durability='sync'`; every "
        f"{every} hops the thread's stored bytes (`sum(pg_column_size(row))` over checkpoints, "
        "checkpoint_blobs and checkpoint_writes) are read, split into the root namespace and "
        "every other (the agents' subgraphs); a range's figure is the growth over the range "
        "divided by its hops. ours: `open_checkpointer(uri)`; ours, kept: "
        "`open_checkpointer(uri, keep_agent_checkpoints=True)` (every agent checkpoint kept, as "
        "LangGraph does); floor: a bare LangGraph loop running the same agents on LangGraph's "
        "`PostgresSaver` (its state keeps each worker's history in a plain channel). Ours "
        "copies each root `DeltaChannel` whole every "
        f"{DELTA_SNAPSHOT_FREQUENCY:,} updates (`state.DELTA_SNAPSHOT_FREQUENCY`, one per "
        "hop); the copy of `workers` holds every worker's transcript, so the range holding "
        "it grows with the hops in this workload, which compacts nothing (the snapshot "
        "sections below weigh LangGraph's default, a copy every "
        f"{LANGGRAPH_FREQUENCY:,})."
    )
    table = TextTable(ranges.title, ranges.headers, ranges.rows)
    return [
        Section("Storage: bytes per hop with tool-calling agents", table, method, tuple(targets)),
        Section(
            f"Storage: what is kept after {figures.hops} hops",
            totals,
            "the last sample of each graph (after the last hop); ms per hop is the run's "
            "wall-clock (sampling queries left out) divided by N, one run, for orientation "
            "only (the machine is shared).",
        ),
    ]


def snapshot_sections(figures: SnapshotFigures) -> list[Section]:
    """The snapshot-frequency sections: bytes per hop by range, and load costs."""
    every, frequencies = figures.every, list(figures.series)
    rows = []
    for start in range(0, figures.points[-1], every):
        row = [f"{start + 1}-{start + every}"]
        for frequency in frequencies:
            root, _, total = figures.series[frequency].per_hop(start, start + every)
            row += [fmt_int(root), fmt_int(total)]
        rows.append(tuple(row))
    headers = ["hops"]
    for frequency in frequencies:
        headers += [f"every {frequency:,}: root", f"every {frequency:,}: total"]
    base, other = frequencies[0], frequencies[-1]
    load_rows = []
    worst: float | None = None
    for point in figures.points:
        for name in LOADS:
            a, b = figures.loads[base][point][name], figures.loads[other][point][name]
            load_rows.append((f"{point}: {name}", fmt_ms(a), fmt_ms(b), fmt_times(ratio(b, a))))
            if point == figures.points[-1]:
                worst = max(worst or 0.0, ratio(b, a) or 0.0)
        ra, rb = figures.replays[base][point], figures.replays[other][point]
        load_rows.append(
            (
                f"{point}: replayed (writes / copies / bytes)",
                f"{ra.writes:,} / {ra.seeds} / {ra.nbytes:,}",
                f"{rb.writes:,} / {rb.seeds} / {rb.nbytes:,}",
                fmt_times(ratio(rb.nbytes, ra.nbytes)),
            )
        )
    last = figures.points[-1]
    tail = ratio(
        figures.series[other].per_hop(last - every, last)[2],
        figures.series[other].per_hop(0, every)[2],
    )
    targets = (
        Target(
            f"copy every {other:,}: hops {last - every + 1}-{last} within 1.3x of hops 1-{every}",
            tail,
            1.3,
            "total bytes per hop, both ranges",
        ),
        Target(
            f"copy every {other:,}: loads at {last} hops within 1.3x of every {base:,}",
            worst,
            1.3,
            f"the worst of the {len(LOADS)} reads, median ms",
        ),
    )
    shown = ", ".join(map(str, figures.points))
    method = (
        "ours (`open_checkpointer(uri)`, the storage workload) built once per snapshot "
        "frequency (`snapshot_frequency` of every root `DeltaChannel`: LangGraph's default, "
        f"{LANGGRAPH_FREQUENCY:,}, and `state.py`'s `DELTA_SNAPSHOT_FREQUENCY`, "
        f"{DELTA_SNAPSHOT_FREQUENCY:,}), each thread on its own "
        f"fresh database; a turn runs hops up to each point ({shown}); "
        f"there each read of the thread is timed {figures.repeat} times, the frequencies "
        "interleaved: `get_state`, `get_state_history(limit=5)`, a new turn (`invoke` of a "
        "user message the router answers by finishing: load, one supervisor step, store), "
        "`delegation_metrics(saver)` and `audit_trail(saver, thread)`; median ms. replayed: "
        "what the latest root checkpoint's `get_delta_channel_history` returns for the delta "
        "channels (writes, channels seeded from a stored copy, serialized bytes of both). The "
        "finishing turns' own bytes are left out of later ranges."
    )
    return [
        Section(
            "Storage: root delta copies, bytes per hop by snapshot frequency",
            TextTable("Stored bytes per hop, by range", tuple(headers), tuple(rows)),
            method,
            targets[:1],
        ),
        Section(
            "Storage: loading the thread, by snapshot frequency",
            TextTable(
                "ms to read the thread",
                ("hops: read", f"every {base:,}", f"every {other:,}", f"{other:,} / {base:,}"),
                tuple(load_rows),
            ),
            "the same threads, as above.",
            targets[1:],
        ),
    ]


def page_part(figures: StorageFigures, markdown: Path | None) -> str:
    """This benchmark's part of the results page."""
    parts = sections(figures)
    if figures.snapshots is not None:
        parts += snapshot_sections(figures.snapshots)
    header = [
        *run_lines(SCRIPT, markdown),
        f"packages: langgraph {version('langgraph')}, langgraph-checkpoint-postgres "
        f"{version('langgraph-checkpoint-postgres')}, langchain {version('langchain')}",
        f"postgres: {figures.postgres}",
    ]
    return script_part(
        "Storage with tool-calling agents (bench/storage.py)",
        SCRIPT,
        header,
        parts,
        subsections=True,
    )


def _points(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: hop counts separated by commas") from None


def main(argv: Sequence[str] | None = None) -> None:
    """Measure, print the storage tables, and write the results page's part when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--hops", type=int, default=60)
    parser.add_argument("--every", type=int, default=20)
    parser.add_argument(
        "--graph", action="append", choices=GRAPHS, help="one graph (repeatable); default all"
    )
    parser.add_argument(
        "--snapshot-points",
        type=_points,
        default=(),
        help="hop counts (e.g. 100,300) at which to compare root delta snapshot frequencies",
    )
    parser.add_argument("--snapshot-repeat", type=int, default=5)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args(argv)
    figures = measure(hops=args.hops, every=args.every, graphs=args.graph or GRAPHS)
    parts = sections(figures)
    if args.snapshot_points:
        snapshots = measure_snapshots(
            points=args.snapshot_points, every=args.every, repeat=args.snapshot_repeat
        )
        figures = replace(figures, snapshots=snapshots)
        parts += snapshot_sections(snapshots)
    console = Console(width=200)
    for section in parts:
        console.print(section.table.to_rich())
        for target in section.targets:
            shown = "-" if target.measured is None else f"{target.measured:.3f}"
            console.print(f"{target.verdict}: {target.statement}: {shown}")
    if args.markdown is not None:
        write_part(args.markdown, SCRIPT, page_part(figures, args.markdown))
        console.print(f"Storage section written to {args.markdown}")


if __name__ == "__main__":
    main()

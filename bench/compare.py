"""Benchmark: langgraph-supervisor-pro vs langgraph-supervisor, then ours on long runs.

Two sections (`--section all`, the default, runs both; `compare` or `long` runs one).

**compare**: the workload (see `bench/_workload.py`): N hops round-robin over three
workers (researcher, analyst, writer), each answering about 2,000 characters, then
FINISH. Every model is a `ScriptedChatModel` (no network). Three graphs run it:

- `reference`: langgraph-supervisor 0.0.31 `create_supervisor` with prebuilt agent
  workers and `output_mode="last_message"`;
- `ours (a)`: our `create_supervisor` with the same kind of agent workers (like for
  like; the targets are judged on this one);
- `ours (b)`: our `create_supervisor` with plain function workers;
- `floor`: a bare LangGraph `StateGraph` loop (a routing node, the same agent workers,
  no supervisor logic, same hops): timed only, in the ms-per-hop table.

For N in --hops it prints, side by side:

- supervisor input tokens per decision: first, last and total over the N+1 calls the
  supervisor model received (`count_tokens_approximately` of each call's messages,
  system prompt included; the constant tool schemas are reported separately);
- ms per hop: one run's wall-clock / N, median of --repeat runs, in memory
  (`InMemorySaver`, default durability) and on Postgres (`durability="sync"`), the floor
  included;
- checkpoint bytes per hop on Postgres: the stored size of one fresh thread's rows in
  `checkpoints`, `checkpoint_blobs` and `checkpoint_writes`, divided by N.

**long** (see `bench/_long.py`): ours alone, the same workload with agent workers, with
`compaction=Compaction(..., max_context_tokens=--long-window, trigger=0.7,
every_n_steps=--long-every, keep=--long-keep)` and the graph compiled with
`open_checkpointer(uri)` and `open_store(uri)`, for N in --long-hops (6 to 96): the
largest prompt of any model call, compactions, utilisation, checkpoint and store bytes
per hop; and, for contrast, the reference's largest prompt at the same hop counts (up
to --long-reference-cap hops). Without --long-every it runs two configurations, each
with its own tables and targets: trigger only (`keep=--long-keep`, 6 by default, as the
package) and trigger + cadence (`every_n_steps=1, keep=2`: a worker's history is also
compacted before each of its hops once there is something older than its last visit to
fold in).

Every run is verified (N ledger entries / N worker answers in round-robin order, N+1
supervisor calls, one worker model call per hop; in the long runs also the usage log
against the models' calls, the compactions and the store); the benchmark aborts if one
is not.

`--markdown FILE` writes the results page (`bench/RESULTS.md` is that page): the command,
the commit measured, the machine and package versions, then per section how it is
measured, its table and its targets, judged in code. The trees section at the end of the
page is `bench/trees.py`'s (between its `<!-- bench/trees.py: ... -->` markers); it is
kept as it was.

Postgres: `$LGSP_POSTGRES_URI` if set (a dedicated database is created there and dropped
at the end), else an embedded server from `pgserver`; `--no-postgres` skips it (the long
runs then use an in-memory checkpointer and store, without the bytes columns).

Run (from the repository root); this is also the command that regenerates
`bench/RESULTS.md`:

    PYTHONPATH=$PWD LGSP_POSTGRES_URI=postgresql://postgres@127.0.0.1:5432/test \\
        .venv/bin/python bench/compare.py --repeat 1 --markdown bench/RESULTS.md

Exit code: 0 (targets missed included), 1 if a run did not do the scripted work, 2 on
bad arguments.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import uuid
import warnings
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

# Run as a script (`python bench/compare.py`): make the repository root importable, for
# `bench._workload` and the test suite's Postgres helpers.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from rich.console import Console

from bench import _long
from bench._env import run_lines
from bench._postgres import (
    CHECKPOINT_TABLES,
    bench_database,
    server_version,
    thread_bytes,
)
from bench._report import (
    Section,
    Target,
    TextTable,
    fmt_int,
    fmt_ms,
    fmt_ratio,
    keep_blocks,
    median,
    page_markdown,
    per_hop,
    ratio,
    targets_table,
)
from bench._workload import (
    AGENT_FACTORIES,
    ANSWER_CHARS,
    Prepared,
    RunResult,
    WorkloadError,
    build_floor,
    build_pro,
    build_reference,
    pro_tool_schema_tokens,
    reference_tool_schema_tokens,
    run,
)
from langgraph_supervisor_pro import open_checkpointer, open_store

REFERENCE = "reference"
OURS_AGENT = "ours_agent"
OURS_FUNCTION = "ours_function"
FLOOR = "floor"
ANCHOR_HOPS = 12
"""The hop count the ratio targets are judged at."""
FLAT_FROM, FLAT_TO = 6, 48
"""Per-decision tokens must stay flat from this many hops to that many."""
WARM_UP_HOPS = 3
SECTIONS = ("all", "compare", "long")


@dataclass(frozen=True)
class Side:
    """One graph under test."""

    key: str
    label: str
    short: str
    """The column prefix in the tables."""
    build: Callable[[int, BaseCheckpointSaver[Any]], Prepared]


@dataclass
class Cell:
    """What one side measured at one hop count."""

    tokens: tuple[int, ...] = ()
    memory_ms: list[float] = field(default_factory=list)
    """ms per hop of each in-memory run."""
    postgres_ms: list[float] = field(default_factory=list)
    """ms per hop of each Postgres run."""
    postgres_bytes: dict[str, int] | None = None
    """Stored bytes per checkpoint table of the first Postgres run's thread."""

    def record_tokens(self, tokens: tuple[int, ...], side: str, hops: int) -> None:
        """Keep the per-decision tokens; every repetition must see the same prompts."""
        if self.tokens and tokens != self.tokens:
            raise WorkloadError(
                f"{side}, {hops} hops: the supervisor's prompts changed between runs"
            )
        self.tokens = tokens


Results = dict[tuple[str, int], Cell]


@dataclass(frozen=True)
class Settings:
    """The command line, parsed."""

    hops: tuple[int, ...]
    repeat: int
    large_hops: int
    large_repeat: int
    postgres: bool
    agent: str
    markdown: Path | None
    section: str = "all"
    long_hops: tuple[int, ...] = _long.LONG_HOPS
    long_window: int = _long.DEFAULT_WINDOW
    long_every: int | None = None
    long_keep: int = _long.DEFAULT_KEEP
    long_reference_cap: int = max(_long.LONG_HOPS)

    @property
    def compare(self) -> bool:
        """Whether the comparison section runs."""
        return self.section in ("all", "compare")

    @property
    def long(self) -> bool:
        """Whether the long-run section runs."""
        return self.section in ("all", "long")

    @property
    def long_configs(self) -> tuple[_long.LongConfig, ...]:
        """The long runs' compaction configurations."""
        return _long.long_configs(self.long_every, self.long_keep)

    def repeats(self, hops: int) -> int:
        """Repetitions at `hops` hops (fewer for large N when asked)."""
        return self.large_repeat if hops >= self.large_hops else self.repeat


# ------------------------------------------------------------------------------ the CLI


def parse_args(argv: Sequence[str] | None) -> Settings:
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        prog="bench/compare.py",
        description=(
            "langgraph-supervisor-pro vs langgraph-supervisor on a scripted workload, then "
            "ours on long runs with compaction and external memory."
        ),
    )
    parser.add_argument(
        "--section",
        choices=SECTIONS,
        default="all",
        help="compare: the side-by-side comparison; long: the long runs; all: both (default)",
    )
    parser.add_argument(
        "--hops",
        type=int,
        nargs="+",
        default=[6, 12, 24, 48],
        metavar="N",
        help="hop counts of the comparison",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument(
        "--large-repeat",
        type=int,
        default=None,
        help="runs per figure from --large-hops hops on (default: --repeat)",
    )
    parser.add_argument("--large-hops", type=int, default=48, metavar="N")
    parser.add_argument("--no-postgres", action="store_true", help="skip the Postgres columns")
    parser.add_argument(
        "--agent",
        choices=sorted(AGENT_FACTORIES),
        default="create_react_agent",
        help="how the agent workers are built, on both sides",
    )
    parser.add_argument(
        "--long-hops",
        type=int,
        nargs="+",
        default=list(_long.LONG_HOPS),
        metavar="N",
        help="hop counts of the long runs (flatness is judged on the last vs the first)",
    )
    parser.add_argument(
        "--long-window",
        type=int,
        default=_long.DEFAULT_WINDOW,
        metavar="TOKENS",
        help="the long runs' input window (Compaction.max_context_tokens)",
    )
    parser.add_argument(
        "--long-every",
        type=int,
        default=None,
        metavar="N",
        help=(
            "the long runs' cadence (Compaction.every_n_steps); default: two configurations, "
            f"trigger only (keep=--long-keep) and trigger + cadence (every_n_steps="
            f"{_long.CADENCE_EVERY}, keep={_long.CADENCE_KEEP})"
        ),
    )
    parser.add_argument(
        "--long-keep",
        type=int,
        default=_long.DEFAULT_KEEP,
        metavar="K",
        help=(
            "recent messages kept verbatim (Compaction.keep) in the trigger-only runs, or "
            f"with --long-every in its runs (default: the package's, {_long.DEFAULT_KEEP})"
        ),
    )
    parser.add_argument(
        "--long-reference-cap",
        type=int,
        default=max(_long.LONG_HOPS),
        metavar="N",
        help="run the reference's largest-prompt contrast up to this many hops (0: skip)",
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        metavar="FILE",
        help="also write the results page there (bench/RESULTS.md is that page)",
    )
    args = parser.parse_args(argv)
    if any(n < 1 for n in (*args.hops, *args.long_hops)) or args.repeat < 1:
        parser.error("--hops, --long-hops and --repeat take integers >= 1")
    if len(set(args.long_hops)) < 2:
        parser.error("--long-hops takes at least two different hop counts")
    if args.long_window < 1 or args.long_reference_cap < 0:
        parser.error("--long-window takes an integer >= 1, --long-reference-cap one >= 0")
    if (args.long_every is not None and args.long_every < 1) or args.long_keep < 1:
        parser.error("--long-every and --long-keep take integers >= 1")
    large_repeat = args.repeat if args.large_repeat is None else args.large_repeat
    if large_repeat < 1:
        parser.error("--large-repeat takes an integer >= 1")
    return Settings(
        hops=tuple(sorted(set(args.hops))),
        repeat=args.repeat,
        large_hops=args.large_hops,
        large_repeat=large_repeat,
        postgres=not args.no_postgres,
        agent=args.agent,
        markdown=args.markdown,
        section=args.section,
        long_hops=tuple(sorted(set(args.long_hops))),
        long_window=args.long_window,
        long_every=args.long_every,
        long_keep=args.long_keep,
        long_reference_cap=args.long_reference_cap,
    )


def make_sides(agent: str) -> list[Side]:
    """The three graphs, in table order."""
    factory = AGENT_FACTORIES[agent]
    return [
        Side(
            REFERENCE,
            "langgraph-supervisor, agent workers",
            "ref",
            lambda hops, saver: build_reference(hops, saver, factory),
        ),
        Side(
            OURS_AGENT,
            "ours (a), agent workers",
            "(a)",
            lambda hops, saver: build_pro(hops, saver, factory),
        ),
        Side(
            OURS_FUNCTION,
            "ours (b), function workers",
            "(b)",
            lambda hops, saver: build_pro(hops, saver, None),
        ),
    ]


def make_floor(agent: str) -> Side:
    """The floor: a bare LangGraph loop running the same agent workers (timed only)."""
    factory = AGENT_FACTORIES[agent]
    return Side(
        FLOOR,
        "bare LangGraph loop, agent workers (the floor)",
        "floor",
        lambda hops, saver: build_floor(hops, saver, factory),
    )


# ---------------------------------------------------------------------------- measuring


def thread_id(side: Side, hops: int, repetition: int) -> str:
    """A thread id no other run uses."""
    return f"{side.key}-{hops}-{repetition}-{uuid.uuid4().hex[:8]}"


def measure_memory(side: Side, hops: int, cell: Cell) -> None:
    """One verified in-memory run (default durability)."""
    result = run(side.build(hops, InMemorySaver()), thread_id(side, hops, len(cell.memory_ms)))
    cell.record_tokens(result.tokens, side.label, hops)
    cell.memory_ms.append(ms_per_hop(result, hops))


def measure_postgres(
    side: Side, hops: int, cell: Cell, saver: BaseCheckpointSaver[Any], database_uri: str
) -> None:
    """One verified Postgres run (`durability="sync"`); the first one's thread is sized."""
    thread = thread_id(side, hops, len(cell.postgres_ms))
    result = run(side.build(hops, saver), thread, durability="sync")
    cell.record_tokens(result.tokens, side.label, hops)
    cell.postgres_ms.append(ms_per_hop(result, hops))
    if cell.postgres_bytes is None:
        cell.postgres_bytes = thread_bytes(database_uri, thread)


def ms_per_hop(result: RunResult, hops: int) -> float:
    """Wall-clock of the run divided by its hops, in ms."""
    return result.seconds * 1000 / hops


def warm_up(sides: Sequence[Side], saver: BaseCheckpointSaver[Any] | None) -> None:
    """One untimed small run per side and saver, so first-call costs are not timed."""
    for side in sides:
        run(side.build(WARM_UP_HOPS, InMemorySaver()), thread_id(side, WARM_UP_HOPS, 0))
        if saver is not None:
            thread = thread_id(side, WARM_UP_HOPS, 0)
            run(side.build(WARM_UP_HOPS, saver), thread, durability="sync")


def measure_all(
    settings: Settings,
    sides: Sequence[Side],
    postgres: tuple[BaseCheckpointSaver[Any], str] | None,
    progress: Console,
) -> Results:
    """Run every side (the floor included) at every hop count; repetitions interleave the
    sides."""
    warm_up(sides, None if postgres is None else postgres[0])
    results: Results = {}
    for hops in settings.hops:
        for repetition in range(settings.repeats(hops)):
            for side in sides:
                cell = results.setdefault((side.key, hops), Cell())
                progress.print(f"{hops:>3} hops, run {repetition + 1}: {side.label}")
                measure_memory(side, hops, cell)
                if postgres is not None:
                    measure_postgres(side, hops, cell, *postgres)
    return results


# ----------------------------------------------------------------------------- tables


def total_bytes(cell: Cell) -> int | None:
    """All stored checkpoint bytes of the cell's sized thread."""
    return None if cell.postgres_bytes is None else sum(cell.postgres_bytes.values())


def token_table(results: Results, sides: Sequence[Side], hops: Sequence[int]) -> TextTable:
    """Supervisor input tokens: first, last and total decision, per side."""
    headers = ["hops"]
    for side in sides:
        headers += [f"{side.short} first", f"{side.short} last", f"{side.short} total"]
    headers.append("total (a)/ref")
    rows = []
    for n in hops:
        row = [str(n)]
        for side in sides:
            tokens = results[(side.key, n)].tokens
            row += [fmt_int(tokens[0]), fmt_int(tokens[-1]), fmt_int(sum(tokens))]
        row.append(
            fmt_ratio(sum(results[(OURS_AGENT, n)].tokens), sum(results[(REFERENCE, n)].tokens))
        )
        rows.append(tuple(row))
    note = (
        f"Per decision: count_tokens_approximately(call.messages) of each of the N+1 calls the "
        f"supervisor model received, system prompt included. Not counted (constant per call): "
        f"tool schemas, ours {pro_tool_schema_tokens()} tokens (RouteDecision), "
        f"langgraph-supervisor {reference_tool_schema_tokens()} tokens (3 handoff tools)."
    )
    return TextTable("Supervisor input tokens per decision", tuple(headers), tuple(rows), note)


def timing_table(
    results: Results, sides: Sequence[Side], hops: Sequence[int], settings: Settings
) -> TextTable:
    """Median ms per hop, in memory and on Postgres, with the ratios of medians and of minima.

    `sides` may end with the floor, whose columns come with a floor/ref ratio.
    """
    stores: list[tuple[str, Callable[[Cell], list[float]]]] = [("mem", lambda c: c.memory_ms)]
    if settings.postgres:
        stores.append(("pg", lambda c: c.postgres_ms))
    floor = any(side.key == FLOOR for side in sides)
    headers = ["hops", "runs"]
    for store, _ in stores:
        headers += [f"{side.short} {store}" for side in sides]
        headers += [f"(a)/ref {store}", f"(a)/ref {store} min"]
        headers += [f"floor/ref {store}"] if floor else []
    rows = []
    for n in hops:
        row = [str(n), str(settings.repeats(n))]
        for _, runs in stores:
            times = {s.key: runs(results[(s.key, n)]) for s in sides}
            row += [fmt_ms(median(times[s.key])) for s in sides]
            row.append(fmt_ratio(median(times[OURS_AGENT]), median(times[REFERENCE])))
            row.append(fmt_ratio(min(times[OURS_AGENT]), min(times[REFERENCE])))
            if floor:
                row.append(fmt_ratio(median(times[FLOOR]), median(times[REFERENCE])))
        rows.append(tuple(row))
    note = (
        "Wall-clock of one graph.invoke / N, median of the runs ('min': ratio of the fastest "
        "runs); graph building and compiling are not timed; every run is verified after it "
        "is timed. mem: InMemorySaver, default durability ('async')."
    )
    if floor:
        note += (
            " floor: a bare LangGraph StateGraph loop doing the same hops with the same agent "
            "workers (a routing node with no model, one node per worker invoking its agent on "
            "the worker's own history plus the hop's prompt), the cost of running these "
            "workers before any supervision."
        )
    if settings.postgres:
        note += (
            " pg: PostgresSaver from open_checkpointer, durability='sync'. Same for every graph."
        )
    return TextTable("ms per hop", tuple(headers), tuple(rows), note)


def bytes_table(results: Results, sides: Sequence[Side], hops: Sequence[int]) -> TextTable:
    """Stored checkpoint bytes per hop on Postgres, per side."""
    headers = ("hops", *[side.short for side in sides], "(a)/ref")
    rows = []
    for n in hops:
        values = {s.key: per_hop(total_bytes(results[(s.key, n)]), n) for s in sides}
        rows.append(
            (
                str(n),
                *[fmt_int(values[s.key]) for s in sides],
                fmt_ratio(values[OURS_AGENT], values[REFERENCE]),
            )
        )
    note = (
        "sum(pg_column_size(row)) over the thread's rows in checkpoints, checkpoint_blobs and "
        "checkpoint_writes (all namespaces, so worker subgraphs count) after one run on a "
        "fresh thread, divided by N."
    )
    return TextTable("Checkpoint bytes per hop (Postgres)", headers, tuple(rows), note)


def bytes_detail_table(results: Results, sides: Sequence[Side], hops: Sequence[int]) -> TextTable:
    """Checkpoint bytes per hop, split by table."""
    rows = []
    for n in hops:
        for side in sides:
            sizes = results[(side.key, n)].postgres_bytes or {}
            rows.append(
                (
                    str(n),
                    side.short,
                    *[fmt_int(per_hop(sizes.get(t), n)) for t in CHECKPOINT_TABLES],
                )
            )
    return TextTable(
        "Checkpoint bytes per hop, by table",
        ("hops", "graph", *CHECKPOINT_TABLES),
        tuple(rows),
    )


# ---------------------------------------------------------------------------- targets

TOKEN_TARGETS = 2
"""How many of `targets()` (from the first) are judged on the supervisor's tokens."""


def _cell(results: Results, key: str, hops: int) -> Cell | None:
    return results.get((key, hops))


def targets(results: Results) -> list[Target]:
    """The issue's four targets, judged on ours (a) against the reference."""
    ours, ref = _cell(results, OURS_AGENT, ANCHOR_HOPS), _cell(results, REFERENCE, ANCHOR_HOPS)
    small, large = _cell(results, OURS_AGENT, FLAT_FROM), _cell(results, OURS_AGENT, FLAT_TO)
    token_ratio = ratio(sum(ours.tokens), sum(ref.tokens)) if ours and ref else None
    flat_ratio = ratio(large.tokens[-1], small.tokens[-1]) if small and large else None
    mean_flat = (
        ratio(statistics.mean(large.tokens), statistics.mean(small.tokens))
        if small and large
        else None
    )
    ms_ratio = ratio(median(ours.memory_ms), median(ref.memory_ms)) if ours and ref else None
    ms_min = ratio(min(ours.memory_ms), min(ref.memory_ms)) if ours and ref else None
    bytes_ratio = ratio(total_bytes(ours), total_bytes(ref)) if ours and ref else None
    return [
        Target(
            f"total supervisor tokens at {ANCHOR_HOPS} hops <= 10% of langgraph-supervisor's",
            token_ratio,
            0.10,
            "ours (a) total / reference total",
        ),
        Target(
            f"per-decision tokens flat: {FLAT_TO} hops within 1.5x of {FLAT_FROM} hops",
            flat_ratio,
            1.5,
            "ours (a) last decision at "
            f"{FLAT_TO} / at {FLAT_FROM} hops"
            + ("" if mean_flat is None else f"; mean per decision: {mean_flat:.2f}x"),
        ),
        Target(
            f"ms per hop in memory at {ANCHOR_HOPS} hops <= 25% of langgraph-supervisor's",
            ms_ratio,
            0.25,
            "ours (a) / reference, medians"
            + ("" if ms_min is None else f"; fastest runs: {ms_min:.3f}"),
        ),
        Target(
            f"checkpoint bytes per hop at {ANCHOR_HOPS} hops <= 20% of langgraph-supervisor's",
            bytes_ratio,
            0.20,
            "ours (a) / reference, Postgres",
        ),
    ]


# ------------------------------------------------------------------------------- main


def environment(settings: Settings, sides: Sequence[Side], postgres_note: str) -> list[str]:
    """Lines saying what ran where."""
    packages = ", ".join(
        f"{name} {version(name)}"
        for name in (
            "langgraph-supervisor-pro",
            "langgraph",
            "langgraph-checkpoint-postgres",
            "langchain-core",
            "langchain",
            "langgraph-supervisor",
        )
    )
    large = (
        f"; {settings.large_repeat} from {settings.large_hops} hops"
        if settings.large_repeat != settings.repeat
        else ""
    )
    legend = "; ".join(f"{side.short} = {side.label}" for side in sides)
    lines = [
        *run_lines("bench/compare.py", settings.markdown),
        f"packages: {packages}",
        f"workload: hops round-robin over researcher/analyst/writer, {ANSWER_CHARS:,}-char "
        f"answers; agent workers: {settings.agent}",
        f"postgres: {postgres_note}",
    ]
    if settings.compare:
        lines += [
            f"comparison: hops {', '.join(map(str, settings.hops))}; runs per figure: "
            f"{settings.repeat}{large} (median); columns: {legend}; floor = "
            f"{make_floor(settings.agent).label}, in the ms per hop table only",
        ]
    if settings.long:
        cap = settings.long_reference_cap
        reference = "skipped" if cap < min(settings.long_hops) else f"in memory, up to {cap} hops"
        storage = (
            "open_checkpointer(uri) and open_store(uri) on the Postgres above"
            if settings.postgres
            else "InMemorySaver and InMemoryStore"
        )
        configs = " and ".join(
            f"({config.label}) compaction={config.arguments(settings.long_window)}"
            for config in settings.long_configs
        )
        lines += [
            f"long runs: hops {', '.join(map(str, settings.long_hops))}, one run each per "
            f"configuration; ours with all three workers as agent workers, {configs}, "
            f"compiled with {storage}, durability='sync'; "
            f"reference contrast: {reference}",
        ]
    return lines


@dataclass(frozen=True)
class Report:
    """What the sections measured."""

    compare: Results | None
    long: _long.LongResults | None
    postgres_note: str


WORKLOAD = (
    "N hops round-robin over three workers (researcher, analyst, writer), each answering "
    f"{ANSWER_CHARS:,} characters, then FINISH; every model is a ScriptedChatModel (no "
    "network), so every graph does the same model work and the figures measure the graphs. "
    "Every run is verified (N answers in round-robin order, N+1 supervisor calls, one worker "
    "model call per hop) before its figures count; a failed check aborts the bench."
)


def compare_sections(results: Results, sides: Sequence[Side], settings: Settings) -> list[Section]:
    """The comparison on the results page: tokens, ms per hop, checkpoint bytes."""
    goals = targets(results)
    token_goals, (ms_goal, bytes_goal) = tuple(goals[:TOKEN_TARGETS]), goals[TOKEN_TARGETS:]
    tokens = token_table(results, sides, settings.hops)
    timed = list(sides)
    if any(key == FLOOR for key, _ in results):
        timed.append(make_floor(settings.agent))
    timing = timing_table(results, timed, settings.hops, settings)
    out = [
        Section(f"Comparison: {tokens.title}", tokens, f"{WORKLOAD} {tokens.note}", token_goals),
        Section(f"Comparison: {timing.title}", timing, timing.note, (ms_goal,)),
    ]
    if settings.postgres:
        stored = bytes_table(results, sides, settings.hops)
        detail = bytes_detail_table(results, sides, settings.hops)
        out += [
            Section(f"Comparison: {stored.title}", stored, stored.note, (bytes_goal,)),
            Section(
                f"Comparison: {detail.title}",
                detail,
                "the figures of the previous section, split by the saver's three tables.",
            ),
        ]
    else:
        out[-1] = replace(out[-1], targets=(ms_goal, bytes_goal))
    return out


def render(console: Console, settings: Settings, report: Report, sides: Sequence[Side]) -> None:
    """Print the tables and targets; write the results page when asked."""
    sections: list[Section] = []
    if report.compare is not None:
        sections += compare_sections(report.compare, sides, settings)
    if report.long is not None:
        sections += _long.sections(report.long)
    tables: list[TextTable] = [section.table for section in sections]
    tables.append(targets_table([goal for section in sections for goal in section.targets]))
    header = environment(settings, sides, report.postgres_note)
    console.print()
    for line in header:
        console.print(line)
    for table in tables:
        console.print()
        console.print(table.to_rich())
    for series in report.long.series if report.long is not None else ():
        if not series.runs[max(series.runs)].compactions:
            console.print(
                f"\n[yellow]No compaction fired in the longest run ({series.config.label}): "
                "the window is too large for these hop counts to test compaction (lower "
                "--long-window).[/]"
            )
    if settings.markdown is not None:
        title = "Benchmark results: langgraph-supervisor-pro vs langgraph-supervisor"
        page = page_markdown(title, header, sections)
        # Other scripts' parts of the page (bench/trees.py's) are kept as they were.
        previous = settings.markdown.read_text() if settings.markdown.exists() else ""
        settings.markdown.write_text(keep_blocks(page, previous))
        console.print(f"\nResults page written to {settings.markdown}")


def run_bench(settings: Settings, console: Console, progress: Console) -> None:
    """Measure the chosen sections (on a throw-away Postgres database unless skipped)."""
    sides = make_sides(settings.agent)
    note = "skipped (--no-postgres)"
    with ExitStack() as stack:
        postgres: tuple[BaseCheckpointSaver[Any], str] | None = None
        if settings.postgres:
            try:
                database_uri, source = stack.enter_context(bench_database())
            except Exception as exc:  # no server: report without the Postgres columns
                console.print(f"[yellow]Postgres unavailable, skipping its columns: {exc}[/]")
                settings, note = replace(settings, postgres=False), f"skipped ({exc})"
            else:
                version_text = server_version(database_uri).split()[0]
                note = f"{source}, PostgreSQL {version_text}, fresh database"
                postgres = (stack.enter_context(open_checkpointer(database_uri)), database_uri)
        measured = [*sides, make_floor(settings.agent)]
        compare = measure_all(settings, measured, postgres, progress) if settings.compare else None
        long = None
        if settings.long:
            if postgres is None:
                backend = _long.memory_backend()
            else:
                saver, database_uri = postgres
                store = stack.enter_context(open_store(database_uri))
                backend = _long.Backend(saver=saver, store=store, database_uri=database_uri)
            long = _long.measure_all(
                settings.long_hops,
                backend,
                AGENT_FACTORIES[settings.agent],
                settings.long_window,
                settings.long_configs,
                settings.long_reference_cap,
                progress,
            )
    render(console, settings, Report(compare=compare, long=long, postgres_note=note), sides)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 0 unless a run did not do the scripted work."""
    settings = parse_args(argv)
    # The reference builds on LangGraph's deprecated prebuilt agent; keep the output readable.
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    console = Console(width=None if sys.stdout.isatty() else 200)
    progress = Console(stderr=True)
    try:
        run_bench(settings, console, progress)
    except WorkloadError as exc:
        console.print(f"[red]Aborted: a run did not do the scripted work: {exc}[/]")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

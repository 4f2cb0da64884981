"""Benchmark: trees of supervisors (a supervisor graph as a worker's agent).

Two measurements (see `bench/_tree_workload.py` for the workloads and their checks):

**Root prompt**: the same task done by one leaf worker in each of three domains, with L
leaf workers in all (--leaves, default 12, 24, 48), by one flat supervisor over the L
leaves, by a tree (a root over three domains of L/3 leaves each), and by
langgraph-supervisor's flat supervisor. For each, the tokens of every call the root's
scripted model received (`count_tokens_approximately` of its messages, system prompt
included), the tool schema bound to each call, and the total over every supervisor of
the run (a tree's domains decide too).

**Levels**: ms per leaf hop of a chain of depth 1 to --max-depth (root -> domains ->
one trivial function leaf; deterministic routers; H = --hops leaf hops per run, each
through every level), ours against the same nesting in bare LangGraph (the floor), in
memory (`InMemorySaver`, default durability) and on Postgres (`open_checkpointer`,
`durability="sync"`; only when `$LGSP_POSTGRES_URI` is set, in a throw-away database).
A level's cost is the ms per leaf hop at depth D minus at depth D - 1; the target is that
each of our levels costs at most 1.3x the floor's. Then one profiled in-memory run per
side at the two deepest depths shows where a level's time goes (self time by library).

Every run is verified before its figures count (the root's ledger, each domain's
decisions, every leaf call, the reference's hand-offs); the benchmark aborts if one is not.

`--markdown FILE` writes this benchmark's part of a results page: the part between
`<!-- bench/trees.py: begin -->` and `<!-- bench/trees.py: end -->` is replaced (or
appended), the rest of FILE is kept; `bench/compare.py --markdown` keeps this part too.
This is the command that regenerates the trees section of `bench/RESULTS.md`:

    PYTHONPATH=$PWD LGSP_POSTGRES_URI=postgresql://postgres@127.0.0.1:5432/test \\
        .venv/bin/python bench/trees.py --repeat 15 --markdown bench/RESULTS.md

Exit code: 0 (targets missed included), 1 if a run did not do the scripted work, 2 on
bad arguments.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

# Run as a script (`python bench/trees.py`): make the repository root importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from rich.console import Console

from bench._env import run_lines
from bench._postgres import bench_database, server_version
from bench._report import (
    Section,
    Target,
    TextTable,
    fmt_int,
    fmt_ms,
    fmt_times,
    median,
    ratio,
    script_part,
    targets_table,
    write_part,
)
from bench._tree_workload import (
    DOMAINS,
    LEAF_DOMAIN_WIDTHS,
    LevelRun,
    PromptRun,
    TreeWorkloadError,
    build_floor,
    build_ours,
    run_flat,
    run_reference,
    run_tree,
)
from langgraph_supervisor_pro import open_checkpointer

SCRIPT = "bench/trees.py"
PER_LEVEL_LIMIT = 1.3
"""Each of our levels may cost at most this multiple of the floor's per-level cost."""
FLOOR, OURS = "floor", "ours"
MEMORY, POSTGRES = "mem", "pg"
WARM_UP_HOPS = 2
PROFILE_RUNS = 3


@dataclass(frozen=True)
class Settings:
    """The command line, parsed."""

    repeat: int
    hops: int
    max_depth: int
    widths: tuple[int, ...]
    """Leaves per domain (L / 3) of the prompt runs."""
    postgres: bool
    profile: bool
    markdown: Path | None

    @property
    def depths(self) -> tuple[int, ...]:
        """The depths of the level runs, from 1."""
        return tuple(range(1, self.max_depth + 1))


def parse_args(argv: Sequence[str] | None) -> Settings:
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        prog=SCRIPT,
        description="Trees of supervisors: the root's prompt and the cost of each level.",
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per timing (median)")
    parser.add_argument("--hops", type=int, default=12, help="leaf hops per level run")
    parser.add_argument(
        "--max-depth", type=int, default=3, metavar="D", help="level runs at depths 1..D (>= 2)"
    )
    parser.add_argument(
        "--leaves",
        type=int,
        nargs="+",
        default=[3 * width for width in LEAF_DOMAIN_WIDTHS],
        metavar="L",
        help="leaf workers of the prompt runs (multiples of 3: three domains of L/3)",
    )
    parser.add_argument("--no-postgres", action="store_true", help="skip the Postgres columns")
    parser.add_argument("--no-profile", action="store_true", help="skip the profiled runs")
    parser.add_argument(
        "--markdown",
        type=Path,
        metavar="FILE",
        help="write this benchmark's part of the results page FILE (the rest is kept)",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.hops < 1:
        parser.error("--repeat and --hops take integers >= 1")
    if args.max_depth < 2:
        parser.error("--max-depth takes an integer >= 2 (a level's cost needs two depths)")
    if any(n < 3 or n % 3 for n in args.leaves):
        parser.error("--leaves takes multiples of 3 (three domains of L/3 leaves each), >= 3")
    return Settings(
        repeat=args.repeat,
        hops=args.hops,
        max_depth=args.max_depth,
        widths=tuple(sorted({n // 3 for n in args.leaves})),
        postgres=not args.no_postgres,
        profile=not args.no_profile,
        markdown=args.markdown,
    )


# ------------------------------------------------------------------------ the root prompt

Prompts = dict[tuple[str, int], PromptRun]
SHAPES: tuple[tuple[str, Callable[[int, BaseCheckpointSaver[Any]], PromptRun]], ...] = (
    ("flat", run_flat),
    ("tree", run_tree),
    ("reference", run_reference),
)


def measure_prompts(settings: Settings, progress: Console) -> Prompts:
    """One verified run per shape and leaf count (the prompts are deterministic)."""
    out: Prompts = {}
    for width in settings.widths:
        for shape, run in SHAPES:
            progress.print(f"prompt: {shape}, {3 * width} leaves")
            out[(shape, 3 * width)] = run(width, InMemorySaver())
    return out


def _mean(values: Sequence[int]) -> float:
    return sum(values) / len(values)


def prompt_table(prompts: Prompts, leaves: Sequence[int]) -> TextTable:
    """The root's tokens per decision, flat vs tree vs the reference."""
    rows = []
    for n in leaves:
        flat, tree, ref = (prompts[(shape, n)] for shape, _ in SHAPES)
        rows.append(
            (
                str(n),
                fmt_int(flat.root[0]),
                fmt_int(_mean(flat.root)),
                fmt_int(tree.root[0]),
                fmt_int(_mean(tree.root)),
                fmt_times(ratio(_mean(tree.root), _mean(flat.root))),
                fmt_int(ref.root[0]),
                fmt_int(_mean(ref.root)),
                f"{flat.root_schema} / {tree.root_schema} / {ref.root_schema}",
                f"{fmt_int(flat.total)} / {fmt_int(tree.total)}",
            )
        )
    headers = (
        "leaves",
        "flat first",
        "flat mean",
        "tree root first",
        "tree root mean",
        "tree/flat mean",
        "ref first",
        "ref mean",
        "schema flat / tree / ref",
        "all supervisors flat / tree",
    )
    note = (
        "Root supervisor input tokens per decision: count_tokens_approximately(call.messages) "
        "of each call the root's model received, system prompt included ('first': the first "
        "decision; 'mean': over the root's decisions, 3 hand-offs and the finish). flat: ours, "
        "one supervisor over every leaf; tree: ours, the root over three domains "
        f"({', '.join(d for d, _ in DOMAINS)}) of L/3 leaves; ref: langgraph-supervisor, one "
        "supervisor over every leaf (prebuilt agents, the same catalogue in its prompt). "
        "schema: the tool schemas bound to each root call (ours: RouteDecision, whose `next` "
        "lists the worker names; ref: one transfer_to_<worker> tool per worker), not in the "
        "other columns. all supervisors: the total of every supervisor call's messages in "
        "the run, the domains' included (a tree decides at every level)."
    )
    return TextTable("Root supervisor tokens per decision", headers, tuple(rows), note)


def _per_decision(run: PromptRun) -> float:
    """The root's mean tokens per decision, its bound tool schema included."""
    return _mean(run.root) + run.root_schema


def prompt_targets(prompts: Prompts, leaves: Sequence[int]) -> list[Target]:
    """The root's prompt must not grow with the leaf workers beneath it."""
    fewest, most = min(leaves), max(leaves)
    tree = ratio(_per_decision(prompts[("tree", most)]), _per_decision(prompts[("tree", fewest)]))
    flat = ratio(_per_decision(prompts[("flat", most)]), _per_decision(prompts[("flat", fewest)]))
    return [
        Target(
            f"the tree root's prompt does not grow with leaf workers: {most} / {fewest} leaves",
            tree,
            1.0,
            "tree root, mean tokens per decision + schema; the flat supervisor's: "
            + fmt_times(flat),
        )
    ]


# --------------------------------------------------------------------------- the levels

Timings = dict[tuple[str, int, str], list[float]]
BUILDERS: dict[str, Callable[[int, int, BaseCheckpointSaver[Any]], LevelRun]] = {
    OURS: build_ours,
    FLOOR: build_floor,
}


def _ms_per_leaf_hop(run: LevelRun, durability: Any = None) -> float:
    return run.run(durability) * 1000 / run.hops


def measure_levels(
    settings: Settings, saver: BaseCheckpointSaver[Any] | None, progress: Console
) -> Timings:
    """Every side at every depth, `repeat` times, repetitions interleaved."""
    stores: list[tuple[str, Callable[[], BaseCheckpointSaver[Any]], Any]] = [
        (MEMORY, InMemorySaver, None)
    ]
    if saver is not None:
        stores.append((POSTGRES, lambda: saver, "sync"))
    for build in BUILDERS.values():  # warm up: first-call costs are not timed
        for _, make, durability in stores:
            build(settings.max_depth, WARM_UP_HOPS, make()).run(durability)
    out: Timings = {}
    for repetition in range(settings.repeat):
        progress.print(f"levels: run {repetition + 1} of {settings.repeat}")
        for depth in settings.depths:
            for side, build in BUILDERS.items():
                for store, make, durability in stores:
                    run = build(depth, settings.hops, make())
                    out.setdefault((side, depth, store), []).append(
                        _ms_per_leaf_hop(run, durability)
                    )
    return out


def _level_cost(
    timings: Timings, side: str, depth: int, store: str, pick: Callable[[list[float]], float]
) -> float | None:
    here, above = timings.get((side, depth, store)), timings.get((side, depth - 1, store))
    if not here or not above:
        return None
    return pick(here) - pick(above)


def _median(values: list[float]) -> float:
    value = median(values)
    assert value is not None
    return value


def level_table(timings: Timings, settings: Settings, stores: Sequence[str]) -> TextTable:
    """ms per leaf hop by depth, each level's added cost, and ours/floor per level."""
    headers = ["depth"]
    for store in stores:
        headers += [
            f"ours {store}",
            f"floor {store}",
            f"ours +level {store}",
            f"floor +level {store}",
            f"level ours/floor {store}",
        ]
    rows = []
    for depth in settings.depths:
        row = [str(depth)]
        for store in stores:
            ours = _level_cost(timings, OURS, depth, store, _median)
            floor = _level_cost(timings, FLOOR, depth, store, _median)
            row += [
                fmt_ms(median(timings[(OURS, depth, store)])),
                fmt_ms(median(timings[(FLOOR, depth, store)])),
                fmt_ms(ours),
                fmt_ms(floor),
                fmt_times(ratio(ours, floor)) if floor is None or floor > 0 else "-",
            ]
        rows.append(tuple(row))
    note = (
        f"Wall-clock of one graph.invoke / H, H = {settings.hops} leaf hops per run, median of "
        f"{settings.repeat} runs; building and compiling are not timed; every run is verified "
        "after it is timed. depth 1: a root over one trivial function leaf; each further "
        "depth puts one more domain (an uncompiled supervisor graph) between them, and every "
        "leaf hop goes through every level (each domain visit is one hop to its child, then "
        "FINISH, as its own turn). floor: the same nesting in bare LangGraph, a StateGraph per "
        "level (a routing node and a node invoking the compiled child graph, a stateful "
        "subgraph like ours, or calling the same leaf function). +level: ms per leaf hop at "
        "this depth minus at the one above. mem: InMemorySaver, default durability; pg: "
        "PostgresSaver from open_checkpointer, durability='sync'."
    )
    return TextTable("ms per leaf hop by depth", tuple(headers), tuple(rows), note)


def level_targets(timings: Timings, settings: Settings, stores: Sequence[str]) -> list[Target]:
    """Each of our levels costs at most 1.3x the floor's level."""
    out = []
    for store in stores:
        for depth in settings.depths[1:]:
            ours = _level_cost(timings, OURS, depth, store, _median)
            floor = _level_cost(timings, FLOOR, depth, store, _median)
            fastest = ratio(
                _level_cost(timings, OURS, depth, store, min),
                _level_cost(timings, FLOOR, depth, store, min),
            )
            out.append(
                Target(
                    f"level {depth} ({store}) costs <= {PER_LEVEL_LIMIT}x the floor's level",
                    ratio(ours, floor) if floor is not None and floor > 0 else None,
                    PER_LEVEL_LIMIT,
                    f"ours +{fmt_ms(ours)} / floor +{fmt_ms(floor)} ms per leaf hop, medians"
                    + ("" if fastest is None else f"; fastest runs: {fastest:.2f}x"),
                )
            )
    return out


# ---------------------------------------------------------------------------- profiling

BUCKETS: tuple[tuple[str, Callable[[str, str], bool]], ...] = (
    ("our nodes (langgraph_supervisor_pro)", lambda f, n: "/langgraph_supervisor_pro/" in f),
    ("LangGraph checkpoints (saver, serde)", lambda f, n: "/langgraph/checkpoint/" in f),
    ("LangGraph Pregel (loop, tasks, channels)", lambda f, n: "/langgraph/" in f),
    ("langchain_core (configs, callbacks, messages)", lambda f, n: "/langchain_core/" in f),
    ("pydantic (message models)", lambda f, n: "pydantic" in f),
    (
        "blocked on threads (executor starts, futures)",
        lambda f, n: (
            (f == "~" and ("acquire" in n or "start_new_thread" in n))
            or f.endswith(("threading.py", "futures/thread.py", "futures/_base.py"))
        ),
    ),
    ("C built-ins (msgpack, isinstance, dict, ...)", lambda f, n: f == "~"),
    ("other Python (stdlib, ...)", lambda f, n: True),
)
"""Self time goes to the first bucket whose test matches the function's file and name."""

CALLS: tuple[tuple[str, str, str], ...] = (
    (
        "entering a graph: loading its checkpoint (SyncPregelLoop.__enter__)",
        "langgraph/pregel/_loop.py",
        "__enter__",
    ),
    (
        "  of which DeltaChannel replay (get_delta_channel_history)",
        "langgraph/checkpoint/memory/__init__.py",
        "get_delta_channel_history",
    ),
    (
        "checkpoint writes (PregelLoop._put_checkpoint)",
        "langgraph/pregel/_loop.py",
        "_put_checkpoint",
    ),
    ("executor threads started (Thread.start)", "threading.py", "start"),
    ("our supervisor nodes (SupervisorNode.invoke)", "_graph/supervisor_node.py", "invoke"),
    (
        "our synthesis nodes (SynthesisNode.invoke)",
        "langgraph_supervisor_pro/_synthesis.py",
        "invoke",
    ),
)
"""Selected calls whose cumulative time is shown: (label, file suffix, function name).
None of them calls itself through a nested graph, so their cumulative times do not overlap
across levels."""

Stats = dict[tuple[str, int, str], tuple[Any, ...]]


@contextmanager
def profiler_enabled(profiler: cProfile.Profile) -> Iterator[None]:
    """Profile the block (the calling thread only)."""
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()


def profile_side(side: str, depth: int, settings: Settings) -> Stats:
    """The profile of `PROFILE_RUNS` in-memory runs of one side at one depth."""
    build = BUILDERS[side]
    build(depth, WARM_UP_HOPS, InMemorySaver()).run()
    runs = [build(depth, settings.hops, InMemorySaver()) for _ in range(PROFILE_RUNS)]
    profiler = cProfile.Profile()
    with profiler_enabled(profiler):
        for run in runs:
            run.run()
    stats: Stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    return stats


def by_bucket(stats: Stats, hops: int) -> dict[str, float]:
    """Self time (ms per leaf hop) by bucket."""
    out = dict.fromkeys((label for label, _ in BUCKETS), 0.0)
    for (filename, _, name), (_, _, tottime, _, _) in stats.items():
        label = next(label for label, test in BUCKETS if test(filename, name))
        out[label] += tottime * 1000 / hops
    return out


def by_call(stats: Stats, hops: int) -> dict[str, float]:
    """Cumulative time (ms per leaf hop) of the selected calls."""
    out = dict.fromkeys((label for label, _, _ in CALLS), 0.0)
    for (filename, _, name), (_, _, _, cumtime, _) in stats.items():
        for label, suffix, function in CALLS:
            if name == function and filename.endswith(suffix):
                out[label] += cumtime * 1000 / hops
    return out


@dataclass
class Profile:
    """The profiles of both sides at the deepest depth and the one above it."""

    depth: int
    hops: int
    deep: dict[str, Stats] = field(default_factory=dict)
    above: dict[str, Stats] = field(default_factory=dict)


def measure_profile(settings: Settings, progress: Console) -> Profile:
    """Profile both sides at the deepest depth and the one above it."""
    profile = Profile(depth=settings.max_depth, hops=settings.hops * PROFILE_RUNS)
    for side in BUILDERS:
        progress.print(f"profile: {side}, depths {settings.max_depth - 1} and {settings.max_depth}")
        profile.deep[side] = profile_side(side, settings.max_depth, settings)
        profile.above[side] = profile_side(side, settings.max_depth - 1, settings)
    return profile


def _profile_rows(
    profile: Profile, measure: Callable[[Stats, int], dict[str, float]], total: bool
) -> tuple[tuple[str, ...], ...]:
    figures = {
        side: (
            measure(profile.deep[side], profile.hops),
            measure(profile.above[side], profile.hops),
        )
        for side in BUILDERS
    }
    rows = []
    for label in figures[OURS][0]:
        row = [label]
        for side in (OURS, FLOOR):
            deep, above = figures[side]
            row += [fmt_ms(deep[label]), fmt_ms(deep[label] - above[label])]
        rows.append(tuple(row))
    if total:
        row = ["total"]
        for side in (OURS, FLOOR):
            deep, above = figures[side]
            row += [fmt_ms(sum(deep.values())), fmt_ms(sum(deep.values()) - sum(above.values()))]
        rows.append(tuple(row))
    return tuple(rows)


def profile_tables(profile: Profile, settings: Settings) -> tuple[TextTable, TextTable]:
    """Where the deepest level's time goes, ours and the floor: by library, and by call."""
    d = profile.depth
    columns = (f"ours d{d}", "ours +level", f"floor d{d}", "floor +level")
    method = (
        f"cProfile of {PROFILE_RUNS} in-memory runs of H = {settings.hops} leaf hops per side "
        f"at depth {d} and at depth {d - 1}, in ms per leaf hop; '+level' is depth {d} minus "
        f"depth {d - 1}. cProfile follows the calling thread: LangGraph's background "
        "checkpoint writes show as time blocked on threads. The profiler slows the many small "
        "Python calls down, so read the shares, not the absolute figures."
    )
    libraries = TextTable(
        f"Where a level's time goes (depth {d}), by library",
        ("self time by library", *columns),
        _profile_rows(profile, by_bucket, total=True),
        method + " Self time (tottime) summed by the library of each function.",
    )
    calls = TextTable(
        f"Where a level's time goes (depth {d}), selected calls",
        ("cumulative time of", *columns),
        _profile_rows(profile, by_call, total=False),
        method + " Cumulative time (cumtime) of a few calls, summed over every level.",
    )
    return libraries, calls


# --------------------------------------------------------------------------------- main


@dataclass(frozen=True)
class Report:
    """What was measured."""

    prompts: Prompts
    timings: Timings
    stores: tuple[str, ...]
    profile: Profile | None
    postgres_note: str


def sections(report: Report, settings: Settings) -> list[Section]:
    """The trees part of the results page."""
    leaves = [3 * width for width in settings.widths]
    prompt = prompt_table(report.prompts, leaves)
    levels = level_table(report.timings, settings, report.stores)
    out = [
        Section(
            f"Trees: {prompt.title}",
            prompt,
            prompt.note,
            tuple(prompt_targets(report.prompts, leaves)),
        ),
        Section(
            f"Trees: {levels.title}",
            levels,
            levels.note,
            tuple(level_targets(report.timings, settings, report.stores)),
        ),
    ]
    if report.profile is not None:
        for table in profile_tables(report.profile, settings):
            out.append(Section(f"Trees: {table.title}", table, table.note))
    return out


def environment(settings: Settings, postgres_note: str) -> list[str]:
    """Lines saying what ran where."""
    packages = ", ".join(
        f"{name} {version(name)}"
        for name in (
            "langgraph-supervisor-pro",
            "langgraph",
            "langgraph-checkpoint-postgres",
            "langchain-core",
            "langgraph-supervisor",
        )
    )
    return [
        *run_lines(SCRIPT, settings.markdown),
        f"packages: {packages}",
        f"postgres: {postgres_note}",
    ]


def page_part(header: Sequence[str], parts: Sequence[Section]) -> str:
    """This benchmark's part of the results page."""
    return script_part(
        "Trees of supervisors (bench/trees.py)", SCRIPT, header, parts, not_measured=True
    )


def render(console: Console, settings: Settings, report: Report) -> None:
    """Print the tables and targets; write the page's trees part when asked."""
    parts = sections(report, settings)
    header = environment(settings, report.postgres_note)
    console.print()
    for line in header:
        console.print(line)
    for section in parts:
        console.print()
        console.print(section.table.to_rich())
    console.print()
    console.print(targets_table([t for s in parts for t in s.targets]).to_rich())
    if settings.markdown is not None:
        write_part(settings.markdown, SCRIPT, page_part(header, parts))
        console.print(f"\nTrees section written to {settings.markdown}")


def run_bench(settings: Settings, console: Console, progress: Console) -> None:
    """Measure everything (Postgres only when `$LGSP_POSTGRES_URI` is set)."""
    with ExitStack() as stack:
        saver: BaseCheckpointSaver[Any] | None = None
        if not settings.postgres:
            note = "skipped (--no-postgres)"
        elif not os.environ.get("LGSP_POSTGRES_URI", "").strip():
            note = "skipped: LGSP_POSTGRES_URI is not set"
            console.print(f"[yellow]Postgres {note}; measuring in memory only.[/]")
        else:
            database_uri, source = stack.enter_context(bench_database())
            note = f"{source}, PostgreSQL {server_version(database_uri).split()[0]}, fresh database"
            saver = stack.enter_context(open_checkpointer(database_uri))
        prompts = measure_prompts(settings, progress)
        timings = measure_levels(settings, saver, progress)
    profile = measure_profile(settings, progress) if settings.profile else None
    stores = (MEMORY,) if saver is None else (MEMORY, POSTGRES)
    render(console, settings, Report(prompts, timings, stores, profile, note))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 0 unless a run did not do the scripted work."""
    settings = parse_args(argv)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    console = Console(width=None if sys.stdout.isatty() else 200)
    progress = Console(stderr=True)
    try:
        run_bench(settings, console, progress)
    except TreeWorkloadError as exc:
        console.print(f"[red]Aborted: a run did not do the scripted work: {exc}[/]")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Scale on one machine: many threads on one async pool, per-hop overhead, model latency.

Three sections (`--section all`, the default, runs them all), each side by side with
the floor, a bare LangGraph loop running the same `create_react_agent` workers for the
same hops (`bench/_workload.py`); throughput and per hop also with the routed floor,
the same loop whose routing node asks the supervisor's model for every decision, as a
hand-written supervisor does (shown beside the targets, which are against the floor):

- **throughput** (`bench/_throughput.py`): for each size in `--sizes` (100, 500,
  1,000), that many threads started at once through one async Postgres pool
  (`aopen_checkpointer(uri, pool_size=--pool-size)`), `--hops` hops each: hops/s, p50
  and p99 run latency, peak RSS, connections used, errors. Each (side, size) cell runs
  in a fresh process, `--repeat` times, the sides' order flipping each repetition.
  Target: ours within 1.3x of the floor's throughput at every size, no error.
- **per-hop** (`bench/_per_hop.py`): one run at a time of `--per-hop-hops` (12, 48)
  hops, in memory and on Postgres, wall-clock and CPU ms per hop, `--per-hop-repeat`
  interleaved runs; then cProfile of both sides at the shortest and the longest hop
  count: self time by library, and the functions whose calls per hop grow with the
  hop count in ours more than in the floor. Target: ours <= 1.3x the floor per hop.
  Also "ours by function", our graph deciding with a function as the floor does (no
  model call on either side): the orchestration alone, also <= 1.3x the floor; ours
  minus it is what the supervisor's model call per decision costs.
- **latency** (`bench/_latency.py`): every model call sleeps `--latency` s +/-
  `--jitter`; wall time per run against the model time it logged; a 3-branch fan-out
  step against its slowest branch (target: within 1.2x).

    PYTHONPATH=$PWD LGSP_POSTGRES_URI=postgresql://postgres@127.0.0.1:5432/test \\
        .venv/bin/python bench/scale.py --markdown bench/RESULTS.md

`--workload function` measures plain function workers instead (`bench/_function_workload.py`:
3 function workers, a router function, 6 hops; the floor a bare LangGraph loop, a routing
node and one node per worker): CPU per hop in memory with `--memory-threads` (200) runs at
once, wall time and client CPU of `--sizes` (500, 1,000) runs at once on one async Postgres
pool, and where a hop's CPU goes, part by part; targets: within 1.3x of the floor, no error.
It writes its own part of the page (markers `bench/scale.py --workload function`):

    PYTHONPATH=$PWD LGSP_POSTGRES_URI=postgresql://postgres@127.0.0.1:5432/test \\
        .venv/bin/python bench/scale.py --workload function --markdown bench/RESULTS.md

`--quick` shrinks everything (tiny sizes, hop counts and latency) for the test suite.
`--markdown FILE` rewrites only this benchmark's part of the results page (between its
`<!-- bench/scale.py: ... -->` markers); `bench/compare.py --markdown` keeps it.
Postgres: `$LGSP_POSTGRES_URI` (a fresh database is created there and dropped at the
end), else an embedded `pgserver`. Exit code: 0 (targets missed included), 1 if a run
did not do the scripted work, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path

# Run as a script (`python bench/scale.py`): make the repository root importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
from rich.console import Console

from bench import _function_sections, _function_workload, _latency, _per_hop, _throughput
from bench._env import run_lines
from bench._function_sections import FunctionSettings
from bench._postgres import bench_database, server_version
from bench._report import (
    Section,
    Target,
    TextTable,
    ratio,
    script_part,
    write_part,
)
from bench._throughput import FLOOR, OURS, ROUTED, SIDES, Burst, Cell
from bench._workload import WorkloadError
from bench.trees import BUCKETS, by_bucket
from langgraph_supervisor_pro import open_checkpointer

SCRIPT = "bench/scale.py"
FUNCTION_SCRIPT = "bench/scale.py --workload function"
"""The function workload's part of the results page (its own markers)."""
SECTIONS = ("all", "throughput", "per-hop", "latency")
WORKLOADS = ("agent", "function")
THROUGHPUT_LIMIT = 1.3
PER_HOP_LIMIT = 1.3
FAN_OUT_LIMIT = 1.2
GROWTH_ROWS = 8


@dataclass(frozen=True)
class Settings:
    """The command line, parsed."""

    section: str = "all"
    sizes: tuple[int, ...] = (100, 500, 1000)
    hops: int = 3
    repeat: int = 3
    pool_size: int = 10
    timeout: float = 900.0
    per_hop_hops: tuple[int, ...] = (12, 48)
    per_hop_repeat: int = 21
    """One run's ours / floor at 12 hops in memory swings by about 0.08 around its centre with
    9 runs per cell (four identical runs: 1.25 to 1.41); more runs per cell narrow that."""
    profile: bool = True
    latency: float = 0.2
    jitter: float = 0.25
    latency_hops: int = 6
    latency_repeat: int = 5
    agent: str = "create_react_agent"
    markdown: Path | None = None
    workload: str = "agent"
    memory_threads: int = 200
    memory_repeat: int = 15

    def function(self) -> FunctionSettings:
        """The function workload's settings."""
        return FunctionSettings(
            hops=self.hops,
            memory_threads=self.memory_threads,
            memory_repeat=self.memory_repeat,
            sizes=self.sizes,
            repeat=self.repeat,
            pool_size=self.pool_size,
            timeout=self.timeout,
            profile_threads=min(self.memory_threads, PROFILE_THREADS),
            profile=self.profile,
        )

    def runs(self, name: str) -> bool:
        """Whether section `name` runs."""
        return self.section in ("all", name)


FUNCTION_DEFAULTS = {"sizes": (500, 1000), "hops": _function_workload.HOPS, "repeat": 2}
"""`--workload function` without `--sizes`, `--hops` or `--repeat`: the issue's workload,
two Postgres bursts per (side, size) (about nine minutes on two cores; `--repeat 1`: six)."""
PROFILE_THREADS = 100
"""Runs at once in a profiled burst of the function workload (at most `--memory-threads`)."""

QUICK = {
    "sizes": (4,),
    "hops": 2,
    "repeat": 1,
    "timeout": 120.0,
    "per_hop_hops": (2, 4),
    "per_hop_repeat": 1,
    "latency": 0.01,
    "latency_hops": 2,
    "latency_repeat": 1,
    "memory_threads": 4,
    "memory_repeat": 1,
}
"""`--quick`: every section, tiny (the test suite's run; its figures mean nothing)."""


def _ints(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give integers separated by commas") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: every value must be >= 1")
    return tuple(sorted(set(values)))


def parse_args(argv: Sequence[str] | None) -> Settings:
    """Parse the command line (exit 2 on bad arguments)."""
    d = Settings()
    parser = argparse.ArgumentParser(prog=SCRIPT, description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--section", choices=SECTIONS, default=d.section)
    add(
        "--workload",
        choices=WORKLOADS,
        default=d.workload,
        help="agent: react-agent workers (the sections above); function: plain function "
        "workers, in memory and on Postgres, with a profile (its own part of the page)",
    )
    add("--sizes", type=_ints, default=None, help="concurrent threads, e.g. 100,500,1000")
    add("--hops", type=int, default=None, help="hops per thread in the throughput bursts")
    add("--repeat", type=int, default=None, help="bursts per (side, size) (median)")
    add("--pool-size", type=int, default=d.pool_size, help="the async pool's max connections")
    add("--timeout", type=float, default=d.timeout, help="seconds a burst may take")
    add("--per-hop-hops", type=_ints, default=d.per_hop_hops, metavar="N,N")
    add("--per-hop-repeat", type=int, default=d.per_hop_repeat)
    add("--no-profile", action="store_true", help="skip the per-hop profile")
    add("--latency", type=float, default=d.latency, help="seconds per simulated model call")
    add("--jitter", type=float, default=d.jitter, help="+/- fraction of --latency")
    add("--latency-hops", type=int, default=d.latency_hops)
    add("--latency-repeat", type=int, default=d.latency_repeat)
    add("--memory-threads", type=int, default=d.memory_threads, help="function workload")
    add("--memory-repeat", type=int, default=d.memory_repeat, help="function workload")
    add("--quick", action="store_true", help="tiny settings (for the tests)")
    add("--markdown", type=Path, default=None, metavar="FILE")
    args = parser.parse_args(argv)
    defaults = FUNCTION_DEFAULTS if args.workload == "function" else asdict(d)
    if args.sizes is None:
        args.sizes = defaults["sizes"]
    if args.hops is None:
        args.hops = defaults["hops"]
    if args.repeat is None:
        args.repeat = defaults["repeat"]
    ints = (
        args.hops,
        args.repeat,
        args.pool_size,
        args.per_hop_repeat,
        args.memory_threads,
        args.memory_repeat,
    )
    if min(ints) < 1 or min(args.latency_hops, args.latency_repeat) < 1:
        parser.error("--hops, --repeat, --pool-size and the --*-repeat/--*-hops take ints >= 1")
    if not args.timeout > 0 or not args.latency >= 0 or not 0 <= args.jitter < 1:
        parser.error("--timeout takes seconds > 0, --latency >= 0, --jitter in [0, 1)")
    if len(args.per_hop_hops) < 2:
        parser.error("--per-hop-hops takes at least two hop counts (the growth is between them)")
    settings = Settings(
        section=args.section,
        sizes=args.sizes,
        hops=args.hops,
        repeat=args.repeat,
        pool_size=args.pool_size,
        timeout=args.timeout,
        per_hop_hops=args.per_hop_hops,
        per_hop_repeat=args.per_hop_repeat,
        profile=not args.no_profile,
        latency=args.latency,
        jitter=args.jitter,
        latency_hops=args.latency_hops,
        latency_repeat=args.latency_repeat,
        markdown=args.markdown,
        workload=args.workload,
        memory_threads=args.memory_threads,
        memory_repeat=args.memory_repeat,
    )
    if args.quick:
        settings = Settings(**{**asdict(settings), **QUICK})
    return settings


# ---------------------------------------------------------------------------- throughput


def run_child(cell: Cell) -> Burst:
    """Measure one cell in a fresh process (its own peak RSS)."""
    root = str(Path(__file__).resolve().parents[1])
    inherited = os.environ.get("PYTHONPATH", "")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, inherited) if p)}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(asdict(cell))],
        capture_output=True,
        text=True,
        env=env,
        timeout=cell.timeout + 300,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise WorkloadError(
            f"throughput: the {cell.side} burst of {cell.size} threads failed "
            f"(exit {done.returncode}):\n{done.stderr[-3000:]}"
        )
    return Burst.from_json(lines[-1])


Bursts = dict[tuple[str, int], list[Burst]]


def measure_throughput(settings: Settings, uri: str, progress: Callable[[str], None]) -> Bursts:
    """Every (side, size) `repeat` times, the sides' order rotating each repetition."""
    template = Cell(
        uri=uri,
        side=SIDES[0],
        size=0,
        hops=settings.hops,
        pool_size=settings.pool_size,
        durability="sync",
        timeout=settings.timeout,
        agent=settings.agent,
    )
    return _throughput.alternating_bursts(
        template,
        sides=SIDES,
        sizes=settings.sizes,
        repeat=settings.repeat,
        run_child=run_child,
        progress=progress,
        label="throughput",
    )


def _med(values: Sequence[float]) -> float:
    return _throughput.median_of(list(values))


def _spread(values: Sequence[float], fmt: str = "{:.1f}") -> str:
    if len(values) < 2:
        return fmt.format(values[0]) if values else "-"
    return f"{fmt.format(_med(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def _errors(bursts: Sequence[Burst]) -> int:
    return sum(sum(b.errors.values()) for b in bursts)


def throughput_sections(bursts: Bursts, settings: Settings) -> list[Section]:
    """The throughput table (with its targets) and the resources table."""
    rows, resources, targets = [], [], []
    for size in settings.sizes:
        ours, floor = bursts[(OURS, size)], bursts[(FLOOR, size)]
        o_hps = [b.hops_per_second for b in ours]
        f_hps = [b.hops_per_second for b in floor]
        slower = ratio(_med(f_hps), _med(o_hps))
        rows.append(
            (
                f"{size:,}",
                _spread(o_hps),
                _spread(f_hps),
                "-" if slower is None else f"{slower:.2f}x",
                f"{_med([b.latency(0.5) for b in ours]):.2f}",
                f"{_med([b.latency(0.99) for b in ours]):.2f}",
                f"{_med([b.latency(0.5) for b in floor]):.2f}",
                f"{_med([b.latency(0.99) for b in floor]):.2f}",
                f"{_errors(ours)} / {_errors(floor)}",
            )
        )
        resources.append(
            (
                f"{size:,}",
                *(
                    f"{max(b.peak_rss_kib for b in side) / 1024:,.0f} "
                    f"(+{max(b.peak_rss_kib - b.base_rss_kib for b in side) / 1024:,.0f})"
                    for side in (ours, floor)
                ),
                *(
                    f"{max(b.backends_peak for b in side)} / {max(b.pool_open_peak for b in side)}"
                    for side in (ours, floor)
                ),
                *(str(max(b.waiting_peak for b in side)) for side in (ours, floor)),
                *(
                    f"{_med([b.cpu_seconds * 1000 / (b.size * b.hops) for b in side]):.1f}"
                    for side in (ours, floor)
                ),
            )
        )
        targets.append(
            Target(
                f"throughput at {size:,} threads within {THROUGHPUT_LIMIT}x of the floor",
                slower,
                THROUGHPUT_LIMIT,
                "floor hops/s / ours hops/s, medians",
            )
        )
    all_errors = sum(_errors(b) for b in bursts.values())
    targets.append(
        Target(
            "no failed or stuck run, at any size, on either side",
            float(all_errors),
            0,
            f"runs that raised, did the wrong work or outlived the {settings.timeout:g} s "
            f"deadline, of {sum(b.size for bs in bursts.values() for b in bs):,}",
        )
    )
    method = (
        f"for each size, that many threads started at once (`asyncio.gather` of `ainvoke`, "
        f"{settings.hops} hops each, `durability='sync'`) through one async Postgres pool "
        f"(`aopen_checkpointer(uri, pool_size={settings.pool_size})`); ours is "
        "`create_supervisor` with three `create_react_agent` workers, the floor the bare "
        "LangGraph loop with the same agents; one compiled graph serves every thread, its "
        "models deciding from what they are shown. Every run's final state is checked. "
        "Each (side, size) burst runs in a fresh process after 4 warm-up runs, "
        f"{settings.repeat} bursts each, the sides' order rotating. hops/s: hops done / "
        "seconds from the start to the last run's end, median (min-max); latency: "
        "seconds from the start to each run's end (all start together), medians of the "
        "bursts' p50 and p99."
    )
    resource_method = (
        "the same bursts. Peak RSS: `getrusage(RUSAGE_SELF).ru_maxrss` of the burst's "
        "process, MiB, the largest of the bursts (+ the growth during the burst over "
        "the process before it: imports, graph, warm-up). Connections: the most backends "
        "connected to the bench database at once (`pg_stat_activity`, sampled every "
        "50 ms, the sampler's own excluded) / the most the pool held (`get_stats()`); "
        "waiting: the most requests queued for a pooled connection at once (on the saver's gate, "
        "which lets as many statements in flight as the pool has connections, and on the "
        "pool). CPU: the "
        "process's CPU time (all threads) per hop, median."
    )
    return [
        Section(
            "Scale: throughput, N threads at once on one async pool",
            TextTable(
                "Throughput",
                (
                    "threads",
                    "ours hops/s",
                    "floor hops/s",
                    "floor/ours",
                    "ours p50 s",
                    "ours p99 s",
                    "floor p50 s",
                    "floor p99 s",
                    "errors ours / floor",
                ),
                tuple(rows),
            ),
            method,
            tuple(targets),
        ),
        Section(
            "Scale: memory, connections and CPU of the bursts",
            TextTable(
                "Resources",
                (
                    "threads",
                    "ours peak RSS MiB",
                    "floor peak RSS MiB",
                    "ours connections",
                    "floor connections",
                    "ours waiting",
                    "floor waiting",
                    "ours CPU ms/hop",
                    "floor CPU ms/hop",
                ),
                tuple(resources),
            ),
            resource_method,
        ),
    ]


ROUTED_METHOD = (
    "the routed floor is the floor's bare loop whose routing node also does what a "
    "hand-written supervisor does: before every hop (and once more to finish) it asks the "
    "supervisor's model for the next worker with LangChain's `with_structured_output` of "
    "our `RouteDecision` schema, and goes where the decision says. Ours makes the same "
    "model call per decision; the bare floor makes none. Measured in the same runs as the "
    "tables above, the sides interleaved. Shown for the reading of the targets; "
    "the targets are against the bare floor."
)


def routed_throughput_section(bursts: Bursts, settings: Settings) -> list[Section]:
    """Ours against the routed floor in the throughput bursts (no targets)."""
    if not all((ROUTED, size) in bursts for size in settings.sizes):
        return []
    rows = []
    for size in settings.sizes:
        ours, routed, floor = (bursts[(side, size)] for side in (OURS, ROUTED, FLOOR))
        o_hps, r_hps = [b.hops_per_second for b in ours], [b.hops_per_second for b in routed]
        slower = ratio(_med(r_hps), _med(o_hps))
        rows.append(
            (
                f"{size:,}",
                _spread(o_hps),
                _spread(r_hps),
                "-" if slower is None else f"{slower:.2f}x",
                _spread([b.hops_per_second for b in floor]),
                *(
                    f"{_med([b.cpu_seconds * 1000 / (b.size * b.hops) for b in side]):.1f}"
                    for side in (ours, routed)
                ),
                str(_errors(routed)),
            )
        )
    return [
        Section(
            "Scale: throughput against the same work by hand (the routed floor)",
            TextTable(
                "Throughput, routed floor",
                (
                    "threads",
                    "ours hops/s",
                    "routed floor hops/s",
                    "routed/ours",
                    "floor hops/s",
                    "ours CPU ms/hop",
                    "routed CPU ms/hop",
                    "routed errors",
                ),
                tuple(rows),
            ),
            ROUTED_METHOD,
        )
    ]


def _cells(timings: _per_hop.Timings, settings: Settings) -> list[tuple[str, int]]:
    """The (store, hops) cells of the per-hop tables, in the order they are shown."""
    stores = sorted({store for _, store, _ in timings}, key=_per_hop.STORES.index)
    return [(store, hops) for store in stores for hops in settings.per_hop_hops]


def _hop_row(
    hops: int,
    store: str,
    ours: _per_hop.Timing,
    other: _per_hop.Timing,
    *,
    paired: bool = False,
) -> tuple[tuple[str, ...], float | None, float | None]:
    """A per-hop table row of ours against `other`, and the wall and CPU ratios."""
    wall = ratio(_med(ours.wall), _med(other.wall))
    cpu = ratio(_med(ours.cpu), _med(other.cpu))
    cells = [
        f"{hops}",
        store,
        _spread(ours.wall, "{:.2f}"),
        _spread(other.wall, "{:.2f}"),
        "-" if wall is None else f"{wall:.2f}x",
    ]
    if paired:  # the range of ours / other over runs taken back to back
        pairs = [o / f for o, f in zip(ours.wall, other.wall, strict=True)]
        cells.append(f"{min(pairs):.2f}-{max(pairs):.2f}")
    cells += [
        f"{_med(ours.cpu):.2f}",
        f"{_med(other.cpu):.2f}",
        "-" if cpu is None else f"{cpu:.2f}x",
    ]
    return tuple(cells), wall, cpu


def routed_per_hop_section(timings: _per_hop.Timings, settings: Settings) -> list[Section]:
    """Ours against the routed floor, one run at a time (no targets)."""
    rows = []
    for store, hops in _cells(timings, settings):
        if (ROUTED, store, hops) not in timings:
            return []
        row, _, _ = _hop_row(
            hops, store, timings[(OURS, store, hops)], timings[(ROUTED, store, hops)]
        )
        rows.append(row)
    return [
        Section(
            "Scale: per hop against the same work by hand (the routed floor)",
            TextTable(
                "Per hop, routed floor",
                (
                    "hops",
                    "store",
                    "ours ms/hop",
                    "routed floor ms/hop",
                    "ours/routed",
                    "ours CPU",
                    "routed CPU",
                    "CPU ours/routed",
                ),
                tuple(rows),
            ),
            ROUTED_METHOD,
        )
    ]


BY_FUNCTION_METHOD = (
    "ours by function is our graph (`create_supervisor`, the same three workers, the "
    "same checks) deciding with a function, `create_supervisor(router=...)`, that sends "
    "hop k to the round-robin worker, as the bare floor's routing node does: no model "
    "call on either side, so this pair compares the orchestration alone. model call: "
    "ours - ours by function, median ms per hop, what asking the supervisor's model for "
    "each decision costs in ours (its prompt, LangChain's chat-model call, the scripted "
    "model, the parse). Measured in the same runs as the tables above, the sides "
    "interleaved."
)


def by_function_per_hop_section(timings: _per_hop.Timings, settings: Settings) -> list[Section]:
    """Ours deciding by a function against the bare floor: the orchestration alone."""
    rows, targets = [], []
    for store, hops in _cells(timings, settings):
        if (_per_hop.BY_FUNCTION, store, hops) not in timings:
            return []
        by_function = timings[(_per_hop.BY_FUNCTION, store, hops)]
        row, wall, cpu = _hop_row(hops, store, by_function, timings[(FLOOR, store, hops)])
        model = _med(timings[(OURS, store, hops)].wall) - _med(by_function.wall)
        rows.append((*row, f"{model:.2f}"))
        targets.append(
            Target(
                f"per hop at {hops} hops ({store}), both sides deciding by a function, "
                f"<= {PER_HOP_LIMIT}x the floor",
                wall,
                PER_HOP_LIMIT,
                "ours by function / floor, median wall ms per hop"
                + ("" if cpu is None else f"; CPU: {cpu:.2f}x"),
            )
        )
    return [
        Section(
            "Scale: per hop, both sides deciding by a function (the orchestration alone)",
            TextTable(
                "Per hop, by function",
                (
                    "hops",
                    "store",
                    "ours by function ms/hop",
                    "floor ms/hop",
                    "by function/floor",
                    "by function CPU",
                    "floor CPU",
                    "CPU by function/floor",
                    "model call ms/hop",
                ),
                tuple(rows),
            ),
            BY_FUNCTION_METHOD,
            tuple(targets),
        )
    ]


# ------------------------------------------------------------------------------- per hop


@dataclass
class Profiles:
    """cProfile stats of both sides at the shortest and the longest hop count."""

    hops: tuple[int, int]
    ours: tuple[_per_hop.Stats, _per_hop.Stats]
    floor: tuple[_per_hop.Stats, _per_hop.Stats]


def measure_profiles(settings: Settings) -> Profiles:
    """Profile ours and the floor at the shortest and the longest per-hop hop count."""
    short, long = settings.per_hop_hops[0], settings.per_hop_hops[-1]
    side = {
        s: (_per_hop.profile(s, short, settings.agent), _per_hop.profile(s, long, settings.agent))
        for s in (OURS, FLOOR)
    }
    return Profiles(hops=(short, long), ours=side[OURS], floor=side[FLOOR])


def per_hop_sections(
    timings: _per_hop.Timings, settings: Settings, profiles: Profiles | None
) -> list[Section]:
    """The per-hop table with its targets, and the profile tables."""
    rows, targets = [], []
    for store, hops in _cells(timings, settings):
        row, wall, cpu = _hop_row(
            hops,
            store,
            timings[(OURS, store, hops)],
            timings[(FLOOR, store, hops)],
            paired=True,
        )
        rows.append(row)
        targets.append(
            Target(
                f"per hop at {hops} hops ({store}) <= {PER_HOP_LIMIT}x the floor",
                wall,
                PER_HOP_LIMIT,
                "ours / floor, median wall ms per hop"
                + ("" if cpu is None else f"; CPU: {cpu:.2f}x"),
            )
        )
    method = (
        "the comparison's workload (hops round-robin over three `create_react_agent` "
        "workers, 2,000-character answers, scripted models), one verified run at a time; "
        "mem: InMemorySaver, default durability; pg: `open_checkpointer`, "
        f"`durability='sync'`. {settings.per_hop_repeat} runs per cell, the sides "
        "interleaved (their order rotates every run). Wall: ms per hop, median (min-max); "
        "paired: the range of ours / floor over runs taken back to back; CPU: the "
        "process's CPU time (all threads) per hop, median, steadier than wall-clock on "
        "a loaded machine."
    )
    parts = [
        Section(
            "Scale: per-hop overhead of one run",
            TextTable(
                "Per hop",
                (
                    "hops",
                    "store",
                    "ours ms/hop",
                    "floor ms/hop",
                    "ours/floor",
                    "paired",
                    "ours CPU",
                    "floor CPU",
                    "CPU ours/floor",
                ),
                tuple(rows),
            ),
            method,
            tuple(targets),
        )
    ]
    if profiles is not None:
        parts += profile_sections(profiles)
    return parts


def profile_sections(profiles: Profiles) -> list[Section]:
    """Self time by library at both hop counts, and what grows with the hop count."""
    short, long = profiles.hops
    buckets = {
        (side, hops): by_bucket(stats, hops)
        for side, pair in ((OURS, profiles.ours), (FLOOR, profiles.floor))
        for hops, stats in zip(profiles.hops, pair, strict=True)
    }
    rows = [
        (label, *(f"{buckets[key][label]:.2f}" for key in sorted(buckets, key=_bucket_order)))
        for label, _ in BUCKETS
    ]
    rows.append(
        (
            "total",
            *(f"{sum(buckets[key].values()):.2f}" for key in sorted(buckets, key=_bucket_order)),
        )
    )
    growing = _per_hop.growth(profiles.ours, profiles.floor, profiles.hops, GROWTH_ROWS)
    grow_rows = tuple(
        (
            g.function,
            f"{g.ours[0]:.1f} -> {g.ours[1]:.1f}",
            f"{g.floor[0]:.1f} -> {g.floor[1]:.1f}",
            f"{g.extra:+.1f}",
        )
        for g in growing
    ) or (("(none grows in ours more than in the floor)", "-", "-", "-"),)
    method = (
        f"cProfile of one in-memory run per side at {short} and at {long} hops (after a "
        "warm-up run), ms per hop; self time summed by the library of each function (the "
        "buckets of bench/trees.py). cProfile follows the calling thread: LangGraph's "
        "background checkpoint writes show as time blocked on threads, and the profiler "
        "slows small Python calls down, so read the shares, not the absolute figures."
    )
    grow_method = (
        f"the same profiles: calls per hop of each Python function at {short} -> {long} "
        "hops, ours and the floor, the functions whose calls per hop grow most more in "
        "ours than in the floor (work that is O(history) per hop in our code shows here, "
        "whatever the machine's load; counts, not times)."
    )
    return [
        Section(
            "Scale: where a hop's time goes",
            TextTable(
                "Profile",
                (
                    "self time by library (ms/hop)",
                    f"ours {short}",
                    f"ours {long}",
                    f"floor {short}",
                    f"floor {long}",
                ),
                tuple(rows),
            ),
            method,
        ),
        Section(
            "Scale: what grows with the hop count",
            TextTable(
                "Growth",
                (
                    "function",
                    "ours calls/hop",
                    "floor calls/hop",
                    "ours' extra growth",
                ),
                grow_rows,
            ),
            grow_method,
        ),
    ]


def _bucket_order(key: tuple[str, int]) -> tuple[int, int]:
    return (0 if key[0] == OURS else 1, key[1])


# ------------------------------------------------------------------------------- latency


def latency_sections(figures: _latency.LatencyFigures, settings: Settings) -> list[Section]:
    """Wall time against model time, and the fan-out step against its slowest branch."""
    rows, targets = [], []
    for (workload, driver), runs in figures.items():
        wall, model = _med(runs.wall), _med(runs.model)
        fan_out = workload == "fan-out"
        step = f"{_med(runs.steps()) * 1000:.0f}" if fan_out else "-"
        slowest = f"{_med(runs.slowest_branch) * 1000:.0f}" if fan_out else "-"
        step_ratio = _med(runs.step_ratio()) if fan_out else None
        rows.append(
            (
                {
                    "ours": f"ours, {settings.latency_hops} hops",
                    "floor": f"floor, {settings.latency_hops} hops",
                }.get(workload, "ours, fan-out x3"),
                driver,
                f"{wall * 1000:.0f}",
                f"{model * 1000:.0f}",
                f"{(wall - model) * 1000:.0f}",
                f"{wall / model:.3f}x" if model else "-",
                step,
                slowest,
                "-" if step_ratio is None else f"{step_ratio:.3f}x",
            )
        )
        if step_ratio is not None:
            targets.append(
                Target(
                    f"fan-out ({driver}): the 3-branch step within {FAN_OUT_LIMIT}x of its "
                    "slowest branch",
                    step_ratio,
                    FAN_OUT_LIMIT,
                    "(run wall - supervisor model time) / slowest branch's model time, median",
                )
            )
    method = (
        f"every model call sleeps {settings.latency * 1000:.0f} ms +/- "
        f"{settings.jitter:.0%} (seeded by the call's messages; `asyncio.sleep` under "
        "`ainvoke`, `time.sleep` under `invoke`) and logs the time it slept; in memory, "
        f"{settings.latency_repeat} verified runs per row after a warm-up run, medians. "
        f"Serial: {settings.latency_hops} hops round-robin (ours: "
        f"{settings.latency_hops + 1} supervisor calls and {settings.latency_hops} worker "
        f"calls; the floor: the {settings.latency_hops} worker calls); overhead = wall - "
        "model time. Fan-out (model ms: the supervisor's calls + the slowest branch, the "
        "critical path): `create_supervisor(parallel=True)`, the first decision sends "
        "the three workers at once, then FINISH; step = wall - the two supervisor calls' "
        "model time, against the slowest branch's model time."
    )
    return [
        Section(
            "Scale: latency workload (simulated model time)",
            TextTable(
                "Latency",
                (
                    "workload",
                    "driver",
                    "wall ms",
                    "model ms",
                    "overhead ms",
                    "wall/model",
                    "step ms",
                    "slowest branch ms",
                    "step/slowest",
                ),
                tuple(rows),
            ),
            method,
            tuple(targets),
        )
    ]


# --------------------------------------------------------------------------------- page


def page_part(settings: Settings, parts: Sequence[Section], postgres: str) -> str:
    """This benchmark's part of the results page."""
    header = [
        *run_lines(SCRIPT, settings.markdown),
        f"packages: langgraph {version('langgraph')}, langgraph-checkpoint-postgres "
        f"{version('langgraph-checkpoint-postgres')}, psycopg-pool {version('psycopg-pool')}, "
        f"langchain-core {version('langchain-core')}",
        f"postgres: {postgres}",
    ]
    return script_part("Scale on one machine (bench/scale.py)", SCRIPT, header, parts)


def run_function_bench(settings: Settings, console: Console) -> list[Section]:
    """`--workload function`: measure, print, and write its own part of the page."""
    say = Console(stderr=True).print
    with bench_database() as (uri, source):
        postgres = (
            f"{source}, PostgreSQL {server_version(uri).split()[0]}, fresh database; "
            f"max_connections {_setting(uri, 'max_connections')}; pool_size={settings.pool_size}"
        )
        with open_checkpointer(uri):  # runs the migrations once, for every child
            pass
        function = settings.function()
        figures = _function_sections.measure(function, uri, run_child, say)
    parts = _function_sections.sections(figures, function)
    _show(parts, console)
    if settings.markdown is not None:
        header = [
            *run_lines(SCRIPT, settings.markdown),
            f"packages: langgraph {version('langgraph')}, langgraph-checkpoint-postgres "
            f"{version('langgraph-checkpoint-postgres')}, langchain-core "
            f"{version('langchain-core')}",
            f"postgres: {postgres}",
        ]
        title = "Scale on one machine, function workers (bench/scale.py --workload function)"
        write_part(
            settings.markdown, FUNCTION_SCRIPT, script_part(title, FUNCTION_SCRIPT, header, parts)
        )
        console.print(f"Function workload section written to {settings.markdown}")
    return parts


def _show(parts: Sequence[Section], console: Console) -> None:
    for section in parts:
        console.print(section.table.to_rich())
        for target in section.targets:
            shown = "-" if target.measured is None else f"{target.measured:.3f}"
            console.print(f"{target.verdict}: {target.statement}: {shown}")


def run_bench(settings: Settings, console: Console) -> list[Section]:
    """Measure the sections asked for, print them, write the page part when asked."""
    if settings.workload == "function":
        return run_function_bench(settings, console)
    parts: list[Section] = []
    say = Console(stderr=True).print
    postgres = "not used"
    if settings.runs("throughput") or settings.runs("per-hop"):
        with bench_database() as (uri, source):
            postgres = (
                f"{source}, PostgreSQL {server_version(uri).split()[0]}, fresh database; "
                f"max_connections {_setting(uri, 'max_connections')}; throughput "
                f"pool_size={settings.pool_size}"
            )
            with open_checkpointer(uri) as saver:  # runs the migrations once, for every child
                if settings.runs("per-hop"):
                    timings = _per_hop.measure(
                        settings.per_hop_hops, settings.per_hop_repeat, settings.agent, saver, say
                    )
                    profiles = measure_profiles(settings) if settings.profile else None
                    parts += per_hop_sections(timings, settings, profiles)
                    parts += routed_per_hop_section(timings, settings)
                    parts += by_function_per_hop_section(timings, settings)
            if settings.runs("throughput"):
                bursts = measure_throughput(settings, uri, say)
                parts = [
                    *throughput_sections(bursts, settings),
                    *routed_throughput_section(bursts, settings),
                    *parts,
                ]
    if settings.runs("latency"):
        figures = _latency.measure(
            hops=settings.latency_hops,
            repeat=settings.latency_repeat,
            latency=settings.latency,
            jitter=settings.jitter,
            agent=settings.agent,
            progress=say,
        )
        parts += latency_sections(figures, settings)
    _show(parts, console)
    if settings.markdown is not None:
        write_part(settings.markdown, SCRIPT, page_part(settings, parts, postgres))
        console.print(f"Scale section written to {settings.markdown}")
    return parts


def _setting(uri: str, name: str) -> str:
    with psycopg.connect(uri) as conn:
        row = conn.execute(f"SHOW {name}").fetchone()
    return str(row[0]) if row else "?"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark (or, with `--child`, one throughput cell)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--child"] and len(args) == 2:
        _throughput.child_main(args[1])
        return 0
    settings = parse_args(args)
    console = Console()
    try:
        run_bench(settings, console)
    except WorkloadError as exc:
        console.print(f"[red]a run did not do the scripted work:[/red] {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

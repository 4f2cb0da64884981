"""`bench/scale.py --workload function`: its measurements, run in order, and its sections.

The workload and how each figure is taken: `bench/_function_workload.py`. The Postgres
bursts are the throughput cells of `bench/_throughput.py` (`Cell(workload="function")`),
each in a fresh process; the in-memory bursts and the profiles run in this process.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from bench import _function_workload as fw
from bench._report import Section, Target, TextTable, ratio
from bench._throughput import Burst, Cell, alternating_bursts
from bench._workload import WorkloadError
from langgraph_supervisor_pro import aopen_checkpointer

OURS, FLOOR = fw.OURS, fw.FLOOR
LIMIT = 1.3
STORES = ("mem", "pg")


@dataclass(frozen=True)
class FunctionSettings:
    """What the function workload measures."""

    hops: int
    memory_threads: int
    memory_repeat: int
    sizes: tuple[int, ...]
    repeat: int
    pool_size: int
    timeout: float
    profile_threads: int
    profile: bool = True


@dataclass
class Figures:
    """Everything the function workload measured."""

    memory: fw.Bursts
    postgres: dict[tuple[str, int], list[Burst]] = field(default_factory=dict)
    profiles: dict[tuple[str, str], fw.Profiled] = field(default_factory=dict)


def measure(
    settings: FunctionSettings,
    uri: str,
    run_child: Callable[[Cell], Burst],
    progress: Callable[[str], None],
) -> Figures:
    """In memory, then the Postgres bursts (the sides alternating), then the profiles."""
    figures = Figures(
        memory=fw.measure_memory(
            settings.memory_threads, settings.memory_repeat, settings.hops, progress
        )
    )

    template = Cell(
        uri=uri,
        side=OURS,
        size=0,
        hops=settings.hops,
        pool_size=settings.pool_size,
        durability="sync",
        timeout=settings.timeout,
        workload="function",
    )
    figures.postgres = alternating_bursts(
        template,
        sides=fw.SIDES,
        sizes=settings.sizes,
        repeat=settings.repeat,
        run_child=run_child,
        progress=progress,
        label="function workload, Postgres",
    )
    if settings.profile:
        opener = partial(aopen_checkpointer, uri, pool_size=settings.pool_size, setup=False)
        for side in fw.SIDES:
            progress(f"function workload: profiling {side}")
            figures.profiles[(side, "mem")] = fw.profile(
                side, settings.profile_threads, settings.hops, fw.in_memory, None
            )
            figures.profiles[(side, "pg")] = fw.profile(
                side, settings.profile_threads, settings.hops, opener, "sync"
            )
        failed = sum(profiled.errors for profiled in figures.profiles.values())
        if failed:
            raise WorkloadError(f"function workload: {failed} profiled runs failed")
    return figures


def _med(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _spread(values: Sequence[float], fmt: str = "{:.2f}") -> str:
    if len(values) < 2:
        return fmt.format(values[0]) if values else "-"
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return f"{fmt.format(_med(values))} ({low}-{high})"


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def memory_section(figures: Figures, settings: FunctionSettings) -> Section:
    """CPU and wall time per hop in memory, ours against the floor."""
    ours, floor = figures.memory[OURS], figures.memory[FLOOR]
    # Each repetition's bursts ran back to back: their ratio cancels the machine's drift.
    paired = [o.cpu_ms_per_hop / f.cpu_ms_per_hop for o, f in zip(ours, floor, strict=True)]
    cpu = _med(paired)
    wall = ratio(_med([b.wall_ms_per_hop for b in ours]), _med([b.wall_ms_per_hop for b in floor]))
    rows = [
        (
            side,
            _spread([b.cpu_ms_per_hop for b in bursts]),
            _spread([b.wall_ms_per_hop for b in bursts]),
            str(sum(sum(b.errors.values()) for b in bursts)),
        )
        for side, bursts in ((OURS, ours), (FLOOR, floor))
    ]
    medians = ratio(_med([b.cpu_ms_per_hop for b in ours]), _med([b.cpu_ms_per_hop for b in floor]))
    rows.append(("ours / floor, of the medians", _times(medians), _times(wall), "-"))
    shown = f"{cpu:.2f}x ({min(paired):.2f}-{max(paired):.2f})"
    rows.append(("ours / floor, burst by burst", shown, "-", "-"))
    errors = sum(sum(b.errors.values()) for bursts in figures.memory.values() for b in bursts)
    method = (
        f"3 function workers (`function_worker`: each answers 2,000 characters, "
        f"deterministic, no model), {settings.hops} hops round-robin, decided by a function "
        "(ours: `create_supervisor(router=...)`, no model); the floor: a bare LangGraph loop, "
        "a routing node (its own super-step: a checkpoint between the decision and the hop) "
        "and one plain node per worker calling the same function on a `WorkerTask` of the "
        f"worker's own history. {settings.memory_threads} runs at once (`asyncio.gather` of "
        "`ainvoke`, `InMemorySaver`, default durability) on one compiled graph in one "
        f"process, {settings.memory_repeat} bursts per side, the sides alternating; every "
        "run's final state checked after the clock stopped. CPU: the process's CPU time (all "
        "threads) per hop; wall: the burst's time per hop; median (min-max). Burst by "
        "burst: ours / floor of the two bursts of each repetition (run back to back, so "
        "load from elsewhere on the machine falls on both), median (min-max): the target."
    )
    return Section(
        f"Function workers: CPU per hop in memory, {settings.memory_threads} threads at once",
        TextTable(
            "Function workers, memory",
            ("side", "CPU ms/hop", "wall ms/hop", "errors"),
            tuple(rows),
        ),
        method,
        (
            Target(
                f"CPU per hop in memory ({settings.memory_threads} threads) within {LIMIT}x "
                "of the floor",
                cpu,
                LIMIT,
                "ours / floor CPU ms per hop of the bursts run back to back, median",
            ),
            Target(
                "no failed run in memory",
                float(errors),
                0,
                f"runs that raised or did the wrong work, of "
                f"{sum(b.runs for bs in figures.memory.values() for b in bs):,}",
            ),
        ),
    )


def postgres_section(figures: Figures, settings: FunctionSettings) -> Section:
    """Wall time and client CPU per hop of the Postgres bursts, ours against the floor."""
    rows, targets = [], []
    for size in settings.sizes:
        ours, floor = figures.postgres[(OURS, size)], figures.postgres[(FLOOR, size)]
        wall = ratio(_med([b.seconds for b in ours]), _med([b.seconds for b in floor]))
        cpu_o = [b.cpu_seconds * 1000 / (b.size * b.hops) for b in ours]
        cpu_f = [b.cpu_seconds * 1000 / (b.size * b.hops) for b in floor]
        rows.append(
            (
                f"{size:,}",
                _spread([b.seconds for b in ours], "{:.1f}"),
                _spread([b.seconds for b in floor], "{:.1f}"),
                _times(wall),
                _spread(cpu_o),
                _spread(cpu_f),
                _times(ratio(_med(cpu_o), _med(cpu_f))),
                f"{sum(sum(b.errors.values()) for b in ours)} / "
                f"{sum(sum(b.errors.values()) for b in floor)}",
            )
        )
        targets.append(
            Target(
                f"wall time of {size:,} threads on Postgres within {LIMIT}x of the floor",
                wall,
                LIMIT,
                "ours / floor, median seconds of the burst",
            )
        )
    errors = sum(sum(b.errors.values()) for bursts in figures.postgres.values() for b in bursts)
    runs = sum(b.size for bursts in figures.postgres.values() for b in bursts)
    targets.append(
        Target(
            "no failed or stuck run on Postgres, at any size, on either side",
            float(errors),
            0,
            f"runs that raised, did the wrong work or outlived the {settings.timeout:g} s "
            f"deadline, of {runs:,}",
        )
    )
    method = (
        "the same workload, each size that many runs at once through one async Postgres pool "
        f"(`aopen_checkpointer(uri, pool_size={settings.pool_size})`, the fenced saver on "
        "both sides), `durability='sync'`, each (side, size) burst in a fresh process "
        f"after 4 warm-up runs, {settings.repeat} bursts each, the sides' order alternating; "
        "every run's final state checked after the clock stopped. Wall: seconds from the "
        "start to the last run's end; CPU: the client process's CPU time (all threads) per "
        "hop; median (min-max)."
    )
    return Section(
        "Function workers: N threads at once on one async Postgres pool",
        TextTable(
            "Function workers, Postgres",
            (
                "threads",
                "ours wall s",
                "floor wall s",
                "wall ours/floor",
                "ours CPU ms/hop",
                "floor CPU ms/hop",
                "CPU ours/floor",
                "errors ours / floor",
            ),
            tuple(rows),
        ),
        method,
        tuple(targets),
    )


def profile_section(figures: Figures, settings: FunctionSettings) -> list[Section]:
    """CPU per hop by part, both sides, in memory and on Postgres."""
    keys = [(side, store) for store in STORES for side in fw.SIDES]
    keys = [key for key in keys if key in figures.profiles]
    if not keys:
        return []
    parts = {key: figures.profiles[key].parts() for key in keys}
    labels = [part.label for part in fw.PARTS] + [fw.REST]
    rows = [
        (label, *(f"{parts[key][label]:.3f}" for key in keys), *_extra(parts, label))
        for label in labels
    ]
    totals = tuple(f"{figures.profiles[key].cpu_ms_per_hop:.3f}" for key in keys)
    total = "total (CPU ms per hop of the same burst, unprofiled)"
    rows.append((total, *totals, *_extra_total(figures)))
    method = (
        f"cProfile of one burst of {settings.profile_threads} runs per side and store (after a "
        "warm-up burst and a burst timed without the profiler), every node in the profiled "
        "thread (the executor runs what it is given at once: the floor's nodes, which "
        "LangGraph runs in its executor under `ainvoke`, are seen, and the hand-off to a "
        "thread is left out, so the totals are below the tables above). Each part's share "
        "of the profiled time, applied to the unprofiled CPU per hop; a part is the "
        "cumulative time of the calls it names (`bench/_function_workload.py`, `PARTS`), "
        "what none names is the rest; the event loop's waits for I/O are not counted. mem: "
        "`InMemorySaver`; pg: the pool of the bursts above, `durability='sync'`."
    )
    headers = tuple(f"{side} {store}" for side, store in keys)
    return [
        Section(
            "Function workers: where a hop's CPU goes",
            TextTable(
                "Function workers, profile",
                ("part (CPU ms per hop)", *headers, *_extra_headers(keys)),
                tuple(rows),
            ),
            method,
        )
    ]


def _extra_headers(keys: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    return tuple(f"ours - floor {store}" for store in STORES if _pair(keys, store))


def _pair(keys: Sequence[tuple[str, str]], store: str) -> bool:
    return (OURS, store) in keys and (FLOOR, store) in keys


def _extra(parts: dict[tuple[str, str], dict[str, float]], label: str) -> tuple[str, ...]:
    return tuple(
        f"{parts[(OURS, store)][label] - parts[(FLOOR, store)][label]:+.3f}"
        for store in STORES
        if _pair(list(parts), store)
    )


def _extra_total(figures: Figures) -> tuple[str, ...]:
    profiles = figures.profiles
    return tuple(
        f"{profiles[(OURS, store)].cpu_ms_per_hop - profiles[(FLOOR, store)].cpu_ms_per_hop:+.3f}"
        for store in STORES
        if _pair(list(profiles), store)
    )


REMAINING = (
    "the profiled bursts above, each part's ours - floor in profiled ms per hop (cProfile's "
    "own time included, so larger than the CPU; not scaled by one unprofiled burst, whose "
    "noise is the size of the difference in memory), largest first, and its share of the "
    "whole difference. What is left, by part: hop bookkeeping is what ours does "
    "for every hop that the floor does not: a usage recorder on the hop's callbacks (a "
    "function worker's own model calls are counted and checked against the budgets), the "
    "hop context and trace metadata in the function's config, the prompt message with its "
    "stable id, the answer coerced into a validated `WorkerResult` (its summary derived), "
    "the ledger entry and the slot write: many small steps, none of them a tenth of the "
    "part. Checkpoint write and channels are LangGraph's work for the state ours keeps "
    "(the next section counts it: about 1.7 times the floor's channel writes per run, three "
    "times its channels, one checkpoint more). "
    "LangGraph's node runs: every node of ours keeps a slim trace "
    "(`TracePolicy(process_inputs=slim_state)`), which LangGraph serves by splitting the "
    "callback handlers and dispatching twice per node run even when no tracer listens "
    "(about 3% of ours' CPU per hop, measured by building ours without it); the decision "
    "validates the router's answer and builds the view. On Postgres the fence and "
    "LangGraph's checkpoint writes are the same saver on both sides: ours pays them once "
    "more per run (the synthesis step's checkpoint) and for more channels written per step."
)


def remaining_section(figures: Figures) -> list[Section]:
    """Ours - floor by part, largest first, with each part's share of the difference."""
    stores = [store for store in STORES if _pair(list(figures.profiles), store)]
    if not stores:
        return []
    diffs: dict[str, dict[str, float]] = {}
    for store in stores:
        ours = figures.profiles[(OURS, store)].profiled()
        floor = figures.profiles[(FLOOR, store)].profiled()
        diffs[store] = {label: ours[label] - floor[label] for label in ours}
    totals = {store: sum(diffs[store].values()) for store in stores}
    order = sorted(diffs[stores[0]], key=lambda label: -diffs[stores[0]][label])
    rows = tuple(
        (
            label.split(":")[0],
            *(
                cell
                for store in stores
                for cell in (
                    f"{diffs[store][label]:+.3f}",
                    f"{diffs[store][label] / totals[store]:.0%}" if totals[store] else "-",
                )
            ),
        )
        for label in order
    )
    headers = tuple(
        header
        for store in stores
        for header in (f"ours - floor {store} (profiled ms/hop)", f"share {store}")
    )
    return [
        Section(
            "Function workers: where the remaining cost goes",
            TextTable("Function workers, remaining", ("part", *headers), rows),
            REMAINING,
        )
    ]


STATE_WORK = (
    "one run of the workload per side (`bench/_function_workload.py`, `state_work`): the "
    "compiled graph's channels (state keys and LangGraph's branch channels), and the "
    "checkpoints and channel writes the run stored through a counting `InMemorySaver`; "
    "counts, not times, so the same on every machine. Each checkpoint is LangGraph's "
    "per-super-step work over every channel (writes applied, channels bumped, versions "
    "compared, the state read for the `values` stream), each write one value serialized "
    "and stored: ours keeps the ledger, the worker slots, the route and the step on every "
    "hop, and ends with a synthesis step, which the floor does not."
)


def state_work_section(hops: int) -> Section:
    """Channels, checkpoints and writes of one run per side (deterministic)."""
    ours, floor = fw.state_work(OURS, hops), fw.state_work(FLOOR, hops)
    rows = tuple(
        (label, str(mine), str(theirs), f"{mine / theirs:.2f}x")
        for label, mine, theirs in (
            ("channels", ours.channels, floor.channels),
            ("checkpoints per run", ours.checkpoints, floor.checkpoints),
            ("channel writes per run", ours.writes, floor.writes),
        )
    )
    return Section(
        f"Function workers: state work per run ({hops} hops)",
        TextTable("Function workers, state work", ("", "ours", "floor", "ours / floor"), rows),
        STATE_WORK,
    )


def sections(figures: Figures, settings: FunctionSettings) -> list[Section]:
    """The function workload's sections, in the order they are shown."""
    return [
        memory_section(figures, settings),
        postgres_section(figures, settings),
        *profile_section(figures, settings),
        *remaining_section(figures),
        state_work_section(settings.hops),
    ]

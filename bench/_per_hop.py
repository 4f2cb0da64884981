"""Per-hop overhead of one run, ours against the floor, and where the time goes.

The comparison's workload and graphs (`bench/_workload.py`: ours with three
`create_react_agent` workers, the bare LangGraph loop with the same agents, scripted
models), timed one run at a time in this process: in memory (`InMemorySaver`, default
durability) and on Postgres (`open_checkpointer`, `durability="sync"`). Repetitions
interleave the sides (their order rotates every run) so load from elsewhere on the
machine falls on all of them. The routed floor is the bare loop whose routing node
also asks the supervisor's model for each decision, as a hand-written supervisor does;
"ours by function" is our graph deciding with a function (`create_supervisor(router=...)`)
instead of its model, as the bare floor's routing node does: between them, the two pairs
split ours' cost into the orchestration and the model call per decision.
Each run records its wall-clock and the process's CPU time (all threads, `getrusage`)
per hop.

The profile: cProfile of one in-memory run per side at each hop count, self time by
library (the buckets of `bench/trees.py`) and the functions whose calls per hop grow
with the hop count: work that is O(history) per hop shows there as calls per hop
rising from the short run to the long one, whatever the machine's load.
"""

from __future__ import annotations

import cProfile
import pstats
import resource
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from bench._workload import (
    AGENT_FACTORIES,
    TASK,
    Durability,
    Prepared,
    build_floor,
    build_pro,
)

OURS, FLOOR, ROUTED, BY_FUNCTION = "ours", "floor", "routed floor", "ours by function"
SIDES = (OURS, FLOOR, ROUTED, BY_FUNCTION)
"""ROUTED: the floor whose routing node also asks a model (`build_floor(routed=True)`).
BY_FUNCTION: ours deciding with a function instead of a model, as the bare floor does
(`build_pro(by_function=True)`)."""
STORES = ("mem", "pg")

Stats = dict[tuple[str, int, str], tuple[Any, ...]]


def rotated(sides: Sequence[str], turn: int) -> tuple[str, ...]:
    """The sides in the order of repetition `turn`: each goes first, middle and last."""
    k = turn % len(sides)
    return (*sides[k:], *sides[:k])


def builder(side: str, agent: str) -> Callable[[int, BaseCheckpointSaver[Any]], Prepared]:
    """How `side` is built (scripted models: one verified run each)."""
    factory = AGENT_FACTORIES[agent]
    if side in (OURS, BY_FUNCTION):
        by_function = side == BY_FUNCTION
        return lambda hops, saver: build_pro(hops, saver, factory, by_function=by_function)
    routed = side == ROUTED
    return lambda hops, saver: build_floor(hops, saver, factory, routed=routed)


@dataclass
class Timing:
    """ms per hop of each run of one (side, store, hops) cell, in run order."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


Timings = dict[tuple[str, str, int], Timing]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed_run(prepared: Prepared, durability: Durability | None) -> tuple[float, float]:
    """One verified run: (wall ms per hop, CPU ms per hop)."""
    config: Any = {"configurable": {"thread_id": f"hop-{uuid.uuid4()}"}}
    payload = {"messages": [HumanMessage(content=TASK)]}
    cpu, start = _cpu(), time.perf_counter()
    final = prepared.graph.invoke(payload, config, durability=durability)
    wall, cpu = time.perf_counter() - start, _cpu() - cpu
    prepared.check(final)
    return wall * 1000 / prepared.hops, cpu * 1000 / prepared.hops


def measure(
    hop_counts: Sequence[int],
    repeat: int,
    agent: str,
    postgres: BaseCheckpointSaver[Any] | None,
    progress: Callable[[str], None],
) -> Timings:
    """Every cell `repeat` times, the sides interleaved (their order rotates every run)."""
    savers: dict[str, Callable[[], BaseCheckpointSaver[Any]]] = {"mem": InMemorySaver}
    if postgres is not None:
        savers["pg"] = lambda: postgres
    durability: dict[str, Durability | None] = {"mem": None, "pg": "sync"}
    builds = {side: builder(side, agent) for side in SIDES}
    for build in builds.values():  # warm up: first-call costs are not timed
        for store, saver in savers.items():
            timed_run(build(3, saver()), durability[store])
    timings: Timings = {}
    for repetition in range(repeat):
        order = rotated(SIDES, repetition)
        for hops in hop_counts:
            progress(f"per hop: {hops} hops, run {repetition + 1} of {repeat}")
            for store, saver in savers.items():
                for side in order:
                    wall, cpu = timed_run(builds[side](hops, saver()), durability[store])
                    cell = timings.setdefault((side, store, hops), Timing())
                    cell.wall.append(wall)
                    cell.cpu.append(cpu)
    return timings


# ---------------------------------------------------------------------------- profiling


@contextmanager
def _profiling(profiler: cProfile.Profile) -> Iterator[None]:
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()


def profile(side: str, hops: int, agent: str) -> Stats:
    """cProfile of one in-memory run of `side` at `hops` hops (after a warm-up run)."""
    build = builder(side, agent)
    timed_run(build(3, InMemorySaver()), None)
    prepared = build(hops, InMemorySaver())
    profiler = cProfile.Profile()
    with _profiling(profiler):
        timed_run(prepared, None)
    stats: Stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    return stats


def calls_per_hop(stats: Stats, hops: int) -> dict[str, float]:
    """Calls per hop of every function, keyed 'file:line(name)' (site-packages cut off)."""
    out: dict[str, float] = {}
    for (filename, line, name), (_, calls, *_) in stats.items():
        short = filename.split("site-packages/")[-1].split("/langgraph_supervisor_pro/")[-1]
        if "/langgraph_supervisor_pro/" in filename:
            short = f"langgraph_supervisor_pro/{short}"
        out[f"{short}:{line}({name})"] = out.get(f"{short}:{line}({name})", 0.0) + calls / hops
    return out


@dataclass(frozen=True)
class Growth:
    """A function whose calls per hop differ between the short and the long run."""

    function: str
    ours: tuple[float, float]
    """Calls per hop at the short and the long run, ours."""
    floor: tuple[float, float]
    """The same, the floor."""

    @property
    def extra(self) -> float:
        """How much more ours' calls per hop grow than the floor's."""
        return (self.ours[1] - self.ours[0]) - (self.floor[1] - self.floor[0])


def growth(
    ours: tuple[Stats, Stats], floor: tuple[Stats, Stats], hops: tuple[int, int], top: int
) -> list[Growth]:
    """The `top` functions whose calls per hop grow most more in ours than in the floor."""
    o = (calls_per_hop(ours[0], hops[0]), calls_per_hop(ours[1], hops[1]))
    f = (calls_per_hop(floor[0], hops[0]), calls_per_hop(floor[1], hops[1]))
    rows = [
        Growth(
            key,
            (o[0].get(key, 0.0), o[1].get(key, 0.0)),
            (f[0].get(key, 0.0), f[1].get(key, 0.0)),
        )
        for key in set(o[0]) | set(o[1])
        if not key.startswith("~")  # C built-ins: counted through their callers
    ]
    rows.sort(key=lambda g: (-g.extra, g.function))
    return [g for g in rows[:top] if g.extra > 0.05]

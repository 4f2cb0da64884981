"""One burst of concurrent threads through one async Postgres pool, in a fresh process.

`bench/scale.py` runs each (side, size) cell of its throughput table as
`python bench/scale.py --child '<json>'`, so each cell's peak RSS
(`resource.getrusage(RUSAGE_SELF).ru_maxrss`) is its own. The child:

1. opens one pool with `aopen_checkpointer(uri, pool_size=P, setup=False)` (the parent
   ran the migrations) and compiles one graph on it: ours (`create_supervisor` with
   the three `create_react_agent` workers), the floor (the bare LangGraph loop with
   the same agents) or the routed floor (the same loop, its routing node asking the
   supervisor's model), all on served models (`bench/_scale_workload.py`);
2. warms up with a few runs, then starts `size` runs at once (`asyncio.gather` of
   `ainvoke`, one fresh thread each, H hops each, `durability` as given) and checks
   every run's final state (`check_pro` / the floor's check): a run that raises or does
   the wrong work is an error, and so is one still running after `timeout` seconds (a
   pool that deadlocks shows up here);
3. meanwhile samples, every 50 ms, the backends connected to the bench database
   (`pg_stat_activity`, the sampler's own connection excluded), the pool's
   `get_stats()` (connections open, requests waiting for one) and the saver's gate
   (`saver.lock.waiting`: requests queued before the pool, see persistence/_connections.py).

It prints one JSON line: hops/s, each run's latency, peak RSS, connections, errors.
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import psycopg
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig

from bench._function_workload import build as build_function
from bench._per_hop import rotated
from bench._scale_workload import served_models
from bench._workload import (
    AGENT_FACTORIES,
    TASK,
    Durability,
    Prepared,
    WorkloadError,
    build_floor,
    build_pro,
)
from langgraph_supervisor_pro import aopen_checkpointer

OURS, FLOOR, ROUTED = "ours", "floor", "routed floor"
SIDES = (OURS, FLOOR, ROUTED)
"""ROUTED: the floor whose routing node also asks a model (`build_floor(routed=True)`)."""
WARM_UP_RUNS = 4
SAMPLE_SECONDS = 0.05


@dataclass(frozen=True)
class Cell:
    """What one child process is asked to measure."""

    uri: str
    side: str
    size: int
    hops: int
    pool_size: int
    durability: Durability
    timeout: float
    agent: str = "create_react_agent"
    workload: str = "agent"
    """`agent` (the agents' workload) or `function` (`bench/_function_workload.py`)."""


@dataclass
class Burst:
    """What one burst measured (the child's JSON line)."""

    side: str
    size: int
    hops: int
    seconds: float
    """Wall-clock from starting the runs to the last one ending."""
    latencies: list[float] = field(default_factory=list)
    """Seconds from the burst's start to each finished run's end (the runs start together)."""
    errors: dict[str, int] = field(default_factory=dict)
    """Failed runs by error type ('timeout' for runs still going at the deadline)."""
    peak_rss_kib: int = 0
    base_rss_kib: int = 0
    """Peak RSS before the burst (after the imports, the graph and the warm-up)."""
    backends_peak: int = 0
    """Most backends connected to the bench database at once (the sampler excluded)."""
    pool_open_peak: int = 0
    """Most connections the pool held at once (`pool_size` of its stats)."""
    pool_max: int = 0
    waiting_peak: int = 0
    """Most requests waiting for a pooled connection at once."""
    cpu_seconds: float = 0.0
    """CPU time of the process (all threads) during the burst."""

    @property
    def done(self) -> int:
        """Runs that finished and did the scripted work."""
        return len(self.latencies)

    @property
    def hops_per_second(self) -> float:
        """Hops of the runs that finished, per second of the burst."""
        return self.done * self.hops / self.seconds if self.seconds else 0.0

    def latency(self, q: float) -> float:
        """The q-quantile (0..1) of the run latencies, in seconds (nearest rank)."""
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]

    def to_json(self) -> str:
        """The child's output line."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Burst:
        """Read a child's output line back."""
        return cls(**json.loads(text))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def build(cell: Cell, checkpointer: Any) -> Prepared:
    """The graph of `cell.side`, compiled on `checkpointer`, with served models."""
    if cell.workload == "function":
        return build_function(cell.side, cell.hops, checkpointer)
    models = served_models().served
    agent = AGENT_FACTORIES[cell.agent]
    if cell.side == OURS:
        return build_pro(cell.hops, checkpointer, agent, models=models)
    return build_floor(
        cell.hops,
        checkpointer,
        agent,
        models=models,
        asynchronous=True,
        routed=cell.side == ROUTED,
    )


class _Sampler:
    """Peaks of the database's backends and of the pool's stats, sampled every 50 ms."""

    def __init__(self, uri: str, pool: Any, gate: Any) -> None:
        self.uri, self.pool, self.gate = uri, pool, gate
        self.backends = self.open = self.waiting = self.pool_max = 0
        self._stop = asyncio.Event()

    async def run(self) -> None:
        query = (
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        async with await psycopg.AsyncConnection.connect(self.uri, autocommit=True) as conn:
            while True:
                row = await (await conn.execute(query)).fetchone()
                self.backends = max(self.backends, int(row[0]) if row else 0)
                stats: Mapping[str, int] = self.pool.get_stats()
                self.open = max(self.open, stats.get("pool_size", 0))
                queued = stats.get("requests_waiting", 0) + self.gate.waiting
                self.waiting = max(self.waiting, queued)
                self.pool_max = stats.get("pool_max", self.pool_max)
                try:
                    await asyncio.wait_for(self._stop.wait(), SAMPLE_SECONDS)
                except TimeoutError:
                    continue
                return

    def stop(self) -> None:
        self._stop.set()


async def _one(prepared: Prepared, cell: Cell, label: str, *, check: bool = True) -> Any:
    config: RunnableConfig = {"configurable": {"thread_id": f"{label}-{uuid.uuid4()}"}}
    payload = {"messages": [HumanMessage(content=TASK)]}
    final = await prepared.graph.ainvoke(payload, config, durability=cell.durability)
    if check:
        prepared.check(final)
    return final


async def measure(cell: Cell) -> Burst:
    """Warm up, then run `cell.size` threads at once and measure them."""
    async with aopen_checkpointer(cell.uri, pool_size=cell.pool_size, setup=False) as saver:
        prepared = build(cell, saver)
        await asyncio.gather(*(_one(prepared, cell, "warm") for _ in range(WARM_UP_RUNS)))
        sampler = _Sampler(cell.uri, saver.conn, saver.lock)  # type: ignore[attr-defined]
        sampling = asyncio.create_task(sampler.run())
        burst = Burst(side=cell.side, size=cell.size, hops=cell.hops, seconds=0.0)
        burst.base_rss_kib = _rss_kib()
        cpu, start = _cpu(), time.perf_counter()

        # The function workload's runs are checked once the clock stopped: its floor's
        # check rebuilds every answer, ours' one per run, and neither is the work measured.
        later = cell.workload == "function"
        finals: list[tuple[Any, float]] = []

        def failed(exc: Exception) -> None:
            name = "WorkloadError" if isinstance(exc, WorkloadError) else type(exc).__name__
            burst.errors[name] = burst.errors.get(name, 0) + 1

        async def timed(index: int) -> None:
            try:
                label = f"{cell.side}-{cell.size}-{index}"
                final = await _one(prepared, cell, label, check=not later)
            except Exception as exc:  # every failure is counted, none stops the burst
                failed(exc)
            else:
                finals.append((final, time.perf_counter() - start))

        tasks = [asyncio.create_task(timed(i)) for i in range(cell.size)]
        _, pending = await asyncio.wait(tasks, timeout=cell.timeout)
        cpu = _cpu() - cpu
        for task in pending:
            task.cancel()
        if pending:
            burst.errors["timeout"] = len(pending)
            await asyncio.gather(*pending, return_exceptions=True)
        for final, latency in finals:
            try:
                if later:
                    prepared.check(final)
            except WorkloadError as exc:
                failed(exc)
            else:
                burst.latencies.append(latency)
        burst.seconds = max(burst.latencies) if burst.latencies and not pending else cell.timeout
        burst.cpu_seconds = cpu
        burst.peak_rss_kib = _rss_kib()
        sampler.stop()
        await sampling
        burst.backends_peak, burst.pool_open_peak = sampler.backends, sampler.open
        burst.pool_max, burst.waiting_peak = sampler.pool_max, sampler.waiting
        return burst


def child_main(spec: str) -> None:
    """`--child '<json>'`: measure the cell and print its `Burst` as one JSON line."""
    cell = Cell(**json.loads(spec))
    print(asyncio.run(measure(cell)).to_json(), flush=True)


def median_of(values: list[float]) -> float:
    """The median (NaN for no values)."""
    return statistics.median(values) if values else float("nan")


def alternating_bursts(
    template: Cell,
    *,
    sides: Sequence[str],
    sizes: Sequence[int],
    repeat: int,
    run_child: Callable[[Cell], Burst],
    progress: Callable[[str], None],
    label: str,
) -> dict[tuple[str, int], list[Burst]]:
    """`template` for every (side, size), `repeat` times, each its own process.

    The sides' order rotates (`_per_hop.rotated`): each goes first, middle and last in
    turn, so load from elsewhere on the machine falls on every side alike.
    """
    bursts: dict[tuple[str, int], list[Burst]] = {}
    for repetition in range(repeat):
        for index, size in enumerate(sizes):
            for side in rotated(sides, repetition + index):
                progress(f"{label}: {side}, {size} threads, run {repetition + 1}")
                cell = replace(template, side=side, size=size)
                bursts.setdefault((side, size), []).append(run_child(cell))
    return bursts

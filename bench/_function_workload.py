"""The function workload: our supervisor's own cost per hop, undiluted by any agent.

`bench/scale.py --workload function` runs it. Ours is `create_supervisor` with three
plain function workers (`function_worker`: deterministic, no model) and a router
function (`schedule_router`: no model), H hops round-robin; the floor is the bare
LangGraph loop doing the same work (`build_function_floor`: a routing node, its own
super-step, then one node per function worker). Neither side calls a model, so what
separates them is the orchestration: the decision, the dispatch, the hop's bookkeeping,
the channels and the checkpoints.

- **In memory**: `threads` runs at once (`asyncio.gather` of `ainvoke`, one fresh thread
  each, `InMemorySaver`, default durability) on one compiled graph, in this process, the
  sides alternating burst by burst; the process's CPU time (all threads) and the wall
  time per hop of each burst.
- **On Postgres**: the throughput bursts of `bench/_throughput.py` with
  `Cell(workload="function")`, each in a fresh process.
- **Where the CPU goes**: cProfile of one burst per side and store (after a warm-up
  burst), the profiled time split into parts by the functions that own it (`PARTS`),
  each part's share applied to the unprofiled CPU per hop.
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import pstats
import resource
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from bench._workload import (
    TASK,
    Durability,
    Prepared,
    WorkloadError,
    build_function_floor,
    build_pro,
)

OURS, FLOOR = "ours", "floor"
SIDES = (OURS, FLOOR)
HOPS = 6
"""Hops per run (the issue's workload: 3 function workers, a router, 6 hops)."""

Stats = dict[tuple[str, int, str], tuple[Any, ...]]


def build(side: str, hops: int, saver: BaseCheckpointSaver[Any]) -> Prepared:
    """`side`'s graph for the function workload, compiled on `saver`."""
    if side == OURS:
        return build_pro(hops, saver, None, by_function=True)
    return build_function_floor(hops, saver)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Burst:
    """One burst of concurrent runs: its wall and CPU time, and the runs that failed."""

    runs: int
    hops: int
    wall: float
    cpu: float
    errors: dict[str, int] = field(default_factory=dict)

    @property
    def cpu_ms_per_hop(self) -> float:
        """CPU ms (all threads) per hop of the burst."""
        return self.cpu * 1000 / (self.runs * self.hops)

    @property
    def wall_ms_per_hop(self) -> float:
        """Wall ms per hop of the burst (the runs overlap: ms of the burst per hop done)."""
        return self.wall * 1000 / (self.runs * self.hops)


async def burst(
    prepared: Prepared,
    threads: int,
    durability: Durability | None = None,
    profiler: cProfile.Profile | None = None,
) -> Burst:
    """`threads` runs at once on `prepared`'s graph, each verified once the clock stopped.

    A run that raises, or whose final state is not the scripted work, is an error.
    Verifying after the burst keeps the check's own work (it rebuilds the answers) out of
    the figures: the floor's check rebuilds one answer per hop, ours' one per run.
    """
    errors: dict[str, int] = {}

    def failed(exc: Exception) -> None:
        errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1

    async def run() -> Any:
        config: Any = {"configurable": {"thread_id": f"fn-{uuid.uuid4()}"}}
        payload = {"messages": [HumanMessage(content=TASK)]}
        try:
            return await prepared.graph.ainvoke(payload, config, durability=durability)
        except Exception as exc:  # every failure is counted, none stops the burst
            failed(exc)
            return None

    gc.collect()  # the last burst's garbage is not collected during this one
    if profiler is not None:
        profiler.enable()
    cpu, start = _cpu(), time.perf_counter()
    finals = await asyncio.gather(*(run() for _ in range(threads)))
    wall, cpu = time.perf_counter() - start, _cpu() - cpu
    if profiler is not None:
        profiler.disable()
    for final in finals:
        if final is None:
            continue
        try:
            prepared.check(final)
        except WorkloadError as exc:
            failed(exc)
    return Burst(runs=threads, hops=prepared.hops, wall=wall, cpu=cpu, errors=errors)


Bursts = dict[str, list[Burst]]


def measure_memory(threads: int, repeat: int, hops: int, progress: Callable[[str], None]) -> Bursts:
    """`repeat` in-memory bursts of `threads` runs per side, the sides alternating."""
    graphs = {side: build(side, hops, InMemorySaver()) for side in SIDES}

    async def main() -> Bursts:
        out: Bursts = {side: [] for side in SIDES}
        for side in SIDES:  # warm-up: first-call costs are not timed
            await burst(_fresh(graphs[side]), min(threads, 20))
        for repetition in range(repeat):
            order = SIDES if repetition % 2 == 0 else SIDES[::-1]
            progress(f"function workload, memory: burst {repetition + 1} of {repeat}")
            for side in order:
                out[side].append(await burst(_fresh(graphs[side]), threads))
        return out

    return asyncio.run(main())


def _fresh(prepared: Prepared) -> Prepared:
    """`prepared` on a new `InMemorySaver` (no burst reads the threads of another)."""
    prepared.graph.checkpointer = InMemorySaver()
    return prepared


# ------------------------------------------------------------------------------ profile


Name = tuple[str, str]
"""A function by (file suffix, name)."""
Calls = tuple[Name, tuple[Name, ...]]
"""A function's calls from the given callers (from anything but itself when empty)."""


def _any(*names: Name) -> tuple[Calls, ...]:
    return tuple((name, ()) for name in names)


@dataclass(frozen=True)
class Part:
    """A part of a hop's CPU: the calls whose cumulative time it owns.

    A node's body runs in a task of its own (LangGraph's), so its time is not inside the
    LangGraph function that awaits it: the parts follow calls, not the whole stack.
    """

    label: str
    roots: tuple[Calls, ...]
    """The calls whose cumulative time is the part's."""
    less: tuple[Calls, ...] = ()
    """Calls inside the roots whose time is another part's."""


_FUNCTION: Name = ("bench/_workload.py", "work")
"""`function_worker`'s function: the user's work, the same on both sides."""
_GRAPH_NODE: Name = ("_graph/node.py", "ainvoke")
_COMMAND: Name = ("_graph/supervisor_node.py", "_command")
_LANGGRAPH_PUT: tuple[Name, ...] = (
    ("langgraph/checkpoint/memory/__init__.py", "put"),
    ("langgraph/checkpoint/memory/__init__.py", "put_writes"),
    ("langgraph/checkpoint/postgres/aio.py", "aput"),
    ("langgraph/checkpoint/postgres/aio.py", "aput_writes"),
)
_OUR_PUT: tuple[Name, ...] = (
    ("persistence/_checkpointers.py", "aput"),
    ("persistence/_checkpointers.py", "put"),
)
_IN_OUR_PUT: tuple[Name, ...] = (*_OUR_PUT, ("_internal/twins.py", "arun"))
"""Where our saver calls LangGraph's: its base class's `aput`, the fenced put's `Call`."""

PARTS: tuple[Part, ...] = (
    Part(
        "decision: the supervisor node's body but the dispatch (intake, view, router, "
        "parse); the floor's routing node",
        (
            (("_graph/supervisor_node.py", "ainvoke"), (_GRAPH_NODE,)),
            *_any(("bench/_workload.py", "floor_route")),
        ),
        less=_any(_COMMAND),
    ),
    Part("dispatch: the route, the guards, the update (`SupervisorNode._command`)", _any(_COMMAND)),
    Part(
        "hop bookkeeping: the worker node's body but the function (the task, its config, "
        "the function's run, coerce, slot, ledger, usage recorder)",
        (
            (("_graph/worker_node.py", "ainvoke"), (_GRAPH_NODE,)),
            *_any(("bench/_workload.py", "floor_hop")),
        ),
        less=_any(_FUNCTION),
    ),
    Part("the worker's function (the user's work, the same on both sides)", _any(_FUNCTION)),
    Part(
        "synthesis (the answer, once per run; none in the floor)",
        ((("_synthesis.py", "ainvoke"), (_GRAPH_NODE,)),),
    ),
    Part(
        "LangGraph's node runs: the run it opens per node (ours with a slim trace: its "
        "callbacks twice), the node's config and writes",
        _any(("langgraph/pregel/_retry.py", "arun_with_retry")),
    ),
    Part(
        "checkpoint write: LangGraph's saver put and put_writes (serde, SQL)",
        _any(*_LANGGRAPH_PUT),
    ),
    Part(
        "fence: our saver around LangGraph's put (on Postgres the lock and the head check, "
        "one transaction; secrets kept out of the metadata)",
        _any(*_OUR_PUT),
        less=tuple((put, _IN_OUR_PUT) for put in _LANGGRAPH_PUT),
    ),
    Part(
        "channels: writes applied, checkpoints made, channels read (LangGraph's)",
        _any(
            ("langgraph/pregel/_algo.py", "apply_writes"),
            ("langgraph/pregel/_algo.py", "local_read"),
            ("langgraph/pregel/_algo.py", "_proc_input"),
            ("langgraph/pregel/_checkpoint.py", "create_checkpoint"),
            ("langgraph/pregel/_checkpoint.py", "channels_from_checkpoint"),
            ("langgraph/pregel/_checkpoint.py", "achannels_from_checkpoint"),
        ),
    ),
)
"""The parts of a hop's CPU; what no part owns is LangGraph's run loop and the rest."""

REST = "the rest: LangGraph's loop (tasks planned, checkpoints scheduled, output), asyncio"
IDLE: Name = ("~", "<method 'poll' of 'select.epoll' objects>")
"""The event loop waiting for I/O: not CPU, left out of the profiled time."""

Function = tuple[str, int, str]


def _matches(function: Function, names: Sequence[Name]) -> bool:
    filename, _, name = function
    return any(name == fn and filename.endswith(suffix) for suffix, fn in names)


def _calls(stats: Stats, calls: Sequence[Calls]) -> float:
    """Cumulative seconds of `calls` (an override calling its base counts once)."""
    total = 0.0
    for name, callers in calls:
        for function, (_, _, _, _, called_by) in stats.items():
            if not _matches(function, (name,)):
                continue
            for caller, edge in called_by.items():
                if _matches(caller, callers) if callers else not _matches(caller, (name,)):
                    total += edge[3]  # (calls, primitive calls, self time, cumulative time)
    return total


def profiled_seconds(stats: Stats) -> float:
    """The profiled seconds, the event loop's waits for I/O left out."""
    return float(sum(e[2] for f, e in stats.items() if not _matches(f, (IDLE,))))


def parts_of(stats: Stats) -> dict[str, float]:
    """The profiled seconds of each part, and of the rest (what no part owns)."""
    out: dict[str, float] = {}
    for part in PARTS:
        out[part.label] = max(0.0, _calls(stats, part.roots) - _calls(stats, part.less))
    out[REST] = max(0.0, profiled_seconds(stats) - sum(out.values()))
    return out


class _InlineExecutor(ThreadPoolExecutor):
    """Runs what is submitted at once, in the calling thread (a finished future).

    The event loop's default executor during a profiled burst: LangGraph runs a plain sync
    node there under `ainvoke` (the floor's nodes), LangChain a sync function (our function
    workers). Inline, their time is in the profiled thread, with nothing else contending
    for it; what the hand-off to a thread costs is left out of the profile.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Call `fn` now; its result or exception is the future's."""
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # the caller sees it through the future
            future.set_exception(exc)
        return future


SaverOpener = Callable[[], AbstractAsyncContextManager[BaseCheckpointSaver[Any]]]
"""Opens the checkpointer a profiled burst runs on (in the burst's event loop)."""


@asynccontextmanager
async def in_memory() -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """An `InMemorySaver`, as a `SaverOpener` gives one."""
    yield InMemorySaver()


@dataclass
class Profiled:
    """One side's profile on one store: the profiler's stats, and the CPU per hop unprofiled."""

    stats: Stats
    cpu_ms_per_hop: float
    """CPU ms per hop of a burst just like the profiled one, without the profiler."""
    errors: int
    hops: int = 1
    """Hops the profiled burst did."""

    def profiled(self) -> dict[str, float]:
        """Profiled ms per hop of each part (cProfile's own time included)."""
        return {label: value * 1000 / self.hops for label, value in parts_of(self.stats).items()}

    def parts(self) -> dict[str, float]:
        """CPU ms per hop of each part: its share of the profiled time, of the unprofiled CPU."""
        seconds = parts_of(self.stats)
        total = sum(seconds.values()) or 1.0
        return {label: self.cpu_ms_per_hop * value / total for label, value in seconds.items()}


def profile(
    side: str,
    threads: int,
    hops: int,
    saver: SaverOpener,
    durability: Durability | None,
) -> Profiled:
    """`side`'s CPU per hop by part: a warm-up burst, a burst timed, a burst profiled.

    Every node runs in the profiled thread (`_InlineExecutor`), so the floor's nodes, which
    LangGraph runs in the executor, are seen; the hand-off to a thread is left out.
    """

    async def main() -> Profiled:
        asyncio.get_running_loop().set_default_executor(_InlineExecutor())
        async with saver() as checkpointer:
            prepared = build(side, hops, checkpointer)
            await burst(prepared, min(threads, 20), durability)
            timed = await burst(prepared, threads, durability)
            profiler = cProfile.Profile()
            profiled = await burst(prepared, threads, durability, profiler)
        stats: Stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
        errors = sum(timed.errors.values()) + sum(profiled.errors.values())
        return Profiled(
            stats=stats,
            cpu_ms_per_hop=timed.cpu_ms_per_hop,
            errors=errors,
            hops=profiled.runs * profiled.hops,
        )

    return asyncio.run(main())


@dataclass(frozen=True)
class StateWork:
    """What one run asks of LangGraph's state machinery: its channels, checkpoints, writes."""

    channels: int
    """The compiled graph's channels (its state keys, and LangGraph's branch channels)."""
    checkpoints: int
    """Checkpoints the run stored (`put`)."""
    writes: int
    """Channel writes the run's tasks stored (`put_writes`), each serialized."""


class _CountingSaver(InMemorySaver):
    """An `InMemorySaver` that counts the checkpoints and writes stored through it."""

    def __init__(self) -> None:
        super().__init__()
        self.counted_checkpoints = 0
        self.counted_writes = 0

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.counted_checkpoints += 1
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        self.counted_writes += len(writes)
        super().put_writes(config, writes, task_id, task_path)


def state_work(side: str, hops: int) -> StateWork:
    """`side`'s channels, and the checkpoints and writes of one verified run (deterministic)."""
    saver = _CountingSaver()
    prepared = build(side, hops, saver)
    config: Any = {"configurable": {"thread_id": f"count-{side}"}}
    final = prepared.graph.invoke({"messages": [HumanMessage(content=TASK)]}, config)
    prepared.check(final)
    return StateWork(
        channels=len(prepared.graph.channels),
        checkpoints=saver.counted_checkpoints,
        writes=saver.counted_writes,
    )

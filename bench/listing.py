"""Reading across every thread of a database: ours against listing every checkpoint.

`lgsp runs`, the review desk (`list_reviews`, `sweep_reviews`) and `lgsp metrics --since`
read across threads. The floor is what LangGraph offers for that: `saver.list(None)`,
every checkpoint of every namespace with its blobs and writes, keeping the newest root
checkpoint of each thread (how these readers worked before); through a graph (the
sweep's reading), `graph.get_state` of every thread; for the metrics, reading every
thread's history and then keeping the `since` window. The database: `--threads`
threads of `--hops` hops of our supervisor (function workers, `durability="sync"`) on
Postgres, the first half written before the window's start and the second after it, and
one thread in ten more paused at a dispatch review (the manual tier).

Each reader runs `--repeat` times, interleaved with the floor (ours, floor, floor, ours,
...), and every run checks that both found the same threads (and, for the metrics, the
same records).

    PYTHONPATH=$PWD LGSP_POSTGRES_URI=postgresql://postgres@127.0.0.1:5432/test \\
        .venv/bin/python bench/listing.py --threads 200 --hops 20 --markdown bench/RESULTS.md

`--markdown FILE` rewrites only this benchmark's part of the results page (between its
`<!-- bench/listing.py: ... -->` markers); `bench/compare.py --markdown` keeps it.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from time import perf_counter
from typing import Any

import psycopg
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from rich.console import Console

from bench._env import run_lines
from bench._postgres import bench_database, server_version
from bench._report import Section, TextTable, fmt_times, ratio, script_part, write_part
from bench._workload import TASK, WorkloadError, build_pro, function_worker
from langgraph_supervisor_pro import (
    FINISH,
    ReviewPolicy,
    Worker,
    create_supervisor,
    open_checkpointer,
)
from langgraph_supervisor_pro._internal.twins import drive
from langgraph_supervisor_pro.cli._runs import list_runs
from langgraph_supervisor_pro.observability import read_threads
from langgraph_supervisor_pro.observability._history import History
from langgraph_supervisor_pro.observability._metrics import _records
from langgraph_supervisor_pro.persistence._thread_index import indexed_threads
from langgraph_supervisor_pro.review import list_reviews
from langgraph_supervisor_pro.review._desk import _reviews_of_snapshot, reviews_pending_at

SCRIPT = "bench/listing.py"
PAUSED_EVERY = 10
"""One more thread per this many, paused at a review (before the window), for `list_reviews`."""


@dataclass(frozen=True)
class Reader:
    """One reader and its floor; each returns the thread ids it found."""

    name: str
    ours: Callable[[BaseCheckpointSaver[Any]], list[str]]
    floor: Callable[[BaseCheckpointSaver[Any]], list[str]]


@dataclass
class Timing:
    """Seconds of each run of one reader, per side."""

    ours: list[float] = field(default_factory=list)
    floor: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class ListingFigures:
    threads: int
    hops: int
    checkpoints: int
    """Checkpoints in the database, every namespace."""
    active: int
    """Threads active since the window's start."""
    paused: int
    """Threads paused at a review."""
    timings: dict[str, Timing]
    postgres: str


def newest_by_listing(saver: BaseCheckpointSaver[Any]) -> dict[str, CheckpointTuple]:
    """The floor: `saver.list(None)`, the newest root checkpoint of each thread kept."""
    newest: dict[str, CheckpointTuple] = {}
    for item in saver.list(None):
        configurable = item.config["configurable"]
        if configurable.get("checkpoint_ns", ""):
            continue
        thread = str(configurable["thread_id"])
        held = newest.get(thread)
        if (
            held is None
            or configurable["checkpoint_id"] > held.config["configurable"]["checkpoint_id"]
        ):
            newest[thread] = item
    return newest


def readers(saver: BaseCheckpointSaver[Any], start: datetime) -> list[Reader]:
    """`lgsp runs`, `list_reviews` (alone and through a graph, as `sweep_reviews` reads)
    and the metrics since `start`, each with its floor."""

    def runs(saver: BaseCheckpointSaver[Any]) -> list[str]:
        return sorted(row.thread_id for row in list_runs(saver))

    def listed(saver: BaseCheckpointSaver[Any]) -> list[str]:
        return sorted(newest_by_listing(saver))

    def reviews(saver: BaseCheckpointSaver[Any]) -> list[str]:
        return sorted(r.thread_id for r in list_reviews(saver))

    def listed_reviews(saver: BaseCheckpointSaver[Any]) -> list[str]:
        return sorted(r.thread_id for r in reviews_pending_at(newest_by_listing(saver)))

    def metrics(saver: BaseCheckpointSaver[Any]) -> list[str]:
        return [r.thread_id for r in read_threads(saver, since=start)]

    def every_history(saver: BaseCheckpointSaver[Any]) -> list[str]:
        return [r.thread_id for r in _records(History.read(saver), start, None, None)]

    app = _paused_graph().compile(checkpointer=saver)

    def through_graph(saver: BaseCheckpointSaver[Any]) -> list[str]:
        return sorted(r.thread_id for r in list_reviews(saver, graph=app))

    def every_state(saver: BaseCheckpointSaver[Any]) -> list[str]:
        found: list[str] = []
        for thread in drive(indexed_threads(saver)):
            snapshot = app.get_state({"configurable": {"thread_id": thread}})
            found.extend(r.thread_id for r in _reviews_of_snapshot(thread, snapshot))
        return sorted(found)

    return [
        Reader("lgsp runs (list_runs)", runs, listed),
        Reader("list_reviews, every thread", reviews, listed_reviews),
        Reader("list_reviews(graph=...), as sweep_reviews", through_graph, every_state),
        Reader("read_threads(since=window)", metrics, every_history),
    ]


def _paused_graph() -> Any:
    """One function worker behind a dispatch review: a run in the manual tier pauses."""

    def router(view: Any) -> str:
        return "researcher" if not view.ledger else FINISH

    worker = Worker(name="researcher", description="Finds facts.", agent=function_worker("r"))
    return create_supervisor([worker], router=router, review=ReviewPolicy(review_timeout=900))


def pause_threads(saver: BaseCheckpointSaver[Any], names: Iterable[str]) -> None:
    """Runs paused at their first dispatch review (the manual tier)."""
    app = _paused_graph().compile(checkpointer=saver)
    for name in names:
        config: Any = {"configurable": {"thread_id": name, "autonomy": "manual"}}
        out = app.invoke({"messages": [HumanMessage(content=TASK)]}, config)
        if not out.get("__interrupt__"):
            raise WorkloadError(f"{name}: the manual-tier run did not pause at its review")


def write_threads(saver: BaseCheckpointSaver[Any], names: Iterable[str], hops: int) -> None:
    """One verified run of our supervisor per thread."""
    for name in names:
        prepared = build_pro(hops, saver, None)
        config: Any = {"configurable": {"thread_id": name}}
        final = prepared.graph.invoke(
            {"messages": [HumanMessage(content=TASK)]}, config, durability="sync"
        )
        prepared.check(final)


def _checkpoints(uri: str) -> int:
    with psycopg.connect(uri) as conn:
        row = conn.execute("SELECT count(*) FROM checkpoints").fetchone()
    return int(row[0]) if row else 0


def measure(*, threads: int = 200, hops: int = 20, repeat: int = 3) -> ListingFigures:
    """Write the database, then time every reader against its floor."""
    if threads < 2 or hops < 1 or repeat < 1:
        raise ValueError("--threads takes >= 2, --hops and --repeat >= 1")
    old = [f"old-{i:05d}" for i in range(threads // 2)]
    recent = [f"new-{i:05d}" for i in range(threads - len(old))]
    paused = [f"paused-{i:05d}" for i in range(max(1, threads // PAUSED_EVERY))]
    with bench_database() as (uri, source), open_checkpointer(uri) as saver:
        write_threads(saver, old, hops)
        pause_threads(saver, paused)
        start = datetime.now(UTC)
        write_threads(saver, recent, hops)
        timings: dict[str, Timing] = {}
        for reader in readers(saver, start):
            timing = timings.setdefault(reader.name, Timing())
            for index in range(repeat):
                order = ("ours", "floor") if index % 2 == 0 else ("floor", "ours")
                found: dict[str, list[str]] = {}
                for side in order:
                    began = perf_counter()
                    found[side] = getattr(reader, side)(saver)
                    getattr(timing, side).append(perf_counter() - began)
                if found["ours"] != found["floor"]:
                    raise WorkloadError(f"{reader.name}: ours and the floor found other threads")
        active = len(read_threads(saver, since=start))
        if active != len(recent):
            raise WorkloadError(f"{active} threads active in the window, expected {len(recent)}")
        if len(list_reviews(saver)) != len(paused):
            raise WorkloadError(f"expected {len(paused)} pending reviews")
        return ListingFigures(
            threads=threads,
            hops=hops,
            checkpoints=_checkpoints(uri),
            active=active,
            paused=len(paused),
            timings=timings,
            postgres=f"{source}, PostgreSQL {server_version(uri)}, fresh database",
        )


def _ms(seconds: Sequence[float]) -> str:
    return f"{statistics.median(seconds) * 1000:,.0f}"


def sections(figures: ListingFigures) -> list[Section]:
    """The one table: each reader's median time against its floor's."""
    rows = tuple(
        (
            name,
            _ms(t.ours),
            _ms(t.floor),
            fmt_times(ratio(statistics.median(t.ours), statistics.median(t.floor))),
        )
        for name, t in figures.timings.items()
    )
    runs = len(next(iter(figures.timings.values())).ours)
    table = TextTable(
        title=(
            f"Reading across {figures.threads} threads of {figures.hops} hops "
            f"({figures.checkpoints:,} checkpoints; {figures.active} active in the window; "
            f"{figures.paused} paused at a review)"
        ),
        headers=("reader", "ours ms", "floor ms", "ours / floor"),
        rows=rows,
        note=(
            "floor for lgsp runs and list_reviews: saver.list(None), newest root checkpoint "
            "of each thread kept; through the graph: get_state of every thread; for "
            "read_threads: every thread's history read, then the window kept. Medians of "
            f"{runs} interleaved runs."
        ),
    )
    method = (
        f"{figures.threads} threads of {figures.hops} hops of our supervisor (function "
        f"workers) on Postgres, {figures.checkpoints:,} checkpoints in all namespaces; half "
        f"written before the window's start ({figures.active} active in it) and "
        f"{figures.paused} more paused at a dispatch review. Our readers list the threads "
        "by query (500 ids per query, root namespace only) with each thread's newest root "
        "checkpoint (its inline values and pending writes, two statements per page); "
        "read_threads with since reads only the threads "
        "whose newest root checkpoint is in the window. The floor: LangGraph's "
        "saver.list(None), every checkpoint of the database, the newest root checkpoint of "
        "each thread kept; through the graph, graph.get_state of every thread (how the "
        "sweep read before); for read_threads, every thread's history read, then the window "
        f"kept. Medians of {runs} runs, the sides interleaved; each run checks that both "
        "sides found the same threads (the same reviews, the same records)."
    )
    return [Section(title="Listing: reading across threads", table=table, method=method)]


def page_part(figures: ListingFigures, markdown: Path | None) -> str:
    """This benchmark's part of the results page."""
    header = [
        *run_lines(SCRIPT, markdown),
        f"packages: langgraph {version('langgraph')}, langgraph-checkpoint-postgres "
        f"{version('langgraph-checkpoint-postgres')}",
        f"postgres: {figures.postgres}",
    ]
    return script_part(
        "Listing threads (bench/listing.py)", SCRIPT, header, sections(figures), subsections=True
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Measure, print the table, and write the results page's part when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--hops", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.threads < 2 or args.hops < 1 or args.repeat < 1:
        parser.error("--threads takes >= 2, --hops and --repeat >= 1")
    figures = measure(threads=args.threads, hops=args.hops, repeat=args.repeat)
    console = Console(width=200)
    for section in sections(figures):
        console.print(section.table.to_rich())
    if args.markdown is not None:
        write_part(args.markdown, SCRIPT, page_part(figures, args.markdown))
        console.print(f"Listing section written to {args.markdown}")


if __name__ == "__main__":
    main()

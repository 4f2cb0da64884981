"""Fan-out wall time: three parallel branches against one branch, and against the floor.

Each branch's worker waits `--sleep` seconds (200 ms by default, a stand-in for a model
call: `asyncio.sleep` in async runs, `time.sleep` in sync runs, where LangGraph runs the
branches on its thread pool). Measured, median of `--repeat` runs, InMemorySaver:

- ours, one branch: a router sends one worker, then FINISH;
- ours, three branches: `create_supervisor(parallel=True)`, a router returns three workers;
- ours, three hops one after the other (what a supervisor without fan-out does);
- the floor: a bare LangGraph graph that `Send`s the same three workers at once.

Target (issue 8): three branches finish within 1.2x of one branch.

    PYTHONPATH=$PWD .venv/bin/python bench/fanout.py --repeat 5 --markdown bench/RESULTS.md

`--markdown FILE` rewrites only this benchmark's part of the results page (between its
`<!-- bench/fanout.py: ... -->` markers); `bench/compare.py --markdown` keeps it.
"""

from __future__ import annotations

import argparse
import asyncio
import operator
import statistics
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any

from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from rich.console import Console
from typing_extensions import TypedDict

from bench._env import run_lines
from bench._report import (
    Section,
    Target,
    TextTable,
    fmt_ms,
    fmt_times,
    ratio,
    script_part,
    write_part,
)
from langgraph_supervisor_pro import SupervisorView, Worker, create_supervisor

BRANCHES = ("prices", "reviews", "specs")


@dataclass(frozen=True)
class FanoutFigures:
    """Median wall-clock seconds per run, by configuration and driver."""

    sleep: float
    repeat: int
    seconds: dict[tuple[str, str], float]


def _worker(name: str, sleep: float) -> Worker:
    """A worker that waits `sleep` seconds: `time.sleep` under invoke, `asyncio.sleep` under
    ainvoke (a Runnable agent, given the worker's messages)."""

    def work(payload: Any) -> str:
        time.sleep(sleep)
        return f"{name} done."

    async def awork(payload: Any) -> str:
        await asyncio.sleep(sleep)
        return f"{name} done."

    return Worker(
        name=name, description=f"Looks up {name}.", agent=RunnableLambda(work, afunc=awork)
    )


def _ours(sleep: float, plan: str) -> Any:
    def router(view: SupervisorView) -> Any:
        done = len(view.ledger)
        if plan == "one":
            return "FINISH" if done else BRANCHES[0]
        if plan == "fan-out":
            return "FINISH" if done else list(BRANCHES)
        return BRANCHES[done] if done < len(BRANCHES) else "FINISH"

    workers = [_worker(name, sleep) for name in BRANCHES]
    return create_supervisor(workers, router=router, parallel=True).compile(
        checkpointer=InMemorySaver()
    )


class _FloorState(TypedDict):
    done: Annotated[list[str], operator.add]


def _floor(sleep: float) -> Any:
    """A bare LangGraph graph that sends the three workers at once (no supervision)."""

    def fan(state: _FloorState) -> list[Send]:
        return [Send(name, state) for name in BRANCHES]

    graph: StateGraph[_FloorState, None, _FloorState, _FloorState] = StateGraph(_FloorState)
    for name in BRANCHES:

        def work(state: _FloorState, name: str = name) -> dict[str, list[str]]:
            time.sleep(sleep)
            return {"done": [name]}

        async def awork(state: _FloorState, name: str = name) -> dict[str, list[str]]:
            await asyncio.sleep(sleep)
            return {"done": [name]}

        graph.add_node(name, RunnableLambda(work, afunc=awork, name=name))
        graph.add_edge(name, END)
    graph.add_conditional_edges(START, fan, list(BRANCHES))
    return graph.compile(checkpointer=InMemorySaver())


def _config() -> dict[str, Any]:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def _check(out: dict[str, Any], plan: str) -> None:
    if plan == "floor":
        if sorted(out["done"]) != sorted(BRANCHES):
            raise AssertionError(f"the floor ran {out['done']}")
        return
    expected = [BRANCHES[0]] if plan == "one" else list(BRANCHES)
    got = [e["worker"] for e in out["ledger"]]
    if out["status"] != "done" or got != expected:
        raise AssertionError(f"{plan}: status {out['status']}, ledger {got}")


def measure(*, sleep: float = 0.2, repeat: int = 5) -> FanoutFigures:
    """Run every configuration `repeat` times with both drivers; medians in seconds."""
    graphs = {
        "one": _ours(sleep, "one"),
        "fan-out": _ours(sleep, "fan-out"),
        "serial": _ours(sleep, "serial"),
        "floor": _floor(sleep),
    }
    inputs: dict[str, dict[str, Any]] = {
        plan: ({"done": []} if plan == "floor" else {"messages": [("user", "Compare phones")]})
        for plan in graphs
    }
    seconds: dict[tuple[str, str], float] = {}
    for plan, graph in graphs.items():
        for driver in ("sync", "async"):
            times = []
            for _ in range(repeat + 1):  # the first run warms up
                start = time.perf_counter()
                if driver == "sync":
                    out = graph.invoke(inputs[plan], _config())
                else:
                    out = asyncio.run(graph.ainvoke(inputs[plan], _config()))
                times.append(time.perf_counter() - start)
                _check(out, plan)
            seconds[(plan, driver)] = statistics.median(times[1:])
    return FanoutFigures(sleep=sleep, repeat=repeat, seconds=seconds)


def sections(figures: FanoutFigures) -> list[Section]:
    """The fan-out section of the results page."""
    s = figures.seconds
    rows = []
    for driver in ("sync", "async"):
        one, fan = s[("one", driver)], s[("fan-out", driver)]
        rows.append(
            (
                driver,
                fmt_ms(one * 1000),
                fmt_ms(fan * 1000),
                fmt_ms(s[("serial", driver)] * 1000),
                fmt_ms(s[("floor", driver)] * 1000),
                fmt_times(ratio(fan, one)),
                fmt_times(ratio(fan, s[("floor", driver)])),
            )
        )
    table = TextTable(
        "Fan-out wall time (ms per run)",
        (
            "driver",
            "ours, 1 branch",
            "ours, 3 branches",
            "ours, 3 hops in a row",
            "floor: bare Send x3",
            "3 branches / 1",
            "ours / floor",
        ),
        tuple(rows),
    )
    targets = tuple(
        Target(
            f"fan-out: 3 branches within 1.2x of 1 branch ({driver})",
            ratio(s[("fan-out", driver)], s[("one", driver)]),
            1.2,
            f"ours, 3 branches / ours, 1 branch; workers sleep {figures.sleep * 1000:.0f} ms",
        )
        for driver in ("sync", "async")
    )
    method = (
        f"each branch's worker sleeps {figures.sleep * 1000:.0f} ms (`asyncio.sleep` under "
        "`ainvoke`, `time.sleep` under `invoke`, where LangGraph runs parallel tasks on its "
        "thread pool); a deterministic router; InMemorySaver; wall-clock of one run, median "
        f"of {figures.repeat} after a warm-up run; every run is checked (status, ledger). "
        "'3 hops in a row' is the same three workers routed one after the other; the floor "
        "is a bare LangGraph graph that `Send`s the three workers at once. "
        "langgraph-supervisor is not shown: its parallel handoffs (several handoff tool "
        "calls in one message) are not a supported way to run workers at once."
    )
    return [Section("Fan-out: wall time", table, method, targets)]


SCRIPT = "bench/fanout.py"


def page_part(figures: FanoutFigures, markdown: Path | None) -> str:
    """This benchmark's part of the results page."""
    parts = sections(figures)
    header = [
        *run_lines(SCRIPT, markdown),
        f"packages: langgraph {version('langgraph')}, langchain-core {version('langchain-core')}",
    ]
    return script_part("Parallel fan-out (bench/fanout.py)", SCRIPT, header, parts)


def main(argv: Sequence[str] | None = None) -> None:
    """Measure, print the fan-out tables, and write the results page's part when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sleep", type=float, default=0.2)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args(argv)
    figures = measure(sleep=args.sleep, repeat=args.repeat)
    console = Console()
    for section in sections(figures):
        console.print(section.table.to_rich())
        for target in section.targets:
            console.print(f"{target.verdict}: {target.statement}: {target.measured:.3f}")
    if args.markdown is not None:
        write_part(args.markdown, SCRIPT, page_part(figures, args.markdown))
        console.print(f"Fan-out section written to {args.markdown}")


if __name__ == "__main__":
    main()

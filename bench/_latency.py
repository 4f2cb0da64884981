"""The latency workload: every model call takes `latency` s +/- jitter (simulated).

Two measurements, every model a `TimedModel` (`bench/_scale_workload.py`) whose sleep
is logged, one run at a time, in memory:

- serial: the comparison's workload (H hops round-robin, then FINISH) with
  `create_react_agent` workers, ours and the floor; per run, wall time against the
  sum of the model time it logged (ours: H + 1 supervisor calls and H worker calls;
  the floor: the H worker calls, it has no supervisor model);
- fan-out: `create_supervisor(parallel=True)`, whose first decision sends the three
  workers at once, then FINISH. The fan-out step's time is the run's wall time minus
  its two supervisor calls' model time; it is judged against the slowest branch's
  model time (target: within 1.2x).

Both with `ainvoke` (asyncio.sleep in the models) and `invoke` (time.sleep; LangGraph
runs a step's parallel tasks on its thread pool).
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from bench._scale_workload import TimedModels, served_models
from bench._workload import (
    AGENT_FACTORIES,
    TASK,
    WORKER_NAMES,
    WORKERS,
    Prepared,
    WorkloadError,
    build_floor,
    build_pro,
    visits,
)
from langgraph_supervisor_pro import Worker, create_supervisor

DRIVERS = ("async", "sync")
SERIAL_SIDES = ("ours", "floor")


@dataclass
class LatencyRuns:
    """Per run: wall seconds, logged model seconds, and for fan-out the slowest branch.

    `model` is the run's model time on its critical path: every call's for the serial
    runs; for fan-out, the supervisor's calls and the slowest branch's (the branches
    overlap).
    """

    wall: list[float] = field(default_factory=list)
    model: list[float] = field(default_factory=list)
    slowest_branch: list[float] = field(default_factory=list)
    supervisor: list[float] = field(default_factory=list)
    """Model seconds of the supervisor's calls (fan-out)."""

    def ratio(self) -> list[float]:
        """Wall / model time of each run."""
        return [w / m for w, m in zip(self.wall, self.model, strict=True)]

    def steps(self) -> list[float]:
        """Wall - supervisor model time of each fan-out run: the fan-out step's seconds."""
        return [w - s for w, s in zip(self.wall, self.supervisor, strict=True)]

    def step_ratio(self) -> list[float]:
        """(Wall - supervisor model time) / slowest branch of each fan-out run."""
        return [s / b for s, b in zip(self.steps(), self.slowest_branch, strict=True)]


LatencyFigures = dict[tuple[str, str], LatencyRuns]
"""By (workload: 'ours', 'floor' or 'fan-out', driver)."""


def _invoke(graph: Any, driver: str) -> tuple[dict[str, Any], float]:
    config: Any = {"configurable": {"thread_id": f"latency-{uuid.uuid4()}"}}
    payload = {"messages": [HumanMessage(content=TASK)]}
    start = time.perf_counter()
    if driver == "async":
        final = asyncio.run(graph.ainvoke(payload, config))
    else:
        final = graph.invoke(payload, config)
    return final, time.perf_counter() - start


def _serial(side: str, hops: int, models: TimedModels, agent: str, driver: str) -> Prepared:
    factory = AGENT_FACTORIES[agent]
    if side == "ours":
        return build_pro(hops, InMemorySaver(), factory, models=models.served)
    return build_floor(
        hops, InMemorySaver(), factory, models=models.served, asynchronous=driver == "async"
    )


def _fan_out(models: TimedModels, agent: str) -> Any:
    factory = AGENT_FACTORIES[agent]
    workers = [
        Worker(name=name, description=description, agent=factory(models.workers[name], name))
        for name, description in WORKERS
    ]
    builder = create_supervisor(workers, model=models.supervisor, max_steps=3, parallel=True)
    return builder.compile(checkpointer=InMemorySaver())


def _check_fan_out(final: dict[str, Any]) -> None:
    got = sorted(entry["worker"] for entry in final.get("ledger") or [])
    if final.get("status") != "done" or got != sorted(WORKER_NAMES):
        raise WorkloadError(f"fan-out: status {final.get('status')!r}, ledger {got}")


def measure(
    *,
    hops: int,
    repeat: int,
    latency: float,
    jitter: float,
    agent: str,
    progress: Callable[[str], None],
) -> LatencyFigures:
    """`repeat` verified runs of each workload and driver, after one warm-up run each."""
    figures: LatencyFigures = {}
    for driver in DRIVERS:
        for side in SERIAL_SIDES:
            models = served_models(latency=latency, jitter=jitter)
            prepared = _serial(side, hops, models, agent, driver)
            runs = figures.setdefault((side, driver), LatencyRuns())
            for repetition in range(repeat + 1):
                progress(f"latency: {side}, {driver}, run {repetition} of {repeat}")
                models.clear()
                final, wall = _invoke(prepared.graph, driver)
                prepared.check(final)
                _check_calls(models, visits(hops), hops + 1 if side == "ours" else 0)
                if repetition:  # the first run warms up
                    runs.wall.append(wall)
                    runs.model.append(_logged(models))
        models = served_models(latency=latency, jitter=jitter, fan_out=True)
        graph = _fan_out(models, agent)
        runs = figures.setdefault(("fan-out", driver), LatencyRuns())
        for repetition in range(repeat + 1):
            progress(f"latency: fan-out, {driver}, run {repetition} of {repeat}")
            models.clear()
            final, wall = _invoke(graph, driver)
            _check_fan_out(final)
            _check_calls(models, dict.fromkeys(WORKER_NAMES, 1), 2)
            if repetition:
                runs.wall.append(wall)
                supervisor = sum(models.supervisor.slept())
                slowest = max(sum(m.slept()) for m in models.workers.values())
                runs.model.append(supervisor + slowest)  # the critical path's model time
                runs.supervisor.append(supervisor)
                runs.slowest_branch.append(slowest)
    return figures


def _check_calls(models: TimedModels, workers: dict[str, int], supervisor: int) -> None:
    """Each model was called as often as the workload says (every call is logged)."""
    calls = {name: len(model.slept()) for name, model in models.workers.items()}
    decisions = len(models.supervisor.slept())
    if calls != workers or decisions != supervisor:
        raise WorkloadError(
            f"latency: worker model calls {calls} and {decisions} supervisor calls, "
            f"expected {workers} and {supervisor}"
        )


def _logged(models: TimedModels) -> float:
    return sum(sum(m.slept()) for m in (models.supervisor, *models.workers.values()))


def median(values: list[float]) -> float:
    """The median (NaN for none)."""
    return statistics.median(values) if values else float("nan")

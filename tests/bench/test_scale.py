"""bench/scale.py runs end to end in its --quick configuration; its throughput cells count
errors, stuck runs and connections (figures are not judged here)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console

from bench._per_hop import BY_FUNCTION, FLOOR, OURS, ROUTED, Timing
from bench._report import blocks
from bench._throughput import Burst, Cell, measure
from bench._workload import WorkloadError
from bench.scale import by_function_per_hop_section, main, parse_args, run_bench, run_child
from langgraph_supervisor_pro import open_checkpointer


def test_a_burst_reads_latency_quantiles_by_nearest_rank_and_round_trips_as_json():
    burst = Burst(side="ours", size=4, hops=2, seconds=2.0, latencies=[0.5, 2.0, 1.0, 1.5])
    assert (burst.latency(0.5), burst.latency(0.99), burst.latency(0.0)) == (1.0, 2.0, 0.5)
    assert burst.hops_per_second == 4.0 and burst.done == 4
    assert Burst.from_json(burst.to_json()) == burst
    empty = Burst(side="ours", size=1, hops=1, seconds=0.0)
    assert empty.hops_per_second == 0.0 and empty.latency(0.5) != empty.latency(0.5)  # NaN


@pytest.mark.parametrize(
    "argv",
    [["--sizes", "0"], ["--sizes", "x"], ["--per-hop-hops", "12"], ["--jitter", "1"]],
)
def test_bad_arguments_exit_2(argv):
    with pytest.raises(SystemExit) as exited:
        parse_args(argv)
    assert exited.value.code == 2


@pytest.mark.integration
def test_a_burst_on_a_one_connection_pool_finishes_every_run_without_error(pg_database):
    with open_checkpointer(pg_database):
        pass  # the migrations, as the parent runs them
    for side in ("ours", "floor", "routed floor"):
        cell = Cell(
            uri=pg_database,
            side=side,
            size=6,
            hops=2,
            pool_size=1,
            durability="sync",
            timeout=120,
        )
        burst = asyncio.run(measure(cell))
        assert burst.errors == {} and burst.done == 6
        assert burst.pool_max == 1 and burst.pool_open_peak == 1
        assert 1 <= burst.backends_peak <= 1 + 1  # the pool's, and at most one leaving
        assert burst.peak_rss_kib >= burst.base_rss_kib > 0


@pytest.mark.integration
def test_runs_still_going_at_the_deadline_are_counted_as_errors(pg_database):
    with open_checkpointer(pg_database):
        pass
    cell = Cell(
        uri=pg_database, side="ours", size=3, hops=2, pool_size=2, durability="sync", timeout=1e-6
    )
    burst = asyncio.run(measure(cell))
    assert burst.errors == {"timeout": 3} and burst.done == 0 and burst.seconds == 1e-6


def test_a_child_that_cannot_measure_is_a_workload_error_naming_the_cell():
    cell = Cell(
        uri="bogus://nowhere",
        side="floor",
        size=2,
        hops=1,
        pool_size=1,
        durability="sync",
        timeout=5,
    )
    with pytest.raises(WorkloadError, match="the floor burst of 2 threads failed"):
        run_child(cell)


def _quick_page(tmp_path: Path, *args: str) -> tuple[Path, str]:
    """Run `main(--quick, *args)` into a page that holds other text; the page and our block."""
    page = tmp_path / "RESULTS.md"
    page.write_text("# Results\n\nkept as it was\n")
    assert main([*args, "--quick", "--markdown", str(page)]) == 0
    text = page.read_text()
    assert text.startswith("# Results\n\nkept as it was\n")
    (part,) = blocks(text).values()
    return page, part


@pytest.mark.integration
def test_the_quick_bench_writes_every_section_and_only_its_part_of_the_page(
    tmp_path, postgres_uri, monkeypatch
):
    monkeypatch.setenv("LGSP_POSTGRES_URI", postgres_uri)
    page, part = _quick_page(tmp_path)
    for heading in (
        "## Scale on one machine (bench/scale.py)",
        "## Scale: throughput, N threads at once on one async pool",
        "## Scale: memory, connections and CPU of the bursts",
        "## Scale: throughput against the same work by hand (the routed floor)",
        "## Scale: per-hop overhead of one run",
        "## Scale: per hop against the same work by hand (the routed floor)",
        "## Scale: per hop, both sides deciding by a function (the orchestration alone)",
        "## Scale: where a hop's time goes",
        "## Scale: what grows with the hop count",
        "## Scale: latency workload (simulated model time)",
    ):
        assert heading in part
    assert "| throughput at 4 threads within 1.3x of the floor" in part
    assert "| no failed or stuck run, at any size, on either side (limit <= 0) | 0.000" in part
    assert "| per hop at 4 hops (pg) <= 1.3x the floor" in part
    assert "| fan-out (async): the 3-branch step within 1.2x of its slowest branch" in part
    assert "| threads | ours hops/s | routed floor hops/s | routed/ours |" in part
    assert "| hops | store | ours ms/hop | routed floor ms/hop | ours/routed |" in part
    assert "| per hop at 4 hops (mem), both sides deciding by a function, <= 1.3x" in part
    assert "commit measured:" in part and "pool_size=10" in part
    assert main(["--quick", "--section", "latency", "--markdown", str(page)]) == 0
    assert page.read_text().count("## Scale on one machine") == 1  # replaced, not added


def test_the_latency_section_needs_no_postgres(monkeypatch):
    monkeypatch.delenv("LGSP_POSTGRES_URI", raising=False)
    out = io.StringIO()
    parts = run_bench(parse_args(["--quick", "--section", "latency"]), Console(file=out))
    assert [p.title for p in parts] == ["Scale: latency workload (simulated model time)"]
    assert "fan-out (sync)" in out.getvalue()


def test_the_by_function_section_compares_it_with_the_floor_and_prices_the_model_call():
    settings = parse_args(["--per-hop-hops", "12,48"])
    timings = {
        (side, "mem", hops): Timing(wall=[ms * hops / 12] * 3, cpu=[ms] * 3)
        for side, ms in ((OURS, 7.0), (BY_FUNCTION, 6.0), (FLOOR, 5.0), (ROUTED, 7.5))
        for hops in (12, 48)
    }
    (section,) = by_function_per_hop_section(timings, settings)
    first = section.table.rows[0]
    assert first[:5] == ("12", "mem", "6.00 (6.00-6.00)", "5.00 (5.00-5.00)", "1.20x")
    assert first[-1] == "1.00"  # ours - ours by function: the model call per hop
    assert section.table.rows[1][-1] == "4.00"  # 28 - 24 ms per hop at 48 hops
    assert [t.measured for t in section.targets] == [1.2, 1.2]
    assert [t.met for t in section.targets] == [True, True]
    del timings[(BY_FUNCTION, "mem", 48)]  # not measured (an older run): no section
    assert by_function_per_hop_section(timings, settings) == []


@pytest.mark.integration
def test_the_quick_function_workload_writes_its_part_beside_the_agent_ones(
    tmp_path, postgres_uri, monkeypatch
):
    monkeypatch.setenv("LGSP_POSTGRES_URI", postgres_uri)
    page, part = _quick_page(tmp_path, "--workload", "function")
    for heading in (
        "## Scale on one machine, function workers (bench/scale.py --workload function)",
        "## Function workers: CPU per hop in memory, 4 threads at once",
        "## Function workers: N threads at once on one async Postgres pool",
        "## Function workers: where a hop's CPU goes",
        "## Function workers: where the remaining cost goes",
        "## Function workers: state work per run (2 hops)",
    ):
        assert heading in part, heading
    assert "| no failed run in memory (limit <= 0) | 0.000" in part
    assert (
        "| no failed or stuck run on Postgres, at any size, on either side (limit <= 0) | 0.000"
        in part
    )
    for part_name in ("decision", "dispatch", "hop bookkeeping", "checkpoint write", "fence"):
        assert f"| {part_name}" in part
    # The agent workload's part of the page is another block, left as it was.
    assert main(["--workload", "function", "--quick", "--markdown", str(page)]) == 0
    assert page.read_text().count("## Scale on one machine, function workers") == 1


def test_the_state_work_counts_each_sides_channels_checkpoints_and_writes():
    from bench._function_workload import state_work

    floor, ours = state_work("floor", 6), state_work("ours", 6)
    # The floor: START, route and three workers' branch channels, hop, slots, answers,
    # messages; one checkpoint per super-step; per hop its route and its worker's writes.
    assert (floor.channels, floor.checkpoints, floor.writes) == (10, 15, 33)
    assert ours.channels > floor.channels and ours.writes > floor.writes
    assert ours.checkpoints == floor.checkpoints + 1  # the synthesis step

"""bench/storage.py runs end to end in a tiny configuration, and writes only its part."""

from __future__ import annotations

import os

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from bench._report import blocks, put_block
from bench.storage import (
    LOADS,
    build_ours,
    delta_frequencies,
    main,
    measure,
    measure_snapshots,
    sections,
    snapshot_frequency,
    snapshot_sections,
)
from langgraph_supervisor_pro._state import DELTA_SNAPSHOT_FREQUENCY
from tests.bench._pages import OTHER_PAGE

pytestmark = pytest.mark.integration


def test_the_storage_bench_samples_every_graph_and_judges_ours(server):
    figures = measure(hops=6, every=3)
    assert set(figures.series) == {"ours", "ours, kept", "floor"}
    for series in figures.series.values():
        assert [s.hops for s in series.samples] == [0, 3, 6]
        assert series.last.root > 0
    assert figures.series["ours"].last.subgraphs == 0
    kept = figures.series["ours, kept"]
    assert kept.per_hop(3, 6)[1] > kept.per_hop(0, 3)[1] > 0  # the agents' bytes grow
    ranges, totals = sections(figures)
    assert [row[0] for row in ranges.table.rows] == ["1-3", "4-6"]
    assert [t.met for t in ranges.targets] == [True, True]  # hops 41-60: not at 6 hops
    assert [row[0] for row in totals.table.rows] == ["ours", "ours, kept", "floor"]


def test_the_storage_bench_refuses_ranges_that_do_not_fit():
    with pytest.raises(ValueError, match="multiple of --every"):
        measure(hops=7, every=3)


def test_the_storage_bench_writes_only_its_part_of_the_page(server, tmp_path):
    assert os.environ["LGSP_POSTGRES_URI"] == server
    page = tmp_path / "RESULTS.md"
    page.write_text(put_block(OTHER_PAGE, "bench/storage.py", "## Storage\n\nstale"))
    main(["--hops", "2", "--every", "2", "--graph", "ours", "--markdown", str(page)])
    text = page.read_text()
    assert text.startswith(OTHER_PAGE.rstrip("\n"))
    (part,) = blocks(text).values()
    assert "stale" not in part and "## Storage with tool-calling agents" in part
    assert "flat to 2 hops" in part and "Targets met: 2 of 2." in part


def test_the_snapshot_comparison_builds_each_frequency_and_times_each_read(server):
    figures = measure_snapshots(points=(3, 6), every=3, frequencies=(2, 1000), repeat=1)
    often, rarely = figures.replays[2], figures.replays[1000]
    # ledger, workers and usage (every hop records its model calls)
    assert often[6].seeds == 3 and often[6].writes < rarely[6].writes
    assert rarely[6].seeds == 0 and rarely[6].writes == 3 * 6  # one write each per hop
    assert rarely[6].nbytes > rarely[3].nbytes > 0
    for frequency in (2, 1000):
        series = figures.series[frequency]
        assert [s.hops for s in series.samples] == [0, 3, 6]
        assert set(figures.loads[frequency]) == {3, 6}
        assert all(ms > 0 for ms in figures.loads[frequency][6].values())
    ranges, loads = snapshot_sections(figures)
    assert [row[0] for row in ranges.table.rows] == ["1-3", "4-6"]
    assert len(loads.table.rows) == 2 * (len(LOADS) + 1)
    assert [len(ranges.targets), len(loads.targets)] == [1, 1]


def test_the_snapshot_frequency_is_set_for_the_block_only():
    with snapshot_frequency(7):
        assert delta_frequencies(build_ours(2, InMemorySaver())) == {7}
    assert delta_frequencies(build_ours(2, InMemorySaver())) == {DELTA_SNAPSHOT_FREQUENCY}
    with pytest.raises(ValueError, match="positive int"), snapshot_frequency(0):
        pass


def test_the_snapshot_comparison_refuses_points_and_repeats_that_do_not_fit():
    with pytest.raises(ValueError, match="increasing multiples of --every"):
        measure_snapshots(points=(4,), every=3)
    with pytest.raises(ValueError, match="increasing multiples of --every"):
        measure_snapshots(points=(6, 3), every=3)
    with pytest.raises(ValueError, match="--snapshot-repeat"):
        measure_snapshots(points=(3,), every=3, repeat=0)
    with pytest.raises(SystemExit):
        main(["--snapshot-points", "100,many"])


def test_the_storage_bench_writes_the_snapshot_comparison_when_asked(server, tmp_path):
    page = tmp_path / "RESULTS.md"
    run = ["--hops", "2", "--every", "2", "--graph", "ours"]
    compare = ["--snapshot-points", "2", "--snapshot-repeat", "1"]
    main([*run, *compare, "--markdown", str(page)])
    (part,) = blocks(page.read_text()).values()
    assert "### Storage: loading the thread, by snapshot frequency" in part
    assert f"every {DELTA_SNAPSHOT_FREQUENCY:,}" in part and "2: new turn" in part
    assert "of 4." in part

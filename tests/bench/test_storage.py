"""bench/storage.py runs end to end in a tiny configuration, and writes only its part."""

from __future__ import annotations

import os

import pytest

from bench._report import blocks, put_block
from bench.storage import main, measure, sections

OTHER = "# Benchmark results\n\n## Comparison\n\n| hops | ms |\n|:---|---:|\n| 6 | 1.00 |\n"

pytestmark = pytest.mark.integration


@pytest.fixture
def server(postgres_uri, monkeypatch):
    monkeypatch.setenv("LGSP_POSTGRES_URI", postgres_uri)
    return postgres_uri


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
    page.write_text(put_block(OTHER, "bench/storage.py", "## Storage\n\nstale"))
    main(["--hops", "2", "--every", "2", "--graph", "ours", "--markdown", str(page)])
    text = page.read_text()
    assert text.startswith(OTHER.rstrip("\n"))
    (part,) = blocks(text).values()
    assert "stale" not in part and "## Storage with tool-calling agents" in part
    assert "flat to 2 hops" in part and "Targets met: 2 of 2." in part

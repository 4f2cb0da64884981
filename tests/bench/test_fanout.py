"""The fan-out benchmark runs end to end (tiny settings; figures are not judged here)."""

from __future__ import annotations

from bench.fanout import measure, sections


def test_the_fan_out_bench_runs_and_checks_every_run():
    figures = measure(sleep=0.001, repeat=1)
    assert set(figures.seconds) == {
        (plan, driver)
        for plan in ("one", "fan-out", "serial", "floor")
        for driver in ("sync", "async")
    }
    (section,) = sections(figures)
    assert [row[0] for row in section.table.rows] == ["sync", "async"]
    assert len(section.targets) == 2 and all(t.measured is not None for t in section.targets)

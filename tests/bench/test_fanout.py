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


def test_the_fan_out_bench_writes_only_its_part_of_the_results_page(tmp_path):
    from bench.fanout import main

    page = tmp_path / "RESULTS.md"
    page.write_text("# Results\n\nkept as it was\n")
    main(["--repeat", "1", "--sleep", "0.001", "--markdown", str(page)])
    text = page.read_text()
    assert text.startswith("# Results\n\nkept as it was\n")
    assert "<!-- bench/fanout.py: begin -->" in text and "## Parallel fan-out" in text
    main(["--repeat", "1", "--sleep", "0.001", "--markdown", str(page)])
    assert page.read_text().count("## Parallel fan-out") == 1

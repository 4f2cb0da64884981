"""bench/listing.py runs end to end in a tiny configuration, and writes only its part."""

from __future__ import annotations

import pytest

from bench._report import blocks, put_block
from bench.listing import SCRIPT, main, measure, newest_by_listing, sections, write_threads
from langgraph_supervisor_pro import open_checkpointer
from tests.bench._pages import OTHER_PAGE

pytestmark = pytest.mark.integration


def test_every_reader_is_timed_against_its_floor_and_finds_the_same_threads(server):
    figures = measure(threads=4, hops=2, repeat=2)
    assert (figures.threads, figures.hops, figures.active, figures.paused) == (4, 2, 2, 1)
    assert figures.checkpoints > 4 * 2 * 2
    assert set(figures.timings) == {
        "lgsp runs (list_runs)",
        "list_reviews, every thread",
        "list_reviews(graph=...), as sweep_reviews",
        "read_threads(since=window)",
    }
    for timing in figures.timings.values():
        assert len(timing.ours) == len(timing.floor) == 2
        assert all(t > 0 for t in (*timing.ours, *timing.floor))
    (section,) = sections(figures)
    assert [row[0] for row in section.table.rows] == list(figures.timings)


def test_the_floor_keeps_each_threads_newest_root_checkpoint(pg_database):
    with open_checkpointer(pg_database) as saver:
        write_threads(saver, ["a", "b"], 2)
        newest = newest_by_listing(saver)
        assert sorted(newest) == ["a", "b"]
        for thread, item in newest.items():
            head = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            assert head is not None and item.config == head.config


def test_the_markdown_part_replaces_only_its_own_block(server, tmp_path):
    page = tmp_path / "RESULTS.md"
    page.write_text(OTHER_PAGE)
    main(["--threads", "2", "--hops", "1", "--repeat", "1", "--markdown", str(page)])
    text = page.read_text()
    assert text.startswith(OTHER_PAGE.rstrip())
    (part,) = [v for k, v in blocks(text).items() if k == SCRIPT]
    assert "Listing threads (bench/listing.py)" in part and "lgsp runs (list_runs)" in part
    assert put_block(text, SCRIPT, part) == text


@pytest.mark.parametrize("argv", [["--threads", "1"], ["--hops", "0"], ["--repeat", "0"]])
def test_bad_sizes_are_refused(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "--threads takes >= 2" in capsys.readouterr().err

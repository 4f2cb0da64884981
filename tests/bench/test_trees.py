"""bench/trees.py runs end to end in a tiny configuration, and writes only its part of a page."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench._report import blocks, put_block
from tests.bench._pages import OTHER_PAGE

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, postgres_uri: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("LGSP_POSTGRES_URI", None)
    if postgres_uri is not None:
        env["LGSP_POSTGRES_URI"] = postgres_uri
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "trees.py"), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.mark.integration
def test_the_tree_bench_runs_end_to_end_on_postgres(tmp_path, postgres_uri):
    page = tmp_path / "RESULTS.md"
    page.write_text(put_block(OTHER_PAGE, "bench/trees.py", "## Trees of supervisors\n\nstale"))
    tiny = ["--repeat", "1", "--hops", "2", "--max-depth", "2", "--leaves", "6", "12"]
    done = _run(tmp_path, postgres_uri, *tiny, "--markdown", str(page))
    assert done.returncode == 0, done.stdout + done.stderr
    text = page.read_text()
    assert text.startswith(OTHER_PAGE.rstrip("\n"))  # the rest of the page is kept
    (part,) = blocks(text).values()
    assert "stale" not in part
    for heading in (
        "## Trees of supervisors (bench/trees.py)",
        "## Trees: Root supervisor tokens per decision",
        "## Trees: ms per leaf hop by depth",
        "## Trees: Where a level's time goes (depth 2), by library",
        "## Trees: Where a level's time goes (depth 2), selected calls",
    ):
        assert heading in part
    assert "commit measured:" in part and "PostgreSQL" in part
    assert "the tree root's prompt does not grow with leaf workers: 12 / 6 leaves" in part
    assert "| level 2 (mem) costs <= 1.3x the floor's level" in part
    assert "| level 2 (pg) costs <= 1.3x the floor's level" in part
    # The prompt target is exact: the tree root's prompt is the same at 6 and 12 leaves.
    assert "| 1.000 (tree root, mean tokens per decision + schema" in part


def test_without_postgres_it_says_so_and_bad_arguments_exit_2(tmp_path):
    tiny = ["--repeat", "1", "--hops", "1", "--max-depth", "2", "--leaves", "3", "--no-profile"]
    done = _run(tmp_path, None, *tiny)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "LGSP_POSTGRES_URI is not set" in done.stdout
    assert "level 2 (mem)" in done.stdout and "(pg)" not in done.stdout
    assert _run(tmp_path, None, "--leaves", "7").returncode == 2

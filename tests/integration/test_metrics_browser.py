"""`lgsp metrics --html` in a real headless Chromium: the page of real runs (SQLite and
Postgres), screenshotted and read back pixel by pixel, and its DOM as the browser built it.

Without Chromium the tests skip, saying so, except under CI (`CI` set), where a missing
browser fails them: `.ci/run` installs the Debian package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro.cli import app
from langgraph_supervisor_pro.observability._metrics_html import (
    HOP_COLOURS,
    REVIEW_COLOUR,
    ROLE_COLOURS,
)
from tests.observability._html import Page
from tests.observability._record import record

pytestmark = [pytest.mark.integration]

WIDTH, HEIGHT = 1280, 2600
BACKGROUND = "#f4f6f8"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    reason = (
        "no headless Chromium on PATH (looked for " + ", ".join(BROWSERS) + "); install it with "
        "`apt-get install chromium` (.ci/run does)"
    )
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so the browser test must run")
    pytest.skip(reason)


def headless(binary: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--force-color-profile=srgb",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        *args,
    ]
    env = {**os.environ, "HOME": str(tmp_path)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def mask(pixels: np.ndarray[Any, Any], colour: str) -> np.ndarray[Any, Any]:
    """Where the screenshot has `colour` (within 2 per channel: the bars are flat fills)."""
    target = np.array(rgb(colour), dtype=np.int16)
    return np.all(np.abs(pixels.astype(np.int16) - target) <= 2, axis=2)


def tallest(where: np.ndarray[Any, Any]) -> int:
    """The most pixels of one colour in one column: the tallest bar of that colour."""
    return int(where.sum(axis=0).max())


def _page(db: str, tmp_path: Path) -> Path:
    page = tmp_path / "metrics.html"
    result = CliRunner().invoke(app, ["metrics", "--db", db, "--html", str(page)])
    assert result.exit_code == 0, result.output
    return page


def check_in_browser(page: Path, tmp_path: Path) -> None:
    binary = browser()
    shot = tmp_path / "metrics.png"
    headless(
        binary, tmp_path, f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}", page.as_uri()
    )
    # The screenshot: the size asked for, not blank, the bars where the charts are.
    assert shot.stat().st_size > 20_000
    with Image.open(shot) as image:
        assert image.format == "PNG" and image.size == (WIDTH, HEIGHT)
        pixels = np.asarray(image.convert("RGB"))
    colours = np.unique(pixels.reshape(-1, 3), axis=0)
    assert len(colours) > 200  # text, antialiasing, charts: not a flat page
    background = mask(pixels, BACKGROUND).mean()
    assert 0.05 < background < 0.8, background
    worker = mask(pixels, ROLE_COLOURS["worker"])
    summarizer = mask(pixels, ROLE_COLOURS["summarizer"])
    success = mask(pixels, HOP_COLOURS["success"])
    failed = mask(pixels, HOP_COLOURS["failed"])
    reviews = mask(pixels, REVIEW_COLOUR)
    for name, where in (
        ("worker", worker),
        ("summarizer", summarizer),
        ("success", success),
        ("failed", failed),
        ("reviews", reviews),
    ):
        assert where.sum() > 500, f"{name}: {where.sum()} pixels"
    # Top to bottom: utilisation per hop, handoffs per edge, time in review.
    rows = {name: np.nonzero(where)[0] for name, where in (("u", worker), ("h", success))}
    rows["r"] = np.nonzero(reviews)[0]
    assert np.median(rows["u"]) < np.median(rows["h"]) < np.median(rows["r"])
    # The summarizer's bar (124.85%) against the tallest worker bar (65.15%), each topped
    # by its peak tick (1 px inside the bar).
    assert (tallest(summarizer) + 1) / (tallest(worker) + 1) == pytest.approx(
        1.2485 / 0.6515, rel=0.05
    )
    # Time in review: 2 reviews of a day or more, 1 under a minute.
    columns = reviews.sum(axis=0)
    heights = sorted({int(h) for h in columns if h > 12})
    assert heights[-1] / heights[0] == pytest.approx(2.0, rel=0.05), heights
    # Handoffs: 14 successful hops, 2 failed, bars as wide as their hops (legend swatches
    # of 11 x 11 px each beside them).
    assert 6.0 < success.sum() / failed.sum() < 7.5, (success.sum(), failed.sum())

    # The DOM the browser built: the three charts, their bars, the tables, no script.
    dom = Page(headless(binary, tmp_path, "--dump-dom", page.as_uri()).stdout)
    assert [a["data-chart"] for a in dom.find("svg")] == [
        "utilisation-chart",
        "handoffs-chart",
        "reviews-chart",
    ]
    bars = dom.bars("utilisation-chart")
    # The support desk's supervisor is a model too: a thin bar per decision, far below.
    decisions = [b for b in bars if b["data-series"] == "supervisor"]
    assert len(decisions) == 6 and all(float(b["data-value"]) < 0.01 for b in decisions)
    assert {b["fill"] for b in decisions} == {ROLE_COLOURS["supervisor"]}
    assert [(b["data-series"], b["fill"]) for b in bars if b not in decisions] == [
        ("worker", ROLE_COLOURS["worker"]),
        ("worker", ROLE_COLOURS["worker"]),
        ("worker", ROLE_COLOURS["worker"]),
        ("summarizer", ROLE_COLOURS["summarizer"]),
    ]
    assert [b["data-series"] for b in dom.bars("handoffs-chart")].count("success") == 9
    assert [b["data-series"] for b in dom.bars("handoffs-chart")].count("failed") == 2
    assert [b["data-value"] for b in dom.bars("reviews-chart")] == [
        "1",
        "0",
        "0",
        "0",
        "0",
        "0",
        "2",
    ]
    assert len(dom.find("table")) == 11 and not dom.find("script")  # with cost per model, worker
    assert "8 runs, 16 hops in" in dom.text and "Handoff success per edge" in dom.text


def test_the_page_of_sqlite_runs_in_a_headless_browser(tmp_path: Path) -> None:
    browser()
    db = tmp_path / "runs.db"
    with open_checkpointer(f"sqlite:///{db}") as saver:
        record(saver)
    check_in_browser(_page(str(db), tmp_path), tmp_path)


def test_the_page_of_postgres_runs_in_a_headless_browser(pg_database: str, tmp_path: Path) -> None:
    browser()
    with open_checkpointer(pg_database) as saver:
        record(saver)
    check_in_browser(_page(pg_database, tmp_path), tmp_path)


def test_without_a_browser_the_test_skips_but_fails_under_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no browser on it
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"no headless Chromium on PATH .*chromium"):
        browser()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"CI is set, so the browser test must run"):
        browser()

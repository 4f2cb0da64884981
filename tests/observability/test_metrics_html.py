"""The metrics page: the charts hold the report's figures, every text is escaped, no script,
nothing fetched; no runs, one run, many; the file is replaced atomically."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro.observability import (
    DelegationMetrics,
    compute_metrics,
    delegation_metrics,
    write_metrics_html,
)
from langgraph_supervisor_pro.observability._metrics import ThreadRecord
from langgraph_supervisor_pro.observability._metrics_html import (
    HOP_COLOURS,
    ROLE_COLOURS,
    metrics_html,
)
from tests.observability._html import Page
from tests.observability._record import record, record_spend

AT = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DelegationMetrics]:
    db = tmp_path_factory.mktemp("html") / "runs.db"
    with open_checkpointer(f"sqlite:///{db}") as saver:
        record(saver)
        yield delegation_metrics(saver, expected={"retry": ["flaky", "writer"]})


def _self_contained(page: str) -> None:
    """No script, nothing to fetch, valid UTF-8 and no character HTML cannot hold."""
    assert page.startswith("<!DOCTYPE html>")
    lowered = page.lower()
    assert "<script" not in lowered and "javascript:" not in lowered
    assert "url(" not in lowered and "@import" not in lowered
    parsed = Page(page)
    tags = {tag for tag, _, _ in parsed.elements}
    assert not tags & {"script", "img", "iframe", "link", "object", "embed", "image", "use"}
    for tag, attrs, _ in parsed.elements:
        for name in attrs:
            assert name not in {"src", "href", "srcset", "action", "xlink:href"}, tag
            assert not name.startswith("on"), (tag, name)
    # The only URL is SVG's namespace name, which no browser fetches.
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) <= {"http://www.w3.org/2000/svg"}
    assert "default-src 'none'" in page
    page.encode("utf-8")
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", page)


def test_the_page_of_real_runs_holds_the_reports_figures(report) -> None:
    page = metrics_html(report, source="runs.db", generated_at=AT)
    _self_contained(page)
    parsed = Page(page)
    assert "8 runs, 16 hops in runs.db; generated 2030-01-02T03:04:05+00:00." in parsed.text
    assert [a["data-chart"] for a in parsed.find("svg")] == [
        "utilisation-chart",
        "handoffs-chart",
        "reviews-chart",
    ]
    for svg in parsed.find("svg"):
        assert svg["role"] == "img" and svg["aria-labelledby"]
    # Utilisation per hop: one bar per (hop, role), its average; the peak as a tick.
    bars = parsed.bars("utilisation-chart")
    expected = [(u.role, u.average) for h in report.hop_utilisation for u in h.roles]
    assert [b["data-series"] for b in bars] == [role for role, _ in expected]
    assert [float(b["data-value"] or "nan") for b in bars] == pytest.approx(
        [value for _, value in expected], rel=1e-5
    )
    assert [b["fill"] for b in bars] == [ROLE_COLOURS[r] for r, _ in expected]
    assert len(expected) >= 4  # (hop, role) pairs of the desk's runs
    # Handoffs: one segment per non-zero count, green for success, red for failed.
    segments = parsed.bars("handoffs-chart")
    wanted = [
        (series, count)
        for e in report.edges
        for series, count in (
            ("success", e.succeeded),
            ("needs_review", e.needs_review),
            ("failed", e.failed),
        )
        if count
    ]
    assert [(s["data-series"], int(s["data-value"] or 0)) for s in segments] == wanted
    assert {s["fill"] for s in segments} == {HOP_COLOURS["success"], HOP_COLOURS["failed"]}
    widths = {(s["data-series"], s["data-value"]): float(s["width"] or 0) for s in segments}
    # Widths scale with the hops: billing's 4 successes are 4 times one success.
    assert widths[("success", "4")] == pytest.approx(4 * widths[("success", "1")], rel=1e-3)
    # Time in review: one bar per bucket.
    assert [int(b["data-value"] or 0) for b in parsed.bars("reviews-chart")] == [
        b.reviews for b in report.reviews.histogram
    ]
    # The tables beside the charts, and the others.
    tables = [a["data-table"] for a in parsed.find("table")]
    assert tables == [
        "utilisation",
        "handoffs",
        "reviews",
        "models",
        "costs",
        "workers",
        "roles",
        "status",
        "halts",
        "compactions",
        "refusals",
        "routing",
    ]
    for needle in (
        "ops/incident \u2192 pager",
        "ops/incident/pager",
        "ALERT (\u2265 70%)",
        "supervisor_error",
        "within_hop",
        "refund",
        "Routing: 1 labelled run, 0 exact, micro F1 80.0%",
        "1 d or more",
    ):
        assert needle in parsed.text, needle
    assert parsed.find("div", data_card="Deadline breaches")[0]["class"] == "card alert"


NASTY_WORKER = '<script>alert("w")</script>'
NASTY_THREAD = "t\x00\u202eevil\ud800</table>&amp;"
NASTY_TOOL = "rm -rf / <img src=x onerror=alert(1)>"


def _hop(worker: str, status: str, turn: int = 1, step: int = 1) -> dict[str, Any]:
    return {"turn": turn, "step": step, "worker": worker, "status": status}


def _nasty() -> list[ThreadRecord]:
    usage = {
        "turn": 1,
        "step": 1,
        "role": "worker",
        "worker": NASTY_WORKER,
        "tokens": 9,
        "window": 10,
        "utilisation": 0.9,
    }
    refusal = {"worker": NASTY_WORKER, "tool": NASTY_TOOL}
    return [
        ThreadRecord(
            thread_id=NASTY_THREAD,
            status="halted",
            halt_reason="<b>bold</b>",
            last_activity=None,
            graph_id=None,
            ledger=(_hop(NASTY_WORKER, "failed"), _hop("w\u00e9\U0001f600", "needs_review")),  # type: ignore[arg-type]
            usage=(usage,),  # type: ignore[arg-type]
            security=(refusal,),  # type: ignore[arg-type]
        )
    ]


def test_every_text_from_the_runs_is_escaped() -> None:
    report = compute_metrics(
        _nasty(), expected={NASTY_THREAD: [NASTY_WORKER], "gone\x00" + NASTY_THREAD: ["x"]}
    )
    page = metrics_html(report, source="db <with> \"quotes\" & 'more'", title="<i>t</i>")
    _self_contained(page)
    assert NASTY_WORKER not in page and "<b>bold</b>" not in page and "<img" not in page
    parsed = Page(page)
    assert not parsed.find("script") and not parsed.find("img") and not parsed.find("b")
    # The names are there as text, in the tables and the charts' labels and tooltips.
    for needle in (
        NASTY_WORKER,
        f"supervisor \u2192 {NASTY_WORKER}",
        "<b>bold</b>",
        NASTY_TOOL,
        "w\u00e9\U0001f600",
        "db <with> \"quotes\" & 'more'",
        "<i>t</i>",
        # A thread id (routing's "not found"): NUL and the lone surrogate replaced.
        "not found: gone\ufffdt\ufffd\u202eevil\ufffd</table>&amp;",
    ):
        assert needle in parsed.text, needle
    # Text from the runs is isolated from the page's text direction.
    assert "<bdi>" in page
    # The needs-review hop is amber.
    assert [s["data-series"] for s in parsed.bars("handoffs-chart")] == [
        "failed",
        "needs_review",
    ]


def test_no_runs_one_run_and_many_runs() -> None:
    empty = Page(metrics_html(compute_metrics([])))
    assert not empty.find("svg")
    for message in (
        "No model call recorded a context window.",
        "No model calls recorded.",
        "No hops recorded.",
        "No answered review was timed.",
        "0 runs, 0 hops;",
    ):
        assert message in empty.text, message
    one = compute_metrics(
        [
            ThreadRecord(
                thread_id="only",
                status="done",
                halt_reason=None,
                last_activity=None,
                graph_id=None,
                ledger=(_hop("billing", "success"),),  # type: ignore[arg-type]
            )
        ]
    )
    parsed = Page(metrics_html(one))
    assert "1 run, 1 hop;" in parsed.text
    assert [a["data-chart"] for a in parsed.find("svg")] == ["handoffs-chart"]
    assert len(parsed.bars("handoffs-chart")) == 1
    many = [
        ThreadRecord(
            thread_id=f"t{index}",
            status=("done", "failed")[index % 2],
            halt_reason=None,
            last_activity=None,
            graph_id=None,
            ledger=tuple(
                _hop(f"worker_{(index + hop) % 40:02d}", "success", step=hop + 1)  # type: ignore[misc]
                for hop in range(30)
            ),
            usage=tuple(  # type: ignore[arg-type]
                {
                    "turn": 1,
                    "step": hop + 1,
                    "role": "worker",
                    "worker": None,
                    "tokens": hop,
                    "window": 30,
                    "utilisation": hop / 30,
                }
                for hop in range(30)
            ),
        )
        for index in range(300)
    ]
    big = compute_metrics(many)
    page = metrics_html(big)
    parsed = Page(page)
    assert "300 runs, 9000 hops;" in parsed.text
    assert len(parsed.bars("utilisation-chart")) == 30
    assert len(parsed.bars("handoffs-chart")) == 40
    assert len(page) < 400_000
    # Hop labels thin out when they would overlap: not all 30 are written.
    labels = [t for t in parsed.texts if re.fullmatch(r"hop \d+", t)]
    assert 5 <= len(labels) < 30


def test_write_metrics_html_replaces_the_file_atomically(report, tmp_path: Path) -> None:
    target = tmp_path / "metrics.html"
    target.write_text("old page")
    written = write_metrics_html(report, target, source="runs.db", generated_at=AT)
    assert written == target
    assert target.read_text(encoding="utf-8") == metrics_html(
        report, source="runs.db", generated_at=AT
    )
    assert oct(target.stat().st_mode & 0o777) == "0o644"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.html"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "metrics.html"
    target.write_text("old page")

    def full(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(ValueError, match=r"metrics\.html: cannot write it: No space left"):
        write_metrics_html(report, target)
    assert target.read_text() == "old page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.html"]


def test_a_bad_path_names_it(report, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"is a folder; give a file path such as"):
        write_metrics_html(report, tmp_path)
    with pytest.raises(ValueError, match=r"the folder .*nowhere does not exist; create it"):
        write_metrics_html(report, tmp_path / "nowhere" / "m.html")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match=r"the folder .*file does not exist"):
        write_metrics_html(report, tmp_path / "file" / "m.html")


def test_the_cost_tables_say_which_calls_were_unpriced() -> None:
    saver = InMemorySaver()
    record_spend(saver)
    report = delegation_metrics(saver)
    page = metrics_html(report, generated_at=AT)
    _self_contained(page)
    parsed = Page(page)
    tables = [a["data-table"] for a in parsed.find("table")]
    assert tables[:4] == ["utilisation", "handoffs", "models", "costs"]  # (no review timed)
    text = parsed.text
    for needle in (
        "8 model calls (1 estimated: the provider reported no usage), 2,260 input and 260 "
        "output tokens, cost 0.00482 + 3 unpriced calls (calls without a price are unpriced, "
        "not free).",
        "Per ended turn (3): 840 tokens on average, cost 0.0021 on average over the 1 turn "
        "whose every call was priced.",
        "Budget: 2 warnings (0 approved, 0 rejected), 1 exceeded, 1 halted turn.",
        "openai/gpt-4.1",
        "unpriced (2 calls)",  # the calls of an older thread: no price, not free
        "0.0029 + 3 unpriced calls",  # billing's
    ):
        assert needle in text, needle
    (cost,) = parsed.find("div", data_card="Cost")
    assert cost["class"] == "card alert"  # some calls have no price
    assert "8 model calls, 2,520 tokens, 3 unpriced calls" in text
    assert parsed.find("div", data_card="Budget halts")[0]["class"] == "card alert"

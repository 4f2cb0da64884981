"""The delegation metrics as one self-contained HTML page (`lgsp metrics --html FILE`).

`metrics_html(report)` renders a `DelegationMetrics` as a page that needs nothing else:
inline CSS, inline SVG charts drawn here in Python, no script, no font or image to fetch
(its Content-Security-Policy forbids both), so it opens from disk, from a mail or a
ticket. It holds the figures' cards (runs, hops, completion, alerts, reviews, and the
effects in doubt when the report counted effects), three
charts, each with a table of the same figures beside it (the accessible reading):

- context utilisation per hop of a run (`DelegationMetrics.hop_utilisation`): one bar
  per role (its average) with its peak marked, against the alert line;
- handoff success per edge: each edge's hops by how they ended (success, needs review,
  failed);
- time in review (`ReviewMetrics.histogram`): answered reviews per duration bucket;

then the tables of workers, utilisation per role, completion, routing (when scored),
compactions and refused tools. Every text from the runs (thread ids, worker and tool
names) is HTML-escaped. `write_metrics_html` writes it atomically.

Example:
    ```python
    from langgraph_supervisor_pro.observability import delegation_metrics, write_metrics_html

    with open_checkpointer("sqlite:///runs.db") as saver:
        write_metrics_html(delegation_metrics(saver, since="7d"), "metrics.html")
    ```
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from langgraph_supervisor_pro._internal.text import plural
from langgraph_supervisor_pro.observability._metrics import DelegationMetrics
from langgraph_supervisor_pro.observability._svg import (
    Bar,
    Segment,
    axis,
    columns,
    stacked_rows,
    text,
)

__all__ = ["HOP_COLOURS", "REVIEW_COLOUR", "ROLE_COLOURS", "metrics_html", "write_metrics_html"]

ROLE_COLOURS: Mapping[str, str] = {
    "supervisor": "#3867d6",
    "worker": "#1c9fb0",
    "summarizer": "#8e44ad",
    "synthesis": "#e8772e",
}
"""The utilisation chart's bar colour per role (any other role is grey, `#7b8794`)."""

HOP_COLOURS: Mapping[str, str] = {
    "success": "#2f9e44",
    "needs_review": "#f2a516",
    "failed": "#d63939",
}
"""The handoff chart's colours by how the hops ended."""

REVIEW_COLOUR = "#c2255c"
"""The time-in-review chart's bar colour."""
_OTHER = "#7b8794"

_CSS = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f6f8; color: #1f2933;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 40px; }
header h1 { margin: 0 0 2px; font-size: 24px; }
header p { margin: 0; color: #52606d; }
bdi, .chart text { unicode-bidi: isolate; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr));
  gap: 12px; margin: 20px 0; }
.card { background: #fff; border: 1px solid #dde2e7; border-radius: 8px; padding: 10px 14px; }
.card .value { display: block; font-size: 24px; font-weight: 650; line-height: 1.2; }
.card .note { display: block; color: #52606d; font-size: 12px; overflow-wrap: break-word; }
.card .name { color: #52606d; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card.alert { border-color: #f0a8a8; background: #fff5f5; }
.card.alert .value { color: #b42318; }
section { background: #fff; border: 1px solid #dde2e7; border-radius: 8px;
  padding: 16px 20px; margin: 0 0 16px; }
section h2 { margin: 0 0 4px; font-size: 17px; }
section > p.lead { margin: 0 0 12px; color: #52606d; }
.pair { display: grid; grid-template-columns: minmax(0, 11fr) minmax(0, 9fr); gap: 24px;
  align-items: start; }
@media (max-width: 860px) { .pair { grid-template-columns: minmax(0, 1fr); } }
figure { margin: 0; }
figcaption { color: #52606d; font-size: 12px; margin-top: 4px; }
.chart { display: block; max-width: 100%; height: auto; }
.chart text { font-size: 11px; fill: #3e4c59; }
.chart .threshold-label { fill: #1f2933; font-weight: 600; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin: 6px 0 0; padding: 0;
  list-style: none; font-size: 12px; color: #3e4c59; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px;
  margin-right: 5px; vertical-align: -1px; }
.tick { display: inline-block; width: 12px; height: 0; border-top: 2px solid #1f2933;
  margin-right: 5px; vertical-align: 3px; }
.dash { display: inline-block; width: 16px; height: 0; border-top: 2px dashed #1f2933;
  margin-right: 5px; vertical-align: 3px; }
.scroll { max-height: 420px; overflow: auto; }
.grid2 > .wide { grid-column: 1 / -1; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
caption { text-align: left; font-weight: 600; padding: 0 0 6px; }
th, td { padding: 4px 8px; border-bottom: 1px solid #edf0f3; text-align: right;
  white-space: nowrap; }
th:first-child, td:first-child { text-align: left; white-space: normal;
  overflow-wrap: break-word; min-width: 4em; }
thead th { color: #52606d; font-weight: 600; border-bottom: 1px solid #cbd2d9;
  position: sticky; top: 0; background: #fff; }
.badge { display: inline-block; padding: 0 6px; border-radius: 10px; font-size: 12px; }
.badge.ok { background: #e6f4ea; color: #1e6b30; }
.badge.alert { background: #fde8e8; color: #b42318; font-weight: 600; }
td.none { text-align: left; color: #7b8794; font-style: italic; }
.empty { color: #7b8794; font-style: italic; margin: 8px 0; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr));
  gap: 20px 28px; }
footer { color: #7b8794; font-size: 12px; margin-top: 18px; }
"""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def _short(lower: float, upper: float | None) -> str:
    """A bucket's bounds in few characters (`<1m`, `15m-1h`, `>=1d`), for the chart's axis."""

    def unit(seconds: float) -> tuple[str, str]:
        for name, size in (("d", 86400.0), ("h", 3600.0), ("m", 60.0)):
            if seconds >= size and seconds % size == 0:
                return f"{seconds / size:g}", name
        return f"{seconds:g}", "s"

    if upper is None:
        return "\u2265" + "".join(unit(lower))
    if lower <= 0:
        return "<" + "".join(unit(upper))
    (low, low_unit), (high, high_unit) = unit(lower), unit(upper)
    return f"{low}{'' if low_unit == high_unit else low_unit}\u2013{high}{high_unit}"


def _table(
    caption: str,
    head: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    name: str,
    wide: bool = False,
) -> str:
    """A table; cells are HTML already (escape what comes from the runs with `text`)."""
    out = [
        f'<div class="scroll{" wide" if wide else ""}"><table data-table="{name}">'
        f"<caption>{text(caption)}</caption>"
    ]
    out.append(
        "<thead><tr>" + "".join(f'<th scope="col">{text(h)}</th>' for h in head) + "</tr></thead>"
    )
    out.append("<tbody>")
    rows = list(rows)
    if not rows:
        out.append(f'<tr><td class="none" colspan="{len(head)}">None.</td></tr>')
    for row in rows:
        first, *rest = row
        out.append(
            f'<tr><th scope="row"><bdi>{first}</bdi></th>'
            + "".join(f"<td>{cell}</td>" for cell in rest)
            + "</tr>"
        )
    out.append("</tbody></table></div>")
    return "".join(out)


def _legend(items: Iterable[tuple[str, str]], *extra: str) -> str:
    swatches = "".join(
        f'<li><span class="swatch" style="background:{colour}"></span>{text(label)}</li>'
        for label, colour in items
    )
    return f'<ul class="legend">{swatches}{"".join(extra)}</ul>'


def _section(name: str, title: str, lead: str, body: str) -> str:
    return (
        f'<section id="{name}" aria-labelledby="{name}-h"><h2 id="{name}-h">{text(title)}</h2>'
        f'<p class="lead">{lead}</p>{body}</section>'
    )


def _empty(message: str) -> str:
    return f'<p class="empty">{text(message)}</p>'


def _cards(report: DelegationMetrics) -> str:
    reviews = report.reviews
    completion = report.completion
    done = completion.by_status.get("done", 0)
    cards = [
        ("Runs", str(completion.runs), f"{done} done", False),
        ("Completion", _pct(completion.completion_rate), f"{report.hops} hops", False),
        (
            "Utilisation alerts",
            str(len(report.alerts)),
            ", ".join(report.alerts) or f"p99 under {report.utilisation_alert:.0%}",
            bool(report.alerts),
        ),
        (
            "Reviews",
            str(reviews.answered),
            f"{reviews.pending} pending, {reviews.overdue} overdue",
            bool(reviews.overdue),
        ),
        (
            "Deadline breaches",
            str(reviews.deadline_breaches),
            f"escalation rate {_pct(reviews.escalation_rate)}",
            bool(reviews.deadline_breaches),
        ),
        (
            "Refused tool calls",
            str(report.refusals.total),
            plural(report.compactions.total, "compaction"),
            False,
        ),
    ]
    effects = report.effects
    if effects is not None:
        cards.append(
            (
                "Effects in doubt",
                str(effects.in_doubt),
                f"{effects.settled_after_doubt} settled after a doubt, {effects.recorded} recorded",
                bool(effects.in_doubt),
            )
        )
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card{" alert" if alert else ""}" data-card="{text(name)}">'
            f'<span class="name">{text(name)}</span><span class="value">{text(value)}</span>'
            f'<span class="note"><bdi>{text(note)}</bdi></span></div>'
            for name, value, note, alert in cards
        )
        + "</div>"
    )


def _utilisation(report: DelegationMetrics) -> str:
    lead = (
        "Context utilisation (tokens / window) of the model calls serving the Nth hop of a "
        "run, counted across its turns: the bar is the average per role, the mark its peak, "
        f"the dashed line the alert ({report.utilisation_alert:.0%})."
    )
    hops = report.hop_utilisation
    if not hops:
        return _section(
            "utilisation", "Utilisation per hop", lead, _empty("No model calls recorded.")
        )
    roles = [u.role for u in report.utilisation]
    groups = []
    rows = []
    for hop in hops:
        by_role = {u.role: u for u in hop.roles}
        bars = []
        for role in roles:
            figure = by_role.get(role)
            if figure is None:
                continue
            bars.append(
                Bar(
                    value=figure.average,
                    series=role,
                    colour=ROLE_COLOURS.get(role, _OTHER),
                    tick=figure.peak,
                    tooltip=f"hop {hop.hop}, {role}: average {_pct(figure.average)}, peak "
                    f"{_pct(figure.peak)}, {plural(figure.calls, 'call')}",
                )
            )
            rows.append(
                (
                    str(hop.hop),
                    text(role),
                    str(figure.calls),
                    _pct(figure.average),
                    _pct(figure.peak),
                    str(figure.over_threshold),
                )
            )
        groups.append((f"hop {hop.hop}", bars))
    peak = max(h.peak for h in hops)
    chart = columns(
        groups,
        name="utilisation-chart",
        title="Context utilisation per hop",
        desc=f"{len(hops)} hops; average and peak utilisation per role; alert at "
        f"{report.utilisation_alert:.0%}.",
        y_axis=axis(peak, floor=1.0),
        y_label=lambda v: f"{v:.0%}",
        threshold=(report.utilisation_alert, f"alert {report.utilisation_alert:.0%}"),
    )
    legend = _legend(
        ((r, ROLE_COLOURS.get(r, _OTHER)) for r in roles),
        '<li><span class="tick"></span>peak</li>',
        '<li><span class="dash"></span>alert</li>',
    )
    table = _table(
        "Per hop and role",
        ("Hop", "Role", "Calls", "Average", "Peak", "At/over alert"),
        rows,
        name="utilisation",
    )
    body = f'<div class="pair"><figure>{chart}{legend}</figure>{table}</div>'
    return _section("utilisation", "Utilisation per hop", lead, body)


def _edges(report: DelegationMetrics) -> str:
    lead = (
        "Hops along each edge of the delegation tree (supervisor to worker, parent to "
        "domain) by how they ended; the number is the share that succeeded."
    )
    if not report.edges:
        return _section("handoffs", "Handoff success per edge", lead, _empty("No hops recorded."))
    rows = []
    table_rows = []
    for edge in report.edges:
        label = f"{edge.source} \u2192 {edge.target}"
        parts = [
            Segment(
                value=count,
                series=series,
                colour=HOP_COLOURS[series],
                tooltip=f"{label}: {count} {series.replace('_', ' ')} of {edge.hops}",
            )
            for series, count in (
                ("success", edge.succeeded),
                ("needs_review", edge.needs_review),
                ("failed", edge.failed),
            )
        ]
        rows.append((label, parts, f"{_pct(edge.success_rate)} of {edge.hops}"))
        table_rows.append(
            (
                text(label),
                str(edge.hops),
                str(edge.succeeded),
                str(edge.needs_review),
                str(edge.failed),
                _pct(edge.success_rate),
            )
        )
    chart = stacked_rows(
        rows,
        name="handoffs-chart",
        title="Handoff success per edge",
        desc=f"{plural(len(report.edges), 'edge')}, {plural(report.hops, 'hop')}: "
        "succeeded, needing review and failed hops per edge.",
    )
    legend = _legend(
        (
            ("success", HOP_COLOURS["success"]),
            ("needs review", HOP_COLOURS["needs_review"]),
            ("failed", HOP_COLOURS["failed"]),
        )
    )
    table = _table(
        "Per edge",
        ("Edge", "Hops", "Success", "Review", "Failed", "Rate"),
        table_rows,
        name="handoffs",
    )
    body = f'<div class="pair"><figure>{chart}{legend}</figure>{table}</div>'
    return _section("handoffs", "Handoff success per edge", lead, body)


def _reviews(report: DelegationMetrics) -> str:
    reviews = report.reviews
    lead = (
        f"{plural(reviews.answered, 'review')} answered "
        f"({text(', '.join(f'{k} {v}' for k, v in reviews.by_decision.items()) or 'none')}), "
        f"{reviews.timed} timed from the pause to the answer: average "
        f"{_duration(reviews.average_seconds)}, p99 {_duration(reviews.p99_seconds)}, max "
        f"{_duration(reviews.max_seconds)}; escalation rate {_pct(reviews.escalation_rate)}, "
        f"{plural(reviews.deadline_breaches, 'deadline breach', 'deadline breaches')}, "
        f"{reviews.pending} pending ({reviews.overdue} overdue)."
    )
    if not reviews.timed or not reviews.histogram:
        return _section("reviews", "Time in review", lead, _empty("No answered review was timed."))
    most = max(b.reviews for b in reviews.histogram)
    groups = [
        (
            _short(bucket.lower_seconds, bucket.upper_seconds),
            [
                Bar(
                    value=bucket.reviews,
                    series="reviews",
                    colour=REVIEW_COLOUR,
                    tooltip=f"{bucket.label}: {plural(bucket.reviews, 'review')}",
                )
            ],
        )
        for bucket in reviews.histogram
    ]
    chart = columns(
        groups,
        name="reviews-chart",
        title="Time in review",
        desc=f"{plural(reviews.timed, 'answered review')} by time from the pause to the answer.",
        y_axis=axis(most, floor=4.0, whole=True),
        y_label=lambda v: f"{v:g}",
    )
    table = _table(
        "Reviews per duration",
        ("Time in review", "Reviews"),
        ((text(b.label), str(b.reviews)) for b in reviews.histogram),
        name="reviews",
    )
    body = (
        f'<div class="pair"><figure>{chart}'
        f"<figcaption>Answered reviews per time in review.</figcaption></figure>{table}</div>"
    )
    return _section("reviews", "Time in review", lead, body)


def _details(report: DelegationMetrics) -> str:
    parts = []
    if report.workers:
        parts.append(
            _table(
                "Workers",
                ("Worker", "Visits", "Success", "Failed", "Retries", "Loops", "Refused"),
                (
                    (
                        text(w.worker),
                        str(w.visits),
                        str(w.succeeded),
                        str(w.failed),
                        str(w.retries),
                        str(w.loop_flags),
                        str(w.refused_tools),
                    )
                    for w in report.workers
                ),
                name="workers",
                wide=True,
            )
        )
    if report.utilisation:
        parts.append(
            _table(
                "Utilisation per role",
                ("Role", "Calls", "Average", "p99", "Peak", "Alert"),
                (
                    (
                        text(u.role),
                        str(u.calls),
                        _pct(u.average),
                        _pct(u.p99),
                        _pct(u.peak),
                        f'<span class="badge alert">ALERT (&ge; {u.threshold:.0%})</span>'
                        if u.alert
                        else '<span class="badge ok">ok</span>',
                    )
                    for u in report.utilisation
                ),
                name="roles",
            )
        )
    completion = report.completion
    parts.append(
        _table(
            "Runs by status",
            ("Status", "Runs"),
            ((text(k), str(v)) for k, v in completion.by_status.items()),
            name="status",
        )
        + (
            _table(
                "Halt reasons",
                ("Reason", "Runs"),
                ((text(k), str(v)) for k, v in completion.by_halt_reason.items()),
                name="halts",
            )
            if completion.by_halt_reason
            else ""
        )
    )
    compactions = report.compactions
    parts.append(
        _table(
            f"Compactions: {compactions.total}, {compactions.failed} failed, "
            f"{compactions.truncated} truncated, {compactions.tokens_saved} tokens saved",
            ("Reason", "Compactions"),
            ((text(k), str(v)) for k, v in compactions.by_reason.items()),
            name="compactions",
        )
        + _table(
            f"Refused tool calls: {report.refusals.total}",
            ("Tool", "Refused"),
            ((text(k), str(v)) for k, v in report.refusals.by_tool.items()),
            name="refusals",
        )
    )
    routing = report.routing
    if routing is not None:
        parts.append(
            _table(
                f"Routing: {plural(routing.labelled, 'labelled run')}, "
                f"{routing.exact_matches} exact, micro F1 {_pct(routing.micro_f1)}"
                + (f"; not found: {', '.join(routing.missing)}" if routing.missing else ""),
                ("Worker", "TP", "FP", "FN", "Precision", "Recall", "F1"),
                (
                    (
                        text(s.worker),
                        str(s.true_positives),
                        str(s.false_positives),
                        str(s.false_negatives),
                        _pct(s.precision),
                        _pct(s.recall),
                        _pct(s.f1),
                    )
                    for s in routing.per_worker
                ),
                name="routing",
                wide=True,
            )
        )
    lead = (
        f"Loops: a worker run {report.loop_visits} times or more in one turn; retries: a "
        "visit after a failed hop of the same worker in the same turn."
    )
    return _section(
        "details", "Workers, roles and runs", lead, f'<div class="grid2">{"".join(parts)}</div>'
    )


def metrics_html(
    report: DelegationMetrics,
    *,
    source: str | None = None,
    generated_at: datetime | None = None,
    title: str = "Delegation metrics",
) -> str:
    """The report as one self-contained HTML page (inline CSS and SVG, no script).

    Args:
        report: The figures (`delegation_metrics`, `compute_metrics`).
        source: Where they come from, shown under the title (e.g. the database, its
            password masked).
        generated_at: The time shown as the page's; now when None.
        title: The page's title.

    Returns:
        The page, as text.

    Example:
        >>> from langgraph_supervisor_pro.observability import compute_metrics
        >>> page = metrics_html(compute_metrics([]), source="runs.db")
        >>> page.startswith("<!DOCTYPE html>"), "<script" in page, "No hops recorded." in page
        (True, False, True)
    """
    moment = generated_at or datetime.now(UTC)
    completion = report.completion
    subtitle = (
        f"{plural(completion.runs, 'run')}, {plural(report.hops, 'hop')}"
        + (f" in <bdi>{text(source)}</bdi>" if source else "")
        + f"; generated {text(moment.isoformat(timespec='seconds'))}."
    )
    body = "\n".join(
        (
            f"<header><h1>{text(title)}</h1><p>{subtitle}</p></header>",
            _cards(report),
            _utilisation(report),
            _edges(report),
            _reviews(report),
            _details(report),
            "<footer>Written by <code>lgsp metrics --html</code>: one file, no script, nothing "
            "fetched. The same figures: <code>lgsp metrics --json</code>.</footer>",
        )
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="langgraph-supervisor-pro">'
        f"<title>{text(title)}</title><style>{_CSS}</style></head>\n"
        f"<body><main>\n{body}\n</main></body></html>\n"
    )


def check_target(target: Path) -> None:
    """Refuse a path the page cannot be written to: a folder, or a file in no folder.

    Raises:
        ValueError: Naming the path and the fix.
    """
    if target.is_dir():
        raise ValueError(
            f"{target}: is a folder; give a file path such as {target / 'metrics.html'}"
        )
    if not target.parent.is_dir():
        raise ValueError(f"{target}: the folder {target.parent} does not exist; create it first")


def write_metrics_html(
    report: DelegationMetrics,
    path: str | os.PathLike[str],
    *,
    source: str | None = None,
    generated_at: datetime | None = None,
    title: str = "Delegation metrics",
) -> Path:
    """Write `metrics_html(report, ...)` to `path` atomically (a temporary file, renamed).

    A reader never sees half a page: the page is written and flushed to a temporary file
    beside `path`, then renamed over it. On failure nothing is left behind.

    Args:
        report: The figures.
        path: The file to write (its folder must exist).
        source: See `metrics_html`.
        generated_at: See `metrics_html`.
        title: See `metrics_html`.

    Returns:
        The path written.

    Raises:
        ValueError: If `path` is a folder, or its folder does not exist or cannot be
            written (naming the path and the reason).

    Example:
        ```python
        write_metrics_html(delegation_metrics(saver), "reports/metrics.html",
                           source="runs.db")
        ```
    """
    target = Path(path)
    check_target(target)
    folder = target.parent
    page = metrics_html(report, source=source, generated_at=generated_at, title=title)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise ValueError(f"{target}: cannot write in {folder}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(page)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise ValueError(f"{target}: cannot write it: {exc.strerror or exc}") from None
    return target

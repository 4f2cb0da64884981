"""The delegation metrics as one self-contained HTML page (`lgsp metrics --html FILE`).

`metrics_html(report)` renders a `DelegationMetrics` with inline CSS and SVG charts, no
script and nothing fetched (its Content-Security-Policy forbids both): cards, three charts
each beside a table of the same figures, the tables of tokens and cost, then the detail
tables. Every text from the runs is HTML-escaped; `write_metrics_html` writes the page
atomically.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/metrics/

Example:
    ```python
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
from langgraph_supervisor_pro.observability._audit import shown_amount
from langgraph_supervisor_pro.observability._metrics import DelegationMetrics, SpendMetrics
from langgraph_supervisor_pro.observability._svg import Bar, axis, columns, stacked_rows, text

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
    rows: Iterable[Sequence[object]],
    *,
    name: str,
    wide: bool = False,
) -> str:
    """A table; cells are HTML already (escape what comes from the runs with `text`)."""
    out = [
        f'<div class="scroll{" wide" if wide else ""}"><table data-table="{name}">'
        f"<caption>{text(caption)}</caption><thead><tr>"
        + "".join(f'<th scope="col">{text(h)}</th>' for h in head)
        + "</tr></thead><tbody>"
    ]
    rows = list(rows)
    if not rows:
        out.append(f'<tr><td class="none" colspan="{len(head)}">None.</td></tr>')
    for first, *rest in rows:
        cells = "".join(f"<td>{cell}</td>" for cell in rest)
        out.append(f'<tr><th scope="row"><bdi>{first}</bdi></th>{cells}</tr>')
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


def _pair(figure: str, table: str) -> str:
    """A chart (with its legend or caption) and the table of its figures, side by side."""
    return f'<div class="pair"><figure>{figure}</figure>{table}</div>'


def _cards(report: DelegationMetrics) -> str:
    reviews, completion, effects = report.reviews, report.completion, report.effects
    alerts = ", ".join(report.alerts) or f"p99 under {report.utilisation_alert:.0%}"
    pending = f"{reviews.pending} pending, {reviews.overdue} overdue"
    escalation = f"escalation rate {_pct(reviews.escalation_rate)}"
    compactions = plural(report.compactions.total, "compaction")
    cards = [
        ("Runs", completion.runs, f"{completion.by_status.get('done', 0)} done", False),
        ("Completion", _pct(completion.completion_rate), f"{report.hops} hops", False),
        ("Utilisation alerts", len(report.alerts), alerts, bool(report.alerts)),
        ("Reviews", reviews.answered, pending, bool(reviews.overdue)),
        (
            "Deadline breaches",
            reviews.deadline_breaches,
            escalation,
            bool(reviews.deadline_breaches),
        ),
        ("Refused tool calls", report.refusals.total, compactions, False),
    ]
    spend, budget = report.spend, report.budget
    cost = "-" if spend.cost is None else shown_amount("cost", spend.cost)
    unpriced = f", {plural(spend.unpriced_calls, 'unpriced call')}" if spend.unpriced_calls else ""
    cards.append(
        (
            "Cost",
            cost,
            f"{plural(spend.calls, 'model call')}, {spend.total_tokens:,} tokens{unpriced}",
            bool(spend.unpriced_calls),
        )
    )
    warned = f"{plural(budget.warnings, 'warning')}, {budget.exceeded} exceeded"
    cards.append(("Budget halts", budget.halts, warned, bool(budget.halts)))
    if effects is not None:
        settled = (
            f"{effects.settled_after_doubt} settled after a doubt, {effects.recorded} recorded"
        )
        cards.append(("Effects in doubt", effects.in_doubt, settled, bool(effects.in_doubt)))
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
    title = "Utilisation per hop"
    alert = f"{report.utilisation_alert:.0%}"
    lead = (
        "Context utilisation (tokens / window) of the model calls serving the Nth hop of a "
        "run, counted across its turns: the bar is the average per role, the mark its peak, "
        f"the dashed line the alert ({alert})."
    )
    hops = report.hop_utilisation
    if not hops:
        message = "No model call recorded a context window."
        return _section("utilisation", title, lead, _empty(message))
    roles = [u.role for u in report.utilisation]
    groups = []
    rows = []
    for hop in hops:
        by_role = {u.role: u for u in hop.roles}
        bars = []
        for figure in (by_role[role] for role in roles if role in by_role):
            role, average, peak = figure.role, _pct(figure.average), _pct(figure.peak)
            bars.append(
                Bar(
                    value=figure.average,
                    series=role,
                    colour=ROLE_COLOURS.get(role, _OTHER),
                    tick=figure.peak,
                    tooltip=f"hop {hop.hop}, {role}: average {average}, peak {peak}, "
                    + plural(figure.calls, "call"),
                )
            )
            rows.append((hop.hop, text(role), figure.calls, average, peak, figure.over_threshold))
        groups.append((f"hop {hop.hop}", bars))
    chart = columns(
        groups,
        name="utilisation-chart",
        title="Context utilisation per hop",
        desc=f"{len(hops)} hops; average and peak utilisation per role; alert at {alert}.",
        y_axis=axis(max(h.peak for h in hops), floor=1.0),
        y_label=lambda v: f"{v:.0%}",
        threshold=(report.utilisation_alert, f"alert {alert}"),
    )
    legend = _legend(
        ((r, ROLE_COLOURS.get(r, _OTHER)) for r in roles),
        '<li><span class="tick"></span>peak</li>',
        '<li><span class="dash"></span>alert</li>',
    )
    head = ("Hop", "Role", "Calls", "Average", "Peak", "At/over alert")
    table = _table("Per hop and role", head, rows, name="utilisation")
    return _section("utilisation", title, lead, _pair(chart + legend, table))


def _edges(report: DelegationMetrics) -> str:
    title = "Handoff success per edge"
    lead = (
        "Hops along each edge of the delegation tree (supervisor to worker, parent to "
        "domain) by how they ended; the number is the share that succeeded."
    )
    if not report.edges:
        return _section("handoffs", title, lead, _empty("No hops recorded."))
    ends = ("success", "needs_review", "failed")
    rows = []
    table_rows = []
    for edge in report.edges:
        label = f"{edge.source} \u2192 {edge.target}"
        counts = (edge.succeeded, edge.needs_review, edge.failed)
        parts = [
            Bar(
                value=count,
                series=series,
                colour=HOP_COLOURS[series],
                tooltip=f"{label}: {count} {series.replace('_', ' ')} of {edge.hops}",
            )
            for series, count in zip(ends, counts, strict=True)
        ]
        rows.append((label, parts, f"{_pct(edge.success_rate)} of {edge.hops}"))
        table_rows.append((text(label), edge.hops, *counts, _pct(edge.success_rate)))
    chart = stacked_rows(
        rows,
        name="handoffs-chart",
        title=title,
        desc=f"{plural(len(report.edges), 'edge')}, {plural(report.hops, 'hop')}: "
        "succeeded, needing review and failed hops per edge.",
    )
    legend = _legend((end.replace("_", " "), HOP_COLOURS[end]) for end in ends)
    head = ("Edge", "Hops", "Success", "Review", "Failed", "Rate")
    table = _table("Per edge", head, table_rows, name="handoffs")
    return _section("handoffs", title, lead, _pair(chart + legend, table))


def _spend_cells(spend: SpendMetrics) -> tuple[object, ...]:
    return (
        spend.calls,
        f"{spend.input_tokens:,}",
        f"{spend.output_tokens:,}",
        spend.estimated_calls,
        text(spend.shown_cost),
    )


def _cost(report: DelegationMetrics) -> str:
    spend, turns, budget = report.spend, report.turns, report.budget
    per_turn = (
        f" Per ended turn ({turns.completed}): {turns.average_tokens or 0:,.0f} tokens on "
        f"average, cost {shown_amount('cost', turns.average_cost)} on average over the "
        f"{plural(turns.priced, 'turn')} whose every call was priced."
        if turns.average_cost is not None
        else ""
    )
    lead = (
        f"{plural(spend.calls, 'model call')} ({spend.estimated_calls} estimated: the provider "
        f"reported no usage), {spend.input_tokens:,} input and {spend.output_tokens:,} output "
        f"tokens, cost {text(spend.shown_cost)} (calls without a price are unpriced, not "
        f"free).{per_turn} Budget: {plural(budget.warnings, 'warning')} "
        f"({budget.approved} approved, {budget.rejected} rejected), {budget.exceeded} "
        f"exceeded, {plural(budget.halts, 'halted turn')}."
    )
    if not spend.calls:
        return _section("cost", "Tokens and cost", lead, _empty("No model calls recorded."))
    head = ("Calls", "Input", "Output", "Estimated", "Cost")
    models = _table(
        "Per model",
        ("Model", *head),
        ((text(m.name), *_spend_cells(m.spend)) for m in report.models),
        name="models",
    )
    workers = _table(
        "Per worker (a domain's: every call inside it)",
        ("Worker", *head),
        ((text(w.worker), *_spend_cells(w.spend)) for w in report.workers if w.spend.calls),
        name="costs",
    )
    return _section("cost", "Tokens and cost", lead, f'<div class="grid2">{models}{workers}</div>')


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
        y_axis=axis(max(b.reviews for b in reviews.histogram), floor=4.0, whole=True),
        y_label=lambda v: f"{v:g}",
    )
    table = _table(
        "Reviews per duration",
        ("Time in review", "Reviews"),
        ((text(b.label), b.reviews) for b in reviews.histogram),
        name="reviews",
    )
    caption = "<figcaption>Answered reviews per time in review.</figcaption>"
    return _section("reviews", "Time in review", lead, _pair(chart + caption, table))


def _counts(caption: str, head: tuple[str, str], counts: Mapping[str, int], name: str) -> str:
    """A table of runs, compactions or refusals by name."""
    return _table(caption, head, ((text(k), v) for k, v in counts.items()), name=name)


def _badge(alert: bool, threshold: float) -> str:
    if alert:
        return f'<span class="badge alert">ALERT (&ge; {threshold:.0%})</span>'
    return '<span class="badge ok">ok</span>'


def _details(report: DelegationMetrics) -> str:
    parts = []
    rows: list[tuple[object, ...]]
    head: tuple[str, ...]
    if report.workers:
        rows = [
            (
                text(w.worker),
                w.visits,
                w.succeeded,
                w.failed,
                w.retries,
                w.loop_flags,
                w.refused_tools,
            )
            for w in report.workers
        ]
        head = ("Worker", "Visits", "Success", "Failed", "Retries", "Loops", "Refused")
        parts.append(_table("Workers", head, rows, name="workers", wide=True))
    if report.utilisation:
        rows = [
            (
                text(u.role),
                u.calls,
                _pct(u.average),
                _pct(u.p99),
                _pct(u.peak),
                _badge(u.alert, u.threshold),
            )
            for u in report.utilisation
        ]
        head = ("Role", "Calls", "Average", "p99", "Peak", "Alert")
        parts.append(_table("Utilisation per role", head, rows, name="roles"))
    completion = report.completion
    parts.append(
        _counts("Runs by status", ("Status", "Runs"), completion.by_status, "status")
        + (
            _counts("Halt reasons", ("Reason", "Runs"), completion.by_halt_reason, "halts")
            if completion.by_halt_reason
            else ""
        )
    )
    compactions = report.compactions
    parts.append(
        _counts(
            f"Compactions: {compactions.total}, {compactions.failed} failed, "
            f"{compactions.truncated} truncated, {compactions.tokens_saved} tokens saved",
            ("Reason", "Compactions"),
            compactions.by_reason,
            "compactions",
        )
        + _counts(
            f"Refused tool calls: {report.refusals.total}",
            ("Tool", "Refused"),
            report.refusals.by_tool,
            "refusals",
        )
    )
    routing = report.routing
    if routing is not None:
        rows = [
            (
                text(s.worker),
                s.true_positives,
                s.false_positives,
                s.false_negatives,
                _pct(s.precision),
                _pct(s.recall),
                _pct(s.f1),
            )
            for s in routing.per_worker
        ]
        parts.append(
            _table(
                f"Routing: {plural(routing.labelled, 'labelled run')}, "
                f"{routing.exact_matches} exact, micro F1 {_pct(routing.micro_f1)}"
                + (f"; not found: {', '.join(routing.missing)}" if routing.missing else ""),
                ("Worker", "TP", "FP", "FN", "Precision", "Recall", "F1"),
                rows,
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

    `source` (where the figures come from, e.g. the database with its password masked) and
    `generated_at` (default: now) are shown under the title.

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
            _cost(report),
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
    """Raise ValueError (naming the fix) for a folder, or a file in a folder that is missing."""
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

"""`lgsp metrics`: delegation metrics of the runs in a checkpoint database.

As tables, one JSON object (`--json`), an HTML page (`--html`), or over OTLP (`--otel`).
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/metrics/
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from langgraph_supervisor_pro._internal.text import one_line, plural
from langgraph_supervisor_pro.cli import _otel
from langgraph_supervisor_pro.cli._common import (
    DbOption,
    JsonOption,
    db_url,
    effect_sources,
    fail,
    new_table,
    open_dbs,
    option,
    out,
)
from langgraph_supervisor_pro.errors import ExportError
from langgraph_supervisor_pro.observability._audit import shown_amount
from langgraph_supervisor_pro.observability._metrics import (
    DEFAULT_LOOP_VISITS,
    DEFAULT_UTILISATION_ALERT,
    DelegationMetrics,
    SpendMetrics,
    compute_metrics,
    load_expected,
    parse_since,
    read_threads,
)
from langgraph_supervisor_pro.observability._metrics_html import check_target, write_metrics_html

__all__: list[str] = []

HELP = (
    "Delegation metrics of the runs in a checkpoint database.\n\n"
    "Completion by status and halt reason, handoff success per edge (supervisor to worker, "
    "parent to domain), visits, retries and loop flags per worker, context utilisation per "
    "role with an alert at --alert, tokens and cost per model, per worker and per ended turn "
    "(calls without a price are counted as unpriced, never as free), budget warnings and "
    "halts, compactions, refused tool calls, reviews (escalations, "
    "time in review, deadline breaches), and routing precision/recall/F1 per worker "
    "against --expected. --html FILE writes them as one self-contained page with charts "
    "(utilisation per hop, handoff success per edge, time in review); --otel sends them once "
    "as OpenTelemetry metrics over OTLP (the otel extra; OTEL_EXPORTER_OTLP_* configure it). "
    "Side effects, and those in doubt or settled after a doubt (run_external), are counted "
    "from the lgsp_effects table of a Postgres --db and from --store, like lgsp audit. "
    "--db takes a SQLite "
    "file (or sqlite:///path.db) or a postgresql:// URL."
)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"


def _table(title: str, *columns: str) -> Table:
    table = new_table(title)
    for index, column in enumerate(columns):
        table.add_column(column, justify="left" if index == 0 else "right", no_wrap=index == 0)
    return table


def _spend_row(name: str, spend: SpendMetrics) -> tuple[str, ...]:
    return (
        name,
        str(spend.calls),
        f"{spend.input_tokens:,}",
        f"{spend.output_tokens:,}",
        str(spend.estimated_calls),
        spend.shown_cost,
    )


def _render_spend(console: Console, report: DelegationMetrics) -> None:
    """Tokens and cost (per model, per worker, per ended turn), then the budget events."""
    spend, turns, budget = report.spend, report.turns, report.budget
    if spend.calls:
        console.print(
            f"Model calls: {spend.calls} ({spend.estimated_calls} estimated), "
            f"{spend.input_tokens:,} input and {spend.output_tokens:,} output tokens, "
            f"cost {spend.shown_cost}."
        )
        columns = ("Calls", "Input", "Output", "Estimated", "Cost")
        table = _table("Cost per model", "Model", *columns)
        for model in report.models:
            table.add_row(*_spend_row(model.name, model.spend))
        console.print(table)
        hops = [w for w in report.workers if w.spend.calls]
        if hops:  # (a domain's: every call inside it)
            table = _table("Cost per worker", "Worker", *columns)
            for worker in hops:
                table.add_row(*_spend_row(worker.worker, worker.spend))
            console.print(table)
    if spend.calls and turns.completed:
        cost = "-" if turns.average_cost is None else shown_amount("cost", turns.average_cost)
        console.print(
            f"Per ended turn ({turns.completed}): {turns.average_tokens or 0:,.0f} tokens on "
            f"average (max {turns.max_tokens or 0:,}), cost {cost} on average over the "
            f"{plural(turns.priced, 'turn')} whose every call was priced."
        )
    console.print(
        f"Budget: {plural(budget.warnings, 'warning')} ({budget.approved} approved, "
        f"{budget.rejected} rejected), {budget.exceeded} exceeded, "
        f"{plural(budget.halts, 'halted turn')}.",
        style="bold yellow" if budget.halts else "",
    )


def render(console: Console, report: DelegationMetrics, shown: str) -> None:
    """Print `report` as tables."""
    completion = report.completion
    console.print(
        f"Delegation metrics of {plural(completion.runs, 'run')} "
        f"in {shown}: {plural(report.hops, 'hop')}, "
        f"completion {_percent(completion.completion_rate)}."
    )
    console.print(f"Status: {_counts(completion.by_status)}")
    console.print(f"Halt reasons: {_counts(completion.by_halt_reason)}")
    if report.edges:
        table = _table("Handoffs per edge", "Edge", "Hops", "Success", "Failed", "Review", "Rate")
        for edge in report.edges:
            table.add_row(
                f"{edge.source} -> {edge.target}",
                str(edge.hops),
                str(edge.succeeded),
                str(edge.failed),
                str(edge.needs_review),
                _percent(edge.success_rate),
            )
        console.print(table)
    if report.workers:
        table = _table("Workers", "Worker", "Visits", "Failed", "Retries", "Loops", "Refused")
        for worker in report.workers:
            table.add_row(
                worker.worker,
                str(worker.visits),
                str(worker.failed),
                str(worker.retries),
                Text(str(worker.loop_flags), style="bold yellow" if worker.loop_flags else ""),
                str(worker.refused_tools),
            )
        console.print(table)
    if report.utilisation:
        table = _table("Context utilisation", "Role", "Calls", "Average", "p99", "Peak", "Alert")
        for usage in report.utilisation:
            table.add_row(
                usage.role,
                str(usage.calls),
                _percent(usage.average),
                _percent(usage.p99),
                _percent(usage.peak),
                Text(
                    f"ALERT (>= {usage.threshold:.0%})" if usage.alert else "ok",
                    style="bold red" if usage.alert else "green",
                ),
            )
        console.print(table)
    _render_spend(console, report)
    compactions = report.compactions
    console.print(
        f"Compactions: {compactions.total} ({_counts(compactions.by_reason)}), "
        f"{compactions.failed} failed, {compactions.tokens_saved} tokens saved."
    )
    refusals = report.refusals
    console.print(f"Refused tool calls: {refusals.total} ({_counts(refusals.by_tool)}).")
    reviews = report.reviews
    console.print(
        f"Reviews: {reviews.answered} answered ({_counts(reviews.by_decision)}), "
        f"escalation rate {_percent(reviews.escalation_rate)}, time in review average "
        f"{_seconds(reviews.average_seconds)}, p99 {_seconds(reviews.p99_seconds)}, "
        f"{reviews.deadline_breaches} deadline breach"
        f"{'' if reviews.deadline_breaches == 1 else 'es'}, {reviews.pending} pending "
        f"({reviews.overdue} overdue)."
    )
    effects = report.effects
    if effects is not None:
        line = Text(
            f"Effects: {effects.recorded} recorded ({_counts(effects.by_state)}), "
            f"{effects.doubted} not done: "
        )
        line.append(f"{effects.in_doubt} in doubt", style="bold red" if effects.in_doubt else "")
        line.append(f", {effects.settled_after_doubt} settled after a doubt.")
        console.print(line)
    routing = report.routing
    if routing is None:
        return
    table = _table("Routing", "Worker", "TP", "FP", "FN", "Precision", "Recall", "F1")
    for score in routing.per_worker:
        table.add_row(
            score.worker,
            str(score.true_positives),
            str(score.false_positives),
            str(score.false_negatives),
            _percent(score.precision),
            _percent(score.recall),
            _percent(score.f1),
        )
    console.print(table)
    console.print(
        f"Routing: {plural(routing.labelled, 'labelled run')}, "
        f"{routing.exact_matches} exact, micro precision {_percent(routing.micro_precision)}, "
        f"recall {_percent(routing.micro_recall)}, F1 {_percent(routing.micro_f1)}"
        + (f"; not found: {', '.join(routing.missing)}" if routing.missing else "")
        + "."
    )


def metrics_command(
    db: DbOption,
    since: Annotated[
        str | None,
        option(
            "--since",
            "Only runs active since then: a duration back from now (30m, 24h, 7d, 2w) "
            "or an ISO-8601 time (UTC when no offset is given).",
        ),
    ] = None,
    graph: Annotated[
        str | None,
        option(
            "--graph",
            "Only runs whose checkpoints' metadata has this graph_id (the LangGraph "
            "server sets it; or run with config={'metadata': {'graph_id': NAME}}).",
        ),
    ] = None,
    expected: Annotated[
        Path | None,
        option(
            "--expected",
            'Expected routes to score routing: a JSON file, {"thread": ["worker", ...]} '
            'or [{"thread_id": ..., "expected": [...]}].',
        ),
    ] = None,
    alert: Annotated[
        float,
        typer.Option("--alert", help="The context utilisation share that raises the alert."),
    ] = DEFAULT_UTILISATION_ALERT,
    loop_visits: Annotated[
        int,
        typer.Option("--loop-visits", help="Visits of one worker in one turn that flag a loop."),
    ] = DEFAULT_LOOP_VISITS,
    store: Annotated[
        str | None,
        option(
            "--store",
            "The store the runs recorded their side effects in (StoreEffects), in --db's "
            "forms; on Postgres the lgsp_effects table of --db is read as well.",
        ),
    ] = None,
    as_json: JsonOption = False,
    html: Annotated[
        Path | None,
        option(
            "--html",
            "Write the figures as one self-contained HTML page with charts to this file "
            "(replaced atomically); the tables are then not printed.",
        ),
    ] = None,
    otel: Annotated[
        bool,
        typer.Option(
            "--otel",
            help="Also send the figures once as OpenTelemetry metrics over OTLP, to the "
            "collector the OTEL_EXPORTER_OTLP_* variables name (needs the otel extra).",
        ),
    ] = False,
) -> None:
    """Print the delegation metrics of a checkpoint database (the body of `lgsp metrics`)."""
    if html is not None:
        try:
            check_target(html)  # before reading anything
        except ValueError as exc:
            fail(f"--html {exc}")
    url, shown = db_url(db)
    try:
        start = None if since is None else parse_since(since, where="--since")
    except ValueError as exc:
        fail(str(exc))
    if graph is not None and not graph.strip():
        fail("--graph: give a graph id (a non-empty name)")
    labels = None
    if expected is not None:
        try:
            labels = load_expected(expected)
        except ValueError as exc:
            fail(f"--expected {exc}")
    if not 0 < alert <= 1:
        fail(f"--alert: got {alert!r}; give a share of the window in (0, 1], e.g. 0.7")
    if loop_visits < 2:
        fail(f"--loop-visits: got {loop_visits}; give a whole number of visits >= 2")
    with open_dbs(url, shown, store) as (saver, memory, stack):
        try:
            records = read_threads(saver, since=start, graph=graph)
        except Exception as exc:
            fail(f"cannot read the runs in {shown}: {one_line(str(exc), 300)}")
        try:
            effects = effect_sources(stack, url, memory)
            report = compute_metrics(
                records,
                expected=labels,
                utilisation_alert=alert,
                loop_visits=loop_visits,
                effects=effects or None,
            )
        except Exception as exc:
            fail(f"cannot read the side effects of the runs in {shown}: {one_line(str(exc), 300)}")
    if html is not None:
        try:
            write_metrics_html(report, html, source=shown)
        except ValueError as exc:
            fail(f"--html {exc}")
    if otel:
        try:
            sent, points, where = _otel.export(report)
        except ExportError as exc:
            fail(str(exc))
        typer.echo(f"Sent {sent} metrics ({points} data points) over OTLP to {where}.", err=True)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    elif html is not None:
        typer.echo(
            f"Wrote the delegation metrics of {plural(report.completion.runs, 'run')} in {shown} "
            f"to {html}."
        )
    else:
        render(out(), report, shown)

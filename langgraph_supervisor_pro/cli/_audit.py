"""`lgsp audit`: the timeline of one run for a compliance reader (see `observability.audit`).

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/audit/
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Annotated

import typer
from rich.text import Text

from langgraph_supervisor_pro._internal.text import one_line, plural
from langgraph_supervisor_pro.cli._common import (
    db_url,
    effect_sources,
    error_line,
    fail,
    new_table,
    open_dbs,
    option,
    out,
)
from langgraph_supervisor_pro.observability._audit import AuditEvent, audit_trail

__all__: list[str] = []

HELP = (
    "Show the timeline of one run (thread) for a compliance reader, oldest first.\n\n"
    "Each turn, each decision and who made it (router, model, fallback), each hop's "
    "result, reviews with the decision, the reviewer and the time, refused tools, side "
    "effects with their idempotency keys (from the lgsp_effects table on Postgres, or the "
    "--store the runs recorded them in), compactions, budget warnings, answers and limits "
    "reached, the run's end and the online judge's "
    "verdicts, with the time of the checkpoint that recorded it. Domains of a tree show "
    "their path. --db takes a SQLite file (or sqlite:///path.db) or a postgresql:// URL, "
    "like lgsp runs."
)

_STYLE = {
    "turn": "bold",
    "decision": "cyan",
    "review": "magenta",
    "refusal": "red",
    "effect": "green",
    "compaction": "blue",
    "budget": "yellow",
    "end": "bold",
    "judgement": "yellow",
}
_HOP_STYLE = {"success": "green", "partial": "yellow", "failed": "red", "needs_input": "yellow"}


def _style(event: AuditEvent) -> str:
    if event.kind == "hop":
        return _HOP_STYLE.get(str(getattr(event, "status", "")), "")
    if event.kind == "budget" and getattr(event, "budget_kind", "") == "exceeded":
        return "bold red"
    if event.kind == "end":
        return {"done": "bold green", "halted": "bold yellow"}.get(
            str(getattr(event, "status", "")), "bold red"
        )
    return _STYLE.get(event.kind, "")


def audit_command(
    db: Annotated[
        str,
        option(
            "--db", "The checkpoint database: a SQLite file, sqlite:///path.db or postgresql://..."
        ),
    ],
    thread: Annotated[str, option("--thread", "The thread (run) to show.")],
    store: Annotated[
        str | None,
        option(
            "--store",
            "The store the run recorded its side effects in (StoreEffects), in --db's "
            "forms; on Postgres the lgsp_effects table of --db is read as well.",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the trail as one JSON object.")
    ] = False,
) -> None:
    """Print the audit trail of one thread (the body of `lgsp audit`)."""
    if not thread.strip():
        fail("--thread must not be empty; give a thread id (lgsp runs lists them)")
    url, shown = db_url(db)
    with open_dbs(url, shown, store) as (saver, memory, stack):
        try:
            trail = audit_trail(saver, thread, effects=effect_sources(stack, url, memory))
        except LookupError:
            fail(f"no run with thread {thread!r} in {shown}; lgsp runs --db ... lists the threads")
        except Exception as exc:
            fail(f"cannot read thread {thread!r} in {shown}: {error_line(exc)}")
    events = trail.events
    if not events:
        fail(
            f"thread {thread!r} in {shown} has checkpoints but no supervisor events (it is "
            "not a run of a supervisor graph)"
        )
    if as_json:
        typer.echo(json.dumps(trail.to_dict(), indent=2, default=str, ensure_ascii=False))
        return
    console = out()
    table = new_table(f"Audit trail of {thread} in {shown}")
    table.add_column("Time (UTC)", no_wrap=True)
    table.add_column("Turn.step", justify="right", no_wrap=True)
    table.add_column("Where", no_wrap=True)
    table.add_column("Event", no_wrap=True)
    table.add_column("What", overflow="fold", ratio=1)
    for event in events:
        when = event.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if event.at else "-"
        hop = "-" if event.turn is None else str(event.turn)
        table.add_row(
            when,
            hop if event.step is None or event.turn is None else f"{hop}.{event.step}",
            "/".join(event.path) or "root",
            Text(event.kind, style=_style(event)),
            Text(one_line(event.line(), 400), style=_style(event)),
        )
    console.print(table)
    counts = [plural(sum(1 for e in events if e.kind == k), k) for k in ("decision", "hop")]
    budgets = sum(1 for e in events if e.kind == "budget")
    if budgets:
        counts.append(plural(budgets, "budget event"))
    console.print(f"{plural(len(events), 'event')}: {', '.join(counts)}.")
    if trail.pending_reviews:
        console.print(
            f"Paused: {plural(trail.pending_reviews, 'review')} pending "
            "(lgsp review list --db ...).",
            style="bold yellow",
        )

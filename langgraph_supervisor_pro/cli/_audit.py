"""`lgsp audit`: the timeline of one run for a compliance reader (see `observability.audit`).

`lgsp audit --db URL --thread T` prints one row per event, oldest first: turns, each
decision and who decided it, each hop's result, reviews (decision, reviewer, time),
refused tools, side effects with their keys, compactions and the run's end. `--json`
prints the trail as one JSON object. Exit codes: 0, or 2 for a usage error (the
database cannot be opened, the thread id is empty, the thread has no checkpoints or
no supervisor events).
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from datetime import UTC
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from langgraph_supervisor_pro._internal.text import one_line
from langgraph_supervisor_pro.cli._common import db_url, error_line, fail, open_memory, open_saver
from langgraph_supervisor_pro.observability._audit import AuditEvent, audit_trail
from langgraph_supervisor_pro.persistence._effects import open_effects

__all__: list[str] = []

HELP = (
    "Show the timeline of one run (thread) for a compliance reader, oldest first.\n\n"
    "Each turn, each decision and who made it (router, model, fallback), each hop's "
    "result, reviews with the decision, the reviewer and the time, refused tools, side "
    "effects with their idempotency keys (from the lgsp_effects table on Postgres, or the "
    "--store the runs recorded them in), compactions, the run's end and the online judge's "
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
    "end": "bold",
    "judgement": "yellow",
}
_HOP_STYLE = {"success": "green", "partial": "yellow", "failed": "red", "needs_input": "yellow"}


def _when(event: AuditEvent) -> str:
    return event.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if event.at else "-"


def _style(event: AuditEvent) -> str:
    if event.kind == "hop":
        return _HOP_STYLE.get(str(getattr(event, "status", "")), "")
    if event.kind == "end":
        return {"done": "bold green", "halted": "bold yellow"}.get(
            str(getattr(event, "status", "")), "bold red"
        )
    return _STYLE.get(event.kind, "")


def _hop(event: AuditEvent) -> str:
    if event.turn is None:
        return "-"
    return f"{event.turn}.{event.step}" if event.step is not None else str(event.turn)


def audit_command(
    db: Annotated[
        str,
        typer.Option(
            "--db",
            help="The checkpoint database: a SQLite file, sqlite:///path.db or postgresql://...",
            show_default=False,
        ),
    ],
    thread: Annotated[
        str,
        typer.Option("--thread", help="The thread (run) to show.", show_default=False),
    ],
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="The store the run recorded its side effects in (StoreEffects), in --db's "
            "forms; on Postgres the lgsp_effects table of --db is read as well.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the trail as one JSON object.")
    ] = False,
) -> None:
    """Print the audit trail of one thread (the body of `lgsp audit`).

    Example:
        ```console
        $ lgsp audit --db .lgsp/demo.db --thread demo-1
        $ lgsp audit --db postgresql://app@db/app --thread order-7 --json
        ```
    """
    if not thread.strip():
        fail("--thread must not be empty; give a thread id (lgsp runs lists them)")
    url, shown = db_url(db)
    with ExitStack() as stack:
        saver = open_saver(stack, url, shown)
        memory = open_memory(stack, store)
        sources: list[Any] = [] if memory is None else [memory]
        try:
            if url.lower().startswith(("postgresql://", "postgres://")):
                sources.append(stack.enter_context(open_effects(url, setup=False)))
            trail = audit_trail(saver, thread, effects=sources)
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
    console = Console(highlight=False, emoji=False)
    table = Table(
        title=f"Audit trail of {thread} in {shown}", title_justify="left", box=box.SIMPLE_HEAD
    )
    table.add_column("Time (UTC)", no_wrap=True)
    table.add_column("Turn.step", justify="right", no_wrap=True)
    table.add_column("Where", no_wrap=True)
    table.add_column("Event", no_wrap=True)
    table.add_column("What", overflow="fold", ratio=1)
    for event in events:
        table.add_row(
            _when(event),
            _hop(event),
            "/".join(event.path) or "root",
            Text(event.kind, style=_style(event)),
            Text(one_line(event.line(), 400), style=_style(event)),
        )
    console.print(table)
    counts = {kind: sum(1 for e in events if e.kind == kind) for kind in ("decision", "hop")}
    console.print(
        f"{len(events)} event{'' if len(events) == 1 else 's'}: {counts['decision']} "
        f"decision{'' if counts['decision'] == 1 else 's'}, {counts['hop']} "
        f"hop{'' if counts['hop'] == 1 else 's'}."
    )
    if trail.pending_reviews:
        many = trail.pending_reviews != 1
        console.print(
            f"Paused: {trail.pending_reviews} review{'s' if many else ''} pending "
            "(lgsp review list --db ...).",
            style="bold yellow",
        )

"""`lgsp prune`: delete finished threads older than an age (see `persistence.retention`).

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/retention/
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Annotated

import typer
from rich.console import Console

from langgraph_supervisor_pro._internal.text import one_line, plural
from langgraph_supervisor_pro.cli._common import (
    DbOption,
    JsonOption,
    db_url,
    error_line,
    fail,
    new_table,
    open_dbs,
    option,
    out,
)
from langgraph_supervisor_pro.persistence._retention import (
    DEFAULT_BATCH_SIZE,
    FINISHED_STATUSES,
    MAX_BATCH_SIZE,
    PruneReport,
    parse_age,
    prune_threads,
)

__all__: list[str] = []

HELP = (
    "Delete finished threads older than --older-than: their checkpoints, writes and store "
    "items.\n\n"
    "A thread goes when its newest checkpoint is older than --older-than, its run ended with "
    "a --status (done by default; halted, failed), it is not paused at a review or mid-run, "
    "and no live lease holds it. With it go every namespace's checkpoints, blobs and writes, "
    "on Postgres its lgsp_effects and lgsp_thread_leases rows, and with --store its workers' "
    "outputs, its StoreEffects outcomes and each --store-namespace. Without --yes this is a "
    "dry run: it prints what would go and deletes nothing. --db takes a SQLite file (or "
    "sqlite:///path.db) or a postgresql:// URL."
)

_KINDS = ("checkpoints", "writes", "blobs", "effects", "leases", "store_items")
_KEPT = {
    "recent": "newer",
    "pending": "paused or mid-run",
    "status": "with another status",
    "leased": "under a live lease",
    "changed": "moved on during the prune",
}


def _age(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} d"
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def render(console: Console, report: PruneReport, shown: str, *, store: bool) -> None:
    """Print `report` as a table and a few lines."""
    going = [t for t in report.threads if t.outcome in ("deleted", "would_delete")]
    when = report.cutoff.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    statuses = "/".join(report.statuses)
    verb = "would be deleted" if report.dry_run else "deleted"
    console.print(
        f"{'Dry run: ' if report.dry_run else ''}{plural(len(going), 'finished thread')} "
        f"({statuses}) of {report.scanned} in {shown}, last active before {when}, {verb}."
    )
    if going:
        kinds = [k for k in _KINDS if any(k in t.rows for t in going)]
        table = new_table()
        table.add_column("Thread", no_wrap=True, overflow="fold")
        table.add_column("Status", no_wrap=True)
        table.add_column("Age", justify="right", no_wrap=True)
        for kind in kinds:
            table.add_column(kind.replace("_", " ").capitalize(), justify="right")
        for thread in going:
            counts = [str(thread.rows[k]) if k in thread.rows else "-" for k in kinds]
            table.add_row(
                one_line(thread.thread_id, 80), thread.status, _age(thread.age_seconds), *counts
            )
        console.print(table)
        totals = report.totals()
        deleted = ", ".join(f"{totals[k]} {k.replace('_', ' ')}" for k in kinds)
        console.print(f"{'Would delete' if report.dry_run else 'Deleted'}: {deleted}.")
    if report.kept:
        kept = ", ".join(f"{n} {_KEPT.get(why, why)}" for why, n in report.kept.items())
        console.print(f"Kept: {kept}.")
    if not store:
        console.print("Store items were not looked at: give --store to delete them too.")
    if report.dry_run and going:
        console.print("Nothing was deleted: run again with --yes to delete them.")


def prune_command(
    db: DbOption,
    older_than: Annotated[
        str,
        option(
            "--older-than",
            "Delete threads whose newest checkpoint is older than this: 90m, 12h, 30d, 2w.",
        ),
    ],
    status: Annotated[
        list[str] | None,
        option(
            "--status",
            "A run status that counts as finished: done (default), halted, failed "
            "(repeat for several).",
        ),
    ] = None,
    store: Annotated[
        str | None,
        option(
            "--store",
            "The store the runs' graph is compiled with, in --db's forms: the threads' "
            "items there go too.",
        ),
    ] = None,
    store_namespace: Annotated[
        list[str] | None,
        option(
            "--store-namespace",
            "Another per-thread store namespace to clear, as labels joined by '/' that "
            "the thread's label follows, e.g. research_team/sources (repeat for several).",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would go, delete nothing (the default).")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Delete (without it: a dry run).")] = False,
    batch_size: Annotated[
        int, typer.Option("--batch-size", help="Threads listed and handled per batch.")
    ] = DEFAULT_BATCH_SIZE,
    as_json: JsonOption = False,
) -> None:
    """Delete finished, old threads, or show which would go (the body of `lgsp prune`)."""
    try:
        age = parse_age(older_than, where="--older-than")
    except ValueError as exc:
        fail(str(exc))
    statuses = status or ["done"]
    if unknown := [s for s in statuses if s not in FINISHED_STATUSES]:
        fail(
            f"--status: got {unknown[0]!r}; give done, halted or failed (a running run, or one "
            "paused at a review, is never pruned)"
        )
    if dry_run and yes:
        fail("--dry-run and --yes: give one (without either, it is a dry run)")
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        fail(f"--batch-size: got {batch_size}; give 1 to {MAX_BATCH_SIZE} threads")
    prefixes: list[tuple[str, ...]] = []
    for value in store_namespace or []:
        prefixes.append(tuple(value.split("/")))
        if not all(label and "." not in label and "\x00" not in label for label in prefixes[-1]):
            fail(
                f"--store-namespace: got {value!r}; give labels joined by '/', none empty, "
                "without '.' or NUL, e.g. research_team/sources (the thread's label follows)"
            )
    url, shown = db_url(db)
    with open_dbs(url, shown, store) as (saver, memory, _):
        try:
            report = prune_threads(
                saver,
                memory,
                older_than=age,
                statuses=statuses,
                dry_run=not yes,
                store_namespaces=prefixes,
                batch_size=batch_size,
            )
        except Exception as exc:  # every backend's error, reported in one line
            fail(f"the prune of {shown} failed: {error_line(exc)}")
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return
    render(out(), report, shown, store=memory is not None)

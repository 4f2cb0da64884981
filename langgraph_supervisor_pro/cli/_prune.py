"""`lgsp prune`: delete finished threads older than an age (see `persistence.retention`).

`lgsp prune --db URL --older-than 30d [--status done ...] [--store URL]
[--store-namespace research_team/sources ...] [--dry-run | --yes] [--json]` lists what
would go and deletes nothing unless `--yes` is given. Every error is one line on stderr
with exit code 2.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from datetime import UTC
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from langgraph_supervisor_pro._internal.text import one_line, plural
from langgraph_supervisor_pro.cli._common import db_url, error_line, fail, open_memory, open_saver
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

_KINDS = {
    "checkpoints": "Checkpoints",
    "writes": "Writes",
    "blobs": "Blobs",
    "effects": "Effects",
    "leases": "Leases",
    "store_items": "Store items",
}
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
        table = Table(box=box.SIMPLE_HEAD)
        table.add_column("Thread", no_wrap=True, overflow="fold")
        table.add_column("Status", no_wrap=True)
        table.add_column("Age", justify="right", no_wrap=True)
        for kind in kinds:
            table.add_column(_KINDS[kind], justify="right")
        for thread in going:
            counts = [str(thread.rows[k]) if k in thread.rows else "-" for k in kinds]
            table.add_row(
                one_line(thread.thread_id, 80), thread.status, _age(thread.age_seconds), *counts
            )
        console.print(table)
        totals = report.totals()
        console.print(
            f"{'Would delete' if report.dry_run else 'Deleted'}: "
            + ", ".join(f"{totals[k]} {_KINDS[k].lower()}" for k in kinds)
            + "."
        )
    if report.kept:
        console.print(
            "Kept: "
            + ", ".join(f"{n} {_KEPT.get(why, why)}" for why, n in report.kept.items())
            + "."
        )
    if not store:
        console.print("Store items were not looked at: give --store to delete them too.")
    if report.dry_run and going:
        console.print("Nothing was deleted: run again with --yes to delete them.")


def _store_namespaces(values: list[str]) -> list[tuple[str, ...]]:
    prefixes = []
    for value in values:
        labels = tuple(value.split("/"))
        if not all(label and "." not in label and "\x00" not in label for label in labels):
            fail(
                f"--store-namespace: got {value!r}; give labels joined by '/', none empty, "
                "without '.' or NUL, e.g. research_team/sources (the thread's label follows)"
            )
        prefixes.append(labels)
    return prefixes


def prune_command(
    db: Annotated[
        str,
        typer.Option(
            "--db",
            help="The checkpoint database: postgresql://..., sqlite:///path.db, or a SQLite file.",
            show_default=False,
        ),
    ],
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than",
            help="Delete threads whose newest checkpoint is older than this: 90m, 12h, 30d, 2w.",
            show_default=False,
        ),
    ],
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            help="A run status that counts as finished: done (default), halted, failed "
            "(repeat for several).",
            show_default=False,
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="The store the runs' graph is compiled with, in --db's forms: the threads' "
            "items there go too.",
            show_default=False,
        ),
    ] = None,
    store_namespace: Annotated[
        list[str] | None,
        typer.Option(
            "--store-namespace",
            help="Another per-thread store namespace to clear, as labels joined by '/' that "
            "the thread's label follows, e.g. research_team/sources (repeat for several).",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would go, delete nothing (the default).")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Delete (without it: a dry run).")] = False,
    batch_size: Annotated[
        int, typer.Option("--batch-size", help="Threads listed and handled per batch.")
    ] = DEFAULT_BATCH_SIZE,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")
    ] = False,
) -> None:
    """Delete finished, old threads, or show which would go (the body of `lgsp prune`).

    Example:
        ```console
        $ lgsp prune --db postgresql://app@db/app --older-than 30d
        $ lgsp prune --db postgresql://app@db/app --store postgresql://app@db/app \
            --older-than 30d --status done --status halted --yes --json
        ```
    """
    try:
        age = parse_age(older_than, where="--older-than")
    except ValueError as exc:
        fail(str(exc))
    statuses = status or ["done"]
    unknown = [s for s in statuses if s not in FINISHED_STATUSES]
    if unknown:
        fail(
            f"--status: got {unknown[0]!r}; give done, halted or failed (a running run, or one "
            "paused at a review, is never pruned)"
        )
    if dry_run and yes:
        fail("--dry-run and --yes: give one (without either, it is a dry run)")
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        fail(f"--batch-size: got {batch_size}; give 1 to {MAX_BATCH_SIZE} threads")
    prefixes = _store_namespaces(store_namespace or [])
    url, shown = db_url(db)
    with ExitStack() as stack:
        saver = open_saver(stack, url, shown)
        memory = open_memory(stack, store)
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
    render(Console(highlight=False, emoji=False), report, shown, store=memory is not None)

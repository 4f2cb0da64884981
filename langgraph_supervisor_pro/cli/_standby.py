"""`lgsp standby`: resume the runs whose process died (see `persistence.standby`).

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/operations/leases/
"""

from __future__ import annotations

import json
import signal
import threading
from typing import Annotated

import typer
from rich.text import Text

from langgraph_supervisor_pro._internal.text import plural
from langgraph_supervisor_pro._internal.urls import mask_url
from langgraph_supervisor_pro.cli._common import (
    GraphOption,
    StoreOption,
    compiled,
    error_line,
    fail,
    is_postgres,
    option,
    out,
    seconds,
)
from langgraph_supervisor_pro.persistence._standby import (
    DEFAULT_INTERVAL,
    Takeover,
    resume_orphans,
    standby,
)

__all__: list[str] = []

HELP = (
    "Resume the runs whose process died, from their last checkpoint (Postgres).\n\n"
    "Runs taken under thread_lease(...) hold a Postgres lease while they run; when the "
    "process dies its lease is released (at once when it was killed, within the lease's "
    "expire_after when its host died). The standby finds those threads, takes their "
    "lease, and resumes each one that stopped mid-run (not one paused at a review)."
)


def standby_command(
    db: Annotated[str, option("--db", "The checkpoint database: postgresql://...")],
    graph: GraphOption,
    store: StoreOption = None,
    once: Annotated[bool, typer.Option("--once", help="Sweep once, then exit.")] = False,
    interval: Annotated[
        str,
        typer.Option(
            "--interval", help="Time between two sweeps (without --once): 5s, 1m, or seconds."
        ),
    ] = f"{DEFAULT_INTERVAL:g}s",
    owner: Annotated[
        str | None,
        option("--owner", "Who the standby's leases name, shown to operators (default: host:pid)."),
    ] = None,
    expire_after: Annotated[
        str,
        typer.Option(
            "--expire-after",
            help="Time within which Postgres releases this standby's own leases if its "
            "host dies (4s to 1h; 30s, or seconds).",
        ),
    ] = "30s",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object per takeover.")
    ] = False,
) -> None:
    """Resume the runs whose process died (the body of `lgsp standby`)."""
    if not is_postgres(db):
        fail(
            f"--db {mask_url(db.strip())}: lgsp standby needs Postgres (a dead run is told "
            "from a live one by its Postgres lease); give postgresql://..."
        )
    every = seconds(interval, flag="--interval", low=0.001, high=86400.0)
    expiry = seconds(expire_after, flag="--expire-after", low=4.0, high=3600.0)
    if owner is not None and (not owner.strip() or len(owner) > 200):
        fail("--owner: give a non-empty name of at most 200 characters")
    console = out(soft_wrap=True)

    def show(takeover: Takeover) -> None:
        if as_json:
            typer.echo(json.dumps(takeover.to_dict(), default=str))
        else:
            style = {"failed": "red", "skipped": "yellow"}.get(takeover.outcome, "")
            console.print(Text(takeover.line(), style=style))

    with compiled(db, graph, store) as (app, _):
        try:
            if once:
                takeovers = resume_orphans(app, owner=owner, expire_after=expiry)
                for takeover in takeovers:
                    show(takeover)
                if not as_json:
                    out().print(f"Swept: {plural(len(takeovers), 'run')} taken over.")
                if any(t.outcome == "failed" for t in takeovers):
                    raise typer.Exit(code=1)
                return
            stop = threading.Event()
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
            standby(
                app, interval=every, owner=owner, expire_after=expiry, stop=stop, on_takeover=show
            )
        except KeyboardInterrupt:
            raise typer.Exit(code=130) from None
        except typer.Exit:
            raise
        except Exception as exc:
            fail(f"the standby failed: {error_line(exc)}")

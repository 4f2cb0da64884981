"""`lgsp standby`: resume the runs whose process died (see `persistence.standby`).

`lgsp standby --db postgresql://... --graph app/team.py:graph` sweeps every
`--interval` (a duration: `5s`, `1m`) until stopped (Ctrl-C, or SIGTERM); `--once` sweeps once and
exits. Each takeover is printed as one line (`--json`: one JSON object per line).
Exit codes: 0, or 1 when a `--once` sweep had a resumed run fail; 2 for a usage error
(the database is not Postgres, the graph cannot be loaded, an option is out of range).
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable
from contextlib import ExitStack
from types import FrameType
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from langgraph_supervisor_pro._internal.urls import mask_url
from langgraph_supervisor_pro.cli._common import (
    db_url,
    error_line,
    fail,
    load_graph,
    open_memory,
    open_saver,
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

_Once = Annotated[bool, typer.Option("--once", help="Sweep once, then exit.")]
_Interval = Annotated[
    str,
    typer.Option(
        "--interval", help="Time between two sweeps (without --once): 5s, 1m, or seconds."
    ),
]
_Owner = Annotated[
    str | None,
    typer.Option(
        "--owner",
        help="Who the standby's leases name, shown to operators (default: host:pid).",
        show_default=False,
    ),
]
_ExpireAfter = Annotated[
    str,
    typer.Option(
        "--expire-after",
        help="Time within which Postgres releases this standby's own leases if its "
        "host dies (4s to 1h; 30s, or seconds).",
    ),
]


def _printer(as_json: bool) -> Callable[[Takeover], None]:
    console = Console(highlight=False, emoji=False, soft_wrap=True)

    def show(takeover: Takeover) -> None:
        if as_json:
            typer.echo(json.dumps(takeover.to_dict(), default=str))
            return
        style = {"failed": "red", "skipped": "yellow"}.get(takeover.outcome, "")
        console.print(Text(takeover.line(), style=style))

    return show


def _stop_on_sigterm(stop: threading.Event) -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def standby_command(
    db: Annotated[
        str,
        typer.Option("--db", help="The checkpoint database: postgresql://...", show_default=False),
    ],
    graph: Annotated[
        str,
        typer.Option(
            "--graph",
            help="The runs' graph: path/to/file.py:ATTR or package.module:ATTR, naming an "
            "uncompiled StateGraph or a function returning one (compiled with --db).",
            show_default=False,
        ),
    ],
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="The store the runs' graph is compiled with (its external memory), in --db's "
            "forms; give it when the graph uses one, so a resumed run reads its earlier hops' "
            "outputs.",
            show_default=False,
        ),
    ] = None,
    once: _Once = False,
    interval: _Interval = f"{DEFAULT_INTERVAL:g}s",
    owner: _Owner = None,
    expire_after: _ExpireAfter = "30s",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object per takeover.")
    ] = False,
) -> None:
    """Resume the runs whose process died (the body of `lgsp standby`).

    Example:
        ```console
        $ lgsp standby --db postgresql://app@db/app --graph app/team.py:graph --interval 5
        $ lgsp standby --db postgresql://app@db/app --graph myapp.team:build --once
        ```
    """
    if not db.strip().lower().startswith(("postgresql://", "postgres://")):
        fail(
            f"--db {mask_url(db.strip())}: lgsp standby needs Postgres (a dead run is told "
            "from a live one by its Postgres lease); give postgresql://..."
        )
    url, shown = db_url(db)
    every = seconds(interval, flag="--interval", low=0.001, high=86400.0)
    expiry = seconds(expire_after, flag="--expire-after", low=4.0, high=3600.0)
    if owner is not None and (not owner.strip() or len(owner) > 200):
        fail("--owner: give a non-empty name of at most 200 characters")
    builder = load_graph(graph)
    show = _printer(as_json)
    with ExitStack() as stack:
        saver = open_saver(stack, url, shown)
        memory = open_memory(stack, store)
        compiled: Any = builder.compile(checkpointer=saver, store=memory)
        try:
            if once:
                takeovers = resume_orphans(compiled, owner=owner, expire_after=expiry)
                for takeover in takeovers:
                    show(takeover)
                if not as_json:
                    Console(highlight=False, emoji=False).print(
                        f"Swept: {len(takeovers)} run{'' if len(takeovers) == 1 else 's'} "
                        "taken over."
                    )
                if any(t.outcome == "failed" for t in takeovers):
                    raise typer.Exit(code=1)
                return
            stop = threading.Event()
            _stop_on_sigterm(stop)
            standby(
                compiled,
                interval=every,
                owner=owner,
                expire_after=expiry,
                stop=stop,
                on_takeover=show,
            )
        except KeyboardInterrupt:
            raise typer.Exit(code=130) from None
        except typer.Exit:
            raise
        except Exception as exc:
            fail(f"the standby failed: {error_line(exc)}")

"""`lgsp judge`: the online judge's review queue (see `observability.judge_queue`).

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/evaluation/#online-judge
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from typing import Annotated

import typer

from langgraph_supervisor_pro._internal.text import one_line, plural
from langgraph_supervisor_pro.cli._common import (
    db_url,
    error_line,
    fail,
    new_table,
    open_memory,
    option,
    out,
)
from langgraph_supervisor_pro.errors import JudgementNotFoundError
from langgraph_supervisor_pro.evals._judge_queue import (
    JudgedTurn,
    acknowledge_judgement,
    judge_reviews,
)

HELP = (
    "The online judge's review queue: turns a judge model scored below the threshold "
    "(create_supervisor(judge=OnlineJudge(...))), kept in the graph's store."
)

judge_app = typer.Typer(help=HELP, no_args_is_help=True)

StoreOption = Annotated[
    str,
    option(
        "--store",
        "The store the graph was compiled with: a SQLite file, sqlite:///path.db or "
        "postgresql://...",
    ),
]


def _score(item: JudgedTurn) -> str:
    return "-" if item.score is None else f"{item.score:.2f} < {item.threshold:.2f}"


@judge_app.command("list")
def judge_list(
    store: StoreOption,
    show_all: Annotated[
        bool, typer.Option("--all", help="Also the judgements already acknowledged.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print them as a JSON list.")] = False,
) -> None:
    """Show the low-scored turns waiting for a human (the body of `lgsp judge list`)."""
    url, shown = db_url(store, flag="--store")
    with ExitStack() as stack:
        memory = open_memory(stack, url)
        assert memory is not None
        try:
            items = judge_reviews(memory, status="all" if show_all else "open")
        except Exception as exc:
            fail(f"cannot read the judge's queue in {shown}: {error_line(exc)}")
    if as_json:
        typer.echo(json.dumps([i.to_dict() for i in items], indent=2, ensure_ascii=False))
        return
    console = out()
    if not items:
        console.print(f"No {'' if show_all else 'open '}low-scored turns in {shown}.")
        return
    table = new_table(f"Turns the judge scored low in {shown}", show_lines=True)
    table.add_column("Key", no_wrap=True)
    table.add_column("Score", no_wrap=True)
    table.add_column("Judged at (UTC)", no_wrap=True)
    table.add_column("Task / reasons", overflow="fold", ratio=1)
    table.add_column("Review", overflow="fold")
    for item in items:
        reasons = "; ".join(item.reasons) or "(no reasons)"
        review = (
            f"acknowledged by {item.acknowledged_by}"
            + (f": {one_line(item.note, 200)}" if item.note else "")
            if item.review == "acknowledged"
            else "open"
        )
        table.add_row(
            item.key,
            _score(item),
            item.judged_at[:19].replace("T", " "),
            f"{one_line(item.task, 200)}\n{one_line(reasons, 400)}",
            review,
        )
    console.print(table)
    console.print(
        f"{plural(len(items), 'turn')}; acknowledge one with "
        f"lgsp judge resolve KEY --store ... --as NAME."
    )


@judge_app.command("resolve")
def judge_resolve(
    key: Annotated[str, typer.Argument(help="The judgement's key (lgsp judge list shows it).")],
    store: StoreOption,
    reviewer: Annotated[
        str | None,
        typer.Option(
            "--as",
            envvar="LGSP_REVIEWER",
            help="Who acknowledges it (default: $LGSP_REVIEWER).",
            show_default=False,
        ),
    ] = None,
    note: Annotated[
        str, typer.Option("--note", help="What was done about it.", show_default=False)
    ] = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print it as JSON.")] = False,
) -> None:
    """Acknowledge a low-scored turn (the body of `lgsp judge resolve`)."""
    if not (reviewer or "").strip():
        fail("--as: name who acknowledges the judgement (or set LGSP_REVIEWER)")
    url, shown = db_url(store, flag="--store")
    with ExitStack() as stack:
        memory = open_memory(stack, url)
        assert memory is not None
        try:
            item = acknowledge_judgement(memory, key, by=str(reviewer), note=note)
        except (JudgementNotFoundError, ValueError) as exc:
            fail(f"{shown}: {exc.args[0] if exc.args else exc}")
        except Exception as exc:
            fail(f"cannot update the judge's queue in {shown}: {error_line(exc)}")
    if as_json:
        typer.echo(json.dumps(item.to_dict(), indent=2, ensure_ascii=False))
        return
    out().print(f"Acknowledged {item.key} (score {_score(item)}) as {item.acknowledged_by}.")

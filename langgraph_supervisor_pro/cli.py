"""The `lgsp` command.

`lgsp demo` runs a three-worker team end to end, offline (scripted models, the embedded
SQLite checkpointer), and shows each routing decision and worker result as it happens,
then the ledger and the final answer. Re-running it with the same `--thread-id` (and
`--db`) shows the stored run, or resumes it if it was interrupted.

Example:
    ```console
    $ lgsp demo                       # checkpoints in .lgsp/demo.db
    $ lgsp demo --delay 0 --db /tmp/demo.db --thread-id launch-de
    $ lgsp demo --db /tmp/demo.db --thread-id launch-de   # shows the stored run
    $ python -m langgraph_supervisor_pro.cli demo --plain
    ```
"""

from __future__ import annotations

import shlex
import sqlite3
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import StreamMode
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from langgraph_supervisor_pro import _demo
from langgraph_supervisor_pro.checkpoint import open_checkpointer
from langgraph_supervisor_pro.state import SupervisorInput

__all__ = ["DEFAULT_DEMO_DB", "app", "main"]

DEFAULT_DEMO_DB = Path(".lgsp") / "demo.db"
"""Where `lgsp demo` keeps its checkpoints unless `--db` says otherwise (relative to the
working directory, so a later `--thread-id` run finds them)."""

_STREAM_MODES: list[StreamMode] = ["updates", "custom", "messages"]
_EXIT_INTERRUPTED = 130
_FINISHED = ("done", "halted", "failed")

app = typer.Typer(
    name="lgsp",
    help="langgraph-supervisor-pro: supervisor/worker graphs for LangGraph.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)


def _version(value: bool) -> None:
    if value:
        from langgraph_supervisor_pro import __version__

        typer.echo(f"lgsp {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """langgraph-supervisor-pro: supervisor/worker graphs for LangGraph."""


_DEMO_HELP = """Run a three-worker team end to end, offline, and watch the supervisor route.

A researcher (a LangGraph agent with a tool), an analyst (an async function that streams
progress) and a writer answer whether to launch a product in Germany. The supervisor
invents a worker that does not exist and is re-asked; the analyst's first attempt fails
on bad data and the supervisor re-routes. Every step is checkpointed in SQLite."""


@app.command(help=_DEMO_HELP)
def demo(
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help=f"SQLite file for the checkpoints, created if missing "
            f"(default: {DEFAULT_DEMO_DB}).",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    thread_id: Annotated[
        str | None,
        typer.Option(
            "--thread-id",
            help="Thread to run (default: a new demo-<id>). An existing thread is shown, or "
            "resumed if it was interrupted, instead of run again.",
            show_default=False,
        ),
    ] = None,
    delay: Annotated[
        float,
        typer.Option("--delay", min=0.0, help="Seconds to pause after each event (0 = no pause)."),
    ] = 0.4,
    plain: Annotated[
        bool,
        typer.Option("--plain", help="No colours or animation (automatic when not a terminal)."),
    ] = False,
) -> None:
    """Run the demo team on a thread, or show or resume the thread if it exists.

    Its `--help` text is `_DEMO_HELP`.

    Example:
        ```console
        $ lgsp demo --delay 0 --db /tmp/demo.db --thread-id launch-de
        ```
    """
    console = _console(plain)
    db_path = (db if db is not None else DEFAULT_DEMO_DB).expanduser()
    shown = str(db_path) if db is not None else f"{db_path} (default)"
    thread = thread_id if thread_id is not None else f"demo-{uuid.uuid4().hex[:8]}"
    if not thread.strip():
        _fail("--thread-id must not be empty")
    team = _demo.build_demo_team()
    with ExitStack() as stack:
        saver = _open_db(stack, db_path)
        try:
            status = _run(
                console,
                team,
                saver,
                db_path=db_path,
                shown=shown,
                thread=thread,
                delay=delay,
                animate=not plain and console.is_terminal,
            )
        except sqlite3.Error as exc:
            _fail(f"the checkpoint database {db_path} failed during the run: {exc}")
    if status != "done":
        raise typer.Exit(code=1)


def _console(plain: bool) -> Console:
    if plain:
        return Console(color_system=None, highlight=False, emoji=False)
    return Console(highlight=False, emoji=False)


def _fail(message: str, *, code: int = 1) -> NoReturn:
    Console(stderr=True, highlight=False).print(f"[bold red]Error:[/] {escape(message)}")
    raise typer.Exit(code=code)


def _open_db(stack: ExitStack, path: Path) -> BaseCheckpointSaver[str]:
    """Open the SQLite checkpointer, or exit with a message that says what is wrong."""
    absolute = path.resolve()
    if absolute.is_dir():
        _fail(f"--db {path} is a directory; give a file path such as {path / 'demo.db'}")
    blocker = next((p for p in absolute.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        _fail(f"cannot open the checkpoint database {path}: {blocker} is a file, not a directory")
    try:
        return stack.enter_context(open_checkpointer(f"sqlite:///{absolute}"))
    except (OSError, sqlite3.Error, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        _fail(f"cannot open the checkpoint database {path}: {reason}")


def _run(
    console: Console,
    team: _demo.DemoTeam,
    saver: BaseCheckpointSaver[str],
    *,
    db_path: Path,
    shown: str,
    thread: str,
    delay: float,
    animate: bool,
) -> str:
    """Run the thread (or show it when it already ran, or resume it); return its status."""
    graph = team.compile(saver)
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    inspect = f"lgsp demo --db {shlex.quote(str(db_path))} --thread-id {shlex.quote(thread)}"
    _demo.render_header(console, team, location=shown, thread_id=thread)
    snapshot = graph.get_state(config)
    stored = snapshot.values
    reasks: int | None = None
    if stored.get("status") in _FINISHED:
        console.print(
            Text.assemble(
                ("Thread ", "bold"),
                (thread, "bold"),
                (" already ran: showing its stored state. ", "bold"),
                "Leave out --thread-id (or pass a new one) to start a fresh run.",
            )
        )
    else:
        # A thread with state that has not finished was interrupted: resume it. Its last
        # checkpoint may hold a finished step's writes, which LangGraph replays, not re-runs.
        inputs = SupervisorInput(messages=[HumanMessage(team.task)]) if not stored else None
        if stored:
            hops = len(_demo.current_ledger(stored))
            console.print(
                Text.assemble(
                    ("Resuming ", "bold yellow"),
                    (thread, "bold"),
                    (f" from its last checkpoint ({hops} hops stored).", "bold yellow"),
                )
            )
        renderer = _demo.DemoRenderer(console=console, team=team, delay=delay, animate=animate)
        try:
            for part in graph.stream(
                inputs,
                config,
                stream_mode=_STREAM_MODES,
                subgraphs=True,
                durability="sync",
                version="v2",
            ):
                renderer.handle(part)
        except KeyboardInterrupt:
            renderer.finish()
            console.print()
            console.print(
                Text.assemble(
                    ("Interrupted. ", "bold yellow"),
                    "Each finished step is checkpointed; resume with: ",
                    (inspect, "bold"),
                )
            )
            raise typer.Exit(code=_EXIT_INTERRUPTED) from None
        finally:
            renderer.finish()
        reasks = renderer.reasks

    values = graph.get_state(config).values
    _demo.render_outcome(console, values)
    ledger = _demo.current_ledger(values)
    halt = values.get("halt_reason")
    _demo.Footer(
        status=str(values.get("status", "running")),
        hops=len(ledger),
        failed=sum(1 for entry in ledger if entry["status"] == "failed"),
        reasks=reasks,
        halt=f"{halt}: {values.get('halt_detail')}" if halt else None,
        checkpoints=_count(saver, thread, namespace=""),
        all_checkpoints=_count(saver, thread),
        database=str(db_path.resolve()),
        thread_id=thread,
        inspect=inspect,
    ).render(console)
    return str(values.get("status", "running"))


def _count(saver: BaseCheckpointSaver[str], thread: str, namespace: str | None = None) -> int:
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    if namespace is not None:
        config["configurable"]["checkpoint_ns"] = namespace
    return sum(1 for _ in saver.list(config))


def main() -> None:
    """Run the `lgsp` command line (the console script's entry point).

    Example:
        ```console
        $ lgsp demo --delay 0
        ```
    """
    app(prog_name="lgsp")


if __name__ == "__main__":
    main()

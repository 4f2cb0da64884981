"""The `lgsp` command.

`lgsp demo` plays the `support_desk` template offline (its own graph, in the `supervised`
tier, on an embedded SQLite checkpointer): a refund that pauses at the review gate (asked
on a terminal, `--yes` approves, no terminal approves and says so), a tool call the
allowlist refuses, a compaction; each routing decision, tool call and worker result as it
happens, then the ledger, per-worker figures and the answers. Re-running it with the same
`--thread-id` (and `--db`) shows the stored run, or carries it on if it was interrupted.

`lgsp runs --db DB` lists the threads of a checkpoint database (SQLite or Postgres) with
their status, turn, step, pending reviews and last activity, newest first.

`lgsp new TEMPLATE DIR` writes a runnable project from a template (`lgsp new --list`
shows them).

`lgsp review` is the review desk (see `langgraph_supervisor_pro.review._desk`): `list` shows
the reviews pending in a checkpoint database across threads, with their context;
`approve`, `reject`, `edit` and `respond` answer one and resume its run in this
process, as the reviewer `--as NAME` (or `LGSP_REVIEWER`), which the run records with the
time; `sweep` applies the on-timeout action (reject, or escalate) to expired ones, as
`lgsp:sweep`. A reviewer the review policy does not allow (`--policy FILE`, else
`LGSP_POLICY_FILE`, else the graph's own gates) is refused with exit code 2.
Every error of a command is one line on stderr, with exit code 2. Resuming needs the
graph: `--graph path/to/app.py:ATTR` or `package.module:ATTR` names an uncompiled
`StateGraph`, or a function returning one, which is compiled with the checkpointer opened
from `--db`.

`lgsp standby` (in `_standby.py`) resumes, from their last checkpoint, the runs whose
process died while holding a thread lease (Postgres). `lgsp audit` (in `_audit.py`) shows
the timeline of one run for a compliance reader.

`lgsp metrics` (in `_metrics.py`) prints the delegation metrics of a checkpoint database
(`observability.metrics`): completion, routing, handoffs, workers, utilisation, reviews.

`lgsp prune` (in `_prune.py`) deletes finished threads older than `--older-than`
(`persistence.retention`): a dry run unless `--yes`.
`lgsp judge` (in `_judge.py`) is the online judge's review queue in a store: `list` shows
the turns scored below the threshold, `resolve KEY --as NAME` acknowledges one.

Example:
    ```console
    $ lgsp demo                       # checkpoints in .lgsp/demo.db
    $ lgsp demo --yes --delay 0 --db /tmp/demo.db --thread-id desk-1
    $ lgsp demo --db /tmp/demo.db --thread-id desk-1   # shows the stored run
    $ python -m langgraph_supervisor_pro.cli demo --plain
    $ lgsp runs --db /tmp/demo.db --json
    $ lgsp new --list
    $ lgsp new support_desk myapp
    $ lgsp review list --db postgresql://app@db/app
    $ lgsp review approve --db postgresql://app@db/app --graph app/team.py:graph --thread t1
    $ lgsp review approve --db ... --graph ... --thread t1 --as alice --policy policy.toml
    $ lgsp review reject --db ... --graph myapp.team:build --thread t1 --message "Too much."
    $ lgsp review edit --db ... --graph ... --thread t1 --args '{"order_id": "O-7", "amount": 20}'
    $ lgsp review sweep --db ... --graph ...
    $ lgsp standby --db postgresql://app@db/app --graph app/team.py:graph
    $ lgsp metrics --db postgresql://app@db/app --since 24h --json
    $ lgsp prune --db postgresql://app@db/app --older-than 30d --yes
    $ lgsp judge list --store postgresql://app@db/app
    $ lgsp judge resolve order-7:1 --store postgresql://app@db/app --as alice
    ```
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import sqlite3
import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from langgraph.types import Command, StreamMode
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from langgraph_supervisor_pro._internal.storable import check_thread_id
from langgraph_supervisor_pro._internal.text import (
    ID_CHARS,
    content_text,
    one_line,
    shown_id,
    truncate,
)
from langgraph_supervisor_pro._state import SupervisorInput
from langgraph_supervisor_pro.cli import (
    _audit,
    _demo,
    _demo_render,
    _judge,
    _metrics,
    _prune,
    _runs,
    _standby,
    _templates,
)
from langgraph_supervisor_pro.cli._common import (
    EXIT_USAGE,
    db_url,
    error_line,
    fail,
    load_graph,
    open_memory,
    open_saver,
    seconds,
)
from langgraph_supervisor_pro.errors import (
    DemoError,
    InvalidDecisionError,
    LGSPError,
    ReviewerNotAllowedError,
    ReviewNotFoundError,
    TemplateError,
)
from langgraph_supervisor_pro.persistence._checkpointers import open_checkpointer
from langgraph_supervisor_pro.review._desk import (
    Approve,
    DecisionInput,
    Edit,
    Reject,
    Respond,
    check_reviewer,
    get_review,
    list_reviews,
    resolve_review,
    sweep_reviews,
)
from langgraph_supervisor_pro.review._payload import PendingReview
from langgraph_supervisor_pro.review._policy import POLICY_FILE_ENV, ReviewPolicy

__all__ = ["DEFAULT_DEMO_DB", "app", "main", "review_app"]

DEFAULT_DEMO_DB = Path(".lgsp") / "demo.db"
"""Where `lgsp demo` keeps its checkpoints unless `--db` says otherwise (relative to the
working directory, so a later `--thread-id` run finds them)."""

_STREAM_MODES: list[StreamMode] = ["updates"]
_EXIT_RUN_ENDED_EARLY = 1
"""The exit code when a run the command drove ended `halted` or `failed`."""
_EXIT_INTERRUPTED = 130


# Click's error base class: typer re-exports it as the base of `typer.BadParameter`,
# from its own copy of click in recent versions and from click in older ones.
_CLICK_ERROR: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)


class _OneLineErrors(TyperGroup):
    """The `lgsp` group: each usage error is one line on stderr, with exit code 2.

    An unknown option, a missing argument or a bad value prints
    `Error: ... (see lgsp CMD --help)` instead of click's usage box.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        def run(standalone: bool) -> Any:
            return super(_OneLineErrors, self).main(
                args, prog_name, complete_var, standalone, windows_expand_args, **extra
            )

        if not standalone_mode:
            return run(False)
        try:
            code = run(False)
        except _CLICK_ERROR as exc:
            ctx = getattr(exc, "ctx", None)
            if type(exc).__name__ == "NoArgsIsHelpError":  # `lgsp`, `lgsp review`: the help
                typer.echo(getattr(exc, "format_message", str)())
                sys.exit(EXIT_USAGE)
            hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
            message = one_line(str(getattr(exc, "format_message", str)()), 2000).rstrip(".")
            Console(stderr=True, highlight=False, soft_wrap=True).print(
                f"[bold red]Error:[/] {escape(message)}{escape(hint)}", soft_wrap=True
            )
            sys.exit(int(getattr(exc, "exit_code", EXIT_USAGE)))
        except typer.Abort:
            typer.echo("Aborted.", err=True)
            sys.exit(_EXIT_INTERRUPTED)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    name="lgsp",
    cls=_OneLineErrors,
    help="langgraph-supervisor-pro: supervisor/worker graphs for LangGraph. "
    "Each command's errors are one line on stderr, with exit code 2.",
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


_DEMO_HELP = """Run the support desk template offline and watch its guards work.

The support_desk template (the project `lgsp new support_desk` writes) answers three
customer messages on one thread, checkpointed in SQLite: a refund of a double charge
pauses at a review gate (the supervised tier reviews high-risk tools: asked on a terminal,
approved with --yes, and approved, saying so, when there is no terminal); a help-center
comment talks tech support into a refund, which the least-privilege allowlist refuses;
billing's history is compacted before the follow-up. Then the ledger, per-worker figures
and the answers.

Exit codes: 0 when the run is done, 1 when it ended halted or failed (the run's outcome,
not an error of the command), 2 for an error of the command (one line on stderr), 130
when interrupted (resume with the same --db and --thread-id)."""


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
            help="Thread to run (default: a new demo-<id>). An existing thread is shown when "
            "it ran to the end, else carried on from its last checkpoint (a paused review is "
            "asked again, a crashed turn resumed).",
            show_default=False,
        ),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option("--yes", "-y", help="Approve the refund review without asking."),
    ] = False,
    delay: Annotated[
        str,
        typer.Option("--delay", help="Pause after each event: 0.4s, 1s, or seconds (0 = none)."),
    ] = "0.4s",
    plain: Annotated[
        bool,
        typer.Option("--plain", help="No colours (automatic when not a terminal)."),
    ] = False,
) -> None:
    """Run the support desk demo on a thread, or show or carry on the thread if it exists.

    Its `--help` text is `_DEMO_HELP`.

    Example:
        ```console
        $ lgsp demo --yes --delay 0 --db /tmp/demo.db --thread-id desk-1
        ```
    """
    console = _console(plain)
    db_path = (db if db is not None else DEFAULT_DEMO_DB).expanduser()
    shown = str(db_path) if db is not None else f"{db_path} (default)"
    thread = thread_id if thread_id is not None else f"demo-{uuid.uuid4().hex[:8]}"
    if not thread.strip():
        fail("--thread-id must not be empty")
    try:
        desk = _demo.load_desk()
    except DemoError as exc:
        fail(str(exc))
    with ExitStack() as stack:
        saver = _open_db(stack, db_path)
        stack.enter_context(_quiet_security_log())
        try:
            status = _run(
                console,
                desk,
                saver,
                db_path=db_path,
                shown=shown,
                thread=thread,
                delay=seconds(delay, flag="--delay", high=60.0),
                approve=yes,
            )
        except sqlite3.Error as exc:
            fail(f"the checkpoint database {db_path} failed during the run: {exc}")
    if status != "done":
        raise typer.Exit(code=_EXIT_RUN_ENDED_EARLY)


_NEW_HELP = """Write a runnable project from a template into DIR (new, or empty).

`lgsp new --list` shows the templates. The project has its own README, pyproject.toml,
langgraph.json (for `langgraph dev` and LangGraph Studio) and offline tests."""


@app.command(help=_NEW_HELP)
def new(
    template: Annotated[
        str | None, typer.Argument(help="The template, e.g. support_desk.", show_default=False)
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Argument(help="Where to write the project.", show_default=False),
    ] = None,
    list_: Annotated[
        bool, typer.Option("--list", help="Show the templates, one line each, and exit.")
    ] = False,
) -> None:
    """Write a project from a template, or list the templates.

    Its `--help` text is `_NEW_HELP`.

    Example:
        ```console
        $ lgsp new support_desk myapp
        ```
    """
    try:
        known = _templates.templates()
    except TemplateError as exc:
        fail(str(exc))
    if list_:
        width = max((len(name) for name in known), default=0)
        for item in known.values():
            typer.echo(f"{item.name.ljust(width)}  {item.description}")
        return
    if template is None or directory is None:
        fail(
            "give a template and a directory (lgsp new TEMPLATE DIR); "
            f"the templates are: {', '.join(known)}"
        )
    try:
        written = _templates.write_project(template, directory.expanduser())
    except TemplateError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {directory}: {exc.strerror or exc}")
    typer.echo(f"Wrote the {written.name} project to {directory}: {written.description}")
    typer.echo(
        f"Next: cd {shlex.quote(str(directory))} and read README.md "
        "(pip install -e '.[dev]', pytest, langgraph dev)."
    )


def _console(plain: bool) -> Console:
    if plain:
        return Console(color_system=None, highlight=False, emoji=False)
    return Console(highlight=False, emoji=False)


def _with_hint(exc: LGSPError, hint: str) -> str:
    """The error's text with `hint` after its message, before its troubleshooting link."""
    return str(exc).replace(exc.message, exc.message + hint, 1)


def _open_db(stack: ExitStack, path: Path) -> BaseCheckpointSaver[str]:
    """Open the SQLite checkpointer, or exit with a message that says what is wrong."""
    absolute = path.resolve()
    if absolute.is_dir():
        fail(f"--db {path} is a directory; give a file path such as {path / 'demo.db'}")
    blocker = next((p for p in absolute.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        fail(f"cannot open the checkpoint database {path}: {blocker} is a file, not a directory")
    try:
        return stack.enter_context(open_checkpointer(f"sqlite:///{absolute}"))
    except (OSError, sqlite3.Error, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        fail(f"cannot open the checkpoint database {path}: {reason}")


@contextmanager
def _quiet_security_log() -> Iterator[None]:
    """Keep the guard's warnings off stderr while the demo shows each refusal itself."""
    logger = logging.getLogger("langgraph_supervisor_pro.security")
    handler = logging.NullHandler()
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _interactive() -> bool:
    """Whether a person can answer a prompt: stdin and stdout are terminals."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def _decide(console: Console, review: Mapping[str, Any], *, approve: bool) -> str:
    """The demo's answer to a review: --yes, a person at a terminal, else approve."""
    action = str((review.get("action_requests") or [{}])[0].get("name", "the action"))
    if approve:
        console.print(Text.assemble(("Approved", "bold green"), f" {action} (--yes)."))
        return "approve"
    if not _interactive():
        console.print(
            Text.assemble(
                ("No terminal to ask on: approving ", "bold yellow"),
                (action, "bold"),
                (" (pass --yes to approve without asking).", "bold yellow"),
            )
        )
        return "approve"
    answer = ""
    while answer not in ("approve", "reject"):
        said = str(typer.prompt(f"Approve or reject {action}? [approve/reject]", default="approve"))
        answer = {"a": "approve", "r": "reject"}.get(said.strip().lower()[:1], "")
    style = "bold green" if answer == "approve" else "bold red"
    said = "Approved" if answer == "approve" else "Rejected"
    console.print(Text.assemble((said, style), f" {action}."))
    return answer


def _run(
    console: Console,
    desk: _demo.DemoDesk,
    saver: BaseCheckpointSaver[str],
    *,
    db_path: Path,
    shown: str,
    thread: str,
    delay: float,
    approve: bool,
) -> str:
    """Play the conversation on the thread from wherever it stands; return its status."""
    graph = desk.compile(saver)
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    inspect = f"lgsp demo --db {shlex.quote(str(db_path))} --thread-id {shlex.quote(thread)}"
    _demo_render.render_header(console, desk, location=shown, thread_id=thread)
    step = desk.next_step(graph.get_state(config))
    if step.kind == "done":
        console.print()
        console.print(
            Text.assemble(
                ("Thread ", "bold"),
                (thread, "bold"),
                (" already ran: showing its stored state. ", "bold"),
                "Leave out --thread-id (or pass a new one) to start a fresh run.",
            )
        )
    elif step.kind != "start":
        console.print()
        console.print(
            Text.assemble(
                ("Carrying on ", "bold yellow"),
                (thread, "bold"),
                (f" from its last checkpoint (turn {step.turn}).", "bold yellow"),
            )
        )
    renderer = _demo_render.DemoRenderer(console=console, delay=delay)
    while step.kind != "done":
        inputs: Any
        if step.kind == "start":
            _demo_render.render_turn(console, step.turn, step.text)
            inputs = SupervisorInput(messages=[HumanMessage(step.text)])
        elif step.kind == "resume":
            asked = _demo.customer_messages(graph.get_state(config).values)
            _demo_render.render_turn(console, step.turn, asked[-1].text, resumed=True)
            inputs = None
        else:
            _demo_render.render_review(console, step.review or {})
            decision = _decide(console, step.review or {}, approve=approve)
            inputs = Command(resume={"decisions": [{"type": decision}], "reviewer": "lgsp demo"})
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
            console.print()
            console.print(
                Text.assemble(
                    ("Interrupted. ", "bold yellow"),
                    "Each finished step is checkpointed; carry on with: ",
                    (inspect, "bold"),
                )
            )
            raise typer.Exit(code=_EXIT_INTERRUPTED) from None
        snapshot = graph.get_state(config)
        if snapshot.values.get("status") in ("halted", "failed") and not snapshot.interrupts:
            break
        step = desk.next_step(snapshot)

    values = graph.get_state(config).values
    _demo_render.render_outcome(console, values)
    halt = values.get("halt_reason")
    _demo_render.Footer(
        status=str(values.get("status", "running")),
        turns=len(_demo.customer_messages(values)),
        hops=len(values.get("ledger") or ()),
        refused=len(values.get("security") or ()),
        reviews=len(values.get("reviews") or ()),
        compactions=len(values.get("compactions") or ()),
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


# --------------------------------------------------------------------------- lgsp review

_REVIEW_HELP = """Pending human reviews: list them, answer them, sweep expired ones.

A run paused at a review gate waits in the checkpoint database, for as long as it must.
`list` shows the reviews pending across threads with their context; `approve`, `reject`,
`edit` and `respond` answer one and resume its run here, until it ends or pauses again;
`sweep` rejects expired reviews, or escalates them when their policy says so."""

review_app = typer.Typer(
    name="review",
    help=_REVIEW_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
app.add_typer(review_app, name="review")

_ID_SHOWN = 12
_ARGS_SHOWN = 60
_ANSWER_SHOWN = 300


def _option(flag: str, text: str) -> Any:
    """A review command's `flag` option, with help `text` and no default shown."""
    return typer.Option(flag, help=text, show_default=False)


DbOption = Annotated[
    str,
    _option(
        "--db", "The checkpoint database: postgresql://..., sqlite:///path.db, or a SQLite file."
    ),
]
GraphOption = Annotated[
    str,
    _option(
        "--graph",
        "The runs' graph: path/to/file.py:ATTR or package.module:ATTR, naming an "
        "uncompiled StateGraph or a function returning one (compiled with --db).",
    ),
]
StoreOption = Annotated[
    str | None,
    _option(
        "--store",
        "The store the runs' graph is compiled with (its external memory), in --db's forms; "
        "give it when the graph uses one, so a resumed run reads its earlier hops' outputs.",
    ),
]
ThreadOption = Annotated[str, _option("--thread", "The thread the run is paused on.")]
IdOption = Annotated[
    str | None,
    _option("--id", "The review's interrupt id (or a unique prefix), when the thread has several."),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")
]
REVIEWER_ENV = "LGSP_REVIEWER"
"""The environment variable naming who answers reviews from `lgsp review` (`--as` wins)."""

ReviewerOption = Annotated[
    str | None,
    typer.Option(
        "--as",
        envvar=REVIEWER_ENV,
        help="Who answers: your identity, recorded with the answer in the run's state "
        f"(default: ${REVIEWER_ENV}). A review policy that restricts who may answer "
        "refuses anyone else.",
        show_default=False,
    ),
]
PolicyOption = Annotated[
    Path | None,
    typer.Option(
        "--policy",
        help="A review policy file (JSON or TOML) whose members are checked before the run "
        f"is resumed (default: ${POLICY_FILE_ENV}, if set). The graph's own gates check "
        "their policy in any case.",
        dir_okay=False,
        show_default=False,
    ),
]
_RejectMessage = Annotated[
    str, _option("--message", "Why: goes back to the worker (or the supervisor).")
]
_RespondMessage = Annotated[
    str, _option("--message", "The answer that stands in for the action's result.")
]
_EditArgs = Annotated[
    str, _option("--args", "The arguments to run the action with, as a JSON object.")
]
_EditAction = Annotated[
    str | None,
    _option(
        "--action",
        "The action's name (default: the reviewed one; a dispatch review may name "
        "another worker, dispatch:<worker>).",
    ),
]
_SweepNow = Annotated[
    str | None,
    _option(
        "--now",
        "Compare deadlines with this ISO-8601 time instead of the current time "
        "(UTC when no offset is given).",
    ),
]


def _now(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        fail(f"--now: {value!r} is not an ISO-8601 time (e.g. 2030-01-01T00:00:00+00:00)")
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _deadline_text(review: PendingReview, now: datetime) -> Text:
    if review.deadline is None:
        return Text("none", style="dim")
    shown = review.deadline.strftime("%Y-%m-%d %H:%M UTC")
    if review.expired(now):
        return Text(f"{shown} (expired)", style="bold red")
    return Text(shown)


def _args_text(review: PendingReview) -> str:
    args = json.dumps(dict(review.args), ensure_ascii=False, default=str, sort_keys=True)
    return one_line(args, _ARGS_SHOWN)


def _task_text(review: PendingReview) -> Text:
    text = Text.assemble(one_line(review.task, 160), "\n", (one_line(review.reason, 160), "dim"))
    if review.invalid_answer:
        text.append(f"\nlast answer refused: {review.invalid_answer}", style="yellow")
    return text


@review_app.command("list")
def review_list(
    db: DbOption,
    as_json: JsonOption = False,
    thread: Annotated[
        list[str] | None,
        typer.Option("--thread", help="Only this thread (repeat for several).", show_default=False),
    ] = None,
    expired: Annotated[
        bool, typer.Option("--expired", help="Only reviews whose deadline has passed.")
    ] = False,
) -> None:
    """Show the reviews pending across threads, with their context.

    Example:
        ```console
        $ lgsp review list --db postgresql://app@db/app --expired
        ```
    """
    url, shown = db_url(db)
    now = datetime.now(UTC)
    with ExitStack() as stack:
        saver = open_saver(stack, url, shown)
        try:
            reviews = list_reviews(saver, now=now, thread_ids=thread, expired_only=expired)
        except Exception as exc:
            fail(f"cannot read the reviews in {shown}: {one_line(str(exc), 300)}")
    if as_json:
        typer.echo(json.dumps([r.to_dict(now=now) for r in reviews], indent=2, default=str))
        return
    console = Console(highlight=False, emoji=False)
    if not reviews:
        console.print(f"No pending reviews{' past their deadline' if expired else ''} in {shown}.")
        return
    table = Table(
        title=f"Pending reviews in {shown}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_lines=True,
    )
    table.add_column("Thread / review", no_wrap=True)
    table.add_column("Action", overflow="fold", ratio=1)
    table.add_column("Worker / risk", no_wrap=True)
    table.add_column("Reviewers / deadline", no_wrap=True)
    table.add_column("Task / reason", overflow="fold", ratio=2)
    for review in reviews:
        escalated = f" (escalated x{len(review.escalations)})" if review.escalated else ""
        reviewers = f"{review.reviewers or '-'}{escalated}"
        table.add_row(
            Text.assemble(review.thread_id, "\n", (review.interrupt_id[:_ID_SHOWN], "dim")),
            Text.assemble(f"{review.kind}: {review.action}", "\n", (_args_text(review), "dim")),
            Text.assemble(review.worker or "-", "\n", review.risk or "-"),
            Text.assemble(reviewers, "\n", _deadline_text(review, now)),
            _task_text(review),
        )
    console.print(table)
    late = sum(1 for r in reviews if r.expired(now))
    console.print(
        f"{len(reviews)} pending review{'' if len(reviews) == 1 else 's'}"
        + (f", {late} past the deadline" if late else "")
        + ". Answer one with: lgsp review approve|reject|edit|respond --db DB --graph "
        "MODULE:ATTR --thread THREAD [--id REVIEW]"
    )


def _outcome(
    graph: Pregel[Any, Any, Any, Any], saver: BaseCheckpointSaver[str], thread: str
) -> dict[str, Any]:
    """Where the run stands after a decision: its status, next pause, or answer."""
    snapshot = graph.get_state({"configurable": {"thread_id": thread}})
    values = snapshot.values if isinstance(snapshot.values, Mapping) else {}
    pending = list_reviews(saver, thread_ids=[thread], graph=graph)
    messages = values.get("messages") or []
    last = messages[-1] if messages and not pending else None
    answer = content_text(getattr(last, "content", "")) if last is not None else None
    return {
        "status": values.get("status"),
        "next": list(snapshot.next),
        "pending": [r.to_dict() for r in pending],
        "answer": answer,
        "halt_reason": values.get("halt_reason"),
        "halt_detail": values.get("halt_detail"),
    }


@contextmanager
def _compiled(
    db: str, graph_spec: str, store: str | None = None
) -> Iterator[tuple[Pregel[Any, Any, Any, Any], BaseCheckpointSaver[str]]]:
    """The `--graph` graph compiled with the `--db` checkpointer and the `--store` store."""
    url, shown = db_url(db)
    builder = load_graph(graph_spec)
    with ExitStack() as stack:
        saver = open_saver(stack, url, shown)
        memory = open_memory(stack, store)
        yield builder.compile(checkpointer=saver, store=memory), saver


def _policy(path: Path | None) -> ReviewPolicy | None:
    """The review policy `--policy` names, else the deployment's (`LGSP_POLICY_FILE`)."""
    try:
        if path is not None:
            return ReviewPolicy.from_file(path.expanduser())
        if os.environ.get(POLICY_FILE_ENV, "").strip():
            return ReviewPolicy.from_env()
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        fail(f"--policy: {one_line(reason, 300)}")
    return None


def _resolve(
    db: str,
    graph_spec: str,
    thread: str,
    interrupt_id: str | None,
    as_json: bool,
    verb: str,
    decision: DecisionInput,
    reviewer: str | None = None,
    policy_file: Path | None = None,
    store: str | None = None,
) -> None:
    """Answer the review on `thread` with `decision`, resume the run, report the outcome.

    The body of `lgsp review approve|reject|edit|respond`, given their shared options.
    """
    if not thread.strip():
        fail("--thread must not be empty")
    try:
        check_thread_id(thread, where="--thread")
        who = check_reviewer(reviewer, where=f"--as (or {REVIEWER_ENV})")
    except ValueError as exc:
        fail(str(exc))
    policy = _policy(policy_file)
    with _compiled(db, graph_spec, store) as (graph, saver):
        try:
            review = get_review(graph, thread_id=thread, interrupt_id=interrupt_id)
            resolve_review(
                graph,
                thread_id=thread,
                decision=decision,
                reviewer=who,
                interrupt_id=review.interrupt_id,
                durability="sync",
                policy=policy,
            )
        except ReviewNotFoundError as exc:
            fail(str(exc))
        except InvalidDecisionError as exc:
            fail(_with_hint(exc, " (the run was not changed)"))
        except ReviewerNotAllowedError as exc:
            hint = "" if who is not None else f"; answer with --as NAME (or {REVIEWER_ENV})"
            fail(_with_hint(exc, hint))
        except Exception as exc:
            fail(
                f"the run on thread {shown_id(thread)} failed after the decision: {error_line(exc)}"
            )
        outcome = _outcome(graph, saver, thread)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "thread_id": thread,
                    "interrupt_id": review.interrupt_id,
                    "decision": verb,
                    "reviewer": who,
                    **outcome,
                },
                indent=2,
                default=str,
            )
        )
        return
    console = Console(highlight=False, emoji=False)
    console.print(
        f"{verb.capitalize()} review {review.interrupt_id} ({review.kind} {review.action}"
        f"{f' by {review.worker}' if review.worker and review.kind == 'tool' else ''}) on "
        f"thread {truncate(thread, ID_CHARS)}{f' as {who}' if who else ''}."
    )
    if outcome["pending"]:
        for item in outcome["pending"]:
            console.print(
                f"The run paused again at review {item['interrupt_id']}: {item['kind']} "
                f"{item['action']} ({item['reason']})."
            )
        return
    status = outcome["status"] or "running"
    line = f"Run status: {status}"
    if outcome["halt_reason"]:
        line += f" ({outcome['halt_reason']}: {outcome['halt_detail']})"
    console.print(line + ".")
    if outcome["answer"]:
        console.print(f"Answer: {one_line(outcome['answer'], _ANSWER_SHOWN)}")


@review_app.command("approve")
def review_approve(
    db: DbOption,
    graph: GraphOption,
    thread: ThreadOption,
    interrupt_id: IdOption = None,
    reviewer: ReviewerOption = None,
    policy: PolicyOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Approve a pending review: the action runs as requested, and the run goes on.

    Example:
        ```console
        $ lgsp review approve --db postgresql://app@db/app --graph app/team.py:graph \
            --thread t1 --as alice
        ```
    """
    _resolve(
        db, graph, thread, interrupt_id, as_json, "approved", Approve(), reviewer, policy, store
    )


@review_app.command("reject")
def review_reject(
    db: DbOption,
    graph: GraphOption,
    thread: ThreadOption,
    message: _RejectMessage = "",
    interrupt_id: IdOption = None,
    reviewer: ReviewerOption = None,
    policy: PolicyOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Reject a pending review: the action does not run; the message goes back to the worker.

    Example:
        ```console
        $ lgsp review reject --db ... --graph ... --thread t1 --message "Over the limit."
        ```
    """
    _resolve(
        db,
        graph,
        thread,
        interrupt_id,
        as_json,
        "rejected",
        Reject(message=message),
        reviewer,
        policy,
        store,
    )


@review_app.command("edit")
def review_edit(
    db: DbOption,
    graph: GraphOption,
    thread: ThreadOption,
    args: _EditArgs,
    action: _EditAction = None,
    interrupt_id: IdOption = None,
    reviewer: ReviewerOption = None,
    policy: PolicyOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the reviewed action with changed arguments.

    Example:
        ```console
        $ lgsp review edit --db ... --graph ... --thread t1 --args '{"amount": 20}'
        ```
    """
    try:
        parsed = json.loads(args)
    except ValueError as exc:
        fail(f"--args: not valid JSON ({exc}); give a JSON object, e.g. '{{\"amount\": 20}}'")
    if not isinstance(parsed, dict):
        fail(f"--args: got a JSON {type(parsed).__name__}; give a JSON object of arguments")
    decision = Edit(args=parsed, name=action or None)
    _resolve(db, graph, thread, interrupt_id, as_json, "edited", decision, reviewer, policy, store)


@review_app.command("respond")
def review_respond(
    db: DbOption,
    graph: GraphOption,
    thread: ThreadOption,
    message: _RespondMessage,
    interrupt_id: IdOption = None,
    reviewer: ReviewerOption = None,
    policy: PolicyOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Answer instead of the action: the message stands in for its result.

    Example:
        ```console
        $ lgsp review respond --db ... --graph ... --thread t1 --message "Refunded by phone."
        ```
    """
    _resolve(
        db,
        graph,
        thread,
        interrupt_id,
        as_json,
        "answered",
        Respond(message=message),
        reviewer,
        policy,
        store,
    )


@review_app.command("sweep")
def review_sweep(
    db: DbOption,
    graph: GraphOption,
    now: _SweepNow = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Apply the on-timeout action to every expired review: reject, or escalate.

    Exit code 1 when a review could not be swept (each one is listed), 2 for an error of
    the command.

    Example:
        ```console
        $ lgsp review sweep --db postgresql://app@db/app --graph app/team.py:graph
        ```
    """
    moment = _now(now)
    with _compiled(db, graph, store) as (compiled, saver):
        try:
            actions = sweep_reviews(compiled, saver, now=moment, durability="sync")
        except Exception as exc:
            fail(f"the sweep failed: {error_line(exc)}")
    errors = [a for a in actions if a.action == "error"]
    if as_json:
        typer.echo(json.dumps([a.to_dict() for a in actions], indent=2, default=str))
    else:
        console = Console(highlight=False, emoji=False)
        for action in actions:
            style = "red" if action.action == "error" else "yellow"
            console.print(Text(action.line(), style=style))
        rejected = sum(1 for a in actions if a.action == "reject")
        escalated = sum(1 for a in actions if a.action == "escalate")
        console.print(
            f"Swept {len(actions)} expired review{'' if len(actions) == 1 else 's'}: "
            f"{rejected} rejected, {escalated} escalated, {len(errors)} failed."
        )
    if errors:
        raise typer.Exit(code=_EXIT_RUN_ENDED_EARLY)


# --------------------------------------------------------------------------- lgsp runs

_RUNS_HELP = """List the runs (threads) in a checkpoint database, newest activity first.

For each thread: its status (running, done, halted, failed), turn, step, the reviews it is
paused on, when it last moved and its latest task. --db takes a SQLite file (or
sqlite:///path.db) or a postgresql:// URL, like the review commands."""


@app.command("runs", help=_RUNS_HELP)
def runs(db: DbOption, as_json: JsonOption = False) -> None:
    """List the threads of a checkpoint database.

    Its `--help` text is `_RUNS_HELP`.

    Example:
        ```console
        $ lgsp runs --db .lgsp/demo.db
        ```
    """
    url, shown = db_url(db)
    with ExitStack() as stack:
        saver = open_saver(stack, url, shown)
        try:
            rows = _runs.list_runs(saver)
        except Exception as exc:
            fail(f"cannot read the runs in {shown}: {one_line(str(exc), 300)}")
    if as_json:
        typer.echo(json.dumps([row.to_dict() for row in rows], indent=2))
        return
    console = Console(highlight=False, emoji=False)
    if not rows:
        console.print(f"No runs in {shown}.")
        return
    table = Table(title=f"Runs in {shown}", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("Thread", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    table.add_column("Turn", justify="right")
    table.add_column("Step", justify="right")
    table.add_column("Pending reviews", justify="right")
    table.add_column("Last activity", no_wrap=True)
    table.add_column("Task", overflow="fold", ratio=1)
    for row in rows:
        when = (
            row.last_activity.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            if row.last_activity
            else "-"
        )
        table.add_row(
            row.thread_id,
            Text(row.status, style=_demo_render.RUN_STYLE.get(row.status, "")),
            "-" if row.turn is None else str(row.turn),
            "-" if row.step is None else str(row.step),
            Text(str(row.pending), style="bold yellow" if row.pending else ""),
            when,
            one_line(row.task, 80),
        )
    console.print(table)
    paused = sum(1 for row in rows if row.pending)
    console.print(
        f"{len(rows)} run{'' if len(rows) == 1 else 's'}"
        + (f", {paused} paused for review (lgsp review list --db ...)" if paused else "")
        + "."
    )


app.command("standby", help=_standby.HELP)(_standby.standby_command)
app.command("audit", help=_audit.HELP)(_audit.audit_command)
app.command("metrics", help=_metrics.HELP)(_metrics.metrics_command)
app.command("prune", help=_prune.HELP)(_prune.prune_command)
app.add_typer(_judge.judge_app, name="judge")


def main() -> None:
    """Run the `lgsp` command line (the console script's entry point).

    Example:
        ```console
        $ lgsp demo --delay 0
        ```
    """
    app(prog_name="lgsp")

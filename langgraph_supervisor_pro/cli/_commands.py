"""The `lgsp` Typer app, with `lgsp demo`, `new`, `runs` and `review ...` (private).

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/reference/cli/
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import sqlite3
import sys
import uuid
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from langgraph.types import Command
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from langgraph_supervisor_pro._internal.storable import check_thread_id
from langgraph_supervisor_pro._internal.text import content_text, cut_id, one_line, plural, shown_id
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
    DbOption,
    GraphOption,
    JsonOption,
    StoreOption,
    compiled,
    db_url,
    diverted,
    error_line,
    fail,
    new_table,
    open_dbs,
    option,
    out,
    print_error,
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

DEFAULT_DEMO_DB = Path(".lgsp") / "demo.db"
"""Where `lgsp demo` keeps its checkpoints unless `--db` says otherwise."""

_EXIT_RUN_ENDED_EARLY = 1  # a run the command drove ended `halted` or `failed`
_EXIT_INTERRUPTED = 130

# Click's error base class: typer re-exports it as the base of `typer.BadParameter`,
# from its own copy of click in recent versions and from click in older ones.
_CLICK_ERROR: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)


class _OneLineErrors(TyperGroup):
    """The `lgsp` group: a usage error is `Error: ... (see lgsp CMD --help)`, exit code 2."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        run = super().main
        if not standalone_mode:
            return run(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = run(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except _CLICK_ERROR as exc:
            ctx = getattr(exc, "ctx", None)
            if type(exc).__name__ == "NoArgsIsHelpError":  # `lgsp`, `lgsp review`: the help
                typer.echo(getattr(exc, "format_message", str)())
                sys.exit(EXIT_USAGE)
            hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
            message = one_line(str(getattr(exc, "format_message", str)()), 2000).rstrip(".")
            print_error(message + hint)
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


@app.command()
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
        option(
            "--thread-id",
            "Thread to run (default: a new demo-<id>). An existing thread is shown when "
            "it ran to the end, else carried on from its last checkpoint (a paused review is "
            "asked again, a crashed turn resumed).",
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
    """Run the support desk template offline and watch its guards work.

    The support_desk template (the project `lgsp new support_desk` writes) answers three
    customer messages on one thread, checkpointed in SQLite: a refund of a double charge
    pauses at a review gate (the supervised tier reviews high-risk tools: asked on a terminal,
    approved with --yes, and approved, saying so, when there is no terminal); a help-center
    comment talks tech support into a refund, which the least-privilege allowlist refuses;
    billing's history is compacted before the follow-up. Then the ledger, per-worker figures
    and the answers.

    Exit codes: 0 when the run is done, 1 when it ended halted or failed (the run's outcome,
    not an error of the command), 2 for an error of the command (one line on stderr), 130
    when interrupted (resume with the same --db and --thread-id).
    """
    console = out(color_system=None if plain else "auto")
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
        # The demo shows each refusal itself: the guard's warnings stay off stderr.
        stack.enter_context(diverted("langgraph_supervisor_pro.security", logging.NullHandler()))
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


@app.command()
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
    """Write a runnable project from a template into DIR (new, or empty).

    `lgsp new --list` shows the templates. The project has its own README, pyproject.toml,
    langgraph.json (for `langgraph dev` and LangGraph Studio) and offline tests.
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
                (f"Thread {thread} already ran: showing its stored state. ", "bold"),
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
        inputs: Any = None
        if step.kind == "start":
            _demo_render.render_turn(console, step.turn, step.text)
            inputs = SupervisorInput(messages=[HumanMessage(step.text)])
        elif step.kind == "resume":
            asked = _demo.customer_messages(graph.get_state(config).values)
            _demo_render.render_turn(console, step.turn, asked[-1].text, resumed=True)
        else:
            _demo_render.render_review(console, step.review or {})
            decision = _decide(console, step.review or {}, approve=approve)
            inputs = Command(resume={"decisions": [{"type": decision}], "reviewer": "lgsp demo"})
        try:
            for part in graph.stream(
                inputs,
                config,
                stream_mode=["updates"],
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
    _demo_render.render_footer(
        console,
        values,
        checkpoints=(_count(saver, thread, namespace=""), _count(saver, thread)),
        database=str(db_path.resolve()),
        thread_id=thread,
        inspect=inspect,
    )
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

ThreadOption = Annotated[str, option("--thread", "The thread the run is paused on.")]
IdOption = Annotated[
    str | None,
    option("--id", "The review's interrupt id (or a unique prefix), when the thread has several."),
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


def _deadline_text(review: PendingReview, now: datetime) -> Text:
    if review.deadline is None:
        return Text("none", style="dim")
    shown = review.deadline.strftime("%Y-%m-%d %H:%M UTC")
    return Text(f"{shown} (expired)", style="bold red") if review.expired(now) else Text(shown)


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
    """Show the reviews pending across threads, with their context."""
    url, shown = db_url(db)
    now = datetime.now(UTC)
    with open_dbs(url, shown) as (saver, _, _):
        try:
            reviews = list_reviews(saver, now=now, thread_ids=thread, expired_only=expired)
        except Exception as exc:
            fail(f"cannot read the reviews in {shown}: {one_line(str(exc), 300)}")
    if as_json:
        typer.echo(json.dumps([r.to_dict(now=now) for r in reviews], indent=2, default=str))
        return
    console = out()
    if not reviews:
        console.print(f"No pending reviews{' past their deadline' if expired else ''} in {shown}.")
        return
    table = new_table(f"Pending reviews in {shown}", show_lines=True)
    table.add_column("Thread / review", no_wrap=True)
    table.add_column("Action", overflow="fold", ratio=1)
    table.add_column("Worker / risk", no_wrap=True)
    table.add_column("Reviewers / deadline", no_wrap=True)
    table.add_column("Task / reason", overflow="fold", ratio=2)
    for review in reviews:
        escalated = f" (escalated x{len(review.escalations)})" if review.escalated else ""
        args = json.dumps(dict(review.args), ensure_ascii=False, default=str, sort_keys=True)
        task = Text.assemble(
            one_line(review.task, 160), "\n", (one_line(review.reason, 160), "dim")
        )
        if review.invalid_answer:
            task.append(f"\nlast answer refused: {review.invalid_answer}", style="yellow")
        table.add_row(
            Text.assemble(review.thread_id, "\n", (review.interrupt_id[:12], "dim")),
            Text.assemble(f"{review.kind}: {review.action}", "\n", (one_line(args, 60), "dim")),
            Text.assemble(review.worker or "-", "\n", review.risk or "-"),
            Text.assemble(
                f"{review.reviewers or '-'}{escalated}", "\n", _deadline_text(review, now)
            ),
            task,
        )
    console.print(table)
    late = sum(1 for r in reviews if r.expired(now))
    console.print(
        f"{plural(len(reviews), 'pending review')}"
        + (f", {late} past the deadline" if late else "")
        + ". Answer one with: lgsp review approve|reject|edit|respond --db DB --graph "
        "MODULE:ATTR --thread THREAD [--id REVIEW]"
    )


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


_VERBS: dict[type, str] = {
    Approve: "approved",
    Reject: "rejected",
    Edit: "edited",
    Respond: "answered",
}


def _resolve(
    decision: Approve | Reject | Edit | Respond,
    db: str,
    graph_spec: str,
    thread: str,
    interrupt_id: str | None,
    reviewer: str | None,
    policy_file: Path | None,
    store: str | None,
    as_json: bool,
) -> None:
    """Answer the review on `thread`, resume the run, report the outcome (`lgsp review ...`)."""
    if not thread.strip():
        fail("--thread must not be empty")
    try:
        check_thread_id(thread, where="--thread")
        who = check_reviewer(reviewer, where=f"--as (or {REVIEWER_ENV})")
    except ValueError as exc:
        fail(str(exc))
    policy = _policy(policy_file)
    with compiled(db, graph_spec, store) as (graph, saver):
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
    verb = _VERBS[type(decision)]
    if as_json:
        head = {"thread_id": thread, "interrupt_id": review.interrupt_id, "decision": verb}
        typer.echo(json.dumps({**head, "reviewer": who, **outcome}, indent=2, default=str))
        return
    console = out()
    worker = f" by {review.worker}" if review.worker and review.kind == "tool" else ""
    console.print(
        f"{verb.capitalize()} review {review.interrupt_id} ({review.kind} {review.action}"
        f"{worker}) on thread {cut_id(thread)}{f' as {who}' if who else ''}."
    )
    for item in outcome["pending"]:
        console.print(
            f"The run paused again at review {item['interrupt_id']}: {item['kind']} "
            f"{item['action']} ({item['reason']})."
        )
    if outcome["pending"]:
        return
    line = f"Run status: {outcome['status'] or 'running'}"
    if outcome["halt_reason"]:
        line += f" ({outcome['halt_reason']}: {outcome['halt_detail']})"
    console.print(line + ".")
    if outcome["answer"]:
        console.print(f"Answer: {one_line(outcome['answer'], 300)}")


def _outcome(
    graph: Pregel[Any, Any, Any, Any], saver: BaseCheckpointSaver[str], thread: str
) -> dict[str, Any]:
    """Where the run stands after a decision: its status, next pause, or answer."""
    snapshot = graph.get_state({"configurable": {"thread_id": thread}})
    values = snapshot.values if isinstance(snapshot.values, Mapping) else {}
    pending = list_reviews(saver, thread_ids=[thread], graph=graph)
    messages = values.get("messages") or []
    last = messages[-1] if messages and not pending else None
    return {
        "status": values.get("status"),
        "next": list(snapshot.next),
        "pending": [r.to_dict() for r in pending],
        "answer": content_text(getattr(last, "content", "")) if last is not None else None,
        "halt_reason": values.get("halt_reason"),
        "halt_detail": values.get("halt_detail"),
    }


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
    """Approve a pending review: the action runs as requested, and the run goes on."""
    _resolve(Approve(), db, graph, thread, interrupt_id, reviewer, policy, store, as_json)


@review_app.command("reject")
def review_reject(
    db: DbOption,
    graph: GraphOption,
    thread: ThreadOption,
    message: Annotated[
        str, option("--message", "Why: goes back to the worker (or the supervisor).")
    ] = "",
    interrupt_id: IdOption = None,
    reviewer: ReviewerOption = None,
    policy: PolicyOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Reject a pending review: the action does not run; the message goes back to the worker."""
    decision = Reject(message=message)
    _resolve(decision, db, graph, thread, interrupt_id, reviewer, policy, store, as_json)


@review_app.command("edit")
def review_edit(
    db: DbOption,
    graph: GraphOption,
    thread: ThreadOption,
    args: Annotated[
        str, option("--args", "The arguments to run the action with, as a JSON object.")
    ],
    action: Annotated[
        str | None,
        option(
            "--action",
            "The action's name (default: the reviewed one; a dispatch review may name "
            "another worker, dispatch:<worker>).",
        ),
    ] = None,
    interrupt_id: IdOption = None,
    reviewer: ReviewerOption = None,
    policy: PolicyOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the reviewed action with changed arguments."""
    try:
        parsed = json.loads(args)
    except ValueError as exc:
        fail(f"--args: not valid JSON ({exc}); give a JSON object, e.g. '{{\"amount\": 20}}'")
    if not isinstance(parsed, dict):
        fail(f"--args: got a JSON {type(parsed).__name__}; give a JSON object of arguments")
    decision = Edit(args=parsed, name=action or None)
    _resolve(decision, db, graph, thread, interrupt_id, reviewer, policy, store, as_json)


@review_app.command("respond")
def review_respond(
    db: DbOption,
    graph: GraphOption,
    thread: ThreadOption,
    message: Annotated[
        str, option("--message", "The answer that stands in for the action's result.")
    ],
    interrupt_id: IdOption = None,
    reviewer: ReviewerOption = None,
    policy: PolicyOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Answer instead of the action: the message stands in for its result."""
    decision = Respond(message=message)
    _resolve(decision, db, graph, thread, interrupt_id, reviewer, policy, store, as_json)


@review_app.command("sweep")
def review_sweep(
    db: DbOption,
    graph: GraphOption,
    now: Annotated[
        str | None,
        option(
            "--now",
            "Compare deadlines with this ISO-8601 time instead of the current time "
            "(UTC when no offset is given).",
        ),
    ] = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Apply the on-timeout action to every expired review: reject, or escalate.

    Exit code 1 when a review could not be swept (each one is listed), 2 for an error of
    the command.
    """
    moment: datetime | None = None
    if now is not None:
        try:
            moment = datetime.fromisoformat(now.strip())
        except ValueError:
            fail(f"--now: {now!r} is not an ISO-8601 time (e.g. 2030-01-01T00:00:00+00:00)")
        if moment.tzinfo is None or moment.utcoffset() is None:
            moment = moment.replace(tzinfo=UTC)
    with compiled(db, graph, store) as (graph_app, saver):
        try:
            actions = sweep_reviews(graph_app, saver, now=moment, durability="sync")
        except Exception as exc:
            fail(f"the sweep failed: {error_line(exc)}")
    errors = [a for a in actions if a.action == "error"]
    if as_json:
        typer.echo(json.dumps([a.to_dict() for a in actions], indent=2, default=str))
    else:
        console = out()
        for action in actions:
            console.print(
                Text(action.line(), style="red" if action.action == "error" else "yellow")
            )
        rejected = sum(1 for a in actions if a.action == "reject")
        escalated = sum(1 for a in actions if a.action == "escalate")
        console.print(
            f"Swept {plural(len(actions), 'expired review')}: "
            f"{rejected} rejected, {escalated} escalated, {len(errors)} failed."
        )
    if errors:
        raise typer.Exit(code=_EXIT_RUN_ENDED_EARLY)


# --------------------------------------------------------------------------- lgsp runs


@app.command("runs")
def runs(db: DbOption, as_json: JsonOption = False) -> None:
    """List the runs (threads) in a checkpoint database, newest activity first.

    For each thread: its status (running, done, halted, failed), turn, step, the reviews it is
    paused on, when it last moved and its latest task. --db takes a SQLite file (or
    sqlite:///path.db) or a postgresql:// URL, like the review commands.
    """
    url, shown = db_url(db)
    with open_dbs(url, shown) as (saver, _, _):
        try:
            rows = _runs.list_runs(saver)
        except Exception as exc:
            fail(f"cannot read the runs in {shown}: {one_line(str(exc), 300)}")
    if as_json:
        typer.echo(json.dumps([row.to_dict() for row in rows], indent=2))
        return
    console = out()
    if not rows:
        console.print(f"No runs in {shown}.")
        return
    table = new_table(f"Runs in {shown}")
    table.add_column("Thread", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    table.add_column("Turn", justify="right")
    table.add_column("Step", justify="right")
    table.add_column("Pending reviews", justify="right")
    table.add_column("Last activity", no_wrap=True)
    table.add_column("Task", overflow="fold", ratio=1)
    for row in rows:
        when = row.last_activity.astimezone(UTC) if row.last_activity else None
        table.add_row(
            row.thread_id,
            Text(row.status, style=_demo_render.RUN_STYLE.get(row.status, "")),
            "-" if row.turn is None else str(row.turn),
            "-" if row.step is None else str(row.step),
            Text(str(row.pending), style="bold yellow" if row.pending else ""),
            when.strftime("%Y-%m-%d %H:%M:%S UTC") if when else "-",
            one_line(row.task, 80),
        )
    console.print(table)
    paused = sum(1 for row in rows if row.pending)
    console.print(
        plural(len(rows), "run")
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

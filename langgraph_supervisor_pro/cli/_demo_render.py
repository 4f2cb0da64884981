"""The live rendering of an `lgsp demo` run (private; used by `cli.py`).

`DemoRenderer` prints the run's stream parts as they arrive: each routing decision (and
any proposal the supervisor rejected and re-asked), the researcher's tool calls, the
analyst's progress events and each worker's result. `render_header`, `render_outcome`
and `Footer` print the task and team, the ledger and final answer, and where the run is
stored. The team itself lives in `_demo.py`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langgraph.types import StreamPart
from rich.console import Console, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from langgraph_supervisor_pro._graph.names import SUPERVISOR_NODE, SYNTHESIS_NODE
from langgraph_supervisor_pro._internal.text import message_text, one_line
from langgraph_supervisor_pro.cli._demo import PROGRESS_EVENT, DemoTeam
from langgraph_supervisor_pro.contracts import FINISH
from langgraph_supervisor_pro.state import LedgerEntry
from langgraph_supervisor_pro.testing import ScriptedCall

__all__ = [
    "RUN_STYLE",
    "STATUS_STYLE",
    "DemoRenderer",
    "Footer",
    "answer_panel",
    "current_ledger",
    "final_answer",
    "ledger_table",
    "render_header",
    "render_outcome",
]

# --------------------------------------------------------------------------- live events

STATUS_STYLE = {"success": "green", "failed": "red", "needs_review": "yellow"}
"""Colour of each worker status."""
RUN_STYLE = {"done": "green", "running": "yellow", "halted": "yellow", "failed": "red"}
"""Colour of each run status."""
_STATUS_MARK = {"success": "✔", "failed": "✘", "needs_review": "?"}
_WORKER_KINDS = {
    "researcher": "compiled LangGraph agent: scripted model + ToolNode",
    "analyst": "async function worker, streams progress events",
    "writer": "sync function worker",
}


def _row(mark: Text | str, body: RenderableType, *, indent: int = 0) -> Table:
    """One event line: a mark in a narrow gutter, then text that wraps under itself."""
    grid = Table.grid(padding=(0, 1))
    if indent:
        grid.add_column(width=indent - 1)
    grid.add_column(width=1, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(*([""] if indent else []), mark, body)
    return grid


@dataclass(kw_only=True)
class DemoRenderer:
    """Renders the demo run's stream parts as they arrive.

    Feed it each part of `app.stream(..., stream_mode=["updates", "custom", "messages"],
    subgraphs=True, version="v2")`. It prints each routing decision (and any proposal the
    supervisor rejected and re-asked), the researcher's tool calls, the analyst's progress
    events and each worker's result, pausing `delay` seconds after each so a human can
    follow. Re-asks are read from the supervisor model's recorded calls: a call that got
    more than the system prompt and the view is a re-ask, and its last message says why.

    Example:
        ```python
        renderer = DemoRenderer(console=Console(), team=team, delay=0.4)
        for part in app.stream(inputs, config, stream_mode=["updates", "custom",
                               "messages"], subgraphs=True, version="v2"):
            renderer.handle(part)
        renderer.finish()
        ```
    """

    console: Console
    """Where to print."""
    team: DemoTeam
    """The team being run (its supervisor model's calls reveal re-asks)."""
    delay: float = 0.0
    """Seconds to pause after each event."""
    animate: bool = False
    """Type the final answer into a live panel as its tokens stream (terminals only)."""
    sleep: Callable[[float], None] = time.sleep
    """How to pause (tests can record instead)."""
    reasks: int = field(default=0, init=False)
    """Invalid decisions the supervisor rejected and re-asked so far."""
    _calls_seen: int = field(default=0, init=False)
    _proposals: list[Mapping[str, Any]] = field(default_factory=list, init=False)
    _answer: str = field(default="", init=False)
    _live: Live | None = field(default=None, init=False)

    def handle(self, part: StreamPart[Any, Any]) -> None:
        """Render one stream part.

        Args:
            part: A v2 stream part; `updates`, `custom` and `messages` are shown.

        Example:
            ```python
            renderer.handle({"type": "custom", "ns": (), "data": {"note": "hi"}})
            ```
        """
        if part["type"] == "messages":
            message, metadata = part["data"]
            self._on_message(part["ns"], message, metadata)
        elif part["type"] == "custom":
            self._on_custom(part["data"])
        elif part["type"] == "updates":
            meta = part["data"].get("__metadata__")
            cached = isinstance(meta, Mapping) and bool(meta.get("cached"))
            for node, update in part["data"].items():
                if node != "__metadata__" and isinstance(update, Mapping):
                    self._on_update(part["ns"], node, update, cached=cached)

    def finish(self) -> None:
        """Close the live answer panel, if one is open.

        Example:
            ```python
            renderer.finish()
            ```
        """
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _pause(self, factor: float = 1.0) -> None:
        if self.delay > 0 and factor > 0:
            self.sleep(self.delay * factor)

    # -- messages: the supervisor's raw proposals, the answer's tokens -----------------

    def _on_message(self, ns: tuple[str, ...], message: BaseMessage, meta: dict[str, Any]) -> None:
        if ns or not isinstance(message, AIMessageChunk):
            return
        node = meta.get("langgraph_node")
        if node == SUPERVISOR_NODE:
            for chunk in message.tool_call_chunks:
                try:
                    args = json.loads(chunk.get("args") or "{}")
                except json.JSONDecodeError:
                    continue
                if isinstance(args, Mapping):
                    self._proposals.append(args)
        elif node == SYNTHESIS_NODE and isinstance(message.content, str):
            self._answer += message.content
            if self.animate:
                self._type_answer()

    def _type_answer(self) -> None:
        panel = answer_panel(self._answer + "▌")
        if self._live is None:
            self._live = Live(panel, console=self.console, transient=True, auto_refresh=False)
            self._live.start()
        else:
            self._live.update(panel)
        self._live.refresh()
        self._pause(0.025)

    # -- custom events: the analyst's progress -----------------------------------------

    def _on_custom(self, data: Any) -> None:
        if not (isinstance(data, Mapping) and data.get("kind") == PROGRESS_EVENT):
            self._event(Text("·"), Text(one_line(repr(data), 200), style="dim"), indent=3)
            return
        total = max(int(data.get("total", 1)), 1)
        done = min(max(int(data.get("done", 0)), 0), total)
        body = Text.assemble(
            ("▰" * done + "▱" * (total - done), "cyan"),
            " ",
            (str(data.get("worker", "")), "cyan"),
            " ",
            str(data.get("message", "")),
        )
        self._event(Text("…", style="cyan"), body, indent=3, factor=0.5)

    # -- updates: decisions, tool calls, results ----------------------------------------

    def _on_update(
        self, ns: tuple[str, ...], node: str, update: Mapping[str, Any], *, cached: bool
    ) -> None:
        if ns:
            self._on_worker_inner(ns[0].split(":", 1)[0], update)
            return
        if node == SUPERVISOR_NODE:
            self._on_decision(update)
        for entry in update.get("ledger") or ():
            self._on_result(entry, restored=cached)

    def _on_worker_inner(self, worker: str, update: Mapping[str, Any]) -> None:
        for message in update.get("messages") or ():
            if isinstance(message, AIMessage) and message.tool_calls:
                for call in message.tool_calls:
                    args = ", ".join(f"{k}={v!r}" for k, v in call["args"].items())
                    body = Text.assemble(
                        (worker, "cyan"), " calls ", (call["name"], "bold magenta"), f"({args})"
                    )
                    self._event(Text("⚒", style="magenta"), body, indent=3)
            elif isinstance(message, ToolMessage):
                body = Text.assemble(
                    (message.name or "the tool", "magenta"),
                    " returned ",
                    (one_line(message_text(message), 140), "dim"),
                )
                self._event(Text("↳", style="magenta"), body, indent=3)

    def _on_decision(self, update: Mapping[str, Any]) -> None:
        calls = self.team.supervisor_model.calls[self._calls_seen :]
        self._calls_seen += len(calls)
        proposals, self._proposals = self._proposals, []
        reasked = [call for call in calls if len(call.messages) > 2]
        route = update.get("route")
        if not isinstance(route, Mapping):
            if update.get("status") in ("halted", "failed"):
                self._rule(Text("stopped", style="bold red"))
                self._rejections(proposals, reasked)
                body = Text.assemble(
                    ("run stopped: ", "bold red"),
                    (str(update.get("halt_reason")), "bold red"),
                    " — ",
                    str(update.get("halt_detail") or ""),
                )
                self._event(Text("■", style="bold red"), body)
            return
        target = str(route["next"])
        finish = target == FINISH
        self._rule(
            Text("FINISH", style="bold green")
            if finish
            else Text(f"Step {route['step']}", style="bold")
        )
        self._rejections(proposals, reasked)
        who = str(route.get("decided_by", "model"))
        if reasked:
            who += f", after {len(reasked)} re-ask" + ("s" if len(reasked) > 1 else "")
        head = Text.assemble(
            (SUPERVISOR_NODE, "bold"),
            " → ",
            (target, "bold green" if finish else "bold cyan"),
            ("   decided by ", "dim"),
            (who, "dim"),
        )
        if finish:
            head.append("   synthesis writes the answer", style="dim")
        self._event(Text("◆", style="bold blue"), head, factor=0)
        instructions = str(route.get("instructions") or "")
        if instructions:
            self._event("", Text(f"“{instructions}”", style="italic"), factor=0)
        self._pause()

    def _rejections(
        self, proposals: Sequence[Mapping[str, Any]], reasked: Sequence[ScriptedCall]
    ) -> None:
        # Each re-ask follows one rejected proposal, in order; the accepted one comes last.
        for index, call in enumerate(reasked):
            self.reasks += 1
            said = proposals[index].get("next") if index < len(proposals) else None
            body = Text.assemble(
                ("supervisor chose ", "yellow"),
                (repr(said) if said is not None else "an invalid decision", "bold yellow"),
                (" — rejected: ", "yellow"),
                (_reask_reason(call.messages[-1]), "yellow"),
                (". Re-asked with the error.", "yellow"),
            )
            self._event(Text("✗", style="bold yellow"), body)

    def _on_result(self, entry: Mapping[str, Any], *, restored: bool = False) -> None:
        status = str(entry.get("status"))
        style = STATUS_STYLE.get(status, "white")
        failed = status == "failed"
        detail = (entry.get("error") if failed else None) or entry.get("summary", "")
        body = Text.assemble(
            (str(entry.get("worker")), "bold cyan"),
            " ",
            (status, f"bold {style}"),
            "  ",
            (str(detail), "red" if failed else ""),
        )
        if restored:
            body.append("  (finished before the interruption: restored, not re-run)", style="dim")
        elif failed:
            body.append("  → recorded in the ledger; the supervisor decides again", style="dim")
        self._event(Text(_STATUS_MARK.get(status, "•"), style=f"bold {style}"), body)

    # -- primitives ---------------------------------------------------------------------

    def _rule(self, title: Text) -> None:
        self.console.print()
        self.console.print(Rule(title, style="dim", align="left"))

    def _event(
        self, mark: Text | str, body: RenderableType, *, indent: int = 0, factor: float = 1.0
    ) -> None:
        self.console.print(_row(mark, body, indent=indent))
        self._pause(factor)


_ENDED = ("done", "halted", "failed")


def _reask_reason(message: BaseMessage) -> str:
    """The validation error the supervisor sent back with its re-ask."""
    first = message_text(message).split("\n", 1)[0]
    _, _, reason = first.partition(": ")
    return one_line(reason or first, 160).rstrip(".")


# --------------------------------------------------------------------------- summaries


def render_header(console: Console, team: DemoTeam, *, location: str, thread_id: str) -> None:
    """Print the task, the team and where the run is checkpointed.

    Args:
        console: Where to print.
        team: The demo team.
        location: The checkpoint database, as shown to the user.
        thread_id: The run's thread id.

    Example:
        ```python
        render_header(Console(), build_demo_team(), location="demo.db", thread_id="t1")
        ```
    """
    roster = Table.grid(padding=(0, 2))
    roster.add_column(style="bold cyan", no_wrap=True)
    roster.add_column(style="dim")
    for worker in team.workers:
        roster.add_row(worker.name, _WORKER_KINDS.get(worker.name, worker.description))
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    grid.add_row("Task", Text(team.task))
    grid.add_row("Team", roster)
    grid.add_row(
        "Supervisor", Text("scripted model → typed RouteDecision, validated; re-asked once")
    )
    grid.add_row(
        "Checkpoints",
        Text.assemble("SQLite ", (location, "bold"), "   thread ", (thread_id, "bold")),
    )
    console.print(
        Panel(
            grid,
            title="[bold]lgsp demo[/]",
            title_align="left",
            subtitle="offline · scripted models",
            subtitle_align="right",
            border_style="blue",
        )
    )


def answer_panel(answer: str) -> Panel:
    """The final answer, as Markdown in a panel.

    Args:
        answer: The answer's Markdown.

    Returns:
        The panel.

    Example:
        ```python
        Console().print(answer_panel("**Go**"))
        ```
    """
    return Panel(
        Markdown(answer or "_(no answer)_"),
        title="[bold]Final answer[/] · synthesis",
        title_align="left",
        border_style="green",
        padding=(1, 2),
    )


def ledger_table(ledger: Sequence[LedgerEntry]) -> Table:
    """The ledger as a table: one row per hop.

    Args:
        ledger: The run's ledger entries.

    Returns:
        A rich Table.

    Example:
        ```python
        Console().print(ledger_table(state["ledger"]))
        ```
    """
    table = Table(
        title="Ledger: what the supervisor sees of each hop",
        title_justify="left",
        title_style="bold",
        expand=True,
    )
    table.add_column("Step", justify="right", no_wrap=True)
    table.add_column("Worker", style="cyan", no_wrap=True)
    table.add_column("Routed by", style="dim", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    table.add_column("Summary", ratio=1)
    for entry in ledger:
        status = entry["status"]
        table.add_row(
            str(entry["step"]),
            entry["worker"],
            entry["decided_by"],
            Text(status, style=f"bold {STATUS_STYLE.get(status, 'white')}"),
            Text(entry["summary"]),
        )
    return table


def current_ledger(values: Mapping[str, Any]) -> list[LedgerEntry]:
    """The latest turn's ledger entries, oldest first.

    Args:
        values: The thread's state values (`app.get_state(config).values`).

    Returns:
        The entries.

    Example:
        ```python
        [e["worker"] for e in current_ledger(values)]
        # ['researcher', 'analyst', 'analyst', 'writer']
        ```
    """
    turn = values.get("turn", 1)
    return [entry for entry in values.get("ledger") or () if entry["turn"] == turn]


def final_answer(values: Mapping[str, Any]) -> str:
    """The run's final answer: the last AI message, once the run has ended.

    Args:
        values: The thread's state values.

    Returns:
        The answer, or '' while the run has not answered.

    Example:
        >>> final_answer({"messages": []})
        ''
    """
    if values.get("status") not in ("done", "halted", "failed"):
        return ""
    for message in reversed(values.get("messages") or ()):
        if isinstance(message, AIMessage):
            return message_text(message)
    return ""


def render_outcome(console: Console, values: Mapping[str, Any]) -> None:
    """Print a run's ledger and final answer from its state.

    Args:
        console: Where to print.
        values: The thread's state values.

    Example:
        ```python
        render_outcome(Console(), app.get_state(config).values)
        ```
    """
    console.print()
    console.print(ledger_table(current_ledger(values)))
    answer = final_answer(values)
    if answer:
        console.print()
        console.print(answer_panel(answer))


@dataclass(frozen=True, kw_only=True)
class Footer:
    """Where the run stands and where it is stored; printed last."""

    status: str
    """The run's status."""
    hops: int
    """Hops in the latest turn."""
    failed: int
    """Of which failed."""
    reasks: int | None
    """Invalid routes re-asked (None when unknown, e.g. for a stored run)."""
    halt: str | None
    """Why the run stopped early, if it did."""
    checkpoints: int
    """Checkpoints of the supervisor graph."""
    all_checkpoints: int
    """Checkpoints including the workers' subgraphs."""
    database: str
    """The checkpoint database's path."""
    thread_id: str
    """The run's thread id."""
    inspect: str
    """The command that shows the stored run (or resumes it)."""

    def render(self, console: Console) -> None:
        """Print the footer.

        Args:
            console: Where to print.

        Example:
            ```python
            footer.render(Console())
            ```
        """
        run = Text(self.status, style=f"bold {RUN_STYLE.get(self.status, 'white')}")
        run.append(f" · {self.hops} hops")
        if self.failed:
            run.append(f" · {self.failed} failed, re-routed", style="red")
        if self.reasks:
            run.append(
                f" · {self.reasks} invalid route{'s' if self.reasks > 1 else ''} re-asked",
                style="yellow",
            )
        if self.halt:
            run.append(f" · {self.halt}", style="red")
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        grid.add_row("Run", run)
        grid.add_row(
            "Checkpoints",
            Text(
                f"{self.checkpoints} of the supervisor graph ({self.all_checkpoints} with "
                f"worker subgraphs) in {self.database}"
            ),
        )
        grid.add_row("Thread", Text(self.thread_id, style="bold"))
        grid.add_row(
            "Inspect",
            Text.assemble(
                (self.inspect, "bold"),
                (
                    "   shows this stored run" if self.status in _ENDED else "   resumes this run",
                    "dim",
                ),
            ),
        )
        console.print()
        console.print(grid)

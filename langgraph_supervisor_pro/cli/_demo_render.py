"""The live rendering of an `lgsp demo` run (private; used by `_commands.py`).

`DemoRenderer` prints the run's stream parts as they arrive; the `render_*` functions print
the desk, each turn, a pending review, the outcome and where the run is stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import StreamPart
from rich.console import Console, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from langgraph_supervisor_pro._contracts import FINISH
from langgraph_supervisor_pro._internal.text import message_text, one_line
from langgraph_supervisor_pro._state import LedgerEntry
from langgraph_supervisor_pro.cli._demo import DEMO_TIER, DemoDesk, answers

STATUS_STYLE = {"success": "green", "failed": "red", "needs_review": "yellow"}
"""Colour of each worker status."""
RUN_STYLE = {"done": "green", "running": "yellow", "halted": "yellow", "failed": "red"}
"""Colour of each run status."""
_STATUS_MARK = {"success": "✔", "failed": "✘", "needs_review": "?"}
_ROSTER = (
    ("billing", "lookup_order (low risk: runs), refund (high risk: a human reviews it)"),
    ("tech_support", "search_help_center (low risk); nothing else"),
    ("account", "no tools"),
)


def _row(mark: Text | str, body: RenderableType, *, indent: int = 0) -> Table:
    """One event line: a mark in a narrow gutter, then text that wraps under itself."""
    grid = Table.grid(padding=(0, 1))
    if indent:
        grid.add_column(width=indent - 1)
    grid.add_column(width=1, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(*([""] if indent else []), mark, body)
    return grid


def _grid() -> Table:
    """A grid of bold labels and their values."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    return grid


def _args(args: Mapping[str, Any]) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in args.items())


@dataclass(kw_only=True)
class DemoRenderer:
    """Prints the demo run's stream parts as they arrive, pausing `delay` seconds after each.

    Feed it each part of `app.stream(..., stream_mode=["updates"], subgraphs=True, version="v2")`.
    """

    console: Console
    """Where to print."""
    delay: float = 0.0
    """Seconds to pause after each event."""
    sleep: Callable[[float], None] = time.sleep
    """How to pause (tests can record instead)."""

    def handle(self, part: StreamPart[Any, Any]) -> None:
        """Render one v2 stream part (`updates` are shown, others ignored)."""
        if part["type"] != "updates":
            return
        data = part["data"]
        meta = data.get("__metadata__")
        cached = isinstance(meta, Mapping) and bool(meta.get("cached"))
        for node, update in data.items():
            if node != "__metadata__" and isinstance(update, Mapping):
                self._on_update(part["ns"], update, cached=cached)

    def _on_update(self, ns: tuple[str, ...], update: Mapping[str, Any], *, cached: bool) -> None:
        if ns:
            self._on_worker_inner(ns[0].split(":", 1)[0], update)
            return
        route = update.get("route")
        if isinstance(route, Mapping):
            self._on_decision(route)
        elif "route" in update and update.get("status") in ("halted", "failed"):
            self._on_halt(update)
        for entry in update.get("compactions") or ():
            self._on_compaction(entry)
        for entry in update.get("ledger") or ():
            self._on_result(entry, restored=cached)

    def _on_worker_inner(self, worker: str, update: Mapping[str, Any]) -> None:
        for message in update.get("messages") or ():
            if isinstance(message, AIMessage) and message.tool_calls:
                for call in message.tool_calls:
                    body = Text.assemble(
                        (worker, "cyan"),
                        " calls ",
                        (call["name"], "bold magenta"),
                        f"({_args(call['args'])})",
                    )
                    self._event(Text("⚒", style="magenta"), body, indent=3)
            elif isinstance(message, ToolMessage):
                self._on_tool_result(worker, message)

    def _on_tool_result(self, worker: str, message: ToolMessage) -> None:
        security = message.additional_kwargs.get("lgsp_security")
        if isinstance(security, Mapping):
            body = Text.assemble(
                (f"refused by the allowlist: {security.get('tool')}", "bold red"),
                (f" is not one of {worker}'s tools; the call was not executed", "red"),
            )
            self._event(Text("✗", style="bold red"), body, indent=3)
            return
        body = Text.assemble(
            (message.name or "the tool", "magenta"),
            " returned ",
            (one_line(message_text(message), 240), "dim"),
        )
        self._event(Text("↳", style="magenta"), body, indent=3)

    def _on_decision(self, route: Mapping[str, Any]) -> None:
        target = str(route["next"])
        finish = target == FINISH
        title = Text("FINISH", "bold green") if finish else Text(f"Step {route['step']}", "bold")
        self.console.print(Rule(title, style="dim", align="left"))
        head = Text.assemble(
            ("supervisor", "bold"),
            " → ",
            (target, "bold green" if finish else "bold cyan"),
            (f"   decided by {route.get('decided_by', 'router')}", "dim"),
        )
        self._event(Text("◆", style="bold blue"), head)

    def _on_halt(self, update: Mapping[str, Any]) -> None:
        self.console.print(Rule(Text("stopped", style="bold red"), style="dim", align="left"))
        body = Text.assemble(
            (f"run stopped: {update.get('halt_reason')}", "bold red"),
            f" — {update.get('halt_detail') or ''}",
        )
        self._event(Text("■", style="bold red"), body)

    def _on_compaction(self, entry: Mapping[str, Any]) -> None:
        worker = str(entry.get("worker"))
        if entry.get("error"):
            body = Text.assemble(
                ("compaction of ", "yellow"),
                (worker, "bold cyan"),
                (f" failed, history kept: {entry['error']}", "yellow"),
            )
        else:
            where = (
                "before its model call" if entry.get("reason") == "within_hop" else "before its hop"
            )
            body = Text.assemble(
                ("compaction: ", "bold blue"),
                (worker, "bold cyan"),
                f"'s context reached the trigger {where}; {entry.get('removed')} older "
                "messages became a structured summary ",
                (f"({entry.get('tokens_before')} → {entry.get('tokens_after')} tokens)", "bold"),
            )
        self._event(Text("⇣", style="bold blue"), body, indent=3)

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
            (one_line(str(detail), 200), "red" if failed else ""),
        )
        refused = entry.get("refused") or []
        if refused:
            body.append(f"  (refused: {', '.join(refused)})", style="red")
        if restored:
            body.append("  (finished before the interruption: restored, not re-run)", style="dim")
        self._event(Text(_STATUS_MARK.get(status, "•"), style=f"bold {style}"), body)

    def _event(self, mark: Text | str, body: RenderableType, *, indent: int = 0) -> None:
        self.console.print(_row(mark, body, indent=indent))
        if self.delay > 0:
            self.sleep(self.delay)


# --------------------------------------------------------------------------- around the run


def render_header(console: Console, desk: DemoDesk, *, location: str, thread_id: str) -> None:
    """Print the desk, its tier, the conversation's length and where the run is stored."""
    roster = Table.grid(padding=(0, 2))
    roster.add_column(style="bold cyan", no_wrap=True)
    roster.add_column(style="dim")
    for name, tools in _ROSTER:
        roster.add_row(name, tools)
    grid = _grid()
    grid.add_row("Desk", Text(f"the support_desk template ({desk.source})", overflow="fold"))
    grid.add_row("Workers", roster)
    grid.add_row("Supervisor", Text("an offline model that routes by keyword (triage)"))
    grid.add_row(
        "Autonomy",
        Text.assemble(
            ("tier ", ""),
            (DEMO_TIER, "bold"),
            ": low-risk tools run, high-risk ones wait for a human review",
        ),
    )
    grid.add_row(
        "Models",
        Text(
            "offline, deciding from what they are shown and reporting their usage (priced at "
            f"public list prices); a {desk.window}-token window for the workers"
        ),
    )
    grid.add_row("Conversation", Text(f"{len(desk.conversation)} customer messages on one thread"))
    grid.add_row(
        "Checkpoints",
        Text.assemble(
            "SQLite ", (location, "bold"), "   thread ", (thread_id, "bold"), overflow="fold"
        ),
    )
    console.print(
        Panel(
            grid,
            title="[bold]lgsp demo[/]",
            title_align="left",
            subtitle="offline · no API key",
            subtitle_align="right",
            border_style="blue",
        )
    )


def render_turn(console: Console, turn: int, text: str, *, resumed: bool = False) -> None:
    """Print the start (or the resumption) of a turn: the customer's message."""
    console.print()
    title = f"Turn {turn}" + (" (resumed)" if resumed else "")
    console.print(Rule(Text(title, style="bold"), style="blue", align="left"))
    console.print(_row(Text("»", style="bold"), Text.assemble(("customer: ", "bold"), text)))


def render_review(console: Console, review: Mapping[str, Any]) -> None:
    """Print a pending review (its payload): the action, the worker, its risk, the tier, why."""
    context = review.get("context") or {}
    requests = review.get("action_requests") or [{}]
    grid = _grid()
    for request in requests:
        grid.add_row(
            "Action",
            Text.assemble(
                (str(request.get("name")), "bold magenta"),
                f"({_args(request.get('args') or {})})",
            ),
        )
    grid.add_row("Worker", Text(str(context.get("worker") or "-"), style="cyan"))
    grid.add_row(
        "Risk / tier",
        Text(f"{context.get('risk') or '-'} risk, {context.get('tier') or '-'} tier"),
    )
    grid.add_row("Why", Text(str(context.get("reason") or "-")))
    grid.add_row("So far", Text(one_line(str(context.get("summary") or "-"), 200)))
    console.print(
        Panel(
            grid,
            title="[bold]⏸ Review gate: the run is paused, checkpointed, waiting for a human[/]",
            title_align="left",
            border_style="yellow",
        )
    )


def _ledger_table(ledger: Sequence[LedgerEntry]) -> Table:
    """The ledger as a table: one row per hop, every turn."""
    table = Table(
        title="Ledger: what the supervisor sees of each hop",
        title_justify="left",
        title_style="bold",
        expand=True,
    )
    table.add_column("Turn", justify="right", no_wrap=True)
    table.add_column("Step", justify="right", no_wrap=True)
    table.add_column("Worker", style="cyan", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    table.add_column("Refused", style="red", no_wrap=True)
    table.add_column("Summary", ratio=1)
    for entry in ledger:
        status = entry["status"]
        table.add_row(
            str(entry["turn"]),
            str(entry["step"]),
            entry["worker"],
            Text(status, style=f"bold {STATUS_STYLE.get(status, 'white')}"),
            ", ".join(entry.get("refused") or ()) or "-",
            Text(one_line(entry["summary"], 300)),
        )
    return table


def _figures_table(values: Mapping[str, Any]) -> Table:
    """Per-worker figures: hops, model calls, peak context, refusals, reviews, compactions."""
    table = Table(title="Per worker", title_justify="left", title_style="bold", expand=True)
    for column in ("Worker", "Hops", "Model calls", "Peak context", "Refused", "Reviews"):
        table.add_column(column, justify="left" if column == "Worker" else "right")
    table.add_column("Compactions", justify="right")
    workers = list(dict.fromkeys(e["worker"] for e in values.get("ledger") or ()))
    for worker in workers:
        calls = [
            u
            for u in values.get("usage") or ()
            if u.get("worker") == worker and u.get("role") == "worker"
        ]
        measured = [u for u in calls if "utilisation" in u and "window" in u]
        peak = max(measured, key=lambda u: u["utilisation"]) if measured else None
        reviews = [r for r in values.get("reviews") or () if r.get("worker") == worker]
        compactions = [c for c in values.get("compactions") or () if c.get("worker") == worker]
        table.add_row(
            Text(worker, style="cyan"),
            str(sum(1 for e in values.get("ledger") or () if e["worker"] == worker)),
            str(len(calls)),
            f"{peak['tokens']}/{peak['window']} ({peak['utilisation']:.0%})" if peak else "-",
            str(sum(1 for s in values.get("security") or () if s.get("worker") == worker)),
            ", ".join(f"{r['action']}: {r['decision']}" for r in reviews) or "0",
            ", ".join(f"{c['tokens_before']}→{c['tokens_after']} tokens" for c in compactions)
            or "0",
        )
    return table


def _spender(entry: Mapping[str, Any]) -> tuple[str, str]:
    """Who a usage entry's call served: (the worker or the supervisor's role, what for)."""
    worker, role = entry.get("worker"), str(entry.get("role") or "-")
    if worker and role == "summarizer":
        return str(worker), " (summaries)"
    return (str(worker), "") if worker and role == "worker" else (role, "")


def _cost_text(cost: float, unpriced: int) -> str:
    """A cost in USD; calls with no price are counted apart, never as 0."""
    if unpriced and cost == 0:
        return "unpriced"
    return f"{cost:.6f}" + (f" + {unpriced} unpriced" if unpriced else "")


@dataclass
class _Spend:
    calls: int = 0
    input: int = 0
    output: int = 0
    cost: float = 0.0
    unpriced: int = 0
    estimated: bool = False

    def add(self, entry: Mapping[str, Any]) -> None:
        self.calls += 1
        self.input += int(entry.get("input_tokens", entry.get("tokens", 0)) or 0)
        self.output += int(entry.get("output_tokens", 0) or 0)
        self.estimated |= bool(entry.get("estimated")) or "input_tokens" not in entry
        cost = entry.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            self.cost += float(cost)
        else:  # None: its model has no price; absent: the graph priced nothing
            self.unpriced += 1

    def row(self, who: Text, model: str) -> tuple[Text, str, str, str, str, str]:
        mark = "~" if self.estimated else ""
        return (
            who,
            model,
            str(self.calls),
            f"{mark}{self.input:,}",
            f"{mark}{self.output:,}",
            _cost_text(self.cost, self.unpriced),
        )


def _cost_table(values: Mapping[str, Any]) -> Table | None:
    """Per worker and model: calls, tokens and cost, from the state's `usage`; the total."""
    usage = [u for u in values.get("usage") or () if isinstance(u, Mapping)]
    if not usage:
        return None
    groups: dict[tuple[str, str, str], _Spend] = {}
    total = _Spend()
    for entry in usage:
        key = (*_spender(entry), str(entry.get("model") or "unknown"))
        groups.setdefault(key, _Spend()).add(entry)
        total.add(entry)
    first: dict[str, int] = {}  # a worker's rows together, in the order it first spent
    for who, _, _ in groups:
        first.setdefault(who, len(first))
    ordered = sorted(groups.items(), key=lambda item: (first[item[0][0]], item[0][1]))
    table = Table(
        title="Models and cost (from the run's usage: every model call, as reported)",
        title_justify="left",
        title_style="bold",
        caption="Cost in USD at the template's PRICES (public list prices, dated; prices "
        "change). unpriced: a model with no price, not free. ~: counted, not reported.",
        caption_justify="left",
        expand=True,
    )
    for column in ("Worker", "Model", "Calls", "Input tokens", "Output tokens", "Cost (USD)"):
        table.add_column(column, justify="left" if column in ("Worker", "Model") else "right")
    for (who, what, model), spend in ordered:
        table.add_row(*spend.row(Text(who + what, style="cyan"), model))
    table.add_section()
    table.add_row(*total.row(Text("total", style="bold"), ""))
    return table


def render_outcome(console: Console, values: Mapping[str, Any]) -> None:
    """Print a run's ledger, per-worker figures, cost and answers from its state values."""
    console.print()
    console.print(_ledger_table(values.get("ledger") or []))
    console.print()
    console.print(_figures_table(values))
    costs = _cost_table(values)
    if costs is not None:
        console.print()
        console.print(costs)
    pairs = answers(values)
    if pairs:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(ratio=1)
        for turn, (asked, answer) in enumerate(pairs, start=1):
            if turn > 1:
                grid.add_row("", "")
            grid.add_row(Text(f"{turn}. customer", style="bold"), Text(asked))
            grid.add_row(Text("   desk", style="bold green"), Text(answer or "(no answer yet)"))
        console.print()
        console.print(
            Panel(
                grid,
                title="[bold]The answers[/]",
                title_align="left",
                border_style="green",
                padding=(1, 2),
            )
        )


def render_footer(
    console: Console,
    values: Mapping[str, Any],
    *,
    checkpoints: tuple[int, int],
    database: str,
    thread_id: str,
    inspect: str,
) -> None:
    """Print where the run stands and where it is stored, last.

    `checkpoints` counts the supervisor graph's, then with the workers' subgraphs';
    `inspect` is the command that shows the stored run (or resumes it).
    """
    status = str(values.get("status", "running"))
    run = Text(status, style=f"bold {RUN_STYLE.get(status, 'white')}")
    run.append(
        f" · {len(answers(values))} turns · {len(values.get('ledger') or ())} hops · "
        f"{len(values.get('reviews') or ())} reviewed · {len(values.get('security') or ())} "
        f"refused · {len(values.get('compactions') or ())} compacted"
    )
    if values.get("halt_reason"):
        run.append(f" · {values['halt_reason']}: {values.get('halt_detail')}", style="red")
    grid = _grid()
    grid.add_row("Run", run)
    grid.add_row(
        "Checkpoints",
        Text(
            f"{checkpoints[0]} of the supervisor graph ({checkpoints[1]} with "
            f"worker subgraphs) in {database}"
        ),
    )
    grid.add_row("Thread", Text(thread_id, style="bold"))
    ended = status in ("done", "halted", "failed")
    grid.add_row(
        "Inspect",
        Text.assemble(
            (inspect, "bold"),
            ("   shows this stored run" if ended else "   resumes this run", "dim"),
        ),
    )
    grid.add_row("All runs", Text(f"lgsp runs --db {database}", style="bold"))
    console.print()
    console.print(grid)

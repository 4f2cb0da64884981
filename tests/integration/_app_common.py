"""Child-side helpers shared by the integration tests' child processes.

The child scripts (`_crash_app.py`, `_compaction_crash_app.py`,
`_effects_crash_app.py`, `_review_app.py`) run as files in a process of their
own; they import this module as `tests.integration._app_common`, which works
because the tests start them with the repository root on `PYTHONPATH` (see
`_proc.child_env`; by hand: `PYTHONPATH=. python tests/integration/_crash_app.py
...`). Like the scripts, it imports the standard library only: never pytest or
the test fixtures.

What is here: the file names a child and its test agree on, the fsynced
execution log, the marker a child writes before it blocks (and the bounded
wait that follows), the `--block KIND:HOP` parsing, the common command line,
and how a run's summary is built and reported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

BLOCK_SECONDS = 60.0
"""How long a blocked child waits to be killed before it exits with status 3."""
LOG_NAME = "executions.jsonl"
MARKER_NAME = "blocked"
RELEASE_NAME = "release"
HOP_RE = re.compile(r"\bhop (\d+)\b")
ID_RE = re.compile(r"\b[A-Z]+-\d{4}\b")
"""The planted ids (facts) a scripted summarizer keeps: `FACT-0001`, `ORDER-4711`."""


def plan_instructions(plan: Sequence[str], hop: int) -> str:
    """The instructions the supervisor gives for hop `hop` of `plan` (FINISH's note after it)."""
    if hop > len(plan):
        return f"all {len(plan)} hops are done"
    return f"hop {hop}: {plan[hop - 1]}, do your part"


def plan_decision(plan: Sequence[str], hops_done: int) -> dict[str, str]:
    """The decision after `hops_done` hops of a turn: the next worker of `plan`, or FINISH."""
    nxt = plan[hops_done] if hops_done < len(plan) else "FINISH"
    return {"next": nxt, "instructions": plan_instructions(plan, hops_done + 1)}


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line durably (fsynced) before the work it records goes on."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(record) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def log_execution(workdir: Path, phase: str, kind: str, name: str, **extra: Any) -> None:
    """One line of `<workdir>/executions.jsonl`: what ran, in which phase and process."""
    entry = {"phase": phase, "pid": os.getpid(), "kind": kind, "name": name, **extra}
    append_jsonl(workdir / LOG_NAME, entry)


def block_until_killed(
    workdir: Path, marker: dict[str, Any], message: str, *, releasable: bool = True
) -> None:
    """Write `<workdir>/blocked` (atomically), then wait (bounded) to be killed.

    With `releasable`, a `<workdir>/release` file ends the wait early (the tests
    never create one). After `BLOCK_SECONDS` the process prints `message` and
    exits with status 3.
    """
    tmp = workdir / (MARKER_NAME + ".tmp")
    tmp.write_text(json.dumps(marker))
    tmp.replace(workdir / MARKER_NAME)  # appears atomically, complete
    if releasable:
        deadline = time.monotonic() + BLOCK_SECONDS
        while time.monotonic() < deadline:
            if (workdir / RELEASE_NAME).exists():
                return
            time.sleep(0.05)
    else:
        time.sleep(BLOCK_SECONDS)
    print(message, file=sys.stderr)
    sys.stderr.flush()
    os._exit(3)


@dataclass(frozen=True)
class HopContext:
    """Where a child logs, and whether (and at which hop) it blocks.

    `block_hop=None` with a `block_kind` blocks at the first call of that kind.
    Subclasses name their script in `app` (it prefixes the timeout message).
    """

    app: ClassVar[str] = "app"
    workdir: Path
    phase: str
    block_kind: str | None = None
    block_hop: int | None = None

    def record(self, kind: str, name: str, step: int) -> None:
        """Append one execution line durably (before the work it records goes on)."""
        log_execution(self.workdir, self.phase, kind, name, step=step)

    def should_block(self, kind: str, step: int) -> bool:
        if self.phase != "run" or self.block_kind != kind:
            return False
        return self.block_hop is None or self.block_hop == step

    def block(self, kind: str, name: str, step: int) -> None:
        """Tell the test where we are, then wait (bounded) to be killed."""
        block_until_killed(
            self.workdir,
            {"pid": os.getpid(), "kind": kind, "name": name, "step": step},
            f"{self.app}: blocked in {kind} {name} at hop {step} for {BLOCK_SECONDS:g} s "
            "and nobody killed the process",
        )

    def maybe_block(self, kind: str, name: str, step: int) -> None:
        if self.should_block(kind, step):
            self.block(kind, name, step)

    async def amaybe_block(self, kind: str, name: str, step: int) -> None:
        if self.should_block(kind, step):
            await asyncio.to_thread(self.block, kind, name, step)


def parse_block(
    spec: str | None, *, kinds: tuple[str, ...], expected: str, bare: tuple[str, ...] = ()
) -> tuple[str | None, int | None]:
    """`--block KIND:HOP` (or one of the `bare` kinds, any hop) as `(kind, hop)`."""
    if not spec:
        return None, None
    if spec in bare:
        return spec, None
    kind, _, hop = spec.partition(":")
    if kind not in kinds or not hop.isdigit():
        raise SystemExit(f"--block: expected {expected}, got {spec!r}")
    return kind, int(hop)


def app_parser(
    description: str, *, uri_help: str | None = None, phases: bool = True
) -> argparse.ArgumentParser:
    """`--uri` and `--thread`; with `phases` also `--workdir`, `--phase` and `--mode`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--uri", required=True, help=uri_help)
    parser.add_argument("--thread", required=True)
    if phases:
        parser.add_argument("--workdir", required=True, type=Path)
        parser.add_argument("--phase", required=True, choices=("run", "resume"))
        parser.add_argument("--mode", default="sync", choices=("sync", "async"))
    return parser


def thread_config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def run_input(phase: str, task: str) -> dict[str, Any] | None:
    """What `invoke` gets: the task to start a run, `None` to resume the thread."""
    return None if phase == "resume" else {"messages": [("user", task)]}


def run_summary(values: dict[str, Any], pending: tuple[str, ...], **extra: Any) -> dict[str, Any]:
    """The JSON line a child prints at the end: status, ledger, what was pending at start."""
    return {
        "pid": os.getpid(),
        "pending_at_start": list(pending),
        "status": values.get("status"),
        "ledger": [[e["step"], e["worker"], e["status"]] for e in values.get("ledger") or ()],
        **extra,
    }


def run_and_report(
    args: argparse.Namespace,
    ctx: Any,
    run_sync: Callable[[argparse.Namespace, Any], dict[str, Any]],
    run_async: Callable[[argparse.Namespace, Any], Coroutine[Any, Any, dict[str, Any]]],
) -> int:
    """Run in `args.mode`, print the summary line; exit status 0 when the run ended `done`."""
    summary = asyncio.run(run_async(args, ctx)) if args.mode == "async" else run_sync(args, ctx)
    print(json.dumps(summary), flush=True)
    return 0 if summary["status"] == "done" else 1


def scripted_summary(text: str, *, task: str, remaining: str) -> dict[str, Any]:
    """What a scripted summarizer answers: every hop number and planted id it is shown."""
    hops = sorted({int(h) for h in HOP_RE.findall(text)})
    return {
        "task": task,
        "done": [f"hop {h} done" for h in hops],
        "current_state": f"compacted through hop {max(hops)}" if hops else "started",
        "remaining": [remaining],
        "key_facts": sorted(set(ID_RE.findall(text))),
    }

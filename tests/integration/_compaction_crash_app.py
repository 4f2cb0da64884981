"""Child process for the compaction crash tests: runs, or resumes, a compacting team.

Self-contained (it imports the package, never pytest or the fixtures) so
`tests/integration/test_crash_compaction.py` can start it as a real process,
SIGKILL it in the middle of a compaction step (or of the worker hop right after
one) and resume the thread in a new process::

    python tests/integration/_compaction_crash_app.py --uri postgresql://... \\
        --thread t1 --workdir /tmp/x --phase run --block summarizer
    python tests/integration/_compaction_crash_app.py --uri postgresql://... \\
        --thread t1 --workdir /tmp/x --phase resume

The team alternates `researcher` (a `create_agent` agent whose scripted model
answers every hop with ~450 tokens and plants `FACT-000<hop>`) and `writer` (a
function worker with a one-line answer) for `HOPS` hops, then FINISH. The window
is 2,000 tokens and the trigger 0.7, so the researcher's history passes 1,400
tokens before its fourth visit (hop 7) and only then: exactly one compaction in
the run, which replaces hops 1 and 3 and keeps hop 5's prompt and answer
(`keep=2`, within half the trigger budget). Every decision, answer and summary is
a pure function of what the code is shown, so a resumed process needs no script
position. Checkpoints and the store are on Postgres, `durability="sync"`.

Every call is appended (fsynced) to `<workdir>/executions.jsonl` with the phase
it ran in, before anything else happens. With `--block summarizer` the first
summarizer call of the run phase, with `--block model:HOP` the researcher's model
call at hop HOP, logs itself, writes `<workdir>/blocked` and waits to be killed
(at most `BLOCK_SECONDS`, then the process exits with status 3).

On completion it prints one JSON line (status, what was pending when it started)
and exits 0 when the run ended `done`, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage

from langgraph_supervisor_pro import (
    Worker,
    WorkerTask,
    aopen_checkpointer,
    aopen_store,
    create_supervisor,
    open_checkpointer,
    open_store,
)
from langgraph_supervisor_pro.compaction import Compaction
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel

TASK = "Trace the shipment history of the account"
HOPS = 8
PLAN = tuple("researcher" if hop % 2 else "writer" for hop in range(1, HOPS + 1))
"""Who runs each hop (hop n is PLAN[n - 1]): researcher on odd hops, writer on even."""
WINDOW = 2000
TRIGGER = 0.7
KEEP = 2
COMPACTION_HOP = 7
"""The hop before which the researcher's history is compacted (its fourth visit)."""
ANSWER_CHARS = 1800
"""About 450 tokens per researcher answer (count_tokens_approximately: chars / 4)."""
BLOCK_SECONDS = 60.0
LOG_NAME = "executions.jsonl"
MARKER_NAME = "blocked"
RELEASE_NAME = "release"
FACT_RE = re.compile(r"\b[A-Z]+-\d{4}\b")
HOP_RE = re.compile(r"\bhop (\d+)\b")
FILLER = "the parcel moved between depots and every scan was logged with its time "


def instructions_for(hop: int) -> str:
    if hop > HOPS:
        return f"all {HOPS} hops are done"
    return f"hop {hop}: {PLAN[hop - 1]}, do your part"


def decide(hops_done: int) -> dict[str, str]:
    nxt = PLAN[hops_done] if hops_done < HOPS else "FINISH"
    return {"next": nxt, "instructions": instructions_for(hops_done + 1)}


def fact_for(hop: int) -> str:
    return f"FACT-{hop:04d}"


def research_answer(hop: int) -> str:
    head = f"researcher findings for hop {hop}: record {fact_for(hop)}. "
    return head + (FILLER * (ANSWER_CHARS // len(FILLER) + 1))[: ANSWER_CHARS - len(head)]


def writer_answer(hop: int) -> str:
    return f"writer result for hop {hop}"


def summary_for(text: str) -> dict[str, Any]:
    """What the scripted summarizer answers for the prompt text it is shown."""
    hops = sorted({int(h) for h in HOP_RE.findall(text)})
    return {
        "task": TASK,
        "done": [f"hop {h} done" for h in hops],
        "current_state": f"compacted through hop {max(hops)}" if hops else "started",
        "remaining": ["continue"],
        "key_facts": sorted(set(FACT_RE.findall(text))),
    }


def prompt_hop(messages: Any) -> int:
    prompts = [m for m in messages if isinstance(m, HumanMessage)]
    match = re.search(r"hop (\d+):", str(prompts[-1].content)) if prompts else None
    if match is None:
        raise AssertionError(f"no hop number in {messages!r}")
    return int(match.group(1))


@dataclass(frozen=True)
class Context:
    """Where this process logs, and whether (and where) it blocks."""

    workdir: Path
    phase: str
    block_kind: str | None = None
    block_hop: int | None = None

    def record(self, kind: str, name: str, step: int) -> None:
        """Append one execution line durably (before the work it records goes on)."""
        line = json.dumps(
            {"phase": self.phase, "pid": os.getpid(), "kind": kind, "name": name, "step": step}
        )
        fd = os.open(self.workdir / LOG_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def block(self, kind: str, name: str, step: int) -> None:
        """Tell the test where we are, then wait (bounded) to be killed."""
        marker = {"pid": os.getpid(), "kind": kind, "name": name, "step": step}
        tmp = self.workdir / (MARKER_NAME + ".tmp")
        tmp.write_text(json.dumps(marker))
        tmp.replace(self.workdir / MARKER_NAME)  # appears atomically, complete
        deadline = time.monotonic() + BLOCK_SECONDS
        while time.monotonic() < deadline:
            if (self.workdir / RELEASE_NAME).exists():
                return
            time.sleep(0.05)
        print(
            f"_compaction_crash_app: blocked in {kind} {name} at hop {step} for "
            f"{BLOCK_SECONDS:g} s and nobody killed the process",
            file=sys.stderr,
        )
        sys.stderr.flush()
        os._exit(3)

    def maybe_block(self, kind: str, name: str, step: int) -> None:
        if self.phase != "run" or self.block_kind != kind:
            return
        if self.block_hop is None or self.block_hop == step:
            self.block(kind, name, step)


def _researcher_model(ctx: Context) -> ScriptedChatModel:
    def answer(call: ScriptedCall) -> str:
        hop = prompt_hop(call.messages)
        ctx.record("model", "researcher", hop)
        ctx.maybe_block("model", "researcher", hop)
        return research_answer(hop)

    return ScriptedChatModel(name="researcher-model", script=[answer] * HOPS)


def _summarizer(ctx: Context) -> ScriptedChatModel:
    def summarise(call: ScriptedCall) -> dict[str, Any]:
        text = "\n".join(str(m.content) for m in call.messages)
        # The compacted history ends with the last prompt before the kept tail.
        hops = sorted({int(h) for h in HOP_RE.findall(text)})
        ctx.record("summarizer", "researcher", max(hops) if hops else 0)
        ctx.maybe_block("summarizer", "researcher", COMPACTION_HOP)
        return summary_for(text)

    return ScriptedChatModel(name="summarizer", script=[summarise] * HOPS)


def build_graph(ctx: Context) -> Any:
    """The uncompiled team: a `create_agent` researcher and a function writer."""

    def writer(task: WorkerTask) -> str:
        ctx.record("worker", "writer", task.step)
        return writer_answer(task.step)

    def router(view: Any) -> dict[str, str]:
        hops_done = len(view.ledger)
        ctx.record("decision", "router", hops_done + 1)
        return decide(hops_done)

    workers = [
        Worker(
            name="researcher",
            description="Finds the shipment records.",
            agent=create_agent(_researcher_model(ctx), tools=[], name="researcher_agent"),
        ),
        Worker(name="writer", description="Writes the trace.", agent=writer),
    ]
    compaction = Compaction(
        summarizer=_summarizer(ctx), max_context_tokens=WINDOW, trigger=TRIGGER, keep=KEEP
    )
    return create_supervisor(workers, router=router, max_steps=HOPS, compaction=compaction)


def _summary(values: dict[str, Any], pending: tuple[str, ...]) -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "pending_at_start": list(pending),
        "status": values.get("status"),
        "ledger": [[e["step"], e["worker"], e["status"]] for e in values.get("ledger") or ()],
    }


def run_sync(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config: Any = {"configurable": {"thread_id": args.thread}}
    with open_checkpointer(args.uri) as saver, open_store(args.uri) as store:
        app = build_graph(ctx).compile(checkpointer=saver, store=store)
        pending = tuple(app.get_state(config).next)
        payload = None if args.phase == "resume" else {"messages": [("user", TASK)]}
        values = app.invoke(payload, config, durability="sync")
        return _summary(values, pending)


async def run_async(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config: Any = {"configurable": {"thread_id": args.thread}}
    async with aopen_checkpointer(args.uri) as saver, aopen_store(args.uri) as store:
        app = build_graph(ctx).compile(checkpointer=saver, store=store)
        pending = tuple((await app.aget_state(config)).next)
        payload = None if args.phase == "resume" else {"messages": [("user", TASK)]}
        values = await app.ainvoke(payload, config, durability="sync")
        return _summary(values, pending)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", required=True, help="Postgres URI (checkpoints and store)")
    parser.add_argument("--thread", required=True)
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--phase", required=True, choices=("run", "resume"))
    parser.add_argument("--mode", default="sync", choices=("sync", "async"))
    parser.add_argument("--block", default=None, help="summarizer, or model:HOP (run phase only)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    block_kind = block_hop = None
    if args.block == "summarizer":
        block_kind = "summarizer"
    elif args.block:
        kind, _, hop = args.block.partition(":")
        if kind != "model" or not hop.isdigit():
            raise SystemExit(f"--block: expected 'summarizer' or 'model:HOP', got {args.block!r}")
        block_kind, block_hop = kind, int(hop)
    ctx = Context(args.workdir, args.phase, block_kind, block_hop)
    summary = asyncio.run(run_async(args, ctx)) if args.mode == "async" else run_sync(args, ctx)
    print(json.dumps(summary), flush=True)
    return 0 if summary["status"] == "done" else 1


if __name__ == "__main__":
    sys.exit(main())

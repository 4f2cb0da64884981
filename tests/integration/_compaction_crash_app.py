"""Child process for the compaction crash tests: runs, or resumes, a compacting team.

It imports the package and the child-side helpers of `_app_common.py` (with the
repository root on `PYTHONPATH`), never pytest or the fixtures, so
`tests/integration/test_crash_compaction.py` can start it as a real process,
SIGKILL it in the middle of a compaction step (or of the worker hop right after
one) and resume the thread in a new process::

    PYTHONPATH=. python tests/integration/_compaction_crash_app.py --uri postgresql://... \\
        --thread t1 --workdir /tmp/x --phase run --block summarizer
    PYTHONPATH=. python tests/integration/_compaction_crash_app.py --uri postgresql://... \\
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
import re
import sys
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
from langgraph_supervisor_pro.compaction._compactor import Compaction
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel
from tests.integration._app_common import (
    HOP_RE,
    HopContext,
    app_parser,
    parse_block,
    plan_decision,
    plan_instructions,
    run_and_report,
    run_input,
    run_summary,
    scripted_summary,
    thread_config,
)

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
FILLER = "the parcel moved between depots and every scan was logged with its time "


def instructions_for(hop: int) -> str:
    """The instructions the supervisor gives for hop `hop` (FINISH's note after the plan)."""
    return plan_instructions(PLAN, hop)


def decide(hops_done: int) -> dict[str, str]:
    """The decision after `hops_done` hops of this turn: the next worker of PLAN, or FINISH."""
    return plan_decision(PLAN, hops_done)


def fact_for(hop: int) -> str:
    return f"FACT-{hop:04d}"


def research_answer(hop: int) -> str:
    head = f"researcher findings for hop {hop}: record {fact_for(hop)}. "
    return head + (FILLER * (ANSWER_CHARS // len(FILLER) + 1))[: ANSWER_CHARS - len(head)]


def writer_answer(hop: int) -> str:
    return f"writer result for hop {hop}"


def summary_for(text: str) -> dict[str, Any]:
    """What the scripted summarizer answers for the prompt text it is shown."""
    return scripted_summary(text, task=TASK, remaining="continue")


def prompt_hop(messages: Any) -> int:
    prompts = [m for m in messages if isinstance(m, HumanMessage)]
    match = re.search(r"hop (\d+):", str(prompts[-1].content)) if prompts else None
    if match is None:
        raise AssertionError(f"no hop number in {messages!r}")
    return int(match.group(1))


class Context(HopContext):
    """Where this process logs, and whether (and where) it blocks."""

    app = "_compaction_crash_app"


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


def run_sync(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config = thread_config(args.thread)
    with open_checkpointer(args.uri) as saver, open_store(args.uri) as store:
        app = build_graph(ctx).compile(checkpointer=saver, store=store)
        pending = tuple(app.get_state(config).next)
        values = app.invoke(run_input(args.phase, TASK), config, durability="sync")
        return run_summary(values, pending)


async def run_async(args: argparse.Namespace, ctx: Context) -> dict[str, Any]:
    config = thread_config(args.thread)
    async with aopen_checkpointer(args.uri) as saver, aopen_store(args.uri) as store:
        app = build_graph(ctx).compile(checkpointer=saver, store=store)
        pending = tuple((await app.aget_state(config)).next)
        values = await app.ainvoke(run_input(args.phase, TASK), config, durability="sync")
        return run_summary(values, pending)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = app_parser(__doc__.splitlines()[0], uri_help="Postgres URI (checkpoints and store)")
    parser.add_argument("--block", default=None, help="summarizer, or model:HOP (run phase only)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    block = parse_block(
        args.block,
        kinds=("model",),
        bare=("summarizer",),
        expected="'summarizer' or 'model:HOP'",
    )
    return run_and_report(args, Context(args.workdir, args.phase, *block), run_sync, run_async)


if __name__ == "__main__":
    sys.exit(main())

"""Tool-calling agent workers for the storage tests (and their child processes).

Each worker is a `create_agent` graph whose offline model decides from what it is shown:
for a new prompt it calls its tool once (`lookup(part=<prompts so far>)`), and once the
tool has answered it answers with the first words of the tool's output. So a hop is one
model call, one tool call, one model call, and a resumed hop needs no script position.
No pytest import: `tests/integration/_storage_crash_app.py` uses it in a child process.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.pregel import Pregel
from langgraph.types import interrupt

from langgraph_supervisor_pro import FINISH, SupervisorView, Worker, create_supervisor
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall

TOOL_CHARS = 2_000
_WORDS = [
    "heat",
    "pump",
    "grid",
    "tariff",
    "winter",
    "retrofit",
    "subsidy",
    "installer",
    "compressor",
    "boiler",
]


def tool_output(worker: str, part: int) -> str:
    """What `lookup` returns for `worker`'s `part`: `TOOL_CHARS` characters of seeded words."""
    rng = random.Random(f"{worker}:{part}")
    words = [f"[{worker} part {part}]"]
    while sum(len(w) + 1 for w in words) < TOOL_CHARS:
        words.append(rng.choice(_WORDS))
    return " ".join(words)[:TOOL_CHARS]


def lookup_tool(worker: str, before: Callable[[int], None] | None = None) -> BaseTool:
    """`lookup(part)`: `tool_output(worker, part)`; `before(part)` runs first when given."""

    @tool
    def lookup(part: int) -> str:
        """Look up the material for one part of the report."""
        if before is not None:
            before(part)
        return tool_output(worker, part)

    return lookup


def prompts_in(messages: Sequence[Any]) -> int:
    """How many prompts (human messages) a call holds: the worker's visit so far."""
    return sum(isinstance(m, HumanMessage) for m in messages)


def answer(worker: str, part: int) -> str:
    """The worker's answer on its visit `part` (from the tool's output)."""
    return f"{worker} answers part {part}: " + tool_output(worker, part)[:60]


def tool_reply(
    worker: str, seen: Callable[[ScriptedCall], None] | None = None
) -> Callable[[ScriptedCall], str | AIMessage]:
    """The worker model: a `lookup` call for a new prompt, its answer after the tool's result."""

    def reply(call: ScriptedCall) -> str | AIMessage:
        if seen is not None:
            seen(call)
        part = prompts_in(call.messages)
        if isinstance(call.messages[-1], ToolMessage):
            return answer(worker, part)
        call_id = f"call_{worker}_{part}"
        return AIMessage(
            content="", tool_calls=[{"name": "lookup", "args": {"part": part}, "id": call_id}]
        )

    return reply


def tool_agent(
    worker: str,
    *,
    tools: Sequence[BaseTool] | None = None,
    seen: Callable[[ScriptedCall], None] | None = None,
) -> Pregel[Any, Any, Any, Any]:
    """A `create_agent` worker calling `lookup` (or `tools`) once per hop."""
    model = FunctionChatModel(reply=tool_reply(worker, seen))
    return create_agent(model, tools=list(tools or [lookup_tool(worker)]), name=worker)


def pausing_agent(
    worker: str, *, part: int, question: Any, calls: list[int] | None = None
) -> Pregel[Any, Any, Any, Any]:
    """A tool agent whose tool asks `question` (an interrupt) on the worker's visit `part`.

    The resume value must be "yes". Each model call appends its message count to `calls`.
    """

    def ask(visit: int) -> None:
        if visit == part:
            answer = interrupt(question)
            if answer != "yes":
                raise ValueError(f"expected the answer 'yes', got {answer!r}")

    seen = (lambda call: calls.append(len(call.messages))) if calls is not None else None
    return tool_agent(worker, tools=[lookup_tool(worker, ask)], seen=seen)


def round_robin(names: Sequence[str], hops: int) -> Callable[[SupervisorView], str]:
    """A router taking `names` in turn for `hops` hops of the current turn, then FINISH."""

    def router(view: SupervisorView) -> str:
        done = len(view.ledger)
        return names[done % len(names)] if done < hops else FINISH

    return router


def tool_team(
    hops: int,
    names: Sequence[str] = ("researcher", "analyst"),
    *,
    agents: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """An uncompiled supervisor over tool-calling agents, routed round-robin by code."""
    given = agents or {}
    workers = [
        Worker(name=n, description=f"The {n}.", agent=given.get(n) or tool_agent(n)) for n in names
    ]
    kwargs.setdefault("max_steps", max(hops, 1))
    return create_supervisor(workers, router=round_robin(names, hops), **kwargs)

"""The budgeted graphs `langgraph dev` serves in the budget dev-server test.

One `analyst` (a model worker) and a `planner` model that routes to it `HOPS` times, then
FINISH. Both models report their usage (`report_usage=True`) and answer from what they are
shown, never from call order, so the server can serve any number of runs, and every run
of a graph spends the same tokens. The price table names both models, so every call has
a cost. Exported uncompiled: the server supplies the checkpointer.

- `halting`: `max_tokens=HALT_TOKENS` per turn, passed before the plan is done: the run
  halts with `budget_exceeded`.
- `reviewed`: `max_tokens=REVIEW_TOKENS`, `warn_at=WARN_AT`, `on_warning="review"`: past
  the warning the run pauses for a `budget` review. Approved, the limit doubles and the
  run goes on past the old limit to FINISH (under the new limit's own warning); rejected,
  it finishes with what was done.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from langgraph_supervisor_pro import Budget, Worker, create_supervisor
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall

HOPS = 5
"""The analyst's hops in a run nobody stops."""
PRICES = {
    "planner": {"input": 1.0, "output": 4.0},
    "analyst-model": {"input": 3.0, "output": 15.0, "cached_input": 0.3},
}
"""Per million tokens."""
HALT_TOKENS = 900
"""`halting`'s limit: about 600 tokens are spent after two hops, about 1,100 after three."""
REVIEW_TOKENS = 1_700
"""`reviewed`'s limit: its warning (1,360) comes after hop 4 (about 1,100 after three,
1,650 after four); approved, the limit is 3,400, whose warning (2,720) the run does not
reach by its FINISH decision (about 2,300 after hop 5), past the old limit."""
WARN_AT = 0.8
_HOPS_SO_FAR = re.compile(r"Ledger: (\d+) hops so far")
_HOP = re.compile(r"hop (\d+):")
FILLER = "the quarterly figures moved with the season and the stock followed "


def instructions_for(hop: int) -> str:
    return f"hop {hop}: analyse the figures" if hop <= HOPS else f"all {HOPS} hops are done"


def _plan(call: ScriptedCall) -> AIMessage:
    """Route to the analyst until the ledger holds `HOPS` hops (read from the prompt)."""
    match = _HOPS_SO_FAR.search(str(call.messages[-1].content))
    done = int(match.group(1)) if match else 0
    decision = {
        "next": "analyst" if done < HOPS else "FINISH",
        "instructions": instructions_for(done + 1),
    }
    (tool,) = call.tools
    return AIMessage(
        content="", tool_calls=[{"name": tool, "args": decision, "id": f"route-{done + 1}"}]
    )


def analysis(hop: int) -> str:
    return f"analysis for hop {hop}: " + FILLER * 2


def _analyse(call: ScriptedCall) -> str:
    prompts = [m for m in call.messages if isinstance(m, HumanMessage)]
    match = _HOP.search(str(prompts[-1].content)) if prompts else None
    return analysis(int(match.group(1)) if match else 0)


def _team(budget: Budget) -> Any:
    analyst = Worker(
        name="analyst",
        description="Analyses the quarterly figures.",
        model=FunctionChatModel(name="analyst-model", reply=_analyse, report_usage=True),
    )
    planner = FunctionChatModel(name="planner", reply=_plan, report_usage=True)
    return create_supervisor([analyst], model=planner, max_steps=HOPS + 1, budget=budget)


halting = _team(Budget(max_tokens=HALT_TOKENS, prices=PRICES))
reviewed = _team(
    Budget(max_tokens=REVIEW_TOKENS, warn_at=WARN_AT, on_warning="review", prices=PRICES)
)

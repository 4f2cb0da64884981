"""The `lgsp demo` team (private; used by `cli.py`, rendered by `_demo_render.py`).

The team answers one realistic question offline, with scripted models:

- `researcher`: a compiled LangGraph agent (a `StateGraph` with a scripted model and a
  `ToolNode`) that calls `search_market_data`, then answers from what the tool returned.
- `analyst`: an async function worker that models the launch from a pilot dataset and
  streams progress with `get_stream_writer()`. The dataset has gaps: without a rule for
  them it raises `ValueError`, which the graph records as a `failed` hop.
- `writer`: a sync function worker that drafts the go/no-go memo.

The supervisor's scripted model decides from what it is shown (the ledger in its
prompt), not from its call count, so a run resumed from a checkpoint in a new process
decides exactly as an uninterrupted one. It proposes one worker that does not exist
(`marketing`), which the supervisor rejects and re-asks. The scripted synthesizer writes
the final answer from the workers' full results.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.config import get_stream_writer
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

from langgraph_supervisor_pro._internal.text import message_text
from langgraph_supervisor_pro.builder import create_supervisor
from langgraph_supervisor_pro.contracts import FINISH, WorkerResult, WorkerTask
from langgraph_supervisor_pro.state import SupervisorInput, SupervisorState
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel, ScriptReply
from langgraph_supervisor_pro.workers import Worker

__all__ = [
    "DEMO_TASK",
    "PROGRESS_EVENT",
    "DemoTeam",
    "build_demo_team",
]

DemoApp = CompiledStateGraph[SupervisorState, None, SupervisorInput, SupervisorState]
"""The compiled demo graph."""

DEMO_TASK = (
    "Should we launch Acme Notes, our B2B note-taking app, in Germany next quarter? "
    "Give a recommendation."
)
"""The user's question the demo team answers."""

PROGRESS_EVENT = "lgsp_demo.progress"
"""The `kind` of the custom stream events the analyst writes."""

_SCRIPT_LENGTH = 16  # room for every call a full (or resumed) run makes, and then some

# --------------------------------------------------------------------------- the data

_MARKET_DATA: dict[str, Any] = {
    "country": "DE",
    "segment": "team knowledge & note-taking software",
    "market_size_eur_bn": 1.9,
    "growth_pct_per_year": 11,
    "competitors": ["Notion", "Confluence", "Stackfield"],
    "buyers_requiring_eu_hosting_pct": 72,
    "requirements": ["GDPR data processing agreement", "EU data hosting", "German UI and invoices"],
}

_PILOT_CHURN_PCT: tuple[tuple[str, float | None], ...] = (
    ("Apr", 2.4),
    ("May", 1.9),
    ("Jun", 1.8),
    ("Jul", None),  # export failed: no data
    ("Aug", None),  # export failed: no data
    ("Sep", 2.2),
)
_PILOT_ACCOUNTS = 40
_ARPA_EUR = 96.0  # average revenue per account and month (12 seats at EUR 8)
_GROSS_MARGIN = 0.8
_LAUNCH_COST_EUR = 400_000  # localisation, EU hosting, one sales hire
_NEW_ACCOUNTS_PER_MONTH = {"conservative": 30, "base": 45, "optimistic": 70}
_GO_IF_BREAK_EVEN_WITHIN_MONTHS = 18


@tool
def search_market_data(country: str, segment: str) -> str:
    """Look up market size, growth, competitors and buyer requirements for a country.

    Args:
        country: ISO 3166 country code, e.g. "DE".
        segment: The market segment, e.g. "team note-taking software".
    """
    return json.dumps({**_MARKET_DATA, "country": country.upper(), "segment": segment})


# --------------------------------------------------------------------------- researcher


def _researcher_policy(call: ScriptedCall) -> ScriptReply:
    """The researcher model: search first, then answer from the tool's result."""
    last = call.messages[-1]
    if isinstance(last, ToolMessage):
        data = json.loads(message_text(last))
        competitors = ", ".join(data["competitors"])
        return (
            f"EUR {data['market_size_eur_bn']}bn market, +{data['growth_pct_per_year']}%/year; "
            f"rivals {competitors}. {data['buyers_requiring_eu_hosting_pct']}% of buyers "
            "require EU hosting, a GDPR DPA and German invoices."
        )
    return AIMessage(
        content="",
        tool_calls=[
            {
                "name": "search_market_data",
                "args": {"country": "DE", "segment": "team note-taking software"},
                "id": f"call_search_{call.index}",
                "type": "tool_call",
            }
        ],
    )


def _build_researcher(model: ScriptedChatModel) -> CompiledStateGraph[Any, Any, Any, Any]:
    tools = [search_market_data]
    bound = model.bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, list[AnyMessage]]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(name="researcher")


# --------------------------------------------------------------------------- analyst


async def analyst(task: WorkerTask) -> WorkerResult:
    """Model year-one revenue and break-even for the launch from the pilot cohort.

    Streams progress events; refuses to guess when the data has gaps and the
    instructions give no rule for them.

    Args:
        task: The hop's task; its instructions may say to impute missing months.

    Returns:
        The scenarios as a JSON-ready dict, with a one-line summary.

    Raises:
        ValueError: The churn data has gaps and the instructions do not say how to fill them.

    Example:
        >>> Worker(name="analyst", description="Models the launch.", agent=analyst).name
        'analyst'
    """
    steps = 4
    _progress(
        1,
        steps,
        f"loading the pilot cohort: {_PILOT_ACCOUNTS} German accounts, "
        f"{len(_PILOT_CHURN_PCT)} months of churn",
    )
    await asyncio.sleep(0)
    missing = [month for month, churn in _PILOT_CHURN_PCT if churn is None]
    known = [churn for _, churn in _PILOT_CHURN_PCT if churn is not None]
    if missing and "impute" not in task.instructions.lower():
        raise ValueError(
            f"pilot churn data has gaps ({', '.join(missing)} missing); "
            "tell me how to treat them, e.g. impute with the cohort median"
        )
    churn = statistics.median(known)
    _progress(
        2,
        steps,
        f"imputed {len(missing)} missing months ({', '.join(missing)}) "
        f"with the median churn of {churn:.2f}%/month",
    )
    await asyncio.sleep(0)
    _progress(3, steps, f"modelling {len(_NEW_ACCOUNTS_PER_MONTH)} scenarios over 36 months")
    scenarios = {name: _scenario(new, churn) for name, new in _NEW_ACCOUNTS_PER_MONTH.items()}
    await asyncio.sleep(0)
    breaks = ", ".join(f"{name} {_month(s['break_even_month'])}" for name, s in scenarios.items())
    _progress(4, steps, f"break-even: {breaks}")
    base, worst = scenarios["base"], scenarios["conservative"]
    return WorkerResult(
        status="success",
        result={
            "monthly_churn_pct": round(churn, 2),
            "imputed_months": missing,
            "launch_cost_eur": _LAUNCH_COST_EUR,
            "scenarios": {name: dict(s) for name, s in scenarios.items()},
        },
        summary=(
            f"Base case: EUR {base['year_one_revenue_eur'] // 1000}k year-one revenue, "
            f"break-even in {_month(base['break_even_month'])} "
            f"(conservative {_month(worst['break_even_month'])}); "
            f"churn {churn:.2f}%/month with {len(missing)} months imputed."
        ),
    )


class _Scenario(TypedDict):
    new_accounts_per_month: int
    year_one_revenue_eur: int
    break_even_month: int | None


def _scenario(new_accounts: int, churn_pct: float) -> _Scenario:
    """Accounts grow by `new_accounts` a month and shrink by churn; 36 months of contribution."""
    active = 0.0
    contribution = 0.0
    year_one = 0.0
    break_even: int | None = None
    for month in range(1, 37):
        active = active * (1 - churn_pct / 100) + new_accounts
        revenue = active * _ARPA_EUR
        if month <= 12:
            year_one += revenue
        contribution += revenue * _GROSS_MARGIN
        if break_even is None and contribution >= _LAUNCH_COST_EUR:
            break_even = month
    return _Scenario(
        new_accounts_per_month=new_accounts,
        year_one_revenue_eur=int(round(year_one, -3)),
        break_even_month=break_even,
    )


def _month(month: int | None) -> str:
    return f"month {month}" if month is not None else "not within 36 months"


def _progress(done: int, total: int, message: str) -> None:
    """Write a progress event to the run's `custom` stream."""
    write = get_stream_writer()
    write(
        {
            "kind": PROGRESS_EVENT,
            "worker": "analyst",
            "done": done,
            "total": total,
            "message": message,
        }
    )


# --------------------------------------------------------------------------- writer

_BREAK_EVEN_RE = re.compile(r"break-even in month (\d+)")
_IMPUTED_RE = re.compile(r"with (\d+) months imputed")
_MEMO_LABELS = ("Market", "Economics")


def writer(task: WorkerTask) -> WorkerResult:
    """Draft the go/no-go memo from the facts the supervisor passed in the instructions.

    Args:
        task: The hop's task; its instructions carry `Market: ...` and `Economics: ...`.

    Returns:
        The memo in Markdown.

    Example:
        >>> writer(WorkerTask(worker="writer", step=1, task="Launch?",
        ...        instructions="Market: big. Economics: break-even in month 12.")).status
        'success'
    """
    market = _field(task.instructions, "Market")
    economics = _field(task.instructions, "Economics")
    match = _BREAK_EVEN_RE.search(economics)
    months = int(match.group(1)) if match else None
    go = months is not None and months <= _GO_IF_BREAK_EVEN_WITHIN_MONTHS
    verdict = (
        "**Go**: launch in Germany next quarter, as a staged launch."
        if go
        else "**No-go for now**: the economics do not support a launch next quarter."
    )
    memo = "\n".join(
        [
            f"### Recommendation: {'launch' if go else 'wait'}",
            "",
            verdict,
            "",
            f"- **Market.** {market}",
            f"- **Economics.** {economics}",
            f"- **Rule.** We launch when the base case breaks even within "
            f"{_GO_IF_BREAK_EVEN_WITHIN_MONTHS} months"
            + (f"; it does in month {months}." if months else "; no break-even was given."),
            "",
            "**Conditions**",
            "",
            "1. Host German customers' data in the EU (Frankfurt region) before launch.",
            "2. Ship the German UI, invoices and a GDPR data processing agreement.",
        ]
    )
    imputed = _IMPUTED_RE.search(economics)
    if imputed:
        memo += (
            f"\n3. Re-measure churn after two months: {imputed.group(1)} pilot months were imputed."
        )
    return WorkerResult(
        status="success",
        result=memo,
        summary=(
            f"Memo drafted: {'Go' if go else 'No-go'}"
            + (f" (break-even month {months} <= {_GO_IF_BREAK_EVEN_WITHIN_MONTHS})" if go else "")
            + f", with {2 + bool(imputed)} launch conditions."
        ),
    )


def _field(text: str, label: str) -> str:
    """The text after `label:` in the instructions, up to the next known label."""
    labels = "|".join(_MEMO_LABELS)
    match = re.search(rf"\b{label}: (.+?)(?=\s(?:{labels}): |$)", text, flags=re.S)
    return " ".join(match.group(1).split()) if match else "(not given)"


# --------------------------------------------------------------------------- supervisor

_LEDGER_LINE = re.compile(r"^#(\d+) (\S+) \[(\w+)\] (.*)$", re.M)


@dataclass(frozen=True)
class _Seen:
    worker: str
    status: str
    summary: str


def _supervisor_policy(call: ScriptedCall) -> ScriptReply:
    """The supervisor model: decide from the ledger it is shown, like a real model would."""
    prompt = message_text(call.messages[1]) if len(call.messages) > 1 else ""
    seen = [_Seen(m.group(2), m.group(3), m.group(4)) for m in _LEDGER_LINE.finditer(prompt)]
    reasked = len(call.messages) > 2  # the supervisor appended what was wrong with the answer

    def ok(worker: str) -> list[_Seen]:
        return [s for s in seen if s.worker == worker and s.status == "success"]

    analyst_runs = [s for s in seen if s.worker == "analyst"]
    if not ok("researcher"):
        return {
            "next": "researcher",
            "instructions": "Find the German market size and growth, the main competitors "
            "and what buyers require of SaaS vendors there.",
        }
    market = ok("researcher")[-1].summary
    if not ok("analyst") and len(analyst_runs) < 2:
        if not analyst_runs and not reasked:
            # The hallucination: a plausible worker that does not exist.
            return {"next": "marketing", "instructions": "Draft the German launch campaign."}
        if not analyst_runs:
            return {
                "next": "analyst",
                "instructions": "Estimate year-one revenue and break-even for Germany "
                "from our pilot cohort.",
            }
        return {
            "next": "analyst",
            "instructions": "Retry, and impute the missing churn months with the cohort "
            "median; flag them as estimates.",
        }
    if not any(s.worker == "writer" for s in seen):
        economics = ok("analyst")[-1].summary if ok("analyst") else "(the analysis failed)"
        return {
            "next": "writer",
            "instructions": f"Draft the go/no-go memo. Market: {market} Economics: {economics}",
        }
    return {"next": FINISH, "instructions": "Research, economics and the memo are in."}


# --------------------------------------------------------------------------- synthesis

_RESULT_HEAD = re.compile(r"^Result of (\S+) \(hop (\d+)\):$", re.M)


def _synthesizer_policy(call: ScriptedCall) -> ScriptReply:
    """The synthesizer model: the writer's memo, with the hops it is based on."""
    prompt = message_text(call.messages[-1])
    heads = list(_RESULT_HEAD.finditer(prompt))
    sections: dict[str, str] = {}
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(prompt)
        sections[head.group(1)] = prompt[head.end() : end].split("\n\nSupervisor's note:")[0]
    memo = sections.get("writer", "").strip()
    if not memo:
        return "I could not find the writer's memo in the results I was given."
    sources = ", ".join(f"{h.group(1)} (hop {h.group(2)})" for h in heads)
    return f"{memo}\n\n---\n*Synthesised from the successful hops: {sources}.*"


# --------------------------------------------------------------------------- the team


@dataclass(frozen=True, kw_only=True)
class DemoTeam:
    """The demo's graph and the scripted models behind it (to show what they were asked).

    Example:
        >>> team = build_demo_team()
        >>> [w.name for w in team.workers]
        ['researcher', 'analyst', 'writer']
    """

    workers: tuple[Worker, ...]
    """The three workers, in catalogue order."""
    supervisor_model: ScriptedChatModel
    """The supervisor's model; its recorded calls show each re-ask."""
    researcher_model: ScriptedChatModel
    """The researcher agent's model."""
    synthesizer_model: ScriptedChatModel
    """The model that writes the final answer."""
    task: str = DEMO_TASK
    """The question the team answers."""

    def compile(self, checkpointer: Any) -> DemoApp:
        """Build the supervisor graph and compile it with `checkpointer`.

        Args:
            checkpointer: A LangGraph checkpointer, e.g. from `open_checkpointer`.

        Returns:
            The compiled graph.

        Example:
            ```python
            with open_checkpointer("sqlite:///demo.db") as saver:
                app = build_demo_team().compile(saver)
            ```
        """
        graph = create_supervisor(
            list(self.workers),
            model=self.supervisor_model,
            synthesizer=self.synthesizer_model,
            max_steps=8,
        )
        return graph.compile(checkpointer=checkpointer)


def build_demo_team() -> DemoTeam:
    """Build the demo's three-worker team with fresh scripted models.

    Returns:
        The team; `team.compile(saver)` gives the runnable graph.

    Example:
        >>> team = build_demo_team()
        >>> team.supervisor_model.calls
        ()
    """
    researcher_model = ScriptedChatModel(
        name="researcher-model", script=[_researcher_policy] * _SCRIPT_LENGTH
    )
    workers = (
        Worker(
            name="researcher",
            description="Finds market facts with the search_market_data tool.",
            agent=_build_researcher(researcher_model),
            tools=("search_market_data",),
            risks={"search_market_data": "low"},
            max_visits=3,
        ),
        Worker(
            name="analyst",
            description="Models revenue, churn and break-even from our own pilot data.",
            agent=analyst,
            max_visits=3,
        ),
        Worker(
            name="writer",
            description="Drafts the recommendation memo from facts given in the instructions.",
            agent=writer,
            max_visits=2,
        ),
    )
    return DemoTeam(
        workers=workers,
        supervisor_model=ScriptedChatModel(
            name="supervisor-model", script=[_supervisor_policy] * _SCRIPT_LENGTH
        ),
        researcher_model=researcher_model,
        synthesizer_model=ScriptedChatModel(
            name="synthesizer-model", script=[_synthesizer_policy] * _SCRIPT_LENGTH
        ),
    )

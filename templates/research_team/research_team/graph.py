"""The research team graph: a supervisor over `researcher`, `analyst` and `writer`.

- `researcher` searches a corpus of sources (`search_sources`, one search per subject of the
  question, the searches independent of each other) and reports findings, each citing its
  source (`[S1]`).
- `analyst` looks figures up in a dataset (`lookup_figures`) and does the arithmetic
  (e.g. a year of heating with a gas boiler against a heat pump), each figure cited (`[D1]`).
- `writer` writes the report: it reads the researcher's and the analyst's full outputs
  (`Worker(reads=...)`, from the package's external memory), fetches the sources they cite
  from the LangGraph store (`get_sources`) and ends with the list of sources.

Every source and figure a search finds is kept in the LangGraph store under
`("research_team", "sources", <thread_id>)`, keyed by its id, so the writer cites what the
research actually found. The supervisor sends `researcher` and `analyst` at the same time
(parallel fan-out: two independent searches in one step), then `writer`, then finishes.
A long research conversation is compacted before it overflows the context window: the
window is the model's profile's `max_input_tokens`, else `LGSP_CONTEXT_TOKENS` (default
8192), and a worker's history is summarised at 70% of it.

Models: with `LGSP_MODEL` set (`provider:model`, e.g. `openai:gpt-4.1-mini`) every role
uses it through `init_chat_model`; `LGSP_SUPERVISOR_MODEL`, `LGSP_RESEARCHER_MODEL`,
`LGSP_ANALYST_MODEL`, `LGSP_WRITER_MODEL` and `LGSP_SUMMARIZER_MODEL` override it per role.
Without it the team runs offline: the supervisor is a rule-based router and the other
models are functions of the messages they are shown (`FunctionChatModel`), never of how
often they were called, so one server serves any number of runs.

`graph` is uncompiled: `langgraph dev` (or your code) supplies the checkpointer and store.
"""

import json
import os
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import StateGraph
from langgraph_supervisor_pro import (
    Compaction,
    ReviewPolicy,
    SupervisorView,
    Worker,
    create_supervisor,
)
from langgraph_supervisor_pro.compaction import is_summary_message
from langgraph_supervisor_pro.testing import FunctionChatModel
from langgraph_supervisor_pro.workers import model_from_env

# --------------------------------------------------------------------------- the corpus

SOURCES: dict[str, dict[str, Any]] = {
    "S1": {
        "title": "Air-source heat pumps in cold winters: a two-year field trial",
        "publisher": "Northern Housing Lab",
        "year": 2024,
        "url": "https://example.org/northern-housing-lab/heat-pump-field-trial",
        "subjects": ("heat pump",),
        "finding": (
            "In a two-year trial of 42 homes, air-source heat pumps averaged a seasonal "
            "efficiency (SCOP) of 3.1, falling to 2.2 on days below -10 C."
        ),
        "text": (
            "We monitored 42 occupied homes heated by air-source heat pumps through two "
            "winters. The seasonal coefficient of performance averaged 3.1 and stayed above "
            "2.2 even on days below -10 C; the electric backup heater ran on 4% of winter "
            "hours. Homes whose radiators were sized for a 45 C flow temperature did best, "
            "and no household went back to its old boiler. Efficiency, performance, cold "
            "climate and emissions were measured hourly."
        ),
    },
    "S2": {
        "title": "What a heat pump installation really costs",
        "publisher": "Home Retrofit Quarterly",
        "year": 2023,
        "url": "https://example.org/home-retrofit-quarterly/heat-pump-costs",
        "subjects": ("heat pump",),
        "finding": (
            "Installing a heat pump in a three-bedroom house costs 9,000-14,000 EUR before "
            "grants, which cover 30-50% in several countries."
        ),
        "text": (
            "Quotes from 310 installations show an installed cost of 9,000 to 14,000 EUR "
            "for a three-bedroom house, replacing a gas boiler. Grants cover 30 to 50 "
            "percent of the price in several countries. Larger radiators, where needed, add "
            "1,000 to 3,000 EUR. Running costs depend mostly on the ratio of electricity "
            "to gas prices; the price of installation is the main barrier households report."
        ),
    },
    "S3": {
        "title": "Noise and placement of outdoor heat pump units",
        "publisher": "Acoustics Notes",
        "year": 2022,
        "url": "https://example.org/acoustics-notes/heat-pump-noise",
        "subjects": ("heat pump",),
        "finding": (
            "Modern outdoor units emit 45-55 dB(A) at one metre, about as loud as a quiet "
            "conversation, and placement away from bedroom windows matters most."
        ),
        "text": (
            "Sound power measurements of 24 current outdoor units gave 45 to 55 dB(A) at one "
            "metre in normal operation, comparable to a quiet conversation. Noise complaints "
            "came mostly from units mounted under bedroom windows or in narrow passages that "
            "reflect sound. A loud unit can be placed on anti-vibration feet, and a distance "
            "of a few metres from the neighbour's windows keeps it below night limits."
        ),
    },
    "S4": {
        "title": "Rooftop solar yield across European latitudes",
        "publisher": "Solar Atlas Review",
        "year": 2024,
        "url": "https://example.org/solar-atlas-review/rooftop-yield",
        "subjects": ("solar",),
        "finding": (
            "One kilowatt-peak of rooftop solar yields 850-1,400 kWh a year in Europe, "
            "about 950 kWh in central Europe."
        ),
        "text": (
            "Metered output of 5,000 rooftop photovoltaic systems shows a yearly yield of "
            "850 kWh per kilowatt-peak in the north of Europe up to 1,400 kWh in the south, "
            "and about 950 kWh in central Europe. Panels facing south at 30 to 40 degrees "
            "yield most; east-west roofs give 10-15% less but spread output over the day. "
            "Panel prices fell by half in a decade, so cost and payback keep improving."
        ),
    },
    "S5": {
        "title": "Self-consumption of rooftop solar with and without a home battery",
        "publisher": "Grid Edge Papers",
        "year": 2023,
        "url": "https://example.org/grid-edge-papers/self-consumption",
        "subjects": ("solar", "battery"),
        "finding": (
            "Households use 30-35% of their solar output themselves; a 10 kWh home battery "
            "raises that to 60-70%."
        ),
        "text": (
            "Across 1,200 households with rooftop solar, 30 to 35 percent of the output was "
            "used on site and the rest exported to the grid. Adding a home battery of about "
            "10 kWh storage raised self-consumption to 60 to 70 percent; savings depend on "
            "the gap between the electricity price and the feed-in tariff paid for exports."
        ),
    },
    "S6": {
        "title": "Home battery capacity after five years in service",
        "publisher": "Storage Field Reports",
        "year": 2024,
        "url": "https://example.org/storage-field-reports/battery-ageing",
        "subjects": ("battery",),
        "finding": (
            "Home batteries kept 88-92% of their capacity after five years, and most "
            "warranties cover ten years or 70% capacity."
        ),
        "text": (
            "We tracked 860 lithium iron phosphate home batteries for five years. They kept "
            "88 to 92 percent of their storage capacity, losing about 2 percent a year, so "
            "they last well beyond their warranty, which typically covers ten years or 70 "
            "percent of capacity. Lifespan and degradation depended on heat more than on use."
        ),
    },
    "S7": {
        "title": "Loft and cavity wall insulation: measured savings",
        "publisher": "Building Physics Digest",
        "year": 2022,
        "url": "https://example.org/building-physics-digest/insulation-savings",
        "subjects": ("insulation",),
        "finding": (
            "Loft insulation cut heating demand by 12-20% and cavity wall insulation by "
            "15-25% in measured homes."
        ),
        "text": (
            "Smart meter data from 2,400 homes before and after insulation show that loft "
            "insulation cut heating demand by 12 to 20 percent and cavity wall insulation by "
            "15 to 25 percent. Both cost less than 2,500 EUR and pay back within five to "
            "eight years at current gas prices, with lower emissions from the first winter."
        ),
    },
    "S8": {
        "title": "Heat pumps and insulation: which comes first?",
        "publisher": "Retrofit Planning Guide",
        "year": 2023,
        "url": "https://example.org/retrofit-planning-guide/insulate-first",
        "subjects": ("heat pump", "insulation"),
        "finding": (
            "Insulating before installing a heat pump lets a smaller unit do, cutting the "
            "installation cost by about 15%."
        ),
        "text": (
            "A heat pump sized for an insulated house can be smaller: in 96 retrofit "
            "projects, insulating first cut the heat pump's rated output by a fifth and its "
            "installation cost by about 15 percent, and raised its efficiency because "
            "radiators could run cooler. Insulate the loft and walls, then size the pump."
        ),
    },
}
"""The offline corpus the researcher searches; replace `search_sources` with your search."""

FIGURES: dict[str, dict[str, Any]] = {
    "D1": {
        "key": "heat_demand",
        "label": "Heat demand of a typical three-bedroom house",
        "value": 12000,
        "unit": "kWh/year",
        "subjects": ("heat pump", "insulation"),
    },
    "D2": {
        "key": "gas_price",
        "label": "Household gas price",
        "value": 0.10,
        "unit": "EUR/kWh",
        "subjects": ("heat pump", "insulation"),
    },
    "D3": {
        "key": "electricity_price",
        "label": "Household electricity price",
        "value": 0.30,
        "unit": "EUR/kWh",
        "subjects": ("heat pump", "solar", "battery"),
    },
    "D4": {
        "key": "boiler_efficiency",
        "label": "Gas condensing boiler seasonal efficiency",
        "value": 0.90,
        "unit": "",
        "subjects": ("heat pump",),
    },
    "D5": {
        "key": "heat_pump_scop",
        "label": "Air-source heat pump seasonal efficiency (SCOP)",
        "value": 3.1,
        "unit": "",
        "subjects": ("heat pump",),
    },
    "D6": {
        "key": "gas_co2",
        "label": "Emissions of burning natural gas",
        "value": 0.20,
        "unit": "kg CO2/kWh",
        "subjects": ("heat pump", "insulation"),
    },
    "D7": {
        "key": "grid_co2",
        "label": "Emissions of grid electricity",
        "value": 0.25,
        "unit": "kg CO2/kWh",
        "subjects": ("heat pump", "solar"),
    },
    "D8": {
        "key": "solar_yield",
        "label": "Yield of rooftop solar in central Europe",
        "value": 950,
        "unit": "kWh per kWp per year",
        "subjects": ("solar",),
    },
    "D9": {
        "key": "feed_in_tariff",
        "label": "Feed-in tariff for exported solar power",
        "value": 0.08,
        "unit": "EUR/kWh",
        "subjects": ("solar", "battery"),
    },
}
"""The offline dataset the analyst reads; replace `lookup_figures` with your data."""

DATASET = {"publisher": "Demo Household Energy Dataset", "year": 2024}
"""Where the figures come from (made up for the template, like the corpus)."""

SUBJECTS: dict[str, tuple[str, ...]] = {
    "heat pump": ("heat pump", "heat-pump", "boiler", "heating", "radiator"),
    "solar": ("solar", "photovoltaic", "rooftop", "panel"),
    "battery": ("battery", "batteries", "home storage"),
    "insulation": ("insulat", "loft", "cavity", "draught"),
}
"""The subjects the corpus covers, and the words of a question that name each."""

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from"}
    | {"how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "our", "should", "the"}
    | {"that", "this", "to", "was", "what", "when", "which", "with", "would", "you", "your"}
)
_CITATION = re.compile(r"\[([SD]\d+)\]")
_READ_HEADER = re.compile(r"^Latest output of (\w+) \((\w+)\):$", re.MULTILINE)


def subjects_of(text: str) -> list[str]:
    """The corpus subjects a question is about, in the corpus's order.

    Args:
        text: The question (any case).

    Returns:
        The names of `SUBJECTS` whose words appear in it.

    Example:
        >>> subjects_of("Should I add a battery to my solar panels?")
        ['solar', 'battery']
    """
    lowered = text.lower()
    return [name for name, words in SUBJECTS.items() if any(w in lowered for w in words)]


def _terms(text: str) -> set[str]:
    return {w[:6] for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


def search_corpus(query: str, *, limit: int = 3) -> list[dict[str, Any]]:
    """The sources that best match a query (the offline search; no store involved).

    A source scores one point per query word (its first six letters) found in its
    title, text or subjects; ties keep the corpus order.

    Args:
        query: What to look for, e.g. "heat pump cost".
        limit: At most this many sources.

    Returns:
        The matching sources, best first, each with its `id`.

    Example:
        >>> [s["id"] for s in search_corpus("heat pump noise", limit=1)]
        ['S3']
    """
    wanted = _terms(query)
    scored: list[tuple[int, int, str]] = []
    for order, (sid, source) in enumerate(SOURCES.items()):
        words = _terms(" ".join([source["title"], source["text"], *source["subjects"]]))
        score = len(wanted & words)
        if score:
            scored.append((-score, order, sid))
    return [{"id": sid, **SOURCES[sid]} for _, _, sid in sorted(scored)[:limit]]


# --------------------------------------------------------------------------- tools and store

SOURCES_NAMESPACE = ("research_team", "sources")
"""The store namespace of the sources found, followed by the thread's id."""


def sources_namespace(thread_id: str) -> tuple[str, ...]:
    """Where a thread's sources live in the store.

    Args:
        thread_id: The run's thread id ('' without a checkpointer).

    Returns:
        `("research_team", "sources", <thread_id>)`, the id made safe as a label.

    Example:
        >>> sources_namespace("t.1")
        ('research_team', 'sources', 't%2E1')
    """
    label = thread_id.replace("%", "%25").replace(".", "%2E") or "no-thread"
    return (*SOURCES_NAMESPACE, label)


def _namespace(runtime: ToolRuntime) -> tuple[str, ...]:
    configurable = (runtime.config or {}).get("configurable") or {}
    return sources_namespace(str(configurable.get("thread_id", "")))


def _keep(runtime: ToolRuntime, records: Sequence[Mapping[str, Any]]) -> None:
    """Put each record in the store under its id (a repeated search puts the same value)."""
    if runtime.store is None:
        return
    namespace = _namespace(runtime)
    for record in records:
        runtime.store.put(namespace, str(record["id"]), dict(record))


def _public(source: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": source["id"],
        "kind": "source",
        "title": source["title"],
        "publisher": source["publisher"],
        "year": source["year"],
        "url": source["url"],
        "finding": source["finding"],
        "text": source["text"],
    }


@tool(parse_docstring=True)
def search_sources(query: str, runtime: ToolRuntime) -> str:
    """Search the research corpus; every source found is kept for citing.

    Args:
        query: What to look for, e.g. "heat pump running cost".
        runtime: Supplied by LangChain (the store and the thread), not by the model.
    """
    found = [_public(source) for source in search_corpus(query)]
    _keep(runtime, found)
    if not found:
        return json.dumps({"query": query, "sources": [], "note": "nothing matched"})
    return json.dumps({"query": query, "sources": found})


@tool(parse_docstring=True)
def lookup_figures(subject: str, runtime: ToolRuntime) -> str:
    """Look up the dataset's figures on a subject; every figure is kept for citing.

    Args:
        subject: One of "heat pump", "solar", "battery", "insulation".
        runtime: Supplied by LangChain (the store and the thread), not by the model.
    """
    wanted = subject.strip().lower()
    figures = [
        {
            "id": fid,
            "kind": "figure",
            "title": figure["label"],
            "key": figure["key"],
            "value": figure["value"],
            "unit": figure["unit"],
            **DATASET,
        }
        for fid, figure in FIGURES.items()
        if wanted in figure["subjects"]
    ]
    _keep(runtime, figures)
    if not figures:
        return json.dumps(
            {"subject": subject, "figures": [], "note": f"no figures; subjects: {list(SUBJECTS)}"}
        )
    return json.dumps({"subject": subject, "figures": figures})


@tool(parse_docstring=True)
def get_sources(ids: list[str], runtime: ToolRuntime) -> str:
    """Fetch sources and figures found earlier in this conversation, to cite them.

    Args:
        ids: Their ids as cited, e.g. ["S1", "D2"].
        runtime: Supplied by LangChain (the store and the thread), not by the model.
    """
    if runtime.store is None:
        return json.dumps(
            {"error": "no store: compile the graph with a store to keep sources", "ids": ids}
        )
    namespace = _namespace(runtime)
    found: list[dict[str, Any]] = []
    missing: list[str] = []
    for sid in ids:
        item = runtime.store.get(namespace, sid.strip().upper())
        if item is None:
            missing.append(sid)
        else:
            found.append(dict(item.value))
    return json.dumps({"sources": found, "missing": missing})


# --------------------------------------------------------------------------- offline models


def _this_hop(messages: Sequence[BaseMessage]) -> Sequence[BaseMessage]:
    """The messages since this hop's prompt (earlier hops and summaries are history)."""
    starts = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, HumanMessage) and not is_summary_message(m)
    ]
    return messages[starts[-1] :] if starts else messages


def _prompt_of(hop: Sequence[BaseMessage]) -> str:
    return "\n".join(m.text for m in hop if isinstance(m, HumanMessage))


def _task_of(prompt: str) -> str:
    for line in prompt.splitlines():
        if line.startswith("Task: "):
            return line.removeprefix("Task: ").strip()
    return prompt.strip().splitlines()[0] if prompt.strip() else ""


def _results(hop: Sequence[BaseMessage], name: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in hop:
        if isinstance(message, ToolMessage) and message.name == name:
            try:
                out.append(json.loads(message.text))
            except json.JSONDecodeError:
                continue
    return out


def _calls(name: str, args: Sequence[dict[str, Any]]) -> AIMessage:
    """One AI message asking for several independent tool calls at once."""
    return AIMessage(
        content="",
        tool_calls=[
            {"name": name, "args": dict(a), "id": f"call_{uuid.uuid4().hex[:12]}"} for a in args
        ],
    )


_ASPECTS = (
    "cost",
    "price",
    "saving",
    "payback",
    "emission",
    "carbon",
    "noise",
    "loud",
    "cold",
    "winter",
    "efficien",
    "install",
    "last",
    "lifespan",
    "degrad",
    "yield",
    "storage",
    "first",
)


def researcher_reply(messages: Sequence[BaseMessage]) -> AIMessage:
    """The offline researcher: one search per subject of the question, then the findings.

    Args:
        messages: What the researcher was shown.

    Returns:
        The searches to run (in one message: they are independent), or the findings.
    """
    hop = _this_hop(messages)
    task = _task_of(_prompt_of(hop))
    results = _results(hop, "search_sources")
    if not results:
        lowered = task.lower()
        aspects = " ".join(a for a in _ASPECTS if a in lowered)
        subjects = subjects_of(task)
        queries = [f"{s} {aspects}".strip() for s in subjects] or [task]
        return _calls("search_sources", [{"query": q} for q in queries])
    seen: dict[str, dict[str, Any]] = {}
    for result in results:
        for source in result.get("sources", []):
            seen.setdefault(source["id"], source)
    if not seen:
        return AIMessage(content=f"I found no sources on this in the corpus: {task}")
    lines = [f"Findings on: {task}"]
    lines += [f"- {s['finding']} [{sid}]" for sid, s in seen.items()]
    return AIMessage(content="\n".join(lines))


def _value(figures: Mapping[str, Mapping[str, Any]], key: str) -> tuple[float, str] | None:
    for fid, figure in figures.items():
        if figure.get("key") == key:
            return float(figure["value"]), fid
    return None


def _heating_estimate(figures: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A year of heating with a gas boiler and with a heat pump, when the figures allow."""
    keys = (
        "heat_demand",
        "boiler_efficiency",
        "gas_price",
        "gas_co2",
        "heat_pump_scop",
        "electricity_price",
        "grid_co2",
    )
    values = [_value(figures, key) for key in keys]
    if any(v is None for v in values):
        return []
    (demand, d), (eff, e), (gas, g), (gas_co2, gc), (scop, s), (power, p), (grid_co2, pc) = [
        v for v in values if v is not None
    ]
    gas_kwh = demand / eff
    pump_kwh = demand / scop
    boiler_cost, boiler_co2 = gas_kwh * gas, gas_kwh * gas_co2
    pump_cost, pump_co2 = pump_kwh * power, pump_kwh * grid_co2
    return [
        f"- Gas boiler: {gas_kwh:,.0f} kWh of gas, {boiler_cost:,.0f} EUR and "
        f"{boiler_co2:,.0f} kg CO2 a year [{d}] [{e}] [{g}] [{gc}]",
        f"- Heat pump: {pump_kwh:,.0f} kWh of electricity, {pump_cost:,.0f} EUR and "
        f"{pump_co2:,.0f} kg CO2 a year [{s}] [{p}] [{pc}]",
        f"- Difference: the heat pump saves {boiler_cost - pump_cost:,.0f} EUR and "
        f"{boiler_co2 - pump_co2:,.0f} kg CO2 a year",
    ]


def analyst_reply(messages: Sequence[BaseMessage]) -> AIMessage:
    """The offline analyst: the figures on each subject of the question, then the arithmetic.

    Args:
        messages: What the analyst was shown.

    Returns:
        The lookups to run (in one message), or the figures and estimates.
    """
    hop = _this_hop(messages)
    task = _task_of(_prompt_of(hop))
    results = _results(hop, "lookup_figures")
    if not results:
        subjects = subjects_of(task)
        if not subjects:
            return AIMessage(content=f"The dataset has no figures on this question: {task}")
        return _calls("lookup_figures", [{"subject": s} for s in subjects])
    figures: dict[str, dict[str, Any]] = {}
    for result in results:
        for figure in result.get("figures", []):
            figures.setdefault(figure["id"], figure)
    if not figures:
        return AIMessage(content=f"The dataset has no figures on this question: {task}")
    lines = [f"Figures on: {task}"]
    for fid, f in figures.items():
        unit = f" {f['unit']}" if f["unit"] else ""
        lines.append(f"- {f['title']}: {f['value']:,g}{unit} [{fid}]")
    estimate = _heating_estimate(figures)
    if estimate:
        lines += ["Estimate for one year of heating:", *estimate]
    return AIMessage(content="\n".join(lines))


def _sections(prompt: str) -> dict[str, str]:
    """The outputs the writer reads, by worker (from its prompt's "Latest output of" parts)."""
    heads = list(_READ_HEADER.finditer(prompt))
    out: dict[str, str] = {}
    for n, head in enumerate(heads):
        end = heads[n + 1].start() if n + 1 < len(heads) else len(prompt)
        out[head.group(1)] = prompt[head.end() : end].strip()
    return out


def _bullets(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]


def _reference(record: Mapping[str, Any]) -> str:
    if record.get("kind") == "figure":
        return f"[{record['id']}] {record['title']}. {record['publisher']}, {record['year']}."
    return (
        f"[{record['id']}] {record['title']}. {record['publisher']}, {record['year']}. "
        f"{record['url']}"
    )


def writer_reply(messages: Sequence[BaseMessage]) -> AIMessage:
    """The offline writer: fetch the cited sources from the store, then write the report.

    Args:
        messages: What the writer was shown (its prompt holds the researcher's and the
            analyst's latest outputs).

    Returns:
        The `get_sources` call, or the report.
    """
    hop = _this_hop(messages)
    prompt = _prompt_of(hop)
    task = _task_of(prompt)
    parts = _sections(prompt)
    findings = _bullets(parts.get("researcher", ""))
    figures = _bullets(parts.get("analyst", ""))
    cited = list(dict.fromkeys(_CITATION.findall("\n".join(findings + figures))))
    fetched = _results(hop, "get_sources")
    if cited and not fetched:
        return _calls("get_sources", [{"ids": cited}])
    if not findings and not figures:
        return AIMessage(
            content=(
                f"# {task}\n\nThe research found no sources on this question, so there is "
                "nothing to report yet. Try asking about heat pumps, solar, home batteries "
                "or insulation."
            )
        )
    records = {r["id"]: r for result in fetched for r in result.get("sources", [])}
    problem = next((str(r["error"]) for r in fetched if "error" in r), None)
    lines = [f"# {task}"]
    if findings:
        lines += ["", "## Findings", *findings]
    if figures:
        lines += ["", "## Figures", *figures]
    lines += ["", "## Sources"]
    for sid in cited:
        record = records.get(sid)
        lines.append(_reference(record) if record else f"[{sid}] (not found in the store)")
    if problem:
        lines += ["", f"Note: the source details are unavailable ({problem})."]
    return AIMessage(content="\n".join(lines))


_FACT = re.compile(r"^- (.*\[[SD]\d+\].*)$", re.MULTILINE)
_ASKED = re.compile(r"Task: (.+)")


def summarize_reply(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    r"""The offline summarizer: the questions researched and every cited finding, kept.

    Args:
        messages: The compaction prompt and the messages to compact.

    Returns:
        A `ContextSummary` as a dict (what `Compaction` takes from a summarizer Runnable).

    Example:
        >>> summary = summarize_reply([HumanMessage("Task: Is solar worth it?\n- Yes [S4]")])
        >>> summary["done"], summary["key_facts"]
        (['Researched: Is solar worth it?'], ['Yes [S4]'])
    """
    text = "\n".join(m.text for m in messages)
    asked = list(dict.fromkeys(q.strip() for q in _ASKED.findall(text)))
    facts = list(dict.fromkeys(f.strip() for f in _FACT.findall(text)))
    return {
        "task": asked[-1] if asked else "research questions",
        "done": [f"Researched: {q}" for q in asked],
        "current_state": f"{len(asked)} question(s) researched; {len(facts)} cited facts kept.",
        "remaining": ["Answer the next question."],
        "key_facts": facts,
    }


def _offline(reply: Callable[[Sequence[BaseMessage]], AIMessage], name: str) -> BaseChatModel:
    """An offline model: `reply` of the messages it is shown; it never runs out.

    Example:
        >>> model = _offline(lambda messages: AIMessage(f"{len(messages)} seen"), "m")
        >>> model.invoke("hello").content
        '1 seen'
    """
    return FunctionChatModel(name=name, reply=lambda call: reply(call.messages))


def plan(view: SupervisorView) -> str | list[dict[str, str]]:
    """The offline supervisor: researcher and analyst at once, then the writer, then FINISH.

    Args:
        view: What the supervisor sees: the task and this turn's ledger.

    Returns:
        The searches not run yet this turn, as one parallel decision (both, at first);
        "writer" once both have reported (a failed search too); then "FINISH".

    Example:
        >>> from langgraph_supervisor_pro import SupervisorView
        >>> [d["next"] for d in plan(SupervisorView(task="Heat pump or gas?", step=0,
        ...     turn=1, ledger=(), visits={}, workers=("researcher", "analyst", "writer")))]
        ['researcher', 'analyst']
    """
    done = {entry["worker"] for entry in view.ledger}
    if "writer" in done:
        return "FINISH"
    searches = [
        {"next": "researcher", "instructions": "Search the corpus for sources on the question."},
        {"next": "analyst", "instructions": "Look the figures up and do the arithmetic."},
    ]
    return [s for s in searches if s["next"] not in done] or "writer"


# --------------------------------------------------------------------------- the graph

ROLES = ("supervisor", "researcher", "analyst", "writer", "summarizer")
"""The roles whose model `LGSP_<ROLE>_MODEL` can set."""

DEFAULT_CONTEXT_TOKENS = 8192
"""The context window, in tokens, of a model whose profile does not give one."""


def model_for(role: str, environ: Mapping[str, str] = os.environ) -> BaseChatModel | None:
    """The configured model of a role, or None to run it offline.

    Args:
        role: One of `ROLES`.
        environ: Where `LGSP_<ROLE>_MODEL` and `LGSP_MODEL` are read.

    Returns:
        `init_chat_model` of `LGSP_<ROLE>_MODEL`, else of `LGSP_MODEL`, else None
        (`langgraph_supervisor_pro.workers.model_from_env`).

    Example:
        >>> model_for("writer", {}) is None
        True
    """
    return model_from_env(role, environ=environ)


def context_tokens(environ: Mapping[str, str] = os.environ) -> int:
    """The context window for models whose profile has none: `LGSP_CONTEXT_TOKENS`.

    Args:
        environ: Where `LGSP_CONTEXT_TOKENS` is read.

    Returns:
        Its value, else `DEFAULT_CONTEXT_TOKENS`.

    Raises:
        ValueError: When it is set to anything but a whole number of at least 1024.

    Example:
        >>> context_tokens({"LGSP_CONTEXT_TOKENS": "32000"})
        32000
    """
    raw = environ.get("LGSP_CONTEXT_TOKENS", "").strip()
    if not raw:
        return DEFAULT_CONTEXT_TOKENS
    if not raw.isdigit() or int(raw) < 1024:
        raise ValueError(
            f"LGSP_CONTEXT_TOKENS: got {raw!r}; give the models' context window in tokens, "
            f"a whole number >= 1024 (or unset it for {DEFAULT_CONTEXT_TOKENS})"
        )
    return int(raw)


def build_graph(environ: Mapping[str, str] = os.environ) -> StateGraph[Any, Any, Any, Any]:
    """The research team, uncompiled.

    Args:
        environ: The configuration: models (`LGSP_MODEL`, ...), the context window
            (`LGSP_CONTEXT_TOKENS`) and review policy (`LGSP_AUTONOMY`,
            `LGSP_POLICY_FILE`).

    Returns:
        The graph; compile it with a checkpointer and a store (the sources live there).

    Example:
        >>> build_graph({}).compile().name
        'LangGraph'
    """
    compaction = Compaction(
        summarizer=model_for("summarizer", environ)
        or RunnableLambda(summarize_reply, name="summarizer"),
        trigger=0.7,
        keep=6,
        max_context_tokens=context_tokens(environ),
    )
    researcher = Worker(
        name="researcher",
        description="Searches the research corpus and reports findings, each citing a source.",
        model=model_for("researcher", environ) or _offline(researcher_reply, "researcher"),
        tools=(search_sources,),
        risks={"search_sources": "low"},
        prompt=(
            "You are the researcher. Search once per independent subject of the question "
            "(several searches in one turn), then report the findings as a list, each ending "
            "with its source id in brackets, e.g. [S1]. Cite only sources the search returned."
        ),
    )
    analyst = Worker(
        name="analyst",
        description="Looks figures up in the dataset and does the arithmetic, citing each.",
        model=model_for("analyst", environ) or _offline(analyst_reply, "analyst"),
        tools=(lookup_figures,),
        risks={"lookup_figures": "low"},
        prompt=(
            "You are the analyst. Look up the figures for each subject of the question, list "
            "them with their ids in brackets, e.g. [D1], and work out the comparison asked "
            "for, showing which figures each number comes from."
        ),
    )
    writer = Worker(
        name="writer",
        description="Writes the final report from the research and the figures, with sources.",
        model=model_for("writer", environ) or _offline(writer_reply, "writer"),
        tools=(get_sources,),
        risks={"get_sources": "low"},
        reads=("researcher", "analyst"),
        prompt=(
            "You are the writer. Fetch the sources cited by the researcher and the analyst "
            "with get_sources, then write a short report in Markdown: the findings, the "
            "figures, and a Sources list with every cited id. Never cite an id you did not "
            "fetch."
        ),
    )
    supervisor = model_for("supervisor", environ)
    return create_supervisor(
        [researcher, analyst, writer],
        model=supervisor,
        router=None if supervisor is not None else plan,
        prompt=(
            "You lead a research team. Send the researcher and the analyst at the same time "
            "(their searches are independent), then the writer, then FINISH."
        ),
        parallel=True,
        compaction=compaction,
        review=ReviewPolicy.from_env(environ),
        max_steps=8,
        name="research_team",
    )


graph = build_graph()
"""The graph `langgraph.json` serves."""

"""Costs: the same workload with every model on a large tier, and with small leaf models.

Issue 32, item 5 ("the seed's claim, measured"): the design credits small models for leaf
workers with a 42% cost cut. This benchmark runs one workload twice and prices every model
call from the usage the models report:

- **all large**: the supervisor and the three leaf workers on `gpt-4.1`;
- **small leaves**: the supervisor stays on `gpt-4.1`, the leaves run on `gpt-4.1-mini`.

The workload: a supervisor over three leaf workers (`research` finds the facts with their
sources, `drafting` writes the text from research's findings, `checking` checks the draft
against them), and `TASKS` (a customer notice, an incident summary, a help-center answer,
a release note) asked one after the other on one thread, so each worker's history grows
from task to task. Every model is a `FunctionChatModel` that decides from what it is shown
(the supervisor from the ledger in its prompt, a leaf from its hop's prompt), never from
call order, and answers at a realistic length (a few hundred tokens per leaf answer); it
reports `usage_metadata` counted with `count_tokens_approximately` (the supervisor's input
also counts its bound `RouteDecision` schema, as a provider does). The replies do not
depend on the tier: both configurations give the same answers, so only the cost differs.
What a real small model would answer is not measured here.

Prices (`PRICES`) are data: OpenAI's published list prices per million tokens, with the
date they were read (`PRICES_AS_OF`); prices change. The graph's `Budget(prices=...)` makes
the runtime record each call's cost in state `usage`; the totals are the sums of the final
state's entries, and every entry is checked against a cost worked out here from its tokens.
Nothing here is timed.

    PYTHONPATH=$PWD .venv/bin/python bench/costs.py --markdown bench/RESULTS.md

`--markdown FILE` rewrites only this benchmark's part of the results page (between its
`<!-- bench/costs.py: ... -->` markers); `bench/compare.py --markdown` keeps it.

Exit code: 0 (the claim missed included), 1 if a run did not do the scripted work or its
recorded costs do not add up, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

# Run as a script (`python bench/costs.py`): make the repository root importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import AIMessage, HumanMessage, UsageMetadata
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from rich.console import Console

from bench._env import run_lines
from bench._report import Section, Target, TextTable, fmt_int, ratio, script_part, write_part
from langgraph_supervisor_pro import FINISH, Budget, Worker, create_supervisor
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall
from langgraph_supervisor_pro.types import route_decision_model
from langgraph_supervisor_pro.workers import SynthesisInput

SCRIPT = "bench/costs.py"
CLAIM = 0.42
"""The design's claim: small models for leaf workers cut the cost by 42%."""

# ------------------------------------------------------------------------------- prices

LARGE, SMALL = "gpt-4.1", "gpt-4.1-mini"
PRICES: dict[str, dict[str, float]] = {
    LARGE: {"input": 2.00, "output": 8.00, "cached_input": 0.50},
    SMALL: {"input": 0.40, "output": 1.60, "cached_input": 0.10},
}
"""USD per million tokens (input, output, cached input) of two public model tiers."""
PRICES_AS_OF = "2025-04-14"
PRICE_SOURCE = (
    "OpenAI API pricing, standard tier, as published with GPT-4.1's launch on 2025-04-14 "
    "(openai.com/api/pricing)"
)
"""Where `PRICES` come from. Prices change: update both with the date they were read."""

# ----------------------------------------------------------------------------- the tasks


@dataclass(frozen=True)
class Fact:
    """One fact a task's answer must state."""

    key: str
    """The words the answer must contain (the answer check)."""
    finding: str
    """The fact, in one sentence, as research reports it."""
    context: str
    """What research adds around it."""
    source: str


@dataclass(frozen=True)
class Task:
    """One request of the workload, with the facts its answer must contain."""

    request: str
    title: str
    """The answer's first line."""
    audience: str
    facts: tuple[Fact, ...]


TASKS: tuple[Task, ...] = (
    Task(
        "Write a customer notice about the new refund policy",
        "Our new refund policy",
        "customers",
        (
            Fact(
                "30 days",
                "Refunds are paid in full for requests made within 30 days of purchase.",
                "The window starts on the delivery date for physical goods and on the first "
                "charge for subscriptions; later requests are handled as store credit instead.",
                "Refund policy v3, section 2",
            ),
            Fact(
                "store credit",
                "Requests made between 30 and 90 days after purchase receive store credit for "
                "the full amount.",
                "Store credit never expires and can be spent on any plan or product; it cannot "
                "be turned back into cash.",
                "Refund policy v3, section 3",
            ),
            Fact(
                "original payment method",
                "Refunds go back to the original payment method only.",
                "If that card has expired, the bank forwards the refund to the replacement "
                "card; refunds cannot be sent to a different account or card.",
                "Payments FAQ, question 7",
            ),
            Fact(
                "5 business days",
                "Approved refunds reach the customer within 5 business days.",
                "Most banks show the refund after two or three days; the remaining time covers "
                "weekends and the banks' own processing.",
                "Payments runbook, refunds",
            ),
        ),
    ),
    Task(
        "Summarise last Tuesday's outage for the status page",
        "Resolved: sign-in and API outage on Tuesday",
        "status page readers",
        (
            Fact(
                "47 minutes",
                "The outage lasted 47 minutes, from 14:02 to 14:49 UTC.",
                "Sign-in and the public API failed for every request during that time; "
                "requests already in progress finished normally.",
                "Incident report INC-2291, timeline",
            ),
            Fact(
                "expired TLS certificate",
                "The root cause was an expired TLS certificate on the internal API gateway.",
                "The automated renewal job had been failing silently for two weeks after a "
                "permissions change, so the certificate expired without an alert.",
                "Incident report INC-2291, root cause",
            ),
            Fact(
                "EU region",
                "Only customers in the EU region were affected.",
                "The US and APAC regions use a different gateway whose certificate was renewed "
                "on time; no data was lost in any region.",
                "Incident report INC-2291, impact",
            ),
            Fact(
                "21 days",
                "Certificates now raise an expiry alert 21 days ahead.",
                "A failing renewal job now pages the on-call engineer, and a weekly report "
                "lists every certificate with less than 45 days left.",
                "Incident report INC-2291, follow-ups",
            ),
        ),
    ),
    Task(
        "Draft a help-center answer on exporting account data",
        "How do I export my account data?",
        "help-center readers",
        (
            Fact(
                "Settings > Privacy",
                "An export is started from Settings > Privacy > Export data.",
                "Only the account owner sees the button; team members ask the owner, who can "
                "export the whole workspace at once.",
                "Help center admin guide, exports",
            ),
            Fact(
                "ZIP archive of JSON files",
                "The export is a ZIP archive of JSON files, one file per kind of data.",
                "Notes, checklists, comments and settings each get their own file; attachments "
                "are included in a folder next to them with their original names.",
                "Export format specification 2.1",
            ),
            Fact(
                "24 hours",
                "The download link is emailed and stays valid for 24 hours.",
                "After that the archive is deleted from our servers and a new export has to be "
                "requested; the link works once per device.",
                "Privacy runbook, data exports",
            ),
            Fact(
                "once a day",
                "An account can request one export once a day.",
                "Large workspaces can take up to an hour to prepare; the email arrives when the "
                "archive is ready, and the page shows the progress meanwhile.",
                "Privacy runbook, limits",
            ),
        ),
    ),
    Task(
        "Write the release note for version 4.2 of the mobile app",
        "What's new in version 4.2",
        "app users",
        (
            Fact(
                "offline mode",
                "Version 4.2 adds an offline mode for notes and checklists.",
                "Changes made offline are kept on the device and synced when it is back "
                "online; a conflict keeps both versions side by side.",
                "Release plan 4.2, features",
            ),
            Fact(
                "40% faster",
                "Search is 40% faster on libraries of more than 10,000 notes.",
                "The index is now built on the device in the background, so the first search "
                "after an update can take a few seconds longer than the next ones.",
                "Performance report 4.2",
            ),
            Fact(
                "Android 10",
                "Android 9 is no longer supported; the minimum is now Android 10.",
                "Phones on Android 9 keep version 4.1, which goes on working but gets no new "
                "features; about 2% of active devices are affected.",
                "Release plan 4.2, platforms",
            ),
            Fact(
                "follow a schedule",
                "Dark mode can now follow a schedule: sunset to sunrise, or set hours.",
                "The setting is under Appearance; the default stays on the system's own "
                "setting, so nothing changes for anyone who does not turn it on.",
                "Release plan 4.2, features",
            ),
        ),
    ),
)
"""The workload's tasks, asked in this order on one thread (one turn each)."""

LEAVES = ("research", "drafting", "checking")
"""The leaf workers, in the order the supervisor routes to them."""

_DESCRIPTIONS = {
    "research": "Finds the facts a text needs in the source documents, each with its source.",
    "drafting": "Writes the text for its audience from research's findings.",
    "checking": "Checks a draft against research's findings before it is published.",
}
_PROMPTS = {
    "research": (
        "You are the research desk. Read the source documents for the task and report each "
        "finding in one sentence, with the context a writer needs and the document it comes "
        "from. Report only what the sources say; say so when they disagree."
    ),
    "drafting": (
        "You are the writing desk. Write the text the task asks for, for its audience, from "
        "the research findings you are given: one paragraph per finding, plain words, every "
        "figure exactly as research states it. Add nothing the findings do not say."
    ),
    "checking": (
        "You are the checking desk. Check the draft against the research findings: every "
        "finding stated, every figure unchanged, nothing added. List each finding with what "
        "you found, then give a verdict: ready to publish, or what to fix."
    ),
}
_INSTRUCTIONS = {
    "research": "Collect the facts {audience} need for this from the source documents: each "
    "finding in one sentence, with its context and its source.",
    "drafting": "Write the text for {audience} from research's findings: one paragraph per "
    "finding, plain words, every figure exactly as research states it.",
    "checking": "Check the draft against research's findings: each one stated, the figures "
    "unchanged, nothing added that the sources do not say.",
}
_DECISION = route_decision_model(LEAVES)
_SCHEMA_TOKENS = math.ceil(len(json.dumps(convert_to_openai_tool(_DECISION))) / 4)
"""The bound `RouteDecision` tool schema in tokens (chars / 4, like the messages): a
provider counts it in each supervisor call's input."""


class CostWorkloadError(RuntimeError):
    """A run did not do the scripted work, or its recorded costs do not add up."""


def _task_of(text: str) -> Task:
    """The task a prompt is about, from its `Task: ...` line."""
    for task in TASKS:
        if f"Task: {task.request}" in text:
            return task
    raise CostWorkloadError(f"no task of the workload in the prompt: {text[:120]!r}")


# ----------------------------------------------------------------------- the offline models


def _hop_prompt(call: ScriptedCall) -> str:
    """The text of the hop's prompt: the last human message (earlier ones are history)."""
    asked = [m for m in call.messages if isinstance(m, HumanMessage)]
    if not asked:
        raise CostWorkloadError("a model was called without a prompt")
    return asked[-1].text


def supervisor_reply(call: ScriptedCall) -> AIMessage:
    """The supervisor: the next leaf not yet done this turn (from its ledger), then FINISH."""
    shown = _hop_prompt(call)
    task = _task_of(shown)
    ledger = shown.split("Ledger:", 1)[-1]
    lines = re.findall(r"^#\d+ (\w+) \[(\w+)", ledger, re.M)
    succeeded = {name for name, status in lines if status == "success"}
    pending = [name for name in LEAVES if name not in succeeded]
    if pending:
        args = {
            "next": pending[0],
            "instructions": _INSTRUCTIONS[pending[0]].format(audience=task.audience),
        }
    else:
        args = {"next": FINISH, "instructions": "Checked and ready to publish."}
    reply = AIMessage(
        content="",
        tool_calls=[{"name": _DECISION.__name__, "args": args, "id": f"route_{len(lines)}"}],
    )
    inputs = count_tokens_approximately(call.messages) + _SCHEMA_TOKENS
    outputs = count_tokens_approximately([reply])
    reply.usage_metadata = UsageMetadata(
        input_tokens=inputs, output_tokens=outputs, total_tokens=inputs + outputs
    )
    return reply


_FINDING = re.compile(
    r"^Finding (\d+): (?P<finding>.+)\nContext: (?P<context>.+)\nSource: (?P<source>.+)$", re.M
)


def _findings(text: str) -> list[re.Match[str]]:
    """The findings of research's notes within `text`."""
    notes = text.split("Latest output of research", 1)
    return list(_FINDING.finditer(notes[1])) if len(notes) == 2 else []


def research_reply(call: ScriptedCall) -> str:
    """Research: the task's findings with their context and sources."""
    task = _task_of(_hop_prompt(call))
    sources = sorted({fact.source for fact in task.facts})
    lines = [
        f"Research notes: {task.request}",
        "",
        f"I read {len(sources)} source documents ({'; '.join(sources)}). What {task.audience} "
        "need to know, one finding each, with the context a writer needs:",
    ]
    for number, fact in enumerate(task.facts, start=1):
        lines += ["", f"Finding {number}: {fact.finding}"]
        lines += [f"Context: {fact.context}", f"Source: {fact.source}"]
    lines += [
        "",
        "Open points: none. The sources agree with each other, the figures above are the "
        "current ones as the documents state them, and each finding names the document it "
        "comes from, so the draft can be checked against it line by line.",
    ]
    return "\n".join(lines)


def drafting_reply(call: ScriptedCall) -> str:
    """Drafting: one paragraph per finding research reported (none shown: it says so)."""
    shown = _hop_prompt(call)
    task = _task_of(shown)
    findings = _findings(shown)
    if not findings:
        return f"I cannot write this for {task.audience} yet: research has reported no findings."
    paragraphs = [
        task.title,
        f"We want {task.audience} to have the full picture, so this sets out what we know and "
        "what it means for you, in plain words, with nothing left for you to chase.",
        *(f"{match['finding']} {match['context']}" for match in findings),
        "If anything here is unclear, reply to this message or write to support@example.com: "
        "a person reads every message and answers within one business day.",
    ]
    return "\n\n".join(paragraphs)


def checking_reply(call: ScriptedCall) -> str:
    """Checking: each finding of research's notes looked for in drafting's text."""
    shown = _hop_prompt(call)
    findings = _findings(shown.split("Latest output of drafting", 1)[0])
    draft = shown.split("Latest output of drafting", 1)[-1]
    lines = [f"Check of the draft against the research notes ({len(findings)} findings)."]
    missing = []
    for match in findings:
        stated = match["finding"] in draft
        if not stated:
            missing.append(match[1])
        lines.append(
            f"- Finding {match[1]} ({match['source']}): "
            + (
                "stated word for word, with its context; the figures match the source."
                if stated
                else "missing from the draft."
            )
        )
    lines.append(
        "Tone: plain and direct, no promise the sources do not make; the closing tells "
        "readers where to ask."
    )
    verdict = (
        "ready to publish."
        if findings and not missing
        else f"revise: state finding(s) {', '.join(missing) or 'from research'}."
    )
    lines.append(f"Verdict: {verdict}")
    return "\n".join(lines)


_LEAF_REPLIES = {"research": research_reply, "drafting": drafting_reply, "checking": checking_reply}


# ------------------------------------------------------------------------------- the runs

CONFIGURATIONS: dict[str, tuple[str, str]] = {
    "all large": (LARGE, LARGE),
    "small leaves": (LARGE, SMALL),
}
"""Each configuration's (supervisor model, leaf model)."""


def synthesize(inputs: SynthesisInput) -> str:
    """The turn's answer: drafting's latest text (the checked draft)."""
    drafts = [hop for hop in inputs.successes() if hop.worker == "drafting"]
    if not drafts:
        return "No draft was written."
    return str(drafts[-1].result.result_text())


@dataclass(frozen=True)
class Answer:
    """One task's outcome in one configuration."""

    request: str
    text: str
    status: str
    hops: int
    facts_found: int
    facts_expected: int

    @property
    def passed(self) -> bool:
        """Every expected fact in the answer, the run done, one hop per leaf."""
        return (
            self.status == "done"
            and self.facts_found == self.facts_expected
            and self.hops == len(LEAVES)
        )


@dataclass(frozen=True)
class Run:
    """One configuration's run: its answers, the final state's usage, the models' calls."""

    name: str
    supervisor_model: str
    leaf_model: str
    answers: tuple[Answer, ...]
    usage: tuple[Mapping[str, Any], ...]
    calls: Mapping[str, int]
    """Calls each model object received, by role (supervisor, or the leaf's name)."""


def _model(name: str, reply: Any) -> FunctionChatModel:
    return FunctionChatModel(name=name, reply=reply, report_usage=True, record=True)


def build(supervisor_model: str, leaf_model: str) -> tuple[Any, dict[str, FunctionChatModel]]:
    """The workload's graph (compiled, in memory) and its models by role."""
    models = {"supervisor": _model(supervisor_model, supervisor_reply)}
    models.update({leaf: _model(leaf_model, _LEAF_REPLIES[leaf]) for leaf in LEAVES})
    reads = {"research": (), "drafting": ("research",), "checking": ("research", "drafting")}
    workers = [
        Worker(
            name=leaf,
            description=_DESCRIPTIONS[leaf],
            model=models[leaf],
            prompt=_PROMPTS[leaf],
            reads=reads[leaf],
        )
        for leaf in LEAVES
    ]
    used = {supervisor_model, leaf_model}
    budget = Budget(prices={name: PRICES[name] for name in sorted(used)})
    graph = create_supervisor(
        workers,
        model=models["supervisor"],
        synthesizer=synthesize,
        budget=budget,
        max_steps=len(LEAVES) + 2,
        name="desk",
    )
    return graph.compile(checkpointer=InMemorySaver()), models


def run(name: str, tasks: Sequence[Task]) -> Run:
    """Ask `tasks` one after the other on one thread; check every answer and every call."""
    supervisor_model, leaf_model = CONFIGURATIONS[name]
    app, models = build(supervisor_model, leaf_model)
    config: dict[str, Any] = {"configurable": {"thread_id": f"costs-{uuid.uuid4().hex[:8]}"}}
    answers = []
    out: dict[str, Any] = {}
    for turn, task in enumerate(tasks, start=1):
        out = app.invoke({"messages": [HumanMessage(task.request)]}, config)
        text = out["messages"][-1].text
        answers.append(
            Answer(
                request=task.request,
                text=text,
                status=str(out.get("status")),
                hops=sum(1 for e in out.get("ledger") or () if e["turn"] == turn),
                facts_found=sum(1 for fact in task.facts if fact.key in text),
                facts_expected=len(task.facts),
            )
        )
    usage = tuple(out.get("usage") or ())
    calls = {role: len(model.calls) for role, model in models.items()}
    result = Run(name, supervisor_model, leaf_model, tuple(answers), usage, calls)
    verify(result)
    return result


def worker_of(entry: Mapping[str, Any]) -> str:
    """Who spent a usage entry: its worker, else its role (the supervisor)."""
    return str(entry.get("worker") or entry.get("role"))


def expected_cost(entry: Mapping[str, Any]) -> float:
    """An entry's cost worked out here from its reported tokens and `PRICES`."""
    price = PRICES[str(entry["model"])]
    return (
        int(entry["input_tokens"]) * price["input"] + int(entry["output_tokens"]) * price["output"]
    ) / 1_000_000


def verify(result: Run) -> None:
    """Each answer passed; each model call recorded once, priced, at the right price."""
    failed = [a.request for a in result.answers if not a.passed]
    if failed:
        raise CostWorkloadError(f"{result.name}: answers that did not pass: {failed}")
    recorded: dict[str, int] = {}
    for entry in result.usage:
        who = worker_of(entry)
        recorded[who] = recorded.get(who, 0) + 1
        want = result.supervisor_model if who == "supervisor" else result.leaf_model
        if entry.get("model") != want or entry.get("estimated"):
            raise CostWorkloadError(
                f"{result.name}: a call of {who} was recorded as model {entry.get('model')!r} "
                f"(estimated: {entry.get('estimated')}), expected {want!r} with reported usage"
            )
        cost = entry.get("cost")
        if cost is None or not math.isclose(cost, expected_cost(entry), abs_tol=1e-9):
            raise CostWorkloadError(
                f"{result.name}: a call of {who} was recorded at cost {cost!r}; its tokens at "
                f"{PRICES_AS_OF} prices cost {expected_cost(entry):.10f}"
            )
    if recorded != dict(result.calls):
        raise CostWorkloadError(
            f"{result.name}: calls recorded in usage {recorded} != calls the models "
            f"received {dict(result.calls)}"
        )


# ------------------------------------------------------------------------------ the figures


@dataclass(frozen=True)
class Totals:
    """Calls, tokens and cost of a set of usage entries."""

    calls: int
    input_tokens: int
    output_tokens: int
    cost: float


def totals(entries: Sequence[Mapping[str, Any]]) -> Totals:
    """The entries' calls, reported tokens and recorded cost (the sum of their `cost`)."""
    return Totals(
        calls=len(entries),
        input_tokens=sum(int(e.get("input_tokens", 0)) for e in entries),
        output_tokens=sum(int(e.get("output_tokens", 0)) for e in entries),
        cost=round(sum(float(e["cost"]) for e in entries), 10),
    )


def of_worker(result: Run, worker: str) -> Totals:
    """One worker's (or the supervisor's) totals in a run."""
    return totals([e for e in result.usage if worker_of(e) == worker])


def leaves_of(result: Run) -> Totals:
    """The leaf workers' totals in a run."""
    return totals([e for e in result.usage if worker_of(e) in LEAVES])


def cut(large: Run, small: Run) -> float:
    """The cost cut of small leaves against all large, as a fraction."""
    return 1 - totals(small.usage).cost / totals(large.usage).cost


def usd(value: float) -> str:
    """A cost in USD, to the hundredth of a cent."""
    return f"${value:.4f}"


def pct(value: float | None) -> str:
    """A fraction as a percentage ('-' when missing)."""
    return "-" if value is None else f"{value:.1%}"


def workload_table(large: Run, small: Run) -> TextTable:
    """Cost per workload: each configuration's calls, tokens, cost and the leaves' share."""
    base = totals(large.usage).cost
    rows = []
    for result in (large, small):
        whole, leaves = totals(result.usage), leaves_of(result)
        rows.append(
            (
                result.name,
                result.supervisor_model,
                result.leaf_model,
                fmt_int(whole.calls),
                fmt_int(whole.input_tokens),
                fmt_int(whole.output_tokens),
                usd(whole.cost),
                pct(ratio(leaves.input_tokens + leaves.output_tokens, _tokens(whole))),
                pct(ratio(leaves.cost, whole.cost)),
                pct(1 - whole.cost / base),
            )
        )
    return TextTable(
        "Cost per workload",
        (
            "configuration",
            "supervisor",
            "leaves",
            "calls",
            "input tokens",
            "output tokens",
            "cost",
            "leaves' tokens",
            "leaves' cost",
            "cut vs all large",
        ),
        tuple(rows),
    )


def _tokens(value: Totals) -> int:
    return value.input_tokens + value.output_tokens


def worker_table(large: Run, small: Run) -> TextTable:
    """Cost per worker: its calls, tokens and cost in each configuration."""
    rows = []
    for worker in ("supervisor", *LEAVES):
        a, b = of_worker(large, worker), of_worker(small, worker)
        model = large.supervisor_model if worker == "supervisor" else large.leaf_model
        small_model = small.supervisor_model if worker == "supervisor" else small.leaf_model
        rows.append(
            (
                worker,
                fmt_int(a.calls),
                fmt_int(a.input_tokens),
                fmt_int(a.output_tokens),
                f"{model}: {usd(a.cost)}",
                f"{small_model}: {usd(b.cost)}",
                pct(1 - b.cost / a.cost if a.cost else None),
            )
        )
    a, b = totals(large.usage), totals(small.usage)
    rows.append(
        (
            "total",
            fmt_int(a.calls),
            fmt_int(a.input_tokens),
            fmt_int(a.output_tokens),
            usd(a.cost),
            usd(b.cost),
            pct(1 - b.cost / a.cost),
        )
    )
    return TextTable(
        "Cost per worker",
        (
            "worker",
            "calls",
            "input tokens",
            "output tokens",
            "all large",
            "small leaves",
            "cut",
        ),
        tuple(rows),
    )


def task_table(large: Run, small: Run) -> TextTable:
    """Cost per task (turn): the leaves' histories grow, and with them their share."""
    rows = []
    for turn, answer in enumerate(large.answers, start=1):
        a = totals([e for e in large.usage if e.get("turn") == turn])
        b = totals([e for e in small.usage if e.get("turn") == turn])
        leaves = totals(
            [e for e in large.usage if e.get("turn") == turn and worker_of(e) in LEAVES]
        )
        rows.append(
            (
                f"{turn}. {answer.request}",
                fmt_int(a.input_tokens),
                fmt_int(a.output_tokens),
                usd(a.cost),
                usd(b.cost),
                pct(ratio(leaves.cost, a.cost)),
                pct(1 - b.cost / a.cost),
            )
        )
    return TextTable(
        "Cost per task",
        (
            "task (turn)",
            "input tokens",
            "output tokens",
            "all large",
            "small leaves",
            "leaves' cost, all large",
            "cut",
        ),
        tuple(rows),
    )


def model_table(large: Run, small: Run) -> TextTable:
    """Cost per model: each configuration's calls, tokens and cost by model."""
    rows = []
    for result in (large, small):
        for model in sorted({str(e["model"]) for e in result.usage}):
            part = totals([e for e in result.usage if e["model"] == model])
            price = PRICES[model]
            rows.append(
                (
                    result.name,
                    model,
                    f"{price['input']:.2f} / {price['output']:.2f}",
                    fmt_int(part.calls),
                    fmt_int(part.input_tokens),
                    fmt_int(part.output_tokens),
                    usd(part.cost),
                )
            )
    return TextTable(
        "Cost per model",
        (
            "configuration",
            "model",
            "USD per M in / out",
            "calls",
            "input tokens",
            "output tokens",
            "cost",
        ),
        tuple(rows),
    )


def answer_table(large: Run, small: Run) -> TextTable:
    """Answer checks side by side: facts found, status and hops per task, same answer."""

    def shown(answer: Answer) -> str:
        return (
            f"{answer.facts_found}/{answer.facts_expected} facts, {answer.status}, "
            f"{answer.hops} hops"
        )

    rows = tuple(
        (a.request, shown(a), shown(b), "yes" if a.text == b.text else "**no**")
        for a, b in zip(large.answers, small.answers, strict=True)
    )
    return TextTable(
        "Answer checks",
        ("task", "all large", "small leaves", "same answer"),
        rows,
    )


def verdict(large: Run, small: Run) -> str:
    """Whether the claim holds here, and why."""
    share = ratio(leaves_of(large).cost, totals(large.usage).cost) or 0.0
    off = 1 - PRICES[SMALL]["input"] / PRICES[LARGE]["input"]
    measured = cut(large, small)
    needed = CLAIM / off
    held = "holds" if measured >= CLAIM else "does not hold"
    return (
        f"The claim {held} here: small leaf models cut this workload's cost by "
        f"{measured:.1%} (claim: {CLAIM:.0%}). The cut is the leaves' share of the all-large "
        f"cost ({share:.1%}) times what the small tier takes off each token ({off:.0%}: "
        f"{SMALL} costs {1 - off:.0%} of {LARGE}, input and output alike), so a 42% cut needs "
        f"the leaves to spend at least {needed:.1%} of the cost. A workload whose supervisor "
        "spends more (more workers in its catalogue, more decisions per leaf hop, a "
        "model-written synthesis) saves less; one with longer leaf work saves more."
    )


def sections(large: Run, small: Run) -> list[Section]:
    """The costs part of the results page."""
    tasks = len(large.answers)
    method = (
        f"one supervisor over three leaf workers ({', '.join(LEAVES)}); {tasks} tasks asked "
        "one after the other on one thread (each leaf's history grows from task to task; one "
        "hop per leaf per task, then FINISH; the answer is drafting's text). Every model is a "
        "FunctionChatModel deciding from what it is shown, answering at a realistic length and "
        "reporting usage_metadata (count_tokens_approximately of its input and reply; the "
        f"supervisor's input also counts its bound RouteDecision schema, {_SCHEMA_TOKENS} "
        "tokens). Both configurations answer the same: only the model names differ. Costs are "
        "the runtime's: create_supervisor(budget=Budget(prices=...)) records each call's cost "
        "in state `usage`; the totals are sums of the final state's entries, and each entry "
        "was checked against its tokens at the prices below and against the calls the models "
        f"received. Prices (USD per million tokens, input / output / cached input): {LARGE} "
        f"{_price(LARGE)}, {SMALL} {_price(SMALL)}; {PRICE_SOURCE}. Prices change; no cached "
        "input is reported here. Nothing is timed."
    )
    claim = Target(
        f"small leaf models cut the cost by >= {CLAIM:.0%} (the design's claim): "
        f"small leaves / all large <= {1 - CLAIM:.2f}",
        ratio(totals(small.usage).cost, totals(large.usage).cost),
        round(1 - CLAIM, 2),
        f"{usd(totals(small.usage).cost)} / {usd(totals(large.usage).cost)}",
    )
    workload = workload_table(large, small)
    return [
        Section("Costs: per workload", workload, method + " " + verdict(large, small), (claim,)),
        Section("Costs: per worker", worker_table(large, small), "as above, by worker."),
        Section("Costs: per model", model_table(large, small), "as above, by model."),
        Section(
            "Costs: per task",
            task_table(large, small),
            "as above, by task (turn of the thread). Each leaf's history grows from task to "
            "task while the supervisor's prompt stays about the same size (it sees the "
            "ledger, not the leaves' work), so the leaves' share, and the cut, grow too.",
        ),
        Section(
            "Costs: answer checks",
            answer_table(large, small),
            "each task's answer (the turn's last message) contains every expected fact, the "
            "run ended `done`, and the turn took one hop per leaf; 'same answer': the two "
            "configurations' answers are equal.",
        ),
    ]


def _price(model: str) -> str:
    price = PRICES[model]
    return f"{price['input']:.2f} / {price['output']:.2f} / {price['cached_input']:.2f}"


# --------------------------------------------------------------------------------- main


def measure(tasks: int = len(TASKS)) -> tuple[Run, Run]:
    """Both configurations over the first `tasks` tasks, verified."""
    chosen = TASKS[:tasks]
    large, small = (run(name, chosen) for name in CONFIGURATIONS)
    if [a.text for a in large.answers] != [a.text for a in small.answers]:
        raise CostWorkloadError("the two configurations gave different answers")
    return large, small


def page_part(large: Run, small: Run, markdown: Path | None) -> str:
    """This benchmark's part of the results page."""
    header = [
        *run_lines(SCRIPT, markdown),
        f"packages: langgraph {version('langgraph')}, langchain-core {version('langchain-core')}",
        f"prices: {PRICE_SOURCE}; prices change",
    ]
    return script_part(
        "Costs: large vs small leaf models (bench/costs.py)",
        SCRIPT,
        header,
        sections(large, small),
        subsections=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run both configurations, print the tables, the verdict and the cut."""
    parser = argparse.ArgumentParser(
        prog=SCRIPT, description="The same workload on large and on small leaf models: cost."
    )
    parser.add_argument(
        "--tasks", type=int, default=len(TASKS), help=f"tasks to run, 1 to {len(TASKS)}"
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        metavar="FILE",
        help="write this benchmark's part of the results page FILE (the rest is kept)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.tasks <= len(TASKS):
        parser.error(f"--tasks takes an integer from 1 to {len(TASKS)}")
    console = Console(width=None if sys.stdout.isatty() else 160)
    try:
        large, small = measure(args.tasks)
    except CostWorkloadError as exc:
        console.print(f"[red]Aborted: {exc}[/]")
        return 1
    parts = sections(large, small)
    for section in parts:
        console.print(section.table.to_rich())
        console.print()
    for target in parts[0].targets:
        console.print(f"{target.verdict}: {target.statement}: {target.measured:.3f}")
    console.print(verdict(large, small))
    if args.markdown is not None:
        write_part(args.markdown, SCRIPT, page_part(large, small, args.markdown))
        console.print(f"Costs section written to {args.markdown}")
    print(f"cost cut: {cut(large, small):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

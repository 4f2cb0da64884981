"""The operations tree: a root supervisor over three domain supervisors, each with workers.

```
ops_tree (root)
├── incident          triage (`service_health`), oncall (`page_oncall`)
├── infrastructure    deployer (`release_history`, `rollback`: high risk, reviewed)
└── communications    status_page (`post_status_update`)
```

Each domain is an uncompiled `create_supervisor` graph used as a worker: it runs as a
stateful subgraph, checkpointed in the root's thread under its own namespace
(`infrastructure`, ...), and reports to the root as one hop. A rollback pauses for a human
inside the `infrastructure` domain, two levels down; the review surfaces from the root
with LangChain's human-in-the-loop payload and `context["path"] ==
["infrastructure", "deployer"]`.

The autonomy tier comes from configuration: `LGSP_AUTONOMY` / `LGSP_POLICY_FILE` for the
deployment (`ReviewPolicy.from_env`). Every level gets that policy, so it is each domain's
floor: a run's `configurable.autonomy` may make a run stricter (`manual`), never looser (a
looser tier is refused when the run starts).

Models: with `LGSP_MODEL` set (`provider:model`, e.g. `openai:gpt-4.1-mini`) every role
uses it through `init_chat_model`; `LGSP_<ROLE>_MODEL` overrides it for one role (`ROLES`:
the root `SUPERVISOR`, the domain supervisors `INCIDENT`, `INFRASTRUCTURE`,
`COMMUNICATIONS`, the workers `TRIAGE`, `ONCALL`, `DEPLOYER`, `STATUS_PAGE`). Without it
the tree runs offline: the supervisors are keyword routers and the workers' chat models
are scripted; each decides only from what it is shown, so one server serves any number of
runs.

`graph` is uncompiled: `langgraph dev` (or your code) supplies the checkpointer and store.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import StateGraph
from langgraph_supervisor_pro import (
    ReviewPolicy,
    SupervisorView,
    Worker,
    WorkerResult,
    create_supervisor,
)
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall
from langgraph_supervisor_pro.workers import SynthesisInput, model_from_env

# --------------------------------------------------------------------------- the systems

SERVICES: dict[str, dict[str, Any]] = {
    "checkout": {"team": "payments", "error_rate": 0.31, "p95_ms": 2400},
    "payments": {"team": "payments", "error_rate": 0.27, "p95_ms": 1800},
    "search": {"team": "discovery", "error_rate": 0.004, "p95_ms": 180},
}
"""The demo's service health; replace `service_health` with your monitoring."""

ONCALL: dict[str, str] = {"payments": "Priya Raman", "discovery": "Tom Okafor"}
"""Who is on call for each team; replace `page_oncall` with your paging system."""

RELEASES: dict[str, list[dict[str, str]]] = {
    "payments": [
        {"version": "v2.3.0", "deployed_at": "yesterday 16:40 UTC"},
        {"version": "v2.3.1", "deployed_at": "today 14:02 UTC"},
    ],
    "checkout": [
        {"version": "v5.12.0", "deployed_at": "3 days ago 10:15 UTC"},
        {"version": "v5.12.1", "deployed_at": "yesterday 09:30 UTC"},
    ],
    "search": [{"version": "v1.8.4", "deployed_at": "last week"}],
}
"""Each service's releases, oldest first; replace `release_history` and `rollback`."""

StatusLevel = Literal["investigating", "identified", "monitoring", "resolved"]


@tool
def service_health(service: str) -> str:
    """Look a service's health up: its error rate, p95 latency and owning team.

    Args:
        service: The service name, e.g. "checkout".
    """
    found = SERVICES.get(service.strip().lower())
    if found is None:
        return json.dumps({"service": service, "error": "no such service"})
    return json.dumps({"service": service.strip().lower(), **found})


@tool
def page_oncall(team: str, severity: str, summary: str) -> str:
    """Page a team's on-call engineer.

    Args:
        team: The owning team, e.g. "payments".
        severity: SEV1 (most severe) to SEV3.
        summary: What is wrong, in one line.
    """
    person = ONCALL.get(team.strip().lower())
    if person is None:
        return f"error: no on-call rota for team {team!r}"
    return f"paged {person} ({team.strip().lower()} on-call) at {severity}: {summary}"


@tool
def release_history(service: str) -> str:
    """A service's releases, oldest first, with when each was deployed.

    Args:
        service: The service name, e.g. "payments".
    """
    releases = RELEASES.get(service.strip().lower())
    if releases is None:
        return json.dumps({"service": service, "error": "no such service"})
    return json.dumps({"service": service.strip().lower(), "releases": releases})


@tool
def rollback(service: str, to_version: str) -> str:
    """Roll a service back to an earlier release (high risk: a human reviews it).

    Args:
        service: The service name, e.g. "payments".
        to_version: The release to go back to, e.g. "v2.3.0".
    """
    return f"rolled back {service.strip().lower()} to {to_version.strip()}"


@tool
def post_status_update(status: StatusLevel, message: str) -> str:
    """Post an update to the public status page.

    Args:
        status: investigating, identified, monitoring or resolved.
        message: What customers read.
    """
    return f"posted to the status page ({status}): {message}"


# --------------------------------------------------------------------------- offline routers

_PAGE = re.compile(r"(?<!status )\bpag(?:e|ing)\b|\bon-?call\b", re.I)
"""Asks to page someone ("page on-call", "paging"; not "the status page")."""
_ROLLBACK = re.compile(r"\broll(?:ing)?\s+(?:\w+\s+){0,3}?back\b|\brollback\b|\brevert", re.I)
"""Asks for a rollback: "roll back", "roll the deploy back", "rollback", "revert"."""
_NEEDS: dict[str, re.Pattern[str]] = {
    "incident": re.compile(
        _PAGE.pattern + r"|\bincident|\boutage|\b5\d\d\b|\berror|\bdown\b|\bfail", re.I
    ),
    "infrastructure": re.compile(_ROLLBACK.pattern + r"|\bdeploy|\brelease", re.I),
    "communications": re.compile(r"\bstatus\b|\bcustomers?\b|\bannounce|\bnotify", re.I),
}
"""What makes the root send a request to each domain."""


def dispatch(view: SupervisorView) -> str | dict[str, str]:
    """The offline root supervisor: each domain the request needs, once, in order.

    Incident first, then infrastructure, then communications, each when the request
    asks for it (by keyword; with none, incident triages it). Communications is told
    what the earlier domains reported, so the status update says what was done.

    Args:
        view: What the root sees: the task and this turn's ledger.

    Returns:
        The next domain with its instructions, or "FINISH".

    Example:
        >>> from langgraph_supervisor_pro import SupervisorView
        >>> dispatch(SupervisorView(task="Checkout is down, page on-call", step=0, turn=1,
        ...                         ledger=(), visits={}, workers=("incident",)))["next"]
        'incident'
    """
    text = view.task
    wanted = [domain for domain, needs in _NEEDS.items() if needs.search(text)]
    for domain in wanted or ["incident"]:
        if view.visits.get(domain, 0):
            continue
        if domain == "incident":
            paging = _PAGE.search(text) is not None
            instructions = "Assess the impact" + (" and page the on-call." if paging else ".")
        elif domain == "infrastructure":
            rolling = _ROLLBACK.search(text) is not None
            instructions = "Find the release behind it" + (" and roll it back." if rolling else ".")
        else:
            known = "; ".join(f"{e['worker']}: {e['summary']}" for e in view.ledger)
            instructions = "Post a status update." + (f" Known so far: {known}" if known else "")
        return {"next": domain, "instructions": instructions}
    return "FINISH"


def incident_router(view: SupervisorView) -> str:
    """The offline incident supervisor: triage, then page the on-call if asked, then FINISH.

    Args:
        view: What the incident domain sees.

    Returns:
        "triage", "oncall" or "FINISH".

    Example:
        >>> from langgraph_supervisor_pro import SupervisorView
        >>> incident_router(SupervisorView(task="page on-call", step=1, turn=1, ledger=(),
        ...                                visits={"triage": 1}, workers=("triage", "oncall")))
        'oncall'
    """
    if not view.visits.get("triage", 0):
        return "triage"
    paging = _PAGE.search(view.task) is not None
    if paging and not view.visits.get("oncall", 0):
        return "oncall"
    return "FINISH"


def once(worker: str) -> Callable[[SupervisorView], str]:
    """An offline domain supervisor with one worker: that worker once, then FINISH.

    Args:
        worker: The worker's name.

    Returns:
        The router.

    Example:
        >>> from langgraph_supervisor_pro import SupervisorView
        >>> once("deployer")(SupervisorView(task="t", step=0, turn=1, ledger=(), visits={},
        ...                                 workers=("deployer",)))
        'deployer'
    """

    def router(view: SupervisorView) -> str:
        return "FINISH" if view.visits.get(worker, 0) else worker

    return router


# --------------------------------------------------------------------------- offline models


def _this_hop(messages: Sequence[BaseMessage]) -> Sequence[BaseMessage]:
    """The messages since the last human message (this hop's; earlier ones are history)."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    return messages[starts[-1] :] if starts else messages


def _asked(hop: Sequence[BaseMessage]) -> str:
    """The hop's task text: the task, the instructions and any outputs it reads."""
    return " ".join(m.text for m in hop if isinstance(m, HumanMessage))


def _first_named(text: str, names: Sequence[str]) -> str | None:
    """The name in `names` that `text` mentions first, if any."""
    lower = text.lower()
    hits = [(lower.find(name), name) for name in names if name in lower]
    return min(hits)[1] if hits else None


def _call(name: str, args: dict[str, Any], index: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"{name}_{index}"}])


def _refused(result: ToolMessage) -> bool:
    """A tool result that says the call did not run (rejected in review, or an error)."""
    return result.status == "error" or result.text.startswith("error")


def _severity(error_rate: float) -> str:
    if error_rate >= 0.1:
        return "SEV1"
    return "SEV2" if error_rate >= 0.01 else "SEV3"


def triage_reply(call: ScriptedCall) -> AIMessage:
    """The offline triage model: look the affected service's health up, grade it.

    Args:
        call: The model call: the messages the triage agent was shown.

    Returns:
        The next tool call, or the assessment.
    """
    hop = _this_hop(call.messages)
    results = [m for m in hop if isinstance(m, ToolMessage)]
    if not results:
        service = _first_named(_asked(hop), list(SERVICES))
        if service is None:
            return AIMessage(content="Which service is affected? I know " + ", ".join(SERVICES))
        return _call("service_health", {"service": service}, call.index)
    health = json.loads(results[-1].text)
    if "error" in health:
        return AIMessage(content=f"I could not find the service {health['service']}.")
    return AIMessage(
        content=(
            f"{_severity(health['error_rate'])} on {health['service']}: "
            f"{health['error_rate']:.0%} of requests fail, p95 latency {health['p95_ms']} ms. "
            f"The {health['team']} team owns it."
        )
    )


def oncall_reply(call: ScriptedCall) -> AIMessage:
    """The offline on-call model: page the owning team at the severity triage gave.

    Args:
        call: The model call: its task, instructions and triage's output (`reads`).

    Returns:
        The page, or the answer once it is sent.
    """
    hop = _this_hop(call.messages)
    asked = _asked(hop)
    results = [m for m in hop if isinstance(m, ToolMessage)]
    if not results:
        service = _first_named(asked, list(SERVICES))
        if service is None:
            return AIMessage(content="Which service should I page for?")
        severity = re.search(r"\bSEV[1-3]\b", asked)
        return _call(
            "page_oncall",
            {
                "team": SERVICES[service]["team"],
                "severity": severity.group() if severity else "SEV2",
                "summary": f"{service} is failing requests",
            },
            call.index,
        )
    last = results[-1]
    if _refused(last):
        return AIMessage(content=f"I could not page anyone: {last.text}")
    return AIMessage(content=f"Paged {last.text.removeprefix('paged ')}.")


def deployer_reply(call: ScriptedCall) -> AIMessage:
    """The offline deployer model: find the release behind an incident, roll it back if asked.

    Args:
        call: The model call: the messages the deployer was shown.

    Returns:
        The next tool call (`release_history`, then `rollback`), or the answer.
    """
    hop = _this_hop(call.messages)
    asked = _asked(hop)
    results = [m for m in hop if isinstance(m, ToolMessage)]
    if not results:
        named = re.search(r"deploy(?:ment)?\s+of\s+([a-z][\w-]*)", asked.lower())
        service = (
            named.group(1)
            if named and named.group(1) in RELEASES
            else _first_named(asked, list(RELEASES))
        )
        if service is None:
            return AIMessage(content="Which service's release is it about?")
        return _call("release_history", {"service": service}, call.index)
    history = json.loads(results[0].text)
    if "error" in history:
        return AIMessage(content=f"I could not find the service {history['service']}.")
    service, releases = history["service"], history["releases"]
    current = releases[-1]
    last = results[-1]
    if last.name == "release_history":
        wants = _ROLLBACK.search(asked) is not None
        if wants and len(releases) > 1:
            target = releases[-2]["version"]
            return _call("rollback", {"service": service, "to_version": target}, call.index)
        return AIMessage(
            content=(
                f"{service} runs {current['version']}, deployed {current['deployed_at']}."
                + (" There is no earlier release to roll back to." if wants else "")
            )
        )
    if _refused(last):
        why = last.text.partition("rejected this call: ")[2]
        return AIMessage(
            content=(
                f"The rollback of {service} was not approved; nothing was rolled back. "
                f"It still runs {current['version']}, deployed {current['deployed_at']}."
                + (f" The reviewer said: {why}" if why else "")
            )
        )
    done = re.fullmatch(r"rolled back (\S+) to (\S+)", last.text.strip())
    if done is None:  # a reviewer answered in the rollback's place
        return AIMessage(content=f"The rollback was handled by a reviewer: {last.text}")
    return AIMessage(
        content=(
            f"Rolled back {done.group(1)} from {current['version']} to {done.group(2)}. "
            "Watch the error rate for the next minutes."
        )
    )


def status_page_reply(call: ScriptedCall) -> AIMessage:
    """The offline status page model: post what is known, in customers' words.

    Args:
        call: The model call: its task and the instructions with what is known so far.

    Returns:
        The post, or the answer once it is up.
    """
    hop = _this_hop(call.messages)
    asked = _asked(hop)
    results = [m for m in hop if isinstance(m, ToolMessage)]
    if not results:
        service = _first_named(asked, list(SERVICES)) or "some services"
        lower = asked.lower()
        status: StatusLevel
        if "not approved" in lower or "nothing was rolled back" in lower:
            status = "identified"
            message = f"We have identified the cause of errors on {service} and are fixing it."
        elif "rolled back" in lower:
            status = "monitoring"
            message = f"A fix for errors on {service} is in place; we are monitoring it."
        else:
            status = "investigating"
            message = f"We are investigating errors on {service}."
        return _call("post_status_update", {"status": status, "message": message}, call.index)
    last = results[-1]
    if _refused(last):
        return AIMessage(content=f"I could not post the status update: {last.text}")
    return AIMessage(content=f"Posted {last.text.removeprefix('posted ')}")


def _scripted(reply: Callable[[ScriptedCall], AIMessage]) -> BaseChatModel:
    # Replies depend only on the messages shown: it never runs out and records nothing,
    # so one long-lived server serves any number of runs.
    return FunctionChatModel(reply=reply)


# --------------------------------------------------------------------------- answers


def _reported(result: WorkerResult) -> str:
    """A hop's full result; its summary when the full output is not at hand.

    A graph compiled with a store keeps workers' full outputs there; a process that
    resumes the run without that store (e.g. `lgsp review approve --db ...`) has only
    the summaries in the checkpoint.
    """
    return result.result_text() or result.summary


def domain_answer(inp: SynthesisInput) -> str:
    """A domain's answer: what each of its hops reported, in order.

    Args:
        inp: The domain's hops this turn.

    Returns:
        Their results (or errors), one after the other.

    Example:
        >>> domain_answer(SynthesisInput(task="t", hops=[], status="running"))
        'Nothing was done.'
    """
    parts = [
        _reported(hop.result)
        if hop.result.status == "success"
        else f"{hop.worker} failed: {hop.result.error}"
        for hop in inp.hops
    ]
    return " ".join(p for p in parts if p) or "Nothing was done."


def tree_answer(inp: SynthesisInput) -> str:
    """The root's answer: one line per domain, with what it reported.

    Args:
        inp: The root's hops this turn (one per domain visited).

    Returns:
        `Incident: ...`, `Infrastructure: ...`, `Communications: ...`.

    Example:
        >>> tree_answer(SynthesisInput(task="t", hops=[], status="running"))
        'Nothing was done.'
    """
    lines = [
        f"{hop.worker.capitalize()}: "
        + (
            _reported(hop.result)
            if hop.result.status == "success"
            else f"failed: {hop.result.error}"
        )
        for hop in inp.hops
    ]
    return "\n".join(lines) or "Nothing was done."


# --------------------------------------------------------------------------- the graph

ROLES = (
    "supervisor",
    "incident",
    "infrastructure",
    "communications",
    "triage",
    "oncall",
    "deployer",
    "status_page",
)
"""The roles whose model `LGSP_<ROLE>_MODEL` can set (`supervisor` is the root)."""


def model_for(role: str, environ: Mapping[str, str] = os.environ) -> BaseChatModel | None:
    """The configured model of a role, or None to run it offline.

    Args:
        role: One of `ROLES`.
        environ: Where `LGSP_<ROLE>_MODEL` and `LGSP_MODEL` are read.

    Returns:
        `init_chat_model` of `LGSP_<ROLE>_MODEL`, else of `LGSP_MODEL`, else None
        (`langgraph_supervisor_pro.workers.model_from_env`).

    Example:
        >>> model_for("deployer", {}) is None
        True
    """
    return model_from_env(role, environ=environ)


def _worker(
    role: str,
    environ: Mapping[str, str],
    reply: Callable[[ScriptedCall], AIMessage],
    **options: Any,
) -> Worker:
    return Worker(name=role, model=model_for(role, environ) or _scripted(reply), **options)


def _domain(
    name: str,
    workers: list[Worker],
    router: Callable[[SupervisorView], str],
    environ: Mapping[str, str],
    policy: ReviewPolicy,
) -> StateGraph[Any, Any, Any, Any]:
    model = model_for(name, environ)
    return create_supervisor(
        workers,
        model=model,
        router=None if model is not None else router,
        review=policy,
        synthesizer=domain_answer,
        max_steps=4,
        name=name,
    )


def build_graph(environ: Mapping[str, str] = os.environ) -> StateGraph[Any, Any, Any, Any]:
    """The operations tree, uncompiled.

    Args:
        environ: The configuration: models (`LGSP_MODEL`, ...) and review policy
            (`LGSP_AUTONOMY`, `LGSP_POLICY_FILE`).

    Returns:
        The graph; compile it with a checkpointer (reviews pause and resume).

    Example:
        >>> build_graph({}).compile().name
        'LangGraph'
    """
    policy = ReviewPolicy.from_env(environ)
    incident = _domain(
        "incident",
        [
            _worker(
                "triage",
                environ,
                triage_reply,
                description="Assesses an incident: which service, how bad (SEV1-3), who owns it.",
                tools=(service_health,),
                risks={"service_health": "low"},
                prompt=(
                    "You triage incidents. Look the affected service's health up, then give "
                    "its severity (SEV1: over 10% of requests fail), numbers and owning team."
                ),
            ),
            _worker(
                "oncall",
                environ,
                oncall_reply,
                description="Pages the owning team's on-call engineer.",
                tools=(page_oncall,),
                risks={"page_oncall": "low"},
                reads=("triage",),
                prompt=(
                    "You page on-call engineers. Page the team that owns the affected "
                    "service, at the severity triage gave, with a one-line summary."
                ),
            ),
        ],
        incident_router,
        environ,
        policy,
    )
    infrastructure = _domain(
        "infrastructure",
        [
            _worker(
                "deployer",
                environ,
                deployer_reply,
                description="Finds the release behind an incident and rolls it back.",
                tools=(release_history, rollback),
                risks={"release_history": "low", "rollback": "high"},
                prompt=(
                    "You run deployments. Look the service's release history up first; roll "
                    "back only to the release before the current one, and only when asked."
                ),
            )
        ],
        once("deployer"),
        environ,
        policy,
    )
    communications = _domain(
        "communications",
        [
            _worker(
                "status_page",
                environ,
                status_page_reply,
                description="Posts updates to the public status page.",
                tools=(post_status_update,),
                risks={"post_status_update": "low"},
                prompt=(
                    "You write the public status page. Post one short update in customers' "
                    "words, saying only what the instructions say is known."
                ),
            )
        ],
        once("status_page"),
        environ,
        policy,
    )
    supervisor = model_for("supervisor", environ)
    return create_supervisor(
        [
            Worker(
                name="incident",
                description="Incident response: triages an incident and pages the on-call.",
                agent=incident,
            ),
            Worker(
                name="infrastructure",
                description="Deployments: finds the release behind an incident, rolls back.",
                agent=infrastructure,
            ),
            Worker(
                name="communications",
                description="Communications: posts status page updates for customers.",
                agent=communications,
            ),
        ],
        model=supervisor,
        router=None if supervisor is not None else dispatch,
        review=policy,
        synthesizer=tree_answer,
        max_steps=6,
        name="ops_tree",
    )


graph = build_graph()
"""The graph `langgraph.json` serves."""

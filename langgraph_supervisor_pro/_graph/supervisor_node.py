"""The routing node (private): it decides who works next, and never does the work itself.

A router, else the model, decides from a bounded view; an invalid decision is re-asked
once, then goes to the fallback worker or halts. See docs/concepts/supervisor.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypeAlias

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.output_parsers.openai_tools import JsonOutputKeyToolsParser
from langchain_core.outputs import ChatGeneration
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.config import get_store
from langgraph.errors import NodeError
from langgraph.types import Command, Overwrite, Send
from pydantic import BaseModel, ValidationError

from langgraph_supervisor_pro._breakers import Breaker, breaker_namespace
from langgraph_supervisor_pro._contracts import FINISH, SUMMARY_MAX_CHARS, RouteDecision
from langgraph_supervisor_pro._graph import loop_guards as _guards
from langgraph_supervisor_pro._graph.budgets import BudgetCheck, Budgets
from langgraph_supervisor_pro._graph.circuit import Read, unavailable
from langgraph_supervisor_pro._graph.compaction_node import CompactionNode
from langgraph_supervisor_pro._graph.fanout import BRANCH_KEY, branches, with_stage
from langgraph_supervisor_pro._graph.names import COMPACTION_NODE, REVIEW_NODE, SYNTHESIS_NODE
from langgraph_supervisor_pro._graph.node import GraphNode
from langgraph_supervisor_pro._graph.usage import UsageMeter
from langgraph_supervisor_pro._internal.configs import with_handler, with_trace
from langgraph_supervisor_pro._internal.hop import hop_context
from langgraph_supervisor_pro._internal.scrub import RunSecrets, warn_plain_credentials
from langgraph_supervisor_pro._internal.storable import storable, unstorable_at
from langgraph_supervisor_pro._internal.text import message_text, one_line, truncate
from langgraph_supervisor_pro._internal.twins import Invoke, MaybeAwait, Steps, adrive, drive
from langgraph_supervisor_pro._internal.validation import validation_summary
from langgraph_supervisor_pro._state import (
    SCHEMA_VERSION,
    LedgerEntry,
    RouteState,
    SupervisorState,
    UsageEntry,
)
from langgraph_supervisor_pro._supervisor import DEFAULT_SUPERVISOR_PROMPT, Router, SupervisorView
from langgraph_supervisor_pro.errors import LGSPError
from langgraph_supervisor_pro.review._policy import ReviewPolicy, Tier, strictest_tier

LINE_CHARS = SUMMARY_MAX_CHARS  # a ledger line shows a hop's whole (capped) summary

DecidedBy: TypeAlias = Literal["router", "model", "fallback"]


@dataclass(frozen=True)
class _Decision:
    next: str
    instructions: str
    decided_by: DecidedBy
    parallel: tuple[tuple[str, str], ...] = ()  # more (worker, instructions) run with `next`


@dataclass(frozen=True)
class _Invalid:
    error: str


class SupervisorNode:
    """The routing node. Built by `create_supervisor`; not public API."""

    def __init__(
        self,
        *,
        name: str,
        workers: Sequence[tuple[str, str, int | None]],
        decision_model: type[RouteDecision],
        model: BaseChatModel | Runnable[Any, Any] | None,
        router: Router | None,
        prompt: str | None,
        max_steps: int,
        fallback: str | None,
        ledger_window: int,
        ping_pong_window: int | None,
        meter: UsageMeter | None = None,
        view_trigger: float = 0.7,
        compaction: CompactionNode | None = None,
        policy: ReviewPolicy | None = None,
        floor: Tier | None = None,
        breakers: Mapping[str, Breaker] | None = None,
        fallbacks: frozenset[str] = frozenset(),
        budgets: Budgets | None = None,
    ) -> None:
        self.name = name
        self.budgets = budgets if budgets is not None else Budgets()
        self.breakers = dict(breakers or {})
        # A route to a worker with a fallback whose breaker is open is kept (it answers).
        self.fallbacks = fallbacks
        self.policy = policy if policy is not None else ReviewPolicy()
        # The tier of a policy given explicitly: as a domain of a tree, never looser.
        self.floor = floor
        self.meter = meter
        self.view_trigger = view_trigger
        self.compaction = compaction
        self.worker_names = tuple(w[0] for w in workers)
        self.max_visits = {w[0]: w[2] for w in workers}
        self.decision_model = decision_model
        self.router = router
        self.max_steps = max_steps
        self.fallback = fallback
        self.ledger_window = ledger_window
        self.ping_pong_window = ping_pong_window
        self._structured: _DecisionCall | None = (
            None if model is None else _decision_call(model, convert_to_openai_tool(decision_model))
        )
        options = ", ".join((*self.worker_names, FINISH))
        self._instructions = (prompt or DEFAULT_SUPERVISOR_PROMPT).strip()
        self._catalogue = [(name, description) for name, description, _ in workers]
        self._answer_format = f"Answer with `next` (exactly one of: {options}) and `instructions`."
        self.parallel = "parallel" in decision_model.model_fields
        if self.parallel:
            self._answer_format += (
                " To run several workers at the same time on independent parts of the task, "
                "name the others in `parallel`, each with its own instructions."
            )
        self.system_prompt = self._system_prompt({})  # while every worker is available

    def runnable(self) -> GraphNode[SupervisorState, Command[Any]]:
        """The node as a Runnable with native sync and async bodies."""
        return GraphNode(self.name, self.invoke, self.ainvoke)

    def _system_prompt(self, unavailable: Mapping[str, str]) -> str:
        """The system prompt: instructions, catalogue (open circuits marked), answer format."""
        lines = []
        for name, description in self._catalogue:
            line = f"- {name}: {description}"
            why = unavailable.get(name)
            if why is not None and name in self.fallbacks:
                line += f" [{why}: its fallback answers]"
            elif why is not None:
                line += f" [unavailable: {why}]"
            lines.append(line)
        catalogue = "\n".join(lines)
        return f"{self._instructions}\n\nWorkers:\n{catalogue}\n\n{self._answer_format}"

    def view(
        self,
        state: SupervisorState,
        intake: Mapping[str, Any],
        unavailable: Mapping[str, str] | None = None,
        budget: BudgetCheck | None = None,
    ) -> SupervisorView:
        """The bounded view of the current turn."""
        turn = intake.get("turn", state.get("turn", 1))
        ledger = tuple(e for e in state.get("ledger") or () if e["turn"] == turn)
        visits = {name: 0 for name in self.worker_names}
        for entry in ledger:
            visits[entry["worker"]] = visits.get(entry["worker"], 0) + 1
        return SupervisorView(
            task=intake.get("task", state.get("task", "")),
            step=intake.get("step", state.get("step", 0)),
            turn=turn,
            ledger=ledger,
            visits=visits,
            workers=self.worker_names,
            unavailable=dict(unavailable or {}),
            spent=budget.spent if budget is not None else {},
            remaining=budget.remaining if budget is not None else {},
        )

    def messages(self, view: SupervisorView) -> list[BaseMessage]:
        """The supervisor model's input: system prompt, then task, worker status and ledger."""
        last_status = {entry["worker"]: entry["status"] for entry in view.ledger}
        status = "; ".join(
            f"{name}: {view.visits.get(name, 0)} hops"
            + (f", last {last_status[name]}" if name in last_status else "")
            for name in self.worker_names
        )
        shown = list(view.ledger[-self.ledger_window :])
        while True:
            messages = self._render(view, status, shown)
            # Compact the view itself: drop the oldest shown ledger lines while the
            # prompt is above the trigger budget (the counts above them remain).
            if (
                self.meter is None
                or len(shown) <= 1
                or self.meter.counter(messages) < (self.meter.window * self.view_trigger)
            ):
                return messages
            shown = shown[1:]

    def _render(
        self, view: SupervisorView, status: str, shown: Sequence[LedgerEntry]
    ) -> list[BaseMessage]:
        lines = [
            f"#{e['step']} {e['worker']} [{_status_text(e)}] {one_line(e['summary'], LINE_CHARS)}"
            for e in shown
        ]
        omitted = len(view.ledger) - len(shown)
        if not lines:
            ledger_text = "No hops yet."
        else:
            ok = sum(1 for e in view.ledger if e["status"] == "success")
            head = f"{len(view.ledger)} hops so far ({ok} succeeded); " + (
                f"the last {len(shown)}:" if omitted else "all of them:"
            )
            ledger_text = head + "\n" + "\n".join(lines)
        left = ", ".join(
            f"{amount:,.0f} tokens" if measure == "tokens" else f"{amount:,.4f} in cost"
            for measure, amount in view.remaining.items()
        )
        spending = f" Budget left: {left}." if left else ""
        human = (
            f"Task: {view.task}\n\nWorkers: {status}\n\nLedger: {ledger_text}\n\n"
            f"Hop budget: {view.step}/{self.max_steps} used.{spending} Who goes next?"
        )
        system = self._system_prompt(view.unavailable) if view.unavailable else self.system_prompt
        return [SystemMessage(content=system), HumanMessage(content=human)]

    def _blocked(self, name: str, view: SupervisorView) -> bool:
        """Whether a route to `name` is refused: its circuit is open and it has no fallback."""
        return name in view.unavailable and name not in self.fallbacks

    def _unavailable(self, config: RunnableConfig) -> Steps[dict[str, str]]:
        """The workers whose circuit is open now, and why (read from the graph's store)."""
        if not self.breakers:
            return {}
        store = get_store()
        parent = hop_context(config)
        within = parent.path if parent is not None else ()
        found: dict[str, str] = {}
        for name, breaker in self.breakers.items():
            namespace = breaker_namespace(self.name, (*within, name))
            try:
                value = yield Read(store, namespace)
            except Exception as exc:
                found[name] = f"circuit state unreadable ({type(exc).__name__})"
                continue
            why = unavailable(value, breaker, breaker.clock())
            if why is not None:
                found[name] = why
        return found

    def _parse(
        self, value: Any, decided_by: DecidedBy, view: SupervisorView
    ) -> _Decision | _Invalid:
        """Validate a router's or model's output into a decision, or say what is wrong."""
        if isinstance(value, Mapping) and {"raw", "parsed"} <= set(value):
            if value.get("parsing_error") is not None:
                return _Invalid(_short_error(value["parsing_error"]))
            value = value["parsed"]
            if value is None:
                return _Invalid(
                    "the reply held no structured decision (free text, or no call of the "
                    "RouteDecision tool)"
                )
        if isinstance(value, list | tuple):
            value = self._fan_in(value)
            if isinstance(value, _Invalid):
                return value
        value = _as_route(value)
        if not isinstance(value, Mapping):
            return _Invalid(f"expected a decision, got {type(value).__name__}")
        try:
            decision = self.decision_model.model_validate(dict(value))
        except ValidationError as exc:
            return _Invalid(_short_error(exc))
        parallel = getattr(decision, "parallel", ()) if self.parallel else ()
        branches = tuple((b.next, b.instructions.strip()) for b in parallel)
        for name in (decision.next, *(branch for branch, _ in branches)):
            if self._blocked(name, view):  # its circuit is open
                return _Invalid(
                    f"worker {name!r} is unavailable ({view.unavailable[name]}); route to "
                    "another worker or FINISH"
                )
        return _Decision(decision.next, decision.instructions.strip(), decided_by, branches)

    def _fan_in(self, routes: Sequence[Any]) -> dict[str, Any] | _Invalid:
        """A router's list of routes as one decision: the first, and the rest in parallel."""
        if not self.parallel:
            return _Invalid(
                f"got a list of {len(routes)} routes; running several workers at once "
                "needs create_supervisor(..., parallel=True)"
            )
        items: list[dict[str, Any]] = []
        for route in routes:
            item = _as_route(route)
            if not isinstance(item, Mapping):
                return _Invalid(f"a list of routes holds a {type(item).__name__}")
            items.append({"next": item.get("next"), "instructions": item.get("instructions", "")})
        if not items:
            return _Invalid("an empty list of routes; return FINISH to end the delegation")
        return {**items[0], "parallel": items[1:]}

    def _deciding(self, state: SupervisorState, config: RunnableConfig) -> Steps[Command[Any]]:
        """One decision, for both drivers: router (sync or async) first, else the model."""
        intake = self._intake(state)
        if intake:  # a new turn: say once if `configurable` holds a credential in plain text
            warn_plain_credentials(config)
        if intake.get("halt_reason") == "invalid_input":  # the message cannot be stored
            return Command(goto=SYNTHESIS_NODE, update=intake)
        approved = [] if intake else branches(state, "approved")
        if approved:  # a parallel decision's branches, back from their dispatch reviews: go
            update = {"fanout": {r["next"]: with_stage(r, "dispatched") for r in approved}}
            goto = self._branch_goto(state, state.get("task", ""), approved)
            return Command(goto=goto, update=update)
        parent = hop_context(config)
        if parent is not None and parent.tier:
            # A domain of a tree: the parent's tier, or this level's own policy when that
            # is stricter; never looser (the run's per-run tier was applied at the root),
            # unless this level's policy lets a run loosen it and the run asked to.
            tier = strictest_tier(parent.tier, self.floor)
            if self.floor is not None and self.policy.allow_run_override:
                tier = strictest_tier(parent.tier, self.policy.requested_tier(config) or tier)
        else:
            # A resumed turn keeps the tier it recorded; a new turn starts from the config.
            recorded = None if intake else state.get("autonomy")
            tier = self.policy.tier_for(config, recorded=recorded)
        unavailable = yield from self._unavailable(config)
        budget = None
        if self.budgets.active or (parent is not None and parent.budgets):
            step = int(intake.get("step", state.get("step", 0)))
            budget = self.budgets.check(state, intake, config, policy=self.policy, step=step)
            intake = {**intake, **budget.update()}
            if budget.halt is not None:
                return self._halt(intake, "budget_exceeded", budget.halt)
            if budget.finish is not None:
                return self._finish(intake, step, budget.finish)
            unavailable = {**unavailable, **budget.unavailable}
        view = self.view(state, intake, unavailable, budget)
        choice: _Decision | _Invalid | None = None
        if self.router is not None:
            router = self.router
            raw = yield MaybeAwait(lambda: router(view))
            if raw is not None:
                choice = self._parse(raw, "router", view)
                if isinstance(choice, _Invalid):
                    choice = _Invalid(f"the router returned an invalid route: {choice.error}")
        usage: list[UsageEntry] = []
        if choice is None:
            recorder = self.budgets.recorder({**state, **intake}, config, meter=self.meter)
            asked = with_handler(config, recorder)
            choice = yield from self._asking(view, asked, tier, [])
            usage = recorder.entries(
                turn=view.turn, step=view.step + 1, role="supervisor", worker=None
            )
        return self._command(state, intake, view, choice, usage, tier)

    def _asking(
        self,
        view: SupervisorView,
        config: RunnableConfig,
        tier: str,
        sent: list[list[BaseMessage]],
    ) -> Steps[_Decision | _Invalid]:
        """The model's decision, or what was wrong with it after one re-ask (sent: in `sent`)."""
        if self._structured is None:
            return _Invalid("the router deferred (returned None) and no model is configured")
        structured = self._structured
        # Traces only: nothing reads these keys back.
        metadata = {
            "lgsp_role": "supervisor",
            "lgsp_step": view.step + 1,
            "lgsp_turn": view.turn,
            "lgsp_autonomy": tier,
        }
        cfg = with_trace(config, metadata, ["lgsp:supervisor"])
        messages = self.messages(view)
        reply = yield from _structured_reply(structured, messages, cfg, sent)
        first = self._parse(reply, "model", view)
        if isinstance(first, _Decision):
            return first
        options = ", ".join((*(n for n in self.worker_names if not self._blocked(n, view)), FINISH))
        reask = HumanMessage(
            content=(
                f"Your previous answer was not a valid decision: {first.error}\n"
                f"Answer again with `next` set to exactly one of: {options}."
            )
        )
        reply = yield from _structured_reply(structured, [*messages, reask], cfg, sent)
        second = self._parse(reply, "model", view)
        if isinstance(second, _Invalid):
            return _Invalid(f"twice invalid: {first.error} / then: {second.error}")
        return second

    def invoke(self, state: SupervisorState, config: RunnableConfig) -> Command[Any]:
        """Decide synchronously."""
        return drive(self._deciding(state, config))

    async def ainvoke(self, state: SupervisorState, config: RunnableConfig) -> Command[Any]:
        """Decide on the event loop."""
        return await adrive(self._deciding(state, config))

    def _intake(self, state: SupervisorState) -> dict[str, Any]:
        """Start a new turn when a new user message arrived; else change nothing.

        A message no backend can store (NUL, a surrogate) starts its turn `halted`.
        """
        human = next(
            (m for m in reversed(state.get("messages") or []) if isinstance(m, HumanMessage)),
            None,
        )
        if human is None:
            raise ValueError(
                "messages: the input needs at least one user message, e.g. "
                '{"messages": [("user", "your task")]}'
            )
        if state.get("status") == "running" and human.id == state.get("task_message_id"):
            return {}
        text = message_text(human)
        intake: dict[str, Any] = {
            "turn": state.get("turn", 0) + 1,
            "step": 0,
            "task": storable(text),
            "task_message_id": None if human.id is None else storable(human.id),
            "status": "running",
            "halt_reason": None,
            "halt_detail": None,
            "route": None,
        }
        if state.get("fanout"):  # the last turn's fan-out is over
            intake["fanout"] = Overwrite({})
        if "turn" not in state:  # a new thread records its state schema, once
            intake["schema_version"] = SCHEMA_VERSION
        problem = _unstorable_input(text, human.id)
        if problem is not None:
            intake.update(status="halted", halt_reason="invalid_input", halt_detail=problem)
        return intake

    def _command(
        self,
        state: SupervisorState,
        intake: dict[str, Any],
        view: SupervisorView,
        choice: _Decision | _Invalid,
        usage: list[UsageEntry] | None = None,
        tier: str = "supervised",
    ) -> Command[Any]:
        if state.get("autonomy") != tier:  # written when it changes, not every hop
            intake = {**intake, "autonomy": tier}
        if usage:
            intake["usage"] = usage
        choice = _storable(choice)
        if isinstance(choice, _Invalid):
            if self.fallback is None:
                return self._halt(intake, "invalid_route", f"no valid route: {choice.error}")
            choice = _Decision(
                self.fallback,
                "The supervisor could not choose a valid route "
                f"({truncate(choice.error, 200)}). Work on the task as best you can.",
                "fallback",
            )
        if choice.parallel:
            return self._fan_out(state, intake, view, choice, tier)
        if choice.next == FINISH:
            route = RouteState(
                next=FINISH,
                instructions=choice.instructions,
                step=view.step,
                decided_by=choice.decided_by,
            )
            return Command(goto=SYNTHESIS_NODE, update={**intake, "route": route})
        halt = (
            _guards.check_max_steps(view.step, self.max_steps)
            or _guards.check_max_visits(choice.next, view.ledger, self.max_visits)
            or _guards.check_ping_pong(choice.next, view.ledger, self.ping_pong_window)
        )
        if halt is not None:
            return self._halt(intake, *halt)
        step = view.step + 1
        route = RouteState(
            next=choice.next,
            instructions=choice.instructions,
            step=step,
            decided_by=choice.decided_by,
            at=datetime.now(UTC).isoformat(),
        )
        goto = REVIEW_NODE if tier == "manual" else self.next_step(state, route)
        update = {**intake, "route": route, "step": step}
        if state.get("fanout"):  # the last parallel decision is over (FINISH keeps it for
            update["fanout"] = Overwrite({})  # synthesis; a new turn's intake clears it)
        return Command(goto=goto, update=update)

    def _fan_out(
        self,
        state: SupervisorState,
        intake: dict[str, Any],
        view: SupervisorView,
        choice: _Decision,
        tier: str,
    ) -> Command[Any]:
        """Send a parallel decision's workers on together (each its own hop)."""
        names = [choice.next, *(name for name, _ in choice.parallel)]
        halt = _guards.check_fan_out(view.step, len(names), self.max_steps)
        for name in names:
            halt = halt or _guards.check_max_visits(name, view.ledger, self.max_visits)
        if halt is not None:
            return self._halt(intake, *halt)
        at = datetime.now(UTC).isoformat()
        instructions = [choice.instructions, *(text for _, text in choice.parallel)]
        routes = [
            RouteState(
                next=name,
                instructions=text,
                step=view.step + index,
                decided_by=choice.decided_by,
                at=at,
            )
            for index, (name, text) in enumerate(zip(names, instructions, strict=True), 1)
        ]
        update = {**intake, "route": None, "step": view.step + len(routes)}
        if tier == "manual":
            ledger = list(view.ledger)
            update["fanout"] = Overwrite({r["next"]: with_stage(r, "review") for r in routes})
            sends = [
                Send(
                    REVIEW_NODE,
                    {BRANCH_KEY: r, "task": view.task, "turn": view.turn, "ledger": ledger},
                )
                for r in routes
            ]
            return Command(goto=sends, update=update)
        update["fanout"] = Overwrite({r["next"]: with_stage(r, "dispatched") for r in routes})
        return Command(goto=self._branch_goto(state, view.task, routes), update=update)

    def _branch_goto(
        self, state: SupervisorState, task: str, routes: Sequence[RouteState]
    ) -> str | list[str]:
        """The compaction step when a branch's worker needs it, else all the workers."""
        if self.compaction is not None and any(
            self.compaction.needed(state, r, task) for r in routes
        ):
            return COMPACTION_NODE
        return [r["next"] for r in routes]

    def next_step(self, state: SupervisorState, route: RouteState) -> str:
        """Where an approved route goes: the compaction step when due, else the worker."""
        if self.compaction is not None and self.compaction.needed(
            state, route, state.get("task", "")
        ):
            return COMPACTION_NODE
        return route["next"]

    def _finish(self, intake: dict[str, Any], step: int, why: str) -> Command[str]:
        """Finish the turn now with what is done (a reviewer refused to spend more)."""
        route = RouteState(next=FINISH, instructions=storable(why), step=step, decided_by="router")
        return Command(goto=SYNTHESIS_NODE, update={**intake, "route": route})

    def _halt(self, intake: dict[str, Any], reason: str, detail: str) -> Command[str]:
        # An invalid route's detail quotes what the model or router answered.
        detail = RunSecrets().scrub(detail)
        return Command(
            goto=SYNTHESIS_NODE,
            update={
                **intake,
                "route": None,
                "status": "halted",
                "halt_reason": reason,
                "halt_detail": storable(detail),
            },
        )

    def on_error(self, state: SupervisorState, error: NodeError) -> Command[str]:
        """LangGraph error handler: after retries, fail the run closed with the scrubbed reason."""
        exc = error.error
        text = exc.message if isinstance(exc, LGSPError) else exc  # state holds no doc link
        detail = RunSecrets().scrub(f"the supervisor failed: {type(exc).__name__}: {text}")
        return Command(
            goto=SYNTHESIS_NODE,
            update={
                "route": None,
                "status": "failed",
                "halt_reason": "supervisor_error",
                "halt_detail": storable(truncate(detail, 500)),
            },
        )


def _status_text(entry: LedgerEntry) -> str:
    """A ledger line's status: `success`, or `success via fallback (verify: no source)`."""
    why = entry.get("fallback")
    if why is None:
        return entry["status"]
    return f"{entry['status']} via fallback ({one_line(why, 80)})"


def _unstorable_input(text: str, message_id: str | None) -> str | None:
    """Why the user's message cannot be stored (its text or id), else None."""
    for what, value in (("text", text), ("id", message_id or "")):
        found = unstorable_at(value)
        if found is not None:
            index, char = found
            return (
                f"the last user message cannot be stored: its {what} holds {char} at index "
                f"{index}, which Postgres refuses (as it does every NUL and surrogate); "
                "send it again without that character"
            )
    return None


def _storable(choice: _Decision | _Invalid) -> _Decision | _Invalid:
    """A decision whose instructions (or an invalid one's error) can be stored."""
    if isinstance(choice, _Invalid):
        return _Invalid(storable(choice.error))
    return _Decision(
        choice.next,
        storable(choice.instructions),
        choice.decided_by,
        tuple((name, storable(text)) for name, text in choice.parallel),
    )


def _as_route(value: Any) -> Any:
    """A worker name or a decision model as a route mapping (anything else unchanged)."""
    if isinstance(value, str):
        return {"next": value}
    if isinstance(value, BaseModel):
        return value.model_dump()
    return value


@dataclass(frozen=True)
class _DecisionCall:
    """How the model is asked: a runnable, and the parser of its message (None: it parses)."""

    runnable: Runnable[Any, Any]
    parser: JsonOutputKeyToolsParser | None = None


def _decision_call(
    model: BaseChatModel | Runnable[Any, Any], tool: dict[str, Any]
) -> _DecisionCall:
    """The decision call for `model`, or a TypeError when it cannot produce one.

    A chat model with LangChain's default `with_structured_output` gets exactly its
    request (bound tool, `tool_choice="any"`, metadata), parsed here with its parser: no
    chain and parser runs around every decision (half the call's CPU, bench/scale.py).
    Any other model or Runnable is called through its own `with_structured_output`.
    """
    if (
        isinstance(model, BaseChatModel)
        and type(model).with_structured_output is BaseChatModel.with_structured_output
        and type(model).bind_tools is not BaseChatModel.bind_tools
    ):
        bound = model.bind_tools(
            [tool],
            tool_choice="any",
            ls_structured_output_format={"kwargs": {"method": "function_calling"}, "schema": tool},
        )
        parser = JsonOutputKeyToolsParser(key_name=tool["function"]["name"], first_tool_only=True)
        return _DecisionCall(bound, parser)
    try:
        # The schema goes in as a JSON-schema tool dict built once here: given the
        # pydantic class, LangChain rebuilds its JSON schema on every call (for
        # tracing metadata). `_parse` validates with the class itself.
        return _DecisionCall(model.with_structured_output(tool))  # type: ignore[union-attr]
    except (NotImplementedError, AttributeError) as exc:
        raise TypeError(
            f"model: {type(model).__name__} cannot produce structured output "
            "(with_structured_output); give a tool-calling chat model, or a router"
        ) from exc


def _structured_reply(
    call: _DecisionCall,
    messages: list[BaseMessage],
    config: RunnableConfig,
    sent: list[list[BaseMessage]],
) -> Steps[dict[str, Any]]:
    """One structured-output call, recorded in `sent`, in the `include_raw` shape."""
    # `include_raw=True` would run the parse in a RunnableParallel (two threads per
    # call); the plain chain raises on a parsing error instead, which we keep as data.
    sent.append(messages)
    try:
        reply = yield Invoke(call.runnable, messages, config)
    except _PARSE_ERRORS as exc:  # a model's own chain parses inside the call
        return {"raw": None, "parsed": None, "parsing_error": exc}
    if call.parser is not None:
        try:
            reply = call.parser.parse_result([ChatGeneration(message=reply)])
        except Exception as exc:  # the parse is pure: whatever it raises is the reply's fault
            return {"raw": None, "parsed": None, "parsing_error": exc}
    return {"raw": None, "parsed": reply, "parsing_error": None}


# What a structured-output chain raises for a reply that holds no valid decision.
_PARSE_ERRORS: tuple[type[Exception], ...] = (OutputParserException, ValidationError)
try:  # a refusal (langchain-core >= 1.7.5): the model declined to answer the schema
    from langchain_core.exceptions import ModelRefusalError

    _PARSE_ERRORS = (*_PARSE_ERRORS, ModelRefusalError)
except ImportError:  # pragma: no cover - older langchain-core has no refusal error
    pass


def _short_error(exc: Any) -> str:
    if isinstance(exc, ValidationError):
        return validation_summary(
            exc, empty="decision", max_errors=exc.error_count(), show_input=True
        )
    return truncate(str(exc), 400)

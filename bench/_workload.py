"""The scripted workload both sides of the benchmark run, and the checks that it really ran.

N hops go round-robin over three workers (researcher, analyst, writer); each hop's
worker answers with about 2,000 characters of text; then the supervisor finishes.
Every model is a `ScriptedChatModel`, so nothing touches the network and both
sides do exactly the same model work:

- langgraph-supervisor: `create_supervisor(agents, model=..., output_mode="last_message")`;
  its supervisor model answers with a tool call to `transfer_to_<worker>` per hop, then
  a final text reply.
- langgraph-supervisor-pro: `create_supervisor([Worker(...)], model=...)`; its supervisor
  model answers with `{"next": <worker>, "instructions": ...}` per hop, then
  `{"next": "FINISH"}`.
- the floor: a bare LangGraph `StateGraph` loop, a routing node that sends hop k to the
  round-robin worker (no model, no supervisor logic) and one node per worker that
  invokes the same agent on the worker's own history plus the hop's prompt: what any
  graph running these workers this way costs before it supervises anything.

Worker answers are seeded pseudo-random words rather than a repeated phrase, so Postgres'
TOAST compression sees text about as compressible as real prose.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Annotated, Any, Literal, TypeAlias

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolCall
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command
from typing_extensions import TypedDict

from langgraph_supervisor_pro import FINISH, SupervisorView, Worker, WorkerTask
from langgraph_supervisor_pro import create_supervisor as create_pro_supervisor
from langgraph_supervisor_pro._supervisor import DEFAULT_SUPERVISOR_PROMPT
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel
from langgraph_supervisor_pro.types import route_decision_model

with warnings.catch_warnings():
    # langgraph-supervisor imports LangGraph's deprecated prebuilt agent at import time.
    warnings.simplefilter("ignore", DeprecationWarning)
    import langgraph_supervisor
    from langgraph.prebuilt import create_react_agent

from langchain.agents import create_agent

WORKERS: tuple[tuple[str, str], ...] = (
    ("researcher", "Finds facts, figures and sources on the topic."),
    ("analyst", "Analyses the findings and draws conclusions."),
    ("writer", "Writes report sections from the analysis."),
)
"""The three workers: (name, one-sentence description)."""

WORKER_NAMES: tuple[str, ...] = tuple(name for name, _ in WORKERS)
TASK = "Write a market report on heat pumps in Europe, section by section."
ANSWER_CHARS = 2_000
FINAL_REPLY = "The report is complete."

Durability: TypeAlias = Literal["sync", "async", "exit"]
AgentFactory: TypeAlias = Callable[[BaseChatModel, str], Pregel[Any, Any, Any, Any]]

_VOCABULARY_TEXT = (
    "market demand supply heat pump installer subsidy grid electricity gas price tariff "
    "efficiency coefficient performance winter summer building retrofit household policy "
    "regulation target emission carbon renewable capacity growth decline forecast survey "
    "customer contractor manufacturer component compressor refrigerant propane inverter "
    "air water ground source hybrid boiler district network storage tank radiator floor "
    "insulation payback investment loan grant scheme country region north south east west "
    "germany france italy poland sweden norway spain netherlands belgium austria denmark "
    "share volume revenue margin cost labour shortage training certification standard "
    "noise permit planning data quarter year trend risk opportunity barrier driver the a "
    "of and to in for with on by from as is are was were will may could should"
)
_VOCABULARY = tuple(_VOCABULARY_TEXT.split())


class WorkloadError(RuntimeError):
    """A run did not do the scripted work (wrong hop count, missing answers, ...)."""


# ----------------------------------------------------------------------------- the script


def schedule(hops: int) -> list[str]:
    """The worker of each hop: round-robin over the three workers."""
    return [WORKER_NAMES[i % len(WORKER_NAMES)] for i in range(hops)]


def visits(hops: int) -> dict[str, int]:
    """How many hops each worker takes in a run of `hops` hops."""
    plan = schedule(hops)
    return {name: plan.count(name) for name in WORKER_NAMES}


def answer_prefix(worker: str, visit: int) -> str:
    """The first words of `worker`'s answer on its `visit`-th hop (from 1)."""
    return f"[{worker} answer {visit}]"


def answer_text(worker: str, visit: int) -> str:
    """`worker`'s answer on its `visit`-th hop: exactly `ANSWER_CHARS` characters."""
    rng = random.Random(f"{worker}:{visit}")
    words = [answer_prefix(worker, visit)]
    length = len(words[0])
    while length < ANSWER_CHARS:
        word = rng.choice(_VOCABULARY)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:ANSWER_CHARS]


def instructions(hop: int) -> str:
    """What the supervisor asks for on hop `hop` (from 1)."""
    return f"Work on part {hop} of the report."


def catalogue() -> str:
    """The worker catalogue, one line per worker (as our supervisor prompt shows it)."""
    return "\n".join(f"- {name}: {description}" for name, description in WORKERS)


REFERENCE_PROMPT = (
    f"{DEFAULT_SUPERVISOR_PROMPT}\n\nWorkers:\n{catalogue()}\n\n"
    "Hand the task to one worker at a time with its transfer_to_<worker> tool; "
    "when the task is complete, reply with the final answer."
)
"""The reference supervisor's system prompt: the same instructions and catalogue as ours."""


# ------------------------------------------------------------------------- scripted models


def worker_model(worker: str, calls: int) -> ScriptedChatModel:
    """A worker's model: its k-th call answers `answer_text(worker, k)`."""

    def reply(call: ScriptedCall) -> str:
        return answer_text(worker, call.index + 1)

    return ScriptedChatModel(name=worker, script=[reply] * calls)


def handoff_tool_name(worker: str) -> str:
    """The name langgraph-supervisor gives the handoff tool to `worker`."""
    return f"transfer_to_{worker}"


def reference_supervisor_model(hops: int) -> ScriptedChatModel:
    """Tool calls to the handoff tools, round-robin, then the final text reply."""
    handoffs: list[AIMessage] = [
        AIMessage(
            content="",
            tool_calls=[ToolCall(name=handoff_tool_name(worker), args={}, id=f"handoff_{hop}")],
        )
        for hop, worker in enumerate(schedule(hops), start=1)
    ]
    return ScriptedChatModel(name="supervisor", script=[*handoffs, FINAL_REPLY])


def pro_supervisor_model(hops: int) -> ScriptedChatModel:
    """Route decisions, round-robin with instructions, then FINISH."""
    decisions: list[dict[str, str]] = [
        {"next": worker, "instructions": instructions(hop)}
        for hop, worker in enumerate(schedule(hops), start=1)
    ]
    return ScriptedChatModel(
        name="supervisor", script=[*decisions, {"next": FINISH, "instructions": ""}]
    )


def decision_tokens(model: ScriptedChatModel) -> tuple[int, ...]:
    """Approximate input tokens of each call the model received (system prompt included)."""
    return tuple(count_tokens_approximately(call.messages) for call in model.calls)


def tool_schema_tokens(tools: Sequence[BaseTool | dict[str, Any]]) -> int:
    """Approximate tokens of the tool schemas bound to every supervisor call."""
    return count_tokens_approximately([], tools=list(tools))


def pro_tool_schema_tokens() -> int:
    """Our supervisor binds one tool per call: this graph's `RouteDecision` schema."""
    return tool_schema_tokens([convert_to_openai_tool(route_decision_model(WORKER_NAMES))])


def reference_tool_schema_tokens() -> int:
    """The reference supervisor binds one handoff tool per worker."""
    tools = [langgraph_supervisor.create_handoff_tool(agent_name=n) for n in WORKER_NAMES]
    return tool_schema_tokens(tools)


@dataclass(frozen=True)
class ServedModels:
    """Models that serve any number of runs (they decide from what they are shown)."""

    supervisor: BaseChatModel
    workers: Mapping[str, BaseChatModel]
    """One per worker name."""


# ------------------------------------------------------------------------------- workers


def _react_agent(model: BaseChatModel, name: str) -> Pregel[Any, Any, Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(model, tools=[], name=name)


def _create_agent(model: BaseChatModel, name: str) -> Pregel[Any, Any, Any, Any]:
    return create_agent(model, tools=[], name=name)


AGENT_FACTORIES: dict[str, AgentFactory] = {
    "create_react_agent": _react_agent,
    "create_agent": _create_agent,
}
"""How model-backed workers are built (the same kind on both sides)."""


def function_worker(worker: str) -> Callable[[WorkerTask], str]:
    """A plain function worker: its k-th hop answers `answer_text(worker, k)`."""

    def work(task: WorkerTask) -> str:
        visit = 1 + sum(isinstance(m, AIMessage) for m in task.messages)
        return answer_text(worker, visit)

    work.__name__ = worker
    return work


# ------------------------------------------------------------------------ prepared runs


@dataclass
class Prepared:
    """One compiled graph with fresh scripted models, ready for exactly one run."""

    hops: int
    graph: Pregel[Any, Any, Any, Any]
    supervisor: ScriptedChatModel | None
    """None for the bare floor, which has no supervisor model."""
    workers: Mapping[str, ScriptedChatModel] = field(default_factory=dict)
    check_final: Callable[[Mapping[str, Any], int], None] | None = None

    def check(self, final: Mapping[str, Any]) -> None:
        """Raise `WorkloadError` unless the run did all N hops and N+1 decisions."""
        if self.check_final is not None:
            self.check_final(final, self.hops)
        if self.supervisor is not None:
            _expect(
                len(self.supervisor.calls) == self.hops + 1,
                f"the supervisor model was called {len(self.supervisor.calls)} times, "
                f"expected {self.hops + 1} (N hops + FINISH)",
            )
        expected = visits(self.hops)
        for name, model in self.workers.items():
            _expect(
                len(model.calls) == expected[name],
                f"worker {name!r}'s model was called {len(model.calls)} times, "
                f"expected {expected[name]}",
            )


@dataclass(frozen=True)
class RunResult:
    """What one verified run measured."""

    seconds: float
    tokens: tuple[int, ...]
    """Input tokens of each supervisor decision, in order."""
    final: Mapping[str, Any] = field(repr=False)
    """The graph's final state."""


def run(prepared: Prepared, thread_id: str, durability: Durability | None = None) -> RunResult:
    """Invoke the graph once on `thread_id`, time it, and verify the work was done."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    payload = {"messages": [HumanMessage(content=TASK)]}
    start = perf_counter()
    final = prepared.graph.invoke(payload, config, durability=durability)
    seconds = perf_counter() - start
    prepared.check(final)
    tokens = () if prepared.supervisor is None else decision_tokens(prepared.supervisor)
    return RunResult(seconds=seconds, tokens=tokens, final=final)


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise WorkloadError(message)


# -------------------------------------------------------------------- langgraph-supervisor


def build_reference(
    hops: int, checkpointer: BaseCheckpointSaver[Any], agent: AgentFactory
) -> Prepared:
    """langgraph-supervisor with agent workers and `output_mode="last_message"`."""
    supervisor = reference_supervisor_model(hops)
    models = {name: worker_model(name, n) for name, n in visits(hops).items()}
    agents = [agent(models[name], name) for name in WORKER_NAMES]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        builder = langgraph_supervisor.create_supervisor(
            agents,
            model=supervisor,
            prompt=REFERENCE_PROMPT,
            output_mode="last_message",
        )

    def check_final(final: Mapping[str, Any], n: int) -> None:
        _check_reference(final, n)
        _check_reference_tools(supervisor)

    return Prepared(
        hops=hops,
        graph=builder.compile(checkpointer=checkpointer),
        supervisor=supervisor,
        workers=models,
        check_final=check_final,
    )


def _check_reference(final: Mapping[str, Any], hops: int) -> None:
    messages: list[BaseMessage] = final["messages"]
    answers = [
        m for m in messages if isinstance(m, AIMessage) and m.name in WORKER_NAMES and _is_answer(m)
    ]
    _expect(
        len(answers) == hops,
        f"langgraph-supervisor: {len(answers)} worker answers in the final state, expected {hops}",
    )
    _expect(
        [m.name for m in answers] == schedule(hops),
        "langgraph-supervisor: the worker answers are not in round-robin order",
    )
    last = messages[-1]
    _expect(
        isinstance(last, AIMessage) and last.content == FINAL_REPLY,
        f"langgraph-supervisor: the run ended on {type(last).__name__} {last.content!r:.80}, "
        "not the supervisor's final reply",
    )


def _check_reference_tools(supervisor: ScriptedChatModel) -> None:
    """The handoff tools the script calls must be the ones langgraph-supervisor bound."""
    expected = {handoff_tool_name(n) for n in WORKER_NAMES}
    for call in supervisor.calls:
        _expect(
            set(call.tools) == expected,
            f"langgraph-supervisor bound the tools {sorted(call.tools)}, the script calls "
            f"{sorted(expected)}",
        )


def _is_answer(message: AIMessage) -> bool:
    return isinstance(message.content, str) and message.content.startswith("[")


# -------------------------------------------------------------- langgraph-supervisor-pro


def schedule_router(hops: int) -> Callable[[SupervisorView], dict[str, str]]:
    """A `create_supervisor(router=...)` that makes the bare floor's decisions: no model.

    Hop k goes to `schedule(hops)[k]` with `instructions(k + 1)` (what the scripted
    supervisor model answers), then FINISH; it decides from the hops the view shows, so
    one graph serves any number of runs.
    """
    plan = schedule(hops)

    def route(view: SupervisorView) -> dict[str, str]:
        if view.step >= hops:
            return {"next": FINISH, "instructions": ""}
        return {"next": plan[view.step], "instructions": instructions(view.step + 1)}

    return route


def build_pro(
    hops: int,
    checkpointer: BaseCheckpointSaver[Any],
    agent: AgentFactory | None,
    *,
    models: ServedModels | None = None,
    by_function: bool = False,
) -> Prepared:
    """Our `create_supervisor`: agent workers when `agent` is given, else function workers.

    No compaction, no store: the comparison's section. The long-run section builds its
    own graph (`bench/_long.py`). `models` replaces the scripted models (one run each,
    their calls counted by `check`) with models that serve any number of runs (their
    calls are not counted; `check_pro` still verifies every hop). With `by_function`
    the supervisor has no model: `schedule_router(hops)` decides, as the bare floor's
    routing node does (the same graph otherwise, and the same checks).
    """
    scripted_supervisor = None if by_function or models is not None else pro_supervisor_model(hops)
    router = schedule_router(hops) if by_function else None
    supervisor: BaseChatModel | None = None
    if not by_function:
        supervisor = models.supervisor if models is not None else scripted_supervisor
    scripted: dict[str, ScriptedChatModel] = {}
    workers: list[Worker] = []
    for name, description in WORKERS:
        if agent is None:
            workers.append(Worker(name=name, description=description, agent=function_worker(name)))
            continue
        if models is None:
            scripted[name] = worker_model(name, visits(hops)[name])
        model = scripted[name] if models is None else models.workers[name]
        workers.append(Worker(name=name, description=description, agent=agent(model, name)))
    builder = create_pro_supervisor(workers, model=supervisor, router=router, max_steps=hops)
    return Prepared(
        hops=hops,
        graph=builder.compile(checkpointer=checkpointer),
        supervisor=scripted_supervisor,
        workers=scripted,
        check_final=check_pro,
    )


def check_pro(final: Mapping[str, Any], hops: int) -> None:
    """Raise `WorkloadError` unless our run did all hops, round-robin, and answered."""
    ledger = final.get("ledger") or []
    _expect(
        final.get("status") == "done",
        f"langgraph-supervisor-pro: the run ended {final.get('status')!r} "
        f"({final.get('halt_reason')}: {final.get('halt_detail')})",
    )
    _expect(
        len(ledger) == hops,
        f"langgraph-supervisor-pro: the ledger has {len(ledger)} entries, expected {hops}",
    )
    _expect(
        [e["worker"] for e in ledger] == schedule(hops),
        "langgraph-supervisor-pro: the ledger's workers are not in round-robin order",
    )
    seen: dict[str, int] = {}
    for entry in ledger:
        seen[entry["worker"]] = seen.get(entry["worker"], 0) + 1
        prefix = answer_prefix(entry["worker"], seen[entry["worker"]])
        _expect(
            entry["status"] == "success" and entry["summary"].startswith(prefix),
            f"langgraph-supervisor-pro: hop {entry['step']} is {entry['status']!r} with "
            f"summary {entry['summary']!r:.80}, expected a success starting {prefix!r}",
        )
    last = final["messages"][-1]
    last_worker = ledger[-1]["worker"]
    expected_answer = answer_text(last_worker, seen[last_worker])
    _expect(
        isinstance(last, AIMessage) and last.content == expected_answer,
        "langgraph-supervisor-pro: the final answer is not the last worker's full answer",
    )


# ------------------------------------------------------------------------------ the floor


def _merge_slots(
    left: Mapping[str, list[BaseMessage]], right: Mapping[str, list[BaseMessage]]
) -> dict[str, list[BaseMessage]]:
    return {**left, **right}


def _extend(left: list[str], right: list[str]) -> list[str]:
    return [*left, *right]


class FloorState(TypedDict, total=False):
    """The floor loop's state: the shared messages, the hop counter, each worker's history."""

    messages: list[BaseMessage]
    hop: int
    slots: Annotated[dict[str, list[BaseMessage]], _merge_slots]
    answers: Annotated[list[str], _extend]


ROUTER_PROMPT = f"{DEFAULT_SUPERVISOR_PROMPT}\n\nWorkers:\n{catalogue()}"
"""The routed floor's system prompt: our supervisor's default prompt and the catalogue."""


def router_prompt(hop: int, hops: int) -> list[BaseMessage]:
    """What the routed floor's router is shown before hop `hop + 1` (our budget line)."""
    return [
        SystemMessage(content=ROUTER_PROMPT),
        HumanMessage(content=f"Task: {TASK}\n\nHop budget: {hop}/{hops} used"),
    ]


def build_floor(
    hops: int,
    checkpointer: BaseCheckpointSaver[Any],
    agent: AgentFactory,
    *,
    models: ServedModels | None = None,
    asynchronous: bool = False,
    routed: bool = False,
) -> Prepared:
    """A bare `StateGraph` loop running the same agent workers for the same hops.

    A routing node sends hop k to `schedule(hops)[k]` (no model, no supervisor logic);
    each worker node invokes its agent (a checkpointed subgraph, like ours) on the
    worker's own history plus the hop's prompt, keeps the returned history in the
    worker's slot and appends the answer to `answers`. With `asynchronous` the worker
    nodes are coroutines awaiting the agent's `ainvoke` (the graph then runs with
    `ainvoke` only). `models` as in `build_pro` (only its workers are used, and its
    supervisor with `routed`).

    With `routed`, the routing node does what a hand-written supervisor loop does: it
    asks a model for the next worker (LangChain's `with_structured_output` of our
    `RouteDecision` schema, shown `router_prompt`) and goes where the decision says, or
    to END on FINISH; the decisions are our supervisor's (`pro_supervisor_model`, or
    `models.supervisor`), so `check` still finds the round-robin answers.
    """
    plan = schedule(hops)
    scripted = (
        {name: worker_model(name, n) for name, n in visits(hops).items()} if models is None else {}
    )
    worker_models: Mapping[str, BaseChatModel] = scripted if models is None else models.workers
    agents = {name: agent(worker_models[name], name) for name in WORKER_NAMES}
    scripted_router = pro_supervisor_model(hops) if routed and models is None else None
    router_model = None if not routed else scripted_router if models is None else models.supervisor
    decide = (
        router_model.with_structured_output(route_decision_model(WORKER_NAMES))
        if router_model is not None
        else None
    )

    def destination(decision: Any) -> str:
        chosen = str(decision.next)
        return END if chosen == FINISH else chosen

    def route(state: FloorState) -> Command[str]:
        hop = state.get("hop", 0)
        if decide is None:
            return Command(goto=plan[hop] if hop < hops else END)
        return Command(goto=destination(decide.invoke(router_prompt(hop, hops))))

    async def aroute(state: FloorState) -> Command[str]:
        assert decide is not None
        decision = await decide.ainvoke(router_prompt(state.get("hop", 0), hops))
        return Command(goto=destination(decision))

    builder = StateGraph(FloorState)
    if routed and asynchronous:
        builder.add_node("route", aroute, destinations=(*WORKER_NAMES, END))
    else:
        builder.add_node("route", route, destinations=(*WORKER_NAMES, END))

    def add_worker(name: str) -> None:
        def sent(state: FloorState) -> list[BaseMessage]:
            history = state.get("slots", {}).get(name, [])
            return [*history, HumanMessage(content=instructions(state.get("hop", 0) + 1))]

        def update(state: FloorState, out: Mapping[str, Any]) -> dict[str, Any]:
            return {
                "hop": state.get("hop", 0) + 1,
                "slots": {name: list(out["messages"])},
                "answers": [str(out["messages"][-1].content)],
            }

        def work(state: FloorState) -> dict[str, Any]:
            return update(state, agents[name].invoke({"messages": sent(state)}))

        async def awork(state: FloorState) -> dict[str, Any]:
            return update(state, await agents[name].ainvoke({"messages": sent(state)}))

        if asynchronous:
            builder.add_node(name, awork)
        else:
            builder.add_node(name, work)
        builder.add_edge(name, "route")

    for name in WORKER_NAMES:
        add_worker(name)
    builder.add_edge(START, "route")

    return Prepared(
        hops=hops,
        graph=builder.compile(checkpointer=checkpointer),
        supervisor=scripted_router,
        workers=scripted,
        check_final=_check_floor_answers,
    )


def build_function_floor(hops: int, checkpointer: BaseCheckpointSaver[Any]) -> Prepared:
    """A bare `StateGraph` loop running the function workers for the same hops.

    The floor of the function workload (`build_pro(hops, saver, None, by_function=True)`):
    a routing node sends hop k to `schedule(hops)[k]` (its own super-step, so a checkpoint
    lands between the decision and the hop, as in ours), and one plain node per worker
    builds the hop's `WorkerTask` from the worker's own history, calls the same function
    (`function_worker`), and keeps the prompt and the answer in the worker's slot and the
    answer in `answers`. Plain sync nodes: LangGraph runs them on the event loop under
    `ainvoke`, so one graph serves both drivers.
    """
    plan = schedule(hops)

    def floor_route(state: FloorState) -> Command[str]:
        hop = state.get("hop", 0)
        return Command(goto=plan[hop] if hop < hops else END)

    builder = StateGraph(FloorState)
    builder.add_node("route", floor_route, destinations=(*WORKER_NAMES, END))

    def add_worker(name: str) -> None:
        function = function_worker(name)

        def floor_hop(state: FloorState) -> dict[str, Any]:
            hop = state.get("hop", 0) + 1
            history = state.get("slots", {}).get(name, [])
            task = WorkerTask(
                worker=name, step=hop, task=TASK, instructions=instructions(hop), messages=history
            )
            answer = function(task)
            reply = AIMessage(content=answer, name=name)
            return {
                "hop": hop,
                "slots": {name: [*history, HumanMessage(content=task.prompt()), reply]},
                "answers": [answer],
            }

        builder.add_node(name, floor_hop)
        builder.add_edge(name, "route")

    for name in WORKER_NAMES:
        add_worker(name)
    builder.add_edge(START, "route")
    return Prepared(
        hops=hops,
        graph=builder.compile(checkpointer=checkpointer),
        supervisor=None,
        check_final=_check_floor_answers,
    )


def _check_floor_answers(final: Mapping[str, Any], hops: int) -> None:
    """Raise `WorkloadError` unless the floor's `answers` are the round-robin answers."""
    answers: list[str] = final.get("answers") or []
    _expect(len(answers) == hops, f"floor: {len(answers)} answers, expected {hops}")
    seen: dict[str, int] = {}
    for worker, answer in zip(schedule(hops), answers, strict=True):
        seen[worker] = seen.get(worker, 0) + 1
        _expect(
            answer == answer_text(worker, seen[worker]),
            f"floor: answer {sum(seen.values())} is not {worker}'s answer {seen[worker]}",
        )

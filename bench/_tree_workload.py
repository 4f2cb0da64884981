"""The scripted workloads of the tree benchmark (`bench/trees.py`), and their checks.

**Root prompt**: the same task ("an outage: page on-call, roll back, tell customers"),
done by one leaf worker in each of three domains (ops, eng, comms), with L leaf
workers in all (L/3 per domain), built three ways:

- `flat`: one of our supervisors over the L leaves; its scripted model routes to the
  three leaves, then FINISH;
- `tree`: our root over three domain workers (uncompiled supervisor graphs, each over its
  L/3 leaves); the root's model routes to the three domains, then FINISH; each domain's
  model routes to its leaf, then FINISH;
- `reference`: langgraph-supervisor's `create_supervisor` over L prebuilt agents (one per
  leaf, the same catalogue in its prompt), handing off to the same three leaves with
  its `transfer_to_<leaf>` tools, then replying.

Every model is a `ScriptedChatModel` and every leaf answers the same short text, so the
prompts differ only by what each graph shows its supervisor.

**Levels**: a chain of depth D (1 to 3): D = 1 is a root over one trivial function
leaf; D = 2 puts a domain between them; D = 3 two. The root's router sends H hops to its
one worker; each domain's router sends one hop to its child per visit and finishes
(every visit is the domain's next turn), so each of the H leaf hops goes through every
level. The floor is the same nesting in bare LangGraph: a `StateGraph` per level with a
routing node and a node that invokes the compiled child graph (a stateful subgraph,
`compile(checkpointer=True)`, like our uncompiled domains) or, at the bottom, calls the
same leaf function.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Annotated, Any, Literal, TypeAlias
from uuid import uuid4

from langchain_core.messages import AIMessage, HumanMessage, ToolCall
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command
from typing_extensions import TypedDict

from langgraph_supervisor_pro import FINISH, SupervisorView, Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro._supervisor import DEFAULT_SUPERVISOR_PROMPT
from langgraph_supervisor_pro.testing import ScriptedChatModel
from langgraph_supervisor_pro.types import route_decision_model

with warnings.catch_warnings():
    # langgraph-supervisor imports LangGraph's deprecated prebuilt agent at import time.
    warnings.simplefilter("ignore", DeprecationWarning)
    import langgraph_supervisor
    from langgraph.prebuilt import create_react_agent

Durability: TypeAlias = Literal["sync", "async", "exit"]


class TreeWorkloadError(RuntimeError):
    """A run did not do the scripted work."""


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise TreeWorkloadError(message)


# ------------------------------------------------------------------------ the catalogue

DOMAINS: tuple[tuple[str, str], ...] = (
    ("ops", "Operations: paging, incidents, rollbacks and infrastructure changes."),
    ("eng", "Engineering: code changes, deploys, tests and service ownership."),
    ("comms", "Communications: status pages, customer notices and internal updates."),
)
"""The three domains: (name, description). The descriptions do not depend on L."""

TASK = (
    "Checkout is failing in eu-west since the last deploy: page on-call, roll the deploy "
    "back, and post a customer status update."
)
ANSWER = "Done: the step is complete and verified."
FINAL_REPLY = "All three steps are done."
LEAF_DOMAIN_WIDTHS = (4, 8, 16)
"""Leaves per domain of the default runs: 12, 24 and 48 leaf workers."""


def leaf_name(domain: str, index: int) -> str:
    """The `index`-th leaf of `domain` (from 0)."""
    return f"{domain}_{index:02d}"


def leaf_description(domain: str, index: int) -> str:
    """A one-sentence description of about the length real ones have."""
    return (
        f"The {domain} specialist number {index}: handles one kind of {domain} request "
        "end to end and reports back what it did."
    )


def leaves(width: int) -> list[tuple[str, str]]:
    """Every leaf (name, description), domain by domain."""
    return [
        (leaf_name(domain, i), leaf_description(domain, i))
        for domain, _ in DOMAINS
        for i in range(width)
    ]


def targets() -> list[str]:
    """The leaves the task uses: the first of each domain."""
    return [leaf_name(domain, 0) for domain, _ in DOMAINS]


def catalogue(entries: Sequence[tuple[str, str]]) -> str:
    """One line per worker, as our supervisor's prompt shows them."""
    return "\n".join(f"- {name}: {description}" for name, description in entries)


def decisions(*names: str) -> list[dict[str, str]]:
    """Our supervisor's scripted decisions, then FINISH."""
    steps = [{"next": name, "instructions": f"Do your part of: {TASK}"} for name in names]
    return [*steps, {"next": FINISH, "instructions": ""}]


def leaf_function(task: WorkerTask) -> str:
    """Every leaf's work: a short answer."""
    return ANSWER


def schema_tokens(names: Sequence[str]) -> int:
    """Approximate tokens of our `RouteDecision` tool schema for these worker names."""
    tool = convert_to_openai_tool(route_decision_model(list(names)))
    return count_tokens_approximately([], tools=[tool])


def call_tokens(model: ScriptedChatModel) -> tuple[int, ...]:
    """`count_tokens_approximately` of each call's messages (system prompt included)."""
    return tuple(count_tokens_approximately(call.messages) for call in model.calls)


@dataclass(frozen=True)
class PromptRun:
    """What one prompt-size run measured."""

    shape: str
    leaves: int
    root: tuple[int, ...]
    """Tokens of each of the root supervisor's calls."""
    root_schema: int
    """Tokens of the tool schema(s) bound to each root call."""
    domains: tuple[int, ...] = ()
    """Tokens of every domain supervisor call (empty when there are no domains)."""

    @property
    def total(self) -> int:
        """Every supervisor call's tokens, all levels (schemas not counted)."""
        return sum(self.root) + sum(self.domains)


def _config() -> RunnableConfig:
    return {"configurable": {"thread_id": f"trees-{uuid4().hex[:12]}"}}


def _check_pro(final: Mapping[str, Any], expected: Sequence[str], label: str) -> None:
    ledger = final.get("ledger") or []
    _expect(final.get("status") == "done", f"{label}: ended {final.get('status')!r}")
    _expect(
        [(e["worker"], e["status"]) for e in ledger] == [(n, "success") for n in expected],
        f"{label}: ledger {[(e['worker'], e['status']) for e in ledger]}, expected {expected}",
    )


def run_flat(width: int, checkpointer: BaseCheckpointSaver[Any]) -> PromptRun:
    """One of our supervisors over all 3 x `width` leaves."""
    model = ScriptedChatModel(name="root", script=decisions(*targets()))
    workers = [
        Worker(name=name, description=description, agent=leaf_function)
        for name, description in leaves(width)
    ]
    app = create_supervisor(workers, model=model).compile(checkpointer=checkpointer)
    final = app.invoke({"messages": [HumanMessage(content=TASK)]}, _config())
    _check_pro(final, targets(), f"flat, {3 * width} leaves")
    names = [name for name, _ in leaves(width)]
    return PromptRun("flat", 3 * width, call_tokens(model), schema_tokens(names))


def run_tree(width: int, checkpointer: BaseCheckpointSaver[Any]) -> PromptRun:
    """Our root over three domains of `width` leaves each."""
    domain_models: list[ScriptedChatModel] = []
    domains: list[Worker] = []
    for domain, description in DOMAINS:
        model = ScriptedChatModel(name=domain, script=decisions(leaf_name(domain, 0)))
        domain_models.append(model)
        graph = create_supervisor(
            [
                Worker(
                    name=leaf_name(domain, i),
                    description=leaf_description(domain, i),
                    agent=leaf_function,
                )
                for i in range(width)
            ],
            model=model,
            name=domain,
        )
        domains.append(Worker(name=domain, description=description, agent=graph))
    root = ScriptedChatModel(name="root", script=decisions(*[d for d, _ in DOMAINS]))
    app = create_supervisor(domains, model=root).compile(checkpointer=checkpointer)
    final = app.invoke({"messages": [HumanMessage(content=TASK)]}, _config())
    _check_pro(final, [d for d, _ in DOMAINS], f"tree, {3 * width} leaves")
    for model in domain_models:
        _expect(len(model.calls) == 2, f"tree: {model.name} decided {len(model.calls)} times")
    return PromptRun(
        "tree",
        3 * width,
        call_tokens(root),
        schema_tokens([d for d, _ in DOMAINS]),
        tuple(t for model in domain_models for t in call_tokens(model)),
    )


def reference_prompt(entries: Sequence[tuple[str, str]]) -> str:
    """The reference supervisor's system prompt: our instructions and the same catalogue."""
    return (
        f"{DEFAULT_SUPERVISOR_PROMPT}\n\nWorkers:\n{catalogue(entries)}\n\n"
        "Hand the task to one worker at a time with its transfer_to_<worker> tool; "
        "when the task is complete, reply with the final answer."
    )


def run_reference(width: int, checkpointer: BaseCheckpointSaver[Any]) -> PromptRun:
    """langgraph-supervisor over 3 x `width` prebuilt agents, the three hand-offs, a reply."""
    entries = leaves(width)
    used = set(targets())
    agents: list[Pregel[Any, Any, Any, Any]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name, _ in entries:
            model = ScriptedChatModel(name=name, script=[ANSWER] if name in used else [])
            agents.append(create_react_agent(model, tools=[], name=name))
        handoffs = [
            AIMessage(
                content="",
                tool_calls=[ToolCall(name=f"transfer_to_{name}", args={}, id=f"handoff_{i}")],
            )
            for i, name in enumerate(targets())
        ]
        supervisor = ScriptedChatModel(name="supervisor", script=[*handoffs, FINAL_REPLY])
        app = langgraph_supervisor.create_supervisor(
            agents, model=supervisor, prompt=reference_prompt(entries), output_mode="last_message"
        ).compile(checkpointer=checkpointer)
        final = app.invoke({"messages": [HumanMessage(content=TASK)]}, _config())
    messages = final["messages"]
    answers = [m.name for m in messages if isinstance(m, AIMessage) and m.content == ANSWER]
    _expect(answers == targets(), f"reference: answers from {answers}, expected {targets()}")
    _expect(final["messages"][-1].content == FINAL_REPLY, "reference: no final reply")
    tools = [langgraph_supervisor.create_handoff_tool(agent_name=n) for n, _ in entries]
    return PromptRun(
        "reference",
        3 * width,
        call_tokens(supervisor),
        count_tokens_approximately([], tools=list(tools)),
    )


# --------------------------------------------------------------------------- the levels


@dataclass
class LevelRun:
    """A compiled chain of one depth, ready for exactly one run."""

    depth: int
    hops: int
    graph: Pregel[Any, Any, Any, Any]
    payload: dict[str, Any]
    check: Callable[[Mapping[str, Any]], None]
    leaf_calls: list[int] = field(default_factory=list)

    def run(self, durability: Durability | None = None) -> float:
        """Invoke once on a fresh thread; the wall-clock seconds, after the run is verified."""
        config = _config()
        start = perf_counter()
        final = self.graph.invoke(self.payload, config, durability=durability)
        seconds = perf_counter() - start
        self.check(final)
        _expect(
            len(self.leaf_calls) == self.hops,
            f"depth {self.depth}: the leaf ran {len(self.leaf_calls)} times, expected {self.hops}",
        )
        return seconds


def _counting_leaf(calls: list[int]) -> Callable[[WorkerTask], str]:
    def leaf(task: WorkerTask) -> str:
        calls.append(1)
        return leaf_function(task)

    return leaf


def _once(child: str) -> Callable[[SupervisorView], str]:
    """A domain's router: one hop to its child per visit (turn), then FINISH."""

    def router(view: SupervisorView) -> str:
        return FINISH if view.ledger else child

    return router


def _times(child: str, hops: int) -> Callable[[SupervisorView], str]:
    """The root's router: `hops` hops to its child, then FINISH."""

    def router(view: SupervisorView) -> str:
        return FINISH if len(view.ledger) >= hops else child

    return router


def build_ours(depth: int, hops: int, checkpointer: BaseCheckpointSaver[Any]) -> LevelRun:
    """Our chain: root -> (depth - 1) domains -> one trivial leaf."""
    calls: list[int] = []
    worker = Worker(name="leaf", description="Does the work.", agent=_counting_leaf(calls))
    for level in range(depth - 1, 0, -1):
        name = f"level{level}"
        domain = create_supervisor([worker], router=_once(worker.name), name=name)
        worker = Worker(name=name, description=f"The domain at level {level}.", agent=domain)
    app = create_supervisor([worker], router=_times(worker.name, hops), max_steps=hops)

    def check(final: Mapping[str, Any]) -> None:
        _check_pro(final, [worker.name] * hops, f"ours, depth {depth}")

    return LevelRun(
        depth,
        hops,
        app.compile(checkpointer=checkpointer),
        {"messages": [HumanMessage(content=TASK)]},
        check,
        calls,
    )


class FloorState(TypedDict, total=False):
    """A floor level's state: hops asked for, hops done, the last answer."""

    todo: Annotated[int, operator.add]
    done: Annotated[int, operator.add]
    answer: str


def _floor_level(
    down: Callable[[FloorState], dict[str, Any]],
) -> StateGraph[Any, Any, Any, Any]:
    """One level: `route` sends to `down` until `done` reaches `todo`, then ends."""

    def route(state: FloorState) -> Command[str]:
        return Command(goto="down" if state.get("done", 0) < state.get("todo", 0) else END)

    def work(state: FloorState) -> dict[str, Any]:
        return down(state)

    builder = StateGraph(FloorState)
    builder.add_node("route", route, destinations=("down", END))
    builder.add_node("down", work)
    builder.add_edge(START, "route")
    builder.add_edge("down", "route")
    return builder


def build_floor(depth: int, hops: int, checkpointer: BaseCheckpointSaver[Any]) -> LevelRun:
    """The same nesting in bare LangGraph: a loop per level, each invoking the next."""
    calls: list[int] = []
    leaf = _counting_leaf(calls)
    task = WorkerTask(worker="leaf", step=1, task=TASK, instructions="")

    def bottom(state: FloorState) -> dict[str, Any]:
        return {"done": 1, "answer": leaf(task)}

    builder = _floor_level(bottom)
    for _ in range(depth - 1):
        child = builder.compile(checkpointer=True)

        def down(state: FloorState, child: Pregel[Any, Any, Any, Any] = child) -> dict[str, Any]:
            # The node's config reaches the child through LangGraph's context, so it runs
            # as a subgraph of this node (its own checkpoint namespace), like our domains.
            out = child.invoke({"todo": 1})
            return {"done": 1, "answer": out["answer"]}

        builder = _floor_level(down)

    def check(final: Mapping[str, Any]) -> None:
        _expect(
            final.get("done") == hops and final.get("answer") == ANSWER,
            f"floor, depth {depth}: done={final.get('done')}, answer={final.get('answer')!r}",
        )

    return LevelRun(
        depth, hops, builder.compile(checkpointer=checkpointer), {"todo": hops}, check, calls
    )

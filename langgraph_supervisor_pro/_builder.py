"""`create_supervisor`: assembles the supervisor, worker and synthesis nodes into a StateGraph."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, cast

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.pregel import Pregel
from langgraph.types import RetryPolicy
from typing_extensions import TypedDict

from langgraph_supervisor_pro._budget import Budget, looser, register_budget, registered_budget
from langgraph_supervisor_pro._contracts import FINISH, route_decision_model
from langgraph_supervisor_pro._graph.budgets import Budgets
from langgraph_supervisor_pro._graph.compaction_node import CompactionNode
from langgraph_supervisor_pro._graph.judge_node import JudgeNode, refuse_same_model
from langgraph_supervisor_pro._graph.names import (
    COMPACTION_NODE,
    JUDGE_NODE,
    REVIEW_NODE,
    SUPERVISOR_NODE,
    SYNTHESIS_NODE,
)
from langgraph_supervisor_pro._graph.review_node import DispatchReviewNode
from langgraph_supervisor_pro._graph.supervisor_node import SupervisorNode
from langgraph_supervisor_pro._graph.trace import NODE_TRACE_POLICY, node_metadata
from langgraph_supervisor_pro._graph.usage import UsageMeter
from langgraph_supervisor_pro._graph.worker_node import WorkerNode
from langgraph_supervisor_pro._internal.checks import check_retry_policy, check_type, is_count
from langgraph_supervisor_pro._internal.model_identity import (
    ModelUse,
    agent_models,
    chat_models,
    fingerprint,
    register_models,
)
from langgraph_supervisor_pro._state import SupervisorInput, SupervisorState
from langgraph_supervisor_pro._supervisor import Router
from langgraph_supervisor_pro._synthesis import SynthesisNode, Synthesizer
from langgraph_supervisor_pro._workers import Worker
from langgraph_supervisor_pro.compaction._compactor import Compaction, Compactor
from langgraph_supervisor_pro.compaction._middleware import CompactionMiddleware
from langgraph_supervisor_pro.errors import UndeclaredRiskWarning
from langgraph_supervisor_pro.evals._judge import OnlineJudge
from langgraph_supervisor_pro.review._guard import ToolGuard
from langgraph_supervisor_pro.review._policy import ReviewPolicy
from langgraph_supervisor_pro.review._risks import undeclared_tools

SupervisorGraph = StateGraph[SupervisorState, Any, SupervisorInput, SupervisorState]
"""The type `create_supervisor` returns: an uncompiled StateGraph over `SupervisorState`."""


def create_supervisor(
    workers: Sequence[Worker],
    *,
    model: BaseChatModel | Runnable[Any, Any] | None = None,
    router: Router | None = None,
    prompt: str | None = None,
    max_steps: int = 20,
    fallback: str | None = None,
    synthesizer: Synthesizer | None = None,
    name: str = SUPERVISOR_NODE,
    ledger_window: int = 6,
    ping_pong_window: int | None = 4,
    compaction: Compaction | None = None,
    review: ReviewPolicy | None = None,
    supervisor_retry: RetryPolicy | None = None,
    parallel: bool = False,
    context_schema: type[Any] | None = None,
    judge: OnlineJudge | None = None,
    budget: Budget | None = None,
) -> SupervisorGraph:
    """Build a supervisor/worker graph: the supervisor routes, workers work, synthesis answers.

    Args:
        workers: The workers the supervisor can route to (at least one; unique names).
        model: A chat model, asked for this graph's `RouteDecision` (structured output).
        router: A deterministic function of `SupervisorView` that decides before the model:
            a worker name, "FINISH", a RouteDecision, or None to defer to the model.
        prompt: Replaces the instructions at the top of the supervisor's system prompt;
            the worker catalogue and the answer format are always appended.
        max_steps: The hop budget per run (turn); past it the run halts with `max_steps`.
        fallback: A worker that takes over when the supervisor's decision is still invalid
            after one re-ask; without one, the run halts with `invalid_route`.
        synthesizer: Writes the final answer: a chat model, or a function of
            `SynthesisInput` (default: the last successful worker's full result).
        name: The supervisor node's name (and the final answer message's `name`).
        ledger_window: How many recent ledger lines each decision shows.
        ping_pong_window: Halt when this many hops in a row would alternate between the
            same two workers with no success; None disables the check.
        compaction: How contexts are kept inside their windows (the default for every
            worker, and the budget of the supervisor's view).
        review: Autonomy tier, tool risk levels, confirmation and review deadlines
            (default: `ReviewPolicy()`, the supervised tier; `ReviewPolicy.from_env()`
            reads the deployment's). Workers built from `model=` get a `ToolGuard`.
        supervisor_retry: How the supervisor and synthesis nodes retry a failed call
            (default: 3 and 2 attempts, with LangGraph's default backoff).
        parallel: Let one decision name several workers, each with its own
            instructions; they run at the same time, each its own hop, and the
            supervisor decides again when all have finished.
        context_schema: The type of the run's runtime context, as for `StateGraph`: the
            place for credentials, which LangGraph neither checkpoints nor traces.
        judge: An online judge (`evals.OnlineJudge`) that scores a sample of the turns
            that end `done`, queueing low scores for human review; its model may not be
            any model of the graph.
        budget: Limits on tokens and cost per turn or thread, with the price table that
            turns each call's usage into cost (`Budget`); past the limit the run halts
            with `budget_exceeded`. Every call's usage is recorded in `usage` either way.

    Returns:
        An uncompiled `StateGraph`; compile it with your checkpointer.

    Raises:
        ValueError: A bad configuration, naming the field and the fix.
        TypeError: A value of the wrong type (a non-Worker, an unsupported model).

    Example:
        ```python
        from langgraph_supervisor_pro import Worker, create_supervisor
        graph = create_supervisor(
            [Worker(name="researcher", description="Finds facts.", agent=research),
             Worker(name="writer", description="Writes the report.", agent=writer)],
            model=chat_model,
        ).compile(checkpointer=checkpointer)
        graph.invoke({"messages": [("user", "Report on X")]},
                     {"configurable": {"thread_id": "1"}})["status"]
        # 'done'
        ```
    """
    if isinstance(workers, Worker | str) or not isinstance(workers, Sequence):
        raise TypeError("workers: give a list of Worker objects")
    workers = list(workers)
    if not workers:
        raise ValueError(
            "workers: give at least one Worker; a supervisor needs someone to route to"
        )
    for index, worker in enumerate(workers):
        if not isinstance(worker, Worker):
            raise TypeError(
                f"workers[{index}]: got {type(worker).__name__}; wrap it as "
                "Worker(name=..., description=..., agent=...)"
            )
    names = [w.name for w in workers]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"workers: duplicate worker names {duplicates}; names must be unique")
    steps = (SYNTHESIS_NODE, REVIEW_NODE, COMPACTION_NODE)
    reserved = {name, *steps, START, END, FINISH}
    clash = sorted(set(names) & reserved)
    if clash:
        raise ValueError(
            f"workers: the names {clash} are taken by the graph itself (the supervisor node "
            f"{name!r} and the steps {list(steps)}); rename those workers"
        )
    if not isinstance(name, str) or not name.strip() or name in steps:
        raise ValueError(f"name: {name!r} cannot name the supervisor node; use e.g. 'supervisor'")
    if model is None and router is None:
        raise ValueError("model: give a chat model to route with, or a router function (or both)")
    if router is not None and not callable(router):
        raise TypeError(f"router: got {type(router).__name__}; give a function of SupervisorView")
    if not is_count(max_steps):
        raise ValueError(f"max_steps: got {max_steps!r}; give the hop budget as an integer >= 1")
    if fallback is not None and fallback not in names:
        raise ValueError(
            f"fallback: {fallback!r} is not one of the workers {names}; name one of them or None"
        )
    if not is_count(ledger_window):
        raise ValueError(f"ledger_window: got {ledger_window!r}; give an integer >= 1")
    if ping_pong_window is not None and not is_count(ping_pong_window, minimum=3):
        raise ValueError(
            f"ping_pong_window: got {ping_pong_window!r}; give an integer >= 3 "
            "(hops in an A, B, A... run), or None to disable ping-pong detection"
        )
    for worker in workers:
        unknown = sorted(set(worker.reads) - set(names))
        if unknown:
            raise ValueError(
                f"Worker.reads: worker {worker.name!r} reads {unknown}, which are not workers "
                f"of this supervisor ({names})"
            )
        if isinstance(worker.fallback, str) and worker.fallback not in names:
            raise ValueError(
                f"Worker.fallback: worker {worker.name!r} falls back to {worker.fallback!r}, "
                f"which is not a worker of this supervisor ({names}); name one of them, or "
                "give a function"
            )
    check_type(compaction, Compaction | None, "compaction", "a Compaction(...) or None")
    retry = "a langgraph.types.RetryPolicy(...) or None for the default"
    check_type(supervisor_retry, RetryPolicy | None, "supervisor_retry", retry)
    if supervisor_retry is not None:
        check_retry_policy(supervisor_retry, "supervisor_retry")
    check_type(parallel, bool, "parallel", "True or False")
    context = (
        "a class (a dataclass, pydantic model or TypedDict) describing the runtime context, or None"
    )
    check_type(context_schema, type | None, "context_schema", context)
    uses = _model_uses(
        workers, model=model, router=router, synthesizer=synthesizer, compaction=compaction
    )
    judge_node = _judge_node(judge, workers, uses, name, budget)
    judged = (ModelUse("the online judge of this graph", judge.model),) if judge else ()
    budgets = _budgets(budget, workers, (*uses, *judged))
    policy = review if review is not None else ReviewPolicy()
    compactors = _compactors(workers, compaction)
    agents = {w.name: _agent_of(w, policy, compactors.get(w.name), name) for w in workers}
    by_name = {w.name: w for w in workers}
    compaction_node = (
        CompactionNode(
            compactors, reads={w.name: w.reads for w in workers}, supervisor=name, prices=budget
        )
        if compactors
        else None
    )
    supervisor = SupervisorNode(
        name=name,
        workers=[(w.name, w.description, w.max_visits) for w in workers],
        breakers={w.name: w.breaker for w in workers if w.breaker is not None},
        fallbacks=frozenset(w.name for w in workers if w.fallback is not None),
        decision_model=route_decision_model(names, parallel=parallel),
        model=model,
        router=router,
        prompt=prompt,
        max_steps=max_steps,
        fallback=fallback,
        ledger_window=ledger_window,
        ping_pong_window=ping_pong_window,
        meter=_meter(compaction, model if isinstance(model, BaseChatModel) else None),
        view_trigger=compaction.trigger if compaction is not None else 0.7,
        compaction=compaction_node,
        policy=policy,
        floor=review.tier if review is not None else None,
        budgets=budgets,
    )
    review_node = DispatchReviewNode(
        policy=policy,
        workers=tuple(names),
        supervisor=name,
        next_step=supervisor.next_step,
    )
    synth_model = synthesizer if isinstance(synthesizer, BaseChatModel) else None
    synthesis = SynthesisNode(
        synthesizer,
        answer_name=name,
        meter=_meter(compaction, synth_model) if synth_model is not None else None,
        trigger=compaction.trigger if compaction is not None else 0.7,
        prices=budget,
    )

    graph: SupervisorGraph = StateGraph(
        SupervisorState, context_schema=context_schema, input_schema=SupervisorInput
    )
    # LangGraph draws no edge to or from an error handler's node, and a drawing with more
    # than one start or end is never expanded inside its parent (`xray`): the edges and
    # `destinations` below are for drawings only.
    supervisor_handler = _error_handler_node(name)
    synthesis_handler = _error_handler_node(SYNTHESIS_NODE)
    compacting = [COMPACTION_NODE] if compaction_node is not None else []
    graph.add_node(
        name,
        supervisor.runnable(),
        destinations=(*names, REVIEW_NODE, *compacting, SYNTHESIS_NODE, supervisor_handler),
        retry_policy=supervisor_retry or RetryPolicy(max_attempts=3),
        error_handler=cast(Any, supervisor.on_error),  # `NodeError` is injected by annotation
        metadata=node_metadata("supervisor"),
        trace_policy=NODE_TRACE_POLICY,
    )
    graph.add_node(
        REVIEW_NODE,
        review_node.runnable(),
        destinations=(*names, name, *compacting),
        metadata=node_metadata("review"),
        trace_policy=NODE_TRACE_POLICY,
    )
    if compaction_node is not None:
        graph.add_node(
            COMPACTION_NODE,
            compaction_node.runnable(),
            destinations=tuple(names),
            retry_policy=RetryPolicy(max_attempts=3),
            metadata=node_metadata("compaction"),
            trace_policy=NODE_TRACE_POLICY,
        )
    for worker in workers:
        c = compactors.get(worker.name)
        backup = worker.fallback if isinstance(worker.fallback, str) else None
        node = WorkerNode(
            worker,
            supervisor=name,
            meter=UsageMeter(counter=c.counter, window=c.window) if c else None,
            agent=agents[worker.name],
            fallback=(by_name[backup], agents[backup]) if backup is not None else None,
            summarizer_meter=(
                UsageMeter(counter=c.summarizer_counter, window=c.summarizer_window) if c else None
            ),
            budgets=budgets,
        )
        graph.add_node(
            worker.name,
            node.runnable(),  # retries and failed hops are handled inside (see WorkerNode)
            metadata=node_metadata("worker", worker.name),
            trace_policy=NODE_TRACE_POLICY,
        )
        graph.add_edge(worker.name, name)
    graph.add_node(
        SYNTHESIS_NODE,
        synthesis.runnable(),
        destinations=(synthesis_handler,) if judge_node is not None else (END, synthesis_handler),
        retry_policy=supervisor_retry or RetryPolicy(max_attempts=2),
        error_handler=cast(Any, synthesis.on_error),
        metadata=node_metadata("synthesis"),
        trace_policy=NODE_TRACE_POLICY,
    )
    if judge_node is not None:
        graph.add_node(
            JUDGE_NODE,
            judge_node.runnable(),  # never raises: a judge failure is recorded in its verdict
            metadata=node_metadata("judge"),
            trace_policy=NODE_TRACE_POLICY,
        )
        graph.add_conditional_edges(SYNTHESIS_NODE, judge_node.route, [JUDGE_NODE, END])
        graph.add_edge(JUDGE_NODE, END)
    else:
        graph.add_edge(SYNTHESIS_NODE, END)
    graph.add_edge(START, name)
    graph.add_edge(supervisor_handler, SYNTHESIS_NODE)
    graph.add_edge(synthesis_handler, END)
    register_models(graph, (*uses, *judged))
    if budget is not None:
        register_budget(graph, budget)
    return graph


def _model_uses(
    workers: Sequence[Worker],
    *,
    model: object,
    router: object,
    synthesizer: object,
    compaction: Compaction | None,
) -> tuple[ModelUse, ...]:
    """Every chat model the graph uses that can be seen, with the place that uses it."""
    uses: list[ModelUse] = []

    def add(place: str, obj: object) -> None:
        uses.extend(ModelUse(place, found) for found in chat_models(obj))

    add("the supervisor's model (create_supervisor(model=...))", model)
    add("the router (create_supervisor(router=...))", router)
    add("the synthesizer (create_supervisor(synthesizer=...))", synthesizer)
    if compaction is not None:
        add("the compaction summarizer (create_supervisor(compaction=...))", compaction.summarizer)
    for worker in workers:
        add(f"worker {worker.name!r}'s model (Worker.model)", worker.model)
        add(f"worker {worker.name!r}'s checker (Worker.verify)", worker.verify)
        if not isinstance(worker.fallback, str):
            add(f"worker {worker.name!r}'s fallback (Worker.fallback)", worker.fallback)
        if worker.compaction is not None:
            add(
                f"worker {worker.name!r}'s compaction summarizer (Worker.compaction)",
                worker.compaction.summarizer,
            )
        if worker.agent is not None:
            uses.extend(agent_models(worker.agent, worker.name))
    return tuple(uses)


def _judge_node(
    judge: OnlineJudge | None,
    workers: Sequence[Worker],
    uses: Sequence[ModelUse],
    name: str,
    budget: Budget | None,
) -> JudgeNode | None:
    """The judge step, after checking the judge is none of the graph's own models."""
    if judge is None:
        return None
    check_type(
        judge, OnlineJudge, "judge", "an OnlineJudge(model=..., sample=..., threshold=...) or None"
    )
    if name == JUDGE_NODE or any(w.name == JUDGE_NODE for w in workers):
        raise ValueError(
            f"name: {JUDGE_NODE!r} is taken by the judge step when judge= is given; rename "
            "the worker (or the supervisor node) that uses it"
        )
    refuse_same_model(judge, uses)
    return JudgeNode(judge, graph=name, prices=budget)


def _budgets(budget: Budget | None, workers: Sequence[Worker], uses: Sequence[ModelUse]) -> Budgets:
    """The graph's budgets, once its prices name its models and nothing below is looser."""
    check_type(budget, Budget | None, "budget", "a Budget(...) or None")
    if budget is not None:
        _check_prices(budget, uses)
    for worker in workers:
        own = worker.budget
        domain = registered_budget(worker.agent) if worker.agent is not None else None
        for where, child in (
            (f"Worker.budget: worker {worker.name!r}", own),
            (f"budget: the domain {worker.name!r} (its create_supervisor(budget=...))", domain),
        ):
            for parent, whose in ((budget, "the supervisor's"), (own, "its worker's")):
                if child is None or parent is None or child is parent:
                    continue
                why = looser(child, parent)
                if why is not None:
                    raise ValueError(
                        f"{where} is looser than {whose} budget: {why}; a budget below "
                        "another may only be stricter (lower limits, the same or shorter "
                        "scope, an earlier warning)"
                    )
    return Budgets(budget, {w.name: w.budget for w in workers if w.budget is not None})


def _check_prices(budget: Budget, uses: Sequence[ModelUse]) -> None:
    """Every price names a model of the graph; with a cost limit, every model has a price."""
    marks = {use.place: fingerprint(use.model) for use in uses}
    known = {key for mark in marks.values() if mark for key in (mark[1], "/".join(mark))}
    unknown = sorted(set(budget.table) - known)
    if unknown:
        names = sorted({mark[1] for mark in marks.values() if mark}) or ["(none found)"]
        raise ValueError(
            f"Budget.prices: {unknown} name no model of this graph (its models: {names}); "
            "fix the names (a model's `model_name`, or `provider/model_name`) or remove them"
        )
    if budget.max_cost is None:
        return
    for place, mark in marks.items():
        if mark is None or budget.price(*mark) is None:
            shown = "/".join(mark) if mark else "a model that does not name itself"
            raise ValueError(
                f"Budget.prices: {place} is {shown}, which has no price; with max_cost every "
                "model needs one (add it to prices, or limit max_tokens only)"
            )


def _error_handler_node(node: str) -> str:
    """The name LangGraph gives the node it adds for `node`'s `error_handler` (probed)."""
    probe: StateGraph[_Probe, None, _Probe, _Probe] = StateGraph(_Probe)
    probe.add_node(node, _no_update, error_handler=_no_update)
    (handler,) = set(probe.nodes) - {node}
    return handler


class _Probe(TypedDict):
    value: int


def _no_update(state: _Probe) -> dict[str, Any]:
    return {}


def _meter(compaction: Compaction | None, model: BaseChatModel | None) -> UsageMeter | None:
    """How calls of `model` are measured, when compaction (and so a window) is configured."""
    if compaction is None:
        return None
    return UsageMeter(counter=compaction.counter(model), window=compaction.window(model))


def _compactors(workers: Sequence[Worker], default: Compaction | None) -> dict[str, Compactor]:
    """One compactor per worker that compacts; the window must be known for each."""
    compactors: dict[str, Compactor] = {}
    for worker in workers:
        config = worker.compaction or default
        if config is None:
            continue
        try:
            # A worker built from a model gets that model's window (its profile).
            compactors[worker.name] = config.compactor(worker.model)
        except ValueError as exc:
            raise ValueError(
                f"compaction: worker {worker.name!r} has no known context window ({exc}); "
                "give it Worker(compaction=Compaction(model=<its chat model>, ...)) or set "
                "max_context_tokens"
            ) from exc
    return compactors


def _agent_of(
    worker: Worker, policy: ReviewPolicy, compactor: Compactor | None, supervisor: str
) -> Any:
    """The worker's agent: its own, or a guarded (and compacting) `create_agent` of its model.

    Also checks least privilege: a compiled agent may hold no tool outside the allowlist,
    and tools with no declared risk level are warned of (`UndeclaredRiskWarning`).
    """
    mapping = {**worker.risks, **policy.risks}
    if worker.tools is not None and (undeclared := undeclared_tools(worker.tools, mapping)):
        warnings.warn(
            UndeclaredRiskWarning(
                f"worker {worker.name!r}: tools {undeclared} have no declared risk level "
                "and are treated as high risk (fail closed); declare them with @risk(...), "
                "Worker(risks=...) or the policy file"
            ),
            stacklevel=3,
        )
    if worker.model is not None:
        guard = ToolGuard(
            worker=worker.name, tools=worker.tools or (), risks=worker.risks, policy=policy
        )
        middleware: list[Any] = [guard]
        if compactor is not None:
            middleware.append(CompactionMiddleware(compactor, supervisor=supervisor))
        return create_agent(
            worker.model,
            tools=[t for t in worker.tools or () if not isinstance(t, str)],
            system_prompt=worker.prompt,
            middleware=middleware,
            name=worker.name,
        )
    agent = worker.agent
    if worker.tools is not None and isinstance(agent, Pregel):
        extra = sorted(_graph_tools(agent) - set(worker.tool_names))
        if extra:
            raise ValueError(
                f"Worker.tools: worker {worker.name!r}'s agent holds tools outside its "
                f"allowlist: {extra}; remove them from the agent or add them to `tools`"
            )
    return agent


def _graph_tools(agent: Pregel[Any, Any, Any, Any]) -> set[str]:
    """The tool names of every ToolNode in a compiled graph."""
    bounds = (getattr(node, "bound", None) for node in agent.nodes.values())
    return {name for bound in bounds if isinstance(bound, ToolNode) for name in bound.tools_by_name}

"""Realistic runs for the metrics tests: real graphs, scripted or offline models, one saver.

`record(saver)` writes these threads, each with `graph_id` in its checkpoints' metadata:

- `desk` (graph `desk`, the support_desk template's offline graph, every turn of its demo
  conversation): a refund reviewed and approved by alice 30 s after the run paused on it,
  a tool call the allowlist refuses, a compaction inside billing's hop;
- `late` (graph `desk`, its first turn): the refund review approved 5 s after its deadline;
- `waiting` (graph `desk`, its first turn): paused on the refund review (pending);
- `escalated` (graph `desk`, its first turn, with a policy that escalates to `leads`): the
  sweep escalates the refund review past its deadline, carol approves it 10 s after that
  first deadline;
- `retry` (graph `team`): flaky fails, is sent again and succeeds, then writer: done;
- `loop` (graph `team`): the router keeps sending looper until `max_steps=3`: halted;
- `broken` (graph `team`): the router raises: failed with `supervisor_error`;
- `tree` (graph `tree`): root -> ops -> incident -> pager, and ops -> notes failing once.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, RetryPolicy

from langgraph_supervisor_pro import SupervisorView, Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro.cli._demo import _import, load_desk
from langgraph_supervisor_pro.persistence._effects import effect_key
from langgraph_supervisor_pro.review._desk import list_reviews, sweep_reviews

NO_WAIT = RetryPolicy(max_attempts=1)


@dataclass(frozen=True)
class Recorded:
    """What the tests compare the metrics with: the graphs' own final states."""

    states: dict[str, dict[str, Any]]
    """Each thread's final values, read through its graph (`get_state`)."""
    review_seconds: dict[str, float]
    """Each answered review's time from its pause to its answer, by thread."""


def config(thread: str, graph: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "metadata": {"graph_id": graph}}


def _paused_at(saver: BaseCheckpointSaver[Any], thread: str) -> tuple[datetime, datetime]:
    """When the thread's one pending review paused it, and the review's deadline."""
    (review,) = [r for r in list_reviews(saver) if r.thread_id == thread]
    item = saver.get_tuple(
        {
            "configurable": {
                "thread_id": thread,
                "checkpoint_ns": "",
                "checkpoint_id": review.checkpoint_id,
            }
        }
    )
    assert item is not None and review.deadline is not None
    return datetime.fromisoformat(item.checkpoint["ts"]), review.deadline


def _desk(
    saver: BaseCheckpointSaver[Any], states: dict[str, Any], seconds: dict[str, float]
) -> None:
    desk = load_desk()
    graph = desk.compile(saver)

    def answer(thread: str, late: bool) -> Any:
        paused, deadline = _paused_at(saver, thread)
        at = deadline + timedelta(seconds=5) if late else paused + timedelta(seconds=30)
        seconds[thread] = (at - paused).total_seconds()
        resume = {
            "decisions": [{"type": "approve"}],
            "reviewer": "alice",
            "answered_at": at.isoformat(),
        }
        return graph.invoke(Command(resume=resume), config(thread, "desk"))

    for turn, text in enumerate(desk.conversation):
        out = graph.invoke({"messages": [HumanMessage(text)]}, config("desk", "desk"))
        if "__interrupt__" in out:
            out = answer("desk", late=False)
            assert "__interrupt__" not in out, turn
    out = graph.invoke({"messages": [HumanMessage(desk.conversation[0])]}, config("late", "desk"))
    assert "__interrupt__" in out
    answer("late", late=True)
    out = graph.invoke(
        {"messages": [HumanMessage(desk.conversation[0])]}, config("waiting", "desk")
    )
    assert "__interrupt__" in out
    for thread in ("desk", "late", "waiting"):
        states[thread] = dict(graph.get_state(config(thread, "desk")).values)
    with tempfile.TemporaryDirectory() as folder:
        policy = Path(folder) / "policy.toml"
        policy.write_text('reviewers = "support"\non_timeout = "escalate"\nescalate_to = "leads"\n')
        module = _import(desk.source)
        escalating = module.build_graph(
            {"LGSP_AUTONOMY": "supervised", "LGSP_POLICY_FILE": str(policy)}
        ).compile(checkpointer=saver)
    where = config("escalated", "desk")
    out = escalating.invoke({"messages": [HumanMessage(desk.conversation[0])]}, where)
    assert "__interrupt__" in out
    paused, deadline = _paused_at(saver, "escalated")
    (swept,) = sweep_reviews(
        escalating, saver, now=deadline + timedelta(seconds=1), thread_ids=["escalated"]
    )
    assert swept.action == "escalate", swept
    at = deadline + timedelta(seconds=10)
    seconds["escalated"] = (at - paused).total_seconds()
    resume = {
        "decisions": [{"type": "approve"}],
        "reviewer": "carol",
        "answered_at": at.isoformat(),
    }
    out = escalating.invoke(Command(resume=resume), where)
    assert "__interrupt__" not in out
    states["escalated"] = dict(escalating.get_state(where).values)


def _leaf(name: str, fail_first: bool = False) -> Worker:
    calls: list[str] = []

    def work(task: WorkerTask) -> str:
        calls.append(task.instructions)
        if fail_first and len(calls) == 1:
            raise RuntimeError(f"{name} is down")
        return f"{name} handled it."

    return Worker(name=name, description=f"The {name} specialist.", agent=work, retry=NO_WAIT)


def _routes(*names: str):
    def router(view: SupervisorView) -> str:
        return names[len(view.ledger)] if len(view.ledger) < len(names) else "FINISH"

    return router


def _team(saver: BaseCheckpointSaver[Any], states: dict[str, Any]) -> None:
    def raising(view: SupervisorView) -> str:
        raise RuntimeError("routing table missing")

    runs = {
        "retry": create_supervisor(
            [_leaf("flaky", fail_first=True), _leaf("writer")],
            router=_routes("flaky", "flaky", "writer"),
        ),
        "loop": create_supervisor(
            [_leaf("looper"), _leaf("writer")], router=lambda view: "looper", max_steps=3
        ),
        "broken": create_supervisor([_leaf("writer")], router=raising, supervisor_retry=NO_WAIT),
    }
    for thread, builder in runs.items():
        graph = builder.compile(checkpointer=saver)
        graph.invoke({"messages": [("user", f"Task {thread}")]}, config(thread, "team"))
        states[thread] = dict(graph.get_state(config(thread, "team")).values)


def _tree(saver: BaseCheckpointSaver[Any], states: dict[str, Any]) -> None:
    incident = create_supervisor([_leaf("pager")], router=_routes("pager"), name="incident")
    ops = create_supervisor(
        [
            Worker(name="incident", description="Handles incidents.", agent=incident),
            _leaf("notes", fail_first=True),
        ],
        router=_routes("incident", "notes", "notes"),
        name="ops",
    )
    root = create_supervisor(
        [Worker(name="ops", description="Operations.", agent=ops)], router=_routes("ops")
    )
    graph = root.compile(checkpointer=saver)
    graph.invoke({"messages": [("user", "The database is down")]}, config("tree", "tree"))
    states["tree"] = dict(graph.get_state(config("tree", "tree")).values)


def record(saver: BaseCheckpointSaver[Any]) -> Recorded:
    """Write every thread of the module docstring to `saver`."""
    states: dict[str, dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    _desk(saver, states, seconds)
    _team(saver, states)
    _tree(saver, states)
    return Recorded(states=states, review_seconds=seconds)


class Killed(BaseException):
    """Stands in for SIGKILL between an external call and the record of its outcome."""


def leave_an_effect_in_doubt(saver: BaseCheckpointSaver[Any], effects: Any, thread: str) -> None:
    """Run `thread` (graph `mailer`) whose worker's `run_external` dies after its call.

    The effect's intent stays in `lgsp_effects` without an outcome (state `intent`), as
    after SIGKILL between the call and the record (`test_effects_in_doubt.py` does the same).
    """

    def mailer(task: WorkerTask) -> str:
        def send_then_die(key: str) -> Any:
            raise Killed

        return str(effects.run_external(effect_key("receipt"), send_then_die))

    app = create_supervisor(
        [Worker(name="mailer", description="Sends receipts.", agent=mailer, retry=NO_WAIT)],
        router=_routes("mailer"),
    ).compile(checkpointer=saver)
    try:
        app.invoke({"messages": [HumanMessage("Send the receipt")]}, config(thread, "mailer"))
    except Killed:
        return
    raise AssertionError("the effect did not die")


# --------------------------------------------------------------------------- spend

PRICED = ("openai", "gpt-4.1")
LOCAL = ("ollama", "llama3")


def call(
    turn: int,
    step: int,
    role: str,
    worker: str | None,
    tokens_in: int,
    tokens_out: int,
    cost: float | None,
    model: tuple[str, str] = PRICED,
    **extra: Any,
) -> dict[str, Any]:
    """One usage entry in the shape the runtime records (issue 32's `UsageEntry`)."""
    return {
        "turn": turn,
        "step": step,
        "role": role,
        "worker": worker,
        "tokens": tokens_in,
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "provider": model[0],
        "model": model[1],
        "path": [worker] if worker else [],
        "cost": cost,
        **extra,
    }


def budget_event(turn: int, kind: str, measure: str, spent: float, limit: float, **extra: Any):
    """One `budget_events` entry of the root (the graph's own budget unless `worker=`)."""
    entry = {
        "turn": turn,
        "step": 1,
        "kind": kind,
        "measure": measure,
        "spent": spent,
        "limit": limit,
        "scope": "turn",
        "worker": None,
        "path": [],
        "at": f"2030-01-01T10:0{turn}:00+00:00",
    }
    return {**entry, **extra}


SPEND_TURNS: list[dict[str, dict[str, Any]]] = [
    {  # turn 1: priced and unpriced calls, a warning, done
        "supervisor": {"usage": [call(1, 1, "supervisor", None, 130, 20, 0.00042)]},
        "billing": {
            "usage": [
                call(1, 1, "worker", "billing", 410, 60, 0.0013, cache_read=100),
                call(1, 1, "worker", "billing", 200, 30, None, LOCAL, estimated=True),
            ],
            "budget_events": [budget_event(1, "warning", "tokens", 850, 1000)],
            "ledger_status": "success",
        },
        "synthesis": {
            "usage": [call(1, 2, "synthesis", None, 300, 50, 0.001)],
            "status": "done",
        },
    },
    {  # turn 2: a worker's own budget spent: the hop fails, the run halts
        "supervisor": {"usage": [call(2, 1, "supervisor", None, 150, 20, 0.0005)]},
        "billing": {
            "usage": [call(2, 1, "worker", "billing", 500, 80, 0.0016)],
            "budget_events": [
                budget_event(2, "warning", "cost", 0.0041, 0.005, worker="billing"),
                budget_event(2, "exceeded", "cost", 0.0057, 0.005, worker="billing"),
            ],
            "ledger_status": "failed",
        },
        "synthesis": {"status": "halted", "halt_reason": "budget_exceeded"},
    },
]
"""What `spend_app` records, turn by turn: each node's `usage`, budget events and end."""

OLD_TURNS: list[dict[str, dict[str, Any]]] = [
    {  # a thread from before prices: utilisation only, then a call with no window at all
        "supervisor": {},
        "billing": {
            "usage": [
                {
                    "turn": 1,
                    "step": 1,
                    "role": "worker",
                    "worker": "billing",
                    "tokens": 500,
                    "window": 1000,
                    "utilisation": 0.5,
                },
                {"turn": 1, "step": 1, "role": "worker", "worker": "billing", "tokens": 70},
            ],
            "ledger_status": "success",
        },
        "synthesis": {"status": "done"},
    }
]


def spend_app(saver: BaseCheckpointSaver[Any], turns: list[dict[str, dict[str, Any]]]) -> Any:
    """A graph on `SupervisorState` whose nodes write what `turns` says, as the runtime would.

    Its nodes carry the runtime's trace metadata (a decision, a hop of `billing`, synthesis),
    so `OTelCallbackHandler` makes them the same spans; the runtime need not call a model.
    """
    from langgraph.graph import END, START, StateGraph

    from langgraph_supervisor_pro._graph.trace import node_metadata
    from langgraph_supervisor_pro._state import SupervisorState

    def supervisor(state: dict[str, Any]) -> Command[str]:  # a decision is a Command
        turn = state.get("turn", 0) + 1
        route = {"next": "billing", "instructions": "", "decided_by": "model", "step": 1}
        script = turns[turn - 1]["supervisor"]
        update = {"turn": turn, "task": f"Task {turn}", "status": "running", "route": route}
        return Command(update={**update, **script}, goto="billing")

    def billing(state: dict[str, Any]) -> dict[str, Any]:
        script = dict(turns[state["turn"] - 1]["billing"])
        status = script.pop("ledger_status")
        entry = {
            "turn": state["turn"],
            "step": 1,
            "worker": "billing",
            "instructions": "",
            "decided_by": "model",
            "status": status,
            "summary": "Refunded." if status == "success" else "Budget spent.",
            "error": None if status == "success" else "BudgetExceededError: billing is spent",
            "refused": [],
        }
        return {"ledger": [entry], **script}

    def synthesis(state: dict[str, Any]) -> dict[str, Any]:
        return dict(turns[state["turn"] - 1]["synthesis"])

    builder = StateGraph(SupervisorState)
    builder.add_node("supervisor", supervisor, metadata=node_metadata("supervisor"))  # type: ignore[type-var]
    builder.add_node("billing", billing, metadata=node_metadata("worker", "billing"))  # type: ignore[type-var]
    builder.add_node("synthesis", synthesis, metadata=node_metadata("synthesis"))  # type: ignore[type-var]
    builder.add_edge(START, "supervisor")
    builder.add_edge("billing", "synthesis")
    builder.add_edge("synthesis", END)
    return builder.compile(checkpointer=saver)


def record_spend(saver: BaseCheckpointSaver[Any]) -> dict[str, dict[str, Any]]:
    """Threads `spend` (both `SPEND_TURNS`) and `old` (`OLD_TURNS`), graph `spend`; their states."""
    states: dict[str, dict[str, Any]] = {}
    for thread, turns in (("spend", SPEND_TURNS), ("old", OLD_TURNS)):
        app = spend_app(saver, turns)
        for turn in range(len(turns)):
            app.invoke({"messages": [HumanMessage(f"Task {turn + 1}")]}, config(thread, "spend"))
        states[thread] = dict(app.get_state(config(thread, "spend")).values)
    return states


def budgeted_team(max_tokens: int = 100_000, warn_at: float = 0.001) -> Any:
    """The runtime's own records: researcher (`small`, priced) then writer (`big`, unpriced).

    Their models report usage (`FunctionChatModel(report_usage=True)`); the budget warns at
    `warn_at` of `max_tokens` and halts at it.
    """
    from langgraph_supervisor_pro import FINISH, Budget
    from langgraph_supervisor_pro.testing import FunctionChatModel

    def worker(name: str, model: str) -> Worker:
        reply = FunctionChatModel(
            name=model, reply=lambda call: f"{model} says " + "word " * 40, report_usage=True
        )
        return Worker(name=name, description=f"The {name}.", model=reply)

    plan = ["researcher", "writer", *["researcher"] * 8]
    return create_supervisor(
        [worker("researcher", "small"), worker("writer", "big")],
        router=lambda view: plan[view.step] if view.step < len(plan) else FINISH,
        budget=Budget(
            max_tokens=max_tokens,
            warn_at=warn_at,
            prices={"small": {"input": 0.4, "output": 1.6}},
        ),
    )

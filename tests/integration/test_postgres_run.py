"""Full supervisor runs on a real Postgres checkpointer (never mocked).

A three-worker team: `researcher` is a real LangGraph agent (`create_agent` with a
scripted model and a tool), `analyst` a sync function, `writer` an async function.
The supervisor is a `ScriptedChatModel` answering with structured decisions.
The tests check the final state, the checkpoint written at each logical boundary
(after every routing decision and after every worker), reading the thread back
through a new checkpointer, a second turn on the same thread, and time travel.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from langgraph_supervisor_pro import (
    Worker,
    WorkerResult,
    WorkerTask,
    aopen_checkpointer,
    create_supervisor,
    open_checkpointer,
)
from langgraph_supervisor_pro.errors import ThreadBusyError
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel

pytestmark = pytest.mark.integration

TASK = "Write a short report on how long cats sleep"
TASK_2 = "Now add a line about kittens"
WORKERS = ("researcher", "analyst", "writer")

TURN_1_DECISIONS = [
    {"next": "researcher", "instructions": "Find how many hours cats sleep"},
    {"next": "analyst", "instructions": "Compute the daily average"},
    {"next": "writer", "instructions": "Write the report"},
    {"next": "FINISH", "instructions": "The report is written"},
]
TURN_2_DECISIONS = [
    {"next": "researcher", "instructions": "Find how long kittens sleep"},
    {"next": "writer", "instructions": "Add the kitten line"},
    {"next": "FINISH", "instructions": "Done"},
]
RESEARCH_ANSWER = "Cats sleep 12 to 16 hours a day."
REPORT = "Report: cats sleep about 14 hours a day."

# The root-namespace checkpoints of one three-hop turn, oldest first: the input,
# then one after every step (START, each decision, each worker, synthesis).
TURN_1_NEXT = [
    ("__start__",),
    ("supervisor",),
    ("researcher",),
    ("supervisor",),
    ("analyst",),
    ("supervisor",),
    ("writer",),
    ("supervisor",),
    ("synthesis",),
    (),
]


@tool
def lookup(query: str) -> str:
    """Look up facts about a topic."""
    return f"lookup({query}): cats sleep 12-16 h; kittens up to 20 h"


def config(thread_id: str | None = None) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id or f"thread-{uuid.uuid4().hex[:8]}"}}


@dataclass
class Team:
    """The team's graph plus the scripted models and what each worker was given."""

    supervisor_model: ScriptedChatModel
    research_model: ScriptedChatModel
    tasks: dict[str, list[WorkerTask]] = field(
        default_factory=lambda: {"analyst": [], "writer": []}
    )
    graph: Any = None


def make_team(decisions: list[Any] | None = None, research_script: list[Any] | None = None) -> Team:
    supervisor_model = ScriptedChatModel(
        name="supervisor-model", script=decisions or TURN_1_DECISIONS
    )
    research_model = ScriptedChatModel(
        name="research-model",
        script=research_script
        or [
            AIMessage(
                content="",
                tool_calls=[{"name": "lookup", "args": {"query": "cat sleep"}, "id": "call-1"}],
            ),
            RESEARCH_ANSWER,
        ],
    )
    team = Team(supervisor_model, research_model)
    researcher = create_agent(research_model, [lookup], name="researcher_agent")

    def analyst(task: WorkerTask) -> dict[str, Any]:
        team.tasks["analyst"].append(task)
        return {"average_hours": 14, "range": [12, 16]}

    async def writer(task: WorkerTask) -> WorkerResult:
        team.tasks["writer"].append(task)
        text = REPORT if len(team.tasks["writer"]) == 1 else REPORT + " Kittens sleep more."
        return WorkerResult(status="success", result=text, summary="Report drafted")

    team.graph = create_supervisor(
        [
            Worker(
                name="researcher", description="Finds facts with a search tool.", agent=researcher
            ),
            Worker(name="analyst", description="Crunches the numbers.", agent=analyst),
            Worker(name="writer", description="Writes the report.", agent=writer),
        ],
        model=supervisor_model,
    )
    return team


def ask(text: str = TASK) -> dict[str, Any]:
    return {"messages": [("user", text)]}


def ledger_entry(step: int, worker: str, summary: str, *, turn: int = 1) -> dict[str, Any]:
    decisions = TURN_1_DECISIONS if turn == 1 else TURN_2_DECISIONS
    instructions = next(d["instructions"] for d in decisions if d["next"] == worker)
    return {
        "turn": turn,
        "step": step,
        "worker": worker,
        "instructions": instructions,
        "decided_by": "model",
        "status": "success",
        "summary": summary,
        "error": None,
        "refused": [],
    }


TURN_1_LEDGER = [
    ledger_entry(1, "researcher", RESEARCH_ANSWER),
    ledger_entry(2, "analyst", '{"average_hours": 14, "range": [12, 16]}'),
    ledger_entry(3, "writer", "Report drafted"),
]


def kinds(messages: list[Any]) -> list[str]:
    return [type(m).__name__ for m in messages]


def assert_turn_1_final_state(out: dict[str, Any], team: Team) -> None:
    assert out["status"] == "done"
    assert out["halt_reason"] is None
    assert (out["turn"], out["step"], out["task"], out["route"]) == (1, 3, TASK, None)
    assert out["ledger"] == TURN_1_LEDGER

    # The conversation holds the user's message and the answer; no worker transcript.
    assert kinds(out["messages"]) == ["HumanMessage", "AIMessage"]
    answer = out["messages"][-1]
    assert (answer.name, answer.content) == ("supervisor", REPORT)

    # One namespaced slot per worker, each with its own messages and one result.
    slots = out["workers"]
    assert set(slots) == set(WORKERS)
    research = slots["researcher"]["messages"]
    assert kinds(research) == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert research[0].content.startswith(f"Task: {TASK}")
    assert "Find how many hours cats sleep" in research[0].content
    assert isinstance(research[2], ToolMessage) and "cats sleep 12-16 h" in research[2].content
    assert research[3].content == RESEARCH_ANSWER
    assert [r["result"] for r in slots["researcher"]["results"]] == [RESEARCH_ANSWER]
    assert [r["result"] for r in slots["analyst"]["results"]] == [
        {"average_hours": 14, "range": [12, 16]}
    ]
    assert [r["result"] for r in slots["writer"]["results"]] == [REPORT]
    for name in ("analyst", "writer"):
        assert kinds(slots[name]["messages"]) == ["HumanMessage", "AIMessage"]
        assert slots[name]["messages"][1].name == name
    assert len({m.id for s in slots.values() for m in s["messages"]}) == 8  # no duplicates

    # The supervisor decided four times from a slim view: ledger lines, never transcripts.
    team.supervisor_model.assert_complete()
    team.research_model.assert_complete()
    last_prompt = team.supervisor_model.calls[3].messages[-1].content
    assert "3 hops so far (3 succeeded)" in last_prompt
    assert "#1 researcher [success]" in last_prompt
    assert "#3 writer [success]" in last_prompt
    assert "lookup(" not in last_prompt  # the tool output stayed in the researcher's slot
    assert [t.step for t in team.tasks["analyst"] + team.tasks["writer"]] == [2, 3]


def assert_turn_1_history(history: list[Any]) -> None:
    """`history` is oldest first: a checkpoint after each decision and after each worker."""
    assert [s.next for s in history] == TURN_1_NEXT
    assert [s.metadata["step"] for s in history] == list(range(-1, len(TURN_1_NEXT) - 1))
    assert all(
        s.metadata["source"] == ("input" if i == 0 else "loop") for i, s in enumerate(history)
    )
    # One linear chain: each checkpoint's parent is the previous one.
    ids = [s.config["configurable"]["checkpoint_id"] for s in history]
    parents = [
        s.parent_config and s.parent_config["configurable"]["checkpoint_id"] for s in history
    ]
    assert parents == [None, *ids[:-1]]
    # Right after each decision: the route names the chosen worker and the hop number,
    # and that worker's hop is not in the ledger yet.
    for hop, worker in enumerate(WORKERS, start=1):
        (snapshot,) = [s for s in history if s.next == (worker,)]
        assert snapshot.values["route"]["next"] == worker
        assert snapshot.values["route"]["step"] == hop
        assert snapshot.values["step"] == hop
        assert [e["worker"] for e in snapshot.values["ledger"]] == list(WORKERS[: hop - 1])
    # The ledger grows by exactly one entry per worker step, and by nothing otherwise.
    lengths = [len(s.values.get("ledger") or []) for s in history]
    for before, after, ran in zip(lengths, lengths[1:], history, strict=False):
        assert after - before == (1 if ran.next[0] in WORKERS else 0), (ran.next, lengths)
    assert lengths[-1] == len(WORKERS)
    # The FINISH decision is checkpointed too, before synthesis runs.
    assert history[-2].values["route"] == {
        "next": "FINISH",
        "instructions": "The report is written",
        "step": 3,
        "decided_by": "model",
    }
    assert history[-1].values["status"] == "done"


def checkpoint_namespaces(uri: str, thread_id: str) -> list[str]:
    with psycopg.connect(uri) as conn:
        rows = conn.execute(
            "SELECT checkpoint_ns FROM checkpoints WHERE thread_id = %s", (thread_id,)
        ).fetchall()
    return [row[0] for row in rows]


# --------------------------------------------------------------------------- tests


def test_full_run_on_postgres_checkpoints_every_boundary(pg_database):
    cfg = config()
    thread_id = cfg["configurable"]["thread_id"]
    team = make_team()
    with open_checkpointer(pg_database) as saver:
        app = team.graph.compile(checkpointer=saver)
        out = app.invoke(ask(), cfg)
        assert_turn_1_final_state(out, team)
        history = list(reversed(list(app.get_state_history(cfg))))
        assert_turn_1_history(history)
        assert app.get_state(cfg).values == out

    # The rows are really in Postgres: one per root checkpoint. The agent worker's own
    # steps were checkpointed under its namespace while its hop ran, and deleted once the
    # hop's result was stored (kept with keep_agent_checkpoints=True).
    namespaces = checkpoint_namespaces(pg_database, thread_id)
    assert namespaces == [""] * len(TURN_1_NEXT)
    kept = config()
    with open_checkpointer(pg_database, keep_agent_checkpoints=True) as saver:
        make_team().graph.compile(checkpointer=saver).invoke(ask(), kept)
    assert any(
        ns.startswith("researcher:")
        for ns in checkpoint_namespaces(pg_database, kept["configurable"]["thread_id"])
    )

    # Durable across connections: a new checkpointer (new pool) and a freshly built
    # graph read back the same state and history.
    reader = make_team()
    with open_checkpointer(pg_database) as saver:
        app = reader.graph.compile(checkpointer=saver)
        snapshot = app.get_state(cfg)
        assert snapshot.values == out
        assert snapshot.next == ()
        again = list(reversed(list(app.get_state_history(cfg))))
        assert [s.config for s in again] == [s.config for s in history]
        assert [s.values for s in again] == [s.values for s in history]
    assert reader.supervisor_model.calls == ()  # reading ran nothing


async def test_async_run_on_postgres(pg_database):
    cfg = config()
    team = make_team()
    async with aopen_checkpointer(pg_database) as saver:
        app = team.graph.compile(checkpointer=saver)
        out = await app.ainvoke(ask(), cfg)
        assert_turn_1_final_state(out, team)
        history = [s async for s in app.aget_state_history(cfg)]
        assert_turn_1_history(list(reversed(history)))

    # What the async saver wrote, the sync saver reads back over its own connections.
    with open_checkpointer(pg_database) as saver:
        app = make_team().graph.compile(checkpointer=saver)
        assert app.get_state(cfg).values == out
        assert len(list(app.get_state_history(cfg))) == len(TURN_1_NEXT)


def test_second_turn_keeps_the_ledger_and_each_workers_memory(pg_database):
    cfg = config()
    team = make_team(
        decisions=TURN_1_DECISIONS + TURN_2_DECISIONS,
        research_script=[
            AIMessage(
                content="",
                tool_calls=[{"name": "lookup", "args": {"query": "cat sleep"}, "id": "call-1"}],
            ),
            RESEARCH_ANSWER,
            "Kittens sleep up to 20 hours.",
        ],
    )
    with open_checkpointer(pg_database) as saver:
        app = team.graph.compile(checkpointer=saver)
        first = app.invoke(ask(), cfg)
        assert first["status"] == "done"
        first_slots = first["workers"]

    # Turn 2 runs in a new checkpointer, as a later request to a server would.
    with open_checkpointer(pg_database) as saver:
        app = team.graph.compile(checkpointer=saver)
        second = app.invoke(ask(TASK_2), cfg)
        history = list(reversed(list(app.get_state_history(cfg))))

    assert second["status"] == "done"
    assert (second["turn"], second["step"], second["task"]) == (2, 2, TASK_2)
    assert second["ledger"] == [
        *TURN_1_LEDGER,
        ledger_entry(1, "researcher", "Kittens sleep up to 20 hours.", turn=2),
        ledger_entry(2, "writer", "Report drafted", turn=2),
    ]
    assert [m.content for m in second["messages"]] == [
        TASK,
        REPORT,
        TASK_2,
        REPORT + " Kittens sleep more.",
    ]

    # The new turn's first decision saw a fresh turn: its task, no hops, a fresh budget.
    turn_2_first = team.supervisor_model.calls[len(TURN_1_DECISIONS)].messages[-1].content
    assert turn_2_first.startswith(f"Task: {TASK_2}")
    assert "Ledger: No hops yet." in turn_2_first
    assert "Hop budget: 0/20 used" in turn_2_first
    team.supervisor_model.assert_complete()
    team.research_model.assert_complete()

    # Per-worker memory: each slot keeps its turn-1 messages, and grows by this hop only.
    slots = second["workers"]
    for name in WORKERS:
        old = first_slots[name]["messages"]
        assert slots[name]["messages"][: len(old)] == old, name
    research = slots["researcher"]["messages"]
    contents = [m.content for m in research]
    assert len(research) == 6, f"turn-1 history stored again in the researcher slot: {contents}"
    assert kinds(research) == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",  # turn 1
        "HumanMessage",
        "AIMessage",  # turn 2
    ]
    assert research[4].content.startswith(f"Task: {TASK_2}")
    assert research[5].content == "Kittens sleep up to 20 hours."
    assert len({m.id for m in research}) == len(research)  # no message stored twice
    assert slots["analyst"] == first_slots["analyst"]  # not visited in turn 2
    assert kinds(slots["writer"]["messages"]) == ["HumanMessage", "AIMessage"] * 2
    assert [len(slots[n]["results"]) for n in WORKERS] == [2, 1, 2]

    # The agent saw its own turn-1 conversation; the function worker got its messages.
    agent_saw = team.research_model.calls[-1].messages
    assert [m.content for m in agent_saw[:4]] == [m.content for m in research[:4]]
    assert isinstance(agent_saw[-1], HumanMessage)
    assert agent_saw[-1].content.startswith(f"Task: {TASK_2}")
    writer_task = team.tasks["writer"][-1]
    assert (writer_task.step, writer_task.task) == (2, TASK_2)
    assert writer_task.messages == first_slots["writer"]["messages"]

    # The history continues the same chain; the turn-2 hops count from 1 again.
    assert [s.metadata["step"] for s in history] == list(range(-1, len(history) - 1))
    turn_2 = [s for s in history if s.values.get("turn") == 2]
    (routed,) = [s for s in turn_2 if s.next == ("researcher",)]
    assert (routed.values["step"], routed.values["route"]["step"]) == (1, 1)
    assert len(routed.values["ledger"]) == len(TURN_1_LEDGER)


def _decide_from_prompt(order: tuple[str, ...]):
    """A supervisor model step that decides only from the ledger it is shown."""

    def step(call: ScriptedCall) -> dict[str, str]:
        prompt = str(call.messages[-1].content)
        match = re.search(r"Ledger: (\d+) hops so far", prompt)
        done = int(match.group(1)) if match else 0
        if done < len(order):
            return {"next": order[done], "instructions": f"hop {done + 1}"}
        return {"next": "FINISH", "instructions": "all done"}

    return step


def test_time_travel_replays_from_a_checkpoint_without_duplicating_hops(pg_database):
    runs: list[tuple[str, int]] = []

    def make(name: str):
        def agent(task: WorkerTask) -> str:
            runs.append((name, task.step))
            return f"{name} output {task.step}"

        async def aagent(task: WorkerTask) -> str:
            runs.append((name, task.step))
            return f"{name} output {task.step}"

        return aagent if name == "analyst" else agent

    model = ScriptedChatModel(name="supervisor-model", script=[_decide_from_prompt(WORKERS)] * 20)
    graph = create_supervisor(
        [Worker(name=n, description=f"The {n}.", agent=make(n)) for n in WORKERS], model=model
    )
    cfg = config()
    with open_checkpointer(pg_database) as saver:
        app = graph.compile(checkpointer=saver)
        original = app.invoke(ask(), cfg)
        assert runs == [("researcher", 1), ("analyst", 2), ("writer", 3)]
        assert len(model.calls) == 4
        history = list(reversed(list(app.get_state_history(cfg))))
        assert [s.next for s in history] == TURN_1_NEXT
        original_head = history[-1]

        # Replay from the checkpoint right after hop 1 (the researcher's).
        (after_hop_1,) = [
            s for s in history if s.next == ("supervisor",) and len(s.values["ledger"]) == 1
        ]
        runs.clear()
        # A deliberate fork: the Postgres checkpointer's fence refuses a run from an older
        # checkpoint unless the call says so (and stores nothing).
        with pytest.raises(ThreadBusyError, match="lgsp_fork"):
            app.invoke(None, after_hop_1.config)
        # (With the default durability="async" the refusal surfaces when LangGraph
        # collects the background save, after the nodes ran; the thread is unchanged.)
        assert app.get_state(cfg).config == original_head.config
        assert len(list(app.get_state_history(cfg))) == len(history)
        runs.clear()
        calls_before = len(model.calls)
        fork = {"configurable": {**after_hop_1.config["configurable"], "lgsp_fork": True}}
        replayed = app.invoke(None, fork)
        assert runs == [("analyst", 2), ("writer", 3)]  # hop 1 is not re-run
        assert len(model.calls) == calls_before + 3  # decisions for hops 2, 3 and FINISH
        assert replayed["status"] == "done"
        assert [(e["step"], e["worker"]) for e in replayed["ledger"]] == [
            (1, "researcher"),
            (2, "analyst"),
            (3, "writer"),
        ]
        assert {n: len(s["results"]) for n, s in replayed["workers"].items()} == {
            n: 1 for n in WORKERS
        }
        assert kinds(replayed["messages"]) == ["HumanMessage", "AIMessage"]
        assert replayed["messages"][-1].content == "writer output 3"

        # The thread's head is the new branch, forked from the chosen checkpoint ...
        head = app.get_state(cfg)
        assert head.values == replayed
        assert (
            head.config["configurable"]["checkpoint_id"]
            != (original_head.config["configurable"]["checkpoint_id"])
        )
        fork_id = after_hop_1.config["configurable"]["checkpoint_id"]
        chain = []
        snapshot = head
        while snapshot.parent_config is not None:
            chain.append(snapshot.parent_config["configurable"]["checkpoint_id"])
            snapshot = app.get_state(snapshot.parent_config)
        assert fork_id in chain
        new_branch = chain[: chain.index(fork_id)]
        assert len(new_branch) == len(set(new_branch))
        # ... and the original branch is still there, unchanged.
        assert app.get_state(original_head.config).values == original

        # Replaying from the checkpoint where the supervisor had just chosen the analyst
        # re-runs the analyst without asking the supervisor again for that hop.
        (routed_to_analyst,) = [s for s in history if s.next == ("analyst",)]
        runs.clear()
        calls_before = len(model.calls)
        again = app.invoke(
            None, {"configurable": {**routed_to_analyst.config["configurable"], "lgsp_fork": True}}
        )
        assert runs == [("analyst", 2), ("writer", 3)]
        assert len(model.calls) == calls_before + 2  # hop 3 and FINISH only
        assert [e["step"] for e in again["ledger"]] == [1, 2, 3]
        assert again["status"] == "done"

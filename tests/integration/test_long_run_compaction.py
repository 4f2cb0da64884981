"""A 60-hop workflow on Postgres that stays inside an 8,000-token window.

Three workers take turns (round robin): `researcher` and `analyst` are real
LangGraph agents (`create_agent` over a `ScriptedChatModel`) that answer every
hop with ~2,000 tokens, `writer` is a function worker returning ~2,000 tokens.
The supervisor is a `ScriptedChatModel` answering 60 structured decisions and
then FINISH. The window is 8,000 tokens and compaction triggers at 0.7 (5,600
tokens): an agent worker's history plus its next prompt first passes that on its
fourth visit, then on every second visit (the summary and one kept hop, ~2,100
tokens, plus two new hops), so its slot is compacted 9 times, and the facts
planted in its first outputs (`ORDER-4711`, `CASE-1999` for the researcher,
`INVOICE-0042`, `REFUND-0777` for the analyst) must survive every summary. The
summarizer is scripted: it extracts the ids it is shown (`[A-Z]+-\\d{4}`); the
package also carries earlier key facts over.

Checkpoints and the store are on Postgres (`durability="sync"`). The full outputs
live in the store; the state keeps references. The checkpoint bytes written per
hop are measured from the database and must not grow as the run gets longer.

The last two tests pin two known package bugs (they fail until fixed): the
synthesis model's call is not kept inside the window, and the outputs a worker
`reads` are left out of its compaction trigger.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter, defaultdict
from typing import Any

import psycopg
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_supervisor_pro import (
    Worker,
    WorkerTask,
    create_supervisor,
    open_checkpointer,
    open_store,
)
from langgraph_supervisor_pro._synthesis import SynthesisInput
from langgraph_supervisor_pro.compaction._compactor import Compaction, is_summary_message
from langgraph_supervisor_pro.persistence._memory import output_namespace
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel
from tests.integration._app_common import ID_RE, scripted_summary

pytestmark = pytest.mark.integration

TASK = "Audit the customer account and write the findings report"
PLAN = ("researcher", "analyst", "writer")
AGENTS = ("researcher", "analyst")
HOPS = 60
WINDOW = 8000
TRIGGER = 0.7
THRESHOLD = WINDOW * TRIGGER  # 5600 tokens
OUTPUT_TOKENS = 2000
FACTS = {1: "ORDER-4711", 2: "INVOICE-0042", 4: "CASE-1999", 5: "REFUND-0777"}
"""Planted facts, by hop: hops 1 and 4 are the researcher's, 2 and 5 the analyst's."""
FILLER = (
    "the ledger lines were reconciled against the statements and every balance "
    "was checked twice before moving on to the next account period "
)


def worker_for(hop: int) -> str:
    return PLAN[(hop - 1) % len(PLAN)]


def instructions_for(hop: int) -> str:
    return f"hop {hop}: {worker_for(hop)}, continue the audit"


def output_for(worker: str, hop: int) -> str:
    """The ~2,000-token answer of `worker` at `hop` (a planted fact on hops 1, 2, 4, 5)."""
    head = f"{worker} findings for hop {hop}. "
    if hop in FACTS:
        head += f"Key record found: {FACTS[hop]}. "
    # count_tokens_approximately: ceil(chars / 4) + 3 per message (role and name count too)
    size = 4 * OUTPUT_TOKENS - 40
    body = (FILLER * (size // len(FILLER) + 1))[: size - len(head)]
    return head + body


def hop_of(call: ScriptedCall) -> int:
    prompts = [m for m in call.messages if isinstance(m, HumanMessage)]
    match = re.search(r"hop (\d+):", str(prompts[-1].content)) if prompts else None
    if match is None:
        raise AssertionError(f"no hop number in the agent's prompt: {call.messages[-1]!r}")
    return int(match.group(1))


def agent_model(worker: str) -> ScriptedChatModel:
    def answer(call: ScriptedCall) -> str:
        return output_for(worker, hop_of(call))

    return ScriptedChatModel(name=f"{worker}-model", script=[answer] * (HOPS // len(PLAN)))


def summarise(call: ScriptedCall) -> dict[str, Any]:
    """A scripted summarizer that keeps every id and hop number it is shown."""
    text = "\n".join(str(m.content) for m in call.messages)
    return scripted_summary(text, task=TASK, remaining="continue the audit")


def prompt_tokens(hop: int) -> int:
    """Tokens of the prompt the worker of `hop` is given (what the trigger adds to its history)."""
    prompt = WorkerTask(
        worker=worker_for(hop), step=hop, task=TASK, instructions=instructions_for(hop)
    ).prompt()
    return count_tokens_approximately([HumanMessage(content=prompt)])


def checkpoint_bytes_per_hop(uri: str, thread_id: str) -> tuple[dict[int, int], int]:
    """Bytes the thread's checkpoints take in Postgres, attributed to the hop that wrote them.

    Method (robust to LangGraph's internal version format): every row of
    `checkpoints` (any namespace, so the agents' own checkpoints count too) is
    sized with `pg_column_size(row)`. A `checkpoint_blobs` row (channel,
    version) is attributed to the first checkpoint of its namespace whose
    `channel_versions` holds that version (the checkpoint that wrote it), and a
    `checkpoint_writes` row to the checkpoint it is keyed by. Checkpoint ids are
    time-ordered (uuid6), so sorting them gives the order they were written in.
    The `ledger` channel gets a new version exactly once per finished hop, so
    counting distinct ledger versions along the root checkpoints tells how many
    hops were done: a row belongs to hop (hops done before it) + 1. Hop 61 is
    the FINISH decision and the synthesis.

    Returns:
        Bytes per hop, and the thread's total bytes in the three tables.
    """
    with psycopg.connect(uri) as conn:
        checkpoints = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions', "
            "pg_column_size(c.*) FROM checkpoints c WHERE thread_id = %s",
            (thread_id,),
        ).fetchall()
        blobs = conn.execute(
            "SELECT checkpoint_ns, channel, version, pg_column_size(b.*) "
            "FROM checkpoint_blobs b WHERE thread_id = %s",
            (thread_id,),
        ).fetchall()
        writes = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, sum(pg_column_size(w.*))::bigint "
            "FROM checkpoint_writes w WHERE thread_id = %s GROUP BY 1, 2",
            (thread_id,),
        ).fetchall()
    total = (
        sum(row[3] for row in checkpoints)
        + sum(row[3] for row in blobs)
        + sum(row[2] for row in writes)
    )
    ordered = sorted(checkpoints, key=lambda row: uuid.UUID(row[1]).bytes)
    hop_of_checkpoint: dict[tuple[str, str], int] = {}
    ledger_versions: set[str] = set()
    writer_of_blob: dict[tuple[str, str, str], tuple[str, str]] = {}
    for ns, checkpoint_id, versions, _ in ordered:
        hop_of_checkpoint[(ns, checkpoint_id)] = len(ledger_versions) + 1
        for channel, version in (versions or {}).items():
            writer_of_blob.setdefault((ns, channel, str(version)), (ns, checkpoint_id))
        if ns == "" and versions and "ledger" in versions:
            ledger_versions.add(str(versions["ledger"]))
    per_hop: dict[int, int] = defaultdict(int)
    for ns, checkpoint_id, _, size in checkpoints:
        per_hop[hop_of_checkpoint[(ns, checkpoint_id)]] += size
    for ns, channel, version, size in blobs:
        owner = writer_of_blob.get((ns, channel, version))
        assert owner is not None, f"blob {ns!r}/{channel}/{version} belongs to no checkpoint"
        per_hop[hop_of_checkpoint[owner]] += size
    for ns, checkpoint_id, size in writes:
        per_hop[hop_of_checkpoint[(ns, checkpoint_id)]] += size
    assert sum(per_hop.values()) == total  # every byte attributed
    return dict(per_hop), total


def run_to_done(graph: Any, uri: str, label: str, hops: int) -> dict[str, Any]:
    """Run `graph` once on Postgres (checkpoints and store); it must finish all `hops`."""
    config: Any = {"configurable": {"thread_id": f"{label}-{uuid.uuid4().hex[:8]}"}}
    with open_checkpointer(uri) as saver, open_store(uri) as store:
        app = graph.compile(checkpointer=saver, store=store)
        out = app.invoke({"messages": [("user", TASK)]}, config, durability="sync")
    assert out["status"] == "done", (out.get("halt_reason"), out.get("halt_detail"))
    assert len(out["ledger"]) == hops
    return out


def test_sixty_hops_stay_inside_the_window_on_postgres(pg_database):
    decisions: list[dict[str, str]] = [
        {"next": worker_for(hop), "instructions": instructions_for(hop)}
        for hop in range(1, HOPS + 1)
    ]
    decisions.append({"next": "FINISH", "instructions": f"all {HOPS} hops are done"})
    supervisor_model = ScriptedChatModel(name="supervisor-model", script=decisions)
    models = {name: agent_model(name) for name in AGENTS}
    summarizer = ScriptedChatModel(name="summarizer", script=[summarise] * HOPS)
    synthesized: list[SynthesisInput] = []

    def writer(task: WorkerTask) -> str:
        return output_for("writer", task.step)

    def synthesize(inp: SynthesisInput) -> str:
        synthesized.append(inp)
        facts = sorted({f for hop in inp.hops for f in ID_RE.findall(hop.result.result_text())})
        return f"Audit complete after {len(inp.hops)} hops; records: {', '.join(facts)}"

    workers = [
        Worker(
            name=name,
            description=f"The {name} of the audit.",
            agent=create_agent(models[name], tools=[], name=f"{name}_agent"),
        )
        for name in AGENTS
    ]
    workers.append(Worker(name="writer", description="Writes the report.", agent=writer))
    compaction = Compaction(
        summarizer=summarizer, max_context_tokens=WINDOW, trigger=TRIGGER, keep=2
    )
    graph = create_supervisor(
        workers,
        model=supervisor_model,
        max_steps=HOPS,
        compaction=compaction,
        synthesizer=synthesize,
    )
    thread_id = f"long-{uuid.uuid4().hex[:8]}"
    config: Any = {"configurable": {"thread_id": thread_id}}
    with open_checkpointer(pg_database) as saver, open_store(pg_database) as store:
        app = graph.compile(checkpointer=saver, store=store)
        out = app.invoke({"messages": [("user", TASK)]}, config, durability="sync")
        assert app.get_state(config).next == ()

    # -- the run completed: 60 hops in order, then the synthesis answered ----------------
    assert out["status"] == "done", (out.get("halt_reason"), out.get("halt_detail"))
    ledger = out["ledger"]
    assert [(e["step"], e["worker"], e["status"]) for e in ledger] == [
        (hop, worker_for(hop), "success") for hop in range(1, HOPS + 1)
    ]
    assert len(synthesized) == 1
    hops_seen = synthesized[0].hops
    # the synthesis read every full output back from the store
    assert [(h.step, h.worker) for h in hops_seen] == [
        (hop, worker_for(hop)) for hop in range(1, HOPS + 1)
    ]
    assert all(h.result.result_text() == output_for(h.worker, h.step) for h in hops_seen)
    answer = out["messages"][-1]
    assert isinstance(answer, AIMessage)
    assert [m.type for m in out["messages"]] == ["human", "ai"]  # the task and the answer
    assert answer.content == (
        f"Audit complete after {HOPS} hops; records: CASE-1999, INVOICE-0042, ORDER-4711, "
        "REFUND-0777"
    )
    for model in (supervisor_model, *models.values()):
        model.assert_complete()

    # -- no model call ever received more than the window --------------------------------
    one_output = count_tokens_approximately(
        [AIMessage(content=output_for("researcher", 7), name="researcher_agent")]
    )
    assert 1990 <= one_output <= 2010  # each worker answer is ~2,000 tokens
    usage = out["usage"]
    assert all(u["window"] == WINDOW for u in usage)
    assert all(u["tokens"] <= WINDOW for u in usage), max(u["tokens"] for u in usage)
    by_role = Counter(u["role"] for u in usage)
    assert by_role == {
        "supervisor": HOPS + 1,
        "worker": len(AGENTS) * HOPS // len(PLAN),
        "summarizer": len(out["compactions"]),  # every summarizer call is recorded too
    }
    all_calls = [
        *supervisor_model.calls,
        *(c for m in models.values() for c in m.calls),
        *summarizer.calls,
    ]
    measured = [count_tokens_approximately(list(c.messages)) for c in all_calls]
    assert max(measured) <= WINDOW
    # The usage log saw exactly the calls the models received.
    worker_usage = [u for u in usage if u["role"] == "worker"]
    for name in AGENTS:
        logged = [u["tokens"] for u in worker_usage if u["worker"] == name]
        calls = [count_tokens_approximately(list(c.messages)) for c in models[name].calls]
        assert logged == calls, name
    # Compaction runs before the hop, so even the agents' calls stay below the trigger.
    assert max(u["tokens"] for u in worker_usage) < THRESHOLD

    # -- compaction fired at the configured fraction, and only then ----------------------
    compactions = out["compactions"]
    assert all(c["error"] is None and c["attempts"] == 1 for c in compactions), compactions
    assert all(c["reason"] == "trigger" and c["removed"] > 0 for c in compactions)
    assert {c["worker"] for c in compactions} == set(AGENTS)  # the writer's slot stays small
    assert len(summarizer.calls) == len(compactions)
    fired = {(c["worker"], c["step"]): c for c in compactions}
    assert len(fired) == len(compactions)
    for name in AGENTS:
        agent_hops = [hop for hop in range(1, HOPS + 1) if worker_for(hop) == name]
        tokens_at = dict(
            zip(agent_hops, [u["tokens"] for u in worker_usage if u["worker"] == name], strict=True)
        )
        for hop in agent_hops:
            entry = fired.get((name, hop))
            if entry is None:
                # No compaction: the call got the history plus the prompt, below the trigger.
                assert tokens_at[hop] < THRESHOLD, (name, hop)
                continue
            # `tokens_before` is the history alone; the trigger is checked on the history
            # plus the hop's prompt. count_tokens_approximately rounds up per message, so
            # the two counts add up exactly (no rounding slack to allow for).
            upcoming = entry["tokens_before"] + prompt_tokens(hop)
            assert upcoming / WINDOW >= TRIGGER, (name, hop, upcoming)
            assert entry["tokens_after"] < entry["tokens_before"]
            # The hop's model call got exactly the compacted history plus the prompt.
            assert tokens_at[hop] == entry["tokens_after"] + prompt_tokens(hop)
    per_worker = Counter(c["worker"] for c in compactions)
    assert all(count >= 5 for count in per_worker.values()), per_worker

    # -- the facts planted early survived every compaction -------------------------------
    planted = {
        "researcher": {"ORDER-4711", "CASE-1999"},
        "analyst": {"INVOICE-0042", "REFUND-0777"},
    }
    for name in AGENTS:
        messages = out["workers"][name]["messages"]
        summaries = [m for m in messages if is_summary_message(m)]
        assert len(summaries) == 1 and messages[0] is summaries[0], name
        key_facts = summaries[0].additional_kwargs["lgsp_summary"]["key_facts"]
        assert set(key_facts) == planted[name], (name, key_facts)
        ids = [m.id for m in messages]
        assert len(ids) == len(set(ids)), name
    writer_messages = out["workers"]["writer"]["messages"]
    assert not any(is_summary_message(m) for m in writer_messages)
    assert count_tokens_approximately(writer_messages) < THRESHOLD

    # -- full outputs live in the store on Postgres; the state keeps references ----------
    for name in PLAN:
        results = out["workers"][name]["results"]
        assert len(results) == HOPS // len(PLAN)
        assert all(r["result"] is None and r["ref"]["key"] for r in results), name
        assert all(len(r["summary"]) <= 280 for r in results)
    assert all(len(e["summary"]) <= 280 for e in ledger)
    assert all(len(str(m.content)) < 1000 for m in writer_messages)
    stored_steps: list[int] = []
    with open_store(pg_database) as fresh_store:
        for name in PLAN:
            items = fresh_store.search(output_namespace(thread_id, name), limit=1000)
            assert len(items) == HOPS // len(PLAN), name
            for item in items:
                assert item.value["worker"] == name
                assert item.value["result"] == output_for(name, item.value["step"])
                stored_steps.append(item.value["step"])
    assert sorted(stored_steps) == list(range(1, HOPS + 1))

    # -- checkpoint bytes per hop do not grow --------------------------------------------
    per_hop, total = checkpoint_bytes_per_hop(pg_database, thread_id)
    assert set(per_hop) == set(range(1, HOPS + 2))  # hop 61: FINISH and synthesis
    early = sum(per_hop[hop] for hop in range(1, 21))
    middle = sum(per_hop[hop] for hop in range(21, 41))
    late = sum(per_hop[hop] for hop in range(41, 61))
    worker_max = max(u["tokens"] for u in worker_usage)
    print(
        f"\n[long-run compaction] hops={HOPS} compactions={len(compactions)} "
        f"({dict(per_worker)}); max utilisation: worker {worker_max / WINDOW:.3f}, "
        f"supervisor {max(u['utilisation'] for u in usage if u['role'] == 'supervisor'):.3f}, "
        f"any call {max(measured) / WINDOW:.3f}\n"
        f"[long-run compaction] checkpoint bytes: total {total}, per hop "
        f"{total / HOPS:.0f} avg; hops 1-20 {early} ({early / 20:.0f}/hop), "
        f"21-40 {middle} ({middle / 20:.0f}/hop), 41-60 {late} ({late / 20:.0f}/hop), "
        f"finish {per_hop[HOPS + 1]}"
    )
    assert late <= 1.5 * early, (early, middle, late)
    assert middle <= 1.5 * early, (early, middle, late)


def test_model_synthesis_stays_inside_the_window(pg_database):
    """The synthesis step's model call must fit the window too (principle 9).

    Known package bug (this test fails until it is fixed): `synthesis.py`
    `_model_messages` puts every successful hop's full result into one prompt,
    with no token budget, and `SynthesisNode.invoke`/`ainvoke` send it as is; the
    call is not metered into `usage` either. Twenty 2,000-token outputs give a
    ~40,000-token prompt against an 8,000-token window: a real provider rejects
    it and the run ends `failed` (synthesis_error) after all the work is done.
    The test accepts any fix that keeps every synthesis call inside the window.
    """
    hops = 20
    decisions: list[dict[str, str]] = [
        {"next": "writer", "instructions": f"hop {hop}: writer, continue the audit"}
        for hop in range(1, hops + 1)
    ]
    decisions.append({"next": "FINISH", "instructions": "done"})
    synthesis_model = ScriptedChatModel(
        name="synthesis-model", script=[lambda call: "the audit report"] * (hops + 1)
    )

    def writer(task: WorkerTask) -> str:
        return output_for("writer", task.step)

    graph = create_supervisor(
        [Worker(name="writer", description="Writes the report.", agent=writer)],
        model=ScriptedChatModel(name="supervisor-model", script=decisions),
        max_steps=hops,
        compaction=Compaction(
            summarizer=ScriptedChatModel(script=[summarise] * hops),
            max_context_tokens=WINDOW,
            trigger=TRIGGER,
        ),
        synthesizer=synthesis_model,
    )
    run_to_done(graph, pg_database, "synthesis", hops)
    assert synthesis_model.calls, "the synthesis model was never called"
    sizes = [count_tokens_approximately(list(call.messages)) for call in synthesis_model.calls]
    assert max(sizes) <= WINDOW, f"synthesis calls got {sizes} tokens; the window is {WINDOW}"


def test_outputs_a_worker_reads_count_toward_its_trigger(pg_database):
    """A worker's `reads` are part of its upcoming context, so they count toward the trigger.

    Known package bug (this test fails until it is fixed): the compaction check
    (`_compaction_node.py`, `CompactionNode.needed`, lines 50-53) measures the
    worker's history plus `WorkerTask(...).prompt()` built without `reads`, while
    the worker node (`_worker_node.py`, `WorkerNode._hop`) puts the full latest
    output of every worker in `Worker.reads` into the prompt it sends. With
    ~4,500-token outputs read by an agent worker, its second hop is checked at
    ~4,600 tokens (below 5,600, no compaction) and its model then receives
    ~9,100 tokens: more than the 8,000-token window.
    """
    hops = 8
    plan = ("researcher", "analyst") * (hops // 2)
    size = 4 * 4500
    decisions: list[dict[str, str]] = [
        {"next": plan[hop - 1], "instructions": f"hop {hop}: {plan[hop - 1]}, continue"}
        for hop in range(1, hops + 1)
    ]
    decisions.append({"next": "FINISH", "instructions": "done"})
    analyst_model = ScriptedChatModel(
        name="analyst-model", script=[lambda call: "short analysis " * 20] * hops
    )

    def researcher(task: WorkerTask) -> str:
        return (f"research for hop {task.step}. " + FILLER * (size // len(FILLER) + 1))[:size]

    graph = create_supervisor(
        [
            Worker(name="researcher", description="Researches.", agent=researcher),
            Worker(
                name="analyst",
                description="Analyses the latest research.",
                agent=create_agent(analyst_model, tools=[], name="analyst_agent"),
                reads=("researcher",),
            ),
        ],
        model=ScriptedChatModel(name="supervisor-model", script=decisions),
        max_steps=hops,
        compaction=Compaction(
            summarizer=ScriptedChatModel(name="summarizer", script=[summarise] * hops),
            max_context_tokens=WINDOW,
            trigger=TRIGGER,
            keep=2,
        ),
    )
    out = run_to_done(graph, pg_database, "reads", hops)
    # The analyst was given the researcher's full output each time.
    assert all("research for hop" in str(call.messages[-1].content) for call in analyst_model.calls)
    sizes = [count_tokens_approximately(list(call.messages)) for call in analyst_model.calls]
    assert len(sizes) == hops // 2
    assert max(sizes) <= WINDOW, f"the analyst's calls got {sizes} tokens; the window is {WINDOW}"
    assert all(u["tokens"] <= WINDOW for u in out["usage"])

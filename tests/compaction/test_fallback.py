"""Never overflow (issue 35): the truncation fallback, the summarizer's breaker, and
summaries that fit the summarizer's own window.

The workload of the issue: one agent worker with an 8,000-token window (its model's
profile), 20 hops of ~600 words each, compaction at 0.7; the summarizer either always
raises, returns invalid summaries, or works with a 3,000-token window of its own.
Tokens are counted with `count_tokens_approximately` everywhere (deterministic).
"""

from __future__ import annotations

import itertools
import re
import uuid
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_supervisor_pro import Compaction, Worker, create_supervisor
from langgraph_supervisor_pro._breakers import Breaker
from langgraph_supervisor_pro.compaction._archive import dropped_messages
from langgraph_supervisor_pro.compaction._compactor import (
    DEFAULT_SUMMARIZER_BREAKER,
    Compactor,
    is_summary_message,
    is_truncation_marker,
    summarizer_breaker_namespace,
    truncate_history,
)
from langgraph_supervisor_pro.compaction._middleware import CompactionMiddleware
from langgraph_supervisor_pro.observability import audit_trail, compute_metrics, read_threads
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall, ScriptedChatModel
from tests._helpers import routes

WORKER_WINDOW = 8000
SUMMARIZER_WINDOW = 3000
HOPS = 20
KEY_FACT = "ORDER-4711"
ID_RE = re.compile(r"[A-Z]+-\d{4}")
HOP_RE = re.compile(r"Findings of hop (\d+)")


class FakeClock:
    """Wall-clock time for a breaker, moved by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def hop_answer(hop: int) -> str:
    """~600 words (~900 tokens); hop 1 plants the key fact."""
    fact = f" The key fact is {KEY_FACT}." if hop == 1 else ""
    return f"Findings of hop {hop}.{fact} " + " ".join(f"w{hop}x{i}" for i in range(600))


def worker_model() -> FunctionChatModel:
    count = itertools.count(1)
    return FunctionChatModel(
        reply=lambda call: hop_answer(next(count)),
        record=True,
        profile={"max_input_tokens": WORKER_WINDOW},
    )


def summarise(call: ScriptedCall) -> dict[str, Any]:
    """A working summarizer: keeps every hop number and id it is shown."""
    text = "\n".join(str(m.content) for m in call.messages[1:])  # not the system prompt
    hops = sorted(
        {int(h) for h in HOP_RE.findall(text)}
        | {int(h) for h in re.findall(r"hop (\d+) done", text)}
    )
    return {
        "task": "Research",
        "done": [f"hop {h} done" for h in hops],
        "current_state": f"through hop {max(hops)}" if hops else "started",
        "remaining": ["continue"],
        "key_facts": sorted(set(ID_RE.findall(text))),
    }


def tokens(messages: Any) -> int:
    return count_tokens_approximately(list(messages))


def run(
    summarizer: ScriptedChatModel,
    *,
    breaker: Breaker | None = DEFAULT_SUMMARIZER_BREAKER,
    store: InMemoryStore | None = None,
    hops: int = HOPS,
) -> tuple[dict[str, Any], FunctionChatModel, InMemorySaver, str]:
    model = worker_model()
    worker = Worker(name="researcher", description="Researches.", model=model)
    compaction = Compaction(
        summarizer=summarizer,
        max_context_tokens=WORKER_WINDOW,  # for the router's view; the worker's is its profile
        token_counter=count_tokens_approximately,
        breaker=breaker,
    )
    saver = InMemorySaver()
    app = create_supervisor(
        [worker], router=routes(*["researcher"] * hops), max_steps=hops, compaction=compaction
    ).compile(checkpointer=saver, store=store)
    thread_id = str(uuid.uuid4())
    out = app.invoke(
        {"messages": [("user", "Research the account")]},
        {"configurable": {"thread_id": thread_id}},
    )
    return out, model, saver, thread_id


def assert_inside_windows(out: dict[str, Any], model: FunctionChatModel) -> None:
    assert out["status"] == "done" and len(out["ledger"]) == HOPS
    assert len(model.calls) == HOPS
    assert max(tokens(c.messages) for c in model.calls) <= WORKER_WINDOW
    worker_usage = [u for u in out["usage"] if u["role"] == "worker"]
    assert worker_usage and all(u["tokens"] <= u["window"] == WORKER_WINDOW for u in worker_usage)


def assert_fallbacks_recorded(
    out: dict[str, Any], saver: InMemorySaver, thread_id: str, store: InMemoryStore | None
) -> list[dict[str, Any]]:
    entries = out["compactions"]
    truncated = [e for e in entries if e.get("kind") == "truncated"]
    assert truncated and len(truncated) == len(entries)
    for entry in truncated:
        assert entry["removed"] > 0 and entry["error"]
        assert entry["tokens_after"] < entry["tokens_before"]
    # metrics
    report = compute_metrics(read_threads(saver))
    assert report.compactions.truncated == len(truncated)
    assert report.compactions.failed == len(truncated)
    assert report.compactions.to_dict()["truncated"] == len(truncated)
    # audit
    trail = audit_trail(saver, thread_id)
    lines = [e.line() for e in trail.events if e.kind == "compaction"]
    assert len(lines) == len(truncated)
    assert all("history truncated" in line and "messages dropped" in line for line in lines)
    # the store holds what was dropped
    if store is not None:
        for entry in truncated:
            ref = entry["stored"]
            item = store.get(tuple(ref["namespace"]), ref["key"])
            assert item is not None
            assert len(dropped_messages(item.value)) == entry["removed"]
    return truncated


# -- the three workloads of the issue -------------------------------------------------------


def test_a_summarizer_that_always_raises_truncates_and_its_breaker_opens() -> None:
    clock = FakeClock()
    down = FunctionChatModel(reply=lambda call: RuntimeError("provider down"), record=True)
    store = InMemoryStore()
    out, model, saver, thread_id = run(
        down, breaker=Breaker(failures=3, window=600, cooldown=60, clock=clock), store=store
    )
    assert_inside_windows(out, model)
    truncated = assert_fallbacks_recorded(out, saver, thread_id, store)
    assert len(truncated) >= 5
    # 3 failed compactions of 3 attempts each open the breaker: no call after that
    assert len(down.calls) == 9
    assert [e["attempts"] for e in truncated[:3]] == [3, 3, 3]
    assert all(e["attempts"] == 0 for e in truncated[3:])
    assert all("provider down" in e["error"] for e in truncated[:3])
    assert all("breaker open" in e["error"] for e in truncated[3:])
    # the task (the worker's first prompt) is kept; a marker says where turns went
    slot = out["workers"]["researcher"]["messages"]
    assert slot[0].type == "human" and not is_truncation_marker(slot[0])
    assert any(is_truncation_marker(m) for m in slot)
    state = store.get(summarizer_breaker_namespace(("supervisor", "researcher")), "state")
    assert state is not None and state.value["state"] == "open"


def test_the_breaker_lets_a_probe_through_after_its_cooldown() -> None:
    clock = FakeClock()
    replies: list[Any] = [RuntimeError("down")] * 2

    def reply(call: ScriptedCall) -> Any:
        return replies.pop(0) if replies else summarise(call)

    summarizer = FunctionChatModel(reply=reply, record=True)
    config = Compaction(
        summarizer=summarizer,
        keep=1,
        max_attempts=1,
        token_counter=count_tokens_approximately,
        breaker=Breaker(failures=2, window=600, cooldown=60, clock=clock),
    )
    compactor = Compactor(config, window=100_000)
    history = order_history()
    first = compactor.compact(history, task="t")
    second = compactor.compact(history, task="t")
    assert first.truncated and second.truncated and len(summarizer.calls) == 2
    skipped = compactor.compact(history, task="t")  # open: no call
    assert skipped.truncated and skipped.attempts == 0 and len(summarizer.calls) == 2
    assert skipped.error is not None and "breaker open" in skipped.error
    clock.now += 61  # the cooldown is over: one probe, which succeeds and closes it
    probe = compactor.compact(history, task="t")
    assert probe.compacted and len(summarizer.calls) == 3
    again = compactor.compact(history, task="t")
    assert again.compacted and len(summarizer.calls) == 4


async def test_a_summarizer_returning_invalid_summaries_truncates_async() -> None:
    prose = FunctionChatModel(reply=lambda call: "Here is my summary in prose.", record=True)
    model = worker_model()
    worker = Worker(name="researcher", description="Researches.", model=model)
    compaction = Compaction(
        summarizer=prose,
        max_context_tokens=WORKER_WINDOW,
        token_counter=count_tokens_approximately,
        breaker=None,  # every compaction asks the summarizer, every one falls back
    )
    saver = InMemorySaver()
    app = create_supervisor(
        [worker], router=routes(*["researcher"] * HOPS), max_steps=HOPS, compaction=compaction
    ).compile(checkpointer=saver)
    thread_id = str(uuid.uuid4())
    out = await app.ainvoke(
        {"messages": [("user", "Research the account")]},
        {"configurable": {"thread_id": thread_id}},
    )
    assert_inside_windows(out, model)
    truncated = assert_fallbacks_recorded(out, saver, thread_id, None)
    assert all("no structured output" in e["error"] for e in truncated)
    assert len(prose.calls) == 3 * len(truncated)  # no breaker: max_attempts each time


def test_a_small_summarizer_gets_chunks_that_fit_and_the_key_fact_survives() -> None:
    summarizer = FunctionChatModel(
        reply=summarise, record=True, profile={"max_input_tokens": SUMMARIZER_WINDOW}
    )
    out, model, _, _ = run(summarizer)
    assert_inside_windows(out, model)
    entries = out["compactions"]
    assert entries and all(e.get("kind") == "summary" and e["error"] is None for e in entries)
    # never sent whole: every summarizer call fits its own window, several per compaction
    sizes = [tokens(c.messages) for c in summarizer.calls]
    assert max(sizes) <= SUMMARIZER_WINDOW
    assert len(summarizer.calls) > len(entries)
    # metered against its own window, not the worker's
    usage = [u for u in out["usage"] if u["role"] == "summarizer"]
    assert len(usage) == len(summarizer.calls)
    assert all(u["window"] == SUMMARIZER_WINDOW and u["utilisation"] <= 1 for u in usage)
    # the fact planted at hop 1 is in what the worker sees at hop 20
    last = model.calls[-1]
    assert KEY_FACT in "\n".join(str(m.content) for m in last.messages)
    slot = out["workers"]["researcher"]["messages"]
    assert is_summary_message(slot[0]) and KEY_FACT in str(slot[0].content)


# -- unit cases ------------------------------------------------------------------------------


def order_history() -> list[Any]:
    history: list[Any] = [HumanMessage("Refund the late orders", id="task")]
    for n in range(1, 4):
        history.append(
            AIMessage("", tool_calls=[{"name": "find", "args": {}, "id": f"c{n}"}], id=f"a{n}")
        )
        history.append(ToolMessage(f"ORDER-{n} is late", tool_call_id=f"c{n}", id=f"t{n}"))
    history.append(AIMessage("Checked all", id="end"))
    return history


def test_truncation_keeps_the_task_the_latest_summary_and_whole_tool_pairs() -> None:
    summary = HumanMessage(
        "[Summary of earlier work]",
        id="s",
        additional_kwargs={
            "lgsp_summary": {
                "task": "t",
                "done": ["x"],
                "current_state": "",
                "remaining": [],
                "key_facts": ["ORDER-0"],
            }
        },
    )
    history = [summary, *order_history()[1:]]
    kept, dropped = truncate_history(
        history, 5, budget=10_000, token_counter=count_tokens_approximately
    )
    assert [m.id for m in kept] == ["s", "a3", "t3", "end"]
    assert [m.id for m in dropped] == ["a1", "t1", "a2", "t2"]
    # no summary: the first human message (the task) is kept
    kept, dropped = truncate_history(
        order_history(), 5, budget=10_000, token_counter=count_tokens_approximately
    )
    assert [m.id for m in kept] == ["task", "a3", "t3", "end"]
    assert [m.id for m in dropped] == ["a1", "t1", "a2", "t2"]


def test_truncation_drops_the_task_too_when_the_rest_is_still_too_large() -> None:
    history = [HumanMessage("task " * 400, id="task"), *order_history()[1:]]
    kept, dropped = truncate_history(
        history, 5, budget=60, token_counter=count_tokens_approximately
    )
    assert dropped[0].id == "task"
    assert [m.id for m in kept] == ["a3", "t3", "end"]


def test_the_fallback_marker_sits_where_the_dropped_turns_were() -> None:
    down = ScriptedChatModel(script=[RuntimeError("x")])
    compactor = Compactor(
        Compaction(summarizer=down, keep=1, max_attempts=1, breaker=None), window=100_000
    )
    outcome = compactor.compact(order_history(), task="t")
    assert outcome.messages[0].id == "task"
    assert is_truncation_marker(outcome.messages[1])
    assert outcome.messages[2].id == "end"
    again = compactor.compact(order_history(), task="t")  # a re-run writes the same marker
    assert again.messages[1].id == outcome.messages[1].id


def test_a_summarizer_window_too_small_for_the_prompt_falls_back() -> None:
    summarizer = ScriptedChatModel(script=[], profile={"max_input_tokens": 50})
    compactor = Compactor(Compaction(summarizer=summarizer, keep=1, breaker=None), window=100_000)
    outcome = compactor.compact(order_history(), task="t")
    assert outcome.truncated and outcome.attempts == 0
    assert outcome.error is not None and "summarizer_window" in outcome.error
    assert summarizer.calls == ()


def test_the_summarizer_window_setting_is_used_without_a_profile() -> None:
    summarizer = FunctionChatModel(reply=summarise, record=True)
    config = Compaction(summarizer=summarizer, keep=1, summarizer_window=450, breaker=None)
    compactor = Compactor(config, window=100_000, counter=count_tokens_approximately)
    assert compactor.summarizer_window == 450
    history = [HumanMessage("Audit", id="h")]
    for n in range(1, 9):
        history.append(AIMessage(f"Findings of hop {n}. CASE-{1000 + n} " + "x " * 120, id=f"m{n}"))
    outcome = compactor.compact(history, task="Audit")
    assert outcome.compacted and outcome.summary is not None
    assert len(summarizer.calls) > 2  # map, then reduce
    assert max(tokens(c.messages) for c in summarizer.calls) <= 450
    # every chunk's facts are carried through the reduce
    assert {f"CASE-{1000 + n}" for n in range(1, 8)} <= set(outcome.summary.key_facts)


def test_without_a_known_summarizer_window_one_call_as_before() -> None:
    summarizer = FunctionChatModel(reply=summarise, record=True)
    compactor = Compactor(Compaction(summarizer=summarizer, keep=1, breaker=None), window=100_000)
    assert compactor.summarizer_window == 100_000
    outcome = compactor.compact(order_history(), task="t")
    assert outcome.compacted and len(summarizer.calls) == 1


def test_the_default_breaker() -> None:
    config = Compaction(summarizer=ScriptedChatModel(script=[]))
    assert config.breaker == DEFAULT_SUMMARIZER_BREAKER
    assert (config.breaker.failures, config.breaker.cooldown) == (3, 60.0)


@pytest.mark.parametrize(
    ("field", "value", "error", "match"),
    [
        ("summarizer_window", 0, ValueError, r"Compaction\.summarizer_window: got 0; give"),
        ("summarizer_window", "3000", ValueError, r"Compaction\.summarizer_window: got '3000'"),
        ("summarizer_window", True, ValueError, r"Compaction\.summarizer_window: got True"),
        ("breaker", {"failures": 3}, TypeError, r"Compaction\.breaker: got dict; give a Breaker"),
        ("breaker", 3, TypeError, r"Compaction\.breaker: got int; give a Breaker"),
    ],
)
def test_bad_settings_name_the_field(
    field: str, value: Any, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        Compaction(summarizer=ScriptedChatModel(script=[]), **{field: value})


def test_the_middleware_needs_a_supervisor_label() -> None:
    compactor = Compaction(
        summarizer=ScriptedChatModel(script=[]), max_context_tokens=100
    ).compactor()
    with pytest.raises(ValueError, match=r"CompactionMiddleware\.supervisor: got ''; give"):
        CompactionMiddleware(compactor, supervisor="")


def test_the_middleware_truncates_an_agent_on_its_own() -> None:
    down = ScriptedChatModel(script=[RuntimeError("down")])
    compactor = Compaction(
        summarizer=down, max_context_tokens=300, keep=1, max_attempts=1, breaker=None
    ).compactor()
    middleware = CompactionMiddleware(compactor)
    history: list[BaseMessage] = [HumanMessage("task", id="h")]
    history += [AIMessage("x " * 100, id=f"m{n}") for n in range(4)]
    update = middleware.before_model({"messages": history}, None)
    assert update is not None
    messages = update["messages"][1:]
    assert messages[0].id == "h" and is_truncation_marker(messages[1])
    assert messages[-1].id == "m3"
    assert tokens(messages) < 300


def test_a_domain_of_a_tree_truncates_and_archives_under_its_path() -> None:
    from langgraph_supervisor_pro import WorkerTask

    def pager(task: WorkerTask) -> str:
        return f"FACT-{task.step} paged. " + "detail " * 50

    down = FunctionChatModel(reply=lambda call: RuntimeError("down"), record=True)
    compaction = Compaction(
        summarizer=down,
        max_context_tokens=100_000,
        every_n_steps=2,
        keep=1,
        max_attempts=1,
        breaker=Breaker(failures=1, window=600, cooldown=60, clock=FakeClock()),
    )
    incident = create_supervisor(
        [Worker(name="pager", description="Pages.", agent=pager)],
        router=lambda view: "FINISH" if len(view.ledger) >= 5 else "pager",
        name="incident",
        compaction=compaction,
    )
    store = InMemoryStore()
    saver = InMemorySaver()
    app = create_supervisor(
        [Worker(name="incident", description="Incidents.", agent=incident)],
        router=routes("incident"),
    ).compile(checkpointer=saver, store=store)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    out = app.invoke({"messages": [("user", "The database is down")]}, config)
    assert out["status"] == "done"
    domain = app.get_state(
        {"configurable": {**config["configurable"], "checkpoint_ns": "incident"}}
    ).values
    entries = domain["compactions"]
    assert [(e["step"], e["kind"], e["attempts"]) for e in entries] == [
        (3, "truncated", 1),  # the summarizer fails once: the breaker (failures=1) opens
        (5, "truncated", 0),
    ]
    for entry in entries:
        namespace = tuple(entry["stored"]["namespace"])
        assert namespace[:2] == ("lgsp", "compacted") and namespace[3:] == ("incident", "pager")
        assert store.get(namespace, entry["stored"]["key"]) is not None
    assert len(down.calls) == 1
    breaker = store.get(summarizer_breaker_namespace(("incident", "incident", "pager")), "state")
    assert breaker is not None and breaker.value["state"] == "open"


class Crash(BaseException):
    """Stands for the process dying (not an `Exception`: nothing retries or records it)."""


def test_a_crash_mid_compaction_resumes_into_one_truncation() -> None:
    crashed: list[bool] = []

    def reply(call: ScriptedCall) -> Any:
        if not crashed:
            crashed.append(True)
            raise Crash
        return RuntimeError("provider down")

    down = FunctionChatModel(reply=reply, record=True)
    model = worker_model()
    compaction = Compaction(
        summarizer=down,
        max_context_tokens=WORKER_WINDOW,
        token_counter=count_tokens_approximately,
        breaker=None,
    )
    saver = InMemorySaver()
    store = InMemoryStore()
    app = create_supervisor(
        [Worker(name="researcher", description="Researches.", model=model)],
        router=routes(*["researcher"] * HOPS),
        max_steps=HOPS,
        compaction=compaction,
    ).compile(checkpointer=saver, store=store)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    with pytest.raises(Crash):
        app.invoke({"messages": [("user", "Research the account")]}, config)
    assert app.get_state(config).next == ("compaction",)  # died inside the step
    out = app.invoke(None, config)
    assert out["status"] == "done" and len(out["ledger"]) == HOPS
    slot = out["workers"]["researcher"]["messages"]
    ids = [m.id for m in slot]
    assert len(ids) == len(set(ids))  # nothing written twice
    assert max(tokens(c.messages) for c in model.calls) <= WORKER_WINDOW
    assert all(e["kind"] == "truncated" for e in out["compactions"])

"""The judge step: same-model refusal at build time, verdicts, queueing, errors, replays,
reviews, domains and LangSmith feedback."""

from __future__ import annotations

import asyncio
import math
import threading
from typing import Any

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langsmith import tracing_context

from langgraph_supervisor_pro import Compaction, ReviewPolicy, Worker, create_supervisor
from langgraph_supervisor_pro.evals._judge import OnlineJudge
from langgraph_supervisor_pro.evals._judge_queue import JUDGE_NAMESPACE, judge_reviews
from langgraph_supervisor_pro.review._desk import Approve, resolve_review
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedChatModel
from tests._helpers import ask, routes
from tests._langsmith import CaptureServer, _Handler, capture_server, children, project_id
from tests.evals.test_judge import (
    HIGH,
    LOW,
    AcmeJudge,
    ChatAcme,
    answer,
    config,
    judge_of,
    team,
)

# ------------------------------------------------------------- same-model refusal


def refused(build, *places: str) -> str:
    with pytest.raises(ValueError, match=r"judge: OnlineJudge\.model is the same model as") as info:
        build()
    message = str(info.value)
    for place in places:
        assert place in message, message
    assert "give OnlineJudge(model=...) a different model" in message
    return message


def test_the_supervisors_model_is_refused_as_judge_by_identity_and_by_name():
    model = ScriptedChatModel(name="gpt-x", script=[])
    message = refused(lambda: team(OnlineJudge(model=model), model=model), "the supervisor's model")
    assert "the same object" in message
    twin = ScriptedChatModel(name="gpt-x", script=[{"score": 1, "passed": True}])
    message = refused(lambda: team(OnlineJudge(model=twin), model=model), "the supervisor's model")
    assert "'scriptedchatmodel/gpt-x'" in message


def test_a_provider_model_is_refused_by_provider_and_model_name():
    supervisor = AcmeJudge(script=[], model="acme-large", name="router-model")
    writer = ChatAcme(responses=["x"], model="acme-large")
    judge = OnlineJudge(model=AcmeJudge(script=[], model="acme-large", name="judge"))
    refused(lambda: team(judge, model=supervisor), "the supervisor's model", "'acme/acme-large'")
    refused(lambda: team(judge, synthesizer=writer), "the synthesizer", "'acme/acme-large'")
    # Another model name of the same provider is another model.
    team(OnlineJudge(model=AcmeJudge(script=[], model="acme-small")), model=supervisor)
    team(OnlineJudge(model=AcmeJudge(script=[], model="acme-small")), synthesizer=writer)


def test_a_judge_without_structured_output_is_refused_at_build_time():
    with pytest.raises(TypeError, match="ChatAcme does not support with_structured_output"):
        team(OnlineJudge(model=ChatAcme(responses=["y"], model="acme-small")))


@pytest.mark.parametrize(
    ("kwargs", "place"),
    [
        ({"synthesizer": "MODEL"}, "the synthesizer"),
        ({"synthesizer": "BOUND"}, "the synthesizer"),
        (
            {"compaction": "COMPACTION"},
            "the compaction summarizer (create_supervisor(compaction=...))",
        ),
        ({"workers": "MODEL_WORKER"}, "worker 'w''s model (Worker.model)"),
        ({"workers": "VERIFY"}, "worker 'w''s checker (Worker.verify)"),
        ({"workers": "WORKER_COMPACTION"}, "worker 'w''s compaction summarizer"),
        ({"workers": "CREATE_AGENT"}, "worker 'w''s agent"),
        ({"workers": "CLOSURE"}, "worker 'w''s agent"),
        ({"workers": "VERIFY_FUNCTION"}, "worker 'w''s checker (Worker.verify)"),
        ({"workers": "FALLBACK"}, "worker 'w''s fallback (Worker.fallback)"),
        ({"router": "ROUTER"}, "the router (create_supervisor(router=...))"),
    ],
)
def test_every_model_of_the_graph_is_refused_as_judge(kwargs, place):
    model = FunctionChatModel(name="shared", reply=lambda call: "ok")
    judge = OnlineJudge(model=FunctionChatModel(name="shared", reply=lambda call: HIGH))
    values: dict[str, Any] = {
        "MODEL": model,
        "BOUND": model.bind(stop=["\n"]),
        "COMPACTION": Compaction(summarizer=model, max_context_tokens=8000),
        "MODEL_WORKER": [Worker(name="w", description="Works.", model=model)],
        "VERIFY": [Worker(name="w", description="Works.", agent=answer, verify=model)],
        "WORKER_COMPACTION": [
            Worker(
                name="w",
                description="Works.",
                agent=answer,
                compaction=Compaction(summarizer=model, max_context_tokens=8000),
            )
        ],
        "CREATE_AGENT": [
            Worker(name="w", description="Works.", agent=create_agent(model, tools=[]))
        ],
        "CLOSURE": [
            Worker(
                name="w", description="Works.", agent=lambda task: model.invoke(task.task).content
            )
        ],
        "VERIFY_FUNCTION": [
            Worker(
                name="w",
                description="Works.",
                agent=answer,
                verify=lambda task, result: bool(model.invoke(result.result_text()).content),
            )
        ],
        "FALLBACK": [
            Worker(
                name="w",
                description="Works.",
                agent=answer,
                fallback=lambda task: model.invoke(task.task).content,
            )
        ],
        "ROUTER": lambda view: "FINISH" if view.ledger or model.invoke("x") is None else "w",
    }
    built = {key: values[value] for key, value in kwargs.items()}
    refused(lambda: team(judge, **built), place)


def test_a_nested_domains_models_are_refused_with_their_path():
    shared = ScriptedChatModel(name="ops-model", script=[])
    pager = create_supervisor(
        [Worker(name="oncall", description="Pages people.", model=shared)], router=routes("oncall")
    )
    ops = create_supervisor(
        [Worker(name="pager", description="Pages.", agent=pager)], router=routes("pager")
    )
    judge = OnlineJudge(model=ScriptedChatModel(name="ops-model", script=[]))
    refused(
        lambda: team(judge, workers=[Worker(name="ops", description="Runs ops.", agent=ops)]),
        "domain 'ops' > domain 'pager' > worker 'oncall''s model (Worker.model)",
    )
    # A domain's own judge is a model of the graph too.
    judged_domain = create_supervisor(
        [Worker(name="w", description="Works.", agent=answer)], router=routes("w"), judge=judge
    )
    refused(
        lambda: team(
            OnlineJudge(model=ScriptedChatModel(name="ops-model", script=[])),
            workers=[Worker(name="dom", description="A domain.", agent=judged_domain)],
        ),
        "domain 'dom' > the online judge of this graph",
    )
    # A different judge is accepted at every level.
    team(
        OnlineJudge(model=ScriptedChatModel(name="judge", script=[])),
        workers=[Worker(name="ops", description="Runs ops.", agent=ops)],
    )


def test_other_builder_errors():
    with pytest.raises(TypeError, match="judge: got dict; give an OnlineJudge"):
        team({"model": "x"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name: 'judge' is taken by the judge step"):
        team(judge_of(), workers=[Worker(name="judge", description="Judges.", agent=answer)])
    with pytest.raises(ValueError, match="name: 'judge' is taken by the judge step"):
        team(judge_of(), name="judge")
    # Without a judge, a worker may still be called "judge".
    team(workers=[Worker(name="judge", description="J.", agent=answer)], router=routes("judge"))


# ------------------------------------------------------------------ the judge step


def test_a_low_score_is_kept_and_queued_and_the_run_is_unchanged():
    store = InMemoryStore()
    judge = judge_of(LOW, sample=1.0)
    app = team(judge).compile(checkpointer=InMemorySaver(), store=store)
    plain = team().compile(checkpointer=InMemorySaver())
    out = app.invoke(ask("green tea"), config("low-1"))
    reference = plain.invoke(ask("green tea"), config("low-1"))
    assert out["status"] == reference["status"] == "done"
    assert out["messages"][-1].content == reference["messages"][-1].content
    (entry,) = out["judgements"]
    assert entry["turn"] == 1 and entry["key"] == "low-1:1"
    assert (entry["score"], entry["passed"], entry["reasons"]) == (0.2, False, ["misses the price"])
    assert entry["queued"] is True and entry["error"] is None
    assert entry["judge"] == "scriptedchatmodel/judge"
    assert entry["feedback_id"] is None and entry["feedback_error"] is None
    (item,) = judge_reviews(store)
    assert (item.key, item.thread_id, item.turn, item.review) == ("low-1:1", "low-1", 1, "open")
    assert item.task == "green tea" and item.answer == "Answer about green tea"
    assert item.graph == "supervisor" and item.reasons == ("misses the price",)
    # What the judge was shown: its criteria, the task, the hops and the answer.
    (call,) = judge.model.calls  # type: ignore[attr-defined]
    system, human = (str(m.content) for m in call.messages)
    assert judge.criteria in system
    assert "Task:\ngreen tea" in human and "- w: success: Answer about green tea" in human
    assert human.endswith("Answer:\nAnswer about green tea")
    assert call.tools == ("JudgeVerdict",)


def test_a_good_score_is_kept_but_not_queued_and_each_turn_is_judged_once():
    store = InMemoryStore()
    judge = judge_of(HIGH, LOW, sample=1.0)
    app = team(judge, router=lambda view: "FINISH" if view.ledger else "w").compile(
        checkpointer=InMemorySaver(), store=store
    )
    cfg = config("turns")
    first = app.invoke(ask("one"), cfg)
    assert [(e["key"], e["queued"]) for e in first["judgements"]] == [("turns:1", False)]
    second = app.invoke(ask("two"), cfg)
    assert [(e["key"], e["queued"]) for e in second["judgements"]] == [
        ("turns:1", False),
        ("turns:2", True),
    ]
    assert [i.key for i in judge_reviews(store)] == ["turns:2"]
    stored = store.get(JUDGE_NAMESPACE, "turns:1")
    assert stored is not None and stored.value["review"] is None and stored.value["score"] == 0.9
    judge.model.assert_complete()  # type: ignore[attr-defined]


def test_a_threshold_is_a_strict_lower_bound():
    store = InMemoryStore()
    judge = judge_of({"score": 0.5, "passed": True, "reasons": []}, sample=1.0, threshold=0.5)
    out = team(judge).compile(checkpointer=InMemorySaver(), store=store).invoke(ask(), config())
    assert out["judgements"][0]["queued"] is False and judge_reviews(store) == []


@pytest.mark.parametrize(
    ("step", "needle"),
    [
        (RuntimeError("judge API down"), "the judge failed: RuntimeError: judge API down"),
        ({"score": 1.5, "passed": True, "reasons": []}, "invalid verdict"),
        ({"score": math.nan, "passed": True, "reasons": []}, "invalid verdict"),
        ({"passed": True}, "invalid verdict"),
        ({"score": 0.1, "passed": "maybe", "reasons": []}, "invalid verdict"),
        ("free text, no verdict", "invalid verdict"),
    ],
)
def test_a_judge_error_or_invalid_verdict_is_recorded_and_never_fails_the_run(step, needle):
    store = InMemoryStore()
    app = team(judge_of(step, sample=1.0)).compile(checkpointer=InMemorySaver(), store=store)
    out = app.invoke(ask("tea"), config("broken"))
    assert out["status"] == "done" and out["messages"][-1].content == "Answer about tea"
    (entry,) = out["judgements"]
    assert needle in entry["error"]
    assert entry["score"] is None and entry["passed"] is None and entry["queued"] is False
    assert judge_reviews(store) == []
    # The failed verdict is stored too: the turn is not judged again on a replay.
    assert store.get(JUDGE_NAMESPACE, "broken:1") is not None


def test_a_secret_in_a_judge_error_is_scrubbed():
    from langgraph_supervisor_pro import register_secret

    register_secret("sk-judge-1234567890")
    out = (
        team(judge_of(RuntimeError("bad key sk-judge-1234567890"), sample=1.0))
        .compile(checkpointer=InMemorySaver())
        .invoke(ask(), config())
    )
    error = out["judgements"][0]["error"]
    assert "sk-judge-1234567890" not in error and "***" in error


def test_runs_that_did_not_end_done_or_out_of_the_sample_are_not_judged():
    judge = judge_of(sample=1.0)  # an empty script: any call would be recorded as an error
    halted = (
        team(judge, router=lambda view: "w", max_steps=2)
        .compile(checkpointer=InMemorySaver())
        .invoke(ask(), config())
    )
    assert halted["status"] == "halted" and not halted.get("judgements")
    none = team(judge_of(sample=0.0)).compile(checkpointer=InMemorySaver()).invoke(ask(), config())
    assert none["status"] == "done" and not none.get("judgements")
    assert judge.model.calls == ()  # type: ignore[attr-defined]


def test_without_a_store_a_low_score_says_it_could_not_be_queued():
    out = team(judge_of(LOW, sample=1.0)).compile().invoke(ask(), {})
    (entry,) = out["judgements"]
    assert entry["score"] == 0.2 and entry["queued"] is False
    assert "no store to queue it in" in entry["error"] and "compile(store=...)" in entry["error"]
    # Without a thread id (no checkpointer) the turn's message id keys it.
    assert entry["key"].endswith(":1") and len(entry["key"]) > 2


def test_async_runs_judge_on_the_event_loop():
    store = InMemoryStore()
    judge = judge_of(LOW, sample=1.0)
    app = team(judge).compile(checkpointer=InMemorySaver(), store=store)
    out = asyncio.run(app.ainvoke(ask("async tea"), config("async-1")))
    assert out["judgements"][0]["queued"] is True
    assert [i.key for i in judge_reviews(store)] == ["async-1:1"]


def test_a_replay_from_before_the_judge_step_reuses_the_verdict():
    store = InMemoryStore()
    saver = InMemorySaver()
    judge = judge_of(LOW, sample=1.0)  # one verdict: a second call would record an error
    app = team(judge).compile(checkpointer=saver, store=store)
    cfg = config("replay")
    first = app.invoke(ask("tea"), cfg)
    (before,) = [s for s in app.get_state_history(cfg) if s.next == ("judge",)]
    replayed = app.invoke(None, before.config)
    assert replayed["judgements"] == first["judgements"]
    assert len(judge.model.calls) == 1  # type: ignore[attr-defined]
    assert len(judge_reviews(store)) == 1


def test_a_run_resumed_after_a_review_is_judged_once():
    store = InMemoryStore()
    saver = InMemorySaver()
    judge = judge_of(LOW, sample=1.0)
    app = team(judge, review=ReviewPolicy(review_timeout=900)).compile(
        checkpointer=saver, store=store
    )
    cfg = {"configurable": {"thread_id": "reviewed", "autonomy": "manual"}}
    paused = app.invoke(ask("tea"), cfg)
    assert paused["__interrupt__"] and not paused.get("judgements")
    assert judge.model.calls == ()  # type: ignore[attr-defined]
    out = resolve_review(app, thread_id="reviewed", decision=Approve(), reviewer="alice")
    assert out["status"] == "done"
    assert [e["key"] for e in out["judgements"]] == ["reviewed:1"]
    assert len(judge.model.calls) == 1  # type: ignore[attr-defined]
    assert [i.key for i in judge_reviews(store)] == ["reviewed:1"]


def test_a_judge_on_a_domain_keys_its_turns_by_the_domain_path():
    store = InMemoryStore()
    judge = judge_of(LOW, sample=1.0)
    domain = create_supervisor(
        [Worker(name="w", description="Works.", agent=answer)],
        router=lambda view: "FINISH" if view.ledger else "w",
        judge=judge,
    )
    app = create_supervisor(
        [Worker(name="ops", description="A domain.", agent=domain)],
        router=lambda view: "FINISH" if view.ledger else "ops",
    ).compile(checkpointer=InMemorySaver(), store=store)
    out = app.invoke(ask("tea"), config("tree"))
    assert out["status"] == "done"
    (item,) = judge_reviews(store)
    assert (item.key, item.path, item.turn) == ("tree:ops:1", ("ops",), 1)


def test_the_judge_step_is_a_node_of_the_drawing():
    graph = team(judge_of()).compile()
    drawing = graph.get_graph()
    edges = {(e.source, e.target, e.conditional) for e in drawing.edges}
    assert {("synthesis", "judge", True), ("synthesis", "__end__", True)} <= edges
    assert ("judge", "__end__", False) in edges
    # A judged domain still expands inside its parent's drawing (one start, one end).
    domain = team(judge_of())
    root = create_supervisor(
        [Worker(name="ops", description="Ops.", agent=domain)], router=routes("ops")
    ).compile()
    assert {"ops:judge", "ops:synthesis"} <= set(root.get_graph(xray=True).nodes)


def test_a_turn_out_of_the_sample_costs_no_step():
    saver = InMemorySaver()
    cfg = config("unsampled")
    team(judge_of(sample=0.0)).compile(checkpointer=saver).invoke(ask(), cfg)
    plain = InMemorySaver()
    team().compile(checkpointer=plain).invoke(ask(), cfg)
    assert len(list(saver.list(cfg))) == len(list(plain.list(cfg)))
    judged_saver = InMemorySaver()
    team(judge_of(HIGH, sample=1.0)).compile(checkpointer=judged_saver).invoke(ask(), cfg)
    assert len(list(judged_saver.list(cfg))) == len(list(plain.list(cfg))) + 1


# ------------------------------------------------------------------------ LangSmith


def traced(app, server: CaptureServer, cfg, project: str = "lgsp-judge"):
    client = server.client()
    with tracing_context(enabled=True, client=client, project_name=project):
        out = app.invoke(ask("tea"), cfg)
    client.flush()
    return out


def test_the_score_goes_to_langsmith_as_feedback_on_the_runs_trace(langsmith_server):
    client = langsmith_server.client()
    judge = judge_of(LOW, sample=1.0, client=client, feedback_key="quality")
    app = team(judge).compile(checkpointer=InMemorySaver(), store=InMemoryStore())
    out = traced(app, langsmith_server, config("traced"))
    client.flush()
    (entry,) = out["judgements"]
    (root,) = children(langsmith_server.runs(), None)
    (feedback,) = langsmith_server.feedback
    assert feedback["id"] == entry["feedback_id"]
    assert feedback["run_id"] == feedback["trace_id"] == root["id"]
    assert feedback["session_id"] == project_id("lgsp-judge")
    assert (feedback["key"], feedback["score"], feedback["comment"]) == (
        "quality",
        0.2,
        "misses the price",
    )
    assert feedback["feedback_source"] == {
        "type": "model",
        "metadata": {
            "judge": "scriptedchatmodel/judge",
            "passed": False,
            "threshold": 0.5,
            "judgement_key": "traced:1",
        },
    }
    assert entry["feedback_error"] is None
    # The judge step is a node of the trace, its model call beneath it.
    runs = langsmith_server.runs()
    assert [r["name"] for r in children(runs, root)][-2:] == ["synthesis", "judge"]
    judge_run = children(runs, root)[-1]
    (call,) = children(runs, judge_run)
    assert "judge" in [r["name"] for r in children(runs, call)]


def test_without_tracing_no_feedback_is_sent_and_the_entry_says_why(langsmith_server):
    judge = judge_of(HIGH, sample=1.0, client=langsmith_server.client())
    out = team(judge).compile(checkpointer=InMemorySaver()).invoke(ask(), config())
    entry = out["judgements"][0]
    assert entry["feedback_id"] is None and "not traced to LangSmith" in entry["feedback_error"]
    assert langsmith_server.feedback == []


class _NoProjects(_Handler):
    def do_GET(self) -> None:
        if self.path.startswith("/sessions"):
            self.send_response(404)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")
            return
        super().do_GET()


def test_langsmith_refusing_the_feedback_leaves_the_verdict_and_the_run(langsmith_server):
    with capture_server() as server:
        server.RequestHandlerClass = _NoProjects
        judge = judge_of(LOW, sample=1.0, client=server.client())
        store = InMemoryStore()
        app = team(judge).compile(checkpointer=InMemorySaver(), store=store)
        out = traced(app, server, config("refused"))
    assert out["status"] == "done"
    (entry,) = out["judgements"]
    assert entry["queued"] is True and entry["feedback_id"] is None
    assert "LangSmith refused the feedback: LangSmithNotFoundError" in entry["feedback_error"]
    assert [i.key for i in judge_reviews(store)] == ["refused:1"]


# -------------------------------------------------------------- streaming, time-outs


def test_the_judges_tokens_are_not_streamed_as_the_answer():
    app = team(judge_of(LOW, sample=1.0)).compile(checkpointer=InMemorySaver())
    cfg = config("streamed")
    nodes = [
        meta.get("langgraph_node") for _, meta in app.stream(ask(), cfg, stream_mode="messages")
    ]
    assert "judge" not in nodes
    assert app.get_state(cfg).values["judgements"][0]["score"] == 0.2  # it did judge


class SlowJudge(ScriptedChatModel):
    """A judge that answers only when released (sync), or never (async)."""

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):
        assert RELEASE.wait(30)
        return super()._generate(messages, stop, run_manager, **kw)

    async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):
        await asyncio.sleep(30)
        raise AssertionError("cancelled by the timeout before this")


RELEASE = threading.Event()


def test_a_judge_past_its_timeout_is_recorded_and_the_run_returns():
    judge = OnlineJudge(model=SlowJudge(name="slow", script=[HIGH]), sample=1.0, timeout=0.05)
    app = team(judge).compile(checkpointer=InMemorySaver(), store=InMemoryStore())
    RELEASE.clear()
    try:
        out = app.invoke(ask("tea"), config("slow-sync"))
    finally:
        RELEASE.set()  # the abandoned call finishes in its thread; its answer is dropped
    assert out["status"] == "done" and out["messages"][-1].content == "Answer about tea"
    (entry,) = out["judgements"]
    assert entry["score"] is None
    assert entry["error"] == (
        "the judge failed: JudgeTimeoutError: no verdict within the judge's timeout of 0.05s"
    )
    judge = OnlineJudge(model=SlowJudge(name="slow", script=[]), sample=1.0, timeout=0.05)
    app = team(judge).compile(checkpointer=InMemorySaver())
    out = asyncio.run(app.ainvoke(ask("tea"), config("slow-async")))
    assert out["status"] == "done" and "JudgeTimeoutError" in out["judgements"][0]["error"]


def test_the_judge_is_shown_a_cut_task_and_answer():
    judge = judge_of(HIGH, sample=1.0, max_answer_chars=100)
    team(judge).compile(checkpointer=InMemorySaver()).invoke(ask("x" * 5000), config())
    (call,) = judge.model.calls  # type: ignore[attr-defined]
    human = str(call.messages[-1].content)
    task = human.split("\n\nWork done")[0]
    answer = human.split("Answer:\n")[-1]
    assert task == "Task:\n" + "x" * 99 + "…"
    assert len(answer) == 100 and answer.startswith("Answer about x") and answer.endswith("…")


class VanishingJudgeStore(InMemoryStore):
    """A store whose judge namespace is gone (as a dropped table would be): reads and
    writes there raise; the workers' outputs are kept as usual."""

    def batch(self, ops: Any) -> Any:
        ops = list(ops)
        if any(tuple(getattr(op, "namespace", ()))[:2] == JUDGE_NAMESPACE for op in ops):
            raise ConnectionError("the judge's table is gone")
        return super().batch(ops)

    async def abatch(self, ops: Any) -> Any:
        return self.batch(ops)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_store_that_fails_the_judge_leaves_the_run_and_says_why(mode):
    judge = judge_of(LOW, sample=1.0)
    app = team(judge).compile(checkpointer=InMemorySaver(), store=VanishingJudgeStore())
    cfg = config(f"vanishing-{mode}")
    if mode == "sync":
        call = app.invoke(ask("tea"), cfg)
    else:
        call = asyncio.run(app.ainvoke(ask("tea"), cfg))
    assert call["status"] == "done" and call["messages"][-1].content == "Answer about tea"
    (entry,) = call["judgements"]
    assert entry["score"] == 0.2 and entry["queued"] is False
    assert entry["error"] == (
        "the verdict could not be stored: ConnectionError: the judge's table is gone"
    )

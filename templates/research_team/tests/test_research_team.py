"""The research team, offline: fan-out, sources in the store, the report, compaction."""

from __future__ import annotations

import asyncio
import os
import re
import uuid

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph_supervisor_pro import SupervisorView
from langgraph_supervisor_pro.compaction import is_summary_message
from langgraph_supervisor_pro.persistence import output_namespace
from langgraph_supervisor_pro.testing import FunctionChatModel

from research_team.graph import (
    DEFAULT_CONTEXT_TOKENS,
    build_graph,
    context_tokens,
    get_sources,
    lookup_figures,
    model_for,
    plan,
    researcher_reply,
    search_corpus,
    search_sources,
    sources_namespace,
)

HEAT_PUMP = (
    "Should I replace my gas boiler with a heat pump? Compare running costs and emissions, "
    "and write a short report with sources."
)
CONVERSATION = [
    HEAT_PUMP,
    "How loud are heat pumps, and where should the outdoor unit go?",
    "Is rooftop solar worth it in central Europe?",
    "Would a home battery help me use more of my solar power?",
    "Should I insulate the loft before installing a heat pump?",
    "How long do home batteries last?",
    "What does a heat pump cost to install?",
    "Do heat pumps still work in a cold winter?",
]
"""A long research conversation: one thread, eight questions."""


def compiled(environ=None, *, store=True):
    graph = build_graph(environ or {})
    return graph.compile(checkpointer=InMemorySaver(), store=InMemoryStore() if store else None)


def config():
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def ask(app, text, cfg):
    return app.invoke({"messages": [("user", text)]}, cfg)


def this_turn(out):
    return sorted(
        (e["step"], e["worker"], e["status"]) for e in out["ledger"] if e["turn"] == out["turn"]
    )


def cited(text):
    return set(re.findall(r"\[([SD]\d+)\]", text))


def test_researcher_and_analyst_search_at_once_then_the_writer_reports() -> None:
    app, cfg = compiled(), config()
    out = ask(app, HEAT_PUMP, cfg)
    assert out["status"] == "done"
    assert this_turn(out) == [
        (1, "researcher", "success"),
        (2, "analyst", "success"),
        (3, "writer", "success"),
    ]
    # One super-step ran both searches: a checkpoint had both workers next.
    nexts = [set(snapshot.next) for snapshot in app.get_state_history(cfg)]
    assert {"researcher", "analyst"} in nexts
    assert not any("writer" in n and "researcher" in n for n in nexts)


def test_the_report_cites_the_sources_and_figures_found() -> None:
    app, cfg = compiled(), config()
    report = ask(app, HEAT_PUMP, cfg)["messages"][-1].content
    assert report.startswith(f"# {HEAT_PUMP}")
    findings, sources = report.split("## Sources")
    assert "## Findings" in findings and "## Figures" in findings
    # The arithmetic, from the figures: 12,000 kWh of heat a year.
    assert "Gas boiler: 13,333 kWh of gas, 1,333 EUR and 2,667 kg CO2 a year" in findings
    assert "Heat pump: 3,871 kWh of electricity, 1,161 EUR and 968 kg CO2 a year" in findings
    assert {"S1", "S2", "D1", "D5"} <= cited(findings)
    # Every id cited in the text has its entry in the list of sources, and nothing else.
    listed = re.findall(r"^\[([SD]\d+)\] ", sources, re.MULTILINE)
    assert set(listed) == cited(findings) and len(listed) == len(set(listed))
    assert (
        "[S2] What a heat pump installation really costs. Home Retrofit Quarterly, 2023. "
        "https://example.org/home-retrofit-quarterly/heat-pump-costs"
    ) in sources
    assert "not found in the store" not in report


def test_every_source_found_is_kept_in_the_store_for_this_thread() -> None:
    store = InMemoryStore()
    app = build_graph({}).compile(checkpointer=InMemorySaver(), store=store)
    first, second = config(), config()
    ask(app, HEAT_PUMP, first)
    ask(app, "Is rooftop solar worth it in central Europe?", second)
    kept = {
        item.key: item.value
        for item in store.search(sources_namespace(first["configurable"]["thread_id"]))
    }
    assert {"S1", "S2", "S8"} <= set(kept)
    assert {f"D{n}" for n in range(1, 8)} <= set(kept)
    assert kept["S1"]["kind"] == "source" and kept["D2"]["kind"] == "figure"
    assert kept["D2"]["value"] == 0.10 and kept["D2"]["unit"] == "EUR/kWh"
    # The other thread asked about solar: its sources are its own.
    other = {i.key for i in store.search(sources_namespace(second["configurable"]["thread_id"]))}
    assert "S4" in other and "S2" not in other
    # The workers' full outputs live in the store too; the state keeps references.
    thread = first["configurable"]["thread_id"]
    (research,) = store.search(output_namespace(thread, "researcher"))
    assert "[S2]" in research.value["result"]
    state = app.get_state(first).values
    assert state["workers"]["researcher"]["results"][-1]["ref"]["key"] == research.key


def test_requests_on_other_subjects_cite_their_own_sources() -> None:
    app = compiled()
    out = ask(app, "Would a home battery help me use more of my solar power?", config())
    report = out["messages"][-1].content
    assert {"S4", "S5", "S6"} <= cited(report)
    assert "S2" not in cited(report)
    assert "Estimate for one year of heating" not in report


def test_one_compiled_graph_serves_any_number_of_runs() -> None:
    # The offline models decide from what they are shown, never from how often they ran.
    app = compiled()
    reports = [ask(app, HEAT_PUMP, config())["messages"][-1].content for _ in range(3)]
    assert reports[0] == reports[1] == reports[2]
    cfg = config()
    for question in CONVERSATION[:3]:
        out = ask(app, question, cfg)
        assert out["status"] == "done"
        assert [w for _, w, _ in this_turn(out)] == ["researcher", "analyst", "writer"]
        assert out["messages"][-1].content.startswith(f"# {question}")


def test_async_runs_fan_out_too() -> None:
    app, cfg = compiled(), config()
    out = asyncio.run(app.ainvoke({"messages": [("user", HEAT_PUMP)]}, cfg))
    assert out["status"] == "done"
    assert [w for _, w, _ in this_turn(out)] == ["researcher", "analyst", "writer"]
    assert "1,161 EUR" in out["messages"][-1].content


def test_a_long_research_conversation_is_compacted_within_the_window() -> None:
    app, cfg = compiled(), config()
    for question in CONVERSATION:
        out = ask(app, question, cfg)
        assert out["status"] == "done"
        assert out["messages"][-1].content.startswith(f"# {question}")
    compactions = out["compactions"]
    first = {}
    for c in compactions:
        first.setdefault(c["worker"], c["turn"])
    # The writer (whose prompt carries what it reads) first compacts on the fourth question,
    # the researcher on the eighth; before a hop and inside one (before a model call).
    assert first == {"writer": 4, "researcher": 8}
    assert {c["reason"] for c in compactions} == {"trigger", "within_hop"}
    assert all(c["error"] is None and c["tokens_after"] < c["tokens_before"] for c in compactions)
    # No model call passed the 8,192-token window.
    assert max(u["tokens"] for u in out["usage"]) <= DEFAULT_CONTEXT_TOKENS
    assert {u["window"] for u in out["usage"]} == {DEFAULT_CONTEXT_TOKENS}
    # The researcher's summary keeps the first question's cited findings.
    history = out["workers"]["researcher"]["messages"]
    (summary,) = [m for m in history if is_summary_message(m)]
    facts = summary.additional_kwargs["lgsp_summary"]["key_facts"]
    assert any("9,000-14,000 EUR" in fact and "[S2]" in fact for fact in facts)
    assert count_tokens_approximately(history) < 0.7 * DEFAULT_CONTEXT_TOKENS


def test_without_compaction_the_same_conversation_overflows_8k() -> None:
    app, cfg = compiled({"LGSP_CONTEXT_TOKENS": "1000000"}), config()
    for question in CONVERSATION:
        out = ask(app, question, cfg)
    assert out["compactions"] == []
    assert max(u["tokens"] for u in out["usage"]) > DEFAULT_CONTEXT_TOKENS


def test_a_question_outside_the_corpus_ends_with_no_sources() -> None:
    out = ask(compiled(), "What is the capital of Peru?", config())
    assert out["status"] == "done"
    assert [w for _, w, _ in this_turn(out)] == ["researcher", "analyst", "writer"]
    report = out["messages"][-1].content
    assert "found no sources" in report and cited(report) == set()


def test_without_a_store_the_report_says_the_source_details_are_missing() -> None:
    out = ask(compiled(store=False), HEAT_PUMP, config())
    report = out["messages"][-1].content
    assert "[S2] (not found in the store)" in report
    assert "compile the graph with a store" in report


def view(*done):
    ledger = tuple({"worker": worker, "status": status} for worker, status in done)
    return SupervisorView(
        task=HEAT_PUMP,
        step=len(done),
        turn=1,
        ledger=ledger,
        visits={},
        workers=("researcher", "analyst", "writer"),
    )


@pytest.mark.parametrize(
    ("done", "decision"),
    [
        ((), ["researcher", "analyst"]),
        ((("researcher", "success"),), ["analyst"]),
        ((("researcher", "failed"), ("analyst", "success")), "writer"),
        ((("analyst", "failed"), ("researcher", "failed")), "writer"),
        ((("researcher", "success"), ("analyst", "success"), ("writer", "failed")), "FINISH"),
    ],
)
def test_the_plan_goes_on_from_what_the_ledger_shows(done, decision) -> None:
    # A failed search still leaves the writer to report what there is; a failed writer ends.
    got = plan(view(*done))
    assert (got if isinstance(got, str) else [d["next"] for d in got]) == decision


def test_the_offline_models_decide_from_the_messages_and_never_run_out() -> None:
    prompt = HumanMessage(f"Task: {HEAT_PUMP}\n\nInstructions for you: search")
    model = FunctionChatModel(reply=lambda call: researcher_reply(call.messages))
    replies = [model.invoke([prompt]) for _ in range(20_000)]
    assert {str([c["args"] for c in r.tool_calls]) for r in replies} == {
        "[{'query': 'heat pump cost emission'}]"
    }
    # Every call gets tool-call ids of its own.
    assert len({r.tool_calls[0]["id"] for r in replies}) == len(replies)


def test_the_tools_show_a_model_only_their_own_arguments() -> None:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    shown = {
        t.name: convert_to_openai_tool(t)["function"]
        for t in (search_sources, lookup_figures, get_sources)
    }
    assert {name: set(f["parameters"]["properties"]) for name, f in shown.items()} == {
        "search_sources": {"query"},
        "lookup_figures": {"subject"},
        "get_sources": {"ids"},
    }
    assert all("runtime" not in f["description"] for f in shown.values())


def test_the_search_is_deterministic_and_ranks_by_matching_words() -> None:
    assert [s["id"] for s in search_corpus("heat pump noise")] == ["S3", "S1", "S2"]
    assert search_corpus("capital of peru") == []


@pytest.mark.parametrize("value", ["lots", "512", "-9000", "8192.5"])
def test_a_bad_context_window_is_refused_naming_the_variable(value) -> None:
    with pytest.raises(ValueError, match="LGSP_CONTEXT_TOKENS: got"):
        context_tokens({"LGSP_CONTEXT_TOKENS": value})
    with pytest.raises(ValueError, match="LGSP_CONTEXT_TOKENS"):
        build_graph({"LGSP_CONTEXT_TOKENS": value})


def test_lgsp_model_sets_every_role_and_a_role_variable_overrides_it(monkeypatch) -> None:
    import langchain.chat_models

    made = []

    def init_chat_model(name):
        made.append(name)
        return FunctionChatModel(name=name, reply=lambda call: researcher_reply(call.messages))

    monkeypatch.setattr(langchain.chat_models, "init_chat_model", init_chat_model)
    environ = {"LGSP_MODEL": " openai:gpt-4.1-mini ", "LGSP_WRITER_MODEL": "anthropic:claude"}
    assert model_for("researcher", environ).name == "openai:gpt-4.1-mini"
    assert model_for("writer", environ).name == "anthropic:claude"
    assert model_for("writer", {"LGSP_WRITER_MODEL": "  "}) is None
    assert model_for("supervisor", {}) is None
    build_graph(environ)
    assert sorted(made[2:]) == sorted(
        ["openai:gpt-4.1-mini"] * 4 + ["anthropic:claude"]  # all but the writer: LGSP_MODEL
    )


@pytest.mark.skipif(not os.environ.get("LGSP_MODEL"), reason="set LGSP_MODEL (and its key)")
def test_a_real_model_answers_the_studio_request() -> None:
    out = ask(compiled(dict(os.environ)), HEAT_PUMP, config())
    assert out["status"] == "done"
    assert out["messages"][-1].content

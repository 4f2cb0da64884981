from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from langgraph_supervisor_pro import WorkerResult, register_secret
from langgraph_supervisor_pro._synthesis import SynthesisInput
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, routes, thread
from tests.test_supervisor import BIG, w


def test_default_answer_is_the_last_successful_full_result():
    app = compile_team(
        [w("a", lambda t: "A " + BIG), w("b", lambda t: "B " + BIG)], router=routes("a", "b")
    )
    out = app.invoke(ask(), thread())
    answer = out["messages"][-1]
    assert isinstance(answer, AIMessage) and answer.name == "supervisor"
    assert answer.content == "B " + BIG  # the full result, never truncated
    assert out["status"] == "done"


def test_default_answer_when_nothing_succeeded_uses_the_finish_note():
    def fail(t):
        raise ValueError("x")

    app = compile_team(
        [w("a", fail)], router=routes("a", {"next": "FINISH", "instructions": "Nothing found."})
    )
    out = app.invoke(ask(), thread())
    assert out["messages"][-1].content == "Nothing found."


def test_model_synthesizer_sees_full_results_of_this_turn_only():
    synth = ScriptedChatModel(script=["final one", "final two"])
    app = compile_team(
        [w("a", lambda t: f"A-{t.task}"), w("b", lambda t: "B-full")],
        router=routes("a", "b", "FINISH", "a"),
        synthesizer=synth,
    )
    config = thread()
    app.invoke(ask("t1"), config)
    out = app.invoke(ask("t2"), config)
    assert out["messages"][-1].content == "final two"
    system, human = synth.calls[0].messages
    assert isinstance(system, SystemMessage) and isinstance(human, HumanMessage)
    assert "Result of a (hop 1):\nA-t1" in human.content
    assert "Result of b (hop 2):\nB-full" in human.content
    second = synth.calls[1].messages[1].content
    assert "A-t2" in second and "A-t1" not in second and "B-full" not in second


async def test_function_synthesizer_sync_and_async():
    seen: list[SynthesisInput] = []

    def synth(inp):
        seen.append(inp)
        return " + ".join(h.result.result_text() for h in inp.successes())

    async def asynth(inp):
        return AIMessage(content=f"{len(inp.hops)} hops")

    out = compile_team([w("a"), w("b")], router=routes("a", "b"), synthesizer=synth).invoke(
        ask(), thread()
    )
    assert out["messages"][-1].content == "a output 1 + b output 2"
    assert [h.worker for h in seen[0].hops] == ["a", "b"]
    assert seen[0].status == "running"
    out = await compile_team([w("a")], router=routes("a"), synthesizer=asynth).ainvoke(
        ask(), thread()
    )
    assert out["messages"][-1].content == "1 hops"


def test_halted_runs_do_not_call_the_synthesizer():
    synth = ScriptedChatModel(script=[])
    out = compile_team([w("a")], router=lambda v: "ghost", synthesizer=synth).invoke(
        ask(), thread()
    )
    assert synth.calls == ()
    assert out["status"] == "halted"


def test_failing_synthesizer_fails_closed_with_the_work_kept():
    def synth(inp):
        raise RuntimeError("llm down")

    out = compile_team(
        [w("a", lambda t: WorkerResult(status="success", result="kept"))],
        router=routes("a"),
        synthesizer=synth,
    ).invoke(ask(), thread())
    assert out["status"] == "failed" and out["halt_reason"] == "synthesis_error"
    assert "RuntimeError: llm down" in out["halt_detail"]
    assert out["messages"][-1].content.endswith("kept")


def test_an_answer_that_cannot_be_stored_is_written_replaced():
    app = compile_team(
        [w("a")], router=routes("a"), synthesizer=lambda inp: AIMessage(content="an\x00swer\ud800")
    )
    out = app.invoke(ask(), thread())
    assert out["status"] == "done" and out["messages"][-1].content == "an\ufffdswer\ufffd"


def test_a_synthesizer_error_is_stored_scrubbed():
    secret = "sk-synthesis-0123456789"
    register_secret(secret)

    def synth(inp):
        raise RuntimeError(f"llm refused key {secret}")

    out = compile_team([w("a")], router=routes("a"), synthesizer=synth).invoke(ask(), thread())
    assert out["halt_reason"] == "synthesis_error"
    assert out["halt_detail"] == "the synthesizer failed: RuntimeError: llm refused key ***"
    assert all(secret not in str(m.content) for m in out["messages"])

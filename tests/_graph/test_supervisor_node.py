"""How the supervisor asks its model for a decision (`_graph/supervisor_node.py`).

A chat model with LangChain's default `with_structured_output` is sent exactly the
request that method would send, and its reply is parsed with the same parser, but
without a chain run and a parser run around the call. A model with its own
`with_structured_output` is called through it.
"""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda

from langgraph_supervisor_pro import Worker, create_supervisor
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, compile_team, thread
from tests.test_supervisor import decisions


def w(name: str) -> Worker:
    return Worker(name=name, description=f"Does {name} work.", agent=lambda t: f"{name} done")


class Runs(BaseCallbackHandler):
    """Every chain and chat-model run started: (kind, name, run id, parent id, details)."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, str, UUID, UUID | None, dict[str, Any]]] = []

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or "?"
        self.runs.append(("chain", name, run_id, parent_run_id, {}))

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        details = {
            "metadata": metadata or {},
            "params": kwargs.get("invocation_params") or {},
            "options": kwargs.get("options") or {},
        }
        name = kwargs.get("name") or (serialized or {}).get("name") or "?"
        self.runs.append(("llm", name, run_id, parent_run_id, details))

    def children(self, run_id: UUID) -> list[tuple[str, str, UUID, UUID | None, dict[str, Any]]]:
        return [r for r in self.runs if r[3] == run_id]


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_the_decision_is_one_model_run_below_the_supervisor_run(driver):
    model = ScriptedChatModel(name="router-model", script=decisions("a", "FINISH"))
    app = compile_team([w("a")], model=model)
    runs = Runs()
    config = {**thread(), "callbacks": [runs]}
    run = app.invoke if driver == "sync" else lambda *a: asyncio.run(app.ainvoke(*a))
    out = run(ask(), config)
    assert [e["worker"] for e in out["ledger"]] == ["a"] and out["status"] == "done"
    supervisor_runs = [r for r in runs.runs if r[0] == "chain" and r[1] == "supervisor"]
    assert len(supervisor_runs) == 2
    for run in supervisor_runs:
        (child,) = runs.children(run[2])  # the model call and nothing else
        kind, name, _, _, details = child
        assert (kind, name) == ("llm", "router-model")
        assert details["metadata"]["lgsp_role"] == "supervisor"
        assert details["metadata"]["lgsp_autonomy"] == "supervised"  # the tier in force
        # What LangSmith shows for a structured-output call, as the chain would send it.
        fmt = details["options"]["ls_structured_output_format"]
        assert fmt["kwargs"] == {"method": "function_calling"}
        assert fmt["schema"]["title"] == "RouteDecision"
        assert set(fmt["schema"]["properties"]) == {"next", "instructions"}
        assert details["params"]["tool_choice"] == "any"
    names = {r[1] for r in runs.runs}
    assert not names & {"RunnableSequence", "JsonOutputKeyToolsParser"}, names


def test_the_model_gets_the_request_with_structured_output_would_send():
    ours = ScriptedChatModel(script=decisions("a", "FINISH"), record=True)
    runs = Runs()
    compile_team([w("a")], model=ours).invoke(ask(), {**thread(), "callbacks": [runs]})
    schema = next(r for r in runs.runs if r[0] == "llm")[4]["options"][
        "ls_structured_output_format"
    ]["schema"]
    chain_model = ScriptedChatModel(script=decisions("a"), record=True)
    parsed = chain_model.with_structured_output(schema).invoke(list(ours.calls[0].messages))
    assert parsed == {"next": "a", "instructions": "please a"}
    sent, expected = ours.calls[0], chain_model.calls[0]
    assert (sent.tools, sent.tool_choice, dict(sent.kwargs)) == (
        expected.tools,
        expected.tool_choice,
        dict(expected.kwargs),
    )
    assert sent.tools == ("RouteDecision",) and sent.tool_choice == "any"


@pytest.mark.parametrize(
    "reply",
    [
        # a call of another tool: no call of the decision tool
        AIMessage(content="", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}]),
        # arguments that are not JSON: an OutputParserException from the parser
        AIMessage(
            content="",
            additional_kwargs={
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "RouteDecision", "arguments": "{not json"},
                    }
                ]
            },
        ),
    ],
    ids=["other-tool", "bad-json"],
)
def test_a_reply_without_a_decision_is_reasked_then_halts(reply):
    model = ScriptedChatModel(script=[reply, reply])
    ran: list[int] = []
    worker = Worker(name="a", description="Does a.", agent=lambda t: ran.append(1) or "x")
    out = compile_team([worker], model=model).invoke(ask(), thread())
    assert ran == []
    assert (out["status"], out["halt_reason"]) == ("halted", "invalid_route")
    assert "twice invalid" in out["halt_detail"]
    model.assert_complete()


REFUSAL = AIMessage(content=[{"type": "refusal", "refusal": "I will not route this."}])


def test_a_refusal_is_an_invalid_decision_reasked_once():
    model = ScriptedChatModel(script=[REFUSAL, *decisions("a", "FINISH")])
    out = compile_team([w("a")], model=model).invoke(ask(), thread())
    assert [e["worker"] for e in out["ledger"]] == ["a"] and out["status"] == "done"
    assert "I will not route this." in model.calls[1].messages[-1].content  # the re-ask


def test_two_refusals_halt_without_retrying_the_model():
    model = ScriptedChatModel(script=[REFUSAL, REFUSAL])
    out = compile_team([w("a")], model=model).invoke(ask(), thread())
    assert (out["status"], out["halt_reason"]) == ("halted", "invalid_route")
    assert "refused" in out["halt_detail"] and "I will not route this." in out["halt_detail"]
    model.assert_complete()  # two calls: no retry of a refusal


def test_a_refusal_from_a_models_own_structured_output_is_an_invalid_decision():
    from langchain_core.exceptions import ModelRefusalError

    class Refusing(ScriptedChatModel):
        def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
            def refuse(messages: Any) -> Any:
                raise ModelRefusalError.from_refusal(
                    {"type": "refusal", "refusal": "not this one"}, raw_message=REFUSAL
                )

            return RunnableLambda(refuse)

    out = compile_team([w("a")], model=Refusing(script=[])).invoke(ask(), thread())
    assert (out["status"], out["halt_reason"]) == ("halted", "invalid_route")
    assert "not this one" in out["halt_detail"]


def test_a_model_with_its_own_structured_output_is_called_through_it():
    asked: list[Any] = []

    class OwnStructured(ScriptedChatModel):
        def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
            asked.append(schema)

            def decide(messages: Any) -> dict[str, str]:
                done = sum("a done" in str(m.content) for m in messages)
                return {"next": "FINISH" if done else "a", "instructions": "go"}

            return RunnableLambda(decide)

    model = OwnStructured(script=[])
    out = compile_team([w("a")], model=model).invoke(ask(), thread())
    assert [e["worker"] for e in out["ledger"]] == ["a"] and out["status"] == "done"
    assert len(asked) == 1 and asked[0]["function"]["name"] == "RouteDecision"
    assert model.calls == ()  # never called directly


def test_a_chat_model_without_tool_calling_is_refused_at_build_time():
    class TextOnly(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "text-only"

        def _generate(
            self,
            messages: list[BaseMessage],
            stop: list[str] | None = None,
            run_manager: Any = None,
            **kwargs: Any,
        ) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="a"))])

    with pytest.raises(TypeError, match=r"model: TextOnly cannot produce structured output"):
        create_supervisor([w("a")], model=TextOnly())


# -- credentials (issue 33, item 6) -------------------------------------------------------


@pytest.fixture
def payments_key(monkeypatch: pytest.MonkeyPatch):
    """PAYMENTS_API_KEY set in the environment (read again before and after the test)."""
    from langgraph_supervisor_pro._internal.scrub import refresh_environment_secrets

    key = "pk-live-env-0123456789abcdef"
    monkeypatch.setenv("PAYMENTS_API_KEY", key)
    refresh_environment_secrets()
    yield key
    monkeypatch.undo()
    refresh_environment_secrets()


def test_an_environment_credential_never_reaches_state_or_the_prompt(payments_key):
    def charge(task: Any) -> str:
        raise RuntimeError(f"payments API refused key {payments_key}: 401")

    model = ScriptedChatModel(script=decisions("payments", "FINISH"))
    app = compile_team(
        [Worker(name="payments", description="Charges cards.", agent=charge)], model=model
    )
    out = app.invoke(ask("Refund order 42"), thread())
    (entry,) = out["ledger"]
    assert entry["error"] == "RuntimeError: payments API refused key ***: 401"
    assert payments_key not in repr(out)
    prompts = [repr([m.content for m in call.messages]) for call in model.calls]
    assert "refused key ***" in prompts[1]
    assert not [p for p in prompts if payments_key in p]


def test_a_plain_credential_in_configurable_is_warned_of_at_run_start(caplog, monkeypatch):
    import logging

    from langgraph_supervisor_pro._internal import scrub

    monkeypatch.setattr(scrub, "_warned_keys", set())
    caplog.set_level(logging.WARNING, logger="langgraph_supervisor_pro.security")
    app = compile_team([w("a")], model=ScriptedChatModel(script=decisions("a", "FINISH") * 2))
    config = thread()
    config["configurable"]["stripe_api_key"] = "sk-stripe-0123456789"
    app.invoke(ask(), config)
    app.invoke(ask("again"), config)  # once per key and process
    warned = [r.getMessage() for r in caplog.records if "stripe_api_key" in r.getMessage()]
    assert len(warned) == 1
    assert "LangChain copies" in warned[0] and "SecretStr" in warned[0]
    assert "sk-stripe-0123456789" not in warned[0]

"""Which chat models a graph uses, and when two are the same model."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.runnables import RunnableLambda

from langgraph_supervisor_pro import Worker, create_supervisor
from langgraph_supervisor_pro._internal.model_identity import (
    agent_models,
    chat_models,
    fingerprint,
    registered,
    same_model,
)
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedChatModel
from tests._helpers import routes


def model(name: str | None = "m") -> ScriptedChatModel:
    return ScriptedChatModel(name=name, script=[])


def test_models_are_found_through_runnables_and_closures():
    a, b, c = model("a"), model("b"), model("c")
    assert list(chat_models(a.bind(stop=["x"]))) == [a]
    assert list(chat_models(a | RunnableLambda(lambda m: m))) == [a]
    assert list(chat_models(a.with_fallbacks([b]))) == [a, b]

    def uses_c(text: str) -> Any:
        return c.invoke(text)

    assert list(chat_models(lambda task: uses_c(task))) == [c]
    assert list(chat_models(RunnableLambda(uses_c))) == [c]
    assert list(chat_models(create_agent(b, tools=[]))) == [b]
    assert list(chat_models(None)) == [] and list(chat_models("text")) == []


def test_the_search_stops_at_its_depth_and_at_cycles():
    hidden = model("deep")

    def level(inner: Any) -> Any:
        return lambda: inner()

    deep = level(level(level(level(level(lambda: hidden)))))
    assert list(chat_models(deep)) == []

    def first() -> Any:
        return second()

    def second() -> Any:
        return first()  # a cycle of closures: each function is visited once

    assert list(chat_models(first)) == []


def test_a_domain_lists_its_own_models_with_their_path():
    worker_model, router_model = model("w"), model("r")
    domain = create_supervisor(
        [Worker(name="w", description="Works.", model=worker_model)], model=router_model
    )
    compiled = Worker(name="ops", description="Ops.", agent=domain).agent
    uses = registered(compiled)
    assert uses is not None
    assert [(u.place, u.model) for u in uses] == [
        ("the supervisor's model (create_supervisor(model=...))", router_model),
        ("worker 'w''s model (Worker.model)", worker_model),
    ]
    assert [u.place for u in agent_models(compiled, "ops")] == [
        "domain 'ops' > the supervisor's model (create_supervisor(model=...))",
        "domain 'ops' > worker 'w''s model (Worker.model)",
    ]
    plain = create_supervisor(
        [Worker(name="w", description="Works.", agent=lambda task: "x")], router=routes("w")
    )
    assert registered(plain) == ()
    assert registered(object()) is None and registered(3) is None  # never registered


class Broken(ScriptedChatModel):
    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        raise RuntimeError("no params")


class BrokenNamed(Broken):
    model_name: str = "gpt-x"


def test_a_model_whose_params_fail_is_known_by_its_public_model_name():
    assert fingerprint(BrokenNamed(name="alias", script=[])) == ("brokennamed", "gpt-x")
    assert same_model(BrokenNamed(script=[]), BrokenNamed(name="other", script=[]))


def test_fingerprints_and_sameness():
    assert fingerprint(model("gpt")) == ("scriptedchatmodel", "gpt")
    assert fingerprint(model(None)) is None and fingerprint(model("  ")) is None
    assert fingerprint(Broken(name="b", script=[])) == ("broken", "b")
    function = FunctionChatModel(name="gpt", reply=lambda call: "x")
    assert not same_model(model("gpt"), function)  # another provider (class)
    unnamed = model(None)
    assert same_model(unnamed, unnamed) and not same_model(unnamed, model(None))
    assert same_model(model("gpt"), model("gpt")) and not same_model(model("gpt"), model("g"))

"""`models.model_from_env`: LGSP_MODEL, LGSP_<ROLE>_MODEL, and what it refuses."""

from __future__ import annotations

import langchain.chat_models
import pytest

from langgraph_supervisor_pro._models import MODEL_ENV, model_from_env, model_variable
from langgraph_supervisor_pro.testing import FunctionChatModel


@pytest.fixture
def made(monkeypatch):
    names: list[str] = []

    def init_chat_model(name):
        names.append(name)
        return FunctionChatModel(reply=lambda call: name)

    monkeypatch.setattr(langchain.chat_models, "init_chat_model", init_chat_model)
    return names


def test_unset_or_blank_means_offline(made):
    assert model_from_env("billing", environ={}) is None
    assert model_from_env("billing", environ={MODEL_ENV: "  ", "LGSP_BILLING_MODEL": ""}) is None
    assert made == []


def test_the_role_variable_wins_over_lgsp_model(made):
    environ = {MODEL_ENV: " openai:gpt-4.1-mini ", "LGSP_BILLING_MODEL": "anthropic:claude"}
    assert model_from_env("billing", environ=environ).invoke("x").content == "anthropic:claude"
    assert model_from_env("writer", environ=environ).invoke("x").content == "openai:gpt-4.1-mini"
    assert model_from_env(environ=environ).invoke("x").content == "openai:gpt-4.1-mini"
    assert made == ["anthropic:claude", "openai:gpt-4.1-mini", "openai:gpt-4.1-mini"]


def test_reads_os_environ_by_default(made, monkeypatch):
    monkeypatch.setenv("LGSP_TECH_SUPPORT_MODEL", "openai:gpt-4.1-nano")
    monkeypatch.delenv(MODEL_ENV, raising=False)
    assert model_from_env("tech_support") is not None
    assert model_from_env("billing") is None
    assert made == ["openai:gpt-4.1-nano"]


@pytest.mark.parametrize("role", ["", "1st", "tech-support", "a b", "x" * 65, "é"])
def test_a_bad_role_names_the_field(role):
    with pytest.raises(ValueError, match=r"^role: got .*; give a name that starts with a letter"):
        model_from_env(role, environ={})


def test_model_variable():
    assert model_variable("tech_support") == "LGSP_TECH_SUPPORT_MODEL"
    with pytest.raises(ValueError, match="role: got 5"):
        model_variable(5)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["openai:gpt\x00", "a\nb", "x" * 201])
def test_an_unprintable_or_huge_value_is_refused_before_init_chat_model(made, value):
    with pytest.raises(ValueError, match=r"^LGSP_WRITER_MODEL: got .*give provider:model"):
        model_from_env("writer", environ={"LGSP_WRITER_MODEL": value})
    assert made == []


def test_an_unknown_model_names_the_variable_in_one_line():
    with pytest.raises(ValueError) as info:
        model_from_env("writer", environ={MODEL_ENV: "no-such-model-xyz"})
    text = str(info.value)
    assert text.startswith("LGSP_MODEL='no-such-model-xyz': init_chat_model could not make")
    assert "\n" not in text and "give provider:model" in text
    assert info.value.__cause__ is not None

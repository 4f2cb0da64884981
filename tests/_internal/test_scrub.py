"""The secrets of a run and the one scrubber for error text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

import pytest
from langchain_core.runnables import RunnableLambda
from pydantic import BaseModel, SecretBytes, SecretStr

from langgraph_supervisor_pro import register_secret
from langgraph_supervisor_pro._internal.scrub import (
    MASK,
    RunSecrets,
    ScrubbedError,
    looks_secret,
    original_error,
    redact_config,
    registered,
    scrub,
    scrubbed_error,
    secrets_in,
)


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("api_key", True),
        ("OPENAI_API_KEY", True),
        ("github_token", True),
        ("db_password", True),
        ("smtp_passwd", True),
        ("client_secret", True),
        ("gcp_credentials", True),
        ("Authorization", True),
        ("thread_id", False),
        ("checkpoint_ns", False),
        ("user_id", False),
        ("autonomy", False),
        ("auth_mode", False),
    ],
)
def test_looks_secret(key, secret):
    assert looks_secret(key) is secret


class _Model(BaseModel):
    crm: SecretStr
    region: str
    refresh_token: str


@dataclass
class _Data:
    model: _Model
    blobs: list[SecretBytes]


class _Typed(TypedDict):
    db_password: str


def test_secrets_in_finds_secret_types_and_secret_looking_strings_at_depth():
    value = {
        "data": _Data(
            model=_Model(
                crm=SecretStr("crm-0001"), region="eu-west-1", refresh_token="rt-12345678"
            ),
            blobs=[SecretBytes(b"bytes-0001")],
        ),
        "typed": _Typed(db_password="pw-12345678"),
        "api_keys": ["sk-one-12345", "sk-two-12345"],  # a list under a secret-looking key
        "__pregel_runtime": {"token": "internal-12345678"},  # LangGraph's own: skipped
        "user_id": "u-12345678",
        "count": 3,
    }
    assert secrets_in(value) == {
        "crm-0001",
        "rt-12345678",
        "bytes-0001",
        "pw-12345678",
        "sk-one-12345",
        "sk-two-12345",
    }


def test_secrets_in_ignores_values_too_short_to_tell_from_text():
    assert secrets_in({"auth_token": "oauth", "api_key": SecretStr("abc")}) == set()
    assert secrets_in({"api_key": SecretStr("abcd")}) == {"abcd"}  # a SecretStr from 4 chars
    assert secrets_in({"api_key": "abcdefg"}) == set()  # a plain str from 8
    assert secrets_in({"api_key": "abcdefgh"}) == {"abcdefgh"}


def test_secrets_in_stops_at_a_depth():
    deep: dict[str, object] = {"api_key": "sk-deep-12345678"}
    for _ in range(6):
        deep = {"nested": deep}
    assert secrets_in(deep) == set()


def test_scrub_masks_every_secret_longest_first():
    text = "key sk-123456789 and sk-1234 and sk-123456789 again"
    assert scrub(text, {"sk-1234", "sk-123456789"}) == "key *** and *** and *** again"
    assert scrub("nothing here", {"sk-1234"}) == "nothing here"
    assert scrub("a b c", {"a", ""}) == "a b c"  # too short to be a secret


def test_scrub_masks_a_secret_cut_by_a_truncation():
    assert scrub("refused sk-12345…", {"sk-123456789"}) == f"refused {MASK}…"
    assert scrub("refused sk-…", {"sk-123456789"}) == "refused sk-…"  # 3 chars: not enough
    assert scrub("ends with…", {"sk-123456789"}) == "ends with…"


def test_register_secret_validates_and_accepts_secret_str():
    register_secret("sk-plain-1234")
    register_secret(SecretStr("sk-wrapped-1234"))
    assert registered() == {"sk-plain-1234", "sk-wrapped-1234"}
    with pytest.raises(ValueError, match="at least 4 characters"):
        register_secret("abc")
    with pytest.raises(TypeError, match="give the credential as a str or a pydantic SecretStr"):
        register_secret(1234)  # type: ignore[arg-type]


def test_run_secrets_gathers_registered_configurable_and_context_values():
    register_secret("sk-registered")
    config = {
        "configurable": {
            "thread_id": "t-1",
            "openai_api_key": "sk-openai-1234",
            "vendor": SecretStr("vendor-1234"),
        }
    }
    secrets = RunSecrets(
        config, context=_Model(crm=SecretStr("crm-1234"), region="x", refresh_token="")
    )
    assert secrets.values == {"sk-registered", "sk-openai-1234", "vendor-1234", "crm-1234"}
    assert secrets.scrub("sk-openai-1234 / crm-1234") == "*** / ***"
    assert secrets.scrub("") == ""


def test_run_secrets_reads_the_running_config_by_default():
    outside = RunSecrets()
    assert outside.values == frozenset()  # outside a runnable: nothing but the registry
    inside = RunnableLambda(lambda _: RunSecrets().values).invoke(
        None, {"configurable": {"github_token": "ghp_12345678"}}
    )
    assert inside == {"ghp_12345678"}


def test_scrubbed_error_stands_in_only_when_there_is_a_secret():
    secrets = {"sk-123456"}
    assert scrubbed_error(RuntimeError("no secret here"), secrets) is None
    assert scrubbed_error(RuntimeError("key sk-123456"), set()) is None
    original = RuntimeError("key sk-123456 refused")
    error = scrubbed_error(original, secrets)
    assert isinstance(error, ScrubbedError)
    assert str(error) == "RuntimeError: key *** refused"
    assert original_error(error) is original
    other = ValueError("x")
    assert original_error(other) is other


def test_scrubbed_error_looks_into_chained_exceptions():
    try:
        try:
            raise ConnectionError("login sk-123456 refused")
        except ConnectionError as inner:
            raise RuntimeError("the sync failed") from inner
    except RuntimeError as exc:
        error = scrubbed_error(exc, {"sk-123456"})
    assert error is not None and str(error) == "RuntimeError: the sync failed"


def test_redact_config_drops_what_checkpoint_metadata_must_not_copy():
    register_secret("partner-1234")
    config = {
        "configurable": {
            "thread_id": "t-1",
            "checkpoint_ns": "",
            "checkpoint_id": "c-1",
            "openai_api_key": "sk-1",
            "max_tokens": 100,  # a secret-looking key, but not a string: kept
            "partner": "id partner-1234",
            "vendor": SecretStr("vendor-1234"),  # not a primitive: never copied, kept
            "region": "eu-west-1",
        },
        "metadata": {"github_token": "ghp", "team": "ops"},
        "tags": ["x"],
    }
    redacted = redact_config(config)  # type: ignore[arg-type]
    assert redacted["configurable"] == {
        "thread_id": "t-1",
        "checkpoint_ns": "",
        "checkpoint_id": "c-1",
        "max_tokens": 100,
        "vendor": config["configurable"]["vendor"],
        "region": "eu-west-1",
    }
    assert redacted["metadata"] == {"team": "ops"}
    assert redacted["tags"] == ["x"]
    assert config["configurable"]["openai_api_key"] == "sk-1"  # the given config is unchanged

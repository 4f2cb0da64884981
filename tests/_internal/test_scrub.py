"""The secrets of a run and the one scrubber for error text."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypedDict

import pytest
from langchain_core.runnables import RunnableLambda
from pydantic import BaseModel, SecretBytes, SecretStr

from langgraph_supervisor_pro import register_secret
from langgraph_supervisor_pro._internal import scrub as scrub_module
from langgraph_supervisor_pro._internal.scrub import (
    MASK,
    RunSecrets,
    environment_secrets,
    looks_secret,
    original_error,
    redact_config,
    refresh_environment_secrets,
    registered,
    scrub,
    scrubbed_error,
    secrets_in,
    warn_plain_credentials,
)
from langgraph_supervisor_pro.errors import ScrubbedError


def _holds_credential(name: str, value: str) -> bool:
    upper = name.upper()
    named = upper in scrub_module.ENV_SECRET_NAMES or upper.endswith(
        scrub_module.ENV_SECRET_SUFFIXES
    )
    return named or ("://" in value and "@" in value)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no credential in the environment (the machine's are put back)."""
    for name, value in list(os.environ.items()):
        if _holds_credential(name, value):
            monkeypatch.delenv(name)
    refresh_environment_secrets()
    yield
    monkeypatch.undo()
    refresh_environment_secrets()


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
    assert registered() == {"sk-plain-1234", "sk-wrapped-1234"}  # (no credential in env)
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


# -- credentials in the environment (issue 33, item 6) -------------------------------------


def test_environment_credentials_are_secrets_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYMENTS_API_KEY", "pk-live-0123456789")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-0123456789")
    monkeypatch.setenv("crm_client_secret", "cs-0123456789")  # any case
    monkeypatch.setenv("DB_PASSWORD", "correct-horse")
    monkeypatch.setenv("PGPASSWORD", "pg-pass-0123")  # named, no `_PASSWORD` suffix
    monkeypatch.setenv("DEBUG_TOKEN", "1")  # too short to tell from text: ignored
    monkeypatch.setenv("ADMIN_PASSWORD", "admin")  # likewise
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false-but-long")  # not a credential name
    monkeypatch.setenv("HOME_DIRECTORY", "/home/someone-long")
    found = refresh_environment_secrets()
    assert found == {
        "pk-live-0123456789",
        "xoxb-0123456789",
        "cs-0123456789",
        "correct-horse",
        "pg-pass-0123",
    }
    assert environment_secrets() == found  # kept: read once until refreshed
    assert registered() == found  # treated as registered
    assert RunSecrets({}).scrub("charge refused for pk-live-0123456789") == (
        "charge refused for ***"
    )


def test_a_url_in_the_environment_gives_its_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://app:s3cret-pw-99@db:5432/prod")
    monkeypatch.setenv("CACHE_URI", "redis://:short@cache:6379/0")  # too short: ignored
    monkeypatch.setenv("BROKER", "amqp://app:pa/ss-word-1@mq/vhost")  # malformed: still found
    found = refresh_environment_secrets()
    assert "s3cret-pw-99" in found
    assert "pa/ss-word-1" in found
    assert "short" not in found
    assert not any("postgresql://" in secret for secret in found)  # the password, not the URL


def test_environment_is_read_once_and_refreshed_on_demand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert environment_secrets() == frozenset()
    monkeypatch.setenv("PAYMENTS_API_KEY", "pk-live-late-0001")
    assert environment_secrets() == frozenset()  # set after the read: not seen yet
    assert registered() == frozenset()
    refresh_environment_secrets()
    assert registered() == {"pk-live-late-0001"}
    register_secret("sk-registered-1")
    assert registered() == {"pk-live-late-0001", "sk-registered-1"}
    monkeypatch.delenv("PAYMENTS_API_KEY")
    refresh_environment_secrets()
    assert registered() == {"sk-registered-1"}


def test_environment_credentials_stay_out_of_checkpoint_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PARTNER_TOKEN", "partner-0123456789")
    refresh_environment_secrets()
    config = {"configurable": {"thread_id": "t", "note": "id partner-0123456789"}}
    assert redact_config(config) == {"configurable": {"thread_id": "t"}}  # type: ignore[arg-type]


def test_a_plain_credential_in_configurable_is_warned_of_once_per_key(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scrub_module, "_warned_keys", set())
    caplog.set_level(logging.WARNING, logger="langgraph_supervisor_pro.security")
    config = {
        "configurable": {
            "thread_id": "t-1",
            "openai_api_key": "sk-openai-0123456789",
            "vendor_token": SecretStr("vt-0123456789"),  # wrapped: fine
            "auth_mode": "oauth",  # too short to be a credential
            "region": "eu-west-1",
        }
    }
    warn_plain_credentials(config)  # type: ignore[arg-type]
    warn_plain_credentials(config)  # type: ignore[arg-type]
    warn_plain_credentials(None)
    warn_plain_credentials({"configurable": "not a mapping"})  # type: ignore[typeddict-item]
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1
    (message,) = messages
    assert "config['configurable']['openai_api_key'] is a plain str" in message
    assert "trace run's metadata" in message
    assert "context=" in message and "SecretStr" in message
    assert "sk-openai-0123456789" not in message  # the warning never shows the value

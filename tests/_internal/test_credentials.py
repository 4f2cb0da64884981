"""Credentials in checkpoint metadata are told by what they are, never by a part of a name.

Issue 31, item 2: a user's `custom_key`, `idempotency_key` or `token_count` is kept with its
value; a string under a credential name, holding a registered secret or looking like a
credential (a key format secret scanners know) is left out, on every backend, through `put`
and `list(filter=...)`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from pydantic import SecretBytes, SecretStr

from langgraph_supervisor_pro import register_secret
from langgraph_supervisor_pro._internal import scrub as scrub_module
from langgraph_supervisor_pro._internal.scrub import (
    holds_credential,
    looks_like_credential,
    names_credential,
    redact_config,
    refresh_environment_secrets,
)
from langgraph_supervisor_pro.persistence._checkpointers import (
    _stored_metadata,
    aopen_checkpointer,
    open_checkpointer,
)


@pytest.fixture(autouse=True)
def _no_environment_credentials(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No credential of the machine's environment takes part (put back afterwards)."""
    for name in list(os.environ):
        if scrub_module._names_credential(name):
            monkeypatch.delenv(name)
    refresh_environment_secrets()
    yield
    monkeypatch.undo()
    refresh_environment_secrets()


BENIGN_NAMES = [
    "custom_key",
    "idempotency_key",
    "cache_key",
    "monkey",
    "token_count",
    "keyboard",
    "primary_key",
    "ticket_key",
    "sort_key",
    "partition_key",
    "foreign_key",
    "key",
    "keys",
    "key_id",
    "api_key_id",
    "keynote",
    "hotkey",
    "turkey",
    "whiskey",
    "jockey_name",
    "tokenizer",
    "tokenizer_name",
    "token_type",
    "max_tokens_hint",
    "next_page_token",
    "total_tokens_label",
    "secretary",
    "secret_santa",
    "password_policy",
    "passwordless_flow",
    "credential_id",
    "authorization_mode",
    "auth_mode",
    "author",
    "cookie_policy",
    "keystone",
    "issue_key",
    "region",
]
"""Kept with their values: no credential name, whatever part of it says `key` or `token`."""

CREDENTIAL_NAMES = [
    "api_key",
    "API_KEY",
    "apiKey",
    "apikey",
    "x-api-key",
    "X-API-Key",
    "openai_api_key",
    "OPENAI_API_KEY",
    "anthropic_api_key",
    "langsmith-api-key",
    "api_token",
    "api_secret",
    "token",
    "access_token",
    "accessToken",
    "refresh_token",
    "id_token",
    "auth_token",
    "bearer_token",
    "session_token",
    "oauth_token",
    "csrf_token",
    "personal_access_token",
    "github_token",
    "GH_TOKEN",
    "hf_token",
    "slack_bot_token",
    "github_access_token",
    "aws_secret_access_key",
    "AWS_SESSION_TOKEN",
    "secret",
    "secret_key",
    "client_secret",
    "clientSecret",
    "webhook_secret",
    "private_key",
    "ssh_private_key",
    "signing_key",
    "encryption_key",
    "password",
    "Password",
    "db_password",
    "new-password",
    "passwd",
    "smtp_passwd",
    "passphrase",
    "credentials",
    "gcp_credentials",
    "authorization",
    "Authorization",
    "Proxy-Authorization",
    "cookie",
    "Set-Cookie",
]
"""Left out: their string values are credentials, whatever they hold."""


def _value(name: str) -> str:
    """An ordinary value (it looks like no credential): only the name tells."""
    return f"value of {name.lower()} 42"


# Credential-shaped values, built here so that no scanner flags this file.
_A = "A1b2C3d4E5f6G7h8I9j0"
LOOKS_LIKE_CREDENTIAL = {
    "openai": "sk-" + _A + _A,
    "openai_project": "sk-proj-" + _A + _A,
    "anthropic": "sk-ant-api03-" + _A + _A,
    "github": "ghp_" + _A + _A[:16],
    "github_oauth": "gho_" + _A + _A[:16],
    "github_app": "ghs_" + _A + _A[:16],
    "github_fine_grained": "github_pat_" + _A + "_" + _A,
    "slack": "xoxb-1234567890-" + _A,
    "aws": "AKIA" + "0123456789ABCDEF",
    "aws_session": "ASIA" + "ABCDEF0123456789",
    "google": "AIza" + (_A * 2)[:35],
    "stripe": "sk_live_" + _A,
    "stripe_restricted": "rk_live_" + _A,
    "jwt": "eyJhbGciOiJIUzI1NiJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3",
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----",
    "pem_plain": "-----BEGIN PRIVATE KEY-----\nMIIEv...",
    "langsmith": "lsv2_pt_" + "0123456789abcdef0123456789abcdef_0123456789",
    "huggingface": "hf_" + _A + _A[:14],
    "bearer": "Bearer " + _A + _A,
    "in_text": "the call failed with key sk-proj-" + _A + _A + " at noon",
}
"""Under an ordinary key, each of these is left out: it looks like a credential."""

ORDINARY_TEXT = {
    "sklearn": "sk-learn estimator",
    "task": "task-1234567890abcdefghij",
    "short_sk": "sk-12345",
    "ghp_short": "ghp_123",
    "akia_word": "AKIA is a prefix",
    "akia_short": "AKIA0123",
    "jwt_word": "eyJ is how base64 JSON starts",
    "bearer_word": "the Bearer of good news",
    "public_key": "-----BEGIN PUBLIC KEY-----",
    "xox": "xoxo, see you",
    "lsv2": "lsv2_short",
    "uuid": "3f2b8c1e-4a5d-4e6f-9a0b-1c2d3e4f5a6b",
    "hex": "0123456789abcdef0123456789abcdef",
}
"""Under an ordinary key, each of these is kept as it is."""


def _cleaned(metadata: dict[str, Any]) -> Any:
    """`_stored_metadata` of a plain dict (a checkpoint's metadata is a `TypedDict`)."""
    return _stored_metadata(metadata)  # type: ignore[arg-type]


# -- the rules ---------------------------------------------------------------------------


def test_the_tables_are_large_enough():
    assert len(set(BENIGN_NAMES)) == len(BENIGN_NAMES) >= 30
    assert len(set(CREDENTIAL_NAMES)) == len(CREDENTIAL_NAMES) >= 30


@pytest.mark.parametrize("name", BENIGN_NAMES)
def test_a_benign_name_is_no_credential(name):
    assert not names_credential(name)
    assert not holds_credential(name, _value(name))
    metadata = {"step": 1, name: _value(name)}
    assert _cleaned(metadata) is metadata


@pytest.mark.parametrize("name", CREDENTIAL_NAMES)
def test_a_credential_name_is_left_out(name):
    assert names_credential(name)
    assert holds_credential(name, _value(name))
    assert _cleaned({"step": 1, name: _value(name)}) == {"step": 1}
    assert redact_config({"configurable": {"thread_id": "t", name: _value(name)}}) == {  # type: ignore[arg-type]
        "configurable": {"thread_id": "t"}
    }


@pytest.mark.parametrize("name", ["api_key", "max_tokens", "password"])
def test_a_value_that_is_not_a_string_is_no_credential(name):
    for value in (100, True, 0.5, None):
        assert not holds_credential(name, value)
    metadata = {"step": 1, name: 100}
    assert _cleaned(metadata) is metadata


@pytest.mark.parametrize("kind", sorted(LOOKS_LIKE_CREDENTIAL))
def test_a_value_that_looks_like_a_credential_is_left_out_under_any_key(kind):
    value = LOOKS_LIKE_CREDENTIAL[kind]
    assert looks_like_credential(value)
    assert _cleaned({"step": 1, "note": value}) == {"step": 1}
    assert redact_config({"metadata": {"custom_key": value, "team": "ops"}}) == {  # type: ignore[arg-type]
        "metadata": {"team": "ops"}
    }


@pytest.mark.parametrize("kind", sorted(ORDINARY_TEXT))
def test_ordinary_text_under_an_ordinary_key_is_kept(kind):
    value = ORDINARY_TEXT[kind]
    assert not looks_like_credential(value)
    metadata = {"step": 1, "note": value}
    assert _cleaned(metadata) is metadata


def test_every_documented_format_has_a_case():
    """Each pattern of `CREDENTIAL_VALUE_PATTERNS` matches one of the table's values."""
    for label, pattern in scrub_module.CREDENTIAL_VALUE_PATTERNS.items():
        if label == "npm token (npm_)":
            assert pattern.search("npm_" + _A + _A[:16])
            continue
        assert any(pattern.search(v) for v in LOOKS_LIKE_CREDENTIAL.values()), label


def test_nested_values_are_looked_into():
    kept = {
        "step": 1,
        "labels": ["custom_key", "token_count"],
        "usage": {"input_tokens": 5, "cache_key": "c-0001"},
        "parents": {"": "1f0"},
    }
    assert _cleaned(kept) is kept
    dropped = {
        "step": 1,
        "headers": {"Authorization": "Basic dXNlcjpwYXNz"},  # under a credential name
        "notes": ["fine", LOOKS_LIKE_CREDENTIAL["jwt"]],  # looks like one
        "nested": {"a": [{"b": "id partner-0123456789"}]},  # holds a registered secret
    }
    register_secret("partner-0123456789")
    assert _cleaned(dropped) == {"step": 1}
    assert holds_credential("x", SecretStr("s-0001")) and holds_credential("x", SecretBytes(b"b"))


def test_registered_and_environment_secrets_are_left_out_under_any_key(
    monkeypatch: pytest.MonkeyPatch,
):
    register_secret("partner-0123456789")
    monkeypatch.setenv("PAYMENTS_API_KEY", "pay-0123456789")
    refresh_environment_secrets()
    metadata = {"step": 1, "custom_key": "id partner-0123456789", "monkey": "pay-0123456789"}
    assert _cleaned(metadata) == {"step": 1}


# -- on every backend, through put and list(filter=...) ---------------------------------

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""A name SQLite's metadata filter can address (`$.name`)."""

TABLE_METADATA: dict[str, Any] = {
    "source": "input",
    "step": -1,
    "parents": {},
    **{name: _value(name) for name in BENIGN_NAMES},
    **{name: _value(name) for name in CREDENTIAL_NAMES},
    **{f"looks_{kind}": value for kind, value in LOOKS_LIKE_CREDENTIAL.items()},
    **{f"text_{kind}": value for kind, value in ORDINARY_TEXT.items()},
}
CONFIG_METADATA = {"config_key": "from-config-0001", "deploy_secret": "ds-from-config-0001"}
KEPT_METADATA: dict[str, Any] = {
    "source": "input",
    "step": -1,
    "parents": {},
    **{name: _value(name) for name in BENIGN_NAMES},
    **{f"text_{kind}": value for kind, value in ORDINARY_TEXT.items()},
}


def _put_config() -> dict[str, Any]:
    return {
        "configurable": {"thread_id": "thread-c", "checkpoint_ns": ""},
        "metadata": dict(CONFIG_METADATA),
    }


def _assert_stored(metadata: dict[str, Any]) -> None:
    assert metadata == {**KEPT_METADATA, "config_key": "from-config-0001"}


def _filters() -> list[tuple[dict[str, Any], int]]:
    """(filter, how many checkpoints it finds): each benign key finds it, no credential."""
    found = [({name: _value(name)}, 1) for name in BENIGN_NAMES]
    found += [({f"text_{kind}": v}, 1) for kind, v in ORDINARY_TEXT.items()]
    found.append(({k: v for k, v in KEPT_METADATA.items() if k.startswith("text_")}, 1))
    found.append(({"config_key": "from-config-0001"}, 1))
    found += [({name: _value(name)}, 0) for name in CREDENTIAL_NAMES if _IDENTIFIER.match(name)]
    found += [({f"looks_{kind}": v}, 0) for kind, v in LOOKS_LIKE_CREDENTIAL.items()]
    found.append(({"deploy_secret": "ds-from-config-0001"}, 0))
    return found


@pytest.mark.parametrize("url", ["memory", "sqlite:///:memory:", "postgres"])
def test_checkpoint_metadata_keeps_benign_names_and_drops_credentials(url, request):
    if url == "postgres":
        url = request.getfixturevalue("pg_database")
    with open_checkpointer(url) as saver:
        stored = saver.put(_put_config(), empty_checkpoint(), TABLE_METADATA, {})  # type: ignore[arg-type]
        found = saver.get_tuple(stored)
        assert found is not None
        _assert_stored(dict(found.metadata))
        thread = {"configurable": {"thread_id": "thread-c"}}
        for where, count in _filters():
            assert len(list(saver.list(thread, filter=where))) == count, where  # type: ignore[arg-type]


@pytest.mark.parametrize("url", ["memory", "sqlite:///:memory:", "postgres"])
async def test_checkpoint_metadata_keeps_benign_names_and_drops_credentials_async(url, request):
    if url == "postgres":
        url = request.getfixturevalue("pg_database")
    async with aopen_checkpointer(url) as saver:
        stored = await saver.aput(_put_config(), empty_checkpoint(), TABLE_METADATA, {})  # type: ignore[arg-type]
        found = await saver.aget_tuple(stored)
        assert found is not None
        _assert_stored(dict(found.metadata))
        thread = {"configurable": {"thread_id": "thread-c"}}
        for where, count in _filters():
            listed = [t async for t in saver.alist(thread, filter=where)]  # type: ignore[arg-type]
            assert len(listed) == count, where

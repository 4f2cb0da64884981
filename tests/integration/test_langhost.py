"""The helpers that run the LangGraph server in tests (`_langhost.py`): venv, Redis, pins."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.integration import _langhost
from tests.integration._langhost import redis_database, server_requirements, server_venv

pytestmark = pytest.mark.integration


def test_the_server_extra_pins_exact_versions_the_venv_cache_is_keyed_by() -> None:
    extra = server_requirements()[-2:]
    assert extra == ["langhost==0.11.1.post1", "langgraph-runtime-pg==0.11.1.post1"]
    assert "langgraph-supervisor-pro" not in " ".join(server_requirements())


@pytest.mark.parametrize(
    ("output", "unreachable"),
    [
        (
            "WARNING: Retrying (Retry(total=4)) after connection broken by "
            "'NewConnectionError(...: Failed to establish a new connection: [Errno 111] "
            "Connection refused')': /simple/langhost/",
            True,
        ),
        ("ERROR: ... [Errno -3] Temporary failure in name resolution", True),
        (
            "ERROR: Cannot install langhost==0.11.1.post1 because these package versions "
            "have conflicting dependencies.",
            False,
        ),
        ("ERROR: No matching distribution found for langhost==9.9", False),
    ],
)
def test_only_an_unreachable_index_is_a_skip(output: str, unreachable: bool) -> None:
    assert bool(_langhost._UNREACHABLE.search(output)) is unreachable


def test_a_configured_venv_without_python_fails_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(_langhost.VENV_ENV, str(tmp_path))
    with pytest.raises(pytest.fail.Exception, match=r"LGSP_SERVER_VENV=.*no bin/python"):
        server_venv()


def test_two_holders_at_once_get_different_redis_databases_emptied_on_release() -> None:
    with redis_database() as first, redis_database() as second:
        assert first != second
        number = int(second.rsplit("/", 1)[1])
    host, port = _langhost._redis_address()
    with socket.create_connection((host, port), timeout=5) as sock:
        _langhost._redis(sock, "SELECT", str(number))
        assert _langhost._redis(sock, "DBSIZE") == b":0"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again: nobody listens there


def test_an_unreachable_redis_fails_in_ci_naming_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_langhost.REDIS_ENV, f"redis://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("CI", "true")
    with (
        pytest.raises(pytest.fail.Exception, match=r"Redis is not reachable.*LGSP_REDIS_URI"),
        redis_database(),
    ):
        pass


def test_an_unreachable_redis_is_a_skip_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_langhost.REDIS_ENV, f"redis://127.0.0.1:{_closed_port()}")
    monkeypatch.delenv("CI", raising=False)
    with (
        pytest.raises(pytest.skip.Exception, match=r"Redis is not reachable.*LGSP_REDIS_URI"),
        redis_database(),
    ):
        pass


def test_a_redis_uri_that_is_not_host_and_port_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(_langhost.REDIS_ENV, "rediss://user:secret@cache/0")
    with pytest.raises(ValueError, match="expected redis://HOST"):
        _langhost._redis_address()

"""Shared pytest fixtures.

Postgres: tests get a real server, never a mock. Set ``LGSP_POSTGRES_URI``
(e.g. ``postgresql://postgres@127.0.0.1:5432/test``) to use an existing server;
otherwise an embedded one is started once per session with ``pgserver`` (see
``tests/_pg.py``, which also works when the tests run as root). Each test that
needs a database asks for ``pg_database`` and gets a fresh one, dropped after
the test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from langgraph_supervisor_pro._internal.scrub import forget_registered
from tests._langsmith import CaptureServer, capture_server
from tests._pg import (
    ENV_VAR,
    create_database,
    drop_database,
    start_embedded_postgres,
    unique_database_name,
)


def _utf8(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep a failure's report sendable to the xdist controller.

    A test about text Postgres cannot store fails with surrogate code points in its
    message; execnet refuses to send a string without a UTF-8 encoding and the whole
    session would end in INTERNALERROR. Such a report is sent as plain text, with the
    surrogates escaped (`\\ud800`).
    """
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    text = str(report.longrepr) if report.longrepr is not None else ""
    sections = [(title, body) for title, body in report.sections]
    if _utf8(text) != text or any(_utf8(body) != body for _, body in sections):
        report.longrepr = _utf8(text)
        report.sections = [(title, _utf8(body)) for title, body in sections]


@pytest.fixture(scope="session")
def postgres_uri() -> Iterator[str]:
    """URI of a running Postgres server: ``$LGSP_POSTGRES_URI`` or an embedded one."""
    uri = os.environ.get(ENV_VAR, "").strip()
    if uri:
        yield uri
        return
    server = start_embedded_postgres()
    try:
        yield server.uri
    finally:
        server.stop()


@pytest.fixture
def pg_database(postgres_uri: str) -> Iterator[str]:
    """URI of a fresh, uniquely named database, dropped (connections closed) afterwards."""
    name = unique_database_name()
    uri = create_database(postgres_uri, name)
    try:
        yield uri
    finally:
        drop_database(postgres_uri, name)


@pytest.fixture
def langsmith_server() -> Iterator[CaptureServer]:
    """A loopback LangSmith that records the runs the real client posts (tests/_langsmith.py)."""
    with capture_server() as server:
        yield server


@pytest.fixture(autouse=True)
def _no_registered_secrets() -> Iterator[None]:
    """`register_secret` is process-wide: each test starts and ends with none registered."""
    forget_registered()
    yield
    forget_registered()

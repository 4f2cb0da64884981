"""Fixtures shared by the benchmarks' end-to-end tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def server(postgres_uri: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test Postgres server as `LGSP_POSTGRES_URI`, where the benches look for one."""
    monkeypatch.setenv("LGSP_POSTGRES_URI", postgres_uri)
    return postgres_uri

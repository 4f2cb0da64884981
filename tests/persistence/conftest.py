"""Fixtures shared by the persistence tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A checkpointer URL for each backend: memory, a fresh SQLite file, a fresh database."""
    if request.param == "memory":
        return "memory"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'checkpoints.db'}"
    return str(request.getfixturevalue("pg_database"))

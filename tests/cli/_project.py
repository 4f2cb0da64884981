"""Test-side helper: import a project `lgsp new` wrote, by file, without touching sys.path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_graph_module(project: Path, package: str = "support_desk") -> ModuleType:
    """The project's `<package>/graph.py`, imported under a name of its own."""
    path = project / package / "graph.py"
    spec = importlib.util.spec_from_file_location(f"_lgsp_project_{abs(hash(project))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

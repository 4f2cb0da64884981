"""The version matrix: the core suite on Python 3.11, 3.12 and 3.13, lowest and latest.

Each Python runs against the lowest versions of the dependencies pyproject.toml declares
(uv's `lowest-direct` resolution) and against the latest:

    .venv/bin/nox -l                                # the sessions
    .venv/bin/nox -s "core-3.13(deps='latest')"     # one cell
    .venv/bin/nox -t matrix                         # every cell

`.ci/run` runs the whole suite once (the README's command: the `dev` extra, latest versions,
the machine's Python) and the core suite on every other cell. The core suite is what a
dependency's version can break: persistence, the graph nodes, reviews, the supervisor, trees
and the golden threads of earlier versions. docs/get-started/install.md says what is
supported.
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "uv"
nox.options.error_on_missing_interpreters = True

PYTHONS = ["3.11", "3.12", "3.13"]
CORE = [
    "tests/persistence",
    "tests/_graph",
    "tests/review",
    "tests/test_supervisor.py",
    "tests/test_trees.py",
    "tests/test_builder.py",
    "tests/test_workers.py",
    "tests/test_state.py",
    "tests/golden",
]


@nox.session(python=PYTHONS, tags=["matrix"])
@nox.parametrize("deps", ["lowest", "latest"])
def core(session: nox.Session, deps: str) -> None:
    """The core suite on one Python against the lowest or the latest dependencies."""
    resolution = "lowest-direct" if deps == "lowest" else "highest"
    session.install(f"--resolution={resolution}", "-e", ".[test]")
    session.run("uv", "pip", "list", silent=False)  # the versions this cell tested
    session.run("python", "-m", "pytest", "-q", *(session.posargs or CORE))

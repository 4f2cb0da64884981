"""The notebooks in `notebooks/` run top to bottom offline, and are committed with their outputs.

Each notebook is executed in a fresh kernel (nbclient, ipykernel) of this interpreter, with
`notebooks/` as its working directory and this checkout first on its `PYTHONPATH`, so the
package under test is the one imported. A cell that raises fails the test, and so does a
Python warning printed by any cell. No model key is used: `LGSP_MODEL` (the notebooks' switch
to a real model) is removed from the kernel's environment.

`04_postgres_durability` uses real Postgres: with `LGSP_POSTGRES_URI` set it gets a fresh
database on that server (dropped afterwards); without, the notebook starts its own embedded
server with `pgserver`, as it does on a fresh machine.

The committed files must hold the outputs of one real run: every code cell executed, in order,
in one kernel, no error, the plots as PNG, no timing metadata (so re-running diffs small).
Regenerate them after changing a notebook or the package (offline; `LGSP_POSTGRES_URI` unset
gives 04 its embedded server, as on a fresh machine):

    python -m tests.integration.test_notebooks              # all of them
    python -m tests.integration.test_notebooks 02_review_gates
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests._pg import ENV_VAR, create_database, drop_database, unique_database_name

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
NAMES = (
    "01_quickstart",
    "02_review_gates",
    "03_trees_and_fan_out",
    "04_postgres_durability",
    "05_compaction_and_memory",
)
PLOTS = {
    "01_quickstart": 1,
    "02_review_gates": 1,
    "03_trees_and_fan_out": 1,
    "05_compaction_and_memory": 1,
}
"""How many inline PNG plots each notebook shows."""
CELL_TIMEOUT = 120  # seconds, per cell
KERNEL = "lgsp-notebooks"
WARNING_LINE = re.compile(r"^\S.*:\d+: \w*Warning: ", re.M)
"""How `warnings.warn` prints (`file.py:12: SomeWarning: text`); log lines do not match."""


def read(name: str) -> Any:
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def code_cells(nb: Any) -> list[Any]:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def outputs(nb: Any, kind: str) -> list[Any]:
    return [out for cell in code_cells(nb) for out in cell.outputs if out.output_type == kind]


def pngs(nb: Any) -> int:
    return sum(
        "image/png" in out.get("data", {}) for cell in code_cells(nb) for out in cell.outputs
    )


def stderr(nb: Any) -> str:
    return "".join(out.text for out in outputs(nb, "stream") if out.name == "stderr")


def errors(nb: Any) -> list[str]:
    return [f"{out.ename}: {out.evalue}" for out in outputs(nb, "error")]


def test_the_notebooks_are_the_ones_named_here():
    assert sorted(path.stem for path in NOTEBOOKS.glob("*.ipynb")) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_committed_with_the_outputs_of_one_run(name):
    nb = read(name)
    nbformat.validate(nb)
    cells = code_cells(nb)
    counts = [cell.execution_count for cell in cells]
    assert counts == list(range(1, len(cells) + 1)), (
        f"{name}: commit it executed top to bottom in one kernel, with its outputs "
        f"(execution counts {counts})"
    )
    assert sum(len(cell.outputs) for cell in cells) >= len(cells) // 2, f"{name}: outputs missing"
    assert errors(nb) == []
    assert pngs(nb) == PLOTS.get(name, 0)
    assert all("execution" not in cell.metadata for cell in cells), "strip timing metadata"


@contextmanager
def kernel_environment() -> Iterator[None]:
    """A kernelspec for this interpreter, the checkout on PYTHONPATH, and no model switch."""
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="lgsp-kernel-") as tmp:
        spec = Path(tmp) / "kernels" / KERNEL
        spec.mkdir(parents=True)
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(
            json.dumps({"argv": argv, "display_name": KERNEL, "language": "python"})
        )
        os.environ["JUPYTER_PATH"] = tmp
        path = os.environ.get("PYTHONPATH", "")
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), path) if p)
        for key in list(os.environ):
            if key.startswith("LGSP_") and key.endswith("_MODEL"):
                del os.environ[key]
        os.environ.pop("MPLBACKEND", None)
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(saved)


@pytest.fixture
def kernel_env() -> Iterator[None]:
    with kernel_environment():
        yield


@pytest.fixture
def notebook_postgres(kernel_env):
    """For 04: a fresh database on `LGSP_POSTGRES_URI`'s server, else none (pgserver)."""
    server = os.environ.get(ENV_VAR, "").strip()
    if not server:
        yield None
        return
    name = unique_database_name("lgsp_notebook")
    os.environ[ENV_VAR] = create_database(server, name)  # restored by kernel_env
    try:
        yield name
    finally:
        drop_database(server, name)


def execute(name: str) -> Any:
    nb = read(name)
    for cell in code_cells(nb):
        cell.outputs = []
        cell.execution_count = None
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name=KERNEL,
        record_timing=False,
        coalesce_streams=True,  # one stdout block per cell, as Jupyter shows it
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, on any error
    return nb


@pytest.mark.parametrize("name", [n for n in NAMES if n != "04_postgres_durability"])
def test_runs_top_to_bottom_offline(name, kernel_env):
    check_run(name, execute(name))


def test_postgres_notebook_runs_top_to_bottom(notebook_postgres):
    check_run("04_postgres_durability", execute("04_postgres_durability"))


def check_run(name: str, nb: Any) -> None:
    cells = code_cells(nb)
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1))
    assert errors(nb) == []
    assert WARNING_LINE.search(stderr(nb)) is None, stderr(nb)
    assert pngs(nb) == PLOTS.get(name, 0)


def regenerate(name: str) -> None:
    """Execute one notebook and save it with its outputs, without timing metadata."""
    nb = execute(name)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, NOTEBOOKS / f"{name}.ipynb")


if __name__ == "__main__":
    with kernel_environment():
        for name in sys.argv[1:] or NAMES:
            regenerate(name)
            print(f"{name}: executed and saved")

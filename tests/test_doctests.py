"""Every ``>>>`` example in the package runs, as written, under doctest.

Examples that cannot run stand-alone (they need a model, a graph or a database
the docstring does not build) are written as fenced ``python`` blocks instead,
which doctest does not collect.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import langgraph_supervisor_pro


def _modules() -> list[str]:
    names = [langgraph_supervisor_pro.__name__]
    for info in pkgutil.walk_packages(
        langgraph_supervisor_pro.__path__, prefix=f"{langgraph_supervisor_pro.__name__}."
    ):
        if not info.name.endswith(".__main__"):  # importing it would run the CLI
            names.append(info.name)
    return sorted(names)


MODULES = _modules()


def test_every_module_is_collected():
    assert "langgraph_supervisor_pro._builder" in MODULES
    assert "langgraph_supervisor_pro._internal.twins" in MODULES
    assert "langgraph_supervisor_pro.review._desk" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"

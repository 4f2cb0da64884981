"""The package's import graph: no cycles, and no private name imported across subpackages.

Every import counts: module level, function-local and under `if TYPE_CHECKING:`. A
function-local import hides a cycle from Python at import time, not from the design.

The rules (docs/architecture.md, "Layout"):

- The module graph has no cycle. `from pkg import name` is an edge to the submodule
  `pkg.name` when `name` is one, else to `pkg`'s `__init__`, whose own imports (what it
  re-exports) are its edges. So internal code imports a name from the private module
  that defines it, never from a package `__init__` that re-exports it.
- An import that runs when its module is imported (module level, not under
  `TYPE_CHECKING`) of another subpackage's module is also an edge to that subpackage's
  `__init__`, which Python runs first: the package imports in any order.
- A module never imports a `_private` name (nor reads one as `module._name`) from another
  subpackage. The subpackages are the package's top-level directories (`review`,
  `persistence`, `_internal`, ...); the root's flat modules (`_builder.py`, `types.py`, ...)
  are one more, the root. Importing another subpackage's private *module* is fine: its
  public-by-name functions are the cross-module API.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import langgraph_supervisor_pro

PACKAGE = langgraph_supervisor_pro.__name__
ROOT = Path(langgraph_supervisor_pro.__file__).parent


@dataclass(frozen=True)
class Use:
    """One module's use of another: an import, or an attribute read through a module alias."""

    source: str
    target: str
    name: str | None
    line: int
    eager: bool = False
    """Whether the import runs when `source` is imported (not in a function, not only for
    type checkers)."""


def _module_name(path: Path) -> str:
    parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


MODULES = _modules()
PACKAGES = {name for name, path in MODULES.items() if path.name == "__init__.py"}


def _subpackage(module: str) -> str:
    """`review` for `...review._gate`; `<root>` for the root's flat modules and `__init__`."""
    parts = module.split(".")
    if len(parts) >= 2 and f"{PACKAGE}.{parts[1]}" in PACKAGES:
        return parts[1]
    return "<root>"


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if module not in PACKAGES:  # a plain module's package is its parent
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _eager(statements: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run when the module is imported: not in a function's body, not
    under `if TYPE_CHECKING:`."""
    for node in statements:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if isinstance(node, ast.If) and _type_checking(node):
            yield from _eager(node.orelse)
            continue
        yield node
        blocks = [getattr(node, field, []) for field in ("body", "orelse", "finalbody")]
        blocks += [handler.body for handler in getattr(node, "handlers", [])]
        for block in blocks:
            yield from _eager(block)


def _uses(module: str, tree: ast.Module) -> Iterator[Use]:
    aliases: dict[str, str] = {}  # a local name bound to one of the package's modules
    eager = {id(node) for node in _eager(tree.body)}
    for node in ast.walk(tree):  # every import, wherever it sits
        now = id(node) in eager
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    yield Use(module, alias.name, None, node.lineno, now)
                    if alias.asname:
                        aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            origin = _absolute(module, node)
            if origin not in MODULES:
                continue
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                if submodule in MODULES:
                    yield Use(module, submodule, None, node.lineno, now)
                    aliases[alias.asname or alias.name] = submodule
                else:
                    yield Use(module, origin, alias.name, node.lineno, now)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            yield Use(module, aliases[node.value.id], node.attr, node.lineno)


def _packages_run_first(source: str, target: str) -> set[str]:
    """The package `__init__`s Python runs when `source` imports `target`.

    Importing `pkg.review._gate` from outside `pkg.review` runs `pkg/review/__init__.py`
    first, and with it everything that `__init__` re-exports. The root package is left
    out: it is initialised before any of its modules, whoever imports them.
    """
    parts = target.split(".")
    enclosing = {".".join(parts[:end]) for end in range(2, len(parts))}
    return {
        package
        for package in enclosing & PACKAGES
        if source != package and not source.startswith(package + ".")
    }


def _graph() -> tuple[dict[str, set[str]], list[Use]]:
    edges: dict[str, set[str]] = {module: set() for module in MODULES}
    uses: list[Use] = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for use in _uses(module, tree):
            uses.append(use)
            if use.target != module:
                edges[module].add(use.target)
            if use.eager:
                edges[module] |= _packages_run_first(module, use.target)
    return edges, uses


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def _describe(component: list[str], edges: dict[str, set[str]]) -> str:
    members = set(component)
    inner = sorted(
        f"{source} -> {target}"
        for source in component
        for target in edges[source]
        if target in members
    )
    return f"cycle of {len(component)} modules: {', '.join(component)}\n    " + "\n    ".join(inner)


EDGES, USES = _graph()


def test_the_scan_sees_the_whole_package():
    # Guards the test itself: the package's modules are found, and every kind of import
    # (module level, function-local, TYPE_CHECKING) becomes an edge.
    assert {"review", "persistence", "compaction", "observability", "_internal", "cli"} <= {
        _subpackage(module) for module in MODULES
    }
    assert _subpackage(f"{PACKAGE}._builder") == "<root>"
    assert _subpackage(f"{PACKAGE}.review._gate") == "review"
    assert f"{PACKAGE}._builder" in EDGES[PACKAGE]  # the root __init__ re-exports it
    sample = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        f"    from {PACKAGE}.review import _gate\n"
        "else:\n"
        f"    from {PACKAGE}._state import SupervisorState\n"
        "def f():\n"
        "    from ._gate import _x\n"
        f"    import {PACKAGE}.persistence._stores as stores\n"
        "    return stores._hidden\n"
        "class C:\n"
        f"    from {PACKAGE}.compaction import _compactor\n"
    )
    seen = {
        (use.target.removeprefix(PACKAGE + "."), use.name, use.eager)
        for use in _uses(f"{PACKAGE}.review._sample", sample)
    }
    assert seen == {
        ("review._gate", None, False),
        ("_state", "SupervisorState", True),
        ("review._gate", "_x", False),
        ("persistence._stores", None, False),
        ("persistence._stores", "_hidden", False),
        ("compaction._compactor", None, True),
    }
    # Importing another subpackage's module runs that subpackage's __init__ first; importing
    # one's own does not. (An edge for imports that run when the module is imported.)
    assert _packages_run_first(f"{PACKAGE}.review._gate", f"{PACKAGE}.persistence._stores") == {
        f"{PACKAGE}.persistence"
    }
    assert _packages_run_first(f"{PACKAGE}.review._desk", f"{PACKAGE}.review._gate") == set()
    assert _packages_run_first(f"{PACKAGE}._builder", f"{PACKAGE}._state") == set()


def test_a_cycle_is_found_and_reported():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert "a -> b" in _describe(["a", "b", "c"], edges)


def test_the_package_has_no_import_cycle():
    # Counting function-local and TYPE_CHECKING imports, and package __init__ re-exports.
    cycles = _cycles(EDGES)
    assert not cycles, "import cycles (fix: import from the defining private module):\n" + (
        "\n".join(_describe(component, EDGES) for component in cycles)
    )


def test_no_package_init_takes_part_in_a_cycle():
    # The usual trap: a subpackage __init__ re-exports its modules while one of them
    # imports another subpackage's __init__ that leads back. Implied by the test above;
    # kept apart so the failure names the rule.
    in_cycles = {module for component in _cycles(EDGES) for module in component}
    assert sorted(PACKAGES & in_cycles) == []


def test_no_private_name_is_imported_across_subpackages():
    offenders = sorted(
        f"{use.source.removeprefix(PACKAGE + '.')}:{use.line} uses "
        f"{use.target.removeprefix(PACKAGE + '.')}.{use.name}"
        for use in USES
        if use.name is not None
        and _private(use.name)
        and _subpackage(use.source) != _subpackage(use.target)
    )
    assert offenders == [], (
        "private names used across subpackages (fix: move the helper to _internal/, or drop "
        "the underscore when it is a real cross-module API):\n" + "\n".join(offenders)
    )


_UPSTREAM = ("langgraph", "langchain", "langchain_core", "langsmith", "langgraph_sdk")
# The only upstream private modules we name, for type checkers only: LangSmith exports no
# public name for what `evaluate` returns (docs/architecture.md lists every coupling).
_TYPE_ONLY_PRIVATE = {
    "langsmith.evaluation._runner.ExperimentResults",
    "langsmith.evaluation._arunner.AsyncExperimentResults",
}


def _upstream_private_imports() -> list[tuple[str, int, str, bool]]:
    found = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        eager = {id(node) for node in _eager(tree.body)}
        functions = [
            n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        local = {id(n) for f in functions for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] in _UPSTREAM and any(_private(p) for p in parts[1:]):
                    runs = id(node) in eager or id(node) in local
                    found.append((module, node.lineno, name, runs))
    return found


def test_no_private_upstream_module_or_name_is_imported():
    found = _upstream_private_imports()
    wrong = [f for f in found if f[3] or f[2] not in _TYPE_ONLY_PRIVATE]
    assert not wrong, "private LangGraph/LangChain/LangSmith imports (use the public API):\n" + (
        "\n".join(f"{m}:{line}: {name}" for m, line, name, _ in wrong)
    )

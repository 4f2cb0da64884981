"""The project templates `lgsp new` writes: the folders of `templates/` (private).

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/templates/
"""

from __future__ import annotations

import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from langgraph_supervisor_pro.errors import TemplateError

_PACKAGE = Path(__file__).resolve().parents[1]
# What a template run in place leaves behind; the wheel's `exclude` (pyproject.toml) matches.
_IGNORED = shutil.ignore_patterns(
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".venv",
    ".env",
    ".langgraph_api",
    ".lgsp",
    "*.db",
)


@dataclass(frozen=True)
class Template:
    """One project template: its name (the folder), its one-line description and folder."""

    name: str
    description: str
    path: Path


def templates_root() -> Path:
    """The folder holding the templates: the wheel's copy, else the checkout's.

    Example:
        >>> (templates_root() / "support_desk" / "langgraph.json").is_file()
        True
    """
    for candidate in (_PACKAGE / "_templates", _PACKAGE.parent / "templates"):
        if candidate.is_dir():
            return candidate
    raise TemplateError(
        f"no project templates found (looked in {_PACKAGE / '_templates'} and "
        f"{_PACKAGE.parent / 'templates'}); reinstall langgraph-supervisor-pro"
    )


def templates() -> dict[str, Template]:
    """The templates (each folder of `templates_root()` with a `pyproject.toml`) by name.

    Example:
        >>> "support_desk" in templates()
        True
    """
    found: dict[str, Template] = {}
    for folder in sorted(templates_root().iterdir()):
        project = folder / "pyproject.toml"
        if not project.is_file():
            continue
        with project.open("rb") as file:
            description = str(tomllib.load(file).get("project", {}).get("description", ""))
        found[folder.name] = Template(folder.name, description.strip(), folder)
    return found


def write_project(name: str, directory: Path) -> Template:
    """Write a copy of template `name` into `directory` (new, or empty; made if missing).

    Raises:
        TemplateError: When there is no such template, or `directory` is a file or a
            directory that is not empty.
    """
    known = templates()
    template = known.get(name)
    if template is None:
        raise TemplateError(
            f"no template {name!r}; the templates are: {', '.join(known) or '(none)'}"
        )
    if directory.exists():
        if not directory.is_dir():
            raise TemplateError(f"{directory} is a file; give a new or empty directory")
        if any(directory.iterdir()):
            raise TemplateError(
                f"{directory} is not empty; give a new or empty directory so nothing is overwritten"
            )
    shutil.copytree(template.path, directory, ignore=_IGNORED, dirs_exist_ok=True)
    return template

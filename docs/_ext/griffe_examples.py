"""Read a Google-style `Example:` section as `Examples:` when the API reference is built.

The package's docstrings head their doctests `Example:`, which Griffe reads as an admonition
(Markdown), not as an examples section (code). This Griffe extension, named in mkdocs.yml,
renames the heading in the docstring text it loads; the package itself is not changed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_HEADING = re.compile(r"^(\s*)Example:(\s*)$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rename `Example:` headings to `Examples:` in every loaded docstring."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Each module, class, function and attribute."""
        _rename(obj)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """The package itself (its module docstring)."""
        _rename(pkg)


def _rename(obj: griffe.Object) -> None:
    if obj.docstring is not None:
        obj.docstring.value = _HEADING.sub(r"\1Examples:\2", obj.docstring.value)

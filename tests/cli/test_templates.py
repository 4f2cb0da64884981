"""`lgsp new`: the project templates, written, refused, listed, and the written project's tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langgraph_supervisor_pro.cli import _templates, app
from langgraph_supervisor_pro.cli._templates import (
    TemplateError,
    templates,
    templates_root,
    write_project,
)

ROOT = Path(__file__).resolve().parents[2]
DUPLICATE = "I was charged twice for order A1001, please refund the duplicate"


def lgsp(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def files(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file()}


def test_the_templates_come_from_the_checkout_with_a_description_each() -> None:
    assert templates_root() == ROOT / "templates"
    (desk,) = templates().values()
    assert desk.name == "support_desk"
    assert desk.description.startswith("A support desk: a triage supervisor")


def test_new_writes_a_runnable_copy_of_the_template(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "myapp"
    result = lgsp("new", "support_desk", str(target))
    assert result.exit_code == 0, result.output
    assert f"Wrote the support_desk project to {target}" in result.output
    assert files(target) == {
        ".env.example",
        "README.md",
        "langgraph.json",
        "pyproject.toml",
        "support_desk/__init__.py",
        "support_desk/graph.py",
        "tests/test_support_desk.py",
    }
    source = ROOT / "templates" / "support_desk"
    for name in files(target):
        assert (target / name).read_bytes() == (source / name).read_bytes()


def test_new_leaves_build_and_cache_files_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A template folder used in place (tests run in it) holds caches; they are not copied.
    fake = tmp_path / "templates"
    (fake / "mini" / "__pycache__").mkdir(parents=True)
    (fake / "mini" / "pyproject.toml").write_text('[project]\ndescription = "Mini."\n')
    (fake / "mini" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (fake / "mini" / ".env").write_text("OPENAI_API_KEY=secret\n")
    monkeypatch.setattr(_templates, "templates_root", lambda: fake)
    write_project("mini", tmp_path / "out")
    assert files(tmp_path / "out") == {"pyproject.toml"}


def test_new_into_an_empty_directory_works(tmp_path: Path) -> None:
    result = lgsp("new", "support_desk", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "langgraph.json").is_file()


def test_new_refuses_a_directory_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = lgsp("new", "support_desk", str(tmp_path))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines == [
        f"Error: {tmp_path} is not empty; give a new or empty directory so nothing is overwritten"
    ]
    assert files(tmp_path) == {"notes.txt"}


def test_new_refuses_a_file(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    result = lgsp("new", "support_desk", str(target))
    assert result.exit_code == 2
    assert "is a file" in result.output


def test_an_unknown_template_names_the_templates(tmp_path: Path) -> None:
    result = lgsp("new", "helpdesk", str(tmp_path / "app"))
    assert result.exit_code == 2
    assert "no template 'helpdesk'; the templates are: support_desk" in result.output
    assert not (tmp_path / "app").exists()
    with pytest.raises(TemplateError, match="the templates are: support_desk"):
        write_project("helpdesk", tmp_path / "app")


def test_new_without_a_directory_is_a_usage_error() -> None:
    result = lgsp("new", "support_desk")
    assert result.exit_code == 2
    assert "lgsp new TEMPLATE DIR" in result.output


def test_new_list_shows_each_template_on_one_line() -> None:
    result = lgsp("new", "--list")
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "support_desk  A support desk: a triage supervisor over billing, tech support and "
        "account workers."
    ]


def written(tmp_path: Path) -> Path:
    target = tmp_path / "app"
    assert lgsp("new", "support_desk", str(target)).exit_code == 0
    return target


def test_the_written_projects_own_tests_pass(tmp_path: Path) -> None:
    target = written(tmp_path)
    env = {
        **os.environ,
        # The package from this checkout (the project depends on langgraph-supervisor-pro).
        "PYTHONPATH": str(ROOT),
        "PYTEST_ADDOPTS": "",
    }
    env.pop("LGSP_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=target,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "10 passed" in done.stdout


def test_the_written_graph_runs_to_the_refund_review_and_refunds(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from tests.cli._project import load_graph_module

    module = load_graph_module(written(tmp_path))
    graph = module.build_graph({})
    compiled = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    out = compiled.invoke({"messages": [("user", DUPLICATE)]}, config)
    (pending,) = out["__interrupt__"]
    assert pending.value["action_requests"][0]["name"] == "refund"
    out = compiled.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert out["status"] == "done"
    assert "refunded 29.00 on order A1001" in out["messages"][-1].content


def test_an_installed_wheel_finds_its_own_copy_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The wheel puts templates/ at langgraph_supervisor_pro/_templates (pyproject.toml).
    package = tmp_path / "site-packages" / "langgraph_supervisor_pro"
    (package / "_templates" / "mini").mkdir(parents=True)
    (package / "_templates" / "mini" / "pyproject.toml").write_text(
        '[project]\ndescription = "Mini."\n'
    )
    monkeypatch.setattr(_templates, "_PACKAGE", package)
    assert templates_root() == package / "_templates"
    assert [(t.name, t.description) for t in templates().values()] == [("mini", "Mini.")]
    (package / "_templates" / "mini" / "pyproject.toml").unlink()
    (package / "_templates" / "mini").rmdir()
    (package / "_templates").rmdir()
    with pytest.raises(TemplateError, match="no project templates found"):
        templates_root()


def test_the_wheel_ships_the_templates() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert (
        '[tool.hatch.build.targets.wheel.force-include]\n"templates" = '
        '"langgraph_supervisor_pro/_templates"'
    ) in text

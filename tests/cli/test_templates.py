"""`lgsp new`: the project templates, written, refused, listed, and the written project's tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langgraph_supervisor_pro.cli import _templates, app
from langgraph_supervisor_pro.cli._templates import templates, templates_root, write_project
from langgraph_supervisor_pro.errors import TemplateError

ROOT = Path(__file__).resolve().parents[2]
DUPLICATE = "I was charged twice for order A1001, please refund the duplicate"
INCIDENT = (
    "Checkout is returning 500s since the 14:02 deploy of payments v2.3.1: page on-call, "
    "roll back the deploy and post a status update"
)
HEAT_PUMP = (
    "Should I replace my gas boiler with a heat pump? Compare running costs and emissions, "
    "and write a short report with sources."
)

FILES = {
    "support_desk": {
        ".env.example",
        "README.md",
        "langgraph.json",
        "pyproject.toml",
        "support_desk/__init__.py",
        "support_desk/graph.py",
        "tests/test_support_desk.py",
    },
    "ops_tree": {
        ".env.example",
        "README.md",
        "langgraph.json",
        "pyproject.toml",
        "ops_tree/__init__.py",
        "ops_tree/graph.py",
        "tests/test_ops_tree.py",
    },
    "research_team": {
        ".env.example",
        "README.md",
        "langgraph.json",
        "pyproject.toml",
        "research_team/__init__.py",
        "research_team/graph.py",
        "tests/test_research_team.py",
    },
}
"""What `lgsp new` writes for each template: every template is tested the same way."""
PASSED = {
    "support_desk": "15 passed",
    "ops_tree": "23 passed",
    # Its live-model test is skipped: no LGSP_*MODEL reaches the written project's run.
    "research_team": "23 passed, 1 skipped",
}
"""What each written project's own offline tests report."""


def lgsp(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def files(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file()}


def test_the_templates_come_from_the_checkout_with_a_description_each() -> None:
    assert templates_root() == ROOT / "templates"
    found = templates()
    assert set(FILES) <= set(found)
    assert found["support_desk"].description.startswith("A support desk: a triage supervisor")
    assert found["ops_tree"].description.startswith("An operations tree: a root supervisor")
    assert found["research_team"].description.startswith("A research team: a supervisor over")
    assert all(t.description and t.path == ROOT / "templates" / t.name for t in found.values())


@pytest.mark.parametrize("template", sorted(FILES))
def test_new_writes_a_runnable_copy_of_the_template(tmp_path: Path, template: str) -> None:
    target = tmp_path / "deep" / "myapp"
    result = lgsp("new", template, str(target))
    assert result.exit_code == 0, result.output
    assert f"Wrote the {template} project to {target}" in result.output
    assert files(target) == FILES[template]
    source = ROOT / "templates" / template
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
    # `langgraph dev` and `lgsp demo` state from a run in place.
    (fake / "mini" / ".langgraph_api").mkdir()
    (fake / "mini" / ".langgraph_api" / "store.pckl").write_bytes(b"\0")
    (fake / "mini" / "runs.db").write_bytes(b"\0")
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
    known = ", ".join(templates())
    assert f"no template 'helpdesk'; the templates are: {known}" in result.output
    assert {"ops_tree", "research_team", "support_desk"} <= set(known.split(", "))
    assert not (tmp_path / "app").exists()
    with pytest.raises(TemplateError, match=f"the templates are: {known}"):
        write_project("helpdesk", tmp_path / "app")


def test_new_without_a_directory_is_a_usage_error() -> None:
    result = lgsp("new", "support_desk")
    assert result.exit_code == 2
    assert "lgsp new TEMPLATE DIR" in result.output


def test_new_list_shows_each_template_on_one_line() -> None:
    result = lgsp("new", "--list")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    shown = dict(line.split(None, 1) for line in lines)
    assert shown == {name: t.description for name, t in templates().items()}
    assert shown["support_desk"] == (
        "A support desk: a triage supervisor over billing, tech support and account workers."
    )
    assert shown["ops_tree"] == (
        "An operations tree: a root supervisor over incident, infrastructure and "
        "communications domains."
    )
    assert shown["research_team"] == (
        "A research team: a supervisor over researcher, analyst and writer, with sources "
        "cited from the store."
    )
    # The descriptions start in one column.
    assert len({line.index(shown[line.split()[0]]) for line in lines}) == 1


def written(tmp_path: Path, template: str = "support_desk") -> Path:
    target = tmp_path / "app"
    assert lgsp("new", template, str(target)).exit_code == 0
    return target


def _offline_env() -> dict[str, str]:
    env = {
        **os.environ,
        # The package from this checkout (the project depends on langgraph-supervisor-pro).
        "PYTHONPATH": str(ROOT),
        "PYTEST_ADDOPTS": "",
    }
    for name in list(env):  # the written project runs offline: no model configured
        if name.startswith("LGSP_") and name.endswith("MODEL"):
            env.pop(name)
    return env


@pytest.mark.parametrize("template", sorted(FILES))
def test_the_written_projects_own_tests_pass(tmp_path: Path, template: str) -> None:
    target = written(tmp_path, template)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=target,
        env=_offline_env(),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert PASSED[template] in done.stdout


@pytest.mark.parametrize("template", sorted(FILES))
def test_the_written_project_is_lint_and_type_clean(tmp_path: Path, template: str) -> None:
    # With the project's own ruff settings (its pyproject.toml) and mypy --strict.
    target = written(tmp_path, template)
    for command in (
        ["ruff", "check", "--no-cache", "."],
        ["ruff", "format", "--check", "--no-cache", "."],
        ["mypy", "--strict", "--cache-dir", str(tmp_path / "mypy"), template],
    ):
        done = subprocess.run(
            [sys.executable, "-m", *command],
            cwd=target,
            env=_offline_env(),
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"


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
    # Where templates_root() looks in an installed wheel; tests/integration/test_packaging.py
    # builds the wheel and checks its files.
    import tomllib

    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]
    wheel = wheel["targets"]["wheel"]
    assert "templates" in wheel["only-include"]
    assert wheel["sources"] == {"templates": "langgraph_supervisor_pro/_templates"}


def test_the_written_ops_tree_pauses_inside_a_domain_and_rolls_back(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from tests.cli._project import load_graph_module

    module = load_graph_module(written(tmp_path, "ops_tree"), "ops_tree")
    compiled = module.build_graph({}).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    out = compiled.invoke({"messages": [("user", INCIDENT)]}, config)
    (pending,) = out["__interrupt__"]
    assert pending.value["action_requests"][0]["name"] == "rollback"
    assert pending.value["context"]["path"] == ["infrastructure", "deployer"]
    out = compiled.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert out["status"] == "done"
    assert "Rolled back payments from v2.3.1 to v2.3.0." in out["messages"][-1].content


def test_the_written_research_team_fans_out_keeps_its_sources_and_reports(
    tmp_path: Path,
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from tests.cli._project import load_graph_module

    module = load_graph_module(written(tmp_path, "research_team"), "research_team")
    store = InMemoryStore()
    compiled = module.build_graph({}).compile(checkpointer=InMemorySaver(), store=store)
    config = {"configurable": {"thread_id": "t"}}
    out = compiled.invoke({"messages": [("user", HEAT_PUMP)]}, config)
    assert out["status"] == "done"
    assert sorted((e["step"], e["worker"]) for e in out["ledger"]) == [
        (1, "researcher"),
        (2, "analyst"),
        (3, "writer"),
    ]
    assert any({"researcher", "analyst"} == set(s.next) for s in compiled.get_state_history(config))
    kept = {item.key for item in store.search(module.sources_namespace("t"))}
    assert {"S1", "S2", "D1"} <= kept
    report = out["messages"][-1].content
    assert "## Sources" in report and "[S2] What a heat pump installation really costs" in report

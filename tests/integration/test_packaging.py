"""The package as a user gets it: a wheel built here, installed in a fresh virtual environment.

The sdist and the wheel are built from this working tree (`python -m build`, hatchling in an
isolated environment). The wheel is installed, not editable, into a new virtual environment,
and every command runs from a temporary directory with `PYTHONPATH` and the other `PYTHON*`
variables unset, so nothing of this checkout is importable there. From that environment:
`lgsp --version`, `lgsp new --list` (the same templates as `templates/`), `lgsp new` for
each template, the project's own dependencies installed (its `langgraph-supervisor-pro`
resolved to the wheel just built, never an index's) and its own tests run, then `lgsp demo`.
A second build, from a copy of the tree that holds what running a template in place leaves
behind (caches, a virtualenv, a `.env` with a key, `langgraph dev`'s state, a database),
proves none of that ships.

Dependencies come from the configured package index (pip's cache makes later runs quick).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import tarfile
import tomllib
import venv as venv_module
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

# Building, creating two environments and installing langgraph-cli[inmem] for each template
# take well under a minute from pip's cache; a first run downloads them.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "langgraph_supervisor_pro"
VERSION: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
TEMPLATES = sorted(p.parent.name for p in (ROOT / "templates").glob("*/pyproject.toml"))
"""The templates of this checkout: a folder of `templates/` holding a `pyproject.toml`."""

INSTALL_TIMEOUT = 900.0
"""Seconds one `pip install` gets (a first run downloads langgraph-cli[inmem])."""
RUN_TIMEOUT = 300.0
"""Seconds one command of the installed package (a template's tests, the demo) gets."""

JUNK_PARTS = frozenset(
    {
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".venv",
        ".env",
        ".langgraph_api",
        ".lgsp",
        ".git",
    }
)
"""Path parts no distribution may hold: caches, virtualenvs, keys, run state, VCS."""


def junk_in(names: list[str]) -> list[str]:
    """The archive members that are caches, virtualenvs, `.env` files or databases."""
    return [
        name
        for name in names
        if any(
            part in JUNK_PARTS or part.endswith((".pyc", ".db"))
            for part in PurePosixPath(name).parts
        )
    ]


def clean_env(venv: Path | None = None, **extra: str) -> dict[str, str]:
    """This process's environment without anything that would import this checkout.

    No `PYTHON*` variable (`PYTHONPATH` above all), no `VIRTUAL_ENV` or its `bin` on `PATH`,
    no pytest or `LGSP_*` settings (`LGSP_MODEL` would make a template use a real model; the
    machine's `LGSP_POSTGRES_URI` stays); tracing off. With `venv`, its `bin` leads `PATH`.
    """
    active = os.environ.get("VIRTUAL_ENV")
    path = [
        entry
        for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry and not (active and Path(entry) == Path(active) / "bin")
    ]
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "PYTEST", "LGSP_", "VIRTUAL_ENV", "COV_CORE"))
        or key == "LGSP_POSTGRES_URI"  # the machine's database, should a template's test want it
    }
    if venv is not None:
        path.insert(0, str(venv / "bin"))
        env["VIRTUAL_ENV"] = str(venv)
    env.update(
        PATH=os.pathsep.join(path),
        PYTHONNOUSERSITE="1",
        PIP_NO_INPUT="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        COLUMNS="200",
        **extra,
    )
    return env


def run(
    args: list[str | Path],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float = RUN_TIMEOUT,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run a command (no terminal, no input); with `check`, fail showing its output."""
    done = subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check:
        assert done.returncode == 0, (
            f"{' '.join(map(str, args))} exited {done.returncode} in {cwd}:\n"
            f"--- stdout:\n{done.stdout[-6000:]}\n--- stderr:\n{done.stderr[-6000:]}"
        )
    return done


def new_venv(path: Path) -> Path:
    """A new virtual environment with pip, of the interpreter running the tests."""
    venv_module.EnvBuilder(with_pip=True, clear=True).create(path)
    return path


@dataclass(frozen=True)
class Dist:
    wheel: Path
    sdist: Path


def build(builder: Path, source: Path, out: Path) -> Dist:
    """`python -m build --sdist --wheel` of `source` into `out`, both from the tree itself."""
    run(
        [builder / "bin" / "python", "-m", "build", "-q", "--sdist", "--wheel", "-o", out, source],
        cwd=out.parent,
        env=clean_env(builder),
        timeout=INSTALL_TIMEOUT,
    )
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return Dist(wheel=wheel, sdist=sdist)


def source_files(folder: str) -> set[str]:
    """The files of `folder` a distribution must hold: tracked or new, not ignored, no junk."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", folder],
            cwd=ROOT,
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout.decode()
        names = [name for name in listed.split("\0") if name and (ROOT / name).is_file()]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file
        names = [
            str(p.relative_to(ROOT).as_posix()) for p in (ROOT / folder).rglob("*") if p.is_file()
        ]
    return set(names) - set(junk_in(names))


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def builder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment holding `build` (the PyPA front end)."""
    path = new_venv(tmp_path_factory.mktemp("builder") / "venv")
    run(
        [path / "bin" / "python", "-m", "pip", "install", "-q", "build"],
        cwd=path,
        env=clean_env(path),
        timeout=INSTALL_TIMEOUT,
    )
    return path


@pytest.fixture(scope="module")
def dist(builder: Path, tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """The sdist and wheel of this working tree."""
    return build(builder, ROOT, tmp_path_factory.mktemp("dist") / "dist")


@pytest.fixture(scope="module")
def installed(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed (not editable)."""
    path = new_venv(tmp_path_factory.mktemp("user") / "venv")
    run(
        [path / "bin" / "python", "-m", "pip", "install", "-q", dist.wheel],
        cwd=path.parent,
        env=clean_env(path),
        timeout=INSTALL_TIMEOUT,
    )
    return path


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A working directory outside the checkout."""
    assert ROOT not in tmp_path.parents
    return tmp_path


def installed_from(venv: Path, cwd: Path) -> dict[str, str]:
    """Where the venv imports the package from, and how pip installed it."""
    probe = (
        "import importlib.metadata as m, json, sys\n"
        f"import {PACKAGE} as p\n"
        "d = m.distribution('langgraph-supervisor-pro')\n"
        "print(json.dumps({'file': p.__file__, 'version': p.__version__,\n"
        "    'direct_url': d.read_text('direct_url.json') or '', 'path': sys.path}))\n"
    )
    out = run([venv / "bin" / "python", "-c", probe], cwd=cwd, env=clean_env(venv))
    return dict(json.loads(out.stdout))


# --------------------------------------------------------------------------- the artefacts


def test_the_wheel_holds_the_typed_package_and_the_templates_and_nothing_else(
    dist: Dist,
) -> None:
    names = zipfile.ZipFile(dist.wheel).namelist()
    assert dist.wheel.name == f"{PACKAGE}-{VERSION}-py3-none-any.whl"
    # Only the package and its metadata: no tests, bench, docs or templates/ at the top.
    assert {PurePosixPath(n).parts[0] for n in names} == {PACKAGE, f"{PACKAGE}-{VERSION}.dist-info"}
    assert f"{PACKAGE}/py.typed" in names
    assert junk_in(names) == []
    # Every file of templates/ ships at <package>/_templates/, where `lgsp new` reads it.
    prefix = f"{PACKAGE}/_templates/"
    shipped = {"templates/" + n.removeprefix(prefix) for n in names if n.startswith(prefix)}
    expected = source_files("templates")
    assert expected, "no templates in this checkout"
    assert shipped == expected, (sorted(expected - shipped), sorted(shipped - expected))
    for template in TEMPLATES:
        for name in ("pyproject.toml", "langgraph.json", "README.md"):
            assert f"{PACKAGE}/_templates/{template}/{name}" in names
    # And every module of the package.
    assert source_files(PACKAGE) <= set(names)
    entry_points = zipfile.ZipFile(dist.wheel).read(
        f"{PACKAGE}-{VERSION}.dist-info/entry_points.txt"
    )
    assert b"lgsp = langgraph_supervisor_pro.cli:main" in entry_points


def test_the_sdist_holds_the_sources_the_wheel_is_built_from(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as archive:
        names = [m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name]
    assert dist.sdist.name == f"{PACKAGE}-{VERSION}.tar.gz"
    assert {"pyproject.toml", "README.md", f"{PACKAGE}/py.typed"} <= set(names)
    assert source_files("templates") <= set(names)
    assert junk_in(names) == []


def test_what_running_a_template_in_place_leaves_behind_never_ships(
    builder: Path, tmp_path: Path
) -> None:
    # A copy of the tree (no VCS, no virtualenv), then what a developer's runs leave in it.
    tree = tmp_path / "tree"
    shutil.copytree(
        ROOT,
        tree,
        symlinks=True,
        ignore=shutil.ignore_patterns(*JUNK_PARTS, "*.pyc", "*.db", "dist", "build"),
    )
    planted = []
    for folder in (tree / "templates" / TEMPLATES[0], tree / PACKAGE):
        for relative in (
            "__pycache__/graph.cpython-311.pyc",
            ".pytest_cache/v/cache/lastfailed",
            ".venv/lib/site.py",
            ".env",
            ".langgraph_api/.langgraph_checkpoint.1.pckl",
            ".lgsp/demo.db",
            "runs.db",
        ):
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("OPENAI_API_KEY=sk-planted\n")
            planted.append(target)
    built = build(builder, tree, tmp_path / "dist")
    wheel = zipfile.ZipFile(built.wheel).namelist()
    with tarfile.open(built.sdist) as archive:
        sdist = archive.getnames()
    assert len(planted) == 14
    assert junk_in(wheel) == []
    assert junk_in(sdist) == []
    # The templates themselves are there, their `.env.example` included.
    assert f"{PACKAGE}/_templates/{TEMPLATES[0]}/pyproject.toml" in wheel
    assert any(n.endswith(f"/_templates/{TEMPLATES[0]}/.env.example") for n in wheel)


# --------------------------------------------------------------------------- installed


def test_the_installed_package_is_the_wheel_not_this_checkout(
    installed: Path, dist: Dist, elsewhere: Path
) -> None:
    found = installed_from(installed, elsewhere)
    site = installed / "lib"
    assert Path(found["file"]).is_relative_to(site), found["file"]
    assert found["version"] == VERSION
    assert not any(Path(entry) == ROOT for entry in found["path"] if entry), found["path"]
    direct = json.loads(found["direct_url"])
    assert "archive_info" in direct and "dir_info" not in direct  # a wheel, not editable
    assert direct["url"].endswith(dist.wheel.name)
    lgsp = installed / "bin" / "lgsp"
    version = run([lgsp, "--version"], cwd=elsewhere, env=clean_env(installed))
    assert version.stdout.strip() == f"lgsp {VERSION}"


def listed_templates(installed: Path, cwd: Path) -> dict[str, str]:
    out = run([installed / "bin" / "lgsp", "new", "--list"], cwd=cwd, env=clean_env(installed))
    lines = out.stdout.splitlines()
    return {line.split()[0]: line.split(None, 1)[1] for line in lines if line.strip()}


def test_new_list_shows_every_template_of_the_checkout(installed: Path, elsewhere: Path) -> None:
    listed = listed_templates(installed, elsewhere)
    assert sorted(listed) == TEMPLATES
    assert all(description.strip() for description in listed.values())


@pytest.mark.parametrize("template", TEMPLATES)
def test_each_template_is_written_and_its_own_tests_pass(
    installed: Path, dist: Dist, elsewhere: Path, template: str
) -> None:
    assert template in listed_templates(installed, elsewhere)
    project = elsewhere / "myapp"
    env = clean_env(installed)
    written = run([installed / "bin" / "lgsp", "new", template, project], cwd=elsewhere, env=env)
    assert f"Wrote the {template} project to {project}" in written.stdout
    assert (project / "langgraph.json").is_file()

    # Its dependencies, as its README says (`pip install -e '.[dev]'`), with this package
    # pinned to the wheel just built: pip resolves `langgraph-supervisor-pro` to that file.
    with (project / "pyproject.toml").open("rb") as file:
        extras = tomllib.load(file)["project"].get("optional-dependencies", {})
    editable = f"{project}[dev]" if "dev" in extras else str(project)
    requirements: list[str | Path] = []
    for name in ("requirements.txt", "requirements-dev.txt"):
        if (project / name).is_file():
            requirements += ["-r", project / name]
    pip: list[str | Path] = [installed / "bin" / "python", "-m", "pip", "install", "-q"]
    run(
        [*pip, dist.wheel, "-e", editable, *requirements],
        cwd=elsewhere,
        env=env,
        timeout=INSTALL_TIMEOUT,
    )
    found = installed_from(installed, elsewhere)
    assert json.loads(found["direct_url"])["url"].endswith(dist.wheel.name)
    assert Path(found["file"]).is_relative_to(installed / "lib")

    tests = run(
        [installed / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        env=env,
        check=False,
    )
    assert tests.returncode == 0, tests.stdout[-6000:] + tests.stderr[-3000:]
    # Some ran and passed (a template's live-model tests may skip without a key).
    assert " passed" in tests.stdout.splitlines()[-1], tests.stdout[-2000:]


def test_the_demo_runs_from_the_wheel(installed: Path, elsewhere: Path) -> None:
    env = clean_env(installed)
    lgsp = installed / "bin" / "lgsp"
    help_text = run([lgsp, "demo", "--help"], cwd=elsewhere, env=env).stdout
    for option in ("--yes", "--plain", "--delay", "--db"):
        assert option in help_text
    database = elsewhere / "runs" / "demo.db"
    demo = run(
        [lgsp, "demo", "--yes", "--plain", "--delay", "0", "--db", database],
        cwd=elsewhere,
        env=env,
        check=False,
    )
    output = demo.stdout + demo.stderr
    # Exit code 0: the run finished with status "done" (1 otherwise, 2 for a usage error).
    assert demo.returncode == 0, output[-6000:]
    assert "\x1b[" not in demo.stdout  # --plain: no colours
    # The wheel's copy of the template (no checkout here) played its three points.
    for shown in ("Review gate", "Approved refund (--yes)", "refused by the allowlist"):
        assert shown in demo.stdout, output[-6000:]
    assert "compaction: billing" in demo.stdout, output[-6000:]
    with sqlite3.connect(database) as db:
        (checkpoints,) = db.execute("SELECT count(*) FROM checkpoints").fetchone()
    assert checkpoints > 0
    assert not (elsewhere / ".lgsp").exists()  # --db was used, not the default

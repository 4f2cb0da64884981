"""What every results page records about the run: the command, the commit, the machine."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import urllib.parse
from datetime import UTC, datetime
from pathlib import Path

import langgraph_supervisor_pro


def repository_state(markdown: Path | None) -> str:
    """`git rev-parse --short HEAD` of the measured package's checkout, and whether its tracked
    files had uncommitted changes (the results page being written is not counted)."""
    package = Path(langgraph_supervisor_pro.__file__).resolve().parent

    def git(*args: str) -> str | None:
        done = subprocess.run(["git", "-C", str(package), *args], capture_output=True, text=True)
        return done.stdout.rstrip() if done.returncode == 0 else None

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return "unknown (the package is not in a git checkout)"
    top = git("rev-parse", "--show-toplevel")
    exclude = []
    if markdown is not None and top and markdown.resolve().is_relative_to(top):
        exclude = [f":(exclude,top){markdown.resolve().relative_to(top)}"]
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ":/", *exclude)
    if dirty is None:
        return f"{commit} (could not tell whether the tree was dirty)"
    if not dirty:
        return f"{commit}, clean tree"
    paths = sorted(line[3:] for line in dirty.splitlines() if line.strip())
    return f"{commit} + uncommitted changes in {', '.join(paths)} (dirty tree)"


def command_line(script: str) -> str:
    """The command that ran, with the Postgres server it was pointed at (password hidden)."""
    uri = os.environ.get("LGSP_POSTGRES_URI", "").strip()
    prefix = ""
    if uri:
        parts = urllib.parse.urlsplit(uri)
        if parts.password:
            netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
            uri = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
        prefix = f"LGSP_POSTGRES_URI={uri} "
    return f"PYTHONPATH=$PWD {prefix}.venv/bin/python {script} {' '.join(sys.argv[1:])}"


def machine() -> str:
    """CPU model, cores, memory, OS and Python of this machine."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        memory = f", {pages * size / 2**30:.0f} GiB memory"
    except (ValueError, OSError, AttributeError):
        pass
    load = os.getloadavg()
    return (
        f"{model} ({platform.machine()}), {os.cpu_count()} cores{memory}, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}; "
        f"load average (1, 5 min) at the end: {load[0]:.2f}, {load[1]:.2f}"
    )


def package_revision() -> str:
    """Where the measured package was imported from, its commit, and whether it was modified."""
    package = Path(langgraph_supervisor_pro.__file__).resolve().parent

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(package), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return f"{package} (not in a git checkout)"
    modified = git("status", "--porcelain", "--", ".")
    return f"{package} at {commit}" + (" + uncommitted changes" if modified else "")


def run_lines(script: str, markdown: Path | None) -> list[str]:
    """The first lines of a results page part: command, date, commit measured, machine.

    `markdown` is the page being written (its own uncommitted change is not counted).
    """
    return [
        f"command: `{command_line(script).rstrip()}`",
        f"date: {datetime.now(UTC):%Y-%m-%d %H:%M UTC}",
        f"commit measured: {repository_state(markdown)}; package imported from "
        f"{package_revision()}",
        f"machine: {machine()}",
    ]

"""Test-side helpers for the integration tests that run child processes.

`Child` starts `sys.executable <script> args` with its output in files, and
every wait on it is bounded; `Children` kills (by pid) whatever still runs when
a test's block ends; `wait_for_marker` waits (bounded) until a child says it is
blocked; `kill_and_resume` runs a child to its blocking point, SIGKILLs it and
resumes the thread in a new one. The child-side counterpart is `_app_common.py`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from langgraph_supervisor_pro import open_checkpointer
from tests.integration._app_common import LOG_NAME, MARKER_NAME

ROOT = Path(__file__).resolve().parents[2]
MARKER_TIMEOUT = 60.0
"""Seconds a child gets to reach its blocking point (it imports and runs a few short hops)."""
EXIT_TIMEOUT = 60.0
"""Seconds a child gets to finish (resume) or to be reaped after SIGKILL."""


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child imports the same checkout of the package (and of `tests`) as this process."""
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(paths),
        "PYTHONUNBUFFERED": "1",
        **(extra or {}),
    }


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON lines a child appended to `path` (none if it never wrote the file)."""
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class Child:
    """One child process, its output files, and helpers that never wait unbounded."""

    def __init__(self, script: Path, workdir: Path, label: str, args: list[str]) -> None:
        self.label = label
        self.stdout_path = workdir / f"{label}.stdout"
        self.stderr_path = workdir / f"{label}.stderr"
        with self.stdout_path.open("wb") as out, self.stderr_path.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, str(script), *args],
                cwd=ROOT,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env=child_env(),
            )

    def output(self) -> str:
        return (
            f"--- {self.label} (pid {self.proc.pid}, returncode {self.proc.returncode}) stdout:\n"
            f"{self.stdout_path.read_text(errors='replace')[-4000:]}\n"
            f"--- stderr:\n{self.stderr_path.read_text(errors='replace')[-8000:]}"
        )

    def wait(self, timeout: float = EXIT_TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"{self.label} did not exit within {timeout:g} s\n{self.output()}")

    def kill(self) -> None:
        """Kill this child if it is still running (by its own pid only) and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=EXIT_TIMEOUT)

    def sigkill(self) -> None:
        """SIGKILL this child (by its pid) and check that the signal is what ended it."""
        os.kill(self.proc.pid, signal.SIGKILL)
        assert self.wait() == -signal.SIGKILL, self.output()

    def summary(self) -> dict[str, Any]:
        lines = self.stdout_path.read_text().strip().splitlines()
        assert lines, f"{self.label} printed no summary\n{self.output()}"
        return json.loads(lines[-1])


class Children:
    """Starts children of one script; on leaving the block, kills those still running."""

    def __init__(self, script: Path, workdir: Path) -> None:
        self.script = script
        self.workdir = workdir
        self.started: list[Child] = []

    def start(self, label: str, args: list[str]) -> Child:
        child = Child(self.script, self.workdir, label, args)
        self.started.append(child)
        return child

    def __enter__(self) -> Children:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for child in self.started:
            child.kill()


def wait_for_marker(
    child: Child,
    marker: Path,
    *,
    exited: str = "exited before reaching the blocking point",
    missed: str = "did not reach the blocking point",
    show_output: bool = True,
) -> dict[str, Any]:
    """Wait (bounded) until the child says it is blocked; fail if it exits first.

    `exited` and `missed` word the failures (the child exited; `MARKER_TIMEOUT` passed).
    """
    deadline = time.monotonic() + MARKER_TIMEOUT
    while time.monotonic() < deadline:
        if marker.exists():
            return json.loads(marker.read_text())
        if child.proc.poll() is not None:
            pytest.fail(f"{child.label} {exited}\n{child.output()}")
        time.sleep(0.05)
    child.kill()
    shown = f"\n{child.output()}" if show_output else ""
    pytest.fail(f"{child.label} {missed} in {MARKER_TIMEOUT:g} s{shown}")


def kill_and_resume(
    script: Path,
    workdir: Path,
    common: list[str],
    block: list[str],
    *,
    while_blocked: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Run until the blocking point, SIGKILL, resume in a new process; return what happened.

    The run is `script *common --phase run *block`, the resume `script *common --phase
    resume`. `while_blocked` (more checks) is called once the run is blocked, before the
    kill. Returns the run's marker, the executions logged before the kill (`before`) and in
    all (`log`), the resumed process's summary line and both pids.
    """
    with Children(script, workdir) as children:
        first = children.start("run", [*common, "--phase", "run", *block])
        marker = wait_for_marker(first, workdir / MARKER_NAME)
        assert marker["pid"] == first.proc.pid
        if while_blocked is not None:
            while_blocked()
        first.sigkill()
        before = read_jsonl(workdir / LOG_NAME)

        second = children.start("resume", [*common, "--phase", "resume"])
        code = second.wait()
        assert code == 0, second.output()
        summary = second.summary()
    return {
        "marker": marker,
        "before": before,
        "log": read_jsonl(workdir / LOG_NAME),
        "summary": summary,
        "run_pid": first.proc.pid,
        "resume_pid": second.proc.pid,
    }


def head_and_history(graph: Any, uri: str, thread_id: str) -> tuple[Any, list[Any]]:
    """The thread's head snapshot and its root history (oldest first), read in this process."""
    with open_checkpointer(uri) as saver:
        app = graph.compile(checkpointer=saver)
        config: Any = {"configurable": {"thread_id": thread_id}}
        head = app.get_state(config)
        history = list(reversed(list(app.get_state_history(config))))
    return head, history

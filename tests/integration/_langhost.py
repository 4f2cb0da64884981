"""Test-side helpers: the stock LangGraph server on Postgres + Redis, run by `langhost`.

- `server_venv()` builds (once, then cached) a virtualenv holding the project's
  dependencies and its `server` extra (`langhost` + `langgraph-runtime-pg`, which pin
  `langgraph-api` 0.11.1, so they cannot share the dev venv and its newer `langgraph-api`).
  The cache is keyed by the Python version and the exact requirement strings of
  `pyproject.toml`; a build runs under a file lock and is marked complete only at the end.
  The package itself is not installed there: the servers import it from this checkout.
- `redis_database()` claims a Redis database number no other test is using.
- `LangServer` is one `langhost serve` process on a free loopback port, with its
  JSON log in a file; it can be killed (SIGKILL) or stopped. `fleet(...)` starts the
  processes of one deployment and stops whatever still runs at the end.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_ENV = "LGSP_SERVER_VENV"
"""An existing venv with the `server` extra's packages: used as is, nothing is built."""
CACHE_ENV = "LGSP_SERVER_VENV_CACHE"
"""Where the built venvs are kept (default `~/.cache/langgraph-supervisor-pro`)."""
REDIS_ENV = "LGSP_REDIS_URI"
"""The Redis server (default `redis://127.0.0.1:6379`)."""
INSTALL_TIMEOUT = 900.0
"""Seconds `pip install` gets to build the server venv (about 40 s with a warm pip cache)."""
START_TIMEOUT = 120.0
"""Seconds a server gets to import its graphs and answer /ok."""
_COMPLETE = "lgsp-complete"
_UNREACHABLE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name "
    r"resolution|Name or service not known|Network is unreachable|ConnectTimeoutError|"
    r"ReadTimeoutError|ProxyError|Connection refused",
)
"""What pip prints when it cannot reach the package index (a skip, not a failure)."""


def server_requirements() -> list[str]:
    """The project's dependencies and its `server` extra, as `pyproject.toml` states them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["server"]]


def _cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV, "").strip()
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "langgraph-supervisor-pro"


def server_venv() -> Path:
    """The `python` of a venv that runs `langhost`; built on first use, then cached.

    Skips the test when the venv cannot be built because the package index is
    unreachable; fails on any other install error (with pip's output).
    """
    configured = os.environ.get(VENV_ENV, "").strip()
    if configured:
        python = Path(configured) / "bin" / "python"
        if not python.exists():
            pytest.fail(f"{VENV_ENV}={configured}: no bin/python there")
        return python
    requirements = server_requirements()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    key = hashlib.sha256(json.dumps([version, requirements]).encode()).hexdigest()[:16]
    venv = _cache_root() / f"server-venv-py{version}-{key}"
    python = venv / "bin" / "python"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with (venv.parent / f"{venv.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test process may be building it
        if (venv / _COMPLETE).exists():
            return python
        subprocess.run(["rm", "-rf", str(venv)], check=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        started = time.monotonic()
        result = subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                *requirements,
            ],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
        )
        output = result.stdout + result.stderr
        if result.returncode != 0:
            subprocess.run(["rm", "-rf", str(venv)], check=False)
            if _UNREACHABLE.search(output):
                pytest.skip(
                    "the LangGraph server venv (the `server` extra: langhost, "
                    "langgraph-runtime-pg) cannot be built: the package index is unreachable"
                )
            pytest.fail(f"pip could not build the server venv:\n{output[-4000:]}")
        (venv / _COMPLETE).write_text(f"built in {time.monotonic() - started:.0f} s\n")
    return python


# -- Redis ------------------------------------------------------------------------------


def _redis_address() -> tuple[str, int]:
    uri = os.environ.get(REDIS_ENV, "").strip() or "redis://127.0.0.1:6379"
    match = re.fullmatch(r"redis://([^:/]+)(?::(\d+))?/?", uri)
    if match is None:
        raise ValueError(f"{REDIS_ENV}={uri!r}: expected redis://HOST[:PORT]")
    return match.group(1), int(match.group(2) or 6379)


def _redis(sock: socket.socket, *args: str) -> bytes:
    """Send one command (RESP), return the first line of its reply."""
    command = f"*{len(args)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in args)
    sock.sendall(command.encode())
    reply = b""
    while not reply.endswith(b"\r\n"):
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("Redis closed the connection")
        reply += chunk
    if reply.startswith(b"-"):
        raise RuntimeError(f"Redis {args[0]}: {reply.decode().strip()}")
    return reply.split(b"\r\n", 1)[0]


@contextlib.contextmanager
def redis_database() -> Iterator[str]:
    """The URI of a Redis database (1-15) no other test holds; emptied when released.

    A database is held by a claim key set with NX (and a TTL, in case the holder dies).
    """
    host, port = _redis_address()
    token = uuid.uuid4().hex
    try:
        sock = socket.create_connection((host, port), timeout=5)
    except OSError as exc:
        reason = (
            f"Redis is not reachable at {host}:{port} ({exc}); start it (`redis-server "
            f"--daemonize yes`) or set {REDIS_ENV}"
        )
        # CI (.ci/run starts Redis) must run these tests; a newcomer's machine skips them.
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with sock:
        for number in range(1, 16):
            _redis(sock, "SELECT", str(number))
            if _redis(sock, "SET", "lgsp:test-claim", token, "NX", "EX", "1800") == b"+OK":
                break
        else:
            pytest.fail("every Redis database 1-15 is claimed by another test")
        try:
            yield f"redis://{host}:{port}/{number}"
        finally:
            _redis(sock, "FLUSHDB")


# -- servers ----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LangServer:
    """One `langhost serve` process (the stock `langgraph-api`, edition pg) on loopback.

    Args:
        python: The server venv's `python` (`server_venv()`).
        project: The server's working directory (graph paths are relative to it).
        config: Its `langgraph.json`.
        log: Where its JSON log goes.
        env: `DATABASE_URI`, `REDIS_URI` and any other settings.
        jobs: Background runs it executes at once (`--n-jobs-per-worker`).
    """

    def __init__(
        self,
        python: Path,
        *,
        project: Path,
        config: Path,
        log: Path,
        env: Mapping[str, str],
        jobs: int = 3,
    ) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        paths = [
            str(ROOT),
            str(project),
            *filter(None, os.environ.get("PYTHONPATH", "").split(":")),
        ]
        full_env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(paths),
            "LOG_JSON": "true",
            "LANGGRAPH_NO_VERSION_CHECK": "true",
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGSMITH_TRACING": "false",
            "LANGCHAIN_TRACING_V2": "false",
            **env,
        }
        argv = [str(python), "-m", "langhost", "serve", "--host", "127.0.0.1"]
        argv += ["--port", str(self.port), "-c", str(config), "--n-jobs-per-worker", str(jobs)]
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                argv,
                cwd=project,
                env=full_env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.pid = self.proc.pid

    def wait_ready(self) -> LangServer:
        """Wait (bounded) until the server answers /ok."""
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"langhost exited ({self.proc.returncode}):\n{self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/ok", timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"langhost did not start:\n{self.tail()}")
            time.sleep(0.2)

    def tail(self) -> str:
        """The end of the server's log."""
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def events(self, name: str) -> list[dict[str, Any]]:
        """The server's JSON log records whose `event` is `name`."""
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            if line.startswith("{") and f'"{name}"' in line:
                with contextlib.suppress(ValueError):
                    record = json.loads(line)
                    if record.get("event") == name:
                        found.append(record)
        return found

    def run_ids(self) -> set[str]:
        """The ids of the background runs this process started (any attempt)."""
        return {str(r["run_id"]) for r in self.events("Starting background run")}

    def kill(self) -> None:
        """SIGKILL the server's process group and reap it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 30 s)."""
        if self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()


class Fleet:
    """Server processes of one deployment: same venv, project, config and settings.

    Args:
        python: The server venv's `python` (`server_venv()`).
        project: The servers' working directory.
        config: Their `langgraph.json`.
        logs: The folder their logs go to (`<label>.log`).
        env: `DATABASE_URI`, `REDIS_URI` and any other settings.
        jobs: Background runs each executes at once.
    """

    def __init__(
        self,
        python: Path,
        *,
        project: Path,
        config: Path,
        logs: Path,
        env: Mapping[str, str],
        jobs: int = 3,
    ) -> None:
        self._options: dict[str, Any] = {
            "project": project,
            "config": config,
            "env": env,
            "jobs": jobs,
        }
        self.python = python
        self.logs = logs
        self.started: list[LangServer] = []

    def start(self, label: str) -> LangServer:
        """Start one more process (not yet ready: call `wait_ready()`), logging to `<label>.log`."""
        server = LangServer(self.python, log=self.logs / f"{label}.log", **self._options)
        self.started.append(server)
        return server


@contextlib.contextmanager
def fleet(
    python: Path,
    *,
    project: Path,
    config: Path,
    logs: Path,
    env: Mapping[str, str],
    jobs: int = 3,
) -> Iterator[Fleet]:
    """A `Fleet`; every process it started and that still runs is stopped at the end."""
    servers = Fleet(python, project=project, config=config, logs=logs, env=env, jobs=jobs)
    try:
        yield servers
    finally:
        for server in servers.started:
            server.stop()

"""Test-side helper: a real `langgraph dev` server on a free loopback port.

`serve(config, log)` starts `langgraph dev` for a `langgraph.json` of
`tests/integration/_studio/` (or of another project: `serve(config, log, app=folder)`),
waits (bounded) until it answers `/ok`, yields its base URL, and stops its process group
afterwards.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

APP = Path(__file__).resolve().parent / "_studio"
ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 120.0
"""Seconds `langgraph dev` gets to import the graph and answer /ok."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cli() -> Path:
    cli = Path(sys.executable).parent / "langgraph"
    if not cli.exists():
        pytest.skip(
            "`langgraph` CLI not installed next to this Python; install the [dev] or "
            "[studio] extra (langgraph-cli[inmem])"
        )
    return cli


@contextlib.contextmanager
def serve(
    config: str, log: Path, *, app: Path = APP, env: dict[str, str] | None = None
) -> Iterator[str]:
    """The base URL of a `langgraph dev` server for `<app>/<config>`; stopped afterwards.

    `app` (default `_studio/`) is the server's working directory and on its `PYTHONPATH`,
    after this repository (so the package imports from the checkout); `env` is added to
    the server's environment.
    """
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [
                str(ROOT),
                str(app),
                *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)),
            ]
        ),
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        **(env or {}),
    }
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(_cli()),
                "dev",
                "--no-browser",
                "--no-reload",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--config",
                str(app / config),
            ],
            cwd=app,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"langgraph dev did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


@contextlib.contextmanager
def serve_template(template: str, root: Path) -> Iterator[str]:
    """A project `lgsp new TEMPLATE` writes under `root`, served by `langgraph dev`."""
    from typer.testing import CliRunner

    from langgraph_supervisor_pro.cli import app

    project = root / template
    result = CliRunner().invoke(app, ["new", template, str(project)])
    assert result.exit_code == 0, result.output
    with serve("langgraph.json", root / "server.log", app=project) as url:
        yield url


def client(url: str) -> Any:
    """A `langgraph_sdk` client of the server at `url`."""
    from langgraph_sdk import get_client

    return get_client(url=url)


async def assistant_id(sdk: Any, graph_id: str) -> str:
    """The id of the one assistant the server made for `graph_id`."""
    (assistant,) = await sdk.assistants.search(graph_id=graph_id)
    return str(assistant["assistant_id"])


def interrupts(thread: dict[str, Any]) -> list[dict[str, Any]]:
    """Every pending interrupt of a thread the server returned, at any depth."""
    return [i for group in (thread.get("interrupts") or {}).values() for i in group]

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
def serve(config: str, log: Path, *, app: Path = APP) -> Iterator[str]:
    """The base URL of a `langgraph dev` server for `<app>/<config>`; stopped afterwards.

    `app` (default `_studio/`) is the server's working directory and on its `PYTHONPATH`,
    after this repository (so the package imports from the checkout).
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

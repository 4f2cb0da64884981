"""Credentials on real Postgres and through a loopback LangSmith (issue 10).

Three ways a credential reaches a run: LangGraph's runtime context (never stored), a
`SecretStr` or a plain string in `config["configurable"]`, and `register_secret`. The
tests search every row of `checkpoints`, `checkpoint_blobs` and `checkpoint_writes` as
text and bytes, every run the real LangSmith client posts, the ledger and each prompt
the scripted supervisor model received.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import psycopg
import pytest
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.config import get_config
from langgraph.runtime import get_runtime
from langgraph.types import RetryPolicy
from langsmith import tracing_context
from pydantic import BaseModel, SecretStr

from langgraph_supervisor_pro import (
    Worker,
    WorkerTask,
    aopen_checkpointer,
    create_supervisor,
    open_checkpointer,
    register_secret,
)
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, routes
from tests._langsmith import CaptureServer, Run, metadata
from tests.test_supervisor import decisions

pytestmark = pytest.mark.integration

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
ONCE = RetryPolicy(max_attempts=1)


def _secret(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


class Context(BaseModel):
    """The runtime context of these runs: where credentials belong."""

    user_id: str
    crm_api_key: SecretStr
    billing_password: str = ""
    """A plain string, but under a secret-looking name: scrubbed too."""


def _stored(uri: str) -> dict[str, list[bytes]]:
    """Every cell of the checkpoint tables, as bytes (bytea as is, the rest as text)."""
    cells: dict[str, list[bytes]] = {}
    with psycopg.connect(uri) as conn:
        for table in TABLES:
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            assert rows, f"{table} is empty: the run wrote nothing to search"
            cells[table] = [_as_bytes(cell) for row in rows for cell in row]
    return cells


def _as_bytes(cell: Any) -> bytes:
    if isinstance(cell, bytes | memoryview):
        return bytes(cell)
    if isinstance(cell, dict | list):
        return json.dumps(cell, ensure_ascii=False).encode()
    return str(cell).encode()


def _tables_holding(uri: str, *values: str) -> dict[str, list[str]]:
    """Which tables hold which of `values` (empty when none does)."""
    found: dict[str, list[str]] = {}
    for table, cells in _stored(uri).items():
        held = [v for v in values if any(v.encode() in cell for cell in cells)]
        if held:
            found[table] = held
    return found


def _runs_holding(runs: dict[str, Run], *values: str) -> list[tuple[str, str]]:
    """(run name, field) of every posted run field that holds one of `values`."""
    return [
        (run["name"], field)
        for run in runs.values()
        for field, data in run.items()
        if any(v in json.dumps(data, default=str) for v in values)
    ]


def _run_traced(
    graph: Any,
    uri: str,
    server: CaptureServer,
    mode: str,
    config: dict[str, Any],
    *,
    keep: bool = False,
    **kw: Any,
) -> dict[str, Any]:
    """Run `graph` on Postgres (our openers), traced to the loopback LangSmith.

    `keep`: keep the agents' checkpoints after their hops (`keep_agent_checkpoints`).
    """

    async def arun() -> dict[str, Any]:
        async with aopen_checkpointer(uri, keep_agent_checkpoints=keep) as saver:
            app = graph.compile(checkpointer=saver)
            return await app.ainvoke(ask("Sync the CRM"), config, **kw)  # type: ignore[no-any-return]

    client = server.client()
    with tracing_context(enabled=True, client=client, project_name="lgsp-secrets"):
        if mode == "sync":
            with open_checkpointer(uri, keep_agent_checkpoints=keep) as saver:
                out = graph.compile(checkpointer=saver).invoke(ask("Sync the CRM"), config, **kw)
        else:
            out = asyncio.run(arun())
    client.flush()
    return out


# -- a worker's error holding a secret ----------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_worker_error_holding_secrets_is_scrubbed_everywhere(pg_database, langsmith_server, mode):
    registered = _secret("sk-registered")
    in_context = _secret("sk-context")
    in_config = _secret("sk-config")
    in_tool = _secret("sk-tool")
    secrets = (registered, in_context, in_config, in_tool)
    register_secret(registered)

    def crm(task: WorkerTask) -> str:
        raise RuntimeError(f"auth failed for key {registered} ({in_context}, {in_config})")

    @tool
    def fetch(account: str) -> str:
        """Fetch an account from the billing API."""
        raise RuntimeError(f"billing auth failed for key {in_tool}")

    agent_model = ScriptedChatModel(
        script=[
            AIMessage(
                content="", tool_calls=[{"name": "fetch", "args": {"account": "A1"}, "id": "c1"}]
            )
        ]
    )
    supervisor = ScriptedChatModel(script=decisions("crm", "billing", "FINISH"))
    graph = create_supervisor(
        [
            Worker(name="crm", description="Syncs the CRM.", agent=crm, retry=ONCE),
            Worker(
                name="billing",
                description="Reads billing.",
                model=agent_model,
                tools=[fetch],
                risks={"fetch": "low"},
                retry=ONCE,
            ),
        ],
        model=supervisor,
        context_schema=Context,
    )
    config = {
        "configurable": {"thread_id": str(uuid.uuid4()), "billing_token": SecretStr(in_config)},
    }
    # A dict is turned into the graph's `context_schema`.
    context = {"user_id": "u-1", "crm_api_key": in_context, "billing_password": in_tool}
    # The agents' checkpoints are kept, so that the agent's own saved task error is there
    # to check (by default it goes with the rest of the finished hop's agent checkpoints).
    out = _run_traced(
        graph, pg_database, langsmith_server, mode, config, keep=True, context=context
    )

    assert out["status"] == "done"
    ledger = [(e["worker"], e["status"], e["summary"], e["error"]) for e in out["ledger"]]
    assert ledger == [
        (
            "crm",
            "failed",
            "failed: RuntimeError: auth failed for key *** (***, ***)",
            "RuntimeError: auth failed for key *** (***, ***)",
        ),
        (
            "billing",
            "failed",
            "failed: RuntimeError: billing auth failed for key ***",
            "RuntimeError: billing auth failed for key ***",
        ),
    ]
    # The routing prompts after each failed hop show the scrubbed summaries.
    prompts = [json.dumps([m.content for m in call.messages]) for call in supervisor.calls]
    assert "auth failed for key ***" in prompts[1] and "billing auth" in prompts[2]
    assert [p for p in prompts if any(s in p for s in secrets)] == []
    # Nothing stored holds a secret; the agent's own task error is the stand-in.
    assert _tables_holding(pg_database, *secrets) == {}
    assert any(
        b"ScrubbedError" in cell and b"***" in cell
        for cell in _stored(pg_database)["checkpoint_writes"]
    )
    # Traces: only the tool's own run, which LangChain records before any code of ours
    # sees the exception, keeps its text (documented in the README).
    runs = langsmith_server.runs()
    assert runs
    assert _runs_holding(runs, registered, in_context, in_config) == []
    assert _runs_holding(runs, in_tool) == [("fetch", "error")]
    (function_run,) = [r for r in runs.values() if r["name"] == "crm.agent"]
    assert "auth failed for key *** (***, ***)" in function_run["error"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_environment_credential_is_scrubbed_without_registering(
    pg_database, langsmith_server, mode, monkeypatch
):
    # Issue 33: the most common case, a key held in the environment, needs no
    # `register_secret`: credential-named variables are secrets by default.
    from langgraph_supervisor_pro._internal.scrub import refresh_environment_secrets

    key = _secret("pk-live")
    monkeypatch.setenv("PAYMENTS_API_KEY", key)
    refresh_environment_secrets()
    try:

        def payments(task: WorkerTask) -> str:
            raise RuntimeError(f"payments API refused key {key}: 401")

        supervisor = ScriptedChatModel(script=decisions("payments", "FINISH"))
        graph = create_supervisor(
            [Worker(name="payments", description="Charges.", agent=payments, retry=ONCE)],
            model=supervisor,
        )
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        out = _run_traced(graph, pg_database, langsmith_server, mode, config)
    finally:
        monkeypatch.undo()
        refresh_environment_secrets()

    assert out["status"] == "done"
    (entry,) = out["ledger"]
    assert entry["error"] == "RuntimeError: payments API refused key ***: 401"
    assert key not in json.dumps(out, default=str)
    prompts = [json.dumps([m.content for m in call.messages]) for call in supervisor.calls]
    assert "refused key ***" in prompts[1]
    assert [p for p in prompts if key in p] == []
    assert _tables_holding(pg_database, key) == {}
    runs = langsmith_server.runs()
    assert runs and _runs_holding(runs, key) == []
    (function_run,) = [r for r in runs.values() if r["name"] == "payments.agent"]
    assert "refused key ***" in function_run["error"]


# -- credentials in the runtime context ---------------------------------------------------

READ: list[tuple[str, str]] = []


@tool
def lookup_account(account: str, runtime: ToolRuntime[Context]) -> str:
    """Look an account up in the CRM."""
    READ.append(("tool", runtime.context.crm_api_key.get_secret_value()))
    return f"account {account}: active"


def _reads_context(name: str) -> Worker:
    def work(task: WorkerTask) -> str:
        context = get_runtime(Context).context
        READ.append((name, context.crm_api_key.get_secret_value()))
        return f"{name} synced {context.user_id}"

    return Worker(name=name, description=f"The {name} worker.", agent=work)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_runtime_context_reaches_every_kind_of_worker_and_is_never_stored(
    pg_database, langsmith_server, mode
):
    READ.clear()
    key = _secret("sk-crm")
    domain = create_supervisor([_reads_context("leaf")], router=routes("leaf"), name="sales")
    agent_model = ScriptedChatModel(
        script=[
            AIMessage(
                content="",
                tool_calls=[{"name": "lookup_account", "args": {"account": "A1"}, "id": "c1"}],
            ),
            "Account A1 is active.",
        ]
    )
    graph = create_supervisor(
        [
            Worker(
                name="agent",
                description="Looks accounts up.",
                model=agent_model,
                tools=[lookup_account],
                risks={"lookup_account": "low"},
            ),
            _reads_context("function"),
            Worker(name="sales", description="The sales domain.", agent=domain),
        ],
        router=routes("agent", "function", "sales"),
        context_schema=Context,
    )
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    out = _run_traced(
        graph,
        pg_database,
        langsmith_server,
        mode,
        config,
        context={"user_id": "u-7", "crm_api_key": key},
    )

    assert out["status"] == "done"
    assert [e["status"] for e in out["ledger"]] == ["success"] * 3
    # A tool inside a worker's agent, a function worker and a domain's worker read it.
    assert [("tool", key), ("function", key), ("leaf", key)] == READ
    assert out["workers"]["function"]["results"][-1]["result"] == "function synced u-7"
    # LangGraph neither checkpoints nor traces the context.
    assert _tables_holding(pg_database, key) == {}
    runs = langsmith_server.runs()
    assert runs and _runs_holding(runs, key) == []


# -- credentials in `configurable` --------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_configurable_secrets_stay_out_of_checkpoint_metadata(pg_database, langsmith_server, mode):
    looks_secret = _secret("sk-openai")  # a plain str under a secret-looking key
    marked = _secret("sk-vendor")  # a SecretStr under any key
    registered = _secret("partner")  # a plain str under any key, registered
    register_secret(registered)
    seen: list[str] = []

    def work(task: WorkerTask) -> str:
        configurable = get_config()["configurable"]
        seen.extend([configurable["openai_api_key"], configurable["vendor"].get_secret_value()])
        return "ok"

    graph = create_supervisor([Worker(name="w", description="W.", agent=work)], router=routes("w"))
    config = {
        "configurable": {
            "thread_id": str(uuid.uuid4()),
            "openai_api_key": looks_secret,
            "vendor": SecretStr(marked),
            "partner": registered,
            "region": "eu-west-1",
        },
    }
    out = _run_traced(graph, pg_database, langsmith_server, mode, config)
    assert out["status"] == "done"
    assert seen == [looks_secret, marked]  # the worker reads them as given

    # No checkpoint row holds any of them; ordinary values are still copied.
    assert _tables_holding(pg_database, looks_secret, marked, registered) == {}
    with psycopg.connect(pg_database) as conn:
        rows = conn.execute("SELECT metadata FROM checkpoints").fetchall()
    assert rows and all(row[0].get("region") == "eu-west-1" for row in rows)
    assert all("openai_api_key" not in row[0] and "partner" not in row[0] for row in rows)

    runs = langsmith_server.runs()
    assert runs
    # A SecretStr is never traced; no metadata key of ours carries a configurable value.
    assert _runs_holding(runs, marked) == []
    for run in runs.values():
        ours = {k: v for k, v in metadata(run).items() if k.startswith("lgsp_")}
        assert not any(s in json.dumps(ours) for s in (looks_secret, registered)), ours
    # LangChain itself copies plain configurable strings into every run's metadata (all
    # but the key `api_key`): the README's reason to use the context or a SecretStr.
    assert all(metadata(run).get("region") == "eu-west-1" for run in runs.values())
    assert all(metadata(run).get("openai_api_key") == looks_secret for run in runs.values())

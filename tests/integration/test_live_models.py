"""Real models, only when a provider's key is set: the templates and the README's Quick start.

For each provider whose key is in the environment (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`)
and whose LangChain package is installed (`pip install langchain-openai` /
`pip install langchain-anthropic`), the `support_desk` template that `lgsp new` writes runs
with `LGSP_MODEL` naming a small model of that provider (`openai:gpt-4.1-mini`,
`anthropic:claude-haiku-4-5`; `LGSP_LIVE_OPENAI_MODEL` / `LGSP_LIVE_ANTHROPIC_MODEL` pick
another): a duplicate charge must reach the refund review, and the run must end `done`
after approval, with the refund made. The `research_team` template answers a research
question with a report whose citations are sources its researcher found and kept in the
store. The README's Quick start runs with the same model.
Without the key or the package each test is skipped, and says which.
"""

from __future__ import annotations

import importlib.util
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from langgraph_supervisor_pro.cli._templates import write_project
from tests.cli._project import load_graph_module

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

DUPLICATE = "I was charged twice for order A1001, please refund the duplicate"


@dataclass(frozen=True)
class Provider:
    name: str
    key: str
    package: str
    module: str
    model: str

    def model_name(self) -> str:
        return os.environ.get(f"LGSP_LIVE_{self.name.upper()}_MODEL", "").strip() or self.model


PROVIDERS = [
    Provider("openai", "OPENAI_API_KEY", "langchain-openai", "langchain_openai", "gpt-4.1-mini"),
    Provider(
        "anthropic",
        "ANTHROPIC_API_KEY",
        "langchain-anthropic",
        "langchain_anthropic",
        "claude-haiku-4-5",
    ),
]


def skip_reason(provider: Provider) -> str | None:
    """Why the live test of `provider` cannot run here, or None when it can."""
    if not os.environ.get(provider.key, "").strip():
        return f"{provider.key} is not set: the live {provider.name} test runs only with a key"
    if importlib.util.find_spec(provider.module) is None:
        return (
            f"{provider.key} is set but {provider.package} is not installed "
            f"(pip install {provider.package})"
        )
    return None


@pytest.fixture(params=PROVIDERS, ids=[p.name for p in PROVIDERS])
def live_model(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """`provider:model` of a provider whose key and package are here; skipped otherwise."""
    provider: Provider = request.param
    reason = skip_reason(provider)
    if reason is not None:
        pytest.skip(reason)
    # Live runs are not traced unless the caller asks for it explicitly.
    monkeypatch.setenv("LANGSMITH_TRACING", os.environ.get("LANGSMITH_TRACING", "false"))
    return f"{provider.name}:{provider.model_name()}"


def test_the_skip_reasons_name_the_variable_and_the_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    openai = PROVIDERS[0]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert skip_reason(openai) == (
        "OPENAI_API_KEY is not set: the live openai test runs only with a key"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    missing = Provider("openai", "OPENAI_API_KEY", "langchain-openai", "no_such_module_x", "m")
    assert skip_reason(missing) == (
        "OPENAI_API_KEY is set but langchain-openai is not installed (pip install langchain-openai)"
    )
    monkeypatch.setenv("LGSP_LIVE_OPENAI_MODEL", "gpt-x")
    assert openai.model_name() == "gpt-x"


def _refund_messages(out: dict[str, Any]) -> list[ToolMessage]:
    return [
        m
        for m in out["workers"]["billing"]["messages"]
        if isinstance(m, ToolMessage) and m.name == "refund"
    ]


def test_the_support_desk_reaches_the_refund_review_and_refunds_after_approval(
    live_model: str, tmp_path: Path
) -> None:
    project = tmp_path / "desk"
    write_project("support_desk", project)
    module = load_graph_module(project)
    graph = module.build_graph({"LGSP_MODEL": live_model, "LGSP_AUTONOMY": "supervised"})
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"live-{uuid.uuid4()}"}}

    out = app.invoke({"messages": [("user", DUPLICATE)]}, config)
    assert "__interrupt__" in out, (out.get("status"), out.get("ledger"))
    (pending,) = out["__interrupt__"]
    request = pending.value["action_requests"][0]
    assert request["name"] == "refund", request
    assert str(request["args"]["order_id"]).upper() == "A1001"
    assert float(request["args"]["amount"]) == 29.0
    assert pending.value["context"]["worker"] == "billing"

    # Approve it (and any further refund review a real model asks for, at most twice).
    for _ in range(3):
        out = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
        if "__interrupt__" not in out:
            break
        assert out["__interrupt__"][0].value["action_requests"][0]["name"] == "refund"
    assert "__interrupt__" not in out
    assert out["status"] == "done", (out["halt_reason"], out.get("halt_detail"))
    assert "billing" in [entry["worker"] for entry in out["ledger"]]
    assert any("refunded 29.00 on order A1001" in m.text for m in _refund_messages(out))
    assert out["reviews"][0]["decision"] == "approve"
    assert out["messages"][-1].text.strip()


def test_the_research_team_reports_with_sources_it_found(live_model: str, tmp_path: Path) -> None:
    project = tmp_path / "team"
    write_project("research_team", project)
    module = load_graph_module(project, "research_team")
    store = InMemoryStore()
    app = module.build_graph({"LGSP_MODEL": live_model}).compile(
        checkpointer=InMemorySaver(), store=store
    )
    thread = f"live-{uuid.uuid4()}"
    question = (
        "Should I replace my gas boiler with a heat pump? Compare running costs and "
        "emissions, and write a short report with sources."
    )
    out = app.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": thread}})
    assert out["status"] == "done", (out["halt_reason"], out.get("halt_detail"))
    assert "researcher" in [entry["worker"] for entry in out["ledger"]]
    kept = {item.key for item in store.search(module.sources_namespace(thread), limit=100)}
    assert kept, "the researcher kept no source in the store"
    report = out["messages"][-1].text
    assert report.strip()
    assert set(re.findall(r"\[([SD]\d+)\]", report)) <= kept, report


def test_the_quick_start_runs_with_a_real_model(
    live_model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_readme import run_quick_start

    monkeypatch.setenv("LGSP_MODEL", live_model)
    final = run_quick_start(tmp_path, monkeypatch)["final"]
    assert final["status"] == "done", (final["halt_reason"], final.get("halt_detail"))
    assert final["ledger"], "the supervisor finished without asking any worker"
    assert final["messages"][-1].text.strip()

"""The operations tree, offline: the rollback review inside a domain, approve, reject, tiers."""

from __future__ import annotations

import doctest
import uuid

import pytest
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from ops_tree import graph as ops
from ops_tree.graph import build_graph, model_for

INCIDENT = (
    "Checkout is returning 500s since the 14:02 deploy of payments v2.3.1: page on-call, "
    "roll back the deploy and post a status update"
)
APPROVE = {"decisions": [{"type": "approve"}]}


@pytest.fixture
def app():
    return build_graph({"LGSP_AUTONOMY": "supervised"}).compile(checkpointer=InMemorySaver())


def config(**configurable):
    return {"configurable": {"thread_id": str(uuid.uuid4()), **configurable}}


def ask(app, text, cfg):
    return app.invoke({"messages": [("user", text)]}, cfg)


def test_an_incident_report_reaches_the_rollback_review_inside_the_domain(app) -> None:
    cfg = config()
    out = ask(app, INCIDENT, cfg)
    (pending,) = out["__interrupt__"]
    # LangChain's human-in-the-loop payload ...
    (request,) = pending.value["action_requests"]
    assert request["name"] == "rollback"
    assert request["args"] == {"service": "payments", "to_version": "v2.3.0"}
    (review_config,) = pending.value["review_configs"]
    assert review_config["action_name"] == "rollback"
    assert set(review_config["allowed_decisions"]) == {"approve", "edit", "reject", "respond"}
    # ... with where it paused: two levels down, in the infrastructure domain.
    context = pending.value["context"]
    assert context["path"] == ["infrastructure", "deployer"]
    assert (context["worker"], context["risk"], context["tier"]) == (
        "deployer",
        "high",
        "supervised",
    )
    assert context["summary"].endswith("tool calls so far this hop: release_history")
    # The incident domain already ran: triage, then the page (low risk, no review).
    assert [(e["worker"], e["status"]) for e in out["ledger"]] == [("incident", "success")]
    assert out["ledger"][0]["summary"].startswith("SEV1 on checkout")


def test_get_state_with_subgraphs_shows_the_pending_review_at_depth(app) -> None:
    cfg = config()
    ask(app, INCIDENT, cfg)
    root = app.get_state(cfg, subgraphs=True)
    assert root.next == ("infrastructure",)
    infrastructure = root.tasks[0].state
    assert infrastructure.next == ("deployer",)
    assert infrastructure.values["status"] == "running"
    deployer = infrastructure.tasks[0].state
    assert deployer.next == ("tools",)
    (pending,) = deployer.interrupts
    assert pending.value["action_requests"][0]["name"] == "rollback"
    assert pending.value["context"]["path"] == ["infrastructure", "deployer"]
    # Each domain is also readable by its namespace: incident's own hops.
    incident = app.get_state({"configurable": {**cfg["configurable"], "checkpoint_ns": "incident"}})
    assert [e["worker"] for e in incident.values["ledger"]] == ["triage", "oncall"]


def test_approving_rolls_back_and_the_status_page_says_a_fix_is_in(app) -> None:
    cfg = config()
    ask(app, INCIDENT, cfg)
    out = app.invoke(Command(resume=APPROVE), cfg)
    assert out["status"] == "done"
    assert [(e["worker"], e["status"]) for e in out["ledger"]] == [
        ("incident", "success"),
        ("infrastructure", "success"),
        ("communications", "success"),
    ]
    incident, infrastructure, communications = out["messages"][-1].content.splitlines()
    assert incident.startswith("Incident: SEV1 on checkout")
    assert "Paged Priya Raman (payments on-call) at SEV1" in incident
    assert infrastructure.startswith("Infrastructure: Rolled back payments from v2.3.1 to v2.3.0.")
    assert communications.startswith("Communications: Posted to the status page (monitoring)")
    # The answer given two levels down is recorded at the root, with its path.
    (record,) = out["reviews"]
    assert (record["action"], record["path"], record["decision"]) == (
        "rollback",
        ["infrastructure", "deployer"],
        "approve",
    )


def test_rejecting_says_nothing_was_rolled_back(app) -> None:
    cfg = config()
    ask(app, INCIDENT, cfg)
    reject = {"decisions": [{"type": "reject", "message": "hold it, a fix is going out"}]}
    out = app.invoke(Command(resume=reject), cfg)
    assert out["status"] == "done"
    answer = out["messages"][-1].content
    assert "Rolled back" not in answer
    assert (
        "Infrastructure: The rollback of payments was not approved; nothing was rolled back. "
        "It still runs v2.3.1"
    ) in answer
    assert "The reviewer said: hold it, a fix is going out" in answer
    # The status page does not claim a fix.
    assert "Communications: Posted to the status page (identified)" in answer
    assert out["reviews"][0]["decision"] == "reject"


def test_an_edited_rollback_runs_with_the_reviewers_arguments(app) -> None:
    cfg = config()
    ask(app, INCIDENT, cfg)
    edit = {
        "type": "edit",
        "edited_action": {
            "name": "rollback",
            "args": {"service": "payments", "to_version": "v2.2.9"},
        },
    }
    out = app.invoke(Command(resume={"decisions": [edit]}), cfg)
    assert out["status"] == "done"
    assert "Rolled back payments from v2.3.1 to v2.2.9." in out["messages"][-1].content


def test_an_invalid_answer_leaves_the_same_review_pending(app) -> None:
    cfg = config()
    (first,) = ask(app, INCIDENT, cfg)["__interrupt__"]
    out = app.invoke(Command(resume="approve"), cfg)
    (again,) = out["__interrupt__"]
    assert again.id == first.id
    assert "invalid_answer" in again.value["context"]
    out = app.invoke(Command(resume=APPROVE), cfg)
    assert out["status"] == "done"


def test_one_compiled_graph_serves_many_runs(app) -> None:
    # The offline models decide from what they are shown, never from call order.
    for decision in ["approve", "reject", "approve", "reject"]:
        cfg = config()
        (pending,) = ask(app, INCIDENT, cfg)["__interrupt__"]
        assert pending.value["action_requests"][0]["name"] == "rollback"
        out = app.invoke(Command(resume={"decisions": [{"type": decision}]}), cfg)
        assert out["status"] == "done"
        rolled = "Rolled back payments" in out["messages"][-1].content
        assert rolled == (decision == "approve")


def test_a_second_turn_on_the_same_thread_reaches_the_review_again(app) -> None:
    cfg = config()
    ask(app, INCIDENT, cfg)
    app.invoke(Command(resume=APPROVE), cfg)
    out = ask(app, "Payments errors are back after the deploy: roll it back again", cfg)
    (pending,) = out["__interrupt__"]
    assert pending.value["context"]["path"] == ["infrastructure", "deployer"]
    assert pending.value["context"]["turn"] == 2
    out = app.invoke(Command(resume=APPROVE), cfg)
    assert out["status"] == "done"
    assert len(out["reviews"]) == 2


def test_an_autonomous_deployment_rolls_back_without_a_review() -> None:
    app = build_graph({"LGSP_AUTONOMY": "autonomous"}).compile(checkpointer=InMemorySaver())
    out = ask(app, INCIDENT, config())
    assert "__interrupt__" not in out
    assert "Rolled back payments from v2.3.1 to v2.3.0." in out["messages"][-1].content


def test_a_run_cannot_loosen_the_deployments_tier(app) -> None:
    out = ask(app, INCIDENT, config(autonomy="autonomous"))
    assert "__interrupt__" not in out
    assert out["status"] == "failed" and out["ledger"] == []
    assert "looser than the deployment's tier 'supervised'" in out["halt_detail"]


def test_a_manual_run_reviews_each_dispatch_first(app) -> None:
    out = ask(app, INCIDENT, config(autonomy="manual"))
    (pending,) = out["__interrupt__"]
    assert pending.value["context"]["kind"] == "dispatch"
    assert pending.value["action_requests"][0]["name"] == "dispatch:incident"


@pytest.mark.parametrize(
    ("text", "domains", "says"),
    [
        ("Is search throwing errors?", ["incident"], "SEV3 on search"),
        ("Which release of payments is deployed?", ["infrastructure"], "payments runs v2.3.1"),
        (
            "Post a status update: checkout is slow",
            ["communications"],
            "Posted to the status page (investigating)",
        ),
        # "the status page" is not a page to the on-call.
        ("Put a note on the status page about checkout", ["communications"], "checkout"),
    ],
)
def test_other_requests_go_only_to_the_domains_they_need(app, text, domains, says) -> None:
    out = ask(app, text, config())
    assert out["status"] == "done"
    assert [e["worker"] for e in out["ledger"]] == domains
    assert says in out["messages"][-1].content
    assert not out.get("reviews")


def test_models_come_from_lgsp_model_with_per_role_overrides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import langchain.chat_models

    asked: list[str] = []

    def fake_init_chat_model(name: str) -> BaseChatModel:
        asked.append(name)
        return ops._scripted(ops.triage_reply)

    monkeypatch.setattr(langchain.chat_models, "init_chat_model", fake_init_chat_model)
    assert model_for("deployer", {}) is None
    environ = {"LGSP_MODEL": "openai:gpt-4.1-mini", "LGSP_DEPLOYER_MODEL": " anthropic:x "}
    assert model_for("deployer", environ) is not None
    assert model_for("triage", environ) is not None
    assert asked == ["anthropic:x", "openai:gpt-4.1-mini"]
    asked.clear()
    build_graph(environ)
    assert sorted(asked) == sorted(["openai:gpt-4.1-mini"] * 7 + ["anthropic:x"])


def test_the_docstring_examples_run() -> None:
    result = doctest.testmod(ops, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 6 and result.failed == 0


def test_a_respond_answer_stands_in_for_the_rollback(app) -> None:
    cfg = config()
    ask(app, INCIDENT, cfg)
    respond = {"type": "respond", "message": "rolled back by hand from the console"}
    out = app.invoke(Command(resume={"decisions": [respond]}), cfg)
    assert (
        "The rollback was handled by a reviewer: rolled back by hand from the console"
        in out["messages"][-1].content
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("Something is down, page on-call", "Which service is affected?"),
        ("Roll back the search deploy", "There is no earlier release to roll back to."),
        ("Roll back the last deploy", "Which service's release is it about?"),
    ],
)
def test_what_the_offline_workers_cannot_do_they_say(app, text, says) -> None:
    out = ask(app, text, config())
    assert out["status"] == "done"
    assert says in out["messages"][-1].content
    assert "__interrupt__" not in out


def test_the_tools_report_what_they_do_not_know() -> None:
    assert "no such service" in ops.service_health.invoke({"service": "ledger"})
    assert "no such service" in ops.release_history.invoke({"service": "ledger"})
    page = {"team": "finance", "severity": "SEV2", "summary": "x"}
    assert ops.page_oncall.invoke(page) == "error: no on-call rota for team 'finance'"


def test_the_answers_name_failed_hops_and_fall_back_on_summaries() -> None:
    from langgraph_supervisor_pro import WorkerResult
    from langgraph_supervisor_pro.workers import HopOutput, SynthesisInput

    hops = [
        HopOutput(step=1, worker="incident", result=WorkerResult(status="failed", error="boom")),
        # A full output kept in a store the resuming process does not have: its summary.
        HopOutput(
            step=2,
            worker="communications",
            result=WorkerResult(status="success", summary="Posted an update."),
        ),
    ]
    inp = SynthesisInput(task="t", hops=hops, status="running")
    assert ops.tree_answer(inp) == "Incident: failed: boom\nCommunications: Posted an update."
    assert ops.domain_answer(inp) == "incident failed: boom Posted an update."

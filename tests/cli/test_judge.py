"""`lgsp judge list/resolve`: the online judge's queue in a SQLite store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

from langgraph_supervisor_pro import Worker, create_supervisor, open_store
from langgraph_supervisor_pro.cli import app
from langgraph_supervisor_pro.evals._judge import OnlineJudge
from langgraph_supervisor_pro.testing import FunctionChatModel
from tests._helpers import ask
from tests.cli._output import error_line

WIDE = {"COLUMNS": "200"}


def lgsp(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env={**WIDE, **(env or {})})


def verdict(call) -> dict[str, Any]:
    low = "late" in str(call.messages[-1].content).split("Answer:")[-1]
    return {"score": 0.25 if low else 0.9, "passed": not low, "reasons": ["the order is late"]}


def judged_store(tmp_path: Path) -> Path:
    path = tmp_path / "store.db"
    with open_store(f"sqlite:///{path}") as store:
        app_ = create_supervisor(
            [Worker(name="desk", description="Answers.", agent=lambda task: f"Re: {task.task}")],
            router=lambda view: "FINISH" if view.ledger else "desk",
            judge=OnlineJudge(model=FunctionChatModel(name="judge", reply=verdict), sample=1.0),
        ).compile(checkpointer=InMemorySaver(), store=store)
        for thread_id, task in {"o-1": "late order", "o-2": "on-time order"}.items():
            app_.invoke(ask(task), {"configurable": {"thread_id": thread_id}})
    return path


def test_list_shows_the_low_scores_and_resolve_acknowledges_one(tmp_path):
    store = judged_store(tmp_path)
    listed = lgsp("judge", "list", "--store", str(store))
    assert listed.exit_code == 0, listed.output
    assert "o-1:1" in listed.output and "0.25 < 0.50" in listed.output
    assert "late order" in listed.output and "the order is late" in listed.output
    assert "o-2:1" not in listed.output and "1 turn;" in listed.output

    resolved = lgsp(
        "judge", "resolve", "o-1:1", "--store", f"sqlite:///{store}", "--note", "Apologised.",
        env={"LGSP_REVIEWER": ""},
    )  # fmt: skip
    error_line(resolved, "--as: name who acknowledges")
    resolved = lgsp(
        "judge", "resolve", "o-1:1", "--store", str(store), "--note", "Apologised.",
        env={"LGSP_REVIEWER": "dana"},
    )  # fmt: skip
    assert resolved.exit_code == 0, resolved.output
    assert "Acknowledged o-1:1 (score 0.25 < 0.50) as dana." in resolved.output

    empty = lgsp("judge", "list", "--store", str(store))
    assert empty.exit_code == 0 and "No open low-scored turns in" in empty.output
    everything = lgsp("judge", "list", "--store", str(store), "--all", "--json")
    (item,) = json.loads(everything.output)
    assert (item["key"], item["review"], item["acknowledged_by"], item["note"]) == (
        "o-1:1",
        "acknowledged",
        "dana",
        "Apologised.",
    )
    table = lgsp("judge", "list", "--store", str(store), "--all")
    assert "acknowledged by dana: Apologised." in table.output

    again = lgsp("judge", "resolve", "o-1:1", "--store", str(store), "--as", "erin", "--json")
    error_line(again, "already acknowledged by dana")


def test_resolve_prints_json_and_unknown_keys_are_one_line_errors(tmp_path):
    store = judged_store(tmp_path)
    done = lgsp("judge", "resolve", "o-1:1", "--store", str(store), "--as", "fay", "--json")
    assert done.exit_code == 0 and json.loads(done.output)["acknowledged_by"] == "fay"
    error_line(
        lgsp("judge", "resolve", "o-2:1", "--store", str(store), "--as", "fay"),
        "no queued judgement 'o-2:1'",
    )
    error_line(
        lgsp("judge", "list", "--store", str(tmp_path / "missing.db")),
        "no store database at",
    )
    error_line(lgsp("judge", "list", "--store", "memory"), "fresh, empty in-process database")
    assert lgsp("judge", "list", "--store", str(store), "--json").output.strip() == "[]"


def test_a_store_that_is_not_a_store_is_a_one_line_error(tmp_path):
    bogus = tmp_path / "not-a-store.db"
    bogus.write_bytes(b"this is not sqlite at all" * 100)
    error_line(lgsp("judge", "list", "--store", str(bogus)), "cannot open the store")


def test_lgsp_audit_shows_the_judges_verdict(tmp_path):
    from langgraph_supervisor_pro import open_checkpointer

    db, memory = tmp_path / "runs.db", tmp_path / "store.db"
    with open_checkpointer(f"sqlite:///{db}") as saver, open_store(f"sqlite:///{memory}") as st:
        create_supervisor(
            [Worker(name="desk", description="Answers.", agent=lambda task: f"Re: {task.task}")],
            router=lambda view: "FINISH" if view.ledger else "desk",
            judge=OnlineJudge(model=FunctionChatModel(name="judge", reply=verdict), sample=1.0),
        ).compile(checkpointer=saver, store=st).invoke(
            ask("late order"), {"configurable": {"thread_id": "o-9"}}
        )
    shown = lgsp("audit", "--db", str(db), "--thread", "o-9")
    assert shown.exit_code == 0, shown.output
    assert "judgement" in shown.output
    assert "functionchatmodel/judge scored the answer 0.25 (below 0.50, queued for" in shown.output
    (event,) = [
        e
        for e in json.loads(lgsp("audit", "--db", str(db), "--thread", "o-9", "--json").output)[
            "events"
        ]
        if e["kind"] == "judgement"
    ]
    assert (event["key"], event["queued"], event["score"]) == ("o-9:1", True, 0.25)

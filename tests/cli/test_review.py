"""`lgsp review`: list, approve, reject, edit, respond and sweep, through typer's CliRunner.

Each test writes a small graph module to `tmp_path` (a billing team whose `refund`
tool is high risk and appends each execution to a log file), runs it on a SQLite (or
Postgres) database until it pauses at the refund's review, and then drives the CLI.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from typer.testing import CliRunner

from langgraph_supervisor_pro import open_checkpointer
from langgraph_supervisor_pro.cli import app

WIDE = {"COLUMNS": "220"}  # rich reads the width from COLUMNS when not on a terminal
TASK = "Refund order O-7: it arrived broken"

APP = '''\
"""A billing team for the `lgsp review` tests."""

import json
from pathlib import Path

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from langgraph_supervisor_pro import ReviewPolicy, Worker, create_supervisor
from langgraph_supervisor_pro.testing import ScriptedChatModel

LOG = Path({log!r})
POLICY = ReviewPolicy(tier="supervised", review_timeout={timeout!r}, reviewers="support",
                      on_timeout={on_timeout!r}, escalate_to={escalate_to!r},
                      members={members!r})


@tool
def refund(order_id: str, amount: int) -> str:
    """Refund an order."""
    with LOG.open("a") as log:
        log.write(json.dumps({{"order_id": order_id, "amount": amount}}) + "\\n")
    return f"refunded {{amount}} on {{order_id}}"


def step(call):
    last = call.messages[-1]
    if isinstance(last, ToolMessage):
        return f"Done: {{last.content}}"
    args = {{"order_id": "O-7", "amount": 30}}
    return AIMessage(content="", tool_calls=[{{"name": "refund", "args": args, "id": "call_1"}}])


def router(view):
    return "billing" if not view.ledger else "FINISH"


def build():
    model = ScriptedChatModel(script=[step] * 20)
    worker = Worker(name="billing", description="Handles refunds.", model=model,
                    tools=[refund], risks={{"refund": "high"}})
    return create_supervisor([worker], router=router, review=POLICY)


graph = build()
compiled = build().compile()
not_a_graph = 42


def broken():
    raise RuntimeError("no model configured")


def wrong():
    return 42
'''


class Setup:
    """A graph module in tmp_path, its database, and a thread paused at the refund review."""

    def __init__(self, tmp_path: Path, db_url: str | None = None, **policy: Any) -> None:
        self.tmp_path = tmp_path
        self.log = tmp_path / "refunds.jsonl"
        name = f"reviewapp_{uuid.uuid4().hex[:8]}"
        self.module_name = name
        self.file = tmp_path / f"{name}.py"
        self.file.write_text(
            APP.format(
                log=str(self.log),
                timeout=policy.get("timeout", 3600),
                on_timeout=policy.get("on_timeout", "reject"),
                escalate_to=policy.get("escalate_to"),
                members=policy.get("members", {}),
            )
        )
        self.db_file = tmp_path / "runs.db"
        self.db = db_url or str(self.db_file)
        self.url = db_url or f"sqlite:///{self.db_file}"
        self.spec = f"{self.file}:graph"

    def module(self) -> Any:
        spec = importlib.util.spec_from_file_location(f"{self.module_name}_test", self.file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def pause(self, thread: str = "t1") -> dict[str, Any]:
        with open_checkpointer(self.url) as saver:
            graph = self.module().build().compile(checkpointer=saver)
            out = graph.invoke(
                {"messages": [("user", TASK)]}, {"configurable": {"thread_id": thread}}
            )
        assert out["__interrupt__"]
        return out

    def state(self, thread: str = "t1") -> Any:
        with open_checkpointer(self.url) as saver:
            graph = self.module().build().compile(checkpointer=saver)
            return graph.get_state({"configurable": {"thread_id": thread}})

    def refunds(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


CLEAN: dict[str, str | None] = {"LGSP_REVIEWER": None, "LGSP_POLICY_FILE": None}
"""The deployment's settings the review commands read, unset unless a test sets them."""


def lgsp(*args: str, env: dict[str, str | None] | None = None):
    return CliRunner().invoke(app, list(args), env={**WIDE, **CLEAN, **(env or {})})


def flat(text: str) -> str:
    return " ".join(text.split())


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result.output


def fails(result, code: int, *needles: str) -> str:
    out = flat(result.output)
    assert result.exit_code == code, result.output
    assert "Traceback" not in out
    for needle in needles:
        assert flat(needle) in out, f"{needle!r} not in {out!r}"
    return out


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


# ----------------------------------------------------------------------- list


def test_list_shows_the_pending_review_with_its_context(setup):
    setup.pause("t1")
    out = flat(ok(lgsp("review", "list", "--db", setup.db)))
    for needle in (
        f"Pending reviews in {setup.db}",
        "t1",
        "tool: refund",
        '{"amount": 30, "order_id": "O-7"}',
        "billing",
        "high",
        "support",
        TASK,
        "high-risk tool in the supervised tier",
        "1 pending review. Answer one with: lgsp review approve|reject|edit|respond",
    ):
        assert needle in out, needle
    assert "expired" not in out


def test_list_shows_why_the_last_answer_was_refused(setup):
    from langgraph.types import Command

    setup.pause("t1")
    with open_checkpointer(setup.url) as saver:
        graph = setup.module().build().compile(checkpointer=saver)
        graph.invoke(Command(resume="approve"), {"configurable": {"thread_id": "t1"}})
    out = flat(ok(lgsp("review", "list", "--db", setup.db)))
    assert "last answer refused: Input should be a valid dictionary" in out
    (review,) = json.loads(ok(lgsp("review", "list", "--db", setup.db, "--json")))
    assert review["invalid_answer"].startswith("Input should be a valid dictionary")
    assert review["context"]["invalid_answer"] == review["invalid_answer"]


def test_list_json_is_machine_readable(setup):
    setup.pause("t1")
    setup.pause("t2")
    result = lgsp("review", "list", "--db", f"sqlite:///{setup.db_file}", "--json")
    reviews = json.loads(ok(result))
    assert [r["thread_id"] for r in reviews] == ["t1", "t2"]
    first = reviews[0]
    assert (first["kind"], first["action"], first["args"]) == (
        "tool",
        "refund",
        {"order_id": "O-7", "amount": 30},
    )
    assert (first["worker"], first["risk"], first["reviewers"]) == ("billing", "high", "support")
    assert first["expired"] is False and first["deadline"].endswith("+00:00")
    assert first["task"] == TASK and first["context"]["summary"].startswith("Hop 1")
    assert len(first["interrupt_id"]) == 32
    only = json.loads(ok(lgsp("review", "list", "--db", setup.db, "--json", "--thread", "t2")))
    assert [r["thread_id"] for r in only] == ["t2"]


def test_expired_reviews_are_marked_in_red(tmp_path):
    setup = Setup(tmp_path, timeout=0.001)
    setup.pause("late")
    plain = flat(ok(lgsp("review", "list", "--db", setup.db)))
    assert "(expired)" in plain and "1 past the deadline" in plain
    coloured = ok(lgsp("review", "list", "--db", setup.db, env={"FORCE_COLOR": "1"}))
    assert "\x1b[1;31m" in coloured  # bold red
    expired = json.loads(ok(lgsp("review", "list", "--db", setup.db, "--expired", "--json")))
    assert [r["expired"] for r in expired] == [True]


def test_list_with_nothing_pending(setup):
    setup.pause("t1")
    assert "No pending reviews past their deadline" in ok(
        lgsp("review", "list", "--db", setup.db, "--expired")
    )
    ok(lgsp("review", "approve", "--db", setup.db, "--graph", setup.spec, "--thread", "t1"))
    assert f"No pending reviews in {setup.db}." in ok(lgsp("review", "list", "--db", setup.db))
    assert json.loads(ok(lgsp("review", "list", "--db", setup.db, "--json"))) == []


# ----------------------------------------------------------------------- decisions


def test_approve_resumes_the_run_to_its_end(setup):
    setup.pause("t1")
    result = lgsp("review", "approve", "--db", setup.db, "--graph", setup.spec, "--thread", "t1")
    out = flat(ok(result))
    assert "Approved review" in out and "(tool refund by billing) on thread t1." in out
    assert "Run status: done." in out
    assert "Answer: Done: refunded 30 on O-7" in out
    assert setup.refunds() == [{"order_id": "O-7", "amount": 30}]
    assert setup.state("t1").values["status"] == "done"


def test_reject_sends_the_message_to_the_worker(setup):
    setup.pause("t1")
    result = lgsp(
        "review", "reject", "--db", setup.db, "--graph", setup.spec, "--thread", "t1",
        "--message", "Refunds need a manager.",
    )  # fmt: skip
    out = flat(ok(result))
    assert "Rejected review" in out and "Run status: done." in out
    assert setup.refunds() == []
    messages = setup.state("t1").values["workers"]["billing"]["messages"]
    tool_messages = [m.content for m in messages if isinstance(m, ToolMessage)]
    assert tool_messages == ["The reviewer rejected this call: Refunds need a manager."]


def test_edit_runs_the_tool_with_the_new_arguments(setup):
    setup.pause("t1")
    out = ok(
        lgsp(
            "review", "edit", "--db", setup.db, "--graph", setup.spec, "--thread", "t1",
            "--args", '{"order_id": "O-7", "amount": 20}',
        )
    )  # fmt: skip
    assert "Answer: Done: refunded 20 on O-7" in flat(out)
    assert setup.refunds() == [{"order_id": "O-7", "amount": 20}]


def test_respond_stands_in_for_the_result_and_json_reports_the_outcome(setup):
    setup.pause("t1")
    result = lgsp(
        "review", "respond", "--db", setup.db, "--graph", setup.spec, "--thread", "t1",
        "--message", "Refunded by phone.", "--json",
    )  # fmt: skip
    report = json.loads(ok(result))
    assert report["decision"] == "answered" and report["status"] == "done"
    assert report["answer"] == "Done: Refunded by phone." and report["pending"] == []
    assert setup.refunds() == []


def test_the_review_id_or_a_prefix_selects_the_review(setup):
    setup.pause("t1")
    (review,) = json.loads(ok(lgsp("review", "list", "--db", setup.db, "--json")))
    fails(
        lgsp(
            "review", "approve", "--db", setup.db, "--graph", setup.spec, "--thread", "t1",
            "--id", "ffffffff",
        ),
        2,
        "thread 't1' has no pending review 'ffffffff'",
        review["interrupt_id"],
    )  # fmt: skip
    ok(
        lgsp(
            "review", "approve", "--db", setup.db, "--graph", setup.spec, "--thread", "t1",
            "--id", review["interrupt_id"][:8],
        )
    )  # fmt: skip
    assert len(setup.refunds()) == 1


@pytest.mark.parametrize("attr", ["graph", "build"])
def test_a_module_spec_from_the_working_directory(setup, monkeypatch, attr):
    setup.pause("t1")
    monkeypatch.chdir(setup.tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    spec = f"{setup.module_name}:{attr}"
    ok(lgsp("review", "approve", "--db", setup.db, "--graph", spec, "--thread", "t1"))
    assert len(setup.refunds()) == 1
    sys.modules.pop(setup.module_name, None)


# ----------------------------------------------------------------------- sweep


def test_sweep_rejects_expired_reviews(setup):
    setup.pause("t1")
    out = flat(ok(lgsp("review", "sweep", "--db", setup.db, "--graph", setup.spec)))
    assert "Swept 0 expired reviews" in out
    out = flat(
        ok(
            lgsp(
                "review", "sweep", "--db", setup.db, "--graph", setup.spec,
                "--now", "2100-01-01T00:00:00+00:00",
            )
        )
    )  # fmt: skip
    assert "t1 refund: review deadline passed at" in out and "; rejected by the sweep" in out
    assert "Swept 1 expired review: 1 rejected, 0 escalated, 0 failed." in out
    assert setup.refunds() == []
    assert setup.state("t1").values["status"] == "done"


def test_sweep_escalates_then_rejects(tmp_path):
    setup = Setup(tmp_path, on_timeout="escalate", escalate_to="leads")
    setup.pause("t1")
    sweep = ["review", "sweep", "--db", setup.db, "--graph", setup.spec]
    report = json.loads(ok(lgsp(*sweep, "--now", "2100-01-01T00:00:00", "--json")))
    assert [(a["action"], a["to"], a["reviewers"]) for a in report] == [
        ("escalate", "leads", "support")
    ]
    listing = flat(ok(lgsp("review", "list", "--db", setup.db)))
    assert "leads (escalated x1)" in listing
    out = flat(ok(lgsp(*sweep, "--now", "2100-01-01T00:00:00")))
    assert "rejected by the sweep" in out and "1 rejected, 0 escalated" in out
    assert setup.refunds() == []


# ----------------------------------------------------------------------- who answers

MEMBERS = {"support": ["alice", "bob"]}


def checkpoint_id(setup: Setup, thread: str = "t1") -> str:
    return str(setup.state(thread).config["configurable"]["checkpoint_id"])


def test_the_reviewer_is_recorded_with_the_answer(setup):
    setup.pause("t1")
    base = ["review", "approve", "--db", setup.db, "--graph", setup.spec, "--thread", "t1"]
    out = flat(ok(lgsp(*base, "--as", "alice")))
    assert "on thread t1 as alice." in out and "Run status: done." in out
    (record,) = setup.state("t1").values["reviews"]
    assert (record["reviewer"], record["decision"], record["action"]) == (
        "alice",
        "approve",
        "refund",
    )
    assert datetime.fromisoformat(record["answered_at"]).utcoffset() == timedelta(0)


def test_the_reviewer_comes_from_lgsp_reviewer_unless_as_says_otherwise(setup):
    setup.pause("t1")
    setup.pause("t2")
    base = ["review", "reject", "--db", setup.db, "--graph", setup.spec, "--json"]
    report = json.loads(ok(lgsp(*base, "--thread", "t1", env={"LGSP_REVIEWER": "bob"})))
    assert report["reviewer"] == "bob"
    report = json.loads(
        ok(lgsp(*base, "--thread", "t2", "--as", "alice", env={"LGSP_REVIEWER": "bob"}))
    )
    assert report["reviewer"] == "alice"
    assert [setup.state(t).values["reviews"][0]["reviewer"] for t in ("t1", "t2")] == [
        "bob",
        "alice",
    ]


@pytest.mark.parametrize(
    ("who", "says"),
    [
        ("lgsp:sweep", "--as (or LGSP_REVIEWER): 'lgsp:sweep' starts with 'lgsp:'"),
        ("  ", "--as (or LGSP_REVIEWER): got '  '; give the identity of who answers"),
    ],
)
def test_a_bad_reviewer_is_a_usage_error(setup, who, says):
    setup.pause("t1")
    before = checkpoint_id(setup)
    result = lgsp(
        "review", "approve", "--db", setup.db, "--graph", setup.spec, "--thread", "t1",
        "--as", who,
    )  # fmt: skip
    fails(result, 2, "Error:", says)
    assert checkpoint_id(setup) == before and setup.refunds() == []


def _policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text('reviewers = "support"\n[members]\nsupport = ["alice", "bob"]\n')
    return path


@pytest.mark.parametrize("how", ["--policy", "LGSP_POLICY_FILE"])
def test_a_reviewer_the_policy_file_refuses_is_refused_before_the_run_is_touched(setup, how):
    setup.pause("t1")  # the graph's own policy has no rule: only the file's applies
    before = checkpoint_id(setup)
    policy = _policy_file(setup.tmp_path)
    base = ["review", "approve", "--db", setup.db, "--graph", setup.spec, "--thread", "t1"]
    options, env = (
        (["--policy", str(policy)], {}) if how == "--policy" else ([], {how: str(policy)})
    )
    result = lgsp(*base, *options, "--as", "mallory", env=env)
    out = fails(
        result,
        2,
        "Error: 'mallory' may not answer review",
        "not a member of the reviewer group 'support' (the run was not changed)",
    )
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "Traceback" not in out
    assert checkpoint_id(setup) == before and setup.refunds() == []
    assert setup.state("t1").values.get("reviews", []) == []
    ok(lgsp(*base, *options, "--as", "bob", env=env))
    assert setup.refunds() == [{"order_id": "O-7", "amount": 30}]


def test_the_graphs_own_policy_refuses_without_a_policy_file(tmp_path):
    setup = Setup(tmp_path, members=MEMBERS)
    setup.pause("t1")
    before = checkpoint_id(setup)
    base = ["review", "approve", "--db", setup.db, "--graph", setup.spec, "--thread", "t1"]
    for extra in (["--as", "mallory"], []):
        result = lgsp(*base, *extra)
        fails(result, 2, "Error:", "the run is paused on the same review")
        assert len(result.output.strip().splitlines()) == 1, result.output
    assert checkpoint_id(setup) == before and setup.refunds() == []
    (review,) = json.loads(ok(lgsp("review", "list", "--db", setup.db, "--json")))
    assert "names no reviewer" in review["invalid_answer"]
    ok(lgsp(*base, "--as", "alice"))
    assert setup.refunds() == [{"order_id": "O-7", "amount": 30}]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("tier = 'fast'\n", "--policy: policy file"),
        ("[members]\nsupport = 'alice'\n", "key 'members'['support']"),
    ],
)
def test_a_bad_policy_file_is_a_usage_error(setup, content, says):
    setup.pause("t1")
    bad = setup.tmp_path / "bad.toml"
    bad.write_text(content)
    base = ["review", "approve", "--db", setup.db, "--graph", setup.spec, "--thread", "t1"]
    fails(lgsp(*base, "--policy", str(bad), "--as", "alice"), 2, "Error:", says)
    fails(lgsp(*base, "--policy", str(setup.tmp_path / "none.toml")), 2, "--policy:")
    assert setup.refunds() == []


def test_the_sweep_answers_as_itself(tmp_path):
    setup = Setup(tmp_path, members=MEMBERS)
    setup.pause("t1")
    ok(
        lgsp(
            "review", "sweep", "--db", setup.db, "--graph", setup.spec,
            "--now", "2100-01-01T00:00:00+00:00",
        )
    )  # fmt: skip
    (record,) = setup.state("t1").values["reviews"]
    assert (record["reviewer"], record["answered_at"], record["decision"]) == (
        "lgsp:sweep",
        "2100-01-01T00:00:00+00:00",
        "reject",
    )


# ----------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("no-colon", "--graph: expected path/to/file.py:ATTR or package.module:ATTR"),
        ("{dir}/missing.py:graph", "--graph: no such file"),
        ("no_such_module_x1:graph", "--graph: no module named 'no_such_module_x1'"),
        (
            "{file}:nope",
            "has no attribute 'nope'; it has StateGraphs: graph; functions: broken, build,",
        ),
        ("{file}:compiled", "is a compiled graph; name the uncompiled StateGraph"),
        ("{file}:not_a_graph", "is a int; name an uncompiled StateGraph"),
        ("{file}:broken", "calling it failed: RuntimeError: no model configured"),
        ("{file}:wrong", "returned a int; it must return an uncompiled StateGraph"),
        ("{bad}:graph", "failed: ZeroDivisionError: division by zero"),
    ],
)
def test_bad_graph_specs_are_usage_errors(setup, spec, says):
    setup.pause("t1")
    bad = setup.tmp_path / "bad_app.py"
    bad.write_text("x = 1 / 0\n")
    spec = spec.format(dir=setup.tmp_path, file=setup.file, bad=bad)
    result = lgsp("review", "approve", "--db", setup.db, "--graph", spec, "--thread", "t1")
    fails(result, 2, "Error:", says)
    assert setup.refunds() == []


def test_missing_threads_and_finished_runs_are_errors(setup):
    setup.pause("t1")
    base = ["review", "approve", "--db", setup.db, "--graph", setup.spec]
    fails(lgsp(*base, "--thread", "nope"), 2, "Error: thread 'nope' has no checkpoints")
    ok(lgsp(*base, "--thread", "t1"))
    fails(
        lgsp(*base, "--thread", "t1"),
        2,
        "Error: thread 't1' has no pending review (status 'done')",
    )


def test_invalid_decisions_are_refused_and_the_run_is_untouched(setup):
    setup.pause("t1")
    before = setup.state("t1")
    base = ["review", "edit", "--db", setup.db, "--graph", setup.spec, "--thread", "t1"]
    fails(
        lgsp(*base, "--args", "{}", "--action", "wipe_database"),
        2,
        "an edit may change the arguments, not the tool",
        "(the run was not changed)",
    )
    fails(lgsp(*base, "--args", "not json"), 2, "--args: not valid JSON")
    fails(lgsp(*base, "--args", "[1, 2]"), 2, "--args: got a JSON list")
    missing = lgsp("review", "respond", "--db", setup.db, "--graph", setup.spec, "--thread", "t1")
    fails(missing, 2, "Missing option '--message'")
    after = setup.state("t1")
    assert (
        after.config["configurable"]["checkpoint_id"]
        == (before.config["configurable"]["checkpoint_id"])
    )
    assert [i.id for i in after.interrupts] == [i.id for i in before.interrupts]
    assert setup.refunds() == []


@pytest.mark.parametrize(
    ("db", "code", "says"),
    [
        ("{dir}/missing.db", 2, "no checkpoint database at"),
        ("sqlite:///{dir}/missing.db", 2, "no checkpoint database at"),
        ("{dir}", 2, "is a directory"),
        ("{dir}/notes.txt", 2, "cannot open the checkpoint database"),
        ("memory", 2, "--db memory is a fresh, empty in-process database"),
        ("mysql://x@y/z", 2, "unsupported scheme 'mysql'"),
        ("", 2, "--db must not be empty"),
    ],
)
def test_bad_databases_are_clear_errors(tmp_path, db, code, says):
    (tmp_path / "notes.txt").write_text("not a database " * 100)
    result = lgsp("review", "list", "--db", db.format(dir=tmp_path))
    fails(result, code, "Error:", says)
    assert not (tmp_path / "missing.db").exists()


def test_bad_now_is_a_usage_error(setup):
    result = lgsp("review", "sweep", "--db", setup.db, "--graph", setup.spec, "--now", "soon")
    fails(result, 2, "--now: 'soon' is not an ISO-8601 time")


def test_help_lists_the_review_commands():
    top = ok(lgsp("--help"))
    assert "demo" in top and "review" in top
    sub = flat(ok(lgsp("review", "--help")))
    for command in ("list", "approve", "reject", "edit", "respond", "sweep"):
        assert command in sub
    approve_help = flat(ok(lgsp("review", "approve", "--help")))
    for option in ("--db", "--graph", "--thread", "--id", "--as", "--policy", "--json"):
        assert option in approve_help
    assert "LGSP_REVIEWER" in approve_help


# ----------------------------------------------------------------------- Postgres


def test_the_review_commands_on_postgres(tmp_path, pg_database):
    setup = Setup(tmp_path, db_url=pg_database)
    setup.pause("pg-1")
    setup.pause("pg-2")
    listing = json.loads(ok(lgsp("review", "list", "--db", pg_database, "--json")))
    assert sorted(r["thread_id"] for r in listing) == ["pg-1", "pg-2"]
    base = ["--db", pg_database, "--graph", setup.spec]
    ok(lgsp("review", "approve", *base, "--thread", "pg-1"))
    ok(lgsp("review", "reject", *base, "--thread", "pg-2", "--message", "no"))
    assert setup.refunds() == [{"order_id": "O-7", "amount": 30}]
    assert json.loads(ok(lgsp("review", "list", "--db", pg_database, "--json"))) == []
    assert setup.state("pg-1").values["status"] == setup.state("pg-2").values["status"] == "done"


# ----------------------------------------------------------------------- --store

STORE_APP = '''\
"""A team whose answer is written from every hop's full result (kept in the store)."""

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from langgraph_supervisor_pro import ReviewPolicy, Worker, create_supervisor
from langgraph_supervisor_pro.testing import FunctionChatModel


def notes(task):
    return {"status": "success", "result": {"note": "customer-since-2019"}, "summary": "noted"}


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


def step(call):
    if isinstance(call.messages[-1], ToolMessage):
        return "Done"
    return AIMessage(content="", tool_calls=[{"name": "refund", "args": {"order_id": "O-7"},
                                               "id": "call_1"}])


def router(view):
    return ["notes", "billing", "FINISH"][min(len(view.ledger), 2)]


def answer(inp):
    return " + ".join(hop.result.result_text() or "(missing)" for hop in inp.hops)


def build():
    return create_supervisor(
        [
            Worker(name="notes", description="Keeps notes.", agent=notes),
            Worker(name="billing", description="Refunds.", model=FunctionChatModel(reply=step),
                   tools=[refund], risks={"refund": "high"}),
        ],
        router=router,
        synthesizer=answer,
        review=ReviewPolicy(tier="supervised"),
    )


graph = build()
'''


@pytest.mark.parametrize("give_store", [True, False])
def test_approve_compiles_with_the_store_the_run_used(tmp_path, give_store):
    from langgraph_supervisor_pro import open_store

    module_file = tmp_path / f"storeapp_{uuid.uuid4().hex[:8]}.py"
    module_file.write_text(STORE_APP)
    spec = importlib.util.spec_from_file_location(module_file.stem, module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    db, store_db = tmp_path / "runs.db", tmp_path / "store.db"
    config = {"configurable": {"thread_id": "t1"}}
    with open_checkpointer(f"sqlite:///{db}") as saver, open_store(f"sqlite:///{store_db}") as st:
        out = (
            module.build()
            .compile(checkpointer=saver, store=st)
            .invoke({"messages": [("user", TASK)]}, config)
        )
    assert out["__interrupt__"]
    store_args = ["--store", str(store_db)] if give_store else []
    args = ["review", "approve", "--db", str(db), "--graph", f"{module_file}:graph", *store_args]
    out = flat(ok(lgsp(*args, "--thread", "t1")))
    assert "Run status: done." in out
    # The answer is written after the resume from every hop's full result: the notes
    # worker's is in the store the run was compiled with, which only --store gives back.
    notes = '{"note": "customer-since-2019"}' if give_store else "(missing)"
    assert f"Answer: {notes} + Done" in out


def test_a_missing_store_file_is_a_one_line_error(setup):
    setup.pause("t1")
    args = ["--db", setup.db, "--graph", setup.spec, "--thread", "t1"]
    missing = str(setup.tmp_path / "nope.db")
    fails(
        lgsp("review", "approve", *args, "--store", missing),
        2,
        f"no store database at {missing} (--store)",
    )
    fails(
        lgsp("review", "sweep", "--db", setup.db, "--graph", setup.spec, "--store", "redis://x"),
        2,
        "--store redis://x: unsupported scheme 'redis'",
    )
    assert setup.state("t1").next  # the run was not touched

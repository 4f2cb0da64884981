"""Issue 33, item 7: ids in messages, thread ids no database can encode, a review's path.

- A 10,000-character thread id is never echoed whole into a message (cut, quoted).
- A thread id holding a surrogate (what Python makes of bytes that are not UTF-8, e.g.
  in a command-line argument) or a NUL is reported as what it is, on SQLite and
  Postgres, through the desk and the CLI, never as "failed after the decision".
- A function worker's own `request_review`, three levels down a tree, carries
  `context["path"]` like every review the package's own gates ask for.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_supervisor_pro import Worker, WorkerTask, create_supervisor, open_checkpointer
from langgraph_supervisor_pro.errors import ReviewNotFoundError, ThreadBusyError
from langgraph_supervisor_pro.observability import audit_trail
from langgraph_supervisor_pro.observability._metrics import expected_routes
from langgraph_supervisor_pro.persistence._retention import PrunedThread
from langgraph_supervisor_pro.persistence._standby import Takeover
from langgraph_supervisor_pro.review import request_review
from langgraph_supervisor_pro.review._desk import Approve, get_review, list_reviews, resolve_review
from langgraph_supervisor_pro.review._gate import review_payload
from langgraph_supervisor_pro.review._server import _how_to_answer
from tests._helpers import ask, routes
from tests.cli.test_review import Setup, fails, lgsp

LONG = "t" * 10_000
NOW = datetime(2030, 1, 1, tzinfo=UTC)
BAD_IDS = ["order-\udcff", "order-\ud800-7", "order-\x00"]


def test_a_long_thread_id_is_cut_in_messages() -> None:
    app = _graph().compile(checkpointer=InMemorySaver())
    with pytest.raises(ReviewNotFoundError) as info:
        get_review(app, thread_id=LONG)
    message = str(info.value)
    assert LONG not in message and len(message) < 600
    assert "'tttt" in message and "…" in message
    busy = str(ThreadBusyError(LONG, "worker-a:1"))
    assert LONG not in busy and len(busy) < 600


def test_a_long_thread_id_is_cut_in_the_audit_metrics_prune_standby_and_server_messages() -> None:
    saver = InMemorySaver()
    with pytest.raises(LookupError) as info:
        audit_trail(saver, LONG)
    with pytest.raises(ValueError) as twice:
        expected_routes([{"thread_id": LONG, "expected": ["w"]}] * 2)
    lines = [
        str(info.value),
        str(twice.value),
        Takeover(LONG, "1ef0", "finished").line(),
        PrunedThread(
            thread_id=LONG, status="done", outcome="changed", last_activity=NOW, age_seconds=1.0
        ).line(),
        _how_to_answer(LONG, []),
    ]
    for line in lines:
        assert LONG not in line and len(line) < 400, line[:200]
        assert "tttt" in line and "…" in line
    assert lines[0] == f"thread '{'t' * 78}… has no checkpoints"
    assert lines[2].startswith(f"thread {'t' * 79}…: resumed at [] from checkpoint 1ef0")


def _graph():
    return create_supervisor(
        [Worker(name="w", description="W.", agent=lambda t: "ok")], router=routes("w")
    )


@pytest.mark.parametrize("bad", BAD_IDS)
def test_an_unencodable_thread_id_is_said_to_be_one_on_sqlite(tmp_path: Path, bad: str) -> None:
    with open_checkpointer(f"sqlite:///{tmp_path / 'runs.db'}") as saver:
        app = _graph().compile(checkpointer=saver)
        with pytest.raises(ValueError, match=r"^thread_id: .* cannot be stored or encoded"):
            get_review(app, thread_id=bad)
        with pytest.raises(ValueError, match="cannot be stored or encoded"):
            resolve_review(app, thread_id=bad, decision=Approve())


@pytest.mark.integration
@pytest.mark.parametrize("bad", BAD_IDS)
def test_an_unencodable_thread_id_is_said_to_be_one_on_postgres(pg_database: str, bad: str) -> None:
    with open_checkpointer(pg_database) as saver:
        app = _graph().compile(checkpointer=saver)
        with pytest.raises(ValueError, match=r"^thread_id: .* cannot be stored or encoded"):
            get_review(app, thread_id=bad)


def test_the_cli_says_the_thread_id_is_wrong_not_that_the_run_failed(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    setup.pause()
    for bad in BAD_IDS:
        result = lgsp("review", "approve", "--db", setup.db, "--graph", setup.spec,
                      "--thread", bad, "--as", "alice")  # fmt: skip
        out = fails(result, result.exit_code, "--thread:", "cannot be stored or encoded")
        assert result.exit_code != 0
        assert "failed after the decision" not in out
        assert "UnicodeEncodeError" not in out
    assert setup.refunds() == []
    long = lgsp("review", "approve", "--db", setup.db, "--graph", setup.spec,
                "--thread", LONG, "--as", "alice")  # fmt: skip
    assert long.exit_code != 0 and LONG not in long.output


# -- a function worker's own review, three levels down --------------------------------------

PAGED: list[str] = []


def _pager(task: WorkerTask) -> str:
    decision = request_review(
        review_payload(
            kind="tool",
            action="page_oncall",
            args={"team": "db"},
            description="Page the database on-call",
            allowed=["approve", "reject"],
            context={"worker": "pager", "reason": "paging wakes someone up"},
        )
    )
    PAGED.append(decision.type)
    return f"paging: {decision.type}"


def test_a_function_workers_own_review_carries_its_path_three_levels_down() -> None:
    PAGED.clear()
    incident = create_supervisor(
        [Worker(name="pager", description="Pages on-call.", agent=_pager)],
        router=routes("pager"),
        name="incident",
    )
    ops = create_supervisor(
        [Worker(name="incident", description="Runs incidents.", agent=incident)],
        router=routes("incident"),
        name="ops",
    )
    saver = InMemorySaver()
    root = create_supervisor(
        [Worker(name="ops", description="Operations.", agent=ops)], router=routes("ops")
    ).compile(checkpointer=saver)
    config: dict[str, Any] = {"configurable": {"thread_id": str(uuid.uuid4())}}
    out = root.invoke(ask("The database is down"), config)
    assert out.get("__interrupt__")
    review = get_review(root, thread_id=config["configurable"]["thread_id"])
    assert review.path == ("ops", "incident", "pager")
    assert review.context["path"] == ["ops", "incident", "pager"]
    assert review.worker == "pager"  # what the worker gave is kept
    (listed,) = list_reviews(saver)
    assert listed.path == ("ops", "incident", "pager")
    done = resolve_review(root, thread_id=config["configurable"]["thread_id"], decision=Approve())
    assert done["status"] == "done" and PAGED == ["approve"]


def test_a_path_given_by_the_worker_is_kept() -> None:
    given = {"context": {"path": ["custom"]}}
    from langgraph_supervisor_pro._internal.hop import HOP_CONFIG_KEY, HopContext
    from langgraph_supervisor_pro.review._gate import _with_path

    hop = HopContext(
        worker="pager",
        step=1,
        turn=1,
        task="T",
        instructions="",
        dispatched_at="2030-01-01T00:00:00+00:00",
        tier="supervised",
        path=("ops", "pager"),
    )
    assert _with_path(given, {HOP_CONFIG_KEY: hop}) is given
    assert _with_path({"context": {}}, {HOP_CONFIG_KEY: hop}) == {
        "context": {"path": ["ops", "pager"]}
    }
    assert _with_path({"context": {}}, {}) == {"context": {}}  # outside a hop: unchanged

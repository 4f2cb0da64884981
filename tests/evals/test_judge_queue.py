"""The online judge's review queue in a store: listing and acknowledging low scores."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_supervisor_pro import Worker, create_supervisor, open_store
from langgraph_supervisor_pro.errors import (
    JudgementAlreadyAcknowledgedError,
    JudgementNotFoundError,
)
from langgraph_supervisor_pro.evals._judge import OnlineJudge
from langgraph_supervisor_pro.evals._judge_queue import (
    JUDGE_NAMESPACE,
    JudgedTurn,
    aacknowledge_judgement,
    acknowledge_judgement,
    ajudge_reviews,
    judge_reviews,
)
from langgraph_supervisor_pro.testing import FunctionChatModel
from tests._helpers import ask


def verdict(call) -> dict[str, Any]:
    """Scores from what the judge is shown: an answer about "bad" things scores low."""
    low = "bad" in str(call.messages[-1].content).split("Answer:")[-1]
    return {"score": 0.1 if low else 0.9, "passed": not low, "reasons": ["read the answer"]}


def judged_team():
    return create_supervisor(
        [Worker(name="w", description="Works.", agent=lambda task: f"About {task.task}")],
        router=lambda view: "FINISH" if view.ledger else "w",
        judge=OnlineJudge(model=FunctionChatModel(name="judge", reply=verdict), sample=1.0),
    )


def run_threads(store: Any, tasks: dict[str, str]) -> None:
    app = judged_team().compile(checkpointer=InMemorySaver(), store=store)
    for thread_id, task in tasks.items():
        assert app.invoke(ask(task), {"configurable": {"thread_id": thread_id}})["status"] == "done"


def test_low_scores_are_listed_oldest_first_and_acknowledged_once():
    store = InMemoryStore()
    run_threads(store, {"a": "bad tea", "b": "good tea", "c": "bad coffee"})
    assert [(i.key, i.review, i.score) for i in judge_reviews(store)] == [
        ("a:1", "open", 0.1),
        ("c:1", "open", 0.1),
    ]
    done = acknowledge_judgement(store, "a:1", by=" alice ", note="Answer rewritten.")
    assert (done.review, done.acknowledged_by, done.note) == (
        "acknowledged",
        "alice",
        "Answer rewritten.",
    )
    assert done.acknowledged_at is not None and done.acknowledged_at.endswith("+00:00")
    assert [i.key for i in judge_reviews(store)] == ["c:1"]
    assert [i.key for i in judge_reviews(store, status="acknowledged")] == ["a:1"]
    assert [i.key for i in judge_reviews(store, status="all")] == ["a:1", "c:1"]
    with pytest.raises(JudgementAlreadyAcknowledgedError, match="already acknowledged by alice at"):
        acknowledge_judgement(store, "a:1", by="bob")
    # The stored verdict keeps the judge's answer and the state entry it came from.
    item = store.get(JUDGE_NAMESPACE, "a:1")
    assert item is not None and item.value["entry"]["score"] == 0.1
    assert item.value["acknowledged_by"] == "alice"


def test_acknowledging_what_is_not_queued_says_so():
    store = InMemoryStore()
    run_threads(store, {"good": "good tea"})
    with pytest.raises(JudgementNotFoundError, match="no queued judgement 'good:1'") as info:
        acknowledge_judgement(store, "good:1", by="alice")  # judged, but scored well
    assert info.value.key == "good:1"
    with pytest.raises(JudgementNotFoundError, match="'missing:1'"):
        acknowledge_judgement(store, "missing:1", by="alice")


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"key": "", "by": "alice"}, ValueError, "key: give the key"),
        ({"key": "a:1", "by": "  "}, ValueError, "by: name who acknowledges"),
        ({"key": "a:1", "by": "alice", "note": 3}, TypeError, "note: got int"),
    ],
)
def test_bad_acknowledgements_name_the_argument(kwargs, error, needle):
    with pytest.raises(error, match=needle):
        acknowledge_judgement(InMemoryStore(), **kwargs)


def test_a_store_and_a_status_are_checked():
    with pytest.raises(TypeError, match="store: got dict"):
        judge_reviews({})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="status: got 'closed'"):
        judge_reviews(InMemoryStore(), status="closed")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="store: got NoneType"):
        acknowledge_judgement(None, "a:1", by="alice")  # type: ignore[arg-type]


def test_the_queue_is_read_page_by_page():
    store = InMemoryStore()
    for index in range(230):
        key = f"t{index:03d}:1"
        store.put(
            JUDGE_NAMESPACE,
            key,
            {"key": key, "thread_id": f"t{index:03d}", "turn": 1, "review": "open", "at": key},
        )
    store.put(JUDGE_NAMESPACE, "fine:1", {"key": "fine:1", "review": None, "at": "0"})
    items = judge_reviews(store)
    assert [i.key for i in items] == [f"t{index:03d}:1" for index in range(230)]


def test_the_queue_persists_in_a_sqlite_store(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with open_store(url) as store:
        run_threads(store, {"odd \u00e9\u4e2d": "bad tea \u2603", "ok": "good tea"})
    with open_store(url) as store:  # another connection, as another process would open
        (item,) = judge_reviews(store)
        assert item.thread_id == "odd \u00e9\u4e2d" and item.key == "odd \u00e9\u4e2d:1"
        assert item.task == "bad tea \u2603"
        acknowledge_judgement(store, item.key, by="alice")
    with open_store(url) as store:
        assert judge_reviews(store) == []
        assert [i.acknowledged_by for i in judge_reviews(store, status="all")] == ["alice"]


def test_async_twins_read_and_acknowledge_on_the_event_loop():
    store = InMemoryStore()
    run_threads(store, {"x": "bad tea"})

    async def main() -> tuple[list[JudgedTurn], JudgedTurn, list[JudgedTurn]]:
        before = await ajudge_reviews(store)
        done = await aacknowledge_judgement(store, "x:1", by="carol")
        return before, done, await ajudge_reviews(store)

    before, done, after = asyncio.run(main())
    assert [i.key for i in before] == ["x:1"] and done.acknowledged_by == "carol" and after == []


def test_a_judged_turn_reads_back_from_any_stored_value():
    item = JudgedTurn.from_value({"key": "k", "score": "high", "passed": "yes", "turn": None})
    assert (item.score, item.passed, item.turn, item.reasons) == (None, None, 0, ())
    assert JudgedTurn.from_value(item.to_dict() | {"at": "t"}).judged_at == "t"


def slow_reads(monkeypatch: pytest.MonkeyPatch, store_class: type[Any]) -> None:
    """Widen the window between an acknowledgement's read and its write to 0.3 s."""
    read = store_class.get

    def slow_get(self: Any, *args: Any, **kwargs: Any) -> Any:
        item = read(self, *args, **kwargs)
        time.sleep(0.3)
        return item

    monkeypatch.setattr(store_class, "get", slow_get)


def acknowledge_at_once(store: Any, key: str, names: list[str]) -> dict[str, Any]:
    """Each name acknowledges `key` in its own thread, all at once: name -> result or error."""
    gate = threading.Barrier(len(names))

    def acknowledge(name: str) -> Any:
        gate.wait(10)
        try:
            return acknowledge_judgement(store, key, by=name)
        except JudgementAlreadyAcknowledgedError as exc:
            return exc

    with ThreadPoolExecutor(len(names)) as pool:
        return dict(zip(names, pool.map(acknowledge, names), strict=True))


def test_two_runs_at_once_each_queue_their_turn_and_one_of_two_acknowledgers_wins(monkeypatch):
    store = InMemoryStore()
    app = judged_team().compile(checkpointer=InMemorySaver(), store=store)
    gate = threading.Barrier(2)

    def run(thread_id: str) -> str:
        gate.wait(10)
        out = app.invoke(ask("bad tea"), {"configurable": {"thread_id": thread_id}})
        return str(out["judgements"][0]["key"])

    with ThreadPoolExecutor(2) as pool:
        keys = sorted(pool.map(run, ["p-1", "p-2"]))
    assert keys == ["p-1:1", "p-2:1"]
    assert sorted(i.key for i in judge_reviews(store)) == keys

    slow_reads(monkeypatch, InMemoryStore)  # both would read "open" before either writes
    results = acknowledge_at_once(store, "p-1:1", ["ann", "ben"])
    (item,) = judge_reviews(store, status="acknowledged")
    winner = item.acknowledged_by
    (loser,) = {"ann", "ben"} - {winner}
    assert isinstance(results[winner], JudgedTurn)
    assert results[winner].acknowledged_at == item.acknowledged_at
    refused = results[loser]
    assert isinstance(refused, JudgementAlreadyAcknowledgedError)
    assert (refused.key, refused.by, refused.at) == ("p-1:1", winner, item.acknowledged_at)
    assert f"already acknowledged by {winner} at {item.acknowledged_at}" in str(refused)
    assert [i.key for i in judge_reviews(store)] == ["p-2:1"]


def test_two_acknowledgements_at_once_in_one_process_on_sqlite_one_is_refused(
    tmp_path, monkeypatch
):
    from langgraph.store.sqlite import SqliteStore

    url = f"sqlite:///{tmp_path / 'store.db'}"
    with open_store(url) as first, open_store(url) as second:
        first.put(JUDGE_NAMESPACE, "s:1", {"key": "s:1", "turn": 1, "review": "open"})
        slow_reads(monkeypatch, SqliteStore)
        gate = threading.Barrier(2)

        def acknowledge(pair: tuple[Any, str]) -> str:
            gate.wait(10)
            try:
                return acknowledge_judgement(pair[0], "s:1", by=pair[1]).acknowledged_by or ""
            except JudgementAlreadyAcknowledgedError as exc:
                return f"refused: {exc.by}"

        with ThreadPoolExecutor(2) as pool:
            results = sorted(pool.map(acknowledge, [(first, "ann"), (second, "ben")]))
    assert results in (["ann", "refused: ann"], ["ben", "refused: ben"])


def test_an_acknowledgement_refused_on_the_event_loop_says_who_and_when():
    store = InMemoryStore()
    store.put(JUDGE_NAMESPACE, "e:1", {"key": "e:1", "turn": 1, "review": "open"})

    async def main() -> tuple[JudgedTurn, JudgementAlreadyAcknowledgedError]:
        done = await aacknowledge_judgement(store, "e:1", by="dora")
        with pytest.raises(JudgementAlreadyAcknowledgedError) as info:
            await aacknowledge_judgement(store, "e:1", by="emil")
        return done, info.value

    done, refused = asyncio.run(main())
    assert (refused.by, refused.at) == ("dora", done.acknowledged_at)
    unnamed = JudgementAlreadyAcknowledgedError("k", by=None, at=None)
    assert unnamed.message == (
        "judgement 'k' was already acknowledged by someone unnamed at an unrecorded time"
    )
    assert str(unnamed).startswith(f"{unnamed.message}\nFor troubleshooting, visit: ")

"""External effects in doubt (intent without outcome) and setup that never waits on work.

Real Postgres, never mocked. A crash between the call and the record is made in-process
by an effect that raises a `BaseException` after "calling" (the intent stays, as after
SIGKILL; `tests/integration/test_effects_crash.py` does it with real processes).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_supervisor_pro import WorkerTask, create_supervisor, open_checkpointer, open_store
from langgraph_supervisor_pro.errors import EffectInDoubtError, SetupLockError
from langgraph_supervisor_pro.observability import audit_trail
from langgraph_supervisor_pro.observability._audit import EffectEvent
from langgraph_supervisor_pro.persistence import thread_lease
from langgraph_supervisor_pro.persistence._effects import (
    EFFECTS_LOGGER,
    aopen_effects,
    effect_key,
    open_effects,
)
from tests._helpers import ask, routes
from tests.test_supervisor import w

KEY = "t-1/1/2/mailer/receipt"


class Killed(BaseException):
    """Stands in for SIGKILL between the remote call and the record of its outcome."""


def states(uri: str) -> dict[str, tuple[Any, str]]:
    with psycopg.connect(uri) as conn:
        rows = conn.execute("SELECT key, outcome, state FROM lgsp_effects").fetchall()
    return {key: (outcome, state) for key, outcome, state in rows}


def leave_in_doubt(effects: Any, key: str, sent: list[str]) -> None:
    def send_then_die(k: str) -> Any:
        sent.append(k)
        raise Killed

    with pytest.raises(Killed):
        effects.run_external(key, send_then_die)


@pytest.fixture
def effects(pg_database):
    with open_effects(pg_database, pool_size=4) as recorder:
        yield recorder


# --------------------------------------------------------------------------- in doubt


def test_an_intent_is_committed_before_the_call(effects, pg_database):
    seen: list[Any] = []

    def send(key: str) -> str:
        seen.append(states(pg_database)[key])  # read by another connection: committed
        return "sent"

    assert effects.run_external(KEY, send) == "sent"
    assert seen == [(None, "intent")]
    assert states(pg_database)[KEY] == ("sent", "done")


def test_in_doubt_outside_a_graph_raises_naming_the_key_and_never_calls_again(
    effects, pg_database, caplog
):
    sent: list[str] = []
    leave_in_doubt(effects, KEY, sent)
    assert states(pg_database)[KEY] == (None, "intent")
    with (
        caplog.at_level(logging.WARNING, logger=EFFECTS_LOGGER),
        pytest.raises(EffectInDoubtError, match="t-1/1/2/mailer/receipt") as raised,
    ):
        effects.run_external(KEY, lambda k: sent.append(k))
    assert raised.value.key == KEY and "reconcile=" in str(raised.value)
    assert sent == [KEY]  # not called a second time
    assert any("in doubt" in r.getMessage() and KEY in r.getMessage() for r in caplog.records)
    assert states(pg_database)[KEY] == (None, "in_doubt")


def test_reconcile_that_finds_the_call_records_its_answer(effects, pg_database):
    sent: list[str] = []
    leave_in_doubt(effects, KEY, sent)
    asked: list[str] = []

    def reconcile(key: str) -> dict[str, str]:
        asked.append(key)
        return {"message_id": "m-1"}

    assert effects.run_external(KEY, sent.append, reconcile=reconcile) == {"message_id": "m-1"}
    assert asked == [KEY] and sent == [KEY]
    assert states(pg_database)[KEY] == ({"message_id": "m-1"}, "reconciled")
    # Settled: later executions get the outcome without asking anyone.
    assert effects.run_external(KEY, sent.append, reconcile=reconcile) == {"message_id": "m-1"}
    assert asked == [KEY]


def test_reconcile_that_finds_nothing_runs_the_call_once(effects, pg_database):
    sent: list[str] = []
    leave_in_doubt(effects, KEY, sent)

    def send(key: str) -> str:
        sent.append(key)
        return "sent again"

    assert effects.run_external(KEY, send, reconcile=lambda key: None) == "sent again"
    assert sent == [KEY, KEY]
    assert states(pg_database)[KEY] == ("sent again", "redone")


def test_a_reconcile_that_raises_leaves_the_effect_in_doubt(effects, pg_database):
    leave_in_doubt(effects, KEY, [])

    def broken(key: str) -> Any:
        raise ConnectionError("provider down")

    with pytest.raises(ConnectionError):
        effects.run_external(KEY, lambda k: "x", reconcile=broken)
    assert states(pg_database)[KEY] == (None, "intent")
    with pytest.raises(TypeError, match="JSON"):
        effects.run_external(KEY, lambda k: "x", reconcile=lambda k: object())
    assert states(pg_database)[KEY] == (None, "intent")


async def test_async_in_doubt_with_sync_and_async_reconcile(pg_database):
    async with aopen_effects(pg_database) as effects:
        calls: list[str] = []

        async def send_then_die(key: str) -> Any:
            calls.append(key)
            raise Killed

        async def send(key: str) -> str:
            calls.append(key)
            return "sent"

        for key in ("t-1/1/1/m/a", "t-1/1/1/m/b", "t-1/1/1/m/c"):
            with pytest.raises(Killed):
                await effects.arun_external(key, send_then_die)
        with pytest.raises(EffectInDoubtError, match="t-1/1/1/m/a"):
            await effects.arun_external("t-1/1/1/m/a", send)

        async def found(key: str) -> str:
            return "found"

        assert await effects.arun_external("t-1/1/1/m/b", send, reconcile=found) == "found"
        assert await effects.arun_external("t-1/1/1/m/c", send, reconcile=lambda k: None) == "sent"
        assert calls == ["t-1/1/1/m/a", "t-1/1/1/m/b", "t-1/1/1/m/c", "t-1/1/1/m/c"]
    got = states(pg_database)
    assert [got[k][1] for k in ("t-1/1/1/m/a", "t-1/1/1/m/b", "t-1/1/1/m/c")] == [
        "in_doubt",
        "reconciled",
        "redone",
    ]


@pytest.mark.parametrize(
    ("answer", "result", "state", "calls"),
    [
        (
            {"type": "respond", "message": '{"message_id": "m-1"}'},
            {"message_id": "m-1"},
            "confirmed",
            1,
        ),
        (
            {"type": "respond", "message": "seen in the provider"},
            "seen in the provider",
            "confirmed",
            1,
        ),
        ({"type": "approve"}, {"message_id": "m-2"}, "redone", 2),
        ({"type": "reject", "message": "skip it"}, None, "skipped", 1),
    ],
    ids=["confirm-json", "confirm-text", "run-again", "skip"],
)
def test_in_a_graph_an_effect_in_doubt_pauses_on_a_review(
    effects, pg_database, answer, result, state, calls
):
    sent: list[str] = []
    crash = [True]
    outcomes: list[Any] = []

    def mailer(task: WorkerTask) -> str:
        def send(key: str) -> dict[str, str]:
            sent.append(key)
            if crash[0]:
                crash[0] = False
                raise Killed
            return {"message_id": f"m-{len(sent)}"}

        outcome = effects.run_external(effect_key("receipt"), send)
        outcomes.append(outcome)
        return f"receipt: {outcome}"

    saver = InMemorySaver()
    app = create_supervisor([w("mailer", mailer)], router=routes("mailer", "FINISH")).compile(
        checkpointer=saver
    )
    thread_id = f"th-{uuid.uuid4().hex[:6]}"
    config: Any = {"configurable": {"thread_id": thread_id}}
    with pytest.raises(Killed):
        app.invoke(ask(), config)
    paused = app.invoke(None, config)  # the hop re-runs: in doubt, so a review
    (review,) = paused["__interrupt__"]
    request = review.value["action_requests"][0]
    assert request["name"] == "effect:receipt"
    assert request["args"]["key"] == sent[0]
    assert "may already have happened" in request["description"]
    assert review.value["review_configs"][0]["allowed_decisions"] == [
        "approve",
        "respond",
        "reject",
    ]
    assert review.value["context"]["worker"] == "mailer"
    assert len(sent) == 1  # not called again while in doubt
    assert states(pg_database)[sent[0]] == (None, "in_doubt")

    done = app.invoke(Command(resume={"decisions": [answer]}), config)
    assert done["status"] == "done"
    assert len(sent) == calls and outcomes == [result]
    assert states(pg_database)[sent[0]] == (result, state)
    trail = audit_trail(saver, thread_id, effects=effects)
    (event,) = [e for e in trail.events if isinstance(e, EffectEvent)]
    assert event.state == state and event.in_doubt and f"was in doubt: {state}" in event.line()


def test_the_audit_shows_an_effect_still_in_doubt(effects, pg_database):
    thread_id = f"th-{uuid.uuid4().hex[:6]}"

    def mailer(task: WorkerTask) -> str:
        key = effect_key("receipt")

        def send_then_die(k: str) -> Any:
            raise Killed

        return str(effects.run_external(key, send_then_die))

    saver = InMemorySaver()
    app = create_supervisor([w("mailer", mailer)], router=routes("mailer")).compile(
        checkpointer=saver
    )
    with pytest.raises(Killed):
        app.invoke(ask(), {"configurable": {"thread_id": thread_id}})
    (event,) = [
        e
        for e in audit_trail(saver, thread_id, effects=effects).events
        if isinstance(e, EffectEvent)
    ]
    assert event.state == "intent" and "IN DOUBT" in event.line()


# --------------------------------------------------------------------------- migration


OLD_TABLE = (
    "CREATE TABLE lgsp_effects (key text PRIMARY KEY, thread_id text, outcome jsonb NOT NULL,"
    " created_at timestamptz NOT NULL DEFAULT now())"
)


def test_a_table_of_an_earlier_version_migrates_and_keeps_its_rows(pg_database):
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute(OLD_TABLE)
        conn.execute(
            "INSERT INTO lgsp_effects (key, thread_id, outcome) VALUES (%s, 't-1', '\"old\"')",
            (KEY,),
        )
    with open_effects(pg_database) as effects:
        assert effects.run_external(KEY, lambda k: "new") == "old"
        assert effects.run("t-1/1/3/w/x", lambda conn: 3) == 3
    assert states(pg_database) == {KEY: ("old", "done"), "t-1/1/3/w/x": (3, "done")}
    with psycopg.connect(pg_database) as conn:
        indexes = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'lgsp_effects'"
        ).fetchall()
    assert ("lgsp_effects_thread_id_idx",) in indexes


# --------------------------------------------------------------------------- setup never waits


def hold_an_effect_open(effects: Any, key: str) -> tuple[threading.Thread, threading.Event]:
    """Start `effects.run` in a thread and keep its transaction open until released."""
    inside, release = threading.Event(), threading.Event()

    def charge(conn: Any) -> str:
        inside.set()
        assert release.wait(60)
        return "charged"

    thread = threading.Thread(target=effects.run, args=(key, charge), daemon=True)
    thread.start()
    assert inside.wait(30)
    return thread, release


def test_opening_never_waits_on_an_effect_in_flight(pg_database):
    with open_checkpointer(pg_database), open_store(pg_database):
        pass  # LangGraph's migrations applied once
    with open_effects(pg_database) as effects:
        thread, release = hold_an_effect_open(effects, "t-9/1/1/w/charge")
        try:
            # Each open completes while the effect's transaction is still open.
            with open_effects(pg_database, connect_timeout=30) as again:
                assert again.run("t-9/1/2/w/other", lambda conn: 2) == 2
            with thread_lease(pg_database, "t-9", connect_timeout=30):
                pass
            with open_store(pg_database, connect_timeout=30):
                pass
            with open_checkpointer(pg_database, connect_timeout=30):
                pass
            assert thread.is_alive()
        finally:
            release.set()
            thread.join(30)


async def test_async_opening_never_waits_on_an_effect_in_flight(pg_database):
    with open_effects(pg_database) as effects:
        thread, release = hold_an_effect_open(effects, "t-9/1/1/w/charge")
        try:
            async with aopen_effects(pg_database, connect_timeout=30) as again:
                await again.setup()
            assert thread.is_alive()
        finally:
            release.set()
            await asyncio.to_thread(thread.join, 30)


def test_a_migration_blocked_by_running_work_fails_fast_naming_the_holder(pg_database):
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute(OLD_TABLE)
    holder = psycopg.connect(pg_database, autocommit=True)
    try:
        holder.execute("SET application_name = 'busy-worker'")
        holder.execute("BEGIN")
        holder.execute("INSERT INTO lgsp_effects (key, outcome) VALUES ('held', 'null')")
        pid = holder.info.backend_pid
        with (
            pytest.raises(SetupLockError, match=f"pid {pid}") as raised,
            open_effects(pg_database, connect_timeout=0.5),
        ):
            pass
        message = str(raised.value)
        assert "busy-worker" in message and "INSERT INTO lgsp_effects" in message
        assert "lgsp_effects" in message and "0.5 s" in message
        assert raised.value.holders[0][0] == pid
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with open_effects(pg_database) as effects:  # once the work is done, it migrates
        assert effects.run_external(KEY, lambda k: 1) == 1


def test_a_lease_setup_blocked_by_another_setup_fails_fast_naming_the_holder(pg_database):
    holder = psycopg.connect(pg_database, autocommit=True)
    try:
        holder.execute("BEGIN")
        holder.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('lgsp_thread_leases:setup', 0))"
        )
        with (
            pytest.raises(SetupLockError, match=f"pid {holder.info.backend_pid}"),
            thread_lease(pg_database, "t-1", connect_timeout=0.5),
        ):
            pass
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with thread_lease(pg_database, "t-1", connect_timeout=5):
        pass


def test_setup_lock_error_pickles():
    import pickle

    err = SetupLockError("lgsp_effects", 1, [(7, "idle in transaction", "app", "SELECT 1")])
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and again.holders == err.holders
    doubt = pickle.loads(pickle.dumps(EffectInDoubtError(KEY)))
    assert doubt.key == KEY and str(doubt) == str(EffectInDoubtError(KEY))


def test_a_copied_thread_keeps_its_effects_in_doubt(pg_database):
    thread_id = f"th-{uuid.uuid4().hex[:6]}"

    def mailer(task: WorkerTask) -> str:
        def send_then_die(k: str) -> Any:
            raise Killed

        return str(opened.run_external(effect_key("receipt"), send_then_die))

    with open_checkpointer(pg_database) as saver, open_effects(pg_database) as opened:
        app = create_supervisor([w("mailer", mailer)], router=routes("mailer")).compile(
            checkpointer=saver
        )
        with pytest.raises(Killed):
            app.invoke(ask(), {"configurable": {"thread_id": thread_id}})
        saver.copy_thread(thread_id, f"{thread_id}-copy")
        with pytest.raises(EffectInDoubtError):  # in doubt in the copy too
            (key,) = [k for k in states(pg_database) if k.startswith(f"{thread_id}-copy/")]
            opened.run_external(key, lambda k: "sent")
    assert sorted(state for _, state in states(pg_database).values()) == ["in_doubt", "intent"]

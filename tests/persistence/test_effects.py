"""Tests for persistence._effects against a real Postgres (never mocked)."""

from __future__ import annotations

import asyncio
import math
import threading
import uuid
from typing import Any, TypedDict

import psycopg
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.store.memory import InMemoryStore
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import WorkerTask, create_supervisor
from langgraph_supervisor_pro._internal.hop import prompt_digest
from langgraph_supervisor_pro.errors import EffectInDoubtError
from langgraph_supervisor_pro.persistence._effects import (
    AsyncPostgresEffects,
    PostgresEffects,
    StoreEffects,
    _legacy_key,
    aopen_effects,
    effect_key,
    open_effects,
)
from langgraph_supervisor_pro.persistence._stores import aopen_store, open_store
from tests._helpers import ask, routes
from tests._pg import someone_waits_on_a_lock, table_names
from tests.test_supervisor import w

# --------------------------------------------------------------------------- helpers


@pytest.fixture
def effects(pg_database):
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("CREATE TABLE payments (id serial PRIMARY KEY, key text, amount int)")
    with open_effects(pg_database, pool_size=4) as recorder:
        yield recorder


def payments(uri: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(uri) as conn:
        return conn.execute("SELECT key, amount FROM payments ORDER BY id").fetchall()


def records(uri: str) -> dict[str, Any]:
    with psycopg.connect(uri) as conn:
        rows = conn.execute("SELECT key, thread_id, outcome FROM lgsp_effects").fetchall()
    return {key: (thread_id, outcome) for key, thread_id, outcome in rows}


class Charge:
    """An effect that inserts one payment on the connection it is given; counts calls."""

    def __init__(self, amount: int = 42, *, fail: BaseException | None = None) -> None:
        self.amount = amount
        self.fail = fail
        self.calls = 0

    def __call__(self, conn: psycopg.Connection[Any]) -> dict[str, Any]:
        self.calls += 1
        row = conn.execute(
            "INSERT INTO payments (amount) VALUES (%s) RETURNING id", (self.amount,)
        ).fetchone()
        if self.fail is not None:
            raise self.fail
        return {"payment_id": row["id"], "amount": self.amount}


def cfg(thread_id: Any = "t-1", **metadata: Any) -> dict[str, Any]:
    metadata = metadata or {"lgsp_turn": 1, "lgsp_step": 2, "lgsp_worker": "cashier"}
    return {"configurable": {"thread_id": thread_id}, "metadata": metadata}


# --------------------------------------------------------------------------- PostgresEffects


def test_run_twice_with_the_same_key_runs_the_effect_once(effects, pg_database):
    charge = Charge()
    first = effects.run("t-1/1/1/cashier/charge", charge)
    again = effects.run("t-1/1/1/cashier/charge", charge)
    assert first == again == {"payment_id": 1, "amount": 42}
    assert charge.calls == 1
    assert payments(pg_database) == [(None, 42)]
    assert records(pg_database) == {"t-1/1/1/cashier/charge": ("t-1", first)}


def test_different_keys_run_separately_and_delete_thread_forgets_one_thread(effects, pg_database):
    charge = Charge()
    keys = ["t-1/1/1/cashier/charge", "t-1/1/2/cashier/charge", "t-2/1/1/cashier/charge"]
    outcomes = [effects.run(key, charge) for key in keys]
    assert [o["payment_id"] for o in outcomes] == [1, 2, 3]
    assert charge.calls == 3 and len(payments(pg_database)) == 3
    assert {k: v[0] for k, v in records(pg_database).items()} == {
        keys[0]: "t-1",
        keys[1]: "t-1",
        keys[2]: "t-2",
    }
    assert effects.delete_thread("t-1") == 2
    assert set(records(pg_database)) == {keys[2]}
    # Forgotten keys run again; the other thread's record still holds.
    assert effects.run(keys[0], charge)["payment_id"] == 4
    assert effects.run(keys[2], charge) == outcomes[2]
    assert charge.calls == 4


def test_an_effect_that_raises_records_nothing_and_its_writes_roll_back(effects, pg_database):
    failing = Charge(fail=RuntimeError("card declined"))
    with pytest.raises(RuntimeError, match="card declined"):
        effects.run("t-1/1/1/cashier/charge", failing)
    assert payments(pg_database) == [] and records(pg_database) == {}
    # The next execution runs the effect again (and this time it is recorded).
    charge = Charge()
    assert effects.run("t-1/1/1/cashier/charge", charge)["amount"] == 42
    assert charge.calls == 1 and len(payments(pg_database)) == 1


@pytest.mark.parametrize("outcome", [object(), {"x": math.nan}, {1, 2}])
def test_a_non_json_outcome_raises_type_error_and_rolls_back(effects, pg_database, outcome):
    def effect(conn):
        conn.execute("INSERT INTO payments (amount) VALUES (1)")
        return outcome

    with pytest.raises(TypeError, match=r"'t-1/1/1/cashier/charge'.*not JSON-serialisable"):
        effects.run("t-1/1/1/cashier/charge", effect)
    assert payments(pg_database) == [] and records(pg_database) == {}


def test_the_outcome_is_returned_as_it_reads_back_from_json(effects):
    first = effects.run("k/1", lambda conn: {"ids": (1, 2), 3: "three", "none": None})
    assert first == {"ids": [1, 2], "3": "three", "none": None}
    assert effects.run("k/1", lambda conn: "never") == first
    assert effects.run("k/2", lambda conn: None) is None
    assert effects.run("k/2", lambda conn: "never") is None  # a recorded None is a record


def test_an_effect_cannot_commit_behind_the_record(effects, pg_database):
    def sneaky(conn):
        conn.execute("INSERT INTO payments (amount) VALUES (1)")
        conn.commit()

    with pytest.raises(psycopg.ProgrammingError, match="commit"):
        effects.run("t-1/1/1/cashier/charge", sneaky)
    assert payments(pg_database) == [] and records(pg_database) == {}


def test_setup_is_idempotent_and_creates_the_table(pg_database):
    with open_effects(pg_database, setup=False) as effects:
        assert "lgsp_effects" not in table_names(pg_database)
        effects.setup()
        effects.run("t/1", lambda conn: 1)
        effects.setup()
    with open_effects(pg_database) as effects:  # setup again on open
        assert effects.run("t/1", lambda conn: 2) == 1
    assert "lgsp_effects" in table_names(pg_database)
    with psycopg.connect(pg_database) as conn:
        columns = conn.execute(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_name = 'lgsp_effects' ORDER BY ordinal_position"
        ).fetchall()
    assert columns == [
        ("key", "text", "NO"),
        ("thread_id", "text", "YES"),
        ("outcome", "jsonb", "NO"),
        ("created_at", "timestamp with time zone", "NO"),
        ("state", "text", "NO"),
    ]


def test_concurrent_setups_do_not_race(pg_database):
    with open_effects(pg_database, setup=False, pool_size=4) as effects:
        barrier = threading.Barrier(4)
        errors: list[BaseException] = []

        def setup():
            barrier.wait(timeout=10)
            try:
                effects.setup()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=setup) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
    assert errors == []
    assert "lgsp_effects" in table_names(pg_database)


@pytest.mark.parametrize("external", [False, True], ids=["run", "run_external"])
def test_two_threads_racing_on_one_key_run_the_effect_once(effects, pg_database, external):
    barrier = threading.Barrier(2)
    calls: list[str] = []
    waited: list[bool] = []
    results: dict[str, Any] = {}
    errors: list[BaseException] = []

    def effect(arg):
        calls.append(threading.current_thread().name)
        # Hold the key until the other thread is blocked on it (a real race, every time).
        waited.append(someone_waits_on_a_lock(pg_database))
        if not external:
            arg.execute("INSERT INTO payments (amount) VALUES (7)")
        return {"by": threading.current_thread().name}

    def racer():
        barrier.wait(timeout=10)
        try:
            run = effects.run_external if external else effects.run
            results[threading.current_thread().name] = run("t-1/1/1/cashier/charge", effect)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=racer, name=f"racer-{i}") for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    assert len(calls) == 1 and waited == [True]
    assert results == {"racer-0": {"by": calls[0]}, "racer-1": {"by": calls[0]}}
    assert len(payments(pg_database)) == (0 if external else 1)


def test_run_external_passes_the_key_and_records_after_the_effect(effects, pg_database):
    sent: list[str] = []

    def send_email(key: str) -> dict[str, str]:
        sent.append(key)
        return {"message_id": f"m-{len(sent)}"}

    key = "t-1/1/3/mailer/email"
    assert effects.run_external(key, send_email) == {"message_id": "m-1"}
    assert effects.run_external(key, send_email) == {"message_id": "m-1"}
    assert sent == [key]
    assert records(pg_database)[key] == ("t-1", {"message_id": "m-1"})

    def flaky(key: str) -> str:
        raise ConnectionError("SMTP down")

    with pytest.raises(ConnectionError):
        effects.run_external("t-1/1/4/mailer/email", flaky)
    assert "t-1/1/4/mailer/email" not in records(pg_database)
    with pytest.raises(TypeError, match="t-1/1/5/mailer/email"):
        effects.run_external("t-1/1/5/mailer/email", lambda key: object())
    # The call happened but its outcome could not be recorded: the intent stays, and the
    # next execution finds the effect in doubt instead of calling the remote again.
    assert records(pg_database)["t-1/1/5/mailer/email"] == ("t-1", None)
    with pytest.raises(EffectInDoubtError, match="t-1/1/5/mailer/email"):
        effects.run_external("t-1/1/5/mailer/email", send_email)
    assert sent == [key]


def test_bad_keys_and_urls_raise_clear_errors(effects, pg_database):
    with pytest.raises(ValueError, match="non-empty"):
        effects.run("", Charge())
    with pytest.raises(ValueError, match="NUL"):
        effects.run("a\x00b", Charge())
    with pytest.raises(TypeError, match="must be a str"):
        effects.run(None, Charge())  # type: ignore[arg-type]
    for url in ("memory", "sqlite:///:memory:", "mysql://x/y"):
        with pytest.raises(ValueError, match=r"postgresql://.*StoreEffects"), open_effects(url):
            pass
    with pytest.raises(ValueError, match="pool_size"), open_effects(pg_database, pool_size=0):
        pass
    secret = "postgresql://u:hunter2@localhost/x".replace("postgresql", "mysql")
    with pytest.raises(ValueError) as info, open_effects(secret):
        pass
    assert "hunter2" not in str(info.value)


def test_a_thread_id_with_a_slash_round_trips_through_the_key(effects, pg_database):
    key = effect_key("charge", config=cfg("org/42"))
    assert key == "org%2F42/1/2/cashier/charge"
    effects.run(key, Charge())
    assert records(pg_database)[key][0] == "org/42"
    assert effects.delete_thread("org/42") == 1


# --------------------------------------------------------------------------- AsyncPostgresEffects


async def test_async_twins_run_once_roll_back_and_serialise(pg_database):
    async with await psycopg.AsyncConnection.connect(pg_database, autocommit=True) as conn:
        await conn.execute("CREATE TABLE payments (id serial PRIMARY KEY, key text, amount int)")
    calls = []

    async def charge(conn: psycopg.AsyncConnection[Any]) -> dict[str, Any]:
        # Hold the key until the racing task is blocked on it.
        calls.append(await asyncio.to_thread(someone_waits_on_a_lock, pg_database))
        cur = await conn.execute("INSERT INTO payments (amount) VALUES (5) RETURNING id")
        return {"payment_id": (await cur.fetchone())["id"]}

    async def declined(conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute("INSERT INTO payments (amount) VALUES (6)")
        raise RuntimeError("declined")

    async with aopen_effects(pg_database, pool_size=4) as effects:
        assert isinstance(effects, AsyncPostgresEffects)
        await effects.setup()  # idempotent
        first, second = await asyncio.gather(
            effects.arun("t-1/1/1/cashier/charge", charge),
            effects.arun("t-1/1/1/cashier/charge", charge),
        )
        assert first == second == {"payment_id": 1} and calls == [True]
        with pytest.raises(RuntimeError, match="declined"):
            await effects.arun("t-1/1/2/cashier/charge", declined)
        with pytest.raises(TypeError, match="t-1/1/3/cashier/charge"):
            await effects.arun("t-1/1/3/cashier/charge", _async_returning(object()))

        sent: list[str] = []

        async def send(key: str) -> str:
            sent.append(key)
            return f"sent {key}"

        assert await effects.arun_external("t-1/1/4/mailer/email", send) == (
            "sent t-1/1/4/mailer/email"
        )
        assert await effects.arun_external("t-1/1/4/mailer/email", send) == (
            "sent t-1/1/4/mailer/email"
        )
        assert sent == ["t-1/1/4/mailer/email"]
        assert await effects.adelete_thread("t-1") == 2
    assert payments(pg_database) == [(None, 5)]
    assert records(pg_database) == {}
    with pytest.raises(ValueError, match="aopen_effects"):
        async with aopen_effects("memory"):
            pass


def _async_returning(value: Any):
    async def effect(conn: Any) -> Any:
        return value

    return effect


# --------------------------------------------------------------------------- effect_key


def test_effect_key_in_a_supervisor_graph_names_thread_turn_step_and_worker(effects, pg_database):
    keys: list[tuple[str, str]] = []

    def worker(name):
        def agent(task: WorkerTask) -> str:
            key = effect_key("send-email")
            keys.append((name, key))
            outcome = effects.run(key, Charge(amount=task.step))
            return f"{name} paid {outcome['payment_id']}"

        return agent

    app = create_supervisor(
        [w("a", worker("a")), w("b", worker("b"))], router=routes("a", "b", "a", "FINISH", "a")
    ).compile(checkpointer=InMemorySaver())
    thread_id = f"th-{uuid.uuid4().hex[:6]}"
    config = {"configurable": {"thread_id": thread_id}}
    app.invoke(ask(), config)
    app.invoke(ask("again"), config)  # turn 2
    # Each key carries the digest of its hop's prompt (the task and instructions).
    assert [(name, _legacy_key(key)) for name, key in keys] == [
        ("a", f"{thread_id}/1/1/a/send-email"),
        ("b", f"{thread_id}/1/2/b/send-email"),
        ("a", f"{thread_id}/1/3/a/send-email"),
        ("a", f"{thread_id}/2/1/a/send-email"),
    ]
    first_turn = prompt_digest(
        WorkerTask(worker="a", step=1, task="Write a report on cats").prompt()
    )
    assert keys[0][1] == f"{thread_id}/1/1/a@{first_turn}/send-email"
    assert keys[3][1].split("/")[3] != keys[0][1].split("/")[3]  # another turn's task
    assert [amount for _, amount in payments(pg_database)] == [1, 2, 3, 1]
    assert set(records(pg_database)) == {key for _, key in keys}


async def test_effect_key_in_an_async_worker(pg_database):
    seen = []

    async def agent(task: WorkerTask) -> str:
        seen.append(effect_key("notify"))
        return "ok"

    app = create_supervisor([w("n", agent)], router=routes("n")).compile(
        checkpointer=InMemorySaver()
    )
    await app.ainvoke(ask(), {"configurable": {"thread_id": "async-t"}})
    (key,) = seen
    digest = prompt_digest(WorkerTask(worker="n", step=1, task="Write a report on cats").prompt())
    assert key == f"async-t/1/1/n@{digest}/notify"


def _cashier_team(effects: Any) -> Any:
    """One cashier hop per turn, which charges the task's length through `effects`."""

    def cashier(task: WorkerTask) -> str:
        outcome = effects.run(effect_key("charge"), Charge(amount=len(task.task)))
        return f"paid {outcome['payment_id']} ({outcome['amount']}) for {task.task}"

    def router(view: Any) -> str:
        return "FINISH" if view.ledger else "cashier"

    return create_supervisor([w("cashier", cashier)], router=router).compile(
        checkpointer=InMemorySaver()
    )


def test_a_root_forked_with_a_new_input_charges_the_new_task_once(effects, pg_database):
    app = _cashier_team(effects)
    config = {"configurable": {"thread_id": f"fork-{uuid.uuid4().hex[:6]}"}}
    app.invoke(ask("order one"), config)
    app.invoke(ask("order two!"), config)
    assert [amount for _, amount in payments(pg_database)] == [9, 10]
    # Back to the end of the first turn with another task: its hop is turn 2, step 1, as
    # the second turn's was, with another prompt: another hop, charged on its own.
    end_of_first = next(
        s for s in app.get_state_history(config) if not s.next and s.values["turn"] == 1
    )
    fork = app.invoke(ask("order three, larger"), end_of_first.config)
    assert fork["ledger"][-1]["summary"].endswith("(19) for order three, larger")
    assert [amount for _, amount in payments(pg_database)] == [9, 10, 19]
    assert len(records(pg_database)) == 3
    # Replaying either timeline's turn-2 hop charges nothing again.
    fork_hop, old_hop = [
        s for s in app.get_state_history(config) if s.next == ("cashier",) and s.values["turn"] == 2
    ]
    assert app.invoke(None, fork_hop.config)["ledger"][-1]["summary"].endswith("larger")
    assert app.invoke(None, old_hop.config)["ledger"][-1]["summary"].endswith("order two!")
    assert [amount for _, amount in payments(pg_database)] == [9, 10, 19]


def test_an_outcome_recorded_without_the_digest_still_answers_for_its_hop(effects, pg_database):
    legacy = "t-1/1/1/cashier/charge"
    first = effects.run(legacy, Charge(amount=5))  # as an earlier version recorded it
    again = Charge(amount=6)
    assert effects.run("t-1/1/1/cashier@0123456789abcdef/charge", again) == first
    assert effects.run_external("t-1/1/1/cashier@fedcba9876543210/charge", again) == first
    assert again.calls == 0 and len(payments(pg_database)) == 1
    # Another hop's key (another step) is not answered by it.
    assert effects.run("t-1/1/2/cashier@0123456789abcdef/charge", again)["amount"] == 6
    # Only a digest of 16 hex digits after a worker name marks a key as built in a hop.
    for key in (
        "t-1/1/1/cashier@0123456789ABCDEF/charge",
        "t-1/1/1/cashier@012345/charge",
        "t-1/x/1/cashier@0123456789abcdef/charge",
        "t-1/1/1/9cashier@0123456789abcdef/charge",
    ):
        assert _legacy_key(key) is None, key
    assert _legacy_key("a%2Fb/3/4/w-1@0123456789abcdef/x/y\n") == "a%2Fb/3/4/w-1/x/y\n"


async def test_the_async_and_store_effects_find_an_outcome_recorded_without_the_digest(
    pg_database,
):
    async with aopen_effects(pg_database) as aeffects:
        first = await aeffects.arun("t-2/1/1/cashier/charge", _async_returning({"id": 1}))
        assert (
            await aeffects.arun(
                "t-2/1/1/cashier@0123456789abcdef/charge", _async_returning({"id": 2})
            )
            == first
        )
    store = StoreEffects(InMemoryStore())
    assert store.run("t-3/1/1/cashier/charge", lambda key: "old") == "old"
    assert store.run("t-3/1/1/cashier@0123456789abcdef/charge", lambda key: "new") == "old"
    assert await store.arun("t-3/1/1/cashier@0123456789abcdef/charge", _arecord("new")) == "old"
    assert store.run("t-3/2/1/cashier@0123456789abcdef/charge", lambda key: "new") == "new"


def _arecord(value: Any):
    async def effect(key: str) -> Any:
        return value

    return effect


def test_effect_key_in_a_plain_langgraph_node_uses_its_step_and_name():
    class S(TypedDict):
        keys: list[str]

    def first(state: S) -> dict[str, Any]:
        return {"keys": [*state["keys"], effect_key("k")]}

    def second(state: S) -> dict[str, Any]:
        return {"keys": [*state["keys"], effect_key("k")]}

    builder = StateGraph(S)
    builder.add_node("first", first).add_node("second", second)
    builder.add_edge(START, "first").add_edge("first", "second")
    app = builder.compile(checkpointer=InMemorySaver())
    out = app.invoke({"keys": []}, {"configurable": {"thread_id": "plain"}})
    assert out["keys"] == ["plain/0/1/first/k", "plain/0/2/second/k"]


def test_effect_key_in_a_synthesizer_uses_the_synthesis_node():
    """Our nodes clear the hop keys of their trace metadata (None); that is not a hop."""
    keys: list[str] = []

    def synthesize(inp: Any) -> str:
        keys.append(effect_key("publish"))
        return "published"

    app = create_supervisor([w("a")], router=routes("a"), synthesizer=synthesize).compile(
        checkpointer=InMemorySaver()
    )
    out = app.invoke(ask(), {"configurable": {"thread_id": "synth"}})
    assert out["status"] == "done" and out["messages"][-1].content == "published"
    (key,) = keys
    assert key.startswith("synth/0/") and key.endswith("/synthesis/publish")


def test_effect_key_errors_are_clear():
    with pytest.raises(ValueError, match="non-empty"):
        effect_key("", config=cfg())
    with pytest.raises(ValueError, match="outside a LangGraph run"):
        effect_key("charge")
    with pytest.raises(ValueError, match=r"no thread_id.*checkpointer"):
        effect_key("charge", config={"metadata": {"lgsp_step": 1, "lgsp_worker": "w"}})
    with pytest.raises(ValueError, match="no thread_id"):
        effect_key("charge", config=cfg(""))
    with pytest.raises(ValueError, match="names no step and node"):
        effect_key("charge", config={"configurable": {"thread_id": "t"}})
    assert effect_key("charge", config=cfg(7)) == "7/1/2/cashier/charge"


def test_a_worker_without_a_thread_id_fails_its_hop_with_the_reason():
    def agent(task: WorkerTask) -> str:
        return effect_key("charge")

    app = create_supervisor(
        [w("a", agent, retry=RetryPolicy(max_attempts=1))], router=routes("a")
    ).compile()
    out = app.invoke(ask())
    result = out["workers"]["a"]["results"][-1]
    assert result["status"] == "failed"
    assert "no thread_id" in result["error"]


# --------------------------------------------------------------------------- StoreEffects


@pytest.fixture(params=["memory", "postgres"])
def store(request):
    if request.param == "memory":
        yield InMemoryStore()
        return
    uri = request.getfixturevalue("pg_database")
    with open_store(uri) as pg_store:
        yield pg_store


def test_store_effects_run_once_and_record_in_the_thread_namespace(store):
    effects = StoreEffects(store)
    sent: list[str] = []

    def send(key: str) -> dict[str, Any]:
        sent.append(key)
        return {"n": len(sent), "t": ("tuple",)}

    key = effect_key("email", config=cfg("run.1"))
    assert effects.run(key, send) == {"n": 1, "t": ["tuple"]}
    assert effects.run(key, send) == {"n": 1, "t": ["tuple"]}
    assert effects.run("run.1/1/2/cashier/other", send)["n"] == 2
    assert sent == [key, "run.1/1/2/cashier/other"]
    item = store.get(("lgsp", "effects", "run%2E1"), key)
    assert item is not None and item.value == {"outcome": {"n": 1, "t": ["tuple"]}}
    # A key without a thread part is stored directly under ("lgsp", "effects").
    assert effects.run("plain-key", lambda key: "x") == "x"
    assert store.get(("lgsp", "effects"), "plain-key").value == {"outcome": "x"}


def test_store_effects_record_nothing_when_the_effect_raises_or_is_not_json(store):
    effects = StoreEffects(store)
    with pytest.raises(RuntimeError):
        effects.run("t/1/1/w/k", _raise(RuntimeError("boom")))
    with pytest.raises(TypeError, match="'t/1/1/w/k'"):
        effects.run("t/1/1/w/k", lambda key: object())
    assert store.search(("lgsp", "effects", "t")) == []
    assert effects.run("t/1/1/w/k", lambda key: 3) == 3
    with pytest.raises(ValueError, match="non-empty"):
        effects.run("", lambda key: 1)


def _raise(exc: BaseException):
    def effect(key: str) -> Any:
        raise exc

    return effect


@pytest.mark.parametrize("backend", ["memory", "postgres"])
async def test_store_effects_arun(request, backend):
    url = "memory" if backend == "memory" else request.getfixturevalue("pg_database")
    calls: list[str] = []

    async def send(key: str) -> list[int]:
        calls.append(key)
        return [len(calls)]

    async with aopen_store(url) as store:
        effects = StoreEffects(store)
        assert await effects.arun("t/1/1/w/k", send) == [1]
        assert await effects.arun("t/1/1/w/k", send) == [1]
        assert calls == ["t/1/1/w/k"]
        with pytest.raises(TypeError):
            await effects.arun("t/1/1/w/j", _async_returning(object()))
        assert await store.aget(("lgsp", "effects", "t"), "t/1/1/w/j") is None


def test_postgres_effects_can_wrap_an_existing_pool(pg_database):
    from psycopg_pool import ConnectionPool

    with ConnectionPool(pg_database, kwargs={"autocommit": True}, open=True) as pool:
        effects = PostgresEffects(pool)  # tuple rows: the recorder does not care
        effects.setup()
        assert effects.run("t/1", lambda conn: conn.execute("SELECT 41 + 1").fetchone()[0]) == 42
        assert effects.run("t/1", lambda conn: 0) == 42


@pytest.mark.parametrize("backend", ["memory", "sqlite", "postgres"])
def test_store_effects_copy_thread_moves_the_keys_to_the_copy(request, backend, tmp_path):
    urls = {"memory": "memory", "sqlite": f"sqlite:///{tmp_path / 's.db'}"}
    url = urls.get(backend) or request.getfixturevalue("pg_database")
    with open_store(url) as store:
        effects = StoreEffects(store)
        effects.run("a%2Fb/1/1/w/mail", lambda key: "sent")
        effects.run("a%2Fb/2/1/w/mail", lambda key: {"id": 2})
        effects.run("a/1/1/w/mail", lambda key: "other thread")  # "a" is not "a/b"
        assert effects.copy_thread("a/b", "c.d/%") == 2
        # The copy's hops build their keys with their own thread id: recorded outcomes.
        assert effects.run("c.d%2F%25/1/1/w/mail", lambda key: "again") == "sent"
        again: Any = "again"
        assert effects.run("c.d%2F%25/2/1/w/mail", lambda key: again) == {"id": 2}
        assert effects.run("a%2Fb/1/1/w/mail", lambda key: "again") == "sent"  # source kept
        with pytest.raises(ValueError, match=r"thread 'c\.d/%' already has recorded outcomes"):
            effects.copy_thread("a/b", "c.d/%")
        with pytest.raises(ValueError, match="source and target are both 'a'"):
            effects.copy_thread("a", "a")
        with pytest.raises(ValueError, match="holds a NUL character"):
            effects.copy_thread("a", "b\x00")
        assert effects.copy_thread("never-ran", "fresh") == 0


async def test_store_effects_acopy_thread():
    async with aopen_store("memory") as store:
        effects = StoreEffects(store)
        await effects.arun("t/1/1/w/k", _async_returning("done"))
        assert await effects.acopy_thread("t", "u") == 1
        assert await effects.arun("u/1/1/w/k", _async_returning("again")) == "done"
        with pytest.raises(ValueError, match=r"StoreEffects\.acopy_thread: thread 'u' already"):
            await effects.acopy_thread("t", "u")

"""Side effects that run once per idempotency key, even across a crash and a resume.

A worker hop that crashes is re-run from its start when the thread resumes, so any
side effect it performed before the crash would run again. Wrap the effect instead:
its outcome is recorded durably under a key that names the hop, and a re-execution
of the hop gets the recorded outcome back without running the effect again.

- `effect_key("charge")` builds the key
  `"<thread_id>/<turn>/<step>/<worker>@<prompt digest>/charge"` from the current run, so
  the same hop re-run after a crash gets the same key and the next hop (or the next
  turn) a new one, and so does a root forked with a new input at an older checkpoint,
  whose hop reaches the same turn and step with another prompt. A key recorded before
  the digest was part of it (`"<thread_id>/<turn>/<step>/<worker>/charge"`) still
  answers for the hop that made it.
- `PostgresEffects.run(key, effect)` (`AsyncPostgresEffects.arun`) runs `effect(conn)`
  and records its outcome in the same transaction, on the same connection: the
  effect's own writes and the record commit together or not at all. This is
  exactly-once for effects that write to that Postgres database.
- `PostgresEffects.run_external(key, effect)` (`arun_external`) is for effects
  outside the database (an HTTP call, an email): the outcome is recorded after the
  effect returns, and the key is passed to the effect so it can be forwarded as the
  remote service's idempotency key.
- `StoreEffects` records outcomes in a LangGraph store, for deployments without
  Postgres.

Guarantees:

- `PostgresEffects.run`: exactly-once. A crash at any point either commits the
  effect's writes and the record together, or rolls both back (and the resumed
  hop runs the effect again, once). Concurrent executions of one key wait for
  each other; one runs the effect, the others get its outcome.
- `PostgresEffects.run_external`: once, and never silently twice. An intent is
  committed before the call and the outcome after it; a re-execution that finds an
  intent without an outcome (a crash between the call and the record) treats the
  effect as in doubt: it asks `reconcile(key)` when given, else pauses on a review
  (confirm, run again, or skip), and logs a warning. Concurrent executions of one key
  are serialised (an advisory lock on the key).
- `StoreEffects.run`: once, except across a crash between the effect's return
  and the store write (at-least-once). No locking between concurrent executions.

In all three, an effect that raises records nothing (the next execution runs it
again), and an outcome must be JSON-serialisable (else `TypeError`, and for
`run` the effect's writes roll back). The outcome is returned as it reads back
from JSON, the first time as on every replay.

Keys come from the run, so use a distinct caller key for each effect of one hop,
and run the graph with a checkpointer (Postgres, `durability="sync"` for the
tightest resume point).

Example:
    ```python
    from langgraph_supervisor_pro import Worker, create_supervisor, open_checkpointer
    from langgraph_supervisor_pro.persistence._effects import effect_key, open_effects
    def make_cashier(effects):
        def charge(conn):  # runs inside the recording transaction
            row = conn.execute(
                "INSERT INTO payments (amount) VALUES (%s) RETURNING id", (42,)
            ).fetchone()
            return {"payment_id": row["id"]}
        def cashier(task):
            outcome = effects.run(effect_key("charge"), charge)
            return f"charged, payment {outcome['payment_id']}"
        return cashier
    url = "postgresql://localhost/app"
    with open_checkpointer(url) as saver, open_effects(url) as effects:
        app = create_supervisor(
            [Worker(name="cashier", description="Charges.", agent=make_cashier(effects))],
            router=route,
        ).compile(checkpointer=saver)
        app.invoke(request, {"configurable": {"thread_id": "order-7"}}, durability="sync")
    ```
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, LiteralString, TypeVar, cast
from urllib.parse import unquote

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.store.base import BaseStore
from psycopg import AsyncConnection, AsyncCursor, Connection, Cursor
from psycopg.errors import LockNotAvailable
from psycopg.rows import TupleRow, tuple_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_supervisor_pro._internal.hop import hop_context
from langgraph_supervisor_pro._internal.twins import Call, MaybeAwait, Steps, adrive, drive
from langgraph_supervisor_pro._internal.urls import mask_url, scheme_of
from langgraph_supervisor_pro.errors import EffectInDoubtError
from langgraph_supervisor_pro.persistence._connections import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_POOL_SIZE,
    POSTGRES_SCHEMES,
    apostgres_pool,
    postgres_pool,
    validate_options,
)
from langgraph_supervisor_pro.persistence._ddl import (
    LOCK_TIMEOUT,
    aset_up_lock_error,
    lock_timeout_params,
    set_up_lock_error,
)
from langgraph_supervisor_pro.persistence._thread_ops import checked_threads

__all__ = [
    "AsyncPostgresEffects",
    "PostgresEffects",
    "StoreEffects",
    "aopen_effects",
    "effect_key",
    "open_effects",
]

T = TypeVar("T")

EFFECTS_LOGGER = "langgraph_supervisor_pro.effects"
"""The logger an effect found in doubt is reported on (level WARNING)."""
_log = logging.getLogger(EFFECTS_LOGGER)

_STORE_ROOT = ("lgsp", "effects")
_PAGE = 500
"""Outcomes `StoreEffects.copy_thread` reads per store search."""

# -- keys ----------------------------------------------------------------------------


def _checked_key(key: object) -> str:
    """Return `key` if it is a non-empty string Postgres can store, else raise."""
    if not isinstance(key, str):
        raise TypeError(f"effect key must be a str, got {type(key).__name__}")
    if not key:
        raise ValueError("effect key must be a non-empty string")
    if "\x00" in key:
        raise ValueError(f"effect key {key!r} contains a NUL byte")
    return key


def _part(text: str) -> str:
    """Escape a key part so that it never contains the `/` separator."""
    return text.replace("%", "%25").replace("/", "%2F")


def _thread_of(key: str) -> str | None:
    """The thread id a key was built for (its first part), None for a key without one."""
    head, sep, _ = key.partition("/")
    return unquote(head) if sep and head else None


def effect_key(key: str, *, config: RunnableConfig | None = None) -> str:
    """Build the idempotency key of a side effect performed by the current hop.

    Inside a worker hop of a `create_supervisor` graph the key is
    `"<thread_id>/<turn>/<step>/<worker>@<digest>/<key>"`, the digest 16 hex digits of
    the hop's prompt (task, instructions, the outputs it reads): a hop re-run after a
    crash, a retry or a replay gets the same key, any other hop (another step, another
    turn, or a root forked with a new input at an older checkpoint, which reaches the
    same turn and step with another prompt) a new one. An outcome recorded by an
    earlier version under the key without the digest is still found (see `run`).
    In any other LangGraph node it is `"<thread_id>/0/<langgraph_step>/<node>/<key>"`
    (a subgraph's steps restart at each invocation, so in a node of a subgraph that
    runs more than once per thread, put what tells the invocations apart into `key`).
    Use a distinct `key` for each effect of one hop. A `/` or `%` in the thread id or
    the worker's name is percent-encoded, so the parts never run together.

    Args:
        key: The caller's name for the effect within the hop, e.g. `"send-email"`.
        config: The run's config; by default the config of the node or worker agent
            this is called from (`langgraph.config.get_config()`).

    Returns:
        The key to pass to `PostgresEffects.run` (or its siblings).

    Raises:
        ValueError: `key` is empty, there is no run (called outside a graph without
            `config`), the run has no `thread_id` (effects need a checkpointed
            run), or the config names no step and node.
        TypeError: `key` is not a string.

    Example:
        >>> effect_key("send-email", config={
        ...     "configurable": {"thread_id": "t-1"},
        ...     "metadata": {"lgsp_turn": 1, "lgsp_step": 3, "lgsp_worker": "mailer"},
        ... })
        't-1/1/3/mailer/send-email'
    """
    _checked_key(key)
    if config is None:
        try:
            config = get_config()
        except RuntimeError:
            raise ValueError(
                "effect_key() was called outside a LangGraph run: call it inside a worker "
                "or a graph node, or pass config= (with configurable.thread_id)"
            ) from None
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if thread_id is None or str(thread_id) == "":
        raise ValueError(
            f"effect_key({key!r}): the run has no thread_id; side effects are keyed by "
            "thread, so run the graph with a checkpointer and "
            "config={'configurable': {'thread_id': ...}}"
        )
    metadata = config.get("metadata") or {}
    hop = hop_context(config)
    turn: Any
    step: Any
    node: Any
    if hop is not None:  # inside a worker hop: the hop the worker node passed down
        turn, step, node = hop.turn, hop.step, hop.worker
        if hop.digest is not None:
            node = f"{node}@{hop.digest}"
    elif metadata.get("lgsp_step") is not None:  # a config given by hand (nodes clear it)
        turn, step, node = (
            metadata.get("lgsp_turn", 0),
            metadata["lgsp_step"],
            metadata.get("lgsp_worker"),
        )
    else:
        turn, step, node = 0, metadata.get("langgraph_step"), metadata.get("langgraph_node")
    if step is None or not node:
        raise ValueError(
            f"effect_key({key!r}): the config names no step and node (metadata "
            "lgsp_step/lgsp_worker or langgraph_step/langgraph_node); call it inside a "
            "worker or a graph node, or pass the config that node received"
        )
    return f"{_part(str(thread_id))}/{turn}/{step}/{_part(str(node))}/{key}"


_DIGEST = r"@[0-9a-f]{16}"
"""How a hop's worker part ends in a key `effect_key` built inside it (`prompt_digest`)."""
_DIGESTED = re.compile(rf"([^/]*/[0-9]+/[0-9]+/[A-Za-z][A-Za-z0-9_-]{{0,63}}){_DIGEST}/(.+)", re.S)
"""A key `effect_key` built inside a hop: its worker part carries the prompt's digest."""


def _legacy_key(key: str) -> str | None:
    """The key an earlier version built for the same hop (no digest), if `key` has one.

    Example:
        >>> _legacy_key("t-1/1/3/mailer@0123456789abcdef/send-email")
        't-1/1/3/mailer/send-email'
        >>> _legacy_key("t-1/1/3/mailer/send-email") is None
        True
    """
    found = _DIGESTED.fullmatch(key)
    return None if found is None else f"{found[1]}/{found[2]}"


def worker_of(part: str) -> str:
    """A key's worker part without its digest (the audit trail shows the worker).

    Example:
        >>> worker_of("mailer@0123456789abcdef"), worker_of("first")
        ('mailer', 'first')
    """
    return re.sub(rf"{_DIGEST}$", "", part)


# -- outcomes ------------------------------------------------------------------------


def _to_json(key: str, outcome: object) -> str:
    """Serialise an outcome, or raise a TypeError naming the key."""
    try:
        return json.dumps(outcome, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"the outcome of effect {key!r} is not JSON-serialisable ({exc}); return JSON "
            "values (dict, list, str, int, float, bool, None), e.g. ids, not objects. "
            "Nothing was recorded."
        ) from exc


# -- Postgres ------------------------------------------------------------------------

_SETUP_KEY: LiteralString = "hashtext('lgsp_effects')"
"""The advisory key concurrent setups take turns on (two processes starting at once)."""
_PRESENT: LiteralString = (
    "SELECT to_regclass('lgsp_effects') IS NOT NULL, "
    "to_regclass('lgsp_effects_thread_id_idx') IS NOT NULL, "
    "EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('lgsp_effects') "
    "AND attname = 'state' AND NOT attisdropped)"
)
"""What of the schema is there (table, index, `state` column): a catalog read, no lock."""
_CREATE_TABLE: LiteralString = (
    "CREATE TABLE IF NOT EXISTS lgsp_effects ("
    " key text PRIMARY KEY,"
    " thread_id text,"
    " outcome jsonb NOT NULL,"
    " created_at timestamptz NOT NULL DEFAULT now(),"
    " state text NOT NULL DEFAULT 'done')"
)
_ADD_STATE: LiteralString = (
    # A table made by an earlier version: its rows are all recorded outcomes ('done').
    "ALTER TABLE lgsp_effects ADD COLUMN IF NOT EXISTS state text NOT NULL DEFAULT 'done'"
)
_CREATE_INDEX: LiteralString = (
    "CREATE INDEX IF NOT EXISTS lgsp_effects_thread_id_idx ON lgsp_effects (thread_id)"
)
# A claim inserts the key with a placeholder outcome. Another transaction inserting the
# same key waits on this row until we commit or roll back; nobody ever sees the
# placeholder, because the same transaction replaces it before committing.
_CLAIM: LiteralString = (
    "INSERT INTO lgsp_effects (key, thread_id, outcome) VALUES (%s, %s, 'null'::jsonb) "
    "ON CONFLICT (key) DO NOTHING RETURNING true"
)
_LOOKUP: LiteralString = "SELECT outcome FROM lgsp_effects WHERE key = %s"
_RECORD: LiteralString = "UPDATE lgsp_effects SET outcome = %s::jsonb WHERE key = %s RETURNING true"
_DELETE_THREAD: LiteralString = "DELETE FROM lgsp_effects WHERE thread_id = %s RETURNING true"

# `run_external`: the intent is committed before the call, the outcome after it. A
# session advisory lock on the key (held while the call runs, released by the pool's
# connection closing if the process dies) serialises executions of one key, so an intent
# found under the lock was left by an execution that died: the call is in doubt.
_KEY_LOCK: LiteralString = "SELECT pg_advisory_lock(hashtextextended('lgsp_effect:' || %s, 0))"
_KEY_UNLOCK: LiteralString = "SELECT pg_advisory_unlock(hashtextextended('lgsp_effect:' || %s, 0))"
_INTENT: LiteralString = (
    "INSERT INTO lgsp_effects (key, thread_id, outcome, state) "
    "VALUES (%s, %s, 'null'::jsonb, 'intent') ON CONFLICT (key) DO NOTHING RETURNING true"
)
_LOOKUP_STATE: LiteralString = "SELECT outcome, state FROM lgsp_effects WHERE key = %s"
_MARK: LiteralString = "UPDATE lgsp_effects SET state = %s WHERE key = %s RETURNING true"
_SETTLE: LiteralString = (
    "UPDATE lgsp_effects SET outcome = %s::jsonb, state = %s WHERE key = %s RETURNING true"
)
_FORGET_INTENT: LiteralString = (
    "DELETE FROM lgsp_effects WHERE key = %s AND state IN ('intent', 'in_doubt') RETURNING true"
)

DONE = "done"
"""The outcome was recorded after the call returned (or by `run`, in its transaction)."""
INTENT = "intent"
"""The call was about to run: an execution is in flight, or died before the record."""
IN_DOUBT = "in_doubt"
"""A re-run found an intent without an outcome, and paused on a review."""
RECONCILED = "reconciled"
"""In doubt; `reconcile(key)` said the call happened, and its answer is the outcome."""
REDONE = "redone"
"""In doubt; `reconcile` said it did not happen, or a reviewer chose to run it again."""
CONFIRMED = "confirmed"
"""In doubt; a reviewer confirmed it happened (the outcome is the reviewer's message)."""
SKIPPED = "skipped"
"""In doubt; a reviewer chose to skip it (the outcome is null, `run_external` returns None)."""
DOUBTED = frozenset({INTENT, IN_DOUBT, RECONCILED, REDONE, CONFIRMED, SKIPPED})
"""The states of an effect that was (or is) in doubt, or never recorded its outcome."""


@dataclass(frozen=True, slots=True)
class _Statement:
    """One statement on the transaction's cursor; the reply is `fetchone()`.

    `drive` uses a sync `Cursor`, `adrive` an `AsyncCursor`.
    """

    cursor: Cursor[TupleRow] | AsyncCursor[TupleRow]
    query: LiteralString
    params: tuple[Any, ...]
    fetch: bool = True
    """False for a statement that returns no rows (DDL)."""

    def run(self) -> Any:
        cursor = cast(Cursor[TupleRow], self.cursor)
        cursor.execute(self.query, self.params)
        return cursor.fetchone() if self.fetch else None

    async def arun(self) -> Any:
        cursor = cast(AsyncCursor[TupleRow], self.cursor)
        await cursor.execute(self.query, self.params)
        return await cursor.fetchone() if self.fetch else None


@dataclass(frozen=True, slots=True)
class _Effect:
    """The effect: `fn()` under `drive`, `await fn()` under `adrive`."""

    fn: Callable[[], Any]

    def run(self) -> Any:
        return self.fn()

    async def arun(self) -> Any:
        return await self.fn()


def _exactly_once(
    key: str, cursor: Cursor[TupleRow] | AsyncCursor[TupleRow], effect: _Effect
) -> Steps[Any]:
    """What `run` and `run_external` (and their async twins) do inside their transaction.

    It yields each statement and the call of the effect; `drive` or `adrive` performs
    them on `cursor` (a failure propagates, and the caller's transaction rolls back).
    """
    legacy = _legacy_key(key)
    if legacy is not None:  # recorded by an earlier version, before keys had the digest
        row = yield _Statement(cursor, _LOOKUP, (legacy,))
        if row is not None:
            return row[0]
    while True:
        if (yield _Statement(cursor, _CLAIM, (key, _thread_of(key)))) is not None:
            break  # the key is ours until we commit
        row = yield _Statement(cursor, _LOOKUP, (key,))
        if row is not None:
            return row[0]  # recorded by an earlier (committed) execution
        # The row was deleted between the two statements (delete_thread): claim again.
    payload = _to_json(key, (yield effect))
    yield _Statement(cursor, _RECORD, (payload, key))
    return json.loads(payload)


def _setup_steps(cursor: Cursor[TupleRow] | AsyncCursor[TupleRow], seconds: float) -> Steps[bool]:
    """Create or migrate `lgsp_effects`, skipping what the catalog shows is there.

    Inside the caller's transaction; returns False when nothing needed doing (then no
    lock was taken). DDL that must run waits at most `seconds` for its locks
    (`SET LOCAL lock_timeout`), else `LockNotAvailable` propagates.
    """
    if all((yield _Statement(cursor, _PRESENT, ()))):
        return False
    yield _Statement(cursor, LOCK_TIMEOUT, lock_timeout_params(seconds))
    yield _Statement(cursor, "SELECT pg_advisory_xact_lock(" + _SETUP_KEY + ")", ())
    # Under the lock: what a concurrent setup left (it may have done everything).
    table, index, column = yield _Statement(cursor, _PRESENT, ())
    if not table:
        yield _Statement(cursor, _CREATE_TABLE, (), fetch=False)
    elif not column:
        yield _Statement(cursor, _ADD_STATE, (), fetch=False)
    if not index:
        yield _Statement(cursor, _CREATE_INDEX, (), fetch=False)
    return True


_DOUBT_DESCRIPTION = (
    "This call may already have happened: an earlier execution stopped between the call "
    "and the record of its outcome. Confirm (respond with its outcome, recorded as done), "
    "run again (approve), or skip (reject)."
)


def _effect_name(key: str) -> str:
    parts = key.split("/")
    return "/".join(parts[4:]) if len(parts) >= 5 else key


def _ask_reviewer(key: str) -> tuple[str, Any]:
    """Pause on a review of an in-doubt effect; return (the state to record, its outcome).

    The state is `REDONE` (run again: the outcome is None, to be replaced by the call's),
    `CONFIRMED` (the reviewer's message, as JSON if it parses, else the text) or
    `SKIPPED` (None).
    """
    from langgraph_supervisor_pro.review._gate import request_review, review_payload

    try:
        config = get_config()
    except RuntimeError:
        raise EffectInDoubtError(key) from None
    hop = hop_context(config)
    parts = key.split("/")
    payload = review_payload(
        kind="tool",
        action=f"effect:{_effect_name(key)}",
        args={"key": key},
        description=_DOUBT_DESCRIPTION,
        allowed=["approve", "respond", "reject"],
        context={
            "task": hop.task if hop else "",
            "worker": hop.worker if hop else (worker_of(parts[3]) if len(parts) >= 5 else None),
            "reason": "effect in doubt: intent recorded, no outcome",
            "step": hop.step if hop else None,
            "turn": hop.turn if hop else None,
            "thread_id": (config.get("configurable") or {}).get("thread_id"),
            "path": list(hop.path) if hop else [],
        },
    )
    decision = request_review(payload)
    if decision.type == "approve":
        return REDONE, None
    if decision.type == "respond":
        try:
            outcome = json.loads(decision.message)
        except ValueError:
            outcome = decision.message
        return CONFIRMED, outcome
    return SKIPPED, None


def _call_and_record(
    key: str, cursor: Cursor[TupleRow] | AsyncCursor[TupleRow], effect: _Effect, state: str
) -> Steps[Any]:
    """Call the effect (its intent is committed), then record its outcome as `state`.

    An effect that raises leaves no record (the intent is withdrawn: the next execution
    calls it again). An outcome that is not JSON keeps the intent: the call happened but
    its outcome could not be recorded, so the next execution finds it in doubt.
    """
    try:
        result = yield effect
    except Exception:
        yield _Statement(cursor, _FORGET_INTENT, (key,))
        raise
    payload = _to_json(key, result)
    yield _Statement(cursor, _SETTLE, (payload, state, key))
    return json.loads(payload)


def _at_least_once(
    key: str,
    cursor: Cursor[TupleRow] | AsyncCursor[TupleRow],
    effect: _Effect,
    reconcile: Callable[[str], Any] | None,
) -> Steps[Any]:
    """What `run_external` (and its async twin) do under the key's advisory lock.

    Each statement commits on its own (the connection is in autocommit): the intent
    before the call, the outcome after it.
    """
    legacy = _legacy_key(key)
    if legacy is not None:  # recorded by an earlier version, before keys had the digest
        row = yield _Statement(cursor, _LOOKUP, (legacy,))
        if row is not None:
            return row[0]
    while True:
        if (yield _Statement(cursor, _INTENT, (key, _thread_of(key)))) is not None:
            return (yield from _call_and_record(key, cursor, effect, DONE))
        row = yield _Statement(cursor, _LOOKUP_STATE, (key,))
        if row is None:
            continue  # deleted between the two statements (delete_thread): claim again
        outcome, state = row
        if state not in (INTENT, IN_DOUBT):
            return outcome  # recorded (or settled) by an earlier execution
        break
    # Under the key's lock, an intent without an outcome was left by an execution that
    # died between the call and the record: the call may have happened.
    if state == INTENT:
        _log.warning(
            "effect %r is in doubt: an earlier execution recorded its intent but no outcome; %s",
            key,
            "asking reconcile()" if reconcile is not None else "pausing on a review",
        )
    if reconcile is not None:
        found = yield MaybeAwait(partial(reconcile, key))
        if found is not None:
            payload = _to_json(key, found)
            yield _Statement(cursor, _SETTLE, (payload, RECONCILED, key))
            return json.loads(payload)
        return (yield from _call_and_record(key, cursor, effect, REDONE))
    if state == INTENT:
        yield _Statement(cursor, _MARK, (IN_DOUBT, key))
    settled, outcome = _ask_reviewer(key)
    if settled == REDONE:
        return (yield from _call_and_record(key, cursor, effect, REDONE))
    payload = _to_json(key, outcome)
    yield _Statement(cursor, _SETTLE, (payload, settled, key))
    return json.loads(payload)


class PostgresEffects:
    """Records side-effect outcomes in Postgres (`lgsp_effects`), synchronously.

    Open it with `open_effects(url)`, or build it over your own `ConnectionPool`
    (opened with `autocommit=True`, like the checkpointer's) and call `setup()` once.

    Args:
        pool: The connection pool; each `run` borrows one connection for one
            transaction.

    Example:
        ```python
        with open_effects("postgresql://localhost/app") as effects:
            outcome = effects.run("t-1/1/1/cashier/charge", lambda conn: conn.execute(
                "INSERT INTO payments (amount) VALUES (42) RETURNING id").fetchone()["id"])
        ```
    """

    def __init__(self, pool: ConnectionPool[Any]) -> None:
        self.pool = pool

    def setup(self, *, lock_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
        """Create or migrate the `lgsp_effects` table and its index if missing (idempotent).

        What the catalog shows is there is skipped, without taking a lock, so opening
        never waits on effects running elsewhere. DDL that must run (a new database, or a
        table made by an earlier version, which gains the `state` column) waits at most
        `lock_timeout` seconds for its locks.

        Raises:
            SetupLockError: The DDL waited longer than `lock_timeout`; the error names
                the sessions holding the lock.

        Example:
            ```python
            effects.setup()  # a no-op once the table is there
            ```
        """
        with self.pool.connection() as conn:
            cur = conn.cursor(row_factory=tuple_row)
            try:
                with conn.transaction():
                    drive(_setup_steps(cur, lock_timeout))
            except LockNotAvailable:
                raise set_up_lock_error(conn, "lgsp_effects", _SETUP_KEY, lock_timeout) from None

    def run(self, key: str, effect: Callable[[Connection[Any]], T]) -> T:
        """Run `effect(conn)` once for `key`, atomically with the record of its outcome.

        In one transaction: claim the key (waiting for a concurrent execution of the
        same key to finish), return the recorded outcome if there is one, else call
        `effect(conn)` and record what it returns. The effect does its writes with
        `conn`, inside the transaction, and must not commit: its writes and the record
        commit together, so a crash anywhere leaves both or neither, and a
        re-execution returns the recorded outcome without calling `effect`.

        Args:
            key: The idempotency key, usually `effect_key("...")`.
            effect: Performs the effect with the connection it is given (rows come
                back as dicts with `open_effects`); returns a JSON-serialisable outcome.

        Returns:
            The outcome as it reads back from JSON (recorded now, or earlier).

        Raises:
            TypeError: The outcome is not JSON-serialisable (the transaction, the
                effect's writes included, rolls back).
            ValueError: `key` is empty.

        Example:
            ```python
            def charge(conn):
                row = conn.execute(
                    "INSERT INTO payments (amount) VALUES (42) RETURNING id").fetchone()
                return {"payment_id": row["id"]}
            effects.run("t-1/1/1/cashier/charge", charge)
            # {'payment_id': 1}
            effects.run("t-1/1/1/cashier/charge", charge)  # not charged again
            # {'payment_id': 1}
            ```
        """
        key = _checked_key(key)
        with self.pool.connection() as conn, conn.transaction():
            cur = conn.cursor(row_factory=tuple_row)
            return cast(T, drive(_exactly_once(key, cur, _Effect(lambda: effect(conn)))))

    def run_external(
        self,
        key: str,
        effect: Callable[[str], T],
        *,
        reconcile: Callable[[str], T | None] | None = None,
    ) -> T:
        """Run an effect outside the database once for `key`, recording its outcome after.

        For HTTP calls, emails, messages: `effect(key)` is called with the key, to
        forward as the remote service's idempotency key (e.g. an `Idempotency-Key`
        header). Before the call, an intent is committed under the key (a row in state
        `intent`, its own short transaction); after it, the outcome (state `done`). A
        session advisory lock on the key is held meanwhile, so a concurrent execution of
        the same key waits and then gets the outcome; no transaction stays open while
        the effect runs.

        A re-execution that finds an intent without an outcome knows an earlier one
        stopped between the call and the record (a crash, a kill): the call is *in
        doubt*, and is never repeated silently. A warning goes to the
        `langgraph_supervisor_pro.effects` logger, and then:

        - with `reconcile`, `reconcile(key)` asks the provider whether the call
          happened: its answer, if not None, is recorded (state `reconciled`) and
          returned; None means it did not happen, and the effect runs (state `redone`);
        - without it, inside a graph run, the hop pauses on a review (the HITL schema of
          `request_review`, action `effect:<name>`, args `{"key": key}`): `respond`
          confirms it happened, its message (JSON if it parses, else the text) recorded
          as the outcome (state `confirmed`) and returned; `approve` runs it again
          (`redone`); `reject` skips it (state `skipped`, returns None);
        - outside a graph run, `EffectInDoubtError` names the key.

        An effect that raises leaves no record (the next execution calls it again).

        Args:
            key: The idempotency key, usually `effect_key("...")`.
            effect: Performs the effect, given the key; returns a JSON-serialisable
                outcome.
            reconcile: Asks the remote whether the call made under `key` happened:
                returns its outcome (JSON-serialisable) if it did, None if it did not.
                Called only for an effect in doubt.

        Returns:
            The outcome as it reads back from JSON (recorded now, or earlier); None for
            an effect a reviewer skipped.

        Raises:
            TypeError: The outcome is not JSON-serialisable (nothing is recorded but
                the intent: the next execution finds the effect in doubt).
            ValueError: `key` is empty.
            EffectInDoubtError: The effect is in doubt, there is no `reconcile`, and
                this is not a graph run (no review can be asked).

        Example:
            ```python
            effects.run_external(
                effect_key("email"),
                lambda key: mailer.send(to="a@example.com", idempotency_key=key),
                reconcile=lambda key: mailer.find(idempotency_key=key),  # None: not sent
            )
            ```
        """
        key = _checked_key(key)
        with self.pool.connection() as conn:
            cur = conn.cursor(row_factory=tuple_row)
            cur.execute(_KEY_LOCK, (key,))
            try:
                steps = _at_least_once(key, cur, _Effect(lambda: effect(key)), reconcile)
                return cast(T, drive(steps))
            finally:
                if not conn.closed and not conn.broken:
                    cur.execute(_KEY_UNLOCK, (key,))

    def delete_thread(self, thread_id: str) -> int:
        """Delete the outcomes recorded for the keys of one thread; return how many.

        Example:
            ```python
            effects.delete_thread("t-1")
            # 2
            ```
        """
        with self.pool.connection() as conn:
            return len(conn.execute(_DELETE_THREAD, (str(thread_id),)).fetchall())


class AsyncPostgresEffects:
    """The async twin of `PostgresEffects`, over an `AsyncConnectionPool`.

    Open it with `aopen_effects(url)`. Effects are async functions taking an
    `AsyncConnection` (`arun`) or the key (`arun_external`).

    Args:
        pool: The async connection pool (opened with `autocommit=True`).

    Example:
        ```python
        async with aopen_effects("postgresql://localhost/app") as effects:
            async def charge(conn):
                cur = await conn.execute(
                    "INSERT INTO payments (amount) VALUES (42) RETURNING id")
                return (await cur.fetchone())["id"]
            payment_id = await effects.arun(effect_key("charge"), charge)
        ```
    """

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        self.pool = pool

    async def setup(self, *, lock_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
        """Async twin of `PostgresEffects.setup` (skips what is there; bounded lock waits).

        Example:
            ```python
            await effects.setup()
            ```
        """
        async with self.pool.connection() as conn:
            cur = conn.cursor(row_factory=tuple_row)
            try:
                async with conn.transaction():
                    await adrive(_setup_steps(cur, lock_timeout))
            except LockNotAvailable:
                error = await aset_up_lock_error(conn, "lgsp_effects", _SETUP_KEY, lock_timeout)
                raise error from None

    async def arun(self, key: str, effect: Callable[[AsyncConnection[Any]], Awaitable[T]]) -> T:
        """Async twin of `PostgresEffects.run`: exactly-once for writes made with `conn`.

        Example:
            ```python
            async def charge(conn):
                await conn.execute("INSERT INTO payments (amount) VALUES (42)")
                return "charged"
            await effects.arun("t-1/1/1/cashier/charge", charge)
            # 'charged'
            ```
        """
        key = _checked_key(key)
        async with self.pool.connection() as conn, conn.transaction():
            cur = conn.cursor(row_factory=tuple_row)
            return cast(T, await adrive(_exactly_once(key, cur, _Effect(lambda: effect(conn)))))

    async def arun_external(
        self,
        key: str,
        effect: Callable[[str], Awaitable[T]],
        *,
        reconcile: Callable[[str], Awaitable[T | None] | T | None] | None = None,
    ) -> T:
        """Async twin of `PostgresEffects.run_external` (never silently twice across a crash).

        `reconcile` may be an async function or a plain one.

        Example:
            ```python
            await effects.arun_external(effect_key("email"), send_email)
            ```
        """
        key = _checked_key(key)
        async with self.pool.connection() as conn:
            cur = conn.cursor(row_factory=tuple_row)
            await cur.execute(_KEY_LOCK, (key,))
            try:
                steps = _at_least_once(key, cur, _Effect(lambda: effect(key)), reconcile)
                return cast(T, await adrive(steps))
            finally:
                if not conn.closed and not conn.broken:
                    await cur.execute(_KEY_UNLOCK, (key,))

    async def adelete_thread(self, thread_id: str) -> int:
        """Async twin of `PostgresEffects.delete_thread`."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(_DELETE_THREAD, (str(thread_id),))
            return len(await cur.fetchall())


def _check_url(url: str, opener: str) -> str:
    if isinstance(url, str) and scheme_of(url) not in POSTGRES_SCHEMES:
        raise ValueError(
            f"{opener} needs a postgresql:// (or postgres://) URL, got {mask_url(url)!r}; "
            "without Postgres, use StoreEffects over a LangGraph store (open_store(url))"
        )
    return url


@contextmanager
def open_effects(
    url: str,
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> Iterator[PostgresEffects]:
    """Open `PostgresEffects` on a pooled connection to `url`; close the pool on exit.

    Args:
        url: `postgresql://user:password@host:5432/db` (or `postgres://...`). The
            database whose writes the effects make exactly-once is this one.
        pool_size: Maximum number of pooled connections (at least 1).
        setup: Create the `lgsp_effects` table if missing.
        connect_timeout: Seconds to wait for Postgres before giving up (a finite
            number > 0), on opening and for a pooled connection at every later use.

    Yields:
        The effects recorder.

    Raises:
        ValueError: Not a Postgres URL, or an option is out of range.
        ConnectionError: The server cannot be reached (password masked).

    Example:
        ```python
        with open_effects("postgresql://localhost/app") as effects:
            effects.run("t-1/1/1/w/charge", charge)
        ```
    """
    validate_options(_check_url(url, "open_effects"), pool_size, connect_timeout)
    with postgres_pool(url.strip(), pool_size, connect_timeout) as pool:
        effects = PostgresEffects(pool)
        if setup:
            effects.setup(lock_timeout=connect_timeout)
        yield effects


@asynccontextmanager
async def aopen_effects(
    url: str,
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    setup: bool = True,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> AsyncIterator[AsyncPostgresEffects]:
    """Open `AsyncPostgresEffects`; the async twin of `open_effects`.

    Args:
        url: `postgresql://user:password@host:5432/db` (or `postgres://...`).
        pool_size: Maximum number of pooled connections (at least 1).
        setup: Create the `lgsp_effects` table if missing.
        connect_timeout: Seconds to wait for Postgres before giving up (a finite
            number > 0), on opening and for a pooled connection at every later use.

    Yields:
        The async effects recorder.

    Raises:
        ValueError: Not a Postgres URL, or an option is out of range.
        ConnectionError: The server cannot be reached (password masked).

    Example:
        ```python
        async with aopen_effects("postgresql://localhost/app") as effects:
            await effects.arun("t-1/1/1/w/charge", acharge)
        ```
    """
    validate_options(_check_url(url, "aopen_effects"), pool_size, connect_timeout)
    async with apostgres_pool(url.strip(), pool_size, connect_timeout) as pool:
        effects = AsyncPostgresEffects(pool)
        if setup:
            await effects.setup(lock_timeout=connect_timeout)
        yield effects


# -- LangGraph store -----------------------------------------------------------------


def _store_namespace(key: str) -> tuple[str, ...]:
    """`("lgsp", "effects", <thread>)` for a key built by `effect_key`."""
    head, sep, _ = key.partition("/")
    # Store namespace labels cannot contain "." (the head never contains "/").
    return (*_STORE_ROOT, head.replace(".", "%2E")) if sep and head else _STORE_ROOT


def _recorded(value: dict[str, Any]) -> Any:
    return value["outcome"]


class StoreEffects:
    """Records side-effect outcomes in a LangGraph store: for runs without Postgres.

    Each outcome is stored under the namespace `("lgsp", "effects", <thread_id>)`
    (a `.` in the thread id becomes `%2E`) with the full key as the item key and
    `{"outcome": ...}` as the value.

    Guarantee: at-least-once. A crash after the effect returns but before the store
    write leaves no record, and the re-execution runs the effect again (it is given
    the key, to forward as the remote's idempotency key). Once the outcome is
    written, re-executions return it without running the effect. Concurrent
    executions of one key are not serialised. Use `PostgresEffects` when the effect
    writes to Postgres: it is exactly-once.

    Args:
        store: Any `BaseStore` (`InMemoryStore`, `PostgresStore`, `SqliteStore`...),
            e.g. from `open_store(url)`, or the graph's store (`get_store()`).

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> effects = StoreEffects(InMemoryStore())
        >>> effects.run("t-1/1/1/mailer/email", lambda key: {"sent": key})
        {'sent': 't-1/1/1/mailer/email'}
        >>> effects.run("t-1/1/1/mailer/email", lambda key: {"sent": "again"})
        {'sent': 't-1/1/1/mailer/email'}
    """

    def __init__(self, store: BaseStore) -> None:
        self.store = store

    @staticmethod
    def thread_namespace(thread_id: str) -> tuple[str, ...]:
        """The store namespace holding the outcomes of `thread_id`'s effects.

        Args:
            thread_id: The run's thread id.

        Returns:
            `("lgsp", "effects", <thread_id, escaped as in the keys>)`.

        Example:
            >>> StoreEffects.thread_namespace("order.7")
            ('lgsp', 'effects', 'order%2E7')
        """
        return _store_namespace(f"{_part(thread_id)}/")

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> int:
        """Copy the outcomes recorded for one thread's keys to another's; return how many.

        For a thread copied with the checkpointer's `copy_thread` on SQLite or memory
        (on Postgres the saver copies the `lgsp_effects` rows itself): each key's thread
        part becomes the target's, so a hop resumed in the copy gets the recorded
        outcome instead of running its effect again.

        Args:
            source_thread_id: The thread copied.
            target_thread_id: The copy, which must have no outcome recorded yet.

        Returns:
            How many outcomes were copied.

        Raises:
            ValueError: The target already has outcomes, the ids are equal or empty, or
                one holds a character no backend stores (NUL, a surrogate).
            TypeError: An id is not a str.

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> effects = StoreEffects(InMemoryStore())
            >>> effects.run("t-1/1/1/mailer/email", lambda key: "sent")
            'sent'
            >>> effects.copy_thread("t-1", "t-2")
            1
            >>> effects.run("t-2/1/1/mailer/email", lambda key: "sent again")
            'sent'
        """
        return drive(self._copy(source_thread_id, target_thread_id, "StoreEffects.copy_thread"))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> int:
        """Async twin of `copy_thread`.

        Example:
            ```python
            await effects.acopy_thread("t-1", "t-2")
            # 1
            ```
        """
        return await adrive(
            self._copy(source_thread_id, target_thread_id, "StoreEffects.acopy_thread")
        )

    def _copy(self, source_thread_id: str, target_thread_id: str, where: str) -> Steps[int]:
        source, target = checked_threads(source_thread_id, target_thread_id, where)
        store = self.store
        source_ns, target_ns = self.thread_namespace(source), self.thread_namespace(target)
        taken = yield Call(
            partial(store.search, target_ns, limit=1), partial(store.asearch, target_ns, limit=1)
        )
        if taken:
            raise ValueError(
                f"{where}: thread {target!r} already has recorded outcomes in the store; "
                "give the copy's new thread id, or delete those items first"
            )
        items: list[Any] = []
        while True:
            page = yield Call(
                partial(store.search, source_ns, limit=_PAGE, offset=len(items)),
                partial(store.asearch, source_ns, limit=_PAGE, offset=len(items)),
            )
            items.extend(page)
            if len(page) < _PAGE:
                break
        part = _part(target)
        copied = 0
        for item in items:
            _, sep, rest = item.key.partition("/")
            if tuple(item.namespace) != source_ns or not sep:
                continue
            key = f"{part}/{rest}"
            yield Call(
                partial(store.put, target_ns, key, item.value),
                partial(store.aput, target_ns, key, item.value),
            )
            copied += 1
        return copied

    def run(self, key: str, effect: Callable[[str], T]) -> T:
        """Return the outcome recorded for `key`, or run `effect(key)` and record it.

        Args:
            key: The idempotency key, usually `effect_key("...")`.
            effect: Performs the effect, given the key; returns a JSON-serialisable
                outcome.

        Returns:
            The outcome as it reads back from JSON (recorded now, or earlier).

        Raises:
            TypeError: The outcome is not JSON-serialisable (nothing is recorded).
            ValueError: `key` is empty.

        Example:
            ```python
            effects.run(effect_key("email"), lambda key: send_email(idempotency_key=key))
            ```
        """
        return cast(T, drive(self._once(key, _Effect(lambda: effect(key)))))

    async def arun(self, key: str, effect: Callable[[str], Awaitable[T]]) -> T:
        """Async twin of `run`; `effect` is an async function of the key.

        Example:
            ```python
            await effects.arun(effect_key("email"), send_email_async)
            ```
        """
        return cast(T, await adrive(self._once(key, _Effect(lambda: effect(key)))))

    def _once(self, key: str, effect: _Effect) -> Steps[Any]:
        """`run` for both drivers: the recorded outcome, or the effect's, recorded."""
        store = self.store
        namespace = _store_namespace(_checked_key(key))
        legacy = _legacy_key(key)
        if legacy is not None:  # recorded by an earlier version (same thread namespace)
            old = yield Call(
                partial(store.get, namespace, legacy), partial(store.aget, namespace, legacy)
            )
            if old is not None:
                return _recorded(old.value)
        item = yield Call(partial(store.get, namespace, key), partial(store.aget, namespace, key))
        if item is not None:
            return _recorded(item.value)
        value = {"outcome": json.loads(_to_json(key, (yield effect)))}
        yield Call(
            partial(store.put, namespace, key, value), partial(store.aput, namespace, key, value)
        )
        return _recorded(value)

"""Side effects that run once per idempotency key, even across a crash and a resume.

`PostgresEffects.run` is exactly-once, `run_external` never silently twice, `StoreEffects`
at-least-once across a crash.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/effects/
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, LiteralString, TypeAlias, TypeVar, cast
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

T = TypeVar("T")

EFFECTS_LOGGER = "langgraph_supervisor_pro.effects"
"""The logger an effect found in doubt is reported on (level WARNING)."""
_log = logging.getLogger(EFFECTS_LOGGER)

_STORE_ROOT = ("lgsp", "effects")
_PAGE = 500  # outcomes `StoreEffects.copy_thread` reads per store search


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

    In a worker hop: `"<thread_id>/<turn>/<step>/<worker>@<digest>/<key>"` (the digest of
    the hop's prompt: a re-run of the hop gets the same key, any other hop a new one); in
    another node: `"<thread_id>/0/<langgraph_step>/<node>/<key>"` (a subgraph's steps
    restart at each invocation: put what tells them apart into `key`).

    Args:
        key: The caller's name for the effect within the hop, e.g. `"send-email"`.
        config: The run's config; by default the config of the node or worker agent
            this is called from (`langgraph.config.get_config()`).

    Returns:
        The key to pass to `PostgresEffects.run` (or its siblings).

    Raises:
        ValueError: `key` is empty, or there is no run, or it has no `thread_id`, or its
            config names no step and node.
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
    turn, step, node = 0, metadata.get("langgraph_step"), metadata.get("langgraph_node")
    hop = hop_context(config)
    if hop is not None:  # inside a worker hop: the hop the worker node passed down
        digest = "" if hop.digest is None else f"@{hop.digest}"
        turn, step, node = hop.turn, hop.step, f"{hop.worker}{digest}"
    elif metadata.get("lgsp_step") is not None:  # a config given by hand (nodes clear it)
        turn, step, node = (
            metadata.get("lgsp_turn", 0),
            metadata["lgsp_step"],
            metadata.get("lgsp_worker"),
        )
    if step is None or not node:
        raise ValueError(
            f"effect_key({key!r}): the config names no step and node (metadata "
            "lgsp_step/lgsp_worker or langgraph_step/langgraph_node); call it inside a "
            "worker or a graph node, or pass the config that node received"
        )
    return f"{_part(str(thread_id))}/{turn}/{step}/{_part(str(node))}/{key}"


# A key `effect_key` built inside a hop: its worker part ends with the prompt's digest.
_DIGEST = r"@[0-9a-f]{16}"
_DIGESTED = re.compile(rf"([^/]*/[0-9]+/[0-9]+/[A-Za-z][A-Za-z0-9_-]{{0,63}}){_DIGEST}/(.+)", re.S)


def _legacy_key(key: str) -> str | None:
    """The key an earlier version built for the same hop (no digest), if `key` has one."""
    found = _DIGESTED.fullmatch(key)
    return None if found is None else f"{found[1]}/{found[2]}"


def worker_of(part: str) -> str:
    """A key's worker part without its digest (the audit trail shows the worker)."""
    return re.sub(rf"{_DIGEST}$", "", part)


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
    "CREATE TABLE IF NOT EXISTS lgsp_effects ( key text PRIMARY KEY, thread_id text,"
    " outcome jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),"
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
_LOOKUP: LiteralString = "SELECT outcome, state FROM lgsp_effects WHERE key = %s"
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
_MARK: LiteralString = "UPDATE lgsp_effects SET state = %s WHERE key = %s RETURNING true"
_SETTLE: LiteralString = (
    "UPDATE lgsp_effects SET outcome = %s::jsonb, state = %s WHERE key = %s RETURNING true"
)
_FORGET_INTENT: LiteralString = (
    "DELETE FROM lgsp_effects WHERE key = %s AND state IN ('intent', 'in_doubt') RETURNING true"
)

DONE = "done"  # an effect row's states: recorded after the call (or by `run`)
INTENT = "intent"  # about to call (in flight, or died before the record)
IN_DOUBT = "in_doubt"  # an intent a re-run found, paused on a review
RECONCILED = "reconciled"  # settled by `reconcile`: it happened
REDONE = "redone"  # settled by running it again
CONFIRMED = "confirmed"  # a reviewer said it happened (the outcome is their message)
SKIPPED = "skipped"  # a reviewer skipped it (the outcome is null)


_Cursor: TypeAlias = "Cursor[TupleRow] | AsyncCursor[TupleRow]"


@dataclass(frozen=True, slots=True)
class _Statement:
    """One statement on a cursor (`Cursor` under `drive`, `AsyncCursor` under `adrive`)."""

    cursor: _Cursor
    query: LiteralString
    params: tuple[Any, ...] = ()

    def run(self) -> Any:
        cursor = cast(Cursor[TupleRow], self.cursor)
        cursor.execute(self.query, self.params)
        return cursor.fetchone() if cursor.description else None  # DDL returns no rows

    async def arun(self) -> Any:
        cursor = cast(AsyncCursor[TupleRow], self.cursor)
        await cursor.execute(self.query, self.params)
        return await cursor.fetchone() if cursor.description else None


def _effect(fn: Callable[[], Any]) -> Call:
    """The effect's call: `fn()` under `drive`, `await fn()` under `adrive`."""
    return Call(fn, fn)


def _claim(key: str, cursor: _Cursor, insert: LiteralString) -> Steps[tuple[Any, str] | None]:
    """Insert the key's row (`_CLAIM` or `_INTENT`): None, else the recorded (outcome, state)."""
    legacy = _legacy_key(key)  # an earlier version's key (no digest) is looked up first
    row = None if legacy is None else (yield _Statement(cursor, _LOOKUP, (legacy,)))
    if row is not None:
        return row[0], DONE
    while (yield _Statement(cursor, insert, (key, _thread_of(key)))) is None:
        row = yield _Statement(cursor, _LOOKUP, (key,))
        if row is not None:
            return cast(tuple[Any, str], row)  # recorded by an earlier execution
        # Deleted between the two statements (delete_thread): claim again.
    return None  # the key is ours (under `run`, until we commit)


def _exactly_once(key: str, cursor: _Cursor, effect: Call) -> Steps[Any]:
    """`run` (and `arun`) inside its transaction; a failure rolls the transaction back."""
    row = yield from _claim(key, cursor, _CLAIM)
    if row is not None:
        return row[0]
    return (yield from _settle(key, cursor, (yield effect), DONE))


def _setup_steps(cursor: _Cursor, seconds: float) -> Steps[bool]:
    """Create or migrate `lgsp_effects` in the caller's transaction; False if all was there."""
    if all((yield _Statement(cursor, _PRESENT))):
        return False  # no lock taken
    yield _Statement(cursor, LOCK_TIMEOUT, lock_timeout_params(seconds))
    yield _Statement(cursor, "SELECT pg_advisory_xact_lock(" + _SETUP_KEY + ")")
    # Under the lock: what a concurrent setup left (it may have done everything).
    table, index, column = yield _Statement(cursor, _PRESENT)
    if not table:
        yield _Statement(cursor, _CREATE_TABLE)
    elif not column:
        yield _Statement(cursor, _ADD_STATE)
    if not index:
        yield _Statement(cursor, _CREATE_INDEX)
    return True


def _ask_reviewer(key: str) -> tuple[str, Any]:
    """Pause on a review of an in-doubt effect; return (the state to record, its outcome)."""
    from langgraph_supervisor_pro.review._gate import request_review, review_payload

    try:
        config = get_config()
    except RuntimeError:
        raise EffectInDoubtError(key) from None
    hop = hop_context(config)
    parts = key.split("/")
    name, worker = ("/".join(parts[4:]), worker_of(parts[3])) if len(parts) >= 5 else (key, None)
    payload = review_payload(
        kind="tool",
        action=f"effect:{name}",
        args={"key": key},
        description=(
            "This call may already have happened: an earlier execution stopped between the "
            "call and the record of its outcome. Confirm (respond with its outcome, recorded "
            "as done), run again (approve), or skip (reject)."
        ),
        allowed=["approve", "respond", "reject"],
        context={
            "task": hop.task if hop else "",
            "worker": hop.worker if hop else worker,
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


def _settle(key: str, cursor: _Cursor, outcome: object, state: str) -> Steps[Any]:
    """Record `outcome` in state `state`; return it as it reads back from JSON."""
    payload = _to_json(key, outcome)
    yield _Statement(cursor, _SETTLE, (payload, state, key))
    return json.loads(payload)


def _call_and_record(key: str, cursor: _Cursor, effect: Call, state: str) -> Steps[Any]:
    """Call the effect (its intent is committed), then record its outcome as `state`.

    An effect that raises withdraws the intent (the next execution calls it again); an
    outcome that is not JSON keeps it (the call happened: the next execution is in doubt).
    """
    try:
        result = yield effect
    except Exception:
        yield _Statement(cursor, _FORGET_INTENT, (key,))
        raise
    return (yield from _settle(key, cursor, result, state))


def _at_least_once(
    key: str, cursor: _Cursor, effect: Call, reconcile: Callable[[str], Any] | None
) -> Steps[Any]:
    """`run_external` under the key's lock; autocommit: the intent before the call commits."""
    row = yield from _claim(key, cursor, _INTENT)
    if row is None:
        return (yield from _call_and_record(key, cursor, effect, DONE))
    outcome, state = row
    if state not in (INTENT, IN_DOUBT):
        return outcome  # recorded (or settled) by an earlier execution
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
            return (yield from _settle(key, cursor, found, RECONCILED))
        return (yield from _call_and_record(key, cursor, effect, REDONE))
    if state == INTENT:
        yield _Statement(cursor, _MARK, (IN_DOUBT, key))
    settled, outcome = _ask_reviewer(key)
    if settled == REDONE:
        return (yield from _call_and_record(key, cursor, effect, REDONE))
    return (yield from _settle(key, cursor, outcome, settled))


class PostgresEffects:
    """Records side-effect outcomes in Postgres (`lgsp_effects`), synchronously.

    Open it with `open_effects(url)`, or build it over your own `ConnectionPool` (opened
    with `autocommit=True`) and call `setup()` once.
    """

    def __init__(self, pool: ConnectionPool[Any]) -> None:
        self.pool = pool

    def setup(self, *, lock_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
        """Create or migrate the `lgsp_effects` table and its index if missing (idempotent).

        Raises:
            SetupLockError: DDL waited longer than `lock_timeout` seconds for its locks (the
                error names the sessions holding them).
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

        In one transaction: claim the key (a concurrent execution waits), return the
        recorded outcome, else call `effect(conn)` and record its outcome. The effect must
        not commit: its writes and the record commit together or not at all.

        Args:
            key: The idempotency key, usually `effect_key("...")`.
            effect: Performs the effect with the connection it is given; returns a
                JSON-serialisable outcome.

        Returns:
            The outcome as it reads back from JSON (recorded now, or earlier).

        Raises:
            TypeError: The outcome is not JSON-serialisable (everything rolls back).

        Example:
            ```python
            def charge(conn):
                return conn.execute("INSERT INTO payments VALUES (42) RETURNING id").fetchone()
            effects.run(effect_key("charge"), charge)  # a re-run returns the recorded row
            ```
        """
        key = _checked_key(key)
        with self.pool.connection() as conn, conn.transaction():
            cur = conn.cursor(row_factory=tuple_row)
            return cast(T, drive(_exactly_once(key, cur, _effect(lambda: effect(conn)))))

    def run_external(
        self,
        key: str,
        effect: Callable[[str], T],
        *,
        reconcile: Callable[[str], T | None] | None = None,
    ) -> T:
        """Run an effect outside the database once for `key`, recording its outcome after.

        An intent commits before `effect(key)` and the outcome after it, under a session
        advisory lock on the key. An intent found without an outcome is in doubt: settled
        by `reconcile(key)`, else by a review (`respond`: it happened, `approve`: run again,
        `reject`: skip), else `EffectInDoubtError`. An effect that raises leaves no record.

        Args:
            key: The idempotency key, usually `effect_key("...")`.
            effect: Performs the effect, given the key; returns a JSON-serialisable outcome.
            reconcile: Called only for an effect in doubt: the remote's outcome of the call
                made under `key` if it happened, None if it did not.

        Returns:
            The outcome as it reads back from JSON; None for an effect a reviewer skipped.

        Raises:
            TypeError: The outcome is not JSON-serialisable (the intent stays: in doubt).
            EffectInDoubtError: In doubt, without `reconcile`, outside a graph run.

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
                steps = _at_least_once(key, cur, _effect(lambda: effect(key)), reconcile)
                return cast(T, drive(steps))
            finally:
                if not conn.closed and not conn.broken:
                    cur.execute(_KEY_UNLOCK, (key,))

    def delete_thread(self, thread_id: str) -> int:
        """Delete the outcomes recorded for the keys of one thread; return how many."""
        with self.pool.connection() as conn:
            return len(conn.execute(_DELETE_THREAD, (str(thread_id),)).fetchall())


class AsyncPostgresEffects:
    """The async twin of `PostgresEffects`, over an `AsyncConnectionPool` (`aopen_effects`)."""

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        self.pool = pool

    async def setup(self, *, lock_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
        """Async twin of `PostgresEffects.setup`."""
        async with self.pool.connection() as conn:
            cur = conn.cursor(row_factory=tuple_row)
            try:
                async with conn.transaction():
                    await adrive(_setup_steps(cur, lock_timeout))
            except LockNotAvailable:
                error = await aset_up_lock_error(conn, "lgsp_effects", _SETUP_KEY, lock_timeout)
                raise error from None

    async def arun(self, key: str, effect: Callable[[AsyncConnection[Any]], Awaitable[T]]) -> T:
        """Async twin of `PostgresEffects.run`: exactly-once for writes made with `conn`."""
        key = _checked_key(key)
        async with self.pool.connection() as conn, conn.transaction():
            cur = conn.cursor(row_factory=tuple_row)
            return cast(T, await adrive(_exactly_once(key, cur, _effect(lambda: effect(conn)))))

    async def arun_external(
        self,
        key: str,
        effect: Callable[[str], Awaitable[T]],
        *,
        reconcile: Callable[[str], Awaitable[T | None] | T | None] | None = None,
    ) -> T:
        """Async twin of `PostgresEffects.run_external`; `reconcile` may be async or not."""
        key = _checked_key(key)
        async with self.pool.connection() as conn:
            cur = conn.cursor(row_factory=tuple_row)
            await cur.execute(_KEY_LOCK, (key,))
            try:
                steps = _at_least_once(key, cur, _effect(lambda: effect(key)), reconcile)
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
        url: `postgresql://user:password@host:5432/db` (or `postgres://...`): the
            database whose writes `run` makes exactly-once.
        pool_size: Maximum number of pooled connections (at least 1).
        setup: Create the `lgsp_effects` table if missing.
        connect_timeout: Seconds to wait for Postgres (a finite number > 0), on opening
            and for a pooled connection at every later use.

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
    """Open `AsyncPostgresEffects`; the async twin of `open_effects` (same arguments).

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


def _store_namespace(key: str) -> tuple[str, ...]:
    """`("lgsp", "effects", <thread>)` for a key built by `effect_key`."""
    head, sep, _ = key.partition("/")
    # Store namespace labels cannot contain "." (the head never contains "/").
    return (*_STORE_ROOT, head.replace(".", "%2E")) if sep and head else _STORE_ROOT


def _on(store: BaseStore, method: str, *args: Any, **kwargs: Any) -> Call:
    """`store.<method>(...)` under `drive`, `store.a<method>(...)` under `adrive`."""
    return Call(
        partial(getattr(store, method), *args, **kwargs),
        partial(getattr(store, f"a{method}"), *args, **kwargs),
    )


class StoreEffects:
    """Records side-effect outcomes in a LangGraph store: for runs without Postgres.

    Each outcome is stored as `{"outcome": ...}` under its key, in `thread_namespace`.
    At-least-once: a crash between the effect's return and the store write runs the
    effect again; concurrent executions of one key are not serialised.

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

        Example:
            >>> StoreEffects.thread_namespace("order.7")
            ('lgsp', 'effects', 'order%2E7')
        """
        return _store_namespace(f"{_part(thread_id)}/")

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> int:
        """Copy the outcomes recorded for one thread's keys to another's; return how many.

        For a thread copied by the checkpointer's `copy_thread` on SQLite or memory (on
        Postgres the saver copies `lgsp_effects` itself), so the copy finds them.

        Raises:
            ValueError: The target already has outcomes, or the ids are equal, empty or
                hold a character no backend stores (NUL, a surrogate).

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
        if (yield _on(store, "search", target_ns, limit=1)):
            raise ValueError(
                f"{where}: thread {target!r} already has recorded outcomes in the store; "
                "give the copy's new thread id, or delete those items first"
            )
        items: list[Any] = []
        while True:
            page = yield _on(store, "search", source_ns, limit=_PAGE, offset=len(items))
            items.extend(page)
            if len(page) < _PAGE:
                break
        part = _part(target)
        copied = [i for i in items if tuple(i.namespace) == source_ns and "/" in i.key]
        for item in copied:
            yield _on(store, "put", target_ns, f"{part}/{item.key.split('/', 1)[1]}", item.value)
        return len(copied)

    def run(self, key: str, effect: Callable[[str], T]) -> T:
        """Return the outcome recorded for `key`, or run `effect(key)` and record it.

        The outcome must be JSON-serialisable (else `TypeError`, nothing recorded).

        Example:
            ```python
            effects.run(effect_key("email"), lambda key: send_email(idempotency_key=key))
            ```
        """
        return cast(T, drive(self._once(key, _effect(lambda: effect(key)))))

    async def arun(self, key: str, effect: Callable[[str], Awaitable[T]]) -> T:
        """Async twin of `run`; `effect` is an async function of the key.

        Example:
            ```python
            await effects.arun(effect_key("email"), send_email_async)
            ```
        """
        return cast(T, await adrive(self._once(key, _effect(lambda: effect(key)))))

    def _once(self, key: str, effect: Call) -> Steps[Any]:
        """`run` for both drivers: the recorded outcome, or the effect's, recorded."""
        store = self.store
        namespace = _store_namespace(_checked_key(key))
        for recorded in (_legacy_key(key), key):  # an earlier version's key (no digest) first
            item = None if recorded is None else (yield _on(store, "get", namespace, recorded))
            if item is not None:
                return item.value["outcome"]
        outcome = json.loads(_to_json(key, (yield effect)))
        yield _on(store, "put", namespace, key, {"outcome": outcome})
        return outcome

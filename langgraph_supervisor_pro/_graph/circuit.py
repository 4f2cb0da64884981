"""Circuit breakers at run time (private): the state machine, and where its state lives.

The transitions (`admit`, `report`, `unavailable`) are pure; `Transact` applies one as a
single read-modify-write, locked on the namespace (docs/architecture.md, "Fallbacks and
circuit breakers", says what is atomic on which store).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, Literal, TypeVar

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_supervisor_pro._breakers import Breaker, BreakerState, CircuitState
from langgraph_supervisor_pro._internal.item_transaction import Change, ItemTransaction, item_value
from langgraph_supervisor_pro._internal.text import truncate

T = TypeVar("T")

KEY = "state"  # the item key of a breaker's state in its namespace

REASON_MAX_CHARS = 200

_LOCK_CLASS = "lgsp_breakers"  # the Postgres advisory lock's class (the namespace is the item)
_local: dict[tuple[str, ...], dict[str, Any]] = {}  # the states of graphs without a store
_process_lock = threading.Lock()


def forget_local() -> None:
    """Forget the per-process breaker states (graphs without a store). For tests."""
    with _process_lock:
        _local.clear()


@dataclass(frozen=True, slots=True)
class Read:
    """The stored state of one breaker (None when it never changed), without a lock."""

    store: BaseStore | None
    namespace: tuple[str, ...]

    def run(self) -> dict[str, Any] | None:
        """Read with the store's sync API."""
        if self.store is None:
            with _process_lock:
                found = _local.get(self.namespace)
                return dict(found) if found is not None else None
        return item_value(self.store.get(self.namespace, KEY))

    async def arun(self) -> dict[str, Any] | None:
        """Read with the store's async API."""
        if self.store is None or isinstance(self.store, InMemoryStore):
            return self.run()
        return item_value(await self.store.aget(self.namespace, KEY))


@dataclass(frozen=True, slots=True)
class Transact(Generic[T]):
    """Apply `change` to one breaker's state as one read-modify-write."""

    store: BaseStore | None
    namespace: tuple[str, ...]
    change: Change[T]

    def _item(self, store: BaseStore) -> ItemTransaction[T]:
        return ItemTransaction(
            store, self.namespace, KEY, self.change, lock=(_LOCK_CLASS, "/".join(self.namespace))
        )

    def run(self) -> T:
        """Under `drive`."""
        if self.store is None:
            with _process_lock:
                new, out = self.change(_local.get(self.namespace))
                if new is not None:
                    _local[self.namespace] = new
                return out
        return self._item(self.store).run()

    async def arun(self) -> T:
        """Under `adrive`."""
        if self.store is None:
            return self.run()  # memory only: no await while the lock is held
        return await self._item(self.store).arun()


@dataclass(frozen=True)
class Admission:
    """Whether a hop may run its agent."""

    state: CircuitState  # closed: it runs; half_open: it runs as the probe; open: refused
    detail: str = ""  # why it was refused
    transition: str | None = None  # the change it made, for the log (`open -> half_open`)
    failures: int = 0  # failed hops within the window (for a refused hop's ledger mark)


@dataclass(frozen=True)
class Outcome:
    """What a finished hop did to the breaker."""

    failures: int  # failed hops counted in the window after this one
    changed_to: Literal["closed", "open"] | None = None  # the state it moved the breaker to
    transition: str | None = None  # the change, for the log


def fresh(now: float) -> BreakerState:
    """A closed breaker with no failures."""
    return BreakerState(
        state="closed",
        failures=[],
        until=None,
        probe=None,
        probe_at=None,
        reason=None,
        changed_at=now,
    )


def clock_text(at: float, now: float) -> str:
    """A moment for people and models: `12:00:05 UTC` (with the date when not today)."""
    moment = datetime.fromtimestamp(at, UTC)
    if moment.date() == datetime.fromtimestamp(now, UTC).date():
        return moment.strftime("%H:%M:%S UTC")
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _recent(failures: Any, breaker: Breaker, now: float) -> list[dict[str, Any]]:
    """The failures within the window (at most `breaker.failures`), oldest first."""
    kept = [
        {"at": float(f["at"]), "hop": str(f["hop"])}
        for f in failures or ()
        if isinstance(f, Mapping) and now - float(f["at"]) < breaker.window
    ]
    return kept[-breaker.failures :]


def _probe_live(value: Mapping[str, Any], breaker: Breaker, now: float) -> bool:
    at = value.get("probe_at")
    return at is not None and now < float(at) + breaker.probe_lease


def unavailable(value: Mapping[str, Any] | None, breaker: Breaker, now: float) -> str | None:
    """Why no hop of the worker can run now (for the supervisor), or None when one can."""
    if value is None or value.get("state") == "closed":
        return None
    if value.get("state") == "open":
        until = float(value.get("until") or 0.0)
        return f"circuit open until {clock_text(until, now)}" if now < until else None
    if _probe_live(value, breaker, now):
        return "circuit half-open, a probe hop is in flight"
    return None


def admit(
    value: Mapping[str, Any] | None, breaker: Breaker, now: float, hop: str
) -> tuple[dict[str, Any] | None, Admission]:
    """Let a hop run, as the probe of a breaker whose cooldown is over, or refuse it."""
    if value is None or value.get("state") == "closed":
        return None, Admission("closed")
    if value.get("state") != "open" and value.get("probe") == hop:
        return None, Admission("half_open")  # this hop again: a re-run after an interrupt
    detail = unavailable(value, breaker, now)
    if detail is not None:
        failures = len(_recent(value.get("failures"), breaker, now))
        return None, Admission("open", detail, failures=failures)
    if value.get("state") == "open":
        probing = {**value, "state": "half_open", "probe": hop, "probe_at": now, "changed_at": now}
        return probing, Admission("half_open", transition="open -> half_open")
    taken = {**value, "probe": hop, "probe_at": now}
    return taken, Admission(
        "half_open", transition=f"half_open: probe {value.get('probe')} never reported; retaken"
    )


def report(
    value: Mapping[str, Any] | None,
    breaker: Breaker,
    now: float,
    admission: Admission,
    hop: str,
    failure: str | None,
) -> tuple[dict[str, Any] | None, Outcome]:
    """Record how an admitted hop ended (`failure` is None for a success)."""
    current: Mapping[str, Any] = value if value is not None else fresh(now)
    recent = _recent(current.get("failures"), breaker, now)
    probe = admission.state == "half_open"
    if probe:
        if current.get("state") != "half_open" or current.get("probe") != hop:
            # No longer the probe (it timed out and another hop took over): not counted.
            return None, Outcome(len(recent))
        if failure is None:
            return dict(fresh(now)), Outcome(
                0, "closed", "half_open -> closed (the probe succeeded)"
            )
    elif (
        admission.state != "closed"
        or failure is None
        or current.get("state") != "closed"
        or any(f["hop"] == hop for f in recent)
    ):
        # Refused, a success, the breaker changed meanwhile, or this hop was counted
        # already (it ran again after an interrupt): nothing to count.
        return None, Outcome(len(recent))
    failures = [*recent, {"at": now, "hop": hop}][-breaker.failures :]
    if not probe and len(failures) < breaker.failures:
        return {**current, "failures": failures}, Outcome(len(failures))
    opened = {
        **current,
        "state": "open",
        "failures": failures,
        "until": now + breaker.cooldown,
        "probe": None,
        "probe_at": None,
        "reason": truncate(failure, REASON_MAX_CHARS),
        "changed_at": now,
    }
    transition = (
        "half_open -> open (the probe failed)"
        if probe
        else f"closed -> open ({len(failures)} failed hops within {breaker.window:g}s)"
    )
    return opened, Outcome(len(failures), "open", transition)

"""The breaker state machine (pure transitions) and where its state lives (`Transact`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langgraph_supervisor_pro._breakers import Breaker, breaker_namespace
from langgraph_supervisor_pro._graph.circuit import (
    Admission,
    Read,
    Transact,
    admit,
    clock_text,
    forget_local,
    fresh,
    report,
    unavailable,
)
from langgraph_supervisor_pro.persistence._stores import open_store

NS = breaker_namespace("supervisor", ("quotes",))
T0 = 1_000_000.0  # 1970-01-12 13:46:40 UTC


@pytest.fixture(autouse=True)
def _no_local_breakers() -> Iterator[None]:
    forget_local()
    yield
    forget_local()


def _breaker(**kwargs: Any) -> Breaker:
    return Breaker(**{"failures": 3, "window": 60, "cooldown": 30, **kwargs})


def _fail(value: dict[str, Any] | None, breaker: Breaker, now: float, hop: str = "") -> Any:
    hop = hop or f"hop-at-{now:.0f}"
    new, admission = admit(value, breaker, now, hop)
    assert admission.state == "closed"
    after, outcome = report(new or value, breaker, now, admission, hop, "error: down")
    return (after if after is not None else value), outcome


# -- closed -> open ----------------------------------------------------------------------


def test_failures_within_the_window_open_the_breaker():
    breaker = _breaker()
    value, outcome = _fail(None, breaker, T0)
    assert (value["state"], outcome.failures, outcome.changed_to) == ("closed", 1, None)
    value, outcome = _fail(value, breaker, T0 + 10)
    assert (value["state"], outcome.failures) == ("closed", 2)
    value, outcome = _fail(value, breaker, T0 + 20)
    assert (value["state"], outcome.failures, outcome.changed_to) == ("open", 3, "open")
    assert value["until"] == T0 + 20 + 30
    assert value["reason"] == "error: down"
    assert outcome.transition == "closed -> open (3 failed hops within 60s)"


def test_failures_older_than_the_window_are_not_counted():
    breaker = _breaker()
    value, _ = _fail(None, breaker, T0)
    value, _ = _fail(value, breaker, T0 + 30)
    value, outcome = _fail(value, breaker, T0 + 61)  # the first fell out of the window
    assert (value["state"], outcome.failures) == ("closed", 2)
    assert value["failures"] == [
        {"at": T0 + 30, "hop": f"hop-at-{T0 + 30:.0f}"},
        {"at": T0 + 61, "hop": f"hop-at-{T0 + 61:.0f}"},
    ]


def test_a_hop_that_runs_again_is_counted_once():
    # A hop re-run after an interrupt (its fallback paused for a review) fails again.
    breaker = _breaker(failures=2)
    value, _ = _fail(None, breaker, T0, hop="t|quotes|1|1")
    again, outcome = report(value, breaker, T0 + 5, Admission("closed"), "t|quotes|1|1", "error")
    assert again is None and outcome.failures == 1


def test_a_success_changes_nothing_and_writes_nothing():
    breaker = _breaker()
    value, _ = _fail(None, breaker, T0)
    new, admission = admit(value, breaker, T0 + 1, "h")
    assert new is None
    after, outcome = report(value, breaker, T0 + 1, admission, "h", None)
    assert after is None and outcome.failures == 1 and outcome.changed_to is None


def test_a_failure_counted_while_open_adds_nothing():
    # A hop admitted while closed ends after another hop opened the breaker.
    breaker = _breaker(failures=1)
    opened, _ = _fail(None, breaker, T0)
    after, outcome = report(opened, breaker, T0 + 1, Admission("closed"), "late", "error: x")
    assert after is None and outcome.changed_to is None


# -- open -> half-open -> closed / open ----------------------------------------------------


def _opened(breaker: Breaker) -> dict[str, Any]:
    value: dict[str, Any] | None = None
    for i in range(breaker.failures):
        value, _ = _fail(value, breaker, T0 + i)
    assert value is not None and value["state"] == "open"
    return value


def test_an_open_breaker_refuses_until_the_cooldown_is_over_then_one_probe_goes():
    breaker = _breaker(failures=1)
    value = _opened(breaker)
    new, admission = admit(value, breaker, T0 + 29, "a")
    assert new is None
    assert admission == Admission("open", "circuit open until 13:47:10 UTC", failures=1)
    assert unavailable(value, breaker, T0 + 29) == "circuit open until 13:47:10 UTC"
    assert unavailable(value, breaker, T0 + 30) is None  # a probe may go
    probing, admission = admit(value, breaker, T0 + 30, "a")
    assert admission.state == "half_open" and admission.transition == "open -> half_open"
    assert probing is not None
    assert (probing["state"], probing["probe"], probing["probe_at"]) == ("half_open", "a", T0 + 30)
    # Any other hop is refused while the probe is in flight; the probe itself is let
    # in again (a re-run after an interrupt or a crash).
    assert admit(probing, breaker, T0 + 31, "b")[1].state == "open"
    assert unavailable(probing, breaker, T0 + 31) == "circuit half-open, a probe hop is in flight"
    assert admit(probing, breaker, T0 + 31, "a") == (None, Admission("half_open"))


def test_the_probe_s_success_closes_the_breaker_and_forgets_the_failures():
    breaker = _breaker(failures=2)
    probing, admission = admit(_opened(breaker), breaker, T0 + 40, "p")
    closed, outcome = report(probing, breaker, T0 + 41, admission, "p", None)
    assert closed == dict(fresh(T0 + 41))
    assert (outcome.failures, outcome.changed_to) == (0, "closed")


def test_the_probe_s_failure_reopens_the_breaker_for_another_cooldown():
    breaker = _breaker(failures=2)
    probing, admission = admit(_opened(breaker), breaker, T0 + 40, "p")
    reopened, outcome = report(probing, breaker, T0 + 45, admission, "p", "verify: stale")
    assert reopened is not None
    assert (reopened["state"], reopened["until"], reopened["reason"]) == (
        "open",
        T0 + 45 + 30,
        "verify: stale",
    )
    assert outcome.changed_to == "open"
    assert outcome.transition == "half_open -> open (the probe failed)"


def test_a_probe_that_never_reports_gives_way_after_its_lease():
    breaker = _breaker(failures=1, probe_timeout=100)
    probing, _ = admit(_opened(breaker), breaker, T0 + 30, "lost")
    assert admit(probing, breaker, T0 + 129, "next")[1].state == "open"
    taken, admission = admit(probing, breaker, T0 + 130, "next")
    assert admission.state == "half_open" and taken is not None and taken["probe"] == "next"
    # The lost probe reports late: it is no longer the probe, nothing changes.
    after, outcome = report(taken, breaker, T0 + 131, Admission("half_open"), "lost", None)
    assert after is None and outcome.changed_to is None


def test_the_probe_lease_defaults_to_the_cooldown():
    breaker = _breaker(failures=1, cooldown=30)
    probing, _ = admit(_opened(breaker), breaker, T0 + 30, "lost")
    assert admit(probing, breaker, T0 + 59, "next")[1].state == "open"
    assert admit(probing, breaker, T0 + 60, "next")[1].state == "half_open"


def test_clock_text_shows_the_date_when_not_today():
    assert clock_text(T0 + 5, T0) == "13:46:45 UTC"
    assert clock_text(T0 + 86_400, T0) == "1970-01-13 13:46:40 UTC"


# -- where the state lives -----------------------------------------------------------------


def _probe_race(store: Any, threads: int = 8) -> list[str]:
    """Open a breaker, end its cooldown, and let `threads` hops ask to probe at once."""
    breaker = _breaker(failures=1)
    Transact(store, NS, lambda value: (dict(_opened(breaker)), None)).run()
    barrier = threading.Barrier(threads)
    states: list[str] = []

    def hop(index: int) -> None:
        barrier.wait()
        admission = (
            Transact(store, NS, lambda value: admit(value, breaker, T0 + 100, f"hop-{index}"))
        ).run()
        states.append(admission.state)

    workers = [threading.Thread(target=hop, args=(i,)) for i in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    return sorted(states)


@pytest.mark.parametrize("kind", ["none", "memory"])
def test_one_probe_among_concurrent_hops_in_a_process(kind):
    store = None if kind == "none" else InMemoryStore()
    assert _probe_race(store) == ["half_open"] + ["open"] * 7
    value = Read(store, NS).run()
    assert value is not None and value["state"] == "half_open"


def test_without_a_store_the_state_is_per_process_and_shared_by_namespace():
    breaker = _breaker(failures=1)
    Transact(None, NS, lambda value: (dict(_opened(breaker)), None)).run()
    assert Read(None, NS).run()["state"] == "open"  # type: ignore[index]
    assert Read(None, breaker_namespace("other", ("quotes",))).run() is None
    forget_local()
    assert Read(None, NS).run() is None


async def test_the_async_driver_uses_the_same_state():
    store = InMemoryStore()
    breaker = _breaker(failures=1)
    await Transact(store, NS, lambda value: (dict(_opened(breaker)), None)).arun()

    def asking(hop: str) -> Transact[Admission]:
        return Transact(store, NS, lambda value: admit(value, breaker, T0 + 100, hop))

    results = await asyncio.gather(*(asking(f"h{i}").arun() for i in range(5)))
    assert sorted(a.state for a in results) == ["half_open"] + ["open"] * 4
    assert (await Read(store, NS).arun())["probe"] in {f"h{i}" for i in range(5)}  # type: ignore[index]


def test_other_stores_are_serialised_within_the_process(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        assert isinstance(store, SqliteStore)
        assert _probe_race(store) == ["half_open"] + ["open"] * 7
        assert store.get(NS, "state").value["state"] == "half_open"  # type: ignore[union-attr]


def test_a_transition_that_writes_nothing_leaves_no_item():
    store = InMemoryStore()
    breaker = _breaker()
    admission = Transact(store, NS, lambda value: admit(value, breaker, T0, "h")).run()
    assert admission.state == "closed"
    assert store.get(NS, "state") is None

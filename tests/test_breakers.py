"""Circuit breakers: `Worker(breaker=Breaker(...))` on a memory store and without a store.

Postgres (two stores over two pools, as two processes would have) is in
tests/integration/test_breakers_postgres.py.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import (
    SupervisorView,
    Worker,
    WorkerResult,
    WorkerTask,
    create_supervisor,
)
from langgraph_supervisor_pro._breakers import BREAKER_LOGGER, Breaker, breaker_namespace
from langgraph_supervisor_pro._graph.circuit import forget_local
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import ask, routes, thread

T0 = 1_000_000.0  # 1970-01-12 13:46:40 UTC
NO_RETRY = RetryPolicy(max_attempts=1)
QUOTES = breaker_namespace("supervisor", ("quotes",))


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Feed:
    """The quotes worker's upstream: down or up, counting the calls that reached it."""

    def __init__(self, up: bool = False) -> None:
        self.up = up
        self.calls: list[int] = []

    def __call__(self, task: WorkerTask) -> str:
        self.calls.append(task.step)
        if not self.up:
            raise RuntimeError("feed down")
        return "ACME at 10"


@pytest.fixture(autouse=True)
def _no_local_breakers() -> Iterator[None]:
    forget_local()
    yield
    forget_local()


def quotes(feed: Feed, clock: Clock, failures: int = 2, **kwargs: Any) -> Worker:
    return Worker(
        name="quotes",
        description="Fetches quotes.",
        agent=feed,
        retry=NO_RETRY,
        breaker=Breaker(failures=failures, window=60, cooldown=30, clock=clock),
        **kwargs,
    )


BACKUP = Worker(name="backup", description="Backup quotes.", agent=lambda t: "ACME at 10.4")


def team(workers: list[Worker], store: BaseStore | None, **kwargs: Any) -> Any:
    return create_supervisor(workers, **kwargs).compile(checkpointer=InMemorySaver(), store=store)


def opened(store: BaseStore, until: float = T0 + 30, namespace: tuple[str, ...] = QUOTES) -> None:
    """Open a breaker the way another process would have left it."""
    store.put(
        namespace,
        "state",
        {
            "state": "open",
            "failures": [{"at": T0, "hop": "t1|quotes|1|1"}, {"at": T0, "hop": "t1|quotes|1|2"}],
            "until": until,
            "probe": None,
            "probe_at": None,
            "reason": "error: RuntimeError: feed down",
            "changed_at": T0,
        },
    )


# -- configuration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"failures": 0}, "Breaker.failures: got 0; give an integer from 1 to 1000"),
        ({"failures": True}, "Breaker.failures: got True"),
        ({"failures": 2.0}, "Breaker.failures: got 2.0"),
        ({"failures": 1001}, "Breaker.failures: got 1001"),
        ({"window": 0}, "Breaker.window: got 0; give a number of seconds > 0"),
        ({"window": float("nan")}, "Breaker.window: got nan"),
        ({"cooldown": -1}, "Breaker.cooldown: got -1"),
        ({"cooldown": float("inf")}, "Breaker.cooldown: got inf"),
        ({"probe_timeout": 0}, "Breaker.probe_timeout: got 0; .* or None for `cooldown`"),
        ({"clock": 5}, "Breaker.clock: got int; give a function"),
    ],
)
def test_a_bad_breaker_is_refused_naming_the_field(kwargs, error):
    with pytest.raises((TypeError, ValueError), match=error):
        Breaker(**{"failures": 3, "window": 60, "cooldown": 30, **kwargs})


def test_a_breaker_is_frozen_and_keeps_floats():
    breaker = Breaker(failures=3, window=60, cooldown=30)
    assert (breaker.window, breaker.cooldown, breaker.probe_lease) == (60.0, 30.0, 30.0)
    with pytest.raises(AttributeError):
        breaker.failures = 4  # type: ignore[misc]


def test_worker_breaker_must_be_a_breaker():
    with pytest.raises(TypeError, match=r"Worker\.breaker: worker 'quotes' got dict"):
        Worker(name="quotes", description="Q.", agent=lambda t: "x", breaker={"failures": 3})  # type: ignore[arg-type]


def test_namespace_labels_are_escaped():
    assert breaker_namespace("a.b%c", ("x",)) == ("lgsp", "breakers", "a%2Eb%25c", "x")


# -- closed -> open ------------------------------------------------------------------------


def test_failed_hops_open_the_breaker_and_a_route_to_it_is_then_invalid(caplog):
    caplog.set_level(logging.INFO, logger=BREAKER_LOGGER)
    feed, clock, store = Feed(), Clock(), InMemoryStore()
    app = team([quotes(feed, clock), BACKUP], store, router=routes("quotes", "quotes", "quotes"))
    out = app.invoke(ask("Quote ACME"), thread())
    first, second = out["ledger"]
    assert first["breaker"] == {"state": "closed", "failures": 1, "changed_to": None}
    assert second["breaker"] == {"state": "closed", "failures": 2, "changed_to": "open"}
    assert first["error"] == second["error"] == "RuntimeError: feed down"
    assert "fallback" not in first
    # The third route (the router's) is refused like any invalid route.
    assert (out["status"], out["halt_reason"]) == ("halted", "invalid_route")
    assert out["halt_detail"] == (
        "no valid route: the router returned an invalid route: worker 'quotes' is "
        "unavailable (circuit open until 13:47:10 UTC); route to another worker or FINISH"
    )
    assert feed.calls == [1, 2]
    state = store.get(QUOTES, "state")
    assert state is not None
    assert state.value["state"] == "open" and state.value["until"] == T0 + 30
    assert state.value["reason"] == "error: RuntimeError: feed down"
    (record,) = [r for r in caplog.records if r.name == BREAKER_LOGGER]
    assert record.levelno == logging.WARNING
    assert "breaker supervisor/quotes: closed -> open (2 failed hops within 60s)" in (
        record.getMessage()
    )


def test_a_refused_result_counts_as_a_failure():
    clock, store = Clock(), InMemoryStore()
    worker = Worker(
        name="quotes",
        description="Fetches quotes.",
        agent=lambda t: "ACME, no price",
        verify=lambda task, result: "no price",
        breaker=Breaker(failures=1, window=60, cooldown=30, clock=clock),
    )
    out = team([worker, BACKUP], store, router=routes("quotes")).invoke(ask(), thread())
    (entry,) = out["ledger"]
    assert entry["breaker"] == {"state": "closed", "failures": 1, "changed_to": "open"}
    assert store.get(QUOTES, "state").value["reason"] == "verify: no price"  # type: ignore[union-attr]


def test_successes_leave_a_closed_breaker_alone():
    feed, clock, store = Feed(up=True), Clock(), InMemoryStore()
    out = team([quotes(feed, clock), BACKUP], store, router=routes("quotes", "quotes")).invoke(
        ask(), thread()
    )
    assert [e["breaker"] for e in out["ledger"]] == [
        {"state": "closed", "failures": 0, "changed_to": None}
    ] * 2
    assert store.get(QUOTES, "state") is None  # nothing to write


# -- open: the supervisor's view -----------------------------------------------------------


def test_the_model_sees_the_worker_unavailable_and_is_asked_again():
    feed, clock, store = Feed(up=True), Clock(T0 + 10), InMemoryStore()
    opened(store)
    model = ScriptedChatModel(
        script=[
            {"next": "quotes", "instructions": "quote ACME"},
            {"next": "backup", "instructions": "quote ACME"},
            {"next": "FINISH", "instructions": ""},
        ]
    )
    out = team([quotes(feed, clock), BACKUP], store, model=model).invoke(ask(), thread())
    assert out["status"] == "done" and [e["worker"] for e in out["ledger"]] == ["backup"]
    assert feed.calls == []
    system = str(model.calls[0].messages[0].content)
    assert "- quotes: Fetches quotes. [unavailable: circuit open until 13:47:10 UTC]" in system
    assert "- backup: Backup quotes.\n" in system
    reask = str(model.calls[1].messages[-1].content)
    assert reask == (
        "Your previous answer was not a valid decision: worker 'quotes' is unavailable "
        "(circuit open until 13:47:10 UTC); route to another worker or FINISH\n"
        "Answer again with `next` set to exactly one of: backup, FINISH."
    )


def test_a_model_that_insists_goes_to_the_supervisor_fallback():
    feed, clock, store = Feed(up=True), Clock(T0 + 10), InMemoryStore()
    opened(store)
    model = ScriptedChatModel(
        script=[{"next": "quotes", "instructions": ""}] * 2 + [{"next": "FINISH"}]
    )
    out = team([quotes(feed, clock), BACKUP], store, model=model, fallback="backup").invoke(
        ask(), thread()
    )
    (entry,) = out["ledger"]
    assert (entry["worker"], entry["decided_by"]) == ("backup", "fallback")
    assert feed.calls == []


def test_a_router_sees_which_workers_are_unavailable():
    feed, clock, store = Feed(up=True), Clock(T0 + 10), InMemoryStore()
    opened(store)
    seen: list[SupervisorView] = []

    def router(view: SupervisorView) -> str:
        seen.append(view)
        if view.ledger:
            return "FINISH"
        return "backup" if "quotes" in view.unavailable else "quotes"

    out = team([quotes(feed, clock), BACKUP], store, router=router).invoke(ask(), thread())
    assert [e["worker"] for e in out["ledger"]] == ["backup"]
    assert seen[0].unavailable == {"quotes": "circuit open until 13:47:10 UTC"}


def test_a_parallel_branch_to_an_open_worker_is_invalid():
    feed, clock, store = Feed(up=True), Clock(T0 + 10), InMemoryStore()
    opened(store)
    app = team(
        [quotes(feed, clock), BACKUP],
        store,
        router=lambda view: [{"next": "backup"}, {"next": "quotes"}],
        parallel=True,
    )
    out = app.invoke(ask(), thread())
    assert out["halt_reason"] == "invalid_route"
    assert "worker 'quotes' is unavailable" in out["halt_detail"]


def test_with_a_fallback_the_route_is_kept_and_the_fallback_answers():
    feed, clock, store = Feed(up=True), Clock(T0 + 10), InMemoryStore()
    opened(store)
    model = ScriptedChatModel(
        script=[{"next": "quotes", "instructions": "quote ACME"}, {"next": "FINISH"}]
    )
    worker = quotes(feed, clock, fallback=lambda task: "ACME at 9.9 (cached)")
    out = team([worker, BACKUP], store, model=model).invoke(ask(), thread())
    system = str(model.calls[0].messages[0].content)
    assert "- quotes: Fetches quotes. [circuit open until 13:47:10 UTC: its fallback answers]" in (
        system
    )
    (entry,) = out["ledger"]
    assert entry["status"] == "success" and entry["summary"] == "ACME at 9.9 (cached)"
    assert entry["fallback"] == "breaker open: circuit open until 13:47:10 UTC"
    assert entry["breaker"] == {"state": "open", "failures": 2, "changed_to": None}
    assert feed.calls == []  # the agent never ran
    assert out["messages"][-1].content == "ACME at 9.9 (cached)"
    # The next decision's ledger line says the fallback answered.
    human = str(model.calls[1].messages[1].content)
    assert (
        "#1 quotes [success via fallback (breaker open: circuit open until 13:47:10 UTC)] "
        "ACME at 9.9 (cached)" in human
    )


# -- half-open -----------------------------------------------------------------------------


@pytest.mark.parametrize("driver", ["invoke", "ainvoke"])
def test_after_the_cooldown_one_probe_closes_the_breaker(driver, caplog):
    caplog.set_level(logging.INFO, logger=BREAKER_LOGGER)
    feed, clock, store = Feed(up=True), Clock(T0 + 30), InMemoryStore()
    opened(store)
    app = team([quotes(feed, clock), BACKUP], store, router=routes("quotes", "quotes"))
    if driver == "invoke":
        out = app.invoke(ask(), thread())
    else:
        out = asyncio.run(app.ainvoke(ask(), thread()))
    probe, after = out["ledger"]
    assert probe["breaker"] == {"state": "half_open", "failures": 0, "changed_to": "closed"}
    assert after["breaker"] == {"state": "closed", "failures": 0, "changed_to": None}
    assert store.get(QUOTES, "state").value["state"] == "closed"  # type: ignore[union-attr]
    messages = [r.getMessage() for r in caplog.records if r.name == BREAKER_LOGGER]
    assert messages[0].startswith("breaker supervisor/quotes: open -> half_open (hop ")
    assert messages[1].startswith(
        "breaker supervisor/quotes: half_open -> closed (the probe succeeded) (hop "
    )


def test_a_failed_probe_reopens_the_breaker_for_another_cooldown():
    feed, clock, store = Feed(), Clock(T0 + 45), InMemoryStore()
    opened(store)
    out = team([quotes(feed, clock), BACKUP], store, router=routes("quotes", "quotes")).invoke(
        ask(), thread()
    )
    (probe,) = out["ledger"]
    assert probe["breaker"] == {"state": "half_open", "failures": 2, "changed_to": "open"}
    assert out["halt_reason"] == "invalid_route"
    assert "circuit open until 13:47:55 UTC" in out["halt_detail"]
    assert store.get(QUOTES, "state").value["until"] == T0 + 45 + 30  # type: ignore[union-attr]


async def test_two_concurrent_runs_exactly_one_probes():
    """Both supervisors see the cooldown over; only one hop gets to probe."""
    clock, store = Clock(T0 + 30), InMemoryStore()
    opened(store)
    release = asyncio.Event()
    probes: list[int] = []
    answered: list[str] = []

    async def agent(task: WorkerTask) -> str:
        probes.append(task.step)
        await asyncio.wait_for(release.wait(), 10)  # held until the other hop is refused
        return "ACME at 10"

    async def fallback(task: WorkerTask) -> str:
        answered.append("fallback")
        release.set()
        return "ACME at 9.9 (cached)"

    worker = Worker(
        name="quotes",
        description="Fetches quotes.",
        agent=agent,
        retry=NO_RETRY,
        fallback=fallback,
        breaker=Breaker(failures=2, window=60, cooldown=30, clock=clock),
    )
    one = team([worker, BACKUP], store, router=routes("quotes"))
    two = team([worker, BACKUP], store, router=routes("quotes"))  # another "process"
    first, second = await asyncio.gather(one.ainvoke(ask(), thread()), two.ainvoke(ask(), thread()))
    by_state = {e["breaker"]["state"]: e for e in (first["ledger"][0], second["ledger"][0])}
    probe, refused = by_state["half_open"], by_state["open"]
    assert probes == [1] and answered == ["fallback"]
    assert probe["breaker"] == {"state": "half_open", "failures": 0, "changed_to": "closed"}
    assert "fallback" not in probe
    assert refused["breaker"]["state"] == "open"
    assert refused["fallback"] == "breaker open: circuit half-open, a probe hop is in flight"


# -- shared state --------------------------------------------------------------------------


def test_two_apps_on_one_store_share_one_breaker():
    feed, clock, store = Feed(), Clock(), InMemoryStore()
    first = team([quotes(feed, clock), BACKUP], store, router=routes("quotes", "quotes"))
    first.invoke(ask(), thread())
    model = ScriptedChatModel(script=[{"next": "backup"}, {"next": "FINISH"}])
    second = team([quotes(feed, clock), BACKUP], store, model=model)
    second.invoke(ask(), thread())
    assert "[unavailable: circuit open until 13:47:10 UTC]" in str(
        model.calls[0].messages[0].content
    )
    # Another supervisor name is another breaker.
    other = ScriptedChatModel(script=[{"next": "FINISH"}])
    team([quotes(feed, clock), BACKUP], store, model=other, name="desk").invoke(ask(), thread())
    assert "unavailable" not in str(other.calls[0].messages[0].content)


def test_without_a_store_the_breaker_is_shared_within_the_process():
    feed, clock = Feed(), Clock()
    team([quotes(feed, clock), BACKUP], None, router=routes("quotes", "quotes")).invoke(
        ask(), thread()
    )
    model = ScriptedChatModel(script=[{"next": "backup"}, {"next": "FINISH"}])
    team([quotes(feed, clock), BACKUP], None, model=model).invoke(ask(), thread())
    assert "[unavailable: circuit open until 13:47:10 UTC]" in str(
        model.calls[0].messages[0].content
    )


def test_a_domain_s_breaker_is_keyed_by_its_path():
    feed, clock, store = Feed(), Clock(), InMemoryStore()
    inner = create_supervisor(
        [
            Worker(
                name="pager",
                description="Pages.",
                agent=feed,
                retry=NO_RETRY,
                breaker=Breaker(failures=1, window=60, cooldown=30, clock=clock),
            )
        ],
        router=routes("pager"),
        name="incident",
    )
    domain = Worker(name="ops", description="Operations.", agent=inner, retry=NO_RETRY)
    team([domain], store, router=routes("ops")).invoke(ask(), thread())
    state = store.get(breaker_namespace("incident", ("ops", "pager")), "state")
    assert state is not None and state.value["state"] == "open"


class _BrokenBreakerStore(InMemoryStore):
    """A store that cannot read breakers (its other namespaces work)."""

    def get(self, namespace: tuple[str, ...], key: str, **kwargs: Any) -> Any:
        if namespace[:2] == ("lgsp", "breakers"):
            raise RuntimeError("store offline")
        return super().get(namespace, key, **kwargs)


def test_a_breaker_whose_state_cannot_be_read_refuses_the_hop():
    feed, clock = Feed(up=True), Clock()
    worker = quotes(feed, clock, fallback=lambda task: "ACME at 9.9 (cached)")
    model = ScriptedChatModel(script=[{"next": "quotes"}, {"next": "FINISH"}])
    out = team([worker, BACKUP], _BrokenBreakerStore(), model=model).invoke(ask(), thread())
    assert "[circuit state unreadable (RuntimeError): its fallback answers]" in str(
        model.calls[0].messages[0].content
    )
    (entry,) = out["ledger"]
    assert entry["fallback"] == "breaker state unavailable: RuntimeError: store offline"
    assert entry["status"] == "success" and feed.calls == []


def test_a_fallback_worker_s_own_breaker_is_consulted():
    feed, clock, store = Feed(), Clock(T0 + 10), InMemoryStore()
    opened(store, namespace=breaker_namespace("supervisor", ("backup",)))
    backup = Worker(
        name="backup",
        description="Backup quotes.",
        agent=lambda t: WorkerResult(status="success", result="ACME at 10.4"),
        breaker=Breaker(failures=1, window=60, cooldown=30, clock=clock),
    )
    worker = quotes(feed, clock, failures=5, fallback="backup")
    out = team([worker, backup], store, router=routes("quotes")).invoke(ask(), thread())
    (entry,) = out["ledger"]
    assert entry["status"] == "failed"
    assert entry["error"] == (
        "error: RuntimeError: feed down; then the fallback 'backup': breaker open: circuit "
        "open until 13:47:10 UTC"
    )

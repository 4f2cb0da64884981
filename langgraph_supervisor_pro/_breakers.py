"""Circuit breakers: a worker that keeps failing is taken out of rotation for a while.

`Worker(breaker=Breaker(failures=3, window=60, cooldown=30))` counts the worker's failed
hops. The state machine, per worker:

- **closed** (the start): hops run. A failed hop is counted; when `failures` of them fall
  within the last `window` seconds, the breaker **opens**.
- **open**: for `cooldown` seconds no hop runs the worker's agent. The supervisor's
  catalogue marks the worker unavailable, a route to it is refused like an invalid
  decision (the model is asked again once; a router's route is invalid), unless the
  worker has a `fallback`, which then answers the hop.
- **half-open**: after the cooldown, exactly one hop, the probe, runs the agent. Its
  success closes the breaker (the count starts afresh); its failure opens it for another
  cooldown. Other hops meanwhile find it open. A probe that never reports (its process
  died) gives way to a new one after `probe_timeout` seconds.

The state is shared by every run, thread and process that uses the same store: it lives
in the LangGraph store the graph is compiled with, under
`breaker_namespace(<supervisor name>, <worker path>)`, as a `BreakerState`. Each change
is one read-modify-write: atomic across processes on a Postgres store over a pool (what
`open_store`/`aopen_store` give: a transaction holding an advisory lock), atomic within
the process on an `InMemoryStore` and without a store (then the state is per process),
and serialised only within the process on other stores (see docs/architecture.md).
Transitions are logged on the `BREAKER_LOGGER` logger; each hop's ledger entry records
the breaker state it ran under (`LedgerEntry["breaker"]`).

Example:
    >>> from langgraph_supervisor_pro import Worker
    >>> quotes = Worker(name="quotes", description="Fetches quotes.", agent=lambda t: "10",
    ...                 breaker=Breaker(failures=3, window=60, cooldown=30))
    >>> quotes.breaker.cooldown
    30.0
    >>> breaker_namespace("supervisor", ("quotes",))
    ('lgsp', 'breakers', 'supervisor', 'quotes')
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from typing_extensions import TypedDict

from langgraph_supervisor_pro._internal.checks import check_seconds

__all__ = [
    "BREAKER_LOGGER",
    "Breaker",
    "BreakerFailure",
    "BreakerState",
    "CircuitState",
    "breaker_namespace",
]

BREAKER_LOGGER = "langgraph_supervisor_pro.breakers"
"""The logger every breaker transition is written to (opened: WARNING; half-open and
closed: INFO)."""

CircuitState = Literal["closed", "open", "half_open"]
"""Where a breaker stands."""

_MAX_FAILURES = 1000


@dataclass(frozen=True, kw_only=True)
class Breaker:
    """A worker's circuit breaker: how many failures open it, and for how long.

    Example:
        >>> Breaker(failures=3, window=60, cooldown=30).probe_timeout is None
        True
        >>> Breaker(failures=0, window=60, cooldown=30)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Breaker.failures: got 0; give an integer from 1 to 1000 ...
    """

    failures: int
    """How many failed hops within `window` open the breaker (an integer from 1 to 1000)."""
    window: float
    """Seconds over which failures are counted (a finite number > 0)."""
    cooldown: float
    """Seconds the breaker stays open before one probe hop is let through (finite, > 0)."""
    probe_timeout: float | None = None
    """Seconds a probe may hold the half-open breaker before another probe is let through
    (a probe whose process died would otherwise hold it forever); None: `cooldown`."""
    clock: Callable[[], float] = field(default=time.time, repr=False, compare=False)
    """The time in seconds since the epoch (wall-clock time, shared by every process;
    inject a fake one in tests)."""

    def __post_init__(self) -> None:
        if (
            isinstance(self.failures, bool)
            or not isinstance(self.failures, int)
            or not 1 <= self.failures <= _MAX_FAILURES
        ):
            raise ValueError(
                f"Breaker.failures: got {self.failures!r}; give an integer from 1 to "
                f"{_MAX_FAILURES} (failed hops within `window` that open the breaker)"
            )
        object.__setattr__(self, "window", check_seconds(self.window, "Breaker.window"))
        object.__setattr__(self, "cooldown", check_seconds(self.cooldown, "Breaker.cooldown"))
        if self.probe_timeout is not None:
            object.__setattr__(
                self,
                "probe_timeout",
                check_seconds(
                    self.probe_timeout, "Breaker.probe_timeout", fix=", or None for `cooldown`"
                ),
            )
        if not callable(self.clock):
            raise TypeError(
                f"Breaker.clock: got {type(self.clock).__name__}; give a function returning "
                "the time in seconds since the epoch (default: time.time)"
            )

    @property
    def probe_lease(self) -> float:
        """How long a probe holds the half-open breaker: `probe_timeout`, else `cooldown`.

        Example:
            >>> Breaker(failures=1, window=1, cooldown=5).probe_lease
            5.0
        """
        return self.probe_timeout if self.probe_timeout is not None else self.cooldown


class BreakerFailure(TypedDict):
    """One failed hop a breaker counts."""

    at: float
    """When it ended (seconds since the epoch)."""
    hop: str
    """Which hop: `<thread>|<worker path>|<turn>|<step>` (a hop re-run after an interrupt
    is counted once)."""


class BreakerState(TypedDict):
    """A breaker's state, as the store holds it (JSON), under the key `"state"`."""

    state: CircuitState
    """closed, open or half_open."""
    failures: list[BreakerFailure]
    """The recent failed hops, oldest first: those within the window, at most
    `Breaker.failures` of them."""
    until: float | None
    """When an open breaker lets a probe through."""
    probe: str | None
    """The id of the probe hop in flight (half-open): `<thread>|<worker path>|<turn>|<step>`."""
    probe_at: float | None
    """When the probe started."""
    reason: str | None
    """The failure that last opened the breaker (scrubbed, cut to length)."""
    changed_at: float
    """When the state last changed."""


def _label(text: str) -> str:
    """A store namespace label: no `.` and no NUL (percent-encoded), never empty."""
    return text.replace("%", "%25").replace(".", "%2E").replace("\x00", "%00") or "%"


def breaker_namespace(supervisor: str, path: Sequence[str]) -> tuple[str, ...]:
    """The store namespace of a worker's breaker: `("lgsp", "breakers", supervisor, *path)`.

    `supervisor` is the name of the supervisor the worker belongs to
    (`create_supervisor(name=...)`); `path` the worker names from the root of a tree down
    to the worker (`("quotes",)` at the root). Every graph and process that compiles a
    supervisor of that name with that worker, on the same store, shares the breaker. A
    `.` or `%` in a label is percent-encoded. The state is the item `"state"`.

    Args:
        supervisor: The supervisor's name.
        path: The worker's path.

    Returns:
        The namespace.

    Example:
        >>> breaker_namespace("desk.v2", ("ops", "pager"))
        ('lgsp', 'breakers', 'desk%2Ev2', 'ops', 'pager')
    """
    return ("lgsp", "breakers", _label(supervisor), *(_label(p) for p in path))

"""Circuit breakers: a worker that keeps failing is taken out of rotation for a while.

`Worker(breaker=Breaker(failures=3, window=60, cooldown=30))`: `failures` failed hops
within `window` seconds open the breaker; after `cooldown` seconds one probe hop runs, and
its success closes it. The state (`BreakerState`) lives in the graph's store under
`breaker_namespace`, shared by every run and process (docs/architecture.md, "Fallbacks and
circuit breakers").

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

from langgraph_supervisor_pro._internal.checks import check_seconds, is_count
from langgraph_supervisor_pro._internal.text import store_label

BREAKER_LOGGER = "langgraph_supervisor_pro.breakers"
"""The logger of every breaker transition (opened: WARNING; half-open and closed: INFO)."""

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
    """Seconds a probe may hold the half-open breaker before another is let through (a probe
    whose process died would otherwise hold it forever); None: `cooldown`."""
    clock: Callable[[], float] = field(default=time.time, repr=False, compare=False)
    """The wall-clock time in seconds since the epoch (inject a fake one in tests)."""

    def __post_init__(self) -> None:
        if not is_count(self.failures, maximum=_MAX_FAILURES):
            raise ValueError(
                f"Breaker.failures: got {self.failures!r}; give an integer from 1 to "
                f"{_MAX_FAILURES} (failed hops within `window` that open the breaker)"
            )
        object.__setattr__(self, "window", check_seconds(self.window, "Breaker.window"))
        object.__setattr__(self, "cooldown", check_seconds(self.cooldown, "Breaker.cooldown"))
        if self.probe_timeout is not None:
            fix = ", or None for `cooldown`"
            probe = check_seconds(self.probe_timeout, "Breaker.probe_timeout", fix=fix)
            object.__setattr__(self, "probe_timeout", probe)
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
    """Which hop: `<thread>|<worker path>|<turn>|<step>` (counted once)."""


class BreakerState(TypedDict):
    """A breaker's state, as the store holds it (JSON), under the key `"state"`."""

    state: CircuitState
    failures: list[BreakerFailure]
    """The failed hops within the window, oldest first (at most `Breaker.failures`)."""
    until: float | None
    """When an open breaker lets a probe through."""
    probe: str | None
    """The id of the probe hop in flight (half-open)."""
    probe_at: float | None
    """When the probe started."""
    reason: str | None
    """The failure that last opened the breaker (scrubbed, cut to length)."""
    changed_at: float
    """When the state last changed."""


def breaker_namespace(supervisor: str, path: Sequence[str]) -> tuple[str, ...]:
    """The store namespace of a worker's breaker: `("lgsp", "breakers", supervisor, *path)`.

    `supervisor` is `create_supervisor(name=...)`, `path` the worker names from the root of a
    tree down to the worker; a `.` or `%` in a label is percent-encoded. The state is the
    item `"state"`.

    Example:
        >>> breaker_namespace("desk.v2", ("ops", "pager"))
        ('lgsp', 'breakers', 'desk%2Ev2', 'ops', 'pager')
    """
    return ("lgsp", "breakers", store_label(supervisor), *(store_label(p) for p in path))

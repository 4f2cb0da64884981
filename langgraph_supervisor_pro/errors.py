"""Every exception and warning of langgraph-supervisor-pro, each with a page that explains it.

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/reference/errors/

Each class derives from `LGSPError` (warnings from `LGSPWarning`) and keeps its built-in
base, so `except LookupError:` still catches `ReviewNotFoundError`. A public class's message
ends with a link to its page, as LangGraph's own errors do.

Example:
    >>> from langgraph_supervisor_pro.errors import LGSPError, ThreadBusyError
    >>> err = ThreadBusyError("t-1", "worker-a:42")
    >>> isinstance(err, LGSPError), isinstance(err, RuntimeError)
    (True, True)
    >>> str(err).splitlines()[-1]
    'For troubleshooting, visit: https://langgraph-supervisor-pro.readthedocs.io/en/latest/reference/errors/ThreadBusyError/'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.messages import BaseMessage

from langgraph_supervisor_pro._internal.text import one_line, shown_id

__all__ = [
    "EffectInDoubtError",
    "InvalidDecisionError",
    "JudgementAlreadyAcknowledgedError",
    "JudgementNotFoundError",
    "LGSPError",
    "LGSPWarning",
    "RemoteDomainError",
    "RemoteDomainUnavailable",
    "ReviewError",
    "ReviewNotFoundError",
    "ReviewerNotAllowedError",
    "ScriptExhaustedError",
    "SetupLockError",
    "ThreadBusyError",
    "UndeclaredRiskWarning",
    "UserError",
    "WorkerTimeoutError",
]
# The private classes at the end are raised and caught inside the package; no link.

_DOCS_URL = "https://langgraph-supervisor-pro.readthedocs.io/en/latest"
_TROUBLESHOOTING = "For troubleshooting, visit: "
_QUERY_CHARS = 200  # how much of a lock holder's query `SetupLockError` shows


def error_page(name: str) -> str:
    """The docs page of an error class (`ThreadBusyError`) or a halt reason (`max_steps`).

    Example:
        >>> error_page("max_steps")
        'https://langgraph-supervisor-pro.readthedocs.io/en/latest/reference/errors/max_steps/'
    """
    return f"{_DOCS_URL}/reference/errors/{name}/"


def troubleshooting(name: str) -> str:
    """The line that links an error's or a halt reason's page (LangGraph's wording)."""
    return f"{_TROUBLESHOOTING}{error_page(name)}"


def _rebuild(cls: type[BaseException], args: tuple[Any, ...]) -> BaseException:
    return cls.__new__(cls, *args)  # the attributes come back through __setstate__


class _Linked:
    """What `LGSPError` and `LGSPWarning` share: a page, a message that links it, pickling."""

    docs_url: ClassVar[str | None] = None
    """The page that explains this class (None for the package's private ones)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A subclass defined elsewhere (an application's own) keeps its base's page.
        if cls.__module__ == __name__:
            cls.docs_url = error_page(cls.__name__) if cls.__name__ in __all__ else None

    @property
    def message(self) -> str:
        """The message without the troubleshooting link."""
        return super().__str__()

    def __str__(self) -> str:
        text = self.message
        return f"{text}\n{_TROUBLESHOOTING}{self.docs_url}" if self.docs_url else text

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt without calling `__init__` (whose arguments are not `args`).
        return (_rebuild, (type(self), self.args), vars(self))  # type: ignore[attr-defined]


class LGSPError(_Linked, Exception):
    """The base class of every exception langgraph-supervisor-pro raises.

    `message` is the text without the troubleshooting link that `str()` ends with.
    """


class UserError(LGSPError):
    """The caller used the API wrongly: fix the call, retrying will not help."""


class LGSPWarning(_Linked, UserWarning):
    """The base class of every warning langgraph-supervisor-pro issues."""


class ThreadBusyError(LGSPError, RuntimeError):
    """Another writer holds the thread's lease, or stored a checkpoint this run did not see.

    It carries `thread_id` and `holder` (the lease owner, e.g. `host:pid`, when known).
    """

    def __init__(self, thread_id: str, holder: str | None = None, detail: str = "") -> None:
        self.thread_id = thread_id
        self.holder = holder
        held = f"held by {holder}" if holder else "held by another writer"
        super().__init__(
            detail
            or f"thread {shown_id(thread_id)} is busy: its lease is {held}. Wait for the run to "
            "finish (thread_lease(..., wait=SECONDS) waits for the lease), or run another thread."
        )


class ReviewError(LGSPError):
    """Base class of the errors the review desk raises."""


class ReviewNotFoundError(ReviewError, LookupError):
    """No such review: the thread does not exist, has no pending review, or not that one."""


class InvalidDecisionError(ReviewError, UserError, ValueError):
    """The decision is not valid for the review (`review`); the run was not touched."""

    def __init__(self, message: str, *, review: Any) -> None:
        super().__init__(message)
        self.review = review


class ReviewerNotAllowedError(ReviewError, PermissionError):
    """The policy's `members` or `may_answer` refuse the `reviewer` an answer to `review`."""

    def __init__(self, message: str, *, review: Any, reviewer: str | None) -> None:
        super().__init__(message)
        self.review = review
        self.reviewer = reviewer


class UndeclaredRiskWarning(LGSPWarning):
    """Some tools have no declared risk level, so they are treated as `high`.

    Example:
        >>> w = UndeclaredRiskWarning.for_tools(["refund", "send_email"], worker="billing")
        >>> w.tools, w.worker, "treated as high" in str(w)
        (('refund', 'send_email'), 'billing', True)
    """

    tools: tuple[str, ...] = ()
    """The undeclared tools' names (set by `for_tools`)."""
    worker: str | None = None
    """The worker they belong to (set by `for_tools`)."""

    @classmethod
    def for_tools(cls, tools: Sequence[str], *, worker: str | None = None) -> UndeclaredRiskWarning:
        """The warning for these tools (`undeclared_tools`), with a message listing them."""
        names = tuple(tools)
        one = len(names) == 1
        where = f" of worker {worker!r}" if worker else ""
        warning = cls(
            f"{len(names)} tool{'' if one else 's'}{where} {'has' if one else 'have'} no "
            f"declared risk level and {'is' if one else 'are'} treated as high (fail closed: "
            f"every call needs a human's review): {', '.join(names)}. Declare a level with "
            "@risk('low' | 'medium' | 'high'), a per-worker risks mapping or the policy "
            "file's risks table."
        )
        warning.tools = names
        warning.worker = worker
        return warning


class WorkerTimeoutError(LGSPError):
    """A worker hop ran longer than its `Worker.timeout`.

    Not a built-in `TimeoutError` (an `OSError`), so LangGraph's default retry predicate
    retries it.
    """

    def __init__(self, worker: str, timeout: float) -> None:
        super().__init__(f"worker {worker!r} exceeded its timeout of {timeout:g}s")
        self.worker = worker
        self.timeout = timeout


class RemoteDomainError(LGSPError, RuntimeError):
    """A remote domain refused the hop (an HTTP 4xx), or its remote run failed (not retried)."""


class RemoteDomainUnavailable(RemoteDomainError, ConnectionError):
    """A remote domain's server could not be reached, timed out or answered HTTP 5xx."""


class EffectInDoubtError(LGSPError, RuntimeError):
    """An external effect (`key`) may already have happened, and nobody can be asked here."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(
            f"effect {key!r} is in doubt: an earlier execution recorded its intent but no "
            "outcome (it stopped between the call and the record), so the call may already "
            "have happened. Outside a graph run there is no review to pause on: pass "
            "reconcile= (a function of the key that asks the provider and returns the "
            "outcome if the call happened, None if not), or check with the provider and then "
            "either record the outcome (UPDATE lgsp_effects SET outcome = ..., state = "
            f"'confirmed' WHERE key = ...) or delete the row to run it again"
        )


class SetupLockError(LGSPError, RuntimeError):
    """Setup waited longer than its bound for a lock that another session holds.

    Attributes:
        what: What was being set up (`"lgsp_effects"`, `"lgsp_thread_leases"`).
        holders: `(pid, state, application_name, query)` of each session holding it.
    """

    def __init__(self, what: str, seconds: float, holders: Sequence[tuple[Any, ...]]) -> None:
        self.what = what
        self.holders = [tuple(row) for row in holders]
        if self.holders:
            held = "; ".join(
                f"pid {pid} ({state or 'unknown state'}"
                f"{f', application {app!r}' if app else ''}): "
                f"{one_line(str(query or ''), _QUERY_CHARS)!r}"
                for pid, state, app, query, *_ in self.holders
            )
            who = f"held by {held}"
            fix = (
                f"finish or cancel that transaction (SELECT pg_cancel_backend({self.holders[0][0]})"
                "), then open again"
            )
        else:
            who = "held by a session that has since released it"
            fix = "open again"
        super().__init__(
            f"setting up {what} waited more than {seconds:g} s for a lock {who}; {fix}. "
            "The DDL that needs the lock runs only when the schema is missing or older than "
            "this version (a migration): run it once while no work is in flight, e.g. at "
            "deployment, and open with setup=False afterwards if need be."
        )


class JudgementNotFoundError(LGSPError, LookupError):
    """No queued verdict has this key in the store."""

    def __init__(self, key: str) -> None:
        super().__init__(
            f"no queued judgement {key!r} in the store; lgsp judge list --store URL --all "
            "lists them"
        )
        self.key = key


class JudgementAlreadyAcknowledgedError(LGSPError, ValueError):
    """The verdict was already acknowledged `by` someone `at` a time (ISO 8601, UTC)."""

    def __init__(self, key: str, *, by: str | None, at: str | None) -> None:
        super().__init__(
            f"judgement {key!r} was already acknowledged by {by or 'someone unnamed'} at "
            f"{at or 'an unrecorded time'}"
        )
        self.key = key
        self.by = by
        self.at = at


class JudgeTimeoutError(LGSPError):
    """The judge model did not answer within `OnlineJudge.timeout` (caught by the judge step)."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"no verdict within the judge's timeout of {timeout:g}s")


class ScriptExhaustedError(UserError, RuntimeError):
    """A `ScriptedChatModel` was called after its last step was used.

    A `RuntimeError`, which LangGraph's default `RetryPolicy` does not retry, so the run
    fails at once.

    It carries `script_length`, the zero-based `call_index` of the call and its input's
    `last_message` (None if it was empty).
    """

    def __init__(
        self,
        message: str,
        *,
        script_length: int = 0,
        call_index: int = 0,
        last_message: BaseMessage | None = None,
    ) -> None:
        super().__init__(message)
        self.script_length = script_length
        self.call_index = call_index
        self.last_message = last_message


class ScrubbedError(LGSPError):
    """Stands in for an exception whose text held a secret (kept in `original`, never shown)."""

    original: Exception | None = None


class InvalidSummaryError(LGSPError, ValueError):
    """The summarizer's reply is not a usable `ContextSummary` (compaction retries it)."""


class TemplateError(UserError, ValueError):
    """A template that does not exist, or a directory `lgsp new` must not write into."""


class DemoError(LGSPError, RuntimeError):
    """The demo's template is missing or cannot be loaded (a broken installation)."""


class ExportError(LGSPError):
    """The figures could not be exported; the message says why and what to do."""


class BudgetExceededError(LGSPError, RuntimeError):
    """A model call refused before it was made: a budget's limit is spent.

    Raised by the usage recorder inside a hop (any agent, at any depth); the worker node
    records the hop `failed` and the supervisor halts with `budget_exceeded`. Not retried.
    """

    def __init__(self, label: str, measure: str, spent: float, limit: float) -> None:
        super().__init__(f"{label} is spent: {measure} {spent:,.6g} of {limit:,.6g}")
        self.label = label
        self.measure = measure
        self.spent = spent
        self.limit = limit

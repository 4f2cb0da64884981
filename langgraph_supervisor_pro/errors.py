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
# Also defined here, not exported (raised and caught inside the package, or standing in for
# another exception): ScrubbedError, InvalidSummaryError, JudgeTimeoutError, TemplateError,
# DemoError, ExportError. Their messages carry no link.

_DOCS_URL = "https://langgraph-supervisor-pro.readthedocs.io/en/latest"
_TROUBLESHOOTING = "For troubleshooting, visit: "
_QUERY_CHARS = 200
"""How much of a lock holder's query `SetupLockError` shows."""


def error_page(name: str) -> str:
    """The docs page of an error class or a halt reason.

    Args:
        name: The class name (`ThreadBusyError`) or halt reason (`max_steps`).

    Returns:
        The page's URL.

    Example:
        >>> error_page("max_steps")
        'https://langgraph-supervisor-pro.readthedocs.io/en/latest/reference/errors/max_steps/'
    """
    return f"{_DOCS_URL}/reference/errors/{name}/"


def troubleshooting(name: str) -> str:
    """The line that links an error's or a halt reason's page (LangGraph's wording).

    Args:
        name: The class name or halt reason.

    Returns:
        `For troubleshooting, visit: <its page>`.

    Example:
        >>> troubleshooting("ping_pong")  # doctest: +ELLIPSIS
        'For troubleshooting, visit: https://.../reference/errors/ping_pong/'
    """
    return f"{_TROUBLESHOOTING}{error_page(name)}"


class _Linked:
    """What `LGSPError` and `LGSPWarning` share: a page, and a message that links it."""

    docs_url: ClassVar[str | None] = None
    """The page that explains this class (None for the package's private ones)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A class of this module has a page when it is public; a subclass defined elsewhere
        # (an application's own) links the page of the class it derives from.
        if cls.__module__ == __name__:
            cls.docs_url = error_page(cls.__name__) if cls.__name__ in __all__ else None

    @property
    def message(self) -> str:
        """The message without the troubleshooting link."""
        return super().__str__()

    def __str__(self) -> str:
        text = self.message
        return f"{text}\n{_TROUBLESHOOTING}{self.docs_url}" if self.docs_url else text


class LGSPError(_Linked, Exception):
    """The base class of every exception langgraph-supervisor-pro raises.

    Each also keeps its built-in base (`LookupError`, `RuntimeError`, ...). `message` is
    the text without the troubleshooting link that `str()` ends with.

    Example:
        >>> from langgraph_supervisor_pro.errors import ReviewNotFoundError
        >>> err = ReviewNotFoundError("no pending review 'ab12'")
        >>> isinstance(err, LGSPError), isinstance(err, LookupError), err.message
        (True, True, "no pending review 'ab12'")
    """


class UserError(LGSPError):
    """The caller used the API wrongly: fix the call, retrying will not help.

    Example:
        >>> from langgraph_supervisor_pro.errors import InvalidDecisionError
        >>> issubclass(InvalidDecisionError, UserError)
        True
    """


class LGSPWarning(_Linked, UserWarning):
    """The base class of every warning langgraph-supervisor-pro issues.

    Example:
        >>> import warnings
        >>> warnings.simplefilter("ignore", LGSPWarning)  # silence them all
        >>> warnings.resetwarnings()
    """


# -- persistence ---------------------------------------------------------------------------


class ThreadBusyError(LGSPError, RuntimeError):
    """Another writer holds the thread, or stored a checkpoint this run did not see.

    Raised by `thread_lease` / `athread_lease` when the lease is held (at once, or after
    `wait` seconds), and by the Postgres checkpointers' fence when a run tries to store
    a root checkpoint whose parent is no longer the thread's head.

    Attributes:
        thread_id: The thread.
        holder: Who holds its lease (the owner string, e.g. `host:pid`), when known.

    Example:
        >>> err = ThreadBusyError("t-1", "worker-a:42")
        >>> err.thread_id, err.holder
        ('t-1', 'worker-a:42')
        >>> str(err).startswith("thread 't-1' is busy")
        True
    """

    def __init__(self, thread_id: str, holder: str | None = None, detail: str = "") -> None:
        self.thread_id = thread_id
        self.holder = holder
        held = f"held by {holder}" if holder else "held by another writer"
        message = detail or (
            f"thread {shown_id(thread_id)} is busy: its lease is {held}. Wait for the run to "
            "finish "
            "(thread_lease(..., wait=SECONDS) waits for the lease), or run another thread."
        )
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.thread_id, self.holder, self.message))


# -- review --------------------------------------------------------------------------------


class ReviewError(LGSPError):
    """Base class of the errors the review desk raises."""


class ReviewNotFoundError(ReviewError, LookupError):
    """No such review: the thread does not exist, has no pending review, or not that one."""


class InvalidDecisionError(ReviewError, UserError, ValueError):
    """The decision is not valid for the review; the run was not touched.

    Attributes:
        review: The `PendingReview` the decision was meant for.
    """

    def __init__(self, message: str, *, review: Any) -> None:
        super().__init__(message)
        self.review = review


class ReviewerNotAllowedError(ReviewError, PermissionError):
    """The reviewer may not answer the review: the policy's `members` or `may_answer` refuse.

    Raised by `resolve_review` before the run is touched when it is given the policy, or
    after the graph's own gate refused the answer (the run is then paused on the same
    review, whose `invalid_answer` says why).

    Attributes:
        review: The `PendingReview`.
        reviewer: Who tried to answer it (None: nobody was named).
    """

    def __init__(self, message: str, *, review: Any, reviewer: str | None) -> None:
        super().__init__(message)
        self.review = review
        self.reviewer = reviewer


class UndeclaredRiskWarning(LGSPWarning):
    """Some tools have no declared risk level, so they are treated as `high`.

    The warning category builders use when a worker's tools lack a level (see
    `warn_undeclared`): every call to such a tool needs a human's review until a level
    is declared. Build one with `for_tools` for the standard message, or with any
    message like any warning.

    Example:
        >>> w = UndeclaredRiskWarning.for_tools(["refund", "send_email"], worker="billing")
        >>> w.tools, w.worker
        (('refund', 'send_email'), 'billing')
        >>> "treated as high" in str(w)
        True
    """

    tools: tuple[str, ...] = ()
    """The undeclared tools' names (set by `for_tools`)."""
    worker: str | None = None
    """The worker they belong to (set by `for_tools`)."""

    @classmethod
    def for_tools(cls, tools: Sequence[str], *, worker: str | None = None) -> UndeclaredRiskWarning:
        """The warning for these tools, with a message listing them.

        Args:
            tools: The undeclared tools' names (see `undeclared_tools`).
            worker: The worker they belong to, named in the message.

        Returns:
            The warning, ready for `warnings.warn`.

        Example:
            >>> print(UndeclaredRiskWarning.for_tools(["refund"]))  # doctest: +ELLIPSIS
            1 tool has no declared risk level and is treated as high ...: refund. ...
        """
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


# -- workers -------------------------------------------------------------------------------


class WorkerTimeoutError(LGSPError):
    """A worker hop ran longer than its `Worker.timeout`.

    Not a subclass of the built-in `TimeoutError` (an `OSError`), so LangGraph's
    default retry predicate treats it as transient and retries it.

    Example:
        >>> WorkerTimeoutError("researcher", 5.0).timeout
        5.0
    """

    def __init__(self, worker: str, timeout: float) -> None:
        super().__init__(f"worker {worker!r} exceeded its timeout of {timeout:g}s")
        self.worker = worker
        self.timeout = timeout


class RemoteDomainError(LGSPError, RuntimeError):
    """A remote domain refused the hop (an HTTP 4xx), or its remote run failed.

    Not retried by the default worker retry policy (`default_worker_retry`): asking
    again gets the same answer. The hop is `failed`, its error this message (the URL
    shown with its password masked).

    Example:
        >>> RemoteDomainError("remote domain 'ops' (graph 'ops'): the remote run failed").message
        "remote domain 'ops' (graph 'ops'): the remote run failed"
    """


class RemoteDomainUnavailable(RemoteDomainError, ConnectionError):
    """A remote domain's server could not be reached, timed out or answered HTTP 5xx.

    A `ConnectionError`, so the default worker retry policy retries it; after the last
    attempt the hop is `failed`.

    Example:
        >>> isinstance(RemoteDomainUnavailable("unreachable"), ConnectionError)
        True
    """


# -- evals ---------------------------------------------------------------------------------


class EffectInDoubtError(LGSPError, RuntimeError):
    """An external effect may already have happened, and nobody can be asked here.

    `run_external` found the intent an earlier execution recorded before the call, and no
    outcome: that execution died between the call and the record. Inside a graph run the
    effect pauses on a review instead; outside one (no runnable context) and without
    `reconcile=`, this is raised rather than calling the remote a second time.

    Attributes:
        key: The effect's idempotency key.

    Example:
        >>> err = EffectInDoubtError("t-1/1/2/mailer/receipt")
        >>> err.key, "may already have happened" in str(err)
        ('t-1/1/2/mailer/receipt', True)
    """

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

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.key,))


class SetupLockError(LGSPError, RuntimeError):
    """Setup waited longer than its bound for a lock that another session holds.

    Attributes:
        what: What was being set up (`"lgsp_effects"`, `"lgsp_thread_leases"`).
        holders: `(pid, state, application_name, query)` of each session holding it.

    Example:
        >>> err = SetupLockError("lgsp_effects", 1.0, [(42, "idle in transaction", "w", "X")])
        >>> err.holders[0][0], "pid 42" in str(err)
        (42, True)
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

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_setup_lock_error, (type(self), self.what, self.message, self.holders))


def _rebuild_setup_lock_error(
    cls: type[SetupLockError], what: str, message: str, holders: list[tuple[Any, ...]]
) -> SetupLockError:
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.what, err.holders = what, holders
    return err


class JudgementNotFoundError(LGSPError, LookupError):
    """No queued verdict has this key in the store.

    Example:
        >>> print(JudgementNotFoundError("t-1:1"))  # doctest: +ELLIPSIS
        no queued judgement 't-1:1' in the store; lgsp judge list --store URL --all lists them
        For troubleshooting, visit: https://.../reference/errors/JudgementNotFoundError/
    """

    def __init__(self, key: str) -> None:
        super().__init__(
            f"no queued judgement {key!r} in the store; lgsp judge list --store URL --all "
            "lists them"
        )
        self.key = key


class JudgementAlreadyAcknowledgedError(LGSPError, ValueError):
    """The verdict was already acknowledged (by someone else, or by an earlier call).

    A `ValueError`, so code that caught the earlier error keeps working.

    Example:
        >>> err = JudgementAlreadyAcknowledgedError("t-1:1", by="alice", at="2030-01-01T09:00Z")
        >>> err.message
        "judgement 't-1:1' was already acknowledged by alice at 2030-01-01T09:00Z"
        >>> err.by, err.at
        ('alice', '2030-01-01T09:00Z')
    """

    def __init__(self, key: str, *, by: str | None, at: str | None) -> None:
        super().__init__(
            f"judgement {key!r} was already acknowledged by {by or 'someone unnamed'} at "
            f"{at or 'an unrecorded time'}"
        )
        self.key = key
        self.by = by
        """Who acknowledged it."""
        self.at = at
        """When (ISO 8601, UTC)."""


class JudgeTimeoutError(LGSPError):
    """The judge model did not answer within `OnlineJudge.timeout` (caught by the judge step).

    Not exported: the judge step records it in the verdict's `error`
    (`the judge failed: JudgeTimeoutError: ...`), it never reaches the caller.
    """

    def __init__(self, timeout: float) -> None:
        super().__init__(f"no verdict within the judge's timeout of {timeout:g}s")


# -- testing -------------------------------------------------------------------------------


class ScriptExhaustedError(UserError, RuntimeError):
    """Raised when a `ScriptedChatModel` is called after its last step was used.

    It subclasses `RuntimeError` (not `AssertionError`) on purpose: LangGraph's
    default `RetryPolicy` does not retry `RuntimeError`, so an exhausted script
    fails a graph run immediately instead of being retried with back-off.

    Attributes:
        script_length: How many steps the script had.
        call_index: Zero-based index of the call that found the script exhausted.
        last_message: The last message of that call's input (`None` if it was empty).

    Example:
        ```python
        model = ScriptedChatModel(script=["only reply"])
        model.invoke("one")
        with pytest.raises(ScriptExhaustedError, match="1 step"):
            model.invoke("two")
        ```
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

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self.args, self.__dict__)


# -- private: raised and handled inside the package ----------------------------------------


class ScrubbedError(LGSPError):
    """Stands in for an exception whose text held a secret.

    Its message is the original's type name and scrubbed message; the original is kept
    in `original` (never shown). No link: the text is the original's.

    Example:
        >>> ScrubbedError("RuntimeError: bad key ***").message
        'RuntimeError: bad key ***'
    """

    original: Exception | None = None


class InvalidSummaryError(LGSPError, ValueError):
    """The summarizer's reply is not a usable `ContextSummary` (compaction retries it)."""


class TemplateError(UserError, ValueError):
    """A template that does not exist, or a directory `lgsp new` must not write into."""


class DemoError(LGSPError, RuntimeError):
    """The demo's template is missing or cannot be loaded (a broken installation)."""


class ExportError(LGSPError):
    """The figures could not be exported; the message says why and what to do."""

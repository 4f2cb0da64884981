"""One errors module: every exception of the package derives from `LGSPError` (warnings from
`LGSPWarning`), keeps its built-in base, has a docs page, and its message links the page; each
halt reason has a page too, and a halted run's closing message links it."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
import warnings
from pathlib import Path
from typing import Any, get_args

import pytest

import langgraph_supervisor_pro as lgsp
from langgraph_supervisor_pro import Worker, create_supervisor, errors
from langgraph_supervisor_pro.errors import (
    InvalidDecisionError,
    JudgementAlreadyAcknowledgedError,
    JudgementNotFoundError,
    LGSPError,
    LGSPWarning,
    RemoteDomainError,
    RemoteDomainUnavailable,
    ReviewerNotAllowedError,
    ReviewError,
    ReviewNotFoundError,
    ScriptExhaustedError,
    ThreadBusyError,
    UndeclaredRiskWarning,
    UserError,
    WorkerTimeoutError,
)
from langgraph_supervisor_pro.types import HaltReason

PAGES = Path(__file__).resolve().parents[1] / "docs" / "reference" / "errors"
DOCS = "https://langgraph-supervisor-pro.readthedocs.io/en/latest/reference/errors"

SAMPLES: dict[type[BaseException], BaseException] = {
    LGSPError: LGSPError("something went wrong"),
    UserError: UserError("wrong call"),
    LGSPWarning: LGSPWarning("careful"),
    ThreadBusyError: ThreadBusyError("t-1", "host:1"),
    ReviewError: ReviewError("review trouble"),
    ReviewNotFoundError: ReviewNotFoundError("thread 't' has no pending review"),
    InvalidDecisionError: InvalidDecisionError("'maybe' is not allowed", review=None),
    ReviewerNotAllowedError: ReviewerNotAllowedError("no", review=None, reviewer="eve"),
    UndeclaredRiskWarning: UndeclaredRiskWarning.for_tools(["refund"]),
    WorkerTimeoutError: WorkerTimeoutError("researcher", 5.0),
    RemoteDomainError: RemoteDomainError("remote domain 'ops': refused"),
    RemoteDomainUnavailable: RemoteDomainUnavailable("remote domain 'ops': unreachable"),
    JudgementNotFoundError: JudgementNotFoundError("t-1:1"),
    JudgementAlreadyAcknowledgedError: JudgementAlreadyAcknowledgedError("k", by="a", at="t"),
    ScriptExhaustedError: ScriptExhaustedError("script of 1 step exhausted", script_length=1),
    errors.EffectInDoubtError: errors.EffectInDoubtError("t-1/1/2/mailer/receipt"),
    errors.SetupLockError: errors.SetupLockError(
        "lgsp_effects", 1.0, [(42, "idle in transaction", "worker", "INSERT ...")]
    ),
}
"""One instance of each public class (each has its own constructor)."""

BUILTIN_BASES: dict[type[BaseException], tuple[type[BaseException], ...]] = {
    ThreadBusyError: (RuntimeError,),
    ReviewNotFoundError: (ReviewError, LookupError),
    InvalidDecisionError: (ReviewError, UserError, ValueError),
    ReviewerNotAllowedError: (ReviewError, PermissionError),
    UndeclaredRiskWarning: (LGSPWarning, UserWarning),
    RemoteDomainError: (RuntimeError,),
    RemoteDomainUnavailable: (RemoteDomainError, ConnectionError),
    JudgementNotFoundError: (LookupError,),
    JudgementAlreadyAcknowledgedError: (ValueError,),
    ScriptExhaustedError: (UserError, RuntimeError),
    errors.EffectInDoubtError: (RuntimeError,),
    errors.SetupLockError: (RuntimeError,),
    errors.InvalidSummaryError: (ValueError,),
    errors.TemplateError: (UserError, ValueError),
    errors.DemoError: (RuntimeError,),
}
"""What `except ...:` code written before the errors module still catches."""


def _package_exception_classes() -> set[type[BaseException]]:
    """Every exception or warning class defined anywhere in the package."""
    found: set[type[BaseException]] = set()
    for info in pkgutil.walk_packages(lgsp.__path__, f"{lgsp.__name__}."):
        if info.name.endswith(".__main__"):  # importing it would run the CLI
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__.startswith(lgsp.__name__):
                found.add(obj)
    return found


def _public() -> list[type[BaseException]]:
    return [getattr(errors, name) for name in errors.__all__]


def test_every_exception_of_the_package_is_defined_in_errors_and_derives_from_the_base():
    classes = _package_exception_classes()
    assert len(classes) >= 20  # the walk found them (15 public, private ones, the bases)
    for cls in classes:
        assert cls.__module__ == errors.__name__, f"{cls.__qualname__} in {cls.__module__}"
        base = LGSPWarning if issubclass(cls, Warning) else LGSPError
        assert issubclass(cls, base), f"{cls.__qualname__} does not derive from {base.__name__}"


def test_the_public_names_are_few_and_exactly_the_exception_classes():
    assert len(errors.__all__) <= 25  # every home exports at most 25 (tests/test_public_api.py)
    assert all(inspect.isclass(c) and issubclass(c, BaseException) for c in _public())
    assert set(SAMPLES) == set(_public())
    assert issubclass(LGSPWarning, UserWarning) and not issubclass(LGSPWarning, LGSPError)


@pytest.mark.parametrize("cls", list(BUILTIN_BASES), ids=lambda c: c.__name__)
def test_the_builtin_bases_still_hold(cls: type[BaseException]) -> None:
    for base in BUILTIN_BASES[cls]:
        assert issubclass(cls, base), f"{cls.__name__} is no longer a {base.__name__}"


def test_existing_except_clauses_still_catch():
    with pytest.raises(LookupError):
        raise ReviewNotFoundError("nope")
    with pytest.raises(PermissionError):
        raise ReviewerNotAllowedError("no", review=None, reviewer=None)
    with pytest.raises(ConnectionError):
        raise RemoteDomainUnavailable("down")
    with pytest.raises(RuntimeError):
        raise ThreadBusyError("t")
    with pytest.raises(ValueError):
        raise JudgementAlreadyAcknowledgedError("k", by=None, at=None)
    with pytest.raises(LGSPError):
        raise WorkerTimeoutError("w", 1.0)


@pytest.mark.parametrize("cls", list(SAMPLES), ids=lambda c: c.__name__)
def test_every_public_class_has_a_page(cls: type[BaseException]) -> None:
    page = PAGES / f"{cls.__name__}.md"
    assert page.is_file(), f"no docs page {page.relative_to(PAGES.parents[2])}"
    assert page.read_text().startswith(f"# {cls.__name__}\n")


@pytest.mark.parametrize("cls", list(SAMPLES), ids=lambda c: c.__name__)
def test_every_public_message_carries_its_link(cls: type[BaseException]) -> None:
    error: Any = SAMPLES[cls]
    url = f"{DOCS}/{cls.__name__}/"
    assert cls.docs_url == url  # type: ignore[attr-defined]
    assert errors.error_page(cls.__name__) == url
    assert str(error) == f"{error.message}\nFor troubleshooting, visit: {url}"
    assert error.message and "For troubleshooting" not in error.message


def test_private_classes_have_no_page_and_no_link():
    public = set(_public())
    private = _package_exception_classes() - public
    assert {c.__name__ for c in private} >= {
        "ScrubbedError",
        "InvalidSummaryError",
        "JudgeTimeoutError",
        "TemplateError",
        "DemoError",
        "ExportError",
    }
    for cls in private:
        assert cls.docs_url is None, cls  # type: ignore[attr-defined]
        error = cls.__new__(cls)
        Exception.__init__(error, "plain")  # whatever its constructor takes
        assert str(error) == "plain"
    assert str(errors.JudgeTimeoutError(0.05)) == "no verdict within the judge's timeout of 0.05s"


def test_a_subclass_elsewhere_links_the_page_of_the_class_it_derives_from():
    class TenantBusy(ThreadBusyError):
        pass

    assert str(TenantBusy("t-1")).endswith(f"{DOCS}/ThreadBusyError/")


def test_errors_with_their_own_reduce_pickle_without_doubling_the_link():
    for error in (ThreadBusyError("t-1", "h:1"), SAMPLES[ScriptExhaustedError]):
        again: Any = pickle.loads(pickle.dumps(error))
        assert str(again) == str(error) and str(again).count("For troubleshooting") == 1


def test_a_warning_shows_its_link():
    with pytest.warns(UndeclaredRiskWarning) as record:
        warnings.warn(UndeclaredRiskWarning("tools ['x'] have no level"), stacklevel=1)
    assert str(record[0].message).endswith(f"{DOCS}/UndeclaredRiskWarning/")


@pytest.mark.parametrize("reason", get_args(HaltReason))
def test_each_halt_reason_has_a_page(reason: str) -> None:
    page = PAGES / f"{reason}.md"
    assert page.is_file(), f"no docs page for halt reason {reason!r}"
    assert page.read_text().startswith(f"# {reason}\n")
    assert errors.error_page(reason) == f"{DOCS}/{reason}/"


def test_a_halted_run_links_its_reason_and_the_state_keeps_its_values():
    def fetch(task: Any) -> dict[str, str]:
        return {"status": "failed", "error": "upstream timeout"}

    worker = Worker(name="fetch", description="Fetches.", agent=fetch, max_visits=1)
    graph = create_supervisor([worker], router=lambda view: "fetch").compile()
    final = graph.invoke({"messages": [("user", "Get the report")]})
    assert (final["status"], final["halt_reason"]) == ("halted", "max_visits")
    assert "troubleshooting" not in final["halt_detail"]  # the state holds no link
    first, link = final["messages"][-1].content.splitlines()[:2]
    assert first == f"Stopped early (max_visits): {final['halt_detail']}."
    assert link == f"For troubleshooting, visit: {DOCS}/max_visits/"


def test_a_failed_hop_stores_our_error_without_its_link():
    def slow(task: Any) -> str:
        raise WorkerTimeoutError("slow", 0.5)

    worker = Worker(name="slow", description="Slow.", agent=slow, retry=_no_retry())
    routes = iter(["slow", "FINISH"])
    graph = create_supervisor([worker], router=lambda view: next(routes)).compile()
    final = graph.invoke({"messages": [("user", "go")]})
    (entry,) = final["ledger"]
    assert entry["error"] == "WorkerTimeoutError: worker 'slow' exceeded its timeout of 0.5s"


def _no_retry() -> Any:
    from langgraph.types import RetryPolicy

    return RetryPolicy(max_attempts=1)

"""Contract test: the public API's names and signatures are part of the contract."""

import dataclasses
import inspect

import langgraph_supervisor_pro as lgsp
from langgraph_supervisor_pro import testing

EXPECTED = {
    "AsyncPostgresEffects",
    "Compaction",
    "CompactionEntry",
    "CompactionMiddleware",
    "ConfirmRequest",
    "ContextSummary",
    "DEFAULT_SUPERVISOR_PROMPT",
    "DEFAULT_SYNTHESIS_PROMPT",
    "FINISH",
    "HaltReason",
    "HopOutput",
    "InvalidDecisionError",
    "LedgerEntry",
    "PendingReview",
    "PostgresEffects",
    "ReviewDecision",
    "ReviewError",
    "ReviewNotFoundError",
    "ReviewPolicy",
    "Risk",
    "RouteDecision",
    "RouteState",
    "Router",
    "RunStatus",
    "SecurityEntry",
    "StoreEffects",
    "SupervisorGraph",
    "SupervisorInput",
    "SupervisorState",
    "SupervisorView",
    "SweepAction",
    "SynthesisInput",
    "Synthesizer",
    "Tier",
    "ToolGuard",
    "UndeclaredRiskWarning",
    "UsageEntry",
    "Worker",
    "WorkerAgent",
    "WorkerResult",
    "WorkerSlot",
    "WorkerStatus",
    "WorkerTask",
    "WorkerTimeoutError",
    "__version__",
    "aget_review",
    "alist_reviews",
    "aopen_checkpointer",
    "aopen_effects",
    "aopen_store",
    "aresolve_review",
    "asweep_reviews",
    "create_supervisor",
    "default_worker_retry",
    "effect_key",
    "get_review",
    "list_reviews",
    "open_checkpointer",
    "open_effects",
    "open_store",
    "recall_tool",
    "request_review",
    "resolve_review",
    "review_payload",
    "risk",
    "route_decision_model",
    "sweep_reviews",
}


def test_all_is_the_public_api():
    assert set(lgsp.__all__) == EXPECTED
    for name in lgsp.__all__:
        assert hasattr(lgsp, name), name


def test_public_callables_and_classes_have_docstrings_with_examples():
    for name in lgsp.__all__:
        obj = getattr(lgsp, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            doc = inspect.getdoc(obj) or ""
            assert doc, f"{name} has no docstring"
            if inspect.isfunction(obj) or name in {
                "Worker",
                "WorkerResult",
                "RouteDecision",
                "WorkerTask",
                "SupervisorView",
            }:
                assert "Example" in doc, f"{name} docstring has no example"


def test_signatures_are_pinned():
    assert str(inspect.signature(lgsp.create_supervisor)) == (
        "(workers: 'Sequence[Worker]', *, "
        "model: 'BaseChatModel | Runnable[Any, Any] | None' = None, "
        "router: 'Router | None' = None, prompt: 'str | None' = None, "
        "max_steps: 'int' = 20, fallback: 'str | None' = None, "
        "synthesizer: 'Synthesizer | None' = None, name: 'str' = 'supervisor', "
        "ledger_window: 'int' = 6, ping_pong_window: 'int | None' = 4, "
        "compaction: 'Compaction | None' = None, review: 'ReviewPolicy | None' = None, "
        "supervisor_retry: 'RetryPolicy | None' = None) -> 'SupervisorGraph'"
    )
    fields = [(f.name, f.kw_only) for f in dataclasses.fields(lgsp.Worker)]
    assert fields == [
        ("name", True),
        ("description", True),
        ("agent", True),
        ("model", True),
        ("prompt", True),
        ("tools", True),
        ("risks", True),
        ("timeout", True),
        ("retry", True),
        ("max_visits", True),
        ("reads", True),
        ("compaction", True),
    ]
    assert list(lgsp.WorkerResult.model_fields) == ["status", "result", "summary", "error"]
    assert list(lgsp.WorkerTask.model_fields) == [
        "worker",
        "step",
        "task",
        "instructions",
        "messages",
        "reads",
    ]
    for fn in (lgsp.open_checkpointer, lgsp.aopen_checkpointer, lgsp.open_store, lgsp.aopen_store):
        params = inspect.signature(fn).parameters
        assert next(iter(params)) == "url"
        assert all(p.kind is p.KEYWORD_ONLY for n, p in params.items() if n != "url")


def test_testing_module_exports_the_scripted_model():
    assert {"ScriptedChatModel", "ScriptedCall", "ScriptExhaustedError"} <= set(testing.__all__)


def test_no_private_langgraph_imports_in_the_package():
    import pathlib
    import re

    root = pathlib.Path(lgsp.__file__).parent
    pattern = re.compile(
        r"^\s*(from|import)\s+(langgraph\._|langchain_core\._|langgraph\.\w+\._)", re.M
    )
    offenders = [p.name for p in root.glob("*.py") if pattern.search(p.read_text())]
    assert offenders == []

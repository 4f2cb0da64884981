"""Contract test: the public API's names and signatures are part of the contract."""

import dataclasses
import importlib
import inspect
import pkgutil

import pytest

import langgraph_supervisor_pro as lgsp
from langgraph_supervisor_pro import testing
from langgraph_supervisor_pro.breakers import Breaker

EXPECTED = {
    "FINISH",
    "Breaker",
    "Compaction",
    "CompactionMiddleware",
    "LedgerEntry",
    "ReviewPolicy",
    "Risk",
    "RouteDecision",
    "Router",
    "SupervisorGraph",
    "SupervisorInput",
    "SupervisorState",
    "SupervisorView",
    "ThreadBusyError",
    "ThreadLease",
    "Tier",
    "ToolGuard",
    "Worker",
    "WorkerResult",
    "WorkerSlot",
    "WorkerTask",
    "__version__",
    "aopen_checkpointer",
    "aopen_store",
    "athread_lease",
    "create_supervisor",
    "effect_key",
    "open_checkpointer",
    "open_store",
    "register_secret",
    "risk",
    "route_decision_model",
    "thread_lease",
}
"""The top level: what most programs import."""

SUBMODULES: dict[str, set[str]] = {
    "builder": {
        "SupervisorGraph",
        "create_supervisor",
    },
    "contracts": {
        "Branch",
        "FINISH",
        "HaltReason",
        "RouteDecision",
        "RunStatus",
        "SUMMARY_MAX_CHARS",
        "WorkerResult",
        "WorkerStatus",
        "WorkerTask",
        "route_decision_model",
    },
    "state": {
        "BranchStage",
        "BreakerMark",
        "CompactionEntry",
        "DELTA_SNAPSHOT_FREQUENCY",
        "FanoutRoute",
        "JudgementEntry",
        "LedgerEntry",
        "ReviewEntry",
        "RouteState",
        "SecurityEntry",
        "SupervisorInput",
        "SupervisorState",
        "UsageEntry",
        "UsageRole",
        "WorkerSlot",
    },
    "breakers": {
        "BREAKER_LOGGER",
        "Breaker",
        "BreakerFailure",
        "BreakerState",
        "CircuitState",
        "breaker_namespace",
    },
    "redaction": {
        "register_secret",
    },
    "remote": {
        "REMOTE_EVENT_KEY",
        "RemoteDomainError",
        "RemoteDomainUnavailable",
        "RemoteSource",
        "RemoteStreamEvent",
        "remote_stream_event",
        "remote_thread_id",
    },
    "supervisor": {
        "DEFAULT_SUPERVISOR_PROMPT",
        "Router",
        "SupervisorView",
    },
    "synthesis": {
        "DEFAULT_SYNTHESIS_PROMPT",
        "HopOutput",
        "SynthesisInput",
        "Synthesizer",
    },
    "workers": {
        "Worker",
        "WorkerAgent",
        "WorkerFallback",
        "WorkerTimeoutError",
        "default_worker_retry",
    },
    "compaction": {
        "COMPACTION_PROMPT",
        "Compaction",
        "CompactionMiddleware",
        "CompactionOutcome",
        "Compactor",
        "ContextSummary",
        "SUMMARY_HEADER",
        "TokenCounter",
        "is_summary_message",
        "split_for_compaction",
    },
    "compaction.compactor": {
        "COMPACTION_PROMPT",
        "CompactionOutcome",
        "Compactor",
        "ContextSummary",
        "SUMMARY_HEADER",
        "is_summary_message",
        "split_for_compaction",
    },
    "compaction.config": {
        "Compaction",
        "TokenCounter",
    },
    "compaction.middleware": {
        "CompactionMiddleware",
    },
    "review": {
        "ACTIONS",
        "ALWAYS_REVIEW_KEY",
        "AUTONOMY_CONFIG_KEY",
        "AUTONOMY_ENV",
        "Action",
        "Approve",
        "ApproveDecision",
        "CONFIRM_PROMPT",
        "ConfirmCheck",
        "ConfirmRequest",
        "ConfirmVerdict",
        "DecisionInput",
        "DecisionType",
        "Edit",
        "EditDecision",
        "EditedAction",
        "EscalateDecision",
        "INTERRUPT_CHANNEL",
        "InvalidDecisionError",
        "OnTimeout",
        "POLICY_FILE_ENV",
        "PendingReview",
        "RISK_KEY",
        "RISK_LEVELS",
        "Reject",
        "RejectDecision",
        "Respond",
        "RespondDecision",
        "ReviewAnswer",
        "ReviewContext",
        "ReviewDecision",
        "ReviewError",
        "ReviewKind",
        "ReviewNotFoundError",
        "ReviewPolicy",
        "ReviewRequest",
        "ReviewerCheck",
        "ReviewerNotAllowedError",
        "Risk",
        "REFUSED_TOOL_EVENT",
        "SECURITY_LOGGER",
        "SWEEP_REVIEWER",
        "SweepAction",
        "TIERS",
        "Tier",
        "ToolGuard",
        "UndeclaredRiskWarning",
        "aconfirm_action",
        "aget_review",
        "alist_reviews",
        "aresolve_review",
        "asweep_reviews",
        "check_decision",
        "check_reviewer",
        "check_risk",
        "confirm_action",
        "decide",
        "declared_always_review",
        "declared_risk",
        "effective_risk",
        "get_review",
        "is_review_payload",
        "list_reviews",
        "request_review",
        "request_review_answer",
        "resolve_review",
        "review_payload",
        "risk",
        "server_auth",
        "strictest_tier",
        "sweep_reviews",
        "undeclared_tools",
        "warn_undeclared",
    },
    "review.confirm": {
        "CONFIRM_PROMPT",
        "ConfirmCheck",
        "ConfirmRequest",
        "ConfirmVerdict",
        "aconfirm_action",
        "confirm_action",
    },
    "review.desk": {
        "Approve",
        "DecisionInput",
        "Edit",
        "INTERRUPT_CHANNEL",
        "InvalidDecisionError",
        "PendingReview",
        "Reject",
        "Respond",
        "ReviewError",
        "ReviewNotFoundError",
        "ReviewerNotAllowedError",
        "SweepAction",
        "aget_review",
        "alist_reviews",
        "aresolve_review",
        "asweep_reviews",
        "check_decision",
        "check_reviewer",
        "get_review",
        "is_review_payload",
        "list_reviews",
        "resolve_review",
        "sweep_reviews",
    },
    "review.gate": {
        "ApproveDecision",
        "DecisionType",
        "EditDecision",
        "EditedAction",
        "EscalateDecision",
        "RejectDecision",
        "RespondDecision",
        "ReviewAnswer",
        "ReviewContext",
        "ReviewDecision",
        "ReviewKind",
        "ReviewRequest",
        "request_review",
        "request_review_answer",
        "review_payload",
    },
    "review.guard": {
        "REFUSED_TOOL_EVENT",
        "SECURITY_LOGGER",
        "ToolGuard",
    },
    "review.policy": {
        "ACTIONS",
        "AUTONOMY_CONFIG_KEY",
        "AUTONOMY_ENV",
        "Action",
        "OnTimeout",
        "POLICY_FILE_ENV",
        "ReviewPolicy",
        "ReviewerCheck",
        "SWEEP_REVIEWER",
        "TIERS",
        "Tier",
        "decide",
        "strictest_tier",
    },
    "review.server": {
        "server_auth",
    },
    "review.risks": {
        "ALWAYS_REVIEW_KEY",
        "RISK_KEY",
        "RISK_LEVELS",
        "Risk",
        "UndeclaredRiskWarning",
        "check_risk",
        "declared_always_review",
        "declared_risk",
        "effective_risk",
        "risk",
        "undeclared_tools",
        "warn_undeclared",
    },
    "persistence": {
        "CHECKPOINTER_URI_ENV",
        "FINISHED_STATUSES",
        "AsyncPostgresEffects",
        "OutputRef",
        "PostgresEffects",
        "PruneReport",
        "PrunedThread",
        "StoreEffects",
        "Takeover",
        "ThreadBusyError",
        "ThreadLease",
        "aopen_checkpointer",
        "aopen_effects",
        "aopen_store",
        "aprune_threads",
        "aresume_orphans",
        "astandby",
        "athread_lease",
        "effect_key",
        "open_checkpointer",
        "open_effects",
        "open_store",
        "output_namespace",
        "parse_age",
        "prune_threads",
        "recall_tool",
        "resume_orphans",
        "server_checkpointer",
        "standby",
        "thread_lease",
    },
    "persistence.checkpointers": {
        "aopen_checkpointer",
        "open_checkpointer",
    },
    "persistence.effects": {
        "AsyncPostgresEffects",
        "PostgresEffects",
        "StoreEffects",
        "aopen_effects",
        "effect_key",
        "open_effects",
    },
    "persistence.leases": {
        "ThreadBusyError",
        "ThreadLease",
        "athread_lease",
        "thread_lease",
    },
    "persistence.memory": {
        "OutputRef",
        "output_namespace",
        "recall_tool",
    },
    "persistence.server": {
        "CHECKPOINTER_URI_ENV",
        "server_checkpointer",
    },
    "persistence.retention": {
        "FINISHED_STATUSES",
        "PruneReport",
        "PrunedThread",
        "aprune_threads",
        "parse_age",
        "prune_threads",
    },
    "persistence.standby": {
        "Takeover",
        "aresume_orphans",
        "astandby",
        "resume_orphans",
        "standby",
    },
    "persistence.stores": {
        "aopen_store",
        "open_store",
    },
    "models": {
        "MODEL_ENV",
        "model_from_env",
        "model_variable",
    },
    "verification": {
        "DEFAULT_CHECKER_PROMPT",
        "OutputSchema",
        "Verdict",
        "Verifier",
        "VerifierReply",
    },
    "testing": {
        "FunctionChatModel",
        "ScriptExhaustedError",
        "ScriptReply",
        "ScriptStep",
        "ScriptedCall",
        "ScriptedChatModel",
    },
    "testing.scripted": {
        "FunctionChatModel",
        "ScriptExhaustedError",
        "ScriptReply",
        "ScriptStep",
        "ScriptedCall",
        "ScriptedChatModel",
    },
    "observability": {
        "DEFAULT_JUDGE_CRITERIA",
        "JUDGE_NAMESPACE",
        "JudgeVerdict",
        "JudgedTurn",
        "JudgementEvent",
        "JudgementAlreadyAcknowledgedError",
        "JudgementNotFoundError",
        "OnlineJudge",
        "ReviewStatus",
        "aacknowledge_judgement",
        "acknowledge_judgement",
        "ajudge_reviews",
        "judge_key",
        "judge_reviews",
        "judged",
        "DEFAULT_LOOP_VISITS",
        "DEFAULT_UTILISATION_ALERT",
        "REVIEW_TIME_BUCKETS",
        "HopUtilisation",
        "HOP_COLOURS",
        "INSTRUMENTS",
        "DelegationInstruments",
        "publish_metrics",
        "REVIEW_COLOUR",
        "ROLE_COLOURS",
        "metrics_html",
        "write_metrics_html",
        "ReviewTimeBucket",
        "AuditEvent",
        "AuditTrail",
        "CompactionEvent",
        "CompactionMetrics",
        "CompletionMetrics",
        "DecisionEvent",
        "DelegationMetrics",
        "DomainRecord",
        "EdgeMetrics",
        "EffectEvent",
        "EndEvent",
        "ExpectedRoutes",
        "HopEvent",
        "OTelCallbackHandler",
        "RefusalEvent",
        "RefusalMetrics",
        "ReviewEvent",
        "ReviewMetrics",
        "ReviewOpening",
        "RoutingMetrics",
        "RoutingScore",
        "ThreadRecord",
        "TurnEvent",
        "UtilisationMetrics",
        "WorkerMetrics",
        "adelegation_metrics",
        "aread_threads",
        "audit_trail",
        "Case",
        "CaseResult",
        "EvaluationReport",
        "Outcome",
        "RunOutput",
        "Score",
        "Scorer",
        "ScorerSummary",
        "aevaluate",
        "answer_traits",
        "dataset_cases",
        "evaluate",
        "langsmith_cases",
        "route_exact_match",
        "status_done",
        "compute_metrics",
        "delegation_metrics",
        "expected_routes",
        "load_expected",
        "parse_since",
        "read_threads",
    },
    "observability.otel_metrics": {
        "INSTRUMENTS",
        "DelegationInstruments",
        "publish_metrics",
    },
    "observability.otel": {
        "OTelCallbackHandler",
    },
    "observability.audit": {
        "AuditEvent",
        "AuditTrail",
        "CompactionEvent",
        "DecisionEvent",
        "EffectEvent",
        "EndEvent",
        "HopEvent",
        "JudgementEvent",
        "RefusalEvent",
        "ReviewEvent",
        "TurnEvent",
        "audit_trail",
    },
    "observability.evaluation": {
        "Case",
        "CaseResult",
        "EvaluationReport",
        "Outcome",
        "RunOutput",
        "Score",
        "Scorer",
        "ScorerSummary",
        "aevaluate",
        "answer_traits",
        "dataset_cases",
        "evaluate",
        "langsmith_cases",
        "route_exact_match",
        "status_done",
    },
    "observability.judge": {
        "DEFAULT_JUDGE_CRITERIA",
        "JudgeVerdict",
        "OnlineJudge",
        "judge_key",
        "judged",
    },
    "observability.judge_queue": {
        "JUDGE_NAMESPACE",
        "JudgedTurn",
        "JudgementAlreadyAcknowledgedError",
        "JudgementNotFoundError",
        "ReviewStatus",
        "aacknowledge_judgement",
        "acknowledge_judgement",
        "ajudge_reviews",
        "judge_reviews",
    },
    "observability.metrics_html": {
        "HOP_COLOURS",
        "REVIEW_COLOUR",
        "ROLE_COLOURS",
        "metrics_html",
        "write_metrics_html",
    },
    "observability.metrics": {
        "DEFAULT_LOOP_VISITS",
        "DEFAULT_UTILISATION_ALERT",
        "REVIEW_TIME_BUCKETS",
        "HopUtilisation",
        "ReviewTimeBucket",
        "CompactionMetrics",
        "CompletionMetrics",
        "DelegationMetrics",
        "DomainRecord",
        "EdgeMetrics",
        "ExpectedRoutes",
        "RefusalMetrics",
        "ReviewOpening",
        "ReviewMetrics",
        "RoutingMetrics",
        "RoutingScore",
        "ThreadRecord",
        "UtilisationMetrics",
        "WorkerMetrics",
        "adelegation_metrics",
        "aread_threads",
        "compute_metrics",
        "delegation_metrics",
        "expected_routes",
        "load_expected",
        "parse_since",
        "read_threads",
    },
    "cli": {
        "DEFAULT_DEMO_DB",
        "app",
        "main",
        "review_app",
    },
    "cli.commands": {
        "DEFAULT_DEMO_DB",
        "app",
        "main",
        "review_app",
    },
}
"""Every public module and subpackage (relative to the package) and its `__all__`."""

SUBPACKAGES = ("compaction", "review", "persistence", "testing", "cli", "observability")


def test_all_is_the_public_api():
    assert set(lgsp.__all__) == EXPECTED
    assert len(lgsp.__all__) == len(EXPECTED)  # no duplicates
    for name in lgsp.__all__:
        assert hasattr(lgsp, name), name


def _public_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(lgsp.__path__, f"{lgsp.__name__}."):
        relative = info.name.removeprefix(f"{lgsp.__name__}.")
        if not any(part.startswith("_") for part in relative.split(".")):
            names.append(relative)
    return sorted(names)


def test_every_public_module_is_pinned():
    # A new public module fails here until its `__all__` is pinned below (or it is made
    # private with a leading underscore).
    assert _public_modules() == sorted(SUBMODULES)


@pytest.mark.parametrize("name", sorted(SUBMODULES))
def test_each_public_module_pins_its_all(name):
    module = importlib.import_module(f"{lgsp.__name__}.{name}")
    exported = list(module.__all__)
    assert set(exported) == SUBMODULES[name]
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"
    for attr in exported:
        assert hasattr(module, attr), f"{name}.{attr}"


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_each_subpackage_exports_exactly_its_modules_public_names(package):
    modules = [n for n in SUBMODULES if n.startswith(f"{package}.")]
    assert modules, package
    union = set().union(*(SUBMODULES[m] for m in modules))
    assert SUBMODULES[package] == union
    init = importlib.import_module(f"{lgsp.__name__}.{package}")
    for module_name in modules:
        module = importlib.import_module(f"{lgsp.__name__}.{module_name}")
        for attr in module.__all__:
            assert getattr(init, attr) is getattr(module, attr), f"{package}.{attr}"


def test_top_level_names_are_their_submodules_names():
    # The top level adds nothing of its own: each name is also where it is defined.
    owners = {
        name: module
        for module, names in SUBMODULES.items()
        if module not in SUBPACKAGES
        for name in names
    }
    for name in EXPECTED - {"__version__"}:
        assert name in owners, f"{name} is exported by no submodule"
        module = importlib.import_module(f"{lgsp.__name__}.{owners[name]}")
        assert getattr(lgsp, name) is getattr(module, name), name


def test_removed_top_level_names_stay_in_their_submodules():
    # Names that left the top level are imported from their submodule.
    from langgraph_supervisor_pro.persistence import open_effects, recall_tool
    from langgraph_supervisor_pro.review import PendingReview, list_reviews, resolve_review
    from langgraph_supervisor_pro.synthesis import Synthesizer
    from langgraph_supervisor_pro.workers import WorkerTimeoutError

    for obj in (
        open_effects,
        recall_tool,
        PendingReview,
        list_reviews,
        resolve_review,
        Synthesizer,
        WorkerTimeoutError,
    ):
        assert obj.__name__ not in lgsp.__all__ and not hasattr(lgsp, obj.__name__)


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


@pytest.mark.parametrize("name", sorted(SUBMODULES))
def test_every_public_function_of_every_module_has_an_example(name):
    module = importlib.import_module(f"{lgsp.__name__}.{name}")
    for attr in module.__all__:
        obj = getattr(module, attr)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            doc = inspect.getdoc(obj) or ""
            assert doc, f"{name}.{attr} has no docstring"
            if inspect.isfunction(obj):
                assert "Example" in doc, f"{name}.{attr} docstring has no example"


def test_signatures_are_pinned():
    assert str(inspect.signature(lgsp.create_supervisor)) == (
        "(workers: 'Sequence[Worker]', *, "
        "model: 'BaseChatModel | Runnable[Any, Any] | None' = None, "
        "router: 'Router | None' = None, prompt: 'str | None' = None, "
        "max_steps: 'int' = 20, fallback: 'str | None' = None, "
        "synthesizer: 'Synthesizer | None' = None, name: 'str' = 'supervisor', "
        "ledger_window: 'int' = 6, ping_pong_window: 'int | None' = 4, "
        "compaction: 'Compaction | None' = None, review: 'ReviewPolicy | None' = None, "
        "supervisor_retry: 'RetryPolicy | None' = None, parallel: 'bool' = False, "
        "context_schema: 'type[Any] | None' = None, judge: 'OnlineJudge | None' = None) "
        "-> 'SupervisorGraph'"
    )
    assert str(inspect.signature(lgsp.register_secret)) == "(value: 'str | SecretStr') -> 'None'"
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
        ("output_schema", True),
        ("verify", True),
        ("fallback", True),
        ("breaker", True),
    ]
    assert [(f.name, f.kw_only) for f in dataclasses.fields(Breaker)] == [
        ("failures", True),
        ("window", True),
        ("cooldown", True),
        ("probe_timeout", True),
        ("clock", True),
    ]
    assert getattr(Breaker, "__dataclass_params__").frozen  # noqa: B009
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
    for fn in (lgsp.open_checkpointer, lgsp.aopen_checkpointer):
        params = inspect.signature(fn).parameters
        assert list(params) == [
            "url",
            "pool_size",
            "setup",
            "connect_timeout",
            "fence",
            "keep_agent_checkpoints",
        ]
        assert params["keep_agent_checkpoints"].default is False


def test_review_desk_signatures_are_pinned():
    from langgraph_supervisor_pro.review import desk

    for fn in (desk.resolve_review, desk.aresolve_review):
        assert str(inspect.signature(fn)) == (
            "(graph: 'Graph', *, thread_id: 'str', decision: 'DecisionInput', "
            "reviewer: 'str | None' = None, interrupt_id: 'str | None' = None, "
            "config: 'RunnableConfig | None' = None, durability: 'Durability | None' = None, "
            "policy: 'ReviewPolicy | None' = None) -> 'Any'"
        )
    decisions = {
        desk.Approve: [],
        desk.Reject: [("message", True)],
        desk.Edit: [("args", True), ("name", True)],
        desk.Respond: [("message", True)],
    }
    for cls, expected in decisions.items():
        assert dataclasses.is_dataclass(cls), cls
        assert getattr(cls, "__dataclass_params__").frozen, cls  # noqa: B009
        assert [(f.name, f.kw_only) for f in dataclasses.fields(cls)] == expected, cls


def test_retention_signatures_and_frozen_reports_are_pinned():
    from langgraph_supervisor_pro.persistence import retention

    for fn in (retention.prune_threads, retention.aprune_threads):
        assert str(inspect.signature(fn)) == (
            "(saver: 'BaseCheckpointSaver[Any]', store: 'BaseStore | None' = None, *, "
            "older_than: 'str | timedelta', statuses: 'str | Iterable[str]' = ('done',), "
            "dry_run: 'bool' = True, store_namespaces: 'Sequence[Sequence[str]]' = (), "
            "batch_size: 'int' = 200, now: 'datetime | None' = None) -> 'PruneReport'"
        )
    assert str(inspect.signature(retention.parse_age)) == (
        "(value: 'str | timedelta', *, where: 'str' = 'older_than') -> 'timedelta'"
    )
    assert retention.FINISHED_STATUSES == ("done", "halted", "failed")
    fields = {
        retention.PrunedThread: [
            "thread_id",
            "status",
            "outcome",
            "last_activity",
            "age_seconds",
            "rows",
        ],
        retention.PruneReport: [
            "dry_run",
            "cutoff",
            "statuses",
            "scanned",
            "threads",
            "kept",
        ],
    }
    for cls, names in fields.items():
        assert getattr(cls, "__dataclass_params__").frozen, cls  # noqa: B009
        assert [(f.name, f.kw_only) for f in dataclasses.fields(cls)] == [(n, True) for n in names]


def test_server_checkpointer_signature_is_pinned():
    from langgraph_supervisor_pro.persistence import server

    assert str(inspect.signature(server.server_checkpointer)) == (
        "(*, environ: 'Mapping[str, str] | None' = None, pool_size: 'int' = 10, "
        "connect_timeout: 'float' = 10.0, keep_agent_checkpoints: 'bool' = False) -> "
        "'AsyncIterator[BaseCheckpointSaver[str]]'"
    )
    assert server.CHECKPOINTER_URI_ENV == "LGSP_CHECKPOINTER_URI"


def test_audit_trail_signature_and_frozen_events_are_pinned():
    from langgraph_supervisor_pro.observability import audit

    assert str(inspect.signature(audit.audit_trail)) == (
        "(checkpointer_or_graph: 'BaseCheckpointSaver[Any] | Any', thread_id: 'str', *, "
        "effects: 'EffectsSource | Sequence[EffectsSource] | None' = None) -> 'AuditTrail'"
    )
    for name in audit.__all__:
        cls = getattr(audit, name)
        if inspect.isclass(cls):
            assert dataclasses.is_dataclass(cls), name
            assert getattr(cls, "__dataclass_params__").frozen, name  # noqa: B009


def test_online_judge_signatures_are_pinned():
    from langgraph_supervisor_pro.observability import judge, judge_queue

    assert [(f.name, f.kw_only) for f in dataclasses.fields(judge.OnlineJudge)] == [
        ("model", True),
        ("sample", True),
        ("threshold", True),
        ("criteria", True),
        ("client", True),
        ("feedback_key", True),
        ("max_answer_chars", True),
        ("timeout", True),
    ]
    assert getattr(judge.OnlineJudge, "__dataclass_params__").frozen  # noqa: B009
    assert list(judge.JudgeVerdict.model_fields) == ["score", "passed", "reasons"]
    for fn in (judge_queue.judge_reviews, judge_queue.ajudge_reviews):
        assert str(inspect.signature(fn)) == (
            "(store: 'BaseStore', *, status: \"ReviewStatus | Literal['all']\" = 'open') "
            "-> 'list[JudgedTurn]'"
        )
    for ack in (judge_queue.acknowledge_judgement, judge_queue.aacknowledge_judgement):
        assert str(inspect.signature(ack)) == (
            "(store: 'BaseStore', key: 'str', *, by: 'str', note: 'str' = '') -> 'JudgedTurn'"
        )
    assert getattr(judge_queue.JudgedTurn, "__dataclass_params__").frozen  # noqa: B009


def test_review_answer_signatures_are_pinned():
    from langgraph_supervisor_pro.review import gate, server

    for fn in (gate.request_review, gate.request_review_answer):
        assert str(inspect.signature(fn)).startswith(
            "(payload: 'Mapping[str, Any]', *, escalation_timeout: 'float | None' = None, "
            "policy: 'ReviewPolicy | None' = None) -> "
        )
    assert str(inspect.signature(server.server_auth)) == (
        "(*, authenticate: 'Callable[..., Awaitable[Any]]', "
        "policy: 'ReviewPolicy | None' = None) -> 'Auth'"
    )
    assert [(f.name, f.kw_only) for f in dataclasses.fields(gate.ReviewAnswer)] == [
        ("decision", True),
        ("reviewer", True),
        ("answered_at", True),
        ("interrupt_id", True),
        ("review", True),
    ]
    fields = [f.name for f in dataclasses.fields(lgsp.ReviewPolicy)]
    assert fields[-2:] == ["members", "may_answer"]


def test_testing_module_exports_the_scripted_model():
    assert {"ScriptedChatModel", "ScriptedCall", "ScriptExhaustedError"} <= set(testing.__all__)


def test_no_private_langgraph_imports_in_the_package():
    import pathlib
    import re

    root = pathlib.Path(lgsp.__file__).parent
    pattern = re.compile(
        r"^\s*(from|import)\s+(langgraph\._|langchain_core\._|langgraph\.\w+\._)", re.M
    )
    offenders = [str(p) for p in root.rglob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


def test_remote_stream_event_signature_and_shape_are_pinned():
    from langgraph_supervisor_pro import remote

    assert remote.REMOTE_EVENT_KEY == "lgsp_remote"
    assert str(inspect.signature(remote.remote_stream_event)) == (
        "(chunk: 'object') -> 'RemoteStreamEvent | None'"
    )
    assert list(remote.RemoteStreamEvent.__annotations__) == ["lgsp_remote", "mode", "ns", "data"]
    assert list(remote.RemoteSource.__annotations__) == ["path", "graph_id", "thread_id", "run_id"]

"""Contract test: the public API's names and signatures are part of the contract."""

import dataclasses
import importlib
import inspect
import pkgutil

import pytest

import langgraph_supervisor_pro as lgsp
from langgraph_supervisor_pro import testing
from langgraph_supervisor_pro._breakers import Breaker

PUBLIC: dict[str, set[str]] = {
    "": {
        "Budget",
        "Compaction",
        "FINISH",
        "ReviewPolicy",
        "RouteDecision",
        "SupervisorView",
        "Worker",
        "WorkerResult",
        "WorkerTask",
        "aopen_checkpointer",
        "aopen_store",
        "create_supervisor",
        "open_checkpointer",
        "open_store",
        "register_secret",
        "risk",
    },
    "types": {
        "HaltReason",
        "LedgerEntry",
        "ReviewEntry",
        "Router",
        "RunStatus",
        "SupervisorGraph",
        "SupervisorInput",
        "SupervisorState",
        "WorkerSlot",
        "WorkerStatus",
        "route_decision_model",
    },
    "workers": {
        "Breaker",
        "HopOutput",
        "RemoteStreamEvent",
        "SynthesisInput",
        "Synthesizer",
        "Verdict",
        "Verifier",
        "WorkerFallback",
        "default_worker_retry",
        "model_from_env",
        "remote_stream_event",
    },
    "review": {
        "ConfirmRequest",
        "PendingReview",
        "ReviewAnswer",
        "ReviewRequest",
        "Risk",
        "Tier",
        "ToolGuard",
        "aconfirm_action",
        "alist_reviews",
        "aresolve_review",
        "asweep_reviews",
        "confirm_action",
        "decide",
        "list_reviews",
        "request_review",
        "resolve_review",
        "server_auth",
        "sweep_reviews",
    },
    "persistence": {
        "PruneReport",
        "StoreEffects",
        "aopen_effects",
        "aprune_threads",
        "aresume_orphans",
        "astandby",
        "athread_lease",
        "effect_key",
        "open_effects",
        "output_namespace",
        "prune_threads",
        "recall_tool",
        "resume_orphans",
        "server_checkpointer",
        "standby",
        "thread_lease",
    },
    "compaction": {
        "CompactionMiddleware",
        "Compactor",
        "ContextSummary",
        "is_summary_message",
    },
    "observability": {
        "DelegationMetrics",
        "OTelCallbackHandler",
        "adelegation_metrics",
        "aread_threads",
        "audit_trail",
        "compute_metrics",
        "delegation_metrics",
        "publish_metrics",
        "read_threads",
        "write_metrics_html",
    },
    "evals": {
        "JudgeVerdict",
        "OnlineJudge",
        "aacknowledge_judgement",
        "acknowledge_judgement",
        "aevaluate",
        "ajudge_reviews",
        "answer_traits",
        "evaluate",
        "judge_reviews",
        "route_exact_match",
        "routing_f1",
        "status_done",
    },
    "testing": {
        "FunctionChatModel",
        "ScriptedCall",
        "ScriptedChatModel",
    },
    "cli": {
        "app",
        "main",
    },
    "errors": {
        "InvalidDecisionError",
        "JudgementAlreadyAcknowledgedError",
        "JudgementNotFoundError",
        "LGSPError",
        "LGSPWarning",
        "EffectInDoubtError",
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
    },
}
"""Every public home (relative to the package; "" is the top level) and its `__all__`.

Everything else is private: implementation modules start with `_`. A name has one public
home; the docs' API reference is generated from these (docs/reference/api/).
"""


def _public_modules() -> list[str]:
    names = [""]
    for info in pkgutil.walk_packages(lgsp.__path__, f"{lgsp.__name__}."):
        relative = info.name.removeprefix(f"{lgsp.__name__}.")
        if not any(part.startswith("_") for part in relative.split(".")):
            names.append(relative)
    return sorted(names)


def _module(home: str):
    return importlib.import_module(f"{lgsp.__name__}.{home}" if home else lgsp.__name__)


def test_the_public_modules_are_exactly_the_pinned_homes():
    # A new public module fails here until its `__all__` is pinned above (or it is made
    # private with a leading underscore).
    assert _public_modules() == sorted(PUBLIC)


@pytest.mark.parametrize("home", sorted(PUBLIC))
def test_each_home_pins_its_all(home):
    module = _module(home)
    exported = list(module.__all__)
    assert set(exported) == PUBLIC[home]
    assert len(exported) == len(set(exported)), f"{home}.__all__ has duplicates"
    for attr in exported:
        assert getattr(module, attr) is not None, f"{home}.{attr}"


def test_each_name_has_one_home_and_the_surface_stays_small():
    seen: dict[str, str] = {}
    for home, names in PUBLIC.items():
        for name in names:
            assert name not in seen, f"{name} is exported by both {seen[name]!r} and {home!r}"
            seen[name] = home
    assert len(PUBLIC[""]) <= 16, "the top level holds what a first program uses"
    for home, names in PUBLIC.items():
        assert len(names) <= 25, f"{home} exports {len(names)} names"
    assert len(seen) <= 120
    # Presentation constants and wire-format helpers are private: public constants are few.
    constants = {n for n in seen if n.isupper() and n != "FINISH"}
    assert not constants, constants


def test_public_objects_are_defined_in_private_modules():
    # Public homes re-export; the implementation lives in `_`-prefixed modules. Except the
    # errors: defined in `errors`, so a traceback names the class where it is imported from
    # (`langgraph_supervisor_pro.errors.ThreadBusyError`), as `langgraph.errors` does.
    for home, names in PUBLIC.items():
        if home == "errors":
            continue
        module = _module(home)
        for name in names:
            obj = getattr(module, name)
            where = getattr(obj, "__module__", None)
            if where and where.startswith(lgsp.__name__) and inspect.isclass(obj):
                assert any(p.startswith("_") for p in where.split(".")[1:]), (name, where)


def test_version_is_the_distribution_version():
    assert isinstance(lgsp.__version__, str) and lgsp.__version__


@pytest.mark.parametrize("home", sorted(PUBLIC))
def test_public_callables_and_classes_have_docstrings_with_examples(home):
    module = _module(home)
    for attr in module.__all__:
        obj = getattr(module, attr)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            doc = inspect.getdoc(obj) or ""
            assert doc, f"{home}.{attr} has no docstring"
            if inspect.isfunction(obj):
                assert "Example" in doc, f"{home}.{attr} docstring has no example"


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
        "context_schema: 'type[Any] | None' = None, judge: 'OnlineJudge | None' = None, "
        "budget: 'Budget | None' = None) "
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
        ("budget", True),
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
    from langgraph_supervisor_pro.review import _desk as desk

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
    from langgraph_supervisor_pro.persistence import _retention as retention

    for fn in (retention.prune_threads, retention.aprune_threads):
        assert str(inspect.signature(fn)) == (
            "(saver: 'BaseCheckpointSaver[Any]', store: 'BaseStore | None' = None, *, "
            "older_than: 'float | timedelta', statuses: 'str | Iterable[str]' = ('done',), "
            "dry_run: 'bool' = True, store_namespaces: 'Sequence[Sequence[str]]' = (), "
            "batch_size: 'int' = 200, now: 'datetime | None' = None) -> 'PruneReport'"
        )
    assert str(inspect.signature(retention.parse_age)) == (
        "(value: 'float | timedelta | str', *, where: 'str' = 'older_than') -> 'timedelta'"
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
    from langgraph_supervisor_pro.persistence import _server as server

    assert str(inspect.signature(server.server_checkpointer)) == (
        "(*, environ: 'Mapping[str, str] | None' = None, pool_size: 'int' = 10, "
        "connect_timeout: 'float' = 10.0, keep_agent_checkpoints: 'bool' = False) -> "
        "'AsyncIterator[BaseCheckpointSaver[str]]'"
    )
    assert server.CHECKPOINTER_URI_ENV == "LGSP_CHECKPOINTER_URI"


def test_audit_trail_signature_and_frozen_events_are_pinned():
    from langgraph_supervisor_pro.observability import _audit as audit

    assert str(inspect.signature(audit.audit_trail)) == (
        "(checkpointer_or_graph: 'BaseCheckpointSaver[Any] | Any', thread_id: 'str', *, "
        "effects: 'EffectsSource | Sequence[EffectsSource] | None' = None) -> 'AuditTrail'"
    )
    events = [
        cls
        for name, cls in vars(audit).items()
        if inspect.isclass(cls) and cls.__module__ == audit.__name__ and not name.startswith("_")
    ]
    assert len(events) == 12  # the trail and its eleven event kinds
    for cls in events:
        assert dataclasses.is_dataclass(cls), cls
        assert getattr(cls, "__dataclass_params__").frozen, cls  # noqa: B009


def test_online_judge_signatures_are_pinned():
    from langgraph_supervisor_pro.evals import _judge as judge
    from langgraph_supervisor_pro.evals import _judge_queue as judge_queue

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
    from langgraph_supervisor_pro.review import _gate as gate
    from langgraph_supervisor_pro.review import _server as server

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
    assert fields[-3:] == ["members", "may_answer", "allow_run_override"]


def test_testing_module_exports_the_scripted_model():
    assert {"ScriptedChatModel", "ScriptedCall"} <= set(testing.__all__)


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
    from langgraph_supervisor_pro import _remote as remote

    assert remote.REMOTE_EVENT_KEY == "lgsp_remote"
    assert str(inspect.signature(remote.remote_stream_event)) == (
        "(chunk: 'object') -> 'RemoteStreamEvent | None'"
    )
    assert list(remote.RemoteStreamEvent.__annotations__) == ["lgsp_remote", "mode", "ns", "data"]
    assert list(remote.RemoteSource.__annotations__) == ["path", "graph_id", "thread_id", "run_id"]


def _user_code() -> list[tuple[str, str]]:
    """What users read and copy: templates, notebooks, README and docs code blocks."""
    import json
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[1]
    found = [(str(p.relative_to(root)), p.read_text()) for p in root.glob("templates/**/*.py")]
    for nb in sorted(root.glob("notebooks/*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        found.append((str(nb.relative_to(root)), code))
    block = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
    for md in [root / "README.md", *sorted(root.glob("docs/**/*.md"))]:
        found.append((str(md.relative_to(root)), "\n".join(block.findall(md.read_text()))))
    return found


def test_user_facing_code_imports_only_public_names():
    import ast

    imports = 0
    for where, code in _user_code():
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue  # a fragment (docs may show one); the docs' own test runs the blocks
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(lgsp.__name__):
                home = node.module.removeprefix(lgsp.__name__).removeprefix(".")
                assert home in PUBLIC, f"{where}: imports from the private module {node.module}"
                for alias in node.names:
                    assert alias.name in PUBLIC[home] or alias.name == "__version__", (
                        f"{where}: {alias.name} is not public in {node.module}"
                    )
                    imports += 1
    assert imports > 50

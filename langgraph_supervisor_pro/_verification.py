"""Verification at the handoff: a worker's result is checked before the supervisor sees it.

`Worker(output_schema=...)`, then `Worker(verify=...)`, on a `success` result only; a result
that fails either (or a check that raises) becomes a `failed` hop whose `error` says why
(docs/architecture.md, "Verification at the handoff").
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from langgraph_supervisor_pro._contracts import WorkerResult, WorkerTask
from langgraph_supervisor_pro._internal.text import truncate
from langgraph_supervisor_pro._internal.validation import validation_summary


class Verdict(BaseModel):
    """A checker's verdict on one result.

    Example:
        >>> Verdict(passed=False, reason="no sources cited").reason
        'no sources cited'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    passed: bool = Field(description="True when the result does what the task asked.")
    reason: str = Field(default="", description="Why it fails (empty when it passes).")


VerifierReply: TypeAlias = bool | str | Verdict | None
"""What a verify function returns: `True`, `None` or a passing `Verdict` to pass; `False`,
a reason (a non-empty `str`) or a failing `Verdict` to fail."""

Verifier: TypeAlias = (
    Callable[[WorkerTask, WorkerResult], VerifierReply]
    | Callable[[WorkerTask, WorkerResult], Awaitable[VerifierReply]]
    | BaseChatModel
)
"""A verify function (sync or async), or a chat model that checks the result."""

OutputSchema: TypeAlias = type[Any] | Mapping[str, Any]
"""A type pydantic can validate (a BaseModel, TypedDict, dataclass...) or a JSON Schema."""

DEFAULT_CHECKER_PROMPT = (
    "You check a worker's result before it is used. Say whether the result does what the "
    "task and the instructions asked, with nothing invented and nothing essential missing. "
    "Answer with `passed` and, when it fails, a one-sentence `reason`."
)
"""The system prompt of a chat model given as `Worker(verify=...)`."""

REASON_MAX_CHARS = 300


class SchemaCheck:
    """`Worker.output_schema`, prepared once."""

    def __init__(self, schema: OutputSchema, *, where: str) -> None:
        self._adapter: TypeAdapter[Any] | None = None
        self._validator: Any = None
        if isinstance(schema, Mapping):
            import jsonschema

            try:
                cls = jsonschema.validators.validator_for(dict(schema))
                cls.check_schema(dict(schema))
            except jsonschema.SchemaError as exc:
                raise ValueError(f"{where}: not a valid JSON Schema: {exc.message}") from exc
            self._validator = cls(dict(schema))
        elif isinstance(schema, type) or hasattr(schema, "__origin__"):
            try:
                self._adapter = TypeAdapter(schema)
            except Exception as exc:
                raise TypeError(
                    f"{where}: pydantic cannot validate {schema!r} ({exc}); give a pydantic "
                    "model, a TypedDict, a dataclass or a JSON Schema dict"
                ) from exc
        else:
            raise TypeError(
                f"{where}: got {type(schema).__name__}; give a pydantic model, a TypedDict, "
                "a dataclass or a JSON Schema dict"
            )

    def check(self, value: Any) -> tuple[Any, str | None]:
        """The validated value (as JSON data), or the reason it does not match."""
        first = self._check(value)
        if first[1] is None or not isinstance(value, str):
            return first
        try:
            parsed = json.loads(value)
        except ValueError:
            return first
        return self._check(parsed)

    def _check(self, value: Any) -> tuple[Any, str | None]:
        if self._adapter is not None:
            try:
                validated = self._adapter.validate_python(value)
            except ValidationError as exc:
                return value, validation_summary(exc, empty="result", max_chars=REASON_MAX_CHARS)
            return self._adapter.dump_python(validated, mode="json"), None
        errors = sorted(self._validator.iter_errors(value), key=lambda e: list(e.path))
        if not errors:
            return value, None
        parts = [f"{'.'.join(str(p) for p in e.path) or 'result'}: {e.message}" for e in errors]
        return value, truncate("; ".join(parts[:3]), REASON_MAX_CHARS)


def verdict_of(reply: object) -> Verdict:
    """A verify function's reply as a `Verdict` (an unexpected reply fails, saying so)."""
    if reply is None or reply is True:
        return Verdict(passed=True)
    if reply is False:
        return Verdict(passed=False, reason="rejected by the verifier")
    if isinstance(reply, Verdict):
        return reply
    if isinstance(reply, str):
        return Verdict(passed=False, reason=reply.strip() or "rejected by the verifier")
    if isinstance(reply, Mapping) and "passed" in reply:
        try:
            return Verdict.model_validate(dict(reply))
        except ValidationError as exc:
            return Verdict(passed=False, reason=f"the verifier's verdict is invalid: {exc}")
    return Verdict(
        passed=False,
        reason=f"the verifier returned {type(reply).__name__}; return True/None to pass, "
        "or False, a reason or a Verdict to fail",
    )


def checker_messages(task: WorkerTask, result: WorkerResult) -> list[BaseMessage]:
    """What a checker model is shown: the task, the instructions and the result."""
    return [
        SystemMessage(content=DEFAULT_CHECKER_PROMPT),
        HumanMessage(
            content=(
                f"Task: {task.task}\n\nInstructions for this worker ({task.worker}): "
                f"{task.instructions or '(none)'}\n\nResult:\n{result.result_text()}"
            )
        ),
    ]


def failed_verification(check: str, reason: str) -> WorkerResult:
    """The `failed` result that replaces one a check refused."""
    return WorkerResult(
        status="failed", error=truncate(f"{check}: {reason}", REASON_MAX_CHARS + 40)
    )

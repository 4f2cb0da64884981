"""Compact before overflow: token accounting and the compaction step.

When a context reaches a fraction (`Compaction.trigger`, default 0.7; 0.6-0.8 is
recommended) of the model's input window, or on a fixed cadence of hops, the
older part of the history is replaced by one structured summary message
(`ContextSummary`: task, done, current state, remaining, key facts) and the most
recent messages stay verbatim. An AI message's tool calls and their tool results
are never split between the two parts, and a summary from an earlier compaction
is folded into the next one, its key facts carried over programmatically.

A summarizer that raises or returns an invalid summary never loses history: the
call is retried up to `Compaction.max_attempts` times, then the history is kept
unchanged and the error is recorded on the `CompactionOutcome`.

Example:
    ```python
    from langgraph_supervisor_pro.compaction.config import Compaction

    config = Compaction(summarizer=cheap_model, trigger=0.7, keep=6, every_n_steps=3)
    compactor = config.compactor(worker_model)  # window from the model's profile
    if compactor.should_compact(messages, step=step):
        outcome = compactor.compact(messages, task=task)
        messages = outcome.messages  # [summary message, *kept] (unchanged on failure)
    ```
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.constants import TAG_NOSTREAM
from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from langgraph_supervisor_pro._internal.model_calls import calling_as
from langgraph_supervisor_pro._internal.storable import storable
from langgraph_supervisor_pro._internal.text import message_text, truncate
from langgraph_supervisor_pro._internal.twins import Invoke, Sleep, Steps, adrive, drive
from langgraph_supervisor_pro.compaction.config import Compaction, TokenCounter, _is_int

__all__ = [
    "COMPACTION_PROMPT",
    "SUMMARY_HEADER",
    "CompactionOutcome",
    "Compactor",
    "ContextSummary",
    "is_summary_message",
    "split_for_compaction",
]


COMPACTION_PROMPT = """\
You compact the working history of an agent in a supervisor/worker team. The messages \
you are given will be deleted and replaced by your summary: whatever you leave out is \
lost for good.

Write a structured summary with these fields:
- task: the original task, as it was given (do not reinterpret it).
- done: what has been completed, one short item per step or result, with its outcome.
- current_state: where things stand right now, in a few sentences.
- remaining: what is left to do, in order.
- key_facts: every identifier, number, amount, date, name, URL, file path and decision \
that later work may need, copied exactly. Keep every key fact of the previous summary.

Fold the previous summary, if there is one, into the new summary. Be concise, but never \
drop an id, a number or a decision, and do not invent anything that is not in the \
messages or the previous summary."""
"""The system prompt the summarizer receives."""

SUMMARY_HEADER = "[Summary of earlier work]"
"""The first line of every summary message's content."""

_SUMMARY_NAME = "compaction"
_SUMMARY_KEY = "lgsp_summary"
_ID_NAMESPACE = uuid.uuid5(
    uuid.NAMESPACE_URL, "https://pypi.org/project/langgraph-supervisor-pro/compaction"
)
_ERROR_MAX_CHARS = 500
_JSON_OBJECT_RE = re.compile(r"\{.*\}", re.DOTALL)
_SCHEMA_DESCRIPTION = (
    "A structured summary of an agent's earlier work that replaces its older messages: "
    "the task, what is done, the current state, what remains and the key facts "
    "(ids, numbers, decisions) that must survive."
)


def _clean_text(value: Any) -> Any:
    return storable(" ".join(value.split())) if isinstance(value, str) else value


def _clean_items(value: Any) -> Any:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list | tuple):
        cleaned = [_clean_text(item) for item in value]
        return [item for item in cleaned if not (isinstance(item, str) and not item)]
    return value


def _dedupe(items: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    unique: list[str] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            unique.append(item)
    return unique


class ContextSummary(BaseModel):
    """The structured summary that replaces compacted history.

    Strings are folded to single spaces, with U+FFFD in place of a NUL or a lone
    surrogate (Postgres stores neither); empty list items are dropped. The summary
    message's content is `render()`; the message also carries the summary as a
    dict, so a later compaction can read it back and fold it in.

    Example:
        >>> s = ContextSummary(task="Refund ORDER-7", done=["Found ORDER-7"],
        ...                    current_state="Refund approved.", remaining=["Notify"],
        ...                    key_facts=["ORDER-7: 42.50 EUR"])
        >>> print(s.render())
        Task: Refund ORDER-7
        Done:
        - Found ORDER-7
        Current state: Refund approved.
        Remaining:
        - Notify
        Key facts:
        - ORDER-7: 42.50 EUR
    """

    model_config = ConfigDict(
        frozen=True,
        title="ContextSummary",
        json_schema_extra={"description": _SCHEMA_DESCRIPTION},
    )

    task: str = Field(description="The original task, as it was given.")
    done: list[str] = Field(description="What has been completed, one item per step or result.")
    current_state: str = Field(description="Where things stand right now.")
    remaining: list[str] = Field(description="What is left to do, in order.")
    key_facts: list[str] = Field(
        description=(
            "Every id, number, amount, date, name, path and decision later work may need, "
            "copied exactly."
        )
    )

    @field_validator("task", "current_state", mode="before")
    @classmethod
    def _fold_text(cls, value: Any) -> Any:
        return _clean_text(value)

    @field_validator("done", "remaining", "key_facts", mode="before")
    @classmethod
    def _fold_items(cls, value: Any) -> Any:
        return _clean_items(value)

    def is_empty(self) -> bool:
        """Whether the summary says nothing beyond the task.

        Returns:
            True when `done`, `current_state`, `remaining` and `key_facts` are all empty.

        Example:
            >>> ContextSummary(task="T", done=[], current_state="", remaining=[],
            ...                key_facts=[]).is_empty()
            True
        """
        return not (self.done or self.current_state or self.remaining or self.key_facts)

    def render(self) -> str:
        """Render the summary as the compact text used as the summary message's content.

        Returns:
            One line per field, list fields as bullet lists (`(none)` when empty).

        Example:
            >>> ContextSummary(task="T", done=[], current_state="Started.", remaining=[],
            ...                key_facts=["id=7"]).render().splitlines()[1]
            'Done: (none)'
        """
        lines = [f"Task: {self.task or '(unknown)'}"]

        def bullets(title: str, items: Sequence[str]) -> None:
            if not items:
                lines.append(f"{title}: (none)")
                return
            lines.append(f"{title}:")
            lines.extend(f"- {item}" for item in items)

        bullets("Done", self.done)
        lines.append(f"Current state: {self.current_state or '(unknown)'}")
        bullets("Remaining", self.remaining)
        bullets("Key facts", self.key_facts)
        return "\n".join(lines)


def is_summary_message(message: BaseMessage) -> bool:
    """Whether `message` is a summary written by a compaction.

    Args:
        message: Any message.

    Returns:
        True for the `HumanMessage` a compaction put in place of older messages.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> is_summary_message(HumanMessage("hello"))
        False
    """
    return isinstance(message, HumanMessage) and isinstance(
        message.additional_kwargs.get(_SUMMARY_KEY), Mapping
    )


def _read_summary(message: BaseMessage) -> ContextSummary | None:
    try:
        return ContextSummary.model_validate(message.additional_kwargs[_SUMMARY_KEY])
    except (KeyError, ValidationError):
        return None


def _call_ids(message: AIMessage) -> list[str]:
    ids = [call.get("id") for call in message.tool_calls]
    ids += [call.get("id") for call in message.invalid_tool_calls]
    return [i for i in ids if i]


def _safe_cuts(messages: Sequence[BaseMessage]) -> list[bool]:
    """`safe[i]` is whether cutting before `messages[i]` separates no tool call from its result.

    Tool messages are matched to the latest earlier AI message whose tool calls
    carry their `tool_call_id`.
    """
    n = len(messages)
    delta = [0] * (n + 2)
    owner: dict[str, int] = {}
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage):
            for call_id in _call_ids(message):
                owner[call_id] = index
        elif isinstance(message, ToolMessage):
            source = owner.get(message.tool_call_id)
            if source is not None:
                # Cuts source+1 .. index would split the pair.
                delta[source + 1] += 1
                delta[index + 1] -= 1
    safe: list[bool] = []
    open_pairs = 0
    for index in range(n + 1):
        open_pairs += delta[index]
        safe.append(open_pairs == 0)
    return safe


def split_for_compaction(
    messages: Sequence[BaseMessage],
    keep: int,
    *,
    max_tail_tokens: int | None = None,
    token_counter: TokenCounter | None = None,
) -> int:
    """Choose where to cut a history: `messages[:i]` is compacted, `messages[i:]` kept.

    The rule:

    1. The cut never separates an AI message with tool calls from any of its tool
       messages (matched by `tool_call_id`), at least one message is kept, and a
       leading summary message is always compacted (folded) together with at least
       one newer message.
    2. By count: the latest such cut that keeps at least `keep` messages (more when
       the exact cut would split a tool pair).
    3. By size: if `max_tail_tokens` is given and the kept messages exceed it, the
       cut moves later, to the earliest safe cut whose kept messages fit, or, when
       none fits, the latest safe cut (the smallest kept tail possible).

    Args:
        messages: The history, oldest first.
        keep: How many recent messages to keep verbatim (>= 1).
        max_tail_tokens: Most tokens the kept messages should take, if limited.
        token_counter: Counts tokens for `max_tail_tokens`; defaults to
            `count_tokens_approximately`.

    Returns:
        The index of the first kept message; 0 when nothing can be compacted.

    Raises:
        ValueError: If `keep` is not an integer >= 1 or `max_tail_tokens` is negative.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        >>> history = [
        ...     HumanMessage("find ORDER-1"),
        ...     AIMessage("", tool_calls=[{"name": "find", "args": {}, "id": "c1"}]),
        ...     ToolMessage("found", tool_call_id="c1"),
        ...     AIMessage("done"),
        ... ]
        >>> split_for_compaction(history, keep=2)  # keeps the tool pair together
        1
    """
    if not (_is_int(keep) and keep >= 1):
        raise ValueError(f"keep: got {keep!r}; give an integer >= 1")
    if max_tail_tokens is not None and not (_is_int(max_tail_tokens) and max_tail_tokens >= 0):
        raise ValueError(f"max_tail_tokens: got {max_tail_tokens!r}; give an integer >= 0")
    history = list(messages)
    n = len(history)
    first = 2 if n and is_summary_message(history[0]) else 1
    safe = _safe_cuts(history)
    cuts = [i for i in range(first, n) if safe[i]]
    if not cuts:
        return 0
    by_count = [i for i in cuts if i <= n - keep]
    cut = by_count[-1] if by_count else 0
    if max_tail_tokens is None:
        return cut
    count = token_counter or count_tokens_approximately
    if count(history[cut:]) <= max_tail_tokens:
        return cut
    later = [i for i in cuts if i > cut]
    if not later:
        return cut
    best = later[-1]
    low, high = 0, len(later) - 1
    while low <= high:  # kept tokens shrink as the cut moves later: binary search
        middle = (low + high) // 2
        if count(history[later[middle] :]) <= max_tail_tokens:
            best = later[middle]
            high = middle - 1
        else:
            low = middle + 1
    return best


@dataclass(frozen=True, kw_only=True)
class CompactionOutcome:
    """What one compaction did.

    Example:
        >>> outcome = CompactionOutcome(messages=[], removed_ids=[], summary=None,
        ...                             tokens_before=0, tokens_after=0, error=None,
        ...                             attempts=0)
        >>> outcome.compacted
        False
    """

    messages: list[BaseMessage]
    """The new history: `[summary message, *kept]`, or the unchanged history."""
    removed_ids: list[str]
    """Ids of the messages the summary replaced (messages without ids are not listed)."""
    summary: ContextSummary | None
    """The summary written, or None when nothing was compacted."""
    tokens_before: int
    """Tokens of the history before."""
    tokens_after: int
    """Tokens of `messages`."""
    error: str | None
    """Why the summarizer failed on every attempt (the history is then unchanged)."""
    attempts: int
    """Summarizer calls made (0 when there was nothing to compact)."""

    @property
    def compacted(self) -> bool:
        """Whether the history was replaced by a summary and the kept messages."""
        return self.summary is not None


class _InvalidSummaryError(ValueError):
    pass


def _structured_summarizer(summarizer: Runnable[Any, Any]) -> Runnable[Any, Any]:
    with_structured_output = getattr(summarizer, "with_structured_output", None)
    if callable(with_structured_output):
        try:
            structured = with_structured_output(ContextSummary)
        except NotImplementedError:
            return summarizer
        if isinstance(structured, Runnable):
            return structured
    return summarizer


def _coerce_summary(raw: object) -> ContextSummary:
    """Turn what the summarizer returned into a `ContextSummary`, or raise why it cannot."""
    if isinstance(raw, AIMessage):
        raw = raw.tool_calls[0]["args"] if raw.tool_calls else message_text(raw)
    if isinstance(raw, str):
        match = _JSON_OBJECT_RE.search(raw)
        try:
            raw = json.loads(match.group(0)) if match else None
        except ValueError:
            raw = None
        if raw is None:
            raise _InvalidSummaryError("the summarizer replied with text, not a ContextSummary")
    if raw is None:
        raise _InvalidSummaryError(
            "the summarizer returned no structured output (it did not call ContextSummary)"
        )
    if isinstance(raw, ContextSummary):
        summary = raw
    elif isinstance(raw, BaseModel | Mapping):
        data = raw.model_dump() if isinstance(raw, BaseModel) else dict(raw)
        try:
            summary = ContextSummary.model_validate(data)
        except ValidationError as exc:
            raise _InvalidSummaryError(f"invalid ContextSummary: {exc}") from exc
    else:
        raise _InvalidSummaryError(
            f"the summarizer returned {type(raw).__name__}, not a ContextSummary"
        )
    if summary.is_empty():
        raise _InvalidSummaryError("the summary is empty: it would lose the compacted history")
    return summary


def _describe_error(error: BaseException) -> str:
    text = storable(str(error).strip())
    if isinstance(error, _InvalidSummaryError):
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _render_message(message: BaseMessage) -> str:
    text = message_text(message).strip()
    if isinstance(message, HumanMessage):
        line = f"user: {text}"
    elif isinstance(message, AIMessage):
        line = f"assistant: {text}" if text else "assistant:"
        for call in message.tool_calls:
            args = json.dumps(call["args"], ensure_ascii=False, default=str)
            line += f"\n  calls {call['name']} (id {call.get('id')}) with {args}"
    elif isinstance(message, ToolMessage):
        name = f" {message.name}" if message.name else ""
        status = " [error]" if message.status == "error" else ""
        line = f"tool result{name} (id {message.tool_call_id}){status}: {text}"
    elif isinstance(message, SystemMessage):
        line = f"system: {text}"
    else:
        line = f"{message.type}: {text}"
    return line


def _merge(new: ContextSummary, previous: Sequence[ContextSummary], task: str) -> ContextSummary:
    """Carry the previous summaries' task and key facts over, whatever the summarizer wrote."""
    original = next((p.task for p in previous if p.task), "")
    facts = [fact for p in previous for fact in p.key_facts]
    return new.model_copy(
        update={
            "task": new.task or original or _clean_text(task),
            "key_facts": _dedupe([*facts, *new.key_facts]),
        }
    )


def _summary_message(summary: ContextSummary, removed_ids: Sequence[str]) -> HumanMessage:
    content = f"{SUMMARY_HEADER}\n{summary.render()}"
    key = "\n".join(removed_ids) if removed_ids else content
    return HumanMessage(
        content=content,
        name=_SUMMARY_NAME,
        id=str(uuid.uuid5(_ID_NAMESPACE, key)),
        additional_kwargs={_SUMMARY_KEY: summary.model_dump()},
    )


class Compactor:
    """Measures a context and compacts it: the step a worker or supervisor node runs.

    `compact` and `acompact` share one implementation (`_steps`, a generator that
    yields each summarizer call and retry delay), run by `_internal.twins.drive` or
    `adrive`.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langgraph_supervisor_pro.testing import ScriptedChatModel
        >>> summarizer = ScriptedChatModel(script=[{
        ...     "task": "Count", "done": ["said 0", "said 1"], "current_state": "at 2",
        ...     "remaining": ["say 3"], "key_facts": ["n=2"]}])
        >>> compactor = Compactor(Compaction(summarizer=summarizer, keep=1), window=1000)
        >>> history = [HumanMessage("Count", id="1"), AIMessage("0", id="2"),
        ...            AIMessage("1", id="3"), AIMessage("2", id="4")]
        >>> outcome = compactor.compact(history, task="Count")
        >>> [m.id for m in outcome.messages[1:]], outcome.removed_ids
        (['4'], ['1', '2', '3'])
    """

    def __init__(
        self, config: Compaction, *, window: int, counter: TokenCounter | None = None
    ) -> None:
        """Create a compactor.

        Args:
            config: The compaction configuration.
            window: The model's input window in tokens (see `Compaction.window`).
            counter: Counts tokens; defaults to `config.counter()`.

        Raises:
            TypeError: If `config` is not a `Compaction` or `counter` is not callable.
            ValueError: If `window` is not an integer >= 1.
        """
        if not isinstance(config, Compaction):
            raise TypeError(
                f"Compactor.config: got {type(config).__name__}; give a Compaction(...)"
            )
        if not (_is_int(window) and window >= 1):
            raise ValueError(
                f"Compactor.window: got {window!r}; give the input window in tokens, an "
                "integer >= 1 (Compaction.window(model) resolves it)"
            )
        if counter is not None and not callable(counter):
            raise TypeError(
                f"Compactor.counter: got {type(counter).__name__}; give a function taking a "
                "list of messages and returning a token count, or None"
            )
        self.config = config
        self.window = window
        self.counter: TokenCounter = counter if counter is not None else config.counter()
        self._structured = _structured_summarizer(config.summarizer)

    @property
    def tail_budget(self) -> int:
        """Most tokens the kept messages may take: half of the trigger budget."""
        return int(self.window * self.config.trigger / 2)

    def tokens(self, messages: Sequence[BaseMessage]) -> int:
        """Count the tokens of `messages`.

        Example:
            ```python
            compactor.tokens(state["messages"])  # e.g. 5321
            ```
        """
        return int(self.counter(list(messages)))

    def utilisation(self, messages: Sequence[BaseMessage]) -> float:
        """The fraction of the window `messages` take (may exceed 1).

        Example:
            ```python
            compactor.utilisation(messages)  # e.g. 0.66 (tokens / window)
            ```
        """
        return self.tokens(messages) / self.window

    def split(self, messages: Sequence[BaseMessage]) -> int:
        """Where this compactor would cut `messages` (see `split_for_compaction`).

        Example:
            ```python
            cut = compactor.split(messages)  # messages[:cut] would be summarised
            ```
        """
        return split_for_compaction(
            messages,
            self.config.keep,
            max_tail_tokens=self.tail_budget,
            token_counter=self.counter,
        )

    def should_compact(self, messages: Sequence[BaseMessage], *, step: int) -> bool:
        """Whether to compact now.

        True when the context reaches `trigger` of the window or the step is on the
        `every_n_steps` cadence (step >= 1 and a multiple of it), and there is
        something to compact.

        Args:
            messages: The context, oldest first.
            step: The current step (hop) number, from 1.

        Returns:
            Whether `compact` would replace part of the history now.

        Example:
            ```python
            if compactor.should_compact(messages, step=state["step"]):
                outcome = compactor.compact(messages, task=state["task"])
            ```
        """
        if not messages:
            return False
        cadence = self.config.every_n_steps
        due = cadence is not None and step >= 1 and step % cadence == 0
        if not due and self.utilisation(messages) < self.config.trigger:
            return False
        return self.split(messages) > 0

    def compact(
        self,
        messages: Sequence[BaseMessage],
        *,
        task: str,
        config: RunnableConfig | None = None,
    ) -> CompactionOutcome:
        """Replace the older part of `messages` with a structured summary.

        Args:
            messages: The context, oldest first (messages should have ids).
            task: The original task, given to the summarizer and kept in the summary.
            config: Optional config for the summarizer call (callbacks, tags).

        Returns:
            The outcome; on failure of every attempt the history is unchanged and
            `error` says why.

        Example:
            ```python
            outcome = compactor.compact(messages, task="Refund ORDER-7")
            if outcome.error is None:
                messages = outcome.messages
            ```
        """
        return drive(self._steps(messages, task, config))

    async def acompact(
        self,
        messages: Sequence[BaseMessage],
        *,
        task: str,
        config: RunnableConfig | None = None,
    ) -> CompactionOutcome:
        """Async twin of `compact`, calling the summarizer on the event loop.

        Example:
            ```python
            outcome = await compactor.acompact(messages, task="Refund ORDER-7")
            ```
        """
        return await adrive(self._steps(messages, task, config))

    # -- the shared implementation ------------------------------------------------------

    def _call_config(self, config: RunnableConfig | None) -> RunnableConfig:
        own: RunnableConfig = {
            "run_name": "compaction",
            "tags": [TAG_NOSTREAM],
            "metadata": {"lgsp_source": "compaction"},
        }
        return merge_configs(config, own)

    def _prompt(
        self,
        head: Sequence[BaseMessage],
        previous: Sequence[ContextSummary],
        task: str,
    ) -> list[BaseMessage]:
        parts = [f"Task: {task.strip() or '(see the messages)'}"]
        if previous:
            rendered = "\n\n".join(p.render() for p in previous)
            parts.append(f"Previous summary:\n{rendered}")
        older = [m for m in head if not is_summary_message(m)]
        lines = [f"[{i}] {_render_message(m)}" for i, m in enumerate(older, start=1)]
        parts.append("Messages to compact (oldest first):\n" + "\n".join(lines))
        return [SystemMessage(COMPACTION_PROMPT), HumanMessage("\n\n".join(parts))]

    def _steps(
        self, messages: Sequence[BaseMessage], task: str, config: RunnableConfig | None
    ) -> Steps[CompactionOutcome]:
        """One compaction, for both drivers.

        Each attempt (after the retry delay) calls the summarizer; a failed call or an
        invalid summary is retried, up to `max_attempts`; an interrupt (`GraphBubbleUp`)
        passes through.
        """
        call_config = self._call_config(config)
        history = list(messages)
        before = self.tokens(history)
        cut = self.split(history)
        if cut == 0:
            return CompactionOutcome(
                messages=history,
                removed_ids=[],
                summary=None,
                tokens_before=before,
                tokens_after=before,
                error=None,
                attempts=0,
            )
        head, kept = history[:cut], history[cut:]
        previous: list[ContextSummary] = []
        for message in head:
            if is_summary_message(message):
                earlier = _read_summary(message)
                if earlier is not None:
                    previous.append(earlier)
        prompt = self._prompt(head, previous, task)
        last_error = ""
        for number in range(1, self.config.max_attempts + 1):
            if number > 1 and self.config.retry_delay:
                yield Sleep(self.config.retry_delay)
            try:
                with calling_as("compaction"):  # the usage meter books it as the summarizer's
                    reply = yield Invoke(self._structured, prompt, call_config)
                new = _coerce_summary(reply)
            except GraphBubbleUp:
                raise
            except Exception as exc:
                last_error = _describe_error(exc)
                continue
            summary = _merge(new, previous, task)
            removed_ids = [m.id for m in head if m.id]
            compacted: list[BaseMessage] = [_summary_message(summary, removed_ids), *kept]
            return CompactionOutcome(
                messages=compacted,
                removed_ids=removed_ids,
                summary=summary,
                tokens_before=before,
                tokens_after=self.tokens(compacted),
                error=None,
                attempts=number,
            )
        attempts = self.config.max_attempts
        return CompactionOutcome(
            messages=history,
            removed_ids=[],
            summary=None,
            tokens_before=before,
            tokens_after=before,
            error=truncate(
                f"the summarizer failed {attempts} attempt{'s' if attempts > 1 else ''}; "
                f"history kept unchanged; last error: {last_error}",
                _ERROR_MAX_CHARS,
            ),
            attempts=attempts,
        )

"""Compact before overflow: the `Compaction` configuration, token accounting, the `Compactor`.

Older history becomes one structured summary (`ContextSummary`) once a context reaches
`Compaction.trigger` of its window; when the summarizer fails, the oldest turns are dropped.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/compaction/
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.constants import TAG_NOSTREAM
from langgraph.errors import GraphBubbleUp
from langgraph.store.base import BaseStore
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from langgraph_supervisor_pro._breakers import Breaker
from langgraph_supervisor_pro._graph.circuit import Admission, Transact, admit, report
from langgraph_supervisor_pro._internal.checks import check_seconds, is_count
from langgraph_supervisor_pro._internal.model_calls import calling_as
from langgraph_supervisor_pro._internal.storable import storable
from langgraph_supervisor_pro._internal.text import message_text, store_label, truncate
from langgraph_supervisor_pro._internal.twins import Call, Invoke, Sleep, Steps, adrive, drive
from langgraph_supervisor_pro.errors import InvalidSummaryError

TokenCounter: TypeAlias = Callable[[Sequence[BaseMessage]], int]
"""Counts the tokens of a list of messages (e.g. `count_tokens_approximately`)."""


def _profile_window(model: object) -> int | None:
    profile = getattr(model, "profile", None)
    value = profile.get("max_input_tokens") if isinstance(profile, Mapping) else None
    return value if is_count(value) else None


_BASE_COUNTERS = (  # the base counters need a download: use a model's own, if its class has one
    BaseLanguageModel.get_num_tokens_from_messages,
    BaseChatModel.get_num_tokens_from_messages,
)


DEFAULT_SUMMARIZER_BREAKER = Breaker(failures=3, window=600.0, cooldown=60.0)
"""The default `Compaction.breaker`: 3 failures within 10 minutes skip the summarizer a minute."""

_ADVICE = {
    "summarizer": "a chat model (e.g. a cheaper model than the worker's) or a Runnable "
    "returning a ContextSummary",
    "trigger": "a fraction of the model's input window strictly between 0 and 1 (0.6-0.8 is "
    "recommended; the default is 0.7)",
    "every_n_steps": "an integer >= 1 (e.g. 3 compacts every third step), or None to compact "
    "by size only",
    "keep": "the number of recent messages to keep verbatim, an integer >= 1 (the default is 6)",
    "max_context_tokens": "the model's input window in tokens, an integer >= 1, or None to read "
    "it from the model's profile",
    "model": "the chat model whose window applies, or None",
    "token_counter": "a function taking a list of messages and returning a token count, or None",
    "max_attempts": "an integer >= 1 (the default is 3)",
    "summarizer_window": "the summarizer's input window in tokens, an integer >= 1, or None to "
    "read it from the summarizer's profile",
    "breaker": "a Breaker(failures=..., window=..., cooldown=...), or None to call the "
    "summarizer on every compaction",
}
"""What to give for each field of `Compaction` (the fix its error names)."""
_TYPED = frozenset({"summarizer", "model", "token_counter", "breaker"})
"""Fields whose error names the type given rather than the value."""


@dataclass(frozen=True, kw_only=True)
class Compaction:
    """When and how to compact a context: the configuration of the compaction step.

    Example:
        >>> from langgraph_supervisor_pro.testing import ScriptedChatModel
        >>> config = Compaction(summarizer=ScriptedChatModel(script=[]),
        ...                     max_context_tokens=8000, every_n_steps=3)
        >>> config.window()
        8000
        >>> Compaction(summarizer=ScriptedChatModel(script=[]), trigger=1.5)
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Compaction.trigger: got 1.5; ...
    """

    summarizer: BaseChatModel | Runnable[Any, Any]
    """Writes the summary: a chat model (through `with_structured_output(ContextSummary)`),
    or a Runnable given the prompt messages that returns a `ContextSummary` or its dict."""
    trigger: float = 0.7
    """Compact at this fraction of the window, strictly between 0 and 1 (0.6-0.8 recommended)."""
    every_n_steps: int | None = None
    """Also compact every n steps (e.g. 3: at steps 3, 6, 9, ...), whatever the size."""
    keep: int = 6
    """How many recent messages stay verbatim (at least 1); more when the cut would split
    a tool call from its result, fewer when they would take over half the trigger budget."""
    max_context_tokens: int | None = None
    """The input window in tokens, for models whose profile lacks `max_input_tokens`."""
    model: BaseChatModel | None = None
    """The model whose window and token counter apply (`window(model)` overrides it)."""
    token_counter: TokenCounter | None = None
    """Counts tokens; by default the model's own counter, else `count_tokens_approximately`."""
    max_attempts: int = 3
    """Summarizer attempts (exceptions or invalid summaries) before giving up (>= 1)."""
    retry_delay: float = 0.0
    """Seconds to wait between summarizer attempts (>= 0 and finite)."""
    summarizer_window: int | None = None
    """The summarizer's input window, if its profile lacks `max_input_tokens` (else the
    worker's applies). A larger history is summarised in chunks that fit (map, then reduce)."""
    breaker: Breaker | None = DEFAULT_SUMMARIZER_BREAKER
    """The summarizer's circuit breaker: after `failures` failed compactions within `window`
    seconds, truncate for `cooldown` seconds (then one probes). None: always summarise."""

    def __post_init__(self) -> None:
        trigger = self.trigger
        valid = {
            "summarizer": isinstance(self.summarizer, Runnable),
            "trigger": not isinstance(trigger, bool)
            and isinstance(trigger, int | float)
            and 0 < trigger < 1,
            "every_n_steps": self.every_n_steps is None or is_count(self.every_n_steps),
            "keep": is_count(self.keep),
            "max_context_tokens": self.max_context_tokens is None
            or is_count(self.max_context_tokens),
            "model": self.model is None or isinstance(self.model, BaseChatModel),
            "token_counter": self.token_counter is None or callable(self.token_counter),
            "max_attempts": is_count(self.max_attempts),
            "summarizer_window": self.summarizer_window is None or is_count(self.summarizer_window),
            "breaker": self.breaker is None or isinstance(self.breaker, Breaker),
        }
        for name, ok in valid.items():
            if not ok:
                value = getattr(self, name)
                shown = type(value).__name__ if name in _TYPED else repr(value)
                error = TypeError if name in _TYPED else ValueError
                raise error(f"Compaction.{name}: got {shown}; give {_ADVICE[name]}")
        object.__setattr__(self, "trigger", float(trigger))
        delay = check_seconds(self.retry_delay, "Compaction.retry_delay", zero=True)
        object.__setattr__(self, "retry_delay", delay)  # a timedelta becomes seconds

    def window(self, model: BaseChatModel | None = None) -> int:
        """The input window in tokens: the profile's `max_input_tokens`, else `max_context_tokens`.

        Args:
            model: The model whose window applies; defaults to `Compaction.model`.

        Raises:
            ValueError: If neither is known.

        Example:
            >>> from langgraph_supervisor_pro.testing import ScriptedChatModel
            >>> model = ScriptedChatModel(script=[], profile={"max_input_tokens": 8000})
            >>> Compaction(summarizer=model, max_context_tokens=4000).window(model)
            8000
        """
        chosen = model if model is not None else self.model
        window = _profile_window(chosen) or self.max_context_tokens
        if window is not None:
            return window
        which = f" ({type(chosen).__name__} has none)" if chosen is not None else ""
        raise ValueError(
            "Compaction: the context window is unknown: set "
            "Compaction(max_context_tokens=...) or use a model whose profile has "
            f"max_input_tokens{which}"
        )

    def counter(self, model: BaseChatModel | None = None) -> TokenCounter:
        """The token counter: `token_counter`, else the model's own, else the approximate one.

        Args:
            model: The model whose counter applies; defaults to `Compaction.model`.

        Example:
            >>> from langchain_core.messages import HumanMessage
            >>> from langgraph_supervisor_pro.testing import ScriptedChatModel
            >>> config = Compaction(summarizer=ScriptedChatModel(script=[]))
            >>> config.counter()([HumanMessage("hello there")]) > 0
            True
        """
        if self.token_counter is not None:
            return self.token_counter
        chosen = model if model is not None else self.model
        method = getattr(type(chosen), "get_num_tokens_from_messages", None)
        if chosen is None or method is None or method in _BASE_COUNTERS:
            return count_tokens_approximately
        return lambda messages: chosen.get_num_tokens_from_messages(list(messages))

    def summarizer_limit(self) -> int | None:
        """The summarizer's own input window: its profile's, else `summarizer_window`.

        Example:
            >>> from langgraph_supervisor_pro.testing import ScriptedChatModel
            >>> small = ScriptedChatModel(script=[], profile={"max_input_tokens": 3000})
            >>> Compaction(summarizer=small).summarizer_limit()
            3000
        """
        summarizer = self.summarizer if isinstance(self.summarizer, BaseChatModel) else None
        return _profile_window(summarizer) or self.summarizer_window

    def compactor(self, model: BaseChatModel | None = None) -> Compactor:
        """Build the `Compactor` for a model (window and counter resolved now).

        Raises:
            ValueError: If the window is unknown (see `window`).

        Example:
            >>> from langgraph_supervisor_pro.testing import ScriptedChatModel
            >>> config = Compaction(summarizer=ScriptedChatModel(script=[]),
            ...                     max_context_tokens=1000)
            >>> config.compactor().window
            1000
        """
        return Compactor(self, window=self.window(model), counter=self.counter(model))


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

TRUNCATION_HEADER = "[Earlier work truncated]"
"""The start of a truncation marker's content (the fallback when the summarizer fails)."""

_SUMMARY_KEY = "lgsp_summary"
_TRUNCATED_KEY = "lgsp_truncated"
_ID_NAMESPACE = uuid.uuid5(
    uuid.NAMESPACE_URL, "https://pypi.org/project/langgraph-supervisor-pro/compaction"
)
_CUT = "[cut]"
_CHUNK_TITLE = (
    "Messages to compact (oldest first; one part of a longer history, summarise this part):"
)
_PARTIALS_TITLE = (
    "Summaries of consecutive parts of the messages to compact (oldest first); combine "
    "them into one summary, keeping every key fact:"
)
_log = logging.getLogger("langgraph_supervisor_pro.compaction")
_SCHEMA_DESCRIPTION = (
    "A structured summary of an agent's earlier work that replaces its older messages: "
    "the task, what is done, the current state, what remains and the key facts "
    "(ids, numbers, decisions) that must survive."
)


def _clean_text(value: Any) -> Any:
    return storable(" ".join(value.split())) if isinstance(value, str) else value


class ContextSummary(BaseModel):
    """The structured summary that replaces compacted history (its message's content is `render()`).

    Strings are folded to single spaces, with U+FFFD for a NUL or a lone surrogate (Postgres
    stores neither); empty list items are dropped.

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
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple):
            return value
        cleaned = [_clean_text(item) for item in value]
        return [item for item in cleaned if not (isinstance(item, str) and not item)]

    def is_empty(self) -> bool:
        """Whether the summary says nothing beyond the task.

        Example:
            >>> ContextSummary(task="T", done=[], current_state="", remaining=[],
            ...                key_facts=[]).is_empty()
            True
        """
        return not (self.done or self.current_state or self.remaining or self.key_facts)

    def render(self) -> str:
        """The summary message's text: one line per field, lists as bullets (`(none)` if empty).

        Example:
            >>> ContextSummary(task="T", done=[], current_state="Started.", remaining=[],
            ...                key_facts=["id=7"]).render().splitlines()[1]
            'Done: (none)'
        """

        def bullets(title: str, items: Sequence[str]) -> list[str]:
            return (
                [f"{title}:", *(f"- {item}" for item in items)] if items else [f"{title}: (none)"]
            )

        return "\n".join(
            [
                f"Task: {self.task or '(unknown)'}",
                *bullets("Done", self.done),
                f"Current state: {self.current_state or '(unknown)'}",
                *bullets("Remaining", self.remaining),
                *bullets("Key facts", self.key_facts),
            ]
        )


def _marked(message: BaseMessage, key: str) -> bool:
    return isinstance(message, HumanMessage) and isinstance(
        message.additional_kwargs.get(key), Mapping
    )


def is_summary_message(message: BaseMessage) -> bool:
    """Whether `message` is the summary a compaction put in place of older messages.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> is_summary_message(HumanMessage("hello"))
        False
    """
    return _marked(message, _SUMMARY_KEY)


def summarizer_breaker_namespace(scope: Sequence[str]) -> tuple[str, ...]:
    """The store namespace of the breaker state of `scope`'s summarizer (supervisor, *path)."""
    return ("lgsp", "summarizer_breakers", *(store_label(part) for part in scope))


def is_truncation_marker(message: BaseMessage) -> bool:
    """Whether `message` marks where a truncation (the fallback) dropped older messages."""
    return _marked(message, _TRUNCATED_KEY)


def truncation_note(message: BaseMessage) -> Mapping[str, Any]:
    """What a truncation marker records: `removed`, `attempts` and `error`."""
    note = message.additional_kwargs.get(_TRUNCATED_KEY)
    return note if isinstance(note, Mapping) else {}


def _replacement(content: str, key: str, kwargs: dict[str, Any]) -> HumanMessage:
    """A summary or marker message; its id derives from what it replaces (a re-run matches)."""
    return HumanMessage(
        content=content,
        name="compaction",
        id=str(uuid.uuid5(_ID_NAMESPACE, key)),
        additional_kwargs=kwargs,
    )


def truncate_history(
    messages: Sequence[BaseMessage],
    cut: int,
    *,
    budget: int,
    token_counter: TokenCounter,
) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """The fallback: drop the oldest of `messages[:cut]`, returning (kept, dropped) in order.

    Kept: the task (first human message, no summary before it), the latest summary and
    `messages[cut:]`; over `budget` tokens, the task and then the summary go too.
    """
    head, tail = list(messages[:cut]), list(messages[cut:])
    summaries = [i for i, m in enumerate(head) if is_summary_message(m)]
    protected: list[int] = []
    humans = [i for i, m in enumerate(head) if isinstance(m, HumanMessage)]
    task = next((i for i in humans if not is_truncation_marker(head[i])), None)
    if task is not None and not is_summary_message(head[task]):
        protected.append(task)  # the first human message, no summary before it
    if summaries:
        protected.append(summaries[-1])
    while True:
        kept = [m for i, m in enumerate(head) if i in protected]
        if not protected or token_counter([*kept, *tail]) <= budget:
            break
        protected.pop(0)  # still too large: the task goes first, then the summary
    dropped = [m for i, m in enumerate(head) if i not in protected]
    return [*kept, *tail], dropped


def _read_summary(message: BaseMessage) -> ContextSummary | None:
    try:
        return ContextSummary.model_validate(message.additional_kwargs[_SUMMARY_KEY])
    except (KeyError, ValidationError):
        return None


def _safe_cuts(messages: Sequence[BaseMessage]) -> list[bool]:
    """`safe[i]`: cutting before `messages[i]` parts no tool call from its result.

    A tool message belongs to the latest earlier AI message with its `tool_call_id`.
    """
    delta = [0] * (len(messages) + 2)
    owner: dict[str, int] = {}
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage):
            for call in [*message.tool_calls, *message.invalid_tool_calls]:
                if call_id := call.get("id"):
                    owner[call_id] = index
        elif isinstance(message, ToolMessage):
            source = owner.get(message.tool_call_id)
            if source is not None:  # cuts source+1 .. index would split the pair
                delta[source + 1] += 1
                delta[index + 1] -= 1
    return [open_pairs == 0 for open_pairs in itertools.accumulate(delta[: len(messages) + 1])]


def split_for_compaction(
    messages: Sequence[BaseMessage],
    keep: int,
    *,
    max_tail_tokens: int | None = None,
    token_counter: TokenCounter | None = None,
) -> int:
    """Where to cut a history: `messages[:i]` is compacted, `messages[i:]` kept (0: none).

    Never parts a tool call from its result, keeps a message, and folds a leading summary
    with a newer one. The latest cut keeping `keep` messages; if they exceed
    `max_tail_tokens`, the earliest safe cut whose tail fits (else the latest safe cut).
    """
    if not is_count(keep):
        raise ValueError(f"keep: got {keep!r}; give an integer >= 1")
    if max_tail_tokens is not None and not is_count(max_tail_tokens, 0):
        raise ValueError(f"max_tail_tokens: got {max_tail_tokens!r}; give an integer >= 0")
    history = list(messages)
    n = len(history)
    first = 2 if n and is_summary_message(history[0]) else 1
    safe = _safe_cuts(history)
    cuts = [i for i in range(first, n) if safe[i]]
    if not cuts:
        return 0
    cut = max((i for i in cuts if i <= n - keep), default=0)
    count = token_counter or count_tokens_approximately
    if max_tail_tokens is None or count(history[cut:]) <= max_tail_tokens:
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
    """What one compaction did."""

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
    """Why the summarizer failed every attempt or was not called (breaker open): truncated."""
    attempts: int
    """Summarizer calls made (0 when nothing was compacted or its breaker was open)."""
    kind: Literal["summary", "truncated"] | None = None
    """Replaced by a summary, or its oldest turns dropped (the fallback); None: unchanged."""
    dropped: list[BaseMessage] = field(default_factory=list)
    """The messages a truncation dropped (to archive them; empty for a summary)."""

    @property
    def compacted(self) -> bool:
        """Whether the history was replaced by a summary and the kept messages."""
        return self.summary is not None

    @property
    def truncated(self) -> bool:
        """Whether the fallback dropped the oldest turns (the summarizer was unavailable)."""
        return self.kind == "truncated"

    @property
    def replacement(self) -> BaseMessage | None:
        """The message put in place of the removed ones (summary or marker), if any."""
        if self.compacted:
            return self.messages[0]
        if self.truncated:
            return next((m for m in self.messages if is_truncation_marker(m)), None)
        return None


def _unchanged(
    history: list[BaseMessage], tokens: int, error: str | None, attempts: int
) -> CompactionOutcome:
    return CompactionOutcome(
        messages=history,
        removed_ids=[],
        summary=None,
        tokens_before=tokens,
        tokens_after=tokens,
        error=error,
        attempts=attempts,
    )


def _coerce_summary(raw: object) -> ContextSummary:
    """Turn what the summarizer returned into a `ContextSummary`, or raise why it cannot."""
    if isinstance(raw, AIMessage):
        raw = raw.tool_calls[0]["args"] if raw.tool_calls else message_text(raw)
    if isinstance(raw, str):
        match = re.search(r"\{.*\}", raw, re.DOTALL)
        try:
            raw = json.loads(match.group(0)) if match else None
        except ValueError:
            raw = None
        if raw is None:
            raise InvalidSummaryError("the summarizer replied with text, not a ContextSummary")
    if raw is None:
        raise InvalidSummaryError(
            "the summarizer returned no structured output (it did not call ContextSummary)"
        )
    if isinstance(raw, BaseModel) and not isinstance(raw, ContextSummary):
        raw = raw.model_dump()
    if isinstance(raw, Mapping):
        try:
            raw = ContextSummary.model_validate(dict(raw))
        except ValidationError as exc:
            raise InvalidSummaryError(f"invalid ContextSummary: {exc}") from exc
    if not isinstance(raw, ContextSummary):
        raise InvalidSummaryError(
            f"the summarizer returned {type(raw).__name__}, not a ContextSummary"
        )
    if raw.is_empty():
        raise InvalidSummaryError("the summary is empty: it would lose the compacted history")
    return raw


def _describe_error(error: BaseException) -> str:
    text = storable(str(error).strip())
    if isinstance(error, InvalidSummaryError):
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _render_message(message: BaseMessage) -> str:
    text = message_text(message).strip()
    if isinstance(message, HumanMessage):
        return f"user: {text}"
    if isinstance(message, AIMessage):
        line = f"assistant: {text}" if text else "assistant:"
        for call in message.tool_calls:
            args = json.dumps(call["args"], ensure_ascii=False, default=str)
            line += f"\n  calls {call['name']} (id {call.get('id')}) with {args}"
        return line
    if isinstance(message, ToolMessage):
        name = f" {message.name}" if message.name else ""
        status = " [error]" if message.status == "error" else ""
        return f"tool result{name} (id {message.tool_call_id}){status}: {text}"
    if isinstance(message, SystemMessage):
        return f"system: {text}"
    return f"{message.type}: {text}"


def _merge(new: ContextSummary, previous: Sequence[ContextSummary], task: str) -> ContextSummary:
    """Carry the previous summaries' task and key facts over, whatever the summarizer wrote."""
    original = next((p.task for p in previous if p.task), "")
    facts = [fact for p in previous for fact in p.key_facts]
    return new.model_copy(
        update={
            "task": new.task or original or _clean_text(task),
            "key_facts": list(dict.fromkeys([*facts, *new.key_facts])),
        }
    )


class Compactor:
    """Measures a context and compacts it: the step a worker or supervisor node runs.

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
        """A compactor for a `window` (`Compaction.window`); `counter` defaults to the config's.

        Raises:
            TypeError: If `config` is not a `Compaction` or `counter` is not callable.
            ValueError: If `window` is not an integer >= 1.
        """
        if not isinstance(config, Compaction):
            raise TypeError(
                f"Compactor.config: got {type(config).__name__}; give a Compaction(...)"
            )
        if not is_count(window):
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
        summarizer = config.summarizer if isinstance(config.summarizer, BaseChatModel) else None
        limit = config.summarizer_limit()
        self._chunked = limit is not None  # an unknown window: one call, as it always was
        self.summarizer_window: int = limit if limit is not None else window
        """The summarizer's input window: its own, else the worker's."""
        self.summarizer_counter: TokenCounter = (
            config.counter(summarizer) if summarizer is not None else self.counter
        )
        """Counts the summarizer's input tokens (its own counter when it has one)."""
        method = getattr(config.summarizer, "with_structured_output", None)
        try:
            structured = method(ContextSummary) if callable(method) else None
        except NotImplementedError:
            structured = None
        self._structured = structured if isinstance(structured, Runnable) else config.summarizer
        self._breaker_states: dict[tuple[str, ...], dict[str, Any]] = {}
        self._breaker_lock = threading.Lock()

    @property
    def tail_budget(self) -> int:
        """Most tokens the kept messages may take: half of the trigger budget."""
        return int(self.window * self.config.trigger / 2)

    @property
    def summarizer_budget(self) -> int:
        """Most input tokens one summarizer call may take: 90% of its window."""
        return max(1, int(self.summarizer_window * 0.9))

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
        """Whether to compact now: at `trigger` of the window or on the `every_n_steps` cadence.

        `step` is the current step (hop) number, from 1.

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
        store: BaseStore | None = None,
        scope: Sequence[str] = (),
    ) -> CompactionOutcome:
        """Replace the older part of `messages` (oldest first, with ids) with a summary.

        A history larger than the summarizer's window is summarised in chunks, then
        combined. When the summarizer fails every attempt, or its breaker is open, the
        oldest turns are dropped instead (`kind="truncated"`, `error` says why), so the
        context still falls under the trigger.

        Args:
            messages: The context.
            task: The original task, given to the summarizer and kept in the summary.
            config: Optional config for the summarizer call (callbacks, tags).
            store: Where the summarizer's breaker state lives (shared by every process
                on it); None keeps it in this compactor.
            scope: Whose summarizer it is, e.g. `(supervisor, *worker path)`.

        Example:
            ```python
            outcome = compactor.compact(messages, task="Refund ORDER-7")
            if outcome.error is None:
                messages = outcome.messages
            ```
        """
        return drive(self._steps(messages, task, config, store, tuple(scope)))

    async def acompact(
        self,
        messages: Sequence[BaseMessage],
        *,
        task: str,
        config: RunnableConfig | None = None,
        store: BaseStore | None = None,
        scope: Sequence[str] = (),
    ) -> CompactionOutcome:
        """Async twin of `compact`, calling the summarizer on the event loop.

        Example:
            ```python
            outcome = await compactor.acompact(messages, task="Refund ORDER-7")
            ```
        """
        return await adrive(self._steps(messages, task, config, store, tuple(scope)))

    def _prompt(
        self, lines: Sequence[str], previous: Sequence[ContextSummary], task: str, title: str
    ) -> list[BaseMessage]:
        parts = [f"Task: {task.strip() or '(see the messages)'}"]
        if previous:
            rendered = "\n\n".join(p.render() for p in previous)
            parts.append(f"Previous summary:\n{rendered}")
        parts.append(f"{title}\n" + "\n".join(lines))
        return [SystemMessage(COMPACTION_PROMPT), HumanMessage("\n\n".join(parts))]

    def _fits(self, prompt: Sequence[BaseMessage]) -> bool:
        return int(self.summarizer_counter(list(prompt))) <= self.summarizer_budget

    def _chunks(
        self, lines: Sequence[str], previous: Sequence[ContextSummary], task: str, title: str
    ) -> list[list[str]]:
        """Pack `lines` in order into the fewest prompts that fit; a line too long alone is cut."""

        def fits(part: list[str]) -> bool:
            return self._fits(self._prompt(part, previous, task, title))

        chunks: list[list[str]] = []
        current: list[str] = []
        for line in lines:
            if fits([*current, line]):
                current.append(line)
                continue
            if current:
                chunks.append(current)
                current = []
            if fits([line]):
                current = [line]
                continue
            low, high = 0, len(line)  # the longest start of the line that fits
            while low < high:
                middle = (low + high + 1) // 2
                if fits([line[:middle] + " " + _CUT]):
                    low = middle
                else:
                    high = middle - 1
            chunks.append([line[:low] + " " + _CUT])
        if current:
            chunks.append(current)
        return chunks

    def _summarising(
        self, prompt: list[BaseMessage], call_config: RunnableConfig
    ) -> Steps[tuple[ContextSummary | None, int, str]]:
        """One summary, retried up to `max_attempts`: (summary or None, calls, last error)."""
        last_error = ""
        for number in range(1, self.config.max_attempts + 1):
            if number > 1 and self.config.retry_delay:
                yield Sleep(self.config.retry_delay)
            try:
                with calling_as("compaction"):  # the usage meter books it as the summarizer's
                    reply = yield Invoke(self._structured, prompt, call_config)
                return _coerce_summary(reply), number, ""
            except GraphBubbleUp:
                raise
            except Exception as exc:
                if isinstance(exc.__context__, GeneratorExit):
                    # Abandoned mid-call (a crash, a cancellation): closing the generator
                    # reset the call's context variable elsewhere. Stop, do not retry.
                    raise exc.__context__ from None
                last_error = _describe_error(exc)
        return None, self.config.max_attempts, last_error

    def _summary_of(
        self,
        head: Sequence[BaseMessage],
        previous: list[ContextSummary],
        task: str,
        call_config: RunnableConfig,
    ) -> Steps[tuple[ContextSummary | None, int, str]]:
        """Summarise `head` in one call if it fits, else map-reduce; every key fact is carried."""
        older = [m for m in head if not is_summary_message(m)]
        lines = [f"[{i}] {_render_message(m)}" for i, m in enumerate(older, start=1)]
        prompt = self._prompt(lines, previous, task, "Messages to compact (oldest first):")
        if not self._chunked or self._fits(prompt):
            new, calls, error = yield from self._summarising(prompt, call_config)
            return (_merge(new, previous, task) if new is not None else None), calls, error
        if not self._fits(self._prompt([_CUT], [], task, _PARTIALS_TITLE)):
            return (
                None,
                0,
                f"the summarizer's window ({self.summarizer_window} tokens) cannot hold the "
                "compaction prompt; give Compaction(summarizer_window=...) or a summarizer "
                "with a larger window",
            )
        total = 0
        partials: list[ContextSummary] = []
        for chunk in self._chunks(lines, [], task, _CHUNK_TITLE):
            part, calls, error = yield from self._summarising(
                self._prompt(chunk, [], task, _CHUNK_TITLE), call_config
            )
            total += calls
            if part is None:
                return None, total, error
            partials.append(part)
        carried = [*previous, *partials]
        context = previous
        while True:
            rendered = [f"({i}) {p.render()}" for i, p in enumerate(partials, start=1)]
            groups = self._chunks(rendered, context, task, _PARTIALS_TITLE)
            if len(groups) == 1:
                final, calls, error = yield from self._summarising(
                    self._prompt(groups[0], context, task, _PARTIALS_TITLE), call_config
                )
                total += calls
                return (_merge(final, carried, task) if final is not None else None), total, error
            if context and len(groups) >= len(rendered):
                context = []  # the previous summary crowds the partials out: facts carried
                continue
            if len(groups) >= len(rendered):  # each partial fills a call: nothing to combine
                return _merge(partials[-1], carried, task), total, ""
            merged: list[ContextSummary] = []
            for group in groups:
                part, calls, error = yield from self._summarising(
                    self._prompt(group, [], task, _PARTIALS_TITLE), call_config
                )
                total += calls
                if part is None:
                    return None, total, error
                merged.append(part)
            partials = merged

    def _breaker_io(self, store: BaseStore | None, namespace: tuple[str, ...], change: Any) -> Any:
        """One read-modify-write of the summarizer breaker's state."""
        if store is not None:
            return Transact(store, namespace, change)

        def local() -> Any:
            with self._breaker_lock:
                new, out = change(self._breaker_states.get(namespace))
                if new is not None:
                    self._breaker_states[namespace] = new
                return out

        return Call(local, None)

    def _steps(
        self,
        messages: Sequence[BaseMessage],
        task: str,
        config: RunnableConfig | None,
        store: BaseStore | None = None,
        scope: tuple[str, ...] = (),
    ) -> Steps[CompactionOutcome]:
        """`compact` as `_internal.twins` steps; an open breaker goes straight to the fallback."""
        call_config = merge_configs(
            config,
            {
                "run_name": "compaction",
                "tags": [TAG_NOSTREAM],
                "metadata": {"lgsp_source": "compaction"},
            },
        )
        history = list(messages)
        before = self.tokens(history)
        cut = self.split(history)
        if cut == 0:
            return _unchanged(history, before, None, 0)
        head, kept = history[:cut], history[cut:]
        breaker = self.config.breaker
        namespace = summarizer_breaker_namespace(scope)
        probe = str(uuid.uuid4())
        admission: Admission | None = None
        if breaker is not None:
            try:
                admission = yield self._breaker_io(
                    store, namespace, lambda value: admit(value, breaker, breaker.clock(), probe)
                )
            except Exception as exc:  # no breaker state: summarise as if closed
                _log.warning("summarizer breaker %s: state unavailable (%s)", namespace, exc)
            else:
                if admission.transition is not None:
                    _log.info("summarizer breaker %s: %s", namespace, admission.transition)
                if admission.state == "open":
                    return self._truncated(
                        history, cut, before, 0, f"summarizer breaker open: {admission.detail}"
                    )
        previous = [
            s for s in map(_read_summary, filter(is_summary_message, head)) if s is not None
        ]
        summary, attempts, last_error = yield from self._summary_of(
            head, previous, task, call_config
        )
        failure = None
        if summary is None:
            failure = (
                f"the summarizer failed {attempts} attempt{'s' if attempts > 1 else ''}; "
                f"oldest turns dropped instead; last error: {last_error}"
            )
        if breaker is not None and admission is not None:
            try:
                outcome = yield self._breaker_io(
                    store,
                    namespace,
                    lambda value: report(
                        value, breaker, breaker.clock(), admission, probe, failure
                    ),
                )
            except Exception as exc:
                _log.warning("summarizer breaker %s: outcome not recorded (%s)", namespace, exc)
            else:
                if outcome.transition is not None:
                    _log.log(
                        logging.WARNING if outcome.changed_to == "open" else logging.INFO,
                        "summarizer breaker %s: %s",
                        namespace,
                        outcome.transition.replace("hops", "compactions"),
                    )
        if summary is None:
            return self._truncated(history, cut, before, attempts, str(failure))
        removed_ids = [m.id for m in head if m.id]
        content = f"{SUMMARY_HEADER}\n{summary.render()}"
        compacted: list[BaseMessage] = [
            _replacement(
                content,
                "\n".join(removed_ids) if removed_ids else content,
                {_SUMMARY_KEY: summary.model_dump()},
            ),
            *kept,
        ]
        return CompactionOutcome(
            messages=compacted,
            removed_ids=removed_ids,
            summary=summary,
            tokens_before=before,
            tokens_after=self.tokens(compacted),
            error=None,
            attempts=attempts,
            kind="summary",
        )

    def _truncated(
        self, history: list[BaseMessage], cut: int, before: int, attempts: int, why: str
    ) -> CompactionOutcome:
        """The fallback: drop the oldest turns (see `truncate_history`), marking the place."""
        error = truncate(why, 500)
        budget = int(self.window * self.config.trigger)
        kept, dropped = truncate_history(history, cut, budget=budget, token_counter=self.counter)
        if not dropped:
            return _unchanged(history, before, error, attempts)
        removed_ids = [m.id for m in dropped if m.id]
        count = len(dropped)
        content = (
            f"{TRUNCATION_HEADER} {count} older message{'s were' if count != 1 else ' was'} "
            "dropped from this context to keep it within the model's window (the summarizer "
            "was unavailable); the task, the latest summary and the recent messages are kept."
        )
        marker = _replacement(
            content,
            "truncated\n" + ("\n".join(removed_ids) if removed_ids else content),
            {_TRUNCATED_KEY: {"removed": count, "attempts": attempts, "error": error}},
        )
        first = next(i for i, m in enumerate(history) if m in dropped)
        place = sum(1 for m in history[:first] if m not in dropped)
        messages = [*kept[:place], marker, *kept[place:]]
        return CompactionOutcome(
            messages=messages,
            removed_ids=removed_ids,
            summary=None,
            tokens_before=before,
            tokens_after=self.tokens(messages),
            error=error,
            attempts=attempts,
            kind="truncated",
            dropped=dropped,
        )

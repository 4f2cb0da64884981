"""When and how to compact: the `Compaction` configuration and token counting.

The window comes from the model's profile (`max_input_tokens`) or
`max_context_tokens`; tokens are counted by the configured counter, the model's own
counter when its class has one, or LangChain's `count_tokens_approximately`.

Example:
    >>> from langgraph_supervisor_pro.testing import ScriptedChatModel
    >>> Compaction(summarizer=ScriptedChatModel(script=[]), max_context_tokens=8000).window()
    8000
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import Runnable

from langgraph_supervisor_pro._internal.checks import check_seconds

if TYPE_CHECKING:
    from langgraph_supervisor_pro.compaction.compactor import Compactor

__all__ = ["Compaction", "TokenCounter"]

TokenCounter: TypeAlias = Callable[[Sequence[BaseMessage]], int]
"""Counts the tokens of a list of messages (e.g. `count_tokens_approximately`)."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _profile_window(model: BaseChatModel | None) -> int | None:
    profile = getattr(model, "profile", None) if model is not None else None
    if not isinstance(profile, Mapping):
        return None
    value = profile.get("max_input_tokens")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


_BASE_COUNTERS = frozenset(
    {
        BaseLanguageModel.get_num_tokens_from_messages,
        BaseChatModel.get_num_tokens_from_messages,
    }
)


def _own_counter(model: BaseChatModel) -> TokenCounter | None:
    """The model's own token counter, if its class overrides the base implementation.

    The base implementation tokenises with a GPT-2 tokenizer that must be downloaded,
    so it is never used.
    """
    method = getattr(type(model), "get_num_tokens_from_messages", None)
    if method is None or method in _BASE_COUNTERS:
        return None

    def count(messages: Sequence[BaseMessage]) -> int:
        return model.get_num_tokens_from_messages(list(messages))

    return count


@dataclass(frozen=True, kw_only=True)
class Compaction:
    """When and how to compact a context: the configuration of the compaction step.

    The window is the model's `profile["max_input_tokens"]` when the model has one,
    else `max_context_tokens`; when neither is known, `window()` (and so building
    a graph that compacts) fails with an error saying which to set.

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
    """The model that writes the summary (may differ from the worker's). Chat models
    are called through `with_structured_output(ContextSummary)`; any other Runnable
    gets the prompt messages and must return a `ContextSummary` or a dict of one."""
    trigger: float = 0.7
    """Compact when the context reaches this fraction of the window, strictly between
    0 and 1 (0.6-0.8 is recommended)."""
    every_n_steps: int | None = None
    """Also compact every n steps (e.g. 3: at steps 3, 6, 9, ...), whatever the size."""
    keep: int = 6
    """How many recent messages stay verbatim (at least 1). More are kept when the
    cut would split a tool call from its result; fewer when the kept messages would
    take more than half of the trigger budget in tokens (see `split_for_compaction`)."""
    max_context_tokens: int | None = None
    """The input window in tokens, for models whose profile lacks `max_input_tokens`."""
    model: BaseChatModel | None = None
    """The model whose window and token counter apply (`window(model)` overrides it)."""
    token_counter: TokenCounter | None = None
    """Counts tokens; by default the model's own counter when its class has one,
    else LangChain's `count_tokens_approximately`."""
    max_attempts: int = 3
    """Summarizer attempts (exceptions or invalid summaries) before giving up (>= 1)."""
    retry_delay: float = 0.0
    """Seconds to wait between summarizer attempts (>= 0 and finite)."""

    def __post_init__(self) -> None:
        if not isinstance(self.summarizer, Runnable):
            raise TypeError(
                f"Compaction.summarizer: got {type(self.summarizer).__name__}; give a chat "
                "model (e.g. a cheaper model than the worker's) or a Runnable returning a "
                "ContextSummary"
            )
        trigger = self.trigger
        if isinstance(trigger, bool) or not isinstance(trigger, int | float) or not 0 < trigger < 1:
            raise ValueError(
                f"Compaction.trigger: got {trigger!r}; give a fraction of the model's input "
                "window strictly between 0 and 1 (0.6-0.8 is recommended; the default is 0.7)"
            )
        object.__setattr__(self, "trigger", float(trigger))
        if self.every_n_steps is not None and not (
            _is_int(self.every_n_steps) and self.every_n_steps >= 1
        ):
            raise ValueError(
                f"Compaction.every_n_steps: got {self.every_n_steps!r}; give an integer >= 1 "
                "(e.g. 3 compacts every third step), or None to compact by size only"
            )
        if not (_is_int(self.keep) and self.keep >= 1):
            raise ValueError(
                f"Compaction.keep: got {self.keep!r}; give the number of recent messages "
                "to keep verbatim, an integer >= 1 (the default is 6)"
            )
        if self.max_context_tokens is not None and not (
            _is_int(self.max_context_tokens) and self.max_context_tokens >= 1
        ):
            raise ValueError(
                f"Compaction.max_context_tokens: got {self.max_context_tokens!r}; give the "
                "model's input window in tokens, an integer >= 1, or None to read it from "
                "the model's profile"
            )
        if self.model is not None and not isinstance(self.model, BaseChatModel):
            raise TypeError(
                f"Compaction.model: got {type(self.model).__name__}; give the chat model "
                "whose window applies, or None"
            )
        if self.token_counter is not None and not callable(self.token_counter):
            raise TypeError(
                f"Compaction.token_counter: got {type(self.token_counter).__name__}; give a "
                "function taking a list of messages and returning a token count, or None"
            )
        if not (_is_int(self.max_attempts) and self.max_attempts >= 1):
            raise ValueError(
                f"Compaction.max_attempts: got {self.max_attempts!r}; give an integer >= 1 "
                "(the default is 3)"
            )
        check_seconds(self.retry_delay, "Compaction.retry_delay", zero=True)

    def window(self, model: BaseChatModel | None = None) -> int:
        """Resolve the input window in tokens.

        Args:
            model: The model whose window applies; defaults to `Compaction.model`.

        Returns:
            The model profile's `max_input_tokens` when present, else `max_context_tokens`.

        Raises:
            ValueError: If neither is known.

        Example:
            >>> from langgraph_supervisor_pro.testing import ScriptedChatModel
            >>> model = ScriptedChatModel(script=[], profile={"max_input_tokens": 8000})
            >>> Compaction(summarizer=model, max_context_tokens=4000).window(model)
            8000
        """
        chosen = model if model is not None else self.model
        from_profile = _profile_window(chosen)
        if from_profile is not None:
            return from_profile
        if self.max_context_tokens is not None:
            return self.max_context_tokens
        which = f" ({type(chosen).__name__} has none)" if chosen is not None else ""
        raise ValueError(
            "Compaction: the context window is unknown: set "
            "Compaction(max_context_tokens=...) or use a model whose profile has "
            f"max_input_tokens{which}"
        )

    def counter(self, model: BaseChatModel | None = None) -> TokenCounter:
        """Resolve the token counter.

        Args:
            model: The model whose counter applies; defaults to `Compaction.model`.

        Returns:
            `token_counter` if set; else the model's own counter when its class overrides
            `get_num_tokens_from_messages`; else `count_tokens_approximately`.

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
        if chosen is not None:
            own = _own_counter(chosen)
            if own is not None:
                return own
        return count_tokens_approximately

    def compactor(self, model: BaseChatModel | None = None) -> Compactor:
        """Build the `Compactor` for a model (window and counter resolved now).

        Args:
            model: The model whose window and counter apply; defaults to `Compaction.model`.

        Returns:
            A `Compactor` using this configuration.

        Raises:
            ValueError: If the window is unknown (see `window`).

        Example:
            >>> from langgraph_supervisor_pro.testing import ScriptedChatModel
            >>> config = Compaction(summarizer=ScriptedChatModel(script=[]),
            ...                     max_context_tokens=1000)
            >>> config.compactor().window
            1000
        """
        from langgraph_supervisor_pro.compaction.compactor import Compactor

        return Compactor(self, window=self.window(model), counter=self.counter(model))

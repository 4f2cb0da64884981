"""Keeping credentials out of what the package stores, shows to a model or traces.

Pass credentials in LangGraph's runtime context (`graph.invoke(inputs, config,
context=...)`; `create_supervisor(context_schema=...)` types it): nodes, a worker agent's
tools (`ToolRuntime.context`) and function workers (`langgraph.runtime.get_runtime()`)
read it there, at every level of a tree, and LangGraph neither checkpoints nor traces it.
A credential in `config["configurable"]` must be wrapped in a pydantic `SecretStr`:
LangGraph copies every plain `str`, `int`, `float` and `bool` there into each checkpoint's
metadata, and LangChain into each trace run's metadata.

Error text is scrubbed before it enters state (a hop's `error` and derived `summary`, the
ledger, halt details, review context) or the supervisor's prompt: every registered secret
(`register_secret`), every `SecretStr` in the runtime context or `configurable`, and every
plain string under a secret-looking key there (`api_key`, `token`, `password`, ...) is
replaced by `***`.
"""

from __future__ import annotations

from pydantic import SecretStr

from langgraph_supervisor_pro._internal.scrub import register

__all__ = ["register_secret"]


def register_secret(value: str | SecretStr) -> None:
    """Treat `value` as a credential in this process: scrubbed from error text, never stored.

    Every supervisor graph of the process replaces it with `***` in the error text it
    stores or shows its supervisor model (a worker's exception, a failed result, a halt),
    and the checkpointers of `open_checkpointer` / `aopen_checkpointer` leave any
    `configurable` or metadata value holding it out of checkpoint metadata. Credentials
    given per run need no registering when they are in the runtime context or are
    `SecretStr`s in `configurable`: they are found there.

    Args:
        value: The credential (at least 4 characters), as a `str` or a `SecretStr`.

    Raises:
        TypeError: `value` is neither a `str` nor a `SecretStr`.
        ValueError: `value` is shorter than 4 characters.

    Example:
        >>> import os
        >>> register_secret(os.environ.get("PAYMENTS_API_KEY", "sk-doc-example-0001"))
        >>> register_secret("abc")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: register_secret: a secret needs at least 4 characters (got 3); ...
    """
    register(value)

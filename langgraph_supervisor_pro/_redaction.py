"""Keeping credentials out of what the package stores, shows to a model or traces.

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/secrets/
"""

from __future__ import annotations

from pydantic import SecretStr

from langgraph_supervisor_pro._internal.scrub import register


def register_secret(value: str | SecretStr) -> None:
    """Treat `value` as a credential in this process: scrubbed from error text, never stored.

    Credentials in the runtime context, or `SecretStr`s in `configurable`, need no
    registering: they are found there.

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

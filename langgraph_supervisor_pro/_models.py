"""Chat models from configuration: `LGSP_MODEL`, and `LGSP_<ROLE>_MODEL` per role.

Unset, `model_from_env` returns None and the caller uses its offline model.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from langchain_core.language_models import BaseChatModel

from langgraph_supervisor_pro._internal.text import one_line

MODEL_ENV = "LGSP_MODEL"
"""The variable naming every role's model (`provider:model`)."""

_ROLE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_MAX_NAME = 200


def model_variable(role: str) -> str:
    """The variable that names `role`'s own model: `LGSP_<ROLE>_MODEL` (a ValueError if bad)."""
    if not isinstance(role, str) or _ROLE.fullmatch(role) is None:
        raise ValueError(
            f"role: got {role!r}; give a name that starts with a letter and holds only "
            "letters, digits and '_' (at most 64), e.g. 'billing'"
        )
    return f"LGSP_{role.upper()}_MODEL"


def model_from_env(
    role: str | None = None, *, environ: Mapping[str, str] | None = None
) -> BaseChatModel | None:
    """The chat model configured for `role`, or None when none is (run it offline).

    `LGSP_<ROLE>_MODEL` wins over `LGSP_MODEL`; each holds what `init_chat_model` takes,
    `provider:model` (e.g. `openai:gpt-4.1-mini`); blank counts as unset.

    Args:
        role: The role (a worker's name, "supervisor", ...); None reads only `LGSP_MODEL`.
        environ: Where the variables are read (default `os.environ`).

    Raises:
        ValueError: If `role` is not a valid name, or `init_chat_model` cannot make the
            variable's model (the provider's own error is chained).

    Example:
        >>> model_from_env("writer", environ={"LGSP_MODEL": " "}) is None
        True
    """
    variables = ([model_variable(role)] if role is not None else []) + [MODEL_ENV]
    values = os.environ if environ is None else environ
    for variable in variables:
        name = values.get(variable, "").strip()
        if not name:
            continue
        if len(name) > _MAX_NAME or not name.isprintable():
            raise ValueError(
                f"{variable}: got {name[:60]!r}; give provider:model in printable characters "
                f"(at most {_MAX_NAME}), e.g. openai:gpt-4.1-mini"
            )
        from langchain.chat_models import init_chat_model

        try:
            return init_chat_model(name)
        except Exception as exc:  # the provider's own error, chained
            raise ValueError(
                f"{variable}={name!r}: init_chat_model could not make this model "
                f"({one_line(str(exc), 300)}); give provider:model, e.g. openai:gpt-4.1-mini, "
                "and install the provider's package (e.g. langchain-openai)"
            ) from exc
    return None

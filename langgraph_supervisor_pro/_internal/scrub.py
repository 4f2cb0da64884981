"""Credentials: which values are secret, and the one scrubber for error text (private).

A run's secrets are the registered ones, the environment's credentials, `SecretStr`s and
strings under secret-looking keys in its context and `configurable` (`RunSecrets`);
`redact_config` keeps checkpoint metadata free of credentials, told by what they are.
See docs/architecture.md ("Secrets") and docs/how-to/secrets.md.

Example:
    >>> from pydantic import SecretStr
    >>> config = {"configurable": {"thread_id": "t", "openai_api_key": "sk-live-123456789"}}
    >>> secrets = RunSecrets(config, context={"db": SecretStr("hunter2-db")})
    >>> secrets.scrub("login hunter2-db failed with sk-live-123456789")
    'login *** failed with ***'
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import threading
import traceback
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from pydantic import BaseModel, SecretBytes, SecretStr

from langgraph_supervisor_pro.errors import ScrubbedError

MASK = "***"
"""What a secret is replaced with."""

SECRET_KEY_PARTS = ("key", "token", "secret", "password", "passwd", "credential", "authorization")
"""A key containing one of these (case-insensitive) looks secret."""

MIN_SECRET_CHARS = 4
"""Shorter values are never treated as secrets: they cannot be told apart from text."""

MIN_NAMED_SECRET_CHARS = 8
"""A plain `str` under a secret-looking key counts from this length."""

_MAX_DEPTH = 4  # how deep `secrets_in` looks

ENV_SECRET_NAMES = frozenset(
    {
        "PGPASSWORD",
        "MYSQL_PWD",
        "REDIS_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "AZURE_CLIENT_SECRET",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "LANGSMITH_API_KEY",
        "LANGCHAIN_API_KEY",
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "NPM_TOKEN",
        "SLACK_BOT_TOKEN",
        "API_KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "SECRET_KEY",
    }
)
"""Environment variables whose value is a credential, whatever its form."""

ENV_SECRET_SUFFIXES = (
    "_API_KEY",
    "_APIKEY",
    "_TOKEN",
    "_SECRET",
    "_SECRET_KEY",
    "_ACCESS_KEY",
    "_PRIVATE_KEY",
    "_PASSWORD",
    "_PASSWD",
)
"""An environment variable whose name ends in one of these (case-insensitive) holds one."""

MIN_ENV_SECRET_CHARS = 8
"""An environment value (or a URL's password in one) counts from this length."""

_registered: set[str] = set()
_environment: frozenset[str] | None = None
_known: frozenset[str] | None = None  # both, rebuilt when either changes
_lock = threading.Lock()
_log = logging.getLogger("langgraph_supervisor_pro.security")
_warned_keys: set[str] = set()


def register(value: str | SecretStr) -> None:
    """Add `value` to the process's registered secrets (see `register_secret`)."""
    text = value.get_secret_value() if isinstance(value, SecretStr) else value
    if not isinstance(text, str):
        raise TypeError(
            f"register_secret: got {type(value).__name__}; give the credential as a str or "
            "a pydantic SecretStr"
        )
    if len(text) < MIN_SECRET_CHARS:
        raise ValueError(
            f"register_secret: a secret needs at least {MIN_SECRET_CHARS} characters (got "
            f"{len(text)}); shorter values cannot be told apart from ordinary text"
        )
    global _known
    with _lock:
        _registered.add(text)
        _known = None


def registered() -> frozenset[str]:
    """The registered secrets and the environment's (kept, rebuilt after a change)."""
    global _known
    known = _known
    if known is None:
        environment = environment_secrets()
        with _lock:
            known = _known = frozenset(_registered) | environment
    return known


def forget_registered() -> None:
    """Forget every registered secret (for tests); the environment's are kept."""
    global _known
    with _lock:
        _registered.clear()
        _known = None


def environment_secrets() -> frozenset[str]:
    """The credentials held in the process's environment, read once."""
    return _environment if _environment is not None else refresh_environment_secrets()


def refresh_environment_secrets() -> frozenset[str]:
    """Read the environment's credentials again (after `os.environ` changed)."""
    from langgraph_supervisor_pro._internal.urls import passwords_in

    global _environment, _known
    found: set[str] = set()
    for name, value in os.environ.items():
        if _names_credential(name):
            found |= _long_enough(value.strip(), MIN_ENV_SECRET_CHARS)
        if "://" in value and "@" in value:  # a URL with a password, e.g. DATABASE_URL
            found |= {p for p in passwords_in(value.strip()) if len(p) >= MIN_ENV_SECRET_CHARS}
    environment = frozenset(found)
    with _lock:
        _environment = environment
        _known = None
    return environment


def _names_credential(name: str) -> bool:
    upper = name.upper()
    return upper in ENV_SECRET_NAMES or upper.endswith(ENV_SECRET_SUFFIXES)


def warn_plain_credentials(config: RunnableConfig | None) -> None:
    """Warn, once per key and process, of a plain `str` credential in `configurable`."""
    configurable = (config or {}).get("configurable")
    if not isinstance(configurable, Mapping):
        return
    for key, value in configurable.items():
        name = str(key)
        if (
            isinstance(value, str)
            and len(value) >= MIN_NAMED_SECRET_CHARS
            and not name.startswith("__")
            and name not in _warned_keys
            and looks_secret(name)
        ):
            with _lock:
                if name in _warned_keys:
                    continue
                _warned_keys.add(name)
            _log.warning(
                "config['configurable'][%r] is a plain str that looks like a credential: "
                "LangChain copies every plain str of `configurable` into each trace run's "
                "metadata (LangSmith, OpenTelemetry). Pass it in the runtime context "
                "(graph.invoke(inputs, config, context={%r: ...})) or wrap it in a pydantic "
                "SecretStr. (Said once per key.)",
                name,
                name,
            )


def looks_secret(key: str) -> bool:
    """Whether a config or context key names a credential."""
    lowered = key.casefold()
    return any(part in lowered for part in SECRET_KEY_PARTS)


CREDENTIAL_NAMES = frozenset(
    {
        "api_key",
        "apikey",
        "x_api_key",
        "api_token",
        "api_secret",
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "auth_token",
        "bearer_token",
        "session_token",
        "oauth_token",
        "csrf_token",
        "personal_access_token",
        "github_token",
        "gh_token",
        "gitlab_token",
        "hf_token",
        "npm_token",
        "pypi_token",
        "slack_token",
        "slack_bot_token",
        "aws_session_token",
        "aws_secret_access_key",
        "secret",
        "secret_key",
        "client_secret",
        "private_key",
        "signing_key",
        "encryption_key",
        "password",
        "passwd",
        "passphrase",
        "credential",
        "credentials",
        "authorization",
        "proxy_authorization",
        "cookie",
        "set_cookie",
    }
)
"""Normalised key names (see `names_credential`) whose string value is a credential."""

CREDENTIAL_NAME_SUFFIXES = (
    "_api_key",
    "_apikey",
    "_api_token",
    "_api_secret",
    "_access_token",
    "_refresh_token",
    "_auth_token",
    "_bearer_token",
    "_session_token",
    "_secret",
    "_secret_key",
    "_secret_access_key",
    "_private_key",
    "_password",
    "_passwd",
    "_passphrase",
    "_credential",
    "_credentials",
)
"""A normalised key name ending in one of these names a credential."""

_MAX_METADATA_DEPTH = 8  # how deep `holds_credential` looks

_ALNUM = "A-Za-z0-9"
CREDENTIAL_VALUE_PATTERNS: Mapping[str, re.Pattern[str]] = {
    "OpenAI / Anthropic key (sk-, sk-proj-, sk-ant-)": re.compile(
        rf"(?<![{_ALNUM}])sk-(?=[{_ALNUM}_-]*[0-9])[{_ALNUM}_-]{{20,}}"
    ),
    "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)": re.compile(
        rf"(?<![{_ALNUM}])gh[pousr]_[{_ALNUM}]{{30,}}"
    ),
    "GitHub fine-grained token (github_pat_)": re.compile(
        rf"(?<![{_ALNUM}])github_pat_[{_ALNUM}_]{{30,}}"
    ),
    "Slack token (xoxb-, xoxp-, xoxa-, ...)": re.compile(
        rf"(?<![{_ALNUM}])xox[abeoprs]-[{_ALNUM}-]{{10,}}"
    ),
    "AWS access key id (AKIA, ASIA)": re.compile(
        r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"
    ),
    "Google API key (AIza)": re.compile(rf"(?<![{_ALNUM}])AIza[{_ALNUM}_-]{{35}}"),
    "Stripe key (sk_live_, rk_live_, ...)": re.compile(
        rf"(?<![{_ALNUM}])(?:sk|rk)_(?:live|test)_[{_ALNUM}]{{16,}}"
    ),
    "JSON Web Token": re.compile(
        rf"(?<![{_ALNUM}_-])eyJ[{_ALNUM}_-]{{10,}}\.eyJ[{_ALNUM}_-]{{10,}}\.[{_ALNUM}_-]*"
    ),
    "PEM private key": re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    "LangSmith key (lsv2_)": re.compile(rf"(?<![{_ALNUM}])lsv2_[{_ALNUM}_]{{20,}}"),
    "Hugging Face token (hf_)": re.compile(rf"(?<![{_ALNUM}])hf_[{_ALNUM}]{{30,}}"),
    "npm token (npm_)": re.compile(rf"(?<![{_ALNUM}])npm_[{_ALNUM}]{{36,}}"),
    "Bearer credential": re.compile(rf"\bBearer\s+[{_ALNUM}._~+/-]{{20,}}"),
}
"""The credential formats secret scanners know."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[-.\s]+")


def names_credential(key: str) -> bool:
    """Whether a key, normalised (camelCase split, lowercased, `-. ` as `_`), names a credential."""
    name = _SEPARATORS.sub("_", _CAMEL.sub("_", key.strip())).lower()
    return name in CREDENTIAL_NAMES or name.endswith(CREDENTIAL_NAME_SUFFIXES)


def looks_like_credential(text: str) -> bool:
    """Whether `text` holds a credential in a format secret scanners know."""
    return any(pattern.search(text) for pattern in CREDENTIAL_VALUE_PATTERNS.values())


def holds_credential(
    key: str, value: Any, secrets: Collection[str] = (), *, depth: int = 0
) -> bool:
    """Whether `value`, stored under `key`, is or holds a credential (nested: a list's key)."""
    if isinstance(value, str):
        return (
            names_credential(key)
            or any(len(s) >= MIN_SECRET_CHARS and s in value for s in secrets)
            or looks_like_credential(value)
        )
    if isinstance(value, SecretStr | SecretBytes):
        return True
    if depth >= _MAX_METADATA_DEPTH:
        return False
    if isinstance(value, Mapping):
        return any(holds_credential(str(k), v, secrets, depth=depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(holds_credential(key, item, secrets, depth=depth + 1) for item in value)
    return False


def secrets_in(value: Any, *, key: str = "", depth: int = 0) -> set[str]:
    """The `SecretStr`s and strings under secret-looking keys `value` holds, a few levels deep."""
    if isinstance(value, SecretStr):
        return _long_enough(value.get_secret_value(), MIN_SECRET_CHARS)
    if isinstance(value, SecretBytes):
        return _long_enough(value.get_secret_value().decode("utf-8", "replace"), MIN_SECRET_CHARS)
    if isinstance(value, str):
        return _long_enough(value, MIN_NAMED_SECRET_CHARS) if looks_secret(key) else set()
    if depth >= _MAX_DEPTH or value is None or isinstance(value, int | float | bytes):
        return set()
    found: set[str] = set()
    for name, item in _members(value, key):
        found |= secrets_in(item, key=name, depth=depth + 1)
    return found


def _long_enough(text: str, minimum: int) -> set[str]:
    return {text} if len(text) >= minimum else set()


def _members(value: Any, key: str) -> Iterable[tuple[str, Any]]:
    """(name, value) of what `value` holds; a sequence's items keep the sequence's key."""
    if isinstance(value, Mapping):
        return [(str(k), v) for k, v in value.items() if not str(k).startswith("__")]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [(f.name, getattr(value, f.name, None)) for f in dataclasses.fields(value)]
    if isinstance(value, BaseModel):
        return [(name, getattr(value, name, None)) for name in type(value).model_fields]
    if isinstance(value, list | tuple | set | frozenset):
        return [(key, item) for item in value]
    return []


class RunSecrets:
    """The secrets of one run (default: the running config and context), found when needed."""

    _UNSET: Any = object()

    def __init__(self, config: RunnableConfig | None = None, *, context: Any = _UNSET) -> None:
        self._config = config
        self._context = context
        self._values: frozenset[str] | None = None

    @property
    def values(self) -> frozenset[str]:
        """Every secret of the run."""
        if self._values is None:
            found = set(registered())
            config = self._config if self._config is not None else _running_config()
            found |= secrets_in((config or {}).get("configurable") or {})
            context = self._context if self._context is not self._UNSET else _running_context()
            found |= secrets_in(context)
            self._values = frozenset(found)
        return self._values

    def scrub(self, text: str) -> str:
        """`text` with every secret of the run replaced by `***`."""
        return scrub(text, self.values) if text else text


def _running_config() -> RunnableConfig | None:
    try:
        return get_config()
    except RuntimeError:  # not inside a runnable
        return None


def _running_context() -> Any:
    """The runtime context of the running graph (`Runtime.context`), if any."""
    from langgraph.runtime import get_runtime

    try:
        runtime = get_runtime()
    except RuntimeError:  # not inside a graph
        return None
    return getattr(runtime, "context", None)


def scrub(text: str, secrets: Collection[str]) -> str:
    """`text` with each of `secrets` replaced by `***`, one cut off by a final `…` too."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= MIN_SECRET_CHARS and secret in text:
            text = text.replace(secret, MASK)
    if text.endswith("…"):
        body = text[:-1]
        for secret in secrets:
            for cut in range(len(secret) - 1, MIN_SECRET_CHARS - 1, -1):
                if body.endswith(secret[:cut]):
                    body = body[:-cut] + MASK
                    break
        text = body + "…"
    return text


def scrubbed_error(exc: Exception, secrets: Collection[str]) -> ScrubbedError | None:
    """A `ScrubbedError` for `exc` if its text (or a chained one's) holds a secret, else None.

    Raise it `from None`, so that the original's text is not chained to it.
    """
    if not secrets:
        return None
    text = "".join(traceback.format_exception(exc))
    if not any(len(s) >= MIN_SECRET_CHARS and s in text for s in secrets):
        return None
    error = ScrubbedError(scrub(f"{type(exc).__name__}: {exc}", secrets))
    error.original = exc
    return error


def original_error(exc: Exception) -> Exception:
    """The exception a `ScrubbedError` stands in for (any other exception: itself)."""
    if isinstance(exc, ScrubbedError) and exc.original is not None:
        return exc.original
    return exc


def redact_config(config: RunnableConfig) -> RunnableConfig:
    """`config` without the credentials (`holds_credential`) of `configurable` and `metadata`.

    LangGraph's savers copy every `str` of both into each checkpoint's metadata.
    """
    secrets = registered()

    def keep(key: str, value: Any) -> bool:
        if not isinstance(value, str):
            return True  # not a credential (`max_tokens=100`), or never copied (a SecretStr)
        return not holds_credential(key, value, secrets)

    redacted: dict[str, Any] = dict(config)
    for field in ("configurable", "metadata"):
        values = config.get(field)
        if isinstance(values, Mapping):
            redacted[field] = {k: v for k, v in values.items() if keep(str(k), v)}
    return redacted  # type: ignore[return-value]

"""Credentials: which values are secret, and the one scrubber for error text (private).

A value is a secret of a run when it is

- registered for the process (`langgraph_supervisor_pro.register_secret`),
- the value of an environment variable with a credential name (`ENV_SECRET_NAMES`, or a
  name ending in one of `ENV_SECRET_SUFFIXES`: `OPENAI_API_KEY`, `GITHUB_TOKEN`,
  `DB_PASSWORD`, ...), or the password of a URL held in any environment variable
  (`DATABASE_URL=postgresql://app:PW@db/prod`), when at least `MIN_ENV_SECRET_CHARS`
  long: read once per process, when first needed, and again on
  `refresh_environment_secrets()`,
- a pydantic `SecretStr` / `SecretBytes` found in the run's runtime context
  (`invoke(..., context=...)`) or in `config["configurable"]`,
- a `str` of at least `MIN_NAMED_SECRET_CHARS` characters under a key that looks secret
  (`looks_secret`: it contains one of `SECRET_KEY_PARTS`) in either of them.

Checkpoint metadata (`redact_config`, and the package's checkpointers) keeps every value
but the credentials, told by what they are, never by a part of a key's name (a user's
`custom_key`, `idempotency_key`, `primary_key`, `cache_key`, `token_count`, `monkey` or
`keyboard` is kept with its value). Left out: a string

- holding a registered or environment secret (`registered`),
- under a credential name (`names_credential`): the key, normalised (camelCase split,
  lowercased, `-`, `.` and spaces turned into `_`), is one of `CREDENTIAL_NAMES`
  (`api_key`, `apikey`, `x_api_key`, `api_token`, `api_secret`, `token`, `access_token`,
  `refresh_token`, `id_token`, `auth_token`, `bearer_token`, `session_token`,
  `oauth_token`, `csrf_token`, `personal_access_token`, `github_token`, `gh_token`,
  `gitlab_token`, `hf_token`, `npm_token`, `pypi_token`, `slack_token`,
  `slack_bot_token`, `aws_session_token`, `aws_secret_access_key`, `secret`,
  `secret_key`, `client_secret`, `private_key`, `signing_key`, `encryption_key`,
  `password`, `passwd`, `passphrase`, `credential`, `credentials`, `authorization`,
  `proxy_authorization`, `cookie`, `set_cookie`) or ends in one of
  `CREDENTIAL_NAME_SUFFIXES` (`_api_key`, `_apikey`, `_api_token`, `_api_secret`,
  `_access_token`, `_refresh_token`, `_auth_token`, `_bearer_token`, `_session_token`,
  `_secret`, `_secret_key`, `_secret_access_key`, `_private_key`, `_password`,
  `_passwd`, `_passphrase`, `_credential`, `_credentials`),
- or, under any key, that looks like a credential (`looks_like_credential`: a key format
  secret scanners know, `CREDENTIAL_VALUE_PATTERNS`: OpenAI and Anthropic `sk-`,
  `sk-proj-`, `sk-ant-`; GitHub `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`;
  Slack `xoxb-`, `xoxp-`, `xoxa-`, ...; AWS access key ids `AKIA`/`ASIA`; Google `AIza`;
  Stripe `sk_live_`, `rk_live_`, `sk_test_`, ...; JWTs; PEM private keys; LangSmith
  `lsv2_`; Hugging Face `hf_`; npm `npm_`; `Bearer` credentials), each with a minimum
  length so that ordinary words do not match;

and a value that is not a string but holds such a string (in a list or a mapping, a few
levels deep), or a `SecretStr` / `SecretBytes`. Non-string values under a credential name
(`max_tokens=100`, `api_key_rotation=True`) are not credentials and are kept.

`scrub` replaces every secret in a text with `***`. The package scrubs error text where
it enters state or a prompt: a worker's exception (`_graph/worker_node.py`), whatever a
worker returned as its error and a domain's halt detail (`_graph/coerce.py`), the
supervisor's and synthesis's error handlers and halts. A function worker's exception is
replaced by a `ScrubbedError` before it leaves the function's own trace run.

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

__all__ = [
    "CREDENTIAL_NAMES",
    "CREDENTIAL_NAME_SUFFIXES",
    "CREDENTIAL_VALUE_PATTERNS",
    "ENV_SECRET_NAMES",
    "ENV_SECRET_SUFFIXES",
    "MASK",
    "MIN_ENV_SECRET_CHARS",
    "MIN_NAMED_SECRET_CHARS",
    "MIN_SECRET_CHARS",
    "SECRET_KEY_PARTS",
    "RunSecrets",
    "environment_secrets",
    "forget_registered",
    "holds_credential",
    "looks_like_credential",
    "looks_secret",
    "names_credential",
    "original_error",
    "redact_config",
    "refresh_environment_secrets",
    "register",
    "registered",
    "scrub",
    "scrubbed_error",
    "secrets_in",
    "warn_plain_credentials",
]

MASK = "***"
"""What a secret is replaced with."""

SECRET_KEY_PARTS = ("key", "token", "secret", "password", "passwd", "credential", "authorization")
"""A key containing one of these (case-insensitive) looks secret: `openai_api_key`,
`github_token`, `db_password`, `Authorization`, ..."""

MIN_SECRET_CHARS = 4
"""Shorter values are never treated as secrets: they cannot be told apart from text."""

MIN_NAMED_SECRET_CHARS = 8
"""A plain `str` under a secret-looking key counts from this length (`auth_mode="oauth"`
is not a credential)."""

_MAX_DEPTH = 4
"""How deep `secrets_in` looks into nested mappings, dataclasses, models and sequences."""

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
"""Environment variables whose value is a credential, whatever their form (the usual
forms are matched by `ENV_SECRET_SUFFIXES` too)."""

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
"""An environment variable whose name ends in one of these (case-insensitive) holds a
credential: `PAYMENTS_API_KEY`, `SLACK_TOKEN`, `CLIENT_SECRET`, `DB_PASSWORD`, ..."""

MIN_ENV_SECRET_CHARS = 8
"""An environment value (or a URL's password in one) counts from this length: shorter
ones (`DEBUG_TOKEN=1`, `X_PASSWORD=admin`) would mask ordinary words in error text."""

_registered: set[str] = set()
_environment: frozenset[str] | None = None
_known: frozenset[str] | None = None
"""The registered and the environment's secrets, rebuilt when either changes."""
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
    """The registered secrets and the environment's (`environment_secrets`).

    Cheap: kept, and rebuilt only after a `register` or a refresh.
    """
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
    """The credentials held in the process's environment, read once (see the module).

    Example:
        >>> import os
        >>> os.environ["DOC_PAYMENTS_API_KEY"] = "pk-live-0123456789"
        >>> "pk-live-0123456789" in refresh_environment_secrets()
        True
        >>> del os.environ["DOC_PAYMENTS_API_KEY"]
        >>> "pk-live-0123456789" in refresh_environment_secrets()
        False
    """
    found = _environment
    if found is None:
        found = refresh_environment_secrets()
    return found


def refresh_environment_secrets() -> frozenset[str]:
    """Read the environment's credentials again (after `os.environ` changed) and return them.

    The environment is read once per process, when a secret is first needed; a
    credential set later is seen after this call (or give it to `register_secret`).
    """
    global _environment, _known
    found: set[str] = set()
    for name, value in os.environ.items():
        if _names_credential(name):
            found |= _long_enough(value.strip(), MIN_ENV_SECRET_CHARS)
        if "://" in value and "@" in value:  # a URL with a password, e.g. DATABASE_URL
            found |= {p for p in _url_passwords(value) if len(p) >= MIN_ENV_SECRET_CHARS}
    environment = frozenset(found)
    with _lock:
        _environment = environment
        _known = None
    return environment


def _names_credential(name: str) -> bool:
    upper = name.upper()
    return upper in ENV_SECRET_NAMES or upper.endswith(ENV_SECRET_SUFFIXES)


def _url_passwords(value: str) -> list[str]:
    from langgraph_supervisor_pro._internal.urls import passwords_in

    return passwords_in(value.strip())


def warn_plain_credentials(config: RunnableConfig | None) -> None:
    """Warn, once per key and process, of a plain `str` credential in `configurable`.

    LangChain copies every plain `str` of `configurable` into the metadata of each trace
    run (and LangGraph into checkpoint metadata, which our checkpointers clean): a
    credential belongs in the runtime context (`invoke(..., context=...)`) or in a
    pydantic `SecretStr`. Written to the `langgraph_supervisor_pro.security` logger.
    """
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
    """Whether a config or context key names a credential.

    Example:
        >>> looks_secret("OPENAI_API_KEY"), looks_secret("github_token"), looks_secret("user_id")
        (True, True, False)
    """
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
"""A normalised key name ending in one of these names a credential: `openai_api_key`,
`db_password`, `webhook_secret`, `github_access_token`, `gcp_credentials`, ..."""

_MAX_METADATA_DEPTH = 8
"""How deep `holds_credential` looks into lists and mappings."""

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
"""The credential formats secret scanners know, by what they are (see the module)."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[-.\s]+")


def names_credential(key: str) -> bool:
    """Whether a key is a credential's name: its whole normalised name, never a part.

    The name is normalised (camelCase split, lowercased, `-`, `.` and spaces turned into
    `_`) and matched against `CREDENTIAL_NAMES` and `CREDENTIAL_NAME_SUFFIXES`.

    Example:
        >>> names_credential("OPENAI_API_KEY"), names_credential("X-Api-Key")
        (True, True)
        >>> names_credential("idempotency_key"), names_credential("token_count")
        (False, False)
    """
    name = _SEPARATORS.sub("_", _CAMEL.sub("_", key.strip())).lower()
    return name in CREDENTIAL_NAMES or name.endswith(CREDENTIAL_NAME_SUFFIXES)


def looks_like_credential(text: str) -> bool:
    """Whether `text` holds a credential in a format secret scanners know.

    Example:
        >>> looks_like_credential("Bearer sk-proj-Abc123def456ghi789jkl012")
        True
        >>> looks_like_credential("sk-learn estimator"), looks_like_credential("monkey")
        (False, False)
    """
    return any(pattern.search(text) for pattern in CREDENTIAL_VALUE_PATTERNS.values())


def holds_credential(
    key: str, value: Any, secrets: Collection[str] = (), *, depth: int = 0
) -> bool:
    """Whether `value`, stored under `key`, is or holds a credential (see the module).

    A string under a credential name, holding one of `secrets` or looking like a
    credential; a `SecretStr` / `SecretBytes`; a list or mapping holding any of these
    (`_MAX_METADATA_DEPTH` deep; an item of a list keeps the list's key).

    Example:
        >>> holds_credential("idempotency_key", "order-2024-0001")
        False
        >>> holds_credential("client_secret", "cs-0001")
        True
        >>> holds_credential("note", "AKIA0123456789ABCDEF")
        True
    """
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
    """The secret values `value` holds.

    `SecretStr`/`SecretBytes` anywhere, and plain strings under secret-looking keys, in
    mappings, dataclasses, pydantic models and sequences (a few levels deep; keys that
    start with `__`, LangGraph's own, are skipped).

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class Context:
        ...     user_id: str
        ...     github_token: str
        >>> sorted(secrets_in(Context(user_id="u-12345678", github_token="ghp_0123456789")))
        ['ghp_0123456789']
    """
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
    """The secrets of one run: the registered ones and those its config and context hold.

    Found when first needed (most hops never need them) and then kept.

    Args:
        config: The run's config; by default the running one (none outside a runnable).
        context: The run's runtime context; by default the running graph's.
    """

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
    """`text` with each of `secrets` replaced by `***`.

    A secret cut off by a truncation (the text ends in `…` right after a part of it at
    least `MIN_SECRET_CHARS` long) is masked too.

    Example:
        >>> scrub("key sk-123456 refused", {"sk-123456"})
        'key *** refused'
        >>> scrub("key sk-12…", {"sk-123456"})
        'key ***…'
    """
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
    """A `ScrubbedError` for `exc` if its text (or a chained exception's) holds a secret.

    None when there is nothing to scrub. Raise it `from None`, so that the original's text
    is not chained to it.
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
    """`config` without the values LangGraph must not copy into checkpoint metadata.

    Left out of `configurable` and `metadata`: the strings that are credentials
    (`holds_credential`: under a credential name, holding a registered secret or looking
    like a credential); a key is never dropped for a part of its name.

    LangGraph's savers copy every `str`, `int`, `float` and `bool` of both into each
    checkpoint's metadata; the checkpointer reads nothing else from them but the
    checkpoint's coordinates (`thread_id`, `checkpoint_ns`, `checkpoint_id`), which are kept.

    Example:
        >>> redact_config({"configurable": {"thread_id": "t", "openai_api_key": "sk-1"}})
        {'configurable': {'thread_id': 't'}}
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

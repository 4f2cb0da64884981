"""A node's config with a callback handler, metadata or tags added, cheaply (private).

What `merge_configs(config, {...})` gives for these additions, without ensuring both
configs first: that copies the callback manager and every dict of each config, three
managers per merge, and a hop merged twice (bench/RESULTS.md, "Scale on one machine,
function workers").
`config` must be complete (a node body's, see `_graph/node.py`); it is never changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import DEFAULT_RECURSION_LIMIT


def with_handler(
    config: RunnableConfig,
    handler: BaseCallbackHandler,
    configurable: Mapping[str, Any] | None = None,
) -> RunnableConfig:
    """`config` whose callbacks also hold `handler`, inherited by every run below.

    As `merge_configs(config, {"callbacks": [handler]})`: a list of handlers grows by one,
    a callback manager is copied and given the handler. `configurable` adds entries.
    """
    callbacks = config.get("callbacks")
    merged: Any
    if callbacks is None:
        merged = [handler]
    elif isinstance(callbacks, BaseCallbackManager):
        merged = callbacks.copy()
        merged.add_handler(handler, inherit=True)
    else:
        merged = [*callbacks, handler]
    out = _merged(config)
    out["callbacks"] = merged
    if configurable:
        out["configurable"] = {**(config.get("configurable") or {}), **configurable}
    return out


def with_trace(
    config: RunnableConfig, metadata: Mapping[str, Any], tags: Iterable[str] = ()
) -> RunnableConfig:
    """`config` with `metadata` added (its values win) and `tags` added (sorted, once).

    As `merge_configs(config, {"metadata": metadata, "tags": tags})`.
    """
    base = config.get("metadata") or {}
    merged = {**base, **metadata}
    versions = base.get("lc_versions")
    if isinstance(versions, Mapping) and "lc_versions" not in metadata:
        merged["lc_versions"] = {**versions}  # `merge_configs` copies LangChain's versions
    out = _merged(config)
    out["metadata"] = merged
    out["tags"] = sorted({*(config.get("tags") or ()), *tags})
    return out


def _merged(config: RunnableConfig) -> RunnableConfig:
    """A copy of `config` as `merge_configs` starts one.

    Unset keys and LangChain's default recursion limit are left out (a graph run below then
    takes LangGraph's own limit, 10,007 steps, not LangChain's 25); each tag is kept once,
    sorted.
    """
    out = cast(RunnableConfig, {k: v for k, v in config.items() if v is not None})
    if out.get("recursion_limit") == DEFAULT_RECURSION_LIMIT:
        del out["recursion_limit"]
    if "tags" in out:
        out["tags"] = sorted(set(out["tags"]))
    return out

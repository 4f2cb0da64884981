"""The cheap config additions give what `merge_configs` gives, and change nothing they are given."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackManager, BaseCallbackHandler, CallbackManager
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, merge_configs

from langgraph_supervisor_pro._internal.configs import with_handler, with_trace


class _Handler(BaseCallbackHandler):
    pass


def _shown(config: RunnableConfig) -> dict[str, Any]:
    """A config with its callbacks as what they hold (managers compare by identity)."""
    out: dict[str, Any] = dict(config)
    callbacks = config.get("callbacks")
    if callbacks is not None and not isinstance(callbacks, list):
        out["callbacks"] = (
            type(callbacks),
            callbacks.handlers,
            callbacks.inheritable_handlers,
            callbacks.parent_run_id,
            callbacks.tags,
            callbacks.inheritable_tags,
            callbacks.metadata,
            callbacks.inheritable_metadata,
        )
    return out


def _configs() -> list[RunnableConfig]:
    first = _Handler()
    manager = CallbackManager(handlers=[first], inheritable_handlers=[first])
    manager.add_tags(["node"], inherit=True)
    manager.add_metadata({"langgraph_node": "n"}, inherit=True)
    return [
        ensure_config({"configurable": {"thread_id": "t"}}),
        ensure_config({"callbacks": [first], "tags": ["b", "a"], "metadata": {"k": 1}}),
        ensure_config({"callbacks": manager, "recursion_limit": 40}),
        ensure_config(
            {
                "callbacks": AsyncCallbackManager(handlers=[]),
                "metadata": {"lc_versions": {"langchain-core": "1"}, "k": "v"},
                "run_name": "r",
            }
        ),
    ]


@pytest.mark.parametrize("config", _configs())
def test_with_handler_gives_what_merge_configs_gives(config):
    before = copy.copy(config)
    handler = _Handler()
    added = with_handler(config, handler, {"key": 1})
    expected = merge_configs(config, {"callbacks": [handler]})
    expected["configurable"] = {**expected["configurable"], "key": 1}
    assert _shown(added) == _shown(expected)
    assert config == before and "key" not in config["configurable"]  # nothing changed
    if not isinstance(config.get("callbacks"), list | None):
        assert added["callbacks"] is not config["callbacks"]  # a copy holds the handler
        assert handler not in config["callbacks"].handlers


@pytest.mark.parametrize("config", _configs())
def test_with_trace_gives_what_merge_configs_gives(config):
    before = copy.copy(config)
    metadata = {"lgsp_worker": "w", "k": "replaced"}
    added = with_trace(config, metadata, ["lgsp:worker:w", "a"])
    expected = merge_configs(config, {"metadata": metadata, "tags": ["lgsp:worker:w", "a"]})
    assert _shown(added) == _shown(expected)
    assert config == before


def test_langchains_default_recursion_limit_is_left_out_so_a_graph_below_takes_its_own():
    config = ensure_config({})  # recursion_limit 25, LangChain's default
    assert "recursion_limit" not in with_handler(config, _Handler())
    assert "recursion_limit" not in with_trace(config, {"k": 1})
    assert with_trace({**config, "recursion_limit": 40}, {})["recursion_limit"] == 40

"""The `lgsp demo` desk: the `support_desk` template's graph, offline (private).

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/templates/#the-demo
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.types import StateSnapshot

from langgraph_supervisor_pro.cli import _templates
from langgraph_supervisor_pro.errors import DemoError, TemplateError

DEMO_TEMPLATE = "support_desk"
"""The template the demo plays."""

DEMO_TIER = "supervised"
"""The autonomy tier the demo runs in: low-risk tools run, high-risk ones wait for a human."""

_MODULE = "_lgsp_demo_support_desk_graph"
# Hidden while the template loads: the demo is offline and in its own tier whatever the
# environment says.
_MASKED_SUFFIXES = ("_MODEL",)
_MASKED = ("LGSP_AUTONOMY", "LGSP_POLICY_FILE")


@dataclass(frozen=True)
class NextStep:
    """What a thread needs next: `start` turn `turn`, `resume` it, `review`, or `done`."""

    kind: Literal["start", "resume", "review", "done"]
    turn: int
    """The conversation's turn (1-based) the step belongs to."""
    text: str = ""
    """The customer's message, for `start`."""
    review: Mapping[str, Any] | None = None
    """The pending review's payload, for `review`."""


@dataclass(frozen=True, kw_only=True)
class DemoDesk:
    """The template's graph, its conversation and where it came from."""

    graph: StateGraph[Any, Any, Any, Any]
    """The support desk, uncompiled, offline, in the `DEMO_TIER` tier."""
    conversation: tuple[str, ...]
    """The customer's messages, one per turn."""
    window: int
    """The offline models' input window in tokens."""
    source: Path
    """The template's `graph.py` the graph was built from."""

    def compile(self, checkpointer: BaseCheckpointSaver[Any]) -> Pregel[Any, Any, Any, Any]:
        """Compile the desk with `checkpointer` (reviews pause and resume through it)."""
        return self.graph.compile(checkpointer=checkpointer)

    def next_step(self, snapshot: StateSnapshot) -> NextStep:
        """What the thread needs next, from its `app.get_state(config)`.

        `review` when a review is pending; `resume` when a turn started and did not end (the
        process died mid-turn); `start` with the next customer message; else `done`.
        """
        values = snapshot.values if isinstance(snapshot.values, Mapping) else {}
        asked = len(customer_messages(values))
        if snapshot.interrupts:
            return NextStep("review", max(asked, 1), review=snapshot.interrupts[0].value)
        if asked and (snapshot.next or values.get("status") == "running"):
            return NextStep("resume", asked)
        if asked < len(self.conversation):
            return NextStep("start", asked + 1, text=self.conversation[asked])
        return NextStep("done", asked)


def customer_messages(values: Mapping[str, Any]) -> list[BaseMessage]:
    """The customer's messages of a thread (its human messages), oldest first.

    Example:
        >>> customer_messages({"messages": [HumanMessage("hi")]})[0].content
        'hi'
    """
    return [m for m in values.get("messages") or () if isinstance(m, HumanMessage)]


def load_desk() -> DemoDesk:
    """The demo desk: the `support_desk` template's graph, offline, in the `DEMO_TIER` tier.

    Raises:
        DemoError: When the template cannot be found or loaded.

    Example:
        >>> load_desk().conversation[0]
        'I was charged twice for order A1001, please refund the duplicate'
    """
    try:
        template = _templates.templates().get(DEMO_TEMPLATE)
    except TemplateError as exc:
        raise DemoError(str(exc)) from exc
    if template is None:
        raise DemoError(
            f"the {DEMO_TEMPLATE} template is missing from {_templates.templates_root()}; "
            "reinstall langgraph-supervisor-pro"
        )
    source = template.path / DEMO_TEMPLATE / "graph.py"
    with _offline_environ():
        module = _import(source)
        try:
            graph = module.build_graph({"LGSP_AUTONOMY": DEMO_TIER})
            conversation = tuple(str(text) for text in module.DEMO_CONVERSATION)
            window = int(module.OFFLINE_WINDOW)
        except Exception as exc:
            raise DemoError(f"cannot build the demo from {source}: {exc}") from exc
    if not isinstance(graph, StateGraph) or not conversation:
        raise DemoError(f"{source} did not give a graph and a conversation")
    return DemoDesk(graph=graph, conversation=conversation, window=window, source=source)


def _import(source: Path) -> ModuleType:
    """The template's graph module, by file, under a private name (no sys.path change)."""
    loaded = sys.modules.get(_MODULE)
    if loaded is not None and getattr(loaded, "__file__", None) == str(source):
        return loaded
    spec = importlib.util.spec_from_file_location(_MODULE, source)
    if spec is None or spec.loader is None or not source.is_file():
        raise DemoError(f"no demo graph at {source}; reinstall langgraph-supervisor-pro")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_MODULE] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[_MODULE]
        raise DemoError(f"cannot load the demo's graph {source}: {exc}") from exc
    return module


@contextmanager
def _offline_environ() -> Iterator[None]:
    """Hide the `LGSP_*_MODEL`, `LGSP_AUTONOMY` and `LGSP_POLICY_FILE` settings for a while."""
    hidden = {
        name: value
        for name, value in os.environ.items()
        if name in _MASKED or (name.startswith("LGSP_") and name.endswith(_MASKED_SUFFIXES))
    }
    for name in hidden:
        del os.environ[name]
    try:
        yield
    finally:
        os.environ.update(hidden)


def answers(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Each turn's customer message and the desk's answer (empty while it has none).

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> answers({"messages": [HumanMessage("hi"), AIMessage("hello")]})
        [('hi', 'hello')]
    """
    pairs: list[tuple[str, str]] = []
    for message in values.get("messages") or ():
        if isinstance(message, HumanMessage):
            pairs.append((message.text, ""))
        elif pairs and message.type == "ai" and message.text:
            pairs[-1] = (pairs[-1][0], message.text)
    return pairs

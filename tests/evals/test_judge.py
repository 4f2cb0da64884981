"""The online judge's configuration and sampling (its step: tests/_graph/test_judge_node.py)."""

from __future__ import annotations

import math
import uuid
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_supervisor_pro import Worker, create_supervisor
from langgraph_supervisor_pro.evals._judge import OnlineJudge, judge_key, judged
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedChatModel
from tests._helpers import ask, routes

LOW = {"score": 0.2, "passed": False, "reasons": ["misses the price"]}
HIGH = {"score": 0.9, "passed": True, "reasons": ["complete"]}


def answer(task) -> str:
    return f"Answer about {task.task}"


def team(judge: OnlineJudge | None = None, **kwargs: Any):
    workers = kwargs.pop("workers", [Worker(name="w", description="Works.", agent=answer)])
    router = kwargs.pop("router", routes("w"))
    return create_supervisor(workers, router=router, judge=judge, **kwargs)


def judge_of(*steps: Any, **kwargs: Any) -> OnlineJudge:
    return OnlineJudge(model=ScriptedChatModel(name="judge", script=list(steps)), **kwargs)


def config(thread_id: str | None = None) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id or str(uuid.uuid4())}}


class ChatAcme(FakeListChatModel):
    """A provider model as LangSmith sees it: (provider, model name) from its fields."""

    model: str = "acme-large"

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        return {"ls_provider": "acme", "ls_model_name": self.model, "ls_model_type": "chat"}


class AcmeJudge(ScriptedChatModel):
    """The same provider's models, with structured output (a judge needs it)."""

    model: str = "acme-large"

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        return {"ls_provider": "acme", "ls_model_name": self.model, "ls_model_type": "chat"}


# ----------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"model": "gpt-4o"}, TypeError, "OnlineJudge.model: got str"),
        ({"sample": 1.5}, ValueError, "OnlineJudge.sample: got 1.5"),
        ({"sample": -0.1}, ValueError, "OnlineJudge.sample"),
        ({"sample": math.nan}, ValueError, "OnlineJudge.sample: got nan"),
        ({"sample": True}, TypeError, "OnlineJudge.sample: got bool"),
        ({"sample": "0.5"}, TypeError, "OnlineJudge.sample: got str"),
        ({"threshold": math.inf}, ValueError, "OnlineJudge.threshold: got inf"),
        ({"threshold": 2}, ValueError, "OnlineJudge.threshold: got 2"),
        ({"criteria": "  "}, ValueError, "OnlineJudge.criteria"),
        ({"criteria": "good\x00answers"}, ValueError, "no NUL"),
        ({"criteria": "x" * 4001}, ValueError, "at most 4000"),
        ({"client": object()}, TypeError, "OnlineJudge.client: got object"),
        ({"feedback_key": ""}, ValueError, "OnlineJudge.feedback_key"),
        ({"max_answer_chars": 10}, ValueError, "OnlineJudge.max_answer_chars: got 10"),
        ({"max_answer_chars": 1e9}, ValueError, "OnlineJudge.max_answer_chars"),
        ({"timeout": 0}, ValueError, "OnlineJudge.timeout"),
        ({"timeout": math.inf}, ValueError, "OnlineJudge.timeout"),
        ({"timeout": "5"}, ValueError, "OnlineJudge.timeout"),
    ],
)
def test_a_bad_configuration_names_the_field_and_the_fix(kwargs, error, needle):
    full = {"model": ScriptedChatModel(name="judge", script=[]), **kwargs}
    with pytest.raises(error, match="OnlineJudge") as info:
        OnlineJudge(**full)
    assert needle in str(info.value)


def test_the_configuration_is_frozen_and_keyword_only():
    judge = judge_of(sample=1)
    assert judge.sample == 1.0 and isinstance(judge.sample, float)
    with pytest.raises(AttributeError):
        judge.sample = 0.5  # type: ignore[misc]
    with pytest.raises(TypeError):
        OnlineJudge(ScriptedChatModel(name="judge", script=[]))  # type: ignore[misc]


# ----------------------------------------------------------------------- sampling


def test_sampling_is_a_fixed_function_of_the_key():
    keys = [judge_key(f"thread-{i}", 1 + i % 3) for i in range(4000)]
    assert all(judged(k, 1.0) for k in keys) and not any(judged(k, 0.0) for k in keys)
    chosen = [k for k in keys if judged(k, 0.25)]
    assert 0.22 < len(chosen) / len(keys) < 0.28
    # A larger sample keeps every turn a smaller one judges (so raising it adds turns).
    assert all(judged(k, 0.5) for k in chosen)
    assert chosen == [k for k in keys if judged(k, 0.25)]
    assert judge_key("t", 1, ["ops", "pager"]) == "t:ops/pager:1"
    assert judged("odd \ud800 \x00 key:1", 1.0)  # any text hashes


def test_odd_thread_ids_sample_alike_in_the_graph_and_in_judges():
    # NUL and a lone surrogate become U+FFFD in the key a backend keeps; the node's sample
    # and the public `judges` hash that same key (several of these ids differ otherwise).
    assert judge_key("a\x00b", 1) == "a\ufffdb:1"
    assert judge_key("a\ud800b", 2, ["ops"]) == "a\ufffdb:ops:2"
    judge = OnlineJudge(model=FunctionChatModel(name="judge", reply=lambda call: HIGH), sample=0.5)
    app = team(judge).compile(checkpointer=InMemorySaver())
    threads = [f"odd-\x00-{i}" for i in range(8)] + [f"odd-\ud800-{i}" for i in range(4)]
    seen = {t: bool(app.invoke(ask("tea"), config(t)).get("judgements")) for t in threads}
    assert seen == {t: judge.judges(t, 1) for t in threads}
    assert 0 < sum(seen.values()) < len(threads)


def test_the_graph_judges_exactly_the_sampled_turns():
    judge = OnlineJudge(
        model=FunctionChatModel(name="judge", reply=lambda call: HIGH, record=True), sample=0.5
    )
    app = team(judge).compile(checkpointer=InMemorySaver())
    threads = [f"sample-{i}" for i in range(12)]
    seen = {t: bool(app.invoke(ask("tea"), config(t)).get("judgements")) for t in threads}
    assert seen == {t: judge.judges(t, 1) for t in threads}
    assert 0 < sum(seen.values()) < len(threads)
    assert len(judge.model.calls) == sum(seen.values())  # type: ignore[attr-defined]

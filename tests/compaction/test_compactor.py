"""Tests for the compaction step: config, window, token counting, split, summaries, retries."""

from __future__ import annotations

import functools
import re
import time
import uuid
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.constants import TAG_NOSTREAM
from langgraph.errors import GraphInterrupt

from langgraph_supervisor_pro.compaction._compactor import (
    COMPACTION_PROMPT,
    SUMMARY_HEADER,
    Compaction,
    CompactionOutcome,
    Compactor,
    ContextSummary,
    is_summary_message,
    is_truncation_marker,
    split_for_compaction,
    truncation_note,
)
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel

ORDER_RE = re.compile(r"ORDER-\d+")


# -- helpers ---------------------------------------------------------------------------


def summary_dict(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "task": "Refund the late orders",
        "done": ["looked up the orders"],
        "current_state": "Refunds are being issued.",
        "remaining": ["notify the customer"],
        "key_facts": [],
    }
    data.update(overrides)
    return data


def prompt_text(call: ScriptedCall) -> str:
    return str(call.messages[-1].content)


def extract_orders(call: ScriptedCall) -> dict[str, Any]:
    """A summarizer step that keeps every ORDER-n id it was shown as a key fact."""
    return summary_dict(key_facts=sorted(set(ORDER_RE.findall(prompt_text(call)))))


def chars(messages: Sequence[BaseMessage]) -> int:
    """A predictable token counter: one token per character of content."""
    return sum(len(str(m.content)) for m in messages)


def ai_call(call_ids: Sequence[str], *, id: str, name: str = "lookup") -> AIMessage:
    return AIMessage(
        content="",
        id=id,
        tool_calls=[{"name": name, "args": {"q": cid}, "id": cid} for cid in call_ids],
    )


def tool(call_id: str, content: str, *, id: str) -> ToolMessage:
    return ToolMessage(content=content, tool_call_id=call_id, id=id, name="lookup")


def order_history(first: int = 1, count: int = 3) -> list[BaseMessage]:
    """A well-formed history: a task, then one lookup (call + result) per order."""
    history: list[BaseMessage] = [HumanMessage("Refund the late orders", id=f"h{first}")]
    for n in range(first, first + count):
        cid = f"call-{n}"
        history.append(ai_call([cid], id=f"ai-{n}"))
        history.append(tool(cid, f"ORDER-{n} is late by {n} days", id=f"tool-{n}"))
    history.append(AIMessage(f"Checked up to ORDER-{first + count - 1}", id=f"end-{first}"))
    return history


def make_compactor(
    script: Sequence[Any], *, window: int = 100_000, counter: Any = None, **config: Any
) -> tuple[Compactor, ScriptedChatModel]:
    model = ScriptedChatModel(script=list(script))
    compaction = Compaction(summarizer=model, **config)
    return Compactor(compaction, window=window, counter=counter), model


def assert_pairs_intact(messages: Sequence[BaseMessage]) -> None:
    """No tool message without its AI message, no kept tool call without its result."""
    call_ids = {call["id"] for m in messages if isinstance(m, AIMessage) for call in m.tool_calls}
    result_ids = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    assert result_ids <= call_ids, f"orphan tool results: {result_ids - call_ids}"
    assert call_ids <= result_ids, f"tool calls without results: {call_ids - result_ids}"


# -- property: tool pairs are never split --------------------------------------------------


@functools.cache
def _earlier_summary() -> BaseMessage:
    compactor, _ = make_compactor([summary_dict(key_facts=["ORDER-0"])], keep=1)
    history = [HumanMessage("start", id="s1"), AIMessage("ORDER-0 opened", id="s2")]
    return compactor.compact(history, task="t").messages[0]


def earlier_summary() -> BaseMessage:
    """A summary message written by a real compaction (a copy each time)."""
    return _earlier_summary().model_copy(deep=True)


@st.composite
def histories(draw: st.DrawFn) -> list[BaseMessage]:
    """Random well-formed histories: each AI message's tool messages follow it."""
    messages: list[BaseMessage] = []
    if draw(st.booleans()):
        messages.append(earlier_summary())
    blocks = draw(st.lists(st.sampled_from(["human", "ai", "tools"]), min_size=0, max_size=14))
    for b, kind in enumerate(blocks):
        size = draw(st.integers(min_value=1, max_value=40))
        if kind == "human":
            messages.append(HumanMessage("h" * size, id=f"m{b}"))
        elif kind == "ai":
            messages.append(AIMessage("a" * size, id=f"m{b}"))
        else:
            n_calls = draw(st.integers(min_value=0, max_value=3))
            ids = [f"c{b}-{i}" for i in range(n_calls)]
            messages.append(ai_call(ids, id=f"m{b}"))
            for i, cid in enumerate(draw(st.permutations(ids))):
                messages.append(tool(cid, f"ORDER-{b} " + "t" * size, id=f"m{b}-t{i}"))
    return messages


def pairs(messages: Sequence[BaseMessage]) -> list[tuple[int, int]]:
    """(AI index, tool index) for every tool call and its result."""
    owner: dict[str, int] = {}
    found: list[tuple[int, int]] = []
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage):
            owner.update({str(call["id"]): index for call in message.tool_calls})
        elif isinstance(message, ToolMessage):
            found.append((owner[message.tool_call_id], index))
    return found


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    history=histories(),
    keep=st.integers(min_value=1, max_value=12),
    max_tail_tokens=st.none() | st.integers(min_value=0, max_value=200),
)
def test_split_never_separates_a_tool_call_from_its_result(
    history: list[BaseMessage], keep: int, max_tail_tokens: int | None
) -> None:
    cut = split_for_compaction(history, keep, max_tail_tokens=max_tail_tokens, token_counter=chars)
    event("compacted" if cut else "nothing to compact")
    assert 0 <= cut < max(len(history), 1)
    for ai_index, tool_index in pairs(history):
        assert (ai_index < cut) == (tool_index < cut), (ai_index, tool_index, cut)
    if cut and is_summary_message(history[0]):
        assert cut >= 2, "a leading summary is folded together with newer messages"
    if max_tail_tokens is None and cut:
        assert len(history) - cut >= keep


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    history=histories(),
    keep=st.integers(min_value=1, max_value=8),
    window=st.integers(min_value=20, max_value=2000),
)
def test_compaction_output_keeps_tool_pairs_whole(
    history: list[BaseMessage], keep: int, window: int
) -> None:
    compactor, _ = make_compactor([extract_orders], window=window, counter=chars, keep=keep)
    outcome = compactor.compact(history, task="Refund the late orders")
    event("compacted" if outcome.compacted else "unchanged")
    event(f"summary folded: {bool(history) and is_summary_message(history[0])}")
    assert_pairs_intact(outcome.messages)
    if not outcome.compacted:
        assert outcome.messages == history
        assert outcome.attempts == 0
        return
    summary_message, *kept = outcome.messages
    assert is_summary_message(summary_message)
    assert not any(is_summary_message(m) for m in kept)
    assert outcome.removed_ids + [m.id for m in kept] == [m.id for m in history]
    if history and is_summary_message(history[0]):
        assert history[0].id in outcome.removed_ids
        assert "ORDER-0" in outcome.summary.key_facts  # type: ignore[union-attr]


# -- split: unit cases ---------------------------------------------------------------------


def test_split_keeps_more_messages_rather_than_split_a_tool_pair() -> None:
    history = [
        HumanMessage("go", id="h"),
        ai_call(["a", "b"], id="ai"),
        tool("a", "A", id="ta"),
        tool("b", "B", id="tb"),
        AIMessage("done", id="end"),
    ]
    assert split_for_compaction(history, keep=1) == 4
    assert split_for_compaction(history, keep=2) == 1  # not 3: that splits ai/tb
    assert split_for_compaction(history, keep=3) == 1
    assert split_for_compaction(history, keep=4) == 1
    assert split_for_compaction(history, keep=5) == 0


def test_split_returns_zero_when_nothing_can_be_compacted() -> None:
    assert split_for_compaction([], keep=1) == 0
    assert split_for_compaction([HumanMessage("only", id="1")], keep=1) == 0
    # The whole history is one tool group: every cut would split it.
    group = [ai_call(["a", "b"], id="ai"), tool("a", "A", id="ta"), tool("b", "B", id="tb")]
    assert split_for_compaction(group, keep=1) == 0
    assert split_for_compaction(group, keep=1, max_tail_tokens=0, token_counter=chars) == 0


def test_split_folds_a_leading_summary_only_with_newer_messages() -> None:
    compactor, _ = make_compactor([summary_dict()], keep=1)
    first = compactor.compact(
        [HumanMessage("a", id="1"), AIMessage("b", id="2")], task="t"
    ).messages
    assert is_summary_message(first[0])
    # [summary, one message]: the summary alone is not worth re-compacting.
    assert split_for_compaction(first, keep=1) == 0
    assert split_for_compaction([*first, AIMessage("c", id="3")], keep=1) == 2


def test_split_moves_the_cut_later_when_the_kept_tail_is_too_big() -> None:
    history = [HumanMessage("x" * 10, id=str(i)) for i in range(6)]
    assert split_for_compaction(history, keep=4) == 2
    # 4 kept messages take 40 tokens; only 25 fit: keep 2.
    assert split_for_compaction(history, keep=4, max_tail_tokens=25, token_counter=chars) == 4
    # Nothing fits: keep the smallest tail possible (one message).
    assert split_for_compaction(history, keep=4, max_tail_tokens=5, token_counter=chars) == 5
    # Few messages but big ones: the token rule still compacts.
    assert split_for_compaction(history, keep=10, max_tail_tokens=30, token_counter=chars) == 3


@pytest.mark.parametrize("keep", [0, -1, True, 1.5, "2"])
def test_split_rejects_a_bad_keep(keep: Any) -> None:
    with pytest.raises(ValueError, match="keep"):
        split_for_compaction([HumanMessage("x")], keep)


# -- the summary and the summary message ---------------------------------------------------


def test_context_summary_renders_and_is_frozen() -> None:
    summary = ContextSummary(
        task="  Refund   ORDER-7 ",
        done=["found it", "  ", ""],
        current_state="approved",
        remaining=[],
        key_facts=["ORDER-7: 42.50 EUR"],
    )
    assert summary.task == "Refund ORDER-7"
    assert summary.done == ["found it"]
    assert summary.render() == (
        "Task: Refund ORDER-7\n"
        "Done:\n- found it\n"
        "Current state: approved\n"
        "Remaining: (none)\n"
        "Key facts:\n- ORDER-7: 42.50 EUR"
    )
    with pytest.raises(Exception, match="frozen"):
        summary.task = "other"  # type: ignore[misc]


def test_context_summary_text_is_storable() -> None:
    summary = ContextSummary(
        task="T\x00",
        done=["a\ud800"],
        current_state="s\x00",
        remaining=["r\x00"],
        key_facts=["ORDER-7\x00"],
    )
    assert (summary.task, summary.current_state) == ("T\ufffd", "s\ufffd")
    assert summary.done == ["a\ufffd"] and summary.remaining == ["r\ufffd"]
    assert summary.key_facts == ["ORDER-7\ufffd"]
    assert "\x00" not in summary.render()


def test_a_summarizer_error_that_cannot_be_stored_is_recorded_replaced() -> None:
    compactor, _ = make_compactor([RuntimeError("boom\x00\ud800")], keep=1, max_attempts=1)
    outcome = compactor.compact(order_history(), task="t")
    assert outcome.error is not None and outcome.error.endswith("RuntimeError: boom\ufffd\ufffd")


def test_summary_message_shape_and_summarizer_input() -> None:
    history = order_history()
    compactor, model = make_compactor([extract_orders], keep=1)
    outcome = compactor.compact(history, task="Refund the late orders")

    message = outcome.messages[0]
    assert isinstance(message, HumanMessage)
    assert message.name == "compaction"
    assert is_summary_message(message)
    assert isinstance(message.content, str)
    assert message.content.startswith(SUMMARY_HEADER)
    assert outcome.summary is not None
    assert outcome.summary.render() in message.content
    assert ContextSummary.model_validate(message.additional_kwargs["lgsp_summary"]) == (
        outcome.summary
    )
    assert outcome.summary.key_facts == ["ORDER-1", "ORDER-2", "ORDER-3"]
    assert outcome.messages[1:] == history[-1:]
    assert outcome.removed_ids == [m.id for m in history[:-1]]
    assert outcome.attempts == 1 and outcome.error is None
    assert outcome.tokens_before == compactor.tokens(history)
    assert outcome.tokens_after == compactor.tokens(outcome.messages)

    (call,) = model.calls
    assert call.tools == ("ContextSummary",)
    system, human = call.messages
    assert isinstance(system, SystemMessage) and system.content == COMPACTION_PROMPT
    text = str(human.content)
    assert "Task: Refund the late orders" in text
    assert "user: Refund the late orders" in text
    assert 'calls lookup (id call-2) with {"q": "call-2"}' in text
    assert "tool result lookup (id call-2): ORDER-2 is late by 2 days" in text
    assert "Checked up to" not in text  # the kept message is not summarised
    assert "Previous summary" not in text


def test_summary_message_survives_a_checkpoint_round_trip() -> None:
    compactor, _ = make_compactor([extract_orders], keep=1)
    message = compactor.compact(order_history(), task="t").messages[0]
    serde = JsonPlusSerializer()
    restored = serde.loads_typed(serde.dumps_typed([message]))[0]
    assert is_summary_message(restored)
    assert restored.id == message.id


def test_is_summary_message_needs_the_structured_summary() -> None:
    assert not is_summary_message(HumanMessage("[Summary of earlier work]", name="compaction"))
    assert not is_summary_message(AIMessage("x", additional_kwargs={"lgsp_summary": {}}))


def test_summary_id_is_deterministic() -> None:
    history = order_history()
    first, _ = make_compactor([summary_dict()], keep=1)
    second, _ = make_compactor([summary_dict(done=["something else"])], keep=1)
    a = first.compact(history, task="t").messages[0]
    b = second.compact(list(history), task="t").messages[0]
    assert a.id == b.id  # a re-run after a crash writes the same summary id
    uuid.UUID(str(a.id))
    other, _ = make_compactor([summary_dict()], keep=2)
    c = other.compact(history, task="t").messages[0]
    assert c.id != a.id  # a different set of replaced messages


def test_messages_without_ids_are_not_listed_as_removed() -> None:
    history = [HumanMessage("a"), AIMessage("b", id="2"), AIMessage("c"), AIMessage("d")]
    compactor, _ = make_compactor([summary_dict()], keep=1)
    outcome = compactor.compact(history, task="t")
    assert outcome.compacted
    assert outcome.removed_ids == ["2"]
    assert outcome.messages[0].id is not None


# -- folding -------------------------------------------------------------------------------


def test_second_compaction_folds_the_first_and_keeps_its_key_facts() -> None:
    def forgetful(call: ScriptedCall) -> dict[str, Any]:
        # Omits ORDER-1..3 and the task: they must survive anyway.
        return summary_dict(task="", key_facts=["ORDER-9"], done=["refunded ORDER-9"])

    compactor, model = make_compactor([extract_orders, forgetful], keep=1)
    first = compactor.compact(order_history(), task="Refund the late orders")
    assert first.summary is not None
    history = [*first.messages, *order_history(first=9, count=1)]
    second = compactor.compact(history, task="Refund the late orders")

    assert second.summary is not None
    assert second.summary.key_facts == ["ORDER-1", "ORDER-2", "ORDER-3", "ORDER-9"]
    assert second.summary.task == "Refund the late orders"
    assert second.summary.done == ["refunded ORDER-9"]
    assert first.messages[0].id in second.removed_ids
    assert [m for m in second.messages if is_summary_message(m)] == [second.messages[0]]

    text = prompt_text(model.calls[1])
    assert "Previous summary:\n" + first.summary.render() in text
    assert SUMMARY_HEADER not in text  # folded structurally, not as a transcript line
    model.assert_complete()


def test_previous_task_is_kept_when_the_new_summary_has_none() -> None:
    compactor, _ = make_compactor(
        [summary_dict(task="The original task"), summary_dict(task="   ")], keep=1
    )
    first = compactor.compact(order_history(), task="ignored when the summary has one")
    assert first.summary is not None and first.summary.task == "The original task"
    second = compactor.compact([*first.messages, AIMessage("more", id="x")], task="later")
    assert second.summary is not None and second.summary.task == "The original task"


def test_task_argument_fills_an_empty_first_summary_task() -> None:
    compactor, _ = make_compactor([summary_dict(task="")], keep=1)
    outcome = compactor.compact(order_history(), task="Refund the late orders")
    assert outcome.summary is not None and outcome.summary.task == "Refund the late orders"


# -- failures ------------------------------------------------------------------------------


def test_summarizer_failing_twice_then_succeeding() -> None:
    compactor, model = make_compactor(
        [RuntimeError("rate limited"), RuntimeError("rate limited"), extract_orders], keep=1
    )
    outcome = compactor.compact(order_history(), task="t")
    assert outcome.compacted
    assert outcome.error is None
    assert outcome.attempts == 3
    assert model.calls[0].messages == model.calls[2].messages  # the same request, retried
    model.assert_complete()


def assert_truncated(outcome: CompactionOutcome, history: list[BaseMessage]) -> None:
    """The fallback kept the task and the last message, and marked the dropped middle."""
    assert outcome.truncated and outcome.kind == "truncated"
    assert outcome.summary is None and not outcome.compacted
    task, marker, *kept = outcome.messages
    assert task == history[0] and kept == history[-1:]
    assert is_truncation_marker(marker) and outcome.replacement == marker
    assert outcome.dropped == history[1:-1]
    assert outcome.removed_ids == [m.id for m in history[1:-1]]
    assert truncation_note(marker)["removed"] == len(history) - 2
    assert outcome.tokens_after < outcome.tokens_before
    assert_pairs_intact(outcome.messages)


@pytest.mark.parametrize("max_attempts", [1, 2, 4])
def test_summarizer_failing_every_attempt_truncates(max_attempts: int) -> None:
    # Issue 35: the history is no longer kept unchanged; its oldest turns are dropped.
    history = order_history()
    compactor, model = make_compactor(
        [RuntimeError(f"boom {i}") for i in range(max_attempts)],
        keep=1,
        max_attempts=max_attempts,
    )
    outcome = compactor.compact(history, task="t")
    assert_truncated(outcome, history)
    assert outcome.attempts == max_attempts
    assert outcome.error is not None
    assert f"RuntimeError: boom {max_attempts - 1}" in outcome.error
    model.assert_complete()


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Here is a summary in prose.", "no structured output"),
        ({"task": "only a task"}, "ContextSummary"),
        (summary_dict(done=[], current_state="", remaining=[], key_facts=[]), "empty"),
        (summary_dict(done=7), "ContextSummary"),
    ],
)
def test_invalid_summaries_are_failures(reply: Any, reason: str) -> None:
    history = order_history()
    compactor, _ = make_compactor([reply, reply], keep=1, max_attempts=2)
    outcome = compactor.compact(history, task="t")
    assert_truncated(outcome, history)
    assert outcome.attempts == 2
    assert outcome.error is not None and reason in outcome.error


def test_an_invalid_summary_then_a_valid_one() -> None:
    compactor, _ = make_compactor(["prose", extract_orders], keep=1)
    outcome = compactor.compact(order_history(), task="t")
    assert outcome.compacted and outcome.attempts == 2


def test_graph_interrupts_are_not_swallowed() -> None:
    compactor, _ = make_compactor([GraphInterrupt(())], keep=1)
    with pytest.raises(GraphInterrupt):
        compactor.compact(order_history(), task="t")


def test_nothing_to_compact_calls_no_summarizer() -> None:
    compactor, model = make_compactor([], keep=6)
    history = order_history(count=1)
    outcome = compactor.compact(history, task="t")
    assert outcome == CompactionOutcome(
        messages=history,
        removed_ids=[],
        summary=None,
        tokens_before=compactor.tokens(history),
        tokens_after=compactor.tokens(history),
        error=None,
        attempts=0,
    )
    assert model.calls == ()


def test_a_plain_runnable_summarizer() -> None:
    seen: list[list[BaseMessage]] = []

    def summarize(messages: list[BaseMessage]) -> dict[str, Any]:
        seen.append(messages)
        return summary_dict(key_facts=ORDER_RE.findall(str(messages[-1].content)))

    compaction = Compaction(summarizer=RunnableLambda(summarize), keep=1)
    outcome = Compactor(compaction, window=10_000).compact(order_history(), task="t")
    assert outcome.summary is not None
    assert outcome.summary.key_facts == ["ORDER-1", "ORDER-2", "ORDER-3"]
    assert seen[0][0].content == COMPACTION_PROMPT


def test_summarizer_call_is_tagged_and_takes_the_callers_config() -> None:
    seen: list[tuple[list[str], dict[str, Any]]] = []

    class Recorder(BaseCallbackHandler):
        def on_chat_model_start(
            self,
            serialized: Any,
            messages: Any,
            *,
            tags: Any = None,
            metadata: Any = None,
            **kwargs: Any,
        ) -> None:
            seen.append((list(tags or []), dict(metadata or {})))

    compactor, _ = make_compactor([extract_orders], keep=1)
    outcome = compactor.compact(
        order_history(), task="t", config={"callbacks": [Recorder()], "tags": ["worker:a"]}
    )
    assert outcome.compacted
    ((tags, metadata),) = seen
    assert TAG_NOSTREAM in tags and "worker:a" in tags  # summary tokens never stream out
    assert metadata["lgsp_source"] == "compaction"


def test_retry_delay_waits_between_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    compactor, _ = make_compactor(
        [RuntimeError("a"), RuntimeError("b"), extract_orders], keep=1, retry_delay=0.25
    )
    assert compactor.compact(order_history(), task="t").attempts == 3
    assert slept == [0.25, 0.25]


# -- async parity --------------------------------------------------------------------------


async def test_acompact_matches_compact() -> None:
    script = [RuntimeError("flaky"), extract_orders]
    sync_compactor, sync_model = make_compactor(script, keep=1)
    async_compactor, async_model = make_compactor(script, keep=1)
    history = order_history()
    expected = sync_compactor.compact(history, task="t")
    actual = await async_compactor.acompact(history, task="t")
    assert actual == expected
    assert actual.attempts == 2
    assert [c.messages for c in async_model.calls] == [c.messages for c in sync_model.calls]


async def test_acompact_failure_truncates() -> None:
    compactor, _ = make_compactor(["prose", "prose"], keep=1, max_attempts=2)
    history = order_history()
    outcome = await compactor.acompact(history, task="t")
    assert_truncated(outcome, history)
    assert outcome.error is not None
    assert outcome.attempts == 2


# -- should_compact ------------------------------------------------------------------------


def sized(*lengths: int) -> list[BaseMessage]:
    return [HumanMessage("x" * n, id=str(i)) for i, n in enumerate(lengths)]


def test_should_compact_by_fraction_of_the_window() -> None:
    compactor, _ = make_compactor([], window=1000, counter=chars, keep=2)
    assert compactor.utilisation(sized(300, 300, 99)) == pytest.approx(0.699)
    assert not compactor.should_compact(sized(300, 300, 99), step=1)
    assert compactor.should_compact(sized(300, 300, 100), step=1)
    assert compactor.should_compact(sized(300, 300, 500), step=1)


def test_should_compact_on_the_cadence() -> None:
    compactor, _ = make_compactor([], window=1000, counter=chars, keep=2, every_n_steps=3)
    small = sized(1, 1, 1, 1)
    assert [s for s in range(0, 10) if compactor.should_compact(small, step=s)] == [3, 6, 9]
    without, _ = make_compactor([], window=1000, counter=chars, keep=2)
    assert not without.should_compact(small, step=3)


def test_should_compact_only_when_something_can_be_compacted() -> None:
    compactor, _ = make_compactor([], window=1000, counter=chars, keep=2, every_n_steps=1)
    assert not compactor.should_compact([], step=1)
    assert not compactor.should_compact(sized(900), step=1)  # over the trigger, one message
    group = [ai_call(["a"], id="ai"), tool("a", "y" * 900, id="t")]
    assert not compactor.should_compact(group, step=1)
    assert not compactor.should_compact(sized(1, 1), step=1)  # within keep


def test_compacting_a_few_huge_messages_under_the_trigger_budget() -> None:
    # Fewer messages than `keep`, but over the trigger: the kept tail shrinks to fit.
    compactor, _ = make_compactor([summary_dict()], window=1000, counter=chars, keep=6)
    history = sized(300, 300, 200)
    assert compactor.tail_budget == 350
    assert compactor.should_compact(history, step=1)
    outcome = compactor.compact(history, task="t")
    assert [m.id for m in outcome.messages[1:]] == ["2"]
    assert outcome.tokens_after < outcome.tokens_before


# -- window and token counter --------------------------------------------------------------


def test_window_from_the_model_profile() -> None:
    model = ScriptedChatModel(script=[], profile={"max_input_tokens": 8000})
    assert Compaction(summarizer=model, model=model).window() == 8000
    # The profile wins over max_context_tokens; an argument overrides `model`.
    assert Compaction(summarizer=model, model=model, max_context_tokens=100).window() == 8000
    plain = ScriptedChatModel(script=[])
    assert Compaction(summarizer=plain, model=plain).window(model) == 8000
    assert Compaction(summarizer=model).compactor(model).window == 8000


def test_window_from_max_context_tokens() -> None:
    no_window = ScriptedChatModel(script=[], profile={"max_output_tokens": 100})
    config = Compaction(summarizer=no_window, model=no_window, max_context_tokens=4096)
    assert config.window() == 4096
    assert config.compactor().window == 4096


def test_window_unknown_says_what_to_set() -> None:
    model = ScriptedChatModel(script=[])
    config = Compaction(summarizer=model)
    with pytest.raises(ValueError, match=r"Compaction\(max_context_tokens=\.\.\.\)") as info:
        config.window(model)
    assert "max_input_tokens" in str(info.value)
    assert "ScriptedChatModel" in str(info.value)
    with pytest.raises(ValueError, match="context window is unknown"):
        config.compactor()


class CountingModel(ScriptedChatModel):
    """A model with its own token counter."""

    def get_num_tokens_from_messages(
        self, messages: list[BaseMessage], tools: Sequence[Any] | None = None
    ) -> int:
        return 1000 * len(messages)


def test_default_token_counter_is_approximate() -> None:
    model = ScriptedChatModel(script=[])
    config = Compaction(summarizer=model, model=model, max_context_tokens=100)
    assert config.counter() is count_tokens_approximately
    assert config.compactor().counter is count_tokens_approximately
    history = order_history()
    assert config.compactor().tokens(history) == count_tokens_approximately(history)


def test_a_models_own_token_counter_is_used() -> None:
    model = CountingModel(script=[])
    config = Compaction(summarizer=ScriptedChatModel(script=[]), max_context_tokens=10_000)
    assert config.counter() is count_tokens_approximately
    assert config.counter(model)(sized(1, 1)) == 2000
    compactor = config.compactor(model)
    assert compactor.tokens(sized(1, 1, 1)) == 3000
    assert compactor.utilisation(sized(1, 1, 1)) == pytest.approx(0.3)


def test_a_custom_token_counter_wins() -> None:
    def counter(messages: Sequence[BaseMessage]) -> int:
        return 7 * len(messages)

    config = Compaction(
        summarizer=ScriptedChatModel(script=[]),
        model=CountingModel(script=[]),
        token_counter=counter,
        max_context_tokens=100,
    )
    assert config.counter() is counter
    assert config.compactor().tokens(sized(1, 1)) == 14
    explicit = Compactor(config, window=100, counter=chars)
    assert explicit.tokens(sized(5, 5)) == 10


# -- validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"window": 0}, ValueError, r"Compactor\.window"),
        ({"window": True}, ValueError, r"Compactor\.window"),
        ({"window": 10, "counter": 3}, TypeError, r"Compactor\.counter"),
    ],
)
def test_compactor_validation(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    config = Compaction(summarizer=ScriptedChatModel(script=[]))
    with pytest.raises(error, match=match):
        Compactor(config, **kwargs)
    with pytest.raises(TypeError, match=r"Compactor\.config"):
        Compactor({"trigger": 0.7}, window=10)  # type: ignore[arg-type]

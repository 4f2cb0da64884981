import operator
from typing import Annotated, TypedDict, get_type_hints

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from langgraph_supervisor_pro._state import (
    SupervisorState,
    _append,
    _merge_worker_slots,
)

WorkersChannel = get_type_hints(SupervisorState, include_extras=True)["workers"]

names = st.sampled_from(["a", "b", "c"])
writes = st.lists(
    st.dictionaries(
        names,
        st.fixed_dictionaries(
            {
                "messages": st.lists(st.text(max_size=3), max_size=2),
                "results": st.lists(st.integers(), max_size=2),
            }
        ),
        max_size=2,
    ),
    max_size=6,
)


@settings(deadline=None)
@given(writes, writes)
def test_worker_slot_merge_is_batching_invariant(xs, ys):
    # DeltaChannel replays checkpointed writes in batches of any size.
    once = _merge_worker_slots({}, xs + ys)
    twice = _merge_worker_slots(_merge_worker_slots({}, xs), ys)
    assert once == twice


@settings(deadline=None)
@given(writes)
def test_worker_slot_merge_is_pure_and_keeps_each_worker_apart(xs):
    base = {"a": {"messages": ["m0"], "results": [0]}}
    snapshot = {"a": {"messages": ["m0"], "results": [0]}}
    merged = _merge_worker_slots(base, xs)
    assert base == snapshot  # not mutated
    for name, slot in merged.items():
        expected = [m for w in xs for m in w.get(name, {}).get("messages", [])]
        if name == "a":
            expected = ["m0", *expected]
        assert slot["messages"] == expected


def test_worker_slot_rejects_foreign_keys():
    with pytest.raises(ValueError, match="only carry 'messages', 'results' and 'compact'"):
        _merge_worker_slots({}, [{"a": {"messages": [], "status": "x"}}])


@settings(deadline=None)
@given(
    st.lists(st.lists(st.integers(), max_size=3), max_size=5),
    st.lists(st.lists(st.integers(), max_size=3), max_size=5),
)
def test_ledger_append_is_batching_invariant(xs, ys):
    assert _append([], xs + ys) == _append(_append([], xs), ys)


def test_parallel_fan_out_writes_merge_without_collision():
    """Two workers writing their own slots in the same super-step both land."""

    class S(TypedDict, total=False):
        workers: WorkersChannel  # type: ignore[valid-type]  # the state's own annotation
        seen: Annotated[list[str], operator.add]

    def fan_out(state):
        return [Send("work", {"name": n}) for n in ("a", "b", "c")]

    def work(arg):
        name = arg["name"]
        return {
            "workers": {name: {"messages": [AIMessage(content=f"{name} done")], "results": [name]}}
        }

    g = StateGraph(S)
    g.add_node("work", work)
    g.add_conditional_edges(START, fan_out, ["work"])
    g.add_edge("work", END)
    out = g.compile().invoke({"seen": []})
    assert sorted(out["workers"]) == ["a", "b", "c"]
    for name in "abc":
        assert out["workers"][name]["results"] == [name]
        assert out["workers"][name]["messages"][0].content == f"{name} done"


def test_every_root_delta_channel_is_copied_at_the_named_frequency():
    from langgraph.channels import DeltaChannel

    from langgraph_supervisor_pro._state import DELTA_SNAPSHOT_FREQUENCY

    g = StateGraph(SupervisorState)
    g.add_node("noop", lambda state: {})
    g.add_edge(START, "noop")
    channels = g.compile().channels
    deltas = {k: c for k, c in channels.items() if isinstance(c, DeltaChannel)}
    assert set(deltas) == {
        "ledger",
        "workers",
        "usage",
        "security",
        "reviews",
        "compactions",
        "judgements",
        "budget_events",
    }
    assert {c.snapshot_frequency for c in deltas.values()} == {DELTA_SNAPSHOT_FREQUENCY}

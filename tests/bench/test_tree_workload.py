"""bench/_tree_workload.py: the tree benchmark's workloads do the scripted work."""

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from bench._tree_workload import (
    TreeWorkloadError,
    build_floor,
    build_ours,
    run_flat,
    run_reference,
    run_tree,
)


def test_the_tree_roots_prompt_does_not_grow_with_the_leaves_and_the_flat_one_does():
    small, large = run_tree(2, InMemorySaver()), run_tree(5, InMemorySaver())
    assert small.root == large.root and small.root_schema == large.root_schema
    assert len(small.root) == 4  # three domains, then FINISH
    assert len(small.domains) == 6 and sum(large.domains) > sum(small.domains)
    flat_small, flat_large = run_flat(2, InMemorySaver()), run_flat(5, InMemorySaver())
    assert flat_large.root[0] > flat_small.root[0] > small.root[0]
    assert flat_large.root_schema > flat_small.root_schema
    reference = run_reference(2, InMemorySaver())
    assert len(reference.root) == 4  # three hand-offs, then the reply


@pytest.mark.parametrize("build", [build_ours, build_floor], ids=["ours", "floor"])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_every_leaf_hop_goes_through_every_level(build, depth):
    run = build(depth, 3, InMemorySaver())
    assert run.run() > 0
    assert len(run.leaf_calls) == 3
    with pytest.raises(TreeWorkloadError, match="leaf ran 6 times, expected 3"):
        run.run()  # the same prepared run again: its leaf counter no longer matches

"""bench/costs.py runs small: its totals are the recorded calls' sums, both tiers answer alike."""

from __future__ import annotations

import dataclasses
import math

import pytest

from bench import costs
from bench._report import blocks, put_block
from tests.bench._pages import OTHER_PAGE

# USD per million tokens, written out here again: the test does not read the bench's table.
INPUT = {"gpt-4.1": 2.00, "gpt-4.1-mini": 0.40}
OUTPUT = {"gpt-4.1": 8.00, "gpt-4.1-mini": 1.60}


@pytest.fixture(scope="module")
def runs() -> tuple[costs.Run, costs.Run]:
    return costs.measure(tasks=2)


def test_the_totals_are_the_sums_of_the_recorded_calls(runs):
    for run in runs:
        # One usage entry per call each model received: 4 decisions and 3 leaf hops per task.
        assert dict(run.calls) == {"supervisor": 8, "research": 2, "drafting": 2, "checking": 2}
        assert len(run.usage) == sum(run.calls.values())
        worked_out = sum(
            (e["input_tokens"] * INPUT[e["model"]] + e["output_tokens"] * OUTPUT[e["model"]]) / 1e6
            for e in run.usage
        )
        whole = costs.totals(run.usage)
        assert math.isclose(whole.cost, worked_out, abs_tol=1e-9)
        assert whole.cost == pytest.approx(sum(e["cost"] for e in run.usage), abs=1e-9)
        assert whole.calls == len(run.usage)
        parts = [costs.of_worker(run, w) for w in ("supervisor", *costs.LEAVES)]
        assert sum(p.cost for p in parts) == pytest.approx(whole.cost, abs=1e-9)
        assert sum(p.input_tokens for p in parts) == whole.input_tokens > 0
        assert all(p.output_tokens > 0 for p in parts)
        # A leaf's answer is a few hundred tokens; its input grows with its history.
        research = [e for e in run.usage if e.get("worker") == "research"]
        assert all(200 <= e["output_tokens"] <= 600 for e in research)
        assert research[1]["input_tokens"] > research[0]["input_tokens"]


def test_both_configurations_give_the_same_checked_answers(runs):
    large, small = runs
    assert [a.text for a in large.answers] == [a.text for a in small.answers]
    for answer in (*large.answers, *small.answers):
        assert answer.passed
        assert (answer.status, answer.hops) == ("done", 3)
        assert answer.facts_found == answer.facts_expected == 4
    assert {e["model"] for e in large.usage} == {"gpt-4.1"}
    assert {e["model"] for e in small.usage if e["worker"] is None} == {"gpt-4.1"}
    assert {e["model"] for e in small.usage if e["worker"] is not None} == {"gpt-4.1-mini"}
    # Same tokens, cheaper leaves: the cut is the leaves' share of the cost times 80%.
    assert costs.totals(small.usage).input_tokens == costs.totals(large.usage).input_tokens
    share = costs.leaves_of(large).cost / costs.totals(large.usage).cost
    assert costs.cut(large, small) == pytest.approx(share * 0.8, abs=1e-6)


def test_a_call_recorded_at_a_wrong_cost_or_not_at_all_aborts(runs):
    large, _ = runs
    first = dict(large.usage[0])
    wrong = dataclasses.replace(large, usage=({**first, "cost": 0.0}, *large.usage[1:]))
    with pytest.raises(costs.CostWorkloadError, match=r"recorded at cost 0\.0;"):
        costs.verify(wrong)
    missing = dataclasses.replace(large, usage=large.usage[1:])
    with pytest.raises(costs.CostWorkloadError, match="calls recorded in usage"):
        costs.verify(missing)
    unpriced = dataclasses.replace(large, usage=({**first, "cost": None}, *large.usage[1:]))
    with pytest.raises(costs.CostWorkloadError, match="recorded at cost None"):
        costs.verify(unpriced)


def test_the_tables_judge_the_claim_and_the_page_part_is_written(runs, tmp_path, capsys):
    large, small = runs
    parts = costs.sections(large, small)
    assert [s.title for s in parts] == [
        "Costs: per workload",
        "Costs: per worker",
        "Costs: per model",
        "Costs: per task",
        "Costs: answer checks",
    ]
    (claim,) = parts[0].targets
    assert claim.measured == pytest.approx(1 - costs.cut(large, small))
    assert [row[0] for row in parts[1].table.rows] == ["supervisor", *costs.LEAVES, "total"]

    page = tmp_path / "RESULTS.md"
    page.write_text(put_block(OTHER_PAGE, "bench/costs.py", "## Costs\n\nstale"))
    assert costs.main(["--tasks", "1", "--markdown", str(page)]) == 0
    text = page.read_text()
    assert text.startswith(OTHER_PAGE.rstrip("\n"))
    (part,) = blocks(text).values()
    assert "stale" not in part
    assert part.startswith("## Costs: large vs small leaf models (bench/costs.py)")
    assert "commit measured:" in part and "2025-04-14" in part
    assert "### Costs: per workload" in part and "small leaves / all large <= 0.58" in part
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1].startswith("cost cut: ")


def test_bad_arguments_exit_2():
    with pytest.raises(SystemExit) as raised:
        costs.main(["--tasks", "0"])
    assert raised.value.code == 2

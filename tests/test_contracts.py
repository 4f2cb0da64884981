import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from langgraph_supervisor_pro import FINISH, WorkerResult, WorkerTask
from langgraph_supervisor_pro._contracts import (
    DERIVED_SUMMARY_CHARS,
    SUMMARY_MAX_CHARS,
    route_decision_model,
)
from langgraph_supervisor_pro._internal.text import truncate


def test_route_decision_accepts_workers_and_finish_only():
    Decision = route_decision_model(["researcher", "writer"])
    assert Decision(next="writer", instructions="go").next == "writer"
    assert Decision.model_validate({"next": FINISH}).instructions == ""
    with pytest.raises(ValidationError) as err:
        Decision.model_validate({"next": "hacker"})
    assert "hacker" in str(err.value)
    with pytest.raises(ValidationError):
        Decision.model_validate({"next": "writer", "extra": 1})


def test_route_decision_schema_is_an_enum_the_model_sees():
    schema = route_decision_model(["a", "b"]).model_json_schema()
    assert schema["properties"]["next"]["enum"] == ["a", "b", "FINISH"]
    assert set(schema["required"]) == {"next"}


def test_route_decision_needs_workers():
    with pytest.raises(ValueError, match="worker_names"):
        route_decision_model([])


def test_worker_result_derives_and_truncates_summary():
    long = "word " * 200
    result = WorkerResult(status="success", result=long)
    assert len(result.summary) == DERIVED_SUMMARY_CHARS
    assert result.summary.endswith("…")
    # a derived summary is the first sentence
    two = WorkerResult(status="success", result="Cats sleep a lot. They also purr.")
    assert two.summary == "Cats sleep a lot."
    assert WorkerResult(status="success", result={"a": 1}).summary == '{"a": 1}'
    assert WorkerResult(status="failed", error="boom").summary == "failed: boom"
    assert WorkerResult(status="needs_review").summary == "needs_review: no output"
    given = WorkerResult(status="success", result="x", summary="  short  ")
    assert given.summary == "short"
    assert len(WorkerResult(status="success", summary="s" * 1000).summary) == SUMMARY_MAX_CHARS


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def _first_sentence_by_definition(text: str) -> str:
    """A derived summary as documented: white space folded, the first sentence, cut."""
    folded = " ".join(text.split())
    return truncate(_SENTENCE_END.split(folded, maxsplit=1)[0], DERIVED_SUMMARY_CHARS)


_SUMMARY_TEXT = st.text(
    alphabet=st.sampled_from(list("ab.!? \t\n\x1c\x85\xa0\u2028\u3000é😀")), max_size=400
) | st.text(max_size=400)


@settings(max_examples=400, deadline=None)
@given(text=_SUMMARY_TEXT)
def test_derived_summary_is_the_first_sentence_of_the_folded_text(text: str):
    # The summary reads only the words it needs (a result may be megabytes); it must
    # equal folding the whole text and cutting its first sentence, for any white space
    # Python knows (tabs, U+0085, U+00A0, U+2028, U+3000, ...).
    result = WorkerResult(status="success", result=text)
    stored = result.result_text()  # NUL and lone surrogates replaced first
    assert result.summary == (_first_sentence_by_definition(stored) or "success: no output")


def test_derived_summary_of_a_huge_result_is_its_first_sentence():
    first = "The market grew 12% in 2025."
    huge = first + " " + "word " * 2_000_000  # 10 MB after the first sentence
    assert WorkerResult(status="success", result=huge).summary == first
    no_end = "x" * 50 + " " + "y" * 10_000_000
    summary = WorkerResult(status="success", result=no_end).summary
    assert summary == ("x" * 50 + " " + "y" * 200)[: DERIVED_SUMMARY_CHARS - 1] + "…"


def test_worker_result_rejects_bad_values():
    with pytest.raises(ValidationError, match="JSON-serialisable"):
        WorkerResult(status="success", result={1, 2})
    with pytest.raises(ValidationError):
        WorkerResult(status="done")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        WorkerResult(status="success", bogus=1)  # type: ignore[call-arg]


def test_worker_result_is_frozen_and_round_trips():
    result = WorkerResult(status="success", result=[1, 2])
    with pytest.raises(ValidationError):
        result.status = "failed"  # type: ignore[misc]
    dumped = result.model_dump()
    assert json.loads(json.dumps(dumped)) == dumped
    assert WorkerResult.model_validate(dumped) == result
    assert result.result_text() == "[1, 2]"


def test_worker_task_prompt():
    task = WorkerTask(worker="w", step=2, task="T", instructions="Do X")
    assert task.prompt() == "Task: T\n\nInstructions for you: Do X"
    assert WorkerTask(worker="w", step=1, task="T").prompt() == "Task: T"
    with pytest.raises(ValidationError):
        WorkerTask(worker="w", step=0, task="T")


def test_a_results_text_is_always_storable():
    r = WorkerResult(
        status="failed",
        result={"rows\x00": ["a\ud800", 1]},
        summary="sum\x00mary",
        error="bad\x00\ud800",
    )
    assert r.result == {"rows\ufffd": ["a\ufffd", 1]}
    assert (r.summary, r.error) == ("sum\ufffdmary", "bad\ufffd\ufffd")
    derived = WorkerResult(status="success", result="first\x00 sentence. Second.")
    assert derived.result == "first\ufffd sentence. Second." and derived.summary == (
        "first\ufffd sentence."
    )
    assert WorkerResult(status="failed", error="x\x00").summary == "failed: x\ufffd"

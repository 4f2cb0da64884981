"""README.md's Quick start runs as written (its Python blocks, pasted, offline), and the
"LangGraph Studio" section's JSON is what a served template takes and shows.

`quick_start()` is also used by tests/integration/test_live_models.py, which runs the same
code with `LGSP_MODEL` naming a real model when a key is set.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
ROOT = README.parent
_BLOCK = re.compile(r"^```python\n(.*?)^```\n", re.DOTALL | re.MULTILINE)
_JSON = re.compile(r"^```json\n(.*?)^```\n", re.DOTALL | re.MULTILINE)
DUPLICATE = "I was charged twice for order A1001, please refund the duplicate"


def section(title: str) -> str:
    """The text of README.md's `## <title>` section, up to the next `## ` heading."""
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def quick_start() -> str:
    """The Quick start's Python code: its ```python blocks, in order."""
    blocks = _BLOCK.findall(section("Quick start"))
    assert blocks, "README.md's Quick start has no ```python block"
    return "\n".join(blocks)


def run_quick_start(directory: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Execute the Quick start in `directory` (its `quickstart.db` goes there)."""
    monkeypatch.chdir(directory)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(quick_start(), f"{README}:Quick start", "exec"), namespace)
    return namespace


def test_the_quick_start_runs_offline_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LGSP_MODEL", raising=False)
    namespace = run_quick_start(tmp_path, monkeypatch)
    final = namespace["final"]
    assert final["status"] == "done" and final["halt_reason"] is None
    assert [(e["worker"], e["status"]) for e in final["ledger"]] == [
        ("researcher", "success"),
        ("analyst", "success"),
    ]
    # The researcher's agent called its tool; its slot holds the hop.
    assert "12%" in final["workers"]["researcher"]["results"][-1]["summary"]
    assert final["messages"][-1].content == '{"growth": 0.12}'
    # The scripted models were used up exactly: no call was missing or left over.
    namespace["model"].assert_complete()
    namespace["chat_model"].assert_complete()
    printed = capsys.readouterr().out.splitlines()
    assert printed[:4] == [
        "done",
        "None",
        "1 researcher success German e-commerce grew 12% in 2025 to EUR 89bn "
        "(source: destatis.de).",
        "2 analyst success 12% growth",
    ]
    # Durable: the run's checkpoints are in the SQLite file it named.
    assert (tmp_path / "quickstart.db").stat().st_size > 0


def test_pasting_it_again_is_a_second_turn_on_the_same_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LGSP_MODEL", raising=False)
    run_quick_start(tmp_path, monkeypatch)
    final = run_quick_start(tmp_path, monkeypatch)["final"]
    assert final["status"] == "done"
    assert [(e["turn"], e["worker"]) for e in final["ledger"]] == [
        (1, "researcher"),
        (1, "analyst"),
        (2, "researcher"),
        (2, "analyst"),
    ]


def test_lgsp_model_switches_it_to_init_chat_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The one line that switches: the model comes from `init_chat_model(LGSP_MODEL)`.
    assert 'MODEL = os.environ.get("LGSP_MODEL")' in quick_start()
    monkeypatch.setenv("LGSP_MODEL", "no-such-provider:some-model")
    with pytest.raises(ValueError, match="no-such-provider"):
        run_quick_start(tmp_path, monkeypatch)
    assert not (tmp_path / "quickstart.db").exists()  # it failed before running anything


def test_the_blocks_are_found_by_heading() -> None:
    assert section("Quick start").startswith("\n## Quick start\n")
    assert "## The pieces" not in section("Quick start")
    with pytest.raises(ValueError):
        section("No such section")


# --------------------------------------------------------------------------- LangGraph Studio


def studio_json() -> list[Any]:
    return [json.loads(block) for block in _JSON.findall(section("LangGraph Studio"))]


def test_the_studio_sections_langgraph_json_has_a_templates_shape() -> None:
    config, *_ = studio_json()
    template = json.loads((ROOT / "templates" / "support_desk" / "langgraph.json").read_text())
    assert set(config) == set(template) == {"dependencies", "graphs"}
    assert config["dependencies"] == ["."]
    ((graph_id, target),) = config["graphs"].items()
    assert re.fullmatch(r"\./\w+\.py:\w+", target), target
    text = section("LangGraph Studio")
    assert "# myapp/team.py" in text and "graph = create_supervisor(" in text
    assert target == "./team.py:graph" and graph_id == "team"
    for fact in ("langgraph dev --no-browser", "[studio]", "lgsp new support_desk myapp"):
        assert fact in text


@pytest.fixture
def desk() -> Any:
    from langgraph.checkpoint.memory import InMemorySaver

    from tests.cli._project import load_graph_module

    module = load_graph_module(ROOT / "templates" / "support_desk")
    return module.build_graph({"LGSP_AUTONOMY": "supervised"}).compile(checkpointer=InMemorySaver())


def _to_review(desk: Any) -> tuple[dict[str, Any], Any]:
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    (pending,) = desk.invoke({"messages": [("user", DUPLICATE)]}, config)["__interrupt__"]
    return config, pending


def test_the_review_payload_shown_is_the_one_a_run_pauses_with(desk: Any) -> None:
    _, shown, *_ = studio_json()
    _, pending = _to_review(desk)
    assert shown["action_requests"] == pending.value["action_requests"]
    assert shown["review_configs"] == pending.value["review_configs"]
    context = {k: v for k, v in shown["context"].items() if v != "..."}
    assert context == {k: pending.value["context"][k] for k in context}
    assert {"deadline", "worker", "risk", "tier", "reason"} <= set(pending.value["context"])


def test_each_resume_value_shown_ends_the_run_done(desk: Any) -> None:
    from langgraph.types import Command

    answers = studio_json()[2:]
    assert [a["decisions"][0]["type"] for a in answers] == ["approve", "reject", "edit", "respond"]
    expected = {
        "approve": "refunded 29.00 on order A1001",
        "reject": "not approved",
        "edit": "refunded 20.00 on order A1001 (goodwill)",
        "respond": "Refunded by hand.",
    }
    for answer in answers:
        config, _ = _to_review(desk)
        out = desk.invoke(Command(resume=answer), config)
        kind = answer["decisions"][0]["type"]
        assert out["status"] == "done", kind
        assert "__interrupt__" not in out
        assert expected[kind] in out["messages"][-1].content, (kind, out["messages"][-1].content)
        assert out["reviews"][-1]["decision"] == kind


def test_an_answer_the_section_calls_invalid_leaves_the_review_pending(desk: Any) -> None:
    from langgraph.types import Command

    config, pending = _to_review(desk)
    for bad in ("approve", {"decisions": [{"type": "maybe"}]}):
        out = desk.invoke(Command(resume=bad), config)
        (again,) = out["__interrupt__"]
        assert again.id == pending.id
        assert again.value["context"]["invalid_answer"]
    assert desk.get_state(config).next  # still paused, not failed

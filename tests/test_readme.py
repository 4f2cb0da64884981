"""README.md's Quick start runs as written (its Python blocks, pasted, offline), and its
first screen holds the commands a newcomer copies (which .ci/run also runs, as written).

`quick_start()` is also used by tests/integration/test_live_models.py, which runs the same
code with `LGSP_MODEL` naming a real model when a key is set. The docs pages' code, the
site's build and the README's links are tests/test_docs.py's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```\n", re.DOTALL | re.MULTILINE)
FIRST_SCREEN = 25
COMMANDS = [
    "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]'   # install (Python >= 3.11)",
    ".venv/bin/lgsp demo                                          # the demo: a support desk, offline",  # noqa: E501
    ".venv/bin/python -m pytest                                   # the tests",
]


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
    assert "## When not to use it" not in section("Quick start")
    with pytest.raises(ValueError):
        section("No such section")


def test_the_first_screen_holds_the_install_demo_and_test_commands() -> None:
    lines = README.read_text().splitlines()[:FIRST_SCREEN]
    start = lines.index("```bash")
    end = lines.index("```", start)
    assert lines[start + 1 : end] == COMMANDS
    # The one place these commands are written: .ci/run finds them by their comments.
    text = README.read_text()
    assert text.count("# install (Python >= 3.11)") == 1
    assert text.count("# the tests") == 1


def test_the_readme_installs_from_pypi_and_says_when_not_to_use_it() -> None:
    text = README.read_text()
    assert "pip install langgraph-supervisor-pro\n" in text
    assert "## When not to use it" in text and "create_agent" in text and "langgraph-swarm" in text
    assert "```mermaid" in text.split("## Install")[0]  # the diagram comes first

"""The docs site: every runnable code block runs, the site builds strictly, the README is a map.

(a) Each docs page's ```python blocks run in order, in one namespace per page, offline, in a
temporary directory, the way tests/test_readme.py runs the README's Quick start. A block a
page marks with a `<!-- not-run: reason -->` line just above it (a live server, a PostgreSQL
URL) is skipped. (b) `mkdocs build --strict` passes: broken links, anchors, missing pages and
API references fail it. (c) The README stays a short map whose links all resolve.

The "LangGraph Studio" page's JSON is checked against the `support_desk` template too: its
`langgraph.json` shape, the review payload a run pauses with, and each resume value shown.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
SITE_URL = "https://langgraph-supervisor-pro.readthedocs.io/en/latest/"
MAX_README_LINES = 250

_FENCE = re.compile(
    r"^(?:<!-- not-run: (?P<reason>[^\n]*?) -->\n)?```python\n(?P<code>.*?)^```[ \t]*$",
    re.DOTALL | re.MULTILINE,
)
_JSON = re.compile(r"^```json\n(.*?)^```\n", re.DOTALL | re.MULTILINE)
_ENV = (
    "LGSP_MODEL",
    "LGSP_AUTONOMY",
    "LGSP_POLICY_FILE",
    "LGSP_REVIEWER",
    "LANGSMITH_TRACING",
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING_V2",
    "LANGSMITH_API_KEY",
    "LANGCHAIN_API_KEY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
)


def pages() -> list[Path]:
    """Every Markdown page of the site, by path."""
    return sorted(p for p in DOCS.rglob("*.md") if "_ext" not in p.parts)


def blocks(page: Path) -> list[tuple[int, str, str | None]]:
    """The page's ```python blocks: (line of the code's first line, code, not-run reason)."""
    text = page.read_text()
    found = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start("code")) + 1
        found.append((line, match.group("code"), match.group("reason")))
    return found


def runnable_pages() -> list[Path]:
    return [p for p in pages() if any(reason is None for _, _, reason in blocks(p))]


def _rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """No model keys, no tracing, no deployment settings; a connection off this machine fails.

    Yields the hosts a block tried to reach, for the test to assert there were none.
    """
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    tried: list[str] = []
    connect = socket.socket.connect
    resolve = socket.getaddrinfo

    def local(host: object) -> bool:
        return host in (None, "localhost", "127.0.0.1", "::1", "") or isinstance(host, bytes)

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else None
        if self.family in (socket.AF_INET, socket.AF_INET6) and not local(host):
            tried.append(str(host))
            raise OSError(f"tests/test_docs.py: no network (tried {host})")
        return connect(self, address)

    def guarded_resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not local(host):
            tried.append(str(host))
            raise socket.gaierror(f"tests/test_docs.py: no network (tried {host})")
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_resolve)
    yield tried


# ------------------------------------------------------------------------ (a) the blocks run


@pytest.mark.parametrize("page", runnable_pages(), ids=_rel)
def test_the_pages_code_runs_offline(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for line, code, reason in blocks(page):
        if reason is not None:
            continue
        # Padded so a traceback names the page's own line numbers.
        exec(compile("\n" * (line - 1) + code, str(page), "exec", dont_inherit=True), namespace)
    assert offline == [], f"{_rel(page)} tried to reach the network: {offline}"


def test_blocks_are_found_and_few_are_skipped() -> None:
    every = [(page, reason) for page in pages() for _, _, reason in blocks(page)]
    skipped = [(page, reason) for page, reason in every if reason is not None]
    assert len(every) > 30
    assert all(reason and reason.strip() for _, reason in skipped), skipped
    assert len(skipped) * 10 <= len(every), [(_rel(p), r) for p, r in skipped]
    # A ```python fence not at the start of a line (in a list item, say) would be missed.
    for page in pages():
        for number, text in enumerate(page.read_text().splitlines(), 1):
            if text.lstrip().startswith("```python"):
                assert text.startswith("```python"), f"{_rel(page)}:{number}: indented block"


def test_a_marker_skips_only_the_block_below_it() -> None:
    page = "<!-- not-run: a server -->\n```python\nraise SystemExit\n```\n\n```python\nx = 1\n```\n"
    found = [(m.group("code"), m.group("reason")) for m in _FENCE.finditer(page)]
    assert found == [("raise SystemExit\n", "a server"), ("x = 1\n", None)]


def test_code_imports_only_from_public_homes() -> None:
    # `from langgraph_supervisor_pro.review import list_reviews`, never `review._desk`.
    sources = [(README, code) for code in _code_blocks(README)]
    sources += [(page, code) for page in pages() for _, code, _ in blocks(page)]
    for source, code in sources:
        for module in re.findall(r"(?:from|import)\s+(langgraph_supervisor_pro[\w.]*)", code):
            private = [part for part in module.split(".") if part.startswith("_")]
            assert not private, f"{_rel(source)} imports {module}"


def _code_blocks(path: Path) -> list[str]:
    return [m.group("code") for m in _FENCE.finditer(path.read_text())]


# --------------------------------------------------------------------- (b) the site builds


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "api" / "index.html").is_file()
    assert (tmp_path / "site" / "reference" / "errors" / "index.html").is_file()


def test_every_page_is_in_the_nav_or_an_error_page() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    for page in pages():
        path = page.relative_to(DOCS).as_posix()
        assert path in config or path.startswith("reference/errors/"), path


# --------------------------------------------------------------------- (c) the README


def test_the_readme_is_a_short_map() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, len(lines)


def _readme_links() -> list[str]:
    text = README.read_text()
    return re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r"<(https?://[^>\s]+)>", text)


def test_the_readmes_links_reach_pages_that_exist() -> None:
    links = _readme_links()
    assert links
    site_pages = 0
    for link in links:
        if link.startswith(SITE_URL):
            assert any(c.is_file() for c in _site_page(link)), link
            site_pages += 1
        elif link.startswith(("http://", "https://")):
            raise AssertionError(f"README links outside the docs site: {link}")
        else:
            target = (ROOT / link.split("#")[0]).resolve()
            assert target.is_relative_to(ROOT) and target.exists(), link
    assert site_pages >= 20


def _site_page(link: str) -> list[Path]:
    path = urlsplit(link).path.removeprefix(urlsplit(SITE_URL).path).strip("/")
    return [DOCS / f"{path}.md", DOCS / path / "index.md"] if path else [DOCS / "index.md"]


def test_the_packages_docs_links_reach_pages_that_exist() -> None:
    # Docstrings and error messages say what a name does and link the page that explains it.
    links = set()
    for module in (ROOT / "langgraph_supervisor_pro").rglob("*.py"):
        links |= set(re.findall(re.escape(SITE_URL) + r"[\w./#-]*", module.read_text()))
    assert len(links) >= 20  # the error pages are checked by tests/test_errors.py
    missing = sorted(link for link in links if not any(p.is_file() for p in _site_page(link)))
    assert not missing, missing


def test_the_readme_sections_the_site_includes_exist() -> None:
    # docs/index.md and docs/get-started/quickstart.md include README sections by name.
    text = README.read_text()
    included = set()
    for page in pages():
        included |= set(re.findall(r'--8<-- "README\.md:([\w-]+)"', page.read_text()))
    assert included >= {"intro", "quickstart", "when-not"}
    for name in included:
        assert f"--8<-- [start:{name}]" in text and f"--8<-- [end:{name}]" in text, name


# ----------------------------------------------------------------------- LangGraph Studio

STUDIO = DOCS / "get-started" / "studio.md"
DUPLICATE = "I was charged twice for order A1001, please refund the duplicate"


def studio_json() -> list[Any]:
    return [json.loads(block) for block in _JSON.findall(STUDIO.read_text())]


def test_the_studio_pages_langgraph_json_has_a_templates_shape() -> None:
    config, *_ = studio_json()
    template = json.loads((ROOT / "templates" / "support_desk" / "langgraph.json").read_text())
    assert set(config) == set(template) == {"dependencies", "graphs"}
    assert config["dependencies"] == ["."]
    ((graph_id, target),) = config["graphs"].items()
    assert re.fullmatch(r"\./\w+\.py:\w+", target), target
    text = STUDIO.read_text()
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


def test_an_answer_the_page_calls_invalid_leaves_the_review_pending(desk: Any) -> None:
    from langgraph.types import Command

    config, pending = _to_review(desk)
    for bad in ("approve", {"decisions": [{"type": "maybe"}]}):
        out = desk.invoke(Command(resume=bad), config)
        (again,) = out["__interrupt__"]
        assert again.id == pending.id
        assert again.value["context"]["invalid_answer"]
    assert desk.get_state(config).next  # still paused, not failed

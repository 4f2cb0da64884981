"""Tables, number formats and targets shared by the benchmark's sections."""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table


@dataclass(frozen=True)
class TextTable:
    """A table rendered both with rich and as Markdown."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""

    def to_rich(self) -> Table:
        """The table for the terminal."""
        table = Table(title=self.title, caption=self.note or None, title_justify="left")
        for index, header in enumerate(self.headers):
            table.add_column(header, justify="left" if index == 0 else "right")
        for row in self.rows:
            table.add_row(*row)
        return table

    def to_markdown(self, *, title: bool = True, note: bool = True) -> str:
        """The table as GitHub Markdown, with its bold title and its note unless told not to."""
        lines = [f"**{self.title}**", ""] if title else []
        lines += [
            "| " + " | ".join(self.headers) + " |",
            "|" + "|".join([":---"] + ["---:"] * (len(self.headers) - 1)) + "|",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        if note and self.note:
            lines += ["", self.note]
        return "\n".join(lines)


@dataclass(frozen=True)
class Target:
    """One target of an issue, with what was measured."""

    statement: str
    measured: float | None
    limit: float
    detail: str

    @property
    def met(self) -> bool | None:
        """Whether the measured figure is within the limit (None when it was not measured)."""
        return None if self.measured is None else self.measured <= self.limit

    @property
    def verdict(self) -> str:
        """PASS, MISS, or n/a when the figure was not measured."""
        return {True: "PASS", False: "MISS", None: "n/a"}[self.met]


def targets_table(items: Sequence[Target]) -> TextTable:
    """The targets block."""
    rows = []
    for item in items:
        shown = "-" if item.measured is None else f"{item.measured:.3f}"
        rows.append((item.statement, f"<= {item.limit:g}", shown, item.verdict, item.detail))
    return TextTable(
        "Targets", ("target", "limit", "measured", "result", "measured as"), tuple(rows)
    )


def fmt_int(value: float | None) -> str:
    """An integer with thousands separators ('-' when missing)."""
    return "-" if value is None else f"{value:,.0f}"


def fmt_ms(value: float | None) -> str:
    """Milliseconds with two decimals ('-' when missing)."""
    return "-" if value is None else f"{value:.2f}"


def fmt_ratio(numerator: float | None, denominator: float | None) -> str:
    """`numerator / denominator` as a percentage ('-' when missing)."""
    value = ratio(numerator, denominator)
    return "-" if value is None else f"{value:.1%}"


def fmt_times(value: float | None) -> str:
    """A ratio as a multiple, e.g. '1.23x' ('-' when missing)."""
    return "-" if value is None else f"{value:.2f}x"


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """`numerator / denominator`, or None when either is missing or the denominator is 0."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def median(values: Sequence[float]) -> float | None:
    """The median, or None for no values."""
    return statistics.median(values) if values else None


def per_hop(value: int | None, hops: int) -> float | None:
    """`value / hops`, keeping None."""
    return None if value is None else value / hops


@dataclass(frozen=True)
class Section:
    """One part of the results page: how it is measured, its table, the targets judged on it."""

    title: str
    table: TextTable
    method: str
    """The "How it is measured" paragraph: what is counted, and how."""
    targets: tuple[Target, ...] = ()


def section_markdown(section: Section) -> str:
    """A section of the results page: heading, method paragraph, table, targets table."""
    parts = [
        f"## {section.title}",
        f"How it is measured: {section.method}",
        section.table.to_markdown(title=False, note=False),
    ]
    if section.targets:
        lines = ["| target | value | met? |", "|:---|:---|:---|"]
        for item in section.targets:
            value = "not measured" if item.measured is None else f"{item.measured:.3f}"
            met = {True: "yes", False: "**no**", None: "n/a"}[item.met]
            lines.append(
                f"| {item.statement} (limit <= {item.limit:g}) | {value} ({item.detail}) | {met} |"
            )
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def page_markdown(title: str, header: Sequence[str], sections: Sequence[Section]) -> str:
    """The whole results page: title, header lines, a summary of targets, then the sections."""
    judged = [t for s in sections for t in s.targets]
    met = sum(t.met is True for t in judged)
    parts = [
        f"# {title}",
        "Generated by `bench/compare.py --markdown FILE`; not edited by hand. Regenerate it "
        "with the command below.",
        "\n".join(f"- {line}" for line in header),
        f"Targets met: {met} of {len(judged)}."
        + "".join(f"\n- not met: {t.statement}" for t in judged if t.met is False)
        + "".join(f"\n- not measured: {t.statement}" for t in judged if t.met is None),
    ]
    parts += [section_markdown(section) for section in sections]
    return "\n\n".join(parts) + "\n"


def script_part(
    title: str,
    script: str,
    header: Sequence[str],
    sections: Sequence[Section],
    *,
    subsections: bool = False,
    not_measured: bool = False,
) -> str:
    """One script's own part of the results page: title, header, targets, its sections.

    `subsections` demotes each section's heading a level; `not_measured` also lists the
    targets a run could not judge.
    """
    judged = [t for s in sections for t in s.targets]
    met = sum(t.met is True for t in judged)
    summary = f"Targets met: {met} of {len(judged)}." + "".join(
        f"\n- not met: {t.statement}" for t in judged if t.met is False
    )
    if not_measured:
        summary += "".join(f"\n- not measured: {t.statement}" for t in judged if t.met is None)
    lines = [
        f"## {title}",
        f"Generated by `{script} --markdown FILE`, which rewrites only this part of the page "
        "(`bench/compare.py --markdown` keeps it); not edited by hand.",
        "\n".join(f"- {line}" for line in header),
        summary,
    ]
    for section in sections:
        text = section_markdown(section)
        lines.append(text.replace("## ", "### ", 1) if subsections else text)
    return "\n\n".join(lines)


# ------------------------------------------------------------------- sections of other scripts


def block_markers(name: str) -> tuple[str, str]:
    """The comment lines around the part of a results page that `name` (a script) writes."""
    return f"<!-- {name}: begin -->", f"<!-- {name}: end -->"


_BLOCK = re.compile(r"<!-- (?P<name>[^<>]+?): begin -->\n.*?\n<!-- (?P=name): end -->", re.S)


def put_block(page: str, name: str, body: str) -> str:
    """`page` with `name`'s part replaced by `body` (appended at the end when it has none).

    Several scripts write one results page: each owns the part between its markers and
    leaves the rest of the page as it was.
    """
    begin, end = block_markers(name)
    block = f"{begin}\n{body.strip()}\n{end}"
    for match in _BLOCK.finditer(page):
        if match["name"] == name:
            return page[: match.start()] + block + page[match.end() :]
    return (page.rstrip("\n") + "\n\n" if page.strip() else "") + block + "\n"


def write_part(markdown: Path, name: str, body: str) -> None:
    """Write `name`'s part of the results page at `markdown` (created if missing)."""
    page = markdown.read_text() if markdown.exists() else ""
    markdown.write_text(put_block(page, name, body))


def blocks(page: str) -> dict[str, str]:
    """The marked parts of `page`, by script name (their bodies, without the markers)."""
    out = {}
    for match in _BLOCK.finditer(page):
        begin, end = block_markers(match["name"])
        out[match["name"]] = match[0][len(begin) + 1 : -len(end) - 1]
    return out


def keep_blocks(page: str, previous: str) -> str:
    """`page` (a freshly written results page) with the marked parts `previous` had."""
    for name, body in blocks(previous).items():
        page = put_block(page, name, body)
    return page

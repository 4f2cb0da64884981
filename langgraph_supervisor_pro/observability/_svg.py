"""Inline SVG bar charts for the metrics page (private): no script, no font, no network.

`columns` draws vertical bars in groups, `stacked_rows` horizontal stacked bars. Every text
is escaped with `text`; every bar carries a `<title>` (its tooltip) and `data-*` values, the
chart a `<title>` and `<desc>` for screen readers.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langgraph_supervisor_pro._internal.storable import REPLACEMENT, storable
from langgraph_supervisor_pro._internal.text import truncate

__all__: list[str] = []

WIDTH = 640
"""The charts' viewBox width; they scale to their column."""

_CONTROL = re.compile(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_CHAR_WIDTH = 6.4
"""About the width of one character of the 11 px sans-serif labels."""


def text(value: object) -> str:
    r"""`value` as HTML/SVG text: escaped, quotes too, with no character HTML cannot hold.

    Example:
        >>> text('<script>"x"</script>\x00') == '&lt;script&gt;&quot;x&quot;&lt;/script&gt;\ufffd'
        True
    """
    return html.escape(_CONTROL.sub(REPLACEMENT, storable(str(value))), quote=True)


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


@dataclass(frozen=True, kw_only=True)
class Bar:
    """One bar of a vertical chart, or one part of a horizontal stacked bar."""

    value: float
    series: str
    """Its series (a CSS class suffix and the `data-series` value)."""
    colour: str
    tooltip: str
    tick: float | None = None
    """A marker drawn across the bar at this value (the peak), if any."""


def _svg_open(height: int, title: str, desc: str, name: str) -> list[str]:
    return [
        f'<svg class="chart" data-chart="{text(name)}" viewBox="0 0 {WIDTH} {height}" '
        f'width="100%" role="img" aria-labelledby="{name}-title {name}-desc" '
        'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{name}-title">{text(title)}</title>',
        f'<desc id="{name}-desc">{text(desc)}</desc>',
    ]


def axis(value: float, *, floor: float, whole: bool = False) -> tuple[float, float]:
    """A round axis maximum at or over `value` (at least `floor`) and its tick step.

    The step is 1, 2, 2.5 or 5 times a power of ten, giving at most six intervals;
    `whole` keeps it a whole number (for counts).

    Example:
        >>> axis(1.2485, floor=1.0), axis(7, floor=4.0, whole=True), axis(0.3, floor=1.0)
        ((1.25, 0.25), (8.0, 2.0), (1.0, 0.2))
    """
    top = max(value, floor) if math.isfinite(value) else floor
    magnitude = 10.0 ** math.floor(math.log10(top / 6))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        step = factor * magnitude
        if whole:
            step = float(max(round(step), 1))
        if top / step <= 6 + 1e-9:
            return float(math.ceil(top / step - 1e-9) * step), step
    return top, top


def columns(
    groups: Sequence[tuple[str, Sequence[Bar]]],
    *,
    name: str,
    title: str,
    desc: str,
    y_axis: tuple[float, float],
    y_label: Callable[[float], str],
    threshold: tuple[float, str] | None = None,
) -> str:
    """Vertical bars, grouped under x labels, on a y axis from 0 to `y_axis` (max, step).

    `name` is the chart's id prefix and `data-chart`; values over the axis maximum are
    drawn to it; `threshold` is a dashed line at a value, with its label.
    """
    left, right, top, bottom = 52, 12, 14, 34
    height = 260
    plot_w, plot_h = WIDTH - left - right, height - top - bottom
    out = _svg_open(height, title, desc, name)
    y_max, step = y_axis

    def y(value: float) -> float:
        share = 0.0 if y_max <= 0 or not math.isfinite(value) else min(max(value, 0) / y_max, 1)
        return top + plot_h * (1 - share)

    for index in range(round(y_max / step) + 1 if step > 0 else 1):
        value = step * index
        at = y(value)
        out.append(
            f'<line class="grid" x1="{left}" x2="{WIDTH - right}" y1="{_n(at)}" y2="{_n(at)}" '
            'stroke="#e3e6ea" stroke-width="1" shape-rendering="crispEdges"/>'
        )
        out.append(
            f'<text class="axis" x="{left - 6}" y="{_n(at + 4)}" text-anchor="end">'
            f"{text(y_label(value))}</text>"
        )
    slot = plot_w / max(len(groups), 1)
    every = max(1, math.ceil(len(groups) * 44 / plot_w))
    for index, (label, bars) in enumerate(groups):
        x0 = left + slot * index
        inner = slot * 0.78
        width = min(max(inner / max(len(bars), 1), 1.0), 64.0)
        start = x0 + (slot - width * len(bars)) / 2
        for position, bar in enumerate(bars):
            bx = start + width * position
            by = y(bar.value)
            out.append(
                f'<rect class="bar bar-{text(bar.series)}" data-series="{text(bar.series)}" '
                f'data-value="{bar.value:.6g}" x="{_n(bx)}" y="{_n(by)}" '
                f'width="{_n(max(width - 1, 1))}" height="{_n(top + plot_h - by)}" '
                f'fill="{bar.colour}" shape-rendering="crispEdges">'
                f"<title>{text(bar.tooltip)}</title></rect>"
            )
            if bar.tick is not None:
                ty = y(bar.tick)
                out.append(
                    f'<line class="peak" x1="{_n(bx)}" x2="{_n(bx + max(width - 1, 1))}" '
                    f'y1="{_n(ty)}" y2="{_n(ty)}" stroke="#1f2933" stroke-width="2"/>'
                )
        if index % every == 0:
            out.append(
                f'<text class="axis" x="{_n(x0 + slot / 2)}" y="{height - bottom + 16}" '
                f'text-anchor="middle">{text(truncate(label, max(int(slot * every / 6), 3)))}'
                "</text>"
            )
    out.append(
        f'<line x1="{left}" x2="{WIDTH - right}" y1="{top + plot_h}" y2="{top + plot_h}" '
        'stroke="#7b8794" stroke-width="1" shape-rendering="crispEdges"/>'
    )
    if threshold is not None:
        value, label = threshold
        at = y(value)
        out.append(
            f'<line class="threshold" x1="{left}" x2="{WIDTH - right}" y1="{_n(at)}" '
            f'y2="{_n(at)}" stroke="#1f2933" stroke-width="1.5" stroke-dasharray="6 4"/>'
        )
        out.append(
            f'<text class="threshold-label" x="{left + 6}" y="{_n(at - 5)}" '
            'stroke="#ffffff" stroke-width="3" paint-order="stroke" stroke-linejoin="round">'
            f"{text(label)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out)


def stacked_rows(
    rows: Sequence[tuple[str, Sequence[Bar], str]],
    *,
    name: str,
    title: str,
    desc: str,
) -> str:
    """Horizontal bars, one per row (label, parts, note), scaled to the longest row."""
    row_h, top = 28, 6
    longest = max((len(label) for label, _, _ in rows), default=0)
    label_w = min(max(longest, 8) * _CHAR_WIDTH + 12, 240)
    note_w = 92
    bar_w = WIDTH - label_w - note_w - 8
    height = top * 2 + row_h * max(len(rows), 1)
    total = max((sum(s.value for s in parts) for _, parts, _ in rows), default=0) or 1
    out = _svg_open(height, title, desc, name)
    for index, (label, parts, note) in enumerate(rows):
        y = top + row_h * index
        limit = max(int((label_w - 12) / _CHAR_WIDTH), 4)
        out.append(
            f'<text class="label" x="{_n(label_w - 8)}" y="{y + 18}" text-anchor="end">'
            f"{text(truncate(label, limit))}<title>{text(label)}</title></text>"
        )
        x = label_w
        for part in parts:
            if part.value <= 0:
                continue
            width = bar_w * part.value / total
            out.append(
                f'<rect class="bar bar-{text(part.series)}" data-series="{text(part.series)}" '
                f'data-value="{part.value}" x="{_n(x)}" y="{y + 5}" '
                f'width="{_n(max(width, 1))}" height="{row_h - 10}" fill="{part.colour}" '
                f'shape-rendering="crispEdges"><title>{text(part.tooltip)}</title></rect>'
            )
            x += width
        out.append(f'<text class="note" x="{_n(x + 6)}" y="{y + 18}">{text(note)}</text>')
    out.append("</svg>")
    return "\n".join(out)

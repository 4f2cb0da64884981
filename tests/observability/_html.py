"""A parsed HTML page for the metrics page's tests (the standard library's parser)."""

from __future__ import annotations

from html.parser import HTMLParser


class Page(HTMLParser):
    """The parsed page: every element with its attributes, the text, the open-tag stack."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None], tuple[str, ...]]] = []
        self.texts: list[str] = []
        self.stack: list[str] = []
        self.feed(source)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs), tuple(self.stack)))
        if tag not in {"meta", "br", "line", "rect", "img", "input", "link"}:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs), tuple(self.stack)))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [
            a
            for t, a, _ in self.elements
            if t == tag and all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def bars(self, chart: str) -> list[dict[str, str | None]]:
        """The bars of one chart, in document order."""
        out = []
        inside = False
        for tag, attrs, _ in self.elements:
            if tag == "svg":
                inside = attrs.get("data-chart") == chart
            elif inside and tag == "rect" and "bar" in (attrs.get("class") or "").split():
                out.append(attrs)
        return out

    @property
    def text(self) -> str:
        return "".join(self.texts)

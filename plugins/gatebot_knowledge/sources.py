"""Extra knowledge sources: HTML and plain-text files in a pack's docs/ folder.

The core loads only ``docs/*.md`` (with front matter). This plugin also reads ``docs/*.html``,
``*.htm`` and ``*.txt``, turning each into Markdown-like text (headings as ``##`` lines,
paragraphs at blank lines) so one splitter cuts every kind of document the same way.

- Key: ``doc-`` + the file name's slug (``docs/sla.html`` -> ``doc-sla``); a file whose key
  another document or FAQ entry already holds is skipped with a warning, never renamed, so a
  citation never silently points somewhere else.
- Title: the HTML ``<title>`` (else the first ``<h1>``); for text files a first line followed by a
  blank line; else the file name.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

from bot.packs import Document
from bot.packs.sanitise import sanitise
from bot.packs.sections import slug

log = logging.getLogger(__name__)

# Elements that end a paragraph. List items and table cells do not: a list or a table row is one
# passage, not one per item or cell.
_BLOCKS = {
    *("p", "pre", "blockquote", "dd", "dt", "div", "section", "article", "main", "aside"),
    *("header", "footer", "figure", "figcaption", "ul", "ol", "dl", "table", "tr"),
}
_INLINE_BREAKS = {"li": "\n- ", "td": " | ", "th": " | ", "br": "\n"}
_SKIP = {"script", "style", "nav", "noscript", "template"}  # text no reader wants
_HEADINGS = {"h2", "h3", "h4", "h5", "h6"}


class _HtmlText(HTMLParser):
    """Collects an HTML page as Markdown-like text: headings on their own lines, blocks apart."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.h1 = ""
        self.lines: list[str] = []
        self._buf: list[str] = []
        self._skip = 0
        self._in: str | None = None  # "title", "h1" or a heading tag while inside one
        self._pre = 0

    def _flush(self) -> None:
        text = "".join(self._buf)
        self._buf = []
        if not text.strip():
            return
        # Preformatted text keeps its lines, fenced as Markdown code is, so the splitter does too.
        text = f"```\n{text.strip(chr(10))}\n```" if self._pre else " ".join(text.split())
        self.lines.extend([text, ""])

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip += 1
        elif tag in ("title", "h1", *_HEADINGS):
            self._flush()
            self._in = tag
        elif tag in _INLINE_BREAKS:
            self._buf.append(_INLINE_BREAKS[tag])
        elif tag in _BLOCKS:
            self._flush()
            self._pre += tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag == self._in:
            text = " ".join("".join(self._buf).split())
            self._buf = []
            if tag == "title":
                self.title = self.title or text
            elif tag == "h1":
                self.h1 = self.h1 or text
            elif text:
                self.lines.extend([f"{'#' * int(tag[1])} {text}", ""])
            self._in = None
        elif tag in _BLOCKS:
            self._flush()
            self._pre -= tag == "pre" and self._pre > 0

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self._buf.append(data)


def read_html(path: Path) -> tuple[str, str]:
    """(title, Markdown-like text) of an HTML file."""
    parser = _HtmlText()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    parser.close()
    parser._flush()
    return parser.title or parser.h1, "\n".join(parser.lines)


def read_text(path: Path) -> tuple[str, str]:
    """(title, text) of a plain-text file: a short first line before a blank line is the title."""
    text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    first, sep, rest = text.lstrip("\n").partition("\n\n")
    if sep and "\n" not in first.strip() and len(first.split()) <= 12:
        return first.strip(), rest
    return "", text


def extra_documents(root: Path, taken: set[str]) -> Iterator[Document]:
    """The pack's HTML and text documents, sorted by file name, skipping keys already taken."""
    docs = root / "docs"
    if not docs.is_dir():
        return
    files = sorted(p for p in docs.iterdir() if p.suffix.lower() in (".html", ".htm", ".txt"))
    for path in files:
        stem = slug(path.stem)
        key = stem if stem.startswith("doc-") else f"doc-{stem}"
        label = f"{root.name}/{path.relative_to(root)}"
        if key in taken:
            log.warning("%s: key %r is already used by another document; skipped", label, key)
            continue
        taken.add(key)
        title, text = read_html(path) if path.suffix.lower() != ".txt" else read_text(path)
        # Data, as the core's documents are: markup stripped, hidden text made plain.
        yield Document(
            key, title or path.stem.replace("-", " ").replace("_", " "), sanitise(text), label
        )

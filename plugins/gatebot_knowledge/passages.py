"""Passages: a pack's FAQ and documents cut into citable pieces with stable keys.

This module owns the cutting and the keys. A key is what a reply cites, so it must survive
re-indexing: it is derived from the document's key and its headings, never from a running count
over the whole pack.

- An FAQ entry is one passage, keyed by its own key; its answer is returned verbatim (mode faq).
- A document is cut at its headings into sections. The first passage of a section is
  ``doc-key#section-slug``; later paragraphs of the same section are ``#section-slug-2``, ``-3``.
  Paragraphs before the first heading are ``doc-key#1``, ``#2``: the keys the core lexical
  retriever gives heading-less documents, so citations survive switching retrievers.
- A paragraph longer than :data:`MAX_WORDS` is cut at sentence ends into several passages (the
  encoder reads 256 word pieces; beyond that it would silently ignore the rest).

Editing a paragraph changes only its own passage's text (and so its content hash); keys of other
sections never move.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from bot.packs import Pack
from gatebot_knowledge.sources import extra_documents, slug

#: Words per passage before a paragraph is cut at sentence ends (about 200 word pieces).
MAX_WORDS = 160

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


@dataclass
class Passage:
    key: str
    title: str  # embedded apart from the text: FAQ question, or document title and heading
    text: str
    source: str  # "faq" or the document's path in the pack
    kind: str  # "faq" or "doc"
    keywords: list[str] = field(default_factory=list)  # FAQ keywords: lexical side only
    #: Other ways customers ask what it answers (the pack's ``asked``): each embedded apart like
    #: the title, and read by BM25. Not stored with the passage: the pack holds them, and
    #: :func:`attach_asked` puts them back on passages read from the store.
    asked: list[str] = field(default_factory=list)

    @property
    def joint(self) -> str:
        """What the passage embedding reads: the title, then the text."""
        return f"{self.title}\n{self.text}" if self.title else self.text

    @property
    def content_hash(self) -> str:
        return text_hash(self.joint)

    @property
    def title_hash(self) -> str:
        return text_hash(self.title)

    @property
    def said(self) -> str:
        """What the passage says: its title, text and keywords, without the ways it is asked
        (customers' words, which no fact states: see ``KnowledgeIndex.said``)."""
        return f"{self.title} {self.text} {' '.join(self.keywords)}"

    @property
    def lexical(self) -> str:
        """What BM25 reads. The title twice: a title word says more than a body word."""
        return f"{self.title} {self.title} {self.text} {' '.join(self.keywords + self.asked)}"


def text_hash(text: str) -> str:
    """The key a vector is stored under (with the model id): the same text is embedded once."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Section:
    heading: str  # "" for the text before the first heading
    blocks: list[str]


def split_markdown(text: str) -> list[Section]:
    """Sections at Markdown headings; blocks at blank lines, fenced code kept whole."""
    sections = [Section("", [])]
    block: list[str] = []
    fenced = False

    def flush() -> None:
        joined = "\n".join(block).strip()
        if joined:
            sections[-1].blocks.append(joined)
        block.clear()

    for line in text.splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
            block.append(line)
            continue
        heading = None if fenced else _HEADING.match(line)
        if heading:
            flush()
            sections.append(Section(heading.group(2).strip(), []))
        elif not fenced and not line.strip():
            flush()
        else:
            block.append(line)
    flush()
    return [s for s in sections if s.blocks or s.heading]


def _tidy(block: str) -> str:
    # Prose is reflowed to single spaces (as the core does); code keeps its lines.
    return block if _FENCE.match(block) else " ".join(block.split())


def _pieces(block: str) -> list[str]:
    """A block, cut at sentence ends into pieces of at most about MAX_WORDS words."""
    if len(block.split()) <= MAX_WORDS or _FENCE.match(block):
        return [block]
    out: list[str] = []
    current: list[str] = []
    for sentence in _SENTENCE_END.split(block):
        words = sentence.split()
        if current and len(current) + len(words) > MAX_WORDS:
            out.append(" ".join(current))
            current = []
        current.extend(words)
        # One very long sentence: cut at word boundaries rather than let the encoder drop it.
        while len(current) > MAX_WORDS:
            out.append(" ".join(current[:MAX_WORDS]))
            current = current[MAX_WORDS:]
    if current:
        out.append(" ".join(current))
    return out


def document_passages(doc_key: str, title: str, source: str, text: str) -> list[Passage]:
    """One document's passages, in reading order, with keys unique within the document."""
    out: list[Passage] = []
    used: set[str] = set()
    seen_slugs: dict[str, int] = {}
    for section in split_markdown(text):
        pieces = [p for block in section.blocks for p in _pieces(_tidy(block))]
        if section.heading:
            base = slug(section.heading)
            # Two headings with the same words get -2, -3 in order, as GitHub anchors do.
            seen_slugs[base] = seen_slugs.get(base, 0) + 1
            if seen_slugs[base] > 1:
                base = f"{base}-{seen_slugs[base]}"
            names = [base] + [f"{base}-{n}" for n in range(2, len(pieces) + 1)]
            full_title = f"{title}: {section.heading}"
        else:
            names = [str(n) for n in range(1, len(pieces) + 1)]
            full_title = title
        for name, piece in zip(names, pieces, strict=True):
            key = f"{doc_key}#{name}"
            while key in used:  # a heading that slugs to a preamble number ("## 2")
                key += "-x"
            used.add(key)
            out.append(Passage(key, full_title, piece, source, "doc"))
    return out


def pack_passages(pack: Pack, extra: bool = True) -> list[Passage]:
    """Every passage of a pack: FAQ first, then the Markdown documents the core loaded, then
    (with ``extra``) the HTML and plain-text files in its docs/ folder."""
    out = [Passage(f.key, f.question, f.answer, "faq", "faq", list(f.keywords)) for f in pack.faq]
    for doc in pack.documents:
        out.extend(document_passages(doc.key, doc.title, doc.path, doc.text))
    if extra:
        taken = {f.key for f in pack.faq} | {d.key for d in pack.documents}
        for doc in extra_documents(Path(pack.root), taken):
            out.extend(document_passages(doc.key, doc.title, doc.path, doc.text))
    return attach_asked(out, pack)


def attach_asked(passages: list[Passage], pack: Pack) -> list[Passage]:
    """Give each passage the pack's ``asked`` for it: an FAQ entry's by its key, a document
    section's (named by its heading or the heading's slug) to every passage of that section.
    Returns ``passages``, changed in place."""
    faq = {f.key: list(f.asked) for f in pack.faq if f.asked}
    docs = {d.key: d for d in pack.documents if d.asked}
    for p in passages:
        if p.kind == "faq":
            p.asked = faq.get(p.key, [])
            continue
        doc = docs.get(p.key.split("#", 1)[0])
        heading = p.title.split(": ", 1)[1] if doc and p.title.startswith(f"{doc.title}: ") else ""
        if doc is None or not heading:
            p.asked = []
            continue
        p.asked = list(doc.asked.get(heading) or doc.asked.get(slug(heading)) or [])
    return passages

"""Citation keys of a document's paragraphs, from the document's key and its section headings.

``## Alerts`` makes ``doc-monitor#alerts``; later paragraphs of that section are ``#alerts-2``,
``-3``; a second heading with the same words gets ``alerts-2`` as GitHub anchors do. Paragraphs
before the first heading are ``#1``, ``#2``. So a paragraph inserted in one section moves no key in
another, and a citation survives re-indexing. The knowledge plugin cuts the same way (and also
cuts long paragraphs at sentence ends).

Keys made before documents had headings were numbered over the whole document (``#1``, ``#2``,
...); :func:`numbered_aliases` maps those to today's keys, so stored records still resolve.
"""

from __future__ import annotations

import re

_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def slug(text: str) -> str:
    """A heading as a key part: lower case letters, digits and hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def sections(text: str) -> list[tuple[str, list[str]]]:
    """(heading, paragraphs) in reading order; the heading is "" before the first one."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for block in text.split("\n\n"):
        lines = block.strip().splitlines()
        while lines and (match := _HEADING.match(lines[0].strip())):
            lines.pop(0)
            out.append((match.group(1).strip(), []))
        body = " ".join(" ".join(lines).split())
        if body:
            out[-1][1].append(body)
    return [s for s in out if s[1]]


def keyed_paragraphs(doc_key: str, text: str) -> list[tuple[str, str, str]]:
    """(key, heading, paragraph) for each paragraph of a document."""
    out: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for heading, paras in sections(text):
        if heading:
            base = slug(heading)
            seen[base] = seen.get(base, 0) + 1
            base = base if seen[base] == 1 else f"{base}-{seen[base]}"
            names = [base] + [f"{base}-{n}" for n in range(2, len(paras) + 1)]
        else:
            names = [str(n) for n in range(1, len(paras) + 1)]
        out.extend((f"{doc_key}#{name}", heading, p) for name, p in zip(names, paras, strict=True))
    return out


def numbered_aliases(doc_key: str, text: str) -> dict[str, str]:
    """``doc-key#N`` (the Nth paragraph of the whole document, as keys were once numbered) to
    the paragraph's key today, for every N that is not itself a key today."""
    keyed = keyed_paragraphs(doc_key, text)
    today = {key for key, _, _ in keyed}
    aliases = {f"{doc_key}#{n}": key for n, (key, _, _) in enumerate(keyed, start=1)}
    return {old: new for old, new in aliases.items() if old not in today}

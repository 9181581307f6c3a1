"""Knowledge text is data: documents and FAQ answers are sanitised when a pack is loaded, before
any index or model sees them.

Markup is stripped (HTML tags, script and style blocks, markdown links and images, invisible
and direction-changing characters), so no fact can carry a tag into a reply or hide text from
the person who reads the document. What the markup hid is kept as plain text: an HTML comment or a
link's address becomes visible words, so an instruction planted in a document reads as what it
is, a sentence of the document, and the reply gate judges any link it names. Markdown headings,
lists and code fences stay: they are how passages are split.
"""

from __future__ import annotations

import html
import re

_BLOCKS = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--(.*?)(?:-->|$)", re.DOTALL)
_TAG = re.compile(r"</?[a-zA-Z!?][^<>]*>")
_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]*)[^)]*\)")
_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]*)[^)]*\)")
_SCHEME = re.compile(r"\b(?:javascript|vbscript|data)\s*:", re.IGNORECASE)
#: Zero-width, bidi and other format characters (Unicode Cf), save the plain soft hyphen's kin.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def sanitise(text: str) -> str:
    """``text`` without markup, with what the markup hid kept as words."""
    for _ in range(2):  # twice: an escaped tag (&lt;script&gt;) is a tag once unescaped
        text = _BLOCKS.sub(" ", text)
        text = _COMMENT.sub(lambda m: f" {m.group(1).strip()} ", text)
        text = _IMAGE.sub(lambda m: _said(m.group(1), m.group(2)), text)
        text = _LINK.sub(lambda m: _said(m.group(1), m.group(2)), text)
        text = _TAG.sub(" ", text)
        text = html.unescape(text)
    # What is left of a tag that never closed can open none: its "<" is no longer one.
    text = re.sub(r"<(?=\s*[a-zA-Z/!?])", "\u2039", _TAG.sub(" ", _BLOCKS.sub(" ", text)))
    text = _SCHEME.sub("", text)
    text = _CONTROL.sub("", _INVISIBLE.sub("", text))
    return re.sub(r"[ \t]{2,}", " ", text)


def _said(words: str, address: str) -> str:
    """A link or image as plain text: its words, then its address (which the gate judges)."""
    address = _SCHEME.sub("", address)
    return f"{words} ({address})" if address and address not in words else words

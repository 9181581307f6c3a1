"""The questions inside a longer message.

Customers put context around what they ask ("Our current tool wakes us up at night with false
alarms. How does your product decide a site is really down?"). The context's words dilute every
feature the answerability check reads, so the retriever also reads each question sentence alone
and keeps that reading where it is better and its best passage is the whole message's (see
``KnowledgeRetriever.evidence_sync``).
"""

from __future__ import annotations

import re

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_QUESTION_START = re.compile(
    r"^(?:how|what|whats|what's|which|when|where|who|why|can|could|do|does|did|is|are|will|"
    r"would|should|may|must|am)\b",
    re.IGNORECASE,
)
#: A sentence shorter than this says too little to be read alone.
MIN_WORDS = 4


def question_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that ask something (end with "?" or start as a question), when
    it has more than one sentence; else none."""
    sentences = [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]
    if len(sentences) < 2:
        return []
    return [
        s
        for s in sentences
        if len(s.split()) >= MIN_WORDS and (s.endswith("?") or _QUESTION_START.match(s))
    ]

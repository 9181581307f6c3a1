"""Knowledge search: the retriever base and the built-in lexical (BM25) retriever.

The built-in one needs nothing beyond the standard library, so every pack can answer from its FAQ
and documents; a knowledge plugin registers better retrievers (embeddings, hybrid) over the same
facts. FAQ entries are whole facts; documents are split into paragraph windows.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bot.packs import Pack
from bot.packs.sections import keyed_paragraphs
from bot.text import content_tokens


@dataclass
class Fact:
    key: str  # what a reply cites: "faq-trial" or "doc-monitor#alerts"
    text: str
    source: str  # "faq" or the document's path in the pack
    mode: str  # how it was found: hybrid | embeddings | bm25 | faq
    score: float = 0.0
    title: str = ""


def pack_passages(pack: Pack) -> list[Fact]:
    """Every fact a pack offers, FAQ first, before any scoring."""
    out = [Fact(f.key, f.answer, "faq", "faq", title=f.question) for f in pack.faq]
    for doc in pack.documents:
        # Keys from the document's key and section headings: the knowledge plugin's keys.
        for key, heading, para in keyed_paragraphs(doc.key, doc.text):
            title = f"{doc.title}: {heading}" if heading else doc.title
            out.append(Fact(key, para, doc.path, "bm25", title=title))
    return out


@dataclass(frozen=True)
class QueryVector:
    """A query's embedding made once per turn (the heads' batched one), handed to a retriever
    that takes vectors so it does not embed the same text again.

    ``folder`` names the encoder that made it: a retriever uses the vector only when its own
    model is the same folder, and otherwise embeds ``text`` itself. Made only when the whole text
    fits the heads' token limit, so it equals what the retriever's longer limit would give.
    """

    text: str
    folder: str
    values: Any  # numpy float32, unit length


@dataclass
class FaqMatch:
    """Which FAQ entry a question asks (``key`` None: none of them), how sure the match is
    (a probability), the retriever's score it was read from, and the search mode."""

    key: str | None
    confidence: float
    score: float
    mode: str


class Retriever(ABC):
    name: str = ""
    #: Whether ``search`` takes ``vector=`` (a :class:`QueryVector`). A retriever that does not
    #: is called with the text alone (:func:`search_with`).
    takes_vector: bool = False

    @abstractmethod
    async def search(self, query: str, k: int = 3) -> list[Fact]:
        """The ``k`` best facts for ``query``, best first; an empty list when nothing fits."""

    async def faq_match(self, query: str) -> FaqMatch | None:
        """The FAQ entry ``query`` asks, read through the same search as :meth:`search`; None
        when this retriever cannot say (pre-flight then compares the FAQ's keywords)."""
        return None

    def embed_across_languages(self, texts: list[str]) -> Any:
        """Unit vectors (a numpy array, a row per text) that place ``texts`` in one space
        whatever language each is in, or None when this retriever has no such encoder. The
        scope check uses it for messages in a language the pack's texts are not in. Blocking."""
        return None


async def search_with(
    retriever: Retriever, query: str, k: int = 3, vector: QueryVector | None = None
) -> list[Fact]:
    """``retriever.search``, with the query's vector when it takes one."""
    if vector is not None and retriever.takes_vector and vector.text == query:
        return await retriever.search(query, k, vector=vector)  # type: ignore[call-arg]
    return await retriever.search(query, k)


class LexicalRetriever(Retriever):
    """Okapi BM25 over the pack's passages; FAQ questions and keywords count as their text."""

    name = "bm25"
    k1, b = 1.5, 0.75
    #: Below this a match is a stray shared word, not an answer.
    min_score = 1.5
    #: Share of the query's informative weight (idf) a fact must cover: one common word shared
    #: with a fact ("support") is not enough to answer from it.
    min_coverage = 0.5

    def __init__(self, pack: Pack) -> None:
        self.facts = pack_passages(pack)
        faq_extra = {f.key: f"{f.question} {' '.join(f.keywords + f.asked)}" for f in pack.faq}
        self._docs = [
            Counter(content_tokens(f"{f.title} {f.text} {faq_extra.get(f.key, '')}"))
            for f in self.facts
        ]
        self._lengths = [sum(d.values()) for d in self._docs]
        self._avg = sum(self._lengths) / max(len(self._lengths), 1)
        df: Counter[str] = Counter()
        for doc in self._docs:
            df.update(doc.keys())
        n = len(self._docs)
        self._idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def score(self, query: str) -> list[tuple[float, int]]:
        terms = set(content_tokens(query))
        # A word the pack never uses is as informative as its rarest word.
        unseen = max(self._idf.values(), default=1.0)
        weight = {t: self._idf.get(t, unseen) for t in terms}
        total = sum(weight.values()) or 1.0
        scored = []
        for i, doc in enumerate(self._docs):
            shared = terms & doc.keys()
            if sum(weight[t] for t in shared) / total < self.min_coverage:
                continue
            s = 0.0
            for t in shared:
                tf = doc[t]
                s += (
                    self._idf[t]
                    * tf
                    * (self.k1 + 1)
                    / (tf + self.k1 * (1 - self.b + self.b * self._lengths[i] / self._avg))
                )
            if s > 0:
                scored.append((s, i))
        scored.sort(reverse=True)
        return scored

    async def search(self, query: str, k: int = 3) -> list[Fact]:
        out = []
        for s, i in self.score(query)[:k]:
            if s < self.min_score:
                break
            f = self.facts[i]
            out.append(Fact(f.key, f.text, f.source, f.mode, round(s, 3), f.title))
        return out

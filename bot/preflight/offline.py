"""Pre-flight without a language model: the seven answers from what the agent already runs.

- FAQ: the knowledge retriever's FAQ match (``Retriever.faq_match``: the same hybrid ranking as
  knowledge search, over each entry's question and answer). A retriever that cannot say (BM25
  alone, the core's) leaves it to the share of an entry's keywords the message has.
- flow: the message's embedding against each flow's phrases (the heads' encoder and batcher, so
  no second model copy loads), and the intent head's probability of its trigger intent. Without
  embeddings, the share of a flow's keywords the message has.
- person: the intent head's probability of the pack's hand-off intent.
- frustration: the sentiment head (hostile: high, negative: medium).
- helpdesk: the pack's ``preflight.helpdesks`` routing by intent and scope topic.
- reasoning: simple features of the message (length, questions, comparisons).
- language: py3langid, restricted to the pack's template languages.

Similarity is not a probability. A flow's goes through one declared logistic (:data:`SIMILAR_AT`,
:data:`SIMILAR_SCALE`), set so that paraphrases in the sample pack (cosine 0.8 and up) read
above 0.85 and related but different requests (0.5-0.6) read below 0.1; the FAQ match's
confidence is the retriever's (``gatebot_knowledge.faqmatch``).
"""

from __future__ import annotations

import asyncio
import math
import os
import re
from typing import Any

from bot.extend.retriever import Retriever
from bot.packs import Pack
from bot.preflight import language
from bot.preflight.answers import Answer
from bot.preflight.candidates import Candidate, faq_candidates, flow_candidates
from bot.text import content_tokens, matching, normalise, tokens
from bot.turn.reading import IntentReading, Readers

VERSION = "preflight-offline@1"
SIMILAR_AT = 0.7
SIMILAR_SCALE = 0.05
#: Words that make a question need more than one look-up.
_COMPARE = re.compile(r"\b(compare|comparison|difference|versus|vs|both|migrate|why)\b", re.I)


def similarity_confidence(cosine: float) -> float:
    return 1.0 / (1.0 + math.exp(-(cosine - SIMILAR_AT) / SIMILAR_SCALE))


def embeddings_on() -> bool:
    return os.environ.get("GATEBOT_EMBEDDINGS", "on").strip().lower() not in {
        "off",
        "0",
        "false",
        "no",
    }


class OfflinePreflight:
    version = VERSION

    def __init__(self, pack: Pack, readers: Readers, retriever: Retriever | None = None) -> None:
        self.pack, self.readers, self.retriever = pack, readers, retriever
        self.flows = flow_candidates(pack)
        self.faq = faq_candidates(pack)
        # The readers' batcher embeds with the one shared encoder; None when heads are off.
        self._batcher: Any = getattr(readers, "_batcher", None) if embeddings_on() else None
        self._vectors: dict[str, Any] | None = None
        self._index_lock = asyncio.Lock()

    @property
    def mode(self) -> str:
        return "embeddings" if self._batcher is not None else "keywords"

    async def answer(self, text: str) -> list[Answer]:
        vector = await self._embed(text)
        intent = await self.readers.intent(text, None, vector)
        mood = await self.readers.sentiment(text, vector)
        flow = await self._best(text, vector, self.flows, intent)
        faq = await self._faq(text)
        lang, p_lang = language.detect(text, list(self.pack.templates))
        return [
            Answer("flow", flow[0], flow[1], flow[2]),
            Answer("faq", faq[0], faq[1], faq[2]),
            self._person(intent),
            self._helpdesk(text, intent),
            _reasoning(text),
            _frustration(mood.label, mood.confidence, mood.version),
            Answer("language", lang, p_lang, "py3langid" if lang else "none"),
        ]

    async def _embed(self, text: str) -> Any:
        if self._batcher is None:
            return None
        try:
            return await self._batcher.embed(text)
        except Exception:  # the encoder failed: keywords answer instead, as without embeddings
            self._batcher = None
            return None

    async def _faq(self, text: str) -> tuple[str | None, float, str]:
        """The FAQ entry the message asks, through the retriever's own search; by keywords when
        the retriever cannot say (the FAQ's phrases are no longer compared one by one)."""
        found = await self.retriever.faq_match(text) if self.retriever and self.faq else None
        if found is None:
            return await self._best(text, None, self.faq, None)
        source = f"knowledge search ({found.mode}, score {found.score:.2f})"
        if found.key is None or found.confidence < 0.5:
            return None, 1.0 - found.confidence, source
        return found.key, found.confidence, source

    async def _index(self) -> dict[str, Any]:
        """Each flow's phrase vectors, embedded once (off the event loop)."""
        async with self._index_lock:
            if self._vectors is None:
                from bot.heads.encoder import embed, load_encoder

                cands = self.flows
                phrases = [p for c in cands for p in c.phrases]
                rows = await asyncio.to_thread(lambda: embed(load_encoder(), phrases))
                vectors, at = {}, 0
                for c in cands:
                    vectors[_kind(c, self.flows) + c.key] = rows[at : at + len(c.phrases)]
                    at += len(c.phrases)
                self._vectors = vectors
            return self._vectors

    async def _best(
        self,
        text: str,
        vector: Any,
        candidates: list[Candidate],
        intent: IntentReading | None,
    ) -> tuple[str | None, float, str]:
        """The likeliest candidate, its confidence, and what read it."""
        if not candidates:
            return None, 1.0, "none declared"
        scored: list[tuple[float, str, str]] = []
        index = await self._index() if vector is not None else None
        norm = normalise(text)
        for cand in candidates:
            if cand.required and not matching(norm, cand.required):
                scored.append((0.0, cand.key, "trigger keywords absent"))
                continue
            if index is not None:
                cosine = float((index[_kind(cand, self.flows) + cand.key] @ vector).max())
                score, source = similarity_confidence(cosine), "embeddings"
            else:
                score, source = _keyword_share(text, cand), "keywords"
            if intent is not None:
                p_head = _intent_probability(intent, cand.intents)
                if p_head > score:
                    score, source = p_head, f"intent head ({intent.version})"
            scored.append((score, cand.key, source))
        score, key, source = max(scored)
        if score < 0.5:
            # The likeliest is still unlikely: the answer is "none", held with the confidence
            # that none of them fits.
            return None, 1.0 - score, source
        return key, score, source

    def _person(self, intent: IntentReading) -> Answer:
        handoff = [i.name for i in self.pack.intents if i.move == "handoff"]
        p = _intent_probability(intent, handoff)
        source = f"intent head ({intent.version})"
        return Answer("person", p >= 0.5, p if p >= 0.5 else 1.0 - p, source)

    def _helpdesk(self, text: str, intent: IntentReading) -> Answer:
        """The desk whose declared topics the message names, else whose intents it reads as,
        else the default desk (a weak recommendation: the pack's own fallback)."""
        routing: dict[str, dict[str, list[str]]] = self.pack.preflight.get("helpdesks", {})
        norm = normalise(text)
        topics = {t.key for t in self.pack.topics if matching(norm, t.keywords)}
        for desk, rule in routing.items():
            if topics & set(rule.get("topics", [])):
                return Answer("helpdesk", desk, 0.9, "scope topics")
        best: tuple[float, str] = (0.0, "")
        for desk, rule in routing.items():
            p = _intent_probability(intent, rule.get("intents", []))
            best = max(best, (p, desk))
        if best[0] >= 0.5:
            return Answer("helpdesk", best[1], best[0], f"intent head ({intent.version})")
        default = self.pack.default_helpdesk()
        return Answer("helpdesk", default.name if default else None, 0.5, "default desk")


def _kind(cand: Candidate, flows: list[Candidate]) -> str:
    return "flow:" if cand in flows else "faq:"


def _intent_probability(intent: IntentReading, names: list[str]) -> float:
    if not names:
        return 0.0
    if intent.answer in names:
        return float(intent.confidence)
    return max((float(r["score"]) for r in intent.ranking if r["name"] in names), default=0.0)


def _keyword_share(text: str, cand: Candidate) -> float:
    """Without embeddings: a declared keyword present counts most; otherwise the share of the
    message's content words found in the candidate's phrases."""
    norm = normalise(text)
    if cand.keywords and matching(norm, cand.keywords):
        hits = len(matching(norm, cand.keywords))
        return min(0.95, 0.7 + 0.1 * hits)
    words = set(content_tokens(text))
    if not words:
        return 0.0
    phrase_words = {w for p in cand.phrases for w in content_tokens(p)}
    return 0.8 * len(words & phrase_words) / len(words)


def _reasoning(text: str) -> Answer:
    """How much looking-up a message needs, from its length, its questions and comparisons.
    The confidence is lower near the boundaries the rule draws."""
    words = len(tokens(text))
    questions = text.count("?")
    compares = bool(_COMPARE.search(text))
    if words > 40 or questions >= 2 or compares:
        return Answer("reasoning", "high", 0.9 if words > 60 or questions >= 3 else 0.7, "features")
    if words <= 12 and questions <= 1:
        return Answer("reasoning", "low", 0.9 if words <= 8 else 0.6, "features")
    return Answer("reasoning", "medium", 0.6, "features")


def _frustration(label: str, confidence: float, version: str) -> Answer:
    level = {"hostile": "high", "negative": "medium"}.get(label, "low")
    return Answer("frustration", level, confidence, f"sentiment head ({version})")

"""Reading intent and sentiment: the pack's trained heads when they can run, else the keyword
router, and a record that always says which one read.

With a pinned intent head, its reading is the one gated. The keyword router still reads beside
it: when the head is unsure but both name the same intent and the router's declared phrase is
clear, the two independent readers agreeing is taken as confident (the version says both).

A head that scores novelty abstains on a message far from every line it was trained on, however
sure its softmax is: the reading carries ``reason="novel"`` and the gate reads it as unsure. The
router's clear, agreeing phrase overrides that too, since a declared keyword is not novel.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from typing import Any

from bot.heads import NONE, Head
from bot.packs import Pack
from bot.turn.decide import MoveScores
from bot.turn.router import KeywordRouter

log = logging.getLogger(__name__)

LEXICON_VERSION = "keyword-lexicon@1"
#: p(negative) from the sentiment head at which a visitor reads as hostile. The shipped head is
#: rarely very sure (TweetEval is noisy), so this sits below the 0.9 a sharper head would use.
HOSTILE_AT = 0.8
#: At most this many words make a bare request (see :func:`bare_request`).
BARE_WORDS = 3


def bare_request(text: str) -> bool:
    """A message of next to nothing but its request ("operator pls"): at most
    :data:`BARE_WORDS` words."""
    return 0 < len(text.split()) <= BARE_WORDS


@dataclass
class IntentReading:
    answer: str
    confidence: float
    ranking: list[dict[str, Any]]  # the likeliest few: {"name", "score"}
    version: str
    reason: str | None = None  # why the head abstains whatever its confidence ("novel")


@dataclass
class SentimentReading:
    label: str  # hostile | negative | neutral | positive
    confidence: float
    score: float  # in [-1, 1]
    version: str


def heads_wanted() -> bool:
    return os.environ.get("GATEBOT_HEADS", "on").strip().lower() not in ("off", "0", "false")


def _load(pack: Pack, name: str) -> Head | None:
    pin = pack.heads.get(name)
    if pin is None:
        return None
    try:
        from bot.heads import load_head

        return load_head(pack.root / pin["path"])
    except ImportError as exc:  # the ml extra is not installed: the router reads instead
        log.warning("%s head not loaded (%s); the keyword router reads instead", name, exc)
        return None


def _load_candidate(pack: Pack, name: str) -> Head | None:
    """The candidate head a pin names (``candidate:``), read in the shadow: recorded, never
    acting. One that fails to load is logged and left out; the turn goes on without it."""
    pin = pack.heads.get(name) or {}
    if not pin.get("candidate"):
        return None
    try:
        from bot.heads import load_head

        return load_head(pack.root / pin["candidate"])
    except (ImportError, OSError, ValueError) as exc:
        log.warning("candidate %s head not loaded (%s); no shadow readings", name, exc)
        return None


def _default_sentiment() -> Head | None:
    try:
        from bot.heads.sentiment import load_default_sentiment

        return load_default_sentiment()
    except ImportError as exc:
        log.warning("sentiment head not loaded (%s); the lexicon reads instead", exc)
        return None


def _on_shipped_encoder(head: Head | None) -> bool:
    """A head over the shipped encoder can share one embedding with the others."""
    return head is not None and getattr(head, "encoder_path", True) is None


class Readers:
    def __init__(self, pack: Pack, use_heads: bool | None = None) -> None:
        self.pack = pack
        self.router = KeywordRouter(pack)
        use = heads_wanted() if use_heads is None else use_heads
        self.intent_head = _load(pack, "intent") if use else None
        self.sentiment_head = _default_sentiment() if use else None
        self.move_head = _load(pack, "move") if use else None
        # Beside the pinned intent head: its readings go in the record, never into a decision.
        self.candidate_intent = _load_candidate(pack, "intent") if self.intent_head else None
        # One batcher for every head on the shipped encoder (and scope, pre-flight and knowledge
        # search); its rows live in the process-wide row cache, so a message read again (the
        # move head, after values) or a pack text the scope check embedded is not embedded again.
        self._batcher: Any = None
        if self.intent_head is not None or self.sentiment_head is not None:
            from bot.heads.batching import EmbeddingBatcher
            from bot.heads.encoder import embed_shipped, shipped_rows

            self._batcher = EmbeddingBatcher(embed_shipped, rows=shipped_rows)

    @property
    def batcher(self) -> Any:
        """What embeds a message once per turn for every stage (None when heads are off)."""
        return self._batcher

    async def read(
        self, text: str, options: list[str] | None
    ) -> tuple[IntentReading, SentimentReading]:
        """Both readings of one message, from one (batched) embedding of it."""
        shared = [h for h in (self.intent_head, self.sentiment_head) if _on_shipped_encoder(h)]
        vector = await self._batcher.embed(text) if shared and self._batcher else None
        return await self.intent(text, options, vector), await self.sentiment(text, vector)

    async def move(self, text: str) -> MoveScores | None:
        """The move head's reading of ``text`` (None without a move head: the playbook's
        preference decides)."""
        if self.move_head is None:
            return None
        predicted = await self._predict(self.move_head, text, None)
        return MoveScores(self.move_head.version, predicted)

    async def _predict_novel(
        self, head: Head, text: str, vector: Any
    ) -> tuple[list[tuple[str, float]], bool]:
        """The head's ranking of ``text`` and whether it finds the text novel."""
        if not hasattr(head, "novel_embedded"):
            return await self._predict(head, text, vector), False
        if vector is None and _on_shipped_encoder(head) and self._batcher is not None:
            vector = await self._batcher.embed(text)
        if vector is not None and _on_shipped_encoder(head):
            x = vector[None, :]
            return head.predict_embedded(x)[0], head.novel_embedded(x)[0]  # type: ignore[attr-defined]
        (predicted,), (novel,) = await asyncio.to_thread(head.read, [text])  # type: ignore[attr-defined]
        return predicted, novel

    async def _predict(self, head: Head, text: str, vector: Any) -> list[tuple[str, float]]:
        if vector is not None and _on_shipped_encoder(head):
            return head.predict_embedded(vector[None, :])[0]  # type: ignore[attr-defined]
        if _on_shipped_encoder(head) and self._batcher is not None:
            vector = await self._batcher.embed(text)
            return head.predict_embedded(vector[None, :])[0]  # type: ignore[attr-defined]
        (predicted,) = await asyncio.to_thread(head.predict, [text])
        return predicted

    @property
    def versions(self) -> dict[str, str]:
        return {
            "intent": self.intent_head.version if self.intent_head else self.router.version,
            "sentiment": (self.sentiment_head.version if self.sentiment_head else LEXICON_VERSION),
            **({"move": self.move_head.version} if self.move_head else {}),
        }

    async def intent(
        self, text: str, options: list[str] | None, vector: Any = None
    ) -> IntentReading:
        return await self._intent_by(self.intent_head, text, options, vector)

    async def shadow_intent(
        self, text: str, options: list[str] | None, vector: Any = None
    ) -> IntentReading | None:
        """The candidate head's reading, made exactly as the pinned head's (the router's agreeing
        phrase, the narrowing after a clarifying question), or None without a candidate."""
        if self.candidate_intent is None:
            return None
        return await self._intent_by(self.candidate_intent, text, options, vector)

    async def _intent_by(
        self, head: Head | None, text: str, options: list[str] | None, vector: Any
    ) -> IntentReading:
        answer, confidence, ranked = self.router.intent(text)
        router = IntentReading(
            answer,
            confidence,
            [{"name": r.name, "score": round(r.score, 3)} for r in ranked[:3]],
            self.router.version,
        )
        reading = router
        if head is not None:
            predicted, novel = await self._predict_novel(head, text, vector)
            top, p = predicted[0]
            reading = IntentReading(
                top,
                p,
                [{"name": n, "score": round(q, 4)} for n, q in predicted[:3] if n != NONE],
                head.version,
                "novel" if novel else None,
            )
            gate = self.pack.gates["intent"]
            bare = top == NONE and self._bare_handoff(text, router.answer)
            if (p < gate or novel) and router.confidence >= gate and (top == router.answer or bare):
                reading.answer, reading.confidence = router.answer, max(p, router.confidence)
                reading.version = f"{head.version}+{self.router.version}"
                reading.reason = None
        if options and reading.answer not in options:
            # After "did you mean X or Y?", read the reply against just those.
            narrowed = [r for r in reading.ranking if r["name"] in options]
            if narrowed and router.answer in options:
                reading.answer, reading.confidence = router.answer, max(router.confidence, 0.95)
                reading.reason = None
            elif narrowed:
                reading.answer = narrowed[0]["name"]
        return reading

    def _bare_handoff(self, text: str, answer: str) -> bool:
        """A hand-off's declared phrase and next to nothing else ("operator pls"): a request for
        a person where the head, trained on longer lines, reads none of the pack's intents."""
        intent = self.pack.intent(answer)
        return intent is not None and intent.move == "handoff" and bare_request(text)

    async def sentiment(self, text: str, vector: Any = None) -> SentimentReading:
        label, confidence, score = self.router.sentiment(text)
        if self.sentiment_head is None or label == "hostile":
            return SentimentReading(label, confidence, score, LEXICON_VERSION)
        from bot.heads.sentiment import sentiment_score

        predicted = await self._predict(self.sentiment_head, text, vector)
        read = sentiment_score(predicted, hostile_at=HOSTILE_AT)
        label = "hostile" if read.hostile else read.label
        return SentimentReading(label, read.confidence, read.score, self.sentiment_head.version)

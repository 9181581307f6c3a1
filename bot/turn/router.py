"""The keyword router: what reads intent and sentiment when no trained head is available.

It is recorded as its own head (``keyword-router``) so a turn never pretends a trained head ran.
Its confidences are rule-based, not calibrated: a single intent whose declared phrase appears is
read with high confidence; competing intents split it, which the intent gate turns into unsure.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from bot.packs import Pack
from bot.text import ON_DUTY, content_tokens, matching, normalise

_NEGATIVE = {
    "angry",
    "annoyed",
    "annoying",
    "awful",
    "bad",
    "broken",
    "disappointed",
    "frustrated",
    "frustrating",
    "horrible",
    "hate",
    "poor",
    "terrible",
    "useless",
    "worst",
    "ridiculous",
    "unacceptable",
    "slow",
    "waste",
}
_HOSTILE = {
    "idiot",
    "stupid",
    "scam",
    "garbage",
    "crap",
    "shut up",
    "damn",
    "hell",
    "moron",
    "trash",
}
_POSITIVE = {
    "great",
    "good",
    "love",
    "awesome",
    "excellent",
    "thanks",
    "thank",
    "perfect",
    "nice",
    "happy",
    "amazing",
    "helpful",
    "cool",
}


@dataclass
class Ranked:
    name: str
    score: float
    phrases: float = 0.0  # the part of the score that came from declared phrases


class KeywordRouter:
    """Scores a pack's intents by declared keywords, then by overlap with their examples."""

    def __init__(self, pack: Pack) -> None:
        self.pack = pack
        # A flow's examples are lines of its intent here too, as in the trained head.
        flow_lines = pack.flow_examples()
        examples = {
            i.name: i.examples + [ex for ex, name in flow_lines if name == i.name]
            for i in pack.intents
        }
        spec = [(i.name, i.keywords, examples[i.name]) for i in pack.intents]
        self.version = (
            "keyword-router@"
            + hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:10]
        )
        self._examples = {
            name: [set(content_tokens(e)) for e in lines] for name, lines in examples.items()
        }

    def rank(self, text: str) -> list[Ranked]:
        norm = normalise(text)
        words = set(content_tokens(text))
        ranked = []
        # (a person on the customer's own rota is nobody asked for: see bot.text.ON_DUTY)
        on_duty = ON_DUTY.sub(" ", norm)
        for intent in self.pack.intents:
            hits = matching(on_duty if intent.move == "handoff" else norm, intent.keywords)
            # Longer phrases are stronger evidence than one common word.
            score = sum(len(h.split()) for h in hits) * 1.0
            overlap = max(
                (len(words & ex) / len(words | ex) for ex in self._examples[intent.name] if ex),
                default=0.0,
            )
            if score + overlap > 0:
                ranked.append(Ranked(intent.name, score + overlap, score))
        ranked.sort(key=lambda r: -r.score)
        return ranked

    def intent(self, text: str) -> tuple[str, float, list[Ranked]]:
        """(answer, confidence, ranking). ``none`` when nothing matched."""
        ranked = self.rank(text)
        if not ranked:
            return "none", 0.5, ranked
        top = ranked[0]
        # Only another intent's declared phrases compete; loose example overlap is noise.
        rest = sum(r.phrases for r in ranked[1:])
        if top.phrases >= 1.0:
            # A declared phrase matched: confident unless another intent's phrases also did.
            confidence = round(0.95 * top.score / (top.score + rest), 4)
        else:
            # Only loose overlap with an example: never enough to pass a 0.9 gate.
            confidence = min(0.85, top.score)
        return top.name, confidence, ranked

    @staticmethod
    def sentiment(text: str) -> tuple[str, float, float]:
        """(label, confidence, score in [-1, 1]). Labels: hostile, negative, neutral, positive."""
        norm = normalise(text)
        words = set(norm.split())
        hostile = matching(norm, sorted(_HOSTILE))
        neg = len(words & _NEGATIVE) + 2 * len(hostile)
        pos = len(words & _POSITIVE)
        if hostile:
            return "hostile", 0.9, -1.0
        if neg == pos == 0:
            return "neutral", 0.6, 0.0
        score = (pos - neg) / (pos + neg)
        label = "positive" if score > 0 else "negative" if score < 0 else "neutral"
        return label, 0.6 + 0.3 * abs(score), score

"""The seven questions pre-flight answers, the shape of an answer, and each question's threshold.

Every answer carries a confidence and the threshold it is held to, so the record says both what
pre-flight read and whether that reading was strong enough to act on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from bot.packs import Pack

#: In the order the record lists them.
QUESTIONS = ("flow", "faq", "person", "helpdesk", "reasoning", "frustration", "language")
LEVELS = ("low", "medium", "high")

#: Routing questions sit high (acting on a wrong read sends the customer somewhere they did not
#: ask to go); the helpdesk only recommends among desks, so a middling read is still useful.
DEFAULT_THRESHOLDS = {
    "flow": 0.8,
    "faq": 0.85,
    "person": 0.9,
    "helpdesk": 0.5,
    "reasoning": 0.5,
    "frustration": 0.8,
    "language": 0.9,
}
DEFAULT_SEARCH_STEPS = {"low": 1, "medium": 2, "high": 4}
#: Seconds a model gets to answer before the turn runs without pre-flight.
DEFAULT_TIMEOUT = 5.0


def thresholds(pack: Pack) -> dict[str, float]:
    return {**DEFAULT_THRESHOLDS, **pack.preflight.get("thresholds", {})}


def search_steps(pack: Pack) -> dict[str, int]:
    return {**DEFAULT_SEARCH_STEPS, **pack.preflight.get("search_steps", {})}


@dataclass
class Answer:
    """One question's answer. ``answer`` is None for "none of them" (no flow, no FAQ); for
    ``person`` it is True or False, and the confidence is in that answer."""

    question: str
    answer: Any
    confidence: float
    source: str  # what read it: model, embeddings, keywords, intent head, sentiment head, ...
    threshold: float = 0.0
    above: bool = False

    def held_to(self, threshold: float) -> Answer:
        self.threshold = threshold
        self.confidence = round(float(self.confidence), 4)
        self.above = self.answer not in (None, False) and self.confidence >= threshold
        return self

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def by_question(answers: list[Answer]) -> dict[str, Answer]:
    return {a.question: a for a in answers}


def gated(pack: Pack, answers: list[Answer]) -> list[Answer]:
    """The answers in question order, each held to its threshold (pack overrides first)."""
    limits = thresholds(pack)
    found = by_question(answers)
    return [found[q].held_to(limits[q]) for q in QUESTIONS if q in found]

"""Sentiment: the default head shipped with gatebot, and reading its output as a score.

The head lives in ``bot/heads/default/sentiment/``: a softmax layer over the shipped (frozen)
MiniLM encoder, trained on TweetEval sentiment (SemEval-2017 Task 4; Barbieri et al., 2020) with
``scripts/tweeteval_to_jsonl.py``. Its labels are negative, neutral and positive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.heads import Head, load_head

DEFAULT_PATH = Path(__file__).parent / "default" / "sentiment"
#: p(negative) at or above which a message reads as hostile.
HOSTILE_AT = 0.9


@dataclass(frozen=True)
class SentimentRead:
    score: float  # p(positive) - p(negative), in [-1, 1]
    hostile: bool  # p(negative) >= the hostile threshold
    label: str  # the most likely label
    confidence: float  # its probability


def load_default_sentiment() -> Head:
    return load_head(DEFAULT_PATH)


def sentiment_score(
    prediction: Sequence[tuple[str, float]], hostile_at: float = HOSTILE_AT
) -> SentimentRead:
    """Fold one text's ranked (label, prob) list into a score in [-1, 1] and a hostile flag.

    Expected value with negative=-1, neutral=0, positive=+1, so a confident neutral reads 0 and
    an even split between positive and negative also reads 0. Labels other than these are ignored.
    """
    probs = dict(prediction)
    neg, pos = probs.get("negative", 0.0), probs.get("positive", 0.0)
    label, confidence = max(prediction, key=lambda lp: lp[1]) if prediction else ("neutral", 0.0)
    return SentimentRead(
        score=max(-1.0, min(1.0, pos - neg)),
        hostile=neg >= hostile_at,
        label=label,
        confidence=confidence,
    )

"""The offline yes/no reader: the probability that a reply means yes.

Used for "Just to check, is X right?" and read-backs. Its output passes the yesNo gate on
|2p - 1|, so a hedged reply ("maybe", "I think so?") is unsure, never a yes.
"""

from __future__ import annotations

from bot.text import has_phrase, normalise
from bot.turn.gates import yes_no_outcome
from bot.turn.turn import Read

VERSION = "yesno-lexicon@1"

_YES = [
    "yes",
    "yeah",
    "yep",
    "yup",
    "sure",
    "correct",
    "right",
    "that's right",
    "exactly",
    "affirmative",
    "ok",
    "okay",
    "go ahead",
    "please do",
    "sounds good",
    "confirmed",
    "y",
]
_NO = [
    "no",
    "nope",
    "nah",
    "not",
    "wrong",
    "incorrect",
    "don't",
    "do not",
    "never",
    "n",
    "that's wrong",
    "not right",
]
_HEDGE = ["maybe", "perhaps", "not sure", "i think", "probably", "i guess", "kind of"]


def p_yes(text: str) -> float:
    norm = normalise(text)
    yes = any(has_phrase(norm, w) for w in _YES)
    no = any(has_phrase(norm, w) for w in _NO)
    hedged = any(has_phrase(norm, w) for w in _HEDGE) or text.strip().endswith("?")
    if yes == no:  # neither, or both ("yes... no wait")
        return 0.5
    p = 0.95 if yes else 0.05
    if hedged:
        p = 0.7 if yes else 0.3
    return p


def read(text: str, gate: str, threshold: float, head: str = "yesno") -> Read:
    """A reply read as yes or no, as the turn record keeps it: ``answer`` is yes, no or None (an
    even reading), ``outcome`` act only when the gate ``gate`` at ``threshold`` is passed."""
    p = p_yes(text)
    outcome, confidence = yes_no_outcome(p, threshold)
    answer = "yes" if p > 0.5 else "no" if p < 0.5 else None
    return {
        "head": head,
        "version": VERSION,
        "answer": answer,
        "confidence": round(confidence, 4),
        "gate": gate,
        "threshold": threshold,
        "outcome": outcome if answer is not None else "unsure",
    }

"""Gates: a reading's confidence against its threshold becomes act, skip or unsure."""

from __future__ import annotations

from bot.turn.turn import Read

NONE = "none"


def outcome(answer: str | None, confidence: float, threshold: float) -> str:
    """``act`` on a confident answer, ``skip`` on a confident "none", else ``unsure``."""
    if confidence < threshold:
        return "unsure"
    return "skip" if answer in (None, NONE) else "act"


def yes_no_outcome(p_yes: float, threshold: float) -> tuple[str, float]:
    """The yesNo gate is on |2p - 1|: 0.6 means p >= 0.8 (yes) or p <= 0.2 (no)."""
    confidence = abs(2 * p_yes - 1)
    return ("act" if confidence >= threshold else "unsure"), confidence


def read(
    head: str,
    version: str,
    answer: str | None,
    confidence: float,
    gate: str,
    threshold: float,
) -> Read:
    """One reading as the turn record keeps it (a head may add its ``ranking`` or ``score``)."""
    return {
        "head": head,
        "version": version,
        "answer": answer,
        "confidence": round(confidence, 4),
        "gate": gate,
        "threshold": threshold,
        "outcome": outcome(answer, confidence, threshold),
    }

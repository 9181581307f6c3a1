"""Scoring a head against labelled lines: coverage and accuracy at a gate, out-of-scope false acts,
and calibration error. The numbers ``gatebot heads eval --json`` prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.heads import NONE, Head

OOS = "oos"
ECE_BINS = 15


def gold_label(label: str) -> str:
    """Out-of-scope gold lines are scored as the ``none`` answer."""
    return NONE if label == OOS else label


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[bool], bins: int = ECE_BINS
) -> float:
    """Weighted gap between mean confidence and accuracy over equal-width confidence bins."""
    n = len(confidences)
    if n == 0:
        return 0.0
    sums: list[list[float]] = [[0.0, 0.0, 0.0] for _ in range(bins)]  # count, conf, correct
    for conf, ok in zip(confidences, correct, strict=True):
        b = min(int(conf * bins), bins - 1)  # a confidence of exactly 1 joins the top bin
        sums[b][0] += 1
        sums[b][1] += conf
        sums[b][2] += float(ok)
    return sum(abs(c - k) for cnt, c, k in sums if cnt) / n


def score(
    predictions: Sequence[Sequence[tuple[str, float]]], gold: Sequence[str], gate: float
) -> dict[str, Any]:
    """Metrics for ranked predictions against gold labels (``oos`` meaning out of scope)."""
    if len(predictions) != len(gold):
        raise ValueError(f"{len(predictions)} predictions for {len(gold)} gold labels")
    n_in = n_oos = acted_in = right_acted = false_acts = 0
    confidences: list[float] = []
    correct: list[bool] = []
    for ranked, raw in zip(predictions, gold, strict=True):
        label, prob = ranked[0]
        want = gold_label(raw)
        acted = label != NONE and prob >= gate
        confidences.append(prob)
        correct.append(label == want)
        if want == NONE:
            n_oos += 1
            false_acts += acted
        else:
            n_in += 1
            acted_in += acted
            right_acted += acted and label == want
    return {
        "n": len(gold),
        "in_scope": {
            "n": n_in,
            "coverage": _ratio(acted_in, n_in),
            "selective_accuracy": _ratio(right_acted, acted_in),
            "accuracy": _ratio(right_acted, n_in),
        },
        "oos": {"n": n_oos, "false_act_rate": _ratio(false_acts, n_oos)},
        "ece": round(expected_calibration_error(confidences, correct), 4),
        "gate": gate,
    }


def evaluate(head: Head, texts: list[str], gold: list[str], gate: float) -> dict[str, Any]:
    return score(head.predict(texts), gold, gate)


def _ratio(num: int, den: int) -> float:
    # An empty denominator reads as 0.0 rather than NaN so the JSON stays valid.
    return round(num / den, 4) if den else 0.0

"""Scoring a head against labelled lines: coverage and accuracy at a gate, out-of-scope false acts,
and calibration error. The numbers ``gatebot heads eval --json`` prints.

A head that scores novelty abstains on a novel line whatever its softmax says; its report then
also has ``novelty``: the threshold used, how many lines of each kind it held back, and the
out-of-scope false-act rate the softmax alone would have had.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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
    predictions: Sequence[Sequence[tuple[str, float]]],
    gold: Sequence[str],
    gate: float,
    novel: Sequence[bool] | None = None,
) -> dict[str, Any]:
    """Metrics for ranked predictions against gold labels (``oos`` meaning out of scope).

    ``novel`` marks the lines the head found novel: those never act."""
    if len(predictions) != len(gold):
        raise ValueError(f"{len(predictions)} predictions for {len(gold)} gold labels")
    held_back = [False] * len(gold) if novel is None else list(novel)
    n_in = n_oos = acted_in = right_acted = false_acts = 0
    confidences: list[float] = []
    correct: list[bool] = []
    for ranked, raw, is_novel in zip(predictions, gold, held_back, strict=True):
        label, prob = ranked[0]
        want = gold_label(raw)
        acted = label != NONE and prob >= gate and not is_novel
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


#: Lines read per step of ``evaluate``: the steps a progress bar counts.
EVAL_BATCH = 256


def evaluate(
    head: Head,
    texts: list[str],
    gold: list[str],
    gate: float,
    progress: Callable[[list[list[str]]], Iterable[list[str]]] = iter,
) -> dict[str, Any]:
    """The head's scores on ``texts`` against ``gold``, read in batches that ``progress`` wraps
    (a command passes a progress bar)."""
    batches = [texts[i : i + EVAL_BATCH] for i in range(0, len(texts), EVAL_BATCH)]
    novelty = getattr(head, "novelty", None)
    if novelty is None:
        return score([p for b in progress(batches) for p in head.predict(b)], gold, gate)
    predictions: list[Any] = []
    novel: list[bool] = []
    for batch in progress(batches):
        read, flags = head.read(batch)  # type: ignore[attr-defined]
        predictions += read
        novel += flags
    return _with_novelty(predictions, novel, gold, gate, novelty)


def evaluate_embedded(head: Any, x: Any, gold: list[str], gate: float) -> dict[str, Any]:
    """:func:`evaluate` for a trained head and embeddings its encoder already made (a benchmark
    that scores several heads on one test set embeds it once)."""
    predictions = head.predict_embedded(x)
    if head.novelty is None:
        return score(predictions, gold, gate)
    return _with_novelty(predictions, head.novel_embedded(x), gold, gate, head.novelty)


def _with_novelty(
    predictions: Sequence[Sequence[tuple[str, float]]],
    novel: Sequence[bool],
    gold: list[str],
    gate: float,
    novelty: Any,
) -> dict[str, Any]:
    result = score(predictions, gold, gate, novel)
    result["novelty"] = novelty_report(predictions, gold, gate, novel, novelty.threshold)
    if novelty.fitted:  # how training placed the threshold (a head saved before says nothing)
        result["novelty"]["fitted"] = novelty.fitted
    return result


def novelty_report(
    predictions: Sequence[Sequence[tuple[str, float]]],
    gold: Sequence[str],
    gate: float,
    novel: Sequence[bool],
    threshold: float,
) -> dict[str, Any]:
    """What the novelty gate did: its threshold, the share of in-scope and out-of-scope lines it
    held back, and the out-of-scope false-act rate without it (the softmax alone)."""
    is_oos = [gold_label(g) == NONE for g in gold]
    n_oos = sum(is_oos)
    n_in = len(gold) - n_oos
    softmax_only = score(predictions, gold, gate)["oos"]["false_act_rate"]
    pairs = list(zip(novel, is_oos, strict=True))
    return {
        "threshold": round(threshold, 4),
        "in_scope_held_back": _ratio(sum(n and not o for n, o in pairs), n_in),
        "oos_held_back": _ratio(sum(n and o for n, o in pairs), n_oos),
        "oos_false_act_rate_softmax_only": softmax_only,
    }


def _ratio(num: int, den: int) -> float:
    # An empty denominator reads as 0.0 rather than NaN so the JSON stays valid.
    return round(num / den, 4) if den else 0.0

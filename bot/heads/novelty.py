"""Novelty: how far a message is from everything a head was trained on, and when that is too far.

A softmax must spread its mass over the classes it knows, so a message unlike any of them can
still get a confident answer (a fine-tuned head is the more confident about what it never saw).
Distance says what the softmax cannot: the cosine distance from a message to its ``k`` nearest
training examples, on the head's own embedding. Only the intents' own lines form the bank; the
``none`` lines are what the softmax already handles. The threshold is a quantile of the same score
on in-domain lines the bank does not hold (a held-out split, or out-of-fold lines), so it needs no
out-of-scope lines at all and lets through a known share of real, unseen in-domain messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Neighbours averaged. One is the sharpest on small packs; more smooth a noisy bank.
DEFAULT_K = 1
#: Share of held-out in-domain lines whose score stays at or below the threshold.
DEFAULT_QUANTILE = 0.95
#: Rows compared at a time, so a large bank never needs a [queries x bank] matrix at once.
_CHUNK = 1024


def knn_novelty(x: np.ndarray, bank: np.ndarray, k: int = DEFAULT_K) -> np.ndarray:
    """For each unit-length row of ``x``: 1 - mean cosine similarity to its ``k`` nearest rows
    of ``bank`` (unit length too). 0 for a line in the bank, about 1 for an unrelated one."""
    if len(bank) == 0:
        return np.ones(len(x), dtype=np.float32)
    k = max(1, min(k, len(bank)))
    bank32 = np.asarray(bank, dtype=np.float32)
    out = np.empty(len(x), dtype=np.float32)
    for start in range(0, len(x), _CHUNK):
        sims = np.asarray(x[start : start + _CHUNK], dtype=np.float32) @ bank32.T
        top = np.partition(sims, -k, axis=1)[:, -k:] if k < sims.shape[1] else sims
        out[start : start + _CHUNK] = 1.0 - top.mean(axis=1)
    return out


def fit_threshold(held_out_scores: np.ndarray, quantile: float = DEFAULT_QUANTILE) -> float:
    """The novelty score at or below which ``quantile`` of held-out in-domain lines fall."""
    scores = np.asarray(held_out_scores, dtype=np.float64)
    if len(scores) == 0:
        return 1.0  # nothing to calibrate on: only a line opposite every example is novel
    return float(np.quantile(scores, quantile, method="higher"))


@dataclass
class Novelty:
    """What a saved head keeps to score novelty: its training embeddings and the threshold."""

    bank: np.ndarray  # [N, D] unit-length embeddings of the intents' training lines (float16)
    threshold: float
    k: int = DEFAULT_K
    # How the threshold was placed (rule, targets, what hidden intents did); {} for older heads
    fitted: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.bank = np.asarray(self.bank, dtype=np.float16)  # half the bytes; cosines barely move
        self._widened: tuple[np.ndarray, np.ndarray] | None = None  # (bank, its float32 copy)

    def scores(self, x: np.ndarray) -> np.ndarray:
        # Widened once, not per message: the conversion cost more than the product itself.
        if self._widened is None or self._widened[0] is not self.bank:
            self._widened = (self.bank, np.asarray(self.bank, dtype=np.float32))
        return knn_novelty(x, self._widened[1], self.k)

    def novel(self, x: np.ndarray) -> np.ndarray:
        """True where a row is farther from the training lines than the threshold allows."""
        return self.scores(x) > self.threshold


def out_of_fold_scores(
    x: np.ndarray, fold: np.ndarray, in_domain: np.ndarray, k: int = DEFAULT_K
) -> np.ndarray:
    """Each in-domain row's novelty against the in-domain rows of the other folds: what an unseen
    in-domain message scores, for a head whose bank is all of its lines (frozen mode)."""
    scores: list[np.ndarray] = []
    for f in np.unique(fold[in_domain]):
        held = in_domain & (fold == f)
        scores.append(knn_novelty(x[held], x[in_domain & (fold != f)], k))
    return np.concatenate(scores) if scores else np.zeros(0, dtype=np.float32)

"""Placing the novelty threshold with intents the fit never saw.

A quantile of known lines' novelty says how many known messages the threshold turns away, not how
many messages of an intent nobody trained would still act. That second number can be measured
without a single out-of-scope line: hide a few intents at a time, fit the softmax on the others,
and watch what the hidden intents' lines do. A hidden line "acts" when that softmax passes the
gate for it and its novelty (against the other intents' lines) is at or below the threshold; the
threshold is the largest one at which no more than the target share of hidden lines acts.

On BANKING77 with 10 intents truly unseen, the share this predicts on the training set matched the
test set's (0.030 predicted, 0.030 measured), where the quantile rule predicted nothing about it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from bot.heads.linear import fit_softmax, softmax
from bot.heads.novelty import knn_novelty

#: Largest share of an unseen intent's lines the head may act on, measured on hidden intents.
DEFAULT_FALSE_ACT = 0.03
#: Folds over the intents: each hides about one in this many (at least one intent).
DEFAULT_GROUPS = 8


@dataclass
class HiddenLines:
    """What the hidden intents' lines did: novelty against the known lines, and whether the
    softmax fitted without their intent passed the gate for each (its answer not ``none``)."""

    scores: np.ndarray
    passed: np.ndarray


def intent_groups(intents: list[int], groups: int, seed: int) -> list[list[int]]:
    """The intents dealt into ``groups`` folds at random (fewer folds when there are fewer
    intents); the same for the same seed."""
    order = list(intents)
    random.Random(seed).shuffle(order)
    n = max(1, min(groups, len(order)))
    return [order[i::n] for i in range(n)]


@dataclass
class HideOptions:
    temperature: float  # the head's own, so "passes the gate" means what it will at run time
    gate: float
    k: int
    l2: float
    groups: int = DEFAULT_GROUPS
    seed: int = 0
    # The intents to hide, one list per fold, instead of dealing them all into ``groups`` folds
    # (a fine-tuned head hides only those its encoder never saw)
    only: list[list[int]] | None = None


def hide_intents(x: np.ndarray, y: np.ndarray, none: int | None, opts: HideOptions) -> HiddenLines:
    """Every intent's lines scored by a softmax and a novelty bank that never saw that intent.

    ``none`` is the index of the ``none`` class: its lines always train, never hide and never
    join the bank (being near a ``none`` line is the softmax's business)."""
    none_class = -1 if none is None else none
    intents = sorted(int(c) for c in np.unique(y) if c != none_class)
    scores: list[np.ndarray] = []
    passed: list[np.ndarray] = []
    folds = opts.only if opts.only is not None else intent_groups(intents, opts.groups, opts.seed)
    for hidden in folds:
        hide = np.isin(y, hidden)
        kept = sorted(int(c) for c in np.unique(y[~hide]))
        if len(kept) < 2:
            continue  # one class left: no softmax to ask
        remap = np.full(int(y.max()) + 1, -1, dtype=np.int64)
        remap[kept] = np.arange(len(kept))
        w, b = fit_softmax(x[~hide], remap[y[~hide]], len(kept), opts.l2)
        probs = softmax((x[hide] @ w.T + b) / opts.temperature)
        top = np.asarray(kept)[probs.argmax(axis=1)]
        passed.append((top != none_class) & (probs.max(axis=1) >= opts.gate))
        bank = ~hide & (y != none_class)
        scores.append(knn_novelty(x[hide], x[bank], opts.k))
    if not scores:
        return HiddenLines(np.zeros(0, dtype=np.float32), np.zeros(0, dtype=bool))
    return HiddenLines(np.concatenate(scores), np.concatenate(passed))


def false_act_threshold(hidden: HiddenLines, target: float) -> float | None:
    """The largest novelty threshold at which at most ``target`` of the hidden lines act; None
    when there were none to hide, or the softmax alone already keeps within the target."""
    n = len(hidden.scores)
    allowed = int(np.floor(target * n + 1e-9))
    acting = np.sort(hidden.scores[hidden.passed])
    if n == 0 or len(acting) <= allowed:
        return None
    # Just below the first hidden line that would exceed the allowance, so it counts as novel.
    return float(np.nextafter(np.float32(acting[allowed]), np.float32(-np.inf)))

"""Scoring readings against labels: a head's recorded readings of labelled turns, and the
conversion forecast against the outcomes that followed, with bootstrap confidence intervals.

A head is scored from what the turn records say it read (``reads``, or a read's ``shadow`` for
a candidate running beside the pinned head), matched by version, so the report measures what ran
on live traffic. The numbers are those of ``gatebot heads eval`` (:mod:`bot.heads.evaluate`):
coverage and selective accuracy over in-scope turns at the gate, and the expected calibration
error of the top answer's confidence over all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bot.heads import NONE
from bot.heads.evaluate import ECE_BINS, gold_label
from bot.outcomes import CONVERTED
from bot.store import LabelledTurn, Outcome, Turn

METRICS = ("selective_accuracy", "coverage", "ece")
BOOTSTRAP = 1000
LEVEL = 0.95


@dataclass
class Readings:
    """One reader's answers on labelled turns, as arrays the metrics vectorise over."""

    version: str
    turn_ids: list[int] = field(default_factory=list)
    confidence: np.ndarray = field(default_factory=lambda: np.zeros(0))
    correct: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    acted: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    in_scope: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    missing: int = 0  # labelled turns this version never read

    def __len__(self) -> int:
        return len(self.turn_ids)

    def subset(self, keep: list[int]) -> Readings:
        """The readings of the turns in ``keep``, in that order."""
        where = {t: i for i, t in enumerate(self.turn_ids)}
        idx = np.array([where[t] for t in keep], dtype=np.int64)
        return Readings(
            self.version,
            list(keep),
            self.confidence[idx],
            self.correct[idx],
            self.acted[idx],
            self.in_scope[idx],
        )


def _matches(read: dict[str, Any], head: str, version: str) -> bool:
    # "intent@X+keyword-router@Y": the head read, and the router's agreeing phrase lifted it.
    got = str(read.get("version", ""))
    return read.get("head") == head and (got == version or got.startswith(version + "+"))


def _reads(record: dict[str, Any], head: str, where: str) -> list[dict[str, Any]]:
    """The record's readings by ``head``: the acting ones (``reads``), or the candidate's kept
    under each acting read's ``shadow``."""
    acting = [r for r in record.get("reads", []) if r.get("head") == head]
    if where == "reads":
        return acting
    return [r["shadow"] for r in acting if isinstance(r.get("shadow"), dict)]


def readings(
    turns: list[LabelledTurn], head: str, version: str, gate: float, where: str = "reads"
) -> Readings:
    """``version``'s readings of ``head`` on the labelled turns, from the records' ``where``
    (``reads`` for the acting head, ``shadow`` for a candidate). Novel readings never act."""
    ids, conf, ok, acted, scope = [], [], [], [], []
    missing = 0
    for t in turns:
        read = next((r for r in _reads(t.record, head, where) if _matches(r, head, version)), None)
        if read is None:
            missing += 1
            continue
        answer, p = read.get("answer") or NONE, float(read.get("confidence", 0.0))
        gold = gold_label(t.label)
        ids.append(t.turn_id)
        conf.append(p)
        ok.append(answer == gold)
        acted.append(answer != NONE and p >= gate and read.get("reason") != "novel")
        scope.append(gold != NONE)
    return Readings(
        version,
        ids,
        np.array(conf, dtype=np.float64),
        np.array(ok, dtype=bool),
        np.array(acted, dtype=bool),
        np.array(scope, dtype=bool),
        missing,
    )


def versions_read(turns: list[LabelledTurn], head: str, where: str = "reads") -> list[str]:
    """The versions of ``head`` that read labelled turns, most turns first (a router-lifted
    reading counts for its head's version)."""
    counts: dict[str, int] = {}
    for t in turns:
        for r in _reads(t.record, head, where):
            if r.get("version"):
                v = str(r["version"]).split("+")[0]
                counts[v] = counts.get(v, 0) + 1
    return sorted(counts, key=lambda v: -counts[v])


def _ratios(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.divide(num, den, out=np.zeros_like(num, dtype=np.float64), where=den > 0)


def _metrics(r: Readings, idx: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric for each row of ``idx`` (a [reps, n] matrix of turn indices)."""
    acted, scope, ok = r.acted[idx], r.in_scope[idx], r.correct[idx]
    conf = r.confidence[idx]
    in_acted = (acted & scope).sum(axis=1)
    metrics = {
        "coverage": _ratios(in_acted, scope.sum(axis=1)),
        "selective_accuracy": _ratios((acted & scope & ok).sum(axis=1), in_acted),
    }
    reps, n = idx.shape
    bins = np.minimum((conf * ECE_BINS).astype(np.int64), ECE_BINS - 1)
    flat = (np.arange(reps)[:, None] * ECE_BINS + bins).ravel()
    size = reps * ECE_BINS
    conf_sum = np.bincount(flat, conf.ravel(), minlength=size).reshape(reps, ECE_BINS)
    ok_sum = np.bincount(flat, ok.ravel().astype(float), minlength=size).reshape(reps, ECE_BINS)
    metrics["ece"] = np.abs(conf_sum - ok_sum).sum(axis=1) / max(n, 1)
    return metrics


def point(r: Readings) -> dict[str, float]:
    """The metrics on all of ``r``'s turns."""
    got = _metrics(r, np.arange(len(r))[None, :])
    return {k: round(float(v[0]), 4) for k, v in got.items()}


def bootstrap_indices(n: int, reps: int = BOOTSTRAP, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(reps, n))


def interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return round(float(lo), 4), round(float(hi), 4)


def summary(r: Readings, reps: int = BOOTSTRAP, seed: int = 0) -> dict[str, Any]:
    """The point metrics with a bootstrap interval each, and the counts behind them."""
    out: dict[str, Any] = {"version": r.version, "n": len(r), "missing": r.missing}
    out["in_scope"] = int(r.in_scope.sum())
    if not len(r):
        return out
    boot = _metrics(r, bootstrap_indices(len(r), reps, seed))
    for name, value in point(r).items():
        out[name] = {"value": value, "ci": interval(boot[name])}
    return out


def paired_differences(
    pinned: Readings, candidate: Readings, reps: int = BOOTSTRAP, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """candidate - pinned for each metric on the same turns, each with a paired bootstrap
    interval (the same resampled turns for both, so turn difficulty cancels out)."""
    idx = bootstrap_indices(len(pinned), reps, seed)
    a, b = _metrics(pinned, idx), _metrics(candidate, idx)
    pa, pb = point(pinned), point(candidate)
    return {
        name: {
            "pinned": pa[name],
            "candidate": pb[name],
            "difference": round(pb[name] - pa[name], 4),
            "ci": interval(b[name] - a[name]),
        }
        for name in METRICS
    }


def reliability(confidence: np.ndarray, correct: np.ndarray, bins: int = ECE_BINS) -> list[dict]:
    """Per confidence bin: its mean confidence, its accuracy and how many readings fell in it."""
    which = np.minimum((confidence * bins).astype(np.int64), bins - 1)
    rows = []
    for b in range(bins):
        inside = which == b
        if inside.any():
            rows.append(
                {
                    "lo": b / bins,
                    "hi": (b + 1) / bins,
                    "confidence": float(confidence[inside].mean()),
                    "accuracy": float(correct[inside].mean()),
                    "n": int(inside.sum()),
                }
            )
    return rows


@dataclass
class Forecasts:
    """The conversion forecast of each conversation with an outcome: its last turn's p_convert,
    and whether the conversation converted (a purchase or a trial)."""

    p: np.ndarray
    converted: np.ndarray
    versions: dict[str, int]


def forecasts(outcomes: list[Outcome], last_turns: dict[str, Turn]) -> Forecasts:
    kinds: dict[str, set[str]] = {}
    for o in outcomes:
        kinds.setdefault(o.conversation_id, set()).add(o.kind)
    ps, conv = [], []
    versions: dict[str, int] = {}
    for cid, seen in kinds.items():
        turn = last_turns.get(cid)
        f = (turn.record or {}).get("forecast") or {} if turn else {}
        if f.get("p_convert") is None:
            continue
        ps.append(float(f["p_convert"]))
        conv.append(bool(seen & CONVERTED))
        versions[str(f.get("version", "?"))] = versions.get(str(f.get("version", "?")), 0) + 1
    return Forecasts(np.array(ps), np.array(conv, dtype=bool), versions)


def forecast_readings(f: Forecasts, gate: float) -> Readings:
    """The forecast as a two-class reader: it says "converts" at p >= 0.5, with confidence
    max(p, 1 - p); it "acts" at or above the gate. Every conversation is in scope."""
    conf = np.maximum(f.p, 1 - f.p)
    said = f.p >= 0.5
    version = ",".join(sorted(f.versions)) or "forecast"
    n = len(f.p)
    return Readings(
        version,
        list(range(n)),
        conf,
        said == f.converted,
        conf >= gate,
        np.ones(n, dtype=bool),
    )


def forecast_summary(f: Forecasts, gate: float) -> dict[str, Any]:
    """Calibration of p_convert itself (ECE over p bins, Brier score, base rate) and the
    two-class reading's coverage and selective accuracy at the gate."""
    out = summary(forecast_readings(f, gate))
    out["versions"] = f.versions
    if len(f.p):
        rows = reliability(f.p, f.converted)
        gap = sum(r["n"] * abs(r["confidence"] - r["accuracy"]) for r in rows) / len(f.p)
        out["p_convert"] = {
            "ece": round(gap, 4),
            "brier": round(float(np.mean((f.p - f.converted) ** 2)), 4),
            "base_rate": round(float(f.converted.mean()), 4),
            "mean_p": round(float(f.p.mean()), 4),
        }
    return out

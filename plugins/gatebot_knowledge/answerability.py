"""Answerability: does the best passage retrieval found answer the question?

Retrieval always finds *something*; whether that something answers is a separate question. This
module owns the features that describe how well the best passage fits a question, and the small
logistic head over them that turns them into P(answerable). The head is fitted on stackfaq-dev
(:mod:`gatebot_knowledge.answerfit`) and shipped as ``answerability.json`` beside this file.

Features of the best (first-ranked) passage, all on scales that do not depend on corpus size:

- ``title_cos``, ``joint_cos``: cosine of the question with the passage's title (an FAQ's
  question) and with title + text, ``best_cos`` the larger; ``dense_margin``: how far that is
  ahead of the next passage with another title (one answer among several alike is weaker
  evidence); ``cos_z``: how far it stands out from the whole corpus, in the corpus' own spread.
- ``coverage``: share of the question's informative (idf) weight the passage holds;
  ``coverage_margin`` its lead over the next passage with another title; ``unseen``: share of that
  weight in words the corpus never uses (a question about something the pack never mentions).
- ``bm25_norm``: the passage's BM25 score over the question's total idf (a per-word average, so a
  long question does not look better answered); ``bm25_margin``: its relative lead.

Two rules adjust what the features read: a rival from another document that says the same
thing as the best passage (:func:`agreeing_rivals`) is skipped by the margins, and a passage
about the whole company holds the product names of the question (:class:`Umbrella`).

With embeddings off the dense features do not exist: a second head, fitted on the lexical ones
only, answers, and its version says so (``.../lexical``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from bot.extend.retriever import Fact
from gatebot_knowledge.index import KnowledgeIndex
from gatebot_knowledge.lexical import tokenize
from gatebot_knowledge.packfit import (
    TARGET_AT,
    PackFit,
    name_penalty,
    names_target,
    unseen_names,
)
from gatebot_knowledge.specific import check as check_specific

LEXICAL = ("coverage", "coverage_margin", "unseen", "bm25_norm", "bm25_margin")
DENSE = ("title_cos", "joint_cos", "best_cos", "dense_margin", "cos_z", "agreeing")
#: What each head reads. Both leave out the absolute scores (cosines, BM25 per word, leads in
#: BM25): fitted on stackfaq-dev they carried the most weight there, but they do not carry over
#: to a small pack in one narrow domain, where every cosine runs lower and the best passage is
#: often the only one holding a word (a sample-pack question with its answer in a document read
#: 0.06 with them, 0.65 without; held-out precision at 0.6 went from 0.91 to 0.90).
BASES = {
    "dense": ("cos_z", "dense_margin", "coverage", "unseen"),
    "lexical": ("coverage", "coverage_margin", "unseen"),
}
WEIGHTS = Path(__file__).with_name("answerability.json")
#: How many ranked passages the features look at (the best and its nearest rivals).
DEPTH = 10
#: A rival from another document agrees with the best passage (says the same thing: an FAQ entry
#: and the document section it sums up) when their joint vectors are at least this close and
#: they share :data:`AGREE_TERMS` of the shorter one's words. Sections of one document sit at
#: 0.4-0.75 from each other on the sample pack; the Monitor alerts section and the FAQ entry on
#: alerts at 0.79.
AGREE_COS = 0.77
AGREE_TERMS = 0.6


@dataclass
class Evidence:
    """What the answerability check reads: the best candidates (ungated), their features, and
    the head's P(answerable) with the head's version and basis (``answerability-1/dense``)."""

    facts: list[Fact]
    features: dict[str, float] = field(default_factory=dict)
    p_answerable: float = 0.0
    version: str = ""
    basis: str = "lexical"  # "dense" (embeddings and BM25) or "lexical" (BM25 only)
    query: str = ""  # the query as searched: typos spelled as the corpus writes them


def _rival(
    rows: list[int], titles: list[str], agreeing: frozenset[int] = frozenset()
) -> int | None:
    """The first ranked row after the best whose title differs from the best's, skipping the
    positions in ``agreeing`` (rivals that say what the best says are no doubt about it)."""
    for pos in range(1, len(rows)):
        if titles[pos] != titles[0] and pos not in agreeing:
            return pos
    return None


def _document(key: str) -> str:
    return key.split("#", 1)[0]


def agreeing_rivals(index: KnowledgeIndex, rows: list[int]) -> frozenset[int]:
    """Positions of ranked rows, before the first rival that disagrees, that come from another
    document than the best and say the same thing (:data:`AGREE_COS`, :data:`AGREE_TERMS`)."""
    v = index.vectors
    if v is None or len(rows) < 2:
        return frozenset()
    best = index.passages[rows[0]]
    words = set(tokenize(f"{best.title} {best.text}"))
    out = set()
    for pos in range(1, len(rows)):
        other = index.passages[rows[pos]]
        if other.title == best.title:
            continue
        if _document(other.key) == _document(best.key):
            break  # a sibling section is a rival, not a second source
        theirs = set(tokenize(f"{other.title} {other.text}"))
        shared = len(words & theirs) / max(1, min(len(words), len(theirs)))
        close = float(v.joint[rows[0]] @ v.joint[rows[pos]])
        if close < AGREE_COS or shared < AGREE_TERMS:
            break
        out.add(pos)
    return frozenset(out)


def lexical_features(index: KnowledgeIndex, query: str, rows: list[int]) -> dict[str, float]:
    lex = index.lexical
    terms = lex.query_terms(query)
    if not rows or not terms:
        return dict.fromkeys(LEXICAL, 0.0)
    total, unseen = 0.0, 0.0
    for t in terms:
        tid = lex.vocab.get(t)
        weight = lex.unseen_weight if tid is None else float(lex.idf[tid])
        total += weight
        unseen += weight if tid is None else 0.0
    coverage = lex.coverage(query, rows)
    bm25 = lex.scores(query)[rows].astype(np.float64)
    titles = [index.passages[r].title for r in rows]
    rival = _rival(rows, titles)
    top = float(bm25[0])
    return {
        "coverage": float(coverage[0]),
        "coverage_margin": float(coverage[0] - (coverage[rival] if rival is not None else 0.0)),
        "unseen": unseen / total if total else 0.0,
        "bm25_norm": top / total if total else 0.0,
        "bm25_margin": (top - float(bm25[rival] if rival is not None else 0.0)) / top
        if top > 0
        else 0.0,
    }


def dense_features(index: KnowledgeIndex, qvec: np.ndarray, rows: list[int]) -> dict[str, float]:
    v = index.vectors
    assert v is not None
    joint = v.joint[rows] @ qvec
    titles = v.title_scores(qvec)
    title = titles[rows]
    best = np.maximum(joint, title)
    agreeing = agreeing_rivals(index, rows)
    rival = _rival(rows, [index.passages[r].title for r in rows], agreeing)
    # How far the best stands out from the whole corpus, in the corpus' own spread: cosines run
    # higher between a question and FAQ titles than between a question and document prose.
    every = np.maximum(v.joint @ qvec, titles)
    spread = float(every.std()) if len(every) > 1 else 0.0
    return {
        "title_cos": float(title[0]),
        "joint_cos": float(joint[0]),
        "best_cos": float(best[0]),
        "dense_margin": float(best[0] - (best[rival] if rival is not None else 0.0)),
        "cos_z": float((best[0] - every.mean()) / spread) if spread > 0 else 0.0,
        "agreeing": float(len(agreeing)),
    }


def features(
    index: KnowledgeIndex, query: str, mode: str, qvec: np.ndarray | None = None
) -> tuple[list[tuple[int, float]], dict[str, float], str]:
    """The ranked (row, score) pairs (best first, ungated), the features of the best, and the
    basis ("dense" or "lexical")."""
    ranked = index.rank(query, DEPTH, mode, qvec)
    rows = [r for r, _ in ranked]
    out = lexical_features(index, query, rows)
    if mode == "bm25" or qvec is None or index.vectors is None:
        return ranked, out, "lexical"
    if rows:
        out.update(dense_features(index, qvec, rows))
    else:
        out.update(dict.fromkeys(DENSE, 0.0))
    return ranked, out, "dense"


@dataclass
class LogisticHead:
    """P(answerable) = sigmoid(bias + sum(coef * (x - mean) / scale)) over named features."""

    names: tuple[str, ...]
    coef: list[float]
    bias: float
    mean: list[float]
    scale: list[float]
    version: str = "answerability"

    def prob(self, values: dict[str, float]) -> float:
        z = self.bias
        for name, c, m, s in zip(self.names, self.coef, self.mean, self.scale, strict=True):
            z += c * (values.get(name, 0.0) - m) / s
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

    def to_json(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "coef": self.coef,
            "bias": self.bias,
            "mean": self.mean,
            "scale": self.scale,
            "version": self.version,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LogisticHead:
        return cls(
            tuple(data["names"]),
            [float(c) for c in data["coef"]],
            float(data["bias"]),
            [float(m) for m in data["mean"]],
            [float(s) for s in data["scale"]],
            str(data.get("version", "answerability")),
        )


@lru_cache(maxsize=4)
def shipped_heads(path: Path = WEIGHTS) -> dict[str, LogisticHead]:
    """The fitted heads by basis ("dense", "lexical"), read once per process."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {basis: LogisticHead.from_json(head) for basis, head in data["heads"].items()}


#: A passage speaking for every product in so many words.
_EVERY_PRODUCT = re.compile(
    r"\b(?:every|each|all(?:\s+(?:of\s+)?our)?)\s+(?:product|products|plan|plans)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Umbrella:
    """A pack's company and its products' names: a passage about the company as a whole (it
    names the company and no product: "How much does Acme Cloud cost?") speaks for each of its
    products, so a product's name in the question ("pricing for Monitor") is held by it."""

    company: str
    products: tuple[str, ...]

    def product_words(self) -> set[str]:
        """The stems naming a product and not the company ("pipelin" of "Acme Pipelines")."""
        company = set(tokenize(self.company))
        return {w for name in self.products for w in tokenize(name)} - company

    def for_every_product(self, index: KnowledgeIndex, row: int) -> bool:
        """Whether the passage at ``row`` speaks for every product: it names none of them and
        says so in words ("Every product has a 14-day free trial") or names the company."""
        text = index.passages[row].joint
        said = set(tokenize(text))
        if said & self.product_words():
            return False
        company = set(tokenize(self.company))
        return bool(_EVERY_PRODUCT.search(text)) or bool(company and company <= said)

    def held_terms(self, index: KnowledgeIndex, query: str, row: int) -> list[str]:
        """The query's product-name words the passage at ``row`` holds by speaking for the
        company (none unless it names the company and no product)."""
        said = set(tokenize(index.passages[row].joint))
        company = set(tokenize(self.company))
        if not company or not company <= said:
            return []
        own = [set(tokenize(name)) - company for name in self.products]
        if any(words and words <= said for words in own):
            return []  # it names a product: it speaks for that one, not for the rest
        names = set().union(*own) if own else set()
        return [t for t in index.lexical.query_terms(query) if t in names and t not in said]


def _company_wide(
    index: KnowledgeIndex, query: str, row: int, values: dict[str, float], umbrella: Umbrella
) -> bool:
    """Count the product names a company-wide passage speaks for as held (see
    :class:`Umbrella`): ``coverage`` and ``coverage_margin`` rise by their share of the
    query's weight. Whether anything moved."""
    held = umbrella.held_terms(index, query, row)
    lex = index.lexical
    if not held:
        return False
    total = sum(
        lex.unseen_weight if lex.vocab.get(t) is None else float(lex.idf[lex.vocab[t]])
        for t in lex.query_terms(query)
    )
    gained = sum(float(lex.idf[lex.vocab[t]]) for t in held if t in lex.vocab)
    if total <= 0 or gained <= 0:
        return False
    values["coverage"] = values.get("coverage", 0.0) + gained / total
    values["coverage_margin"] = values.get("coverage_margin", 0.0) + gained / total
    values["company_wide"] = 1.0
    return True


def assess(
    index: KnowledgeIndex,
    query: str,
    mode: str,
    qvec: np.ndarray | None,
    k: int,
    umbrella: Umbrella | None = None,
    fit: PackFit | None = None,
) -> Evidence:
    """The evidence for ``query``: its ``k`` best passages as facts, their features, and the
    shipped head's P(answerable) for the features in hand (``umbrella``: the pack's company and
    products, see :class:`Umbrella`; ``fit``: the pack's calibration, see
    :mod:`gatebot_knowledge.packfit`, not applied to a question naming what the pack never
    says)."""
    declared = fit.declared if fit else frozenset()
    names = unseen_names(index.lexical.vocab, query, declared, written=index.written)
    if names:
        # The ways the pack says its passages are asked vouch for paraphrases of what it says,
        # not for a question naming what it never says ("can my builds run on ARM machines" is
        # worded like "can we run builds on our own machines?", asked of self-hosted runners).
        index = index.without_asked()
    ranked, values, basis = features(index, query, mode, qvec)
    head = shipped_heads()[basis]
    moved = umbrella is not None and bool(ranked)
    moved = moved and _company_wide(index, query, ranked[0][0], values, umbrella)  # type: ignore[arg-type]
    p_answerable, version = head.prob(values), f"{head.version}/{basis}"
    values["unseen_names"] = float(len(names))
    if names:  # evidence of no answer (see .packfit): no shift, and the logit lowered
        p_answerable = PackFit(shift=-name_penalty(query, names)).apply(p_answerable)
        version += "+unseen-name"
        if names_target(query, names):
            p_answerable = min(p_answerable, TARGET_AT)
    elif fit is not None and fit.shift:
        p_answerable = fit.apply(p_answerable)
        version += "+pack"
    if moved:
        version += "+company-wide"
    if values.get("agreeing"):  # the margin was taken past a rival that says the same thing
        version += "+agreeing"
    if ranked:  # does the best passage hold the value asked for (see .specific)?
        specific = check_specific(index, query, ranked[0][0])
        values.update(specific.features())
        p_answerable, suffix = specific.adjust(p_answerable)
        version += suffix
    facts = []
    for row, score in ranked[:k]:
        p = index.passages[row]
        fact_mode = "faq" if p.kind == "faq" else mode
        facts.append(Fact(p.key, p.text, p.source, fact_mode, round(score, 4), p.title))
    return Evidence(facts, values, p_answerable, version, basis)

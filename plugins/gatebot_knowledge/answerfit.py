"""Fitting and evaluating the answerability head on a BEIR collection (stackfaq-dev).

Examples: each query twice. Once over the whole corpus: answerable when the first-ranked passage
is one of its relevant ones (the check asks whether the *best fact* answers; a query whose best
hit is wrong is a "no" as well). Once over the corpus with its relevant passages removed: what
retrieval returns then cannot answer it, so "no". Queries are split by thread (by their set of
relevant passages) into fit and held-out, so no paraphrase of a held-out question is fitted on.

Precision is the share of answered questions whose best passage is relevant; "answered" is the
share of answerable questions (relevant passage ranked first) the head lets through.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gatebot_knowledge.answerability import (
    BASES,
    DEPTH,
    LogisticHead,
    agreeing_rivals,
    assess,
    features,
)
from gatebot_knowledge.evaluate import build_index, read_jsonl, read_qrels
from gatebot_knowledge.index import KnowledgeIndex, Vectors
from gatebot_knowledge.packfit import NAMED_PENALTY, PackFit, fit_pack, remove_rows, unseen_names
from gatebot_knowledge.passages import Passage
from gatebot_knowledge.specific import adjusted
from gatebot_knowledge.specific import check as check_specific

#: Of every five threads, which one is held out (by a hash of its relevant passages' keys).
HELD_OUT = 0
#: Gates below 0.5 mean nothing here: a read answers "yes" only from P = 0.5 on.
SWEEP = (0.5, 0.6, 0.7, 0.8, 0.9)
L2 = 1.0
#: The corpus as it is (answers under their question), and as documentation (see prose_view).
VIEWS = ("faq", "prose")
GENERIC_TITLE = "Product overview"
#: How many of the collection's own titles (its questions) the pack fit reads: every n-th, so
#: the read is the same each run.
FIT_TITLES = 200


@dataclass
class Example:
    query: str
    held_out: bool
    answerable: bool  # the query's relevant passages were in the corpus
    values: dict[str, dict[str, float]]  # features by basis
    labels: dict[str, int]  # by basis, 1 when that basis' best passage answers
    view: str = "faq"  # which view of the corpus (see VIEWS)


def _held_out(relevant: frozenset[str]) -> bool:
    digest = hashlib.sha256(",".join(sorted(relevant)).encode()).digest()
    return digest[0] % 5 == HELD_OUT


def _without(index: KnowledgeIndex, removed: set[int]) -> KnowledgeIndex:
    result: KnowledgeIndex = remove_rows(index, removed)
    return result


def _examples_over(
    index: KnowledgeIndex,
    queries: list[tuple[str, str, np.ndarray | None]],
    relevant: frozenset[str],
    answerable: bool,
    view: str,
) -> list[Example]:
    out = []
    for _qid, text, qvec in queries:
        values, labels = {}, {}
        for basis, mode in (("dense", "hybrid"), ("lexical", "bm25")):
            if basis == "dense" and qvec is None:
                continue
            ranked, values[basis], _ = features(index, text, mode, qvec)
            if ranked:  # the value check's reading, so the scores measure what the agent acts on
                values[basis].update(check_specific(index, text, ranked[0][0]).features())
            # ...and the names the collection never says (see .packfit), as the agent reads them
            values[basis]["unseen_names"] = float(len(unseen_names(index.lexical.vocab, text)))
            best = index.passages[ranked[0][0]].key if ranked else None
            labels[basis] = int(answerable and best in relevant)
        out.append(Example(text, _held_out(relevant), answerable, values, labels, view))
    return out


def examples(data_dir: Path, embedder: Any, views: tuple[str, ...] = VIEWS) -> list[Example]:
    """Both examples of every query with a relevant passage (see the module docstring), in
    each view of the corpus."""
    corpus = read_jsonl(data_dir / "corpus.jsonl")
    qrels = read_qrels(data_dir / "qrels.tsv")
    passages = [
        Passage(str(d["_id"]), str(d.get("title") or ""), str(d.get("text") or ""), "beir", "doc")
        for d in corpus
    ]
    mode = "hybrid" if embedder is not None else "bm25"
    full = build_index(passages, mode, embedder)
    groups: dict[frozenset[str], list[tuple[str, str, np.ndarray | None]]] = {}
    for q in read_jsonl(data_dir / "queries.jsonl"):
        relevant = frozenset(d for d, g in qrels.get(str(q["_id"]), {}).items() if g > 0)
        if relevant:
            qvec = embedder.embed_query(str(q["text"])) if embedder is not None else None
            groups.setdefault(relevant, []).append((str(q["_id"]), str(q["text"]), qvec))
    out: list[Example] = []
    for view in views:
        if view == "prose" and embedder is None:
            continue  # the prose view differs in its vectors only
        index = full if view == "faq" else prose_view(full, embedder)
        out += view_examples(index, groups, view)
    return out


def prose_view(full: KnowledgeIndex, embedder: Any) -> KnowledgeIndex:
    """The corpus as documentation: each passage's text embedded without its question, under
    one generic title. A pack's documents are prose under titles such as "Monitor overview";
    fitted on question titles alone, the head would take every such passage for no answer."""
    texts = embedder.embed([p.text for p in full.passages])
    title = embedder.embed([GENERIC_TITLE])
    rows = np.zeros(len(full.passages), dtype=np.int64)
    return KnowledgeIndex(full.passages, Vectors(texts, title, rows), full.lexical)


def view_examples(
    index: KnowledgeIndex,
    groups: dict[frozenset[str], list[tuple[str, str, np.ndarray | None]]],
    view: str,
) -> list[Example]:
    out: list[Example] = []
    for relevant, queries in groups.items():
        out += _examples_over(index, queries, relevant, True, view)
        removed = {index.by_key[k] for k in relevant if k in index.by_key}
        out += _examples_over(_without(index, removed), queries, relevant, False, view)
    return out


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 50) -> np.ndarray:
    """Weights (bias first) of an L2-regularised logistic regression, by Newton's method."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(xb.shape[1])
    penalty = np.eye(xb.shape[1]) * l2
    penalty[0, 0] = 0.0  # the bias is not shrunk
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ w, -40, 40)))
        grad = xb.T @ (p - y) + penalty @ w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + penalty
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return w


def fit_head(rows: list[Example], basis: str, version: str) -> LogisticHead:
    names = BASES[basis]
    x = np.array([[e.values[basis][n] for n in names] for e in rows], dtype=np.float64)
    y = np.array([e.labels[basis] for e in rows], dtype=np.float64)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    w = fit_logistic((x - mean) / scale, y)
    return LogisticHead(
        names,
        [round(float(c), 6) for c in w[1:]],
        round(float(w[0]), 6),
        [round(float(m), 6) for m in mean],
        [round(float(s), 6) for s in scale],
        version,
    )


def fit(rows: list[Example], version: str) -> dict[str, Any]:
    """The shipped file's content: one head per basis, fitted on the fit split only."""
    fitted = [e for e in rows if not e.held_out]
    bases = [b for b in BASES if all(b in e.values for e in fitted)]
    return {
        "fitted_on": "stackfaq-dev, fit split (4 threads in 5)",
        "heads": {b: fit_head(fitted, b, version).to_json() for b in bases},
    }


def collection_fit(data_dir: Path, embedder: Any, gate: float) -> dict[str, PackFit]:
    """The pack fit (:mod:`gatebot_knowledge.packfit`) of a BEIR collection, by basis: its own
    titles (:data:`FIT_TITLES` of them) read with their best passage and its agreeing rivals
    removed, as the retriever reads a pack's FAQ questions when it builds the index."""
    corpus = read_jsonl(data_dir / "corpus.jsonl")
    passages = [
        Passage(str(d["_id"]), str(d.get("title") or ""), str(d.get("text") or ""), "beir", "doc")
        for d in corpus
    ]
    full = build_index(passages, "hybrid" if embedder is not None else "bm25", embedder)
    titles = list(dict.fromkeys(p.title.strip() for p in passages if p.title.strip()))
    titles = titles[:: max(1, len(titles) // FIT_TITLES)][:FIT_TITLES]
    out = {}
    for basis, mode in (("dense", "hybrid"), ("lexical", "bm25")):
        if basis == "dense" and embedder is None:
            continue

        def negative(query: str, mode: str = mode) -> float | None:
            qvec = embedder.embed_query(query) if mode != "bm25" else None
            rows = [r for r, _ in full.rank(query, DEPTH, mode, qvec)]
            if not rows:
                return None
            removed = {rows[0]} | {rows[pos] for pos in agreeing_rivals(full, rows)}
            return assess(remove_rows(full, removed), query, mode, qvec, 1).p_answerable

        out[basis] = fit_pack(titles, negative, gate)
    return out


def _p(head: LogisticHead, e: Example, basis: str, fit: PackFit | None = None) -> float:
    """P(answerable) as the agent reads it: the head's, lowered for a name the collection never
    says or else shifted by the pack fit, then the value check's."""
    p = head.prob(e.values[basis])
    if e.values[basis].get("unseen_names"):
        p = PackFit(shift=-NAMED_PENALTY).apply(p)
    elif fit is not None:
        p = fit.apply(p)
    return adjusted(p, e.values[basis])


def scores(
    head: LogisticHead,
    rows: list[Example],
    basis: str,
    threshold: float,
    fit: PackFit | None = None,
) -> dict[str, Any]:
    """Precision of the answered, share of answerable answered, false answers on removed."""
    answered = [e for e in rows if _p(head, e, basis, fit) >= threshold]
    right = sum(e.labels[basis] for e in answered)
    answerable = [e for e in rows if e.labels[basis]]
    removed = [e for e in rows if not e.answerable]
    return {
        "threshold": threshold,
        "precision": round(right / len(answered), 4) if answered else None,
        "answered": round(right / len(answerable), 4) if answerable else None,
        "false_answers_when_removed": round(
            sum(1 for e in removed if _p(head, e, basis, fit) >= threshold) / len(removed), 4
        )
        if removed
        else None,
    }


def evaluate(
    rows: list[Example],
    heads: dict[str, LogisticHead],
    threshold: float,
    fits: dict[str, PackFit] | None = None,
) -> dict[str, Any]:
    """Held-out figures at ``threshold`` and over :data:`SWEEP`, by view ("faq": the collection
    as it is; "prose": as documentation) and basis (the lexical head reads the same lexical
    features in both views, so it is reported on the faq view only)."""
    held = [e for e in rows if e.held_out]
    out: dict[str, Any] = {
        "held_out_queries": sum(1 for e in held if e.answerable and e.view == "faq")
    }
    for view in VIEWS:
        shown = [e for e in held if e.view == view]
        for basis, head in heads.items():
            if not shown or (view != "faq" and basis == "lexical"):
                continue
            if all(basis in e.values for e in shown):
                fit = (fits or {}).get(basis)
                out[f"{view}/{basis}"] = _figures(head, shown, basis, threshold, fit)
    return out


def _figures(
    head: LogisticHead,
    rows: list[Example],
    basis: str,
    threshold: float,
    fit: PackFit | None = None,
) -> dict[str, Any]:
    asked = max(1, sum(1 for e in rows if e.answerable))
    return {
        # No check at all: every question (both variants) answered from its best passage.
        "precision_without_check": round(sum(e.labels[basis] for e in rows) / len(rows), 4),
        "best_is_relevant": round(sum(e.labels[basis] for e in rows) / asked, 4),
        "at_threshold": scores(head, rows, basis, threshold, fit),
        "sweep": [scores(head, rows, basis, t, fit) for t in SWEEP],
    }


def write_heads(content: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(content, indent=1) + "\n", encoding="utf-8")


def table(basis: str, figures: dict[str, Any]) -> str:
    """One basis' figures as the lines ``gatebot knowledge eval --answerability`` prints."""
    shipped = figures["at_threshold"]
    lines = [
        f"{basis}: without the check, precision {figures['precision_without_check']}",
        f"  at the shipped threshold {shipped['threshold']}: precision {shipped['precision']}, "
        f"answered {shipped['answered']}, "
        f"false answers with the answer removed {shipped['false_answers_when_removed']}",
        "  threshold  precision  answered  false_when_removed",
    ]
    for row in figures["sweep"]:
        lines.append(
            f"  {row['threshold']:>9}  {row['precision']!s:>9}  {row['answered']!s:>8}  "
            f"{row['false_answers_when_removed']!s:>18}"
        )
    return "\n".join(lines)

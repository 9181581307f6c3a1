"""Retrieval evaluation on a BEIR-format collection: nDCG@10, recall@10, MRR@10 and timings.

BEIR format: ``corpus.jsonl`` lines ``{"_id", "title", "text"}``, ``queries.jsonl`` lines
``{"_id", "text"}``, and a qrels TSV with the header ``query-id corpus-id score``. Each corpus
document is one passage (title embedded apart, as for an FAQ entry). Only queries with at least
one relevant document (score > 0) are scored, as BEIR does.

Metrics follow trec_eval: nDCG with linear gain (the qrels score) and log2 discount over the top
10; recall@10 is the share of a query's relevant documents in its top 10; MRR@10 the mean
reciprocal rank of the first relevant one (0 when none is in the top 10). Timings: building the
index (embedding included, unless ``cache`` reuses stored vectors), and one query at a time,
query embedding included.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from bot.cli.output import progress
from bot.errors import ConfigError
from bot.store import Store
from gatebot_knowledge.embedder import Embedder, load_embedder
from gatebot_knowledge.index import MODES, KnowledgeIndex
from gatebot_knowledge.passages import Passage, text_hash

K = 10


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as fh:
        header = fh.readline().split()
        if header[:2] != ["query-id", "corpus-id"]:
            raise ConfigError(f"{path}: the first line must be 'query-id corpus-id score'")
        for n, line in enumerate(fh, start=2):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 3:
                raise ConfigError(f"{path}:{n}: expected 'query-id corpus-id score'")
            qrels.setdefault(parts[0], {})[parts[1]] = int(float(parts[2]))
    return qrels


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = K) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int = K) -> float:
    wanted = {d for d, g in relevant.items() if g > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def mrr_at(ranked: list[str], relevant: dict[str, int], k: int = K) -> float:
    for i, d in enumerate(ranked[:k]):
        if relevant.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def store_name(corpus_path: Path) -> str:
    """The pack name a BEIR corpus is cached under in the store (a short, fixed-length name)."""
    return "beir-" + text_hash(str(corpus_path.resolve()))[:16]


def build_index(
    passages: list[Passage],
    mode: str,
    embedder: Embedder | None,
    store: Store | None = None,
    name: str = "",
) -> KnowledgeIndex:
    """The index an evaluation runs on; with ``store``, passages and vectors are cached there
    under ``name`` (versioned by the passages' hashes, so an edited corpus is re-cut)."""
    from gatebot_knowledge.retriever import load_index

    if mode == "bm25":
        return KnowledgeIndex(passages)
    if embedder is None:
        raise ConfigError(
            f"mode {mode} needs embeddings, which are unavailable "
            "(GATEBOT_EMBEDDINGS=off, or the model failed to load: see the log)"
        )
    if store is not None:
        store.migrate()
    version = text_hash("".join(p.key + p.content_hash for p in passages))[:32]
    index, _ = load_index(name, version, lambda: passages, embedder, store)
    return index


def evaluate(
    corpus_path: Path,
    queries_path: Path,
    qrels_path: Path,
    mode: str = "hybrid",
    store: Store | None = None,
    queries_subset: set[str] | None = None,
) -> dict[str, Any]:
    """The metrics and timings as one dict, keys exactly as ``gatebot knowledge eval`` prints.

    With ``store``, vectors are cached there (under a pack named after the corpus file), so
    ``index_seconds`` then measures a load, not an embedding run."""
    if mode not in MODES:
        raise ConfigError(f"--mode must be one of {', '.join(MODES)}, not {mode!r}")
    corpus = read_jsonl(corpus_path)
    queries = read_jsonl(queries_path)
    qrels = read_qrels(qrels_path)
    passages = [
        Passage(str(d["_id"]), str(d.get("title") or ""), str(d.get("text") or ""), "beir", "doc")
        for d in corpus
    ]
    embedder = load_embedder() if mode != "bm25" else None
    started = time.perf_counter()
    index = build_index(passages, mode, embedder, store, store_name(corpus_path))
    index_seconds = time.perf_counter() - started

    scored = [
        q
        for q in queries
        if str(q["_id"]) in qrels
        and any(g > 0 for g in qrels[str(q["_id"])].values())
        and (queries_subset is None or str(q["_id"]) in queries_subset)
    ]
    totals = {"ndcg": 0.0, "recall": 0.0, "mrr": 0.0}
    times: list[float] = []
    for q in progress(scored, f"knowledge eval ({mode})"):
        t0 = time.perf_counter()
        qvec = embedder.embed_query(str(q["text"])) if embedder is not None else None
        ranked = index.rank(str(q["text"]), K, mode, qvec)
        times.append((time.perf_counter() - t0) * 1000)
        keys = [passages[r].key for r, _ in ranked]
        relevant = qrels[str(q["_id"])]
        totals["ndcg"] += ndcg_at(keys, relevant)
        totals["recall"] += recall_at(keys, relevant)
        totals["mrr"] += mrr_at(keys, relevant)
    n = max(len(scored), 1)
    return {
        "mode": mode,
        "n_queries": len(scored),
        "ndcg@10": round(totals["ndcg"] / n, 4),
        "recall@10": round(totals["recall"] / n, 4),
        "mrr@10": round(totals["mrr"] / n, 4),
        "index_seconds": round(index_seconds, 3),
        "query_ms_p50": round(percentile(times, 50), 3),
        "query_ms_p99": round(percentile(times, 99), 3),
    }

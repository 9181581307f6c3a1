"""The knowledge plugin: passages and keys, embeddings kept in the store, BM25 against a reference,
windowed reads, the eval and search CLI, and answers through the agent.

Small generated data only; the encoder (all-MiniLM-L6-v2, shipped in a package) is loaded once
per session and shared through a counting wrapper, so each test sees its own embed counts.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import gatebot_knowledge
import numpy as np
import pytest
from click.testing import CliRunner
from gatebot_knowledge.embedder import Embedder, VectorMemo, load_embedder
from gatebot_knowledge.lexical import Bm25Arrays, Bm25Index, tokenize
from gatebot_knowledge.passages import pack_passages
from gatebot_knowledge.retriever import KnowledgeRetriever, UnknownKeyError

from bot.app import App
from bot.config import Settings
from bot.extend.retriever import Fact, LexicalRetriever, Retriever
from bot.hookspecs import hookimpl
from bot.packs import load_pack
from bot.store import Store
from bot.store import passages as stored

ROOT = Path(__file__).resolve().parent.parent
ACME = ROOT / "knowledge" / "acme"
EVAL_KEYS = [
    "mode",
    "n_queries",
    "ndcg@10",
    "recall@10",
    "mrr@10",
    "index_seconds",
    "query_ms_p50",
    "query_ms_p99",
]

GUIDE = """---
key: doc-guide
title: Operations guide
---
Read this before your first deploy.

## Alerts

Alerts page the engineer on call by phone when a check fails twice in a row.

An alert that nobody acknowledges for ten minutes escalates to the team lead.

## Backups

Backups run every night and are kept for ninety days in a second region.
"""

HTML = """<html><head><title>Service levels</title><style>p{}</style></head><body>
<h1>Service levels</h1><p>Acme Monitor is available 99.9 percent of each month.</p>
<h2>Credits</h2><p>Missed targets earn service credits on the next invoice.</p>
<script>var ignored = 1;</script></body></html>"""


@pytest.fixture(scope="session")
def encoder() -> Embedder:
    model = load_embedder()
    assert model is not None, "the shipped encoder must load offline"
    return model


@pytest.fixture
def counting(encoder: Embedder) -> Embedder:
    """The session's model behind fresh counters."""
    return Embedder(encoder.model, encoder.model_id)


@pytest.fixture
def pack_dir(tmp_path: Path) -> Path:
    """The sample pack plus a sectioned Markdown guide, an HTML page and a text file."""
    root = tmp_path / "pack"
    shutil.copytree(ACME, root)
    (root / "docs" / "guide.md").write_text(GUIDE)
    (root / "docs" / "sla.html").write_text(HTML)
    (root / "docs" / "notes.txt").write_text("Release notes\n\nVersion 2 adds dark mode.\n")
    return root


def retriever(pack: Path, store: Store | None, embedder: Embedder | None) -> KnowledgeRetriever:
    return KnowledgeRetriever(load_pack(pack), store, embedder_loader=lambda: embedder)


def sqlite(tmp_path: Path) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'k.db'}")
    store.migrate()
    return store


def test_passage_keys_follow_headings_and_survive_reindexing(pack_dir: Path) -> None:
    keys = [p.key for p in pack_passages(load_pack(pack_dir))]
    assert keys[:3] == ["faq-pricing", "faq-trial", "faq-docker"]
    assert {"doc-monitor#checks", "doc-monitor#alerts", "doc-monitor#incidents"} <= set(keys)
    guide = [k for k in keys if k.startswith("doc-guide")]
    assert guide == ["doc-guide#1", "doc-guide#alerts", "doc-guide#alerts-2", "doc-guide#backups"]
    assert {"doc-sla#1", "doc-sla#credits", "doc-notes#1"} <= set(keys)
    assert keys == [p.key for p in pack_passages(load_pack(pack_dir))]
    # A new paragraph in one section moves no key in any other section.
    text = (pack_dir / "docs" / "guide.md").read_text()
    (pack_dir / "docs" / "guide.md").write_text(text.replace("## Backups", "More.\n\n## Backups"))
    after = [p.key for p in pack_passages(load_pack(pack_dir))]
    assert set(keys) < set(after) and set(after) - set(keys) == {"doc-guide#alerts-3"}
    sla = {p.key: p for p in pack_passages(load_pack(pack_dir))}
    assert sla["doc-sla#credits"].title == "Service levels: Credits"
    assert "ignored" not in sla["doc-sla#credits"].text


def test_one_changed_document_re_embeds_only_its_changed_passages(
    pack_dir: Path, tmp_path: Path, counting: Embedder
) -> None:
    store = sqlite(tmp_path)
    first = retriever(pack_dir, store, counting).build()
    distinct = {p.content_hash for p in pack_passages(load_pack(pack_dir))}
    assert first.mode == "hybrid" and first.embedded == counting.texts_embedded
    assert first.embedded >= len(distinct)
    guide = pack_dir / "docs" / "guide.md"
    guide.write_text(guide.read_text().replace("ninety days", "one year"))
    again = retriever(pack_dir, store, counting).build()
    assert again.embedded == 1  # the one edited passage; its title was embedded before
    assert again.synced == {"added": 0, "changed": 1, "removed": 0, "kept": first.passages - 1}
    assert counting.texts_embedded == first.embedded + 1


def test_a_second_store_gets_every_vector_but_the_model_runs_once(
    pack_dir: Path, tmp_path: Path, encoder: Embedder
) -> None:
    memo = VectorMemo()
    first = Embedder(encoder.model, encoder.model_id, memo)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    built = retriever(pack_dir, sqlite(tmp_path / "a"), first).build()
    second = Embedder(encoder.model, encoder.model_id, memo)
    again = retriever(pack_dir, sqlite(tmp_path / "b"), second).build()
    # The empty store still receives (and counts) every vector; only the model is spared.
    assert again.embedded == built.embedded == first.texts_encoded > 0
    assert second.texts_encoded == 0
    texts = [p.joint for p in pack_passages(load_pack(pack_dir))[:4]]
    uncached = Embedder(encoder.model, encoder.model_id, None)
    np.testing.assert_allclose(second.embed(texts), uncached.embed(texts), atol=1e-5)
    assert uncached.texts_encoded == 4 and second.texts_encoded == 0
    # Another model id (another model, or the same one truncating elsewhere) never hits.
    other = Embedder(encoder.model, encoder.model_id + "-other", memo)
    other.embed(texts)
    assert other.texts_encoded == 4


def test_the_vector_memo_is_bounded_and_drops_the_least_recently_used() -> None:
    memo = VectorMemo(rows=2)
    a, b, c = (VectorMemo.key("m", t) for t in "abc")
    memo.put(a, np.ones(3))
    memo.put(b, np.zeros(3))
    assert memo.get(a) is not None  # a is now the most recently used
    memo.put(c, np.ones(3))
    assert memo.get(b) is None and memo.get(a) is not None and memo.get(c) is not None
    held = memo.get(a)
    assert held is not None and not held.flags.writeable  # shared by every index built from it


async def test_restart_loads_from_the_store_without_embedding(
    pack_dir: Path, tmp_path: Path, counting: Embedder
) -> None:
    store = sqlite(tmp_path)
    retriever(pack_dir, store, counting).build()
    calls = counting.calls
    restarted = retriever(pack_dir, store, counting)
    report = restarted.build()
    assert report.embedded == 0 and report.synced == {} and counting.calls == calls
    facts = await restarted.search("does an alert escalate to the team lead after ten minutes?")
    assert facts[0].key == "doc-guide#alerts-2" and facts[0].mode == "hybrid"


async def test_embeddings_off_means_bm25_recorded_as_such(
    pack_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEBOT_EMBEDDINGS", "off")
    r = KnowledgeRetriever(load_pack(pack_dir), sqlite(tmp_path))
    assert r.build().mode == "bm25" and r.embedder is None
    facts = await r.search("Does Pipelines support Docker builds?")
    assert (facts[0].key, facts[0].mode) == ("faq-docker", "faq")
    facts = await r.search("how long are backups kept?")
    assert (facts[0].key, facts[0].mode) == ("doc-guide#backups", "bm25")


def test_a_model_that_fails_to_load_means_bm25(
    pack_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEBOT_EMBEDDING_MODEL", str(tmp_path / "no-such-model"))
    assert KnowledgeRetriever(load_pack(pack_dir), sqlite(tmp_path)).build().mode == "bm25"


async def test_before_the_index_is_ready_search_answers_from_bm25(pack_dir: Path) -> None:
    r = KnowledgeRetriever(load_pack(pack_dir), None, embedder_loader=lambda: None)
    assert not r.ready and r.mode == "bm25"
    facts = await r.search("how long are backups kept?")
    assert facts[0].key == "doc-guide#backups" and facts[0].mode == "bm25"
    assert await r.search("does the mobile app support offline mode") == []


def test_bm25s_ranks_like_rank_bm25() -> None:
    import math

    from rank_bm25 import BM25Okapi

    class LuceneIdf(BM25Okapi):
        """rank-bm25's Okapi BM25 with the idf bm25s (and Lucene) use. Plain Okapi idf turns
        negative for words in most documents, which reorders Zipf text: that is a choice of
        variant, not a bug either side, so the reference takes the same variant."""

        def _calc_idf(self, nd: dict[str, int]) -> None:
            self.idf = {
                w: math.log(1 + (self.corpus_size - n + 0.5) / (n + 0.5)) for w, n in nd.items()
            }

    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(1500)]
    weights = [1 / (i + 3) for i in range(len(vocab))]  # Zipf-like, as text is
    docs = [" ".join(rng.choices(vocab, weights, k=rng.randint(20, 80))) for _ in range(600)]
    ours = Bm25Index(docs)
    reference = LuceneIdf([tokenize(d) for d in docs], k1=1.5, b=0.75)
    overlap, same_first = [], 0
    for _ in range(60):
        doc = rng.choice(docs).split()
        query = " ".join(rng.sample(doc, 4))
        scores = ours.scores(query)
        expected = reference.get_scores(list(dict.fromkeys(tokenize(query))))
        # bm25s' Lucene variant leaves out Okapi's constant factor (k1 + 1): the same ranking.
        assert np.allclose(scores * (1.5 + 1), expected, rtol=1e-4, atol=1e-5)
        mine = np.argsort(-scores, kind="stable")[:10]
        theirs = np.argsort(-expected, kind="stable")[:10]
        overlap.append(len(set(mine) & set(theirs)) / 10)
        same_first += int(mine[0] == theirs[0])
    assert np.mean(overlap) >= 0.95 and same_first >= 57, (np.mean(overlap), same_first)


async def test_windowed_reads_say_where_they_are_and_never_cut_silently(pack_dir: Path) -> None:
    r = KnowledgeRetriever(load_pack(pack_dir), None, embedder_loader=lambda: None)
    whole = await r.read("doc-guide#alerts-2")
    assert whole["offset"] == 0 and whole["length"] == whole["total"] == len(whole["text"])
    assert whole["next_offset"] is None
    pieces, offset = [], 0
    while offset is not None:
        window = await r.read("doc-guide", offset, 40)
        assert window["length"] == len(window["text"]) <= 40
        pieces.append(window["text"])
        offset = window["next_offset"]
    assert "".join(pieces) == load_pack(pack_dir).documents[1].text.strip()
    assert window["offset"] + window["length"] == window["total"]
    assert (await r.read("faq-trial"))["text"].startswith("Yes. Every product has a 14-day")
    with pytest.raises(UnknownKeyError, match="no passage or document 'doc-nope#1'"):
        await r.read("doc-nope#1")
    with pytest.raises(ValueError, match="past the end"):
        await r.read("faq-trial", 10_000)
    with pytest.raises(ValueError, match="length >= 1"):
        await r.read("faq-trial", 0, 0)


def test_the_core_retriever_cuts_the_same_keys_as_the_plugin(pack_dir: Path) -> None:
    """Switching retrievers (no ml extra, GATEBOT_EMBEDDINGS=off) keeps every citation."""
    pack = load_pack(pack_dir)
    core = {f.key: f.title for f in LexicalRetriever(pack).facts}
    plugin = {p.key: p.title for p in pack_passages(pack, extra=False)}
    assert core == plugin
    assert core["doc-monitor#alerts"] == "Acme Monitor overview: Alerts"


async def test_keys_numbered_before_headings_still_read(pack_dir: Path) -> None:
    """A stored record citing doc-monitor#2 (numbered before the sample docs had headings)
    still resolves: to the same paragraph, under today's key."""
    r = retriever(pack_dir, None, None)
    old = await r.read("doc-monitor#2")
    assert old["key"] == "doc-monitor#alerts" and old["text"].startswith("Alerts go to")
    # A key that exists today is never taken for an alias (the guide's preamble is #1).
    assert (await r.read("doc-guide#1"))["text"] == "Read this before your first deploy."


def cli() -> click.Group:
    group = click.Group("gatebot")
    gatebot_knowledge.register_commands(cli=group)
    return group


def test_eval_prints_exactly_the_agreed_keys(tmp_path: Path, encoder: Embedder) -> None:
    corpus = [
        {"_id": "d1", "title": "Reset a password", "text": "Use the forgot password link."},
        {"_id": "d2", "title": "Delete an account", "text": "Owners delete it from Settings."},
        {"_id": "d3", "title": "Export data", "text": "Exports are CSV files sent by email."},
    ]
    queries = [
        {"_id": "q1", "text": "I forgot my password"},
        {"_id": "q2", "text": "remove account"},
    ]
    (tmp_path / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in corpus))
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    args = [f"--{n}={tmp_path / f}" for n, f in [("corpus", "corpus.jsonl"),
            ("queries", "queries.jsonl"), ("qrels", "qrels.tsv")]]  # fmt: skip
    for mode in ("bm25", "hybrid", "embeddings"):
        result = CliRunner().invoke(cli(), ["knowledge", "eval", *args, "--mode", mode, "--json"])
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert list(out) == EVAL_KEYS and out["mode"] == mode and out["n_queries"] == 2
    assert out["ndcg@10"] == out["mrr@10"] == out["recall@10"] == 1.0


def test_index_and_search_from_the_command_line(
    pack_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoder: Embedder
) -> None:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    runner = CliRunner()
    first = runner.invoke(cli(), ["knowledge", "index", str(pack_dir), "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["embedded"] > 0
    second = runner.invoke(cli(), ["knowledge", "index", str(pack_dir), "--json"])
    assert json.loads(second.stdout)["embedded"] == 0
    args = ["knowledge", "search", "are backups kept in another region", "--pack", str(pack_dir)]
    found = runner.invoke(cli(), [*args, "--k", "2", "--json"])
    assert found.exit_code == 0, found.output
    facts = json.loads(found.stdout)
    assert facts[0]["key"] == "doc-guide#backups" and facts[0]["mode"] == "hybrid"
    # Fewer than --k because of the answer cut-off: said on stderr, the JSON unchanged.
    cut = runner.invoke(cli(), [*args, "--k", "5", "--json"])
    assert len(json.loads(cut.stdout)) < 5
    assert "more scored below the answer cut-off" in cut.stderr and "--all" in cut.stderr
    missing = runner.invoke(cli(), ["knowledge", "read", "doc-nope", "--pack", str(pack_dir)])
    assert missing.exit_code == 1 and "no passage or document 'doc-nope'" in missing.output


@pytest.mark.parametrize("embeddings", ["on", "off"])
async def test_the_agent_cites_passages_by_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoder: Embedder, embeddings: str
) -> None:
    monkeypatch.setenv("GATEBOT_EMBEDDINGS", embeddings)
    app = App(
        Settings(pack=ACME, data_dir=tmp_path, recorders=[]), extra_plugins=[gatebot_knowledge]
    )
    assert isinstance(app.retriever, KnowledgeRetriever)
    await app.start(channels=False)
    try:
        conv = app.store.create_conversation("web")[0]
        faq = await app.agent.handle(conv, "Does Pipelines support Docker builds?", "m1")
        again = app.store.get_conversation(conv.id)
        assert again is not None
        doc = await app.agent.handle(again, "How long are build caches kept?", "m2")
    finally:
        await app.stop()
    assert faq.replies[0]["citations"][0]["key"] == "faq-docker"
    assert faq.record["facts"][0] == {"key": "faq-docker", "source": "faq", "mode": "faq"}
    mode = "hybrid" if embeddings == "on" else "bm25"
    assert doc.record["facts"][0] == {
        "key": "doc-pipelines#jobs-and-caches",
        "source": "acme/docs/pipelines.md",
        "mode": mode,
    }
    assert doc.replies[0]["citations"][0]["key"] == "doc-pipelines#jobs-and-caches"
    assert "seven days" in doc.replies[0]["text"]


def test_another_plugins_retriever_takes_precedence(tmp_path: Path) -> None:
    class Fixed(Retriever):
        name = "fixed"

        async def search(self, query: str, k: int = 3) -> list[Fact]:
            return []

    class Other:
        @hookimpl
        def register_retrievers(self, register: Callable[[Any], None]) -> None:
            register(lambda app: Fixed())

    settings = Settings(pack=ACME, data_dir=tmp_path, recorders=[])
    app = App(settings, extra_plugins=[gatebot_knowledge, Other()])
    assert isinstance(app.retriever, Fixed)


def test_without_the_ml_extra_the_core_retriever_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "bm25s", None)  # what an uninstalled package looks like
    app = App(
        Settings(pack=ACME, data_dir=tmp_path, recorders=[]), extra_plugins=[gatebot_knowledge]
    )
    assert isinstance(app.retriever, LexicalRetriever)


def test_store_keeps_passages_vectors_and_bm25(database_url: str) -> None:
    store = Store(database_url)
    store.migrate()
    try:
        rows = [
            stored.PassageRow(f"k{i}", i, "doc", "T", f"text {i}", "s", [], f"h{i}", "t")
            for i in range(3)
        ]
        assert stored.sync_passages(store, "p", "v1", rows)["added"] == 3
        changed = [rows[0], rows[1]._replace(text="new", content_hash="h9")]
        counts = stored.sync_passages(store, "p", "v2", changed)
        assert counts == {"added": 0, "changed": 1, "removed": 1, "kept": 1}
        assert stored.stored_version(store, "p") == "v2"
        assert [r.text for r in stored.load_passages(store, "p")] == ["text 0", "new"]
        vec = np.linspace(-1, 1, 384, dtype=np.float32)
        stored.put_vectors(store, "m", {"h0": vec, "h9": vec * 2, "orphan": vec})
        stored.put_vectors(store, "m", {"h0": vec * 3})  # a second writer: the first is kept
        got = stored.pack_vectors(store, "p", "m", "content_hash")
        assert set(got) == {"h0", "h9"} and np.array_equal(got["h0"], vec)
        assert stored.missing_vectors(store, "m", ["h0", "h5"]) == ["h5"]
        assert stored.prune_vectors(store) == 1  # "orphan"
        index = Bm25Index(["docker builds", "slack alerts", "docker alerts"])
        stored.save_bm25(store, "p", "v2/tok", stored.Bm25Row(*index.to_arrays()))
        assert stored.load_bm25(store, "p", "v1/tok") is None
        saved = stored.load_bm25(store, "p", "v2/tok")
        assert saved is not None
        back = Bm25Index.from_arrays(Bm25Arrays(*saved))
        assert np.allclose(back.scores("docker alerts"), index.scores("docker alerts"))
    finally:
        store.close()

"""``gatebot knowledge``: index a pack, search it, read a passage, evaluate on a BEIR collection.

The store is the one the app uses (``DATABASE_URL``, else SQLite under ``GATEBOT_DATA_DIR``), so
``index`` run ahead of a deploy leaves nothing for the app to embed at start. Progress and log
lines go to stderr; with ``--json`` stdout carries one JSON document and nothing else.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from bot.config import Settings
from bot.packs import load_pack
from bot.store import Store


def _store() -> Store:
    store = Store(Settings.from_env().database_url)
    store.migrate()
    return store


def _retriever(pack_path: str | None, mode: str | None = None, progress: bool | None = None) -> Any:
    from gatebot_knowledge.retriever import KnowledgeRetriever

    path = Path(pack_path) if pack_path else Settings.from_env().pack
    return KnowledgeRetriever(load_pack(path), _store(), mode=mode, progress=progress)


@click.group("knowledge")
def knowledge() -> None:
    """Knowledge search: passages, embeddings and BM25 (the gatebot_knowledge plugin)."""


@knowledge.command("index")
@click.argument("pack", type=click.Path(exists=True, file_okay=False))
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a TTY).")
@click.option("--prune", is_flag=True, help="Then delete vectors no stored passage uses.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def index_cmd(pack: str, progress: bool | None, prune: bool, as_json: bool) -> None:
    """Cut PACK into passages, store them and embed what is not stored yet."""
    retriever = _retriever(pack, progress=progress)
    report = asdict(retriever.build())
    if prune:
        from bot.store.passages import prune_vectors

        report["pruned"] = prune_vectors(retriever.store)
    if as_json:
        click.echo(json.dumps(report))
        return
    click.echo(
        f"{report['passages']} passages of {retriever.pack.name}, {report['embedded']} embedded, "
        f"mode {report['mode']}, {report['seconds']} s"
    )


@knowledge.command("search")
@click.argument("query")
@click.option("--k", "k", default=5, show_default=True, help="How many passages.")
@click.option("--pack", "pack", default=None, help="Pack folder (default: GATEBOT_PACK).")
@click.option("--mode", type=click.Choice(["hybrid", "embeddings", "bm25"]), default=None)
@click.option("--all", "ungated", is_flag=True, help="Also passages too far to answer from.")
@click.option("--json", "as_json", is_flag=True, help="Print the facts as JSON.")
def search_cmd(
    query: str, k: int, pack: str | None, mode: str | None, ungated: bool, as_json: bool
) -> None:
    """The passages the agent would answer QUERY from, best first."""
    retriever = _retriever(pack, mode)
    retriever.build()
    facts = retriever.search_sync(query, k, gate=not ungated)
    if len(facts) < k and not ungated:
        # The answer cut-off dropped some: say so (on stderr, so --json stays parseable).
        dropped = len(retriever.search_sync(query, k, gate=False)) - len(facts)
        if dropped > 0:
            click.echo(
                f"{len(facts)} of --k {k} shown: {dropped} more scored below the answer cut-off "
                "(too far from the question to answer from; --all shows them)",
                err=True,
            )
    if as_json:
        click.echo(json.dumps([asdict(f) for f in facts]))
        return
    if not facts:
        click.echo("no passage is close enough to answer from")
    for f in facts:
        click.echo(f"[{f.key}] {f.score:.3f} {f.mode}  {f.title}\n    {f.text}")


@knowledge.command("read")
@click.argument("key")
@click.option("--offset", default=0, show_default=True)
@click.option("--length", default=2000, show_default=True)
@click.option("--pack", "pack", default=None, help="Pack folder (default: GATEBOT_PACK).")
def read_cmd(key: str, offset: int, length: int, pack: str | None) -> None:
    """Print a window of a passage or document as JSON (text, offset, length, total)."""
    from gatebot_knowledge.retriever import UnknownKeyError

    retriever = _retriever(pack)
    try:
        click.echo(json.dumps(retriever.read_sync(key, offset, length)))
    except (UnknownKeyError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc


@knowledge.command("eval")
@click.option("--corpus", type=click.Path(exists=True, dir_okay=False), default=None)
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), default=None)
@click.option("--qrels", type=click.Path(exists=True, dir_okay=False), default=None)
@click.option(
    "--data-dir",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="A BEIR folder: corpus.jsonl, queries.jsonl and qrels.tsv (instead of the three).",
)
@click.option("--mode", type=click.Choice(["hybrid", "embeddings", "bm25"]), default="hybrid")
@click.option(
    "--cache", is_flag=True, help="Keep vectors in the store (index_seconds is then a load)."
)
@click.option(
    "--answerability",
    is_flag=True,
    help="Evaluate the answerability check instead: precision and share answered, held out.",
)
@click.option("--threshold", type=float, default=None, help="Gate (default: the shipped one).")
@click.option(
    "--fit",
    "fit_to",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --answerability: fit the heads on the fit split and write them to this file.",
)
@click.option(
    "--pack-fit",
    is_flag=True,
    help="With --answerability: apply the pack fit, placed on the collection's own titles.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def eval_cmd(
    corpus: str | None,
    queries: str | None,
    qrels: str | None,
    data_dir: str | None,
    mode: str,
    cache: bool,
    answerability: bool,
    threshold: float | None,
    fit_to: str | None,
    pack_fit: bool,
    as_json: bool,
) -> None:
    """nDCG@10, recall@10, MRR@10 and latency on a BEIR-format collection; with
    --answerability, how well the answerability check tells answered from not."""
    if answerability:
        if data_dir is None:
            raise click.UsageError("--answerability needs --data-dir")
        _answerability(Path(data_dir), threshold, fit_to, as_json, pack_fit)
        return
    folder = Path(data_dir) if data_dir else None
    paths = [
        Path(given) if given else (folder / name if folder else None)
        for given, name in (
            (corpus, "corpus.jsonl"),
            (queries, "queries.jsonl"),
            (qrels, "qrels.tsv"),
        )
    ]
    if any(p is None for p in paths):
        raise click.UsageError("give --corpus, --queries and --qrels, or --data-dir")
    from gatebot_knowledge.evaluate import evaluate

    c, q, r = (p for p in paths if p is not None)
    result = evaluate(c, q, r, mode, store=_store() if cache else None)
    _print(result, as_json)


def _print(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(result))
        return
    for name, value in result.items():
        click.echo(f"{name:>14}  {value}")


def _answerability(
    data_dir: Path,
    threshold: float | None,
    fit_to: str | None,
    as_json: bool,
    pack_fit: bool = False,
) -> None:
    """Held-out precision and share answered at the threshold, and a sweep (answerfit)."""
    from bot.packs.model import DEFAULT_GATES
    from gatebot_knowledge import answerfit
    from gatebot_knowledge.answerability import LogisticHead, shipped_heads
    from gatebot_knowledge.embedder import load_embedder

    embedder = load_embedder()
    rows = answerfit.examples(data_dir, embedder)
    if fit_to:
        content = answerfit.fit(rows, "answerability-1")
        answerfit.write_heads(content, Path(fit_to))
        heads = {b: LogisticHead.from_json(h) for b, h in content["heads"].items()}
    else:
        heads = shipped_heads()
    gate = DEFAULT_GATES["answerable"] if threshold is None else threshold
    fits = answerfit.collection_fit(data_dir, embedder, gate) if pack_fit else None
    result = answerfit.evaluate(rows, heads, gate, fits)
    if fits:
        result["pack_fit"] = {basis: fit.as_dict() for basis, fit in fits.items()}
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"held-out queries: {result['held_out_queries']} (each with and without its answer)")
    for name, figures in result.items():
        if name == "pack_fit":
            click.echo(f"pack fit: {figures}")
        elif isinstance(figures, dict):
            click.echo(answerfit.table(name, figures))

"""How well an intent head knows what it never saw: BANKING77 with intents held out as novel.

A seeded choice of ``--holdout`` intents is left out of training altogether; every test line of
theirs must abstain (the head's answer novel, ``none`` or under the gate). The rest train a head
the way ``gatebot heads train`` does, and the test split is scored at the gate: coverage and
selective accuracy on the known intents, and the novel false-act rate on the held-out ones. The
data is read from the path given and never copied into the repository.

    nice -n 10 python bench/novelty.py --data-dir ../shared/data/banking77  # 3 epochs, 6 layers
    nice -n 10 python bench/novelty.py --data-dir ../shared/data/banking77 --epochs 0 \
        --cache /tmp/b77.npz --novelty-false-act 1,0.01,0.03,0.1   # frozen: a sweep of targets
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bot.heads.encoder import embed, load_encoder
from bot.heads.evaluate import OOS, evaluate, evaluate_embedded
from bot.heads.heldout import DEFAULT_FALSE_ACT
from bot.heads.novelty import DEFAULT_QUANTILE
from bot.heads.train import TrainOptions, train_head


def read_csv(path: Path) -> list[tuple[str, str]]:
    """(text, intent) rows of a BANKING77 CSV (header ``text,category``)."""
    with path.open(encoding="utf-8", newline="") as f:
        return [(row["text"].strip(), row["category"]) for row in csv.DictReader(f)]


def held_out_intents(intents: list[str], n: int, seed: int) -> list[str]:
    """The ``n`` intents kept out of training: the same for the same seed, on any machine."""
    return sorted(random.Random(seed).sample(sorted(intents), n))


def split(
    data_dir: Path, n: int, seed: int, max_per_intent: int
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    """Train rows without the held-out intents; test rows with theirs labelled ``oos``."""
    train, test = read_csv(data_dir / "train.csv"), read_csv(data_dir / "test.csv")
    held = held_out_intents(sorted({label for _, label in train}), n, seed)
    rows = [(t, label) for t, label in train if label not in held]
    if max_per_intent:  # a quick run while developing: the first lines of each intent
        seen: Counter[str] = Counter()
        quick = []
        for text, label in rows:
            seen[label] += 1
            if seen[label] <= max_per_intent:
                quick.append((text, label))
        rows = quick
    gold = [(t, OOS if label in held else label) for t, label in test]
    return rows, gold, held


def minilm(texts: list[str]) -> np.ndarray:
    """The shipped encoder, the one every head is trained on."""
    return np.asarray(embed(load_encoder(), texts))


class CachedEmbeddings:
    """An encoder's embeddings (the shipped MiniLM unless told), each text embedded once and kept
    in an ``.npz`` file when one is named, so a sweep over novelty targets (or a rerun) embeds
    nothing again. A cache holds one encoder's vectors: name another file for another encoder."""

    def __init__(
        self, path: Path | None, encode: Callable[[list[str]], np.ndarray] = minilm
    ) -> None:
        self.path, self.rows, self.encode = path, {}, encode
        if path and path.is_file():
            data = np.load(path)
            self.rows = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))

    def __call__(self, texts: list[str]) -> np.ndarray:
        missing = sorted({t for t in texts if t not in self.rows})
        if missing:
            print(f"embedding {len(missing)} lines", file=sys.stderr)
            self.rows.update(zip(missing, self.encode(missing), strict=True))
            if self.path:
                texts_all = list(self.rows)
                vectors = np.stack([self.rows[t] for t in texts_all])
                np.savez(self.path, texts=np.array(texts_all), vectors=vectors)
        return np.stack([self.rows[t] for t in texts])


def run(
    args: argparse.Namespace,
    rows: list[tuple[str, str]],
    gold: list[tuple[str, str]],
    target: float,
) -> dict[str, Any]:
    """Train one head at novelty target ``target`` and score it on the test split."""
    opts = TrainOptions(
        epochs=args.epochs,
        train_layers=args.train_layers,
        seed=args.seed,
        progress=True,
        novelty_false_act=target if target < 1 else None,
        novelty_quantile=args.novelty_quantile,
        gate=args.gate,
        tune_hidden=args.tune_hidden,
        tune_as_none=args.tune_as_none,
    )
    texts, labels = [t for t, _ in gold], [g for _, g in gold]
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "intent"
        start = time.monotonic()
        if args.epochs > 0:  # a tuned encoder embeds for itself
            head = train_head(rows, "intent", out, opts)
            seconds = time.monotonic() - start
            return {"train_seconds": round(seconds, 1), **evaluate(head, texts, labels, args.gate)}
        cached = CachedEmbeddings(args.cache)
        head = train_head(rows, "intent", out, opts, embedder=cached)
        seconds = time.monotonic() - start
        result = evaluate_embedded(head, cached(texts), labels, args.gate)
    return {"train_seconds": round(seconds, 1), **result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="train.csv and test.csv")
    parser.add_argument("--holdout", type=int, default=10, help="intents held out as novel")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3, help="0: frozen encoder")
    parser.add_argument("--train-layers", type=int, default=6)
    parser.add_argument("--gate", type=float, default=0.9)
    parser.add_argument("--max-per-intent", type=int, default=0, help="0: every line")
    parser.add_argument("--out", type=Path, help="keep the trained head here")
    parser.add_argument(
        "--novelty-false-act",
        default=str(DEFAULT_FALSE_ACT),
        help="largest share of hidden intents' lines that may act; 1: the quantile alone; "
        "several, comma-separated, train one head each",
    )
    parser.add_argument("--novelty-quantile", type=float, default=DEFAULT_QUANTILE)
    parser.add_argument(
        "--tune-hidden", type=float, default=0.0, help="share of intents the fine-tune never sees"
    )
    parser.add_argument(
        "--tune-as-none", type=float, default=0.0, help="share the fine-tune learns as none"
    )
    parser.add_argument("--cache", type=Path, help="frozen runs: keep embeddings in this .npz")
    args = parser.parse_args()

    rows, gold, held = split(args.data_dir, args.holdout, args.seed, args.max_per_intent)
    print(f"held out as novel (seed {args.seed}): {', '.join(held)}", file=sys.stderr)
    for target in [float(t) for t in args.novelty_false_act.split(",")]:
        result = run(args, rows, gold, target)
        ins, novel = result["in_scope"], result["oos"]
        fitted = result.get("novelty", {}).get("fitted", {})
        print(
            json.dumps(
                {
                    "held_out": held,
                    "train_lines": len(rows),
                    "epochs": args.epochs,
                    "train_layers": args.train_layers,
                    "target": target,
                    **result,
                }
            )
        )
        print(
            f"target {target}, gate {args.gate}: coverage {ins['coverage']:.3f}, selective "
            f"accuracy {ins['selective_accuracy']:.3f} ({ins['n']} known lines); novel false-act "
            f"rate {novel['false_act_rate']:.3f} ({novel['n']} lines); novelty threshold "
            f"{result.get('novelty', {}).get('threshold')} by {fitted.get('by')} (hidden intents' "
            f"lines acting: {fitted.get('hidden_false_act')}); trained in "
            f"{result['train_seconds']:.0f}s",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()

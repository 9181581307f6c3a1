"""The numpy encoder against sentence-transformers (torch): agreement and CPU per sentence.

Agreement: cosine between the two backends' vectors, and each shipped head's top-1 label from
either, on the heads' eval data: the sample pack's intent and move heads on its intents' examples
and the paraphrase set (tests/data/acme_paraphrases.jsonl), the sentiment head on TweetEval tweets
(/work/shared/data, or --tweets). Speed: CPU seconds per sentence (process time, so other work on
the machine does not count) at batch 1 and batch 32, each backend on the same tweets: numpy with
the BLAS threads the encoder sets (GATEBOT_ENCODER_THREADS, 1 by default), torch with its default
threads and on one thread (as knowledge search's queries ran).

    python bench/encoder.py [--tweets PATH] [--n 2000] [--json]

Needs the dev install (torch) for the comparison.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from bot.heads import load_head
from bot.heads.encoder import (
    MAX_SEQ_LENGTH,
    configure_blas_threads,
    embed,
    load_torch,
    shipped_path,
)
from bot.heads.encoder_numpy import NumpyEncoder
from bot.heads.sentiment import load_default_sentiment
from bot.packs import load_pack

ROOT = Path(__file__).resolve().parents[1]
TWEETS = Path("/work/shared/data/tweeteval-sentiment/text.txt")


def pack_texts() -> list[str]:
    pack = load_pack(ROOT / "knowledge" / "acme")
    texts = [e for intent in pack.intents for e in intent.examples]
    lines = (ROOT / "tests" / "data" / "acme_paraphrases.jsonl").read_text().splitlines()
    return texts + [json.loads(line)["text"] for line in lines if line.strip()]


def agreement(numpy_rows: np.ndarray, torch_rows: np.ndarray, head: object) -> float:
    a = head.predict_embedded(numpy_rows)  # type: ignore[attr-defined]
    b = head.predict_embedded(torch_rows)  # type: ignore[attr-defined]
    return sum(x[0][0] == y[0][0] for x, y in zip(a, b, strict=True)) / len(a)


def cpu_per_sentence(run: object, texts: list[str], batch: int) -> float:
    """Process CPU milliseconds per sentence embedding ``texts`` ``batch`` at a time."""
    run(texts[:batch])  # type: ignore[operator]  # warm
    started = time.process_time()
    for i in range(0, len(texts), batch):
        run(texts[i : i + batch])  # type: ignore[operator]
    return (time.process_time() - started) * 1000 / len(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tweets", type=Path, default=TWEETS)
    parser.add_argument("--n", type=int, default=600, help="tweets for the sentiment agreement")
    parser.add_argument("--speed", type=int, default=128, help="sentences per speed run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import torch

    configure_blas_threads()  # as load_encoder does: GATEBOT_ENCODER_THREADS, 1 by default
    npy = NumpyEncoder(shipped_path())
    npy.max_seq_length = MAX_SEQ_LENGTH
    st = load_torch(shipped_path())
    st.max_seq_length = MAX_SEQ_LENGTH
    pack = load_pack(ROOT / "knowledge" / "acme")
    intents = pack_texts()
    tweets = [t.strip() for t in args.tweets.read_text().splitlines()[: args.n] if t.strip()]
    out: dict[str, object] = {}
    for name, texts, heads in (
        (
            "pack",
            intents,
            [load_head(pack.root / pack.heads[h]["path"]) for h in ("intent", "move")],
        ),
        ("tweets", tweets, [load_default_sentiment()]),
    ):
        a, b = embed(npy, texts), embed(st, texts)
        cos = (a * b).sum(axis=1)
        out[name] = {
            "texts": len(texts),
            "cosine_min": round(float(cos.min()), 7),
            "cosine_mean": round(float(cos.mean()), 7),
            **{f"top1_{h.name}": round(agreement(a, b, h), 4) for h in heads},
        }
    sample = (tweets * 2)[: args.speed]
    speed: dict[str, float] = {}
    threads = torch.get_num_threads()
    for batch in (1, 32):
        speed[f"numpy_b{batch}_ms"] = cpu_per_sentence(lambda t: embed(npy, t), sample, batch)
        speed[f"torch_b{batch}_ms"] = cpu_per_sentence(lambda t: embed(st, t), sample, batch)
        torch.set_num_threads(1)
        speed[f"torch1thread_b{batch}_ms"] = cpu_per_sentence(lambda t: embed(st, t), sample, batch)
        torch.set_num_threads(threads)
    out["cpu_ms_per_sentence"] = {k: round(v, 2) for k, v in speed.items()}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    for key, value in out.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()

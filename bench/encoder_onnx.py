"""The ONNX Runtime encoder against the numpy one: agreement and CPU per sentence.

``GATEBOT_ENCODER=onnx`` (int8 weights) and ``onnx-float`` (float32 weights) against the default
numpy pass, on the heads' eval data as bench/encoder.py reads them: the sample pack's intent and
move heads on its intents' examples and the paraphrase set, the sentiment head on TweetEval tweets
(/work/shared/data, or --tweets). Agreement: cosine between the vectors, and each head's top-1
label from either. Speed: process CPU milliseconds per sentence at batch 1 and batch 32, one
thread each (GATEBOT_ENCODER_THREADS for numpy's BLAS, one ORT thread).

    python bench/encoder_onnx.py [--tweets PATH] [--n 2000] [--json]

Needs no torch.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from encoder import TWEETS, agreement, cpu_per_sentence, pack_texts

from bot.heads import load_head
from bot.heads.encoder import MAX_SEQ_LENGTH, configure_blas_threads, embed, shipped_path
from bot.heads.encoder_numpy import NumpyEncoder
from bot.heads.encoder_onnx import OnnxEncoder
from bot.heads.sentiment import load_default_sentiment
from bot.packs import load_pack

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tweets", type=Path, default=TWEETS)
    parser.add_argument("--n", type=int, default=2000, help="tweets for the sentiment agreement")
    parser.add_argument("--speed", type=int, default=256, help="sentences per speed run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    configure_blas_threads()
    encoders = {
        "numpy": NumpyEncoder(shipped_path()),
        "onnx": OnnxEncoder(shipped_path()),
        "onnx-float": OnnxEncoder(shipped_path(), quantize=False),
    }
    for encoder in encoders.values():
        encoder.max_seq_length = MAX_SEQ_LENGTH
    pack = load_pack(ROOT / "knowledge" / "acme")
    tweets = [t.strip() for t in args.tweets.read_text().splitlines()[: args.n] if t.strip()]
    data = (
        (
            "pack",
            pack_texts(),
            [load_head(pack.root / pack.heads[h]["path"]) for h in ("intent", "move")],
        ),
        ("tweets", tweets, [load_default_sentiment()]),
    )
    out: dict[str, object] = {}
    for name, texts, heads in data:
        base = embed(encoders["numpy"], texts)
        for backend in ("onnx", "onnx-float"):
            rows = embed(encoders[backend], texts)
            cos = (base * rows).sum(axis=1)
            out[f"{name}/{backend}"] = {
                "texts": len(texts),
                "cosine_min": round(float(cos.min()), 7),
                "cosine_mean": round(float(cos.mean()), 7),
                **{f"top1_{h.name}": round(agreement(base, rows, h), 4) for h in heads},
            }
    sample = (tweets * 2)[: args.speed]
    out["cpu_ms_per_sentence"] = {
        f"{backend}_b{batch}": round(
            cpu_per_sentence(lambda t, e=encoder: embed(e, t), sample, batch), 2
        )
        for backend, encoder in encoders.items()
        for batch in (1, 32)
    }
    if args.json:
        print(json.dumps(out, indent=1))
        return
    for key, value in out.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()

"""The gated pipeline's own cost per turn, stage by stage, and the heads' inference latency.

No HTTP and no network: the real app in-process on SQLite in a temporary folder, the offline
provider and the sample pack; turns go straight to ``Agent.handle``, one at a time, so the figures
are the pipeline's cost, not queueing. Each stage's time comes from the ``timings`` the agent
writes into every turn record. Then each head is timed alone: the shared sentence embedding of one
message, and each head's layer over an embedding.

    .venv/bin/python bench/pipeline.py [--turns 300] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.app import App  # noqa: E402
from bot.config import Settings  # noqa: E402

MESSAGES = [
    "hello",
    "Does Pipelines support Docker builds?",
    "where is my data stored",
    "what's the weather in Paris",
    "can I get a demo",
    "we want to run our CI on it",
    "about 40 people",
    "my email is jo@example.com",
    "my builds keep failing since this morning",
    "no thanks",
]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)], 3)


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50": pct(values, 50),
        "p99": pct(values, 99),
        "mean": round(sum(values) / len(values), 3),
    }


async def pipeline(turns: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            pack=ROOT / "knowledge" / "acme", data_dir=Path(tmp), model="offline", recorders=[]
        )
        app = App(settings)
        await app.start(channels=False)
        stages: dict[str, list[float]] = {}
        try:
            for n in range(turns + len(MESSAGES)):
                if n % len(MESSAGES) == 0:
                    conv = app.store.create_conversation("web")[0]
                if app.agent.readers._batcher is not None:  # each repeat timed as a new message
                    app.agent.readers._batcher.forget()
                result = await app.agent.handle(conv, MESSAGES[n % len(MESSAGES)], f"m{n}")
                if n < len(MESSAGES):
                    continue  # warm-up: first loads and first queries
                for stage, ms in result.record["timings"].items():
                    stages.setdefault(stage, []).append(ms)
            heads = await head_latency(app)
        finally:
            await app.stop()
    return {
        "turns": turns,
        "stages_ms": {k: summary(v) for k, v in stages.items()},
        "heads_ms": heads,
    }


async def head_latency(app: App, repeats: int = 200) -> dict[str, Any]:
    readers = app.agent.readers
    out: dict[str, Any] = {}
    if readers._batcher is None:
        return {"note": "no heads loaded (GATEBOT_HEADS=off or no ml extra)"}
    from bot.heads.encoder import embed, load_encoder

    encoder = load_encoder()
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        vector = embed(encoder, [f"{MESSAGES[i % len(MESSAGES)]} {i}"])
        times.append((time.perf_counter() - start) * 1000)
    out["embed_one_message"] = summary(times)
    for name in ("intent_head", "sentiment_head", "move_head"):
        head = getattr(readers, name)
        if head is None or not hasattr(head, "predict_embedded"):
            continue
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            head.predict_embedded(vector)
            times.append((time.perf_counter() - start) * 1000)
        out[name.removesuffix("_head")] = summary(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    result = asyncio.run(pipeline(args.turns))
    if args.json:
        print(json.dumps(result))
        return
    print(f"gated pipeline, {result['turns']} turns one at a time (offline provider, SQLite):")
    for stage, s in result["stages_ms"].items():
        print(
            f"  {stage:<14} p50 {s['p50']:>8.3f} ms  p99 {s['p99']:>8.3f} ms  mean {s['mean']:.3f}"
        )
    print("heads (one message):")
    for name, s in result["heads_ms"].items():
        if isinstance(s, dict):
            print(f"  {name:<18} p50 {s['p50']:>8.3f} ms   p99 {s['p99']:>8.3f} ms")
    print(json.dumps(result))


if __name__ == "__main__":
    main()

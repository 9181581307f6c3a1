"""Pre-flight's added latency per turn, with the offline provider.

Runs the same messages (the sample pack's labelled set) through the agent in-process with
pre-flight off, in shadow mode (every answer computed and recorded, nothing else changes) and in
routing mode, each message in a new conversation, one turn at a time. Reports each mode's turn
time (median and mean of the record's ``total_ms``), pre-flight's own time (the record's
``preflight.ms``), and the median added per turn in shadow mode against off.

    .venv/bin/python bench/preflight.py [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/preflight.py`
    sys.path.insert(0, str(ROOT))

from bot.app import App  # noqa: E402
from bot.config import Settings  # noqa: E402

PACK = ROOT / "knowledge" / "acme"
LABELS = PACK / "preflight" / "labels.jsonl"


def _texts() -> list[str]:
    return [json.loads(line)["text"] for line in LABELS.read_text().splitlines() if line.strip()]


def forget_embeddings(app: App) -> None:
    batcher = app.agent.readers._batcher
    if batcher is not None:
        batcher.forget()


async def _run(mode: str, texts: list[str], rounds: int, data: Path) -> dict[str, Any]:
    settings = Settings(pack=PACK, data_dir=data / mode, recorders=[], preflight=mode)
    app = App(settings)
    await app.start(channels=False)
    try:
        for text in texts[:3]:  # warm-up: encoder, indexes and detector loaded before timing
            conv = app.store.create_conversation("web")[0]
            await app.agent.handle(conv, text, None)
        totals, preflight = [], []
        for _ in range(rounds):
            for text in texts:
                conv = app.store.create_conversation("web")[0]
                forget_embeddings(app)  # every round's message is timed as a new one
                record = (await app.agent.handle(conv, text, None)).record
                totals.append(record["timings"]["total_ms"])
                preflight.append(record["preflight"]["ms"])
    finally:
        await app.stop()
    return {
        "mode": mode,
        "turns": len(totals),
        "turn_ms_p50": round(statistics.median(totals), 2),
        "turn_ms_mean": round(statistics.fmean(totals), 2),
        "preflight_ms_p50": round(statistics.median(preflight), 2),
        "preflight_ms_mean": round(statistics.fmean(preflight), 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="passes over the labelled set")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("bm25s").setLevel(logging.ERROR)  # it logs each index build at debug
    texts = _texts()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [await _run(m, texts, args.rounds, Path(tmp)) for m in ("off", "shadow", "routing")]
    off, shadow = rows[0], rows[1]
    added = round(shadow["turn_ms_p50"] - off["turn_ms_p50"], 2)
    if args.json:
        print(json.dumps({"modes": rows, "added_ms_p50_shadow_vs_off": added}))
        return
    print(f"{len(texts)} messages x {args.rounds} rounds, offline provider, one turn at a time")
    print(f"{'mode':8} {'turn p50':>9} {'turn mean':>10} {'pre-flight p50':>15} {'mean':>7}")
    for r in rows:
        print(
            f"{r['mode']:8} {r['turn_ms_p50']:>9.2f} {r['turn_ms_mean']:>10.2f} "
            f"{r['preflight_ms_p50']:>15.2f} {r['preflight_ms_mean']:>7.2f}"
        )
    print(f"added per turn (shadow p50 - off p50): {added:.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())

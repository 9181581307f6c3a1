"""What starting a flow adds to a turn: the pack line nearest the message (one product with the
flows' and intents' example vectors, the message vector being the heads' own, cached) and every
flow's signals (keywords, and a repeat step's phrase reading). Milliseconds per message, p50 and
p99, on the sample pack's paraphrase set.

    nice -n 10 python bench/flow_trigger.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

from bot.flows.trigger import ExampleIndex, signals, starts
from bot.packs import load_pack
from bot.turn.reading import Readers
from bot.turn.turn import Read

ROOT = Path(__file__).resolve().parent.parent
UNSURE: Read = {
    "head": "intent",
    "version": "bench",
    "answer": "none",
    "confidence": 0.5,
    "gate": "intent",
    "threshold": 0.9,
    "outcome": "unsure",
}


async def measure(rounds: int) -> dict[str, float]:
    pack = load_pack(ROOT / "knowledge" / "acme")
    readers = Readers(pack)
    index = ExampleIndex(pack, getattr(readers, "_batcher", None))
    lines = (ROOT / "tests" / "data" / "acme_paraphrases.jsonl").read_text().splitlines()
    texts = [json.loads(line)["text"] for line in lines if line.strip()]
    for text in texts:  # the heads embed each message anyway: warm, as in a turn
        await readers.read(text, None)
    await index.nearest(texts[0])  # the examples are embedded once per process
    times = []
    for _ in range(rounds):
        for text in texts:
            start = time.perf_counter()
            near = await index.nearest(text)
            for flow in pack.flows.values():
                starts(flow, pack, signals(flow, pack, UNSURE, text, near), None)
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {
        "messages": len(times),
        "p50_ms": round(statistics.median(times), 3),
        "p99_ms": round(times[int(0.99 * (len(times) - 1))], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args.rounds))))


if __name__ == "__main__":
    main()

"""The scope check's added cost per turn: the domain check on top of the shared embedding.

The message's vector is the one the heads' batcher computes for the heads anyway, so here every
message is embedded first (outside the timing) and served from memory, as a turn finds it. What
is timed is the whole scope check (declared rules, then the pack's closeness and the threshold),
beside the declared rules alone; the difference is what the domain check adds. Then the one-off
cost: embedding the pack's texts and fitting the threshold, once per pack version and process.

    .venv/bin/python bench/scope.py [--rounds 200] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.cli.scope import PrecomputedRows  # noqa: E402
from bot.packs import load_pack  # noqa: E402
from bot.turn import scope as scope_module  # noqa: E402

MESSAGES = [
    "can you check my website every 30 seconds",
    "do you have an on-prem version",
    "how does your product work",
    "what can you do?",
    "I've had a headache for two days, what should I take?",
    "Wie wird das Wetter morgen in Berlin?",
    "how long do I leave a lasagna in the oven",
    "Dear hiring manager, I am writing to apply for the nursing position",
]


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(rounds: int) -> dict[str, Any]:
    from bot.heads.encoder import embed, load_encoder
    from bot.turn.reading import Readers

    pack = load_pack(ROOT / "knowledge" / "acme")
    rows = dict(zip(MESSAGES, embed(load_encoder(), MESSAGES), strict=True))
    check = scope_module.ScopeCheck(pack, Readers(pack), PrecomputedRows(rows))
    started = time.perf_counter()
    await check.domain()
    fit_s = time.perf_counter() - started
    whole, rules = [], []
    for _ in range(rounds):
        for text in MESSAGES:
            t0 = time.perf_counter()
            await check.check(text, {"values": {}})
            t1 = time.perf_counter()
            scope_module.check_scope(pack, text, set())
            t2 = time.perf_counter()
            whole.append((t1 - t0) * 1000)
            rules.append((t2 - t1) * 1000)
    added = [w - r for w, r in zip(whole, rules, strict=True)]
    return {
        "turns": len(whole),
        "fit_seconds": round(fit_s, 2),
        "scope_check_ms": {"p50": _pct(whole, 0.5), "p99": _pct(whole, 0.99)},
        "declared_rules_ms": {"p50": _pct(rules, 0.5), "p99": _pct(rules, 0.99)},
        "domain_check_added_ms": {"p50": _pct(added, 0.5), "p99": _pct(added, 0.99)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    report = asyncio.run(run(args.rounds))
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['turns']} scope checks; pack vectors and fit once: {report['fit_seconds']} s")
    for key in ("scope_check_ms", "declared_rules_ms", "domain_check_added_ms"):
        print(f"  {key}: p50 {report[key]['p50']:.3f}  p99 {report[key]['p99']:.3f}")


if __name__ == "__main__":
    main()

"""Outcome learning on synthetic labelled traffic: 2,000 conversations with staff labels and
outcomes, a pinned intent head and two candidates in its shadow; prints the report and the two
promotion verdicts, and draws the reliability diagram shown in the README.

    python bench/outcomes.py [--png docs/reliability.png]

Seconds on SQLite; no head runs (the readings are drawn, see bot/outcomes/simulate.py).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bot.outcomes.diagram import draw
from bot.outcomes.evaluation import (
    forecast_summary,
    forecasts,
    point,
    readings,
    reliability,
    summary,
)
from bot.outcomes.promotion import judge
from bot.outcomes.simulate import demo_traffic, seed_traffic
from bot.packs import load_pack
from bot.store import Store

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--png", type=Path, default=ROOT / "docs" / "reliability.png")
    parser.add_argument("--conversations", type=int, default=2000)
    args = parser.parse_args()
    pack = load_pack(ROOT / "knowledge" / "acme")
    pinned = pack.heads["intent"]["version"]
    intents = [i.name for i in pack.intents]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/outcomes.db")
        store.migrate()
        start = time.monotonic()
        traffic = demo_traffic(intents, pinned, "intent@worse", "intent@better", args.conversations)
        counts = seed_traffic(store, traffic)
        print(f"seeded {counts} in {time.monotonic() - start:.1f}s")
        turns = store.labelled_turns("intent")
        outcomes = store.outcomes()
        last = store.last_turns(sorted({o.conversation_id for o in outcomes}))
        store.close()
    gate = pack.gates["intent"]
    acting = readings(turns, "intent", pinned, gate)
    panels = []
    for r in (acting,):
        print(summary(r))
        panels.append(
            {
                "title": f"pinned {r.version}",
                "bins": reliability(r.confidence, r.correct),
                "ece": point(r)["ece"],
                "gate": gate,
            }
        )
    for version in ("intent@worse", "intent@better"):
        cand = readings(turns, "intent", version, gate, "shadow")
        print(summary(cand))
        verdict = judge(acting, cand, 0.02, 100)
        for name, rule in verdict.rules.items():
            print(
                f"  {version} {name}: {rule['pinned']} -> {rule['candidate']} "
                f"diff {rule['difference']:+.4f} {rule['ci']} "
                f"{'pass' if rule['passed'] else 'FAIL'}"
            )
        print(f"  {version}: {'promoted' if verdict.promoted else 'refused'} {verdict.reason}")
        panels.append(
            {
                "title": f"candidate {version}",
                "bins": reliability(cand.confidence, cand.correct),
                "ece": point(cand)["ece"],
                "gate": gate,
            }
        )
    f = forecasts(outcomes, last)
    fsum = forecast_summary(f, gate)
    print("forecast", fsum)
    panels.append(
        {
            "title": "conversion forecast",
            "bins": reliability(f.p, f.converted),
            "ece": fsum["p_convert"]["ece"],
            "xlabel": "p_convert",
            "ylabel": "converted (purchase or trial)",
        }
    )
    print(f"wrote {draw(panels, args.png)} ({args.png.stat().st_size} bytes)")


if __name__ == "__main__":
    main()

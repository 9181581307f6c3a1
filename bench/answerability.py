"""What the answerability check adds to an answer turn, in milliseconds (p50/p99).

    .venv/bin/python bench/answerability.py                  # the sample pack, embeddings on
    GATEBOT_EMBEDDINGS=off .venv/bin/python bench/answerability.py
    .venv/bin/python bench/answerability.py --rounds 50 --json

An answer turn used to search once. It now asks the retriever for evidence first (the query's
embedding, the ranking, the features and the head), then searches as before, the query's vector
reused. So, per question, timed apart over ``--rounds`` rounds of a fixed question list:

- ``search_before``: one search with nothing cached (the old turn's retrieval);
- ``check``: the evidence call with nothing cached (what the check costs);
- ``search_after``: the search that follows it (vector cached);
- ``added``: check + search_after - search_before, the turn's extra time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

from gatebot_knowledge.evaluate import percentile  # noqa: E402
from gatebot_knowledge.retriever import KnowledgeRetriever  # noqa: E402

from bot.packs import load_pack  # noqa: E402

QUESTIONS = [
    "Does Pipelines support Docker builds?",
    "where can I download my invoice",
    "is there an on-prem version of Monitor?",
    "what uptime SLA do you commit to?",
    "can Monitor alert us in Slack?",
    "how many locations does monitor check from?",
    "¿Cuánto cuesta Acme Cloud?",
    "do you integrate with bitbucket?",
    # Messages of context and a question: the question sentence is also read alone.
    "Our tool wakes us up at night with false alarms. How does Monitor decide a site is down?",
    "We hired two contractors last week. Do viewers count as paid seats?",
    # A name only in the context: the questions are read again without it (the thirteenth round).
    "Our on-call lives in Slack and the review is on Monday. Can Acme Monitor alert a channel?",
    # Two alternatives and a sign-off: the first alternative is read alone as well, and the
    # message is embedded without its sign-off (the fourteenth round).
    "Is there a free plan, or do we have to pay from day one? Thanks, Sam",
    # A clause before the question: the question after it is read alone as well (the
    # seventeenth round).
    "When our shop site goes down at night, can the warning come as a text message?",
]


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000


def run(rounds: int) -> dict[str, object]:
    retriever = KnowledgeRetriever(load_pack(ROOT / "knowledge" / "acme"))
    retriever.build()
    times: dict[str, list[float]] = {"search_before": [], "check": [], "search_after": []}
    added: list[float] = []
    for n in range(rounds):
        for question in QUESTIONS:
            # A fresh spelling each round, so no cached vector is reused across rounds.
            query = f"{question} ({n})"
            t0 = time.perf_counter()
            retriever.search_sync(query + " ")
            before = _ms(t0)
            t0 = time.perf_counter()
            retriever.evidence_sync(query)
            check = _ms(t0)
            t0 = time.perf_counter()
            retriever.search_sync(query)
            after = _ms(t0)
            for name, value in (
                ("search_before", before),
                ("check", check),
                ("search_after", after),
            ):
                times[name].append(value)
            added.append(check + after - before)
    times["added"] = added
    out: dict[str, object] = {"mode": retriever.mode, "turns": len(added)}
    for name, values in times.items():
        out[name] = {
            "p50": round(percentile(values, 50), 2),
            "p99": round(percentile(values, 99), 2),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.rounds)
    if args.json:
        print(json.dumps(result))
        return
    print(f"mode {result['mode']}, {result['turns']} answer turns")
    for name in ("search_before", "check", "search_after", "added"):
        figures = result[name]
        assert isinstance(figures, dict)
        print(f"{name:>14}  p50 {figures['p50']:>7} ms  p99 {figures['p99']:>7} ms")


if __name__ == "__main__":
    main()

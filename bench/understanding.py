"""What reading typos, follow-ups, FAQ matches and other languages adds per message (p50/p99 ms).

    .venv/bin/python bench/understanding.py [--rounds 50] [--json]

Each step is timed apart over ``--rounds`` rounds of a fixed message list (English questions,
typos, follow-ups, Spanish, German and French questions), with the query's MiniLM vector already
made (the turn makes it anyway):

- ``reply_language``: the message's language for the turn's templates (py3langid);
- ``follow_up``: whether it refers back, and the retrieval query (``bot.turn.followup_query``);
- ``scope_spelling``: the declared rules with misspelled keywords read (``check_scope``);
- ``foreign``: the retriever's own language reading of the query;
- ``spelled``: the typo channel (``KnowledgeIndex.spelled``: corrections and surface words);
- ``faq_match``: the FAQ match over the hybrid ranking (an English query);
- ``cross_match``: the multilingual encoder's FAQ match (only messages in another language);
- ``value_check``: whether the best passage holds the value asked for
  (:mod:`gatebot_knowledge.specific`; English questions, the best passage given);
- ``agreeing``: which rivals of the best passage say the same thing (the answerability check's
  margin skips them; English questions, the ranked rows given);
- ``company_wide``: whether the best passage speaks for the whole company (the product names
  of the question it holds; English questions, the best passage given);
- ``asked_match``: whether a way the best passage is asked vouches for it (the knowledge
  retriever's ``_asked_match``: the message against every asked question; English questions);
- ``follow_up_alone``: the second check a follow-up pays when its joined query is not answered
  (one evidence call for the message alone, its vector already made).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

from gatebot_knowledge.answerability import DEPTH, Umbrella, agreeing_rivals  # noqa: E402
from gatebot_knowledge.evaluate import percentile  # noqa: E402
from gatebot_knowledge.faqmatch import faq_match  # noqa: E402
from gatebot_knowledge.retriever import KnowledgeRetriever, _asked_match  # noqa: E402
from gatebot_knowledge.specific import check as value_check  # noqa: E402

from bot.packs import load_pack  # noqa: E402
from bot.preflight.language import reply_language  # noqa: E402
from bot.turn.followup_query import retrieval_query  # noqa: E402
from bot.turn.scope import check_scope  # noqa: E402

ENGLISH = [
    "Does Pipelines support Docker builds?",
    "where can I download my invoice",
    "whats teh pricng for monitr",
    "can monitr send alerst to slakc",
    "is it encrypted?",
    "how much is it?",
    "is there an on-prem version of Monitor?",
    "how many locations does monitor check from?",
    "how long are build logs kept",
    "what is the maximum number of parallel jobs",
]
FOREIGN = [
    "¿Cuánto cuesta Acme Cloud?",
    "Wie setze ich mein Passwort zurück?",
    "Où sont stockées mes données ?",
    "Kann ich Monitor mit Jira verbinden?",
]


def timed(fn: Callable[[], Any], samples: list[float]) -> None:
    started = time.perf_counter()
    fn()
    samples.append((time.perf_counter() - started) * 1000)


def run(rounds: int) -> dict[str, dict[str, float]]:
    pack = load_pack(ROOT / "knowledge" / "acme")
    retriever = KnowledgeRetriever(pack)
    retriever.build()
    state: Any = {"values": {}, "last_question": "where is my data stored?"}
    langs, home = [*pack.templates], pack.language
    vectors = {q: retriever._query(q)[2] for q in ENGLISH}
    for q in FOREIGN:  # the encoder loads once, before timing
        retriever.evidence_sync(q)
    samples: dict[str, list[float]] = {}
    index = retriever._current()
    umbrella = Umbrella(pack.company, tuple(p.name for p in pack.products))
    for _ in range(rounds):
        for q in ENGLISH + FOREIGN:
            s = samples.setdefault
            timed(lambda q=q: reply_language(q, "en", home, langs), s("reply_language", []))
            timed(lambda q=q: retrieval_query(pack, q, state), s("follow_up", []))
            timed(lambda q=q: check_scope(pack, q, set()), s("scope_spelling", []))
            timed(lambda q=q: retriever._foreign(q), s("foreign", []))
        for q in ENGLISH:
            qvec = vectors[q]
            timed(lambda q=q: index.spelled(q), samples.setdefault("spelled", []))
            timed(lambda q=q, v=qvec: faq_match(index, q, v), samples.setdefault("faq_match", []))
            best = index.rank(q, 1, "hybrid", qvec)[0][0]
            timed(
                lambda q=q, b=best: value_check(index, q, b), samples.setdefault("value_check", [])
            )
            rows = [r for r, _ in index.rank(q, DEPTH, "hybrid", qvec)]
            timed(lambda r=rows: agreeing_rivals(index, r), samples.setdefault("agreeing", []))
            timed(
                lambda q=q, b=best: umbrella.held_terms(index, q, b),
                samples.setdefault("company_wide", []),
            )
            evidence = retriever.evidence_sync(q)
            timed(
                lambda v=qvec, e=evidence: _asked_match(index, v, e),
                samples.setdefault("asked_match", []),
            )
        for q in ("how much is it?", "is it encrypted?"):
            timed(lambda q=q: retriever.evidence_sync(q), samples.setdefault("follow_up_alone", []))
        for q in FOREIGN:
            lang = retriever._foreign(q) or "es"
            timed(lambda q=q, g=lang: retriever._cross_match(q, g), s("cross_match", []))
    return {
        name: {"p50": round(percentile(v, 50), 3), "p99": round(percentile(v, 99), 3)}
        for name, v in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = run(args.rounds)
    if args.json:
        print(json.dumps(out))
        return
    for name, row in out.items():
        print(f"{name:<16} p50 {row['p50']:>8} ms   p99 {row['p99']:>8} ms")


if __name__ == "__main__":
    main()

"""The scope check: deterministic, no model. The message against the pack's declared scope."""

from __future__ import annotations

from bot.packs import Pack
from bot.text import is_question, matching, normalise
from bot.turn.turn import Scope


def check_scope(pack: Pack, text: str, known_slots: set[str]) -> Scope:
    """Return the record's ``scope`` part: verdict ``in``, ``out`` or ``needs_input`` and the rule.

    Out of scope only when an out-of-scope topic matches and nothing the pack covers does, so
    "does Monitor alert me when it rains" stays in scope.
    """
    norm = normalise(text)
    verdict = _verdict(pack, norm, known_slots)
    verdict["question"] = is_question(text)
    return verdict


def _verdict(pack: Pack, norm: str, known_slots: set[str]) -> Scope:
    covered = [p.key for p in pack.products if matching(norm, p.keywords)]
    covered += [t.key for t in pack.topics if matching(norm, t.keywords)]
    covered += [i.name for i in pack.intents if matching(norm, i.keywords)]
    outside = [r for r in pack.out_of_scope if matching(norm, r.keywords)]
    if outside and not covered:
        rule = outside[0]
        return {"verdict": "out", "rule": f"out_of_scope:{rule.key}", "template": rule.template}
    for intent in pack.intents:
        missing = [s for s in intent.needs if s not in known_slots]
        if missing and matching(norm, intent.keywords):
            return {
                "verdict": "needs_input",
                "rule": f"{intent.name} needs {missing[0]}",
                "slot": missing[0],
            }
    if covered:
        return {"verdict": "in", "rule": "declared:" + ",".join(dict.fromkeys(covered))}
    return {"verdict": "in", "rule": "no_declared_match"}

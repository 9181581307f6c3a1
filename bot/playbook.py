"""The playbook: hard rules, then the outcome rule table, give the legal moves; then a move.

Hard rules come first and cannot be outvoted: hand off when asked, stop after a no, no selling to a
hostile visitor or after a no, no signup ask at low sentiment or too soon after the last one. The
outcome table turns the qualification record into the next step: a thin record names the slots
that block it (the agent asks about those), a full one makes the closing move legal and drops
discovery questions. With no move head, the playbook's preference picks among the legal moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.packs import Pack
from bot.packs.model import OutcomeRule

SELLING = ("propose", "ask_signup")


@dataclass
class Decision:
    legal: list[str]
    rule: str
    move: str = ""
    why: str = ""
    escalate: bool = False
    slot: str | None = None  # for ask: the slot asked about
    outcome: str | None = None  # for propose: the outcome being closed
    options: list[str] = field(default_factory=list)  # for clarify: the likeliest intents
    template: str | None = None

    def choose(self) -> Decision:
        if not self.legal:
            self.legal = ["handoff"]
            self.rule += "; nothing else legal, so hand off"
        self.move = self.legal[0]
        self.why = (
            "forced: the only legal move"
            if len(self.legal) == 1
            else "no move head: the playbook's first preference among legal moves"
        )
        return self


def _calls_for(pack: Pack, intent_name: str) -> str | None:
    """The plain move an intent calls for; None for one that ends, hands off or sells."""
    intent = pack.intent(intent_name)
    if intent is None or intent.outcome or intent.template:
        return None
    move = intent.move or pack.default_move
    return move if move in ("answer", "ask") else None


def _outcome_rule(pack: Pack, outcome: str) -> OutcomeRule | None:
    return next((r for r in pack.outcomes if r.outcome == outcome), None)


def decide(
    pack: Pack,
    state: dict[str, Any],
    scope: dict[str, Any],
    intent_read: dict[str, Any],
    sentiment_read: dict[str, Any],
    seq: int,
) -> Decision:
    if scope["verdict"] == "out":
        return Decision(
            ["decline"], f"scope: {scope['rule']}", template=scope.get("template") or "decline"
        ).choose()
    intent = pack.intent(intent_read["answer"]) if intent_read["outcome"] == "act" else None
    if intent and intent.move == "handoff":
        return Decision(["handoff"], "hard rule: hand off when asked").choose()
    if intent and intent.move == "stop":
        return Decision(["stop"], "hard rule: stop after a no").choose()

    blocked: list[str] = []
    if state.get("stopped"):
        blocked.append("no selling after a no")
    if sentiment_read["outcome"] == "act" and sentiment_read["answer"] == "hostile":
        blocked.append("no selling to a hostile visitor")
    no_signup = sentiment_read.get("score", 0.0) < pack.low_sentiment or (
        seq - state.get("last_signup_seq", -10_000) <= pack.signup_cooldown_turns
    )

    outcome = state.get("outcome") or (intent.outcome if intent else None)
    if outcome and not blocked:
        decision = _qualify(pack, state, outcome, intent.needs if intent else [])
    elif intent:
        move = intent.move or pack.default_move
        if move in SELLING and blocked:
            move = "answer"
        decision = Decision(
            [move, "handoff"], f"intent {intent.name} calls for {move}", template=intent.template
        )
    elif intent_read["outcome"] == "unsure" and intent_read["answer"] not in (None, "none"):
        options = [r["name"] for r in intent_read.get("ranking", [])[:2]]
        calls = {_calls_for(pack, name) for name in options}
        if len(calls) == 1 and None not in calls:
            # Asking "did you mean X or Y?" is pointless when X and Y lead to the same move.
            shared = str(calls.pop())
            decision = Decision(
                [shared, "handoff"],
                f"intent unsure between {' and '.join(options)}; each calls for {shared}",
            )
        else:
            decision = Decision(
                ["clarify", "handoff"], "intent unsure: offer the likeliest few", options=options
            )
    else:
        decision = Decision([pack.default_move, "handoff"], "no confident intent: playbook default")
    if blocked:
        decision.legal = [m for m in decision.legal if m not in SELLING]
        decision.rule += "; hard rule: " + ", ".join(blocked)
    if no_signup and "ask_signup" in decision.legal:
        decision.legal.remove("ask_signup")
        decision.rule += "; hard rule: no signup ask at low sentiment or too soon"
    return decision.choose()


def _qualify(pack: Pack, state: dict[str, Any], outcome: str, intent_needs: list[str]) -> Decision:
    rule = _outcome_rule(pack, outcome)
    needs = list(dict.fromkeys([*(rule.needs if rule else []), *intent_needs]))
    known = state.get("values", {})
    missing = [s for s in needs if s not in known]
    reason = rule.reason if rule else f"outcome {outcome}"
    if missing:
        return Decision(
            ["ask", "handoff"],
            f"outcome table: {outcome} blocked on {', '.join(missing)} ({reason})",
            slot=missing[0],
            outcome=outcome,
        )
    return Decision(
        ["propose"],
        f"outcome table: {outcome} qualified ({reason})",
        outcome=outcome,
        template=f"propose_{outcome}",
    )

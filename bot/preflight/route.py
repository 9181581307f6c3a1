"""From the seven answers to one decision: run a flow, answer an FAQ verbatim, open the escalation
menu, or nothing (the turn runs as without pre-flight). The agent and the replay command both
decide here, so a replay sees exactly what a live turn would do.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.packs import Pack
from bot.preflight.answers import Answer, by_question


@dataclass
class Route:
    kind: str  # flow | faq | person | none
    target: str | None = None  # the flow's name, the FAQ key, the help desk
    confidence: float = 0.0
    why: str = "no answer above its threshold"

    @property
    def label(self) -> str:
        """What the replay compares: ``faq:faq-trial``, ``person:support``, ``none``."""
        return self.kind if self.target is None else f"{self.kind}:{self.target}"


def choose(pack: Pack, answers: list[Answer], scope_verdict: str | None) -> Route:
    """A request for a person first (hand off when asked), then a flow, then an FAQ. An
    out-of-scope message is never routed: the scope check's decline stands."""
    found = by_question(answers)
    if scope_verdict == "out":
        return Route("none", why="out of scope: the scope check declines it")
    person = found.get("person")
    if person and person.above:
        desk = found.get("helpdesk")
        default = pack.default_helpdesk()
        name = desk.answer if desk and desk.above else (default.name if default else None)
        return Route("person", name, person.confidence, "asked for a person")
    flow = found.get("flow")
    if flow and flow.above:
        return Route("flow", str(flow.answer), flow.confidence, "a flow's trigger")
    faq = found.get("faq")
    if faq and faq.above:
        return Route("faq", str(faq.answer), faq.confidence, "a stored FAQ question")
    return Route("none")

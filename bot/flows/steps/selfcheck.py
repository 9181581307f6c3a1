"""The self-check after a message's calls in a repeat step: is any record wrong, is anything
missing?

The records the calls made are read back next to the message, one question per record ("is
this one wrong?") and one for the message ("anything missing?"), each answered as a probability
that yes, something is wrong. Any answer at or above the pack's ``readBackAt`` (0.3 by default)
makes the step read everything back and ask "Is that right?" before going on. So a wrong pick
that got past the repeat gate still has to get past this check and then the customer.

The offline checker weighs evidence a person would: how sure the pick was, whether the phrase
itself named the item or it was inferred, whether the records after the call show what the
phrase asked for, and whether a phrase with something in it was left unread.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.flows.steps.phrases import Reading, substantive
from bot.turn.turn import Read

VERSION = "selfcheck-lexicon@1"
#: How likely an inferred item is wrong, by where it was inferred from.
_INFERRED = {"phrase": 0.0, "message": 0.1, "conversation": 0.15, "question": 0.2, "default": 0.45}


@dataclass
class Made:
    """What one phrase made: its reading, the record's count it expected, the count after."""

    reading: Reading
    item: str
    expected: int | None
    after: int | None


@dataclass
class Check:
    wrong: dict[str, float] = field(default_factory=dict)  # record -> P(wrong)
    why: dict[str, list[str]] = field(default_factory=dict)
    missing: float = 0.05
    unread: list[str] = field(default_factory=list)  # phrases nothing was made of

    def worst(self) -> float:
        return max([self.missing, *self.wrong.values()])

    def reads(self, step_id: str, threshold: float) -> list[Read]:
        """The answers as turn-record reads; ``act`` means "read it back"."""
        out: list[Read] = []
        questions = [(f"wrong:{k}", p) for k, p in self.wrong.items()]
        for question, p in [*questions, ("missing", self.missing)]:
            out.append(
                {
                    "head": f"selfcheck:{step_id}:{question}",
                    "version": VERSION,
                    "answer": "yes" if p >= 0.5 else "no",
                    "confidence": round(p, 4),
                    "gate": "readBackAt",
                    "threshold": threshold,
                    "outcome": "act" if p >= threshold else "skip",
                }
            )
        return out


def check(made: list[Made], readings: list[Reading]) -> Check:
    out = Check()
    for m in made:
        r = m.reading
        reasons = []
        p = 1.0 - r.confidence
        if p > 0.05:
            reasons.append(f"the pick was {r.confidence:.2f} sure")
        inferred = _INFERRED.get(r.item_from, 0.45)
        if inferred > p:
            p = inferred
            reasons.append(f"the phrase did not name the item (taken from the {r.item_from})")
        if m.expected is not None and m.after is not None and m.expected != m.after:
            p = max(p, 0.9)
            reasons.append(f"expected {m.expected}, the records show {m.after}")
        if p > out.wrong.get(m.item, 0.0):
            out.wrong[m.item] = round(p, 4)
        out.why.setdefault(m.item, []).extend(reasons)
    used = {id(m.reading) for m in made}
    for r in readings:
        if id(r) in used or r.pick in ("undo", "done"):
            continue
        if r.cues or r.quantity is not None or r.item_from == "phrase":
            out.missing = max(out.missing, 0.8)
            out.unread.append(r.phrase)
        elif substantive(r.phrase):
            out.missing = max(out.missing, 0.4)
            out.unread.append(r.phrase)
    return out

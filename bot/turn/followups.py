"""What "unsure" leads to, turn over turn: value checks, asking again, counting misses.

A value read below its gate is not dropped: the likeliest candidate is checked with the customer
("Just to check, is your order number 5843990922?"), and the reply is read as yes or no against
the yesNo gate. A slot asked for and still missing counts a miss; the playbook turns misses into
asking again once, an alternative slot, then a person.
"""

from __future__ import annotations

from bot.turn import yesno
from bot.turn.decide import Decision
from bot.turn.turn import ConversationState, Read, ValueEntry


def resolve_check(
    state: ConversationState, text: str, gate: float, seq: int
) -> tuple[Read | None, ValueEntry | None]:
    """Read the reply to a value check. Returns (the yes/no reading, the value entry) or Nones."""
    check = state.get("check")
    if not check or not check.get("asked"):
        return None, None
    read = yesno.read(text, "yesNo", gate)
    outcome, answer = read["outcome"], read["answer"]
    slot, value = check["slot"], check["value"]
    entry: ValueEntry = {
        "slot": slot,
        "value": None,
        "source": "customer",
        "outcome": "skip",
        "rejected": [],
    }
    if outcome == "act" and answer == "yes":
        state["values"][slot] = {"value": value, "source": "customer", "seq": seq}
        entry["value"], entry["outcome"] = value, "act"
        del state["check"]
    elif outcome == "act":
        entry["rejected"].append({"value": value, "reason": "the customer said it is wrong"})
        misses = state.setdefault("slot_misses", {})
        misses[slot] = max(1, misses.get(slot, 0) + 1)
        del state["check"]
    else:
        entry["outcome"] = "unsure"
        check["tries"] = check.get("tries", 0) + 1
    return read, entry


def resolve_offer(state: ConversationState, text: str, gate: float) -> Read | None:
    """Read the reply to "would you like me to bring in a person?". A confident yes is accepted
    (the decide stage hands off); anything else declines it, the turn goes on, and the offer is
    not made again unasked (a request for a person is always served)."""
    if state.get("offered_person") != "offered":
        return None
    read = yesno.read(text, "yesNo", gate)
    if read["outcome"] == "act" and read["answer"] == "yes":
        state["offered_person"] = "accepted"
    else:
        state["offered_person"] = "declined"
    return read


def note_values(
    state: ConversationState, entries: list[ValueEntry], other_request: bool, checked: bool
) -> None:
    """After this turn's values: open a check for an unsure answer, or count a miss. A turn that
    answered a check has been counted already."""
    asked = state.get("asked_slot")
    if not asked or "check" in state or checked:
        return
    for entry in entries:
        if entry["slot"] == asked and entry["outcome"] == "unsure" and entry["rejected"]:
            state["check"] = {
                "slot": asked,
                "value": entry["rejected"][-1]["value"],
                "tries": 0,
                "asked": False,
            }
            return
    if asked not in state["values"] and not other_request:
        # A question answered with something else entirely; a new question is not a miss.
        misses = state.setdefault("slot_misses", {})
        misses[asked] = misses.get(asked, 0) + 1


def after_move(state: ConversationState, decision: Decision, text: str) -> None:
    """What the chosen move leaves pending for the next turn."""
    move = decision.move
    waiting = state.get("outcome") or state.get("pending_intent")
    if move in ("ask", "confirm"):
        state["asked_slot"] = decision.slot
        if move == "ask":
            state["outcome"] = decision.outcome
            if decision.intent and state.get("pending_intent") != decision.intent:
                # Remember the question itself: it is answered once its slots are known.
                state["pending_intent"], state["pending_question"] = decision.intent, text
    elif move == "answer" and decision.question is None and waiting:
        pass  # a side question answered; what we asked for is still awaited
    else:
        state["asked_slot"] = None
        if move in ("propose", "stop", "handoff"):
            state["outcome"] = None
        state.pop("pending_intent", None)
        state.pop("pending_question", None)
    if move == "confirm" and "check" in state:
        state["check"]["asked"] = True
    elif move == "handoff":
        state.pop("check", None)
    state["clarify_misses"] = state.get("clarify_misses", 0) + 1 if move == "clarify" else 0

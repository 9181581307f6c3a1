"""A hand-off nobody has taken yet: what the customer is told, and what their messages do.

After a hand-off the conversation waits for a person (``status == "handed_off"``, not paused).
The agent does not carry on as if nothing happened: each customer message is stored and relayed
to the desk's thread, and the only reply is the pack's waiting line (the team has been told and
will answer here, with the desk's hours when the pack declares them). Choosing a team from the
escalation menu (its button says the option's label) moves the escalation to that desk. Staff
taking over pauses the conversation; handing back or resolving ends the wait.
"""

from __future__ import annotations

from typing import Any

from bot.packs.model import HelpDesk, Pack
from bot.store import Conversation
from bot.turn.act import Acted, text_reply
from bot.turn.decide import Decision
from bot.turn.turn import ConversationState, Turn

RULE = "waiting: a person has been asked and nobody has taken over yet"
#: Said while waiting; a pack without it says its hand-off line again.
WAITING = "handoff_waiting"
#: Appended when the desk declares hours: ``{hours}`` is the desk's, in the customer's language.
HOURS = "handoff_hours"
#: The escalation menu's choices, kept in the state so a click (or the same words) picks one.
MENU = "escalation_menu"


def is_waiting(conv: Conversation) -> bool:
    return conv.status == "handed_off" and not conv.paused


def _line(pack: Pack, name: str, language: str, **values: str) -> str | None:
    if name not in pack.templates[pack.language]:
        return None
    return pack.template(name, language, **values)


def hours_line(pack: Pack, desk: HelpDesk | None, language: str) -> str | None:
    """When the desk's people answer, as the pack words it; None without hours or template."""
    hours = desk.hours_in(language, pack.language) if desk is not None else None
    return _line(pack, HOURS, language, hours=hours) if hours else None


def waiting_line(pack: Pack, desk: HelpDesk | None, language: str) -> str:
    said = _line(pack, WAITING, language) or pack.template("handoff", language)
    hours = hours_line(pack, desk, language)
    return f"{said} {hours}" if hours else said


def with_hours(replies: list[dict[str, Any]], pack: Pack, desk: HelpDesk | None, lang: str) -> None:
    """The hand-off's own words, with the desk's hours after them (what happens next, plainly)."""
    hours = hours_line(pack, desk, lang)
    first = next((r for r in replies if r.get("type") == "text"), None)
    if hours and first is not None and not first["text"].endswith(hours):
        first["text"] = f"{first['text']} {hours}"


def tell_what_next(pack: Pack, turn: Turn, acted: Acted, language: str) -> None:
    """A hand-off tells the customer plainly what happens next: the desk's hours after the
    pack's words; the escalation menu's choices are kept for the click that picks one."""
    esc = turn.escalation
    if esc is None:
        return
    desk = pack.helpdesk_named(esc.desk) or pack.helpdesk_for(esc.kind)
    with_hours(acted.replies, pack, desk, language)
    remember_menu(turn.state, acted.replies)
    said = [r["text"] for r in acted.replies if r["type"] == "text"]
    turn.record["reply"]["text"] = "\n".join(said)


def waiting_move(
    pack: Pack, state: ConversationState, text: str, desk: HelpDesk | None, language: str
) -> tuple[Decision, Acted, HelpDesk | None]:
    """A waiting turn's move (a hand-off already under way), its one reply, and the desk the
    message chose from the escalation menu, if it chose one."""
    chosen = chosen_desk(pack, state, text)
    if chosen is not None and desk is not None and chosen.name == desk.name:
        chosen = None  # the desk that already has it: nothing to move
    decision = Decision(["handoff"], RULE)
    decision.move = "handoff"
    decision.why = (
        f"chose the {chosen.name} help desk from the escalation menu; the escalation moves there"
        if chosen is not None
        else "a person has the conversation's escalation: the message is relayed to the desk"
    )
    line = waiting_line(pack, chosen or desk, language)
    acted = Acted([text_reply(line)])
    acted.reply["text"] = line
    return decision, acted, chosen


def remember_menu(state: ConversationState, replies: list[dict[str, Any]]) -> None:
    """Keep the escalation menu's options (desk and label) for the click that picks one."""
    for reply in replies:
        if reply.get("card") == MENU:
            options = [o for o in reply.get("options") or [] if isinstance(o, dict)]
            state["escalation_menu"] = [
                {"helpdesk": str(o.get("helpdesk")), "label": str(o.get("label"))} for o in options
            ]


def chosen_desk(pack: Pack, state: ConversationState, text: str) -> HelpDesk | None:
    """The desk a message picks from the escalation menu: its label or its name, exactly."""
    said = " ".join(text.split()).casefold()
    for option in state.get("escalation_menu", []):
        names = (option.get("label", ""), option.get("helpdesk", ""))
        if said and said in (" ".join(n.split()).casefold() for n in names):
            return pack.helpdesk_named(option.get("helpdesk"))
    return None

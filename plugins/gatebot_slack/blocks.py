"""Block Kit rendering: gatebot's replies and cards, and the help-desk post with its buttons.

Pure functions from the reply dicts the agent produces (``{"type": "text", ...}`` or
``{"type": "card", "card": "contact" | "booking", ...}``) to what ``chat.postMessage`` takes: a
plain-text fallback (what notifications and old clients show) and a list of blocks. Also owns
the action ids of the help-desk buttons, which carry the escalation's id.
"""

from __future__ import annotations

import re
from typing import Any

from bot.outcomes import KINDS

Block = dict[str, Any]

#: Slack's limits: a section's text, a button's label, a message's blocks.
SECTION_LIMIT = 3000
CONTEXT_LIMIT = 2000
BUTTON_LABEL_LIMIT = 75
URL_LIMIT = 3000
MAX_BLOCKS = 50

#: Help-desk controls: ``gatebot:<verb>:<escalation id>``. Resolve is a menu of outcome kinds:
#: the one chosen is recorded as the conversation's outcome (a label heads are scored against).
DESK_VERBS = {"take_over": "Take over", "hand_back": "Hand back", "resolve": "Resolve"}
RESOLVE_PLACEHOLDER = "Resolve as…"
DESK_ACTION = re.compile(r"^gatebot:(take_over|hand_back|resolve):(\d+)$")
#: Link buttons (mailto, booking page). Slack still sends a click on them to the app, which
#: must acknowledge it or the user sees a warning.
LINK_ACTION = re.compile(r"^gatebot:link:")
#: The answer path's offer of a person: clicking sends the button's value as the customer's
#: message (the pack's own words for asking for one, which its hand-off intent reads).
OFFER_PERSON_ACTION = "gatebot:offer_person"
#: The escalation menu's team buttons (``gatebot:menu:<n>``): a click says the option's label
#: as the customer's message, as the offer_person button does. Slack shows 25 per actions block.
MENU_ACTION_PREFIX = "gatebot:menu:"
MENU_ACTION = re.compile(r"^gatebot:menu:\d+$")
MENU_BUTTONS = 25

_EMAIL = re.compile(r"^[^\s@<>|&\"]+@[^\s@<>|&\"]+$")


def escape(text: str) -> str:
    """Slack's three control characters. Customer text is escaped so that ``<!channel>`` or a
    crafted ``<https://...|label>`` in a message cannot ping a channel or disguise a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _chunks(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, split at line ends where possible."""
    pieces: list[str] = []
    while len(text) > limit:
        cut = text.rfind("\n", 0, limit)
        cut = cut if cut > 0 else limit
        pieces.append(text[:cut])
        text = text[cut:].lstrip("\n")
    if text:
        pieces.append(text)
    return pieces


def sections(text: str) -> list[Block]:
    """Escaped mrkdwn sections for ``text``, however long."""
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": chunk}}
        for chunk in _chunks(escape(text), SECTION_LIMIT)
    ]


def _context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text[:CONTEXT_LIMIT]}]}


def _link_button(label: str, url: str, name: str) -> Block:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": label[:BUTTON_LABEL_LIMIT]},
        "url": url,
        "action_id": f"gatebot:link:{name}",
    }


def _fallback(text: str) -> str:
    return text[:SECTION_LIMIT]


def render_replies(replies: list[dict[str, Any]]) -> list[tuple[str, list[Block]]]:
    """A turn's replies as the messages to post: each reply one message, except that an
    offer_person button goes under the words before it (one message, as the customer reads it)."""
    out: list[tuple[str, list[Block]]] = []
    for reply in replies:
        rendered = render_reply(reply)
        if rendered is None:
            continue
        offer = reply.get("type") == "card" and reply.get("card") == "offer_person"
        if offer and out and len(out[-1][1]) < MAX_BLOCKS:
            out[-1][1].extend(rendered[1])
        else:
            out.append(rendered)
    return out


def render_reply(reply: dict[str, Any]) -> tuple[str, list[Block]] | None:
    """One reply as (fallback text, blocks); None for a reply with nothing to show."""
    if reply.get("type") == "card":
        return _card(reply)
    text = reply.get("text")
    if not isinstance(text, str) or not text.strip():
        return None
    blocks = sections(text)
    titles: list[str] = []
    for cite in reply.get("citations") or []:
        title = cite.get("title") or cite.get("key") if isinstance(cite, dict) else None
        if isinstance(title, str) and title and title not in titles:
            titles.append(title)
    if titles:
        label = "Sources" if len(titles) > 1 else "Source"
        blocks.append(_context(f"{label}: " + " · ".join(escape(t) for t in titles)))
    if reply.get("role") == "staff":
        name = str(reply.get("author_name") or "").strip()
        who = f"{escape(name)}, a person from the team," if name else "A person from the team"
        blocks.append(_context(f"_{who} wrote this._"))
    return _fallback(text), blocks[:MAX_BLOCKS]


def _escalation_menu(reply: dict[str, Any]) -> tuple[str, list[Block]]:
    """Pre-flight's escalation menu: the desk that has the conversation (already escalated to
    it), then a button per team there is, the recommended one marked. A click says the option's
    label as the customer's message, which moves the escalation to that team."""
    desk = str(reply.get("helpdesk") or "support")
    body = f"*A person will take over*\nThe {desk} team has your conversation."
    buttons: list[Block] = []
    options = [o for o in reply.get("options") or [] if isinstance(o, dict)]
    for i, option in enumerate(options[:MENU_BUTTONS]):
        label = str(option.get("label") or option.get("helpdesk") or "")
        button: Block = {
            "type": "button",
            "text": {"type": "plain_text", "text": label[:BUTTON_LABEL_LIMIT]},
            "action_id": f"{MENU_ACTION_PREFIX}{i}",
            "value": label[:2000],
        }
        if option.get("recommended"):
            button["style"] = "primary"
        buttons.append(button)
    blocks = sections(body)[: MAX_BLOCKS - 1]
    if buttons:
        blocks.append({"type": "actions", "elements": buttons})
    return f"A person from {desk} will take over", blocks


def _offer_person(reply: dict[str, Any]) -> tuple[str, list[Block]]:
    label = str(reply.get("label") or "Talk to a person")[:BUTTON_LABEL_LIMIT]
    message = str(reply.get("message") or "I want to talk to a person")[:2000]
    button: Block = {
        "type": "button",
        "text": {"type": "plain_text", "text": label},
        "action_id": OFFER_PERSON_ACTION,
        "value": message,
        "style": "primary",
    }
    return label, [{"type": "actions", "elements": [button]}]


def _card(reply: dict[str, Any]) -> tuple[str, list[Block]] | None:
    kind = reply.get("card")
    if kind == "escalation_menu":
        return _escalation_menu(reply)
    if kind == "offer_person":
        return _offer_person(reply)
    if kind == "booking":
        url = reply.get("url")
        body = "*Book a time*\nPick a slot that suits you."
        blocks: list[Block] = [{"type": "section", "text": {"type": "mrkdwn", "text": body}}]
        linkable = isinstance(url, str) and url.startswith(("https://", "http://"))
        if linkable and isinstance(url, str) and len(url) <= URL_LIMIT:
            blocks.append(
                {"type": "actions", "elements": [_link_button("Open booking page", url, "booking")]}
            )
            return f"Book a time: {url}", blocks
        if isinstance(url, str) and url:
            blocks.extend(sections(url))
        return "Book a time", blocks
    if kind == "contact":
        contact = reply.get("contact") if isinstance(reply.get("contact"), str) else ""
        outcome = reply.get("outcome")
        why = f"Write to us about your {outcome}." if outcome else "Write to us any time."
        body = f"*Get in touch*\n{escape(why)}"
        if contact and _EMAIL.match(contact):
            # The address is a link in the text too: it works wherever the button does not.
            body += f" <mailto:{contact}|{contact}>"
        blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": body}}]
        if contact and _EMAIL.match(contact):
            blocks.append(
                {
                    "type": "actions",
                    "elements": [_link_button(contact, f"mailto:{contact}", "contact")],
                }
            )
            return f"Get in touch: {contact}", blocks
        if contact:
            blocks.extend(sections(contact))
        return "Get in touch", blocks
    text = reply.get("text")
    if isinstance(text, str) and text.strip():
        return _fallback(text), sections(text)[:MAX_BLOCKS]
    return None


def desk_action_id(verb: str, escalation_id: int) -> str:
    return f"gatebot:{verb}:{escalation_id}"


def parse_desk_action(action_id: str) -> tuple[str, int] | None:
    """(verb, escalation id) of a help-desk button, or None for any other action."""
    match = DESK_ACTION.match(action_id)
    return (match.group(1), int(match.group(2))) if match else None


def desk_outcome(action: dict[str, Any]) -> str | None:
    """The outcome kind a Resolve control carries: the menu's chosen option, or ``resolved`` for
    the plain Resolve button of a post made before the menu; None for anything else."""
    chosen = action.get("selected_option")
    if chosen is None:
        return "resolved" if action.get("type", "button") == "button" else None
    value = chosen.get("value") if isinstance(chosen, dict) else None
    return value if value in KINDS else None


def _resolve_menu(escalation_id: int) -> Block:
    return {
        "type": "static_select",
        "action_id": desk_action_id("resolve", escalation_id),
        "placeholder": {"type": "plain_text", "text": RESOLVE_PLACEHOLDER},
        "options": [
            {"text": {"type": "plain_text", "text": kind}, "value": kind} for kind in KINDS
        ],
    }


def escalation(escalation_id: int, summary: str) -> tuple[str, list[Block]]:
    """The help-desk post: the summary, then Take over / Hand back and the Resolve menu."""
    buttons: list[Block] = []
    for verb, label in DESK_VERBS.items():
        if verb == "resolve":
            buttons.append(_resolve_menu(escalation_id))
            continue
        button: Block = {
            "type": "button",
            "text": {"type": "plain_text", "text": label},
            "action_id": desk_action_id(verb, escalation_id),
            "value": str(escalation_id),
        }
        if verb == "take_over":
            button["style"] = "primary"
        buttons.append(button)
    body = sections(summary)[: MAX_BLOCKS - 2]
    blocks = [
        *body,
        _context("Reply in this thread to write to the customer; replying takes the conversation."),
        {"type": "actions", "block_id": f"gatebot-desk-{escalation_id}", "elements": buttons},
    ]
    first_line = summary.splitlines()[0] if summary else f"Escalation #{escalation_id}"
    return _fallback(first_line), blocks


_MARKUP = re.compile(r"<([^<>]+)>")


def _unmark(match: re.Match[str]) -> str:
    target, _, label = match.group(1).partition("|")
    if target[:1] in ("@", "#"):  # <@U1>, <#C1|general>
        return target[0] + (label or target[1:])
    if target.startswith("!"):  # <!here>, <!subteam^S1|@team>
        return label or "@" + target[1:]
    return f"{label} ({target})" if label and label != target else target


def plain_text(text: str) -> str:
    """Slack's message markup as plain text, for the agent and for a customer on another
    channel: ``<url|label>`` becomes ``label (url)``, ``<@U1>`` becomes ``@U1``, and the three
    escaped characters come back."""
    text = _MARKUP.sub(_unmark, text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")

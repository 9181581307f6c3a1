"""Rendering for Discord: gatebot replies and escalations as message content, embeds and views.

Owns everything about how a message looks on Discord and nothing about sending it: text replies
(split to Discord's 2,000-character limit, sources as a small line), cards as embeds with link
buttons, staff replies with their author, and the help-desk post with its Take over / Hand back
buttons and its Resolve menu of outcome kinds, whose custom ids this module also encodes and
parses. Pure: no client, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import discord

from bot.outcomes import KINDS

#: Discord's limits (message content, embed description, embed title, thread name).
MAX_CONTENT = 2000
MAX_DESCRIPTION = 4096
MAX_TITLE = 256
MAX_THREAD_NAME = 100

TAKE_OVER, HAND_BACK, RESOLVE = "take_over", "hand_back", "resolve"
ACTIONS = (TAKE_OVER, HAND_BACK, RESOLVE)
LABELS = {TAKE_OVER: "Take over", HAND_BACK: "Hand back", RESOLVE: "Resolve"}
_STYLES = {
    TAKE_OVER: discord.ButtonStyle.primary,
    HAND_BACK: discord.ButtonStyle.secondary,
    RESOLVE: discord.ButtonStyle.success,
}
#: Resolve is a select menu: the kind chosen is recorded as the conversation's outcome.
RESOLVE_PLACEHOLDER = "Resolve as…"
# The escalation id travels in the custom id, so a press is understood from the id alone: the
# buttons keep working after a restart without re-registering any view.
_CUSTOM_ID = re.compile(r"^gatebot:desk:(take_over|hand_back|resolve):(\d{1,18})$")
_EMAIL = re.compile(r"^[^\s@<>\"]+@[^\s@<>\"]+$")
#: The answer path's offer of a person: the custom id carries what a click says for the
#: customer (the pack's words for asking for a person), within Discord's 100 characters.
OFFER_PERSON = "gatebot:offer:"


@dataclass
class Outgoing:
    """One Discord message to send: content and/or embeds, and the view with its buttons."""

    content: str | None = None
    embeds: list[discord.Embed] = field(default_factory=list)
    view: discord.ui.View | None = None

    def send_kwargs(self) -> dict[str, Any]:
        """Arguments for ``Messageable.send`` (never ``view=None``: its overloads refuse it)."""
        kwargs: dict[str, Any] = {"content": self.content, "embeds": self.embeds}
        if self.view is not None:
            kwargs["view"] = self.view
        return kwargs


def custom_id(action: str, escalation_id: int) -> str:
    return f"gatebot:desk:{action}:{escalation_id}"


def parse_custom_id(value: str) -> tuple[str, int] | None:
    """(action, escalation id) from a help-desk button's custom id; None for anyone else's."""
    match = _CUSTOM_ID.match(value)
    return (match.group(1), int(match.group(2))) if match else None


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def split_text(text: str, limit: int = MAX_CONTENT) -> list[str]:
    """Chunks of at most ``limit`` characters, cut at a line break, else a space, if one is near."""
    chunks: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        cut = rest.rfind("\n", limit // 2, limit)
        if cut < 0:
            cut = rest.rfind(" ", limit // 2, limit)
        if cut < 0:
            cut = limit
        chunks.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        chunks.append(rest)
    return chunks


def _web_url(url: Any) -> str | None:
    # Discord refuses link buttons (and embed links) whose scheme is not http or https.
    if not isinstance(url, str):
        return None
    parts = urlsplit(url)
    return url if parts.scheme in ("http", "https") and parts.netloc else None


def _sources(reply: dict[str, Any]) -> list[str]:
    titles: list[str] = []
    for citation in reply.get("citations") or []:
        title = (citation or {}).get("title") or (citation or {}).get("key")
        if isinstance(title, str) and title and title not in titles:
            titles.append(title)
    return titles


def render_text(reply: dict[str, Any], staff_name: Callable[[str], str]) -> list[Outgoing]:
    text = str(reply.get("text") or "").strip()
    if not text:
        return []
    if reply.get("role") == "staff":
        author = str(reply.get("author") or "")
        given = str(reply.get("author_name") or "")
        # The name the desk gave (a display name) unless it is only the id again.
        name = discord.utils.escape_markdown(
            given if given and given != author else staff_name(author)
        )
        text = f"**{name}** (staff): {text}"
    titles = _sources(reply)
    if titles:
        label = "Sources" if len(titles) > 1 else "Source"
        text += f"\n-# {label}: " + " · ".join(titles)  # -# is Discord's small print
    return [Outgoing(content=chunk) for chunk in split_text(text)]


def render_card(reply: dict[str, Any]) -> Outgoing | None:
    """A card as an embed; its link, when Discord allows one, as a link button."""
    card = reply.get("card")
    view = discord.ui.View(timeout=None)
    if card == "booking":
        embed = discord.Embed(title="Book a time", description="Pick a slot that suits you.")
        url = _web_url(reply.get("url"))
        if url:
            view.add_item(discord.ui.Button(label="Open booking page", url=url))
        elif reply.get("url"):
            embed.add_field(name="Booking", value=truncate(str(reply["url"]), 1024))
    elif card == "contact":
        outcome = reply.get("outcome")
        about = f"Write to us about your {outcome}." if outcome else "Write to us any time."
        embed = discord.Embed(title="Get in touch", description=about)
        contact = str(reply.get("contact") or "").strip()
        url = _web_url(contact)
        if url:
            view.add_item(discord.ui.Button(label="Contact us", url=url))
        elif _EMAIL.match(contact):
            # A mailto: link button is refused by Discord (http/https only), so the address is
            # shown as text the customer can copy.
            embed.add_field(name="Email", value=f"`{contact}`")
        elif contact:
            embed.add_field(name="Contact", value=truncate(contact, 1024))
    elif card == "escalation_menu":
        return _escalation_menu(reply)
    elif card == "offer_person":
        return _offer_person(reply)
    elif reply.get("text"):
        embed = discord.Embed(description=truncate(str(reply["text"]), MAX_DESCRIPTION))
    else:
        return None
    return Outgoing(embeds=[embed], view=view if view.children else None)


def _offer_person(reply: dict[str, Any]) -> Outgoing:
    label = truncate(str(reply.get("label") or "Talk to a person"), 80)
    message = str(reply.get("message") or "I want to talk to a person")[: 100 - len(OFFER_PERSON)]
    view = discord.ui.View(timeout=None)
    button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
        label=label, style=discord.ButtonStyle.primary, custom_id=OFFER_PERSON + message
    )
    view.add_item(button)
    return Outgoing(view=view)


def offered_message(value: str) -> str | None:
    """What an offer_person button says for the customer; None for any other component."""
    return value[len(OFFER_PERSON) :] or None if value.startswith(OFFER_PERSON) else None


def _escalation_menu(reply: dict[str, Any]) -> Outgoing:
    """Pre-flight's escalation menu: the desk that has the conversation, and a button per team
    there is (the recommended one primary). A click says the option's label for the customer,
    as the offer_person button does (its name when the label outgrows a custom id), which moves
    the escalation to that team."""
    desk = str(reply.get("helpdesk") or "support")
    embed = discord.Embed(
        title="A person will take over", description=f"The {desk} team has your conversation."
    )
    view = discord.ui.View(timeout=None)
    options = [o for o in reply.get("options") or [] if isinstance(o, dict)]
    for option in options[:25]:  # Discord allows 25 components in a message
        name = str(option.get("helpdesk") or "team")
        label = str(option.get("label") or name)
        said = label if len(OFFER_PERSON + label) <= 100 else name
        style = discord.ButtonStyle.primary if option.get("recommended") else None
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=truncate(label, 80),
            style=style or discord.ButtonStyle.secondary,
            custom_id=(OFFER_PERSON + said)[:100],
        )
        view.add_item(button)
    return Outgoing(embeds=[embed], view=view if view.children else None)


def render_replies(
    replies: list[dict[str, Any]], staff_name: Callable[[str], str] = lambda _id: "Staff"
) -> list[Outgoing]:
    """Every reply of a turn (or a staff relay) as the Discord messages that show it, in order."""
    out: list[Outgoing] = []
    for reply in replies:
        if reply.get("type") == "card":
            card = render_card(reply)
            if card is not None and reply.get("card") == "offer_person" and _takes_view(out):
                out[-1].view = card.view  # the button goes under the words that offer it
            elif card is not None:
                out.append(card)
        else:
            out.extend(render_text(reply, staff_name))
    return out


def _takes_view(out: list[Outgoing]) -> bool:
    return bool(out) and out[-1].view is None


def chosen_outcome(data: Any) -> str | None:
    """The outcome kind a Resolve press carries: the menu's choice, or ``resolved`` for the plain
    Resolve button of a post made before the menu; None for a value that is no kind."""
    values = data.get("values") if isinstance(data, dict) else None
    if values is None:
        return "resolved"
    return (
        values[0] if isinstance(values, list) and len(values) == 1 and values[0] in KINDS else None
    )


def _resolve_menu(escalation_id: int) -> discord.ui.Select[discord.ui.View]:
    options = [discord.SelectOption(label=kind, value=kind) for kind in KINDS]
    return discord.ui.Select(
        custom_id=custom_id(RESOLVE, escalation_id),
        placeholder=RESOLVE_PLACEHOLDER,
        options=options,
        row=1,
    )


def escalation_post(escalation_id: int, kind: str, summary: str) -> Outgoing:
    """The help desk's view of an escalation: the summary as an embed, the Take over and Hand back
    buttons, and the Resolve menu."""
    embed = discord.Embed(
        title=truncate(f"Escalation #{escalation_id} ({kind})", MAX_TITLE),
        description=truncate(summary, MAX_DESCRIPTION),
        colour=discord.Colour.orange(),
    )
    embed.set_footer(text="Take over, then write in this thread: the customer sees what you write.")
    view = discord.ui.View(timeout=None)
    for action in (TAKE_OVER, HAND_BACK):
        view.add_item(
            discord.ui.Button(
                label=LABELS[action],
                style=_STYLES[action],
                custom_id=custom_id(action, escalation_id),
            )
        )
    view.add_item(_resolve_menu(escalation_id))
    return Outgoing(embeds=[embed], view=view)


def thread_name(text: str) -> str:
    return truncate(" ".join(text.split()) or "Conversation", MAX_THREAD_NAME)

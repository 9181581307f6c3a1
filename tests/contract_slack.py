"""The channel contract's Slack driver: the customer writes to the bot in a direct-message thread.

What is real: slack-bolt's AsyncApp in HTTP mode behind the bot's own aiohttp server (every
delivery a signed ``POST /slack/events``, its signature checked), slack-sdk's Web API client, and
gatebot's Slack adapter, agent and store. What stands in for Slack: ``tests/slack_server.py``,
whose recorded ``chat.postMessage`` calls in the customer's thread are what the customer
received. The bot, the loopback Slack (whose help-desk channel C0SUPPORT lists the staff member
``U_STAFF``) and the signed deliveries are the Slack tests' own, reused from ``tests/test_slack``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot.app import App
from tests import test_slack
from tests.test_slack import DM, STAFF, Bot, dm

#: The Slack tests' fixtures, under their own names, so a module that imports them can request
#: them (pytest finds fixtures by name in the test's module).
slack = test_slack.slack
bot = test_slack.bot

_SOURCES = re.compile(r"^Sources?: (?P<titles>.+)$", re.S)
#: "_A person from the team wrote this._", or "_Sam Lee, a person from the team, wrote this._"
_STAFF_NOTE = re.compile(r"^_(?:.+, a person|A person) from the team(?:,)? wrote this\._$", re.S)
_OUTCOME = re.compile(r"Write to us about your (?P<outcome>.+?)\.")


def _unescape(text: str) -> str:
    """Block Kit text as the customer reads it (the three characters ``blocks.escape`` wrote)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def from_block_kit(body: dict[str, Any]) -> dict[str, Any] | None:
    """One ``chat.postMessage`` as the reply it shows: a text, or a contact or booking card."""
    blocks: list[dict[str, Any]] = body.get("blocks") or []
    if not blocks:  # blocks refused, or never sent: the customer sees the plain text
        text = body.get("text") or ""
        return {"type": "text", "text": text} if text else None
    sections = [_unescape(b["text"]["text"]) for b in blocks if b.get("type") == "section"]
    links = {
        str(element.get("action_id", "")).removeprefix("gatebot:link:"): element.get("url")
        for block in blocks
        if block.get("type") == "actions"
        for element in block.get("elements", [])
    }
    notes = [
        str(element.get("text", ""))
        for block in blocks
        if block.get("type") == "context"
        for element in block.get("elements", [])
    ]
    heading = sections[0] if sections else ""
    if heading.startswith("*Get in touch*") or "contact" in links:
        card: dict[str, Any] = {"type": "card", "card": "contact"}
        if links.get("contact"):
            card["contact"] = str(links["contact"]).removeprefix("mailto:")
        elif len(sections) > 1:
            card["contact"] = "\n".join(sections[1:])
        if outcome := _OUTCOME.search(heading):
            card["outcome"] = outcome["outcome"]
        return card
    if heading.startswith("*Book a time*") or "booking" in links:
        card = {"type": "card", "card": "booking"}
        url = links.get("booking") or ("\n".join(sections[1:]) if len(sections) > 1 else None)
        if url:
            card["url"] = url
        return card
    reply: dict[str, Any] = {"type": "text", "text": "\n".join(sections)}
    for note in notes:
        if _STAFF_NOTE.match(note):
            reply["role"] = "staff"
        elif sources := _SOURCES.match(note):
            titles = _unescape(sources["titles"]).split(" · ")
            reply["citations"] = [{"title": title} for title in titles]
    return reply


class SlackDriver:
    """A Slack customer in a DM: the first message starts a thread, later ones go into it."""

    staff = STAFF  # a member of C0SUPPORT, the sample pack's (Slack) support desk

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.app: App = bot.app
        self.thread_ts: str | None = None
        #: Each delivery's event as Slack first sent it, by delivery id: a retry resends it.
        self.events: dict[str, dict[str, Any]] = {}

    async def say(self, text: str, delivery_id: str) -> None:
        event = self.events.get(delivery_id)
        retry: int | None = None
        if event is None:
            ts = f"100.{len(self.events) + 1}"
            event = self.events[delivery_id] = dm(text, ts, thread_ts=self.thread_ts)
            self.thread_ts = self.thread_ts or ts
        else:
            assert event["text"] == text, "a retried delivery resends the same event"
            retry = 1  # X-Slack-Retry-Num: 1, as Slack sends a delivery it thinks was lost
        status, answer = await self.bot.event(event, f"Ev{delivery_id}", retry=retry)
        assert status == 200, answer
        await self.bot.settle()

    async def received(self) -> list[dict[str, Any]]:
        await self.bot.settle()
        if self.thread_ts is None:
            return []
        posts = self.bot.slack.calls_to("chat.postMessage", channel=DM, thread_ts=self.thread_ts)
        return [reply for post in posts if (reply := from_block_kit(post.body)) is not None]

    def conversation_id(self) -> str:
        conv = self.app.store.find_conversation("slack", f"{DM}:{self.thread_ts}")
        assert conv is not None, "no conversation for the customer's thread"
        return conv.id


@pytest.fixture
def slack_driver(bot: Bot) -> SlackDriver:
    return SlackDriver(bot)

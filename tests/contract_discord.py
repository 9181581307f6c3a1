"""The channel contract's Discord driver: the customer mentions the bot in a channel, and goes on
in the thread the bot opens for the answer.

What is real: discord.py's client, its gateway parser and event dispatch, its Message, Thread
and Embed objects and its send and create_thread code; gatebot's Discord adapter (attached to
that client), agent, store and help desks. What stands in for Discord: dpytest's fake HTTP API
and gateway, with the thread support the Discord tests add to it; the world (a guild with
#general, a #sales-desk, the customer dana and the staff member sam) and the sample pack whose
default help desk is that desk channel are the Discord tests' own, reused from
``tests/test_discord``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import discord
import discord.ext.test as dpytest
import gatebot_discord
import pytest
from discord.ext.test import backend
from gatebot_discord.channel import DiscordChannel

from bot.app import App
from bot.config import Settings
from tests import test_discord
from tests.test_discord import World, bounded, buttons, mention, say, write_pack

#: The Discord tests' world fixture, under its own name, so a module that imports it can request
#: it (pytest finds fixtures by name in the test's module).
world = test_discord.world

_STAFF = re.compile(r"\A\*\*(?P<name>.*?)\*\* \(staff\): ", re.S)
_SOURCES = re.compile(r"\n-# Sources?: (?P<titles>[^\n]*)\Z")
_OUTCOME = re.compile(r"Write to us about your (?P<outcome>.+?)\.")
_MARKDOWN_ESCAPE = re.compile(r"\\(.)")


def from_discord(world: World, message: discord.Message) -> dict[str, Any] | None:
    """One message the bot sent, as the reply it shows: a text, or a contact or booking card."""
    if message.embeds:
        embed = message.embeds[0]
        fields = {field.name: str(field.value or "") for field in embed.fields}
        links = buttons(world, message)
        if embed.title == "Get in touch":
            card: dict[str, Any] = {"type": "card", "card": "contact"}
            contact = links.get("Contact us") or fields.get("Email") or fields.get("Contact")
            if contact:
                card["contact"] = contact.strip("`")
            if outcome := _OUTCOME.search(embed.description or ""):
                card["outcome"] = outcome["outcome"]
            return card
        if embed.title == "Book a time":
            card = {"type": "card", "card": "booking"}
            url = links.get("Open booking page") or fields.get("Booking")
            if url:
                card["url"] = url
            return card
        text = embed.description or ""
    else:
        text = message.content or ""
    if not text:
        return None
    reply: dict[str, Any] = {"type": "text"}
    if staff := _STAFF.match(text):
        reply.update(role="staff", author=_MARKDOWN_ESCAPE.sub(r"\1", staff["name"]))
        text = text[staff.end() :]
    if sources := _SOURCES.search(text):
        reply["citations"] = [{"title": t} for t in sources["titles"].split(" · ")]
        text = text[: sources.start()]
    reply["text"] = text
    return reply


class DiscordDriver:
    """dana on Discord: a mention in #general, answered in a thread the bot starts from it."""

    def __init__(self, app: App, world: World) -> None:
        self.app, self.world = app, world
        self.staff = str(world.sam.id)  # can see the desk channel: a member of the help desk
        self.thread: discord.Thread | None = None
        #: Each delivery's message, by delivery id: a redelivery hands the same one in again.
        self.messages: dict[str, discord.Message] = {}
        self.outbox: list[discord.Message] = []  # everything the bot sent, anywhere

    async def say(self, text: str, delivery_id: str) -> None:
        earlier = self.messages.get(delivery_id)
        if earlier is not None:
            assert earlier.content.endswith(text), "a redelivery is the same message"
            await self._redeliver(earlier)
        elif self.thread is None:
            w = self.world
            asked = await say(w, mention(w, text), w.general, w.dana)
            self.messages[delivery_id] = asked
            self.thread = w.guild.get_thread(asked.id)
            assert self.thread is not None, "the bot started no thread for the customer"
        else:
            self.messages[delivery_id] = await say(self.world, text, self.thread, self.world.dana)
        self.outbox.extend(self.world.sent())

    async def _redeliver(self, message: discord.Message) -> None:
        """The gateway's MESSAGE_CREATE for ``message`` again (a resume replays missed events),
        through discord.py's own parser and dispatch."""
        assert backend._cur_config is not None
        raw = next(
            m for m in backend._cur_config.messages[message.channel.id] if m["id"] == message.id
        )
        self.world.client._connection.parse_message_create(raw)  # type: ignore[arg-type]
        await bounded(dpytest.run_all_events())

    async def received(self) -> list[dict[str, Any]]:
        await bounded(dpytest.run_all_events())
        self.outbox.extend(self.world.sent())
        if self.thread is None:
            return []
        mine = [m for m in self.outbox if m.channel.id == self.thread.id]
        return [reply for m in mine if (reply := from_discord(self.world, m)) is not None]

    def conversation_id(self) -> str:
        assert self.thread is not None
        conv = self.app.store.find_conversation("discord", str(self.thread.id))
        assert conv is not None, "no conversation for the customer's thread"
        return conv.id


@pytest.fixture
async def discord_driver(world: World, tmp_path: Path) -> AsyncIterator[DiscordDriver]:
    """The app with the sample pack's help desk on #sales-desk, and the Discord adapter on the
    dpytest client (as the Discord tests build it)."""
    settings = Settings(pack=write_pack(tmp_path, world.desk.id), data_dir=tmp_path, recorders=[])
    app = App(settings, extra_plugins=[gatebot_discord])
    await app.start(channels=False)
    app.channels.append(DiscordChannel(app.host, client=world.client))
    try:
        yield DiscordDriver(app, world)
    finally:
        await app.stop()
        await bounded(dpytest.run_all_events())

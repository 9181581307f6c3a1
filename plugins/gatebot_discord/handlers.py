"""What the Discord client does with each gateway event, given discord.py's own objects.

Owns the routing: a customer message (a direct message, a mention, or a message in the thread of
an existing conversation) becomes one turn whose replies go back to the same place; a staff
message in an escalation's thread becomes a staff reply to the customer; a help-desk button press
becomes take over / hand back / resolve. ``on_message``, ``on_interaction`` and ``on_ready`` are
what the client calls; each logs its own failure and returns, so one bad event never stops the
client (discord.py would log it too, but a direct call, as a test or a redelivery makes, must
not raise either).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, Protocol

import discord

from bot.extend.host import ChannelHost
from bot.helpdesk import HelpDeskError, NotAMember, UnknownEscalation
from bot.outcomes import KINDS
from bot.store import Conversation, Escalation
from gatebot_discord.render import (
    HAND_BACK,
    LABELS,
    RESOLVE,
    TAKE_OVER,
    chosen_outcome,
    offered_message,
    parse_custom_id,
    thread_name,
)

log = logging.getLogger(__name__)

P = ParamSpec("P")

#: Ordinary messages; joins, pins, thread notices and the like are not someone talking.
_CHAT = (discord.MessageType.default, discord.MessageType.reply)

_DONE = {
    TAKE_OVER: "You have escalation #{id}: the agent is paused, and what you write in this "
    "thread reaches the customer.",
    HAND_BACK: "Escalation #{id} handed back: the agent answers the customer again.",
    RESOLVE: "Escalation #{id} resolved: {outcome}.",
}


def guarded(handler: Callable[P, Awaitable[None]]) -> Callable[P, Coroutine[Any, Any, None]]:
    """Log a handler's failure and return, the way discord.py treats an event that raises."""

    @functools.wraps(handler)
    async def run(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            await handler(*args, **kwargs)
        except Exception:
            log.exception("discord %s failed", handler.__name__)

    return run


def mentions(message: discord.Message, user_id: int) -> bool:
    # Not ``mentioned_in``: that is also true for @everyone, which must not wake the bot.
    return any(user.id == user_id for user in message.mentions)


def without_mentions(content: str, user_id: int) -> str:
    return re.sub(rf"<@!?{user_id}>", " ", content).strip()


class DiscordSide(Protocol):
    """What the handlers need of the Discord adapter (``DiscordChannel``), which owns them."""

    name: str
    host: ChannelHost

    @property
    def client(self) -> discord.Client: ...

    def connected(self) -> None: ...

    async def post(
        self,
        where: discord.abc.Messageable,
        replies: list[dict[str, Any]],
        reference: discord.Message | None = None,
    ) -> None: ...

    async def notice(self, where: discord.abc.Messageable, text: str) -> None: ...

    async def messageable(self, channel_id: str) -> discord.abc.Messageable: ...


class Handlers:
    def __init__(self, adapter: DiscordSide) -> None:
        self.adapter = adapter
        self.host = adapter.host
        # A gateway redelivery can arrive while the first copy's turn still runs (before the
        # inbox has it): the second copy is dropped here rather than opening a second thread.
        self._in_flight: set[int] = set()
        self._opening = asyncio.Lock()

    @guarded
    async def on_ready(self) -> None:
        self.adapter.connected()

    @guarded
    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or message.type not in _CHAT:
            return  # other bots, and our own posts: answering them could loop forever
        channel = message.channel
        if isinstance(channel, discord.Thread):
            escalation = await self.host.load_escalation_of(str(channel.id))
            if escalation is not None:
                await self._staff_message(message, escalation)
                return
        elif message.guild is not None and message.reference is not None:
            # A desk whose thread could not be created: staff answer by replying to the post
            # (the post's id is the escalation's thread id; see DiscordChannel.post_escalation).
            ref = message.reference.message_id
            escalation = await self.host.load_escalation_of(str(ref)) if ref else None
            if escalation is not None:
                await self._staff_message(message, escalation)
                return
        await self._customer_message(message)

    @guarded
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        if interaction.type is not discord.InteractionType.component or not interaction.data:
            return
        value = str(interaction.data.get("custom_id", ""))
        offered = offered_message(value)
        if offered is not None:
            await self._offer_taken(interaction, offered)
            return
        parsed = parse_custom_id(value)
        if parsed is None:
            return  # a component that is not one of ours
        action, escalation_id = parsed
        outcome = chosen_outcome(interaction.data) if action == RESOLVE else "resolved"
        if outcome is None:
            answer = f"Not resolved: choose one of {', '.join(KINDS)}."
        else:
            staff = str(interaction.user.id)
            answer = await self._desk_action(action, escalation_id, staff, outcome)
        await interaction.response.send_message(answer, ephemeral=True)

    # -- customers -----------------------------------------------------------------------------

    async def _offer_taken(self, interaction: discord.Interaction, text: str) -> None:
        """The offer_person button: ``text`` is the customer's next message in the
        conversation the button was posted in, keyed by the click (answered once)."""
        where = interaction.channel
        conv = await self.host.load_thread_conversation(
            self.adapter.name, str(interaction.channel_id)
        )
        if conv is None or where is None:
            return
        await interaction.response.defer()
        key = f"click-{interaction.id}"
        result = await self.host.handle(conv, text, key, inbox_key=key)
        if not result.duplicate and isinstance(where, discord.abc.Messageable):
            await self.adapter.post(where, result.replies)

    async def _customer_message(self, message: discord.Message) -> None:
        me = self.adapter.client.user
        if me is None:
            return
        channel = message.channel
        in_conversation = isinstance(
            channel, discord.Thread
        ) and await self.host.load_thread_conversation(self.adapter.name, str(channel.id))
        if not (message.guild is None or in_conversation or mentions(message, me.id)):
            return  # guild chatter that is not addressed to the bot
        text = without_mentions(message.content, me.id)
        if not text or message.id in self._in_flight:
            return
        self._in_flight.add(message.id)
        try:
            await self._turn(message, text)
        finally:
            self._in_flight.discard(message.id)

    async def _turn(self, message: discord.Message, text: str) -> None:
        key = str(message.id)  # the inbox key: a redelivered message is found, not re-run
        earlier = await self.host.load_message(self.adapter.name, key)
        where: discord.abc.Messageable | None = None
        reference: discord.Message | None = None
        if earlier is not None:
            conv = await self.host.load_conversation(earlier.conversation_id)
            if conv is None:
                return
        else:
            conv, where = await self._open(message, text)
            if where is message.channel and message.guild is not None:
                reference = message  # answering in a busy channel: say which message
        result = await self.host.handle(conv, text, key, inbox_key=key)
        if result.duplicate:
            log.info("discord message %s was delivered again; it was answered already", key)
            return
        if where is None:
            where = await self.adapter.messageable(conv.external_id or str(message.channel.id))
        await self.adapter.post(where, result.replies, reference=reference)

    async def _open(
        self, message: discord.Message, text: str
    ) -> tuple[Conversation, discord.abc.Messageable]:
        """The conversation a new message belongs to, and where its replies go.

        A DM or a thread is its own place. A mention in a channel gets a thread started from
        it, when the channel and the bot's permissions allow; else the answer stays in the
        channel, and that channel is the conversation.
        """
        where = message.channel
        if isinstance(where, discord.TextChannel):
            where = await self._start_thread(message, where, text) or where
        external = str(where.id)
        name = self.adapter.name
        async with self._opening:  # two first messages at once must not make two conversations
            # Discord authenticated the author: their user id is the verified identity.
            conv = await self.host.open_thread_conversation(name, external, str(message.author.id))
        return conv, where

    async def _start_thread(
        self, message: discord.Message, channel: discord.TextChannel, text: str
    ) -> discord.Thread | None:
        me = channel.guild.me
        if me is None or not channel.permissions_for(me).create_public_threads:
            return None
        name = thread_name(f"{message.author.display_name}: {text}")
        try:
            return await message.create_thread(name=name)
        except discord.HTTPException as exc:
            log.warning("no thread for message %s in #%s (%s)", message.id, channel.name, exc)
            return None

    # -- staff ---------------------------------------------------------------------------------

    async def _staff_message(self, message: discord.Message, escalation: Escalation) -> None:
        text = message.content.strip()
        if not text:
            return
        staff = str(message.author.id)
        # The message's own id: a redelivered staff message, even after a restart, reaches the
        # customer once.
        relay = (self.adapter.name, str(message.id))
        try:
            name = message.author.display_name
            await self.host.act(
                "reply", escalation.id or 0, staff, text=text, relay=relay, staff_name=name
            )
        except HelpDeskError as exc:
            await self.adapter.notice(message.channel, f"Not sent to the customer: {exc}.")
        except discord.HTTPException as exc:
            # Stored in the transcript, but the customer's Discord thread refused it.
            log.warning("staff reply for escalation #%s not delivered: %s", escalation.id, exc)
            await self.adapter.notice(message.channel, f"Not delivered to the customer: {exc}.")

    async def _desk_action(
        self, action: str, escalation_id: int, staff: str, outcome: str = "resolved"
    ) -> str:
        """Run a button's (or the Resolve menu's) action; the answer is what the presser alone
        sees."""
        try:
            await self.host.act(
                action, escalation_id, staff, via=self.adapter.name, outcome=outcome
            )
        except UnknownEscalation:
            return f"Escalation #{escalation_id} is not known here."
        except NotAMember as exc:
            return f"Only members of the {exc.desk} help desk can do that."
        except HelpDeskError as exc:
            return f"Could not {LABELS[action].lower()}: {exc}."
        return _DONE[action].format(id=escalation_id, outcome=outcome)

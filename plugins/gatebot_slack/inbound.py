"""What an incoming Slack event or button click means, and the work it starts.

Each listener only sorts the request and files the work as a task on the channel, so Slack gets
its acknowledgement well inside its 3 seconds; the turn runs after.

* A direct message, or a mention in a channel, is a customer's message. Each Slack thread is one
  conversation (external id ``"<channel>:<thread ts>"``) and the replies go into that thread.
  Later messages in a customer's thread count without a mention.
* A message in a help-desk thread (an escalation's) is a staff reply, relayed to the customer.
* A help-desk control is Take over / Hand back (buttons) or Resolve (a menu of outcome kinds,
  the one chosen recorded as the conversation's outcome), for members of the desk's channel.

Slack redelivers an event it thinks was lost (``X-Slack-Retry-Num``), and a mention in a
channel arrives twice, as ``app_mention`` and as ``message``. Both are one message, so the
agent's inbox key is the message itself (``"<channel>:<ts>"``): a second delivery makes no
second turn, and its duplicate result posts nothing. Bot messages and message subtypes (edits,
joins, our own posts) are never read, so the bot cannot answer itself.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Coroutine
from typing import Any, Protocol

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest

from bot.extend.host import ChannelHost
from bot.helpdesk import HelpDeskError
from bot.store import Conversation, Escalation
from gatebot_slack import blocks

log = logging.getLogger(__name__)

#: What a help-desk button says in the desk's thread once done.
_DONE = {
    "take_over": "<@{user}> took over: the agent is paused, and replies in this thread go to the "
    "customer.",
    "hand_back": "<@{user}> handed the conversation back to the agent.",
    "resolve": "<@{user}> resolved this escalation: {outcome}.",
}


class SlackSide(Protocol):
    """What the inbound side needs of the Slack adapter (``SlackChannel``), which owns it."""

    name: str
    host: ChannelHost
    bot_user_id: str | None

    def spawn(self, work: Coroutine[Any, Any, None], what: str) -> None: ...

    async def conversation_for(self, thread: str, user: str | None = None) -> Conversation: ...

    async def post_replies(
        self, channel: str, thread_ts: str, replies: list[dict[str, Any]]
    ) -> None: ...

    async def note(self, thread: str, text: str) -> None: ...

    async def whisper(self, channel: str, user: str, text: str, thread_ts: str | None) -> None: ...

    async def display_name(self, user: str) -> str | None: ...


def _from_a_person(event: dict[str, Any]) -> bool:
    return bool(
        not event.get("subtype")
        and not event.get("bot_id")
        and event.get("user")
        and event.get("channel")
        and event.get("ts")
    )


def _retry(request: AsyncBoltRequest) -> str | None:
    """Which redelivery this is; None for a first one (Socket Mode says 0)."""
    values = request.headers.get("x-slack-retry-num") or []
    return values[0] if values and values[0] not in ("", "0") else None


class Inbound:
    def __init__(self, channel: SlackSide) -> None:
        self.channel = channel
        self.host = channel.host

    def register(self, bolt: AsyncApp) -> None:
        bolt.event("message")(self.on_message)
        bolt.event("app_mention")(self.on_mention)
        bolt.action(blocks.DESK_ACTION)(self.on_desk_action)
        bolt.action(blocks.LINK_ACTION)(self.on_link)
        bolt.action(blocks.OFFER_PERSON_ACTION)(self.on_offer_person)
        bolt.action(blocks.MENU_ACTION)(self.on_offer_person)  # a team: its label, said

    # -- listeners: sort, file the work, return --------------------------------------------------

    async def on_message(
        self, event: dict[str, Any], body: dict[str, Any], request: AsyncBoltRequest
    ) -> None:
        if _from_a_person(event):
            self._file(self.message(event), "message", body, request)

    async def on_mention(
        self, event: dict[str, Any], body: dict[str, Any], request: AsyncBoltRequest
    ) -> None:
        if _from_a_person(event):
            self._file(self.mention(event), "mention", body, request)

    def _file(
        self,
        work: Coroutine[Any, Any, None],
        kind: str,
        body: dict[str, Any],
        request: AsyncBoltRequest,
    ) -> None:
        event_id = body.get("event_id", "?")
        retry = _retry(request)
        if retry:
            log.info("slack redelivered %s (retry %s); an answered one stays so", event_id, retry)
        self.channel.spawn(work, f"{kind} {event_id}")

    async def on_desk_action(
        self, ack: AsyncAck, action: dict[str, Any], body: dict[str, Any]
    ) -> None:
        await ack()
        parsed = blocks.parse_desk_action(action.get("action_id", ""))
        user = (body.get("user") or {}).get("id")
        where = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get(
            "channel_id"
        )
        if parsed is None or not user or not where:
            return
        verb, escalation_id = parsed
        outcome = blocks.desk_outcome(action) if verb == "resolve" else "resolved"
        if outcome is None:
            log.warning("slack: resolve #%s chose no known outcome; nothing done", escalation_id)
            return
        self.channel.spawn(
            self.desk_action(verb, escalation_id, user, where, outcome), f"{verb} #{escalation_id}"
        )

    async def on_offer_person(
        self, ack: AsyncAck, action: dict[str, Any], body: dict[str, Any]
    ) -> None:
        """The offer_person button, or a team of the escalation menu: its value is said as the
        customer's next message, keyed by the click so a redelivered click asks once."""
        await ack()
        box = body.get("container") or {}
        channel = box.get("channel_id") or (body.get("channel") or {}).get("id")
        thread = box.get("thread_ts") or box.get("message_ts")
        if channel and thread and action.get("value"):
            click = f"click-{action.get('action_ts') or thread}"
            user = (body.get("user") or {}).get("id")
            work = self.customer_message(channel, thread, click, str(action["value"]), user)
            self.channel.spawn(work, f"{action.get('action_id')} {channel}:{thread}")

    async def on_link(self, ack: AsyncAck) -> None:
        """A link button opens in the browser; the click still comes here and wants an ack."""
        await ack()

    # -- the work --------------------------------------------------------------------------------

    async def _escalation_of(self, channel: str, thread_ts: str | None) -> Escalation | None:
        if not thread_ts:
            return None
        return await self.host.load_escalation_of(f"{channel}:{thread_ts}")

    async def message(self, event: dict[str, Any]) -> None:
        channel, ts, thread_ts = event["channel"], event["ts"], event.get("thread_ts")
        esc = await self._escalation_of(channel, thread_ts)
        if esc is not None:
            await self.staff_message(esc, event)
        elif event.get("channel_type") == "im":
            await self.customer_message(
                channel, thread_ts or ts, ts, event.get("text") or "", event.get("user")
            )
        elif thread_ts and await self.host.load_thread_conversation(
            self.channel.name, f"{channel}:{thread_ts}"
        ):
            await self.customer_message(
                channel, thread_ts, ts, event.get("text") or "", event.get("user")
            )
        # Anything else in a channel is people talking among themselves.

    async def mention(self, event: dict[str, Any]) -> None:
        channel, ts, thread_ts = event["channel"], event["ts"], event.get("thread_ts")
        if await self._escalation_of(channel, thread_ts) is not None:
            return  # staff in a help-desk thread: their message event carries it
        await self.customer_message(
            channel, thread_ts or ts, ts, event.get("text") or "", event.get("user")
        )

    def _customer_text(self, text: str) -> str:
        bot = self.channel.bot_user_id
        mention = rf"<@{re.escape(bot)}(\|[^>]*)?>" if bot else r"^\s*<@[A-Z0-9]+(\|[^>]*)?>"
        return blocks.plain_text(re.sub(mention, "", text)).strip()

    async def customer_message(
        self, channel: str, thread_ts: str, ts: str, raw: str, user: str | None = None
    ) -> None:
        """``user``: the Slack user id of the sender, which Slack authenticated (signed
        events); it becomes the conversation's verified identity when the thread starts."""
        text = self._customer_text(raw)
        if not text:
            return  # a bare mention
        conv = await self.channel.conversation_for(f"{channel}:{thread_ts}", user)
        key = f"{channel}:{ts}"
        result = await self.host.handle(conv, text, key, inbox_key=key)
        if result.duplicate:
            log.info("slack: message %s was answered before; nothing posted", key)
            return
        await self.channel.post_replies(channel, thread_ts, result.replies)

    async def staff_message(self, esc: Escalation, event: dict[str, Any]) -> None:
        channel, ts, user = event["channel"], event["ts"], event["user"]
        text = blocks.plain_text(event.get("text") or "").strip()
        if not text:
            return
        try:
            # The message's own id: a redelivery (even after a restart) is relayed once.
            relay = (self.channel.name, f"{channel}:{ts}")
            name = await self.channel.display_name(user)
            await self.host.act("reply", esc.id or 0, user, text=text, relay=relay, staff_name=name)
        except HelpDeskError as exc:
            await self.channel.whisper(
                channel, user, f"Not sent to the customer: {exc}", event.get("thread_ts")
            )

    async def desk_action(
        self, verb: str, escalation_id: int, user: str, where: str, outcome: str = "resolved"
    ) -> None:
        try:
            acted = await self.host.act(verb, escalation_id, user, outcome=outcome)
        except HelpDeskError as exc:
            await self.channel.whisper(where, user, f"Not done: {exc}", None)
            return
        if acted.escalation.thread:
            done = _DONE[verb].format(user=user, outcome=outcome)
            await self.channel.note(acted.escalation.thread, done)

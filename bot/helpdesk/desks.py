"""The help desks' one service: open an escalation, act on it for staff, relay the customer.

Every staff action, from any platform (a Slack button, a Discord thread, the web staff API),
is one :meth:`HelpDesks.act` call, which finds the escalation's desk once and checks the staff
member's membership once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.events import EventBus
from bot.extend.email import EmailTransport
from bot.helpdesk.channel import (
    CustomerChannel,
    HelpDeskChannel,
    HelpDeskError,
    NotAMember,
    UnknownEscalation,
)
from bot.helpdesk.summary import summary
from bot.helpdesk.sweep import sweep
from bot.metrics import Metrics
from bot.outcomes import KINDS
from bot.outcomes.labels import record_outcome
from bot.packs.model import HelpDesk, Pack
from bot.store import Conversation, Escalation, Message, Store
from bot.store.runner import StoreRunner

log = logging.getLogger(__name__)

#: What staff can do to an escalation.
VERBS = ("take_over", "reply", "hand_back", "resolve")
#: The states an escalation can be taken over from.
TAKEABLE = ("open", "emailed", "handed_back", "claimed")


@dataclass(frozen=True)
class Acted:
    """What a staff action did."""

    escalation: Escalation  # as it stands afterwards
    message: Message | None = None  # reply: the staff message stored and delivered
    duplicate: bool = False  # reply: that desk message was relayed before; nothing was done


class HelpDesks:
    def __init__(
        self,
        store: Store,
        pack: Pack,
        email: EmailTransport,
        metrics: Metrics,
        events: EventBus,
        desk_channel: Callable[[str], HelpDeskChannel | None],
        customer_channel: Callable[[str], CustomerChannel | None] | None = None,
        db: StoreRunner | None = None,
    ) -> None:
        self.store, self.pack, self.email = store, pack, email
        #: Opening an escalation ends a turn: its writes go off the loop like the turn's.
        self.db = db or StoreRunner(store)
        self.metrics, self.events = metrics, events
        self.desk_channel = desk_channel
        self.customer_channel = customer_channel or (lambda name: None)

    # -- lookups -------------------------------------------------------------------------------

    def desk_of(self, escalation: Escalation) -> HelpDesk:
        desk = self.pack.helpdesk_named(escalation.helpdesk)
        if desk is None:
            raise HelpDeskError(f"escalation #{escalation.id} has no help desk")
        return desk

    async def _escalation(self, escalation_id: int, via: str | None = None) -> Escalation:
        esc = await self.db.call(self.store.get_escalation, escalation_id)
        if esc is None:
            raise UnknownEscalation(f"no escalation #{escalation_id}")
        if via is not None:
            desk = self.pack.helpdesk_named(esc.helpdesk)
            if desk is None or desk.channel != via:
                raise UnknownEscalation(f"escalation #{escalation_id} has no desk on {via}")
        return esc

    # -- escalating ----------------------------------------------------------------------------

    async def open(
        self,
        conv: Conversation,
        reason: str,
        kind: str,
        question: str | None,
        helpdesk: str | None = None,
    ) -> None:
        """Queue an escalation and post it to its help desk, if that desk's channel runs here.
        ``helpdesk`` names the desk (pre-flight recommends one); else the kind picks it."""
        store, call = self.store, self.db.call
        desk = self.pack.helpdesk_named(helpdesk) or self.pack.helpdesk_for(kind)
        waiting = await call(store.waiting_escalation, conv.id, ("open", "emailed"))
        if waiting is not None and kind != "lead":
            # One person is asked once: a second hand-off while one waits queues nothing more;
            # naming another desk (the escalation menu) moves the waiting one there.
            if desk is not None and desk.name != waiting.helpdesk:
                await self._move(conv, waiting, desk)
            return
        esc = await call(
            store.escalate, conv.id, reason, desk.name if desk else None, question, kind
        )
        self.metrics.inc("gatebot_escalations_total", reason=kind)
        if desk is None:
            await call(
                store.update_escalation, esc.id or 0, delivery="the pack declares no help desk"
            )
            if conv.status == "handed_off":  # nobody will come: the customer is not kept waiting
                await call(store.update_conversation, conv.id, status="open")
            return
        await self._post(conv, esc, desk)

    async def _post(self, conv: Conversation, esc: Escalation, desk: HelpDesk) -> None:
        """Post the escalation to ``desk``'s channel, and record how it went (or why not)."""
        store, call = self.store, self.db.call
        channel = self.desk_channel(desk.channel)
        if channel is None:
            note = f"no {desk.channel} channel running; email after {desk.email_after_minutes} min"
            await call(store.update_escalation, esc.id or 0, delivery=note)
            return
        try:
            text = summary(conv, esc, await call(store.messages, conv.id))
            thread = await channel.post_escalation(desk, esc, text)
        except Exception as exc:  # the turn already answered; the sweep's email still covers it
            log.exception("posting escalation #%s to %s failed", esc.id, desk.name)
            failed = f"posting failed: {exc}"[:500]
            await call(store.update_escalation, esc.id or 0, delivery=failed)
            return
        posted = f"posted to {desk.channel}"
        await call(store.update_escalation, esc.id or 0, thread=thread, delivery=posted)

    async def _move(self, conv: Conversation, esc: Escalation, desk: HelpDesk) -> None:
        """The customer chose another desk while nobody had taken the escalation: the old
        desk's thread says where it went, and the new desk gets it as a fresh post."""
        old = self.pack.helpdesk_named(esc.helpdesk)
        channel = self.desk_channel(old.channel) if old is not None else None
        if old is not None and channel is not None and esc.thread:
            try:
                await channel.post_to_thread(old, esc.thread, f"The customer chose {desk.name}.")
            except Exception:  # the move matters more than the note
                log.exception("noting the move of escalation #%s failed", esc.id)
        await self.db.call(
            self.store.update_escalation,
            esc.id or 0,
            helpdesk=desk.name,
            status="open",
            thread=None,
            created_at=datetime.now(UTC),  # the new desk's own time to take it
        )
        moved = await self._escalation(esc.id or 0)
        await self._post(conv, moved, desk)

    # -- staff actions -------------------------------------------------------------------------

    async def act(
        self,
        verb: str,
        escalation_id: int,
        staff: str,
        *,
        text: str = "",
        outcome: str = "resolved",
        relay: tuple[str, str] | None = None,
        via: str | None = None,
        trusted: bool = False,
        staff_name: str | None = None,
    ) -> Acted:
        """Do ``verb`` (take_over, reply, hand_back, resolve) on an escalation for ``staff``.

        ``reply`` sends ``text`` to the customer, taking the conversation over first when this
        staff member does not have it; ``relay`` = (platform, message id) makes a redelivered
        desk message a duplicate that does nothing, across restarts too. ``via`` names the
        platform the action came from (an escalation whose desk is elsewhere is unknown there).
        ``trusted`` skips the membership check: staff proved by the admin token. ``staff_name``
        is how the customer sees a reply's author (a display name); without it, "Team".
        """
        if verb not in VERBS:
            raise HelpDeskError(f"{verb!r} is not a staff action (one of {', '.join(VERBS)})")
        esc = await self._escalation(escalation_id, via)
        if (
            verb == "reply"
            and relay is not None
            and await self.db.call(self.store.staff_relayed, *relay)
        ):
            return Acted(esc, duplicate=True)
        holds_it = esc.status == "claimed" and esc.staff == staff
        if not trusted and not (verb == "reply" and holds_it):
            await self._check_member(esc, staff)
        if verb == "take_over" or (verb == "reply" and not holds_it):
            esc = await self._take_over(esc, staff)
        if verb == "reply":
            return await self._reply(esc, staff, text, relay, staff_name)
        if verb == "hand_back":
            await self._settle(
                esc, dict(status="handed_back", staff=staff), paused=False, status="open"
            )
        elif verb == "resolve":
            done = dict(status="resolved", staff=staff, outcome=outcome)
            await self._settle(esc, done, paused=False, status="resolved")
            if outcome in KINDS:  # a label for the turns that led here, once per escalation
                fields = {"conversation_id": esc.conversation_id, "kind": outcome, "staff": staff}
                fields["external_id"] = f"escalation:{esc.id}:{outcome}"
                await self.db.call(record_outcome, self.store, fields, "escalation")
        return Acted(await self._escalation(escalation_id))

    async def _settle(self, esc: Escalation, fields: dict[str, Any], **conversation: Any) -> None:
        """Update the escalation and its conversation, in one trip to a database thread."""

        def both() -> None:
            self.store.update_escalation(esc.id or 0, **fields)
            self.store.update_conversation(esc.conversation_id, **conversation)

        await self.db.call(both)

    async def _check_member(self, esc: Escalation, staff: str) -> None:
        """Only members of the help desk's channel act on its escalations. A desk whose
        channel does not run in this process cannot be asked, and the action goes ahead."""
        desk = self.desk_of(esc)
        channel = self.desk_channel(desk.channel)
        if channel is not None and not await channel.is_member(desk, staff):
            raise NotAMember(staff, desk.name)

    async def _take_over(self, esc: Escalation, staff: str) -> Escalation:
        if esc.status not in TAKEABLE:
            raise HelpDeskError(f"escalation #{esc.id} is {esc.status}")
        await self._settle(esc, dict(status="claimed", staff=staff), paused=True)
        return await self._escalation(esc.id or 0)

    async def _reply(
        self,
        esc: Escalation,
        staff: str,
        text: str,
        relay: tuple[str, str] | None,
        name: str | None,
    ) -> Acted:
        """A staff message in the thread: it reaches the customer on the customer's channel."""
        conv = await self.db.call(self.store.get_conversation, esc.conversation_id)
        if conv is None:
            raise HelpDeskError(f"conversation {esc.conversation_id} is gone")
        name = (name or "").strip()[:255] or None  # unknown: the customer reads "Team"
        if relay is None:
            msg: Message | None = await self.db.call(
                self.store.add_message,
                conv.id,
                conv.channel,
                "staff",
                text,
                author=staff,
                author_name=name,
            )
        else:
            add = self.store.add_staff_message
            msg = await self.db.call(add, conv.id, conv.channel, text, staff, relay, name)
        if msg is None:  # a redelivery that raced the first copy past the check above
            return Acted(esc, duplicate=True)
        reply: dict[str, Any] = {
            "type": "text",
            "text": text,
            "role": "staff",
            "author": staff,
            "author_name": name,
            "message_id": msg.id,  # what a reconnecting widget dedupes by
            "citations": [],
        }
        adapter = self.customer_channel(conv.channel)
        if adapter is not None:
            await adapter.send(conv.id, [reply])
        else:
            self.events.publish(conv.id, {"type": "replies", "replies": [reply]})
        return Acted(esc, msg)

    # -- the earlier names, each one act --------------------------------------------------------

    async def take_over(self, escalation_id: int, staff: str) -> Escalation:
        return (await self.act("take_over", escalation_id, staff)).escalation

    async def staff_reply(self, escalation_id: int, staff: str, text: str) -> Message:
        acted = await self.act("reply", escalation_id, staff, text=text)
        assert acted.message is not None  # without a relay id a reply is never a duplicate
        return acted.message

    async def hand_back(self, escalation_id: int, staff: str) -> None:
        await self.act("hand_back", escalation_id, staff)

    async def resolve(self, escalation_id: int, staff: str, outcome: str = "resolved") -> None:
        await self.act("resolve", escalation_id, staff, outcome=outcome)

    # -- the customer's side, and the email fallback ---------------------------------------------

    async def relay(self, conv: Conversation, msg: Message) -> None:
        """A customer message while the conversation is with a help desk (waiting for someone
        to take it, or taken): into the escalation's thread, so staff read it where they act."""
        esc = await self.db.call(self.store.waiting_escalation, conv.id)
        if esc is None or esc.thread is None:
            return
        desk = self.desk_of(esc)
        channel = self.desk_channel(desk.channel)
        if channel is not None:
            await channel.post_to_thread(desk, esc.thread, f"customer: {msg.text}")

    async def sweep(self, now: datetime | None = None) -> int:
        """Email every open escalation nobody took in time. Returns how many were sent."""
        return await sweep(self.store, self.pack, self.email, self.db, now)


def describe(acted: Acted) -> dict[str, Any]:
    """An action's result as JSON (the web staff API's answer)."""
    esc = acted.escalation
    return {
        "escalation": {
            "id": esc.id,
            "status": esc.status,
            "staff": esc.staff,
            "outcome": esc.outcome,
            "conversation_id": esc.conversation_id,
        },
        "duplicate": acted.duplicate,
    }

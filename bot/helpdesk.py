"""Help desks: where an escalation goes, and the relay between staff and customer.

An escalation is posted to the help desk the pack names for its kind (a Slack or Discord channel
adapter does the posting). Staff take over (the agent pauses), reply in the thread (each reply
reaches the customer on the customer's own channel, with the staff member recorded), hand back
(the agent resumes, the staff messages in its transcript) or resolve (an outcome is recorded). An
escalation nobody takes in time goes to the desk's email address, and a failure to send is kept
on the escalation, never reported as sent.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from bot.errors import GatebotError
from bot.packs.model import HelpDesk
from bot.store import Conversation, Escalation, Message

if TYPE_CHECKING:
    from bot.app import App

log = logging.getLogger(__name__)

#: Messages of the transcript a help desk sees with the escalation.
TRANSCRIPT_LINES = 10


class HelpDeskError(GatebotError):
    """A staff action that cannot be done (unknown escalation, not a member, wrong state)."""


class HelpDeskChannel(Protocol):
    """What a channel adapter implements to serve as a help desk (Slack, Discord)."""

    async def post_escalation(self, desk: HelpDesk, escalation: Escalation, summary: str) -> str:
        """Post the escalation with Take over / Hand back / Resolve; return the thread's id."""

    async def post_to_thread(self, desk: HelpDesk, thread: str, text: str) -> None:
        """Relay a customer message into the escalation's thread."""

    async def is_member(self, desk: HelpDesk, staff: str) -> bool:
        """Whether ``staff`` belongs to the help desk's channel."""


def summary(conv: Conversation, escalation: Escalation, messages: list[Message]) -> str:
    """What staff read first: why, where, what is known, and the last lines."""
    values = conv.state.get("values", {})
    known = ", ".join(f"{k}: {v['value']}" for k, v in values.items()) or "nothing yet"
    lines = [
        f"Escalation #{escalation.id} ({escalation.kind}): {escalation.reason}",
        f"Customer on {conv.channel}, conversation {conv.id}",
        f"Known: {known}",
        "Last messages:",
    ]
    for m in messages[-TRANSCRIPT_LINES:]:
        who = m.author or m.role
        lines.append(f"  {who}: {m.text}")
    return "\n".join(lines)


class HelpDesks:
    def __init__(self, app: App) -> None:
        self.app = app

    def _channel(self, desk: HelpDesk) -> Any:
        adapter = self.app.channel(desk.channel)
        return adapter if adapter is not None and hasattr(adapter, "post_escalation") else None

    def desk_of(self, escalation: Escalation) -> HelpDesk:
        desk = next((h for h in self.app.pack.helpdesks if h.name == escalation.helpdesk), None)
        if desk is None:
            raise HelpDeskError(f"escalation #{escalation.id} has no help desk")
        return desk

    def _escalation(self, escalation_id: int) -> Escalation:
        esc = self.app.store.get_escalation(escalation_id)
        if esc is None:
            raise HelpDeskError(f"no escalation #{escalation_id}")
        return esc

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
        store = self.app.store
        desk = self.app.pack.helpdesk_named(helpdesk) or self.app.pack.helpdesk_for(kind)
        esc = store.escalate(conv.id, reason, desk.name if desk else None, question, kind)
        self.app.metrics.inc("gatebot_escalations_total", reason=kind)
        if desk is None:
            store.update_escalation(esc.id or 0, delivery="the pack declares no help desk")
            return
        channel = self._channel(desk)
        if channel is None:
            note = f"no {desk.channel} channel running; email after {desk.email_after_minutes} min"
            store.update_escalation(esc.id or 0, delivery=note)
            return
        try:
            text = summary(conv, esc, store.messages(conv.id))
            thread = await channel.post_escalation(desk, esc, text)
        except Exception as exc:  # the turn already answered; the sweep's email still covers it
            log.exception("posting escalation #%s to %s failed", esc.id, desk.name)
            store.update_escalation(esc.id or 0, delivery=f"posting failed: {exc}"[:500])
            return
        store.update_escalation(esc.id or 0, thread=thread, delivery=f"posted to {desk.channel}")

    async def _member(self, esc: Escalation, staff: str) -> None:
        """Only members of the help desk's channel act on its escalations."""
        desk = self.desk_of(esc)
        channel = self._channel(desk)
        if channel is not None and not await channel.is_member(desk, staff):
            raise HelpDeskError(f"{staff} is not a member of the {desk.name} help desk")

    async def take_over(self, escalation_id: int, staff: str) -> Escalation:
        esc = self._escalation(escalation_id)
        await self._member(esc, staff)
        if esc.status not in ("open", "emailed", "handed_back", "claimed"):
            raise HelpDeskError(f"escalation #{esc.id} is {esc.status}")
        self.app.store.update_escalation(esc.id or 0, status="claimed", staff=staff)
        self.app.store.update_conversation(esc.conversation_id, paused=True)
        return self._escalation(escalation_id)

    async def staff_reply(self, escalation_id: int, staff: str, text: str) -> Message:
        """A staff message in the thread: it reaches the customer on the customer's channel."""
        esc = self._escalation(escalation_id)
        if esc.status != "claimed" or esc.staff != staff:
            esc = await self.take_over(escalation_id, staff)  # replying is taking over
        conv = self.app.store.get_conversation(esc.conversation_id)
        if conv is None:
            raise HelpDeskError(f"conversation {esc.conversation_id} is gone")
        msg = self.app.store.add_message(conv.id, conv.channel, "staff", text, author=staff)
        reply = {"type": "text", "text": text, "role": "staff", "author": staff, "citations": []}
        adapter = self.app.channel(conv.channel)
        if adapter is not None:
            await adapter.send(conv.id, [reply])
        else:
            self.app.events.publish(conv.id, {"type": "replies", "replies": [reply]})
        return msg

    async def hand_back(self, escalation_id: int, staff: str) -> None:
        esc = self._escalation(escalation_id)
        await self._member(esc, staff)
        self.app.store.update_escalation(esc.id or 0, status="handed_back", staff=staff)
        self.app.store.update_conversation(esc.conversation_id, paused=False, status="open")

    async def resolve(self, escalation_id: int, staff: str, outcome: str = "resolved") -> None:
        esc = self._escalation(escalation_id)
        await self._member(esc, staff)
        self.app.store.update_escalation(
            esc.id or 0, status="resolved", staff=staff, outcome=outcome
        )
        self.app.store.update_conversation(esc.conversation_id, paused=False, status="resolved")

    async def relay(self, conv: Conversation, msg: Message) -> None:
        """A customer message while staff have the conversation: into the escalation's thread."""
        esc = next(
            (
                e
                for e in reversed(self.app.store.escalations("claimed"))
                if e.conversation_id == conv.id
            ),
            None,
        )
        if esc is None or esc.thread is None:
            return
        channel = self._channel(self.desk_of(esc))
        if channel is not None:
            await channel.post_to_thread(self.desk_of(esc), esc.thread, f"customer: {msg.text}")

    async def sweep(self, now: datetime | None = None) -> int:
        """Email every open escalation nobody took in time. Returns how many were sent."""
        now = now or datetime.now(UTC)
        sent = 0
        for esc in self.app.store.escalations("open"):
            desk = next((h for h in self.app.pack.helpdesks if h.name == esc.helpdesk), None)
            created = (
                esc.created_at if esc.created_at.tzinfo else esc.created_at.replace(tzinfo=UTC)
            )
            if desk is None or now - created < timedelta(minutes=desk.email_after_minutes):
                continue
            if not desk.email:
                self.app.store.update_escalation(esc.id or 0, delivery="unclaimed; no email set")
                continue
            conv = self.app.store.get_conversation(esc.conversation_id)
            if conv is None:
                continue
            body = summary(conv, esc, self.app.store.messages(conv.id))
            try:
                message_id = await self.app.email.send(
                    desk.email, f"Unclaimed escalation #{esc.id}: {esc.reason}"[:200], body
                )
            except Exception as exc:  # honest: the failure is kept, the escalation stays open
                self.app.store.update_escalation(esc.id or 0, delivery=f"email failed: {exc}"[:500])
                continue
            self.app.store.update_escalation(
                esc.id or 0, status="emailed", delivery=f"emailed to {desk.email} ({message_id})"
            )
            sent += 1
        return sent

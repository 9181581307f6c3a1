"""Email for escalations nobody took in time: each sent one is marked, each failure kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.extend.email import EmailTransport
from bot.helpdesk.summary import summary
from bot.packs.model import HelpDesk, Pack
from bot.store import Escalation, Store
from bot.store.runner import StoreRunner


def _overdue(esc: Escalation, desk: HelpDesk | None, now: datetime) -> bool:
    created = esc.created_at if esc.created_at.tzinfo else esc.created_at.replace(tzinfo=UTC)
    return desk is not None and now - created >= timedelta(minutes=desk.email_after_minutes)


async def sweep(
    store: Store,
    pack: Pack,
    email: EmailTransport,
    db: StoreRunner,
    now: datetime | None = None,
) -> int:
    """Email every open escalation nobody took in time. Returns how many were sent. The
    database calls go through ``db`` (the app's StoreRunner), off the event loop."""
    now = now or datetime.now(UTC)
    call = db.call
    sent = 0
    for esc in await call(store.escalations, "open"):
        desk = pack.helpdesk_named(esc.helpdesk)
        if desk is None or not _overdue(esc, desk, now):
            continue
        if not desk.email:
            await call(store.update_escalation, esc.id or 0, delivery="unclaimed; no email set")
            continue
        conv = await call(store.get_conversation, esc.conversation_id)
        if conv is None:
            continue
        body = summary(conv, esc, await call(store.messages, conv.id))
        try:
            message_id = await email.send(
                desk.email, f"Unclaimed escalation #{esc.id}: {esc.reason}"[:200], body
            )
        except Exception as exc:  # honest: the failure is kept, the escalation stays open
            failed = f"email failed: {exc}"[:500]
            await call(store.update_escalation, esc.id or 0, delivery=failed)
            continue
        emailed = f"emailed to {desk.email} ({message_id})"
        await call(store.update_escalation, esc.id or 0, status="emailed", delivery=emailed)
        sent += 1
    return sent

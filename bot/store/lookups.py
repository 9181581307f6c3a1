"""The reads every customer message makes around its turn (mixed into :class:`bot.store.Store`):
the conversation by id, an earlier delivery by its key, the newest message id, the escalation
still waiting. SQLAlchemy Core over statements built once, with bound parameters.

Why not the ORM's session: each of these is one indexed row, and under load a session, its
identity map and building the statement again on every call cost several times the query itself,
on the one database thread every request waits for. The rows come back as the same models the
session returned (plain instances, not attached to a session: ``save_conversation`` merges by
primary key either way).
"""

from __future__ import annotations

import sqlalchemy as sa

from bot.store.models import Conversation, Escalation, Message

CONVERSATIONS = Conversation.__table__  # type: ignore[attr-defined]
MESSAGES = Message.__table__  # type: ignore[attr-defined]
ESCALATIONS = Escalation.__table__  # type: ignore[attr-defined]

# Built once: a statement object caches its compiled form, so each call only binds its values.
_CONVERSATION = sa.select(CONVERSATIONS).where(CONVERSATIONS.c.id == sa.bindparam("id"))
_DELIVERY = (
    sa.select(MESSAGES)
    .where(MESSAGES.c.channel == sa.bindparam("channel"))
    .where(MESSAGES.c.external_id == sa.bindparam("external_id"))
    .limit(1)
)
_NEWEST_MESSAGE = sa.select(sa.func.max(MESSAGES.c.id)).where(
    MESSAGES.c.conversation_id == sa.bindparam("conversation_id")
)
_WAITING = (
    sa.select(ESCALATIONS)
    .where(ESCALATIONS.c.conversation_id == sa.bindparam("conversation_id"))
    .where(ESCALATIONS.c.status.in_(sa.bindparam("statuses", expanding=True)))
    .order_by(ESCALATIONS.c.id.desc())
    .limit(1)
)


class LookupsMixin:
    engine: sa.Engine  # provided by Store

    def get_conversation(self, conversation_id: str) -> Conversation | None:
        with self.engine.connect() as conn:
            row = conn.execute(_CONVERSATION, {"id": conversation_id}).first()
        return Conversation(**row._mapping) if row is not None else None

    def find_message(self, channel: str, external_id: str) -> Message | None:
        with self.engine.connect() as conn:
            row = conn.execute(_DELIVERY, {"channel": channel, "external_id": external_id}).first()
        return Message(**row._mapping) if row is not None else None

    def last_message_id(self, conversation_id: str) -> int | None:
        """The newest message id of a conversation: what a client has seen all of, after a turn."""
        with self.engine.connect() as conn:
            found = conn.execute(_NEWEST_MESSAGE, {"conversation_id": conversation_id}).scalar()
        return int(found) if found is not None else None

    def waiting_escalation(
        self, conversation_id: str, statuses: tuple[str, ...] = ("open", "emailed", "claimed")
    ) -> Escalation | None:
        """The conversation's latest escalation still with a help desk (one of ``statuses``)."""
        params = {"conversation_id": conversation_id, "statuses": list(statuses)}
        with self.engine.connect() as conn:
            row = conn.execute(_WAITING, params).first()
        return Escalation(**row._mapping) if row is not None else None

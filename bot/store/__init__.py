"""The store: conversations, the inbox, turn records and the escalation queue.

SQLite under ``./var/`` by default; PostgreSQL when ``DATABASE_URL`` is set. A customer message is
stored before its turn starts, and marked processed in the same transaction that stores the turn,
so a crash between the two leaves a message that ``pending`` finds and the agent retries.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, col, select

from bot.errors import StoreError
from bot.store.customer import CustomerDataMixin
from bot.store.engine import HeldConnections, make_engine
from bot.store.flowruns import FlowRunsMixin
from bot.store.inbox import InboxMixin, Received
from bot.store.lookups import LookupsMixin
from bot.store.migrations import applied, migrate
from bot.store.models import (
    Conversation,
    Escalation,
    FlowCheckpoint,
    FlowRun,
    Message,
    Outcome,
    StaffRelay,
    Turn,
    TurnLabel,
    now,
)
from bot.store.outcomes import LabelledTurn, OutcomesMixin

__all__ = [
    "Conversation",
    "Escalation",
    "FlowCheckpoint",
    "FlowRun",
    "LabelledTurn",
    "Message",
    "Outcome",
    "Received",
    "StaffRelay",
    "Store",
    "Turn",
    "TurnLabel",
    "normalise_url",
]


def normalise_url(url: str) -> str:
    """Accept the URLs people paste (postgres://, postgresql://) and pick the psycopg 3 driver."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Store(InboxMixin, LookupsMixin, FlowRunsMixin, CustomerDataMixin, OutcomesMixin):
    def __init__(self, url: str, **engine_args: Any) -> None:
        self.url = normalise_url(url)
        self.engine = make_engine(self.url, **engine_args)
        self._held = HeldConnections(self.engine)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @property
    def pool_size(self) -> int:
        """Connections the pool keeps (1 for SQLite's single-connection pools)."""
        size = getattr(self.engine.pool, "size", None)
        return int(size()) if callable(size) else 1

    def interrupt(self, thread: int) -> bool:
        """Interrupt the statement ``thread`` is waiting on (see ``bot.store.engine``)."""
        return self._held.interrupt(thread)

    def migrate(self) -> list[str]:
        try:
            return migrate(self.engine)
        except OperationalError as exc:
            raise StoreError(f"cannot reach the database at {self.safe_url}: {exc.orig}") from exc

    def applied_migrations(self) -> list[str]:
        with self.engine.connect() as conn:
            return applied(conn)

    @property
    def safe_url(self) -> str:
        """The URL without its password, for logs and doctor."""
        return sa.make_url(self.url).render_as_string(hide_password=True)

    @contextmanager
    def session(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session:
            yield session

    # -- conversations -------------------------------------------------------------------------

    def create_conversation(
        self,
        channel: str,
        *,
        external_id: str | None = None,
        with_token: bool = False,
        language: str = "en",
        verified_user_id: str | None = None,
    ) -> tuple[Conversation, str | None]:
        """A new conversation; with ``with_token`` also its bearer token (only its hash is kept)."""
        token = secrets.token_urlsafe(24) if with_token else None
        conv = Conversation(
            id=secrets.token_hex(16),
            channel=channel,
            external_id=external_id,
            token_hash=_hash_token(token) if token else None,
            language=language,
            verified_user_id=verified_user_id,
        )
        with self.session() as s:
            s.add(conv)
            s.commit()
        return conv, token

    def conversation_for(
        self,
        channel: str,
        external_id: str,
        language: str = "en",
        verified_user_id: str | None = None,
    ) -> Conversation:
        """The conversation of a platform thread, made on its first message. Safe when two
        processes race: the unique index decides, and the loser reads the winner's row."""
        found = self.find_conversation(channel, external_id)
        if found is not None:
            return found
        try:
            made = self.create_conversation(
                channel,
                external_id=external_id,
                language=language,
                verified_user_id=verified_user_id,
            )
            return made[0]
        except IntegrityError:
            found = self.find_conversation(channel, external_id)
            if found is None:
                raise
            return found

    def find_conversation(self, channel: str, external_id: str) -> Conversation | None:
        with self.session() as s:
            stmt = select(Conversation).where(
                Conversation.channel == channel, Conversation.external_id == external_id
            )
            return s.exec(stmt).first()

    @staticmethod
    def token_matches(conv: Conversation, token: str) -> bool:
        return conv.token_hash is not None and hmac.compare_digest(
            conv.token_hash, _hash_token(token)
        )

    def save_conversation(self, conv: Conversation) -> None:
        conv.updated_at = now()
        with self.session() as s:
            s.merge(conv)
            s.commit()

    # -- the inbox -----------------------------------------------------------------------------

    def receive(
        self, conversation_id: str, channel: str, external_id: str | None, text: str
    ) -> tuple[Message, bool]:
        """Store a customer message before any work. Returns (message, is_duplicate)."""
        msg = Message(
            conversation_id=conversation_id,
            channel=channel,
            external_id=external_id,
            role="customer",
            text=text,
            status="received",
        )
        with self.session() as s:
            s.add(msg)
            try:
                s.commit()
                return msg, False
            except IntegrityError:
                s.rollback()
        existing = self.find_message(channel, external_id) if external_id else None
        if existing is None:
            raise StoreError("message insert failed and no earlier copy exists")
        return existing, True

    def add_message(
        self,
        conversation_id: str,
        channel: str,
        role: str,
        text: str,
        author: str | None = None,
        author_name: str | None = None,
    ) -> Message:
        """A message that is not a customer turn (a staff reply, a notice)."""
        msg = _sent(conversation_id, channel, role, text, author)
        msg.author_name = author_name
        with self.session() as s:
            s.add(msg)
            s.commit()
        return msg

    def add_staff_message(
        self,
        conversation_id: str,
        channel: str,
        text: str,
        staff: str,
        relay: tuple[str, str],
        author_name: str | None = None,
    ) -> Message | None:
        """A staff reply, stored with its help-desk message id ``relay`` = (platform, id) in one
        transaction. None when that id was relayed before: a redelivery, relayed once only."""
        msg = _sent(conversation_id, channel, "staff", text, staff)
        msg.author_name = author_name
        with self.session() as s:
            s.add(msg)
            s.flush()
            s.add(StaffRelay(channel=relay[0], external_id=relay[1], message_id=msg.id or 0))
            try:
                s.commit()
            except IntegrityError:
                s.rollback()
                return None
        return msg

    def staff_relayed(self, channel: str, external_id: str) -> bool:
        """Whether the help desk's message ``external_id`` on ``channel`` was relayed already."""
        with self.session() as s:
            stmt = select(StaffRelay.id).where(
                StaffRelay.channel == channel, StaffRelay.external_id == external_id
            )
            return s.exec(stmt).first() is not None

    def pending(self) -> list[Message]:
        """Customer messages stored but never answered (a crash mid-turn); oldest first."""
        with self.session() as s:
            stmt = select(Message).where(Message.role == "customer", Message.status == "received")
            return list(s.exec(stmt.order_by(col(Message.id))))

    def messages(self, conversation_id: str) -> list[Message]:
        with self.session() as s:
            stmt = select(Message).where(Message.conversation_id == conversation_id)
            return list(s.exec(stmt.order_by(col(Message.id))))

    # -- turns ---------------------------------------------------------------------------------

    def turn_for_message(self, message_id: int) -> Turn | None:
        with self.session() as s:
            return s.exec(select(Turn).where(Turn.message_id == message_id)).first()

    def turns(self, conversation_id: str) -> list[Turn]:
        with self.session() as s:
            stmt = select(Turn).where(Turn.conversation_id == conversation_id)
            return list(s.exec(stmt.order_by(col(Turn.seq))))

    # -- escalations ---------------------------------------------------------------------------

    def escalate(
        self,
        conversation_id: str,
        reason: str,
        helpdesk: str | None,
        question: str | None = None,
        kind: str = "asked",
    ) -> Escalation:
        esc = Escalation(
            conversation_id=conversation_id,
            reason=reason,
            helpdesk=helpdesk,
            question=question,
            kind=kind,
        )
        with self.session() as s:
            s.add(esc)
            s.commit()
        return esc

    def get_escalation(self, escalation_id: int) -> Escalation | None:
        with self.session() as s:
            return s.get(Escalation, escalation_id)

    def find_escalation(self, thread: str) -> Escalation | None:
        """The escalation a help-desk thread belongs to."""
        with self.session() as s:
            stmt = select(Escalation).where(Escalation.thread == thread)
            return s.exec(stmt.order_by(col(Escalation.id).desc())).first()

    def update_escalation(self, escalation_id: int, **fields: Any) -> None:
        self._update(Escalation, escalation_id, fields)

    def update_conversation(self, conversation_id: str, **fields: Any) -> None:
        self._update(Conversation, conversation_id, fields)

    def _update(
        self, table: type[Escalation | Conversation], key: int | str, fields: dict[str, Any]
    ) -> None:
        """One UPDATE by primary key, stamping updated_at; no read of the row first."""
        with self.session() as s:
            s.execute(
                sa.update(table).where(col(table.id) == key).values(updated_at=now(), **fields)
            )
            s.commit()

    def escalations(self, status: str | None = None) -> list[Escalation]:
        with self.session() as s:
            stmt = select(Escalation)
            if status:
                stmt = stmt.where(Escalation.status == status)
            return list(s.exec(stmt.order_by(col(Escalation.id))))

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))

    def close(self) -> None:
        self.engine.dispose()


def _sent(conversation_id: str, channel: str, role: str, text: str, author: str | None) -> Message:
    """A message that is not a customer turn, already delivered (a staff reply, a notice)."""
    return Message(
        conversation_id=conversation_id,
        channel=channel,
        role=role,
        text=text,
        status="sent",
        author=author,
    )


# Imported last: the guard wraps this module's Store when GATEBOT_STORE_GUARD=1.
from bot.store.guard import install_from_env  # noqa: E402

install_from_env()

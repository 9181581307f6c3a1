"""The turn's two visits to the database (mixed into :class:`bot.store.Store`), in SQLAlchemy Core:
one transaction to receive a message (store it, read the conversation and its transcript), one to
complete the turn (the record, the replies, the new state, the message marked processed).

Core statements, not the ORM's unit of work: under load the ORM's bookkeeping cost ten times the
statements themselves, on the thread that also serves every other request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from bot.errors import StoreError
from bot.store.models import Conversation, Message, Turn, now, turn_flags

CONVERSATIONS = Conversation.__table__  # type: ignore[attr-defined]
MESSAGES = Message.__table__  # type: ignore[attr-defined]
TURNS = Turn.__table__  # type: ignore[attr-defined]

# Built once, values bound per call: building a statement again costs more than running it, and a
# statement object caches its compiled form. (A bound name differs from the columns an UPDATE
# sets: SQLAlchemy keeps those names for the SET clause.)
_INSERT_MESSAGE = sa.insert(MESSAGES)
_INSERT_TURN = sa.insert(TURNS)
_CONVERSATION = sa.select(CONVERSATIONS).where(CONVERSATIONS.c.id == sa.bindparam("b_id"))
_HISTORY = (
    sa.select(MESSAGES)
    .where(MESSAGES.c.conversation_id == sa.bindparam("b_conversation_id"))
    .order_by(MESSAGES.c.id)
)
_MARK_PROCESSED = (
    sa.update(MESSAGES)
    .where(MESSAGES.c.id == sa.bindparam("b_id"), MESSAGES.c.status == "received")
    .values(status="processed")
)
# Only over the turn count the turn read: a turn that lost its lock to another process (which
# stored this seq meanwhile) stores nothing.
_MOVE_CONVERSATION = (
    sa.update(CONVERSATIONS)
    .where(
        CONVERSATIONS.c.id == sa.bindparam("b_id"),
        CONVERSATIONS.c.turn_count == sa.bindparam("b_previous"),
    )
    .values(
        {
            name: sa.bindparam(f"b_{name}", type_=CONVERSATIONS.c[name].type)
            for name in ("state", "status", "paused", "turn_count", "updated_at")
        }
    )
)


@dataclass
class Received:
    """A stored customer message with what its turn needs. ``duplicate``: the delivery was seen
    before; ``turn`` is then the first delivery's turn, or None when that one never finished."""

    message: Message
    duplicate: bool
    conversation: Conversation | None
    history: list[Message] = field(default_factory=list)
    turn: Turn | None = None


class InboxMixin:
    engine: sa.Engine  # provided by Store

    def receive_turn(
        self, conversation_id: str, channel: str, inbox_key: str | None, text: str
    ) -> Received:
        """Store a customer message before any work, and read its conversation and transcript
        (this message included, oldest first) in the same transaction."""
        row: dict[str, Any] = {
            "conversation_id": conversation_id,
            "channel": channel,
            "external_id": inbox_key,
            "role": "customer",
            "text": text,
            "status": "received",
            "author": None,
            "created_at": now(),
        }
        try:
            with self.engine.begin() as conn:
                row["id"] = _inserted_id(conn.execute(_INSERT_MESSAGE, row))
                return Received(Message(**row), False, *_conversation_and_history(conn, row))
        except IntegrityError:
            pass  # the same delivery again: read what the first one made
        with self.engine.connect() as conn:
            return _earlier_delivery(conn, channel, inbox_key)

    def complete_turn(
        self,
        conv: Conversation,
        message: Message,
        record: Mapping[str, Any],
        replies: list[dict[str, Any]],
        channel: str,
    ) -> Turn:
        """Store the turn, the agent's replies and the conversation's new state, and mark the
        message processed: one transaction, so either all of it happened or none."""
        stamp = now()
        turn = _turn_row(conv, message, record, replies, stamp)
        with self.engine.begin() as conn:
            done = conn.execute(_MARK_PROCESSED, {"b_id": message.id})
            if done.rowcount != 1:
                raise StoreError(f"message {message.id} was not waiting for a turn")
            turn["id"] = _inserted_id(conn.execute(_INSERT_TURN, turn))
            texts = [r["text"] for r in replies if r.get("type") == "text"]
            if sent := [_reply_row(conv.id, channel, text, stamp) for text in texts]:
                conn.execute(_INSERT_MESSAGE, sent)
            moved = conn.execute(
                _MOVE_CONVERSATION,
                {
                    "b_id": conv.id,
                    "b_previous": turn["seq"] - 1,
                    "b_state": conv.state,
                    "b_status": conv.status,
                    "b_paused": conv.paused,
                    "b_turn_count": conv.turn_count,
                    "b_updated_at": stamp,
                },
            )
            if moved.rowcount != 1:
                raise StoreError(f"conversation {conv.id} took turn {turn['seq']} elsewhere")
        conv.updated_at = stamp
        return Turn.model_construct(**turn)


def _inserted_id(result: sa.CursorResult[Any]) -> int:
    key = result.inserted_primary_key
    assert key is not None  # a single-row INSERT always has one
    return int(key[0])


def _conversation_and_history(
    conn: Connection, message: Mapping[str, Any] | sa.RowMapping
) -> tuple[Conversation | None, list[Message]]:
    conv_id = message["conversation_id"]
    found = conn.execute(_CONVERSATION, {"b_id": conv_id}).first()
    rows = conn.execute(_HISTORY, {"b_conversation_id": conv_id})
    # Read-only copies: model_construct skips the ORM's instrumentation (a tenth of the cost).
    history = [Message.model_construct(**r._mapping) for r in rows]
    return (Conversation(**found._mapping) if found else None), history


def _earlier_delivery(conn: Connection, channel: str, inbox_key: str | None) -> Received:
    found = (
        conn.execute(
            sa.select(MESSAGES).where(
                MESSAGES.c.channel == channel, MESSAGES.c.external_id == inbox_key
            )
        ).first()
        if inbox_key is not None
        else None
    )
    if found is None:
        raise StoreError("message insert failed and no earlier copy exists")
    message = Message(**found._mapping)
    turn = conn.execute(sa.select(TURNS).where(TURNS.c.message_id == message.id)).first()
    if turn is not None:
        return Received(message, True, None, [], Turn.model_construct(**turn._mapping))
    return Received(message, True, *_conversation_and_history(conn, found._mapping))


def _turn_row(
    conv: Conversation,
    message: Message,
    record: Mapping[str, Any],
    replies: list[dict[str, Any]],
    stamp: Any,
) -> dict[str, Any]:
    reads = {r["head"]: r for r in record["reads"]}
    return {
        "conversation_id": conv.id,
        "seq": record["seq"],
        "message_id": message.id or 0,
        "move": record["move"]["name"] or "",
        "scope": record["scope"]["verdict"] or "",
        "intent": reads.get("intent", {}).get("answer"),
        "escalate": bool(record["move"]["escalate"]),
        **turn_flags(record),
        "total_ms": float(record["timings"].get("total_ms", 0.0)),
        "record": dict(record),
        "replies": replies,
        "created_at": stamp,
    }


def _reply_row(conversation_id: str, channel: str, text: str, stamp: Any) -> dict[str, Any]:
    return {
        "conversation_id": conversation_id,
        "channel": channel,
        "external_id": None,
        "role": "agent",
        "text": text,
        "status": "sent",
        "author": None,
        "created_at": stamp,
    }

"""A customer's data (mixed into :class:`bot.store.Store`): find their conversations, export
everything held about them, erase it and record the erasure (``gatebot data``).

A customer is a conversation, or an email address: every conversation whose messages, state or
channel thread name it. What one conversation holds: the conversation row, its messages (the
inbox and the transcript), turn records, escalations, staff relays, flow runs (forks of them
included) and their checkpoints, outcomes and staff's labels of its turns.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from bot.store.models import (
    Conversation,
    Erasure,
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

CONVERSATIONS = Conversation.__table__  # type: ignore[attr-defined]
MESSAGES = Message.__table__  # type: ignore[attr-defined]
TURNS = Turn.__table__  # type: ignore[attr-defined]
ESCALATIONS = Escalation.__table__  # type: ignore[attr-defined]
RELAYS = StaffRelay.__table__  # type: ignore[attr-defined]
RUNS = FlowRun.__table__  # type: ignore[attr-defined]
CHECKPOINTS = FlowCheckpoint.__table__  # type: ignore[attr-defined]
ERASURES = Erasure.__table__  # type: ignore[attr-defined]
OUTCOMES = Outcome.__table__  # type: ignore[attr-defined]
LABELS = TurnLabel.__table__  # type: ignore[attr-defined]

#: Held for the bot, not about the customer: a bearer token's hash is a credential.
_NOT_EXPORTED = {"token_hash"}


class CustomerDataMixin:
    engine: sa.Engine  # provided by Store

    def conversations_of(self, email: str) -> list[str]:
        """The conversations whose messages, state or thread id mention ``email`` (any case)."""
        needle = email.strip().lower()
        if not needle:
            return []

        def mentions(column: Any) -> Any:
            return sa.func.lower(column).contains(needle, autoescape=True)

        by_message = sa.select(MESSAGES.c.conversation_id).where(mentions(MESSAGES.c.text))
        by_conversation = sa.select(CONVERSATIONS.c.id).where(
            sa.or_(
                mentions(CONVERSATIONS.c.external_id),
                mentions(sa.cast(CONVERSATIONS.c.state, sa.Text)),
            )
        )
        with self.engine.connect() as conn:
            found = {r[0] for r in conn.execute(sa.union(by_message, by_conversation))}
        return sorted(found)

    def export_customer(self, conversation_ids: list[str]) -> list[dict[str, Any]]:
        """Everything held about these conversations, one dict each (unknown ids are skipped)."""
        out = []
        with self.engine.connect() as conn:
            for cid in conversation_ids:
                conv = conn.execute(
                    sa.select(CONVERSATIONS).where(CONVERSATIONS.c.id == cid)
                ).first()
                if conv is not None:
                    out.append(_export_one(conn, cid, _row(conv)))
        return out

    def erase_customer(
        self, conversation_ids: list[str], selector: str, extra: dict[str, int] | None = None
    ) -> dict[str, int]:
        """Delete everything held about these conversations in one transaction and record the
        erasure (ids and counts, no content). ``extra``: counts erased elsewhere (JSONL lines)."""
        with self.engine.begin() as conn:
            counts = _delete_all(conn, conversation_ids)
            counts.update(extra or {})
            conn.execute(
                sa.insert(ERASURES).values(
                    selector=selector,
                    conversations=sorted(conversation_ids),
                    counts=counts,
                    created_at=now(),
                )
            )
        return counts

    def inactive_since(self, cutoff: datetime) -> list[str]:
        """Conversations whose last activity (``updated_at``) is before ``cutoff``."""
        stmt = sa.select(CONVERSATIONS.c.id).where(CONVERSATIONS.c.updated_at < cutoff)
        with self.engine.connect() as conn:
            return sorted(conn.scalars(stmt))

    def erasures(self) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(ERASURES).order_by(ERASURES.c.id))
            return [_row(r) for r in rows]


def _row(row: Any) -> dict[str, Any]:
    return {k: v for k, v in row._mapping.items() if k not in _NOT_EXPORTED}


def _rows(conn: Connection, stmt: Any) -> list[dict[str, Any]]:
    return [_row(r) for r in conn.execute(stmt)]


def _run_ids(conn: Connection, conversation_ids: list[str]) -> list[str]:
    """The conversations' flow runs and, transitively, the forks made from them (a fork keeps
    its parent's inputs but may carry no conversation id)."""
    runs = set(
        conn.scalars(sa.select(RUNS.c.id).where(RUNS.c.conversation_id.in_(conversation_ids)))
    )
    frontier = set(runs)
    while frontier:
        children = set(conn.scalars(sa.select(RUNS.c.id).where(RUNS.c.parent_run_id.in_(frontier))))
        frontier = children - runs
        runs |= frontier
    return sorted(runs)


def _export_one(conn: Connection, cid: str, conv: dict[str, Any]) -> dict[str, Any]:
    messages = _rows(
        conn, sa.select(MESSAGES).where(MESSAGES.c.conversation_id == cid).order_by(MESSAGES.c.id)
    )
    message_ids = [m["id"] for m in messages]
    runs = []
    for run in _rows(
        conn,
        sa.select(RUNS)
        .where(RUNS.c.id.in_(_run_ids(conn, [cid])))
        .order_by(RUNS.c.created_at, RUNS.c.id),
    ):
        stmt = sa.select(CHECKPOINTS).where(CHECKPOINTS.c.run_id == run["id"])
        runs.append({**run, "checkpoints": _rows(conn, stmt.order_by(CHECKPOINTS.c.idx))})
    return {
        "conversation": conv,
        "messages": messages,
        "turns": _rows(
            conn, sa.select(TURNS).where(TURNS.c.conversation_id == cid).order_by(TURNS.c.seq)
        ),
        "escalations": _rows(
            conn,
            sa.select(ESCALATIONS)
            .where(ESCALATIONS.c.conversation_id == cid)
            .order_by(ESCALATIONS.c.id),
        ),
        "staff_relays": _rows(conn, sa.select(RELAYS).where(RELAYS.c.message_id.in_(message_ids))),
        "flow_runs": runs,
        "outcomes": _rows(conn, sa.select(OUTCOMES).where(OUTCOMES.c.conversation_id == cid)),
        "turn_labels": _rows(
            conn,
            sa.select(LABELS).where(
                LABELS.c.turn_id.in_(sa.select(TURNS.c.id).where(TURNS.c.conversation_id == cid))
            ),
        ),
    }


def _delete_all(conn: Connection, ids: list[str]) -> dict[str, int]:
    """Children before parents (turns name messages, messages name conversations)."""
    runs = _run_ids(conn, ids)
    message_ids = sa.select(MESSAGES.c.id).where(MESSAGES.c.conversation_id.in_(ids))
    turn_ids = sa.select(TURNS.c.id).where(TURNS.c.conversation_id.in_(ids))
    steps = [
        ("staff_relays", sa.delete(RELAYS).where(RELAYS.c.message_id.in_(message_ids))),
        ("turn_labels", sa.delete(LABELS).where(LABELS.c.turn_id.in_(turn_ids))),
        ("outcomes", sa.delete(OUTCOMES).where(OUTCOMES.c.conversation_id.in_(ids))),
        ("turns", sa.delete(TURNS).where(TURNS.c.conversation_id.in_(ids))),
        ("messages", sa.delete(MESSAGES).where(MESSAGES.c.conversation_id.in_(ids))),
        ("escalations", sa.delete(ESCALATIONS).where(ESCALATIONS.c.conversation_id.in_(ids))),
        ("checkpoints", sa.delete(CHECKPOINTS).where(CHECKPOINTS.c.run_id.in_(runs))),
        ("flow_runs", sa.delete(RUNS).where(RUNS.c.id.in_(runs))),
        ("conversations", sa.delete(CONVERSATIONS).where(CONVERSATIONS.c.id.in_(ids))),
    ]
    return {name: conn.execute(stmt).rowcount for name, stmt in steps}

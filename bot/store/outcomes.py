"""Outcomes and turn labels (mixed into :class:`bot.store.Store`): what became of a conversation,
and staff's reading of a turn, the labels head evaluation and promotion score against.

An outcome with an ``external_id`` (a CRM's or billing system's event id) is stored once: the
same id again returns the stored row. A turn's label for a head is one row, replaced by a
correction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from bot.errors import StoreError
from bot.store.models import Outcome, Turn, TurnLabel, now


@dataclass
class LabelledTurn:
    """A turn with staff's label for one head: what evaluation reads."""

    turn_id: int
    conversation_id: str
    seq: int
    label: str
    record: dict[str, Any]


class OutcomesMixin:
    engine: sa.Engine  # provided by Store

    def add_outcome(self, outcome: Outcome) -> tuple[Outcome, bool]:
        """Store ``outcome``; (the stored row, whether it was there already by external id)."""
        if outcome.external_id and (found := self.outcome_by_external(outcome.external_id)):
            return found, True
        with Session(self.engine, expire_on_commit=False) as s:
            s.add(outcome)
            try:
                s.commit()
                return outcome, False
            except IntegrityError:  # a concurrent delivery of the same webhook won the race
                s.rollback()
        found = self.outcome_by_external(outcome.external_id or "")
        if found is None:  # not a duplicate: some other constraint refused the row
            raise StoreError(f"outcome for {outcome.conversation_id} was refused by the database")
        return found, True

    def outcome_by_external(self, external_id: str) -> Outcome | None:
        with Session(self.engine, expire_on_commit=False) as s:
            return s.exec(select(Outcome).where(Outcome.external_id == external_id)).first()

    def outcomes(self, conversation_id: str | None = None) -> list[Outcome]:
        with Session(self.engine, expire_on_commit=False) as s:
            stmt = select(Outcome)
            if conversation_id is not None:
                stmt = stmt.where(Outcome.conversation_id == conversation_id)
            return list(s.exec(stmt.order_by(col(Outcome.id))))

    def get_turn(self, turn_id: int) -> Turn | None:
        with Session(self.engine, expire_on_commit=False) as s:
            return s.get(Turn, turn_id)

    def label_turn(self, turn_id: int, head: str, label: str, staff: str | None) -> TurnLabel:
        """Set staff's label of ``turn_id`` for ``head``, replacing an earlier one."""
        with Session(self.engine, expire_on_commit=False) as s:
            stmt = select(TurnLabel).where(TurnLabel.turn_id == turn_id, TurnLabel.head == head)
            row = s.exec(stmt).first()
            if row is None:
                row = TurnLabel(turn_id=turn_id, head=head, label=label, staff=staff)
            else:
                row.label, row.staff, row.updated_at = label, staff, now()
            s.add(row)
            s.commit()
            return row

    def labelled_turns(self, head: str) -> list[LabelledTurn]:
        """Every turn staff labelled for ``head``, oldest first, with its record."""
        with Session(self.engine, expire_on_commit=False) as s:
            stmt = (
                select(Turn, TurnLabel.label)
                .join(TurnLabel, col(TurnLabel.turn_id) == col(Turn.id))
                .where(TurnLabel.head == head)
                .order_by(col(Turn.id))
            )
            return [
                LabelledTurn(t.id or 0, t.conversation_id, t.seq, label, t.record)
                for t, label in s.exec(stmt)
            ]

    def last_turns(self, conversation_ids: list[str]) -> dict[str, Turn]:
        """Each conversation's latest turn (its last forecast), for those that have one."""
        found: dict[str, Turn] = {}
        with Session(self.engine, expire_on_commit=False) as s:
            for start in range(0, len(conversation_ids), 500):
                chunk = conversation_ids[start : start + 500]
                stmt = select(Turn).where(col(Turn.conversation_id).in_(chunk))
                for t in s.exec(stmt.order_by(col(Turn.seq))):
                    found[t.conversation_id] = t  # ordered by seq: the last one stays
        return found

"""The staff inspector's reads: conversations filtered and paged in SQL, one conversation with
everything stored about it (for its timeline and its JSON export), and the escalation queue.

Only reads: the inspector's writes go through the help desks and the flow engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlmodel import col, select

from bot.store.models import (
    Conversation,
    Escalation,
    FlowCheckpoint,
    FlowRun,
    KnowledgePassage,
    Message,
    Outcome,
    Turn,
    TurnLabel,
)

if TYPE_CHECKING:
    from bot.store import Store

CONVERSATIONS = Conversation.__table__  # type: ignore[attr-defined]
PER_PAGE = 50
MAX_PER_PAGE = 200
MAX_SEARCH = 200
#: Escalations a person still has to act on; handed back and resolved ones are done with.
WAITING = ("open", "emailed", "claimed")


@dataclass(frozen=True)
class ConversationFilter:
    """What the list shows; every field None or False means no filter on it."""

    channel: str | None = None
    escalated: bool = False  # has an escalation, or a turn whose move escalated
    unsure: bool = False
    refused: bool = False
    #: An outcome label (the outcomes table: staff resolving, a CRM or billing webhook), an
    #: escalation's recorded outcome ("refunded"), or the conversation's own (the pack's outcome
    #: it qualified for: "demo", "trial").
    outcome: str | None = None
    status: str | None = None  # the conversation's status (open, handed_off, resolved, ...)
    since: date | None = None  # created on or after this day (UTC)
    until: date | None = None  # created on or before this day (UTC)
    text: str | None = None  # a case-insensitive substring of any of its messages


@dataclass(frozen=True)
class ConversationRow:
    id: str
    channel: str
    status: str
    paused: bool
    turn_count: int
    created_at: datetime
    updated_at: datetime
    escalated: bool
    first_message: str | None


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _conditions(f: ConversationFilter) -> list[Any]:
    conv_id = col(Conversation.id)
    where: list[Any] = []
    if f.channel:
        where.append(col(Conversation.channel) == f.channel)
    if f.status:
        where.append(col(Conversation.status) == f.status)
    if f.since:
        where.append(col(Conversation.created_at) >= _day_start(f.since))
    if f.until:
        where.append(col(Conversation.created_at) < _day_start(f.until + timedelta(days=1)))
    turn = select(Turn.id).where(col(Turn.conversation_id) == conv_id)
    if f.unsure:
        where.append(sa.exists(turn.where(col(Turn.unsure).is_(True))))
    if f.refused:
        where.append(sa.exists(turn.where(col(Turn.refused).is_(True))))
    escalation = select(Escalation.id).where(col(Escalation.conversation_id) == conv_id)
    if f.escalated:  # queued for a person, or a turn that decided to escalate
        where.append(sa.or_(sa.exists(escalation), sa.exists(turn.where(col(Turn.escalate)))))
    if f.outcome:
        where.append(_has_outcome(f.outcome, conv_id, escalation))
    if f.text:
        like = "%" + _escape_like(f.text[:MAX_SEARCH].lower()) + "%"
        said = select(Message.id).where(
            col(Message.conversation_id) == conv_id,
            sa.func.lower(col(Message.text)).like(like, escape="\\"),
        )
        where.append(sa.exists(said))
    return where


def _has_outcome(kind: str, conv_id: Any, escalation: Any) -> Any:
    """A label in the outcomes table, what staff wrote on resolving (an older escalation's free
    word), or the outcome the agent qualified for."""
    labelled = select(Outcome.id).where(
        col(Outcome.conversation_id) == conv_id, col(Outcome.kind) == kind
    )
    qualified = CONVERSATIONS.c.state["outcome"].as_string() == kind
    staff_said = sa.exists(escalation.where(col(Escalation.outcome) == kind))
    return sa.or_(sa.exists(labelled), staff_said, qualified)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def find_conversations(
    store: Store, f: ConversationFilter, page: int = 1, per_page: int = PER_PAGE
) -> tuple[list[ConversationRow], int]:
    """One page of the conversations ``f`` lets through, most recently active first, and how
    many there are in all."""
    per_page = max(1, min(per_page, MAX_PER_PAGE))
    where = _conditions(f)
    conv_id = col(Conversation.id)
    escalated = sa.exists(
        select(Escalation.id).where(col(Escalation.conversation_id) == conv_id)
    ).label("escalated")
    first = (
        select(Message.text)
        .where(col(Message.conversation_id) == conv_id, col(Message.role) == "customer")
        .order_by(col(Message.id))
        .limit(1)
        .scalar_subquery()
        .label("first_message")
    )
    stmt = (
        sa.select(Conversation.__table__, escalated, first)  # type: ignore[attr-defined]
        .where(*where)
        .order_by(col(Conversation.updated_at).desc(), conv_id)
        .limit(per_page)
        .offset((max(page, 1) - 1) * per_page)
    )
    count = sa.select(sa.func.count()).select_from(Conversation).where(*where)
    with store.engine.connect() as conn:
        total = int(conn.execute(count).scalar_one())
        rows = [_row(r._mapping) for r in conn.execute(stmt)]
    return rows, total


def _row(m: Any) -> ConversationRow:
    return ConversationRow(
        id=m["id"],
        channel=m["channel"],
        status=m["status"],
        paused=bool(m["paused"]),
        turn_count=m["turn_count"],
        created_at=m["created_at"],
        updated_at=m["updated_at"],
        escalated=bool(m["escalated"]),
        first_message=m["first_message"],
    )


def channels(store: Store) -> list[str]:
    """The channels conversations came from, for the filter's choices."""
    with store.engine.connect() as conn:
        stmt = sa.select(col(Conversation.channel)).distinct().order_by(col(Conversation.channel))
        return [r[0] for r in conn.execute(stmt)]


@dataclass
class Dossier:
    """Everything stored about one conversation."""

    conversation: Conversation
    messages: list[Message]
    turns: list[Turn]
    escalations: list[Escalation]
    runs: list[FlowRun]
    checkpoints: dict[str, list[FlowCheckpoint]]  # by run id
    #: Staff's intent label of each labelled turn, by turn id.
    labels: dict[int, str] = field(default_factory=dict)
    outcomes: list[Outcome] = field(default_factory=list)


def dossier(store: Store, conversation_id: str) -> Dossier | None:
    conv = store.get_conversation(conversation_id)
    if conv is None:
        return None
    with store.session() as s:
        escalations = s.exec(
            select(Escalation)
            .where(Escalation.conversation_id == conversation_id)
            .order_by(col(Escalation.id))
        ).all()
        labelled = s.exec(
            select(TurnLabel.turn_id, TurnLabel.label)
            .join(Turn, col(Turn.id) == col(TurnLabel.turn_id))
            .where(Turn.conversation_id == conversation_id, TurnLabel.head == "intent")
        ).all()
    runs = store.flow_runs(conversation_id)
    return Dossier(
        conv,
        store.messages(conversation_id),
        store.turns(conversation_id),
        list(escalations),
        runs,
        {run.id: store.checkpoints(run.id) for run in runs},
        {turn_id: label for turn_id, label in labelled},
        store.outcomes(conversation_id),
    )


def escalation_queue(store: Store, open_only: bool = True) -> list[Escalation]:
    """The escalations staff still have to act on (open, emailed, claimed), or all of them,
    newest first."""
    with store.session() as s:
        stmt = select(Escalation)
        if open_only:
            stmt = stmt.where(col(Escalation.status).in_(WAITING))
        return list(s.exec(stmt.order_by(col(Escalation.id).desc()).limit(500)))


def passages(store: Store, key: str) -> list[KnowledgePassage]:
    """The stored passages a cited fact's key names, in every pack that has one."""
    with store.session() as s:
        stmt = select(KnowledgePassage).where(KnowledgePassage.key == key)
        return list(s.exec(stmt.order_by(col(KnowledgePassage.pack))))


def recent_runs(store: Store, limit: int = 500) -> list[FlowRun]:
    """The latest flow runs, newest first."""
    with store.session() as s:
        stmt = select(FlowRun).order_by(col(FlowRun.created_at).desc(), col(FlowRun.id))
        return list(s.exec(stmt.limit(limit)))


def run_with_checkpoints(store: Store, run_id: str) -> tuple[FlowRun | None, list[FlowCheckpoint]]:
    run = store.get_flow_run(run_id)
    return run, store.checkpoints(run_id) if run is not None else []

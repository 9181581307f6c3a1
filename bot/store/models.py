"""The tables as the code reads them today. Migrations (``migrations.py``) are what create them."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, LargeBinary, UniqueConstraint
from sqlmodel import Field, SQLModel


def now() -> datetime:
    return datetime.now(UTC)


class Conversation(SQLModel, table=True):
    __tablename__ = "conversations"
    __table_args__ = (
        Index("uq_conversations_channel_external", "channel", "external_id", unique=True),
    )
    id: str = Field(primary_key=True, max_length=64)
    channel: str = Field(index=True, max_length=32)
    external_id: str | None = Field(default=None, index=True, max_length=255)
    token_hash: str | None = Field(default=None, max_length=64)
    status: str = Field(default="open", max_length=16)  # open | handed_off | stopped
    paused: bool = False  # staff have taken over; the agent stays quiet
    language: str = Field(default="en", max_length=8)
    #: The customer's id as the host site signed it, or the platform's user id (Slack, Discord);
    #: set only by verified channel code, never from what the customer types.
    verified_user_id: str | None = Field(default=None, max_length=255)
    turn_count: int = 0
    state: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=now, index=True)
    updated_at: datetime = Field(default_factory=now, index=True)


class Message(SQLModel, table=True):
    """The inbox and the transcript. A customer message is stored before any work on it."""

    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("channel", "external_id", name="uq_messages_channel_external"),
    )
    id: int | None = Field(default=None, primary_key=True)
    conversation_id: str = Field(index=True, foreign_key="conversations.id", max_length=64)
    channel: str = Field(max_length=32)
    external_id: str | None = Field(default=None, max_length=255)
    role: str = Field(max_length=16)  # customer | agent | staff
    text: str
    author: str | None = Field(default=None, max_length=255)  # who on the staff wrote it
    author_name: str | None = Field(default=None, max_length=255)  # their display name
    status: str = Field(
        default="received", index=True, max_length=16
    )  # received | processed | sent
    created_at: datetime = Field(default_factory=now)


def turn_flags(record: Mapping[str, Any]) -> dict[str, bool]:
    """The turn's filter columns from its record; a record missing keys (an older version's)
    counts as neither."""
    reads = record.get("reads") or []
    gate = (record.get("reply") or {}).get("gate") or {}
    return {
        "unsure": any(isinstance(r, dict) and r.get("outcome") == "unsure" for r in reads),
        "refused": gate.get("passed") is False,
    }


class Turn(SQLModel, table=True):
    """One turn record: the full JSON plus the columns people filter on."""

    __tablename__ = "turns"
    __table_args__ = (UniqueConstraint("conversation_id", "seq", name="uq_turns_conversation_seq"),)
    id: int | None = Field(default=None, primary_key=True)
    conversation_id: str = Field(index=True, foreign_key="conversations.id", max_length=64)
    seq: int
    message_id: int = Field(unique=True, foreign_key="messages.id")
    move: str = Field(index=True, max_length=32)
    scope: str = Field(index=True, max_length=16)
    intent: str | None = Field(default=None, index=True, max_length=64)
    escalate: bool = Field(default=False, index=True)
    #: A read came out unsure / the reply gate refused a draft: filters of the inspector's list.
    unsure: bool = Field(default=False, index=True)
    refused: bool = Field(default=False, index=True)
    total_ms: float = 0.0
    record: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    replies: list[dict[str, Any]] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=now)


class Escalation(SQLModel, table=True):
    """A conversation waiting for a person on a help desk."""

    __tablename__ = "escalations"
    id: int | None = Field(default=None, primary_key=True)
    conversation_id: str = Field(index=True, foreign_key="conversations.id", max_length=64)
    reason: str
    helpdesk: str | None = Field(default=None, max_length=64)
    # open -> claimed (staff took over) -> handed_back | resolved; open -> emailed (nobody came)
    status: str = Field(default="open", index=True, max_length=16)
    staff: str | None = Field(default=None, max_length=255)
    question: str | None = None
    kind: str = Field(default="asked", max_length=16)  # asked | refused | unsure | preflight
    thread: str | None = Field(default=None, max_length=255)  # the help desk's thread for it
    delivery: str | None = None  # how it reached the desk, or why it did not
    outcome: str | None = Field(default=None, max_length=64)
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)


class StaffRelay(SQLModel, table=True):
    """A staff message relayed to a customer, by the help-desk platform's own message id: a
    redelivery (a Slack retry, a gateway replay), even after a restart, finds it and relays
    nothing."""

    __tablename__ = "staff_relays"
    __table_args__ = (
        UniqueConstraint("channel", "external_id", name="uq_staff_relays_channel_external"),
    )
    id: int | None = Field(default=None, primary_key=True)
    channel: str = Field(max_length=32)  # the help desk's platform (slack, discord)
    external_id: str = Field(max_length=255)
    message_id: int  # the staff message it became
    created_at: datetime = Field(default_factory=now)


class StaffSession(SQLModel, table=True):
    """A staff member logged in to the inspector. The cookie holds a random id; only its SHA-256
    is stored, so a copy of the table logs nobody in. The CSRF token lives here too, so it holds
    on every process. ``token_mark`` ties the session to the admin token it was opened with (an
    HMAC keyed by the cookie's id, so the row alone says nothing of the token): a new token
    ends every session."""

    __tablename__ = "staff_sessions"
    id_hash: str = Field(primary_key=True, max_length=64)
    staff: str = Field(max_length=80)
    csrf: str = Field(max_length=64)
    token_mark: str = Field(max_length=64)
    expires_at: datetime = Field(index=True)
    created_at: datetime = Field(default_factory=now)


class KnowledgePassage(SQLModel, table=True):
    """One citable passage of a pack (gatebot_knowledge): an FAQ entry or a document piece."""

    __tablename__ = "knowledge_passages"
    __table_args__ = (UniqueConstraint("pack", "key", name="uq_knowledge_passages_pack_key"),)
    id: int | None = Field(default=None, primary_key=True)
    pack: str = Field(index=True, max_length=128)
    key: str = Field(max_length=255)  # what a reply cites: "faq-trial", "doc-monitor#alerts"
    position: int  # reading order within the pack
    kind: str = Field(max_length=8)  # faq | doc
    title: str
    text: str
    source: str = Field(max_length=512)
    keywords: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    content_hash: str = Field(index=True, max_length=64)  # of what is embedded: title + text
    title_hash: str = Field(index=True, max_length=64)
    updated_at: datetime = Field(default_factory=now)


class KnowledgeVector(SQLModel, table=True):
    """An embedding keyed by the hash of the text embedded and the model id: the same text under
    the same model is embedded once, whichever pack or passage holds it."""

    __tablename__ = "knowledge_vectors"
    content_hash: str = Field(primary_key=True, max_length=64)
    model: str = Field(primary_key=True, max_length=255)
    dim: int
    vector: bytes = Field(sa_column=Column(LargeBinary, nullable=False))  # float32, little-endian
    created_at: datetime = Field(default_factory=now)


class KnowledgePack(SQLModel, table=True):
    """The pack version the stored passages were cut from, so a start can skip re-cutting."""

    __tablename__ = "knowledge_packs"
    pack: str = Field(primary_key=True, max_length=128)
    version: str = Field(max_length=64)
    passages: int = 0
    indexed_at: datetime = Field(default_factory=now)


class KnowledgeBm25(SQLModel, table=True):
    """A pack's BM25 index as arrays (a CSC matrix of per-word passage scores), so a start loads
    it instead of tokenizing every passage again (15 s at 100,000 passages)."""

    __tablename__ = "knowledge_bm25"
    pack: str = Field(primary_key=True, max_length=128)
    version: str = Field(max_length=128)  # pack version + tokenizer + BM25 parameters
    num_docs: int
    vocab: bytes = Field(sa_column=Column(LargeBinary, nullable=False))  # words, one per line
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))  # float32 scores
    indices: bytes = Field(sa_column=Column(LargeBinary, nullable=False))  # int32 passage rows
    indptr: bytes = Field(sa_column=Column(LargeBinary, nullable=False))  # int64 column starts
    built_at: datetime = Field(default_factory=now)


class FlowRun(SQLModel, table=True):
    """One run of a flow in a conversation; a fork names the run and checkpoint it branched
    from. The schedule is the order the run walks, recorded when it starts."""

    __tablename__ = "flow_runs"
    id: str = Field(primary_key=True, max_length=32)
    conversation_id: str | None = Field(default=None, index=True, max_length=64)
    flow: str = Field(index=True, max_length=64)
    flow_version: str = Field(max_length=64)
    status: str = Field(default="active", max_length=16)  # active | done | handed_off | abandoned
    parent_run_id: str | None = Field(default=None, max_length=32)
    fork_index: int | None = None  # the parent's checkpoint this run branched from
    allow_side_effects: bool = True  # False on a fork: changes tools run dry
    schedule: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=now)


class FlowCheckpoint(SQLModel, table=True):
    """What one step saw and produced, and the run's progress after it. Append-only: the code
    has no path that updates or deletes one."""

    __tablename__ = "flow_checkpoints"
    __table_args__ = (UniqueConstraint("run_id", "idx", name="uq_flow_checkpoints_run_idx"),)
    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(index=True, max_length=32)
    idx: int
    step_id: str = Field(max_length=64)
    pass_no: int = 1
    input: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    output: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    model: str | None = Field(default=None, max_length=128)
    progress: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    edited: bool = False  # a fork's copy whose output an operator changed by hand
    created_at: datetime = Field(default_factory=now)


class Erasure(SQLModel, table=True):
    """One erasure of a customer's data (``gatebot data erase``): what was asked for, when, and
    how many rows of each kind went. The conversation ids stay (random, they identify nobody);
    an email asked for does not."""

    __tablename__ = "erasures"
    id: int | None = Field(default=None, primary_key=True)
    selector: str = Field(max_length=16)  # conversation | email
    conversations: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    counts: dict[str, int] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=now)


class Outcome(SQLModel, table=True):
    """What became of a conversation, as a label: trial, demo, purchase, churn, resolved or
    not-resolved, from a CRM or billing webhook or from staff resolving an escalation. ``turns``
    links it to the conversation's turns and the head versions that read them."""

    __tablename__ = "outcomes"
    id: int | None = Field(default=None, primary_key=True)
    conversation_id: str = Field(index=True, foreign_key="conversations.id", max_length=64)
    kind: str = Field(index=True, max_length=16)
    source: str = Field(max_length=16)  # api | escalation
    external_id: str | None = Field(default=None, unique=True, max_length=255)
    staff: str | None = Field(default=None, max_length=255)
    note: str | None = None
    value: float | None = None  # e.g. a purchase's amount, as the webhook gave it
    turns: list[dict[str, Any]] = Field(
        default_factory=list, sa_column=Column(JSON, nullable=False)
    )
    occurred_at: datetime | None = None
    created_at: datetime = Field(default_factory=now)


class TurnLabel(SQLModel, table=True):
    """Staff's reading of one turn for one head (its intent): confirmed or corrected. A later
    label for the same turn and head replaces the earlier one."""

    __tablename__ = "turn_labels"
    __table_args__ = (UniqueConstraint("turn_id", "head", name="uq_turn_labels_turn_head"),)
    id: int | None = Field(default=None, primary_key=True)
    turn_id: int = Field(index=True, foreign_key="turns.id")
    head: str = Field(max_length=64)
    label: str = Field(max_length=64)
    staff: str | None = Field(default=None, max_length=255)
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)

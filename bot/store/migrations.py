"""Versioned schema migrations: an append-only list of named steps, with a table of those applied.

Each step carries its own frozen table definitions, so editing ``models.py`` never changes what an
old step did; a new column is a new step. ``tests/test_store.py`` checks that the migrated schema
matches the models.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

MIGRATIONS: list[tuple[str, Callable[[Connection], None]]] = []


def migration(fn: Callable[[Connection], None]) -> Callable[[Connection], None]:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_initial(conn: Connection) -> None:
    md = sa.MetaData()
    sa.Table(
        "conversations",
        md,
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("channel", sa.String(32), nullable=False, index=True),
        sa.Column("external_id", sa.String(255), index=True),
        sa.Column("token_hash", sa.String(64)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("paused", sa.Boolean, nullable=False),
        sa.Column("language", sa.String(8), nullable=False),
        sa.Column("turn_count", sa.Integer, nullable=False),
        sa.Column("state", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    sa.Table(
        "messages",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "conversation_id",
            sa.String(64),
            sa.ForeignKey("conversations.id"),
            nullable=False,
            index=True,
        ),
        sa.Column("channel", sa.String(32), nullable=False),
        sa.Column("external_id", sa.String(255)),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("channel", "external_id", name="uq_messages_channel_external"),
    )
    sa.Table(
        "turns",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "conversation_id",
            sa.String(64),
            sa.ForeignKey("conversations.id"),
            nullable=False,
            index=True,
        ),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column(
            "message_id", sa.Integer, sa.ForeignKey("messages.id"), nullable=False, unique=True
        ),
        sa.Column("move", sa.String(32), nullable=False, index=True),
        sa.Column("scope", sa.String(16), nullable=False, index=True),
        sa.Column("intent", sa.String(64), index=True),
        sa.Column("escalate", sa.Boolean, nullable=False, index=True),
        sa.Column("total_ms", sa.Float, nullable=False),
        sa.Column("record", sa.JSON, nullable=False),
        sa.Column("replies", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("conversation_id", "seq", name="uq_turns_conversation_seq"),
    )
    sa.Table(
        "escalations",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "conversation_id",
            sa.String(64),
            sa.ForeignKey("conversations.id"),
            nullable=False,
            index=True,
        ),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("helpdesk", sa.String(64)),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("staff", sa.String(255)),
        sa.Column("question", sa.Text),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    md.create_all(conn)


@migration
def m002_knowledge(conn: Connection) -> None:
    """Knowledge passages, their embedding vectors, the pack version they were cut from and the
    BM25 index built over them (the gatebot_knowledge plugin)."""
    md = sa.MetaData()
    sa.Table(
        "knowledge_passages",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("pack", sa.String(128), nullable=False, index=True),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("source", sa.String(512), nullable=False),
        sa.Column("keywords", sa.JSON, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False, index=True),
        sa.Column("title_hash", sa.String(64), nullable=False, index=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("pack", "key", name="uq_knowledge_passages_pack_key"),
    )
    sa.Table(
        "knowledge_vectors",
        md,
        sa.Column("content_hash", sa.String(64), primary_key=True),
        sa.Column("model", sa.String(255), primary_key=True),
        sa.Column("dim", sa.Integer, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    sa.Table(
        "knowledge_packs",
        md,
        sa.Column("pack", sa.String(128), primary_key=True),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("passages", sa.Integer, nullable=False),
        sa.Column("indexed_at", sa.DateTime(timezone=True), nullable=False),
    )
    sa.Table(
        "knowledge_bm25",
        md,
        sa.Column("pack", sa.String(128), primary_key=True),
        sa.Column("version", sa.String(128), nullable=False),
        sa.Column("num_docs", sa.Integer, nullable=False),
        sa.Column("vocab", sa.LargeBinary, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("indices", sa.LargeBinary, nullable=False),
        sa.Column("indptr", sa.LargeBinary, nullable=False),
        sa.Column("built_at", sa.DateTime(timezone=True), nullable=False),
    )
    md.create_all(conn)


@migration
def m003_helpdesk(conn: Connection) -> None:
    """Escalations learn their kind, help-desk thread, delivery and outcome; messages their
    staff author."""
    for table, column, kind in [
        ("escalations", "kind", "VARCHAR(16) NOT NULL DEFAULT 'asked'"),
        ("escalations", "thread", "VARCHAR(255)"),
        ("escalations", "delivery", "TEXT"),
        ("escalations", "outcome", "VARCHAR(64)"),
        ("messages", "author", "VARCHAR(255)"),
    ]:
        conn.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN {column} {kind}"))


@migration
def m004_conversation_key(conn: Connection) -> None:
    """One conversation per platform thread, even with several bot processes."""
    conn.execute(
        sa.text(
            "CREATE UNIQUE INDEX uq_conversations_channel_external "
            "ON conversations (channel, external_id)"
        )
    )


@migration
def m005_flows(conn: Connection) -> None:
    """Flow runs and their append-only checkpoints."""
    md = sa.MetaData()
    sa.Table(
        "flow_runs",
        md,
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("conversation_id", sa.String(64), index=True),
        sa.Column("flow", sa.String(64), nullable=False, index=True),
        sa.Column("flow_version", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("parent_run_id", sa.String(32)),
        sa.Column("fork_index", sa.Integer),
        sa.Column("allow_side_effects", sa.Boolean, nullable=False),
        sa.Column("schedule", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    sa.Table(
        "flow_checkpoints",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String(32), nullable=False, index=True),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("step_id", sa.String(64), nullable=False),
        sa.Column("pass_no", sa.Integer, nullable=False),
        sa.Column("input", sa.JSON, nullable=False),
        sa.Column("output", sa.JSON, nullable=False),
        sa.Column("model", sa.String(128)),
        sa.Column("progress", sa.JSON, nullable=False),
        sa.Column("edited", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("run_id", "idx", name="uq_flow_checkpoints_run_idx"),
    )
    md.create_all(conn)


@migration
def m006_staff_relays(conn: Connection) -> None:
    """Staff messages relayed to customers, unique by the help desk's message id, so a
    redelivery is never relayed twice (before, each process remembered them in memory)."""
    md = sa.MetaData()
    sa.Table(
        "staff_relays",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("channel", sa.String(32), nullable=False),
        sa.Column("external_id", sa.String(255), nullable=False),
        sa.Column("message_id", sa.Integer, nullable=False),  # the staff message it became
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("channel", "external_id", name="uq_staff_relays_channel_external"),
    )
    md.create_all(conn)


@migration
def m007_erasures(conn: Connection) -> None:
    """A record of each erasure of a customer's data: when, what was asked for and how many rows
    went, never the data itself."""
    md = sa.MetaData()
    sa.Table(
        "erasures",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("selector", sa.String(16), nullable=False),  # conversation | email
        sa.Column("conversations", sa.JSON, nullable=False),  # the ids erased
        sa.Column("counts", sa.JSON, nullable=False),  # rows (and JSONL lines) removed, by kind
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    md.create_all(conn)


@migration
def m008_verified_identity(conn: Connection) -> None:
    """The verified user id of a conversation (a signed web identity, a Slack or Discord user)."""
    conn.execute(sa.text("ALTER TABLE conversations ADD COLUMN verified_user_id VARCHAR(255)"))


@migration
def m009_staff_author_name(conn: Connection) -> None:
    """A staff message's author as people read it (a Slack or Discord display name), beside the
    platform id in ``author``: a reloaded widget shows who wrote."""
    conn.execute(sa.text("ALTER TABLE messages ADD COLUMN author_name VARCHAR(255)"))


@migration
def m010_outcomes(conn: Connection) -> None:
    """Outcomes as labels: what became of a conversation (a trial, a purchase, a churn, a
    resolved escalation), linked to the turns and head versions that led to it; and staff's
    confirmed or corrected reading of one turn (its intent), what head evaluation scores against."""
    md = sa.MetaData()
    for parent in ("conversations", "turns"):  # as they are now, for the foreign keys only
        sa.Table(parent, md, autoload_with=conn)
    sa.Table(
        "outcomes",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "conversation_id",
            sa.String(64),
            sa.ForeignKey("conversations.id"),
            nullable=False,
            index=True,
        ),
        sa.Column("kind", sa.String(16), nullable=False, index=True),
        sa.Column("source", sa.String(16), nullable=False),  # api | escalation
        sa.Column("external_id", sa.String(255), unique=True),  # a webhook's id: idempotent
        sa.Column("staff", sa.String(255)),
        sa.Column("note", sa.Text),
        sa.Column("value", sa.Float),
        sa.Column("turns", sa.JSON, nullable=False),  # [{"id", "seq", "heads", "forecast"}]
        sa.Column("occurred_at", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    sa.Table(
        "turn_labels",
        md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("turn_id", sa.Integer, sa.ForeignKey("turns.id"), nullable=False, index=True),
        sa.Column("head", sa.String(64), nullable=False),
        sa.Column("label", sa.String(64), nullable=False),
        sa.Column("staff", sa.String(255)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("turn_id", "head", name="uq_turn_labels_turn_head"),
    )
    md.create_all(conn)


@migration
def m011_inspector(conn: Connection) -> None:
    """The inspector's filters: turns learn whether a read was unsure and whether the reply gate
    refused (filled from the stored records), and the list's sort and date columns are indexed."""
    for column in ("unsure", "refused"):
        conn.execute(
            sa.text(f"ALTER TABLE turns ADD COLUMN {column} BOOLEAN NOT NULL DEFAULT false")
        )
        conn.execute(sa.text(f"CREATE INDEX ix_turns_{column} ON turns ({column})"))
    for column in ("created_at", "updated_at"):
        conn.execute(sa.text(f"CREATE INDEX ix_conversations_{column} ON conversations ({column})"))
    turns = sa.table(
        "turns",
        sa.column("id"),
        sa.column("record", sa.JSON),
        sa.column("unsure"),
        sa.column("refused"),
    )
    last = 0
    while True:  # in batches by id, so a large table is never read whole
        rows = conn.execute(
            sa.select(turns.c.id, turns.c.record)
            .where(turns.c.id > last)
            .order_by(turns.c.id)
            .limit(1000)
        ).all()
        if not rows:
            return
        for row_id, record in rows:
            flags = _frozen_turn_flags(record if isinstance(record, dict) else {})
            if any(flags.values()):
                conn.execute(sa.update(turns).where(turns.c.id == row_id).values(**flags))
        last = rows[-1][0]


def _frozen_turn_flags(record: dict[str, Any]) -> dict[str, bool]:
    """m011's copy of ``models.turn_flags`` as it stood, so editing that never changes m011."""
    reads = record.get("reads") or []
    gate = (record.get("reply") or {}).get("gate") or {}
    return {
        "unsure": any(isinstance(r, dict) and r.get("outcome") == "unsure" for r in reads),
        "refused": gate.get("passed") is False,
    }


@migration
def m012_staff_sessions(conn: Connection) -> None:
    """The inspector's staff sessions, in the database every process shares: a cookie made on
    one process is honoured on the others, and logging out on one ends it on all."""
    md = sa.MetaData()
    sa.Table(
        "staff_sessions",
        md,
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("staff", sa.String(80), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("token_mark", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    md.create_all(conn)


_applied = sa.Table(
    "schema_migrations",
    sa.MetaData(),
    sa.Column("name", sa.String(128), primary_key=True),
    sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False),
)


def applied(conn: Connection) -> list[str]:
    if not sa.inspect(conn).has_table("schema_migrations"):
        return []
    return [row[0] for row in conn.execute(sa.select(_applied.c.name))]


#: The advisory lock key migrations run under on PostgreSQL (any fixed 64-bit number).
MIGRATION_LOCK = 0x6761746562_6F74  # "gatebot"
#: Seconds a process waits for another's migrations (the statement timeout is far shorter).
MIGRATION_WAIT_MS = 300_000


def migrate(engine: sa.Engine) -> list[str]:
    """Apply every step not yet applied, each in its own transaction. Returns the names applied.
    On PostgreSQL under an advisory lock: processes starting together on an empty database take
    turns, and the later ones find every step applied."""
    if engine.dialect.name != "postgresql":
        return _migrate(engine)
    with engine.begin() as lock:
        # A transaction-level lock, held until this block ends; the steps run on other connections.
        lock.execute(sa.text(f"SET LOCAL statement_timeout = {MIGRATION_WAIT_MS}"))
        lock.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        return _migrate(engine)


def _migrate(engine: sa.Engine) -> list[str]:
    done: list[str] = []
    with engine.begin() as conn:
        _applied.metadata.create_all(conn)
    for name, step in MIGRATIONS:
        with engine.begin() as conn:
            if name in applied(conn):
                continue
            step(conn)
            now = datetime.now(UTC)
            conn.execute(_applied.insert().values(name=name, applied_at=now))
            done.append(name)
    return done

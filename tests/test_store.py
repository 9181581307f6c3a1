"""The store on SQLite and PostgreSQL: migrations, the inbox, turns and escalations."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import SQLModel

from bot.store import Store, normalise_url
from bot.store.migrations import MIGRATIONS
from bot.turn.record import new_record


@pytest.fixture
def store(database_url: str) -> Any:
    s = Store(database_url)
    s.migrate()
    yield s
    s.close()


def test_migrations_apply_once_and_are_recorded(store: Store) -> None:
    assert store.applied_migrations() == [name for name, _ in MIGRATIONS]
    assert store.migrate() == []


def test_migrated_schema_matches_the_models(store: Store) -> None:
    inspector = sa.inspect(store.engine)
    for table in SQLModel.metadata.sorted_tables:
        columns = {c["name"] for c in inspector.get_columns(table.name)}
        assert columns == {c.name for c in table.columns}, table.name
        uniques = {tuple(u["column_names"]) for u in inspector.get_unique_constraints(table.name)}
        for constraint in table.constraints:
            if isinstance(constraint, sa.UniqueConstraint):
                assert tuple(c.name for c in constraint.columns) in uniques


def test_conversation_token_is_stored_hashed(store: Store) -> None:
    conv, token = store.create_conversation("web", with_token=True)
    assert token and conv.token_hash and token not in conv.token_hash
    loaded = store.get_conversation(conv.id)
    assert loaded is not None
    assert store.token_matches(loaded, token) and not store.token_matches(loaded, token + "x")


def test_inbox_is_unique_on_channel_and_external_id(store: Store) -> None:
    conv, _ = store.create_conversation("slack")
    first, dup = store.receive(conv.id, "slack", "Ev1", "hello")
    assert not dup and first.status == "received"
    again, dup = store.receive(conv.id, "slack", "Ev1", "hello again")
    assert dup and again.id == first.id and again.text == "hello"
    other, dup = store.receive(conv.id, "discord", "Ev1", "hello")
    assert not dup and other.id != first.id
    assert [m.id for m in store.pending()] == [first.id, other.id]


def _record(conv_id: str, seq: int) -> dict[str, Any]:
    record = new_record(conv_id, seq, "hi", "web", "m1")
    record["scope"] = {"verdict": "in", "rule": "x"}
    record["move"] = {"name": "answer", "why": "test", "escalate": False}
    record["reads"] = [{"head": "intent", "answer": "greeting"}]
    return record


def test_complete_turn_marks_processed_and_stores_replies(store: Store) -> None:
    conv, _ = store.create_conversation("web")
    msg, _ = store.receive(conv.id, "web", "k1", "hi")
    conv.turn_count = 1
    conv.state = {"values": {"email": {"value": "a@b.co"}}}
    store.complete_turn(conv, msg, _record(conv.id, 1), [{"type": "text", "text": "hello"}], "web")
    assert store.pending() == []
    turn = store.turn_for_message(msg.id or 0)
    assert turn is not None and turn.intent == "greeting" and turn.move == "answer"
    assert turn.record["seq"] == 1 and turn.replies[0]["text"] == "hello"
    assert [m.role for m in store.messages(conv.id)] == ["customer", "agent"]
    reloaded = store.get_conversation(conv.id)
    assert reloaded is not None and reloaded.state["values"]["email"]["value"] == "a@b.co"


def test_turn_sequence_is_unique_per_conversation(store: Store) -> None:
    conv, _ = store.create_conversation("web")
    m1, _ = store.receive(conv.id, "web", "k1", "hi")
    m2, _ = store.receive(conv.id, "web", "k2", "hi")
    store.complete_turn(conv, m1, _record(conv.id, 1), [], "web")
    with pytest.raises(sa.exc.IntegrityError):
        store.complete_turn(conv, m2, _record(conv.id, 1), [], "web")
    # The failed transaction left the message unprocessed, to be retried.
    assert [m.id for m in store.pending()] == [m2.id]


def test_escalation_queue(store: Store) -> None:
    conv, _ = store.create_conversation("web")
    store.escalate(conv.id, "customer asked for a person", "support", question="help")
    open_ = store.escalations("open")
    assert len(open_) == 1 and open_[0].helpdesk == "support"
    assert store.escalations("resolved") == []


def test_urls_people_paste_are_accepted() -> None:
    assert normalise_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalise_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalise_url("sqlite:///x.db") == "sqlite:///x.db"
    assert "secret" not in Store("sqlite:///:memory:").safe_url
    assert "***" in Store("postgresql://u:secret@127.0.0.1/db").safe_url


def test_one_conversation_per_platform_thread(store: Store) -> None:
    first = store.conversation_for("slack", "C1:1700000000.1")
    again = store.conversation_for("slack", "C1:1700000000.1")
    assert again.id == first.id
    assert store.conversation_for("discord", "C1:1700000000.1").id != first.id
    with pytest.raises(sa.exc.IntegrityError):  # the index holds even past the get-or-create
        store.create_conversation("slack", external_id="C1:1700000000.1")
    # Conversations without an external id (the widget's) are never constrained.
    assert store.create_conversation("web")[0].id != store.create_conversation("web")[0].id

"""GATEBOT_RETENTION_DAYS: conversations idle past the period are erased through the erase path
(rows, JSONL lines, an erasure event without the data), at start and periodically; unset keeps
everything."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.app import App
from bot.config import Settings
from bot.errors import ConfigError
from bot.extend.recorder import JsonlRecorder
from bot.retention import erase_expired
from bot.store import Store
from bot.store.customer import CONVERSATIONS
from bot.store.models import now


def _age(store: Store, cid: str, days: int) -> None:
    with store.engine.begin() as conn:
        conn.execute(
            sa.update(CONVERSATIONS)
            .where(CONVERSATIONS.c.id == cid)
            .values(updated_at=now() - timedelta(days=days))
        )


async def test_idle_conversations_are_erased_and_recorded(
    tmp_path: Path, database_url: str
) -> None:
    store = Store(database_url)
    store.migrate()
    old, _ = store.create_conversation("web")
    fresh, _ = store.create_conversation("web")
    store.receive(old.id, "web", "o1", "my email is old@example.com")
    store.receive(fresh.id, "web", "f1", "hello")
    _age(store, old.id, 31)
    _age(store, fresh.id, 29)
    jsonl = tmp_path / "turns.jsonl"
    for cid in (old.id, fresh.id):
        await JsonlRecorder(jsonl).record({"conversation_id": cid})

    assert erase_expired(store, jsonl, 30) == [old.id]
    assert store.get_conversation(old.id) is None and store.messages(fresh.id)
    assert [json.loads(line)["conversation_id"] for line in jsonl.read_text().splitlines()] == [
        fresh.id
    ]
    [event] = store.erasures()
    assert event["selector"] == "retention" and event["conversations"] == [old.id]
    assert event["counts"]["messages"] == 1 and event["counts"]["jsonl_lines"] == 1
    assert "old@example.com" not in json.dumps(event, default=str)
    assert erase_expired(store, jsonl, 30) == [] and len(store.erasures()) == 1
    store.close()


def test_retention_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GATEBOT_RETENTION_DAYS", raising=False)
    assert Settings.from_env().retention_days is None
    monkeypatch.setenv("GATEBOT_RETENTION_DAYS", "90")
    assert Settings.from_env().retention_days == 90
    for bad in ("0", "-3", "soon"):
        monkeypatch.setenv("GATEBOT_RETENTION_DAYS", bad)
        with pytest.raises(ConfigError):
            Settings.from_env()


async def test_the_app_erases_at_start(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, retention_days=7, recorders=[])
    app = App(settings)
    await asyncio.to_thread(app.store.migrate)
    conv, _ = app.store.create_conversation("web")
    _age(app.store, conv.id, 8)
    await app.start(channels=False)
    try:
        for _ in range(100):  # the first pass runs in the background, right after start
            if app.store.get_conversation(conv.id) is None:
                break
            await asyncio.sleep(0.05)
        assert app.store.get_conversation(conv.id) is None
        assert [e["selector"] for e in app.store.erasures()] == ["retention"]
    finally:
        await app.stop()

"""Which reader read: the pack's trained heads when they can run, else the keyword router."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.app import App
from bot.config import Settings
from bot.errors import PackErrors
from bot.packs import load_pack
from bot.turn.reading import Readers
from tests.conftest import ACME


async def test_the_pinned_intent_head_reads_and_is_recorded(app: App) -> None:
    conv = app.store.create_conversation("web")[0]
    result = await app.agent.handle(conv, "I want to talk to a person", "1")
    intent = result.record["reads"][0]
    assert intent["version"].startswith("intent@") and intent["answer"] == "human"
    assert (
        result.record["versions"]["heads"]["intent"] == load_pack(ACME).heads["intent"]["version"]
    )
    assert result.record["versions"]["heads"]["sentiment"].startswith("sentiment@")
    assert result.record["move"]["name"] == "handoff"


async def test_with_heads_off_the_keyword_router_reads(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEBOT_HEADS", "off")
    app = App(settings)
    await app.start(channels=False)
    try:
        conv = app.store.create_conversation("web")[0]
        result = await app.agent.handle(conv, "what's the weather in Paris", "1")
    finally:
        await app.stop()
    assert result.record["reads"][0]["version"].startswith("keyword-router@")
    assert result.record["reads"][1]["version"] == "keyword-lexicon@1"
    assert result.record["scope"]["verdict"] == "out" and result.record["model_calls"] == []


async def test_head_and_router_agreeing_is_confident() -> None:
    readers = Readers(load_pack(ACME), use_heads=True)
    reading = await readers.intent("is there a free trial", None)
    assert reading.answer == "trial" and reading.confidence >= 0.9
    assert "+keyword-router@" in reading.version


async def test_hostile_visitor_reads_hostile() -> None:
    readers = Readers(load_pack(ACME), use_heads=True)
    assert (await readers.sentiment("this is a scam, you idiots")).label == "hostile"
    assert (await readers.sentiment("thanks, this is great")).label == "positive"


def test_a_pin_that_does_not_match_the_files_is_a_pack_error(tmp_path: Path) -> None:
    copy = tmp_path / "acme"
    shutil.copytree(ACME, copy)
    with (copy / "heads" / "intent" / "config.json").open("a") as f:
        f.write("\n")
    with pytest.raises(PackErrors) as info:
        load_pack(copy)
    (error,) = info.value.errors
    assert error.file == "acme/pack.yaml" and error.field == "heads.intent.version"
    assert "retrain" in error.message

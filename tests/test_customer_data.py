"""A customer's data: card numbers masked before anything keeps or reads them, `gatebot data
export` and `erase` on SQLite and PostgreSQL (the JSONL record file rewritten, the erasure
recorded without the data), and what the public and the logs see of a database failure."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from aiohttp.test_utils import TestClient
from click.testing import CliRunner
from sqlalchemy.exc import IntegrityError

from bot.app import App
from bot.cards import luhn_ok, mask_cards
from bot.cli import cli
from bot.extend.provider import Prompt, Response
from bot.extend.recorder import JsonlRecorder
from bot.store import Message, Store
from tests.test_flows_api import start

CARD = "4111 1111 1111 1111"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("card 4111 1111 1111 1111 thanks", "card **** **** **** 1111 thanks"),
        ("4111-1111-1111-1111", "****-****-****-1111"),
        ("it's 5500005555555559.", "it's ************5559."),
        ("amex 378282246310005", "amex ***********0005"),
        ("order 1044 4111 1111 1111 1111", "order 1044 **** **** **** 1111"),
    ],
)
def test_card_numbers_are_masked_keeping_the_last_four(text: str, masked: str) -> None:
    assert mask_cards(text) == masked


@pytest.mark.parametrize(
    "text",
    [
        "4111 1111 1111 1112",  # fails the Luhn check
        "call 555-123-4567",  # a phone number, too short
        "order 1044, 2 seats",
        "41111111111111111111111",  # 23 digits: no card is that long
    ],
)
def test_other_numbers_are_left_alone(text: str) -> None:
    assert mask_cards(text) == text


def test_luhn() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")


async def test_a_typed_card_is_masked_in_messages_turns_checkpoints_and_model_calls(
    flow_client: tuple[TestClient, App], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, gb = flow_client
    prompts: list[Prompt] = []
    execute = gb.provider.execute

    async def spy(prompt: Prompt) -> Response:
        prompts.append(prompt)
        return await execute(prompt)

    monkeypatch.setattr(gb.provider, "execute", spy)
    chat = await start(client)
    first = await chat.say(f"I want a refund for order 1042, my card is {CARD}")
    assert first["turn"]["flow"]["name"] == "refund"
    await chat.say(f"sam@example.com and the card was {CARD.replace(' ', '-')}")

    asked = await start(client)  # a question the model drafts an answer to
    await asked.say(f"Does Pipelines support Docker builds? My card is {CARD}")

    [held, question] = gb.store.export_customer([chat.conv["id"], asked.conv["id"]])
    everything = json.dumps([held, question], default=str) + repr(prompts)
    assert held["messages"] and held["turns"] and prompts
    assert any(run["checkpoints"] for run in held["flow_runs"])
    for form in (CARD, CARD.replace(" ", ""), CARD.replace(" ", "-"), "4111 1111 1111"):
        assert form not in everything
    assert "**** **** **** 1111" in held["messages"][0]["text"]
    assert "****-****-****-1111" in json.dumps(held["flow_runs"], default=str)


def _two_customers(store: Store) -> tuple[str, str]:
    """Alex, with a flow run, a fork of it, an escalation and a staff reply; and Sam."""
    alex, _ = store.create_conversation("web")
    sam, _ = store.create_conversation("web")
    store.receive(alex.id, "web", "a1", "refund please, I am Alex@Example.com")
    store.receive(sam.id, "web", "s1", "hello, sam@example.com here")
    run = store.create_flow_run(alex.id, "refund", "1", ["ask_email"])
    store.add_checkpoint(run.id, 0, "ask_email", 1, {"text": "alex"}, {}, None, {})
    fork = store.create_flow_run(None, "refund", "1", ["ask_email"], parent_run_id=run.id)
    store.add_checkpoint(fork.id, 0, "ask_email", 1, {"text": "alex"}, {}, None, {})
    store.escalate(alex.id, "asked", None, question="where is my refund")
    store.add_staff_message(alex.id, "web", "on it", "kim", ("slack", "T1"))
    return alex.id, sam.id


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """The CLI sets up the process's logging; the tests after these must find it as it was."""
    root, engine_log = logging.getLogger(), logging.getLogger("sqlalchemy.engine")
    handlers, level, engine_level = list(root.handlers), root.level, engine_log.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    engine_log.setLevel(engine_level)


def _data(tmp_path: Path, database_url: str, *args: str) -> dict[str, Any]:
    env = {"DATABASE_URL": database_url, "GATEBOT_DATA_DIR": str(tmp_path)}
    result = CliRunner().invoke(cli, ["data", *args], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


async def test_export_and_erase_one_customer(tmp_path: Path, database_url: str) -> None:
    store = Store(database_url)
    store.migrate()
    alex, sam = _two_customers(store)
    jsonl = JsonlRecorder(tmp_path / "turns.jsonl")
    for cid in (alex, sam, alex):
        await jsonl.record({"conversation_id": cid, "text": "a turn"})

    exported = _data(tmp_path, database_url, "export", "--email", "alex@example.COM")
    [held] = exported["conversations"]
    assert held["conversation"]["id"] == alex and "token_hash" not in held["conversation"]
    assert [m["text"] for m in held["messages"]] == [
        "refund please, I am Alex@Example.com",
        "on it",
    ]
    assert len(held["flow_runs"]) == 2 and all(r["checkpoints"] for r in held["flow_runs"])
    assert held["escalations"][0]["question"] == "where is my refund"
    assert held["staff_relays"][0]["external_id"] == "T1"
    assert (
        _data(tmp_path, database_url, "export", sam)["conversations"][0]["conversation"]["id"]
        == sam
    )

    erased = _data(tmp_path, database_url, "erase", "--email", "alex@example.com", "--yes")
    assert erased["conversations"] == [alex]
    assert erased["erased"] == {
        "staff_relays": 1, "turn_labels": 0, "outcomes": 0, "turns": 0, "messages": 2,
        "escalations": 1, "checkpoints": 2, "flow_runs": 2, "conversations": 1, "jsonl_lines": 2,
    }  # fmt: skip
    assert store.get_conversation(alex) is None and store.messages(sam)
    assert not store.staff_relayed("slack", "T1") and store.flow_runs(alex) == []
    lines = (tmp_path / "turns.jsonl").read_text().splitlines()
    assert [json.loads(line)["conversation_id"] for line in lines] == [sam]
    [event] = store.erasures()
    assert (event["selector"], event["conversations"]) == ("email", [alex])
    assert event["counts"]["messages"] == 2
    assert "alex" not in json.dumps(event, default=str).lower()
    assert (
        _data(tmp_path, database_url, "export", "--email", "alex@example.com")["conversations"]
        == []
    )
    store.close()


def test_data_needs_exactly_one_customer(tmp_path: Path) -> None:
    env = {"GATEBOT_DATA_DIR": str(tmp_path)}
    for args in ([], ["abc", "--email", "a@b.c"]):
        assert CliRunner().invoke(cli, ["data", "export", *args], env=env).exit_code == 2
    missing = CliRunner().invoke(cli, ["data", "erase", "nope", "--yes"], env=env)
    assert missing.exit_code == 1 and "no conversation 'nope'" in missing.output


async def test_healthz_names_no_host_when_the_database_is_down(
    client: TestClient, app: App, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def down() -> None:
        raise ConnectionError("connection to server at 10.1.2.3, port 5432 failed")

    monkeypatch.setattr(app.store, "ping", down)
    resp = await client.get("/healthz")
    assert resp.status == 503
    assert await resp.json() == {"status": "error", "database": "database unavailable"}
    logged = [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG]
    assert logged and not any("10.1.2.3" in line for line in logged)


def test_database_errors_and_logs_carry_no_customer_text(database_url: str) -> None:
    """A failing statement's error names no parameter, and SQLAlchemy logs statements at -vv
    only (with -v, the root logger at INFO would otherwise let it print every one)."""
    from bot.cli.output import setup_logging

    store = Store(database_url)
    store.migrate()
    row = {
        "conversation_id": "none such",
        "channel": "web",
        "role": "customer",
        "text": "my secret words",
        "status": "received",
        "created_at": datetime.now(UTC),
    }
    with pytest.raises(IntegrityError) as failed, store.engine.begin() as conn:
        conn.execute(sa.insert(Message.__table__), row)  # type: ignore[attr-defined]
    assert "secret words" not in str(failed.value) and "hidden" in str(failed.value)
    store.close()
    engine_log = logging.getLogger("sqlalchemy.engine.Engine")
    setup_logging(1)
    assert not engine_log.isEnabledFor(logging.INFO)
    setup_logging(2)
    assert engine_log.isEnabledFor(logging.DEBUG)

"""Governed data on real PostgreSQL through REST on the sample pack: ``data.yaml``'s orders and
order_lines (made by scripts/make_orders_table.py) read under their row and field policy. An
allowed read is answered and cited; another customer's row, a forbidden column, a join over the
2,000-row cap, a statement timeout and a value the conversation has not verified are refused,
each recorded with its statement, its parameters' names (never their values) and its row count."""

from __future__ import annotations

import importlib.util
import json
import secrets
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import gatebot_sqlsource
import pytest
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from bot.app import App
from bot.cli import cli
from bot.config import Settings
from bot.errors import PackErrors
from bot.extend.datasource import Query
from bot.extend.recorder import MemoryRecorder
from bot.packs import load_pack
from bot.packs.checked import load_checked_pack
from bot.plugins import load_plugins
from tests.conftest import ACME, ROOT

spec = importlib.util.spec_from_file_location("make_orders", ROOT / "scripts/make_orders_table.py")
assert spec is not None and spec.loader is not None
make_orders = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_orders)


@pytest.fixture
def schemas(postgres: str) -> Iterator[tuple[str, str]]:
    """The sample tables in a schema of their own (order 1003 with 2,001 more lines: a join over
    the cap), and a second schema whose ``orders`` is a view that sleeps (pg_sleep)."""
    import psycopg

    real, slow = (f"acme_data_{secrets.token_hex(4)}", f"acme_slow_{secrets.token_hex(4)}")
    make_orders.make(postgres, real, lines_for="1003", lines=2001)
    plain = postgres.replace("+psycopg", "")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {slow}")
        conn.execute(
            f"CREATE VIEW {slow}.orders AS SELECT o.* FROM {real}.orders o, "
            "LATERAL (SELECT pg_sleep(5)) AS pause"
        )
    try:
        yield real, slow
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {slow} CASCADE")
            conn.execute(f"DROP SCHEMA {real} CASCADE")


async def _client(
    tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[TestClient, App, MemoryRecorder]]:
    from gatebot_web.server import build_web_app

    monkeypatch.setenv("ACME_DATA_URL", url)
    memory = MemoryRecorder()
    app = App(
        Settings(pack=ACME, data_dir=tmp_path, recorders=[]),
        recorders=[memory],
        extra_plugins=[gatebot_sqlsource],
    )
    await app.start(channels=False)
    try:
        async with TestClient(TestServer(build_web_app(app), host="127.0.0.1")) as client:
            yield client, app, memory
    finally:
        await app.stop()


@pytest.fixture
async def served(
    tmp_path: Path, postgres: str, schemas: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[TestClient, App, MemoryRecorder]]:
    url = f"{postgres}?options=-csearch_path%3D{schemas[0]}"
    async for served in _client(tmp_path, url, monkeypatch):
        yield served


class Chat:
    def __init__(self, client: TestClient) -> None:
        self.client, self.n = client, 0

    async def open(self) -> Chat:
        resp = await self.client.post("/api/conversations", json={})
        data = await resp.json()
        self.cid, self.auth = data["id"], {"Authorization": f"Bearer {data['token']}"}
        return self

    async def say(self, text: str) -> dict[str, Any]:
        self.n += 1
        resp = await self.client.post(
            f"/api/conversations/{self.cid}/messages",
            json={"text": text, "client_message_id": f"m{self.n}"},
            headers=self.auth,
        )
        assert resp.status == 200, await resp.text()
        answer: dict[str, Any] = await resp.json()
        return answer


def reads(turn: dict[str, Any], table: str) -> list[dict[str, Any]]:
    return [e for e in turn["tools"] if e["tool"] == f"data.{table}"]


def ended(turn: dict[str, Any], table: str) -> dict[str, Any]:
    """The read's last event: finished, failed or refused."""
    return reads(turn, table)[-1]


async def test_an_allowed_read_is_answered_and_cited(
    served: tuple[TestClient, App, MemoryRecorder],
) -> None:
    client, _, _ = served
    chat = await Chat(client).open()
    await chat.say("my email is jo@example.com")
    answer = await chat.say("what's the status of order 1001")
    turn, reply = answer["turn"], answer["replies"][0]
    assert "status: shipped" in reply["text"]
    assert [c["key"] for c in reply["citations"]] == ["orders#1001"]
    assert {"key": "orders#1001", "source": "data:orders", "mode": "data"} in turn["facts"]
    done = ended(turn, "orders")
    assert done["event"] == "finished"
    query = done["detail"]["query"]
    assert query["rows"] == 1 and query["table"] == "orders"
    assert query["parameters"] == ["filter_order_id", "policy_customer_email", "row_cap"]
    assert "WHERE" in query["statement"] and "internal_note" not in query["statement"]
    lines = ended(turn, "order_lines")["detail"]["query"]
    assert lines["rows"] == 2 and "JOIN" in lines["statement"]
    whole = json.dumps(answer)
    # The verified value and the filter's value are parameters: never in the record.
    assert "jo@example.com" not in json.dumps(turn["tools"])
    assert "vip" not in whole and "4242" not in whole  # never returned; masked


async def test_another_customers_row_is_not_read(
    served: tuple[TestClient, App, MemoryRecorder],
) -> None:
    client, _, _ = served
    chat = await Chat(client).open()
    await chat.say("my email is jo@example.com")
    answer = await chat.say("what's the status of order 1002")
    turn = answer["turn"]
    assert ended(turn, "orders")["detail"]["query"]["rows"] == 0
    assert ended(turn, "order_lines")["detail"]["query"]["rows"] == 0
    assert "processing" not in json.dumps(answer) and "sam@" not in json.dumps(answer)
    assert not any(f["source"].startswith("data:") for f in turn["facts"])


async def test_a_value_not_verified_is_refused_before_any_query(
    served: tuple[TestClient, App, MemoryRecorder],
) -> None:
    client, _, _ = served
    chat = await Chat(client).open()
    answer = await chat.say("what's the status of order 1001")
    turn = answer["turn"]
    for table in ("orders", "order_lines"):
        refused = ended(turn, table)
        assert refused["event"] == "refused"
        assert "verified email" in refused["detail"]["reason"]
        assert not any(e["event"] == "started" for e in reads(turn, table))
    assert "shipped" not in json.dumps(answer)


async def test_a_join_over_the_cap_returns_nothing(
    served: tuple[TestClient, App, MemoryRecorder],
) -> None:
    client, _, _ = served
    chat = await Chat(client).open()
    await chat.say("my email is jo@example.com")
    answer = await chat.say("what's the status of order 1003")
    turn = answer["turn"]
    failed = ended(turn, "order_lines")
    assert failed["event"] == "failed" and "over the cap" in failed["detail"]["reason"]
    assert failed["detail"]["query"]["rows"] is None
    assert "Bulk item" not in json.dumps(answer)
    assert "delivered" in answer["replies"][0]["text"]  # the order itself is within policy


async def test_a_forbidden_column_is_refused_by_name(
    served: tuple[TestClient, App, MemoryRecorder],
) -> None:
    _, app, _ = served
    context = {"values": {"email": "jo@example.com"}}
    runner = app.tool_runner()
    out = await runner.call("data.orders", {"columns": ["internal_note"]}, context)
    assert out.status == "refused" and "'internal_note' of orders is never returned" in str(
        out.reason
    )
    out = await runner.call("data.orders", {"filters": {"status": "shipped"}}, context)
    assert out.status == "refused" and "not a declared filter" in str(out.reason)
    out = await runner.call("data.orders", {"columns": ["order_id", "card_last4"]}, context)
    assert out.ok and out.result is not None
    assert {r["card_last4"] for r in out.result["rows"]} == {"****"}
    assert {r["order_id"] for r in out.result["rows"]} == {"1001", "1003"}  # jo's only


async def test_a_statement_timeout_is_a_failed_read(
    tmp_path: Path, postgres: str, schemas: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real, slow = schemas
    url = f"{postgres}?options=-csearch_path%3D{slow},{real}"
    async for client, _, _ in _client(tmp_path, url, monkeypatch):
        chat = await Chat(client).open()
        await chat.say("my email is jo@example.com")
        answer = await chat.say("what's the status of order 1001")
        failed = ended(answer["turn"], "orders")
        assert failed["event"] == "failed"
        assert "statement timeout" in failed["detail"]["reason"]
        assert "shipped" not in json.dumps(answer)


def test_the_statement_pushes_filter_projection_and_cap_down() -> None:
    pack = load_pack(ACME)
    lines, orders = pack.data.tables["order_lines"], pack.data.tables["orders"]
    query = Query(lines, ["line_id", "item"], "customer_email", "jo@example.com",
                  {"order_id": "1001"}, orders, 2001)  # fmt: skip
    compiled = gatebot_sqlsource.statement(query).compile()
    sql = str(compiled)
    assert "JOIN orders ON order_lines.order_id = orders.order_id" in sql
    assert "orders.customer_email = :policy_customer_email" in sql
    assert "order_lines.order_id = :filter_order_id" in sql and "LIMIT" in sql
    assert "jo@example.com" not in sql and "count(" not in sql.lower()
    assert sql.startswith("SELECT order_lines.line_id, order_lines.item \nFROM")


BAD = [
    ("never: [internal_note]", "never: [nonesuch]", "column 'nonesuch' is not one of"),
    ('"customer_email = {values.email}"', '"customer_email = {values.shoe_size}"',
     "'values.shoe_size' is not a slot"),
    ('"customer_email = {values.email}"', '"customer_email = {email}"', "does not match"),
    ("source: orders_db\n    description: The lines",
     "source: elsewhere\n    description: The lines", "unknown source 'elsewhere'"),
    ("join: {table: orders, column: order_id, parent_column: order_id}",
     "join: {table: order_lines, column: order_id}", "must be a table of the same source"),
    ("intents: [order_status]\n    match: {order_id: values.order_id}\n  - name",
     "intents: [nonesuch]\n    match: {order_id: values.order_id}\n  - name", "unknown intent"),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new", "message"), BAD, ids=[m for _, _, m in BAD])
def test_check_and_run_refuse_the_same_bad_data_yaml(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    pack = tmp_path / "acme"
    shutil.copytree(ACME, pack, ignore=shutil.ignore_patterns("heads"))
    text = (pack / "data.yaml").read_text()
    assert old in text
    (pack / "data.yaml").write_text(text.replace(old, new, 1))
    with pytest.raises(PackErrors) as refused:
        load_checked_pack(pack, load_plugins())
    assert message in str(refused.value) and "acme/data.yaml" in str(refused.value)
    result = CliRunner().invoke(cli, ["check", str(pack)])
    assert result.exit_code == 1 and message in result.output
    with pytest.raises(PackErrors):
        App(Settings(pack=pack, data_dir=tmp_path, recorders=[]))

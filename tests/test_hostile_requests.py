"""Every 500 the hostile-input probe found (issue 15), each with its own test: the request is a
4xx naming the problem, nothing changes, and the server keeps answering. Each runs on SQLite and
PostgreSQL (NUL bytes were a PostgreSQL-only 500)."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import gatebot_anthropic
import gatebot_google
import gatebot_openai
import pytest
from aiohttp.test_utils import TestClient, TestServer
from gatebot_providers_common import CallPolicy, policy
from gatebot_web.server import build_web_app

from bot import safejson
from bot.app import App
from bot.config import Settings
from tests.conftest import ACME
from tests.wire_servers import WireServer, garbage


@pytest.fixture
async def hostile(database_url: str, tmp_path: Path) -> AsyncIterator[tuple[TestClient, App]]:
    """The REST API over the sample pack, on each database."""
    gb = App(Settings(pack=ACME, data_dir=tmp_path, recorders=[], database_url=database_url))
    await gb.start(channels=False)
    try:
        async with TestClient(TestServer(build_web_app(gb), host="127.0.0.1")) as client:
            yield client, gb
    finally:
        await gb.stop()


async def conversation(client: TestClient) -> tuple[str, dict[str, str]]:
    resp = await client.post("/api/conversations")
    body = await resp.json()
    return body["id"], {"Authorization": f"Bearer {body['token']}"}


async def error_of(resp: Any, status: int) -> str:
    assert resp.status == status, await resp.text()
    body = await resp.json()
    return str(body["error"]["message"])


async def post_raw(client: TestClient, path: str, raw: bytes, **headers: str) -> Any:
    return await client.post(
        path, data=raw, headers={"Content-Type": "application/json", **headers}
    )


async def test_deep_nesting_is_400_naming_the_depth(hostile: tuple[TestClient, App]) -> None:
    client, _ = hostile
    said = await error_of(await post_raw(client, "/api/conversations", b"[" * 30000), 400)
    assert "nested 30000 levels deep" in said


async def test_a_huge_integer_is_400(hostile: tuple[TestClient, App]) -> None:
    client, gb = hostile
    cid, auth = await conversation(client)
    raw = b'{"text": "hi", "client_message_id": ' + b"9" * 5000 + b"}"
    resp = await post_raw(client, f"/api/conversations/{cid}/messages", raw, **auth)
    assert "5000 digits" in await error_of(resp, 400)
    assert gb.store.messages(cid) == []


@pytest.mark.parametrize(
    "raw",
    [
        r'{"text": "a\ud800b", "client_message_id": "m1"}',
        r'{"text": "hi", "client_message_id": "a\udc80"}',
        r'{"text": "hi", "client_message_id": "m1", "x\udc80": 1}',
    ],
)
async def test_a_lone_surrogate_anywhere_is_400(hostile: tuple[TestClient, App], raw: str) -> None:
    client, gb = hostile
    cid, auth = await conversation(client)
    resp = await post_raw(client, f"/api/conversations/{cid}/messages", raw.encode(), **auth)
    assert "lone surrogate" in await error_of(resp, 400)
    assert gb.store.messages(cid) == []


async def test_nul_in_text_is_400_on_each_database(hostile: tuple[TestClient, App]) -> None:
    client, gb = hostile
    cid, auth = await conversation(client)
    resp = await client.post(
        f"/api/conversations/{cid}/messages",
        json={"text": "order\x001042", "client_message_id": "m1"},
        headers=auth,
    )
    assert "NUL" in await error_of(resp, 400)
    assert gb.store.messages(cid) == []


@pytest.mark.parametrize("bad_id", ["abc%00def", "a%2Fb", "x" * 300])
async def test_an_id_no_conversation_has_is_404(
    hostile: tuple[TestClient, App], bad_id: str
) -> None:
    client, _ = hostile
    _, auth = await conversation(client)
    await error_of(await client.get(f"/api/conversations/{bad_id}", headers=auth), 404)
    resp = await client.post(
        f"/api/conversations/{bad_id}/messages", json={"text": "hi"}, headers=auth
    )
    await error_of(resp, 404)


async def test_header_bytes_that_are_not_utf8_are_401(hostile: tuple[TestClient, App]) -> None:
    """Sent over a raw socket: an HTTP client would refuse to send such a header."""
    client, _ = hostile
    cid, _ = await conversation(client)
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(
        f"GET /api/conversations/{cid} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".encode()
        + b"Authorization: Bearer \xff\xfe\xc3(\r\n\r\n"
    )
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 401"), answer[:80]


async def test_a_corrupt_deflate_body_is_400(hostile: tuple[TestClient, App]) -> None:
    client, _ = hostile
    resp = await post_raw(
        client, "/api/conversations", b"not deflate", **{"Content-Encoding": "deflate"}
    )
    assert "Content-Encoding" in await error_of(resp, 400)
    good = zlib.compress(b'{"language": "en"}')
    resp = await post_raw(client, "/api/conversations", good, **{"Content-Encoding": "deflate"})
    assert resp.status == 201


@pytest.mark.parametrize("language", ["", "   ", "e n", "english-language", 7, None])
async def test_an_empty_blank_or_odd_language_is_400(
    hostile: tuple[TestClient, App], language: Any
) -> None:
    client, _ = hostile
    resp = await client.post("/api/conversations", json={"language": language})
    assert "language" in await error_of(resp, 400)
    assert (await client.post("/api/conversations", json={"language": "pt-BR"})).status == 201


@pytest.mark.parametrize("client_id", ["", "   ", "\t", "a\nb", 5, {"id": 1}])
async def test_a_blank_or_odd_client_message_id_is_400(
    hostile: tuple[TestClient, App], client_id: Any
) -> None:
    client, gb = hostile
    cid, auth = await conversation(client)
    resp = await client.post(
        f"/api/conversations/{cid}/messages",
        json={"text": "hello", "client_message_id": client_id},
        headers=auth,
    )
    assert "client_message_id" in await error_of(resp, 400)
    assert gb.store.messages(cid) == []


@pytest.mark.parametrize("raw", [b"NaN", b'{"a": Infinity}', b'{"a": 1e999}'])
async def test_numbers_out_of_range_are_400(hostile: tuple[TestClient, App], raw: bytes) -> None:
    client, _ = hostile
    await error_of(await post_raw(client, "/api/conversations", raw), 400)


async def test_the_demo_api_refuses_a_dict_where_it_wants_a_string(
    hostile: tuple[TestClient, App],
) -> None:
    client, _ = hostile
    auth = {"Authorization": "Bearer acme-demo-token"}
    for path, body in [
        ("/demo-api/subscriptions/sub_acme1/items", {"item": {"a": 1}, "delta": 1}),
        ("/demo-api/orders/1042/refund", {"method": {"card": 1}}),
        ("/demo-api/orders/1042/refund", {"method": ["card"]}),
    ]:
        resp = await client.post(path, json=body, headers=auth)
        assert resp.status == 400, (path, await resp.text())
    deep = b'{"item": ' + b"[" * 30000 + b"]" * 30000 + b"}"
    resp = await post_raw(client, "/demo-api/subscriptions/sub_acme1/items", deep, **auth)
    assert resp.status == 400


async def test_staff_ids_that_are_not_ascii_digits_are_404(
    hostile: tuple[TestClient, App], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, _ = hostile
    monkeypatch.setenv("GATEBOT_ADMIN_TOKEN", "staff-secret-token")
    auth = {"Authorization": "Bearer staff-secret-token"}
    for raw_id in ["²", "9" * 40]:
        resp = await client.post(
            f"/api/staff/escalations/{raw_id}/resolve", json={"staff": "sam"}, headers=auth
        )
        await error_of(resp, 404)
    await error_of(await client.get("/api/staff/runs/a%00b/checkpoints", headers=auth), 404)
    await error_of(await client.get("/api/staff/runs?conversation=a%00b", headers=auth), 400)


async def test_the_openapi_document_is_published(hostile: tuple[TestClient, App]) -> None:
    client, _ = hostile
    resp = await client.get("/api/openapi.json")
    assert resp.status == 200
    doc = await resp.json()
    assert doc["openapi"].startswith("3.")
    assert "/api/conversations/{id}/messages" in doc["paths"]


def test_safejson_bounds() -> None:
    assert safejson.loads(b'{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}
    assert safejson.nesting('{"a": "[[[[", "b": [[1]]}') == 3
    for raw in [b"\xff", b'"\\u0000"', b"[" * 40 + b"]" * 40, b"1" * 30]:
        with pytest.raises(safejson.BadJson):
            safejson.loads(raw)


# --- a provider that answers 200 with something else ------------------------------------------


@pytest.mark.parametrize("api", ["anthropic", "openai", "google"])
@pytest.mark.parametrize(
    "answer",
    [garbage(), garbage(b'{"weird": true}', "application/json"), garbage(b"", "application/json")],
)
async def test_a_provider_answering_200_with_garbage_fails_honestly_and_queues(
    api: str, answer: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(policy, "DEFAULT", CallPolicy(backoff_s=0.01))
    monkeypatch.setenv("GATEBOT_PLUGINS", "offline")
    async with WireServer(api, default=answer) as wire:  # type: ignore[arg-type]
        key_env = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}.get(
            api, "GOOGLE_API_KEY"
        )
        monkeypatch.setenv(key_env, "sk-garbage-test-" + "g" * 20)
        monkeypatch.setenv(f"GATEBOT_{api.upper()}_BASE_URL", wire.base_url)
        model = f"{api}:test"
        plugin = {"anthropic": gatebot_anthropic, "openai": gatebot_openai}.get(api, gatebot_google)
        settings = Settings(pack=ACME, data_dir=tmp_path, recorders=[], model=model)
        gb = App(settings, extra_plugins=[plugin])
        await gb.start(channels=False)
        try:
            async with TestClient(TestServer(build_web_app(gb), host="127.0.0.1")) as client:
                cid, auth = await conversation(client)
                resp = await client.post(
                    f"/api/conversations/{cid}/messages",
                    json={
                        "text": "Does Pipelines support Docker builds?",
                        "client_message_id": "m",
                    },
                    headers=auth,
                )
                assert resp.status == 200, await resp.text()
                body = await resp.json()
            assert "don't have a confirmed answer" in body["replies"][0]["text"]
            assert body["turn"]["reply"]["gate"]["rules"] == ["provider"]
            assert f"{api}: " in body["turn"]["reply"]["gate"]["reasons"][0]
            [queued] = gb.store.escalations("open")
            assert queued.conversation_id == cid
        finally:
            await gb.stop()

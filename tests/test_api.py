"""The widget's REST API over a real aiohttp server: the happy path and every bad-input case."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp.test_utils import TestClient

from bot.app import App
from bot.turn.record import RECORD_KEYS


async def new_conversation(client: TestClient) -> tuple[str, dict[str, str]]:
    resp = await client.post("/api/conversations")
    assert resp.status == 201
    body = await resp.json()
    return body["id"], {"Authorization": f"Bearer {body['token']}"}


async def say(client: TestClient, cid: str, auth: dict[str, str], text: str, client_id: str) -> Any:
    return await client.post(
        f"/api/conversations/{cid}/messages",
        headers=auth,
        json={"text": text, "client_message_id": client_id},
    )


async def test_conversation_gets_reply_and_complete_turn_record(client: TestClient) -> None:
    cid, auth = await new_conversation(client)
    resp = await say(client, cid, auth, "Does Pipelines support Docker builds?", "m1")
    assert resp.status == 200
    body = await resp.json()
    assert "Docker" in body["replies"][0]["text"]
    assert body["replies"][0]["citations"][0]["key"] == "faq-docker"
    turn = body["turn"]
    assert tuple(turn) == RECORD_KEYS
    assert turn["conversation_id"] == cid and turn["seq"] == 1
    assert turn["message"] == {
        "text": "Does Pipelines support Docker builds?",
        "channel": "web",
        "external_id": "m1",
        "user": {"id": None, "verified": False},
    }
    assert turn["scope"]["verdict"] == "in"
    assert turn["move"]["name"] == "answer"
    assert turn["facts"][0]["key"] == "faq-docker"
    assert turn["reply"]["gate"]["passed"] is True
    assert turn["model_calls"][0]["provider"] == "offline"
    assert turn["versions"]["pack"]


async def test_get_conversation_returns_messages_and_turns(client: TestClient) -> None:
    cid, auth = await new_conversation(client)
    await say(client, cid, auth, "hello", "a")
    resp = await client.get(f"/api/conversations/{cid}", headers=auth)
    assert resp.status == 200
    body = await resp.json()
    assert [m["role"] for m in body["messages"]] == ["customer", "agent"]
    assert len(body["turns"]) == 1 and body["turns"][0]["seq"] == 1


async def test_repeated_client_message_id_returns_first_answer(
    client: TestClient, app: App
) -> None:
    cid, auth = await new_conversation(client)
    first = await (await say(client, cid, auth, "hello", "same")).json()
    again = await say(client, cid, auth, "something else entirely", "same")
    assert again.status == 200
    body = await again.json()
    assert body["duplicate"] is True
    assert body["replies"] == first["replies"] and body["turn"] == first["turn"]
    assert len(app.store.turns(cid)) == 1


async def test_concurrent_duplicates_make_one_turn(client: TestClient, app: App) -> None:
    cid, auth = await new_conversation(client)
    results = await asyncio.gather(*(say(client, cid, auth, "hi there", "dup") for _ in range(5)))
    assert {r.status for r in results} == {200}
    assert len(app.store.turns(cid)) == 1


async def test_same_client_id_in_two_conversations_is_two_turns(client: TestClient) -> None:
    a, auth_a = await new_conversation(client)
    b, auth_b = await new_conversation(client)
    ra = await (await say(client, a, auth_a, "hello", "1")).json()
    rb = await (await say(client, b, auth_b, "hello", "1")).json()
    assert ra["duplicate"] is False and rb["duplicate"] is False


async def test_unknown_conversation_is_404(client: TestClient) -> None:
    resp = await say(client, "nope", {"Authorization": "Bearer x"}, "hi", "1")
    assert resp.status == 404
    assert (await resp.json())["error"]["code"] == "not_found"


async def test_wrong_or_missing_token_is_401_and_changes_nothing(
    client: TestClient, app: App
) -> None:
    cid, _ = await new_conversation(client)
    for headers in ({"Authorization": "Bearer wrong"}, {}):
        resp = await say(client, cid, headers, "hi", "1")
        assert resp.status == 401
        assert set((await resp.json())["error"]) == {"code", "message"}
    assert app.store.messages(cid) == []
    assert (await client.get(f"/api/conversations/{cid}")).status == 401


async def test_text_over_4000_characters_is_413(client: TestClient, app: App) -> None:
    cid, auth = await new_conversation(client)
    resp = await say(client, cid, auth, "a" * 4001, "big")
    assert resp.status == 413
    assert "4000" in (await resp.json())["error"]["message"]
    assert app.store.messages(cid) == []
    assert (await say(client, cid, auth, "a" * 4000, "ok")).status == 200


async def test_body_larger_than_the_server_accepts_is_413_json(client: TestClient) -> None:
    cid, auth = await new_conversation(client)
    resp = await client.post(
        f"/api/conversations/{cid}/messages",
        headers=auth,
        data=b'{"text": "' + b"x" * 100_000 + b'"}',
    )
    assert resp.status == 413
    assert (await resp.json())["error"]["code"] == "too_large"


async def test_malformed_json_is_400(client: TestClient, app: App) -> None:
    cid, auth = await new_conversation(client)
    for raw in (
        b"{not json",
        b"[1, 2]",
        json.dumps({"text": 5, "client_message_id": "x"}).encode(),
        json.dumps({"text": "hi"}).encode(),
    ):
        resp = await client.post(f"/api/conversations/{cid}/messages", headers=auth, data=raw)
        assert resp.status == 400, raw
        assert (await resp.json())["error"]["message"]
    assert app.store.messages(cid) == []


async def test_more_than_20_messages_a_minute_is_429(client: TestClient, app: App) -> None:
    cid, auth = await new_conversation(client)
    for n in range(20):
        assert (await say(client, cid, auth, "hello", f"m{n}")).status == 200
    resp = await say(client, cid, auth, "hello", "m20")
    assert resp.status == 429
    assert int(resp.headers["Retry-After"]) >= 1
    assert len(app.store.turns(cid)) == 20
    # A retry of an answered message is not a new message: it still gets its answer.
    assert (await say(client, cid, auth, "hello", "m3")).status == 200
    # Other conversations are not limited by this one.
    other, other_auth = await new_conversation(client)
    assert (await say(client, other, other_auth, "hello", "x")).status == 200


async def test_unknown_route_and_method_are_json_errors(client: TestClient) -> None:
    resp = await client.get("/api/nothing-here")
    assert resp.status == 404
    assert (await resp.json())["error"]["code"] == "not_found"
    resp = await client.delete("/api/conversations")
    assert resp.status == 405


async def test_healthz_and_metrics(client: TestClient) -> None:
    resp = await client.get("/healthz")
    assert resp.status == 200 and (await resp.json())["status"] == "ok"
    cid, auth = await new_conversation(client)
    await say(client, cid, auth, "hello", "1")
    text = await (await client.get("/metrics")).text()
    assert "# TYPE gatebot_turns_total counter" in text
    assert 'gatebot_turns_total{channel="web",move="answer"} 1' in text
    assert "gatebot_turn_seconds_bucket" in text
    assert 'gatebot_http_requests_total{method="POST"' in text


async def test_cors_preflight_allows_the_widget_on_its_own_origin(client: TestClient) -> None:
    own = f"http://{client.host}:{client.port}"
    resp = await client.options("/api/conversations", headers={"Origin": own})
    assert resp.status == 204
    assert resp.headers["Access-Control-Allow-Origin"] == own
    assert "Authorization" in resp.headers["Access-Control-Allow-Headers"]


async def test_websocket_sends_live_events(client: TestClient) -> None:
    cid, auth = await new_conversation(client)
    token = auth["Authorization"].split()[1]
    assert (await client.get(f"/api/conversations/{cid}/events?token=bad")).status == 401
    async with client.ws_connect(f"/api/conversations/{cid}/events?token={token}") as ws:
        await say(client, cid, auth, "hello", "1")
        first = await ws.receive_json(timeout=5)
        second = await ws.receive_json(timeout=5)
    assert {k: first[k] for k in ("type", "role", "text", "external_id")} == {
        "type": "message",
        "role": "customer",
        "text": "hello",
        "external_id": "1",
    }
    assert isinstance(first["id"], int)
    assert second["type"] == "reply" and "assistant" in second["reply"]["text"]
    assert second["seq"] == 1 and second["external_id"] == "1"


async def test_demo_page_and_widget_script_are_served(client: TestClient) -> None:
    page = await client.get("/")
    assert page.status == 200 and "widget.js" in await page.text()
    script = await client.get("/widget.js")
    assert script.status == 200
    assert "javascript" in script.headers["Content-Type"]


def test_rate_limiter_window_and_forgetting() -> None:
    from gatebot_web.ratelimit import RateLimiter

    limiter = RateLimiter(limit=2, window=60)
    assert limiter.allow("a", now=0)[0] and limiter.allow("a", now=1)[0]
    allowed, wait = limiter.allow("a", now=2)
    assert not allowed and wait == 58
    assert limiter.allow("a", now=60.5)[0]  # the first hit left the window
    for n in range(995):  # with the four above, "late" below is the 1000th call
        limiter.allow(f"idle{n}", now=100)
    limiter.allow("late", now=500)  # the 1000th call sweeps conversations idle for a window
    assert len(limiter) == 1

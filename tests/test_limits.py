"""Limits and exposure of the widget's server, through HTTP on loopback: rate limits per client
IP and per staff token, the origin allow-list, security headers, /metrics and the demo API.

A client "from elsewhere" is a loopback peer named a trusted proxy, sending X-Forwarded-For."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer
from gatebot_web.ratelimit import RateLimiter
from gatebot_web.server import build_web_app

from bot.app import App

ADMIN = "staff-secret-token"
OUTSIDE = {"X-Forwarded-For": "203.0.113.7"}


@pytest.fixture
async def web(app: App) -> AsyncIterator[TestClient]:
    """The server with small limits, an allowed site, and loopback as a trusted proxy."""
    s = app.settings
    s.rate_conversations, s.rate_messages, s.rate_staff, s.rate_staff_failures = 3, 5, 4, 3
    s.allowed_origins = ["https://shop.example"]
    s.trusted_proxies = ["127.0.0.1"]
    s.admin_token = ADMIN
    async with TestClient(TestServer(build_web_app(app), host="127.0.0.1")) as client:
        yield client


async def _refused_429(resp: ClientResponse) -> None:
    assert resp.status == 429
    assert int(resp.headers["Retry-After"]) >= 1
    assert (await resp.json())["error"]["code"] == "rate_limited"


async def test_conversations_are_limited_per_client_ip(web: TestClient, app: App) -> None:
    for _ in range(3):
        assert (await web.post("/api/conversations")).status == 201
    await _refused_429(await web.post("/api/conversations"))
    # Another client (through the trusted proxy) has its own allowance.
    assert (await web.post("/api/conversations", headers=OUTSIDE)).status == 201


async def test_messages_are_limited_per_client_ip_across_conversations(web: TestClient) -> None:
    convs = [await (await web.post("/api/conversations")).json() for _ in range(3)]
    statuses = []
    for i in range(6):
        conv = convs[i % 3]
        resp = await web.post(
            f"/api/conversations/{conv['id']}/messages",
            headers={"Authorization": f"Bearer {conv['token']}"},
            json={"text": "hello", "client_message_id": str(i)},
        )
        statuses.append(resp.status)
        if resp.status == 429:
            await _refused_429(resp)
    assert statuses == [200] * 5 + [429]


async def test_wrong_staff_tokens_meet_429_per_client_ip(web: TestClient) -> None:
    statuses = [
        (await web.get("/api/staff/flows", headers={"Authorization": f"Bearer wrong-{i}"})).status
        for i in range(500)
    ]
    assert statuses[:3] == [401] * 3 and set(statuses[3:]) == {429}
    await _refused_429(await web.get("/api/staff/flows", headers={"Authorization": "Bearer x"}))


async def test_the_admin_token_has_its_own_limit(web: TestClient) -> None:
    auth = {"Authorization": f"Bearer {ADMIN}"}
    statuses = [(await web.get("/api/staff/flows", headers=auth)).status for _ in range(5)]
    assert statuses == [200] * 4 + [429]
    # Same token from another address: still the same token's allowance.
    assert (await web.get("/api/staff/flows", headers={**auth, **OUTSIDE})).status == 429


async def test_x_forwarded_for_counts_only_from_a_trusted_proxy(app: App) -> None:
    app.settings.rate_conversations = 1
    async with TestClient(TestServer(build_web_app(app), host="127.0.0.1")) as client:
        assert (await client.post("/api/conversations", headers=OUTSIDE)).status == 201
        other = {"X-Forwarded-For": "198.51.100.9"}
        resp = await client.post("/api/conversations", headers=other)
        assert resp.status == 429  # the socket's peer, not the header, is the client


async def test_cors_answers_allowed_origins_only(web: TestClient) -> None:
    allowed = await web.options("/api/conversations", headers={"Origin": "https://shop.example"})
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://shop.example"
    assert "Origin" in allowed.headers["Vary"]
    other = await web.options("/api/conversations", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers
    resp = await web.post("/api/conversations", headers={"Origin": "https://evil.example"})
    assert resp.status == 403
    assert (await resp.json())["error"]["code"] == "origin_not_allowed"
    ok = await web.post("/api/conversations", headers={"Origin": "https://shop.example"})
    assert ok.status == 201 and ok.headers["Access-Control-Allow-Origin"] == "https://shop.example"


async def test_websocket_from_another_origin_is_refused(web: TestClient) -> None:
    conv = await (await web.post("/api/conversations")).json()
    path = f"/api/conversations/{conv['id']}/events?token={conv['token']}"
    resp = await web.get(
        path,
        headers={
            "Origin": "https://evil.example",
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        },
    )
    assert resp.status == 403
    async with web.ws_connect(path, origin="https://shop.example") as ws:
        assert not ws.closed


async def test_security_headers_on_every_page(web: TestClient) -> None:
    for path in ("/", "/widget.js", "/healthz", "/api/openapi.json", "/nonesuch"):
        resp = await web.get(path)
        assert resp.headers["X-Content-Type-Options"] == "nosniff", path
        assert resp.headers["X-Frame-Options"] == "DENY", path
        assert resp.headers["Referrer-Policy"] == "strict-origin-when-cross-origin", path
        csp = resp.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "default-src 'self'" in csp, path
        assert "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0], path


async def test_metrics_answer_loopback_only_without_a_token(web: TestClient) -> None:
    assert (await web.get("/metrics")).status == 200
    resp = await web.get("/metrics", headers=OUTSIDE)
    assert resp.status == 403 and (await resp.json())["error"]["code"] == "forbidden"


async def test_metrics_refuse_a_request_a_local_proxy_forwarded(client: TestClient) -> None:
    # No trusted proxy configured: the peer is loopback, but the request came through a proxy.
    for header in ("X-Forwarded-For", "Forwarded", "X-Real-IP"):
        assert (await client.get("/metrics", headers={header: "203.0.113.7"})).status == 403
    assert (await client.get("/metrics")).status == 200


async def test_metrics_need_the_token_when_one_is_set(app: App) -> None:
    app.settings.metrics_token = "scrape-me"
    async with TestClient(TestServer(build_web_app(app), host="127.0.0.1")) as client:
        assert (await client.get("/metrics")).status == 401
        bad = {"Authorization": "Bearer nope"}
        assert (await client.get("/metrics", headers=bad)).status == 401
        good = {"Authorization": "Bearer scrape-me"}
        assert (await client.get("/metrics", headers=good)).status == 200


async def test_the_demo_api_answers_loopback_only(
    flow_client: tuple[TestClient, App],
) -> None:
    client, gb = flow_client
    auth = {"Authorization": "Bearer acme-demo-token"}
    gb.settings.trusted_proxies = ["127.0.0.1"]  # read per request: the client is now outside
    resp = await client.get("/demo-api/orders/1044", headers={**auth, **OUTSIDE})
    assert resp.status == 403


def test_limiter_table_stays_bounded() -> None:
    limiter = RateLimiter(limit=5, window=60, max_keys=100)
    for i in range(10_000):
        limiter.allow(f"198.51.100.{i}", now=1.0)
    assert len(limiter) <= 100


def test_a_limit_of_zero_is_no_limit() -> None:
    limiter = RateLimiter(limit=0, window=60)
    assert all(limiter.allow("k", now=1.0)[0] for _ in range(1000))
    assert len(limiter) == 0

"""Limits several processes share: the rate limits counted in Redis (two limiters, as two
processes hold them, spend one budget; a Redis that fails falls back to counting in the process,
logged once, never unlimited), and the inspector's one replay at a time across two apps on one
PostgreSQL schema, held by a Redis lease or, without Redis, an advisory lock."""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from gatebot_web.ratelimit import SharedCounts, SharedRateLimiter

from bot.app import App
from bot.config import Settings
from tests.conftest import ACME
from tests.redis_fixture import fresh_schema
from tests.redis_fixture import redis_url as redis_url
from tests.test_inspector import ADMIN, csrf_of, log_in


def _client(url: str) -> Any:
    import redis.asyncio as aioredis

    return aioredis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


async def test_two_processes_limiters_share_one_budget(redis_url: str) -> None:
    name = "test-" + secrets.token_hex(4)  # a budget of this test's own
    first, second = SharedCounts(_client(redis_url)), SharedCounts(_client(redis_url))
    try:
        one = SharedRateLimiter(name, 3, 60.0, first)
        other = SharedRateLimiter(name, 3, 60.0, second)
        answers = [await one.allow("198.51.100.7"), await other.allow("198.51.100.7")]
        answers += [await one.allow("198.51.100.7"), await other.allow("198.51.100.7")]
        assert [allowed for allowed, _ in answers] == [True, True, True, False]
        assert 0 < answers[-1][1] <= 60  # Retry-After: the rest of the window
        assert (await one.allow("198.51.100.8"))[0]  # another client has its own budget
        assert len(one.local) == len(other.local) == 0  # nothing counted in the processes
    finally:
        for counts in (first, second):
            keys = await counts.client.keys(f"gatebot:rate:{name}:*")
            if keys:
                await counts.client.delete(*keys)
            await counts.close()


async def test_a_redis_outage_counts_locally_logged_once_then_shares_again(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    name = "test-" + secrets.token_hex(4)
    counts = SharedCounts(_client(redis_url), retry_s=0)  # ask Redis again at once
    limiter = SharedRateLimiter(name, 2, 60.0, counts)
    real = counts._script

    async def down(**_kw: Any) -> Any:
        raise ConnectionError("Redis went away")

    try:
        counts._script = down
        with caplog.at_level(logging.WARNING, logger="gatebot_web.ratelimit"):
            answers = [(await limiter.allow("k"))[0] for _ in range(4)]
            assert answers == [True, True, False, False]  # the local limit, never unlimited
            assert sum("Redis unavailable" in r.message for r in caplog.records) == 1
            counts._script = real
            assert (await limiter.allow("k"))[0]  # Redis's own count starts at 0
            assert sum("answers again" in r.message for r in caplog.records) == 1
    finally:
        await counts.client.delete(*await counts.client.keys(f"gatebot:rate:{name}:*"))
        await counts.close()


async def test_a_redis_that_never_answers_still_limits() -> None:
    pytest.importorskip("redis")
    counts = SharedCounts(_client("redis://127.0.0.1:1/0"))  # nothing listens on port 1
    limiter = SharedRateLimiter("dead", 2, 60.0, counts)
    try:
        assert [(await limiter.allow("k"))[0] for _ in range(3)] == [True, True, False]
    finally:
        await counts.close()


@pytest.fixture(params=["advisory-lock", "redis-lease"])
async def two_apps(
    request: pytest.FixtureRequest, postgres: str, tmp_path: Path
) -> AsyncIterator[tuple[list[TestClient], list[App]]]:
    from gatebot_web.server import build_web_app

    redis_url = request.getfixturevalue("redis_url") if request.param == "redis-lease" else None
    with fresh_schema(postgres) as url:
        async with AsyncExitStack() as stack:
            clients, apps = [], []
            for n in range(2):
                settings = Settings(
                    pack=ACME, data_dir=tmp_path / f"p{n}", database_url=url, recorders=[]
                )
                settings.admin_token, settings.redis_url = ADMIN, redis_url
                app = App(settings)
                apps.append(app)
                await app.start(channels=False)
                stack.push_async_callback(app.stop)
                server = TestServer(build_web_app(app), host="127.0.0.1")
                clients.append(await stack.enter_async_context(TestClient(server)))
            yield clients, apps


async def _until_over(client: TestClient) -> dict[str, Any]:
    for _ in range(600):  # bounded
        status = await (await client.get("/inspector/api/replay")).json()
        if status["state"] != "running":
            return status  # type: ignore[no-any-return]
        await asyncio.sleep(0.1)
    raise AssertionError("the replay did not end")


async def test_one_replay_at_a_time_across_two_apps(
    two_apps: tuple[list[TestClient], list[App]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gatebot_web.inspector import replayjob

    (one, other), apps = two_apps
    conv = apps[0].store.create_conversation("web")[0]
    await apps[0].agent.handle(conv, "Is there a free trial?", "m1")
    go = threading.Event()

    async def held(*args: Any, **kw: Any) -> Any:  # waits for the test's word, then fails fast
        await asyncio.to_thread(go.wait, 60)
        raise RuntimeError("stopped by the test")

    monkeypatch.setattr(replayjob, "replay", held)
    body = {"pack": str(ACME), "conversations": conv.id}
    csrf = []
    for client in (one, other):
        await log_in(client)
        csrf.append({"X-CSRF-Token": await csrf_of(client, "/inspector/replay")})
    started = await one.post("/inspector/api/replay", json=body, headers=csrf[0])
    assert started.status == 202, await started.text()
    refused = await other.post("/inspector/api/replay", json=body, headers=csrf[1])
    assert refused.status == 409, await refused.text()
    message = (await refused.json())["error"]["message"]
    assert "still running" in message and "Dana on " in message  # who, and on which process
    assert (await (await other.get("/inspector/api/replay")).json())["state"] == "idle"
    go.set()
    assert (await _until_over(one))["state"] == "failed"
    again = await other.post("/inspector/api/replay", json=body, headers=csrf[1])
    assert again.status == 202, await again.text()  # the lease went with the first replay
    assert (await _until_over(other))["state"] == "failed"

"""A channel that cannot reach its platform at start does not take the app down: the others
serve, /healthz names it, and it is retried in the background until it connects. Discord is
pointed at loopback addresses with DISCORD_API_URL and DISCORD_GATEWAY_URL."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import gatebot_discord
import pytest
from aiohttp import web

from bot.app import App
from bot.config import Settings
from bot.errors import ChannelUnavailable, ConfigError
from bot.extend.channel import ChannelAdapter
from bot.hookspecs import hookimpl


class Flaky(ChannelAdapter):
    """Unreachable for its first ``failures`` starts, then up (or refused, with ``then``)."""

    name = "flaky"
    failures = 2
    then: Exception | None = None
    starts = 0

    async def start(self) -> None:
        type(self).starts += 1
        if type(self).starts <= self.failures:
            raise ChannelUnavailable("cannot reach flaky.example: connection refused")
        if self.then is not None:
            raise self.then

    async def stop(self) -> None:
        pass


class Steady(Flaky):
    name = "steady"
    failures = 0


class Channels:
    def __init__(self, *adapters: type[ChannelAdapter]) -> None:
        self.adapters = adapters

    @hookimpl
    def register_channels(self, register: Any) -> None:
        for adapter in self.adapters:
            register(adapter)


async def until(condition: Any, rounds: int = 500) -> None:
    """Wait for ``condition()``, a bounded number of short sleeps."""
    for _ in range(rounds):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


@pytest.fixture(autouse=True)
def fresh_counts() -> None:
    Flaky.starts = Steady.starts = 0
    Flaky.then = None


async def test_an_unreachable_channel_is_retried_while_the_others_serve(
    settings: Settings,
) -> None:
    settings.channels = ["flaky", "steady"]
    app = App(settings, extra_plugins=[Channels(Flaky, Steady)])
    app.retries.first_delay = 0.01
    await app.start()
    try:
        assert app.channel("steady") is not None and app.channel("flaky") is None
        report = app.info()["channels"]
        assert report["steady"] == {"status": "up"}
        assert report["flaky"]["status"] == "connecting"
        assert "connection refused" in report["flaky"]["error"]
        await until(lambda: app.channel("flaky") is not None)
        assert Flaky.starts == 3
        assert app.info()["channels"] == {"steady": {"status": "up"}, "flaky": {"status": "up"}}
    finally:
        await app.stop()


async def test_a_refusal_while_retrying_ends_the_retries_as_failed(settings: Settings) -> None:
    settings.channels = ["flaky"]
    Flaky.then = ConfigError("FLAKY_TOKEN was refused")
    app = App(settings, extra_plugins=[Channels(Flaky)])
    app.retries.first_delay = 0.01
    await app.start()
    try:
        await until(lambda: app.info()["channels"]["flaky"]["status"] == "failed")
        assert app.info()["channels"]["flaky"]["error"] == "FLAKY_TOKEN was refused"
        assert app.channel("flaky") is None
    finally:
        await app.stop()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def discord_app(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[App, Settings]]:
    monkeypatch.setenv("DISCORD_BOT_TOKEN", "secret-token")
    settings.channels = ["web", "discord"]
    settings.port = closed_port()
    app = App(settings, extra_plugins=[gatebot_discord])
    yield app, settings
    await app.stop()
    monkeypatch.delenv("DISCORD_API_URL", raising=False)
    monkeypatch.delenv("DISCORD_GATEWAY_URL", raising=False)
    gatebot_discord.channel._point_at_discord()  # back to discord.com for later tests


async def test_discord_out_of_reach_leaves_the_widget_serving(
    discord_app: tuple[App, Settings],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app, settings = discord_app
    nowhere = closed_port()
    monkeypatch.setenv("DISCORD_API_URL", f"http://127.0.0.1:{nowhere}/api/v10")
    monkeypatch.setenv("DISCORD_GATEWAY_URL", f"ws://127.0.0.1:{nowhere}/")
    await app.start()
    base = f"http://127.0.0.1:{settings.port}"
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/healthz") as resp:
            assert resp.status == 200
            health = await resp.json()
        async with http.post(f"{base}/api/conversations", json={}) as resp:
            assert resp.status == 201
    assert health["status"] == "degraded"
    assert health["channels"]["web"] == {"status": "up"}
    discord_state = health["channels"]["discord"]
    assert discord_state["status"] == "connecting"
    assert "could not connect to Discord" in discord_state["error"]
    assert f"127.0.0.1:{nowhere}" in discord_state["error"]
    assert "secret-token" not in str(health) and "secret-token" not in caplog.text


async def test_discord_api_url_is_where_the_token_is_checked(
    discord_app: tuple[App, Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, _ = discord_app
    seen: list[str] = []

    async def refuse(request: web.Request) -> web.Response:
        seen.append(f"{request.path} {request.headers.get('Authorization')}")
        return web.json_response({"message": "401: Unauthorized", "code": 0}, status=401)

    stand_in = web.Application()
    stand_in.router.add_route("*", "/{tail:.*}", refuse)
    runner = web.AppRunner(stand_in)
    await runner.setup()
    port = closed_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    monkeypatch.setenv("DISCORD_API_URL", f"http://127.0.0.1:{port}/api/v10")
    try:
        with pytest.raises(ConfigError, match="Discord refused DISCORD_BOT_TOKEN"):
            await app.start()
    finally:
        await runner.cleanup()
    assert seen == ["/api/v10/users/@me Bot secret-token"]


async def test_slack_out_of_reach_is_retried_while_the_widget_serves(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gatebot_slack

    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-secret")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "signing-secret")
    monkeypatch.setenv("SLACK_API_URL", f"http://127.0.0.1:{closed_port()}/api/")
    settings.channels = ["web", "slack"]
    settings.port = closed_port()
    app = App(settings, extra_plugins=[gatebot_slack])
    await app.start()
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{settings.port}/healthz") as resp,
        ):
            health = await resp.json()
        assert health["status"] == "degraded" and health["channels"]["web"] == {"status": "up"}
        assert health["channels"]["slack"]["status"] == "connecting"
        assert "cannot reach Slack" in health["channels"]["slack"]["error"]
        assert "xoxb-secret" not in str(health)
    finally:
        await app.stop()

"""The contract every channel adapter passes: receive, reply, card, escalation relay, and a
retried delivery that makes no second turn. Each platform brings a driver that speaks its wire;
the tests are the same for all.

The drivers: ``WebDriver`` (below), ``SlackDriver`` (``tests/contract_slack.py``) and
``DiscordDriver`` (``tests/contract_discord.py``). Every test runs against each of them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any, Protocol, cast

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import App
from bot.config import Settings
from tests.conftest import ACME

# The platforms' drivers and the fixtures they stand on, imported so pytest finds them by name
# here (each is requested only by the test that runs on that platform).
from tests.contract_discord import discord_driver, world  # noqa: F401
from tests.contract_slack import bot, slack, slack_driver  # noqa: F401


class Driver(Protocol):
    """How a test plays the customer on one platform."""

    app: App
    #: A staff id the platform treats as a member of the help desk the escalation goes to.
    staff: str

    async def say(self, text: str, delivery_id: str) -> None:
        """Deliver a customer message through the platform, as the platform would."""

    async def received(self) -> list[dict[str, Any]]:
        """Everything the customer has received so far: text replies and cards, in order."""

    def conversation_id(self) -> str:
        """The gatebot conversation the customer is in."""


class WebDriver:
    """The widget's REST API and websocket over a real aiohttp server."""

    staff = "staff-1"  # the web app runs no desk channel, so any id may act

    def __init__(self, app: App, client: TestClient) -> None:
        self.app, self.client = app, client
        self.cid = ""
        self.auth: dict[str, str] = {}
        self.ws: Any = None
        self.events: list[dict[str, Any]] = []

    async def open(self) -> None:
        body = await (await self.client.post("/api/conversations")).json()
        self.cid, self.auth = body["id"], {"Authorization": f"Bearer {body['token']}"}
        self.ws = await self.client.ws_connect(
            f"/api/conversations/{self.cid}/events?token={body['token']}"
        )

    async def say(self, text: str, delivery_id: str) -> None:
        resp = await self.client.post(
            f"/api/conversations/{self.cid}/messages",
            headers=self.auth,
            json={"text": text, "client_message_id": delivery_id},
        )
        assert resp.status == 200

    async def received(self) -> list[dict[str, Any]]:
        while True:
            try:
                self.events.append(await self.ws.receive_json(timeout=0.3))
            except TimeoutError:
                break
        out: list[dict[str, Any]] = []
        for event in self.events:
            if event["type"] == "reply":
                out.append(event["reply"])
            elif event["type"] == "replies":
                out.extend(event["replies"])
        return out

    def conversation_id(self) -> str:
        return self.cid


@pytest.fixture
async def web_driver(app: App) -> AsyncIterator[WebDriver]:
    from gatebot_web.server import build_web_app

    async with TestClient(TestServer(build_web_app(app), host="127.0.0.1")) as client:
        web = WebDriver(app, client)
        await web.open()
        yield web
        await web.ws.close()


@pytest.fixture(params=["web", "slack", "discord"])
def driver(request: pytest.FixtureRequest) -> Driver:
    """The platform's driver, set up only for the platform the test runs on."""
    return cast(Driver, request.getfixturevalue(f"{request.param}_driver"))


@pytest.fixture(scope="module", autouse=True)
def warm_agent(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The first turn in a process loads the pack's trained heads (seconds, on a busy machine
    many). One throwaway turn first keeps that out of the drivers' bounded waits."""

    async def one_turn() -> None:
        data_dir = tmp_path_factory.mktemp("warm")
        app = App(Settings(pack=ACME, data_dir=data_dir, recorders=[]))
        await app.start(channels=False)
        try:
            conv, _ = app.store.create_conversation("web")
            await app.agent.handle(conv, "hello", "warm-up")
        finally:
            await app.stop()

    asyncio.run(one_turn())


@pytest.fixture(autouse=True)
async def leaves_nothing_behind(caplog: pytest.LogCaptureFixture) -> AsyncIterator[None]:
    """Torn down last: no task of the test outlives it, and no failure was only logged."""
    yield
    await asyncio.sleep(0)  # let tasks cancelled in teardown finish
    mine = asyncio.current_task()
    running = [t for t in asyncio.all_tasks() if t is not mine and not t.done()]
    assert running == [], f"tasks left running: {running}"
    phases = [*caplog.get_records("setup"), *caplog.get_records("call"), *caplog.records]
    errors = [r.getMessage() for r in phases if r.levelno >= logging.ERROR]
    assert errors == [], f"logged errors: {errors}"


def texts(received: list[dict[str, Any]]) -> list[str]:
    return [r["text"] for r in received if r.get("type") == "text"]


async def test_receive_and_reply(driver: Driver) -> None:
    await driver.say("Does Pipelines support Docker builds?", "d1")
    assert any("Docker" in t for t in texts(await driver.received()))


async def test_a_retried_delivery_makes_no_second_turn_or_reply(driver: Driver) -> None:
    await driver.say("hello", "d1")
    await driver.say("hello", "d1")
    assert len(texts(await driver.received())) == 1
    assert len(driver.app.store.turns(driver.conversation_id())) == 1
    # The retry did reach the agent, and was known there as a repeat (not lost on the way).
    metrics = driver.app.metrics.render().splitlines()
    repeats = [m for m in metrics if m.startswith("gatebot_duplicate_messages_total{")]
    assert [m.rsplit(" ", 1)[1] for m in repeats] == ["1"]


async def test_cards_are_delivered(driver: Driver) -> None:
    for n, text in enumerate(
        ["I'd like a demo", "we run CI for our web apps", "12", "dana@example.com"]
    ):
        await driver.say(text, f"d{n}")
    cards = [r for r in await driver.received() if r.get("type") == "card"]
    assert cards and cards[0]["card"] == "contact"


async def test_escalation_relay_reaches_the_customer(driver: Driver) -> None:
    await driver.say("I want to talk to a person", "d1")
    esc = driver.app.store.escalations("open")[0]
    await driver.app.helpdesks.take_over(esc.id or 0, driver.staff)
    await driver.app.helpdesks.staff_reply(esc.id or 0, driver.staff, "Hi, Sam here.")
    assert "Hi, Sam here." in texts(await driver.received())
    await driver.app.helpdesks.hand_back(esc.id or 0, driver.staff)
    await driver.say("Does Pipelines support Docker builds?", "d2")
    assert any("Docker" in t for t in texts(await driver.received()))

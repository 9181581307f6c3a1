"""The contract every channel adapter passes: receive, reply, card, escalation relay, and a
retried delivery that makes no second turn. Each platform brings a driver that speaks its wire;
the tests are the same for all."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import App


class Driver(Protocol):
    """How a test plays the customer on one platform."""

    app: App

    async def say(self, text: str, delivery_id: str) -> None:
        """Deliver a customer message through the platform, as the platform would."""

    async def received(self) -> list[dict[str, Any]]:
        """Everything the customer has received so far: text replies and cards, in order."""

    def conversation_id(self) -> str:
        """The gatebot conversation the customer is in."""


class WebDriver:
    """The widget's REST API and websocket over a real aiohttp server."""

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


@pytest.fixture(params=["web"])
async def driver(request: pytest.FixtureRequest, app: App) -> AsyncIterator[Driver]:
    from gatebot_web.server import build_web_app

    async with TestClient(TestServer(build_web_app(app), host="127.0.0.1")) as client:
        web = WebDriver(app, client)
        await web.open()
        yield web
        await web.ws.close()


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
    await driver.app.helpdesks.take_over(esc.id or 0, "staff-1")
    await driver.app.helpdesks.staff_reply(esc.id or 0, "staff-1", "Hi, Sam here.")
    assert "Hi, Sam here." in texts(await driver.received())
    await driver.app.helpdesks.hand_back(esc.id or 0, "staff-1")
    await driver.say("Does Pipelines support Docker builds?", "d2")
    assert any("Docker" in t for t in texts(await driver.received()))

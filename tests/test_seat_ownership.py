"""Who may change a subscription's seats in the sample pack (the add_seats flow, the catalog's
seat lookup and the demo API), as tests/test_ownership.py does for refunds: a signed-in visitor
by their verified identity (no email asked, another customer's subscription not found), an
anonymous visitor by the subscription's email and, with GATEBOT_EMAIL_CODES, a one-time code.
Then the code's texts in a French conversation, and the cap on codes sent (per conversation and
per email address), past which the customer is told so and handed to a person."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from bot.app import App
from bot.flows.steps import emailcode
from tests.test_flows_api import Chat, text_of
from tests.test_ownership import Inbox, client, inbox, running, start, steps

__all__ = ["client", "inbox", "running"]  # the fixtures, shared with the refund tests

DEMO_AUTH = {"Authorization": "Bearer acme-demo-token"}


async def seats(client: TestClient) -> int:
    resp = await client.get(
        "/demo-api/subscriptions/sub_acme1/seats?email=sam@example.com", headers=DEMO_AUTH
    )
    return int((await resp.json())["seats"])


async def test_a_signed_in_customer_changes_seats_without_an_email_nor_code(
    client: TestClient, inbox: Inbox
) -> None:
    chat = await start(client, "sam")
    first = await chat.say("I'd like to add seats please")
    assert first["turn"]["flow"]["name"] == "add_seats"
    assert "ask_email" in steps(first) and "email" not in text_of(first).lower()
    ready = await chat.say("sub_acme1")
    assert "How many seats" in text_of(ready)
    added = await chat.say("add 2 seats")
    assert text_of(added).startswith("Added 2 seats (now 7).")
    assert await seats(client) == 7
    assert inbox.messages == []


async def test_a_signed_in_customer_cannot_reach_another_customers_subscription(
    client: TestClient,
) -> None:
    chat = await start(client, "alex")
    await chat.say("I'd like to add seats please")
    body = await chat.say("sub_acme1")  # sam's
    assert body["turn"]["flow"]["status"] == "handed_off"
    (failed,) = [e for e in body["turn"]["tools"] if e["event"] == "failed"]
    assert "HTTP 404" in failed["detail"]["reason"]
    assert failed["detail"]["call"]["arguments"] == {"subscription_id": "sub_acme1"}
    assert await seats(client) == 5


async def test_an_anonymous_customer_changes_seats_only_after_the_emailed_code(
    client: TestClient, inbox: Inbox
) -> None:
    chat = await start(client)
    first = await chat.say("I'd like to add seats please")
    assert first["turn"]["flow"]["step"] == "ask_email"
    await chat.say("sam@example.com")
    asked = await chat.say("sub_acme1")
    assert "code" in text_of(asked) and "How many seats" not in text_of(asked)
    ((rcpt, _),) = inbox.messages
    assert rcpt == ["sam@example.com"]
    (code,) = inbox.codes()
    wrong = await chat.say(f"{(int(code) + 1) % 1_000_000:06d}")
    assert "isn't right" in text_of(wrong)
    ready = await chat.say(code)
    assert "How many seats" in text_of(ready)
    assert await seats(client) == 5
    added = await chat.say("add 2 seats")
    assert text_of(added).startswith("Added 2 seats (now 7).")
    assert await seats(client) == 7
    assert len(inbox.messages) == 1

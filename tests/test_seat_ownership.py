"""Who may change a subscription's seats in the sample pack (the add_seats flow, the catalog's
seat lookup and the demo API), as tests/test_ownership.py does for refunds: a signed-in visitor
by their verified identity (no email asked, another customer's subscription not found), an
anonymous visitor by the subscription's email and, with GATEBOT_EMAIL_CODES, a one-time code.
Then the code's texts in a French conversation, and the cap on codes sent (per conversation and
per email address), past which the customer is told so and handed to a person."""

from __future__ import annotations

from email.header import decode_header, make_header
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

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


def decoded(mail: Any) -> tuple[str, str]:
    """An email's subject and body as the customer reads them."""
    subject = str(make_header(decode_header(mail["Subject"])))
    return subject, mail.get_payload(decode=True).decode()


async def french(client: TestClient) -> Chat:
    resp = await client.post("/api/conversations", json={"language": "fr"})
    assert resp.status == 201, await resp.text()
    chat = Chat(client, await resp.json())
    # No order number yet: the code is sent once it is given ("1042").
    await chat.say("Je voudrais un refund, merci")
    await chat.say("sam@example.com")
    return chat


async def test_a_french_conversation_gets_the_code_in_french(
    client: TestClient, inbox: Inbox
) -> None:
    chat = await french(client)
    asked = await chat.say("1042")
    assert text_of(asked).startswith("Pour protéger votre compte, j'ai envoyé un code à 6 chiffres")
    ((_, mail),) = inbox.messages
    subject, body = decoded(mail)
    assert subject == "Votre code de vérification Acme Cloud"
    assert body.startswith("Votre code est ") and "Il expire dans 10 minutes." in body
    (code,) = inbox.codes()
    wrong = await chat.say(f"{(int(code) + 1) % 1_000_000:06d}")
    assert "Ce code n'est pas le bon" in text_of(wrong) and "(2 essais restants)" in text_of(wrong)
    right = await chat.say(code)
    # The flow's own template, in the conversation's French: the read-back comes next.
    assert text_of(right) == (
        "Pour confirmer : je rembourse la commande 1042 (montant : $42.00, moyen : store credit)."
        " Je continue ?"
    )
    assert right["turn"]["flow"]["step"] == "refund"


async def test_codes_sent_in_one_conversation_are_capped_then_a_person_takes_over(
    client: TestClient, inbox: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each expired code sends a new one (as a restarted flow would): three an hour, then the
    customer is told no more will be sent, in their language, and handed to a person."""
    chat = await french(client)
    monkeypatch.setattr(emailcode, "TTL_S", -1)  # every code has expired by the next message
    for sent in (1, 2, 3):
        await chat.say("1042" if sent == 1 else "000000")
        assert len(inbox.messages) == sent
    last = await chat.say("000000")
    assert len(inbox.messages) == emailcode.MAX_SENDS  # no fourth email to the owner
    assert last["turn"]["flow"]["status"] == "handed_off"
    assert last["turn"]["move"]["name"] == "handoff"
    said = text_of(last)
    assert said.startswith("J'ai déjà envoyé autant de codes")
    assert "Je vous mets en relation avec une personne" in said  # the hand-off, in French too
    (capped,) = [e for e in last["turn"]["tools"] if e["event"] == "code_limit"]
    assert capped["detail"]["limit"] == "in this conversation"
    assert "sam@example.com" not in str(capped)


async def test_codes_sent_to_one_email_are_capped_across_conversations(
    client: TestClient, inbox: Inbox
) -> None:
    for _ in range(emailcode.MAX_SENDS):
        chat = await start(client)
        await chat.say("I'd like to add seats please")
        await chat.say("sam@example.com")
        await chat.say("sub_acme1")
    assert len(inbox.messages) == emailcode.MAX_SENDS
    chat = await start(client)
    await chat.say("I want a refund for order 1042")
    last = await chat.say("sam@example.com")  # another order, the same owner's inbox
    assert len(inbox.messages) == emailcode.MAX_SENDS
    assert last["turn"]["flow"]["status"] == "handed_off"
    assert "as many codes as I safely can" in text_of(last)
    (capped,) = [e for e in last["turn"]["tools"] if e["event"] == "code_limit"]
    assert capped["detail"]["limit"] == "to this email"


def test_sends_older_than_the_window_no_longer_count() -> None:
    from bot.flows.steps.base import StepHost

    host = StepHost.__new__(StepHost)
    host.code_sends = {}
    state: dict[str, Any] = {}
    for _ in range(emailcode.MAX_SENDS):
        emailcode._count_send(host, state, "Sam@Example.com ", 1000.0)
    assert emailcode._capped(host, state, "sam@example.com", 1001.0) == "in this conversation"
    assert emailcode._capped(host, {}, "sam@example.com", 1001.0) == "to this email"
    later = 1000.0 + emailcode.SEND_WINDOW_S
    assert emailcode._capped(host, state, "sam@example.com", later) is None
    assert all("@" not in key for key in host.code_sends)  # addresses kept hashed only

"""What customers noticed, through the REST API on the sample pack: an upset customer is
acknowledged and offered a person, the customer's own request after a no is served, an unsure
intent offers only plausible options, and a qualified lead reaches the help desk that takes leads
while the customer is told only what is true."""

from __future__ import annotations

import copy
from typing import Any

from aiohttp.test_utils import TestClient

from bot.app import App
from bot.packs import Pack
from bot.turn.act import Actor
from bot.turn.decide import Decision, decide
from bot.turn.turn import Read
from tests.test_api import new_conversation, say


async def turn_of(client: TestClient, cid: str, auth: dict[str, str], text: str, n: str) -> Any:
    resp = await say(client, cid, auth, text, n)
    assert resp.status == 200
    return await resp.json()


async def test_an_upset_customer_is_acknowledged_and_offered_a_person(
    client: TestClient, app: App
) -> None:
    cid, auth = await new_conversation(client)
    body = await turn_of(client, cid, auth, "I want my money back, this is the worst service", "1")
    turn = body["turn"]
    assert turn["move"]["name"] == "acknowledge"
    assert turn["legal"]["rule"].startswith("hard rule: acknowledge a frustrated customer")
    assert "frustrating" in body["replies"][0]["text"] and "person" in body["replies"][0]["text"]
    assert "?" in body["replies"][0]["text"] and "order number" not in body["replies"][0]["text"]
    assert body["replies"][1]["card"] == "offer_person"  # the offer as a button, too
    assert turn["move"]["escalate"] is False and app.store.escalations("open") == []
    # A yes to the offer hands off, as a request for a person.
    yes = (await turn_of(client, cid, auth, "yes please", "2"))["turn"]
    assert yes["move"]["name"] == "handoff" and yes["move"]["escalate"] is True
    assert any(r["head"] == "yesno" and r["answer"] == "yes" for r in yes["reads"])
    (esc,) = app.store.escalations("open")
    assert esc.kind == "asked"


async def test_anything_but_a_yes_to_the_offer_carries_on(client: TestClient, app: App) -> None:
    cid, auth = await new_conversation(client)
    await turn_of(client, cid, auth, "this is ridiculous, nothing works and I am furious", "1")
    body = await turn_of(client, cid, auth, "How do I reset my password?", "2")
    assert body["turn"]["move"]["name"] == "answer"
    assert body["turn"]["facts"][0]["key"] == "faq-password"
    assert app.store.escalations("open") == []
    # Declined once, the offer is not pressed again (asking for a person still works).
    upset = "this is ridiculous, nothing works and I am furious"
    again = (await turn_of(client, cid, auth, upset, "3"))["turn"]
    assert any(r["head"] == "sentiment" and r["answer"] == "hostile" for r in again["reads"])
    assert again["move"]["name"] != "acknowledge"
    assert "no selling to a hostile visitor" in again["legal"]["rule"]


async def test_the_customers_own_request_after_a_no_is_served(client: TestClient) -> None:
    cid, auth = await new_conversation(client)
    assert (await turn_of(client, cid, auth, "no thanks", "1"))["turn"]["move"]["name"] == "stop"
    body = await turn_of(client, cid, auth, "actually, can I get a demo?", "2")
    assert body["turn"]["move"]["name"] == "ask"
    assert "What would you like to use" in body["replies"][0]["text"]


async def test_a_qualified_lead_is_delivered_to_the_desk_that_takes_leads(
    client: TestClient, app: App
) -> None:
    cid, auth = await new_conversation(client)
    for n, text in enumerate(
        ["I'd like a demo", "We want uptime checks for our API", "about 12", "dana@example.com"]
    ):
        body = await turn_of(client, cid, auth, text, str(n))
    turn = body["turn"]
    assert turn["move"]["name"] == "propose" and turn["move"]["escalate"] is True
    assert "Our team will reach out" in body["replies"][0]["text"]
    (esc,) = [e for e in app.store.escalations("open") if e.kind == "lead"]
    assert (esc.helpdesk, esc.reason) == ("sales", "qualified lead: demo")
    # The sales desk's channel does not run in this app: the lead waits for the email sweep.
    assert esc.delivery is not None and "email after" in esc.delivery


def _unsure(ranking: list[dict[str, Any]]) -> Read:
    return {
        "head": "intent",
        "version": "t",
        "answer": ranking[0]["name"],
        "confidence": ranking[0]["score"],
        "gate": "intent",
        "threshold": 0.9,
        "outcome": "unsure",
        "ranking": ranking,
    }


def _neutral() -> Read:
    return {
        "head": "sentiment",
        "version": "t",
        "answer": "neutral",
        "confidence": 0.9,
        "gate": "sentiment",
        "threshold": 0.6,
        "outcome": "act",
        "score": 0.0,
    }


def _decide(pack: Pack, read: Read) -> Decision:
    scope = {"verdict": "in", "rule": "no_declared_match", "question": True}
    return decide(pack, {"values": {}}, scope, read, _neutral(), 1)  # type: ignore[arg-type]


def test_an_unsure_intent_offers_only_options_above_the_floor(pack: Pack) -> None:
    assert pack.gates["clarifyFloor"] == 0.15

    def ranked(pricing: float, demo: float) -> Read:
        return _unsure([{"name": "pricing", "score": pricing}, {"name": "demo", "score": demo}])

    both = _decide(pack, ranked(0.5, 0.3))
    assert both.move == "clarify" and both.options == ["pricing", "demo"]
    # A 1.4% option is never offered ...
    demo_first = [{"name": "demo", "score": 0.6}, {"name": "pricing", "score": 0.014}]
    one = _decide(pack, _unsure(demo_first))
    assert one.move == "clarify" and one.options == ["demo"]
    # ... and one plausible question is answered, not asked back ("did you mean pricing?").
    question = _decide(pack, ranked(0.6, 0.014))
    assert question.move == "answer" and "each calls for answer" in question.rule
    none = _decide(pack, ranked(0.1, 0.05))
    assert none.move == pack.default_move and "clarify floor 0.15" in none.rule


def test_a_person_is_offered_only_as_the_likeliest(pack: Pack) -> None:
    # "I'm locked out of my account": a person as the runner-up is not asked about; the
    # support question is answered (a customer can ask for a person at any turn).
    support_first = [{"name": "support_request", "score": 0.66}, {"name": "human", "score": 0.18}]
    answered = _decide(pack, _unsure(support_first))
    assert answered.move == "answer" and answered.options == []
    # A person more likely than not: handed off unless a move head is sure of the question.
    person_first = [{"name": "human", "score": 0.76}, {"name": "demo", "score": 0.04}]
    handed = _decide(pack, _unsure(person_first))
    assert handed.move == "handoff" and "a person more likely than not" in handed.rule
    # Less likely than that, it is asked about, as any unsure intent.
    maybe = [{"name": "human", "score": 0.35}, {"name": "demo", "score": 0.2}]
    asked = _decide(pack, _unsure(maybe))
    assert asked.move == "clarify" and asked.options == ["human", "demo"]


async def test_without_a_desk_for_leads_the_customer_is_told_to_write(pack: Pack) -> None:
    no_desks = copy.copy(pack)
    no_desks.helpdesks = []
    decision = Decision(["propose"], "qualified", outcome="demo", template="propose_demo").choose()
    acted = await Actor(no_desks, None, None).act(decision, "", [], "en")  # type: ignore[arg-type]
    assert acted.replies[0]["text"] == "You can write to sales@acme.example to arrange this."
    with_desks = await Actor(pack, None, None).act(decision, "", [], "en")  # type: ignore[arg-type]
    assert "Our team will reach out" in with_desks.replies[0]["text"]


async def test_a_flow_starts_from_its_own_words_and_intent(client: TestClient) -> None:
    cid, auth = await new_conversation(client)
    body = await turn_of(client, cid, auth, "I upgraded by mistake, can you refund me", "1")
    intent = next(r for r in body["turn"]["reads"] if r["head"] == "intent")
    # The refund flow's examples trained its intent into the pack's head; its word agrees.
    assert (intent["answer"], intent["outcome"]) == ("refund", "act")
    assert body["turn"]["flow"]["name"] == "refund"
    assert {"intent", "worded"} <= set(body["turn"]["flow"]["started_by"])
    assert body["turn"]["move"]["name"] == "ask"  # the refund asks for the order's email first
    # A confident other intent never starts a flow on a shared word.
    cid, auth = await new_conversation(client)
    body = await turn_of(client, cid, auth, "where is my order?", "2")
    assert body["turn"]["flow"] is None

"""Flows start the way customers ask, through the REST API on the sample pack: from the flow's
intent (its own examples trained into the pack's head), its words, its examples and a change it
can read; an unrelated message starts none. A change a tool refuses is explained, never handed
off and never worded as done."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from bot.app import App
from bot.config import Settings
from bot.extend.tool import ToolOutcome
from bot.flows.steps.refusal import change_limit, explainable, why
from bot.heads import load_head
from bot.packs import Pack, PackErrors, load_pack
from bot.text import asks_how, asks_to_act, goes_alone, only_values
from bot.turn.router import KeywordRouter
from tests.test_flows_api import DEMO_AUTH, order, start, text_of

SEATS = "/demo-api/subscriptions/sub_acme1/seats?email=sam@example.com"


async def seats(client: TestClient) -> int:
    resp = await client.get(SEATS, headers=DEMO_AUTH)
    return int((await resp.json())["seats"])


def test_flow_examples_are_lines_of_the_flows_intent(pack: Pack) -> None:
    lines = pack.intent_lines()
    assert ("we need two more seats", "change_seats") in lines
    assert ("I'd like a refund please", "refund") in lines
    assert ("our team wants a live demo on zoom", "demo") in lines
    # The intents' own lines come first, each once.
    assert lines[: len(pack.intents[0].examples)] == [
        (ex, pack.intents[0].name) for ex in pack.intents[0].examples
    ]
    assert len(lines) == len(set(lines))
    # The pinned head was trained on them: it knows the flows' intents.
    head = load_head(pack.root / pack.heads["intent"]["path"])
    assert {"refund", "change_seats", "demo"} <= set(head.labels)


def test_without_heads_the_keyword_router_reads_flow_examples_too(pack: Pack) -> None:
    ranked = KeywordRouter(pack).rank("please take one user off our subscription")
    assert ranked[0].name == "change_seats"  # a flow example's words, not a declared keyword


def test_examples_need_an_intent_to_train(pack: Pack, tmp_path: Path) -> None:
    pack_dir = tmp_path / "acme"
    shutil.copytree(pack.root, pack_dir)
    path = pack_dir / "flows" / "add_seats.yaml"
    path.write_text(path.read_text().replace("  intents: [change_seats]\n", ""))
    with pytest.raises(PackErrors, match=r"examples train the flow's intent"):
        load_pack(pack_dir)


async def test_bump_us_by_four_seats_starts_with_the_change_read(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await start(client)
    first = await chat.say("bump us by 4 seats")
    flow = first["turn"]["flow"]
    assert (flow["name"], flow["step"]) == ("add_seats", "ask_email")
    assert flow["started_by"]["change"] == {
        "step": "change_seats",
        "pick": "add",
        "item": "seats",
        "quantity": 4,
    }
    await chat.say("sam@example.com")
    made = await chat.say("sub_acme1")
    # Reached after the lookup, the change is made at once and read back, not asked again.
    assert text_of(made).startswith("Added 4 seats (now 9).")
    assert await seats(client) == 9
    assert "started_by" not in made["turn"]["flow"]
    undone = await chat.say("undo")
    assert text_of(undone).startswith("Removed 4 seats (now 5).")


async def test_a_new_total_starts_the_seat_flow_and_is_made_as_a_change_to_it(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await start(client)
    first = await chat.say("I want to change the number of users on our account to 8")
    assert first["turn"]["flow"]["started_by"]["change"] == {
        "step": "change_seats",
        "pick": "change",
        "item": "seats",
        "quantity": 8,
    }
    await chat.say("sam@example.com")
    await chat.say("sub_acme1")
    assert await seats(client) == 8


async def test_drop_two_seats_starts_with_the_first_change_read(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    chat = await start(client)
    first = await chat.say("drop two seats")
    assert first["turn"]["flow"]["name"] == "add_seats"
    assert first["turn"]["flow"]["started_by"]["change"]["pick"] == "remove"
    assert first["turn"]["flow"]["started_by"]["change"]["quantity"] == 2
    await chat.say("sam@example.com")
    made = await chat.say("sub_acme1")
    assert text_of(made).startswith("Removed 2 seats (now 3).")
    assert await seats(client) == 3


async def test_refund_and_guided_demo_start_from_customers_words(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    refund = await (await start(client)).say("can you refund me, I upgraded by mistake")
    assert refund["turn"]["flow"]["name"] == "refund"
    assert refund["turn"]["flow"]["step"] == "ask_email"
    demo = await (await start(client)).say(
        "could someone walk our team through the product on a call"
    )
    assert demo["turn"]["flow"]["name"] == "demo"
    assert "What would you like to use" in text_of(demo)
    # A plain demo request stays the playbook's: qualified, then delivered as a lead.
    plain = await (await start(client)).say("can I get a demo")
    assert plain["turn"]["flow"] is None
    assert plain["turn"]["move"]["name"] == "ask"


async def test_an_unsure_read_of_a_flows_intent_worded_as_a_request_starts_it(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    text = (
        "the monthly payment went through on both our old and new workspace, pls undo the duplicate"
    )
    body = await (await start(client)).say(text)
    (intent,) = [r for r in body["turn"]["reads"] if r["head"] == "intent"]
    assert (intent["answer"], intent["outcome"]) == ("refund", "unsure")
    assert 0.5 <= intent["confidence"] < 0.9
    flow = body["turn"]["flow"]
    assert (flow["name"], flow["step"]) == ("refund", "ask_email")
    assert flow["started_by"] == {"leans": True}


def test_a_question_about_how_things_work_is_told_apart() -> None:
    assert asks_how("can I get a refund if I cancel in the first 14 days?")
    assert asks_how("can we reduce seats anytime?")
    assert asks_how("can I have more than 50 seats on the Team plan?")
    # asking the agent itself outweighs a condition
    assert not asks_how("please remove 2 seats if we have more than 10")
    assert not asks_how("If the duplicate payment isn't credited back by Friday I'll dispute it")
    assert not asks_how("Is it possible to get 30 more user licences added today?")
    # how long, who may do it
    assert asks_how("how long does a refund normally take to show up on my card?")
    assert asks_how("Who on our side is allowed to change the seat count?")


async def test_a_question_about_how_refunds_work_is_answered_not_asked_an_order_number(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    body = await (await start(client)).say("can I get a refund if I cancel in the first 14 days?")
    turn = body["turn"]
    assert turn["flow"] is None and turn["scope"]["verdict"] == "in"
    assert turn["move"]["name"] == "answer"
    assert turn["legal"]["rule"] == "intent refund asked how it works: answer, nothing asked"
    assert "order number" not in text_of(body)


def test_a_request_is_worded_as_one() -> None:
    assert asks_to_act("Can you reverse the charge from yesterday?")
    assert asks_to_act("Please take Mark and Julia off our billing")
    assert asks_to_act("Hey, can we hop on a call where you show us around Acme Cloud?")
    assert asks_to_act("could I get the duplicate payment back")
    assert asks_to_act("we\u2019d like our money back")  # a typographic apostrophe
    assert not asks_to_act("do you offer refunds if we cancel within 14 days?")
    assert not asks_to_act("does every person who logs in need their own seat?")
    assert not asks_to_act("can I force 2fa for everyone on my team")
    assert asks_to_act("Can I book a call with a sales engineer to see how Monitor fits us?")
    assert asks_to_act("Is it possible to set up a meeting where your people present Acme?")
    # saying what one wants is a request in a message that asks nothing else
    assert asks_to_act("I want to change the number of users on our account to 25")
    assert not asks_to_act("I need everyone on our team to use 2FA, can I enforce that?")
    assert not asks_to_act("we need to know whether SSO is included")


@pytest.mark.parametrize(
    "text",
    [
        "where is my order?",
        "do viewers count as paid seats",
        "how do I add a user to my team",
        "what's the pricing for monitor",
        "I want to talk to a person",
        "hello there",
        # a count of an item with no verb of changing orders nothing
        "one of my users forgot her password, should she reset it in Acme?",
        # a question about a refund policy, not a request for one
        "Do you offer refunds if we cancel within the first 14 days? just asking",
        # questions about how seat changes work, read confidently as the seat intent
        "can we add seats mid-month or only at renewal?",
        "could we remove seats later if the team shrinks?",
    ],
)
async def test_an_unrelated_message_starts_no_flow(
    flow_client: tuple[TestClient, App], text: str
) -> None:
    client, _ = flow_client
    body = await (await start(client)).say(text)
    assert body["turn"]["flow"] is None


async def test_a_seat_change_past_the_declared_limit_is_explained(
    flow_client: tuple[TestClient, App],
) -> None:
    client, app = flow_client
    chat = await start(client)
    await chat.say("I'd like to add seats please")
    await chat.say("sam@example.com")
    await chat.say("sub_acme1")
    body = await chat.say("add 60 seats")
    said = text_of(body)
    assert said.startswith("I couldn't add 60 seats: the most you can add at once is 50 seats.")
    assert "How many seats" in said and "Added" not in said
    assert body["turn"]["move"]["name"] != "handoff" and body["turn"]["move"]["escalate"] is False
    assert body["turn"]["flow"]["status"] == "active"
    assert await seats(client) == 5
    again = await chat.say("add 50 seats")
    assert text_of(again).startswith("Added 50 seats (now 55).")
    assert app.store.escalations() == []


async def test_a_refund_the_service_turns_down_is_explained_not_done(
    flow_client: tuple[TestClient, App],
) -> None:
    client, app = flow_client
    chat = await start(client)
    await chat.say("I want a refund for order 1042")
    await chat.say("sam@example.com")  # the read-back
    # Meanwhile someone else refunds it, so the service says no to this one.
    resp = await client.post(
        "/demo-api/orders/1042/refund", json={"method": "card"}, headers=DEMO_AUTH
    )
    assert resp.status == 200
    body = await chat.say("yes")
    said = text_of(body)
    assert (
        said == "I couldn't make that change: order 1042 was already refunded. Nothing was changed."
    )
    assert "is refunded" not in said and "Done" not in said
    assert body["turn"]["move"]["name"] == "answer" and body["turn"]["move"]["escalate"] is False
    assert body["turn"]["flow"]["status"] == "done"
    assert (await order(client))["refunded_to"] == "card"  # the other refund, untouched
    assert app.store.escalations() == []


def test_refusals_read_from_the_declaration() -> None:
    schema = {
        "properties": {
            "delta": {"type": "integer", "minimum": -50, "maximum": 50},
            "method": {"enum": ["card", "store credit"]},
        }
    }
    refused = ToolOutcome(
        "t", "refused", reason="invalid method: 'cash' is not one of", argument="method"
    )
    assert explainable(refused)
    assert (
        why(refused, schema, {"method": "cash"}) == "the method must be one of card, store credit"
    )
    too_many = ToolOutcome("t", "refused", reason="invalid delta", argument="delta")
    assert why(too_many, schema, {"delta": 60}) == "the delta can be at most 50"
    noun = lambda n: "seat" if n == 1 else "seats"  # noqa: E731
    spec = schema["properties"]["delta"]
    assert change_limit(spec, 60, noun) == "the most you can add at once is 50 seats"
    assert change_limit(spec, -70, noun) == "the most you can remove at once is 50 seats"
    assert change_limit(spec, 10, noun) is None
    said = ToolOutcome(
        "t", "failed", reason="orders.x answered HTTP 409: a subscription has 1 to 500 seats"
    )
    assert explainable(said) and why(said, schema, {}) == "a subscription has 1 to 500 seats"
    # Not the customer's to hear: an ownership check, a service that did not answer.
    assert not explainable(ToolOutcome("t", "refused", reason="subscription_id does not belong"))
    assert not explainable(ToolOutcome("t", "failed", reason="orders.x did not answer within 5 s"))


async def test_a_guided_demo_delivers_the_lead_it_promises(
    flow_client: tuple[TestClient, App],
) -> None:
    client, app = flow_client
    chat = await start(client)
    await chat.say("could someone walk our team through the product on a call")
    await chat.say("uptime checks for our public API")
    body = await chat.say("about 12")
    assert text_of(body) == (
        "Thanks! Our team will reach out to book your demo for uptime checks for our public API."
    )
    assert body["turn"]["move"]["name"] == "propose"
    assert body["turn"]["flow"]["status"] == "done"
    (lead,) = [e for e in app.store.escalations("open") if e.kind == "lead"]
    assert (lead.helpdesk, lead.reason) == ("sales", "qualified lead: demo")


async def test_without_a_desk_for_leads_the_demo_flow_promises_no_call(
    pack: Pack, tmp_path: Path
) -> None:
    folder = tmp_path / "acme"
    shutil.copytree(pack.root, folder)
    (folder / "helpdesks.yaml").unlink()
    meta = folder / "pack.yaml"  # and pre-flight's routing to the desks
    routing = ("  helpdesks:", "    sales:", "    support:")
    kept = [line for line in meta.read_text().splitlines() if not line.startswith(routing)]
    meta.write_text("\n".join(kept) + "\n")
    app = App(Settings(pack=folder, data_dir=tmp_path, recorders=[]))
    await app.start(channels=False)
    try:
        conv, _ = app.store.create_conversation("web")
        for n, text in enumerate(["I'd like a guided demo for my team", "status pages", "8"]):
            result = await app.agent.handle(conv, text, f"m{n}")
    finally:
        await app.stop()
    assert result.replies[0]["text"] == "You can write to sales@acme.example to arrange this."
    assert result.record["flow"]["status"] == "done"


async def test_a_person_the_head_is_unsure_of_is_read_from_the_nearest_lines(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    text = "this bot is useless. put me through to somebody who can help"
    body = await (await start(client)).say(text)
    assert body["turn"]["move"]["name"] == "handoff"
    (intent,) = [r for r in body["turn"]["reads"] if r["head"] == "intent"]
    assert intent["answer"] == "human" and intent["version"].endswith("+near")
    assert intent["near"]["cosine"] >= 0.55 and intent["near"]["margin"] >= 0.15


async def test_a_person_asked_for_after_a_line_of_context_is_read_from_that_sentence(
    flow_client: tuple[TestClient, App],
) -> None:
    # As a whole the message reads none at 0.94 and sits near no hand-off line; its last
    # sentence alone sits next to one.
    client, _ = flow_client
    text = "I've been going around in circles for twenty minutes. GET ME A HUMAN."
    body = await (await start(client)).say(text)
    assert body["turn"]["move"]["name"] == "handoff"
    (intent,) = [r for r in body["turn"]["reads"] if r["head"] == "intent"]
    assert intent["answer"] == "human" and intent["version"].endswith("+near")


def test_a_message_of_values_alone_is_told_apart() -> None:
    for text in ("sam@example.com", "sub_acme1", "it's order 1042, thanks", "reach me at a@b.io"):
        assert only_values(text), text
    for text in ("refund order 1042", "add 3 seats", "I want a person, my email is a@b.io", "hi"):
        assert not only_values(text), text


@pytest.mark.parametrize("text", ["sam@example.com", "you can reach me at dana@example.com"])
async def test_a_value_given_alone_asks_for_no_person(
    flow_client: tuple[TestClient, App], text: str
) -> None:
    # An email address reads as a request for a person on the heads' embedding (0.83 to 0.95).
    client, _ = flow_client
    body = await (await start(client)).say(text)
    (intent,) = [r for r in body["turn"]["reads"] if r["head"] == "intent"]
    assert (intent["outcome"], intent["reason"]) == ("unsure", "value_only")
    assert body["turn"]["move"]["name"] != "handoff"


@pytest.mark.parametrize(
    "text",
    [
        "If the on-call person doesn't respond to an alert, does it go to someone else?",
        "what's the difference between the admin role and the member role for a person on my team?",
        "can someone with the manager role see the billing page?",
    ],
)
async def test_a_question_that_names_a_person_is_not_handed_off(
    flow_client: tuple[TestClient, App], text: str
) -> None:
    client, _ = flow_client
    body = await (await start(client)).say(text)
    assert body["turn"]["move"]["name"] != "handoff"
    assert body["turn"]["flow"] is None


async def test_a_seat_request_in_words_far_from_the_pack_is_not_declined(
    flow_client: tuple[TestClient, App],
) -> None:
    # "license" keeps it in scope; its wording sits nearer the generic outside lines than the
    # pack's, but the head reads a request the pack has a flow for.
    client, _ = flow_client
    body = await (await start(client)).say("one of our devs quit, can you drop her license")
    assert body["turn"]["scope"]["verdict"] == "in"
    assert body["turn"]["flow"]["name"] == "add_seats"


async def test_a_request_far_from_the_pack_s_wording_is_kept_when_the_head_leans_to_a_flow(
    flow_client: tuple[TestClient, App],
) -> None:
    # Nearer the generic lines than the pack by the topic-word margin, but the head reads the
    # seat flow's intent (unsure, not novel) and the message holds a word of the pack's.
    client, _ = flow_client
    body = await (await start(client)).say(
        "hiring a new dev next week, need another license for her"
    )
    turn = body["turn"]
    assert turn["scope"]["verdict"] == "in"
    assert turn["flow"]["name"] == "add_seats"


def test_asking_for_something_to_go_through_alone_is_told_apart() -> None:
    assert goes_alone("Is there a recorded demo video of Pipelines I can watch on my own?")
    assert goes_alone("Do you have a self-guided tour I can go through without talking to sales?")
    assert not goes_alone("could you show my team how it works over a video call")
    assert not goes_alone("please send me the recording of our demo call")  # asks the agent


async def test_a_recorded_demo_asked_for_is_no_demo_lead(
    flow_client: tuple[TestClient, App],
) -> None:
    client, _ = flow_client
    body = await (await start(client)).say(
        "Is there a recorded demo video of Pipelines I can watch on my own?"
    )
    turn = body["turn"]
    assert turn["flow"] is None and turn["legal"]["outcome"] is None
    assert turn["legal"]["rule"].startswith("intent demo asked for nothing to be arranged")
    assert turn["move"]["name"] == "answer"

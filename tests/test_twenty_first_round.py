"""What the twenty-first round of customer messages taught (README, "The twenty-first round"),
through REST on the sample pack and in words: "take her seat off" and "they need access" are orders
when the head leans to the seats flow; "human agent please" asks for a person; "and pipelines?",
"is the same true for Pipelines?" and "does pipelines get one too?" ask the last question of
another product; a question beside a request is answered rather than met with "did you mean
...?"; "the United States", "the CFO", "our Lisbon office" and "my copywriter" name nothing the
pack never says; "the build cache files" are the build cache; "give me an idea of what it costs"
asks for no demo; a car's seats and a book to read are declined; and so is money another party
owes or took ("the shop still didn't refund me"), unless the message names the company."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.packfit import unseen_names
from gatebot_knowledge.specific import asked_thing, kept_thing

from bot.packs import Pack
from bot.text import another_partys, asks_for_person, asks_to_be_shown, orders
from bot.turn.followup_query import switches_subject
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited, _turns


def _flow(body: dict) -> str | None:  # type: ignore[type-arg]
    flow = body["turn"]["flow"]
    return flow["name"] if flow else None


async def test_an_order_without_the_words_of_a_request(client: TestClient) -> None:
    for text in (
        "one of our planners has left, take her seat off so we stop paying for it",
        "hired two more designers this week, they need access",
        "we had three more kids join the club this week, they need logins",
    ):
        assert orders(text), text
        assert _flow(await _turns(client, text)) == "add_seats", text
    for text in (
        "so remove a user means we lose all the dashboards she built?",  # asks what happens
        "Both of them need access to billing only, I already made them admins.",
        "how do i add a user",
        "how many seats do they need",
        "I tried to log in and add a user but the button is greyed out",  # a story
        "please take a look at the dashboard, it is broken",
    ):
        assert not orders(text), text


async def test_a_person_alone_asks_for_one(client: TestClient) -> None:
    for text in ("human agent please", "Mensch bitte. human agent", "live person pls"):
        assert asks_for_person(text), text
    assert (await _turns(client, "human agent please"))["turn"]["move"]["name"] == "handoff"
    for text in (
        "is it a real person?",
        "real human-readable logs",
        "Our status page readers are not technical. Real humans.",
        "Who should get the alert at 3am? A live person. Does Monitor do phone calls?",
    ):
        assert not asks_for_person(text), text


async def test_the_last_question_asked_of_another_product(pack: Pack, client: TestClient) -> None:
    for text in (
        "and pipelines?",
        "Is the same true for Pipelines?",
        "does that apply to status pages?",
        "does pipelines get one too?",
    ):
        assert switches_subject(pack, text), text
    for text in (
        "ok and the build caches?",
        "and alerts?",  # a word of Monitor's, not its name
        "and how do I reset my password?",
        "and cancel my plan",
        "does it work with monitor?",  # whether one product works with another
    ):
        assert not switches_subject(pack, text), text
    for first, then in (
        ("does monitor have a free trial", "and pipelines?"),
        ("hey is there a free trial for Acme Monitor?", "does pipelines get one too?"),
        ("Is there a free trial for Acme Monitor?", "Is the same true for Pipelines?"),
    ):
        assert _cited(await _turns(client, first, then)) == ["faq-trial"], then
    body = await _turns(
        client, "how long do you keep logs for pipelines?", "ok and the build caches?"
    )
    assert _cited(body) == ["doc-pipelines#jobs-and-caches"]


async def test_a_question_beside_a_request_is_answered(client: TestClient) -> None:
    text = "if the on-call dev doesnt answer the alert who gets it next? can we set that up"
    assert _cited(await _turns(client, text)) == ["doc-monitor#alerts"]


async def test_names_that_are_the_customers_own(client: TestClient) -> None:
    known = {w: 1 for w in ("data", "us", "eu", "workspac", "add", "alert", "cost", "budget")}
    assert not unseen_names(known, "Is the data kept in the United States?")
    assert not unseen_names(known, "in the European Union or the United States?")
    assert unseen_names(known, "We run a Shopify store, where is the data?") == ["Shopify"]
    assert not unseen_names(known, "the CFO wants a number by EOD, what does it cost")
    assert not unseen_names(known, "where is the data of our Lisbon office kept")
    assert unseen_names(known, "can we add our Bitbucket workspace") == ["Bitbucket"]
    assert not unseen_names(known, "how do i add my copywriter to the workspace")
    assert unseen_names(known, "can alerts go to our pagerduty?") == ["pagerduty"]
    assert unseen_names(known, "can we send alerts to our Opsgenie") == ["Opsgenie"]
    text = "Is the data kept in the United States, and do we get to choose the region?"
    assert _cited(await _turns(client, text)) == ["faq-data-location"]


async def test_what_is_kept_and_what_is_asked_for(client: TestClient) -> None:
    assert kept_thing("how long are the build cache files kept for?") == ["build", "cach"]
    assert kept_thing("how long are audit records kept") == ["audit"]
    assert asked_thing("is there a helm chart or an operator?") == ["helm", "chart"]
    text = "how long are the build cache files kept for? contractor says storage is wasted"
    assert _cited(await _turns(client, text)) == ["doc-pipelines#jobs-and-caches"]
    await _unasserted(client, "self-hosted runners on kubernetes - is there a helm chart?")


async def test_given_a_demo_not_an_idea(client: TestClient) -> None:
    assert not asks_to_be_shown("Could you give me an idea of what Acme Cloud costs?")
    assert not asks_to_be_shown("My build is stuck, could you give it a look?")
    assert not asks_to_be_shown("I dont want a walkthrough of pipelines, just the yaml file")
    assert asks_to_be_shown("Could someone give our platform team a live walkthrough of Monitor")
    assert asks_to_be_shown("we evaluate to replace jenkins. want walkthrough call for both")
    body = await _turns(client, "Could you give me an idea of what Acme Cloud costs?")
    assert _flow(body) is None and _cited(body) == ["faq-pricing"]


async def test_seats_of_a_car_and_a_book_to_read_are_declined(client: TestClient) -> None:
    for text in (
        "how many seats does a 2019 toyota sienna have",
        "My car's had the check engine light on since Monday, safe to drive?",
        "recommend a decent book on negotiating with suppliers?",
    ):
        body = await _turns(client, text)
        assert body["turn"]["move"]["name"] == "decline", text
        assert not body["turn"]["model_calls"], text


async def test_money_another_party_owes_is_declined(client: TestClient) -> None:
    for text in (
        "The shop still didn't refund me for the shoes I sent back two weeks ago. What can I do?",
        "the car dealership wants a 'processing fee' to refund my deposit. is that even legal??",
        "A guest in room 12 had no hot water. What refund is fair to offer her on the room?",
        "store won't give me a refund on a jacket i wore once, is that even legal",
    ):
        assert another_partys(text), text
        turn = (await _turns(client, text))["turn"]
        assert turn["move"]["name"] == "decline" and not turn["flow"], text
        assert turn["scope"]["rule"] == "out_of_scope:another_party", text
    for text in (
        "I want my money back from the upgrade",  # from a thing, not a party
        "refund from the annual plan please",
        "the shop won't refund me, can you?",  # asks the company
        "book us a demo, the IT contractor wants to see it first",  # no money, no party
        "The vendor still hasn't refunded the duplicate charge",  # the vendor may be the company
        "refund from March please, we were charged twice",
        "Our store still hasn't received the refund for last month's double charge",  # our own
    ):
        assert not another_partys(text), text
    # A word of the company's keeps the message the company's ("plan" is a billing word).
    text = "the restaurant wants a fee again, and we need a refund on the annual plan"
    assert another_partys(text)
    assert (await _turns(client, text))["turn"]["scope"]["verdict"] != "out"

"""What the seventeenth round of customer messages taught (README, "The seventeenth round"),
through REST on the sample pack and in words: a clause before a question ("When our booking
website goes down, can ...?") is the customer's situation and the question after it is read
alone as well, unless the clause says something of the pack's that the passage does not; a
product's word in another sense is declined wherever it sits (a monitor with an HDMI cable, the
build of a house), unless the product is named as a name or the message orders a change or a
person; a person asked for in these words is handed off; a place or a platform the pack never
names is not answered from the passage on another; and "same for status pages?" asks the last
question again."""

from __future__ import annotations

from pathlib import Path

from aiohttp.test_utils import TestClient
from gatebot_knowledge.sentences import after_lead

from bot.packs import Pack, load_pack
from bot.text import asks_for_person
from bot.turn.followup_query import switches_subject
from bot.turn.scope import check_scope, named_products
from tests.test_answerability import _say
from tests.test_eleventh_round import _unasserted
from tests.test_packs import errors_of, pack_copy, replace  # noqa: F401 (a fixture)
from tests.test_retrieval_understanding import _check, _cited, _turns


async def test_a_lead_clause_is_read_apart(client: TestClient) -> None:
    assert after_lead("When our site goes down, can the warning show up in Slack?") == (
        "When our site goes down",
        "can the warning show up in Slack?",
    )
    assert after_lead("we're 3 devs on ramen lol, is there a free tier at all") is not None
    assert after_lead("Seriously, how much?") is None  # too little left to read alone
    assert after_lead("Can Monitor alert us in Slack?") is None
    for text, key in (
        (
            "When our booking website goes down, can the warning show up in our Slack channel?"
            " That's where the front desk staff chat.",
            "faq-slack-alerts",
        ),
        ("we're 3 devs living on ramen lol, is there a free tier at all", "faq-pricing"),
    ):
        body = await _say(client, text)
        assert _cited(body) == [key], (text, _check(body))
    # The lead says what the passage does not (a plan the roles section never names): the
    # question after it is not read alone.
    text = "On the free plan, can I add ten people to our workspace?"
    assert not _cited(await _say(client, text))


async def test_a_product_word_in_another_sense_is_declined(client: TestClient) -> None:
    for text, rule in (
        ("my second monitor flickers when i plug in hdmi, any fix?", "displays"),
        ("My second monitor keeps flickering whenever I plug my laptop into the dock.", "displays"),
        ("Our house build is running two months late. Should I hold back a payment?", "house"),
        ("We are building a house and the builder wants 30% before the build starts.", "house"),
        ("write me a cover letter for a senior PM role", "jobs"),
        ("How many seats does a 737 MAX 8 have in a typical two-class layout?", "travel"),
        ("training for my first 10k, any tips for a beginner runner", "running"),
        ("my sales pipeline in hubspot is a mess, any tips to clean it up", "other_pipelines"),
        ("Is it worth offering new students a free trial class?", "other_trials"),
    ):
        turn = (await _say(client, text))["turn"]
        assert turn["move"]["name"] == "decline" and not turn["model_calls"], (text, turn["scope"])
        assert turn["scope"]["rule"].startswith("out_of_scope:" + rule), turn["scope"]


async def test_a_product_named_or_a_request_keeps_the_message(pack: Pack) -> None:
    assert named_products(pack, "Can Monitor alert on a 27 inch wall dashboard?") == {"monitor"}
    assert named_products(pack, "acme monitor over hdmi") == {"monitor"}
    assert not named_products(pack, "Monitor flickers when I plug in HDMI")
    assert not named_products(pack, "my second monitor flickers. Monitor is new")
    for text in (
        "Can Monitor alert on a 27 inch wall dashboard that refreshes itself?",
        "Add 2 seats please, one for our new hire from the job interview last week.",
        "Please add 5 seats to our workspace, we're onboarding the recruiting pipeline team.",
        "Our HDMI-capture API checks keep failing, can a human being please look at it?",
        "Came back from my first 5k to 14 failed builds. Can I retry them all at once?",
        # What a review of the round found: a product's other words, a runner registered, a
        # build's number, a utility's IT team.
        "We put uptime alerts on a 27 inch TV in the office, can the dashboard auto-refresh?",
        "How do I register my Mac mini as a runner?",
        "Our build 737 failed on main, where are the logs?",
        "gas company IT here, we need SSO with Azure AD. Which plan is SSO on?",
    ):
        assert check_scope(pack, text, set())["verdict"] != "out", text
    # A request in the phrase's own clause orders what the phrase names.
    for text in (
        "I need to add 4 seats together for the taylor swift show",
        "Add 2 more seats to my netflix plan",
    ):
        assert check_scope(pack, text, set())["verdict"] == "out", text


def test_a_product_a_topic_cannot_take_is_a_pack_error(pack_copy: Path) -> None:  # noqa: F811
    replace(
        pack_copy / "pack.yaml",
        "despite_product_words: [monitor, monitoring]",
        "despite_product_words: [monitr, monitoring]",
    )
    assert any("no product's keyword: 'monitr'" in e for e in errors_of(pack_copy))
    assert load_pack(Path(__file__).parent.parent / "knowledge" / "acme").out_of_scope


async def test_persons_asked_for_in_these_words_are_handed_off(client: TestClient) -> None:
    for text in (
        "Is there somebody on your end I could ring? I'd rather explain it out loud.",
        "Is there an actual support engineer who can look at this together with me?",
        "This is the third time I'm writing in about this. Can a human being please look at it?",
        "Is anyone on your side able to look at this with me live?",
        "Hand me over to a support engineer please.",
        "who can i ring at acme about this outage",
    ):
        assert asks_for_person(text), text
    for text in (
        "can someone on call look at alerts?",
        "can Monitor call someone on our side?",
        "Who can we call if the on-call engineer doesn't pick up?",
        "Will someone look at it if our deploy fails overnight?",
        "Is anyone on your team able to tell me whether SSO is on the Business plan?",
        "Can alerts escalate to an account manager if the on-call engineer misses them?",
    ):
        assert not asks_for_person(text), text
    text = "This is the third time I'm writing in about this. Can a human being please look at it?"
    assert (await _say(client, text))["turn"]["move"]["name"] == "handoff"


async def test_a_place_or_platform_the_pack_never_names_is_not_answered(
    client: TestClient,
) -> None:
    for text in (
        "can we host our data in australia",
        "do self hosted runners support windows or arm machines",
    ):
        await _unasserted(client, text)
    assert _cited(await _say(client, "can we keep our data in europe")) == ["faq-data-location"]


async def test_the_same_question_of_something_else(client: TestClient, pack: Pack) -> None:
    assert switches_subject(pack, "same for status pages?")
    assert switches_subject(pack, "Okay, what about monitor?")
    assert switches_subject(pack, "and for the business plan?")
    assert not switches_subject(pack, "what about refunds?")  # moves on
    assert not switches_subject(pack, "what about the weather in Berlin for our team offsite?")
    body = await _turns(client, "is there a free trial for pipelines?", "same for status pages?")
    assert _cited(body) == ["faq-trial"], _check(body)
    assert _check(body)["query_from"] == "follow-up"


async def test_a_seat_count_bumped_starts_the_seat_flow(client: TestClient) -> None:
    text = "Can you bump up our seat count? A new team is onboarding next week, not sure how many."
    turn = (await _say(client, text))["turn"]
    assert turn["flow"] and turn["flow"]["name"] == "add_seats", turn["legal"]

"""What the twentieth round of customer messages taught (README, "The twentieth round"), through
REST on the sample pack and in words: a follow-up that names what the last answer listed ("what
about teams?" after the Slack alerts were answered) asks the last question again of it; "we login
with SSO through Okta" names the identity provider; a common word in capitals ("builds are SLOW")
is said loudly, not named; "change my password then" asks to change a password; "which countries
are the check locations in" asks for places a passage names, and "where in the EU exactly" for a
city; and a build job that "cooks" content is no cooking question. Then: "do you do a discount"
and "is there some discount" ask for a thing, and "a phone app" is an app; "do you keep it
forever" asks how long, and "extend it to like 30 days" past the stated length; and "set up a walk
through call" asks to be shown the product."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.beyond import past_length
from gatebot_knowledge.figures import asked_value, holds_value
from gatebot_knowledge.packfit import unseen_names
from gatebot_knowledge.specific import _head, asked_thing, changed_thing

from bot.packs import Pack
from bot.text import asks_to_be_shown
from bot.turn.followup_query import again_of_answer, retrieval_query
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited, _turns


def test_a_follow_up_that_names_what_the_answer_listed(pack: Pack) -> None:
    alerts = {"last_question": "can monitor alert in slack", "last_answered": ["faq-slack-alerts"]}
    trial = {"last_question": "how long is the free trial?", "last_answered": ["faq-trial"]}
    for text in (
        "what about teams? our publisher is on teams",
        "oh lovely! and what about Teams? our other office uses that instead",
        "and phone calls? need something that actually wakes people at 3am",
        "what about plain SMS",
        "and email too?",
        "thanks, and phone calls?",
        "SMS too?",
    ):
        assert again_of_answer(pack, text, alerts), text  # type: ignore[arg-type]
    # The clause alone is searched after the last question: a second question is not joined.
    text = "what about teams? also how do I cancel and get my money back"
    assert again_of_answer(pack, text, alerts) == "what about teams"  # type: ignore[arg-type]
    query, _ = retrieval_query(pack, text, alerts)  # type: ignore[arg-type]
    assert query == "can monitor alert in slack what about teams"
    assert again_of_answer(pack, "and a credit card?", trial)  # type: ignore[arg-type]
    for text in (
        "what about refunds?",  # a word the alerts entry never says
        "and is it encrypted",  # asks something new
        "ok. and how much is it",
        "what about if nobody acknowledges?",  # a new question
    ):
        assert not again_of_answer(pack, text, alerts), text  # type: ignore[arg-type]
    # "sign-in" is the account document's title, not the roles section's words.
    roles = {
        "last_question": "which roles are there",
        "last_answered": ["doc-account#members-and-roles"],
    }
    assert not again_of_answer(pack, "what about sign-in?", roles)  # type: ignore[arg-type]
    # "grace" is the workspace deletion's word, not the trial's.
    assert not again_of_answer(pack, "and the grace period?", trial)  # type: ignore[arg-type]
    # After a turn that answered nothing, nothing is asked again.
    unanswered = {**alerts, "last_answered": []}
    assert not again_of_answer(pack, "what about teams?", unanswered)  # type: ignore[arg-type]


async def test_the_follow_up_is_answered_from_the_listing_passage(client: TestClient) -> None:
    for first, then in (
        ("can monitor send alerts to slack", "what about teams? our publisher is on teams"),
        ("does monitor alert into slack", "and phone calls? need something that wakes people"),
        ("can the site-down alerts go to slack?", "what about plain SMS"),
    ):
        cited = _cited(await _turns(client, first, then))
        assert cited and set(cited) <= {"faq-slack-alerts", "doc-monitor#alerts"}, (then, cited)


def test_a_provider_and_a_shouted_word_name_nothing() -> None:
    known = {w: 1 for w in ("identity", "provider", "sso", "password", "build", "docker", "cach")}
    assert not unseen_names(known, "We login with SSO through Okta. Where I change my password?")
    assert not unseen_names(known, "Docker layer caching... do you do it? builds are SLOW")
    assert not unseen_names(known, "deploys take FOREVER. can builds run at the same time")
    # An acronym, a rare word, a short one in capitals, one where a name goes or one that starts
    # a sentence may name a thing.
    assert unseen_names(known, "do builds run on ARM?") == ["ARM"]
    assert unseen_names(known, "can builds alert us via LINE?") == ["LINE"]
    assert unseen_names(known, "SIGNAL alerts for builds possible?") == ["SIGNAL"]
    assert "MS" in unseen_names(known, "We login with SSO through Okta. MS Teams alerts?")
    assert unseen_names(known, "can builds post to JIRA?") == ["JIRA"]
    assert unseen_names(known, "do you support SWIFT payments") == ["SWIFT"]
    assert changed_thing("where do i change my password then") == ["password"]
    assert changed_thing("how do I change my billing address now") == ["bill", "address"]


async def test_the_customers_words_reach_the_answer(client: TestClient) -> None:
    for text in (
        "We login with SSO through Okta. Where I change my password?",
        "we log in through our company SSO thing, where do i change my password then",
    ):
        assert _cited(await _turns(client, text)) == ["faq-password"], text
    body = await _turns(client, "Docker layer caching... do you do it? builds are SLOW")
    assert _cited(body) == ["faq-docker"]
    # A build that cooks content is not declined as a recipe; cooking still is.
    body = await _turns(client, "packaging and cook jobs start together, can one wait for cook?")
    assert body["turn"]["scope"]["rule"] != "out_of_scope:recipes"
    body = await _turns(client, "how long do I cook a turkey")
    assert body["turn"]["move"]["name"] == "decline"


async def test_which_places_asks_for_places_named(client: TestClient) -> None:
    for text, kind in (
        ("which countries are the twelve check locations in", "place"),
        ("what region is my data in", "place"),
        ("where in the eu exactly is the data like frankfurt or dublin", "site"),
        ("I know data is in EU, but which country exactly?", "site"),
        ("which data center hosts us", "site"),
    ):
        assert asked_value(text) == kind, text
    assert asked_value("Where in the world are your checks done from?") is None
    assert holds_value("place", "Customer data is stored in the EU or the US.")
    assert not holds_value("place", "checks from twelve locations around the world")
    assert not holds_value("site", "Customer data is stored in the EU or the US.")
    assert holds_value("site", "EU data sits in Frankfurt.")
    assert holds_value("site", "EU data is stored in Ireland.")  # which country exactly
    assert asked_value("where in the u.s. is the data") == "site"
    assert holds_value("place", "Data is stored in the U.S.")
    # The data entry names the EU and the US: it answers which region, not which city.
    assert _cited(await _turns(client, "which country is our data in")) == ["faq-data-location"]
    for text in (
        "which countries are the twelve check locations in exactly",
        "where in the eu exactly is the data like frankfurt or dublin",
    ):
        assert not _cited(await _turns(client, text)), text


async def test_a_thing_asked_for_by_its_own_word(client: TestClient) -> None:
    assert asked_thing("do you do a discount for startups or non profits") == ["discount"]
    assert asked_thing("Is there some discount for open source projects?") == ["discount"]
    assert asked_thing("what does it cost, is there any free option also?") == ["fre"]
    assert asked_value("Do you keep the history of incidents forever?") == "duration"
    assert asked_value("our image builds take FOREVER does it keep the docker layers") is None
    assert asked_value("monitor keeps alerting forever when nobody acks, who is paged?") is None
    # The thing by the word that names it: talk and kinds of thing aside.
    assert _head(asked_thing("is there a free trial right now?")) == "trial"
    assert _head(asked_thing("is there a phone app for alerts?")) == "app"
    assert _head(asked_thing("do you have a Slack notifications integration")) == "notification"
    for text in (
        "do you do a discount for startups or non profits",
        "is there a phone app I can download to see if the site is up?",  # an app, not a call
        "Do you keep the history of incidents forever, or does it get deleted after a while?",
    ):
        await _unasserted(client, text)
    trial = "Every product has a 14-day free trial with all features enabled."
    assert past_length("the trial is almost over, can u extend it to like 30 days?", trial)
    assert past_length("can u make it last like 30 days", trial)
    body = await _turns(client, "can monitor phone me when the site is down?")
    assert set(_cited(body)) <= {"faq-slack-alerts", "doc-monitor#alerts"} and _cited(body)


async def test_a_walk_through_call_asks_to_be_shown(client: TestClient) -> None:
    text = "can we set up a walk through call for my whole team like next tuesday"
    assert asks_to_be_shown(text)
    assert asks_to_be_shown("could we get a walk through of the status pages")
    assert not asks_to_be_shown("how do I walk through the setup")
    turn = (await _turns(client, text))["turn"]
    assert turn["flow"] and turn["flow"]["name"] == "demo", turn["legal"]

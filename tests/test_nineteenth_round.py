"""What the nineteenth round of customer messages taught (README, "The nineteenth round"),
through REST on the sample pack and in words: a short message after an answer whose every word is
one the answering passage says carries on from it, and stays in scope when alone the same passage
answers it ("can we pick eu" after the data location); small talk, a message after a declined
turn, or one another passage answers, does not; "and pipelines, same deal?" asks the last
question again of a product; and "the most websites we can watch" or "max concurrent jobs" asks
a count that a passage with no number of it does not answer; "page a human plz" and "anyone live
there rn" ask for a person."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.figures import asked_value, counted

from bot.packs import Pack
from bot.text import asks_for_person
from bot.turn.followup_query import carries_on, switches_subject
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited, _turns


def test_a_short_message_that_carries_on(pack: Pack) -> None:
    data = {"last_question": "where is our data stored", "last_answered": ["faq-data-location"]}
    checks = {"last_question": "how often do you check", "last_answered": ["doc-monitor#checks"]}
    trial = {"last_question": "is there a free trial?", "last_answered": ["faq-trial"]}
    assert carries_on(pack, "can we pick eu", data)  # type: ignore[arg-type]
    assert carries_on(pack, "from how many places though??", checks)  # type: ignore[arg-type]
    for text in (
        "how old are you",  # no word of the trial entry
        "oops",  # a word of the workspace deletion's asked questions only
        "and the grace period?",  # "period" is the trial's too, "grace" only the deletion's
        "who won the game last night",  # words the pack never says
        "whats 17 times 23",
        "trial",  # one word alone
    ):
        assert not carries_on(pack, text, trial), text  # type: ignore[arg-type]
    # After a turn that answered nothing (declined, or no fact), nothing carries on.
    assert not carries_on(pack, "can we pick eu", {**data, "last_answered": []})  # type: ignore[arg-type]
    assert switches_subject(pack, "and pipelines, same deal?")
    assert not switches_subject(pack, "same here lol")


async def test_a_short_follow_up_stays_in_scope_and_is_answered(client: TestClient) -> None:
    body = await _turns(
        client, "how frequently do you check our homepage", "from how many places though??"
    )
    assert body["turn"]["scope"]["rule"] == "follow-up"
    assert _cited(body) == ["doc-monitor#checks"]
    body = await _turns(client, "where is our data stored", "can we pick eu")
    assert body["turn"]["scope"]["rule"] == "follow-up"
    assert _cited(body) == ["faq-data-location"]
    body = await _turns(client, "is there a free trial for monitor", "and pipelines, same deal?")
    assert _cited(body) == ["faq-trial"]
    # Small talk after an answer, and a follow-up of a declined question, are declined.
    for first, then in (
        ("how long is the free trial?", "how old are you"),
        ("how long is the free trial?", "and the grace period?"),
        ("what's the weather in Paris?", "and in rome?"),
        # kept for the logs answer's sake, alone it finds the trial entry: not kept
        ("how long are build logs kept?", "how long?"),
    ):
        body = await _turns(client, first, then)
        assert body["turn"]["move"]["name"] == "decline", (then, body["turn"]["scope"])
        assert not _cited(body)


async def test_the_most_of_a_thing_asks_a_count(client: TestClient) -> None:
    for text, counts in (
        ("whats the most websites we can watch on the free plan?", "websit"),
        ("max concurrent jobs we get", "job"),
        ("what is the most seats i can add at once", "seat"),
        ("max seats on the business plan?", "seat"),
        ("What's the most status pages we can publish?", "pag"),
    ):
        assert asked_value(text) == "count", text
        assert counted(text) == counts, text
    for text in (
        "whats the most common reason for false alarms",
        "which plan has the most seats included?",
        "max days logs are kept",  # a length
        "max costs per month for monitor?",  # a price
        "Max needs our invoices, where can he find them?",  # a name
        "Max says we need a credit card for the trial, do we?",
        "what are the most popular integrations",  # a superlative
    ):
        assert asked_value(text) != "count", text
    await _unasserted(client, "whats the most websites we can watch on the free plan?")
    await _unasserted(client, "max concurrent jobs we get")
    await _unasserted(client, "max seats on the business plan?")  # not "Two-factor"


def test_a_person_asked_for_in_these_words() -> None:
    for text in (
        "page a human plz 🙏",
        "get me a human",
        "anyone live there rn",
        "Anyone live on the chat?",
    ):
        assert asks_for_person(text), text
    for text in (
        "can monitor page a human on call?",
        "can we get a human-readable log of each job?",
        "we need someone live there to watch the servers",
    ):
        assert not asks_for_person(text), text

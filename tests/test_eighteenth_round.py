"""What the eighteenth round of customer messages taught (README, "The eighteenth round"),
through REST on the sample pack and in words: a short message going on from the last question
with "and" ("okay and for how many days") is searched with that question; a price asked of a
passage that says nothing of money is not answered from it; the customer's own paperwork (an RFP,
their SDLC) and their own premises ("our servers in the datacenter") are no names the pack never
says; a question run on after its context is answered before a clarify; persons asked for in
these words are handed off; and seats in a car, a patient's monitor or a seating plan are
declined."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.packfit import cognate, unseen_names
from gatebot_knowledge.specific import asks_cost

from bot.packs import Pack
from bot.text import asks_for_person, asks_to_know
from bot.turn.followup_query import continues, retrieval_query, switches_subject
from bot.turn.scope import check_scope
from tests.test_answerability import _say
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _check, _cited, _turns


async def test_and_goes_on_from_the_last_question(client: TestClient, pack: Pack) -> None:
    for text in (
        "okay and for how many days",
        "ok and what if nobody is on call?",
        "Thanks. And for how long?",
        "and from where?",
    ):
        assert continues(pack, text), text
    for text in (
        "and the logs?",  # a thing named after "and" is the new subject
        "and what about refunds?",  # moves on
        "and how do I reset my password?",  # a subject the pack declares
        "and how long is a movie",  # a word the pack's answers never use
        "so what's the price?",
    ):
        assert not continues(pack, text), text
    state = {"last_question": "do you guys keep the build cache between runs"}
    query, where = retrieval_query(pack, "okay and for how many days", state)  # type: ignore[arg-type]
    assert (query, where) == (f"{state['last_question']} okay and for how many days", "follow-up")
    # "X too?" asks the last question again of a product.
    assert switches_subject(pack, "and monitor too?")
    assert not switches_subject(pack, "and the logs too?")
    assert not switches_subject(pack, "is monitor down too?")
    body = await _turns(
        client, "do you guys keep the build cache between runs", "okay and for how many days"
    )
    assert _cited(body) == ["doc-pipelines#jobs-and-caches"], _check(body)
    # Something new of it is read with the last question's subject only: the channels entry
    # does not answer it again.
    body = await _turns(
        client, "Which channels do alerts go to?", "ok and what if nobody is on call?"
    )
    assert body["turn"]["scope"]["rule"] == "follow-up"
    assert _check(body)["query_from"].startswith("follow-up"), _check(body)
    assert "faq-slack-alerts" not in _cited(body), _check(body)
    # A product switched to is answered only from a passage that speaks for it.
    body = await _turns(client, "can monitor send alerts to slack?", "pipelines too?")
    assert "faq-slack-alerts" not in _cited(body), _check(body)
    # Another subject is read alone, and a word the pack never uses is no follow-up.
    body = await _turns(client, "how long is the free trial?", "and how do I reset my password?")
    assert _cited(body) == ["faq-password"], _check(body)
    body = await _turns(client, "how long do you keep build caches", "and how long is a movie")
    assert not _cited(body), _check(body)
    body = await _turns(client, "how long do you keep build caches", "and the logs?")
    assert _cited(body) == ["doc-pipelines#retries-and-logs"], _check(body)


async def test_a_price_the_passage_says_nothing_of(client: TestClient) -> None:
    assert asks_cost("how much extra do the self hosted runners cost")
    assert asks_cost("Is SSO charged separately?")
    assert not asks_cost("how much data can we keep")
    assert not asks_cost("how much do you retain in the build cache?")
    assert not asks_cost("who's in charge when the on-call engineer doesn't respond?")
    assert not asks_cost("to avoid extra charges, how long are build caches kept?")
    assert not asks_cost("does acme monitor do sms alerts? uptimerobot charges extra for those")
    read = await _unasserted(client, "how much extra do the self hosted runners cost")
    assert read["version"].endswith("+price-missing"), read
    # A passage that speaks of money answers: pricing, and who counts as a paid seat.
    assert _cited(await _say(client, "how much does acme cost")) == ["faq-pricing"]
    body = await _say(client, "do viewers count as paid seats?")
    assert _cited(body) == ["doc-account#members-and-roles"], _check(body)


async def test_paperwork_and_premises_name_nothing(client: TestClient) -> None:
    vocab = {"pipelin": 1, "build": 1}
    for text in (
        "For the annex of our RFP I need to describe how builds start.",
        "Our SDLC auditors asked whether a failed job can be re-run.",
        "can we run the builds on our servers in the datacenter?",
    ):
        assert not unseen_names(vocab, text), text
    assert unseen_names(vocab, "are the servers hosted in frankfurt?") == ["frankfurt"]
    assert not cognate("status.notreboite.fr", {"status": 1})  # a domain is the customer's own
    assert cognate("Europa", {"europ": 1})
    for text, key in (
        (
            "For our SDLC control narrative I need to state how builds are initiated. Does a"
            " pipeline run automatically on each push, or must an engineer start it manually?",
            "doc-pipelines#pipelines",
        ),
        (
            "Our banking client does not allow code to go outside. Can we run the builds on our"
            " servers in the datacenter?",
            "doc-pipelines#self-hosted-runners",
        ),
    ):
        body = await _say(client, text)
        assert _cited(body) == [key], (text, _check(body))


async def test_a_question_run_on_after_its_context(client: TestClient) -> None:
    assert asks_to_know("we keep our code on git lab will your pipelines hook up to that")
    assert not asks_to_know("we upgraded by mistake can you refund us")  # asks to act
    assert not asks_to_know("thanks that is it")
    assert not asks_to_know("the annoying thing is it keeps failing every single time")
    body = await _say(client, "we keep our code on git lab will your pipelines hook up to that")
    assert _cited(body) == ["faq-github"], body["turn"]["legal"]


async def test_persons_asked_for_in_these_words_are_handed_off(client: TestClient) -> None:
    for text in (
        "can you put me through to one of your engineers i need to explain this to somebody",
        "I would prefer to go through this with a member of your security team directly.",
        "Could we do this over a call rather than via this chat?",
        "is there a dev or someone from the team i can dm?",
        "can someone from acme hop in and help me out fr",
    ):
        assert asks_for_person(text), text
    for text in (
        "is there a way to dm alerts to the on-call engineer?",
        "can someone from our team hop in to the status page editor?",
        "Could Monitor page a member of our ops team directly?",
        "We want alerts by SMS rather than in this chat, is that possible?",
        "We spoke with someone, a member of your sales team, last week.",
        "is there someone on the team we can call automatically, like the on-call person?",
        "can someone from your team jump in and walk us through pipelines",
    ):
        assert not asks_for_person(text), text
    body = await _say(client, "is there a dev or someone from the team i can dm?")
    assert body["turn"]["move"]["name"] == "handoff"


async def test_seats_monitors_and_runners_of_another_kind_are_declined(
    client: TestClient, pack: Pack
) -> None:
    for text, rule in (
        ("how many seats does a 7 seater car have, need to fit 7 ppl", "vehicles"),
        (
            "Our hospital is replacing the bedside patient monitors in the ICU. What should we"
            " prioritise when comparing vendors of cardiac monitoring equipment?",
            "medical_devices",
        ),
        ("fourteen seats at the table, how do we arrange them for the board?", "events"),
        ("My daughter is a long-distance runner with knee pain after her last race", "running"),
    ):
        turn = (await _say(client, text))["turn"]
        assert turn["move"]["name"] == "decline" and not turn["model_calls"], (text, turn["scope"])
        assert turn["scope"]["rule"] == f"out_of_scope:{rule}", turn["scope"]
    # The product named as a name, or a request to change seats, keeps the message.
    for text in (
        "Can Monitor watch the portal our bedside patient monitors report to?",
        "Patient monitors aside, we need monitoring for our booking website. From where?",
        "I manage the booking site for a minibus hire firm. Is there a free plan?",
        "We run a 7 seater taxi company, please add 2 seats to our plan",
    ):
        assert check_scope(pack, text, set())["verdict"] != "out", text

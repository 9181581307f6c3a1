"""What the twenty-fifth round of customer messages taught (README, "The twenty-fifth round"),
through REST on the sample pack and in words: the question inside a long message of context is
read past what the context names; a word that points back after a question's first clause points
inside the sentence; the company's name draws no question to the pricing entry; an ordered seat
change outweighs a read of pricing; wanting one's money back asks for it; "kindly how do I ..."
asks how; "do a quick call and walk me through" asks to be shown the product; "is there
escalation?" asks about the product; a word the pack writes is no typo of a keyword; a few
follow-ups ("which plan is that gated behind?", "and how often?") are read with the question
before; more time on the trial is not the trial's length."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.sentences import points_before_itself
from gatebot_knowledge.specific import asked_action, asked_thing

from bot.packs import Pack
from bot.text import asks_how, asks_if_there_is, asks_to_act, asks_to_be_shown, respell
from bot.turn.scope import _keyword_words, _spelled_right
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited, _turns

PRODUCTS = {"pipelin", "monitor"}


async def test_the_question_inside_a_long_message(client: TestClient) -> None:
    # What the pack never names (an action, a name) only in the context around the question.
    text = (
        "Our current grant ends in June, and unless it is renewed the workspace will have to be "
        "closed. If we delete the workspace, is the data removed immediately? I ask because "
        "renewal decisions are sometimes announced late, and the PI would want to recover "
        "everything."
    )
    body = await _turns(client, text)
    assert body["turn"]["move"]["name"] == "answer"
    assert _cited(body) == ["doc-account#deleting-a-workspace"]
    # What the context says of the stated figure is what is asked: not answered alone.
    await _unasserted(
        client,
        "Our data protection officer asks whether the data can be wiped immediately instead of "
        "waiting out the grace period. Is there a way to request immediate permanent deletion?",
    )
    # A question pointing back to a name in its context keeps the name against it, whatever
    # clause its word of pointing is in.
    await _unasserted(client, "We use Bitbucket for everything. Does Pipelines work with it?")
    await _unasserted(
        client,
        "Our repos live in Azure DevOps. Can Acme Pipelines build from a repository, and will it "
        "show results on pull requests?",
    )


def test_a_word_pointing_back_after_the_first_clause() -> None:
    for sentence in (
        "How long does Acme Pipelines retain build caches, and are they shared between branches?",
        "Is there a trial period, how long does it last, and do I need a card?",
    ):
        assert not points_before_itself(sentence, PRODUCTS), sentence
    for sentence in (
        "Can Acme Pipelines connect to repositories, and build them on every push?",
        "Does Pipelines trigger builds on push, and does it support them?",
        "Does Pipelines work with it?",
        "We use Bitbucket, does Pipelines work with it?",
        "Out of interest, does it work with that?",
    ):
        assert points_before_itself(sentence, PRODUCTS), sentence


async def test_the_company_name_draws_no_question_to_pricing(client: TestClient) -> None:
    for text, key in (
        ("Does Acme Cloud offer a free trial?", "faq-trial"),
        ("Is it possible to try Acme Cloud before we decide the purchase?", "faq-trial"),
        ("How much does Acme Cloud cost?", "faq-pricing"),
    ):
        assert _cited(await _turns(client, text)) == [key], text
    # A thing the company is asked to offer is read as one.
    assert asked_thing("Does Acme Cloud offer an academic discount?") == ["academic", "discount"]
    await _unasserted(client, "Does Acme Cloud offer an academic or non-profit discount?")


async def test_requests_in_other_words(client: TestClient) -> None:
    for text, flow in (
        (
            "please take 2 users OFF my plan, the temps have left and I'm not paying for them!!",
            "add_seats",
        ),
        (
            "Let me guess, refunds are 'not possible per our policy'? I want my money back.",
            "refund",
        ),
        ("can you do a quick call and walk me through the build bot? my web guy is away!!", "demo"),
    ):
        turn = (await _turns(client, text))["turn"]
        assert (turn["flow"] or {}).get("name") == flow, text
    assert asks_to_be_shown("could you hop on a call and walk us through pipelines?")
    for text in (
        "can monitor do a call and wake me up when the site is down?",
        "could you do a call and walk my manager through our invoice? we were double billed",
        "My devs get on a call to run our deploys together, can Pipelines make deploy wait?",
    ):
        assert not asks_to_be_shown(text), text
    # Wanting a refund asks for it, but not on a condition.
    assert not asks_how("Do you have a refund policy? I want a refund for last month.")
    assert asks_how("Do you have a refund policy? I need a refund if we cancel early.")


async def test_kindly_before_a_question_asks_how(client: TestClient) -> None:
    assert not asks_to_act("Kindly how do I force 2FA for everybody in our workspace?")
    assert asks_to_act("kindly add 2 seats to our plan")
    body = await _turns(client, "Kindly how do I force 2FA for everybody in our workspace?")
    assert body["turn"]["flow"] is None
    assert _cited(body) == ["doc-account#sign-in"]


async def test_whether_a_thing_is_there_asks_no_person(client: TestClient) -> None:
    assert asks_if_there_is("Is there escalation?")
    assert asks_if_there_is("is there an escalation policy?")
    for text in (
        "is there someone I can escalate to?",
        "Is there a human here?",
        "is there a number I can call?",
        "is there any way to escalate this?",
    ):
        assert not asks_if_there_is(text), text
    text = "On-call person does not acknowledge the alert, what happens then? Is there escalation?"
    body = await _turns(client, text)
    assert body["turn"]["move"]["name"] == "answer"
    assert _cited(body) == ["doc-monitor#alerts"]
    assert (await _turns(client, "is there anyone I can talk to"))["turn"]["move"]["name"] == (
        "handoff"
    )


def test_a_word_the_pack_writes_is_no_typo(pack: Pack) -> None:
    keywords, known = _keyword_words(pack), _spelled_right(pack)
    text = "i want that the junior not can change nothing"
    assert respell(text, keywords, known) == text
    assert respell("whats teh pricng for monitr", keywords, known) == (
        "whats teh pricing for monitor"
    )


async def test_follow_ups_in_few_words(client: TestClient) -> None:
    for first, then, key in (
        ("does acme support saml sso?", "which plan is that gated behind?", "doc-account#sign-in"),
        (
            "Does Monitor check from multiple locations?",
            "And how often?",
            "doc-monitor#checks",
        ),
        (
            "If we delete our old workspace, can we undo it?",
            "ok and how long would we have to change our minds?",
            "doc-account#deleting-a-workspace",
        ),
    ):
        body = await _turns(client, first, then)
        assert body["turn"]["move"]["name"] == "answer", then
        assert _cited(body) == [key], then


async def test_more_time_on_the_trial_is_not_its_length(client: TestClient) -> None:
    body = await _turns(client, "can I get a bit LONGER on the free trial?? Christmas rush!!")
    assert not _cited(body)
    assert asked_action("How do I even get teammates into the workspace?") is None

"""What the fifteenth round of customer messages taught (README, "The fifteenth round"), through
REST on the sample pack and in words: goods bought from a shop and arriving broken, a trial in
court and a cancelled concert are declined, in phrases a customer of Acme's would not use; a
message in another language kept only by a word respelled into the pack's is weighed across
languages; a request to be handed off, or for someone from the team to contact the customer, is a
hand-off and is never declined; showing the product on a call is a demo; a condition and then its
question is a question; whether something costs extra, a repository host to hook into, a feature
asked to cover a platform and a count the matched FAQ entry says nothing of are not answered from
a passage that does not say; an identity provider signed on against is the customer's own; and
what a review of the round found stays as before."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.figures import asked_value, holds_value, mentions_value
from gatebot_knowledge.packfit import names_target

from bot.text import asks_for_person, asks_to_be_shown, asks_to_know
from tests.test_answerability import _say
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited


async def test_goods_from_a_shop_a_court_and_a_concert_are_declined(client: TestClient) -> None:
    for text, rule in (
        (
            "I bought a blender from an online shop and it arrived cracked. How do I get my money"
            " back from them?",
            "shopping",
        ),
        (
            "bought a jacket online and it showed up ripped. how do i get a refund from the shop",
            "shopping",
        ),
        (
            "How long usually takes trial in court for small car accident case? I am witness.",
            "courts",
        ),
        (
            "Hi, the concert was cancelled and I want refund for my tickets, seats in row 12.",
            "events",
        ),
    ):
        turn = (await _say(client, text))["turn"]
        assert turn["scope"]["rule"] == f"out_of_scope:{rule}", text
        assert turn["move"]["name"] == "decline" and not turn["model_calls"], text
    # The customer's own shop is no shop of goods: its uptime, and a refund of Acme's charge.
    text = "Our online shop went down twice last night, does Monitor alert us by SMS?"
    assert (await _say(client, text))["turn"]["move"]["name"] != "decline"
    turn = (await _say(client, "please refund my last order, we never used the upgrade"))["turn"]
    assert turn["flow"]["name"] == "refund"


async def test_a_respelled_word_in_another_language_is_weighed_across_languages(
    client: TestClient,
) -> None:
    text = "¿Sabes a qué hora abre los domingos la farmacia de la esquina? Necesito comprar algo."
    turn = (await _say(client, text))["turn"]
    assert turn["scope"]["rule"].startswith("domain:outside across languages (es)"), turn["scope"]
    assert turn["move"]["name"] == "decline" and not turn["model_calls"]
    # A question of the pack's, its verb respelled the same way, stays.
    text = "Comment puis-je inviter un collègue dans notre espace de travail, s'il vous plaît ?"
    assert (await _say(client, text))["turn"]["move"]["name"] != "decline"


async def test_being_handed_off_and_contacted(client: TestClient) -> None:
    for text in (
        "can u hand me off to someone on ur support team pls, this is too messy to type out",
        "Please hand this over to an actual human, my colleague has been going back and forth.",
        "REAL human please not a script",
        "I've gone round in circles three times now. Please just get a human to look at this.",
        "Esto es muy complicado para un chat... can somebody from your team contact me by email?",
    ):
        assert asks_for_person(text), text
        turn = (await _say(client, text))["turn"]
        assert turn["move"]["name"] == "handoff", (text, turn["scope"], turn["legal"])
    for text in (
        "can monitor call me when my site is down?",
        "could someone explain how the pricing works?",
        "Can a workspace have more than one owner, so I can handle things while he's away?",
    ):
        assert not asks_for_person(text), text


async def test_showing_the_product_on_a_call_is_a_demo(client: TestClient) -> None:
    for text in (
        "Can you book me walkthrough of pipelines and monitor? We are team of 6.",
        "show me how it works on zoom or smth asap",
        "Just show me how the whole thing works on a call, I don't have time to read docs.",
    ):
        assert asks_to_be_shown(text), text
        turn = (await _say(client, text))["turn"]
        assert turn["flow"]["name"] == "demo", (text, turn["legal"])
    assert not asks_to_be_shown("show me how to set up alerts in the dashboard")


async def test_a_condition_then_its_question(client: TestClient) -> None:
    text = "if i start the trial for the ci product are some features locked until i pay"
    assert asks_to_know(text)
    assert not asks_to_know("if you could refund order 123 that would be great")
    assert not asks_to_know("if possible please add 3 seats")
    assert _cited(await _say(client, text)) == ["faq-trial"]


async def test_what_the_passage_does_not_say_is_not_answered(client: TestClient) -> None:
    assert asked_value("do the SMS and phone call alerts cost extra?") == "charge"
    assert asked_value("is that a paid add-on?") == "charge"
    assert asked_value("How much does it cost?") is None
    assert holds_value("charge", "Viewers do not count as paid seats.")
    assert not holds_value("charge", "Acme Monitor sends alerts to Slack, email and SMS.")
    assert mentions_value("count", "Data is stored in the EU or the US.")
    assert not mentions_value("count", "The reset link is valid for one hour.")
    assert names_target("does pipelines hook into bitbucket repos?", ["bitbucket"])
    assert names_target("does the docker build support cover ARM images?", ["ARM"])
    assert not names_target("can your build service handle those?", ["those"])
    for text in (
        "do the SMS and phone call alerts cost extra or are they included in the plan?",
        "we're stuck on bitbucket for now, does pipelines hook into bitbucket repos?",
        "does the docker build support cover ARM images? I want to run my stuff on a raspberry pi",
        "How many times can I ask for a password reset link before I get locked out?",
    ):
        await _unasserted(client, text)
    for text, key in (
        ("can pipelines hook into our github repos?", "faq-github"),
        ("Do read-only users cost extra?", "doc-account#members-and-roles"),
        ("How many regions can I choose from for my data?", "faq-data-location"),
        ("How many channels can alerts go to?", "faq-slack-alerts"),
    ):
        assert _cited(await _say(client, text)) == [key], text


async def test_the_identity_provider_signed_on_against(client: TestClient) -> None:
    for text, key in (
        ("We need SAML SSO against Okta. Which tier unlocks that?", "doc-account#sign-in"),
        (
            "Our company login goes through Okta. I must change my password, I do it on your site"
            " or somewhere else?",
            "faq-password",
        ),
        (
            "We log in through SSO with our IdP. I need to change my password, do I do that on"
            " your side?",
            "faq-password",
        ),
    ):
        assert _cited(await _say(client, text)) == [key], text


async def test_what_a_review_of_the_round_found_stays_as_before(client: TestClient) -> None:
    # Customers whose trade or shop is named: their questions about Acme are no one else's.
    for text in (
        "I'm a lawyer at a small firm, do viewers count as paid seats?",
        "We sell office chairs online. Can I invite my two coworkers to our workspace?",
        "We're a retailer, which plans do you offer?",
        "is the pricing per seat or per table?",
        "I bought the Business plan from the online shop on your site, where's the invoice?",
        "Our software is used by plumbers and electricians, can we get a demo?",
    ):
        assert (await _say(client, text))["turn"]["move"]["name"] != "decline", text
    # Words of the round's patterns in questions that ask for no person and no demo.
    for text in (
        "I want real human-readable logs, can Pipelines export them?",
        "Will someone call me if our site goes down?",
        "I need someone on call to look at alerts within 5 minutes, can escalation do that?",
        "Can we hand this over to the ops team as owners?",
        "I need to explain this to someone in finance, where do I download the invoice?",
    ):
        assert not asks_for_person(text), text
    assert not asks_to_be_shown("Show me how alerts arrive on a call to my phone")
    assert not asks_to_know("after we upgraded our invoice is the wrong amount")

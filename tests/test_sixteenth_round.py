"""What the sixteenth round of customer messages taught (README, "The sixteenth round"), through
REST on the sample pack and in words: a clinical trial, a trial balance, a tax refund, a shop's
refusal, a seat behind a pillar and a table for four are declined, in phrases a customer of
Acme's would not use, while a hotel's own trial question is answered; a message in another
language is declined a little nearer the pack across languages; a refund ordered in so many words
starts the refund flow over an unsure lean to another intent; a charge per message, a maximum
number, a repository host the customer supports and a billing difference are not answered from a
passage that does not say, while a role "assigned" is the role an owner chooses; and what a
review of the round found stays as before (a customer whose own business is in a trade's words
is not declined)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.figures import asked_value
from gatebot_knowledge.packfit import names_target

from bot.flows.trigger import ordered_by_keyword
from bot.text import names_own_trade
from tests.test_answerability import _say
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited


async def test_other_trades_trials_refunds_and_tables_are_declined(client: TestClient) -> None:
    for text, rule in (
        ("Trial balance is out by £312.40 after the auditors' adjustments - where to look?", None),
        ("how do i study for my trial exam next week, its maths and im so cooked", None),
        ("We've been asked to take part in a clinical trial for a new gel. What consent?", None),
        ("The store refused my refund for a broken blender, what are my rights?", "shopping"),
        ("HMRC say we're owed a corporation tax refund - how do I chase it up?", None),
        ("got a concert ticket but my seat is behind a pillar, can i swap it??", "events"),
        ("Table for four at 8pm please, by the window.", "events"),
    ):
        turn = (await _say(client, text))["turn"]
        assert turn["move"]["name"] == "decline" and not turn["model_calls"], (text, turn["scope"])
        assert turn["scope"]["rule"].startswith("out_of_scope:" + (rule or "")), turn["scope"]
    # A hotel's own question about the trial, in English and in Spanish, is answered.
    text = "Is there a free trial? We want to test it at our hotel before peak season."
    assert _cited(await _say(client, text)) == ["faq-trial"]
    text = "¿Tienen una prueba gratuita? Queremos probarlo en el hotel de la costa."
    assert (await _say(client, text))["turn"]["move"]["name"] != "decline"


async def test_another_language_is_declined_nearer_the_pack(client: TestClient) -> None:
    text = (
        "Bonjour, comment organiser une tombola pour notre association sans enfreindre la loi ?"
        " On voudrait faire gagner un panier garni à Noël."
    )
    turn = (await _say(client, text))["turn"]
    assert turn["scope"]["rule"].startswith("domain:outside across languages (fr)"), turn["scope"]
    assert turn["move"]["name"] == "decline" and not turn["model_calls"]
    for text in (
        "Oi, vocês têm período de teste grátis? Quantos dias dura?",
        "Tellen gebruikers met alleen leesrechten (viewers) mee als betaalde licenties?",
    ):
        assert (await _say(client, text))["turn"]["move"]["name"] != "decline", text


async def test_a_refund_ordered_in_so_many_words_starts_the_flow(client: TestClient) -> None:
    assert ordered_by_keyword("Please refund the duplicate, order number 88217.", ["refund"])
    assert ordered_by_keyword("refund me for the upgrade, I didn't want it", ["refund"])
    assert not ordered_by_keyword("what is your refund policy", ["refund"])
    assert not ordered_by_keyword("do you refund the first month?", ["refund"])
    text = (
        "Hello, it looks as though we were billed twice for the same subscription this month."
        " Please refund the duplicate, order number 88217. Best wishes, Lucia"
    )
    turn = (await _say(client, text))["turn"]
    assert turn["flow"]["name"] == "refund", turn["legal"]
    turn = (await _say(client, "what is your refund policy"))["turn"]
    assert not turn["flow"]


async def test_what_the_passage_does_not_say_is_not_answered(client: TestClient) -> None:
    assert asked_value("max number of jobs that can run in parallel?") == "count"
    assert asked_value("Are SMS alerts charged per message?") == "charge"
    assert asked_value("Are self-hosted runners billed any differently?") == "charge"
    assert asked_value("Are jobs billed?") is None
    assert names_target("You support Bitbucket repositories too, or only github?", ["Bitbucket"])
    for text in (
        "max number of jobs that can run in parallel?",
        "Are SMS and phone-call alerts charged per message on top of the plan?",
        "Are self-hosted runners billed any differently from the hosted ones?",
        "You support Bitbucket repositories too, or only the github and gitlab?",
    ):
        await _unasserted(client, text)
    for text, key in (
        ("What roles can be assigned to a user in a workspace?", "doc-account#members-and-roles"),
        ("you support gitlab?", "faq-github"),
    ):
        assert _cited(await _say(client, text)) == [key], text


async def test_what_a_review_of_the_round_found_stays_as_before(client: TestClient) -> None:
    # A customer whose own business is in a trade's words is a customer all the same.
    assert names_own_trade("our insurance claim app is built with gitlab", "insurance claim")
    assert names_own_trade("we build tax refund software", "tax refund")
    assert not names_own_trade("how do i file an insurance claim for my car", "insurance claim")
    assert not names_own_trade(
        "how can i check the status of my passport renewal application", "passport"
    )
    for text in (
        "Our company builds clinical trials management software. Do you offer SSO on Business?",
        "Our insurance claim app is built with GitLab, do you integrate?",
        "We build tax refund software, where is our data stored?",
        "Our accounting SaaS computes the trial balance; can we get a demo?",
        "We're a tuition fees platform, is our data encrypted at rest?",
        "We run a hotel booking platform, how much is the Business plan?",
    ):
        assert (await _say(client, text))["turn"]["move"]["name"] != "decline", text
    text = "How can I check the status of my passport renewal application?"
    assert (await _say(client, text))["turn"]["move"]["name"] == "decline"
    # Words of the round's patterns in questions the pack answers.
    for text, key in (
        ("Is SSO priced separately or included in Business?", "doc-account#sign-in"),
        ("u support guys are slow, where are my invoices?", "faq-invoice"),
        ("Max number of days logs are kept?", "doc-pipelines#retries-and-logs"),
        ("We're a hotel, is there a free trial?", "faq-trial"),
    ):
        assert _cited(await _say(client, text)) == [key], text

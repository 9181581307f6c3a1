"""What the fourteenth round of customer messages taught (README, "The fourteenth round"), through
REST on the sample pack and in words: a request in another language is read clause by clause; a
person asked to be put through to in another language is handed off; asking for a walkthrough
outweighs a confident product-question read; concert seats, bank alerts and utility bills are
declined; "a free option" is the free tier and a question's first alternative is read alone; a
role asked about what anyone may do, a period asked more often, a thing kept that the passage
lacks and names asked in more ways are not answered; the United States and the GDPR as other
languages write them are the pack's."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.beyond import beyond_stated
from gatebot_knowledge.packfit import cognate, places_as_written, unseen_names
from gatebot_knowledge.sentences import first_alternatives, without_sign_off
from gatebot_knowledge.shorthand import written_out
from gatebot_knowledge.specific import kept_thing, other_doer

from bot.text import asks_for_person, asks_to_be_shown, clauses
from tests.test_answerability import _say
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited

CHECKS = (
    "Acme Monitor checks your websites and APIs from twelve locations around the world, every"
    " minute. A check is marked down only when at least three locations fail."
)


def test_the_clauses_of_a_message() -> None:
    text = "Quiero que me devuelvan el dinero del pedido 77310, por favor."
    assert clauses(text) == ["Quiero que me devuelvan el dinero del pedido 77310"]
    assert clauses("Hola. Quiero un reembolso.") == ["Quiero un reembolso."]
    assert clauses("Quiero un reembolso") == []


async def test_a_request_in_another_language_with_its_reason(client: TestClient) -> None:
    for text in (
        "Quiero que me devuelvan el dinero de mi último pedido, el producto nunca funcionó como"
        " prometieron.",
        "Je voudrais être remboursé pour la commande 90412, le renouvellement est passé alors"
        " qu'on avait résilié.",
    ):
        turn = (await _say(client, text))["turn"]
        assert turn["flow"]["name"] == "refund", text
    # A question of its own is not read in parts: it asks about the trial.
    text = "¿Cuánto dura la prueba gratis? ¿Tengo que meter la tarjeta de crédito para empezar?"
    assert (await _say(client, text))["turn"]["flow"] is None


async def test_being_put_through_to_a_person_in_another_language(client: TestClient) -> None:
    for text in (
        "Pásame con alguien de soporte, por favor, que esto no lo resuelve un bot.",
        "Get me someone from your support team, prod deploys have been stuck for two hours.",
    ):
        assert asks_for_person(text), text
        assert (await _say(client, text))["turn"]["move"]["name"] == "handoff", text
    assert not asks_for_person("Get me the invoice for March")


async def test_asking_for_a_walkthrough_is_a_demo(client: TestClient) -> None:
    for text in (
        "Can you arrange walkthrough of Monitor and Status pages for our management?",
        "Could we get a walkthrough of Monitor and the status pages sometime next week?",
    ):
        assert asks_to_be_shown(text), text
        turn = (await _say(client, text))["turn"]
        assert turn["flow"]["name"] == "demo", text
    # Asking a person to call back is a hand-off still, though someone is to "give me" a call.
    text = "Could somebody from Acme give me a call back? I'd rather go over this on the phone."
    assert (await _say(client, text))["turn"]["move"]["name"] == "handoff"


async def test_seats_at_a_concert_and_alerts_from_a_bank_are_declined(
    client: TestClient,
) -> None:
    for text, rule in (
        ("trying to get 4 seats together for the taylor swift show, any tips lol", "events"),
        ("Floor or lower tier seats for a stadium concert, which gives the better view?", "events"),
        ("How do I set up low balance alerts with my bank?", "household_money"),
        (
            "Electricity bill invoice is showing double units, how to raise complaint?",
            "household_money",
        ),
        (
            "My gym's free trial ended and they charged me anyway. Are they allowed to?",
            "consumer_products",
        ),
    ):
        turn = (await _say(client, text))["turn"]
        assert turn["scope"]["rule"] == f"out_of_scope:{rule}", text
        assert turn["move"]["name"] == "decline" and not turn["model_calls"], text
    turn = (await _say(client, "please add 4 seats to our plan"))["turn"]
    assert turn["flow"]["name"] == "add_seats"


async def test_a_free_option_and_the_first_alternative(client: TestClient) -> None:
    said = {"free tier"}.__contains__
    known = {"free", "tier"}.__contains__
    assert written_out("is there a free option", known, lambda p: p in ("free tier",)) == (
        "is there a free tier"
    )
    assert written_out("a free plan", known, said) == "a free tier"
    assert first_alternatives("Is there any free option, or do we have to pay from day one?") == [
        "Is there any free option?"
    ]
    assert first_alternatives("Is SSO or SAML there?") == []
    for text in (
        "Is there any free option, or do we have to start paying from day one?",
        "Is there a free version or do we have to pay from day one?",
    ):
        assert _cited(await _say(client, text)) == ["faq-pricing"], text


async def test_what_a_passage_does_not_say(client: TestClient) -> None:
    retry = "A failed job can be retried from the pipeline page."
    assert other_doer("can a viewer retry a failed job?", retry, {"viewer"}) == ["viewer"]
    assert other_doer("can I retry a failed job?", retry, {"viewer"}) == []
    assert beyond_stated("Can we make it check more often than once a minute?", CHECKS)
    assert beyond_stated("Is the one-minute check interval configurable?", CHECKS)
    assert not beyond_stated("how often do you check my site?", CHECKS)
    assert kept_thing("How long are build artifacts (not logs) retained?") == ["build", "artifact"]
    assert kept_thing("how long are those links good for") == []
    for text in (
        "can a viewer retry a failed job or do they need member role for that",
        "Can we make it check more often than once a minute? On sale days seconds count.",
        "How long are build artifacts (not logs) retained after a pipeline finishes?",
    ):
        await _unasserted(client, text)
    body = await _say(client, "how long do you keep build logs")
    assert _cited(body) == ["doc-pipelines#retries-and-logs"]


async def test_names_asked_in_more_ways(client: TestClient) -> None:
    known = {w: 1 for w in "use 2fa support pipelin data store region connect sign".split()}
    assert unseen_names(known, "can i use a yubikey for 2fa") == ["yubikey"]
    assert unseen_names(known, "any bitbucket support for pipelines?") == ["bitbucket"]
    assert unseen_names(known, "Unterstützt ihr PagerDuty?", capitals=False) == ["PagerDuty"]
    for text in (
        "can i use a yubikey for 2fa",
        "any bitbucket support for pipelines? we're stuck on bitbucket cloud",
        "Is OpenID Connect supported for single sign-on, or would we have to use SAML?",
        "Can we store our data in India region? Client is asking for data localisation.",
        "fyi finance is picky: can invoices include our vat id?",
        "Unterstützt Acme Monitor auch Benachrichtigungen über PagerDuty oder Opsgenie?",
    ):
        body = await _say(client, text)
        assert not _cited(body) and body["turn"]["move"]["name"] != "decline", text


async def test_places_and_acronyms_as_other_languages_write_them(client: TestClient) -> None:
    assert places_as_written("aux États-Unis ?") == "aux US ?"
    assert places_as_written("nos Estados Unidos") == "nos US"
    assert cognate("RGPD", {}, frozenset({"gdpr"}))
    assert not cognate("rgpd", {}, frozenset({"gdpr"}))  # four letters, only as an acronym
    body = await _say(client, "Où sont hébergées nos données, en Europe ou aux États-Unis ?")
    assert _cited(body) == ["faq-data-location"]


async def test_a_sign_off_is_not_read(client: TestClient) -> None:
    assert without_sign_off("Can it stay in the EU? Regards, Katrin") == "Can it stay in the EU?"
    assert without_sign_off("how long is the trial? — Omar") == "how long is the trial?"
    assert without_sign_off("Does Monitor support Slack? Thanks!") == (
        "Does Monitor support Slack? Thanks!"
    )
    assert without_sign_off("Thanks, Chris") == "Thanks, Chris"
    for text, key in (
        (
            "Hi, someone on my team deleted our old workspace by mistake last week. Is there any"
            " way we can get it back? Thanks, Chris",
            "doc-account#deleting-a-workspace",
        ),
        (
            "Hello, our compliance people asked how long build logs are kept in Pipelines. Could"
            " you let me know? Regards, Victor",
            "doc-pipelines#retries-and-logs",
        ),
    ):
        assert _cited(await _say(client, text)) == [key], text


async def test_a_person_on_the_phone_and_a_walkthrough_call(client: TestClient) -> None:
    text = "Is there a support engineer I can get on the phone? Our deploys have been failing."
    assert (await _say(client, text))["turn"]["move"]["name"] == "handoff"
    assert not asks_for_person("is there an engineer I can ask about SSO")
    turn = await _say(client, "would love a quick walkthrough call of monitor + status pages")
    assert turn["turn"]["flow"]["name"] == "demo"


async def test_what_a_review_of_the_round_found_stays_as_before(client: TestClient) -> None:
    # Words of the round's patterns in ordinary questions: no hand-off, no demo, no decline.
    for text in (
        "Ponme con el plan Pro, por favor",
        "Can you get me someone's invoice from last month? She left the company.",
        "Is there a monitoring agent I can call from my CI?",
    ):
        assert not asks_for_person(text), text
    for text in (
        "Can we set up session timeout for SSO logins?",
        "Do you have a walkthrough of the API in the docs?",
    ):
        assert not asks_to_be_shown(text), text
    for text in (
        "We're a theatre company, do you offer nonprofit pricing?",
        "We run a chain of gyms, how much would 40 seats cost?",
        "Can we set up session timeout for SSO logins?",
    ):
        turn = (await _say(client, text))["turn"]
        assert turn["move"]["name"] not in ("decline", "handoff") and turn["flow"] is None, text
    assert unseen_names(
        {"store": 1, "data": 1}, "Can we store our data in accordance with GDPR?"
    ) == ["GDPR"]
    assert not beyond_stated("Do you check more often than every 5 minutes?", CHECKS)
    retry = "A failed job can be retried from the pipeline page."
    assert other_doer("Can my team retry a failed job?", retry, {"team"}) == []
    assert kept_thing("How long are they kept?") == []

"""What the thirteenth round of customer messages taught (README, "The thirteenth round"), through
REST on the sample pack and in words: a message of context asks in its questions when they stand
together (a second question may point back to the first), and from after a colon that puts
context first; "is there", "more than one", "or is it" and "its" after a product's name point
back to nothing; the same holds in another language; "where do I get it" asks where to do it
oneself; a change read in a question the head reads as another intent orders nothing; a length
asked to be made ("make it last 24h") is past the stated one; "work w bitbucket" names what is
asked; letters then digits name a thing ("aes256"); a parcel's status is declined."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.beyond import beyond_stated, past_length
from gatebot_knowledge.figures import asked_value, holds_value
from gatebot_knowledge.packfit import cognate, unseen_names
from gatebot_knowledge.sentences import asked_after_context, points_back
from gatebot_knowledge.shorthand import written_out

from bot.text import asks_for_person, asks_how
from tests.test_answerability import _answerability, _say
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited

PRODUCTS = {"pipelin", "monitor", "status"}
RESET = (
    'Use "Forgot password" on the login page. The reset link is valid for one hour. If you use'
    " single sign-on, reset it with your identity provider instead."
)


def test_what_a_message_of_context_asks() -> None:
    text = (
        "I'm migrating 30 repos off Jenkins. Where does the pipeline definition live in your"
        " system? Is it a file in the repo, and what is it called?"
    )
    assert asked_after_context(text) == (
        "Where does the pipeline definition live in your system? Is it a file in the repo, and"
        " what is it called?",
        "Where does the pipeline definition live in your system?",
    )
    colon = "We are a German insurer. Before I invest more time: can we keep everything in the EU?"
    assert asked_after_context(colon) == ("can we keep everything in the EU?",) * 2
    # Questions apart each answer on their own; one sentence is no context.
    assert asked_after_context("Is SSO there? We use Okta. Is 2FA there?") is None
    assert asked_after_context("How much is Monitor?") is None


def test_what_points_back_to_the_context() -> None:
    assert points_back("Does Pipelines work with it?", PRODUCTS)
    assert points_back("Can we host it there?", PRODUCTS)
    assert points_back("Can Pipelines read its webhooks?", set())
    assert points_back("¿Acme Pipelines funciona con eso?", PRODUCTS)
    for sentence in (
        "Is there any way to use Acme at no cost for now?",
        "Can a workspace have more than one owner?",
        "Will your alerts land in Microsoft Teams, or is it a Slack-only thing?",
        "Can Acme Monitor send its alerts to a Slack channel?",
    ):
        assert not points_back(sentence, PRODUCTS), sentence


async def test_questions_after_context_naming_what_the_pack_never_says(
    client: TestClient,
) -> None:
    for text, key in (
        (
            # (a name in the context: a weekday is none, since the twenty-second round)
            "Our on-call rotation lives in Slack, and I've got the security review with Deloitte."
            " Can Acme Monitor send its alerts to a Slack channel?",
            "faq-slack-alerts",
        ),
        (
            "Our founder is the only owner and goes on leave to Tahiti. Can a workspace have"
            " more than one owner, so I can handle things while he's away?",
            "doc-account#members-and-roles",
        ),
        (
            "I've been asked to migrate 30 repos off Jenkins by end of quarter. Where does the"
            " pipeline definition live in your system? Is it a file in the repo?",
            "doc-pipelines#pipelines",
        ),
    ):
        body = await _say(client, text)
        assert body["replies"][0]["citations"][0]["key"] == key, text
        assert "+question" in _answerability(body["turn"])["version"], text


async def test_a_question_in_another_language_after_context(client: TestClient) -> None:
    text = (
        "Hola, soy responsable de compras de un equipo de 25 desarrolladores en Bogotá."
        " ¿Tienen un período de prueba gratuito? ¿Cuántos días dura?"
    )
    body = await _say(client, text)
    assert _cited(body) == ["faq-trial"]
    assert _answerability(body["turn"])["version"].endswith("/es+question")
    await _unasserted(client, "Usamos Bitbucket en la empresa. ¿Acme Pipelines funciona con eso?")


def test_where_to_get_it_oneself_asks_how() -> None:
    assert asks_how("need a pdf of last months invoice for accounting where do i get it")
    assert not asks_how("where is my invoice for order 12345")


async def test_where_to_get_an_invoice_is_answered(client: TestClient) -> None:
    body = await _say(client, "need a pdf of last months invoice for accounting where do i get it")
    assert body["replies"][0]["citations"][0]["key"] == "faq-invoice"


async def test_a_change_told_in_a_question_starts_no_flow(client: TestClient) -> None:
    text = (
        "I'm setting up our workspace for three teams plus a couple of people from finance who"
        " only need to see things. What permission levels can I give people when I add them?"
    )
    body = await _say(client, text)
    assert body["turn"]["flow"] is None
    assert body["replies"][0]["citations"][0]["key"] == "doc-account#members-and-roles"
    assert (await _say(client, "please add 2 seats"))["turn"]["flow"]["name"] == "add_seats"


def test_a_length_asked_to_be_made() -> None:
    assert past_length("pw reset link dies after an hour, can u make it last 24h", RESET)
    assert past_length("can you make it 24 hours for our team?", RESET)
    assert not past_length("is the reset link good for 1h?", RESET)
    assert not past_length("can you make it valid for 30 minutes", RESET)


async def test_names_typed_as_customers_type_them_are_not_answered(client: TestClient) -> None:
    for text in (
        "pw reset link dies after an hour, can u make it last 24h",
        "does pipelines work w bitbucket",
        "what encryption do u use at rest, aes256?",
    ):
        await _unasserted(client, text)
    known = {w: 1 for w in "encrypt rest use".split()}
    assert unseen_names(known, "what encryption do u use at rest, aes256?") == ["aes256"]
    assert unseen_names(known, "can i try it b4 paying, 24h is enough") == []


async def test_a_parcels_status_is_declined(client: TestClient) -> None:
    turn = (await _say(client, "whats the status of my amazon parcel its been a week"))["turn"]
    assert turn["move"]["name"] == "decline" and not turn["model_calls"]
    assert turn["scope"]["rule"] == "out_of_scope:deliveries"
    turn = (await _say(client, "how do they inspect oil pipelines for leaks"))["turn"]
    assert turn["scope"]["rule"] == "out_of_scope:home"
    turn = (await _say(client, "can our status page show a maintenance window?"))["turn"]
    assert turn["scope"]["verdict"] == "in"


async def test_an_acronym_the_pack_writes_as_a_stop_word(client: TestClient) -> None:
    text = "Wo werden unsere Daten gespeichert, EU oder USA? Brauchen wir für die DSGVO-Prüfung."
    body = await _say(client, text)
    assert _cited(body) == ["faq-data-location"]
    assert cognate("USA", {}, frozenset({"us", "eu"}))
    assert not cognate("USA", {"eu": 1})


def test_a_capital_asked_alone_names_a_thing() -> None:
    text = "If we pick Europe for our data, which country is it in? Germany? Ireland?"
    assert unseen_names({"europ": 1, "data": 1}, text) == ["Germany", "Ireland"]
    assert unseen_names({"data": 1}, "Where is our data? Thanks.") == []


async def test_an_amount_of_money_asked_as_a_figure(client: TestClient) -> None:
    assert asked_value("What's the actual monthly price of the paid plan? A ballpark is fine") == (
        "money"
    )
    assert asked_value("how much per seat?") == "money"
    assert asked_value("how much does Monitor cost?") is None
    assert holds_value("money", "Team plans are $20 per seat a month.")
    assert not holds_value("money", "Acme Cloud has a free tier and paid plans per team.")
    text = (
        "What's the actual monthly price of the paid plan for a team of five? Just a ballpark"
        " number is fine."
    )
    assert "+money-missing" in (await _unasserted(client, text))["version"]
    body = await _say(client, "how much does Acme Cloud cost?")
    assert body["replies"][0]["citations"][0]["key"] == "faq-pricing"


async def test_a_stated_length_asked_to_be_skipped(client: TestClient) -> None:
    grace = (
        "Deleting a workspace removes its data after a 30-day grace period, during which an"
        " owner can restore it."
    )
    asked = "can the workspace deletion grace period be skipped so data is erased immediately?"
    assert beyond_stated(asked, grace)
    assert not beyond_stated("if we delete the workspace is the data gone immediately?", grace)
    await _unasserted(client, asked)


async def test_shorthand_and_context_customers_write(client: TestClient) -> None:
    assert written_out("same SHA and env vars", lambda w: w.lower() not in {"sha", "env", "vars"})
    text = "when I re-run a failed job does it use the same SHA and env vars, or pull latest?"
    body = await _say(client, text)
    assert body["replies"][0]["citations"][0]["key"] == "doc-pipelines#retries-and-logs"
    for text, key in (
        (
            "We sign in through our company's Okta login. If I forget that password, is it you"
            " who resets it or someone else?",
            "faq-password",
        ),
        (
            "We're a small accounting firm in Lisbon, so clients ask us this a lot: where"
            " physically is our information kept?",
            "faq-data-location",
        ),
    ):
        body = await _say(client, text)
        assert body["replies"][0]["citations"][0]["key"] == key, text


async def test_a_call_to_be_shown_the_product_is_a_demo_lead(client: TestClient) -> None:
    text = (
        "Could I set up a call with your sales people? We're a team of about 40 and want to see"
        " if you're a good fit."
    )
    turn = (await _say(client, text))["turn"]
    assert turn["flow"]["name"] == "demo" and turn["move"]["name"] != "handoff"
    turn = (await _say(client, "can I talk to someone from your sales team?"))["turn"]
    assert turn["move"]["name"] == "handoff"


async def test_a_products_word_beside_a_phrase_of_another_sense(client: TestClient) -> None:
    for text, rule in (
        (
            "which 27 inch monitor is best for coding, 4k or 1440p?",
            "out_of_scope:displays",  # (the seventeenth round's screens)
        ),
        (
            "I want to build a treehouse for my kids. What size lumber should I use?",
            "out_of_scope:home",
        ),
    ):
        turn = (await _say(client, text))["turn"]
        assert turn["scope"]["rule"] == rule and not turn["model_calls"], text
    turn = (await _say(client, "can monitor alert my iphone when the site is down"))["turn"]
    assert turn["scope"]["verdict"] == "in"


async def test_the_one_question_in_another_language_among_the_best(client: TestClient) -> None:
    # Whole, the pricing entry reads first at 0.01 and the trial entry second; the question alone
    # reads the trial entry at 0.98.
    text = (
        "¿Tienen una prueba gratuita? Somos un equipo pequeño y queremos probar Acme Pipelines"
        " antes de pagar nada."
    )
    body = await _say(client, text)
    assert _cited(body) == ["faq-trial"]
    assert _answerability(body["turn"])["version"].endswith("/es+sentence")


async def test_a_name_only_after_the_question_is_not_pointed_to(client: TestClient) -> None:
    # "this" points back, but to nothing before it: Jenkins comes after the question.
    text = "hey, how much is this going to cost us? we're 9 devs looking at moving off Jenkins"
    body = await _say(client, text)
    assert body["replies"][0]["citations"][0]["key"] == "faq-pricing"
    await _unasserted(client, "We moved to Bitbucket last year. How much does it cost to use it?")


async def test_a_short_question_in_another_language_read_alone(client: TestClient) -> None:
    # Three words say it in Spanish; whole, the message reads the trial entry at 0.01.
    text = "¿Tienen prueba gratis? Somos 5 personas y todavía no queremos poner una tarjeta."
    body = await _say(client, text)
    assert _cited(body) == ["faq-trial"]
    assert _answerability(body["turn"])["version"].endswith("/es+sentence")


async def test_a_bare_number_past_the_stated_length(client: TestClient) -> None:
    logs = "A failed job can be retried from the pipeline page. Logs are kept for 30 days."
    asked = "we need build logs for 90 days for audits, can you keep them longer than 30?"
    assert beyond_stated(asked, logs)
    assert beyond_stated("can you keep them longer than 30?", logs)
    assert not beyond_stated("are there more than 30 runners", logs)
    await _unasserted(client, asked)


async def test_where_it_is_hosted_names_a_place(client: TestClient) -> None:
    known = {"eu": 1, "data": 1, "host": 1}
    text = "for EU data, is it hosted in frankfurt or ireland?"
    assert unseen_names(known, text) == ["frankfurt", "ireland"]
    assert unseen_names(known, "is our data hosted in the EU?") == []
    await _unasserted(client, text)


async def test_a_free_version_is_the_free_tier(client: TestClient) -> None:
    says = {"free tier", "free trial"}
    assert (
        written_out("is there a free version?", lambda w: True, lambda p: p in says)
        == "is there a free tier?"
    )
    # A corpus that says "free version" itself keeps it.
    assert written_out("a free version?", lambda w: True, lambda p: True) == "a free version?"
    body = await _say(client, "is there a free version or is everything paid?")
    assert body["replies"][0]["citations"][0]["key"] == "faq-pricing"


def test_a_full_year_kept_for() -> None:
    logs = "A failed job can be retried from the pipeline page. Logs are kept for 30 days."
    asked = (
        "For compliance we have to keep build logs for a full year. Can retention be set that long?"
    )
    assert beyond_stated(asked, logs)
    assert not beyond_stated("can we keep logs for a whole week?", logs)


async def test_another_count_than_the_stated_one(client: TestClient) -> None:
    checks = (
        "Acme Monitor checks your websites and APIs from twelve locations around the world, every"
        " minute. A check is marked down only when at least three locations fail."
    )
    asked = "Can I set a check to go red after just one location fails? Waiting for three is slow."
    assert beyond_stated(asked, checks)
    # Asked what happens, the stated count answers it.
    assert not beyond_stated("can a check go red after just one location fails?", checks)
    await _unasserted(client, asked)


async def test_a_person_asked_for_in_so_many_words_in_another_language(
    client: TestClient,
) -> None:
    for text in (
        "Posso parlare con un operatore?",
        "Quero falar com um atendente, por favor.",
        "Kann ich mit einem Mitarbeiter reden?",
    ):
        assert asks_for_person(text), text
        turn = (await _say(client, text))["turn"]
        assert turn["move"]["name"] == "handoff", text
    for text in ("Je veux parler de la facture", "¿Cuánto cuesta hablar?"):
        assert not asks_for_person(text), text

"""What the twenty-fourth round of customer messages taught (README, "The twenty-fourth round"),
through REST on the sample pack and in words: a message half in another language is weighed by
its part in the pack's language; the customer's own business (payroll, their database, their
office software, a phone's data plan) is declined; escalation asked of the product is no request
for a person, while "escalate me to an actual engineer" is; a demo booked for people ("book a demo
for me and our CISO") and "a call with sales" ask to be shown the product; a request for a person
in Japanese is handed off; "actually" alone orders no seat change; a follow-up is read with its
question before the agent asks "did you mean ...?"; two swapped letters are a typo; "is gst on
the invoices?" asks whether a thing is there; a colleague named in a clause before "he" is no
unseen name."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.lexical import Bm25Index
from gatebot_knowledge.packfit import unseen_names
from gatebot_knowledge.passages import pack_passages
from gatebot_knowledge.specific import asked_thing

from bot.flows.trigger import first_change
from bot.packs import Pack
from bot.preflight.language import split_by_language
from bot.text import asks_for_person, asks_to_be_shown
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited, _turns

LANGUAGES = ["de", "en", "es", "fr"]


def test_a_message_in_two_languages() -> None:
    text = "can you bump up our seats? estamos creciendo rápido"
    assert split_by_language(text, "en", LANGUAGES) == ({"es"}, "can you bump up our seats")
    for text in ("how do i add a user to the account", "¿Cuánto cuesta Monitor para un equipo?"):
        assert not split_by_language(text, "en", LANGUAGES)[0], text
    # A figure's or a version's dots cut no clause.
    text = "is 99.9% uptime promised on v2.3.1? es muy importante para nosotros"
    assert split_by_language(text, "en", LANGUAGES)[1] == "is 99.9% uptime promised on v2.3.1"


async def test_a_message_in_two_languages_is_weighed_by_its_own_part(client: TestClient) -> None:
    turn = (await _turns(client, "can you bump up our seats? estamos creciendo rápido"))["turn"]
    assert turn["scope"]["verdict"] == "in"
    assert "its part in the pack's language" in turn["scope"]["rule"]
    assert (turn["flow"] or {}).get("name") == "add_seats"
    # Its part in the pack's language is weighed as the whole would be: small talk is declined,
    # and so is a question asked in the other language.
    for text in (
        "help me plan my wedding budget please, vielen Dank im Voraus",
        "can you help me find a cheap hotel downtown? muchas gracias amigo",
        "thanks for the help with my account, aber wie backe ich einen Kuchen ohne Eier?",
    ):
        assert (await _turns(client, text))["turn"]["move"]["name"] == "decline", text


async def test_the_customers_own_tools_are_declined(client: TestClient) -> None:
    for text, topic in (
        ("how many vacation days r we supposed to give contractors", "employment"),
        ("our postgres keeps hitting max_connections every night, pgbouncer?", "databases"),
        ("outlook on the office pc keeps asking for the password every 10 mins", "office"),
        ("what's the best data plan for travelling in Europe?", "consumer_products"),
    ):
        turn = (await _turns(client, text))["turn"]
        assert turn["move"]["name"] == "decline" and not turn["model_calls"], text
        assert topic in turn["scope"]["rule"], text
    for text in (
        "can our jenkins agents connect to you?",
        "we're moving off our GitHub Actions workflows, do you offer migration help?",
        "can you send invoices as a word document?",
        "the password reset email isn't showing up in outlook, how long is the link valid?",
        "whats it cost for a small mob like us? 12 staff, plumbing. is there a free version",
    ):
        assert (await _turns(client, text))["turn"]["scope"]["verdict"] != "out", text


async def test_escalation_asked_of_the_product(client: TestClient) -> None:
    for text in (
        "escalate me to an actual engineer pls",
        "That's not good enough. Then escalate it to your manager.",
        "put me thru to someone who actually works there mate",
        "pls have an actual engineer from ur team reach out to me today",
        "need a human to look at our account",
        "can you guys escalate this to management? third day our runners are stuck",
        "Is there a human I can escalate this to?",
    ):
        assert asks_for_person(text), text
    for text in (
        "if the on-call engineer doesn't ack, does it escalate to someone else?",
        "can Monitor escalate to a supervisor if nobody acks within 10 minutes?",
        "Can I let someone look at our account without making them an admin?",
        "is there a button so I can escalate to the backup on-call manually?",
    ):
        assert not asks_for_person(text), text
    body = await _turns(
        client, "if the on-call engineer doesn't ack, does it escalate to someone else?"
    )
    assert body["turn"]["move"]["name"] != "handoff"
    assert _cited(body) == ["doc-monitor#alerts"]


async def test_a_demo_asked_in_so_many_words(client: TestClient) -> None:
    for text in (
        "Book a demo for me and our CISO next week. We want to see the SSO and role setup live.",
        "keen for a call with sales to work out which plan suits a 12 man outfit",
        "quiero agendar un demo de Monitor para mi equipo el jueves",
    ):
        assert asks_to_be_shown(text), text
    for text in (
        "how do I set up a demo environment for our investors?",
        "we need to set up a demo status page for our investors meeting",
        "¿Monitor puede programar una llamada telefónica al de guardia cuando se cae la web?",
        "we had a call with sales last week and they promised a discount",
        # a demo asked for with no one to be shown it is the playbook's lead, not the flow's
        "I'd like to book a demo",
        "we don't need a call with sales, just tell me what Monitor costs",
    ):
        assert not asks_to_be_shown(text), text
    turn = (await _turns(client, "Book a demo for me and our CISO next week."))["turn"]
    assert (turn["flow"] or {}).get("name") == "demo"


async def test_a_person_asked_for_in_japanese(client: TestClient) -> None:
    for text in ("担当者の方と直接お話しできますか", "オペレーターにつないでください"):
        assert asks_for_person(text), text
    for text in (
        "担当者に電話でアラートを送れますか",
        "社内のスタッフと話をしてから、プランを決めます。料金はいくらですか",
        "障害時は担当者の携帯につないでくれますか",
    ):
        assert not asks_for_person(text), text
    turn = (await _turns(client, "担当者の方と直接お話しできますか"))["turn"]
    assert turn["move"]["name"] == "handoff"


def test_a_correction_word_alone_orders_no_change(pack: Pack) -> None:
    flow, gate = pack.flows["add_seats"], pack.gates["repeat"]
    text = (
        "one of our board members keeps asking me where our data actually lives... like "
        "physically, which country?"
    )
    assert first_change(flow, text, gate) is None
    change = first_change(flow, "we need 3 more seats actually", gate)
    assert change is not None and change["quantity"] == 3
    # A count corrected against another is a change whatever word says so.
    change = first_change(flow, "Our seat count is actually 18, not 14 - please correct it.", gate)
    assert change is not None and change["quantity"] == 18


async def test_a_follow_up_is_read_with_its_question_before_a_choice(client: TestClient) -> None:
    for first, then, key in (
        ("is there a free trial?", "and do i need a card for that?", "faq-trial"),
        ("how do i reset my password", "what if we log in thru microsoft sso tho", "faq-password"),
        ("Is there a free trial for Monitor?", "same deal for pipelines?", "faq-trial"),
        ("is there a trial for pipelines", "do i need to put a card in for that", "faq-trial"),
    ):
        body = await _turns(client, first, then)
        assert body["turn"]["move"]["name"] == "answer", then
        assert _cited(body) == [key], then


def test_two_swapped_letters_are_a_typo(pack: Pack) -> None:
    lexical = Bm25Index([p.lexical for p in pack_passages(pack)])
    assert lexical.corrections("how lnog do u keep build cahces") == {
        "lnog": "long",
        "cahc": "cach",
    }
    assert lexical.corrections("can i add a new usre") == {"usr": "user"}
    # A swap that makes a word the corpus lacks is that word, not a typo of the corpus's.
    for text in ("htis is broken", "is tehre a trial", "colud you help"):
        assert lexical.corrections(text) == {}, text


async def test_a_thing_shown_on_the_invoice(client: TestClient) -> None:
    assert asked_thing("is gst on the invoices? need it for the bas") == ["gst"]
    assert asked_thing("any startup discount or cheaper if we pay yearly") == [
        "startup",
        "discount",
    ]
    assert not asked_thing("any time I deploy the pipeline fails")
    await _unasserted(client, "is gst on the invoices? need it for the bas")
    await _unasserted(client, "any startup discount or cheaper if we pay yearly")


def test_a_colleague_before_he_is_no_name() -> None:
    known = {"build": 1, "fail": 1}
    text = "a build failed last night while Marcus was asleep, can he just rerun it?"
    assert "Marcus" not in unseen_names(known, text)
    text = "Our volunteer developer Marcus asked me if your Pipelines can do Docker builds"
    assert "Marcus" not in unseen_names(known, text)
    # A tool its user is told of in its own clause is still a name.
    text = "Since Bitbucket is what her team uses, will Pipelines connect to it?"
    assert "Bitbucket" in unseen_names(known, text)

"""What the twenty-third round of customer messages taught (README, "The twenty-third round"),
through REST on the sample pack and in words: a topic word asked of the company itself ("are you
SOC 2 certified?", "rate limits on your REST api") or a change ordered in so many words ("drop us
from 20 licences to 15") keeps a message whatever the margin says; the old total and the new is a
change to the new; the customer's own writing, spreadsheets, web servers and own clients are
declined; "any X?" asks whether a thing exists; "ping our website" is a check of it; a length
asked in a noun's name ("cache ttl?") asks for a duration; "get me an actual engineer on the
line" asks for a person."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.figures import asked_value
from gatebot_knowledge.shorthand import written_out
from gatebot_knowledge.specific import asked_thing

from bot.flows.trigger import first_change
from bot.packs import Pack
from bot.text import asks_for_person
from bot.turn.scope import asked_of_us
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited, _turns


def test_asked_of_the_company(pack: Pack) -> None:
    for text in (
        "are you SOC 2 certified? our auditor wants proof by friday",
        "rate limits on your REST api",
        "Is your company having SOC 2 Type II certificate?",
    ):
        assert asked_of_us(pack, text), text
    for text in (
        "can you help me with my calc homework",
        "In general terms, what's the difference between a SOC 2 Type I and Type II?",
        "Do you know a good restaurant near Avenida Paulista for a team lunch?",
    ):
        assert not asked_of_us(pack, text), text


async def test_a_topic_word_asked_of_the_company_is_not_declined(client: TestClient) -> None:
    for text in (
        "are you SOC 2 certified? our auditor wants proof by friday",
        "rate limits on your REST api",
    ):
        turn = (await _turns(client, text))["turn"]
        assert turn["scope"]["verdict"] == "in", text
        assert "asked of the company" in turn["scope"]["rule"], text
        assert turn["move"]["name"] != "decline", text


def test_the_old_total_and_the_new(pack: Pack) -> None:
    flow, gate = pack.flows["add_seats"], pack.gates["repeat"]
    for text in (
        "drop us from 20 licences to 15 pls",
        "bump my client's plan from 12 users up to 15",
        "go from 20 seats to 15",
    ):
        change = first_change(flow, text, gate)
        assert change is not None and change["pick"] == "change", text
        assert change["quantity"] == 15, text
    # A "from ... to" that gives no two counts changes nothing of the reading.
    change = first_change(flow, "we moved from slack to teams, add 2 seats", gate)
    assert change is not None and (change["pick"], change["quantity"]) == ("add", 2)


async def test_a_change_ordered_starts_its_flow(client: TestClient) -> None:
    turn = (await _turns(client, "drop us from 20 licences to 15 pls"))["turn"]
    assert turn["scope"]["verdict"] == "in"
    assert (turn["flow"] or {}).get("name") == "add_seats"


async def test_the_customers_own_business_is_declined(client: TestClient) -> None:
    for text, topic in (
        ("write me a polite email to our customers apologizing for checkout being down", "writing"),
        ("excel formula to sum the refunds per day from a column of timestamps", "spread"),
        ("our nginx server is giving 502 bad gateway after deploy, any idea?", "web_servers"),
        ("how do i send an invoice to one of our own clients in quickbooks", "own_clients"),
    ):
        turn = (await _turns(client, text))["turn"]
        assert turn["move"]["name"] == "decline" and not turn["model_calls"], text
        assert topic in turn["scope"]["rule"], text
    # A product's word keeps the message.
    turn = (await _turns(client, "does Monitor alert on a 502 from our nginx?"))["turn"]
    assert turn["scope"]["verdict"] == "in"


async def test_any_thing_asks_whether_it_exists(client: TestClient) -> None:
    assert asked_thing("Any special discount for early stage startups?") == ["special", "discount"]
    assert not asked_thing("any way to make packaging wait until cook finishes?")
    await _unasserted(client, "Any special discount for early stage startups? we are pre-revenue")


async def test_pinging_a_site_is_checking_it(client: TestClient) -> None:
    def known(word: str) -> bool:
        return True

    assert written_out("does it ping our website?", known) == "does it check our website?"
    assert written_out("can monitor ping me on slack", known) == "can monitor ping me on slack"
    for text in (
        "From how many locations does monitor ping our website?",
        "from where do you ping our sites? we have some clients in asia and in the US",
    ):
        assert _cited(await _turns(client, text)) == ["doc-monitor#checks"], text


async def test_a_length_asked_in_a_nouns_name(client: TestClient) -> None:
    for text in ("cache ttl?", "log retention on pipeline runs", "trial length?"):
        assert asked_value(text) == "duration", text
    assert asked_value("what's the length of the status page url") is None
    assert _cited(await _turns(client, "cache expiry?")) == ["doc-pipelines#jobs-and-caches"]
    assert _cited(await _turns(client, "log retention on pipeline runs")) == [
        "doc-pipelines#retries-and-logs"
    ]


async def test_an_engineer_on_the_line(client: TestClient) -> None:
    for text in ("get me an actual engineer on the line", "pass me to a conseiller pls"):
        assert asks_for_person(text), text
        assert (await _turns(client, text))["turn"]["move"]["name"] == "handoff", text
    assert not asks_for_person("can monitor get the on-call engineer on the phone?")

"""What the twenty-third round of customer messages taught (README, "The twenty-third round"),
through REST on the sample pack and in words: whether the company is certified ("are you SOC 2
certified?") or a change ordered in so many words ("drop us from 20 licences to 15") keeps a
message whatever the margin says; the old total and the new is a change to the new; the
customer's own writing, spreadsheets, web-server errors and own clients are declined; "any X?"
asks whether a thing exists; "ping our website" is a check of it; a length asked in a noun's name
("cache ttl?") asks for a duration; "get me an actual engineer on the line" asks for a person, a
call scheduled with the product team for a demo; a follow-up that asks more of the answer is read
with the whole question before."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.figures import asked_value
from gatebot_knowledge.shorthand import written_out
from gatebot_knowledge.specific import asked_thing

from bot.flows.trigger import first_change
from bot.packs import Pack
from bot.text import asks_for_person, asks_to_be_shown
from bot.turn.scope import asked_of_us
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited, _turns


def test_asked_of_the_company() -> None:
    for text in (
        "are you SOC 2 certified? our auditor wants proof by friday",
        "Is your company having SOC 2 Type II certificate?",
        "Are you ISO 27001 or SOC 2 certified? Our audit asks every year.",
    ):
        assert asked_of_us(text), text
    for text in (
        "are you able to help me with my calc homework",
        "what's your opinion on the best team in the premier league this season",
        "is your support for the new tax law in france justified",
        "In general terms, what's the difference between a SOC 2 Type I and Type II?",
        "are you a certified financial planner? I need help with my retirement data",
        "are you certified in excel? need help with a data table",
    ):
        assert not asked_of_us(text), text


async def test_a_certification_asked_of_the_company_is_not_declined(client: TestClient) -> None:
    turn = (await _turns(client, "are you SOC 2 certified? our auditor wants proof by friday"))[
        "turn"
    ]
    assert turn["scope"]["verdict"] == "in"
    assert "asked of the company" in turn["scope"]["rule"]
    assert turn["move"]["name"] != "decline"
    for text in (
        "what's your opinion on the best team in the premier league this season",
        "are you able to help me plan my wedding in tuscany",
    ):
        assert (await _turns(client, text))["turn"]["move"]["name"] == "decline", text


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
    # A count of its own before it, a date, a time or an age after it: the count ordered stands.
    for text in (
        "add 3 seats from 1 june to 30 june",
        "add 2 seats for our interns from 9 to 5 every day",
        "please add 5 seats for members aged from 18 to 25",
        "add 2 seats for the folks we moved from slack to teams",
    ):
        change = first_change(flow, text, gate)
        assert change is not None and change["pick"] == "add", text
    # With no verb of changing it orders nothing.
    for text in (
        "we grew from 2 to 5 people, do viewers count as paid seats?",
        "we already went from 10 to 8 seats last month, when does the invoice reflect it?",
        "headcount dropped from 30 to 22 seats, does that lower our invoice automatically?",
    ):
        assert first_change(flow, text, gate) is None, text


async def test_a_change_ordered_starts_its_flow(client: TestClient) -> None:
    turn = (await _turns(client, "drop us from 20 licences to 15 pls"))["turn"]
    assert turn["scope"]["verdict"] == "in"
    assert (turn["flow"] or {}).get("name") == "add_seats"


async def test_the_customers_own_business_is_declined(client: TestClient) -> None:
    for text, topic in (
        (
            "write me a polite email to our customers apologizing for checkout being dead",
            "writing",
        ),
        ("excel formula to sum the refunds per day from a column of timestamps", "spread"),
        ("nginx 502s behind ALB after we changed keepalive_timeout, ideas", "web_servers"),
        ("how do i send an invoice to one of our own clients in quickbooks", "own_clients"),
    ):
        turn = (await _turns(client, text))["turn"]
        assert turn["move"]["name"] == "decline" and not turn["model_calls"], text
        assert topic in turn["scope"]["rule"], text
    # A declared word keeps the message.
    for text in (
        "does Monitor alert on a 502 from our nginx?",
        "your api is returning 502 bad gateway since this morning",
        "how often do your checks hit our haproxy endpoint, every minute?",
        "write me a summary of what the Business plan includes",
    ):
        turn = (await _turns(client, text))["turn"]
        assert turn["scope"]["verdict"] != "out", text


async def test_any_thing_asks_whether_it_exists(client: TestClient) -> None:
    assert asked_thing("Any special discount for early stage startups?") == ["special", "discount"]
    assert not asked_thing("any way to make packaging wait until cook finishes?")
    for text in (
        "any tips on speeding up builds?",
        "Any time I deploy, the pipeline fails.",
        "any docs on webhooks?",
    ):
        assert not asked_thing(text), text
    assert asked_thing("ok, any discount for nonprofits?") == ["discount"]
    await _unasserted(client, "Any special discount for early stage startups? we are pre-revenue")


async def test_pinging_a_site_is_checking_it(client: TestClient) -> None:
    def known(word: str) -> bool:
        return True

    assert written_out("does it ping our website?", known) == "does it check our website?"
    for text in (
        "can monitor ping me on slack",
        "can monitor ping the app team on slack",
        "ping our site reliability engineers",
        "can monitor ping the website manager by sms when something breaks?",
    ):
        assert written_out(text, known) == text, text
    for text in (
        "From how many locations does monitor ping our website?",
        "from where do you ping our sites? we have some clients in asia and in the US",
    ):
        assert _cited(await _turns(client, text)) == ["doc-monitor#checks"], text


async def test_a_length_asked_in_a_nouns_name(client: TestClient) -> None:
    for text in ("cache ttl?", "log retention on pipeline runs", "trial length?"):
        assert asked_value(text) == "duration", text
    for text in (
        "what's the length of the status page url",
        "is there a max log length per job?",
        "my card expiry date changed, how do I update billing?",
        "does the status page help with customer retention?",
    ):
        assert asked_value(text) is None, text
    assert _cited(await _turns(client, "cache expiry?")) == ["doc-pipelines#jobs-and-caches"]
    assert _cited(await _turns(client, "log retention on pipeline runs")) == [
        "doc-pipelines#retries-and-logs"
    ]


async def test_an_engineer_on_the_line(client: TestClient) -> None:
    for text in ("get me an actual engineer on the line", "pass me to a conseiller pls"):
        assert asks_for_person(text), text
        assert (await _turns(client, text))["turn"]["move"]["name"] == "handoff", text
    for text in (
        "can the escalation policy put me an engineer on the phone if nobody acks?",
        "will monitor put us a person on the phone when the site is down",
        "route us to your advisors page for pricing",
    ):
        assert not asks_for_person(text), text


def test_a_call_scheduled_with_the_team() -> None:
    assert asks_to_be_shown(
        "Could a call be scheduled with your product team to walk our architecture and security "
        "reviewers through the platform end to end?"
    )
    for text in (
        "can an api call be scheduled with your pipelines cron?",
        "can a maintenance session be scheduled with your status page?",
        "Can a phone call be set up with someone on call when a check fails?",
        "could a call be scheduled with your support engineers about yesterday's outage?",
    ):
        assert not asks_to_be_shown(text), text


async def test_a_follow_up_that_asks_more_of_the_answer(client: TestClient) -> None:
    for first, then, key in (
        ("SAML SSO supported?", "which plan tho", "doc-account#sign-in"),
        ("is there a free trial for monitor", "do i need a card for that?", "faq-trial"),
    ):
        assert _cited(await _turns(client, first, then)) == [key], then
    # A question of its own is read alone, not joined to the answer's passage.
    body = await _turns(client, "how do i reset my password", "can we use single sign-on?")
    assert "faq-password" not in _cited(body)

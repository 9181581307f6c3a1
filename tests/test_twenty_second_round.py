"""What the twenty-second round of customer messages taught (README, "The twenty-second round"),
through REST on the sample pack and in words: a colleague named in a question ("every time Dev
uploads changes", "Sandra on our front desk") and a day or a pronoun are no names the pack never
says; a question about other software's own use ("how do i squash my last 5 commits in git") is
declined; a short follow-up kept by a declared word ("and gitlab também?") is read with the
question before, not declined; "in order to" orders nothing; "do the hosted runners have gpus?"
asks after a thing; a question that runs on after a comma is read alone too; the customer's
identity provider named as one is no unknown name; "pass me to human" asks for a person."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.packfit import unseen_names
from gatebot_knowledge.sentences import question_sentences
from gatebot_knowledge.specific import asked_thing

from bot.packs import Pack
from bot.text import asks_for_person
from bot.turn.scope import check_scope
from tests.test_eleventh_round import _unasserted
from tests.test_retrieval_understanding import _cited, _turns

KNOWN = {w: 1 for w in ("alert", "connect", "upload", "chang", "add", "account", "identiti")}


def test_a_colleague_a_day_and_a_pronoun_are_no_names() -> None:
    for text in (
        "I think Dev deleted our old workspace last week when he was tidying up",
        "Dev keeps saying we need to connect it",
        "Dr Hughes wants the alerts",
        "one job failed and Dev's not in till Thursday, can I retry it?",
        "how do I get her added to our account",
        "Sandra on our front desk needs the invoices",
        "Dev (our part-time IT guy) asked about alerts",
        "a new manager at our Wymondham branch needs adding",
    ):
        assert not unseen_names(KNOWN, text), text
    # A tool is named whatever is said of it, and a colleague beside it changes nothing.
    assert unseen_names(KNOWN, "can Opsgenie (our paging tool) get alerts?") == ["Opsgenie"]
    assert unseen_names(KNOWN, "Priya says we should connect Opsgenie") == ["Opsgenie"]
    assert unseen_names(KNOWN, "every time Renovate uploads changes") == ["Renovate"]
    assert unseen_names(KNOWN, "when Sentry says the site is down") == ["Sentry"]


def test_the_identity_provider_named_as_one() -> None:
    known = {**KNOWN, "provid": 1, "identity": 1, "provider": 1}
    assert not unseen_names(known, "saml sso is in which plan, we use google workspace idp")
    assert not unseen_names(known, "we use Okta as our identity provider, how do I reset it?")


async def test_questions_with_a_colleague_in_them_are_answered(client: TestClient) -> None:
    for text, key in (
        (
            "Can Sandra on our front desk download the bills herself or does it have to be me?",
            "faq-invoice",
        ),
        ("saml sso is in which plan, we use google workspace idp", "doc-account#sign-in"),
        (
            "how do I add a new associate to our account, she started monday and still cant get in",
            "doc-account#members-and-roles",
        ),
        (
            "Retention question: how long are pipeline job logs kept before they're purged?",
            "doc-pipelines#retries-and-logs",
        ),
    ):
        assert _cited(await _turns(client, text)) == [key], text


def test_a_question_that_runs_on_after_a_comma() -> None:
    text = "how do I add a new associate to our account, she started monday and still cant get in"
    assert question_sentences(text) == ["how do I add a new associate to our account"]
    # Only after a question: a sentence of context stays whole.
    assert question_sentences("we hired a designer, she starts monday. how do I add her?") == [
        "how do I add her?"
    ]


async def test_other_softwares_own_questions_are_declined(client: TestClient) -> None:
    for text in (
        "how do i squash my last 5 commits in git",
        "How do I set up an automatic out-of-office reply in Outlook?",
    ):
        turn = (await _turns(client, text))["turn"]
        assert turn["move"]["name"] == "decline" and not turn["model_calls"], text
        assert "other software" in turn["scope"]["rule"], text
    for text in ("can I use it from my phone", "does pipelines build docker images?"):
        turn = (await _turns(client, text))["turn"]
        assert turn["scope"]["verdict"] != "out", text


async def test_a_follow_up_kept_by_a_declared_word(client: TestClient) -> None:
    for first, then, key in (
        ("pipelines connect with github repos?", "and gitlab também?", "faq-github"),
        (
            "monitor sends alerts to slack right",
            "e teams? half company uses teams",
            "faq-slack-alerts",
        ),
        (
            "does Pipelines work with github?",
            "what about gitlab, apparently thats what the new contractor uses",
            "faq-github",
        ),
    ):
        assert _cited(await _turns(client, first, then))[:1] == [key], then
    # Out of scope after an answer stays out of scope.
    body = await _turns(client, "does monitor send alerts to slack?", "and the weather in Berlin?")
    assert body["turn"]["move"]["name"] == "decline"


async def test_in_order_to_orders_nothing(pack: Pack, client: TestClient) -> None:
    scope = check_scope(pack, "Must I give a credit card in order to begin it?", set())
    assert scope["verdict"] == "in" and "order_status" not in scope["rule"]
    assert check_scope(pack, "where is my order?", set())["verdict"] == "needs_input"
    body = await _turns(
        client,
        "Is there a free trial of Acme Monitor, please?",
        "I see. Must I give a credit card in order to begin it?",
    )
    assert body["turn"]["move"]["name"] != "handoff"
    assert _cited(body) == ["faq-trial"]


async def test_a_thing_a_part_has(client: TestClient) -> None:
    assert asked_thing("do the hosted runners have gpus?") == ["gpus"]
    assert asked_thing("does your status page have custom domains?") == ["custom", "domain"]
    assert not asked_thing("does the trial have everything unlocked?")
    await _unasserted(client, "do the hosted runners have gpus? need em for shader compilation")
    await _unasserted(client, "Can you put our firm's tax ID on the invoices?")
    text = "does the trial have everything unlocked or is it a cut-down version?"
    assert _cited(await _turns(client, text)) == ["faq-trial"]


async def test_a_pointing_question_after_another_is_not_read_alone(client: TestClient) -> None:
    await _unasserted(
        client,
        "when I remove someone who left the firm, what happens to the stuff they set up? "
        "does it get deleted?",
    )


async def test_pass_me_to_a_human(client: TestClient) -> None:
    for text in ("pass me to human atendente obrigado", "transfer me to human agent"):
        assert asks_for_person(text), text
    assert (await _turns(client, "pass me to human atendente obrigado"))["turn"]["move"][
        "name"
    ] == "handoff"
    for text in ("route me to the pricing page", "pass me the invoice for march"):
        assert not asks_for_person(text), text

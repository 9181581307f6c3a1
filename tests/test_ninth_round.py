"""What the ninth round of customer messages taught (README, "The ninth round"), through REST on
the sample pack and in words: the identity provider a customer signs in through and who they are
("our DPO", "a few PMs") are not things the pack never says; a platform asked to run on is what the
question is about; a time other than the stated one, or a change after what is chosen at creation,
is not answered by the passage that states it; questions about the assistant itself are declined."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from gatebot_knowledge.beyond import beyond_stated
from gatebot_knowledge.lexical import tokenize
from gatebot_knowledge.packfit import names_target, unseen_names

from tests.test_answerability import _say

KNOWN = {w: 1 for w in tokenize("identity provider sso password runners account")}


def test_the_identity_provider_signed_in_through_is_no_unseen_name() -> None:
    assert unseen_names(KNOWN, "We log in through Okta. I need to change my password") == []
    assert unseen_names(KNOWN, "Our company signs in via Azure AD, where do I reset it?") == []
    assert unseen_names(KNOWN, "our Okta SSO is set up, how do I reset my password") == []
    # Used, and asked whether it is supported: the question is about it.
    assert unseen_names(KNOWN, "we use Okta SSO, is that supported?") == ["Okta"]
    # Only where the pack speaks of identity providers, and only what is signed in through.
    assert unseen_names({"password": 1}, "We log in through Okta. How?") == ["Okta"]
    assert unseen_names(KNOWN, "Does your SSO support SCIM from Azure AD?") == [
        "SCIM",
        "Azure",
        "AD",
    ]


def test_who_asks_is_no_unseen_name() -> None:
    assert unseen_names(KNOWN, "our DPO insists the account stays in Europe") == ["Europe"]
    assert unseen_names(KNOWN, "a bunch of PMs only look at dashboards") == []
    assert unseen_names(KNOWN, "I'm CTO at a seed-stage startup") == []


def test_a_platform_asked_to_run_on_is_what_is_asked() -> None:
    question = "Do self-hosted runners work on Windows and ARM machines?"
    assert names_target(question, ["ARM"])  # the second of two is as much the question
    assert names_target("can our builds run on FreeBSD?", ["FreeBSD"])


def test_another_value_than_the_stated_one_is_not_answered() -> None:
    checks = "Acme Monitor checks your websites and APIs from twelve locations, every minute."
    assert beyond_stated("can I set checks to run every 10 seconds instead of every minute", checks)
    assert beyond_stated("Can I change the check interval, say to every 5 minutes?", checks)
    assert not beyond_stated("can I set checks to run every minute?", checks)
    assert not beyond_stated("how often do you check my site?", checks)
    region = "Customer data is stored in the EU or the US, chosen when the workspace is created."
    assert beyond_stated("Can I change our region to the EU after it was created?", region)
    assert not beyond_stated("can we choose the EU region when we sign up?", region)
    assert not beyond_stated("can I move it later?", "Owners can change the region later.")


async def test_a_password_question_from_an_okta_shop_is_answered(client: TestClient) -> None:
    body = await _say(
        client, "We log in through Okta. I need to change my password, do I do that in Acme?"
    )
    assert body["turn"]["move"]["name"] == "answer"
    assert body["replies"][0]["citations"][0]["key"] == "faq-password"


async def test_moving_a_workspace_chosen_at_creation_is_not_asserted(client: TestClient) -> None:
    body = await _say(
        client, "Can I change our workspace from the US region to the EU after it was created?"
    )
    assert not any(r.get("citations") for r in body["replies"])
    read = next(r for r in body["turn"]["reads"] if r["head"] == "answerability")
    assert "+beyond-stated" in read["version"]


async def test_a_question_about_the_assistant_itself_is_declined(client: TestClient) -> None:
    body = await _say(client, "how are you today? do you like your job lol")
    turn = body["turn"]
    assert turn["move"]["name"] == "decline"
    assert turn["scope"]["rule"] == "out_of_scope:small_talk"
    assert not turn["model_calls"]


def test_a_count_of_places_is_held_by_a_number_of_locations() -> None:
    from gatebot_knowledge.figures import counted, holds_value

    checks = "Acme Monitor checks your websites and APIs from twelve locations, every minute."
    for question in ("From how many places do you check?", "How many regions do you check from?"):
        assert holds_value("count", checks, counted(question))
    assert not holds_value("count", checks, counted("how many websites can I monitor?"))


def test_actions_worded_as_the_pack_words_them() -> None:
    from gatebot_knowledge.specific import action_named, asked_action

    said = {"send", "connect"}.__contains__
    assert action_named(asked_action("what channels can uptime alerts be delivered to") or "", said)
    assert action_named(asked_action("can we hook up our own build agents?") or "", said)


async def test_where_alerts_can_be_delivered_is_answered(client: TestClient) -> None:
    body = await _say(client, "what channels can uptime alerts be delivered to")
    assert body["turn"]["move"]["name"] == "answer"
    assert body["replies"][0]["citations"][0]["key"] in ("faq-slack-alerts", "doc-monitor#alerts")


async def test_a_trial_question_naming_a_product_is_answered_for_every_product(
    client: TestClient,
) -> None:
    # Drawn to the Pipelines overview by its name; the trial entry speaks for every product.
    body = await _say(
        client, "can i kick the tires on pipelines first? and do i have to put a credit card in"
    )
    assert body["turn"]["move"]["name"] == "answer"
    assert body["replies"][0]["citations"][0]["key"] == "faq-trial"
    read = next(r for r in body["turn"]["reads"] if r["head"] == "answerability")
    assert "+every-product" in read["version"]


def test_a_passage_speaks_for_every_product_only_naming_none() -> None:
    from gatebot_knowledge.answerability import Umbrella
    from gatebot_knowledge.index import KnowledgeIndex
    from gatebot_knowledge.passages import Passage

    umbrella = Umbrella("Acme Cloud", ("Acme Pipelines", "Acme Monitor"))
    assert umbrella.product_words() == {"pipelin", "monitor"}
    texts = [
        "Every product has a 14-day free trial.",
        "Acme Cloud has a free tier and paid plans per team.",
        "Acme Pipelines runs your builds.",
        "Invoices are under Settings.",
    ]
    passages = [Passage(f"k{i}", f"t{i}", t, "faq", "faq") for i, t in enumerate(texts)]
    index = KnowledgeIndex(passages)
    assert [umbrella.for_every_product(index, row) for row in range(4)] == [
        True,
        True,
        False,
        False,
    ]

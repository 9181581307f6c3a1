"""What the eleventh round of customer messages taught (README, "The eleventh round"), through
REST on the sample pack and in words: a length asked to be kept for, longer than every length the
passage states ("can we keep build logs for 90 days?" against 30), asks whether the stated one
can move, which the passage does not say; a name that stems to an ordinary word ("Windows" reads
as "window", which the pack says of an undo window) is a name the pack never says when the pack
never writes it; a passage that says who may do something ("Account owners can download each
one") does not say whether another role may ("can admins download invoices too?"); a hand-off's
declared word and next to nothing else ("operator pls") asks for a person; another company's
consumer product is out of scope even where a request's word is ("get spotify to refund me")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from gatebot_knowledge.beyond import past_length
from gatebot_knowledge.lexical import tokenize
from gatebot_knowledge.packfit import names_target, unseen_names
from gatebot_knowledge.retriever import KnowledgeRetriever
from gatebot_knowledge.shorthand import written_out
from gatebot_knowledge.specific import other_doer

from bot.packs import load_pack
from bot.turn.scope import check_scope
from tests.test_answerability import _answerability, _say


async def _unasserted(client: TestClient, text: str) -> dict[str, Any]:
    """Say ``text`` in a fresh conversation; nothing may be cited. The answerability read."""
    body = await _say(client, text)
    assert not any(r.get("citations") for r in body["replies"]), text
    return _answerability(body["turn"])


LOGS = "A failed job can be retried from the pipeline page. Logs are kept for 30 days."


def test_a_length_asked_to_be_kept_for_past_the_stated_one() -> None:
    assert past_length("Can we keep build logs for 90 days?", LOGS)
    assert past_length("could logs be stored for a year if we pay extra", LOGS)
    assert past_length("is it possible to retain logs for up to 6 months?", LOGS)
    # Within the stated length, or asked without asking whether it can be: the passage answers.
    assert not past_length("can we keep logs for a week?", LOGS)
    assert not past_length("are logs kept for 30 days?", LOGS)
    assert not past_length("do you keep logs for 60 days", LOGS)
    assert not past_length("logs from 60 days ago, can I still see them?", LOGS)


def test_a_name_that_stems_to_an_ordinary_word() -> None:
    written = frozenset("is there an undo window after deleting".split())
    known = {w: 1 for w in tokenize(" ".join(written))}
    asked = "do self-hosted runners work on windows machines?"
    assert unseen_names(known, asked, written=written) == ["windows"]
    assert unseen_names(known, "Can runners run on Windows Server?", written=written) == [
        "Windows",
        "Server",
    ]
    # A pack that writes the name itself speaks of it; without the written words, the stem.
    said = written | {"windows"}
    assert unseen_names(known, asked, written=said) == []
    assert unseen_names(known, asked) == []
    # As an ordinary word it is no name: "is the undo window long?" names nothing.
    assert unseen_names(known, "how long is the undo window?", written=written) == []


async def test_past_the_stated_length_or_on_an_unwritten_platform(client: TestClient) -> None:
    for text, version in (
        ("Can we keep build logs for 90 days? Auditors want more than a month.", "+beyond-stated"),
        ("do self-hosted runners work on windows machines? most of our boxes are", "+unseen-name"),
    ):
        read = await _unasserted(client, text)
        assert version in read["version"], (text, read["version"])
    body = await _say(client, "how long are build logs kept?")
    assert body["replies"][0]["citations"][0]["key"] == "doc-pipelines#retries-and-logs"


def test_the_reading_for_every_product_is_made_only_where_one_may_answer() -> None:
    # Read without the product's name, a question costs a query embedding more: made only where
    # a passage speaking for every product is among the best (the trial entry for "can i try
    # pipelines before paying"), not for "does Pipelines support Docker builds?".
    retriever = KnowledgeRetriever(load_pack(Path(__file__).parents[1] / "knowledge" / "acme"))
    retriever.build()
    embedder = retriever.embedder
    assert embedder is not None
    embedded: list[str] = []
    embed_query = embedder.embed_query

    def counted(text: str) -> object:
        embedded.append(text)
        return embed_query(text)

    embedder.embed_query = counted  # type: ignore[method-assign]
    docker = retriever.evidence_sync("Does Pipelines support Docker builds?")
    assert docker.facts[0].key == "faq-docker"
    assert embedded == ["Does Pipelines support Docker builds?"]
    embedded.clear()
    trial = retriever.evidence_sync("can i try pipelines before paying for it")
    assert trial.facts[0].key == "faq-trial" and "+every-product" in trial.version
    asked = "can i try pipelines before paying for it"
    assert embedded == [asked, "can i try before paying for it"]


INVOICES = (
    "Invoices are under Settings, then Billing. Account owners can download each one as a PDF."
)
ROLES = frozenset(tokenize("owner admin member viewer invoice download restore"))


def test_who_may_do_what_the_passage_says_another_may() -> None:
    asked = "can admins download invoices too or really only the account owner?"
    assert other_doer(asked, INVOICES, ROLES) == ["admin"]
    assert other_doer("could a viewer download the invoice", INVOICES, ROLES) == ["viewer"]
    restore = (
        "Deleting a workspace removes its data after 30 days, during which an owner can restore it."
    )
    assert other_doer("can an admin restore a deleted workspace?", restore, ROLES) == ["admin"]
    # The one the passage names, the customer themselves, or a word the pack never says.
    assert other_doer("can owners download invoices?", INVOICES, ROLES) == []
    assert other_doer("can I download invoices as a pdf", INVOICES, ROLES) == []
    assert other_doer("can accountants download invoices?", INVOICES, ROLES) == []


async def test_another_role_than_the_one_stated_is_not_asserted(client: TestClient) -> None:
    read = await _unasserted(
        client, "can admins download invoices too or really only the account owner?"
    )
    assert "+other-doer" in read["version"]
    body = await _say(client, "who can download our invoices?")
    assert body["replies"][0]["citations"][0]["key"] == "faq-invoice"


def test_an_acknowledgement_written_out() -> None:
    known = {"acknowledged", "acknowledges", "alert"}.__contains__
    assert written_out("what if nobody acks the alert", known) == (
        "what if nobody acknowledges the alert"
    )
    assert written_out("if it isn't acked in 5 minutes", known) == (
        "if it isn't acknowledged in 5 minutes"
    )


def test_what_is_asked_to_be_printed_or_shown_somewhere() -> None:
    asked = "how do i get our VAT number printed on the invoices?"
    assert names_target(asked, ["VAT"])
    assert names_target("can you add our logo to the status page", ["logo"])
    # A number of something is no thing's name.
    assert not names_target("add 5 seats to our plan", ["5"])


async def test_a_vat_number_on_invoices_is_not_the_invoices_entry(client: TestClient) -> None:
    read = await _unasserted(client, "how do i get our VAT number printed on the invoices?")
    assert read["answer"] == "no" and "+unseen-name" in read["version"]


async def test_a_bare_request_for_a_person_is_handed_off(client: TestClient) -> None:
    # "operator" is a declared word of the hand-off intent; the head, trained on longer lines,
    # read none of the pack's intents, and the margin of topic words alone had declined it.
    for text in ("operator pls", "operator"):
        turn = (await _say(client, text))["turn"]
        assert turn["move"]["name"] == "handoff", text
    # A hand-off word inside a message about something else is no request for a person.
    turn = (await _say(client, "is it ok for a person to eat 3 eggs a day"))["turn"]
    assert turn["move"]["name"] == "decline" and not turn["model_calls"]


def test_another_companys_product_is_out_of_scope_despite_a_requests_word() -> None:
    pack = load_pack(Path(__file__).parents[1] / "knowledge" / "acme")
    spotify = "spotify charged me twice this month for premium, how do i get them to refund it"
    assert check_scope(pack, spotify, set())["rule"] == "out_of_scope:consumer_products"
    iphone = "my iphone won't charge past 80%, is the battery dying?"
    assert check_scope(pack, iphone, set())["verdict"] == "out"
    # A product of the pack's keeps the message.
    assert check_scope(pack, "can I get Monitor alerts on my iPhone?", set())["verdict"] == "in"

"""Questions in languages the pack has no templates for (Italian, Dutch, Portuguese) are read as
the languages they are, matched across languages, and never declined as out of scope for being
in them; a question among others is matched alone (issue #19, languages)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from bot.preflight.language import written_in
from tests.test_retrieval_understanding import _check, _cited, _turns

PACK_LANGUAGES = ["de", "en", "es", "fr"]


def test_a_language_without_templates_is_read_as_itself() -> None:
    pt = "Onde os meus dados ficam armazenados? Na Europa ou nos EUA?"
    assert written_in(pt, PACK_LANGUAGES)[0] == "pt"  # among the four alone: Spanish
    assert (
        written_in("Per quanto tempo vengono conservati i log delle build?", PACK_LANGUAGES)[0]
        == "it"
    )
    assert written_in("how long are build logs kept for?", PACK_LANGUAGES)[0] == "en"
    # A short line reads surer among fewer languages: the pack's decide it.
    assert written_in("¿Funciona con GitHub?", PACK_LANGUAGES)[0] == "es"


def test_a_place_written_in_another_language_is_no_unseen_name() -> None:
    from gatebot_knowledge.packfit import cognate

    known = {"europ": 1, "eu": 1, "us": 1}
    assert cognate("Europa", known) and cognate("UE", known)
    assert cognate("EUA", known)  # one letter more than the pack's "EU"
    assert not cognate("Bitbucket", known)


async def test_an_italian_question_is_answered_across_languages(client: TestClient) -> None:
    body = await _turns(client, "Per quanto tempo vengono conservati i log delle build?")
    assert _cited(body) == ["doc-pipelines#retries-and-logs"]
    assert _check(body)["version"].startswith("multilingual-use3/it")


async def test_a_dutch_question_is_in_scope_and_answered(client: TestClient) -> None:
    body = await _turns(
        client, "Kunnen we inloggen met SSO via SAML? Welk abonnement heb je daarvoor nodig?"
    )
    assert body["turn"]["scope"]["verdict"] == "in"  # it was declined as outside the pack
    assert _cited(body) == ["doc-account#sign-in"]


async def test_a_question_among_others_is_matched_alone_across_languages(
    client: TestClient,
) -> None:
    body = await _turns(
        client, "Hola, ¿tienen prueba gratis? ¿Cuántos días dura y hace falta tarjeta?"
    )
    assert _cited(body) == ["faq-trial"]
    assert _check(body)["version"] == "multilingual-use3/es+sentence"

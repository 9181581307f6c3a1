"""Pre-flight through the REST API: routing acts (FAQ verbatim, escalation menu on the right desk,
a flow's trigger read, the customer's language), shadow records without changing any reply, and
a failed model pre-flight leaves the normal turn, recorded."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import App
from bot.config import Settings
from bot.extend.provider import ModelProvider, Prompt, Response
from bot.extend.recorder import MemoryRecorder
from bot.hookspecs import hookimpl
from tests.conftest import ACME
from tests.test_api import new_conversation, say

FAQ_QUESTION = "How much does Acme Cloud cost?"
PERSON = "I need to talk to someone now"
REFUND = "I want a refund for my last invoice"
FRENCH = "Bonjour, comment réinitialiser mon mot de passe ?"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(pack=ACME, data_dir=tmp_path, recorders=[], preflight="routing")


async def _turn(client: TestClient, text: str) -> dict[str, Any]:
    cid, auth = await new_conversation(client)
    resp = await say(client, cid, auth, text, "m1")
    assert resp.status == 200
    body: dict[str, Any] = await resp.json()
    return body


def _answer(turn: dict[str, Any], question: str) -> dict[str, Any]:
    return next(a for a in turn["preflight"]["answers"] if a["question"] == question)


async def test_routing_answers_faq_verbatim_with_the_faq_as_source(
    client: TestClient, app: App
) -> None:
    body = await _turn(client, FAQ_QUESTION)
    stored = next(f.answer for f in app.pack.faq if f.key == "faq-pricing")
    assert body["replies"][0]["text"] == stored  # byte for byte
    turn = body["turn"]
    assert turn["facts"] == [{"key": "faq-pricing", "source": "faq", "mode": "faq"}]
    assert turn["move"]["name"] == "answer"
    assert turn["move"]["why"].startswith("pre-flight: FAQ faq-pricing")
    assert turn["preflight"]["mode"] == "routing"
    assert turn["preflight"]["decision"] == "faq:faq-pricing"
    assert turn["preflight"]["acted"]["route"] == "faq:faq-pricing"
    assert [a["question"] for a in turn["preflight"]["answers"]] == [
        "flow",
        "faq",
        "person",
        "helpdesk",
        "reasoning",
        "frustration",
        "language",
    ]
    assert _answer(turn, "faq")["above"] is True
    assert turn["reads"][0]["head"] == "preflight" and turn["reads"][0]["answer"] == "faq-pricing"
    assert turn["model_calls"] == []  # answered without any model


async def test_routing_reads_faq_paraphrases_through_knowledge_search(client: TestClient) -> None:
    """The FAQ question is read by the same hybrid search as knowledge search: a paraphrase that
    shares few words with the entry's question is routed, a near miss is not."""
    body = await _turn(client, "will monitor ping our slack channel when the site goes down")
    faq = _answer(body["turn"], "faq")
    assert faq["answer"] == "faq-slack-alerts" and faq["above"] is True
    assert faq["source"].startswith("knowledge search (hybrid")
    assert body["turn"]["preflight"]["decision"] == "faq:faq-slack-alerts"
    # The GitHub and GitLab entry is the nearest, and it does not answer this: not routed.
    body = await _turn(client, "do you integrate with bitbucket")
    assert body["turn"]["preflight"]["decision"] == "none"
    assert _answer(body["turn"], "faq")["above"] is False


async def test_routing_opens_the_escalation_menu_on_the_recommended_desk(
    client: TestClient, app: App
) -> None:
    body = await _turn(client, PERSON)
    card = next(r for r in body["replies"] if r["type"] == "card")
    assert card["card"] == "escalation_menu" and card["helpdesk"] == "support"
    assert card["options"][0] == {
        "helpdesk": "support",
        "label": "Staff who take over support conversations.",
        "recommended": True,
    }
    turn = body["turn"]
    assert turn["move"]["name"] == "handoff" and turn["move"]["escalate"] is True
    assert turn["preflight"]["decision"] == "person:support"
    (esc,) = app.store.escalations()
    assert esc.helpdesk == "support" and esc.kind == "preflight"


async def test_routing_starts_the_refund_flow_through_its_trigger_read(client: TestClient) -> None:
    body = await _turn(client, REFUND)
    turn = body["turn"]
    assert turn["preflight"]["decision"] == "flow:refund"
    read = turn["reads"][0]
    assert read["head"] == "preflight" and read["gate"] == "preflight.flow"
    assert read["answer"] == "refund" and read["outcome"] == "act"  # refund's trigger intent
    assert turn["move"]["why"].startswith("flow refund ")  # the flow started from that read
    # The sentence says what happened without naming the flow.
    assert turn["preflight"]["sentence"] == "I can help with that directly."
    assert "refund" not in turn["preflight"]["sentence"].lower()


async def test_routing_tells_a_french_customer_in_french(client: TestClient, app: App) -> None:
    cid, auth = await new_conversation(client)
    queue = app.events.subscribe(cid)
    resp = await say(client, cid, auth, FRENCH, "m1")
    turn = (await resp.json())["turn"]
    events = [queue.get_nowait() for _ in range(queue.qsize())]
    progress = [e for e in events if e["type"] == "progress"]
    assert progress == [{"type": "progress", "stage": "preflight", "text": "Je regarde cela."}]
    assert _answer(turn, "language")["answer"] == "fr"
    assert turn["preflight"]["sentence"] == app.pack.template("preflight_none", "fr")
    assert turn["preflight"]["acted"]["language"] == "fr"
    conv = app.store.get_conversation(cid)
    assert conv is not None and conv.language == "fr"


async def _replies(settings: Settings, texts: list[str]) -> list[tuple[list[Any], dict[str, Any]]]:
    app = App(settings, recorders=[MemoryRecorder()])
    await app.start(channels=False)
    try:
        from gatebot_web.server import build_web_app

        async with TestClient(TestServer(build_web_app(app), host="127.0.0.1")) as client:
            out = []
            for text in texts:
                body = await _turn(client, text)
                out.append((body["replies"], body["turn"]))
            return out
    finally:
        await app.stop()


async def test_shadow_answers_as_without_preflight_and_records_decisions(tmp_path: Path) -> None:
    texts = [FAQ_QUESTION, PERSON, REFUND, FRENCH]
    off = await _replies(Settings(pack=ACME, data_dir=tmp_path / "off", recorders=[]), texts)
    shadow_settings = Settings(
        pack=ACME, data_dir=tmp_path / "shadow", recorders=[], preflight="shadow"
    )
    shadow = await _replies(shadow_settings, texts)
    assert [r for r, _ in shadow] == [r for r, _ in off]
    assert [t["move"] for _, t in shadow] == [t["move"] for _, t in off]
    assert [t["preflight"]["decision"] for _, t in shadow] == [
        "faq:faq-pricing",
        "person:support",
        "flow:refund",
        "none",
    ]
    assert all(t["preflight"]["mode"] == "shadow" for _, t in shadow)
    assert all(t["preflight"]["acted"] is None for _, t in shadow)
    assert all(t["preflight"]["mode"] == "off" and not t["preflight"]["answers"] for _, t in off)


class BadJson(ModelProvider):
    """Answers pre-flight with prose and everything else with the best fact, like offline."""

    name = "badjson"

    async def execute(self, prompt: Prompt) -> Response:
        if prompt.purpose == "preflight":
            return Response("Sure! The customer wants pricing.")
        facts = prompt.context.get("facts", [])
        return Response(f"{facts[0]['text']} [{facts[0]['key']}]" if facts else "")


def _app_with(settings: Settings, provider: type[ModelProvider]) -> App:
    class Plugin:
        @hookimpl
        def register_model_providers(self, register: Callable[[str, Any], None]) -> None:
            register(provider.name, provider)

    settings.model = provider.name
    return App(settings, extra_plugins=[Plugin()], recorders=[MemoryRecorder()])


@pytest.fixture
async def badjson_client(tmp_path: Path) -> AsyncIterator[TestClient]:
    from gatebot_web.server import build_web_app

    app = _app_with(
        Settings(pack=ACME, data_dir=tmp_path, recorders=[], preflight="routing"), BadJson
    )
    await app.start(channels=False)
    try:
        async with TestClient(TestServer(build_web_app(app), host="127.0.0.1")) as client:
            yield client
    finally:
        await app.stop()


async def test_bad_json_from_the_model_falls_back_to_the_normal_turn(
    badjson_client: TestClient,
) -> None:
    body = await _turn(badjson_client, FAQ_QUESTION)
    turn = body["turn"]
    assert "not JSON" in turn["preflight"]["error"]
    assert turn["preflight"]["answers"] == [] and turn["preflight"]["acted"] is None
    assert turn["reads"][0]["head"] != "preflight"  # the heads read as without pre-flight
    assert turn["move"]["name"] == "answer"
    assert body["replies"][0]["text"]  # the normal answer, not an error
    (call, *_) = turn["model_calls"]
    assert call["purpose"] == "preflight" and call["provider"] == "badjson"

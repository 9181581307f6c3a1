"""Pre-flight's parts: the model's strict JSON, timeouts, keyword matching without embeddings,
frustration feeding the hard rules, the language detector and the pack's preflight section."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bot.errors import PackErrors, ProviderError
from bot.extend.provider import ModelProvider, Prompt, Response
from bot.packs import Pack, load_pack
from bot.preflight import Preflight
from bot.preflight.language import detect
from bot.preflight.stage import Outcome
from bot.turn.reading import Readers
from tests.conftest import ACME


class Scripted(ModelProvider):
    name = "scripted"

    def __init__(self, text: str = "", delay: float = 0.0, fail: bool = False) -> None:
        super().__init__("script-1")
        self.text, self.delay, self.fail = text, delay, fail
        self.prompts: list[Prompt] = []

    async def execute(self, prompt: Prompt) -> Response:
        self.prompts.append(prompt)
        if self.fail:
            raise ProviderError("429 too many requests")
        await asyncio.sleep(self.delay)
        return Response(self.text, tokens_in=50, tokens_out=40)


def _answers(**overrides: Any) -> str:
    data: dict[str, Any] = {
        "flow": {"answer": None, "confidence": 0.9},
        "faq": {"answer": "faq-trial", "confidence": 0.95},
        "person": {"answer": False, "confidence": 0.9},
        "helpdesk": {"answer": "sales", "confidence": 0.7},
        "reasoning": {"answer": "high", "confidence": 0.8},
        "frustration": {"answer": "high", "confidence": 0.85},
        "language": {"answer": "es", "confidence": 0.97},
    }
    data.update(overrides)
    return json.dumps(data)


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack(ACME)


async def test_model_answers_route_and_set_the_turn(pack: Pack) -> None:
    provider = Scripted(_answers())
    out = await Preflight(pack, provider, Readers(pack, use_heads=False), "routing").run(
        "¿Hay una prueba gratuita?", "in", "en"
    )
    assert out.error is None and out.route.label == "faq:faq-trial"
    assert out.language == "es" and out.sentence == pack.template("preflight_faq", "es")
    assert out.steps_for_turn == 4 and out.hostile  # high reasoning, strong frustration
    (prompt,) = provider.prompts
    assert prompt.purpose == "preflight" and "faq-trial" in prompt.system
    assert out.model_calls[0]["purpose"] == "preflight" and out.model_calls[0]["tokens_out"] == 40
    read = out.sentiment_for_rules({"answer": "neutral", "outcome": "act", "score": 0.0})
    assert read["answer"] == "hostile"  # the playbook then blocks selling


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("not json at all", "not JSON"),
        (_answers(faq={"answer": "faq-made-up", "confidence": 0.99}), "invalid at faq/answer"),
        (_answers(person={"answer": True, "confidence": 1.5}), "invalid at person/confidence"),
        (json.dumps({"faq": {"answer": None, "confidence": 1}}), "is a required property"),
    ],
)
async def test_a_bad_model_answer_is_a_recorded_failure(pack: Pack, text: str, reason: str) -> None:
    out = await Preflight(pack, Scripted(text), Readers(pack, use_heads=False), "routing").run(
        "hello", "in", "en"
    )
    assert out.error is not None and reason in out.error
    assert not out.acting and out.route.label == "none"
    assert out.record()["answers"] == [] and out.record()["acted"] is None


async def test_a_slow_or_failing_model_falls_back(pack: Pack) -> None:
    pack.preflight = {**pack.preflight, "timeout_seconds": 0.05}
    try:
        slow = Preflight(pack, Scripted(_answers(), delay=5), Readers(pack, use_heads=False))
        slow.mode = "routing"
        out = await slow.run("hello", "in", "en")
        assert out.error == "the model took longer than 0.05 s"
        assert "timed out" in out.model_calls[0]["error"]
    finally:
        pack.preflight = {k: v for k, v in pack.preflight.items() if k != "timeout_seconds"}
    failing = Preflight(pack, Scripted(fail=True), Readers(pack, use_heads=False), "shadow")
    out = await failing.run("hello", "in", "en")
    assert out.error == "provider failed: 429 too many requests"


async def test_without_embeddings_keywords_match_the_faq(
    pack: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEBOT_EMBEDDINGS", "off")
    offline = Preflight(pack, _Offline(), Readers(pack, use_heads=False), "shadow")
    out = await offline.run("where are the invoices in billing?", "in", "en")
    faq = next(a for a in out.answers if a.question == "faq")
    assert faq.answer == "faq-invoice" and faq.source == "keywords"
    assert out.route.label == "faq:faq-invoice"
    # One keyword alone reads below the FAQ threshold: a weaker reader is held to the same bar.
    out = await offline.run("where do I find my invoices?", "in", "en")
    assert out.answers[1].answer == "faq-invoice" and not out.answers[1].above


async def test_out_of_scope_is_never_routed(pack: Pack) -> None:
    provider = Scripted(_answers(person={"answer": True, "confidence": 0.99}))
    out = await Preflight(pack, provider, Readers(pack, use_heads=False), "routing").run(
        "what's the weather", "out", "en"
    )
    assert out.route.label == "none" and "out of scope" in out.route.why


def test_person_request_goes_to_the_desk_the_pack_routes_its_topic_to(pack: Pack) -> None:
    from bot.preflight.answers import Answer, gated
    from bot.preflight.route import choose

    answers = gated(
        pack,
        [
            Answer("person", True, 0.95, "test"),
            Answer("helpdesk", "sales", 0.9, "test"),
        ],
    )
    assert choose(pack, answers, "in").label == "person:sales"
    weak = gated(pack, [Answer("person", True, 0.95, "t"), Answer("helpdesk", "sales", 0.2, "t")])
    assert choose(pack, weak, "in").label == "person:support"  # the default desk


def test_language_detector_keeps_to_the_packs_languages() -> None:
    assert detect("Quiero hablar con alguien", ["en", "fr", "de", "es"])[0] == "es"
    lang, p = detect("Ich brauche Hilfe mit meiner Rechnung", ["en", "fr", "de", "es"])
    assert lang == "de" and p > 0.9
    assert detect("Quiero hablar con alguien", ["en"]) == ("en", 1.0)
    assert detect("hi", ["en", "fr", "de", "es"])[1] < 0.9  # too short to switch language


def test_pack_preflight_section_is_validated(tmp_path: Path) -> None:
    copy = tmp_path / "acme"
    shutil.copytree(ACME, copy)
    meta = copy / "pack.yaml"
    meta.write_text(meta.read_text().replace("    sales: {intents", "    salez: {intents"))
    with pytest.raises(PackErrors, match="unknown help desk 'salez'"):
        load_pack(copy)
    meta.write_text(meta.read_text().replace("faq: 0.85", "faq: 1.5"))
    with pytest.raises(PackErrors, match=r"preflight\.thresholds\.faq"):
        load_pack(copy)


def test_outcome_off_records_nothing() -> None:
    record = Outcome("off").record()
    assert record["mode"] == "off" and record["answers"] == [] and record["decision"] is None


class _Offline(ModelProvider):
    name = "offline"

    async def execute(self, prompt: Prompt) -> Response:
        return Response("")


MENU = {
    "type": "card",
    "card": "escalation_menu",
    "helpdesk": "sales",
    "options": [
        {"helpdesk": "sales", "label": "Account executives <demos>", "recommended": True},
        {"helpdesk": "support", "label": "Staff", "recommended": False},
    ],
}


def test_slack_renders_the_escalation_menu() -> None:
    from gatebot_slack.blocks import render_reply

    rendered = render_reply(MENU)
    assert rendered is not None
    fallback, blocks = rendered
    assert fallback == "A person from sales will take over"
    text = blocks[0]["text"]["text"]
    assert "The sales team has your conversation." in text
    # A Block Kit button per team: a click says its label (plain_text: Slack shows it as is).
    (actions,) = [b for b in blocks if b["type"] == "actions"]
    assert [(b["text"]["text"], b["value"], b.get("style")) for b in actions["elements"]] == [
        ("Account executives <demos>", "Account executives <demos>", "primary"),
        ("Staff", "Staff", None),
    ]
    assert [b["action_id"] for b in actions["elements"]] == ["gatebot:menu:0", "gatebot:menu:1"]


def test_discord_renders_the_escalation_menu() -> None:
    from gatebot_discord.render import render_card

    out = render_card(MENU)
    assert out is not None
    embed = out.embeds[0].to_dict()
    assert embed["title"] == "A person will take over"
    # A button per team (the recommended one primary); a press says the label for the customer.
    assert out.view is not None
    pressed = [(b.label, b.custom_id, b.style.name) for b in out.view.children]  # type: ignore[attr-defined]
    assert pressed == [
        ("Account executives <demos>", "gatebot:offer:Account executives <demos>", "primary"),
        ("Staff", "gatebot:offer:Staff", "secondary"),
    ]


async def test_a_flow_or_check_under_way_holds_faq_and_flow_routes(pack: Pack) -> None:
    provider = Scripted(_answers(frustration={"answer": "low", "confidence": 0.9}))
    preflight = Preflight(pack, provider, Readers(pack, use_heads=False), "routing")
    out = await preflight.run("is there a free trial?", "in", "en", busy=True)
    assert out.route.label == "none" and "held" in out.route.why
    assert preflight.routed(out, "en") is None
    person = Scripted(_answers(person={"answer": True, "confidence": 0.97}))
    out = await Preflight(pack, person, Readers(pack, use_heads=False), "routing").run(
        "get me a person", "in", "en", busy=True
    )
    assert out.route.label == "person:sales"  # the model recommended sales above threshold

"""The turn loop end to end in process: decisions, the reply gate, recorders and recovery."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.app import App
from bot.config import Settings
from bot.errors import ProviderError
from bot.extend.provider import ModelProvider, Prompt, Response
from bot.extend.recorder import MemoryRecorder
from bot.hookspecs import hookimpl
from bot.store import Conversation
from bot.turn.agent import TurnResult
from bot.turn.record import RECORD_KEYS


async def say(app: App, conv: Conversation, text: str, n: list[int] = [0]) -> TurnResult:  # noqa: B006
    n[0] += 1
    fresh = app.store.get_conversation(conv.id)
    assert fresh is not None
    return await app.agent.handle(fresh, text, f"m{n[0]}")


@pytest.fixture
async def conv(app: App) -> Conversation:
    return app.store.create_conversation("web")[0]


async def test_every_key_present_on_every_turn(
    app: App, conv: Conversation, memory: MemoryRecorder
) -> None:
    for text in ("hello", "what's the weather in Paris", "I want a demo", "bob", "???"):
        await say(app, conv, text)
    assert len(memory.turns) == 5
    for record in memory.turns:
        assert tuple(record) == RECORD_KEYS
        assert set(record["message"]) == {"text", "channel", "external_id", "user"}
        assert set(record["move"]) == {"name", "why", "escalate"}
        assert set(record["reply"]) == {"text", "gate", "attempts"}
        assert record["legal"]["moves"] and record["legal"]["rule"]
        for read in record["reads"]:
            assert {
                "head",
                "version",
                "answer",
                "confidence",
                "gate",
                "threshold",
                "outcome",
            } <= set(read)


async def test_out_of_scope_is_declined_without_a_model_call(app: App, conv: Conversation) -> None:
    result = await say(app, conv, "what's the weather in Paris")
    record = result.record
    assert record["scope"] == {
        "verdict": "out",
        "rule": "out_of_scope:weather",
        "score": None,
        "threshold": None,
    }
    assert record["move"]["name"] == "decline" and record["legal"]["moves"] == ["decline"]
    assert record["model_calls"] == []
    assert "only help with questions about Acme Cloud" in result.replies[0]["text"]


async def test_asking_for_a_person_hands_off_and_queues(app: App, conv: Conversation) -> None:
    result = await say(app, conv, "I want to talk to a person")
    assert result.record["move"]["name"] == "handoff"
    assert result.record["legal"]["rule"] == "hard rule: hand off when asked"
    assert result.record["model_calls"] == []
    queued = app.store.escalations("open")
    assert [e.conversation_id for e in queued] == [conv.id] and queued[0].helpdesk == "support"
    stored = app.store.get_conversation(conv.id)
    assert stored is not None and stored.status == "handed_off"


async def test_demo_qualification_asks_blocking_slots_then_proposes(
    app: App, conv: Conversation
) -> None:
    first = await say(app, conv, "I'd like a demo")
    assert first.record["move"]["name"] == "ask"
    assert "blocked on use_case" in first.record["legal"]["rule"]
    second = await say(app, conv, "We want uptime checks for our API")
    assert second.record["values"][0]["slot"] == "use_case"
    assert second.record["values"][0]["outcome"] == "act"
    assert "team" in second.replies[0]["text"]
    await say(app, conv, "about 12")
    last = await say(app, conv, "you can reach me at dana@example.com")
    assert last.record["move"]["name"] == "propose"
    assert last.record["legal"] == {
        "moves": ["propose"],
        "rule": last.record["legal"]["rule"],
        "outcome": "demo",  # what the moves work toward, asked for or proposed
    }
    assert first.record["legal"]["outcome"] == "demo"
    assert {
        "type": "card",
        "card": "contact",
        "contact": "sales@acme.example",
        "outcome": "demo",
    } in last.replies


async def test_no_selling_after_a_no_unless_the_customer_asks(app: App, conv: Conversation) -> None:
    stop = await say(app, conv, "no thanks, not interested")
    assert stop.record["move"]["name"] == "stop"
    # Something else after the no: nothing is sold.
    other = await say(app, conv, "how do I reset my password?")
    assert "no selling after a no" in other.record["legal"]["rule"]
    assert not {"propose", "ask_signup"} & set(other.record["legal"]["moves"])
    # The customer's own request after the no is served, and selling may resume.
    later = await say(app, conv, "actually, can I get a demo?")
    assert later.record["move"]["name"] == "ask"
    assert "asked for demo themselves after a no" in later.record["legal"]["rule"]
    stored = app.store.get_conversation(conv.id)
    assert stored is not None and stored.state["stopped"] is False


async def test_faq_answer_cites_retrieved_fact(app: App, conv: Conversation) -> None:
    result = await say(app, conv, "How do I reset my password?")
    assert result.record["facts"][0] == {"key": "faq-password", "source": "faq", "mode": "faq"}
    assert result.replies[0]["citations"][0]["key"] == "faq-password"
    assert "[faq-password]" not in result.replies[0]["text"]


async def test_unanswerable_question_is_noted_not_invented(app: App, conv: Conversation) -> None:
    result = await say(app, conv, "does the mobile app support offline mode")
    assert result.record["facts"] == [] and result.record["model_calls"] == []
    stored = app.store.get_conversation(conv.id)
    assert stored is not None and stored.state["unanswered"] == [
        "does the mobile app support offline mode"
    ]


async def test_values_not_written_by_the_customer_are_rejected(
    app: App, conv: Conversation
) -> None:
    await say(app, conv, "I'd like a demo")
    await say(app, conv, "monitoring")
    result = await say(app, conv, "twelve of us")  # no number was written: nothing stored
    assert all(v["outcome"] != "act" or v["slot"] != "team_size" for v in result.record["values"])


class Adversary(ModelProvider):
    """A model that breaks every rule the reply gate enforces, one draft after another."""

    name = "adversary"
    drafts: list[str] = []

    async def execute(self, prompt: Prompt) -> Response:
        self.prompts.append(prompt)
        return Response(
            self.drafts[len(self.prompts) - 1 if len(self.prompts) <= len(self.drafts) else -1],
            tokens_in=10,
            tokens_out=5,
        )

    def __init__(self, model: str = "") -> None:
        super().__init__(model or "evil-1")
        self.prompts: list[Prompt] = []


def _with_provider(settings: Settings, provider: type[ModelProvider]) -> App:
    class Plugin:
        @hookimpl
        def register_model_providers(self, register: Callable[[str, Any], None]) -> None:
            register(provider.name, provider)

    settings.model = provider.name
    return App(settings, extra_plugins=[Plugin()], recorders=[MemoryRecorder()])


DOCKER_QUESTION = "Does Pipelines support Docker builds?"


async def one_turn(app: App, text: str = DOCKER_QUESTION) -> TurnResult:
    """Start the app, run one turn in a new conversation, stop the app."""
    await app.start(channels=False)
    try:
        conv = app.store.create_conversation("web")[0]
        return await app.agent.handle(conv, text, "x")
    finally:
        await app.stop()


@pytest.mark.parametrize(
    ("draft", "reason"),
    [
        ("Yes, see [faq-made-up].", "not retrieved this turn"),
        ("Docker builds cost $42 a month [faq-docker].", "price"),
        ("We guarantee Docker works [faq-docker].", "guarantee"),
        ("Docker is better than Globex [faq-docker].", "Globex"),
        ("Docker? Really? [faq-docker]", "questions"),
    ],
)
async def test_reply_gate_refuses_each_bad_draft_twice_then_queues(
    settings: Settings, draft: str, reason: str
) -> None:
    Adversary.drafts = [draft]
    app = _with_provider(settings, Adversary)
    result = await one_turn(app)
    record = result.record
    assert record["reply"]["attempts"] == 2 and record["reply"]["gate"]["passed"] is False
    assert any(reason in r for r in record["reply"]["gate"]["reasons"])
    assert len(record["model_calls"]) == 2
    assert record["model_calls"][0]["provider"] == "adversary"
    # The retry told the model why; the customer got the honest hand-off line, not the draft.
    assert "refused" in app.provider.prompts[1].system  # type: ignore[attr-defined]
    assert "passed your question to a person" in result.replies[0]["text"]
    assert app.store.escalations("open")[0].reason.startswith("reply gate refused two drafts")


async def test_a_good_second_draft_is_used(settings: Settings) -> None:
    Adversary.drafts = ["Cheaper than Globex [faq-docker].", "Yes, natively [faq-docker]."]
    app = _with_provider(settings, Adversary)
    result = await one_turn(app)
    assert result.record["reply"] == {
        "text": "Yes, natively.",
        "gate": {"passed": True, "reasons": [], "rules": []},
        "attempts": 2,
    }


class Broken(ModelProvider):
    name = "broken"

    async def execute(self, prompt: Prompt) -> Response:
        raise ProviderError("HTTP 503 from upstream")


async def test_provider_failure_is_reported_honestly(settings: Settings) -> None:
    app = _with_provider(settings, Broken)
    result = await one_turn(app)
    assert result.record["reply"]["gate"]["passed"] is False
    assert "503" in result.record["reply"]["gate"]["reasons"][0]
    assert "don't have a confirmed answer" in result.replies[0]["text"]
    assert app.store.escalations("open")


async def test_jsonl_and_console_recorders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(
        pack=Path(__file__).parent.parent / "knowledge" / "acme",
        data_dir=tmp_path,
        recorders=["jsonl", "console"],
    )
    app = App(settings)
    await app.start(channels=False)
    try:
        conv = app.store.create_conversation("web")[0]
        await app.agent.handle(conv, "hello", "1")
    finally:
        await app.stop()
    lines = (tmp_path / "turns.jsonl").read_text().splitlines()
    assert len(lines) == 1 and tuple(sorted(json.loads(lines[0]))) == tuple(sorted(RECORD_KEYS))
    assert "move    answer" in capsys.readouterr().err


async def test_a_turn_interrupted_by_a_crash_runs_at_start(settings: Settings) -> None:
    app = App(settings, recorders=[MemoryRecorder()])
    await app.start(channels=False)
    conv = app.store.create_conversation("web")[0]
    # Stored under the web channel's inbox key (conversation:client id), then the process died.
    app.store.receive(conv.id, "web", f"{conv.id}:client-7", "hello")
    await app.stop()
    memory = MemoryRecorder()
    again = App(settings, recorders=[memory])
    await again.start(channels=False)
    try:
        assert [t["message"]["text"] for t in memory.turns] == ["hello"]
        # The record names the client's id, as the turn would have had it run at once.
        assert memory.turns[0]["message"]["external_id"] == "client-7"
        assert again.store.pending() == []
    finally:
        await again.stop()


async def test_a_broken_recorder_never_fails_the_turn(settings: Settings) -> None:
    class Exploding(MemoryRecorder):
        async def record(self, turn: dict[str, Any]) -> None:
            raise RuntimeError("disk full")

    app = App(settings, recorders=[Exploding()])
    await app.start(channels=False)
    try:
        conv = app.store.create_conversation("web")[0]
        result = await app.agent.handle(conv, "hello", "1")
        assert result.replies and app.store.turns(conv.id)
    finally:
        await app.stop()


class Reader(ModelProvider):
    """A model that reads values: some it was told, some it made up or reworded."""

    name = "reader"
    reads_values = True
    proposals: str = ""

    def __init__(self, model: str = "") -> None:
        super().__init__(model or "reader-1")
        self.purposes: list[str] = []

    async def execute(self, prompt: Prompt) -> Response:
        self.purposes.append(prompt.purpose)
        if prompt.purpose == "values":
            return Response(self.proposals, tokens_in=30, tokens_out=12)
        return Response(
            f"{prompt.context['facts'][0]['text']} [{prompt.context['facts'][0]['key']}]"
        )


async def test_model_proposed_values_must_be_verbatim(settings: Settings) -> None:
    Reader.proposals = json.dumps(
        {
            "values": [
                {"slot": "use_case", "value": "monitoring our public APIs", "confidence": 0.99},
                {"slot": "email", "value": "dana@example.org", "confidence": 0.97},
                {"slot": "team_size", "value": "12", "confidence": 0.96},
                {"slot": "salary", "value": "a lot", "confidence": 1.0},
            ]
        }
    )
    app = _with_provider(settings, Reader)
    await app.start(channels=False)
    try:
        conv = app.store.create_conversation("web")[0]
        await app.agent.handle(conv, "I'd like a demo", "1")
        fresh = app.store.get_conversation(conv.id)
        assert fresh is not None
        result = await app.agent.handle(fresh, "we are 12 people and want uptime checks", "2")
    finally:
        await app.stop()
    values = {v["slot"]: v for v in result.record["values"]}
    assert values["use_case"]["outcome"] == "skip"
    assert values["use_case"]["rejected"] == [
        {"value": "monitoring our public APIs", "reason": "not verbatim in customer text"}
    ]
    assert values["email"]["rejected"][0]["reason"] == "not verbatim in customer text"
    assert values["team_size"]["outcome"] == "act" and values["team_size"]["value"] == "12"
    assert "salary" not in values  # a slot the pack does not declare is never read
    calls = result.record["model_calls"]
    assert calls[0]["purpose"] == "values" and calls[0]["tokens_in"] == 30


async def test_deterministic_moves_make_no_model_call_even_with_a_reading_model(
    settings: Settings,
) -> None:
    Reader.proposals = "{}"
    app = _with_provider(settings, Reader)
    await app.start(channels=False)
    try:
        for n, text in enumerate(
            [
                "what's the weather in Paris",
                "I want to talk to a person",
                "hello",
                "no thanks, not interested",
            ]
        ):
            conv = app.store.create_conversation("web")[0]
            result = await app.agent.handle(conv, text, str(n))
            assert result.record["model_calls"] == [], text
    finally:
        await app.stop()
    assert app.provider.purposes == []  # type: ignore[attr-defined]


async def test_malformed_model_values_are_ignored(settings: Settings) -> None:
    Reader.proposals = "Sure! Here you go: {values: [oops"
    app = _with_provider(settings, Reader)
    result = await one_turn(app, "I'd like a demo")
    assert result.record["move"]["name"] == "ask"
    assert result.record["model_calls"][0]["purpose"] == "values"


async def test_forecast_is_recorded_unvalidated_and_rises_with_qualification(
    app: App, conv: Conversation
) -> None:
    first = await say(app, conv, "hello")
    assert first.record["forecast"]["validated"] is False
    assert first.record["forecast"]["stage"] == "discover"
    await say(app, conv, "I'd like a demo")
    await say(app, conv, "We want uptime checks for our API")
    await say(app, conv, "12")
    last = await say(app, conv, "dana@example.com")
    assert last.record["forecast"]["stage"] == "propose"
    assert last.record["forecast"]["p_convert"] > first.record["forecast"]["p_convert"]


async def test_uncovered_requests_are_kept_on_the_conversation(
    app: App, conv: Conversation
) -> None:
    await say(app, conv, "what's the weather in Paris")
    stored = app.store.get_conversation(conv.id)
    assert stored is not None and stored.state["uncovered"] == ["what's the weather in Paris"]

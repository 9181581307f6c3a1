"""The act stage: deterministic moves from templates, generative ones through a provider and the
reply gate. Only a generative move calls a model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot import replygate
from bot.errors import ProviderError
from bot.knowledge import Fact, Retriever
from bot.packs import Pack
from bot.playbook import Decision
from bot.providers import ModelProvider, Prompt, call

SYSTEM = (
    "You write one reply for {company}'s customer assistant. Use only the facts listed, cite each "
    "fact you use as [key], state no price, amount or guarantee, name no company other than "
    "{company}, and ask at most one question."
)


@dataclass
class Acted:
    replies: list[dict[str, Any]]
    facts: list[Fact] = field(default_factory=list)
    reply: dict[str, Any] = field(
        default_factory=lambda: {
            "text": None,
            "gate": {"passed": None, "reasons": []},
            "attempts": 0,
        }
    )
    model_calls: list[dict[str, Any]] = field(default_factory=list)
    escalate: str | None = None  # a reason to queue the question for a person
    unanswered: str | None = None


def text_reply(text: str, citations: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"type": "text", "text": text, "citations": citations or []}


class Actor:
    def __init__(self, pack: Pack, provider: ModelProvider, retriever: Retriever) -> None:
        self.pack, self.provider, self.retriever = pack, provider, retriever

    def template(self, name: str, language: str, **values: str) -> str:
        if name not in self.pack.templates.get(language, self.pack.templates[self.pack.language]):
            name = "fallback"
        return self.pack.template(
            name, language, contact=self.pack.booking.get("contact", ""), **values
        )

    async def act(
        self, decision: Decision, text: str, history: list[dict[str, str]], language: str
    ) -> Acted:
        move = decision.move
        if move == "ask" and decision.slot:
            slot = self.pack.slot(decision.slot)
            question = slot.question if slot else decision.slot
            name = decision.template or "ask"
            return Acted([text_reply(self.template(name, language, question=question))])
        if move == "confirm" and decision.slot:
            slot = self.pack.slot(decision.slot)
            label = slot.label if slot else decision.slot
            text_ = self.template("check_value", language, label=label, value=decision.value or "")
            return Acted([text_reply(text_)])
        if move == "clarify":
            options = " or ".join(self._describe(o) for o in decision.options) or "something else"
            return Acted([text_reply(self.template("clarify", language, options=options))])
        if move == "propose":
            return Acted(
                [
                    text_reply(self.template(decision.template or "fallback", language)),
                    *self._closing_card(decision.outcome),
                ]
            )
        if move == "answer" and not decision.template:
            return await self._answer(decision.question or text, history, language)
        name = decision.template or move
        return Acted([text_reply(self.template(name, language))])

    def _describe(self, intent_name: str) -> str:
        intent = self.pack.intent(intent_name)
        if intent and intent.description:
            return intent.description.rstrip(".").lower()
        return intent.examples[0] if intent else intent_name

    def _closing_card(self, outcome: str | None) -> list[dict[str, Any]]:
        if outcome not in ("demo", "engineer"):
            return []
        booking = self.pack.booking
        if booking.get("enabled") and booking.get("url"):
            return [{"type": "card", "card": "booking", "url": booking["url"], "outcome": outcome}]
        return [
            {
                "type": "card",
                "card": "contact",
                "contact": booking.get("contact", ""),
                "outcome": outcome,
            }
        ]

    async def _answer(self, text: str, history: list[dict[str, str]], language: str) -> Acted:
        facts = await self.retriever.search(text, k=3)
        if not facts:
            return Acted([text_reply(self.template("no_answer", language))], unanswered=text)
        acted = Acted([], facts=facts)
        keys = {f.key for f in facts}
        reasons: list[str] = []
        for attempt in (1, 2):
            acted.reply["attempts"] = attempt
            try:
                draft = await self._draft(text, history, facts, reasons, acted)
            except ProviderError as exc:
                # Honest fallback: say we could not answer, queue it; never pretend.
                acted.reply["gate"] = {"passed": False, "reasons": [f"provider failed: {exc}"]}
                acted.replies = [text_reply(self.template("no_answer", language))]
                acted.escalate = f"model provider failed: {exc}"
                return acted
            result = replygate.check(draft, keys, self.pack.excluded_names)
            acted.reply["gate"] = {"passed": result.passed, "reasons": result.reasons}
            if result.passed:
                cited = [f for f in facts if f.key in result.citations]
                acted.facts = cited or facts
                citations = [{"key": f.key, "title": f.title, "source": f.source} for f in cited]
                acted.replies = [text_reply(replygate.strip_citations(draft), citations)]
                acted.reply["text"] = acted.replies[0]["text"]
                return acted
            reasons = result.reasons
        acted.replies = [text_reply(self.template("queued", language))]
        acted.reply["text"] = acted.replies[0]["text"]
        acted.escalate = "reply gate refused two drafts: " + "; ".join(reasons)
        return acted

    async def _draft(
        self,
        text: str,
        history: list[dict[str, str]],
        facts: list[Fact],
        reasons: list[str],
        acted: Acted,
    ) -> str:
        fact_lines = "\n".join(f"[{f.key}] {f.text}" for f in facts)
        system = SYSTEM.format(company=self.pack.company) + "\n\nFacts:\n" + fact_lines
        if reasons:
            system += "\n\nYour previous draft was refused because it " + "; ".join(reasons) + "."
        prompt = Prompt(
            purpose="reply",
            system=system,
            messages=[*history, {"role": "user", "content": text}],
            context={
                "move": "answer",
                "question": text,
                "reasons": reasons,
                "facts": [
                    {"key": f.key, "text": f.text, "title": f.title, "source": f.source}
                    for f in facts
                ],
            },
        )
        response = await call(self.provider, prompt, acted.model_calls)
        return response.text

"""The act stage: deterministic moves from templates, generative ones through a provider and the
reply gate. Only a generative move calls a model.

An answer searches the knowledge first, through the same ``knowledge.search`` tool a model gets,
so the record and the widget show that search like any other tool event. A provider that calls
tools then runs the bounded loop (:mod:`bot.turn.toolloop`): it may search again and read source
windows, up to the step limit. One that does not (the offline provider) answers from that first
search. Either way the reply gate checks citations against exactly the facts those tool calls
returned this turn (:class:`bot.turn.knowledge_tools.FactLedger`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.config import search_steps_from_env
from bot.errors import ProviderError
from bot.extend.provider import ModelProvider, Prompt, call
from bot.extend.retriever import Fact, Retriever
from bot.extend.tool import ToolRunner
from bot.packs import Pack
from bot.turn import replygate
from bot.turn.decide import Decision
from bot.turn.knowledge_tools import READ, SEARCH, FactLedger, knowledge_tools
from bot.turn.toolloop import run_tool_loop

Publish = Callable[[dict[str, Any]], None]

SYSTEM = (
    "You write one reply for {company}'s customer assistant. Use only the facts listed, cite each "
    "fact you use as [key], state no price, amount or guarantee, name no company other than "
    "{company}, and ask at most one question."
)
TOOLS_NOTE = (
    "If the facts do not answer the question, search the help center with "
    f"{SEARCH} or read a source window with {READ}; cite only keys these returned."
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
    tools: list[dict[str, Any]] = field(default_factory=list)  # tool lifecycle events


def text_reply(text: str, citations: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"type": "text", "text": text, "citations": citations or []}


class Actor:
    def __init__(
        self,
        pack: Pack,
        provider: ModelProvider,
        retriever: Retriever,
        search_steps: int | None = None,
    ) -> None:
        self.pack, self.provider, self.retriever = pack, provider, retriever
        #: Tool rounds a model may take per answer (GATEBOT_SEARCH_STEPS, default 4).
        self.search_steps = search_steps_from_env() if search_steps is None else search_steps

    def template(self, name: str, language: str, **values: str) -> str:
        if name not in self.pack.templates.get(language, self.pack.templates[self.pack.language]):
            name = "fallback"
        return self.pack.template(
            name, language, contact=self.pack.booking.get("contact", ""), **values
        )

    async def act(
        self,
        decision: Decision,
        text: str,
        history: list[dict[str, str]],
        language: str,
        *,
        publish: Publish | None = None,
        search_steps: int | None = None,
    ) -> Acted:
        """The move's replies. ``publish`` streams tool events live (the conversation's events);
        ``search_steps`` overrides the step limit for this turn."""
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
            steps = self.search_steps if search_steps is None else search_steps
            return await self._answer(decision.question or text, history, language, publish, steps)
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

    async def _answer(
        self,
        text: str,
        history: list[dict[str, str]],
        language: str,
        publish: Publish | None,
        steps: int,
    ) -> Acted:
        registry, ledger = knowledge_tools(self.retriever)
        runner = ToolRunner(registry, publish)
        acted = Acted([])
        # The first search is the runtime's own (the schema caps a query at 500 characters).
        await runner.call(SEARCH, {"query": text[:500], "k": 3}, {}, events=acted.tools)
        tooled = self.provider.calls_tools
        if not ledger and not tooled:
            return self._no_answer(acted, text, language)
        messages: list[dict[str, Any]] = [*history, {"role": "user", "content": text}]
        reasons: list[str] = []
        for attempt in (1, 2):
            acted.reply["attempts"] = attempt
            try:
                if tooled:
                    draft, messages, steps = await self._draft_with_tools(
                        text, messages, ledger, reasons, acted, runner, steps
                    )
                else:
                    draft = await self._draft(text, history, ledger.ordered(), reasons, acted)
            except ProviderError as exc:
                # Honest fallback: say we could not answer, queue it; never pretend.
                acted.reply["gate"] = {"passed": False, "reasons": [f"provider failed: {exc}"]}
                acted.replies = [text_reply(self.template("no_answer", language))]
                acted.escalate = f"model provider failed: {exc}"
                return acted
            if not ledger:
                # Nothing was found to answer from: no model text can be a grounded answer.
                return self._no_answer(acted, text, language)
            result = replygate.check(draft, ledger.keys, self.pack.excluded_names)
            acted.reply["gate"] = {"passed": result.passed, "reasons": result.reasons}
            if result.passed:
                facts = ledger.ordered()
                cited = [f for f in facts if f.key in result.citations]
                acted.facts = cited or facts
                citations = [{"key": f.key, "title": f.title, "source": f.source} for f in cited]
                acted.replies = [text_reply(replygate.strip_citations(draft), citations)]
                acted.reply["text"] = acted.replies[0]["text"]
                return acted
            reasons = result.reasons
        acted.facts = ledger.ordered()
        acted.replies = [text_reply(self.template("queued", language))]
        acted.reply["text"] = acted.replies[0]["text"]
        acted.escalate = "reply gate refused two drafts: " + "; ".join(reasons)
        return acted

    def _no_answer(self, acted: Acted, text: str, language: str) -> Acted:
        acted.replies = [text_reply(self.template("no_answer", language))]
        acted.unanswered = text
        return acted

    def _system(self, facts: list[Fact], reasons: list[str], tools: bool = False) -> str:
        fact_lines = "\n".join(f"[{f.key}] {f.text}" for f in facts) or "(none found yet)"
        system = SYSTEM.format(company=self.pack.company)
        if tools:
            system += " " + TOOLS_NOTE
        system += "\n\nFacts:\n" + fact_lines
        if reasons:
            system += "\n\nYour previous draft was refused because it " + "; ".join(reasons) + "."
        return system

    @staticmethod
    def _context(text: str, facts: list[Fact], reasons: list[str]) -> dict[str, Any]:
        return {
            "move": "answer",
            "question": text,
            "reasons": reasons,
            "facts": [
                {"key": f.key, "text": f.text, "title": f.title, "source": f.source} for f in facts
            ],
        }

    async def _draft_with_tools(
        self,
        text: str,
        messages: list[dict[str, Any]],
        ledger: FactLedger,
        reasons: list[str],
        acted: Acted,
        runner: ToolRunner,
        steps: int,
    ) -> tuple[str, list[dict[str, Any]], int]:
        """One draft through the bounded loop. Returns the draft, the messages with the exchange
        so far (a retry carries on from them rather than searching again) and the steps left:
        the limit holds for the whole answer, retry included."""
        facts = ledger.ordered()
        prompt = Prompt(
            purpose="reply",
            system=self._system(facts, reasons, tools=True),
            messages=messages,
            context=self._context(text, facts, reasons),
        )
        loop = await run_tool_loop(
            self.provider,
            prompt,
            runner,
            model_calls=acted.model_calls,
            events=acted.tools,
            max_steps=steps,
        )
        return loop.response.text, loop.messages, steps - loop.steps

    async def _draft(
        self,
        text: str,
        history: list[dict[str, str]],
        facts: list[Fact],
        reasons: list[str],
        acted: Acted,
    ) -> str:
        prompt = Prompt(
            purpose="reply",
            system=self._system(facts, reasons),
            messages=[*history, {"role": "user", "content": text}],
            context=self._context(text, facts, reasons),
        )
        response = await call(self.provider, prompt, acted.model_calls)
        return response.text

"""The act stage: deterministic moves from templates, generative ones through a provider and the
reply gate. Only a generative move calls a model.

An answer searches the knowledge first, through the same ``knowledge.search`` tool a model gets,
so the record and the widget show that search like any other tool event. A provider that calls
tools then runs the bounded loop (:mod:`bot.turn.toolloop`): it may search again and read source
windows, up to the step limit. One that does not (the offline provider) answers from that first
search. Either way the reply gate checks citations against exactly the facts those tool calls
returned this turn (:class:`bot.turn.knowledge_tools.FactLedger`); drafting, gating and the one
retry are :mod:`bot.turn.drafting`'s, shared with a flow's reply step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.config import search_steps_from_env
from bot.data import DataAccess, read_for_answer
from bot.extend.provider import ModelCall, ModelProvider
from bot.extend.retriever import Fact, Retriever
from bot.extend.tool import ToolEvent, ToolRunner, identity_context
from bot.packs import Pack
from bot.turn import answerable, replygate
from bot.turn.decide import LEADS, Decision
from bot.turn.drafting import (
    NOTHING_FOUND,
    PROVIDER_FAILED,
    Drafted,
    ToolLoop,
    draft,
)
from bot.turn.knowledge_tools import READ, SEARCH, knowledge_tools
from bot.turn.queryvec import MessageVectors
from bot.turn.record import new_reply
from bot.turn.turn import Read, ReplyPart

Publish = Callable[[dict[str, Any]], None]

#: The answerability gate for a message the domain check kept only just (``domain:edge``: no
#: declared product, topic or intent word, and closeness within a hair of the fitted threshold).
#: Such a message is as likely off-topic as on it, so the nearest passage must fit it better
#: than the pack's gate asks: "how do I reset my iphone to factory settings" read 0.64 against the
#: password entry and was answered from it.
EDGE_ANSWERABLE = 0.8

SYSTEM = (
    "You write one reply for {company}'s customer assistant. Use only the facts listed, cite each "
    "fact you use as [key], state no price, amount, guarantee, discount or offer, never say that "
    "something was done, give no link or address the facts do not, write plain text without "
    "markup, name no company other than {company}, and ask at most one question."
)
TOOLS_NOTE = (
    "If the facts do not answer the question, search the help center with "
    f"{SEARCH} or read a source window with {READ}; cite only keys these returned."
)


@dataclass
class Acted:
    replies: list[dict[str, Any]]
    facts: list[Fact] = field(default_factory=list)
    reply: ReplyPart = field(default_factory=new_reply)
    model_calls: list[ModelCall] = field(default_factory=list)
    escalate: str | None = None  # a reason to queue the question for a person
    unanswered: str | None = None
    tools: list[ToolEvent] = field(default_factory=list)  # tool lifecycle events
    reads: list[Read] = field(default_factory=list)  # the answerability check's read
    query: str | None = None  # what an answer's knowledge search read


def text_reply(text: str, citations: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"type": "text", "text": text, "citations": citations or []}


def take_draft(acted: Acted, drafted: Drafted) -> Acted:
    """A drafting result's part of what was done, recorded alike for an answer and a flow's
    reply step: the gate and attempts, the facts it used, its model calls and tool events, and
    its reply when one passed. What the customer hears when none passed is the caller's."""
    acted.reply["gate"] = drafted.gate
    acted.reply["attempts"] = drafted.attempts
    acted.facts.extend(f for f in drafted.facts if f not in acted.facts)
    acted.model_calls.extend(drafted.model_calls)
    acted.tools.extend(drafted.tools)
    if drafted.text is not None:
        acted.replies.append(text_reply(drafted.text, drafted.citations))
    return acted


class Actor:
    def __init__(
        self,
        pack: Pack,
        provider: ModelProvider,
        retriever: Retriever,
        search_steps: int | None = None,
        vectors: MessageVectors | None = None,
    ) -> None:
        self.pack, self.provider, self.retriever = pack, provider, retriever
        #: The message's embedding, made once per turn, for the retriever (None: it embeds).
        self.vectors = vectors or MessageVectors(None)
        #: Tool rounds a model may take per answer (GATEBOT_SEARCH_STEPS, default 4).
        self.search_steps = search_steps_from_env() if search_steps is None else search_steps
        #: Governed data (bot.data), set by the app when the pack has a data.yaml.
        self.data: DataAccess | None = None

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
        verified_user_id: str | None = None,
        values: dict[str, Any] | None = None,
        intent: str | None = None,
        edge: bool = False,
    ) -> Acted:
        """The move's replies. ``publish`` streams tool events live (the conversation's events);
        ``search_steps`` overrides the step limit for this turn; ``verified_user_id`` is the
        conversation's verified identity, the only source of the tools' ``identity`` entry;
        ``values`` the conversation's verified values and ``intent`` the one the answer serves
        (a governed read's row policy and its tables, bot.data); ``edge``: the domain check kept
        the message only just (see :data:`EDGE_ANSWERABLE`)."""
        move = decision.move
        if move == "ask" and decision.slot:
            slot = self.pack.slot(decision.slot)
            question = decision.wording or (slot.question if slot else decision.slot)
            name = decision.template or "ask"
            return Acted([text_reply(self.template(name, language, question=question))])
        if move == "confirm" and decision.slot:
            slot = self.pack.slot(decision.slot)
            label = self._line(
                f"slot_label_{decision.slot}", language, slot.label if slot else decision.slot
            )
            text_ = self.template("check_value", language, label=label, value=decision.value or "")
            return Acted([text_reply(text_)])
        if move == "clarify":
            options = " or ".join(self._describe(o) for o in decision.options) or "something else"
            return Acted([text_reply(self.template("clarify", language, options=options))])
        if move == "propose":
            name = decision.template or "fallback"
            if decision.outcome in LEADS and self.pack.helpdesk_for("lead") is None:
                # Nobody would receive the lead: never promise that the team will reach out.
                name = "propose_contact"
            return Acted(
                [text_reply(self.template(name, language)), *self._closing_card(decision.outcome)]
            )
        if move == "acknowledge":
            said = self.template(decision.template or "acknowledge", language)
            return Acted([text_reply(said), self._offer_person(language)])
        if move == "answer" and not decision.template:
            steps = self.search_steps if search_steps is None else search_steps
            question = decision.question or text
            who = {**identity_context(verified_user_id), "values": values or {}, "intent": intent}
            return await self._answer(question, history, language, publish, steps, who, edge)
        name = decision.template or move
        return Acted([text_reply(self.template(name, language, product=decision.product or ""))])

    def _describe(self, intent_name: str) -> str:
        intent = self.pack.intent(intent_name)
        if intent and intent.description:
            return intent.description.rstrip(".").lower()
        return intent.examples[0] if intent else intent_name

    def _closing_card(self, outcome: str | None) -> list[dict[str, Any]]:
        if outcome not in LEADS:
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
        context: dict[str, Any] | None = None,
        edge: bool = False,
    ) -> Acted:
        registry, ledger = knowledge_tools(self.retriever, self.vectors)
        for tool in self.data.tools(ledger.add) if self.data else []:
            registry.add(tool)
        runner = ToolRunner(registry, publish)
        acted = Acted([], query=text)
        context = context or {}
        # Rows the policy allows answer first: they are this customer's own, not the help pages.
        await read_for_answer(self.data, context.get("intent"), context, runner, acted.tools)
        has_rows = bool(ledger)
        threshold = self._answerable_gate(edge)
        vector = await self.vectors.get(text[:500]) if self.retriever.takes_vector else None
        checked = await answerable.check(self.retriever, text[:500], threshold, vector=vector)
        if checked is not None:
            acted.reads.append(checked.read)
            if not checked.answers and not has_rows:
                return self._not_in_knowledge(acted, text, language)
            # The fact the check vouched for comes first: it is the one an answer is worded from.
            ledger.add(checked.facts[:1])
        # The first search is the runtime's own (the schema caps a query at 500 characters).
        await runner.call(SEARCH, {"query": text[:500], "k": 3}, {}, events=acted.tools)
        if checked is None:
            acted.reads.append(answerable.retriever_read(ledger.ordered(), threshold))
        tooled = self.provider.calls_tools
        if not ledger and not tooled:
            return self._no_answer(acted, text, language)
        system = SYSTEM.format(company=self.pack.company) + (" " + TOOLS_NOTE if tooled else "")
        drafted = await draft(
            self.provider,
            text,
            ledger,
            system,
            self.pack.excluded_names,
            history=history,
            tools=ToolLoop(runner, steps, context) if tooled else None,
            grounded=True,
            allow=replygate.allowances(self.pack),
        )
        take_draft(acted, drafted)
        if drafted.text is not None and language != self.pack.language:
            # The facts are in the pack's language: say so, in the customer's, before them.
            said = self._line("answer_in_pack_language", language, "")
            acted.replies[:0] = [text_reply(said)] if said else []
        if drafted.failed == NOTHING_FOUND:
            return self._no_answer(acted, text, language)
        if drafted.failed:
            # A person answers the question instead, and the customer is told so honestly.
            said = "no_answer" if drafted.failed == PROVIDER_FAILED else "queued"
            acted.replies = [text_reply(self.template(said, language))]
            acted.escalate = drafted.why
        return acted

    def _answerable_gate(self, edge: bool) -> float:
        """The pack's answerability gate, raised for a message kept in scope only just."""
        gate = self.pack.gates[answerable.GATE]
        return max(gate, EDGE_ANSWERABLE) if edge else gate

    def _not_in_knowledge(self, acted: Acted, text: str, language: str) -> Acted:
        """Below the answerability gate: nothing asserted, no model called; the customer hears
        that this is not something the agent can confirm and is offered a person (a card whose
        button sends the pack's own words for asking for one, which the hand-off intent reads)."""
        said = "not_in_knowledge" if self._has("not_in_knowledge") else "no_answer"
        if language != self.pack.language and self._has("not_in_knowledge_language"):
            said = "not_in_knowledge_language"  # answers come from pages in the pack's language
        acted.replies = [text_reply(self.template(said, language)), self._offer_person(language)]
        acted.unanswered = text
        return acted

    def _offer_person(self, language: str) -> dict[str, Any]:
        """A card whose button sends the pack's own words for asking for a person (which the
        hand-off intent reads), so accepting the offer is one click."""
        return {
            "type": "card",
            "card": "offer_person",
            "label": self._line("offer_person_button", language, "Talk to a person"),
            "message": self._line("offer_person_message", language, "I want to talk to a person"),
        }

    def _has(self, name: str) -> bool:
        return name in self.pack.templates[self.pack.language]

    def _line(self, name: str, language: str, default: str) -> str:
        """A card's words from the pack, or plain English for a pack that has none yet."""
        return self.template(name, language) if self._has(name) else default

    def _no_answer(self, acted: Acted, text: str, language: str) -> Acted:
        acted.replies = [text_reply(self.template("no_answer", language))]
        acted.unanswered = text
        return acted

"""The loaded pack: plain dataclasses the agent reads. Built only from validated files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.text import normalise

DEFAULT_GATES = {
    "intent": 0.9,
    "value": 0.9,
    "yesNo": 0.6,
    "confirm": 0.8,
    "policy": 0.9,
    "repeat": 0.7,
    # Sentiment only ever narrows what the agent may do (no selling to a hostile visitor), so its
    # gate can sit lower than the ones that make the agent act.
    "sentiment": 0.6,
    # Not a confidence to reach but a doubt to stay under: after a repeat step's calls, any
    # record whose P(wrong) (or the message's P(missing)) is at least this is read back.
    "readBackAt": 0.3,
    # An unsure intent offers its likeliest options ("did you mean X or Y?") only when each
    # reaches this probability: never a 1.4% one.
    "clarifyFloor": 0.15,
    # The answerability check (bot.turn.answerable): answer from the best fact only when
    # P(it answers) reaches this; at or below 1 - this it is a confident "not in the knowledge".
    "answerable": 0.6,
    # A flow starts from its examples when the pack line nearest the message is one of them at
    # this cosine or more (bot.flows.trigger).
    "flowExample": 0.55,
}


@dataclass
class Product:
    key: str
    name: str
    keywords: list[str]
    description: str = ""


@dataclass
class ScopeRule:
    key: str
    keywords: list[str]
    template: str | None = None
    #: An out-of-scope topic that declines even where the pack's topic or intent words match (not
    #: its products): "cancel my Netflix subscription" is in billing words, not about the
    #: company's billing; "get spotify to refund me" asks for no refund of the company's.
    despite_topics: bool = False
    #: Products' keywords the topic's phrases put in another sense anywhere in the message: "my
    #: second monitor flickers when I plug in HDMI" is about a screen, though "monitor" names a
    #: product (only where the topic is ``despite_topics`` too). The product's other words
    #: ("uptime alerts on a 27 inch TV") still keep the message.
    despite_product_words: list[str] = field(default_factory=list)


@dataclass
class Intent:
    name: str
    examples: list[str]
    keywords: list[str] = field(default_factory=list)
    description: str = ""
    move: str | None = None
    outcome: str | None = None
    needs: list[str] = field(default_factory=list)
    template: str | None = None


@dataclass
class Slot:
    name: str
    question: str
    type: str = "text"
    alternative: str | None = None
    label: str = ""  # how a reply names it ("order number"); defaults to the name

    def __post_init__(self) -> None:
        self.label = self.label or self.name.replace("_", " ")


@dataclass
class OutcomeRule:
    outcome: str
    reason: str
    when_intent: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)


@dataclass
class FaqEntry:
    key: str
    question: str
    answer: str
    keywords: list[str] = field(default_factory=list)
    #: Other ways customers ask it ("can monitor text me?" for the alerts entry): matched as the
    #: question is (embedded apart, read by BM25), so a paraphrase finds the entry.
    asked: list[str] = field(default_factory=list)


@dataclass
class Document:
    key: str
    title: str
    text: str
    path: str
    tags: list[str] = field(default_factory=list)
    #: Section heading (as written, or its anchor slug) -> how customers ask what it answers.
    asked: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class HelpDesk:
    name: str
    channel: str
    target: str
    email: str | None = None
    default: bool = False
    description: str = ""
    reasons: list[str] = field(default_factory=list)  # empty: any the others do not take
    email_after_minutes: float = 10.0  # unclaimed this long: the escalation goes by email
    #: When people answer, as the customer reads it: one line, or one per language.
    hours: str | dict[str, str] | None = None

    def hours_in(self, language: str, fallback: str) -> str | None:
        """The desk's hours in ``language``, else in ``fallback`` (the pack's), else None."""
        if isinstance(self.hours, dict):
            return self.hours.get(language) or self.hours.get(fallback)
        return self.hours


@dataclass
class Pack:
    root: Path
    name: str
    company: str
    version: str  # content hash of every file, so a turn names the exact pack it ran on
    language: str
    description: str
    products: list[Product]
    topics: list[ScopeRule]
    out_of_scope: list[ScopeRule]
    excluded_names: list[str]
    booking: dict[str, Any]
    heads: dict[str, dict[str, str]]  # name -> {"path", "version"}: trained heads the pack pins
    intents: list[Intent]
    default_move: str
    signup_cooldown_turns: int
    low_sentiment: float
    move_examples: dict[str, list[str]]
    slots: list[Slot]
    outcomes: list[OutcomeRule]
    templates: dict[str, dict[str, str]]
    gates: dict[str, float]
    faq: list[FaqEntry]
    documents: list[Document]
    helpdesks: list[HelpDesk]
    #: pack.yaml's ``preflight`` section: thresholds, help-desk routing, search steps.
    preflight: dict[str, Any] = field(default_factory=dict)
    #: pack.yaml's ``offers``: the commercial terms a reply may repeat (bot.turn.replygate).
    offers: list[str] = field(default_factory=list)
    # Procedures (bot.flows.model.Flow by name) and the personas and mods their steps use.
    flows: dict[str, Any] = field(default_factory=dict)
    roles: dict[str, Any] = field(default_factory=dict)
    mods: dict[str, Any] = field(default_factory=dict)
    #: ``context.yaml``'s page hints (bot.packs.context.PageHint), in order; first match wins.
    context: list[Any] = field(default_factory=list)
    #: ``data.yaml``'s sources and tables (bot.packs.data.DataSpec), or None without the file.
    data: Any = None

    def template(self, name: str, language: str | None = None, **values: str) -> str:
        """A template in the conversation's language, else the pack's; values filled in."""
        lang = language if language in self.templates else self.language
        text = self.templates[lang].get(name) or self.templates[self.language][name]
        return text.format(company=self.company, **values)

    def intent(self, name: str) -> Intent | None:
        return next((i for i in self.intents if i.name == name), None)

    def handoff_intent(self) -> Intent | None:
        """The intent that asks for a person (the first whose move is ``handoff``), if any."""
        return next((i for i in self.intents if i.move == "handoff"), None)

    def company_names(self) -> list[str]:
        """How a customer names the company, normalised: in full, and its first word where it
        is the pack's own name ("acme" of "Acme Cloud"; not "the" of "The Widget Co")."""
        company = normalise(self.company or "")
        first = company.split()[:1]
        names = [company, *(w for w in first if w == normalise(self.name))]
        return [n for n in dict.fromkeys(names) if n]

    def own_names(self) -> list[str]:
        """How a customer names the company or its products: :meth:`company_names`, and each
        product in full and by its last word ("Pipelines")."""
        names = [*self.company_names()]
        names += [w for p in self.products for w in (p.name, p.name.split()[-1])]
        return [n for n in dict.fromkeys(names) if n]

    def flow_intents(self) -> set[str]:
        """Every intent a flow's trigger names: a request the pack has a procedure for."""
        return {i for f in self.flows.values() for i in f.trigger.intents}

    def flow_examples(self) -> list[tuple[str, str]]:
        """(line, intent) for every flow's declared examples: each is a line of the flow's
        intent (its first trigger intent), so the intent head learns how customers start it."""
        lines: list[tuple[str, str]] = []
        for flow in sorted(self.flows.values(), key=lambda f: f.name):
            intent = flow.trigger.intent
            lines.extend((ex, intent) for ex in flow.trigger.examples if intent)
        return lines

    def intent_lines(self) -> list[tuple[str, str]]:
        """What the pack's intent head is trained on: the intents' examples, then the flows'."""
        own = [(ex, i.name) for i in self.intents for ex in i.examples]
        return own + [line for line in self.flow_examples() if line not in own]

    def slot(self, name: str) -> Slot | None:
        return next((s for s in self.slots if s.name == name), None)

    def helpdesk_for(self, kind: str) -> HelpDesk | None:
        """The help desk that takes escalations of ``kind``, else the default one."""
        named = next((h for h in self.helpdesks if kind in h.reasons), None)
        return named or self.default_helpdesk()

    def helpdesk_named(self, name: str | None) -> HelpDesk | None:
        return next((h for h in self.helpdesks if h.name == name), None)

    def default_helpdesk(self) -> HelpDesk | None:
        return next(
            (h for h in self.helpdesks if h.default), self.helpdesks[0] if self.helpdesks else None
        )

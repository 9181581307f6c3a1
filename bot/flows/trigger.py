"""How a message starts a flow: several signals, none of them a gate on its own.

- **intent**: a confident read of the flow's intent, by the pack's intent head (trained on the
  flow's own ``examples`` as lines of that intent, and abstaining on a novel message) or by
  pre-flight routing to the flow.
- **near**: the pack line nearest the message (every intent's and flow's example, on the heads'
  shared embedding) is one of this flow's examples, at cosine ``flowExample`` (gates) or more.
- **worded**: one of the flow's ``keywords`` is in the message.
- **across**: the message is in another language than the pack's and, in the retriever's
  cross-language space, nearest this flow's lines by a clear margin (:mod:`bot.flows.across`;
  none without a multilingual encoder).
- **change**: the flow's repeat step reads a change it could make ("drop two seats"): an item it
  declares, named in the message, with a count and a verb of changing.
- **shown**: the flow closes a demo lead and the message asks for a person to show the product
  (:func:`bot.text.asks_to_be_shown`: "Could someone from Acme walk our team through Pipelines
  on a call next week?", "set up a call so my CTO can see pipelines in action"), words of its
  own whatever the head leans to.
- **leans**: the head, unsure but not finding the message novel, reads the flow's intent as more
  likely than not, and the message is worded as a request to the agent ("can you reverse the
  charge from yesterday?", refund at 0.79) or as an order (:func:`bot.text.orders`: "one of our
  planners has left, take her seat off", "hired two more designers, they need access"). A
  question about the same thing ("do you offer refunds if we cancel within 14 days?") is answered
  instead. For a shared intent too ("book us in for a live tour of the platform pls", demo at
  0.52, runs the guided demo).

A message that asks how things work (:func:`asks_how`: a condition, an alternative, a limit, a
time, and no request to the agent itself) starts no flow, however sure the head: "can we add seats
mid-month or only at renewal?" is answered. A confident *other* intent starts no flow ("where is
my order?" never starts a refund on a shared word). With none, any signal starts the flow, except
that a keyword alone does not when the head, unsure, still leans to another intent (more likely
than not): "what is your refund policy" reads as a pricing question and is answered as one. An
intent the playbook also serves (one with an ``outcome``: a demo request is proposed and delivered
as a lead) is shared, so a read of it starts the flow only with the flow's words, one of its
examples nearest or a lean worded as a request: "could someone walk our team through the product
on a call" runs the guided demo, "can I get a demo" stays the playbook's.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import asdict, dataclass
from typing import Any

from bot.flows.across import Across, AcrossIndex
from bot.flows.model import Flow
from bot.flows.steps.phrases import read_message
from bot.packs import Pack
from bot.text import (
    asks_how,
    asks_if_there_is,
    asks_the_agent,
    asks_to_act,
    asks_to_be_shown,
    asks_to_know,
    matching,
    normalise,
    orders,
    whole_and_sentences,
)
from bot.turn.turn import Read

#: How far the hand-off intent's nearest line must lead every other intent's (heads' embedding).
PERSON_MARGIN = 0.15
#: An unsure read this likely of another intent outweighs a keyword on its own.
LEANS_AT = 0.5
#: A sentence that asks what, which, who, when or where.
_WH_SENTENCE = re.compile(
    r"(?:^|[.!?]\s+)(?:what|what's|whats|which|who|whom|whose|why|when|where)\b", re.IGNORECASE
)
_CHANGES = ("add", "remove", "change")
_ONE = re.compile(r"\b(?:1|one|single)\b", re.IGNORECASE)
#: A word that corrects what was said inside a flow ("actually 5 seats"), no verb of changing...
_CORRECTIONS = frozenset({"actually"})
#: ...and words that give a new total, none when the count is the "one" of "one of our members".
_NEW_TOTAL = frozenset({"instead", "should be"})
#: A count, in figures or words.
_COUNT = (
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy"
    r"|eighty|ninety|hundred|thousand)"
)
#: A count corrected against another: "actually 18, not 14", "one seat, not two".
_NOT_COUNT = re.compile(
    rf"\b{_COUNT}\b[^.?!]{{0,12}}?,?\s+not\s+{_COUNT}\b",
    re.IGNORECASE,
)


@dataclass
class Nearest:
    """The pack line nearest a message: the flow whose example it is (None: an intent's own
    line) and its cosine; ``across``: the flow a message in another language asks for."""

    flow: str | None
    cosine: float
    across: Across | None = None


@dataclass
class Signals:
    intent: bool = False
    routed: bool = False  # pre-flight routed the message to this flow's intent
    near: bool = False
    worded: bool = False
    across: dict[str, Any] | None = None  # the cross-language read naming this flow
    change: dict[str, Any] | None = None  # the first change the repeat step reads
    elsewhere: bool = False  # the head, unsure, leans to another intent
    leans: bool = False  # the head, unsure, leans to this flow's intent
    asks_how: bool = False  # the message asks how things work ("... mid-month or only at renewal?")
    shown: bool = False  # a demo flow, and the message asks for a person to show the product
    ordered_change: bool = False  # the change read is an order ("please take 2 users off")
    ordered: bool = False  # a flow's keyword is the verb of a request ("please refund the ...")

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v}


class ExampleIndex:
    """Every intent's and flow's example on the heads' shared embedding, to find the line
    nearest a message. ``batcher`` embeds the message (its vector is the heads' own, cached);
    the lines are embedded once. ``retriever``: what may embed across languages, for a message
    in another language than the pack's. The playbook's hand-off lines (``move_examples``:
    frustration that wants a person) stand with the hand-off intent's own examples, for
    :meth:`hands_off`; they are no flow's, so they only ever keep a flow from being nearest."""

    def __init__(self, pack: Pack, batcher: Any, retriever: Any = None) -> None:
        self.batcher = batcher
        self.across = AcrossIndex(pack, retriever)
        intent_of: dict[str, str] = {}
        for line, intent_name in pack.intent_lines():
            intent_of.setdefault(line, intent_name)
        handoff = pack.handoff_intent()
        person = handoff.name if handoff is not None else None
        if person is not None:
            for line in pack.move_examples.get("handoff", []):
                intent_of.setdefault(line, person)
        owners: dict[str, str | None] = dict.fromkeys(intent_of)
        for flow in pack.flows.values():
            owners.update({ex: flow.name for ex in flow.trigger.examples})
        self.lines, self.owners = list(owners), list(owners.values())
        self.intents = [intent_of.get(line, "") for line in self.lines]
        self.person = person
        self._matrix: Any = None

    @property
    def useful(self) -> bool:
        return self.batcher is not None and any(self.owners)

    async def nearest(self, text: str) -> Nearest | None:
        across = self.across.starts(await self.across.read(text))
        near = await self._nearest(text)
        if across is None:
            return near
        return Nearest(near.flow, near.cosine, across) if near else Nearest(None, 0.0, across)

    async def _nearest(self, text: str) -> Nearest | None:
        if not self.useful:
            return None
        scores = await self._scores(text)
        best = int(scores.argmax())
        return Nearest(self.owners[best], float(scores[best]))

    async def hands_off(self, text: str, at: float) -> PersonNear | None:
        """The hand-off intent when its lines are nearest the message, at cosine ``at`` (the
        ``flowExample`` gate) or more and :data:`PERSON_MARGIN` ahead of every other intent's
        nearest line; else None. The head can be unsure of a request for a person it was not
        taught word for word ("Let me speak to a manager": hand-off at 0.61) while the line
        nearest it is plainly one; a question that only mentions a person ("if the on-call
        person doesn't respond ...") is nearest a product question, and reads nothing."""
        if self.batcher is None or self.person is None:
            return None
        # (a sentence asking whether a thing is there reads no request: "Is there escalation?")
        parts = [p for p in whole_and_sentences(text) if not asks_if_there_is(p)]
        found = [await self._person(self.person, part, at) for part in parts]
        kept = [f for f in found if f is not None]
        return max(kept, key=lambda f: f.margin) if kept else None

    async def _person(self, person: str, text: str, at: float) -> PersonNear | None:
        scores = (await self._scores(text)).tolist()
        best: dict[str, float] = {}
        for intent_name, cosine in zip(self.intents, scores, strict=True):
            best[intent_name] = max(best.get(intent_name, -1.0), float(cosine))
        mine = best.pop(person, -1.0)
        found = PersonNear(person, mine, mine - max(best.values(), default=-1.0))
        return found if found.cosine >= at and found.margin >= PERSON_MARGIN else None

    async def _scores(self, text: str) -> Any:
        """The message's cosine with every line (the lines are embedded on first use)."""
        if self._matrix is None:
            from bot.heads.encoder import embed_shipped

            self._matrix = await asyncio.to_thread(embed_shipped, self.lines)  # once
        return self._matrix @ await self.batcher.embed(text)


@dataclass
class PersonNear:
    """A request for a person read from the nearest lines: the hand-off intent, its nearest
    line's cosine and the margin over the nearest line of any other intent."""

    intent: str
    cosine: float
    margin: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "cosine": round(self.cosine, 4),
            "margin": round(self.margin, 4),
        }


def signals(flow: Flow, pack: Pack, intent_read: Read, text: str, near: Nearest | None) -> Signals:
    """What the message says for starting ``flow``."""
    t = flow.trigger
    read_act = intent_read["outcome"] == "act" and intent_read["answer"] in t.intents
    gate = pack.gates["flowExample"]
    elsewhere = bool(t.intents) and _leans_elsewhere(intent_read, t.intents)
    change = first_change(flow, text, pack.gates["repeat"])
    asks_only = asks_to_know(text) and not asks_to_act(text)
    if change is not None and asks_only and (elsewhere or _WH_SENTENCE.search(text)):
        # A change read in what a question tells orders nothing where the head leans to another
        # intent or a sentence asks what, which, who, when or where: "What permission levels
        # can I give people when I add them?" ("how do I add 3 seats" may still be a request).
        change = None
    return Signals(
        intent=read_act,
        routed=read_act and intent_read.get("gate") == "preflight.flow",
        near=near is not None and near.flow == flow.name and near.cosine >= gate,
        across=_across(flow, near),
        worded=bool(t.keywords) and bool(matching(normalise(text), t.keywords)),
        change=change,
        elsewhere=elsewhere,
        leans=bool(t.intents)
        and _leans_to(intent_read, t.intents)
        and (asks_to_act(text) or orders(text))
        and names_what_it_changes(flow, text),
        asks_how=asks_how(text),
        shown=any(step.lead == "demo" for step in flow.steps) and asks_to_be_shown(text),
        # (an order or a request to the agent, asking nothing: not "My colleague said just add
        # 2 seats. Is that how pricing works, per seat?")
        ordered_change=change is not None
        and (orders(text) or asks_the_agent(text))
        and not asks_to_know(text),
        ordered=bool(t.keywords) and ordered_by_keyword(text, t.keywords),
    )


#: Before a keyword used as the verb of a request: a sentence's start or a word of asking.
_ORDER_BEFORE = r"(?:^|[.!?,;]\s*|\b(?:please|pls|plz|kindly|can you|could you|would you|just))\s*"
#: After it: what is to be acted on ("refund the duplicate", "refund me", "refund our last charge").
_ORDER_AFTER = r"\s+(?:the|my|our|us|me|it|this|that|them|both)\b"


def ordered_by_keyword(text: str, keywords: list[str]) -> bool:
    """Whether one of a flow's ``keywords`` is the verb of a request: "Please refund the
    duplicate, order number 88217", "refund me for the upgrade". It outweighs an unsure lean to
    another intent (order_status at 0.51 read the first, for its order number), as a keyword
    alone does not: "what is your refund policy" names the refund, it orders none."""
    for keyword in keywords:
        found = re.search(
            _ORDER_BEFORE + re.escape(keyword) + _ORDER_AFTER, text.strip(), re.IGNORECASE
        )
        if found is not None:
            return True
    return False


def _across(flow: Flow, near: Nearest | None) -> dict[str, Any] | None:
    across = near.across if near is not None else None
    return across.as_dict() if across is not None and across.flow == flow.name else None


def _leans_elsewhere(read: Read, intents: list[str]) -> bool:
    """An unsure, not novel read whose likeliest answer is another intent, more likely than not."""
    return (
        read["outcome"] != "act"
        and read.get("reason") != "novel"
        and read["answer"] not in (None, "none", *intents)
        and read["confidence"] >= LEANS_AT
    )


def _leans_to(read: Read, intents: list[str]) -> bool:
    """An unsure, not novel read whose likeliest answer is one of ``intents``, at
    :data:`LEANS_AT` or more."""
    return (
        read["outcome"] != "act"
        and not read.get("reason")  # novel, or nothing but a value: the head abstains
        and read["answer"] in intents
        and read["confidence"] >= LEANS_AT
    )


#: A count, or a word of more or another: "we hired two more designers", "add another person".
_SOME = re.compile(
    rf"\b(?:{_COUNT}|couple|few|several|dozen|another|more|extra|fewer|less)\b", re.IGNORECASE
)


#: People named two at a time: "Please take Mark and Julia off our billing".
_TWO_NAMES = re.compile(r"\b[A-Z][a-z]+\s+(?:and|&)\s+[A-Z][a-z]+\b")
#: Someone put onto or taken off what is paid for, or given access: "could you add our new
#: colleague from finance to the Acme subscription?", "Jo left, can you take her off our bill?",
#: "can you give our new hire access to Monitor".
_ONTO_THE_PLAN = re.compile(
    r"\b(?:add|get|put|include|remove|take|drop|move)\b[^.?!]{0,40}?\b(?:to|onto|on|off|from|into)"
    r"\s+(?:our|my|the)\s+(?:\w+\s+)?(?:plan|subscription|sub|bill|billing|account|workspace"
    r"|team)\b"
    r"|\b(?:access|log-?ins?|accounts?)\b"
    # someone named or pointed to as what is added or removed, or who left or joined: "can you
    # remove Dave, he left last week", "our intern is leaving, can you drop her?"
    r"|\b(?:add|remove|drop|take)\s+(?:him|her|them|(?-i:[A-Z][a-z]+))\b"
    r"|\b(?:left|quit|leaving|moved\s+on|new\s+hires?|new\s+starters?|joined|joining)\b",
    re.IGNORECASE,
)


def names_what_it_changes(flow: Flow, text: str) -> bool:
    """For a flow that changes declared items (a repeat step's ``items``), whether ``text``
    names one of them, some number of something, two people, someone put onto or taken off the
    plan or given access, or is worded as an order (:func:`bot.text.orders`: "please take them
    off so we stop paying for them"): an unsure lean to the flow's intent in a request naming
    none is about something else ("ok and can we also force 2fa for everybody on top of that"
    leaned to seats at 0.78). True for any other flow."""
    step = next((s for s in flow.steps if s.repeat and s.items), None)
    if step is None or orders(text) or _TWO_NAMES.search(text) or _ONTO_THE_PLAN.search(text):
        return True
    norm = normalise(text)
    phrases = [phrase for said in step.items.values() for phrase in said]
    named = matching(norm, [*phrases, *(f"{phrase}s" for phrase in phrases)])
    return bool(named) or _SOME.search(norm) is not None


def first_change(flow: Flow, text: str, gate: float) -> dict[str, Any] | None:
    """The first change the flow's repeat step reads in ``text`` (at its ``repeat`` gate) with
    an item the text names, a count it gives ("a user" is no count: "how do I add a user"
    asks how, it orders nothing) and a verb of changing ("one of my users forgot her password"
    and "the invoice bills us for 12 seats" name a count of an item and order nothing), or
    None. Inside a running flow a bare "3 seats" is an order; before one, it is not."""
    step = next((s for s in flow.steps if s.repeat and s.items), None)
    if step is None:
        return None
    first = next(iter(step.items))
    for r in read_message(text, step.items, (first, "default")):
        counted = r.quantity is not None and (r.quantity > 1 or _ONE.search(r.phrase) is not None)
        # (a correction word alone is no verb of changing before a flow runs: "one of our board
        # members keeps asking me where our data actually lives", "one of our members uses SSO
        # instead"; a new total with "instead" is: "cover 45 people instead of 25")
        weak = (
            frozenset()
            if _NOT_COUNT.search(text)
            else (_CORRECTIONS | (_NEW_TOTAL if r.quantity == 1 else frozenset()))
        )
        ordered = r.item_from == "phrase" and counted and bool(set(r.cues) - weak)
        if ordered and r.pick in _CHANGES and r.confidence >= gate:
            return {"step": step.id, "pick": r.pick, "item": r.item, "quantity": r.quantity}
    return None


def weight(s: Signals) -> int:
    """How much the signals say for their flow, to choose between flows that would both start:
    what the head reads (routed, confident, or leaning to it in a request) over the flow's own
    words, over closeness and a change read; less when the head leans elsewhere."""
    return (
        8 * s.routed
        + 4 * s.intent
        + 3 * s.leans
        + 2 * s.worded
        + (s.near + bool(s.across) + (s.change is not None) + s.shown)
        - 2 * s.elsewhere
    )


def starts(flow: Flow, pack: Pack, s: Signals, confident: str | None) -> bool:
    """Whether the signals start ``flow``, given the intent read confidently (None: none)."""
    if s.routed:
        return True
    if s.asks_how:
        return False  # a question about the flow's subject is answered, not taken as a request
    # Asking in so many words for someone to show the product outweighs a confident read of a
    # question ("Can you arrange walkthrough of Monitor and Status pages for our management?"
    # reads as a product question at 0.93), not one of a hand-off ("could someone from Acme
    # give me a call" asks for a person). So does ordering a change the flow makes: "please
    # take 2 users OFF my plan, ... I'm not paying for them!!" reads as pricing.
    confident_intent = pack.intent(confident or "")
    in_words = s.shown or s.ordered_change
    shown = in_words and confident_intent is not None and confident_intent.move == "answer"
    if confident is not None and not s.intent and not shown:
        return False  # a confident other intent: never a flow on a shared word
    intent = pack.intent(flow.trigger.intent or "")
    shared = intent is not None and intent.outcome is not None
    # Near a flow's example is a closeness, no more: it does not outweigh a head leaning to
    # another intent ("we are 12 devs on gitlab.com - can pipelines hook into our repos?" sits
    # near "could your sales engineer demo pipelines for our developers").
    near = s.near and not s.elsewhere
    own_words = s.worded and (not s.elsewhere or s.ordered)
    own_words = own_words or near or bool(s.across) or s.change is not None
    own_words = own_words or s.shown
    if shared:
        return (own_words or s.leans) and (s.intent or confident is None or shown)
    return s.intent or own_words or s.leans

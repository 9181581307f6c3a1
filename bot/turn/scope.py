"""The scope check, deterministic and without a language model: the pack's declared rules first,
then the domain check (:mod:`bot.turn.domain`) on the message's shared embedding.

- A declared out-of-scope topic declines at once; a declared product, topic or intent keeps the
  message in scope (and may turn it into asking for a missing input).
- Anything else is scored against everything the pack covers: below the fitted threshold it is
  declined (rule ``domain:outside``), just above it kept but marked ``domain:edge``.
- The domain check never declines a message answering the agent (a flow or a read-back under
  way, a question asked, options offered), nor a request for a person the intent head reads,
  nor a message confidently in a language none of the pack's texts are in (closeness across
  languages says little: see :attr:`bot.turn.domain.Domain.languages`).
- Without embeddings (GATEBOT_EMBEDDINGS=off, no ml extra, an encoder that fails) the declared
  rules decide alone, and the rule says ``keyword-only``.

The pack's vectors are embedded and the threshold fitted once per pack version and encoder, per
process; the message's vector comes from the heads' batcher, which keeps it for the heads.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections import Counter
from dataclasses import replace
from typing import Any

from bot.flows.trigger import LEANS_AT, first_change
from bot.heads import NONE
from bot.packs import Pack, ScopeRule
from bot.preflight import language
from bot.preflight.offline import embeddings_on
from bot.text import (
    APOSTROPHE,
    MONEY,
    another_partys,
    asks_for_person,
    asks_how,
    asks_to_act,
    is_question,
    matching,
    names_own_trade,
    normalise,
    respell,
    tokens,
    without_phrases,
)
from bot.turn import answerable
from bot.turn.anchor import anchors
from bot.turn.domain import (
    CrossDomain,
    Domain,
    asked_texts,
    build_domain,
    domain_texts,
    fit_across,
    outside_lines,
)
from bot.turn.followup_query import (
    again_of_answer,
    asks_again,
    carries_on,
    continues,
    refers_back,
)
from bot.turn.reading import Readers, bare_request
from bot.turn.turn import ConversationState, Scope

log = logging.getLogger(__name__)

NO_MATCH = "no_declared_match"
#: Language detection's probability from which a message counts as written in that language.
SURE_LANGUAGE = 0.9
#: The margin (closeness to the pack minus closeness to the generic outside lines) below which an
#: edge message is declined: nearer generic chat than anything the pack says. Not the fitted
#: margin threshold (0.075 on the sample pack), which is placed over every message and, in the
#: edge band, would decline in-scope questions too ("will you call me at night if something
#: breaks" 0.029, "how do I get admin rights" 0.055, "do you have a Pulumi provider" 0.068; none
#: of tests/data/acme_inscope_edge.txt there is below 0.029).
EDGE_MARGIN = 0.0
#: How sure the intent head must be that a message is none of the pack's intents before a
#: product's word alone may be weighed (see :meth:`ScopeCheck._weigh_product_words`).
NONE_SURE = 0.7
#: How far below the cross-language threshold a message kept only by a topic word (or a word
#: respelled into one) must sit to be declined: the word still counts for something, and the
#: cross-language margin of an in-scope question can be low (see :meth:`ScopeCheck._weigh_across`).
ACROSS_WORD_GAP = 0.17
#: (pack version, encoder version) -> the pack's domain, or None when it has too few texts.
_domains: dict[tuple[str, str], Domain | None] = {}
#: (pack version, retriever name) -> the pack's cross-language domain, or None without one.
_across: dict[tuple[str, str], CrossDomain | None] = {}
#: Held while a domain is built, so a turn waits for the start's build rather than repeat it.
_building = threading.Lock()


def check_scope(pack: Pack, text: str, known_slots: set[str]) -> Scope:
    """The declared rules alone: verdict ``in``, ``out`` or ``needs_input`` and the rule.

    Out of scope only when an out-of-scope topic matches and nothing the pack covers does, so
    "does Monitor alert me when it rains" stays in scope; or, for a topic declared
    ``despite_topics``, when no product keyword does ("how do I cancel my Netflix subscription"
    is declined though "subscription" is a billing word, "spotify charged me twice, how do I get
    them to refund it" though "refund" starts a flow).
    """
    # "in order to" orders nothing: "Must I give a credit card in order to begin it?" is no
    # question about an order (the order intent's keyword), and needs no order number. Nor is a
    # purchase order, the customer's own procurement paper ("some indication of cost for Acme
    # Cloud before a purchase order can be raised"), nor a receipt printer ("the receipt printers
    # at the tills stopped working after a Windows 11 update").
    norm = normalise(text)
    for said, meant in _NO_ORDER:
        norm = said.sub(meant, norm)
    # A question about how things work needs no order number ("can I get a refund if I cancel in
    # the first 14 days?"): it is in scope, not waiting for input.
    how = asks_how(text)
    named = named_products(pack, text)
    verdict = _verdict(pack, norm, known_slots, how, named)
    if verdict["verdict"] == "out" and _requested(pack, text):
        # A request for a person, or for a change one of the pack's flows makes, is the pack's
        # whatever the rest of the message names: "Add 2 seats please, one for our new hire from
        # a job interview last week". A despite_topics phrase then declines nothing.
        verdict = _verdict(pack, norm, known_slots, how, named, requested=True)
    if verdict["verdict"] != "out" and _another_partys(pack, text, norm):
        # "The shop still didn't refund me for the shoes", "the car dealership wants a fee to
        # refund my deposit": money another party owes or took, none of the company's.
        verdict = {"verdict": "out", "rule": f"out_of_scope:{ANOTHER_PARTY}", "template": None}
    spelled = respell(norm, _keyword_words(pack), _spelled_right(pack))
    if verdict["rule"] == NO_MATCH and spelled != norm:
        # "whats teh pricng for monitr": a declared word misspelled is still that word.
        verdict = _verdict(pack, spelled, known_slots, how, named)
        if verdict["rule"] != NO_MATCH:
            verdict["rule"] = f"spelled:{verdict['rule']}"
    verdict["question"] = is_question(text)
    verdict["score"] = verdict["threshold"] = None
    return verdict


#: Words of the order intent's keywords in another sense, and what they are read as (see
#: check_scope).
_NO_ORDER = (
    (re.compile(r"\bin order(?= (?:to|for|that)\b)"), "so as"),
    (re.compile(r"\bpurchase order(?=s?\b)"), "purchase form"),
    (re.compile(r"\breceipt printer(?=s?\b)"), "till printer"),
)


def _declined(scope: Scope, rule: str, score: float, threshold: float) -> Scope:
    """``scope`` declined by a margin: the rule, and the margin and its threshold as the record's
    score and threshold."""
    scope["verdict"], scope["template"], scope["rule"] = "out", None, rule
    scope["score"], scope["threshold"] = round(score, 4), threshold
    return scope


#: The rule's name in the record for money another party owes or took (:func:`another_partys`).
ANOTHER_PARTY = "another_party"


def _another_partys(pack: Pack, text: str, norm: str) -> bool:
    """Whether ``text`` tells of money another party refunds, owes or took, and names neither
    the company, its products, nor a word of its products, topics or intents other than the
    money itself ("the shop won't refund the plan we bought" is about a plan), nor asks for a
    person."""
    if not another_partys(text) or matching(norm, pack.own_names()) or asks_for_person(text):
        return False
    # (not the words of money themselves: another party's refund is in them too)
    words = [w for w in _declared_phrases(pack) if not MONEY.search(w)]
    return not matching(norm, words)


def named_products(pack: Pack, text: str) -> set[str]:
    """The products ``text`` names as a name: in full ("Acme Monitor"), or by the last word its
    name adds to the company's, capitalised where no sentence starts ("Can Monitor alert on a
    27 inch wall dashboard?"; not "My second monitor flickers", nor "Monitor flickers when...")."""
    company = set(tokens(pack.company or ""))
    found = set()
    for product in pack.products:
        own = [w for w in product.name.split() if w.lower() not in company]
        full = re.search(rf"(?<!\w){re.escape(product.name)}(?!\w)", text, re.IGNORECASE)
        word = own and any(
            not _starts_sentence(text, m.start())
            for m in re.finditer(rf"(?<!\w){re.escape(own[-1])}(?!\w)", text)
        )
        if full or word:
            found.add(product.key)
    return found


def _starts_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip(" \t")
    # (not after a colon: "Our HDMI-over-IP product's API: Monitor shows 3 locations green")
    return not before or before[-1] in ".!?\n\"'("


#: Where a message's clauses part: a sentence's end, a comma, a colon, a dash.
_CLAUSE = re.compile(r"[.!?;:,\u2013\u2014]+\s*|\s+-\s+")


def _requested(pack: Pack, text: str) -> bool:
    """Whether a clause of ``text`` that holds no despite_topics phrase asks for a person in so
    many words, or orders a change one of the pack's flows makes (a count, an item and a verb of
    changing): "Please add 5 seats - we're onboarding the recruiting pipeline team". Not in the
    phrase's own clause: "add 4 seats together for the taylor swift show" orders concert seats."""
    phrases = [k for r in pack.out_of_scope if r.despite_topics for k in r.keywords]
    gate = pack.gates["repeat"]
    for clause in _CLAUSE.split(text):
        if not clause.strip() or matching(normalise(clause), phrases):
            continue
        if asks_for_person(clause):
            return True
        if any(first_change(flow, clause, gate) is not None for flow in pack.flows.values()):
            return True
    return False


def _verdict(
    pack: Pack,
    norm: str,
    known_slots: set[str],
    how: bool = False,
    named: set[str] | None = None,
    requested: bool = False,
) -> Scope:
    outside = [
        r for r in pack.out_of_scope if _declines(r, norm) and not (requested and r.despite_topics)
    ]
    # A despite_topics phrase says in which sense its words are meant: "heart rate monitor" is
    # no Acme Monitor, so its words keep nothing ("can I get Monitor alerts on my iPhone" keeps
    # "Monitor", which the phrase "my iphone" does not hold).
    spoken = [k for r in outside if r.despite_topics for k in matching(norm, r.keywords)]
    rest = without_phrases(norm, [*_beside(pack, norm, spoken), *spoken]) if spoken else norm
    # ...and may put a product's words in its own sense anywhere in the message ("my second
    # monitor flickers when I plug in HDMI": a screen, not Acme Monitor).
    # A product named as a name keeps its words ("Can Monitor alert on a 27 inch wall display?").
    kept = {k for p in pack.products if p.key in (named or set()) for k in p.keywords}
    taken = [w for r in outside for w in r.despite_product_words if w not in kept]
    rest = without_phrases(rest, taken) if taken else rest
    products = [p.key for p in pack.products if matching(rest, p.keywords)]
    topics = [t.key for t in pack.topics if matching(rest, t.keywords)]
    intents = [i.name for i in pack.intents if matching(rest, i.keywords)]
    covered = products + topics + intents
    # The company named is no trade's phrase to decline: "can the website-watching part of Acme
    # ping us in Slack? (it's replaced a hundred WhatsApp groups)" is about Acme.
    if matching(rest, pack.company_names()):
        declines = [] if covered else [r for r in outside if not r.despite_topics]
    elif not covered:
        declines = outside
    elif products:
        declines = []
    else:  # topic or intent words alone do not keep a message a despite_topics topic names
        declines = [r for r in outside if r.despite_topics]
    if declines:
        rule = declines[0]
        return {"verdict": "out", "rule": f"out_of_scope:{rule.key}", "template": rule.template}
    for intent in pack.intents:
        missing = [s for s in intent.needs if s not in known_slots]
        if missing and not how and matching(rest, intent.keywords):
            return {
                "verdict": "needs_input",
                "rule": f"{intent.name} needs {missing[0]}",
                "slot": missing[0],
            }
    if covered:
        return {"verdict": "in", "rule": "declared:" + ",".join(dict.fromkeys(covered))}
    return {"verdict": "in", "rule": NO_MATCH}


def _declines(topic: ScopeRule, norm: str) -> bool:
    """Whether an out-of-scope ``topic``'s words are in the message, in their own sense: a
    despite_topics phrase that names the customer's own business ("we build clinical trials
    software", "our tax refund app") is the customer's trade, not what they ask about."""
    found = matching(norm, topic.keywords)
    if not topic.despite_topics:
        return bool(found)
    return any(not names_own_trade(norm, phrase) for phrase in found)


def _beside(pack: Pack, norm: str, spoken: list[str]) -> list[str]:
    """A product's word right beside a despite_topics phrase is meant in the phrase's sense:
    "which 27 inch monitor is best for coding" (the phrase before it), "I want to build a
    treehouse" (it before the phrase, an article between)."""
    words = [k for p in pack.products for k in p.keywords]
    pairs = [f"{phrase} {word}" for phrase in spoken for word in words]
    pairs += [f"{word} {a}{phrase}" for phrase in spoken for word in words for a in _ARTICLES]
    return matching(norm, pairs)


_ARTICLES = ("", "a ", "an ", "the ", "my ", "our ")


def _kept_by(scope: Scope) -> set[str]:
    """What a declared rule, spelled right, kept the message in scope by (products, topics,
    intents); empty for any other verdict or rule."""
    rule = scope["rule"]
    if scope["verdict"] != "in" or not rule.startswith("declared:"):
        return set()
    return set(rule.removeprefix("declared:").split(","))


def _declared_phrases(pack: Pack) -> list[str]:
    """Every declared product, topic and intent keyword of the pack."""
    phrases = [k for p in pack.products for k in p.keywords]
    phrases += [k for t in pack.topics for k in t.keywords]
    return phrases + [k for i in pack.intents for k in i.keywords]


#: The company asked whether it holds a certification: "are you SOC 2 certified?", "is your
#: company ISO 27001 compliant?" (the attribute form: not "are you able to help me ...").
_OF_US = re.compile(
    r"\b(?:are\s+(?:you|u)|is\s+(?:your|ur)\s+(?:company|platform|service|product|firm))"
    # (not "are you a certified financial planner?", "are you certified in excel?": the word
    # ends its clause)
    r"(?!\s+an?\b)(?:\s+[\w-]+){0,5}?\s+(?:certified|certification|certificate|compliant"
    r"|accredited|attested|audited)(?=\s*(?:[?.!,;:]|$|(?:and|or)\b))",
    re.IGNORECASE,
)


def asked_of_us(text: str) -> bool:
    """Whether ``text`` asks the company whether it holds a certification (:data:`_OF_US`),
    which the security topic's word keeps whatever the margin says: "are you SOC 2 certified?
    our auditor wants proof by friday" sits as near generic chat as the pack. Only the attribute
    form: "your" with a declared word after it kept "what's your opinion on the best team in the
    premier league" and "is your support for the new tax law justified"."""
    return _OF_US.search(text.replace(APOSTROPHE, "'")) is not None


def _unweighed(pack: Pack, text: str) -> str | None:
    """Why a message kept by a topic word alone is not weighed by the margin, or None: it asks
    whether the company is certified ("are you SOC 2 certified?") or makes a request in so many
    words ("drop us from 20 licences to 15 pls", "get me an actual engineer on the line")."""
    if asked_of_us(text):
        return "asked of the company"
    return "a request in so many words" if _requested(pack, text) else None


#: A question asked of the company itself: "Do you have an async Python client?", "Do you run on
#: Postgres or MongoDB yourselves?" (not "since you're a smart bot: in Python, when should I use
#: asyncio?").
_ASKS_THE_COMPANY = re.compile(
    r"\b(?:do|does|did|are|is)\s+(?:you|u|y'all|you\s+guys|your\s+\w+)\b(?!\s+know\b)"
    r"|\byourselves\b",
    re.IGNORECASE,
)


def _of_ours(text: str, state: ConversationState) -> bool:
    """Whether ``text`` asks the company itself ("Do you have an async Python client?") or asks
    the last answer's question again of something else ("what about over UDP?" after the checks
    section): other software's own questions say nothing of it."""
    if _ASKS_THE_COMPANY.search(text) is not None:
        return True
    return bool(state.get("last_answered")) and asks_again(text)


#: By id(pack), the pack kept alive: its keywords' words, and the words spelled right.
_keywords: dict[int, tuple[Pack, frozenset[str], frozenset[str]]] = {}


def _keyword_words(pack: Pack) -> frozenset[str]:
    """Every word of the pack's declared product, topic and intent keywords (once per pack)."""
    return _words_of(pack)[1]


def _spelled_right(pack: Pack) -> frozenset[str]:
    """Words the pack's own texts or the shipped generic lines write: words as such, none a
    typo of a keyword ("I want that the junior not can change nothing" says "change", not the
    order keyword "charge")."""
    return _words_of(pack)[2]


def _words_of(pack: Pack) -> tuple[Pack, frozenset[str], frozenset[str]]:
    held = _keywords.get(id(pack))
    if held is None or held[0] is not pack:
        phrases = _declared_phrases(pack)
        if len(_keywords) > 32:
            _keywords.clear()
        declared = frozenset(w for k in phrases for w in tokens(k))
        written = {w for t in (*domain_texts(pack), *outside_lines()) for w in tokens(t)}
        # (a keyword's plural still reads as the keyword: "refunds", "deploys")
        plurals = {w for w in written if w.endswith("s") and w[:-1] in declared}
        held = _keywords[id(pack)] = (pack, declared, frozenset(written - declared - plurals))
    return held


def answering(state: ConversationState) -> str | None:
    """What the customer may be answering (a bare "yes", an email address, an order number are
    in scope then), or None."""
    for key in ("flow", "check", "asked_slot", "clarify_options"):
        if state.get(key):
            return key
    return None


class ScopeCheck:
    """The scope stage: declared rules, then the domain check on the shared embedding."""

    def __init__(
        self, pack: Pack, readers: Readers, batcher: Any = None, retriever: Any = None
    ) -> None:
        self.pack, self.readers = pack, readers
        #: What may embed across languages (``embed_across_languages``): the knowledge retriever.
        self.retriever = retriever
        # What embeds a message (``await batcher.embed(text)``): the heads' batcher unless given
        # (an evaluation passes rows it embedded in bulk). None when heads or embeddings are off:
        # the keyword rules alone.
        shared = getattr(readers, "_batcher", None)
        self._batcher: Any = (batcher or shared) if embeddings_on() and shared else None

    @property
    def mode(self) -> str:
        return "domain" if self._batcher is not None else "keyword-only"

    async def check(self, text: str, state: ConversationState) -> Scope:
        scope = check_scope(self.pack, text, set(state["values"]))
        busy = answering(state)
        if scope["rule"] != NO_MATCH:
            if (
                not busy
                and scope["verdict"] == "in"
                and again_of_answer(self.pack, text, state) is not None
            ):
                # "and gitlab também?" after a GitHub question answered: it asks that question
                # again of a thing the answer names, its declared word keeps it, and alone it is
                # too short for the margin to say what it is about (the question before does).
                scope["rule"] += " (asked again of the last answer)"
                return scope
            if not busy and self.topic_words_only(scope, text):
                return await self._weigh_topic_words(text, scope, _of_ours(text, state))
            if not busy and self._kept_by_a_product(scope):
                return await self._weigh_product_words(text, scope)
            if not busy and scope["verdict"] == "in" and scope["rule"].startswith("spelled:"):
                return await self._weigh_respelled(text, scope)
            return scope
        if busy:
            scope["rule"] = f"answering:{busy}"
            return scope
        if self._follows_up(text, state):
            # "how long is it?" or "and from how many places?" alone is close to nothing; it
            # asks about the question before.
            scope["rule"] = "follow-up"
            return scope
        if await self._carries_on(text, state):
            scope["rule"] = "follow-up"
            return scope
        domain, vector = await self.domain(), await self._embed(text)
        if domain is None or vector is None:
            scope["rule"] = f"keyword-only:{NO_MATCH}"
            return scope
        score = domain.closeness(vector)
        place = domain.place(score)
        scope["rule"] = f"domain:{place}"
        scope["score"], scope["threshold"] = round(score, 4), domain.fit.threshold
        if place == "edge":
            return await self._weigh_edge(text, vector, domain, scope, _of_ours(text, state))
        if place == "inside":
            return await self._weigh_elsewhere(text, vector, domain, scope, _of_ours(text, state))
        if place == "outside":
            spared = self._unread_language(text, domain)
            across = await self._across_margin(text) if spared else None
            if spared and across is not None and across[0] < across[1]:
                scope["verdict"], scope["template"] = "out", None
                scope["rule"] = f"domain:outside across languages ({spared})"
                scope["score"], scope["threshold"] = round(across[0], 4), across[1]
            elif spared:
                scope["rule"] = f"domain:outside, but written in {spared}: keyword rules only"
            elif await self._asks_for_person(text, vector):
                scope["rule"] = "domain:outside, but the intent head reads a request for a person"
            else:
                scope["verdict"], scope["template"] = "out", None
        return scope

    def _follows_up(self, text: str, state: ConversationState) -> bool:
        """Whether ``text`` asks on about the last question ("how long is it?", "and gitlab?")."""
        return bool(state.get("last_question")) and (
            refers_back(self.pack, text) or continues(self.pack, text)
        )

    def topic_words_only(self, scope: Scope, text: str = "") -> bool:
        """Kept in scope only by declared topic or intent words, spelled right: no product, no
        keyword of an intent that starts a flow ("add seats for the 4 folks from the Berlin
        office" asks for the flow's action: its words are a request, not a topic), and none of
        the hand-off intent's ("operator pls")."""
        kept = _kept_by(scope)
        if not kept:
            return False
        products = {p.key for p in self.pack.products}
        # A hand-off's own word and next to nothing else asks for a person ("operator pls"),
        # however far from the pack ("is it ok for a person to eat 3 eggs a day" is not).
        bare = bare_request(text)
        handoff = {i.name for i in self.pack.intents if i.move == "handoff"} if bare else set()
        return not (products | self.pack.flow_intents() | handoff) & kept

    def _kept_by_a_product(self, scope: Scope) -> bool:
        """Kept in scope by a product's declared word, spelled right, with no word of a flow's
        intent or of a hand-off (a request keeps its message: see :meth:`topic_words_only`)."""
        kept = _kept_by(scope)
        handoff = {i.name for i in self.pack.intents if i.move == "handoff"}
        requests = self.pack.flow_intents() | handoff
        return bool(kept & {p.key for p in self.pack.products}) and not kept & requests

    async def _weigh_product_words(self, text: str, scope: Scope) -> Scope:
        """A product's word that is an ordinary word too ("deploy", "monitor") keeps a message
        unless both readings say it is about something else: the intent head reads none of the
        pack's intents, surely (:data:`NONE_SURE`), and with the pack's declared words taken
        out the message sits nearer the generic outside lines than the pack (margin below 0):
        "What's the best way to deploy a tent in strong wind?" (none 0.80, -0.131), "My doctor
        wants me to wear a blood pressure monitor for 24 hours" (none 0.72, -0.106). Either
        alone turns away in-scope questions ("how long is the trial" is -0.061 without its
        words; the head reads none at 0.62 for "what's the max size of a build artifact")."""
        domain, vector = await self.domain(), await self._embed(text)
        if domain is None or vector is None or domain.margin_fit is None:
            return scope
        reading = await self.readers.intent(text, None, vector)
        if reading.answer != NONE or reading.confidence < NONE_SURE:
            return scope
        rest = " ".join(without_phrases(normalise(text), _declared_phrases(self.pack)).split())
        if not rest or self._unread_language(text, domain):
            return scope
        rest_vector = await self._embed(rest)
        margin = None if rest_vector is None else domain.margin(rest_vector)
        if margin is None or margin >= 0.0:
            return scope
        scope["verdict"], scope["template"] = "out", None
        scope["rule"] = f"domain:outside-margin without the pack's words, despite {scope['rule']}"
        scope["score"], scope["threshold"] = round(margin, 4), 0.0
        return scope

    async def _weigh_topic_words(self, text: str, scope: Scope, of_ours: bool) -> Scope:
        """A topic word alone ("help", "buy", "good morning") keeps a message unless it sits
        clearly nearer the generic outside lines than the pack (the fitted margin): "can you
        help me write a cover letter" is about cover letters, not support; or nearer the lines
        about other software's own use than the pack's texts (as for a message no word keeps:
        :meth:`_weigh_elsewhere`): "Our Kubernetes pod keeps getting OOMKilled. How do I set the
        memory limits right?" (-0.110) is no question about integrations. On tests/data and the
        twenty-sixth round's sets, every message so kept and nearer other software's questions
        (15) is out of scope; the nearest in-scope one reads +0.032. Not a message
        :func:`_unweighed` keeps (a certification asked of the company, a request)."""
        unweighed = _unweighed(self.pack, text)
        if unweighed:
            scope["rule"] += f" ({unweighed})"
            return scope
        domain, vector = await self.domain(), await self._embed(text)
        if domain is None or vector is None or domain.margin_fit is None:
            return scope
        spared = self._unread_language(text, domain)
        if spared:
            return await self._weigh_across(text, scope, spared)
        margin = domain.margin(vector)
        if margin is None or margin >= domain.margin_fit.threshold:
            # (the company named says what it is about: "kubectl shows the acme self-hosted pod
            # in CrashLoopBackOff, help")
            named = bool(matching(normalise(text), self.pack.company_names()))
            rule = f"domain:nearer other software's own questions, despite {scope['rule']}"
            return await self._weigh_elsewhere(text, vector, domain, scope, of_ours or named, rule)
        if await self._own_part_kept(text, domain, domain.margin_fit.threshold):
            scope["rule"] += " (its part in the pack's language)"
            return scope
        if await self._asks_for_person(text, vector, True):
            return scope
        scope["verdict"], scope["template"] = "out", None
        scope["rule"] = f"domain:outside-margin, despite {scope['rule']}"
        scope["score"], scope["threshold"] = round(margin, 4), domain.margin_fit.threshold
        return scope

    async def _own_part_kept(self, text: str, domain: Domain, threshold: float) -> bool:
        """Whether a message that mixes the pack's language with another one its texts are not in
        is kept by its clauses in the pack's language alone, weighed by the same margin, where
        they ask something: the encoder reads the whole as nothing in particular ("can you bump
        up our seats? estamos creciendo rápido" sat at -0.03 against 0.08; its first clause alone
        at 0.28), while "help me plan my wedding budget please, vielen Dank im Voraus" is still
        declined, and so is "thanks for the help with my account, aber wie backe ich einen Kuchen
        ohne Eier?" (its question is in the other language). The whole message must also hold
        its place across languages (:meth:`_across_margin`, where a multilingual encoder reads
        it): "can you help me with the seating plan please? c'est pour le mariage de ma sœur"
        reads -0.13 there, the mixed questions about Acme 0.09 to 0.39."""
        others, own = language.split_by_language(text, self.pack.language, self._languages())
        if not others - domain.languages or not (is_question(own) or asks_to_act(own)):
            return False
        vector = await self._embed(own)
        margin = None if vector is None else domain.margin(vector)
        if margin is None or margin < threshold:
            return False
        across = await self._across_margin(text)
        return across is None or across[0] >= across[1]

    async def _weigh_respelled(self, text: str, scope: Scope) -> Scope:
        """A message kept only by a word respelled into one of the pack's, in a language the
        pack's texts are not in, is weighed across languages (:meth:`_weigh_across`): a word of
        another language is often a typo's distance from a keyword."""
        domain = await self.domain()
        spared = None if domain is None else self._unread_language(text, domain)
        return await self._weigh_across(text, scope, spared) if spared else scope

    async def _weigh_across(self, text: str, scope: Scope, spared: str) -> Scope:
        """A topic word alone in a language the pack's texts are not in (often a word respelled
        into the pack's: "comprar" read as "compare") keeps the message unless the
        cross-language margin declines it by :data:`ACROSS_WORD_GAP` more than it would a
        message with no word of the pack's: "¿Sabes a qué hora abre la farmacia? Necesito
        comprar algo para la gripe" (-0.297 against -0.064 on the sample pack) is declined,
        "Comment puis-je inviter un collègue dans notre espace de travail ?" (-0.211) is not. A
        request for a person in so many words is always kept."""
        across = await self._across_margin(text)
        if across is None or across[0] >= across[1] - ACROSS_WORD_GAP or asks_for_person(text):
            return scope
        scope["verdict"], scope["template"] = "out", None
        scope["rule"] = f"domain:outside across languages ({spared}), despite {scope['rule']}"
        scope["score"], scope["threshold"] = round(across[0], 4), across[1]
        return scope

    async def _weigh_edge(
        self, text: str, vector: Any, domain: Domain, scope: Scope, of_ours: bool
    ) -> Scope:
        """A message kept only just (``domain:edge``, no declared word) is declined when it shows
        nothing that ties it to the pack, as many generic lines sit this close:

        - it is nearer the generic outside lines than the pack's texts (margin below
          :data:`EDGE_MARGIN`): "my landlord won't give back my deposit" (-0.002), "tell me a
          joke" (-0.029);
        - or it uses no word of the pack's and the intent head reads none of the pack's intents
          at the head's gate: "knock knock" (none at 0.98). Either alone misreads in-scope
          questions: "are you guys SOC2" uses no word of the pack's, and the head reads none
          for "will you call me at night if something breaks" at 0.90, its gate;
        - or it is nearer the lines about other software's own use than the pack's texts
          (:meth:`~bot.turn.domain.Domain.elsewhere_margin` below :data:`EDGE_MARGIN`): "how do
          I set up an automatic out-of-office reply in Outlook?" (-0.029; the nearest in-scope
          edge question of tests/data, "can I use it from my phone", reads +0.001).

        Declined, it is as if outside, with the spares of the topic-word margin (a language the
        pack's texts are not in, a request for a person or one of the pack's flows); kept, it
        stays ``domain:edge``. ``of_ours``: asked of the company or on from an answer, the
        other software's lines are not read."""
        margin = domain.margin(vector)
        nearer_generic = margin is not None and margin < EDGE_MARGIN
        elsewhere = None if nearer_generic or of_ours else domain.elsewhere_margin(vector)
        nearer_elsewhere = elsewhere is not None and elsewhere < EDGE_MARGIN
        decided = nearer_generic or nearer_elsewhere
        read = None if decided else await self._unanchored(text, vector, domain)
        if not decided and read is None:
            return scope
        if await self._spared(text, vector, domain):
            return scope
        # A margin that decided is the record's score, with its threshold.
        if margin is not None and nearer_generic:
            rule = "domain:edge, nearer the generic lines than the pack"
            return _declined(scope, rule, margin, EDGE_MARGIN)
        if elsewhere is not None and nearer_elsewhere:
            rule = "domain:edge, nearer other software's own questions than the pack"
            return _declined(scope, rule, elsewhere, EDGE_MARGIN)
        # The closeness and its threshold stay; the rule says what the head read.
        scope["verdict"], scope["template"] = "out", None
        scope["rule"] = f"domain:edge, no word of the pack and the intent head reads {read}"
        return scope

    async def _weigh_elsewhere(
        self,
        text: str,
        vector: Any,
        domain: Domain,
        scope: Scope,
        of_ours: bool,
        rule: str = "domain:inside, but nearer other software's own questions than the pack",
    ) -> Scope:
        """A message inside by closeness alone (no declared word) is declined when it sits nearer
        the lines about other software's own use than the pack's texts: "how do i squash my
        last 5 commits in git" (-0.077), "kubectl rollout restart stuck in pending" (-0.009);
        the nearest in-scope question of tests/data reads +0.044. A software question sits
        close to a software pack whatever software it is about. ``of_ours``: as for
        :meth:`_weigh_edge`. A message kept by topic words alone is weighed so too, under its own
        ``rule`` (:meth:`_weigh_topic_words`)."""
        elsewhere = None if of_ours else domain.elsewhere_margin(vector)
        if elsewhere is None or elsewhere >= EDGE_MARGIN:
            return scope
        if await self._spared(text, vector, domain):
            return scope
        return _declined(scope, rule, elsewhere, EDGE_MARGIN)

    async def _spared(self, text: str, vector: Any, domain: Domain) -> bool:
        """What keeps a message the domain's closeness would decline: a language the pack's
        texts are not in, a request for a person or for one of the pack's flows."""
        return bool(self._unread_language(text, domain)) or await self._asks_for_person(
            text, vector, True
        )

    async def _unanchored(self, text: str, vector: Any, domain: Domain) -> str | None:
        """How the intent head reads a message that uses no word of the pack's ("none 0.98"),
        when it reads none of the pack's intents at or above its gate; else None."""
        if not domain.words or anchors(text, domain.words):
            return None
        reading = await self.readers.intent(text, None, vector)
        if reading.answer != NONE or reading.confidence < self.pack.gates["intent"]:
            return None
        return f"{NONE} {reading.confidence:.2f}"

    async def _carries_on(self, text: str, state: ConversationState) -> bool:
        """Whether ``text`` carries on from the last answer (:func:`carries_on`: "can we pick
        eu" after the data location was answered) and, searched alone, is answered from the
        same passage: a short message kept in scope for the last answer's sake is never then
        answered from another ("how long?" after the logs section would find the trial)."""
        if self.retriever is None or not carries_on(self.pack, text, state):
            return False
        checked = await answerable.check(self.retriever, text, self.pack.gates[answerable.GATE])
        if checked is None or not checked.answers or not checked.facts:
            return False
        return checked.facts[0].key in (state.get("last_answered") or [])

    async def _across_margin(self, text: str) -> tuple[float, float] | None:
        """The message's margin in the retriever's multilingual space and the threshold, or
        None where the retriever cannot embed across languages (the keyword rules decide)."""
        if self.retriever is None:
            return None
        try:
            return await asyncio.to_thread(self._across_blocking, text)
        except Exception:  # the multilingual encoder failed: keyword rules only, as without it
            log.exception("scope: the cross-language domain check failed")
            return None

    def _across_blocking(self, text: str) -> tuple[float, float] | None:
        key = (self.pack.version, getattr(self.retriever, "name", ""))
        with _building:
            if key not in _across:
                texts, lines = domain_texts(self.pack), list(outside_lines())
                rows = self.retriever.embed_across_languages(texts + lines)
                built = None if rows is None else fit_across(rows[: len(texts)], rows[len(texts) :])
                _across[key] = built
            across = _across[key]
        if across is None:
            return None
        vector = self.retriever.embed_across_languages([text])[0]
        return across.margin(vector), across.threshold

    def _unread_language(self, text: str, domain: Domain) -> str | None:
        """The message's language when it is confidently one the pack's texts are not in."""
        lang, p = language.written_in(text, self._languages())
        return lang if lang and p >= SURE_LANGUAGE and lang not in domain.languages else None

    def _languages(self) -> list[str]:
        return sorted({self.pack.language, *self.pack.templates})

    def _text_languages(self, texts: list[str]) -> frozenset[str]:
        """The languages a fair share of the pack's texts are confidently written in."""
        found = [language.detect(t, self._languages()) for t in texts]
        counts = Counter(lang for lang, p in found if lang and p >= SURE_LANGUAGE)
        enough = max(3, len(texts) // 20)
        return frozenset({self.pack.language, *(lang for lang, n in counts.items() if n >= enough)})

    def warm(self) -> None:
        """Start building the pack's domain on a thread of its own (at app start), so neither
        the start nor, usually, the first turn waits; a turn that comes first waits for it. A
        thread, not a task: it outlives no event loop and needs no stopping. A daemon with the
        numpy encoder, so a process stopped mid-fit exits at once; not with torch or ONNX Runtime,
        which abort the process ("terminate called without an active exception") under a thread
        killed at exit (the process then waits for the fit)."""
        from bot.heads.encoder import backend

        if self._batcher is not None and self._key() not in _domains:
            daemon = backend() == "numpy"
            threading.Thread(target=self._build_or_log, name="scope-fit", daemon=daemon).start()

    async def domain(self) -> Domain | None:
        """The pack's domain, built and fitted on first use (off the event loop)."""
        if self._batcher is None:
            return None
        key = self._key()
        if key in _domains:
            return _domains[key]
        try:
            return await asyncio.to_thread(self._build, key)
        except Exception:  # the encoder failed: the declared rules decide alone
            log.exception("scope: the domain check is off (embedding failed)")
            self._batcher = None
            return None

    def _key(self) -> tuple[str, str]:
        from bot.heads.encoder import shipped_version

        return (self.pack.version, shipped_version())

    def _build(self, key: tuple[str, str]) -> Domain | None:
        """Embed the pack's texts and fit, once per process (blocking; any thread)."""
        from bot.heads.encoder import embed_shipped

        with _building:
            if key not in _domains:
                texts = domain_texts(self.pack)
                built = build_domain(texts, embed_shipped, asked=asked_texts(self.pack))
                if built is not None:
                    built = replace(built, languages=self._text_languages(texts))
                    log.info("scope: %s (%s)", built.fit.describe(), self.pack.name)
                _domains[key] = built
            return _domains[key]

    def _build_or_log(self) -> None:
        try:
            self._build(self._key())
        except Exception:  # a turn retries, and logs, if it fails again
            log.exception("scope: fitting the domain check at start failed")

    async def _embed(self, text: str) -> Any:
        if self._batcher is None:
            return None
        try:
            return await self._batcher.embed(text)
        except Exception:  # the encoder failed: keywords alone, as without embeddings
            log.exception("scope: embedding the message failed; keyword rules only")
            return None

    async def _asks_for_person(self, text: str, vector: Any, or_flow: bool = False) -> bool:
        """Whether the message asks for a person in so many words, or the intent reading (head
        and keyword router) confidently names a hand-off;
        with ``or_flow``, or a flow's intent: a message one of the pack's topic words already
        keeps ("one of our devs quit, can you drop her license") that the head reads, not
        novel, as a request the pack has a procedure for is no stranger to the pack, however
        far its wording sits from the pack's texts."""
        if asks_for_person(text):  # in so many words, whatever the head reads
            return True
        reading = await self.readers.intent(text, None, vector)
        intent = self.pack.intent(reading.answer)
        if intent is None or reading.confidence < LEANS_AT:
            return False
        if intent.move == "handoff":
            return reading.confidence >= self.pack.gates["intent"]
        flows = {f.trigger.intent for f in self.pack.flows.values()}
        if not (or_flow and reading.reason is None and intent.name in flows):
            return False
        # A lean is enough here: the message already holds one of the pack's words ("hiring a
        # new dev next week, need another license for her": seats at 0.83); but a lean alone,
        # with none of the flow's own words, is the head's guess about a stranger ("can you help
        # me write a cover letter for a product manager job": demo at 0.78).
        sure = reading.confidence >= self.pack.gates["intent"]
        return sure or bool(matching(normalise(text), intent.keywords))

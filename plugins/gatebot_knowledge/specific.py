"""Does the best passage hold the specific thing asked?

The answerability head reads how well a passage fits a question as a whole (closeness, shared
words). A question that asks for a value is more specific than that: "how long are build logs
kept" is answered only by a passage that says for how long, and "what is the maximum number of
parallel jobs" is not answered by a passage about parallel jobs that gives no number, however
close it sits. This module reads the kind of value a question asks for and whether the passage
holds one:

- ``count`` ("how many", "what is the maximum / limit / number of ..."): a number (digits or a
  number word, "twelve") that is not a length of time, or "unlimited";
- ``duration`` ("how long", "how soon", "how far back", "how many days"): a number followed by a
  unit of time ("14-day", "30 days", "one hour");
- ``frequency`` ("how often"): "every minute", "daily", "three times".

A count may also be a list that can be counted ("owner, admin, member or viewer"). A count question
that names what it counts ("how many websites", "the number of seats") is held only by a number of
that thing (the noun within two words after the number) or by a list in a passage that names it:
"twelve locations" does not say how many websites one may monitor.

The check then moves the head's P(answerable) on the logit scale, by declared amounts:

- the value asked for is missing from the passage: P is held at or below :data:`MISSING_AT`
  (a confident "no"): no fact is asserted that cannot say what was asked;
- it is there, and every other content word of the question is in the passage or elsewhere in
  its document (the document's title and sections: "build" in "how long are build logs kept" is
  in the Pipelines overview, not in its logs section): the logit is raised by :data:`HELD_BOOST`.
  A question about something the document never names ("how long do you keep backups") is not
  raised, whatever numbers the passage holds.

Questions that ask for no value (most) are left as the head reads them. "How much" is not read
as a count: a price question is answered by a pricing entry that names no figure.

**An action the pack never names.** A yes/no or how-to question asks about an action ("can the
free trial be extended", "can people subscribe to our status page", "is it possible to export
...", "how do I cancel ..."); when that verb is a word the pack never uses (not even in its asked
questions), the passage is about the thing and not the action, and the logit is lowered by
:data:`ACTION_PENALTY` (``+action-unseen``): evidence against, not proof, since customers also
name an action the pack words otherwise ("force MFA" for "require two-factor authentication").
Light verbs ("get", "see", "use", "set") name no action of their own and are not read.

**A plan the passage does not name.** A price question about one named plan ("how much is the
Business plan per month", "what does the pro tier cost") is answered only by a passage that names
that plan: a pricing entry that speaks of plans in general says nothing of its price. Without
the plan's name in the passage, P is held at :data:`MISSING_AT` (``+plan-missing``).

**A price the passage says nothing of.** A question about what something costs ("how much extra
do the self-hosted runners cost", "is SSO charged separately?") is answered only by a passage
whose text speaks of money at all (a price, a plan, a seat, a trial, free or paid:
:data:`MONEY_WORDS`): the runners section says they exist, not what they cost. Without one, P is
held at :data:`MISSING_AT` (``+price-missing``). Only a question of price, in the clause that
asks: not "how much storage", "who's in charge", nor "to avoid extra charges, how long are
caches kept?".

**Past the figure the passage gives.** "can we keep build logs longer than 30 days if we pay
extra?" asks what lies past the passage's own figure (:mod:`gatebot_knowledge.beyond`): the
passage says where the line is, not whether it moves, so P is held at :data:`MISSING_AT`
(``+beyond-stated``).

**A thing the pack never names.** A question whether something exists ("is there a mobile app
for alerts", "do you offer an on-prem version of Acme Cloud") asks about that thing; when none of
its words is one the pack uses, the passage found is about the rest of the question (alerts, Acme
Cloud), and the logit is lowered by the same :data:`ACTION_PENALTY` (``+thing-unseen``). Words
that name no thing of their own ("a way to", "an option") are not read.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from gatebot_knowledge.beyond import beyond_stated
from gatebot_knowledge.figures import LIGHT_VERBS, asked_value, counted, holds_value, stems
from gatebot_knowledge.index import KnowledgeIndex
from gatebot_knowledge.lexical import STOPWORDS, stem, tokenize
from gatebot_knowledge.passages import Passage

#: P(answerable) never above this when the passage lacks the value asked for (a "no" at a 0.6 gate).
MISSING_AT = 0.3
#: Added to the head's logit when the value asked for and every content word are held.
HELD_BOOST = 2.0
#: Taken from the head's logit when the action asked about is a word the pack never uses.
ACTION_PENALTY = 1.5

#: Words that say a value is asked for rather than what it is about ("the trial period").
_VALUE_WORDS = stems(
    "long many soon often quickly period duration time number amount count limit limits"
    " maximum minimum max min total"
    # ...nor words for keeping a thing and its end, nor for a point in time, whatever value is
    # asked: "Retention question: how long are logs kept before they're purged?"
    " retention retain retained purged wiped expire expires expired expiry ttl lifetime length"
    " before until till"
)


#: What is left of a contraction, no word of its own: "before they're purged", "we'll need".
_CLITICS = frozenset("re ll ve".split())


#: The action a yes/no or how-to question asks about: "can the trial be extended", "can people
#: subscribe to ...", "is it possible to export ...", "how do I cancel ...".
_ACTION_ASKED = (
    re.compile(r"\b(?:can|could|will)\s+(?:\w+\s+){0,4}?be\s+([a-z]+(?:ed|en))\b", re.IGNORECASE),
    re.compile(
        r"\b(?:can|could)\s+(?:i|we|you|they|people|users|someone|anyone|(?:our|my)\s+\w+)\s+"
        r"(?:also\s+|just\s+|still\s+)?([a-z]+)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\bis\s+(?:it|there\s+a\s+way)\s+(?:possible\s+)?to\s+([a-z]+)\b", re.IGNORECASE),
    # (an adverb is no action: "How do I even get teammates into the workspace?")
    re.compile(
        r"\bhow\s+(?:do|can|could|would|should)\s+(?:i|we)\s+"
        r"(?:(?:even|just|actually|really|still|also|ever|then|now|quickly|easily)\s+)?([a-z]+)\b",
        re.IGNORECASE,
    ),
)
#: Whether a thing exists: "is there a(n) X", "do you have / offer a(n) X", "does it come with X",
#: or a sentence that opens on "any" ("Any special discount for early stage startups?").
#: X runs to the first word that ends a noun phrase (a preposition, a clause, punctuation).
_THING_ASKED = re.compile(
    r"(?:\b(?:(?:is|are)\s+there|do\s+(?:you|they|y'?all)(?:\s+guys)?\s+(?:have|offer|provide|"
    # ("does Acme Cloud offer ...": a name of two words too)
    r"sell|make|ship|do|give)|does\s+(?:it|\w+(?:\s+\w+)?)\s+(?:have|offer|provide|come\s+with))\s+"
    # ("any" opening a question: not "Any time I deploy, the pipeline fails.")
    # (or opening a message of one sentence, unmarked: "any startup discount or cheaper if we
    # pay yearly"; a statement so written, "any webhook call to slack fails with 403", reads a
    # thing too, and the passage that holds it still answers)
    r"(?:a|an|any|some)|(?:^|(?<=[.!?,\n]))\s*any(?=[^.!?\n]*\?)|^\s*any(?=[^.!?\n]*$))\s+"
    # (words apart by spaces: one long word is never split, which took seconds to fail)
    r"([a-z0-9][\w'-]*(?:\s+[a-z0-9][\w'-]*){0,3}?)(?=\s*(?:[?.,!;:]|$|\b(?:for|of|to|that|which"
    r"|where|with|in|on|"
    r"we|i|you|or|and|so|if|like|available|included)\b))",
    re.IGNORECASE,
)
#: Words that name no thing of their own: "is there a way to ...", "do you have an option for".
_NO_THING = stems(
    "way ways option options setting settings possibility chance difference problem"
    " issue reason plan plans version versions kind type sort"
    # ...nor words of talk after it: "is there any free option also?"
    " also too please then now again though anyway instead"
    # ...nor asking for advice: "Any tips for getting Docker layers cached in Pipelines?"
    " tip tips idea ideas advice guidance suggestion suggestions hint hints pointer pointers"
    " recommendation recommendations insight insights help update updates news thought thoughts"
    " luck word time times doc docs documentation clue info"
)


#: A price question ("how much", "price", "cost", "per month") and the plan it names: "the
#: Business plan", "your pro tier".
_PRICE_ASKED = re.compile(
    r"\bhow\s+much\b|\bprice[sd]?\b|\bpricing\b|\bcosts?\b|\bper\s+(?:month|year|seat|user)\b",
    re.IGNORECASE,
)
_PLAN_NAMED = re.compile(r"\b([a-z][\w-]*)\s+(?:plan|tier|edition|package)\b", re.IGNORECASE)
#: Words before "plan" that name no plan ("the cheapest plan", "your paid tiers").
_NO_PLAN = frozenset(
    "a an the your our my this that which what each every any one other current cheapest"
    " lowest highest top paid free monthly annual yearly team price pricing payment"
    " subscription same right best basic cost no zero low cheap cheaper".split()
)


def asked_plan(question: str) -> str | None:
    """The plan a price question names ("how much is the Business plan": ``"business"``), or
    None."""
    if not _PRICE_ASKED.search(question):
        return None
    for found in _PLAN_NAMED.finditer(question):
        word = found.group(1).lower()
        parts = word.split("-")  # "no-cost plan" names no plan
        if not any(w in _NO_PLAN or w in STOPWORDS for w in parts):
            return stem(word)
    return None


#: A question of what something costs: "how much extra", "does it cost", "is it charged", "any fee".
#: Not "how much do you retain in the build cache", nor "who's in charge".
_COST_ASKED = re.compile(
    r"\b(?:price[sd]?|pricing|costs?|costing|fees?|pay\s+(?:extra|more))\b"
    r"|(?<!\bin\s)\b(?:charged?|charges)\b|\bhow\s+much\s+extra\b",
    re.IGNORECASE,
)
#: Words of a passage that speaks of money: a price question may be answered there.
MONEY_WORDS = (
    "price prices pricing cost costs free paid pay charge charged billing bill plan plans tier"
    " tiers seat seats trial invoice invoices subscription included fee fees"
).split()
_MONEY_STEMS = frozenset(stem(w) for w in MONEY_WORDS)


def asks_cost(question: str) -> bool:
    """Whether ``question`` asks what something costs (:data:`_COST_ASKED`), in the clause
    that asks where it asks with a question mark: "does acme monitor do sms alerts? uptimerobot
    charges extra for those" and "We're comparing costs across vendors - does Pipelines run
    Docker builds?" tell of a price, they do not ask one."""
    sentences = [s for s in _SENTENCE_END.split(question) if s.rstrip().endswith("?")]
    asked = [_asking_clause(s) for s in sentences] or [question]
    return any(_COST_ASKED.search(part) for part in asked)


#: Where a message's sentences end, and where a sentence's clauses part.
_SENTENCE_END = re.compile(r"(?<=[.?!])")
_CLAUSE_END = re.compile(r"[,;:\u2013\u2014]|\s-\s")


def _speaks_of_money(passage: Passage) -> bool:
    """Whether the passage's text (not its title: every account section's title names seats)
    holds a word of :data:`MONEY_WORDS`."""
    return bool(_MONEY_STEMS & set(tokenize(passage.text)))


def _asking_clause(sentence: str) -> str:
    """The clause a question sentence ends with, with those before it while it has fewer than
    three words ("how much is it per seat - roughly?")."""
    parts = [p for p in _CLAUSE_END.split(sentence) if p.strip()]
    while len(parts) > 1 and len(parts[-1].split()) < 3:
        last = parts.pop()
        parts[-1] += last
    return parts[-1] if parts else sentence


#: A second question joined to the first ("is there a trial for Pipelines, and can it build our
#: Dockerfiles?"): the best passage may answer the other one, so the thing's absence from it
#: says nothing.
_MORE_QUESTIONS = re.compile(
    r"\?\s*\S.*\?|\b(?:and|also|plus)\s+(?:can|could|does|do|is|are|will|how|what|where)\b",
    re.IGNORECASE,
)


#: What a question asks to change: "how do I change the email address on my login", "can we
#: update our billing contact". The thing runs as in :data:`_THING_ASKED`.
_CHANGE_OF = re.compile(
    r"\b(?:change|update|edit|modify|rename|replace|reset)\s+(?:the|my|our|your|its|their)\s+"
    r"((?:[a-z0-9][\w'-]*\s*){1,3}?)(?=\s*(?:[?.,!;:]|$|\b(?:for|of|to|that|which|where|with|in|"
    # (talk after the thing names nothing: "where do i change my password then")
    r"on|from|at|after|once|we|i|you|or|and|so|if|because|then|now|again|too|please|though"
    r"|anyway|instead|myself|ourselves)\b))",
    re.IGNORECASE,
)


#: Who a question asks may do something: "can admins download invoices too", "could a viewer
#: restore it". (The lazy name leaves a plural's "s" out.)
_DOER_ASKED = re.compile(
    r"\b(?:can|could|may)\s+(?:the\s+|our\s+|my\s+|an?\s+)?([a-z]+?)s?\s+"
    r"(?:also\s+|too\s+|even\s+|still\s+|really\s+)?([a-z]+)",
    re.IGNORECASE,
)
#: Who a passage says may do it: "Account owners can download each one", "an owner can restore".
_DOER_SAID = re.compile(
    r"\b([a-z]+)\s+can\s+(?:(?:also|only|then|still|now|easily)\s+)?([a-z]+)", re.IGNORECASE
)
#: Saying it may be done, by no one named: "A failed job can be retried from the pipeline page".
_DONE_BY_ANYONE = re.compile(r"\bcan\s+be\s+([a-z]+)", re.IGNORECASE)
#: Who asks: the customer, or anyone at all; not a role.
_NO_DOER = stems(
    "i we you they it he she someone anyone anybody everyone everybody people one team teams"
    " colleague colleagues engineer engineers developer developers dev devs staff user users"
)


def other_doer(question: str, text: str, said: frozenset[str] | set[str]) -> list[str]:
    """Whom ``question`` asks about doing what ``text`` says another may do: "can admins
    download invoices too?" against "Account owners can download each one". The one asked about
    is a word of the pack (``said``: a role it names elsewhere) that ``text`` lacks; ``text``
    says who may, and it is someone else, or says it may be done and by whom not ("can a viewer
    retry a failed job" against "A failed job can be retried from the pipeline page": whether a
    viewer's role allows it is not said). Empty when it asks of no one else."""
    held = set(tokenize(text))
    for asked in _DOER_ASKED.finditer(question):
        who, verb = stem(asked.group(1).lower()), stem(asked.group(2).lower())
        if who in _NO_DOER or who not in said or who in held:
            continue
        for found in _DOER_SAID.finditer(text):
            if stem(found.group(2).lower()) == verb and stem(found.group(1).lower()) != who:
                return [who]
        if any(_same_verb(f.group(1), verb) for f in _DONE_BY_ANYONE.finditer(text)):
            return [who]
    return []


def _same_verb(word: str, verb: str) -> bool:
    """Whether ``word`` is the verb stemmed as ``verb``, a final y read as i ("retried": retry)."""
    done = stem(word.lower())
    return done == verb or done.rstrip("iy") == verb.rstrip("iy")


def asked_thing(question: str) -> list[str]:
    """The stems of the thing an existence question asks about ("is there a mobile app":
    ``["mobil", "app"]``), without words that name no thing; empty for other questions."""
    found = _THING_ASKED.search(question) or _THING_HAD.search(question)
    found = found or _THING_LAST.search(question)
    return _thing(found or _THING_SHOWN.search(question))


#: The thing first and whether it is there last, as some customers write English: "discount for
#: small indie studio or startup program have?", "dark mode available?". The thing runs as in
#: :data:`_THING_ASKED`, to three words, from the message's start.
_THING_LAST = re.compile(
    # (no question word first: "what integrations do you have?", "is SSO available?")
    r"^\s*(?:any\s+)?(?!(?:what|which|how|who|where|when|why|is|are|do|does|can|could|will|would"
    r"|should)\b)((?:[a-z0-9][\w'-]*\s*){1,3}?)(?=(?:\s+(?:for|of|or|and|with)\b[^.!?\n]*)?"
    r"\s+(?:(?:you|they|acme)\s+)?(?:have|available|exists?)\s*\?\s*$)",
    re.IGNORECASE,
)


#: Whether a document shows a thing: "is gst on the invoices?", "are PO numbers shown on your
#: receipts?". The thing runs as in :data:`_THING_ASKED`, to three words.
_THING_SHOWN = re.compile(
    # (opening a sentence: not "why is my card charged twice on the invoice", a complaint)
    r"(?:^|(?<=[.!?])\s)\s*(?:is|are)\s+(?:the\s+|our\s+|my\s+)?"
    r"(?!(?:shown|listed|printed|included)\b)((?:[a-z0-9][\w'-]*\s+){1,3}?)(?:shown\s+|listed\s+"
    r"|printed\s+|included\s+)?(?:on|in)\s+(?:the\s+|your\s+|our\s+|my\s+|each\s+)?(?:\w+\s+)?"
    r"(?:invoices?|receipts?|bills?|statements?)\b(?!\s+(?:tab|page|section|area|menu|screen|list)\b)",
    re.IGNORECASE,
)


#: Whether a named part has a thing, no article needed: "do the hosted runners have gpus?",
#: "does your status page have custom domains?". The thing runs as in :data:`_THING_ASKED`, to
#: three words.
_THING_HAD = re.compile(
    r"\b(?:do|does)\s+(?:the|your)\s+(?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*\s+"
    r"(?:have(?!\s+to\b)|come\s+with)\s+(?:a\s+|an\s+|any\s+|some\s+)?"
    # (not "have to", a must: "do the monitors have to be public?"; nor how much of it: "does
    # the trial have everything unlocked", "every feature")
    r"(?!(?:every|everything|all|anything|nothing|no|the\s+same)\b)"
    r"((?:[a-z0-9][\w'-]*\s*){1,3}?)(?=\s*(?:[?.,!;:]|$|\b(?:for|of|to|that|which|where|with|in|"
    r"on|we|i|you|or|and|so|if|like|available|included)\b))",
    re.IGNORECASE,
)


#: What a question asks how long is kept: "How long are build artifacts (not logs) retained?",
#: "how long do you keep the audit trail". The thing runs as in :data:`_THING_ASKED`.
_KEPT_OF = re.compile(
    r"\bhow\s+long\s+(?:are|is)\s+(?:the\s+|our\s+|my\s+|your\s+)?((?:[a-z0-9][\w'-]*\s*){1,3}?)"
    r"(?:\s*\([^)]*\))?\s+(?:kept|retained|stored|saved|held)\b"
    r"|\bhow\s+long\s+(?:do|does|will)\s+\w+\s+(?:keep|retain|store|save|hold)\s+"
    r"(?:the\s+|our\s+|my\s+)?((?:[a-z0-9][\w'-]*\s*){1,3}?)(?=\s*(?:\(|[?.,!;:]|$"
    r"|\b(?:for|after|once|when|in|on)\b))",
    re.IGNORECASE,
)


#: What points back rather than names a thing: "how long are they kept".
_VAGUE = stems("they them it those these thing things everything stuff history one ones")


#: Words for what holds a thing, not what it is: "the build cache files" are the build cache.
_HOLDERS = stems("file files copy copies record records entry entries item items folder folders")


def kept_thing(question: str) -> list[str]:
    """The stems of what a question asks how long is kept, as :func:`asked_thing` reads them."""
    found = _KEPT_OF.search(question)
    if not found:
        return []
    said = next(g for g in found.groups() if g)
    kept = [w for w in tokenize(said) if w not in _NO_THING]
    while len(kept) > 1 and kept[-1] in _HOLDERS:
        kept.pop()
    # "how long are they kept", "how long are things stored": what they are is said elsewhere.
    return [] if not kept or kept[-1] in _VAGUE else kept


#: Words after a thing's name that do not name it: talk ("is there a free trial right now?") and
#: words for any kind of thing ("a Slack notifications integration" is a Slack notification).
_NOT_HEAD = stems(
    "right now currently still yet anymore nowadays btw today asap pls please guys lol all"
    " integration integrations feature features service services system systems capability"
    " capabilities setup support center centre centers tool tools function functionality thing"
    " level levels edition editions package packages offer offers deal deals"
)


def _head(thing: list[str]) -> str | None:
    """The word of ``thing`` that names it: its last, talk and kinds of thing aside."""
    named = [w for w in thing if w not in _NOT_HEAD]
    return named[-1] if named else None


def changed_thing(question: str) -> list[str]:
    """The stems of what a question asks to change ("how do I change the email address on my
    login": ``["email", "address"]``), as :func:`asked_thing` reads them; empty if none."""
    return _thing(_CHANGE_OF.search(question))


def _thing(found: re.Match[str] | None) -> list[str]:
    if not found:
        return []
    return [w for w in tokenize(found.group(1)) if w not in _NO_THING]


#: A customer's verb and the verbs a help page writes for the same action: "can I force 2FA for
#: everyone" is what the account page words as "can be required". An action counts as named when
#: the pack uses the verb or one of these.
_SAME_ACTION = {
    stem(verb): stems(same)
    for verb, same in {
        "force": "require required enforce",
        "enforce": "require required force",
        "mandate": "require required",
        "erase": "delete remove",
        "wipe": "delete remove",
        "terminate": "cancel delete",
        "rerun": "retry retried",
        "redo": "retry retried",
        "restart": "retry retried",
        "modify": "change edit",
        "edit": "change modify",
        "purchase": "buy",
        "invite": "add",
        # "What roles can be assigned to a user": owners "choose their role".
        "assign": "choose",
        "onboard": "add invite",
        "undo": "restore",
        "recover": "restore",
        # Where alerts and results go: "what channels can alerts be delivered to".
        "deliver": "send sent",
        "route": "send sent",
        "forward": "send sent",
        # "can we hook up our own build agents": connected, as the pack words it.
        "hook": "connect connects",
    }.items()
}


def action_named(action: str, known: Callable[[str], bool]) -> bool:
    """Whether the pack names ``action`` (a stem), itself or as a verb of :data:`_SAME_ACTION`."""
    return known(action) or any(known(w) for w in _SAME_ACTION.get(action, ()))


def asked_action(question: str) -> str | None:
    """The stem of the action ``question`` asks about (see :data:`_ACTION_ASKED`), or None."""
    for pattern in _ACTION_ASKED:
        found = pattern.search(question)
        if found:
            word = found.group(1).lower()
            if word in STOPWORDS or len(word) < 3:  # "can anyone on the team ...": no verb read
                return None
            return None if stem(word) in LIGHT_VERBS else stem(word)
    return None


@dataclass
class Specific:
    """What the check read: the value asked for, whether the passage holds it, and the question's
    content words found neither in the passage nor in its document."""

    asked: str | None
    held: bool
    missing: list[str]

    def features(self) -> dict[str, float]:
        if self.asked == "action":
            return {"action_unseen": 1.0}
        if self.asked == "thing":
            return {"thing_unseen": 1.0}
        if self.asked == "thing-absent":
            return {"thing_absent": 1.0}
        if self.asked == "plan":
            return {"plan_missing": 1.0}
        if self.asked == "price":
            return {"price_missing": 1.0}
        if self.asked == "beyond":
            return {"beyond_stated": 1.0}
        if self.asked == "doer":
            return {"other_doer": 1.0}
        return {
            "asks_value": 0.0 if self.asked is None else 1.0,
            "holds_value": 1.0 if self.held else 0.0,
            "words_missing": float(len(self.missing)),
        }

    def adjust(self, p: float) -> tuple[float, str]:
        """P(answerable) after the check, and a suffix for the head's version ("" if unmoved)."""
        if self.asked is None:
            return p, ""
        if self.asked in ("action", "thing"):  # evidence against, not proof: logit lowered
            return _moved(p, -ACTION_PENALTY), f"+{self.asked}-unseen"
        if self.asked == "thing-absent":
            return _moved(p, -ACTION_PENALTY), "+thing-absent"
        if self.asked in ("plan", "price"):
            return min(p, MISSING_AT), f"+{self.asked}-missing"
        if self.asked == "beyond":
            return min(p, MISSING_AT), "+beyond-stated"
        if self.asked == "doer":
            return min(p, MISSING_AT), "+other-doer"
        if not self.held:
            return min(p, MISSING_AT), f"+{self.asked}-missing"
        if self.missing:
            return p, ""
        return _moved(p, HELD_BOOST), f"+{self.asked}-held"


def _moved(p: float, by: float) -> float:
    """``p`` with its logit moved by ``by``."""
    z = math.log(max(p, 1e-9) / max(1.0 - p, 1e-9)) + by
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def adjusted(p: float, values: dict[str, float]) -> float:
    """P(answerable) after the check, from the features :meth:`Specific.features` recorded
    (what the stackfaq-dev evaluation scores, so it measures the P the agent acts on)."""
    if values.get("action_unseen") or values.get("thing_unseen") or values.get("thing_absent"):
        return Specific("action", False, []).adjust(p)[0]
    held_down = ("plan_missing", "price_missing", "beyond_stated", "other_doer")
    if any(values.get(k) for k in held_down):
        return Specific("plan", False, []).adjust(p)[0]
    if not values.get("asks_value"):
        return p
    missing = ["?"] * int(values.get("words_missing", 0.0))
    return Specific("value", bool(values.get("holds_value")), missing).adjust(p)[0]


#: Per index: each document's rows (sections share the key before "#"), and the words of the
#: documents read so far. Built on the first value question, so a large corpus is not tokenized
#: whole: only the documents such questions land on.
_DOCUMENTS: weakref.WeakKeyDictionary[
    KnowledgeIndex, tuple[dict[str, list[int]], dict[str, set[str]]]
]
_DOCUMENTS = weakref.WeakKeyDictionary()


def _document_words(index: KnowledgeIndex, row: int) -> set[str]:
    """The words of the passage's whole document (every section under the same key)."""
    held = _DOCUMENTS.get(index)
    if held is None:
        rows: dict[str, list[int]] = {}
        for i, p in enumerate(index.passages):
            rows.setdefault(p.key.split("#", 1)[0], []).append(i)
        held = _DOCUMENTS[index] = (rows, {})
    rows, words = held
    key = index.passages[row].key.split("#", 1)[0]
    if key not in words:
        if len(words) > 4096:
            words.clear()
        words[key] = set(tokenize(" ".join(index.passages[i].lexical for i in rows[key])))
    return words[key]


def check(index: KnowledgeIndex, query: str, row: int) -> Specific:
    """Read ``query`` (as searched: typos already spelled) against the passage at ``row``."""
    passage = index.passages[row]
    plan = asked_plan(query)
    if plan is not None and plan not in tokenize(passage.joint):
        return Specific("plan", False, [plan])
    if beyond_stated(query, passage.text):
        return Specific("beyond", False, [])
    if asks_cost(query) and not _MORE_QUESTIONS.search(query) and not _speaks_of_money(passage):
        return Specific("price", False, [])
    kept = kept_thing(query)
    if kept and not _MORE_QUESTIONS.search(query) and kept[-1] not in tokenize(passage.lexical):
        # What is kept, by its last word ("build artifacts"), is not in the passage: the logs'
        # retention says nothing of how long artifacts are kept.
        return Specific("thing-absent", False, kept)
    asked = asked_value(query)
    if asked is None:
        action = asked_action(query)
        # What the pack says, and how this passage is asked: another passage's asked question
        # ("can an unanswered alert move on to my backup?") vouches for no action of this one
        # ("can you move our workspace to the EU?" against the data-location entry).
        thing = asked_thing(query)
        if action is not None or thing:  # the passage's own asked words, only when read
            own = index.said | set(tokenize(" ".join(passage.asked)))
        if action is not None and not action_named(action, own.__contains__):
            return Specific("action", False, [action])
        if thing and not any(w in own for w in thing):
            return Specific("thing", False, thing)
        head = _head(thing)
        if head is not None and head not in own:
            # The thing is what its last word names, and the pack names none: "a phone app" is
            # an app, which the alerts entry's "phone calls" is not.
            return Specific("thing", False, [head])
        if (
            thing
            and not _MORE_QUESTIONS.search(query)
            and not set(thing) & set(tokenize(passage.lexical))
        ):
            # The pack names the thing, the best passage does not: "is there a trial for Acme
            # Status too" drawn to the pricing entry by "Acme".
            return Specific("thing-absent", False, thing)
        changed = changed_thing(query)
        if changed and changed[-1] not in tokenize(passage.joint):
            # What is to change, by its last word ("the email address"), is not in the passage:
            # the password entry says how to reset a password, not how to change an address.
            # (Its text, not the questions it is asked: "the reset email" is a word of those.)
            return Specific("thing-absent", False, changed)
        other = other_doer(query, passage.text, index.said)
        if other:
            # The passage says who may, and it is someone else: whether this one may is not said.
            return Specific("doer", False, other)
        return Specific(None, False, [])
    counts = counted(query) if asked == "count" else None
    held = holds_value(asked, f"{passage.title}. {passage.text}", counts)
    known = _document_words(index, row)
    terms = [t for t in index.lexical.query_terms(query) if t not in _VALUE_WORDS | _CLITICS]
    return Specific(asked, held, [t for t in terms if t not in known])

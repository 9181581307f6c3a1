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

**Past the figure the passage gives.** "can we keep build logs longer than 30 days if we pay
extra?" quotes the passage's own figure ("Logs are kept for 30 days") and asks what lies past it:
an extension, a higher limit. The passage says where the line is, not whether it moves, so P is
held at :data:`MISSING_AT` (``+beyond-stated``). A figure the passage does not give ("do you keep
logs longer than a week?") is left to the other checks: the passage's figure answers it.

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

from gatebot_knowledge.index import KnowledgeIndex
from gatebot_knowledge.lexical import STOPWORDS, stem, tokenize

#: P(answerable) never above this when the passage lacks the value asked for (a "no" at a 0.6 gate).
MISSING_AT = 0.3
#: Added to the head's logit when the value asked for and every content word are held.
HELD_BOOST = 2.0
#: Taken from the head's logit when the action asked about is a word the pack never uses.
ACTION_PENALTY = 1.5

_UNITS = r"(?:second|sec|minute|min|hour|hr|day|week|month|year|business day|working day)s?"
_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
    " sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty hundred thousand"
    " million dozen"
).split()
_NUMBER = r"(?:\d+(?:[.,]\d+)?|" + "|".join(_NUMBER_WORDS) + r")"
#: A length of time ("30 days", "14-day") and a period ("every minute", "daily"): either is a time,
#: not a count.
_LENGTH = rf"{_NUMBER}[\s-]*{_UNITS}\b"
_PERIOD = rf"every\s+(?:{_NUMBER}\s+)?{_UNITS}\b|(?:hourly|daily|weekly|monthly|yearly|annually)\b"
_DURATION_HELD = re.compile(rf"\b(?:{_LENGTH}|{_PERIOD})", re.IGNORECASE)
#: A count: "one" is left out, being as often a pronoun ("unless one names another").
_COUNT = r"(?:\d+(?:[.,]\d+)?|" + "|".join(w for w in _NUMBER_WORDS if w != "one") + r")"
_ANY_NUMBER = re.compile(rf"\b{_COUNT}\b|\bunlimited\b|\bno limit\b", re.IGNORECASE)
_LIST = re.compile(r"\w+, [\w ]+, [\w ,]*\b(?:and|or) \w+")
_DURATION_ASKED = re.compile(
    rf"\bhow\s+(?:long|soon|quickly|far\s+back)\b|\bhow\s+many\s+{_UNITS}\b", re.IGNORECASE
)
_FREQUENCY_ASKED = re.compile(r"\bhow\s+(?:often|frequently)\b", re.IGNORECASE)
#: How long (a length of time: "30 days", "14-day", not "every minute") and how often ("every
#: minute", "daily"): "how long is uptime history kept" is not answered by "checks ... every
#: minute", nor "how often do you check" by "kept for 30 days".
_LENGTH_HELD = re.compile(rf"(?<!every )\b{_LENGTH}", re.IGNORECASE)
_FREQUENCY_HELD = re.compile(rf"\b(?:{_PERIOD}|{_NUMBER}\s+times\b)", re.IGNORECASE)
_COUNT_ASKED = re.compile(r"\bhow\s+many\b", re.IGNORECASE)
_LIMIT_ASKED = re.compile(
    r"^\s*(?:what|whats|what's|which|how)\b.*\b(?:maximum|minimum|max|min|limit|limits"
    r"|number\s+of)\b",
    re.IGNORECASE,
)
#: What a count question counts: the first word after "how many" or "number of" that is not an
#: adjective of amount ("how many different websites" is rare enough to leave to the head).
_COUNTED = re.compile(r"\b(?:how\s+many|number\s+of)\s+([a-z][a-z-]+)", re.IGNORECASE)
#: A number counts the thing named at most this many words after it ("twelve locations", "three
#: paid seats").
_COUNT_REACH = 2
_FIND_OUT = re.compile(
    r"\b(?:where|how)\s+(?:can|do|could|would|should)\s+(?:i|we|you)\s+"
    r"(?:see|find|check|tell|look|know)\b|\bfind\s+out\b",
    re.IGNORECASE,
)


def _stems(words: str) -> frozenset[str]:
    """The stems of the space-separated ``words``."""
    return frozenset(stem(w) for w in words.split())


#: Words that say a value is asked for rather than what it is about ("the trial period").
_VALUE_WORDS = _stems(
    "long many soon often quickly period duration time number amount count limit limits"
    " maximum minimum max min total"
)


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
    re.compile(r"\bhow\s+(?:do|can|could|would|should)\s+(?:i|we)\s+([a-z]+)\b", re.IGNORECASE),
)
#: Verbs that name no action of their own ("can I get ...", "how do I see ...").
_LIGHT_VERBS = _stems(
    "be get have has do make use see find know set go start need want put keep pick turn"
    " take give tell ask try run change choose access reach talk speak contact say work come"
    " still also just done made given please"
    # Asking to be told or shown ("could someone explain how it is priced", "how far back can I
    # look at build logs", "where can I grab last month's invoice"): no action of the product's.
    " explain describe clarify look view grab"
)


#: Whether a thing exists: "is there a(n) X", "do you have / offer a(n) X", "does it come with X".
#: X runs to the first word that ends a noun phrase (a preposition, a clause, punctuation).
_THING_ASKED = re.compile(
    r"\b(?:(?:is|are)\s+there|do\s+(?:you|they|y'?all)(?:\s+guys)?\s+(?:have|offer|provide|sell|"
    r"make|ship)|does\s+(?:it|\w+)\s+(?:have|offer|provide|come\s+with))\s+(?:a|an|any)\s+"
    r"((?:[a-z0-9][\w'-]*\s*){1,4}?)(?=\s*(?:[?.,!;:]|$|\b(?:for|of|to|that|which|where|with|in|on|"
    r"we|i|you|or|and|so|if|like|available|included)\b))",
    re.IGNORECASE,
)
#: Words that name no thing of their own: "is there a way to ...", "do you have an option for".
_NO_THING = _stems(
    "way ways option options setting settings possibility chance difference problem"
    " issue reason plan plans version versions kind type sort"
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


#: A figure asked past: "longer than 30 days", "more than 50 seats", "beyond 7 days".
_BEYOND = re.compile(
    # "long": the typo channel spells "longer" as the corpus writes it.
    rf"\b(?:longer|long|more|beyond|past|over|above|exceed\w*|extend\w*|increase\w*|raise)\s+"
    rf"(?:than\s+|the\s+|to\s+)?({_NUMBER})[\s-]*([a-z]+)",
    re.IGNORECASE,
)


#: Past the figure without naming it ("longer than the default"), or whether it can change ("is
#: the build cache retention configurable?").
_BEYOND_DEFAULT = re.compile(
    r"\b(?:longer|long|more|beyond|past|over|above|extend\w*|increase\w*)\s+(?:than\s+)?the\s+"
    r"(?:default|standard|usual|limit|maximum|max)\b"
    # "configure": the typo channel spells "configurable" as the corpus writes it.
    r"|\b(?:is|are)\s+(?:the\s+)?(?:\w+\s+){0,3}(?:configurable|configure|adjustable"
    r"|customi[sz]able)\b",
    re.IGNORECASE,
)


#: Another time than the one stated, asked to be set: "can I set checks to run every 10 seconds
#: instead of every minute", "change the check interval for one endpoint, say to every 5 minutes".
_OTHER_TIME = re.compile(
    rf"\b(?:set|change|configure|adjust|make|lower|reduce|shorten|increase|run)\b.{{0,60}}?"
    rf"\b(?:to|every|each|at)\s+(?:every\s+)?({_NUMBER})\s*({_UNITS})"
    rf"|\b({_NUMBER})\s*({_UNITS})\s+instead\b",
    re.IGNORECASE,
)
#: Whether what was chosen can be changed later: "can I change our workspace from the US region
#: to the EU after it was created?"
_CHANGED_LATER = re.compile(
    r"\b(?:change|switch|move|migrate|transfer)\b.{0,80}?\b(?:after|later|afterwards|"
    r"once\s+(?:it|we|the)\b)",
    re.IGNORECASE,
)
#: A passage that says when something is chosen ("chosen when the workspace is created").
_CHOSEN_AT = re.compile(
    r"\b(?:chosen|selected|picked|set|decided|fixed)\s+(?:when|at|during|on)\b", re.IGNORECASE
)
_CHANGE_SAID = re.compile(r"\b(?:chang|switch|mov|migrat|transfer)\w*", re.IGNORECASE)


#: Another way or value than one stated: "email them to our billing address instead of us
#: downloading them", "when 6 locations fail instead of 3"; the words before run back at most
#: six words, to the start of the clause.
_INSTEAD_OF = re.compile(
    r"((?:[\w@.'-]+\s+){1,6}?)(?:instead\s+of|rather\s+than)\s+(?:us\s+|me\s+|the\s+|a\s+|an\s+)?"
    r"([\w-]+)",
    re.IGNORECASE,
)
#: A stated figure turned down: "purged immediately, not after 30 days".
_NOT_FIGURE = re.compile(
    rf"\bnot\s+(?:after|in|within|for|until|every)\s+(?:the\s+)?({_NUMBER})[\s-]*([a-z]+)",
    re.IGNORECASE,
)


def _value(word: str) -> float | None:
    """A number written in digits or words ("3", "three"), or None."""
    w = word.lower()
    if re.fullmatch(r"\d+(?:\.\d+)?", w):
        return float(w)
    value = _WORD_VALUE.get(w) if w not in ("a", "an") else None
    return None if value is None else float(value)


def _instead_of_stated(question: str, text: str) -> bool:
    """Whether ``question`` asks for something in place of what ``text`` states: the thing
    replaced is stated (a word of the passage, or the same number), and what is asked for
    instead is not (a word before "instead of" the passage lacks, or any other number)."""
    said = set(tokenize(text))
    numbers = {v for w in re.findall(r"[\w.]+", text) if (v := _value(w)) is not None}
    for found in _INSTEAD_OF.finditer(question):
        before, replaced = found.group(1), found.group(2)
        value = _value(replaced)
        if value is not None:
            if value in numbers:
                return True
            continue
        stems = tokenize(replaced)
        if not stems or stems[0] not in said:
            continue
        # What is asked for in its place, by its last word ("to our billing address each
        # month", "as CSV"): "alerts in MS Teams instead of email" asks for Teams, which is said.
        asked = [w for w in tokenize(before) if w not in _LIGHT_VERBS and not w.isdigit()]
        if asked and asked[-1] not in said:
            return True
    for found in _NOT_FIGURE.finditer(question):
        number, thing = found.group(1).lower(), stem(found.group(2).lower())
        for held in re.finditer(rf"\b{re.escape(number)}[\s-]*([a-z]+)", text, re.IGNORECASE):
            if stem(held.group(1).lower()) == thing:
                return True
    return False


def other_than_stated(question: str, text: str) -> bool:
    """Whether ``question`` asks for another value than the one ``text`` states (a time to set
    that the passage does not give, where it gives one), or to change later what ``text`` says is
    chosen at one moment, where it says nothing of changing it. The passage states what is, not
    whether it can be otherwise."""
    states_a_time = _DURATION_HELD.search(text) is not None
    for found in _OTHER_TIME.finditer(question) if states_a_time else ():
        number, unit = (g for g in found.groups() if g)
        said = rf"\b{re.escape(number)}[\s-]*{re.escape(stem(unit.lower()))}"
        if not re.search(said, text, re.IGNORECASE):
            return True
    if _instead_of_stated(question, text):
        return True
    return bool(
        _CHANGED_LATER.search(question)
        and _CHOSEN_AT.search(text)
        and not _CHANGE_SAID.search(text)
    )


#: What a length of time is in days, to read "a week" as the passage's "seven days".
_DAYS = {
    "second": 1 / 86400,
    "sec": 1 / 86400,
    "minute": 1 / 1440,
    "min": 1 / 1440,
    "hour": 1 / 24,
    "hr": 1 / 24,
    "day": 1,
    "business day": 1,
    "working day": 1,
    "week": 7,
    "month": 30,
    "year": 365,
}
_WORD_VALUE = dict(
    zip(_NUMBER_WORDS, [*range(1, 21), 30, 40, 50, 60, 100, 1000, 10**6, 12], strict=True)
)
_WORD_VALUE.update(a=1, an=1)
#: A length asked past: "longer than a week", "more than 30 days", "beyond one hour".
_PAST_LENGTH = re.compile(
    rf"\b(?:longer|long|more|beyond|past|over|exceed\w*|extend\w*)\s+(?:than\s+)?"
    rf"(a|an|{_NUMBER})[\s-]*({_UNITS})\b",
    re.IGNORECASE,
)
_LENGTH_PARTS = re.compile(rf"\b({_NUMBER})[\s-]*({_UNITS})\b", re.IGNORECASE)
#: A length a question names: "a day", "30 days".
_ASKED_LENGTH = re.compile(rf"\b(a|an|{_NUMBER})[\s-]*({_UNITS})\b", re.IGNORECASE)
#: Asked to make a stated length longer, with no figure: "can the trial be extended", "keep build
#: caches longer", "an extension".
_LENGTHENED = re.compile(
    r"\b(?:be|get|is|are)\s+(?:\w+\s+)?(?:extended|lengthened|prolonged)\b"
    r"|\b(?:extend|lengthen|prolong)\s+(?:the|my|our|your|it|this|that)\b|\bextensions?\b"
    r"|\b(?:keep|kept|store|stored|retain|retained|hold|held)\s+(?:\w+\s+){0,3}?(?:for\s+)?longer\b"
    r"|\blonger\s+(?:trial|retention|period)\b"
    # "can an admin make it valid for longer", "could the link stay open longer"
    r"|\b(?:valid|last|lasts|stay|stays|remain|remains|open|active|available)\s+(?:for\s+)?longer\b"
    r"|\bmake\s+(?:\w+\s+){1,4}?longer\b",
    re.IGNORECASE,
)
_LONGER_SAID = re.compile(r"\b(?:extend\w*|extension|longer|lengthen\w*|prolong\w*)", re.IGNORECASE)
#: Asked what happens when a stated length is over: "when the 14 days are over", "after the trial
#: ends", "once it expires".
_AT_END = re.compile(
    rf"\b(?:when|after|once|at\s+the\s+end\s+of)\s+(?:(?:the|my|our|your|those|these|its)\s+)?"
    rf"(?:[\w-]+\s+){{0,2}}?(?:{_LENGTH}|trial|period|link|window|term)\s+"
    r"(?:(?:is|are)\s+(?:over|up)|ends?|ended|expires?|expired|runs?\s+out|ran\s+out|lapses?|lapsed)\b"
    r"|\b(?:after|at\s+the\s+end\s+of)\s+(?:the|my|our)\s+(?:[\w-]+\s+)?(?:trial|period)\b",
    re.IGNORECASE,
)
_END_SAID = re.compile(
    r"\b(?:ends?|ended|expir\w*|after|afterwards|over|then|convert\w*|downgrad\w*|renew\w*"
    r"|laps\w*|runs?\s+out)\b",
    re.IGNORECASE,
)


#: A day counted into a stated length: "on day 15 of the trial".
_DAY_NUMBER = re.compile(r"\bday\s+(\d+)\b|\b(\d+)(?:st|nd|rd|th)\s+day\b", re.IGNORECASE)


def _days(number: str, unit: str) -> float | None:
    """A length of time in days, or None for a number not read ("2.5")."""
    n, unit = number.lower(), unit.lower()
    value = float(n) if n.isdigit() else _WORD_VALUE.get(n)
    per = _DAYS.get(unit) or _DAYS.get(unit[:-1])  # "days", "business days"
    return None if value is None or per is None else value * per


def past_length(question: str, text: str) -> bool:
    """Whether ``question`` asks to go past a length of time ``text`` states: the same length in
    other words ("longer than a week" against "kept for seven days"), made longer with no figure
    ("can the trial be extended"), or what happens when it is over ("when the 14 days are over"),
    where the passage says nothing of extending it or of its end."""
    if _LENGTH_HELD.search(text) is None:
        return False
    stated = [_days(*m.groups()) for m in _LENGTH_PARTS.finditer(text)]

    def said(days: float | None) -> bool:
        return bool(days) and any(s and 0.9 <= days / s <= 1.1 for s in stated)  # type: ignore[operator]

    for found in _PAST_LENGTH.finditer(question):
        if said(_days(found.group(1), found.group(2))):
            return True
    # A day past every stated length ("what happens on day 15 of the trial" against a 14-day
    # trial): the passage says what holds until then, not what comes after. (A time ago past it,
    # "logs from two months ago, are they still around?", is answered by the length: no.)
    longest = max((d for d in stated if d), default=None)
    counted = [float(m.group(1) or m.group(2)) for m in _DAY_NUMBER.finditer(question)]
    if longest is not None and any(d > longest * 1.05 for d in counted):
        return True
    # A length of its own ("keep logs longer than 30 days" against "seven days") is not this one.
    other = any(not said(_days(*m.groups())) for m in _ASKED_LENGTH.finditer(question))
    if not other and _LENGTHENED.search(question) and not _LONGER_SAID.search(text):
        return True
    return bool(_AT_END.search(question) and not _END_SAID.search(text))


def beyond_stated(question: str, text: str) -> bool:
    """Whether ``question`` asks past a figure that ``text`` states (the same number of the
    same thing: "longer than 30 days" against "kept for 30 days"), or past or around the figure
    without naming it ("longer than the default", "configurable") where ``text`` states one, or
    for another value than the stated one (:func:`other_than_stated`)."""
    if _BEYOND_DEFAULT.search(question) and (
        _DURATION_HELD.search(text) is not None or holds_value("count", text)
    ):
        return True
    if other_than_stated(question, text) or past_length(question, text):
        return True
    for found in _BEYOND.finditer(question):
        number, thing = found.group(1).lower(), stem(found.group(2).lower())
        for held in re.finditer(rf"\b{re.escape(number)}[\s-]*([a-z]+)", text, re.IGNORECASE):
            if stem(held.group(1).lower()) == thing:
                return True
    return False


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
    r"on|from|at|after|once|we|i|you|or|and|so|if|because)\b))",
    re.IGNORECASE,
)


def asked_thing(question: str) -> list[str]:
    """The stems of the thing an existence question asks about ("is there a mobile app":
    ``["mobil", "app"]``), without words that name no thing; empty for other questions."""
    return _thing(_THING_ASKED.search(question))


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
    stem(verb): _stems(same)
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
            return None if stem(word) in _LIGHT_VERBS else stem(word)
    return None


def asked_value(question: str) -> str | None:
    """``"duration"``, ``"frequency"``, ``"count"`` or None: the kind of value ``question`` asks
    for. A question
    about where or how to find a value asks for a place or a way, not the value ("where can I
    see how long my route is")."""
    if _FIND_OUT.search(question):
        return None
    if _DURATION_ASKED.search(question):
        return "duration"
    if _FREQUENCY_ASKED.search(question):
        return "frequency"
    if _COUNT_ASKED.search(question) or _LIMIT_ASKED.search(question):
        return "count"
    return None


#: What a count question counts, in the words a help page uses for the same thing: "from how many
#: places / regions do you check" is answered by "from twelve locations" (stems: a plural is the
#: same entry).
_COUNTED_AS = {
    stem(word): _stems(f"{word} {same}")
    for word, same in {
        "place": "location",
        "region": "location",
        "spot": "location",
        "user": "seat member",
        "people": "seat member",
    }.items()
}


def counted(question: str) -> str | None:
    """The stem of what a count question counts ("how many websites": "website"), or None when
    it names nothing after "how many" / "number of"."""
    found = _COUNTED.search(question)
    return stem(found.group(1).lower()) if found else None


def holds_value(kind: str, text: str, counts: str | None = None) -> bool:
    """Whether ``text`` holds a value of ``kind``; for a count of ``counts`` (a stem), a number
    of that thing ("twelve locations" holds how many locations, not how many websites)."""
    if kind == "duration":
        return _LENGTH_HELD.search(text) is not None
    if kind == "frequency":
        return _FREQUENCY_HELD.search(text) is not None
    # A count: any number that is not a length of time ("seven days" says how long, not how
    # many), or a list that can be counted ("owner, admin, member or viewer").
    rest = _DURATION_HELD.sub(" ", text)
    if counts is not None:
        words = [stem(w) for w in re.findall(r"[a-z0-9]+", rest.lower())]
        named = _COUNTED_AS.get(counts, frozenset((counts,)))
        numbered = any(
            _ANY_NUMBER.fullmatch(w) and named & set(words[i + 1 : i + 1 + _COUNT_REACH])
            for i, w in enumerate(re.findall(r"[a-z0-9]+", rest.lower()))
        )
        return numbered or (_LIST.search(rest) is not None and bool(named & set(words)))
    return _ANY_NUMBER.search(rest) is not None or _LIST.search(rest) is not None


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
        if self.asked == "beyond":
            return {"beyond_stated": 1.0}
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
        if self.asked == "plan":
            return min(p, MISSING_AT), "+plan-missing"
        if self.asked == "beyond":
            return min(p, MISSING_AT), "+beyond-stated"
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
    if values.get("plan_missing") or values.get("beyond_stated"):
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
    if plan is not None and plan not in tokenize(f"{passage.title} {passage.text}"):
        return Specific("plan", False, [plan])
    if beyond_stated(query, passage.text):
        return Specific("beyond", False, [])
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
        if (
            thing
            and not _MORE_QUESTIONS.search(query)
            and not set(thing) & set(tokenize(passage.lexical))
        ):
            # The pack names the thing, the best passage does not: "is there a trial for Acme
            # Status too" drawn to the pricing entry by "Acme".
            return Specific("thing-absent", False, thing)
        changed = changed_thing(query)
        if changed and changed[-1] not in tokenize(passage.lexical):
            # What is to change, by its last word ("the email address"), is not in the passage:
            # the password entry says how to reset a password, not how to change an address.
            return Specific("thing-absent", False, changed)
        return Specific(None, False, [])
    counts = counted(query) if asked == "count" else None
    held = holds_value(asked, f"{passage.title}. {passage.text}", counts)
    known = _document_words(index, row)
    terms = [t for t in index.lexical.query_terms(query) if t not in _VALUE_WORDS]
    return Specific(asked, held, [t for t in terms if t not in known])

"""Past or other than the figure a passage states.

"can we keep build logs longer than 30 days if we pay extra?" quotes the passage's own figure
("Logs are kept for 30 days") and asks what lies past it: an extension, a higher limit. The
passage says where the line is, not whether it moves. So do the same figure in other words
("longer than a week" against "seven days"), a length made longer with no figure ("can the trial
be extended"), what happens when it is over ("when the 14 days are over", "on day 15"), another
value or way in place of the stated one ("every 10 seconds instead of every minute", "as CSV
instead of PDF"), and a change later of what is chosen at one moment. A figure the passage does
not give, or a shorter one ("do you keep logs longer than a week?" against 30 days), is left to
the other checks: the passage's figure answers it.
"""

from __future__ import annotations

import re

from gatebot_knowledge.figures import (
    DURATION_HELD,
    LENGTH,
    LENGTH_HELD,
    LIGHT_VERBS,
    NUMBER,
    UNITS,
    holds_value,
    in_days,
    number_value,
)
from gatebot_knowledge.lexical import stem, tokenize

#: A figure asked past: "longer than 30 days", "more than 50 seats", "beyond 7 days".
_BEYOND = re.compile(
    # "long": the typo channel spells "longer" as the corpus writes it.
    rf"\b(?:longer|long|more|beyond|past|over|above|exceed\w*|extend\w*|increase\w*|raise)\s+"
    rf"(?:than\s+|the\s+|to\s+)?({NUMBER})[\s-]*([a-z]+)",
    re.IGNORECASE,
)

#: A bare number asked past, its unit left to the passage: "can you keep them longer than 30?".
_BEYOND_BARE = re.compile(
    rf"\b(?:longer|beyond|past|more|over|exceed\w*)\s+(?:than\s+)?({NUMBER})(?![\w.,-]*\s*[a-z])",
    re.IGNORECASE,
)


#: Past the figure without naming it ("longer than the default"), or whether it can change ("is
#: the build cache retention configurable?").
_BEYOND_DEFAULT = re.compile(
    r"\b(?:longer|long|more|beyond|past|over|above|extend\w*|increase\w*)\s+(?:than\s+)?the\s+"
    r"(?:default|standard|usual|limit|maximum|max)\b"
    # "configure": the typo channel spells "configurable" as the corpus writes it.
    r"|\b(?:is|are)\s+(?:the\s+)?(?:[\w-]+\s+){0,3}(?:configurable|configure|adjustable"
    r"|customi[sz]able)\b",
    re.IGNORECASE,
)


#: More often than a period: "can we make it check more often than once a minute?", "faster than
#: every minute". Past a passage's period ("every minute") as a longer time is past its length.
_MORE_OFTEN = re.compile(
    rf"\b(?:more\s+often|more\s+frequently|more\s+frequent|faster|quicker)\s+than\s+"
    # the period's number (none: one) and unit
    rf"(?:once\s+(?:a|an|per|every)\s+|every\s+|each\s+)?(?:a\s+|an\s+|({NUMBER})[\s-]*)?({UNITS})\b",
    re.IGNORECASE,
)
_PERIOD_HELD = re.compile(rf"\bevery\s+(?:({NUMBER})\s+)?({UNITS})\b", re.IGNORECASE)


def _more_often_than_stated(found: re.Match[str], text: str) -> bool:
    """Whether the period asked more often than (``found``: "more often than once a minute") is
    the one ``text`` states or shorter: past what the passage says. More often than a longer one
    ("more often than every 5 minutes" against "every minute") the passage answers."""
    wanted = in_days(found.group(1) or "1", found.group(2))
    for held in _PERIOD_HELD.finditer(text):
        stated = in_days(held.group(1) or "1", held.group(2))
        if stated is not None and wanted is not None and wanted <= stated:
            return True
    return False


#: Another time than the one stated, asked to be set: "can I set checks to run every 10 seconds
#: instead of every minute", "change the check interval for one endpoint, say to every 5 minutes".
_OTHER_TIME = re.compile(
    rf"\b(?:set|change|configure|adjust|make|lower|reduce|shorten|increase|run)\b.{{0,60}}?"
    rf"\b(?:to|every|each|at)\s+(?:every\s+)?({NUMBER})\s*({UNITS})"
    rf"|\b({NUMBER})\s*({UNITS})\s+instead\b",
    re.IGNORECASE,
)
#: Another count than the one stated, asked to be set: "Can I set a check to go red after just
#: one location fails?" against "marked down only when at least three locations fail".
_OTHER_COUNT = re.compile(
    r"\b(?:set|change|configure|adjust|make|lower|reduce|raise|increase|tune)\b.{0,60}?"
    rf"\b(?:after|when|to|at|with|if|once)\s+(?:just\s+|only\s+|a\s+single\s+)?({NUMBER})\s+"
    r"([a-z]+)",
    re.IGNORECASE,
)
#: Whether what was chosen can be changed later: "can I change our workspace from the US region
#: to the EU after it was created?"
_CHANGED_LATER = re.compile(
    r"\b(?:change|switch|move|migrate|transfer)\b.{0,80}?\b(?:after|later|afterwards|"
    r"once\s+(?:it|we|the)\b)"
    # "We picked the EU region when we set up the workspace ... can we move it to the US?"
    r"|\b(?:picked|chose|chosen|selected|went\s+with)\b.{0,60}?\b(?:when|at|during)\b.{0,120}?"
    r"\b(?:change|switch|move|migrate|transfer)\b",
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
#: The words before "instead of" end pointing back: "can alerts land there", "do it".
_POINTS_BACK = re.compile(r"\b(?:there|here|it|that|this|them|those)\s*$", re.IGNORECASE)
#: A stated figure turned down: "purged immediately, not after 30 days".
_NOT_FIGURE = re.compile(
    rf"\bnot\s+(?:after|in|within|for|until|every)\s+(?:the\s+)?({NUMBER})[\s-]*([a-z]+)",
    re.IGNORECASE,
)


def _instead_of_stated(question: str, text: str) -> bool:
    """Whether ``question`` asks for something in place of what ``text`` states: the thing
    replaced is stated (a word of the passage, or the same number), and what is asked for
    instead is not (a word before "instead of" the passage lacks, or any other number)."""
    said = set(tokenize(text))
    numbers = {v for w in re.findall(r"[\w.]+", text) if (v := number_value(w)) is not None}
    for found in _INSTEAD_OF.finditer(question):
        before, replaced = found.group(1), found.group(2)
        value = number_value(replaced)
        if value is not None:
            if value in numbers:
                return True
            continue
        stems = tokenize(replaced)
        if not stems or stems[0] not in said:
            continue
        # What is asked for in its place, by its last word ("to our billing address each
        # month", "as CSV"): "alerts in MS Teams instead of email" asks for Teams, which is said.
        # A word pointing back names it elsewhere ("we live in MS Teams, can alerts land there
        # instead of email"): what it points to cannot be read here.
        if _POINTS_BACK.search(before):
            continue
        asked = [w for w in tokenize(before) if w not in LIGHT_VERBS and not w.isdigit()]
        if asked and asked[-1] not in said:
            return True
    return any(_states_figure(found, text) for found in _NOT_FIGURE.finditer(question))


def _states_figure(found: re.Match[str], text: str) -> bool:
    """Whether ``text`` states the figure ``found`` read (its number, then its thing): the same
    number of the same thing ("30 days" in "kept for 30 days")."""
    number, thing = found.group(1).lower(), stem(found.group(2).lower())
    for held in re.finditer(rf"\b{re.escape(number)}[\s-]*([a-z]+)", text, re.IGNORECASE):
        if stem(held.group(1).lower()) == thing:
            return True
    return False


#: A stated length asked to be done without: "can the grace period be skipped", "could data be
#: erased immediately", "can you waive the waiting period".
_WITHOUT_THE_WAIT = re.compile(
    r"\b(?:skip|skipped|skipping|bypass\w*|waive\w*|shorten\w*|cut\s+short)\b"
    r"|\b(?:erased|deleted|removed|purged|wiped|destroyed)\s+(?:immediately|instantly"
    r"|right\s+away|straight\s+away|at\s+once|the\s+same\s+day)\b",
    re.IGNORECASE,
)


def _other_count(question: str, text: str) -> bool:
    """Whether ``question`` asks to set a count of a thing that ``text`` states another count
    of (the same thing by its stem, another number)."""
    for found in _OTHER_COUNT.finditer(question):
        asked, thing = number_value(found.group(1)), stem(found.group(2).lower())
        for held in re.finditer(rf"\b({NUMBER})\s+([a-z]+)", text, re.IGNORECASE):
            value = number_value(held.group(1))
            if stem(held.group(2).lower()) == thing and value is not None and value != asked:
                return True
    return False


def other_than_stated(question: str, text: str) -> bool:
    """Whether ``question`` asks for another value than the one ``text`` states (a time to set
    that the passage does not give, where it gives one), or to change later what ``text`` says is
    chosen at one moment, where it says nothing of changing it. The passage states what is, not
    whether it can be otherwise."""
    states_a_time = DURATION_HELD.search(text) is not None
    if (
        LENGTH_HELD.search(text)
        and _WITHOUT_THE_WAIT.search(question)
        and _POSSIBLE.search(question)
    ):
        # Asked as a possibility: "is the data gone immediately?" is answered by the length.
        return True
    for found in _OTHER_TIME.finditer(question) if states_a_time else ():
        number, unit = (g for g in found.groups() if g)
        said = rf"\b{re.escape(number)}[\s-]*{re.escape(stem(unit.lower()))}"
        if not re.search(said, text, re.IGNORECASE):
            return True
    if _instead_of_stated(question, text) or _other_count(question, text):
        return True
    return bool(
        _CHANGED_LATER.search(question)
        and _CHOSEN_AT.search(text)
        and not _CHANGE_SAID.search(text)
    )


#: A length asked past: "longer than a week", "more than 30 days", "beyond one hour".
_PAST_LENGTH = re.compile(
    rf"\b(?:longer|long|more|beyond|past|over|exceed\w*|extend\w*)\s+(?:than\s+)?"
    rf"(a|an|{NUMBER})[\s-]*({UNITS})\b",
    re.IGNORECASE,
)
_LENGTH_PARTS = re.compile(rf"\b({NUMBER})[\s-]*({UNITS})\b", re.IGNORECASE)
#: A length a question names: "a day", "30 days".
_ASKED_LENGTH = re.compile(rf"\b(a|an|{NUMBER})[\s-]*({UNITS})\b", re.IGNORECASE)
#: Asked to make a stated length longer, with no figure: "can the trial be extended", "keep build
#: caches longer", "an extension".
_LENGTHENED = re.compile(
    r"\b(?:be|get|is|are)\s+(?:\w+\s+)?(?:extended|lengthened|prolonged)\b"
    r"|\b(?:extend|lengthen|prolong)\s+(?:the|my|our|your|it|this|that)\b|\bextensions?\b"
    r"|\b(?:keep|kept|store|stored|retain|retained|hold|held)\s+(?:\w+\s+){0,3}?(?:for\s+)?longer\b"
    r"|\blonger\s+(?:trial|retention|period)\b"
    # "can an admin make it valid for longer", "could the link stay open longer"
    r"|\b(?:valid|last|lasts|stay|stays|remain|remains|open|active|available)\s+(?:for\s+)?longer\b"
    r"|\bmake\s+(?:\w+\s+){1,4}?longer\b"
    # "can I get a bit LONGER on the free trial??", "give us some extra days on the trial" (the
    # length itself after it: not "to have more time for reviews")
    r"|\b(?:get|have|give\s+(?:me|us))\s+(?:a\s+(?:bit|little)\s+|some\s+)?(?:longer"
    r"|more\s+time|extra\s+(?:time|days|weeks))\s+(?:on|with|for|in)\s+"
    r"(?:(?:the|my|our|this|that|your)\s+)?(?:free\s+)?(?:trial|grace\s+period|period|link"
    r"|window|logs?|caches?)\b",
    re.IGNORECASE,
)
_LONGER_SAID = re.compile(r"\b(?:extend\w*|extension|longer|lengthen\w*|prolong\w*)", re.IGNORECASE)
#: Asked what happens when a stated length is over: "when the 14 days are over", "after the trial
#: ends", "once it expires".
_AT_END = re.compile(
    rf"\b(?:when|after|once|at\s+the\s+end\s+of)\s+(?:(?:the|my|our|your|those|these|its)\s+)?"
    rf"(?:[\w-]+\s+){{0,2}}?(?:{LENGTH}|trial|period|link|window|term)\s+"
    r"(?:(?:is|are)\s+(?:over|up)|ends?|ended|expires?|expired|runs?\s+out|ran\s+out|lapses?|lapsed)\b"
    r"|\b(?:after|at\s+the\s+end\s+of)\s+(?:the|my|our)\s+(?:[\w-]+\s+)?(?:trial|period)\b",
    re.IGNORECASE,
)
_END_SAID = re.compile(
    r"\b(?:ends?|ended|expir\w*|after|afterwards|over|then|convert\w*|downgrad\w*|renew\w*"
    r"|laps\w*|runs?\s+out)\b",
    re.IGNORECASE,
)


#: Words that hedge a figure: "extend it to like 30 days", "for up to a year".
_HEDGE = r"up\s+to\s+|at\s+least\s+|like\s+|about\s+|around\s+|maybe\s+|roughly\s+|say\s+"
#: A length asked to be kept for, as a possibility: "can we keep build logs for 90 days?", "is it
#: possible to retain caches for a month?". Longer than every stated length, it asks whether the
#: stated one can move (a shorter one is within it: the passage answers that).
_KEPT_FOR = re.compile(
    r"\b(?:keep|kept|store|stored|retain|retained|hold|held|save|saved|preserve|preserved"
    r"|archive|archived|extend|extended|last|lasts|stay|stays|need|require)\b"
    r"(?:\s+[\w'-]+){0,4}?\s+for\s+"
    # "for a full year", "for 2 whole months"
    rf"(?:{_HEDGE})?(a|an|{NUMBER})[\s-]*(?:full\s+|whole\s+|entire\s+)?"
    rf"({UNITS})\b",
    re.IGNORECASE,
)
#: A length asked to be made longer to: "can the grace period be extended to 90 days", "bump the
#: trial to 30 days". Longer than every stated length, the passage says only what holds now.
_EXTENDED_TO = re.compile(
    r"\b(?:extend\w*|lengthen\w*|prolong\w*|increas\w*|bump\w*|stretch\w*|push\w*)\b"
    rf"(?:\s+[\w'-]+){{0,5}}?\s+to\s+(?:{_HEDGE})?(?:a\s+full\s+)?(a|an|{NUMBER})[\s-]*({UNITS})\b",
    re.IGNORECASE,
)
#: A length asked to be made: "can u make it last 24h", "could you make the link valid for 2 days".
_MADE_TO_LAST = re.compile(
    r"\bmake\s+(?:it|them|the\s+[\w-]+(?:\s+[\w-]+)?)\s+(?:last\s+|(?:stay\s+)?valid\s+|work\s+)?"
    rf"(?:for\s+)?(?:{_HEDGE})?(a|an|{NUMBER})[\s-]*({UNITS})\b",
    re.IGNORECASE,
)
_POSSIBLE = re.compile(
    r"\b(?:can|could|possible|option|allow\w*|able|way\s+to|pay\w*|upgrade|configur\w*)\b",
    re.IGNORECASE,
)

#: A day counted into a stated length: "on day 15 of the trial".
_DAY_NUMBER = re.compile(r"\bday\s+(\d+)\b|\b(\d+)(?:st|nd|rd|th)\s+day\b", re.IGNORECASE)


def past_length(question: str, text: str) -> bool:
    """Whether ``question`` asks to go past a length of time ``text`` states: the same length in
    other words ("longer than a week" against "kept for seven days"), made longer with no figure
    ("can the trial be extended"), or what happens when it is over ("when the 14 days are over"),
    where the passage says nothing of extending it or of its end."""
    if LENGTH_HELD.search(text) is None:
        return False
    stated = [d for m in _LENGTH_PARTS.finditer(text) if (d := in_days(*m.groups()))]

    def said(days: float | None) -> bool:
        return days is not None and days > 0 and any(0.9 <= days / s <= 1.1 for s in stated)

    for found in _PAST_LENGTH.finditer(question):
        if said(in_days(found.group(1), found.group(2))):
            return True
    # A day past every stated length ("what happens on day 15 of the trial" against a 14-day
    # trial): the passage says what holds until then, not what comes after. (A time ago past it,
    # "logs from two months ago, are they still around?", is answered by the length: no.)
    longest = max(stated, default=None)
    counted = [float(m.group(1) or m.group(2)) for m in _DAY_NUMBER.finditer(question)]
    if longest is not None and any(d > longest * 1.05 for d in counted):
        return True
    if longest is not None:
        asked = list(_EXTENDED_TO.finditer(question))
        if _POSSIBLE.search(question):
            asked += _KEPT_FOR.finditer(question)
            asked += _MADE_TO_LAST.finditer(question)
        kept = [in_days(*m.groups()) for m in asked]
        if any(d is not None and d > longest * 1.05 for d in kept):
            return True
    # A length of its own ("keep logs longer than 30 days" against "seven days") is not this one.
    other = any(not said(in_days(*m.groups())) for m in _ASKED_LENGTH.finditer(question))
    if not other and _LENGTHENED.search(question) and not _LONGER_SAID.search(text):
        return True
    return bool(_AT_END.search(question) and not _END_SAID.search(text))


def beyond_stated(question: str, text: str) -> bool:
    """Whether ``question`` asks past a figure that ``text`` states (the same number of the
    same thing: "longer than 30 days" against "kept for 30 days"), or past or around the figure
    without naming it ("longer than the default", "configurable") where ``text`` states one, or
    for another value than the stated one (:func:`other_than_stated`)."""
    if _BEYOND_DEFAULT.search(question) and (
        DURATION_HELD.search(text) is not None or holds_value("count", text)
    ):
        return True
    if other_than_stated(question, text) or past_length(question, text):
        return True
    if any(_more_often_than_stated(found, text) for found in _MORE_OFTEN.finditer(question)):
        return True
    for found in _BEYOND_BARE.finditer(question):
        # The same number as a length the passage states ("kept for 30 days").
        number = re.escape(found.group(1))
        if re.search(rf"\b{number}[\s-]*{UNITS}\b", text, re.IGNORECASE):
            return True
    return any(_states_figure(found, text) for found in _BEYOND.finditer(question))

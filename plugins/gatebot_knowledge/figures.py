"""Values in questions and in passages: numbers, lengths of time, periods and counts.

What kind of value a question asks for (:func:`asked_value`: how long, how often, how many) and
whether a passage holds one (:func:`holds_value`), read by :mod:`gatebot_knowledge.specific`; the
numbers and lengths a question asks past or in place of, read by :mod:`gatebot_knowledge.beyond`.
"""

from __future__ import annotations

import re

from gatebot_knowledge.lexical import stem

#: "h" as written after a number ("24h").
UNITS = r"(?:second|sec|minute|min|hour|hr|h|day|week|month|year|business day|working day)s?"
NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
    " sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty hundred thousand"
    " million dozen"
).split()
NUMBER = r"(?:\d+(?:[.,]\d+)?|" + "|".join(NUMBER_WORDS) + r")"
#: A length of time ("30 days", "14-day") and a period ("every minute", "daily"): either is a time,
#: not a count.
LENGTH = rf"{NUMBER}[\s-]*{UNITS}\b"
_PERIOD = rf"every\s+(?:{NUMBER}\s+)?{UNITS}\b|(?:hourly|daily|weekly|monthly|yearly|annually)\b"
DURATION_HELD = re.compile(rf"\b(?:{LENGTH}|{_PERIOD})", re.IGNORECASE)
#: A count: "one" is left out, being as often a pronoun ("unless one names another").
_COUNT = r"(?:\d+(?:[.,]\d+)?|" + "|".join(w for w in NUMBER_WORDS if w != "one") + r")"
_ANY_NUMBER = re.compile(rf"\b{_COUNT}\b|\bunlimited\b|\bno limit\b", re.IGNORECASE)
_LIST = re.compile(r"\w+, [\w ]+, [\w ,]*\b(?:and|or) \w+")
DURATION_ASKED = re.compile(
    rf"\bhow\s+(?:long|soon|quickly|far\s+back)\b|\bhow\s+many\s+{UNITS}\b"
    # whether something is kept for ever: "do you keep the history of incidents forever?" (not
    # "monitor keeps alerting forever": a verb of doing after "keeps" is no keeping)
    r"|\b(?:keep|keeps|kept|store|stores|stored|retain|retains|retained|save|saves|saved)\b"
    r"(?!\s+\w+ing\b)(?:\s+[\w'-]+){0,5}?\s+(?:forever|for\s+ever|indefinitely)\b"
    # a length asked in a noun's name: "log retention on pipeline runs", "cache ttl?", "trial
    # length?"
    # (not "customer retention", "card expiry date" or "a ttl header"; nor "log length", a size)
    r"|(?<!customer\s)\b(?:retention|ttl|expiry)\b(?!\s+(?:date|dates|header|headers)\b)"
    r"|\b(?:trial|cache|caches|history)\s+(?:length|duration|lifetime)\b",
    re.IGNORECASE,
)
_FREQUENCY_ASKED = re.compile(r"\bhow\s+(?:often|frequently)\b", re.IGNORECASE)
#: How long (a length of time: "30 days", "14-day", not "every minute") and how often ("every
#: minute", "daily"): "how long is uptime history kept" is not answered by "checks ... every
#: minute", nor "how often do you check" by "kept for 30 days".
LENGTH_HELD = re.compile(rf"(?<!every )\b{LENGTH}", re.IGNORECASE)
_FREQUENCY_HELD = re.compile(rf"\b(?:{_PERIOD}|{NUMBER}\s+times\b)", re.IGNORECASE)
_COUNT_ASKED = re.compile(r"\bhow\s+many\b", re.IGNORECASE)
_TIME_UNIT = r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b"
#: The most or the least of a thing someone may have, asked: "what's the most websites we can
#: watch?", "max concurrent jobs we get", "max seats on the business plan?" (a plural, then who
#: has them, where or nothing). Not "the most common reason" or "the most popular
#: integrations" (a superlative), "which plan has the most features", "Max needs our invoices"
#: or "Max says we need a card" (a name, then a verb), "max days logs are kept" (a length) or
#: "max costs per month" (a price).
_NOT_COUNTED = (
    r"(?!(?:costs?|prices?|fees?|charges?|says|thinks|wants|needs|asks|tells|gets|goes|does|has"
    rf"|is|was|knows|reckons|said|told|asked)\b)(?!{_TIME_UNIT})"
)
_PLURAL_AFTER = (
    rf"{_NOT_COUNTED}(?P<most>[a-z]+s)\b\s*"
    r"(?=(?:we|i|you|one|that|can|per|on|in|allowed|included|at\s+once)\b|\?|$)"
)
_LIMIT_ASKED = re.compile(
    r"^\s*(?:what|whats|what's|which|how)\b.*\b(?:maximum|minimum|max|min|limit|limits"
    r"|number\s+of)\b"
    # the question begun on its figure: "max number of jobs that can run in parallel?"
    # (not a number of days: "max number of days logs are kept?" asks how long)
    r"|^\s*(?:the\s+)?(?:maximum|minimum|max|min)\s+(?:number|amount|count|size)\s+of\b"
    rf"(?!\s+{_TIME_UNIT})",
    re.IGNORECASE,
)
_MOST_ASKED = re.compile(
    r"(?:^\s*(?:what|whats|what's|how)\b(?!.*\b(?:has|have|offers?|gives?|includes?)\s+the"
    r"\s+most\b).*\bthe\s+most"
    # (a word before the plural only where who may have them follows: "the most status pages
    # we can publish", not "the most popular integrations")
    rf"(?:\s+{_NOT_COUNTED}[a-z]+(?=\s+[a-z]+s\s+(?:we|i|you|one|can|allowed)\b))?"
    rf"|^\s*(?:the\s+)?(?:maximum|minimum|max|min)\s+(?:{_NOT_COUNTED}[a-z]+\s+)?)\s*"
    rf"{_PLURAL_AFTER}",
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


def stems(words: str) -> frozenset[str]:
    """The stems of the space-separated ``words``."""
    return frozenset(stem(w) for w in words.split())


#: Verbs that name no action of their own ("can I get ...", "how do I see ...").
LIGHT_VERBS = stems(
    "be get have has do make use see find know set go start need want put keep pick turn"
    " take give tell ask try run change choose access reach talk speak contact say work come"
    " still also just done made given please"
    # Asking to be told or shown ("could someone explain how it is priced", "how far back can I
    # look at build logs", "where can I grab last month's invoice"): no action of the product's.
    " explain describe clarify look view grab"
)


#: An amount of money asked for as a figure: "a ballpark number", "the actual monthly price",
#: "how much per seat", "in dollars". "How much does it cost?" asks what the pricing is, which a
#: passage without a figure may answer ("a free tier and paid plans per team").
_MONEY_ASKED = re.compile(
    r"\b(?:ballpark|rough|exact|actual|approximate|concrete|specific)\s+(?:number|figure|price"
    r"|cost|amount|estimate)s?\b"
    r"|\b(?:monthly|annual|yearly)\s+(?:price|cost|fee|rate)s?\b"
    r"|\bprice\s+(?:per|a|for\s+(?:a|one|each))\s+(?:seat|user|member|month|year)\b"
    r"|\bhow\s+much\s+(?:per|a|an|each|for\s+(?:a|one|each))\s+(?:seat|user|member|month|year)\b"
    r"|\bin\s+(?:dollars|euros|pounds|usd|eur|gbp)\b",
    re.IGNORECASE,
)
#: Whether something costs on top: "do the SMS alerts cost extra", "is that a paid add-on". A
#: passage that speaks of cost at all answers it ("Viewers do not count as paid seats"); one
#: that never does ("alerts go to Slack, Teams, email, SMS and phone calls") does not.
_CHARGE_ASKED = re.compile(
    r"\b(?:cost|costs|charge|charged|pay|paying)\s+extra\b|\bextra\s+(?:cost|charge|fee)s?\b"
    r"|\bpaid\s+add-?ons?\b"
    # "are SMS alerts charged per message", "are self-hosted runners billed any differently"
    r"|\b(?:charged|billed|priced)\s+(?:any\s+)?(?:per\s+\w+|separately|differently|on\s+top)\b",
    re.IGNORECASE,
)
_CHARGE_HELD = re.compile(
    # (a plan that has it says what it costs: "Is SSO priced separately or included in
    # Business?" is answered by "available on the Business plan")
    r"\b(?:free|paid|pay|price\w*|cost\w*|charge\w*|included|includes|billed|no\s+card|plans?)\b",
    re.IGNORECASE,
)
#: A figure of money in a passage: "$20", "€15", "20 USD".
_MONEY_HELD = re.compile(
    r"[$€£]\s?\d|\b\d+(?:[.,]\d+)?\s?(?:usd|eur|gbp|dollars?|euros?|pounds?)\b", re.IGNORECASE
)

#: A question that asks which places by name: "which countries are the check locations in",
#: "what region is our data in" (a country or a region answers it: "the EU or the US")...
_PLACE_ASKED = re.compile(
    r"\b(?:which|what)\s+(?:countr(?:y|ies)|regions?|continents?)\b", re.IGNORECASE
)
#: ...or a city or a data centre: "which data center hosts us", "where in the EU exactly, like
#: Frankfurt?" ("the EU" does not answer where in it).
_SITE_ASKED = re.compile(
    r"\b(?:which|what)\s+(?:cit(?:y|ies)|data\s*cent(?:er|re)s?)\b"
    r"|\bwhere\s+in\s+(?:the\s+)?(?:eu|e\.u\.|europe|us|u\.s\.|usa|america)(?!\w)"
    # ("which country exactly?" after the EU was said: a country, not a region)
    r"|\b(?:which|what)\s+countr(?:y|ies)\b[^.?!]*\bexactly\b|\bexactly\s+which\s+countr",
    re.IGNORECASE,
)
#: Places a help page names: regions first... (A pack naming another place says it in words these
#: lists lack; its "which city" questions then read as unanswered, the safe side.)
_REGION_HELD = re.compile(
    r"\b(?:EU|E\.U\.|US|U\.S\.|USA|UK|EEA|APAC|EMEA|LATAM|Europe|European|America|American"
    r"|Asia|Africa|Oceania)(?!\w)"
)
#: ...then a country or a city, which answers which country exactly or which city.
_SITE_HELD = re.compile(
    r"\b(?:Australia|Canada|Mexico|Brazil|Germany|France|Ireland|Netherlands|Switzerland"
    r"|Sweden|Finland|Norway|Spain|Italy|Poland|India|Japan|Korea|China|Indonesia|Israel"
    r"|Bahrain|UAE|Frankfurt|Dublin|London|Paris|Amsterdam|Stockholm|Milan|Zurich|Madrid"
    r"|Warsaw|Helsinki|Virginia|Ohio|Oregon|California|Iowa|Montreal|Toronto|Sao\s+Paulo"
    r"|São\s+Paulo|Tokyo|Osaka|Seoul|Singapore|Sydney|Melbourne|Mumbai|Delhi|Jakarta"
    r"|Hong\s+Kong|Cape\s+Town|Tel\s+Aviv)\b"
)


def asked_value(question: str) -> str | None:
    """``"duration"``, ``"frequency"``, ``"count"``, ``"money"``, ``"charge"`` (whether
    something costs on top), ``"place"`` (a country or region), ``"site"`` (a city, a data
    centre or which country exactly) or None: the kind of value
    ``question`` asks for. A question
    about where or how to find a value asks for a place or a way, not the value ("where can I
    see how long my route is")."""
    if _FIND_OUT.search(question):
        return None
    if DURATION_ASKED.search(question):
        return "duration"
    if _FREQUENCY_ASKED.search(question):
        return "frequency"
    if any(p.search(question) for p in (_COUNT_ASKED, _LIMIT_ASKED, _MOST_ASKED)):
        return "count"
    if _MONEY_ASKED.search(question):
        return "money"
    if _CHARGE_ASKED.search(question):
        return "charge"
    if _SITE_ASKED.search(question):
        return "site"
    if _PLACE_ASKED.search(question):
        return "place"
    return None


#: What a count question counts, in the words a help page uses for the same thing: "from how many
#: places / regions do you check" is answered by "from twelve locations" (stems: a plural is the
#: same entry).
_COUNTED_AS = {
    stem(word): stems(f"{word} {same}")
    for word, same in {
        "place": "location",
        "region": "location",
        "spot": "location",
        "probe": "location",
        # "from how many geographic vantage points are checks performed"
        "vantage": "location",
        "geographic": "location",
        "user": "seat member",
        "people": "seat member",
    }.items()
}


def counted(question: str) -> str | None:
    """The stem of what a count question counts ("how many websites": "website"; "max concurrent
    jobs": "job"), or None when it names nothing after "how many", "number of", "the most" or
    "max"."""
    found = _COUNTED.search(question)
    if found:
        return stem(found.group(1).lower())
    most = _MOST_ASKED.search(question)
    return stem(most.group("most").lower()) if most and most.group("most") else None


def holds_value(kind: str, text: str, counts: str | None = None) -> bool:
    """Whether ``text`` holds a value of ``kind``; for a count of ``counts`` (a stem), a number
    of that thing ("twelve locations" holds how many locations, not how many websites)."""
    if kind == "duration":
        return LENGTH_HELD.search(text) is not None
    if kind == "frequency":
        return _FREQUENCY_HELD.search(text) is not None
    if kind == "money":
        return _MONEY_HELD.search(text) is not None
    if kind == "charge":
        return _CHARGE_HELD.search(text) is not None
    if kind == "site":
        return _SITE_HELD.search(text) is not None
    if kind == "place":
        return _REGION_HELD.search(text) is not None or _SITE_HELD.search(text) is not None
    # A count: any number that is not a length of time ("seven days" says how long, not how
    # many), or a list that can be counted ("owner, admin, member or viewer").
    rest = DURATION_HELD.sub(" ", text)
    if counts is not None:
        words = [stem(w) for w in re.findall(r"[a-z0-9]+", rest.lower())]
        named = _COUNTED_AS.get(counts, frozenset((counts,)))
        numbered = any(
            _ANY_NUMBER.fullmatch(w) and named & set(words[i + 1 : i + 1 + _COUNT_REACH])
            for i, w in enumerate(re.findall(r"[a-z0-9]+", rest.lower()))
        )
        return numbered or (_LIST.search(rest) is not None and bool(named & set(words)))
    return _ANY_NUMBER.search(rest) is not None or _LIST.search(rest) is not None


def mentions_value(kind: str, text: str) -> bool:
    """Whether ``text`` says anything of the kind at all, as an entry's answer may in a way
    :func:`holds_value` does not count: for a count any number, list or alternative ("the EU or
    the US" answers how many regions there are); for money any word of what things cost ("a
    ballpark cost" is what the pricing entry, "a free tier and paid plans", is there for)."""
    if kind == "money":
        return _CHARGE_HELD.search(text) is not None
    if holds_value(kind, text):  # a count: any number or list, as no thing counted is named
        return True
    return kind == "count" and re.search(r"\bor\b", DURATION_HELD.sub(" ", text)) is not None


#: What a length of time is in days, to read "a week" as the passage's "seven days".
_DAYS = {
    "second": 1 / 86400,
    "sec": 1 / 86400,
    "minute": 1 / 1440,
    "min": 1 / 1440,
    "hour": 1 / 24,
    "hr": 1 / 24,
    "h": 1 / 24,
    "day": 1,
    "business day": 1,
    "working day": 1,
    "week": 7,
    "month": 30,
    "year": 365,
}
_WORD_VALUE = dict(
    zip(NUMBER_WORDS, [*range(1, 21), 30, 40, 50, 60, 100, 1000, 10**6, 12], strict=True)
)
_WORD_VALUE.update(a=1, an=1)


def in_days(number: str, unit: str) -> float | None:
    """A length of time in days, or None for a number not read ("2.5")."""
    n, unit = number.lower(), unit.lower()
    value = float(n) if n.isdigit() else _WORD_VALUE.get(n)
    per = _DAYS.get(unit) or _DAYS.get(unit[:-1])  # "days", "business days"
    return None if value is None or per is None else value * per


def number_value(word: str) -> float | None:
    """A number written in digits or words ("3", "three"), or None."""
    w = word.lower()
    if re.fullmatch(r"\d+(?:\.\d+)?", w):
        return float(w)
    value = _WORD_VALUE.get(w) if w not in ("a", "an") else None
    return None if value is None else float(value)

"""Small text helpers shared by the deterministic readers: normalising and phrase matching."""

from __future__ import annotations

import re
from functools import lru_cache

APOSTROPHE = "\u2019"  # the curly one phones type
_WORD = re.compile(r"[a-z0-9]+(?:['\u2019][a-z]+)?")

STOPWORDS = frozenset(
    {
        *"a an and are as at be but by can could do does did for from have has how".split(),
        *"i i'm if in is it its me my no not of on or our so that the their them".split(),
        *"there this to us was we what when where which who why will with would".split(),
        *"you your yours want like please hi hello".split(),
    }
)


_QUESTION_WORDS = (
    "what",
    "how",
    "why",
    "when",
    "where",
    "which",
    "who",
    "does",
    "do",
    "is",
    "are",
    "can",
    "could",
    "will",
    "would",
    "should",
)


#: Words of talk a chat message opens on before what it says ("grand, and do I have to ...",
#: "ok and what about get lab ..."): the follow-up reading (bot.turn.followup_query) skips them too.
CHAT_OPENERS = frozenset(
    "oh ok okay k so um uh right alright great cool nice lovely brilliant perfect grand awesome"
    " thanks understood wait".split()
)
#: The question words a question may open on after them: "ok will do, remove 2 seats" is none.
_WH_WORDS = frozenset({"what", "how", "why", "when", "where", "which", "who"})


def is_question(text: str) -> bool:
    """A message that asks something: ends with "?" or opens with a question word, or with a
    wh-word after a chat's openers (:data:`CHAT_OPENERS`, "and", "also")."""
    words = tokens(text)
    first = words[0].split("'")[0] if words else ""  # "what's", "where's", "how'd"
    if text.strip().endswith("?") or first in _QUESTION_WORDS:
        return True
    while len(words) > 1 and (words[0] in CHAT_OPENERS or words[0] in ("and", "also")):
        words = words[1:]
    return words[0].split("'")[0] in _WH_WORDS if words else False


#: A statement that asks to be told something rather than for something to be done: "I'd like
#: to know whether ...", "tell me about ...", "I was wondering if ...". "I want a trial" or "I
#: need a refund" ask to act and are not among these.
_ASKS_TO_KNOW = re.compile(
    r"\b(?:(?:i|we)\s*(?:'d|would)?\s+(?:like|want|need)\s+to\s+(?:know|understand|find\s+out)"
    r"|(?:i|we)\s+(?:am\s+|are\s+|was\s+|were\s+|'m\s+|'re\s+)?wonder(?:ing)?"
    r"|(?:can|could|would)\s+(?:you|someone|anyone)\s+(?:please\s+)?(?:tell|explain|confirm)"
    r"|^\s*(?:please\s+)?(?:tell|explain\s+to)\s+(?:me|us)\b"
    r"|^\s*(?:please\s+)?explain\b"
    r"|\blooking\s+for\s+(?:info|information|details)\b"
    # ("... and the bill goes up by how much", "not ordering anything yet": asked, unmarked)
    r"|\bby\s+how\s+much\s*[.!]*\s*$|\bnot\s+(?:ordering|buying|asking\s+for)\s+anything\b)",
    re.IGNORECASE,
)


def asks_to_know(text: str) -> bool:
    """A question, or a statement that asks to be told something (see :data:`_ASKS_TO_KNOW`).
    A question may come after its context, unmarked: "our app ships as a container, can acme
    pipelines build docker images" asks in its second clause (a request, "I upgraded by mistake,
    can you refund me", asks to act and is not read so)."""
    norm = text.replace(APOSTROPHE, "'")
    if is_question(text) or _ASKS_TO_KNOW.search(norm) is not None:
        return True
    if _CONDITION_ASKS.match(norm) is not None and not asks_to_act(norm):
        return True
    clauses = _CLAUSE.split(norm)
    # A question mark ends a question wherever it stands ("During the trial is some features
    # locked? I want test the full monitoring"); a question unmarked, after its context, needs
    # some words to be one; "is that possible" after what is wanted asks whether it can be.
    marked = any(c.rstrip().endswith("?") for c in clauses[:-1])
    later = clauses[1:]
    asks = any(is_question(c) and len(tokens(c)) >= _CLAUSE_QUESTION_WORDS for c in later)
    asks = asks or marked or any(_POSSIBLE_TAG.fullmatch(c.strip()) for c in later)
    asks = asks or _asks_after_context(norm)
    return asks and not asks_to_act(norm)


def _asks_after_context(text: str) -> bool:
    """A question run on after its context with nothing between: "we keep our code on git lab
    will your pipelines hook up to that" (a verb before its subject, past a few words)."""
    for found in _INVERTED.finditer(text):
        before = tokens(text[: found.start()])
        if len(before) >= _RUN_ON_CONTEXT and len(tokens(text[found.start() :])) >= 4:
            return True
    return False


#: A condition, then the question it conditions, unmarked: "if i start the trial for the ci
#: product are some features locked until i pay".
_CONDITION_ASKS = re.compile(
    r"\s*(?:if|when)\b[^?.!]*?\b(?:are|is|do|does|will|would|can|could|should)"
    r"\s+(?:i|we|you|they|it|that|this|there|some|any|all|the|my|our|these|those)\b",
    re.IGNORECASE,
)

#: Asking whether what was just said can be: "..., is that possible", "... - is it doable?".
_POSSIBLE_TAG = re.compile(
    r"(?:is|would|will)\s+(?:that|it|this)\s+(?:be\s+)?(?:possible|doable|supported|allowed"
    r"|an\s+option|ok|okay)\s*[?.!]*",
    re.IGNORECASE,
)


#: The fewest words a later clause needs to count as a question ("thanks, will do" is none).
_CLAUSE_QUESTION_WORDS = 4
#: The verbs a question puts before its subject, and the subjects a question to the company has
#: (the knowledge plugin's run-on question reads the same, with a product's name too).
INVERTED_VERBS = ("will", "would", "can", "could", "do", "does", "should")
ASKED_OF = frozenset({"you", "your", "it", "there", "they", "acme"})
#: A verb before its subject, as a question puts it: "will your pipelines", "can you". Not "is"
#: or "are" ("the annoying thing is it keeps failing"), nor a verb after its own subject ("as
#: soon as you can it is urgent").
_INVERTED = re.compile(
    r"(?<!\byou\s)(?<!\bwe\s)(?<!\bi\s)(?<!\bthey\s)(?<!\bit\s)"
    rf"\b(?:{'|'.join(INVERTED_VERBS)})\s+(?:{'|'.join(sorted(ASKED_OF))})\b",
    re.IGNORECASE,
)
#: The words of context a run-on question comes after.
_RUN_ON_CONTEXT = 3


#: What a value looks like written alone: an email address, a link, anything with a digit (an
#: order number, a phone number) and an id joined by an underscore ("sub_acme1").
_VALUE = re.compile(r"\S+@\S+\.\w+|https?://\S+|\S*\d\S*|\w+_\w+")
#: Words that only frame a value given as an answer ("my email is ...", "order 1042, thanks",
#: "you can reach me at ...").
_VALUE_FRAME = frozenset(
    "thanks thank please ok okay sure yes yeah here it's its email mail address order number "
    "subscription id phone reach contact".split()
)


def only_values(text: str) -> bool:
    """Whether ``text`` is nothing but values, framed at most by a few words ("sam@example.com",
    "it's order 1042"): an answer to a question, which asks for nothing itself."""
    if _VALUE.search(text) is None:
        return False
    rest = tokens(_VALUE.sub(" ", text))
    return all(t in STOPWORDS or t in _VALUE_FRAME for t in rest)


#: Asking the agent itself to do something: by addressing it ("can you", "please"), or saying
#: what one would like.
_OF_THE_AGENT = r"please|pls|plz|(?:can|could|would|will) (?:you|u)"
_TO_YOU = rf"{_OF_THE_AGENT}|(?:i|we)(?:'d| would) like"
#: "Kindly" before a word of asking is the politeness of a question: "Kindly how do I force 2FA
#: for everybody?" asks how ("kindly add 2 seats" asks the agent).
_KINDLY = r"kindly(?!\s+(?:how|what|where|when|which|who|why|is|are|do|does|did)\b)"
#: A message worded as a request, not a question about how things are: asking the agent, or
#: asking for something ("can we hop on a call", "could I get the duplicate back", "is it
#: possible to set up a meeting").
_REQUEST = re.compile(
    rf"\b(?:{_TO_YOU}|{_KINDLY}|(?:can|could|would|will) we|(?:can|could|may) i (?:get|have|book)"
    r"|is (?:it|there a way) (?:possible )?to (?:get|have|book|set up|schedule|arrange))\b",
    re.IGNORECASE,
)
_TO_THE_AGENT = re.compile(rf"\b(?:{_OF_THE_AGENT}|{_KINDLY})\b", re.IGNORECASE)


def asks_the_agent(text: str) -> bool:
    """Whether ``text`` asks the agent itself to do something ("can you add a couple?",
    "please refund it"); "I'd like to kick the tires. Can I test everything first?" asks
    whether the customer may."""
    return _TO_THE_AGENT.search(text.replace(APOSTROPHE, "'")) is not None


#: Saying what one wants or needs is a request only in a message that asks no question: "I want
#: to change the number of users to 25" is one, and so is "we're onboarding 5 engineers and need
#: room for them on our plan"; in "I need everyone to use 2FA, can I enforce that?" the want is
#: the question's context. Wanting to know is a question.
_WANTS = re.compile(
    r"(?:\b(?:(?:i|we) (?:also |really |just |still )?|(?:i|we)\b[^.?!,]{0,60}\band )"
    r"(?:want|need)\b"
    # with the subject left out, as chat does: "Need to get reimbursed for order 77310"
    r"|(?:^|[,;.!]\s+)(?:(?:hi|hey|hello)\b[,!.]?\s*)?(?:need|want)s?\b)"
    r"(?! to (?:know|understand|learn|find out|check|ask|confirm))",
    re.IGNORECASE,
)


#: Where a message's clauses part: "I want to force 2FA for everybody, where's that setting"
#: asks its question in the second.
_CLAUSE = re.compile(r"(?<=[,;.!?])\s+|\s+-\s+")


def asks_to_act(text: str) -> bool:
    """Whether ``text`` is worded as a request ("please", "can you", "can we", "could I get",
    "I'd like", "I want ..." in a message that asks no question): "can you reverse the charge
    from yesterday?" is; "do you offer refunds if we cancel within 14 days?" and "does every
    person who logs in need their own seat?" are not."""
    norm = text.replace(APOSTROPHE, "'")
    if _REQUEST.search(norm) is not None:
        return True
    return _WANTS.search(norm) is not None and not any(map(is_question, _CLAUSE.split(norm)))


#: A clause that opens on a verb of changing, said to the agent: "one of our planners has left,
#: take her seat off so we stop paying for it", "drop one seat". At a clause's start only ("how
#: do i add a user" asks how), not after "and" or "then" ("I tried to log in and add a user but
#: the button is greyed out" tells a story), nor "take a look" or "give me a sec".
_IMPERATIVE = re.compile(
    r"(?:^|[,;.!?]\s*|\b(?:so|just|please|pls|plz)\s+)(?:take|remove|drop|add|give"
    r"|bump|cut|book|refund|reverse|undo|return|cancel)\s+(?!(?:me\s+)?an?\s+(?:look|sec|second"
    r"|minute|min|moment)\b)(?:her|his|their|my|our|the|a|an|one"
    r"|two|three|four|five|\d+|them|it|this|that|us|me)\b",
    re.IGNORECASE,
)
#: Saying that other people need access: "we hired two more designers this week, they need
#: access", "three more kids joined the club, they need logins".
_THEY_NEED = re.compile(
    r"\b(?:they|he|she|both of them|all of them|each of them)\s+(?:all\s+|both\s+|also\s+)?"
    r"(?:need|needs|will need|require|requires)\s+(?:an?\s+|their\s+own\s+)?(?:access|logins?"
    r"|log-ins?|seats?|accounts?|licen[cs]es?)\b",
    re.IGNORECASE,
)


def orders(text: str) -> bool:
    """Whether ``text`` is worded as an order without the words of a request
    (:func:`asks_to_act`): a clause opening on a verb of changing (:data:`_IMPERATIVE`) in a
    sentence that asks nothing ("so remove a user means we lose her dashboards?" asks what
    happens), or, in a message that asks no question and tells of nothing done already ("both
    of them need access to billing, I already made them admins"), others' need of access
    (:data:`_THEY_NEED`)."""
    norm = text.replace(APOSTROPHE, "'")
    told = [s for s in _SENTENCE.split(norm.strip()) if not is_question(s)]
    if any(_IMPERATIVE.search(s) for s in told):
        return True
    if _THEY_NEED.search(norm) is None or _ALREADY.search(norm) is not None:
        return False
    return not any(map(is_question, _CLAUSE.split(norm)))


_ALREADY = re.compile(r"\balready\b", re.IGNORECASE)


#: Someone else who sells, refunds or is owed: a shop, a dealership, a landlord, a hotel's guest.
#: (Not a vendor, a provider, a supplier, a marketplace, a seller, a bank or a contractor: each
#: may be the company itself, the channel it is bought through, or how its invoice is paid.)
_PARTY = (
    r"(?:shop|store|dealership|dealer|landlord|airline|hotel|restaurant|gym|builder|plumber"
    r"|insurer|venue|theatre|theater|cinema|wholesaler|courier|guest|lady|tenant)"
)
#: What another party does or owes: "The shop still didn't refund me", "the car dealership wants
#: a fee to refund my deposit", "a cardigan she bought in our charity shop", "money back from
#: the hotel", "what refund is fair to offer her".
_ANOTHER_PARTY = re.compile(
    # (not "my" or "our": "our store still hasn't received the refund" is the customer's own)
    r"(?:^\W*(?!(?:my|our)\b)|\b(?:the|a|an|this|that)\s+)(?:[\w'-]+\s+){0,2}?"
    rf"{_PARTY}s?\s+(?:still\s+|just\s+)?"
    r"(?:won't|wont|will\s+not|didn't|didnt|did\s+not|hasn't|hasnt|has\s+not|refuses?|refused"
    r"|wants?|owes?|sold|is\s+issuing|issues)\b"
    r"|\b(?:bought|purchased)\s+(?:[\w'-]+\s+){0,3}?(?:in|at|from)\s+(?:the|my|our|a|an)\s+"
    rf"(?:[\w'-]+\s+){{0,2}}?{_PARTY}s?\b"
    r"|\b(?:refund(?:ed)?|money\s+back|reimburs\w*)\s+from\s+(?:the|my|our|a|an)\s+"
    rf"(?:[\w'-]+\s+){{0,2}}?{_PARTY}s?\b"
    r"|\b(?:offer|give)\s+the\s+guest\s+(?:a\s+)?refund\b"
    r"|\brefund\s+(?:is\s+)?(?:fair|reasonable)\s+to\s+(?:offer|give)\s+(?:her|him|the\s+guest)\b",
    re.IGNORECASE,
)
#: Words that address the company itself.
_TO_US = re.compile(r"\b(?:you|your|yours|u|ur|y'all|yall)\b", re.IGNORECASE)


def another_partys(text: str) -> bool:
    """Whether ``text`` tells of money another party refunds, owes or took
    (:data:`_ANOTHER_PARTY`, :data:`MONEY`) without once addressing the company ("you",
    "your"): a refund that is theirs to give (the scope check looks for the company's own names
    and words)."""
    norm = text.replace(APOSTROPHE, "'")
    if MONEY.search(norm) is None or _TO_US.search(norm) is not None:
        return False
    return _ANOTHER_PARTY.search(norm) is not None


#: Money that changes hands (a contractor who "wants to see it" before a demo owes nothing).
MONEY = re.compile(
    r"\b(?:refund\w*|money|charge[sd]?|fees?|deposit|paid|pay|reimburs\w*)\b", re.IGNORECASE
)


#: A question about how things work: a condition, an alternative, a limit, a time, who may do
#: it ("can we add seats mid-month or only at renewal?", "can I get a refund if I cancel in the
#: first 14 days?", "how long does a refund take to show up?", "who on our side can change the
#: seat count?").
_ASKS_HOW = re.compile(
    r"\b(?:if (?:i|we)|whether|or only|or do|or does|or is|or are|anytime|any time|at renewal"
    r"|mid[- ]month|later|in the future|more than|is there a (?:limit|minimum|maximum)|policy"
    r"|do you offer|do you allow|how long|how soon|how quickly|what happens|maximum|minimum"
    r"|who (?:on|in|at|can|is|else)"
    # Where to get it oneself: "need a pdf of last months invoice, where do i get it".
    r"|where (?:do|can|could|should|would) (?:i|we) (?:get|find|download|see|view|grab|access))\b",
    re.IGNORECASE,
)
#: Asking for something to go through alone ("a recorded demo I can watch on my own", "a
#: self-guided tour", "a sandbox to click around in") is a question about what exists, not a
#: request for a person to give a demo.
_ON_ONE_S_OWN = re.compile(
    r"\b(?:on (?:my|our) own|in (?:my|our) own time|without (?:talking|speaking|having to talk)"
    r"|self[- ]guided|self[- ]serve|recorded|recording|click around)\b",
    re.IGNORECASE,
)
#: Doing it oneself ("how do I add seats myself from the admin panel? I don't want you to do it,
#: just tell me where"): a question about where things are, not a request.
_SELF_SERVE = re.compile(
    r"\b(?:myself|ourselves|(?:don't|dont|do not) (?:want|need) you to"
    r"|just tell (?:me|us) (?:where|how))\b",
    re.IGNORECASE,
)
#: Telling of a refund, a demo or seats that already happened ("I got my refund last week,
#: thanks!", "just finished the demo with your sales guy", "the demo you guys gave us on tuesday
#: was great", "the extra seats we requested are
#: showing up now"): nothing to start.
_ALREADY_DONE = re.compile(
    r"\b(?:got|received|had|attended|enjoyed|finished|completed)\s+(?:my|our|the|a|your)\s+"
    r"(?:refund|demo|walkthrough|money back)\b"
    r"|\b(?:refund|demo|walkthrough|call)\s+(?:you|your team|your folks)\s+(?:guys\s+)?"
    r"(?:gave|did|ran|issued|sent|held)\b"
    # ("We got refunded last week for the double charge, thanks, it's all sorted now")
    r"|\b(?:already|was|were|been|got)\s+(?:already\s+|fully\s+|finally\s+)?refunded\b"
    r"|\brefund\s+(?:went|came)\s+through\b"
    # Seats or a refund asked for that arrived: "the extra seats we requested are showing up now,
    # all good", "the refund showed up on our card this morning".
    r"|\b(?:seats?|refund|money)\b[^.?!]{0,40}\b(?:are|is|were|was|have been|has been)\s+"
    r"(?:now\s+)?(?:showing(?:\s+up)?|there|live|active|added|in place|back)\b"
    r"|\b(?:seats?|refund|money)\b[^.?!]{0,40}\b(?:showed up|came through|went through|arrived"
    r"|landed|came in|hit (?:our|my) (?:card|account))\b"
    # A demo seen elsewhere: "saw your demo at KubeCon, the incident timeline view looked slick".
    r"|\b(?:saw|watched|seen|caught)\s+(?:your|the|a)\s+(?:demo|talk|presentation|webinar)\b",
    re.IGNORECASE,
)
#: ...unless it did not happen after all ("I never got my refund", "still haven't received the
#: refund").
_NOT_DONE = re.compile(
    r"\b(?:never|not|haven't|havent|hasn't|hasnt|didn't|didnt|still|yet)\b", re.IGNORECASE
)
#: Asking the agent itself outweighs any of those ("please remove 2 seats if you can").
_ASKS_YOU = re.compile(rf"\b(?:{_TO_YOU})\b", re.IGNORECASE)


def goes_alone(text: str) -> bool:
    """Whether ``text`` asks for something to go through alone (:data:`_ON_ONE_S_OWN`) and not
    for the agent to do anything: "is there a recorded demo I can watch on my own?"."""
    norm = text.replace(APOSTROPHE, "'")
    return _ON_ONE_S_OWN.search(norm) is not None and _ASKS_YOU.search(norm) is None


#: A sentence that is wholly the want of one's money back, asking nothing: "I want my money back
#: for the annual plan.", "we need a refund now" (not "Do we need a refund request form?", "I
#: want a refund when the plan renews by accident - is that allowed?", "i want a refund lol jk").
_MONEY_WANTED = re.compile(
    r"^\W*(?:(?:so|and|just|honestly|look|ok|okay)\W+)?(?:i|we)\s+(?:really\s+|just\s+)?"
    r"(?:want|need)\s+(?:(?:my|our)\s+money\s+back|a\s+refund)"
    # (nothing after it that puts a condition or another party's money: "... for the months we
    # didn't use if we cancel early", "a refund for our customers when their card fails")
    r"(?:\s+(?:for|on|now|today|please|asap)\b(?:(?!\b(?:if|when|unless|whether|in\s+case"
    r"|(?:our|my|their)\s+(?:customers|clients|users))\b)[^?])*)?[.!\s]*$",
    re.IGNORECASE,
)


def wants_money_back(text: str) -> bool:
    """Whether a sentence of ``text`` is wholly the want of the customer's money back
    (:data:`_MONEY_WANTED`): a request, whatever else the message asks ("Let me guess, refunds
    are 'not possible per our policy'? Try me. I want my money back for the annual plan.")."""
    return any(_MONEY_WANTED.match(s) for s in _SENTENCE.split(text.replace(APOSTROPHE, "'")))


def asks_how(text: str) -> bool:
    """Whether ``text`` asks how things work (a condition, an alternative, a limit, a time, where
    to do it oneself) or tells of what already happened, rather than asking for something to be
    done: "could we remove seats later if the team shrinks?" is answered, "please remove 2 seats
    if you can" starts the seat flow, "I got my refund last week, thanks!" starts nothing."""
    norm = text.replace(APOSTROPHE, "'")
    how = _ASKS_HOW.search(norm) is not None or _SELF_SERVE.search(norm) is not None
    if how and _ASKS_YOU.search(norm) is None and not wants_money_back(norm):
        return True
    return goes_alone(norm) or tells_done(norm)


def tells_done(text: str) -> bool:
    """Whether ``text`` tells of a refund or demo that already happened (:data:`_ALREADY_DONE`),
    asking for nothing: "the demo you guys gave us on tuesday was great"."""
    norm = text.replace(APOSTROPHE, "'")
    done = _ALREADY_DONE.search(norm) is not None and _NOT_DONE.search(norm) is None
    return done and not asks_to_act(norm)


#: A person, as such: "a real person", "a human".
_A_PERSON = r"a (?:real |live |actual )?(?:person|human)"
#: Someone of the company's teams: "one of your support folks", "ur sales team".
_THEIR_TEAM = (
    r"(?:one of )?(?:your|ur) (?:sales|support|account|success) (?:team|people|folks|rep|manager)"
)
#: Who a customer may ask for: a person, staff, someone from a team.
_WHO = (
    # ("an actual engineer": a real one, from the company)
    rf"(?:someone|somebody|some1|{_A_PERSON}|an? (?:(?:actual|real|live) )?(?:agent|rep"
    r"|representative|manager|supervisor|advisor|adviser|engineer|staff member)|a member of staff"
    rf"|{_THEIR_TEAM}"
    r"|your (?:manager|supervisor|boss)|(?:a|your) (?:team ?lead|senior))"
)
#: Asking in words for a person to take over, call or contact: "have someone call me back",
#: "get someone from your sales team to contact me", "I'd like to speak with someone from your
#: sales team", "escalate this to a manager", "connect me with support".
_ASKS_PERSON = re.compile(
    rf"\b(?:speak|talk|chat)\s+(?:to|with)\s+{_WHO}"
    rf"|\b(?:have|get|need|want|like|let)\s+{_WHO}\s+(?:(?:from|on|at|in)\s+(?:\w+\s+){{1,3}})?"
    r"(?:to\s+)?(?:call|contact|phone|ring|email|e-mail|reach out|get back|get in touch"
    r"|follow up)\b"
    # "get a human to look at this" (not "someone on call to look at alerts")
    rf"|\b(?:have|get|need|want|like|let)\s+{_WHO}\s+(?:to\s+)?"
    r"(?:look\s+at|take\s+over|deal\s+with|sort\s+out|check\s+on)\s+(?:this|it|that)\b"
    # "need a human to look at our account" (not "let someone look at our account": a role)
    rf"|\b(?:have|get|need|want)\s+{_WHO}\s+(?:to\s+)?look\s+at\s+(?:our|my)\s+account\b"
    # "Please pass this on to a human colleague", "can you pass me to a real person" (asked, not
    # told: "we'll pass it to a real person"; not "pass it on to someone in finance")
    r"|(?:^|[.!?;]\s*|\b(?:please|pls|plz|kindly|can\s+you|could\s+you|would\s+you)\s+)"
    r"pass\s+(?:this|it|me|us|my\s+\w+)\s+(?:on\s+|over\s+|along\s+)?to\s+"
    r"(?:(?:a|an)\s+(?:(?:real|actual|live|human)\s+)+|(?:one\s+of\s+your|your)\s+"
    r"(?:(?:real|actual|live|human)\s+)*|a\s+(?=(?:human|person)\b))"
    r"(?:persons?|people|colleagues?|agents?|reps?|engineers?|staff|beings?|humans?)\b"
    # "id rather explain this to one of ur support folks" (not "to someone in finance")
    r"|\bexplain\s+(?:this|it|things)\s+(?:directly\s+)?(?:to|with)\s+"
    rf"(?:{_THEIR_TEAM}|{_A_PERSON})"
    # "REAL human please not a script" (not "real human-readable logs")
    r"|\b(?:real|actual)\s+human\s+(?:please|pls|plz|now|asap)\b"
    r"|\bcall\s+(?:me|us)\s+back\b|\bcall-?back\b|\bgive\s+(?:me|us)\s+a\s+(?:call|ring)\b"
    # "Get me someone from your support team, prod deploys have been stuck for two hours"
    rf"|\b(?:get|fetch|bring|send)\s+(?:me|us)\s+{_WHO}(?!['\u2019]s)\b"
    # "can u hand me off to someone on ur support team", "hand this over to an actual human"
    # (not "hand it over to the ops team as owners")
    rf"|\bhand\s+(?:me|us|this|it|things|the\s+case|my\s+case)\s+(?:off|over)\s+to\s+(?:{_WHO}"
    r"|(?:your|ur)\s+(?:\w+\s+)?(?:team|folks|people|staff|humans?|agents?|engineers?)"
    r"|an?\s+(?:actual|real|live)\s+(?:human|person))"
    # "can somebody from your team contact me by email" (not "will someone call me if our site
    # goes down": from the team, in so many words)
    rf"|\b(?:can|could|would|will)\s+{_WHO}\s+(?:from|on|at|in)\s+(?:your|ur|the|acme)\s+"
    r"(?:\w+\s+){0,2}?(?:please\s+)?(?:call|contact|phone|ring|email|e-mail|reach\s+out\s+to"
    r"|get\s+back\s+to)\s+(?:me|us)\b"
    # "escalate this to a manager", "pls escalate me to an actual engineer", "Then escalate it to
    # your supervisor": asked of the agent, opening a sentence or after a word of asking (not
    # "if the on-call engineer doesn't ack, does it escalate to someone else?", "can I configure
    # alerts to escalate to a manager", which ask what the product does)
    r"|(?:^|[.!?,;]\s*|\b(?:please(?:\s+to)?|pls|plz|kindly|just|then|so|hey|ok|okay|guys"
    r"|let'?s|time\s+to|need\s+to|(?:can|could|would|will)\s+(?:you|u)(?:\s+guys)?"
    r"|(?:want|need|like|asking\s+you|begging\s+you)\s+you\s+to|(?:i|we)'?d\s+like\s+to"
    r"|(?:i|we)\s+(?:would\s+like|want|need)\s+to|(?:asking|begging|telling)\s+you\s+to"
    r"|you\s+(?:should|must|need\s+to|have\s+to))\s+)escalate\b(?:\s+\w+){0,6}?\s+(?:to\s+)?"
    rf"(?:{_WHO}|management|a human|(?:\w+\s+)?support)\b"
    # "someone I can escalate this to?"
    r"|\b(?:i|we)\s+(?:can|could)\s+escalate\s+(?:this\s+|it\s+)?to\s*(?:[?.!]|$)"
    # "Hand me over to a support engineer please" (not "escalate to an account manager if ...")
    r"|\bhand\s+(?:me|us|this|it)\s+(?:off|over)\s+to\s+an?\s+(?:support|sales)\s+(?:engineer|agent"
    r"|rep|person)\b"
    r"|\b(?:connect|transfer|put)\s+me\s+(?:(?:through|thru)\s+)?(?:to|with)\s+"
    r"(?:a|an|your|someone|somebody"
    r"|support|sales|the|one\s+of\s+(?:your|ur)|humans?|persons?|agents?)\b"
    # "pass me to human atendente obrigado" (a person named: not "route me to the pricing page")
    r"|\b(?:pass|forward|route)\s+(?:me|us)\s+(?:over\s+|on\s+)?to\s+"
    r"(?:an?\s+|the\s+(?:right\s+)?|your\s+)?(?:real\s+|live\s+)?"
    r"(?:humans?|persons?|agents?|someone|somebody|staff"
    r"|(?:advis[eo]rs?|conseill(?:er|ère)s?)(?!\s+(?:page|pages|portal|docs?|site|articles?)\b)"
    # (support the team, not its pages: "route me to support articles about runners")
    r"|support(?!\s+(?:articles?|docs?|documentation|pages?|guides?|site|portal|cent(?:er|re)"
    r"|links?|forums?)\b))\b"
    # "I would prefer to go through it with a member of your security team directly, rather
    # than via this chat" (not "we spoke with a member of your sales team directly last week",
    # nor "alerts by SMS rather than in the chat")
    r"|\b(?:talk|speak|call|phone|discuss|go\s+through|someone|somebody|person|human|member"
    r"|engineer)\b[^.?!]*\brather\s+than\s+(?:via|through|over|in|on|using)\s+this\s+"
    r"(?:chat|bot|widget)\b"
    r"|\b(?:talk|speak|discuss|go\s+through|meet|chat)\b[^.?!]{0,80}?\b(?:with|to)\s+a\s+member\s+"
    r"of\s+(?:your|ur)\s+(?:\w+\s+)?team\s+directly\b"
    # "is there a dev or someone from the team i can dm?" (not "is there someone on the team we
    # can call automatically": the customer's own team)
    r"|\b(?:is|are)\s+there\s+(?:a\s+dev|an?\s+engineer|someone|somebody|anyone|anybody)"
    r"(?:\s+or\s+(?:someone|somebody|anyone|anybody))?\s+(?:from\s+(?:the|your|ur)\s+team"
    r"|(?:on|at|from)\s+(?:your|ur)\s+(?:team|side|end)|(?:at|from)\s+acme)\s+(?:i|we)\s+"
    r"(?:can|could)\s+(?:dm|message|ping|talk\s+to|speak\s+to|chat\s+with|call|ring)\b"
    # "can someone from acme hop in and help me out" (not "hop on a call and walk us through
    # pipelines": a demo; nor "hop in to our workspace as an admin")
    rf"|\b(?:can|could)\s+{_WHO}\s+(?:from|at|on)\s+(?:acme|your\s+team|ur\s+team|the\s+team)\s+"
    r"(?:hop|jump)\s+in\b(?!\s*(?:to|into|on)\b)(?!\s+and\s+(?:walk|show|give|take|demo))"
    # "Is there a support engineer I can get on the phone?", "Is there somebody on your end I
    # could ring?", "Is there an actual support engineer who can look at this with me?"
    r"|\b(?:is|are)\s+there\s+(?:an?\s+|any\s+)?(?:(?:support|sales|real|live|human|actual)\s+)"
    r"{0,2}(?:engineer|person|human|rep|someone|somebody|anyone)\s+(?:(?:on|at|from)\s+(?:your|ur)"
    r"\s+(?:end|side|team)\s+)?(?:(?:i|we)\s+(?:can|could)\s+(?:talk|speak|chat|call|ring"
    r"|get\s+on\s+the\s+phone|get\s+hold\s+of)|who\s+(?:can|could)\s+(?:look\s+at|go\s+through"
    r"|walk\s+(?:me|us)\s+through)\s+(?:this|it|that|our|my)\b)\b"
    # "Is anyone on your side able to look at this with me?", "who can i ring at acme about this"
    r"|\b(?:is|are)\s+(?:there\s+)?(?:anyone|anybody|someone|somebody)\s+(?:on|at|from)\s+(?:your"
    r"|ur)\s+(?:side|end|team)\s+(?:able\s+to|who\s+can|that\s+can|free\s+to)\s+(?:look\s+at|help"
    r"|talk|speak|call|ring|hop\s+on|jump\s+on|go\s+through)\b"
    # (at Acme or about this: "who can we call if the on-call engineer doesn't pick up?" asks
    # about escalation)
    r"|\bwho\s+(?:can|could)\s+(?:i|we)\s+(?:ring|call|phone|talk\s+to|speak\s+(?:to|with))\s+"
    r"(?:(?:at|from|on|in)\s+(?:acme|your|ur)\b|about\s+(?:this|it|that|my|our)\b)"
    # "Can an engineer on your side screen-share with me and look at the failed deploy?" (not
    # "could someone from your team hop on a call and walk us through pipelines": a demo)
    rf"|\b(?:can|could|would)\s+{_WHO}\s+(?:on|at|from)\s+(?:your|ur)\s+(?:side|end|team)\s+"
    r"(?:please\s+)?(?:screen[- ]?share\s+with\s+(?:me|us)\s+and\s+)?(?:look\s+at|ring\s+(?:me|us)"
    r"|call\s+(?:me|us))\b"
    # "Can a human being please look at it?" (not "can someone on call look at alerts")
    # (the request ends there: "will someone look at it if our deploy fails overnight?" asks what
    # happens; "can someone take over this account" is about ownership)
    rf"|\b(?:can|could|would)\s+(?:{_WHO}|a\s+human\s+being)\s+(?:please\s+)?(?:look\s+at"
    r"|deal\s+with|sort\s+out)\s+(?:this|it|that)\s*(?:[?.!]|$|please|for\s+(?:me|us)|asap|now)"
    # "are there any actual engineers on this chat?"
    r"|\b(?:are|is)\s+there\s+(?:any\s+|an?\s+)?(?:actual|real|live)\s+(?:people|persons?|humans?"
    r"|engineers?|agents?|staff)\b"
    # "get me an actual engineer on the line" (on the phone with the customer: not "get the
    # on-call engineer on the phone when a check fails", which asks what Monitor does)
    r"|(?:^|[.!?]\s*|\b(?:please|pls|plz|just|can\s+you|could\s+you)\s+)(?:get|put)\s+(?:me|us)\s+"
    r"(?:an?\s+)?(?:(?:real|actual|live|human|support)\s+){0,2}"
    r"(?:engineer|person|human|agent|rep|someone|somebody)\s+on\s+the\s+(?:line|phone)\b"
    # "page a human plz", "get me a human" (not "can monitor page a human on call?")
    r"|\b(?:page|get|fetch|find)\s+(?:me\s+|us\s+)?(?:a\s+)?(?:real\s+|actual\s+|live\s+)?"
    r"human\b(?=\s*(?:please|pls|plz|now|asap|[^\w\s-]|$))"
    # "anyone live there rn", "is somebody real on this chat?"
    r"|(?:^\W*|\b(?:is|are)\s+)(?:anyone|anybody|someone|somebody)\s+(?:live|real|human)\s+"
    r"(?:there|here|around"
    r"|on\s+(?:this|the)\s+(?:chat|line|other\s+end))\b"
    # "is anyone from acme actually there??": whether a person is there at all, not a greeting
    # ("hey, anyone around?")
    r"|\b(?:is|are)\s+(?:there\s+)?(?:anyone|anybody|someone|somebody)\s+(?:(?:from|at|on)\s+"
    r"(?:\w+\s+){1,2})?(?:actually|really|even)\s+(?:there|here|around|reading|listening)\b",
    re.IGNORECASE,
)
#: Who a Polish request for a person names: a consultant, a human, an adviser, someone of the
#: company's support.
_PERSON_PL = (
    # (not "z doradcą podatkowym", the customer's own tax adviser)
    r"(?:(?:jakimś|prawdziwym|żywym)\s+)?(?:konsultant\w*|człowiek\w*"
    r"|doradc\w*+(?!\s+(?:podatkow|finansow|prawn|inwestycyjn))|osobą"
    r"|kimś\s+z\s+(?:obsługi|supportu|waszego|działu))"
)
#: A Japanese request's ending: "please", "may I have", "I would like".
_PLEASE_JA = "(?:ください|下さい|もら|いただ|頂|ほし|欲し)"
#: The same in the other languages customers write in most (Spanish, French, German, Portuguese,
#: Italian): speaking with a person, an agent or a human, in so many words. "Posso parlare con un
#: operatore?" read 0.48 across languages from the nearest hand-off line, under the 0.5 a read
#: across languages needs.
_ASKS_PERSON_ABROAD = re.compile(
    r"\b(?:hablar|charlar|comunicarme)\s+con\s+(?:un|una|alg[uú]n|alguien)\b"
    r"|\bpersona\s+(?:real|de\s+verdad)\b"
    r"|\bparler\s+(?:à|a|avec)\s+(?:un|une|quelqu'un)\b"
    r"|\b(?:un|une)\s+(?:vrai|vraie)\s+(?:personne|humain)\b"
    r"|\b(?:mit|einen|einem|einer)\s+(?:\w+\s+)?(?:Menschen|Mitarbeiter(?:in)?|Berater(?:in)?"
    r"|Person)\s+(?:\w+\s+)?(?:sprechen|reden|verbinden)\b"
    r"|\b(?:sprechen|reden)\s+mit\s+(?:einem|einer)\s+(?:\w+\s+)?(?:Menschen|Mitarbeiter(?:in)?"
    r"|Berater(?:in)?|Person)\b"
    r"|\bfalar\s+com\s+(?:um|uma|algu[eé]m)\b"
    # Being put through: "Pásame con alguien de soporte", "mettez-moi en relation avec"
    r"|\b(?:p[aá]same|p[aá]senme|ponme|p[oó]ngame|comun[ií]came)\s+con\s+(?:alguien|una?\s+"
    r"(?:persona|agente|humano|asesor)|(?:el\s+equipo\s+de\s+)?(?:soporte|ventas))\b"
    r"|\b(?:passez|passe)[- ]moi\s+(?:quelqu'un|un\s+(?:conseiller|agent|humain)|une\s+personne)"
    r"|\bmettez[- ]moi\s+en\s+(?:relation|contact)\b"
    r"|\bverbinden\s+Sie\s+mich\b|\bme\s+(?:passa|transfere|coloca)\s+(?:para|com)\s+"
    r"(?:algu[eé]m|um\s+(?:atendente|agente|humano)|uma\s+pessoa|o\s+suporte)\b"
    r"|\bpassami\s+(?:qualcuno|un\s+operatore|un\s+agente)\b"
    r"|\bparlare\s+con\s+(?:un|una|qualcuno)\b"
    # Polish, asked for: "Poproszę o kontakt z konsultantem", "chcę rozmawiać z człowiekiem",
    # "połączcie mnie z kimś z obsługi" (not "Rozmowa z konsultantem była świetna", nor "kontakt
    # z pracownikiem dyżurnym przez SMS", the customer's own)
    r"|\b(?:poprosz[ęe]|prosz[ęe]|chc[ęe]|chciał(?:bym|abym)|czy\s+mog[ęe]|potrzebuj[ęe])\s+"
    r"(?:o\s+)?(?:\w+\s+){0,2}?(?:kontakt\w*|rozmow[ęy]|rozmawia\w*|porozmawia\w*|pogada\w*)\s+z\s+"
    rf"{_PERSON_PL}"
    rf"|\bpołącz\w*\s+mnie\s+z\s+{_PERSON_PL}"
    # Korean, asked for: "상담원 연결해주세요", "상담원으로 연결해 주세요", "담당자랑 직접 통화하고
    # 싶어요" (not "상담원과 통화했는데", told; nor "담당자와 상담 후 결정하겠습니다")
    # (nor "연결 해주지 않으셔도 돼요", not needed; "당직 담당자에게 연결해 주는 기능",
    # a feature for the customer's own person on duty)
    r"|(?<!당직\s)(?<!당직)(?<!온콜\s)(?<!온콜)(?:상담원|상담사|담당자)\s*(?:좀\s*)?"
    r"(?:이랑|랑|과|와|하고|에게|한테|으로|로)?\s*(?:좀\s*|직접\s*)?(?:연결|통화|상담|얘기|대화)\s*"
    r"(?:좀\s*)?(?:해\s*주(?:세요|십시오|실|시겠)|해\s*줘|하고\s*싶|할\s*수\s*있|시켜\s*주(?:세요|실)|부탁)"
    # Japanese, with no spaces: "担当者の方と直接お話しできますか" (a person in charge spoken with,
    # asked to call, or put through to, in one clause: not "担当者に電話でアラートを送れますか",
    # whether alerts can call the person on duty)
    # (not "担当者と話し合ってから決めます", a talk among the customer's own people)
    r"|(?<!社内の)(?<!経理の)(?<!うちの)(?:担当者|担当の方|オペレーター|スタッフ)(?:の方)?"
    r"[^\u3002\uff1f?\uff01!\u3001の]{0,6}?(?:と|に|から)[^\u3002\uff1f?\uff01!\u3001]{0,8}?"
    r"(?:話(?:し(?:たい|でき|させ)|をしたい|をさせ|がしたい|がしたく|せ|さ)"
    rf"|電話(?:を|が)?{_PLEASE_JA}|(?:つないで|繋いで){_PLEASE_JA})|人間と話",
    re.IGNORECASE,
)
#: A sentence of nothing but a person, one: "human agent please", "Mensch bitte. human agent",
#: "live person pls". (Not "Real humans." of a status page's readers, nor "A live person." that
#: answers the message's own question: "Who should get the alert at 3am? A live person.")
_BARE_PERSON = re.compile(
    r"\W*(?:an?\s+)?(?:(?:real|live|actual|human)\s+){1,2}(?:agent|person|operator|rep"
    r"|representative|human|being)\s*(?:please|pls|plz|now|asap)?\W*",
    re.IGNORECASE,
)
#: ...unless it says it needs none: "no need to talk to a person", "don't call me".
_NO_PERSON = re.compile(
    r"\b(?:no need|(?:don't|dont|do not|doesn't|never) (?:need|want|have) to"
    r"|(?:don't|dont|do not|please don't|no) (?:call|contact|escalate)"
    r"|without (?:talking|speaking))\b",
    re.IGNORECASE,
)


def asks_for_person(text: str) -> bool:
    """Whether ``text`` asks in so many words for a person to take over, call or contact the
    customer (:data:`_ASKS_PERSON`): "Please have someone call me back", "escalate this to a
    manager". A declared reading, beside the intent head, which read those at 0.59 and 0.43.
    Or it ends on a person alone (:data:`_BARE_PERSON`) and asks nothing else."""
    norm = text.replace(APOSTROPHE, "'")
    if _ASKS_PERSON_ABROAD.search(norm) is not None:
        return True
    said = [s for s in _SENTENCE.split(norm.strip()) if s]
    if said and _BARE_PERSON.fullmatch(said[-1]) and not any(map(is_question, said)):
        return True
    return _ASKS_PERSON.search(norm) is not None and _NO_PERSON.search(norm) is None


#: Any word that points to a person or to being contacted, in the pack's languages: what a
#: request for a person names somewhere ("a member of your success team", "get in touch", "chat
#: with a support engineer", "hablar con alguien").
_PERSON_CUE = re.compile(
    r"\b(?:person|persons|people|human|humans|someone|somebody|anyone|anybody|agent|agents|rep|reps"
    r"|representative|manager|supervisor|staff|support|sales|engineer|engineers|advisor|adviser"
    # ("a chat app" is where alerts go: "Half my managers don't use any chat app")
    r"|consultant|team member|reach out|get in touch|contact|chat(?!\s+apps?\b)|talk|speak|call"
    r"|phone|ring"
    r"|email me|escalat\w*|alguien|persona|humano|hablar|personne|quelqu'un|parler|conseiller"
    r"|jemand|mensch|sprechen|mitarbeiter|iemand|spreken|medewerker|qualcuno|parlare|alguém"
    r"|falar|pessoa)\b",
    re.IGNORECASE,
)


#: Whether a thing is there ("Is there escalation?", "is there an escalation policy?") and no
#: one to reach named: no person, no number or way to reach one ("is there someone I can talk
#: to?", "is there a number I can call?", "is there any way to escalate this?" ask for one).
_THERE_IS = re.compile(r"^\W*(?:is|are)\s+there\b", re.IGNORECASE)
#: Besides a person or a way to be contacted (:data:`_PERSON_CUE`): a number, a line, a way, or
#: the customer themself ("is there a number I can call?", "is there any way to escalate this?").
_TO_REACH = re.compile(
    r"\b(?:some1|number|hotline|helpline|line|email|address|way|ways|i|we|me|us|my|our)\b",
    re.IGNORECASE,
)


def asks_if_there_is(sentence: str) -> bool:
    """Whether ``sentence`` asks only whether a thing is there, naming no one to reach
    (:data:`_THERE_IS`): a question about the product ("On-call person does not acknowledge
    the alert, what happens then? Is there escalation?"), however near a hand-off line it sits.
    Escalation is the one word of reaching a person it may name ("Is there a live chat?", "is
    there a support team?" ask for one)."""
    plain = re.sub(r"\bescalat\w*", " ", sentence.replace(APOSTROPHE, "'"), flags=re.IGNORECASE)
    if _THERE_IS.search(plain) is None or _TO_REACH.search(plain) is not None:
        return False
    return not names_person(plain)


#: A person on the customer's own rota, who is nobody asked for: "could it telephone the on-call
#: person as well, for the really urgent things?" asks what Monitor does. (Not "an on-call human"
#: or agent, nor "a person on call at acme": the company's.)
ON_DUTY = re.compile(
    r"\b(?:the|our|my|their)\s+(?:on[- ]call\s+(?:person|people|someone)"
    r"|(?:person|people)\s+(?:who\s+is\s+|who'?s\s+|that\s+is\s+)?on\s+(?:call|duty))\b",
    re.IGNORECASE,
)


def names_person(text: str) -> bool:
    """Whether ``text`` names a person or a way to be contacted at all (:data:`_PERSON_CUE`):
    a head that reads a request for a person in a message that names none ("can I force 2FA for
    everybody on the team, not just ask nicely") has read something else. The customer's own
    person on call (:data:`ON_DUTY`) is none."""
    return _PERSON_CUE.search(ON_DUTY.sub(" ", text.replace(APOSTROPHE, "'"))) is not None


#: Someone of the company's who could show the product.
_SHOWER = (
    r"(?:someone|somebody|one of your (?:people|team|folks|engineers|experts|staff)"
    r"|your (?:team|people|folks|staff|solutions team|sales team|engineers?|experts?)"
    r"|a (?:person|rep|human|specialist) from (?:your side|your team|acme)|you guys|you)"
)
#: Asking for the product to be shown by a person: "Could someone from Acme walk our team through
#: Pipelines", "can someone from your side screen share and show us", "schedule a guided tour",
#: "set up a call so my CTO can see pipelines in action", "book us in for a live tour".
#: How a call or a walkthrough may be qualified: "a quick call", "a guided walkthrough".
_KIND_OF_CALL = r"(?:quick\s+|short\s+|live\s+|guided\s+)?"
_SHOWN = re.compile(
    rf"\b{_SHOWER}\s+(?:from\s+(?:\w+\s+){{1,2}})?(?:(?:can|could|to|would|will)\s+)?"
    r"(?:please\s+)?(?:screen[- ]?share\s+and\s+)?(?:(?:show|walk|take|present|demo)s?\s+"
    r"(?:us|me|our|my|them|the|through|around|a)\b"
    # (given a demo or a tour, not "an idea of what it costs")
    r"|gives?\s+(?:\S+\s+){0,5}?(?:a|an)\s+(?:\w+\s+){0,2}?(?:demo|tour"
    r"|walk[- ]?through|run[- ]?through|presentation)\b)"
    r"|\b(?:schedule|book|set up|setup|arrange|organi[sz]e|hop on|jump on)\s+"
    r"(?:(?:us|me)\s+(?:in\s+)?(?:for\s+)?)?"
    rf"(?:(?:a|an|some)\s+{_KIND_OF_CALL}(?:call|meeting"
    r"|session|tour|walk[- ]?through|screen[- ]?share|presentation)"
    # without an article only a walkthrough ("arrange walkthrough of Monitor"): "set up session
    # timeout" and "setup call alerts" ask about the product
    rf"|{_KIND_OF_CALL}(?:walk[- ]?through|tour)\s+(?:of|for))\b"
    r"|\b(?:guided|live)\s+(?:tour|walk[- ]?through|session)\b|\bscreen[- ]?share\b"
    # A demo booked for people to be shown it: "Book a demo for me and our CISO next week" (not
    # "I'd like to book a demo", the playbook's lead, nor "set up a demo status page")
    r"|\b(?:schedule|book|arrange|organi[sz]e)\s+us\s+(?:in\s+)?for\s+(?:a|an)\s+"
    rf"{_KIND_OF_CALL}demo\b"
    rf"|\b(?:schedule|book|arrange|organi[sz]e)\s+(?:a|an)\s+{_KIND_OF_CALL}demo\s+(?:of\s+\w+\s+)?"
    r"(?:for|with)\s+(?:us|me\s+and|our|my|the\s+(?:whole\s+)?team|your|ur|someone|one\s+of)\b"
    # "keen for a call with sales to work out which plan suits a 12 man outfit" (a call with the
    # sales team is one to be shown the product and qualified; not "had a call with sales")
    # (nor "we don't need a call with sales", "not keen on a call with sales")
    r"|(?<!n't\s)(?<!\bnot\s)(?<!\bno\s)\b(?:keen\s+(?:for|on)|up\s+for|want|like|love|need)\s+"
    r"(?:a|an)\s+"
    rf"{_KIND_OF_CALL}(?:call|chat|meeting)\s+with\s+(?:your\s+|ur\s+|the\s+)?sales\b"
    # "quiero agendar un demo de Monitor para mi equipo el jueves": a demo for people, or a call
    # or a meeting with the company (not "programar una llamada telefónica al de guardia", an
    # alert, nor "agendar una reunión con mi jefe")
    r"|\b(?:agendar|programar|reservar|coordinar)\s+una?\s+(?:(?:demo|demostraci[oó]n)\s+"
    r"(?:de\s+\w+\s+)?(?:para|con)\s+(?:mi|mis|nuestro|nuestra|nuestros|todo|ustedes|ventas|\d+)"
    r"|(?:llamada|reuni[oó]n|videollamada)\s+con\s+(?:ustedes|vosotros|ventas|alguien\s+de"
    # (not "el equipo de ventas de mi empresa", the customer's own)
    r"|(?:su|vuestro)\s+equipo|el\s+equipo\s+de\s+(?:ventas|acme)(?!\s+de\s+(?:mi|nuestra"
    r"|nuestro)\b)))\b"
    # "can you do a quick call and walk me through the build bot?": a call asked of the company
    # to be shown it (not "my devs get on a call to run our deploys together")
    r"|\b(?:can|could|would|will)\s+(?:you|u|you\s+guys|someone|somebody"
    r"|your\s+(?:team|people|folks|sales\s+team|engineers?))\s+"
    rf"(?:please\s+)?(?:do|hop\s+on|jump\s+on|get\s+on)\s+(?:a|an)\s+{_KIND_OF_CALL}"
    r"(?:video\s+)?call\s+(?:and|to)\s+(?:walk|take|run)\s+(?:me|us|my\s+\w+|our\s+\w+)"
    # (through the product, not "through our invoice" or "why my deploy keeps failing")
    r"\s+through\s+(?:(?:the|your|acme)\s+)?(?:\w+\s+)?(?:product|products|platform|dashboard"
    r"|tool|app|features|bot|monitor|pipelines|status\s+pages?|setup|everything|it)\b"
    # "Could we get a walkthrough of Monitor", "I would like a walkthrough of the status pages"
    r"|\b(?:get|like|love|request)\s+(?:a|an)\s+(?:(?:quick|short|proper|full|detailed|personal)\s+)?"
    r"(?:walk[- ]?through|tour)\s+(?:(?:call|session|meeting)\s+)?(?:of|for)\b"
    # "want walkthrough call for both products" (the article left out)
    # ("want walkthrough for setting up SSO" asks how to set it up)
    r"|(?<!n't\s)(?<!dont\s)(?<!not\s)\bwant\s+(?:a\s+|an\s+)?(?:(?:quick|short|proper|full"
    r"|detailed|personal|live)\s+)?(?:walk[- ]?through|tour)\s+(?:(?:call|session|meeting)\s+"
    r"(?:of|for)|of)\b"
    # "show me how it works on zoom or smth asap", "show me the whole thing on a call"
    # (not "show me how alerts arrive on a call to my phone": how the product works, on a call)
    r"|\bshow\s+(?:me|us)\s+(?:how\s+(?:it|everything|the\s+(?:whole\s+)?(?:thing|product|platform"
    r"|tool))\s+works?|the\s+(?:whole\s+)?(?:thing|product|platform|tool)|around)\s+"
    r"(?:on|over|via)\s+(?:a\s+)?(?:zoom|call|video(?:\s+call)?|teams\s+call|google\s+meet|meet"
    r"|screen[- ]?share|webex)\b"
    # "do a Zoom session showing Pipelines", "a call to walk us through it"
    r"|\ban?\s+(?:\w+\s+)?(?:call|meeting|session)\s+"
    r"(?:showing|demoing|presenting|to\s+(?:show|demo|present|walk))\b"
    # "Could a call be scheduled with your product team to walk our reviewers through it?"
    # (a call with a person: not "can an api call be scheduled with your pipelines cron?")
    r"|\b(?:can|could|would|may)\s+an?\s+(?:(?:quick|short|video|zoom|live)\s+)?(?:call|meeting"
    r"|session|demo|walk[- ]?through)\s+be\s+(?:scheduled|booked|arranged|set\s+up|organi[sz]ed)"
    # (not "with your support engineers about yesterday's outage": a support call)
    r"\s+(?:with\s+(?:(?:your|ur)\s+(?:(?:product|sales|solutions|onboarding)\s+)?(?:team"
    r"|experts?|specialists?|sales)|acme|one\s+of\s+(?:your|ur)|(?:someone|somebody)\s+(?:from"
    r"|at|on\s+your))"
    r"|to\s+(?:walk|show|demo|present|go\s+through|take)\s+(?:us|me|our|my|the)\b)",
    re.IGNORECASE,
)


def asks_to_be_shown(text: str) -> bool:
    """Whether ``text`` asks for a person to show the product (:data:`_SHOWN`), not for
    something to go through alone or about one already given (:func:`asks_how`)."""
    norm = text.replace(APOSTROPHE, "'")
    return _SHOWN.search(norm) is not None and not asks_how(norm)


#: A customer telling what their own business does or is: "we build clinical trials software",
#: "our company runs tax refund tooling", "we're a natural gas utility" (normalised text).
_OWN_TRADE = re.compile(
    r"\b(?:we|we're|we are|our (?:company|team|startup|business|firm|agency|group|organisation"
    r"|organization|department))\s+(?:\w+\s+)?(?:build|builds|develop|develops|make|makes|sell"
    r"|sells|run|runs|operate|operates|provide|provides|offer|offers|host|hosts)\b"
    # (not "we're a family of four" or "we are a group of 3": a business)
    r"|\b(?:we're|we are) an?\s+(?:\w+\s+){0,3}?(?:company|business|startup|agency|firm|platform"
    r"|utility|provider|supplier|chain|saas|vendor|retailer|charity|nonprofit|practice|clinic"
    r"|school|university|college|council|hospital|studio)\b"
    # "our accounting SaaS computes the trial balance"
    r"|\bour\s+(?:\w+\s+){0,2}(?:saas|software|app|platform|product|products|tool|startup)\b"
)
#: What a trade's words name when they are the customer's own product or business: "an
#: insurance claim app", "our tuition fees platform", "a trial balance tool".
_TRADE_NOUN = (
    # (not "application", "system", "service" or "site": "the status of my passport renewal
    # application" is a passport's)
    r"(?:\s+\w+)?\s+(?:software|app|apps|platform|saas|startup|portal|api|product|products"
    r"|tool|tools|tooling|company|business|provider|utility|supplier|chain)\b"
)

#: The last word of a phrase that names its object next: "a good book on".
_ENDS_ON_A_PREPOSITION = frozenset("on about for of to in with at from by".split())


def names_own_trade(norm: str, phrase: str) -> bool:
    """Whether ``phrase`` (a trade's words, matched in the normalised text ``norm``) names the
    customer's own business rather than what the message asks about: the customer says what
    they build, run or are, or the phrase names a product or a company ("Our insurance claim
    app is built with GitLab, do you integrate?", a review of the sixteenth round). A phrase that
    ends on a preposition names what follows as its object: "a good book on product
    management" is a book, not a product."""
    if _OWN_TRADE.search(norm):
        return True
    if phrase.rsplit(" ", 1)[-1] in _ENDS_ON_A_PREPOSITION:
        return False  # "a good book on product management": the noun after is what it is on
    return re.search(r"\b" + re.escape(phrase) + _TRADE_NOUN, norm) is not None


def normalise(text: str) -> str:
    return " ".join(_WORD.findall(text.lower().replace(APOSTROPHE, "'")))


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace(APOSTROPHE, "'"))


def content_tokens(text: str) -> list[str]:
    return [t for t in tokens(text) if t not in STOPWORDS]


@lru_cache(maxsize=4096)
def _phrase_pattern(phrase: str) -> re.Pattern[str] | None:
    """None for a phrase with no words (it matches nothing)."""
    words = tokens(phrase)
    if not words:
        return None
    return re.compile(r"(?<![a-z0-9])" + r"\s+".join(map(re.escape, words)) + r"(?![a-z0-9])")


def without_phrases(normalised_text: str, phrases: list[str]) -> str:
    """The text with every whole-word occurrence of ``phrases`` taken out, the longest first
    ("drain pipeline" before "drain")."""
    for phrase in sorted(phrases, key=lambda p: -len(tokens(p))):
        pattern = _phrase_pattern(phrase)
        if pattern is not None:
            normalised_text = pattern.sub(" ", normalised_text)
    return normalised_text


def has_phrase(normalised_text: str, phrase: str) -> bool:
    """Whole-word match of ``phrase`` in text already passed through :func:`normalise`."""
    pattern = _phrase_pattern(phrase)  # the phrase's words are read once, not per call
    return pattern is not None and pattern.search(normalised_text) is not None


_RUN = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=4096)
def _phrase_runs(phrase: str) -> frozenset[str]:
    return frozenset(_RUN.findall(" ".join(tokens(phrase))))


def matching(normalised_text: str, phrases: list[str]) -> list[str]:
    """The ``phrases`` found in the text, in order. A phrase matches only where each of its runs
    of letters and digits stands whole in the text (the pattern's own boundaries), so a phrase
    with a run the text lacks is skipped before its pattern runs: most of a long keyword list."""
    runs = set(_RUN.findall(normalised_text))
    return [p for p in phrases if _phrase_runs(p) <= runs and has_phrase(normalised_text, p)]


#: A word this long or longer may be read as a typo of a declared keyword (see :func:`respell`).
TYPO_MIN_LETTERS = 5


def one_typo_apart(word: str, target: str) -> bool:
    """Whether ``word`` is ``target`` with one letter missing, added, changed, or two neighbours
    swapped ("monitr", "slakc", "trail" for "trial"), the first letter kept."""
    if word == target or word[:1] != target[:1] or abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        diff = [i for i, (a, b) in enumerate(zip(word, target, strict=True)) if a != b]
        if len(diff) == 1:
            return True
        i = diff[0]
        swapped = word[i] == target[i + 1] and word[i + 1] == target[i]
        return len(diff) == 2 and diff[1] == i + 1 and swapped
    short, long_ = sorted((word, target), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def respell(text: str, vocabulary: frozenset[str], known: frozenset[str] = frozenset()) -> str:
    """``text`` (normalised) with each word of :data:`TYPO_MIN_LETTERS` letters or more that is
    not in ``vocabulary`` but one typo from a word that is, written as that word; a word in
    ``known`` is spelled right as it is. Pure Python, for the declared keywords (a few hundred
    words): no fuzzy-matching package needed."""
    out = []
    for word in tokens(text):
        if len(word) >= TYPO_MIN_LETTERS and word not in vocabulary and word not in known:
            word = next((v for v in sorted(vocabulary) if one_typo_apart(word, v)), word)
        out.append(word)
    return " ".join(out)


#: Where a message's sentences part.
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
#: The fewest words a clause needs to be read on its own.
CLAUSE_WORDS = 3


def clauses(text: str) -> list[str]:
    """The clauses of ``text`` between its commas, semicolons, sentence ends and dashes, of
    :data:`CLAUSE_WORDS` words or more, each once and never the whole: a request read on its
    own, without the reason or the thanks that follow it."""
    whole = text.strip()
    found = [p.strip(" ,;-") for p in _CLAUSE.split(whole) if len(tokens(p)) >= CLAUSE_WORDS]
    return [p for p in dict.fromkeys(found) if p != whole]


def whole_and_sentences(text: str) -> list[str]:
    """The message and, when it has several, each of its sentences: a request for a person
    after a line of context ("I've been going around in circles for twenty minutes. GET ME A
    HUMAN.") sits far from every hand-off line as a whole, and next to one alone."""
    sentences = [s for s in _SENTENCE.split(text.strip()) if s]
    return [text, *sentences] if len(sentences) > 1 else [text]

"""A follow-up question read with the one before it: what knowledge search is asked.

"How much is it?" or "and what about the other plan?" mean nothing alone; after "does Monitor
alert in Slack?" they ask about Monitor. A message is a follow-up when it is short (at most
:data:`MAX_WORDS` words) and refers back (a pronoun such as "it" or "that one", or "the other").
Its retrieval query is then the last question's subject (the products it names, else the whole
question) followed by the message, and the turn record's answerability read says so (``query``,
``query_from``). The last question is the last one searched, or else the last message that asked
something.

A short message that names something new is not a follow-up, even with an "it": "does it work
with Kubernetes?" after a Docker question asks about Kubernetes, and joined with the Docker
question it would find the Docker answer. So a message with a word of :data:`NEW_SUBJECT_LETTERS`
or more letters that the pack's FAQ and documents never use is read alone.

The subject can also mislead: "how much is it?" after a Monitor question, searched as "Acme
Monitor how much is it?", finds the Monitor document, which names no price, and the pricing entry
that answers comes second. So when the last question named a product and the answerability
check does not act on the joined query, the message alone is checked too (:func:`better_alone`),
and searched alone when the check acts on it and its best passage names no product the last
question did not (a price entry for the whole company answers "how much is Monitor"; a Pipelines
entry does not). ``query_from`` is then ``follow-up alone``.

A short message that asks the last question again of another product or plan ("same for status
pages?", "what about monitor?", "and for the business plan?") is searched with the whole last
question before it: the question's words are in it, the new subject is in the message. So is one
that goes on from it with "and" to ask a value ("do you keep the build cache between runs?" then
"okay and for how many days"): it asks more of the same thing, which the last question names, not
its product alone ("Acme Pipelines for how many days" finds the trial entry). One that goes on
to ask anything else is read with the products the last question names, or alone. A message
that names a subject of its own ("and how do I reset my password?") is read alone.

A short message after an answer that says only words of the passage that answered ("can we
pick eu" after the data location was answered) carries on from it (:func:`carries_on`): the scope
check keeps it in scope when, searched alone, the same passage answers it. "X, same deal?" naming
a product or a plan asks the last question again of it.

After an answer, a short clause that asks the last question again of something that passage
names ("what about teams?" after the Slack alerts were answered from the entry that lists
Microsoft Teams, "and phone calls?", "SMS too?") is searched with the whole last question, the
clause alone after it (:func:`again_of_answer`).

A follow-up that asks the last question again of another product is answered only from a
passage that names that product or none: "can monitor send alerts to slack?" then "pipelines
too?" is not answered with the Monitor entry (:func:`query_for`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from bot.extend.retriever import Fact, QueryVector, Retriever
from bot.packs import Pack
from bot.packs.model import FaqEntry
from bot.packs.sections import keyed_paragraphs
from bot.text import CHAT_OPENERS, content_tokens, matching, normalise, tokens
from bot.turn import answerable
from bot.turn.turn import ConversationState

MAX_WORDS = 10
NEW_SUBJECT_LETTERS = 6
#: Words that point back at what was said before.
_BACK = re.compile(r"\b(it|its|it's|that|this|these|those|they|them|one|ones|other)\b", re.I)


#: Words read off a pack once, by what they are and id(pack); the pack is kept alive with them.
_held: dict[tuple[str, int], tuple[Pack, Any]] = {}
_Read = TypeVar("_Read")


def _once(kind: str, pack: Pack, read: Callable[[Pack], _Read]) -> _Read:
    held = _held.get((kind, id(pack)))
    if held is None or held[0] is not pack:
        if len(_held) > 64:
            _held.clear()
        held = _held[(kind, id(pack))] = (pack, read(pack))
    result: _Read = held[1]
    return result


def _pack_words(pack: Pack) -> frozenset[str]:
    """Every word the pack's answers can hold: its FAQ and its documents (once per pack)."""
    return _once("answers", pack, _answer_words)


def _answer_words(pack: Pack) -> frozenset[str]:
    texts = [_faq_text(f) for f in pack.faq]
    texts += [f"{d.title} {d.text}" for d in pack.documents]
    return frozenset(w for t in texts for w in tokens(t))


def _faq_text(entry: FaqEntry) -> str:
    """An FAQ entry's words: its question and answer, and how customers ask it."""
    return f"{entry.question} {entry.answer} {' '.join(entry.keywords + entry.asked)}"


def refers_back(pack: Pack, text: str) -> bool:
    """Whether ``text`` reads as a follow-up of the question before (see the module docstring)."""
    if len(tokens(text)) > MAX_WORDS or not _BACK.search(text):
        return False
    return not _new_subject(pack, text)


#: Words of nobody and nothing in particular, never a new subject ("what if nobody is on call?"),
#: nor a preposition ("which plan is that gated behind?"), nor how often ("And how often?").
_NO_SUBJECT = frozenset(
    "nobody somebody anybody everybody someone anyone everyone nothing anything something"
    " everything behind beyond within without between across against during toward towards"
    " through throughout around beneath underneath often".split()
)
#: Words of how much, no subject of a message that points back ("is it less?"); they do not make
#: a message go on from the last question by themselves ("and fewer than that, can I set it to
#: just one?" asks something new).
_DEGREE = frozenset("less more fewer".split())


def _new_subject(pack: Pack, text: str) -> bool:
    """Whether ``text`` names something the pack's answers never say (a word of
    :data:`NEW_SUBJECT_LETTERS` letters or more): "does it work with Kubernetes?" moves on."""
    known = _pack_words(pack) | _NO_SUBJECT | _DEGREE
    return any(len(w) >= NEW_SUBJECT_LETTERS and w not in known for w in content_tokens(text))


#: Words of talk that name nothing ("from how many places though?").
_TALK = frozenset("though tho then anyway anyways really actually exactly".split())


def carries_on(pack: Pack, text: str, state: ConversationState) -> bool:
    """Whether ``text`` is a short message after an answer whose every word is one the passage
    that answered says (in its text, title or asked questions): "can we pick eu" after "where
    is our data stored" (the data entry's "Can I pick Europe or America"), "from how many places
    though??" after the checks section ("From how many places do you test our website?"). The
    scope check keeps such a message in scope when, searched alone, it is answered from that
    same passage (``ScopeCheck``). Small talk says a word the last answer does not ("how old are
    you" after a trial question), and after a declined or unanswered turn nothing carries on
    ("and in rome?" after a question on the weather)."""
    answered = state.get("last_answered") or []
    # (one word alone is no follow-up: "test" after the checks section tests the chat; words of
    # talk are not counted: "ok and how long would we have to change our minds?")
    if not answered or not 2 <= len([t for t in tokens(text) if t not in _FILLERS]) <= MAX_WORDS:
        return False
    words, vouched = _said(text), _words_of(_vouched(pack), answered)
    # (one or many of a thing is the same thing: "change me mind" after "change our minds")
    return bool(words) and all(w in vouched or f"{w}s" in vouched for w in words)


#: Words of talk a follow-up opens on (bot.text.CHAT_OPENERS, and a few of more words): "oh
#: lovely! and what about Teams?", "thanks, and phone calls?", "grand, and do I need a card?".
_OPENING = (
    "(?:"
    + "|".join(sorted(CHAT_OPENERS - {"um", "uh"}))
    + r"|um+|uh+|thank\s+you|got\s+it|i\s+see)"
)
_LEAD = rf"^\W*(?:{_OPENING}\W+)*"
#: One to three words naming a thing, no verb of asking among them ("and is it encrypted" asks
#: something new).
_NAMED = (
    r"(?!(?:is|are|does|do|can|will|could|would|how|what|i|we|you|it)\b)(?:[\w-]+\s+){0,2}?[\w-]+"
)
_VIA = r"(?:(?:by|via|through|over|with|in|por|par|per|para)\s+)?"
#: What "the same" may be called: "same deal for pipelines?", "monitor, same thing?".
_SAME_KIND = r"(?:deal|thing|story)"
#: (in the languages customers mix in: "and gitlab também?")
_TOO_WORDS = frozenset("too also well também tambem también tambien aussi auch anche ook".split())
_TOO = rf"(?:\s+(?:as\s+well|{'|'.join(sorted(_TOO_WORDS - {'well'}))}))"
#: The clause of a message that asks the last question again of something else: "what about
#: teams?", "and phone calls?", "SMS too?" (not "what about if nobody answers?": a new question).
_AGAIN = re.compile(
    rf"{_LEAD}(?:(?:and|or)\s+)?(?:(?:what|how)\s+about"
    rf"|(?:is\s+it\s+)?(?:the\s+)?same\s+(?:{_SAME_KIND}\s+)?(?:for|with))\s+"
    r"(?!(?:if|when|whether)\b)(?P<what>.+)$"
    # ("e", "y": "and" as a customer writing Portuguese or Spanish says it: "e teams?", "y por
    # SMS también?")
    rf"|{_LEAD}(?:and|e|y)\s+{_VIA}(?P<also>{_NAMED}){_TOO}?\s*$"
    rf"|{_LEAD}{_VIA}(?P<too>{_NAMED}){_TOO}\s*$",
    re.IGNORECASE,
)
#: Words of thanks and delight, a clause of talk before the question ("oh lovely! and ...").
_THANKS = frozenset("oh lovely nice brilliant great thank thanks awesome wonderful".split())
#: Words that only qualify what is named ("what about plain SMS", "an actual phone call").
_PLAIN = frozenset("plain regular normal simple ordinary actual real good old just".split())


def asks_again(text: str) -> bool:
    """Whether a clause of ``text`` asks the last question again of something else
    (:data:`_AGAIN`: "what about over UDP?", "and phone calls?")."""
    return any(_AGAIN.match(c.strip()) for c in re.split(r"[,;!?]+(?:\s+|$)", text) if c.strip())


def again_of_answer(pack: Pack, text: str, state: ConversationState) -> str | None:
    """The clause of ``text`` that asks the last question again of something the passage that
    answered it names, or None: "what about teams" in "what about teams? our publisher is on
    teams" after "can monitor send alerts to slack" was answered from the entry that lists
    Microsoft Teams. Searched alone, "teams" finds the pricing entry ("paid plans per team");
    with the last question, the alerts entry. What it names must be words of that passage's
    heading, text or asked questions: "and the grace period?" after the trial's answer names the
    workspace deletion's, and moves on."""
    answered = state.get("last_answered") or []
    if not answered:
        return None
    # A clause ends at a comma too, where the whole clause names more than the answer does:
    # "what about gitlab, apparently that's what they use" ("what about Teams, SMS or email?"
    # is read whole).
    for ends in (r"[?!.]", r"[?!.,;]"):
        clauses = [c.strip() for c in re.split(ends, text, maxsplit=2) if c.strip()]
        while clauses and not _said(clauses[0]) - _THANKS:
            clauses = clauses[1:]  # talk first: "oh lovely! and what about Teams?"
        again = _asked_again(pack, clauses[0], answered) if clauses else None
        if again is not None:
            return again
    return None


def _asked_again(pack: Pack, clause: str, answered: list[str]) -> str | None:
    found = _AGAIN.search(clause.rstrip("?!.,; "))
    if found is None or len(tokens(found[0])) > MAX_WORDS:
        return None
    words = _said(found["what"] or found["also"] or found["too"]) - _PLAIN - _TOO_WORDS
    last = _words_of(_listed(pack), answered)
    return found[0] if 0 < len(words) <= 3 and words <= last else None


def _said(text: str) -> set[str]:
    """The words of ``text`` that could name something: not talk, nobody, a verb's particle or
    a verb that says nothing of its own ("do i need to put a card in for that")."""
    return set(content_tokens(text)) - _FILLERS - _NO_SUBJECT - _TALK - _PARTICLES - _LIGHT


#: Verbs that take their sense from their object: "put a card in", "get it back".
_LIGHT = frozenset("put puts get gets got have has make makes give gives take takes".split())


#: A verb's particles, which name nothing ("what if nobody picks up?").
_PARTICLES = frozenset("up out off down over back away".split())


#: A message that goes on from the last question: "and for how many days", "ok and what if
#: nobody is on call?", "Thanks. And for how long?". Not "and what about refunds?": that
#: moves on, unless it names a product or a plan (:func:`switches_subject`); nor "and the
#: logs?" after a question on caches: a thing named after "and" is the new subject.
_GOES_ON = re.compile(
    rf"{_LEAD}(?:and|also|plus)\W+(?!(?:what|how)\s+about\b)"
    r"(?:for|from|with|in|on|at|by|per|what|how|which|who|when|where|why|whether|if|is|are|can"
    r"|could|do|does|did|will|would|should|must)\b",
    re.IGNORECASE,
)


def continues(pack: Pack, text: str) -> bool:
    """Whether ``text`` is a short message going on from the last question with "and", "also"
    or "plus" (see the module docstring), naming no subject of its own: every word one the
    pack's answers use ("and how long is a movie" is about movies), and none of the things it
    declares ("and how do I reset my password?" after a trial question asks about passwords)."""
    if len(tokens(text)) > MAX_WORDS or not _GOES_ON.search(text):
        return False
    words = set(content_tokens(text)) - _FILLERS - _NO_SUBJECT
    return words <= _pack_words(pack) and not words & _subjects(pack)


#: Words of talk, not of a subject: "okay and for how many days".
_FILLERS = CHAT_OPENERS - {"right"}  # ("the right plan" says a word of its own)


def _subjects(pack: Pack) -> frozenset[str]:
    """The words of what the pack declares: its products, topics, intents and FAQ entries'
    keywords and its documents' headings (once per pack)."""
    return _once("subjects", pack, _subject_words)


def _subject_words(pack: Pack) -> frozenset[str]:
    phrases = [w for p in pack.products for w in (p.name, *p.keywords)]
    phrases += [w for t in pack.topics for w in t.keywords]
    phrases += [w for i in pack.intents for w in i.keywords]
    phrases += [w for f in pack.faq for w in f.keywords]
    phrases += [h for d in pack.documents for h in _HEADING.findall(d.text)]
    # (words of four letters or more: "sign up" and "more seats" declare no "up" or "more")
    return frozenset(w for p in phrases for w in content_tokens(p) if len(w) >= 4) - {"more"}


_HEADING = re.compile(r"^#+\s+(.+)$", re.MULTILINE)


def subject(pack: Pack, question: str) -> str:
    """What a follow-up's "it" stands for: the products ``question`` names (joined with the
    whole question, "how much is it?" after "can Monitor alert in Slack?" would find the Slack
    answer again), else the whole question."""
    norm = normalise(question)
    names = [p.name for p in pack.products if matching(norm, [p.name, *p.keywords])]
    return " ".join(names) or question


#: A follow-up that asks the last question again of something else: "same for status pages?",
#: "what about monitor?", "and for the business plan?".
_SWITCH = re.compile(
    r"^\s*(?:(?:and|ok|okay|so)[,!]?\s+)*(?:(?:the\s+)?same\s+"
    rf"(?:{_SAME_KIND}\s+)?(?:for|with|goes\s+for|question\s+for)"
    r"|what\s+about|how\s+about|and\s+for|also\s+for)\s+(?P<what>\S.*)$",
    re.IGNORECASE,
)
#: ...or names it with "too": "and monitor too?", "status pages as well?".
#: (one to three words, none a verb or a pronoun: "is monitor down too?" and "i love monitor
#: too" ask nothing again)
_ALSO = re.compile(
    r"^\W*(?:(?:and|ok|okay|so|great|cool|thanks)\W+)*"
    r"(?P<what>(?!(?:is|are|does|do|can|will|i|we|you|it)\b)(?:[\w-]+\s+){0,2}[\w-]+)"
    r"\s+(?:too|as\s+well)\W*$",
    re.IGNORECASE,
)
#: ...or asks whether the answer goes for it too: "and pipelines, same deal?", "monitor same?".
_SAME_AFTER = re.compile(
    r"^\W*(?:(?:and|ok|okay|so)\W+)*"
    # (no verb among its words: "monitor is the same" tells, it does not ask)
    r"(?P<what>(?![^,?]*\b(?:is|are|was|were|does|do|did|can|will|looks?|seems?|stays?|feels?"
    r"|i|we|you|it)\b)(?:[\w-]+\s+){0,2}[\w-]+)"
    rf"\s*,?\s+(?:the\s+)?same(?:\s+(?:{_SAME_KIND}|there))?\W*$",
    re.IGNORECASE,
)
#: ...or names it after "and" and nothing else: "and pipelines?", "and for the status pages".
_AND_NAME = re.compile(
    r"^\W*(?:(?:ok|okay|so)\W+)?and\s+(?:(?:for|with)\s+)?(?P<what>(?:[\w-]+\s+){0,2}[\w-]+)\W*$",
    re.IGNORECASE,
)
#: ...or asks whether the answer holds for it: "Is the same true for Pipelines?", "does that
#: apply to status pages?", "does pipelines get one too?".
_HOLDS_FOR = re.compile(
    # (not "does it work with monitor?": whether one product works with another)
    r"^\W*(?:(?:and|ok|okay|so)\W+)*(?:is|does|do|would|will)\s+(?:the\s+same|that|this)\s+"
    r"(?:(?:hold|go|apply|count)\s+(?:true\s+)?|(?:be\s+)?true\s+)?(?:for|with|to)\s+"
    r"(?P<what>\S[^?!.]*?)\W*$"
    r"|^\W*(?:(?:and|ok|okay|so)\W+)*(?:does|do|will|would|is|are)\s+"
    r"(?P<whom>(?:[\w-]+\s+){0,2}?[\w-]+)\s+(?:get|have|come\s+with|include|offer)\s+"
    r"(?:one|that|it|this|the\s+same(?:\s+thing)?)(?:\s+too|\s+as\s+well|\s+also)?\W*$",
    re.IGNORECASE,
)
#: What such a follow-up may ask about instead: a plan or a tier (besides a product).
_PLAN = re.compile(r"\b(?:plan|plans|tier|tiers)\b", re.IGNORECASE)


def switches_subject(pack: Pack, text: str) -> bool:
    """Whether ``text`` is a short follow-up asking the last question again of another product
    or plan ("same for status pages?"); "what about refunds?" moves on."""
    if len(tokens(text)) > MAX_WORDS:
        return False
    found = _SWITCH.search(text) or _ALSO.search(text) or _SAME_AFTER.search(text)
    found = found or _HOLDS_FOR.search(text)
    if found is None:
        named = _AND_NAME.search(text)
        # (after a bare "and", only a product or a plan by its name: "ok and the build caches?"
        # asks about caches, a word of Pipelines)
        return named is not None and _only_a_name(pack, named["what"])
    groups = found.groupdict()
    what = groups.get("what") or groups.get("whom") or ""
    return bool(_products(pack, what)) or _PLAN.search(what) is not None


def _only_a_name(pack: Pack, what: str) -> bool:
    """Whether ``what`` is nothing but a product's name ("pipelines", "the status pages", "Acme
    Monitor"), or a plan's ("the business plan"). Not a product's other words: "and alerts?"
    after a question on checks asks about alerts, a part of Monitor."""
    what = re.sub(r"^(?:the|your|ur)\s+", "", what.strip().lower())
    return what in _product_names(pack) or _A_PLAN.fullmatch(what) is not None


#: A plan by its name: "business plan", "free tier" (not "cancel my plan": a verb before it).
_A_PLAN = re.compile(r"(?:[\w-]+\s+)?(?:plan|plans|tier|tiers)")


def _product_names(pack: Pack) -> frozenset[str]:
    """Each product's name, short name ("monitor") and key, and its words that begin with one
    ("monitoring", "status pages"); read once per pack."""
    return _once("product names", pack, _read_product_names)


def _read_product_names(pack: Pack) -> frozenset[str]:
    names: set[str] = set()
    for p in pack.products:
        short = {p.name.lower(), p.name.lower().split()[-1], p.key.lower()}
        names |= short | {f"{n}s" for n in short}
        names |= {k.lower() for k in p.keywords if any(k.lower().startswith(n) for n in short)}
    return frozenset(names)


def retrieval_query(pack: Pack, text: str, state: ConversationState) -> tuple[str, str]:
    """The query knowledge search reads for ``text``, and where it came from: ``message``, or
    ``follow-up`` (the last question's subject, then the message; the whole last question for
    one that asks it again of another product or plan: "is there a free trial for pipelines?
    same for status pages?" finds the entry on every product's trial, where the message alone
    finds the incidents section)."""
    last = state.get("last_question")
    if not last:
        return text, "message"
    again = again_of_answer(pack, text, state)
    if again is not None:
        # (the clause alone: a second question in the message is not the last one's)
        return f"{last} {again}", "follow-up"
    if carries_on(pack, text, state) and (_BACK.search(text) or not _ASKS_ANEW.search(text)):
        # "which plan tho" after "SAML SSO supported?", "do i need a card for that?" after "is
        # there a free trial for monitor" was answered: every word is one the answering passage
        # says, and it points back or asks nothing of its own, so it asks more of that answer,
        # with the whole question before (its products alone lose the trial). Not "can i change
        # my email?" after a password question: a question of its own, which the passage's
        # asked questions would vouch for, joined.
        return f"{last} {text}", "follow-up"
    # (a word that refers back in "does pipelines get one too?" or "does that apply to status
    # pages?" is the last question's answer, asked of another product)
    if refers_back(pack, text) and _HOLDS_FOR.search(text) is None:
        return f"{subject(pack, last)} {text}", "follow-up"
    if switches_subject(pack, text):
        return f"{last} {text}", "follow-up"
    goes_on = continues(pack, text)
    if goes_on and _MORE_OF_IT.search(text):
        # One question with the last, not two: read alone, the last question's sentence would
        # find its own answer again.
        return f"{last.rstrip(' ?!.')} {text}", "follow-up"
    if goes_on and _products(pack, last):
        return f"{subject(pack, last)} {text}", "follow-up"
    if (
        not goes_on
        and _WHAT_IF.search(text)
        and len(tokens(text)) <= MAX_WORDS
        and state.get("last_answered")
    ):
        # "what if we log in thru sso tho" after "how do i reset my password" was answered: the
        # same question on a condition (the password entry says what single sign-on changes).
        # With the products the last question names, where it names one: after "can your
        # monitoring ping our on-call people in Teams?", "ok and if the person on call sleeps
        # through it?" asks about escalation, not channels.
        return f"{subject(pack, last)} {text}", "follow-up"
    return text, "message"


#: A question of its own: it opens on a verb or a question word ("can i change my email?", "how
#: many jobs can run in parallel?"); "which plan tho" asks which of what was said.
_ASKS_ANEW = re.compile(
    r"^\W*(?:(?:ok|okay|so|and|but|also)\W+)*(?:can|could|how|do|does|did|is|are|was|will|would"
    r"|should|what|when|where|why|who|may|must|i|we)\b",
    re.IGNORECASE,
)
#: A question on a condition, short: "what if we log in thru sso tho", "and if we're on the EU?".
_WHAT_IF = re.compile(r"^\W*(?:(?:ok|okay|so|and|but)\W+)*(?:what|and|but)\s+if\b", re.IGNORECASE)


#: A continuation that asks a value of the same thing ("and for how many days", "and from how
#: many places?") is read with the whole last question; one that asks something new of it ("ok
#: and what if nobody is on call?" after a question on alert channels) with the products the last
#: question names only (with the whole question, the channels entry answered it), and alone
#: where it names none ("how long is the trial?" then "and what if we need more time?").
_MORE_OF_IT = re.compile(r"\bhow\s+(?:many|much|long|often|soon|big|far)\b", re.IGNORECASE)


def _products(pack: Pack, text: str) -> set[str]:
    norm = normalise(text)
    return {p.key for p in pack.products if matching(norm, [p.name, *p.keywords])}


async def better_alone(
    pack: Pack,
    retriever: Retriever,
    text: str,
    joined: answerable.Checked | None,
    last: str,
    threshold: float,
    vector: QueryVector | None = None,
) -> bool:
    """Whether the follow-up ``text`` is answered searched alone where the joined query (the
    last question's subject, then ``text``; ``joined`` is its check) is not (see the module
    docstring). Only a follow-up pays for the second check."""
    if not _products(pack, last):
        # The subject was the whole last question: a follow-up that its words do not answer
        # has moved on, and alone it could land on any entry ("do I need a card for it?").
        return False
    if joined is None or joined.answers:
        return False
    alone = await answerable.check(retriever, text, threshold, vector=vector)
    if alone is None or not alone.answers or not alone.facts:
        return False
    return about_the_same(pack, alone.facts[0], last)


def about_the_same(pack: Pack, fact: Fact, last: str) -> bool:
    """Whether ``fact`` names no product the question ``last`` did not name."""
    return _products(pack, f"{fact.title} {fact.text}") <= _products(pack, last)


async def query_for(
    pack: Pack,
    retriever: Retriever,
    text: str,
    state: ConversationState,
    threshold: float,
    vector: QueryVector | None = None,
) -> tuple[str, str, answerable.Checked | None]:
    """:func:`retrieval_query`, with a follow-up searched alone when that answers it and the
    joined query does not (:func:`better_alone`; ``vector`` is the message's own embedding,
    which the turn made anyway). Third: the check of the query returned, where one was made
    (the joined query's), so a caller that checks it need not check it again."""
    query, query_from = retrieval_query(pack, text, state)
    last = state.get("last_question")
    if query_from != "follow-up" or not last:
        return query, query_from, None
    named, switch = bool(_products(pack, last)), switches_subject(pack, text)
    if not (named or switch):
        return query, query_from, None
    # The joined query's check, made once for both readings below.
    joined = await answerable.check(retriever, query, threshold)
    if named and await better_alone(pack, retriever, text, joined, last, threshold, vector):
        return text, "follow-up alone", None
    speaks = joined is None or not joined.facts or _speaks_for(pack, joined.facts[0], text)
    if switch and not speaks:
        # (a switch answered only from a passage naming the product switched to, or none)
        return text, "follow-up alone", None
    return query, query_from, joined


def _vouched(pack: Pack) -> dict[str, frozenset[str]]:
    """Each passage's words: its title and text, and the questions the pack says it answers
    (its ``asked`` list and, for an FAQ entry, its keywords), by key (once per pack)."""
    return _once("vouched", pack, lambda p: _passage_words(p, titled=True))


def _listed(pack: Pack) -> dict[str, frozenset[str]]:
    """:func:`_vouched` without a document's title: "Accounts, seats and sign-in" names every
    section's neighbours, and "what about sign-in?" after the roles section moves on."""
    return _once("listed", pack, lambda p: _passage_words(p, titled=False))


def _words_of(by_key: dict[str, frozenset[str]], keys: list[str]) -> frozenset[str]:
    """The words of the passages ``keys`` name, together."""
    return frozenset().union(*(by_key.get(key, frozenset()) for key in keys))


def _passage_words(pack: Pack, titled: bool) -> dict[str, frozenset[str]]:
    texts = {f.key: _faq_text(f) for f in pack.faq}
    for doc in pack.documents:
        for key, heading, para in keyed_paragraphs(doc.key, doc.text):
            title = doc.title if titled else ""
            texts[key] = f"{title} {heading} {para} {' '.join(doc.asked.get(heading, []))}"
    return {key: frozenset(tokens(text)) for key, text in texts.items()}


def _speaks_for(pack: Pack, fact: Fact, text: str) -> bool:
    """Whether ``fact`` names a product ``text`` names, or no product at all (the trial entry
    speaks for every product)."""
    named = _products(pack, f"{fact.title} {fact.text}")
    return not named or bool(named & _products(pack, text))

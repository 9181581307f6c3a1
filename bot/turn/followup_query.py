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
question before it: the question's words are in it, the new subject is in the message.
"""

from __future__ import annotations

import re

from bot.extend.retriever import Fact, QueryVector, Retriever
from bot.packs import Pack
from bot.text import content_tokens, matching, normalise, tokens
from bot.turn import answerable
from bot.turn.turn import ConversationState

MAX_WORDS = 10
NEW_SUBJECT_LETTERS = 6
#: Words that point back at what was said before.
_BACK = re.compile(r"\b(it|its|it's|that|this|these|those|they|them|one|ones|other)\b", re.I)


_words: dict[int, tuple[Pack, frozenset[str]]] = {}  # by id(pack); the pack is kept alive


def _pack_words(pack: Pack) -> frozenset[str]:
    """Every word the pack's answers can hold: its FAQ and its documents (once per pack)."""
    held = _words.get(id(pack))
    if held is None or held[0] is not pack:
        texts = [f"{f.question} {f.answer} {' '.join(f.keywords + f.asked)}" for f in pack.faq]
        texts += [f"{d.title} {d.text}" for d in pack.documents]
        if len(_words) > 32:
            _words.clear()
        held = _words[id(pack)] = (pack, frozenset(w for t in texts for w in tokens(t)))
    return held[1]


def refers_back(pack: Pack, text: str) -> bool:
    """Whether ``text`` reads as a follow-up of the question before (see the module docstring)."""
    if len(tokens(text)) > MAX_WORDS or not _BACK.search(text):
        return False
    known = _pack_words(pack)
    return not any(len(w) >= NEW_SUBJECT_LETTERS and w not in known for w in content_tokens(text))


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
    r"^\s*(?:(?:and|ok|okay|so)[,!]?\s+)*(?:(?:the\s+)?same\s+(?:for|with|goes\s+for|question\s+for)"
    r"|what\s+about|how\s+about|and\s+for|also\s+for)\s+(?P<what>\S.*)$",
    re.IGNORECASE,
)
#: What such a follow-up may ask about instead: a plan or a tier (besides a product).
_PLAN = re.compile(r"\b(?:plan|plans|tier|tiers)\b", re.IGNORECASE)


def switches_subject(pack: Pack, text: str) -> bool:
    """Whether ``text`` is a short follow-up asking the last question again of another product
    or plan ("same for status pages?"); "what about refunds?" moves on."""
    found = _SWITCH.search(text)
    if found is None or len(tokens(text)) > MAX_WORDS:
        return False
    return bool(_products(pack, found["what"])) or _PLAN.search(found["what"]) is not None


def retrieval_query(pack: Pack, text: str, state: ConversationState) -> tuple[str, str]:
    """The query knowledge search reads for ``text``, and where it came from: ``message``, or
    ``follow-up`` (the last question's subject, then the message; the whole last question for
    one that asks it again of another product or plan: "is there a free trial for pipelines?
    same for status pages?" finds the entry on every product's trial, where the message alone
    finds the incidents section)."""
    last = state.get("last_question")
    if not last:
        return text, "message"
    if refers_back(pack, text):
        return f"{subject(pack, last)} {text}", "follow-up"
    if switches_subject(pack, text):
        return f"{last} {text}", "follow-up"
    return text, "message"


def _products(pack: Pack, text: str) -> set[str]:
    norm = normalise(text)
    return {p.key for p in pack.products if matching(norm, [p.name, *p.keywords])}


async def better_alone(
    pack: Pack,
    retriever: Retriever,
    text: str,
    joined: str,
    last: str,
    threshold: float,
    vector: QueryVector | None = None,
) -> bool:
    """Whether the follow-up ``text`` is answered searched alone where ``joined`` (the last
    question's subject, then ``text``) is not (see the module docstring). Only a follow-up pays
    for the second check."""
    if not _products(pack, last):
        # The subject was the whole last question: a follow-up that its words do not answer
        # has moved on, and alone it could land on any entry ("do I need a card for it?").
        return False
    with_subject = await answerable.check(retriever, joined, threshold)
    if with_subject is None or with_subject.answers:
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
) -> tuple[str, str]:
    """:func:`retrieval_query`, with a follow-up searched alone when that answers it and the
    joined query does not (:func:`better_alone`; ``vector`` is the message's own embedding,
    which the turn made anyway)."""
    query, query_from = retrieval_query(pack, text, state)
    last = state.get("last_question")
    if (
        query_from == "follow-up"
        and last
        and await better_alone(pack, retriever, text, query, last, threshold)
    ):
        return text, "follow-up alone"
    return query, query_from

"""The questions inside a longer message.

Customers put context around what they ask ("Our current tool wakes us up at night with false
alarms. How does your product decide a site is really down?"). The context's words dilute every
feature the answerability check reads, so the retriever also reads each question sentence alone
and keeps that reading where it is better and its best passage is the whole message's (see
``KnowledgeRetriever.evidence_sync``).
"""

from __future__ import annotations

import re

from bot.text import ASKED_OF, INVERTED_VERBS
from gatebot_knowledge.lexical import tokenize

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
#: The words a question starts with.
_QUESTION_WORDS = (
    "how what whats what's which when where who why can could do does did is are will would"
    " should may must am"
).split()
_QUESTION_START = re.compile(rf"^(?:{'|'.join(_QUESTION_WORDS)})\b", re.IGNORECASE)
#: A sentence shorter than this says too little to be read alone.
MIN_WORDS = 4


def question_sentences(text: str, min_words: int = MIN_WORDS) -> list[str]:
    """The sentences of ``text`` that ask something (end with "?" or start as a question), when
    it has more than one sentence; else none. ``min_words``: the fewest words a sentence read
    alone may have (another language says more in fewer: "¿Tienen prueba gratis?")."""
    sentences = [part for s in _sentences(text) for part in _spliced(s)]
    if len(sentences) < 2:
        return []
    return [s for s in sentences if _asks(s, min_words)]


#: Where a question starts inside a message typed with no stop before it, as dictated: a verb
#: before its subject ("... minute by minute does monitor keep a record of that"). Not "is" or
#: "are" ("... it is still not working for me" tells).
_RUN_ON = re.compile(rf"\b(?:{'|'.join(INVERTED_VERBS)})\s+([a-z]\w*)", re.IGNORECASE)
#: The fewest words of context before a run-on question.
RUN_ON_CONTEXT = 5


def run_on_question(text: str, product_stems: set[str]) -> str | None:
    """The question a message of one sentence and no question mark runs on into after its
    context (:data:`_RUN_ON`, its subject the company, a product or "it"): "we had a big outage
    tuesday and i have to write up what happened minute by minute does monitor keep a record of
    that" asks "does monitor keep a record of that" (of :data:`MIN_WORDS` words or more); None
    where there is none, or it opens the message."""
    if "?" in text or len(_sentences(text)) > 1:
        return None
    for found in _RUN_ON.finditer(text):
        subject = found.group(1).lower()
        # (its subject the company, as bot.text's unmarked questions read it, or a product)
        if subject not in ASKED_OF and not set(tokenize(subject)) & product_stems:
            continue
        rest = text[found.start() :].strip()
        if len(text[: found.start()].split()) >= RUN_ON_CONTEXT and len(rest.split()) >= MIN_WORDS:
            return rest
    return None


#: A comma before a new clause, its subject and verb: "how do I add a new associate to our
#: account, she started monday and still cant get in" is a question and then context.
_SPLICE = re.compile(r",\s+(?=(?:she|he|they|we|i)\s+[a-z']+\b)", re.IGNORECASE)
#: ...a question, not a clause of time or condition ("When the trial ends, we keep our data?").
_NOT_ASKED_FIRST = re.compile(r"^(?:when|if)\b", re.IGNORECASE)


def _spliced(sentence: str) -> list[str]:
    """``sentence`` parted where a question runs on into context after a comma (see
    :data:`_SPLICE`): one that starts as a question and does not end on a question mark (its
    end then asks: "Can I add Dev, he's new, to the workspace?"); as it is otherwise."""
    if not _QUESTION_START.match(sentence) or _NOT_ASKED_FIRST.match(sentence):
        return [sentence]
    if sentence.rstrip().endswith("?"):
        return [sentence]
    return [p.strip() for p in _SPLICE.split(sentence, maxsplit=1) if p.strip()]


#: A message's sign-off: a closing word and the sender's name ("Thanks, Chris", "Regards, Katrin",
#: "Cheers, Anna-Lena", "Merci, Sophie", "— Omar"). Its name is no thing the question asks about.
#: After a sentence's end, or a closing quote or bracket after one.
_AFTER_A_SENTENCE = r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))"
_NAME = r"(?-i:[A-Z][\w'.-]*)"
_SIGN_OFF = re.compile(
    rf"(?:{_AFTER_A_SENTENCE}|^)\s*(?:(?:many\s+|thanks?\s+)?thanks(?:\s+a\s+lot|\s+again)?"
    r"|thank\s+you(?:\s+in\s+advance)?|thx|ty|cheers|(?:best|kind|warm)?\s*regards|best(?:\s+wishes)?"
    r"|br|all\s+the\s+best|merci(?:\s+d'avance)?|cordialement|gracias|saludos|un\s+saludo|danke"
    r"|viele\s+gr(?:ü|ue)(?:ß|ss)e|lg|mfg|grazie|saluti|obrigad[oa]|abra[çc]os|atenciosamente"
    rf")[,.!:]?\s+{_NAME}(?:\s+{_NAME})?\s*[.!]?\s*$"
    # A dash and one name alone ("— Omar"): two could be what is asked ("- Microsoft Teams").
    rf"|{_AFTER_A_SENTENCE}\s*[-\u2013\u2014~]\s*{_NAME}\s*$",
    re.IGNORECASE,
)


def without_sign_off(text: str) -> str:
    """``text`` without its sign-off (:data:`_SIGN_OFF`), after the last sentence."""
    kept = _SIGN_OFF.sub("", text)
    if kept == text:
        return text  # as given, its spacing too: a vector made of it is reused
    return kept.rstrip() or text


#: Where a question's alternatives part: "Is there a free tier, or do we pay from day one?"
_OR = re.compile(r",?\s+or\s+", re.IGNORECASE)


def first_alternatives(text: str, min_words: int = MIN_WORDS) -> list[str]:
    """The first alternative of each question in ``text`` that offers two ("Is there any free
    option, or do we have to start paying from day one?" asks first whether there is a free
    option), as a question of its own of ``min_words`` words or more. The second alternative
    dilutes the first: what the customer hopes is so comes first."""
    found = []
    for sentence in _sentences(text):
        head = _OR.split(sentence, maxsplit=1)[0]
        if head != sentence and _QUESTION_START.match(head) and len(head.split()) >= min_words:
            found.append(head.rstrip(" ,?") + "?")
    return found


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _asks(sentence: str, min_words: int) -> bool:
    """Whether ``sentence`` asks something (ends with "?" or starts as a question) and says
    enough to be read alone."""
    return len(sentence.split()) >= min_words and bool(
        sentence.endswith("?") or _QUESTION_START.match(sentence)
    )


#: A clause before the question in its sentence, set off by a comma: "When our booking site goes
#: down, can the warning show up in our Slack channel?", "we're 3 devs living on ramen lol, is
#: there a free tier at all". The question starts as one after the last such comma ("When our
#: site, which runs on Shopify, goes down, can we get SMS?").
_LEAD = re.compile(
    rf"^([^?]{{3,160}}),\s+(?=(?:{'|'.join(w for w in _QUESTION_WORDS if w != 'must')})\b)",
    re.IGNORECASE,
)
#: ...but a clause that asks something itself is no lead ("When ..." sets a scene): "Does Monitor
#: check SSL certificates, can it also alert on domain expiry?" asks two things.
_ASKS_ITSELF = re.compile(
    rf"^(?:{'|'.join(w for w in _QUESTION_WORDS if w != 'when')})\b", re.IGNORECASE
)


def after_lead(sentence: str, min_words: int = MIN_WORDS) -> tuple[str, str] | None:
    """The clause before a sentence's question (:data:`_LEAD`) and the question after it, when
    the clause asks nothing itself and the question says enough to be read alone; else None."""
    found = _LEAD.match(sentence.strip())
    if found is None or _ASKS_ITSELF.match(found.group(1)):
        return None
    rest = sentence.strip()[found.end() :]
    return (found.group(1), rest) if len(rest.split()) >= min_words else None


#: Context before a colon inside a question sentence: "Before I set up the eval plan: does the
#: free trial cover all of them?" asks what follows the colon.
_COLON = re.compile(r":\s+")


def asked_after_context(text: str, min_words: int = MIN_WORDS) -> tuple[str, str] | None:
    """What a message of context asks, and the sentence its asking starts with: its question
    sentences when they stand together ("I've been asked to migrate 30 repos off Jenkins. Where
    does the pipeline definition live? Is it a file in the repo?"), each read from after a
    colon that puts context first; None where the questions are apart (each then answers on its
    own) or the message has none."""
    sentences = _sentences(text)
    if len(sentences) == 1:
        # One sentence, its context before a colon: "We're a small accounting firm in Lisbon,
        # so clients ask this a lot: where physically is our information kept?".
        alone = _after_colon(sentences[0])
        return (alone, alone) if alone != sentences[0] else None
    at = [n for n, s in enumerate(sentences) if _asks(s, min_words)]
    if not at or at != list(range(at[0], at[0] + len(at))):
        return None
    asked = [_after_colon(sentences[n]) for n in at]
    return " ".join(asked), asked[0]


def _after_colon(sentence: str) -> str:
    parts = _COLON.split(sentence)
    last = parts[-1]
    if len(parts) > 1 and len(last.split()) >= MIN_WORDS and _QUESTION_START.match(last):
        return last  # what follows the colon must start as a question, not only end as one
    return sentence


#: A question that points back to what the context said ("does it work with that?"). "There" is
#: a place only where it is not "is there" or "there is"; "one" points back only as "that one",
#: "the other ones" or "one of", not as a count ("more than one owner").
_POINTS_BACK = re.compile(
    r"\b(?:it|it's|that|this|these|those|them|they|their|such|same)\b"
    r"|(?<!\bis )(?<!\bare )(?<!\bwas )\bthere\b(?!\s+(?:is|are|was|any|a|an)\b)"
    r"|\b(?:that|this|the|which|either|same|other|another|each)\s+(?:\w+\s+)?ones?\b"
    r"|\bones?\s+of\b",
    re.IGNORECASE,
)
#: The same in the other languages customers write in most, where the word cannot be anything
#: else (an article such as "la" or "das" can): "¿Pipelines funciona con eso?".
_POINTS_BACK_ABROAD = re.compile(
    r"(?<!\w)(?:eso|esto|ello|él|allí|ahí|cela|ça|celui|celle|ceux|celles|là|dort|damit|dafür"
    r"|darauf|davon|dies|dieses|diese|isso|isto|nele|nela|nisso|questo|quello|ciò|lì)(?!\w)",
    re.IGNORECASE,
)
#: An alternative asked about what the sentence already named: "Will your alerts land in
#: Microsoft Teams, or is it a Slack-only thing?".
_OR_IS_IT = re.compile(r"\bor\s+(?:is|are|does|do)\s+(?:it|that|this|they)\b", re.IGNORECASE)
#: "its" after a product's name belongs to the product ("Can Acme Monitor send its alerts").
_ITS = re.compile(r"\bits\b", re.IGNORECASE)


def points_back(sentence: str, product_stems: set[str]) -> bool:
    """Whether ``sentence`` points back to something said before it."""
    plain = _OR_IS_IT.sub(" ", sentence)
    if _POINTS_BACK.search(plain) or _POINTS_BACK_ABROAD.search(plain):
        return True
    for its in _ITS.finditer(plain):
        if not set(tokenize(plain[: its.start()])) & product_stems:
            return True
    return False


#: Words that look back but point to no name the context says: a claim checked ("Could you
#: please confirm whether that is correct"), an "it" with nothing in it ("can it only be me?")...
_POINTS_TO_NO_NAME = re.compile(
    r"\bthat(?:['\u2019]s|\s+is|\s+was)\s+(?:correct|right|true|accurate|the\s+case)\b"
    r"|\b(?:is|was)\s+that\s+(?:correct|right|true|accurate|the\s+case)\b"
    r"|\bit\s+(?:only\s+|just\s+)?be\s+(?:me|us|you|him|her)\b"
    r"|\bis\s+it\s+(?:just|only)\s+(?:me|us)\b",
    re.IGNORECASE,
)
#: ...and, where the context names one name only, "they" asked about as a subject: people, not
#: the name ("Our managers are in Donegal. Can they see the dashboards without a seat?"). As an
#: object or an owner a plural may be the name's ("post alerts to their channels" after Discord).
_THEY_ASKED = re.compile(
    r"\b(?:can|could|do|does|will|would|are|were|should|must)\s+they\b", re.IGNORECASE
)


def points_to_a_name(sentence: str, product_stems: set[str], names: int) -> bool:
    """Whether ``sentence`` may point back to one of the ``names`` (a count of different names)
    the context before it names: :func:`points_back`, less the words that point to no name."""
    plain = _POINTS_TO_NO_NAME.sub(" ", sentence)
    if names == 1:
        plain = _THEY_ASKED.sub(" ", plain)
    return points_back(plain, product_stems)


#: Where a question sentence's clauses part: a comma before "and", "or", "so", "but" or a word
#: of asking ("Is there a trial period, how long does it last, and ...").
_CLAUSE_BREAK = re.compile(
    rf",\s+(?=(?:and|or|but|so|{'|'.join(_QUESTION_WORDS)})\b)", re.IGNORECASE
)


#: A later clause's subject that points back, asked about straight after the break: "and are
#: they shared", "how long does it last".
_SUBJECT_BACK = re.compile(
    r"^(?:(?:and|or|but|so)\s+)?(?:(?:how|what|when|where|which|why)\s+(?:\w+\s+){0,2}?)?"
    r"(?:is|are|does|do|did|can|could|will|would|was|were|has|have)\s+(it|they)\b",
    re.IGNORECASE,
)


def points_before_itself(sentence: str, product_stems: set[str]) -> bool:
    """Whether ``sentence`` points back to something said before it, where a later clause's
    subject that points back (:data:`_SUBJECT_BACK`) points to what the first clause asks about:
    "How long does Pipelines keep build caches, and are they shared between branches?". The
    first clause must point to nothing itself and ask something or name a product ("We use
    Bitbucket, does Pipelines work with it?" still points back), and any other word pointing
    back still does ("Can Pipelines connect to repositories, and build them on every push?",
    "... and does it support them?": what "them" is the context said). For a context that
    names nothing the pack never says: a name there may be what the subject is about."""
    first, *rest = _CLAUSE_BREAK.split(sentence.strip(), maxsplit=1)
    if not rest or points_back(first, product_stems):
        return points_back(sentence, product_stems)
    if not (_QUESTION_START.match(first) or set(tokenize(first)) & product_stems):
        return points_back(sentence, product_stems)
    for clause in _CLAUSE_BREAK.split(rest[0]):
        subject = _SUBJECT_BACK.match(clause)
        if subject is not None:
            clause = clause[: subject.start(1)] + clause[subject.end(1) :]
        if points_back(clause, product_stems):
            return True
    return False

"""Fitting the answerability head to a pack when its index is built, and the names it never says.

The shipped head (:mod:`gatebot_knowledge.answerability`) is fitted on stackfaq-dev, a large forum
corpus. On a small pack in one narrow domain the question it answers reads lower: a right first
passage for a customer's own wording sits at P 0.1-0.58, in the same band as the pack's true "not
in here" questions. What "in scope but not answered" looks like is a property of the pack, so it
is measured on the pack, self-supervised, each time the index is built:

- **Queries**: the pack's own questions: each FAQ entry's question and the examples of every
  intent whose move is ``answer`` (what the pack says its customers ask).
- **Negatives, leave one out**: each query is ranked, and its best passage removed with every
  rival that says the same thing (:func:`~gatebot_knowledge.answerability.agreeing_rivals`), so
  what is left cannot be the answer the pack gives; the shipped head's P for the new best passage
  is what an in-scope question the pack does not answer reads *in this pack*.
- **Calibration**: a shift of the head's logit, so the highest of those negatives sits
  :data:`MARGIN` below the ``answerable`` gate: a question must read better than anything the
  pack's own questions read with their answer taken away. The shift only ever lowers the bar
  (never below 0, at most :data:`MAX_SHIFT`); with fewer than :data:`MIN_QUERIES` queries the
  shipped head stands as it is.

**Names the pack never says.** A question naming something the pack never mentions ("is there a
pagerduty integration", "can I export incident timelines to Jira") is about that thing, and the
pack says nothing about it, however close its nearest passage sits (an integrations entry about
GitHub). :func:`unseen_names` finds such words: ones the pack never uses, written as a name
(capitalised mid-sentence, an acronym, a domain) or named as what is integrated or connected.
With one, the pack's shift is not applied, the head's logit is lowered by :data:`NAMED_PENALTY`,
and no FAQ entry is matched (pre-flight's nor the answer path's: "send our alerts into Opsgenie"
is close to the Slack entry).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from gatebot_knowledge.dictionary import is_common
from gatebot_knowledge.lexical import CHAT_STEMS, QUERY_STOPWORDS, STOPWORDS, tokenize

#: Fewer of the pack's own questions than this: too few to place a bar, the shipped head stands.
MIN_QUERIES = 12
#: At most this many of the pack's questions are read (every n-th), and a pack of more passages
#: than :data:`MAX_PASSAGES` keeps the shipped head: each question rebuilds BM25 over the rest.
#: (A large corpus holds near-duplicates anyway, so its highest negative reads high and the shift
#: is 0: stackfaq-dev's 719 passages read 0.9999.)
MAX_QUERIES = 200
MAX_PASSAGES = 5000
#: How far below the gate (in logit) the pack's highest negative is kept.
MARGIN = 0.25
#: The most the bar is lowered (in logit): with the shipped gate 0.6 a head P of about 0.26.
MAX_SHIFT = 1.5
#: Subtracted from the head's logit when the question names what the pack never says:
#: "is there a pagerduty integration" read 0.56 and "can I export incident timelines to Jira" 0.59
#: against the gate's 0.6 (0.32 and 0.35 with it).
NAMED_PENALTY = 1.0
#: ...and by this when the name is what the question asks to integrate, connect, send to or
#: already uses ("can monitor alerts go to pagerduty or opsgenie instead of slack?" read 0.71
#: with 1.0, the Slack entry holding "slack" and the alert words): the question is about that
#: thing. A name only written as one ("Dockerfile", "MS Teams", "IdP") keeps the smaller
#: penalty: 3 answerable questions of the fresh sets carry one and are answered with it.
TARGET_PENALTY = 2.0

_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?")
#: Letters then digits, as a standard, a service or a model is named whatever the case
#: ("aes256", "s3", "k8s", "iso27001"); digits first is a figure ("24h", "2nd").
_CODED = re.compile(r"[A-Za-z]+\d[A-Za-z0-9]*")
#: The thing a question asks to be integrated, connected or sent to: "a pagerduty integration",
#: "integrate with bitbucket", "connect to azure", "export ... to jira".
_NAMED_AFTER = re.compile(
    # ("integration tests" are a kind of test: "unit and integration tests into separate jobs")
    r"\b(?:integrat\w*(?!\s+test)|connect\w*|compatible|sync\w*|export\w*|import\w*"
    # "does pipelines hook into bitbucket repos" (not "hook into both at the same time")
    r"|hook\w*(?:\s+up)?(?!\s+(?:in)?to\s+(?:both|either|each|all|them|it)\b))\s+"
    r"(?:\w+\s+){0,3}?(?:with|to|into|from|via)\s+(?:our\s+|my\s+|the\s+|a\s+|an\s+)?"
    r"([A-Za-z0-9][\w.\-]*)",
    re.IGNORECASE,
)
#: (The typo channel may have spelled "integration" as the pack's "integrate".)
_NAMED_BEFORE = re.compile(r"\b([A-Za-z0-9][\w.\-]*)\s+integrat\w*", re.IGNORECASE)
#: Where something is sent ("can alerts go to pagerduty", "send our alerts into opsgenie") and
#: what the customer already uses ("we use azure devops for our repos"): lower case names too.
_NAMED_SENT = re.compile(
    r"\b(?:go|goes|send|sent|post|posted|push|pushed|forward\w*)\s+(?:\w+\s+){0,2}?(?:to|into)\s+"
    r"(?:our\s+|my\s+|the\s+|a\s+|an\s+)?([A-Za-z0-9][\w.\-]*)",
    re.IGNORECASE,
)
#: What a product is asked to work with or support ("does pipelines work with bitbucket repos",
#: "do you support azure devops"): the question is about that thing.
_NAMED_WORKS = re.compile(
    # "w" and "w/" as typed for "with": "does pipelines work w bitbucket".
    r"\b(?:work|works|play|plays)\s+(?:well\s+|nicely\s+)?(?:with|w/?)\s+"
    r"(?:our\s+|my\s+|the\s+|a\s+|an\s+)?([A-Za-z0-9][\w.\-]*)"
    # The platform something runs on: "do self-hosted runners work on Windows and ARM machines?"
    r"|\b(?:work|works|run|runs)\s+on\s+(?:our\s+|my\s+|the\s+|a\s+|an\s+)?([A-Za-z0-9][\w.\-]*)"
    # ("You support Bitbucket repositories too, or only the github and gitlab?", unmarked)
    # ("do self hosted runners support windows": a product's thing of up to four words)
    r"|\b(?:do|does)\s+(?:you|it|(?:(?:the|your|our)\s+)?\w+(?:[\s-]\w+){0,3}?)\s+support\s+"
    # (what follows is the thing, not a verb: "does the docker build support cover ARM images?")
    r"(?:our\s+|my\s+)?(?!(?:cover|covers|handle|handles|for|with|in|on|of|the|a|an|all|both)\b)"
    r"([A-Za-z0-9][\w.\-]*)"
    # ...or as chat drops the "do": "pipelines support bitbucket?" (the thing ends the question)
    # ("priority support included?" names no thing: support is the noun there)
    r"|^\s*(?:\w+\s+){0,2}?supports?\s+(?:our\s+|my\s+)?"
    r"(?!(?:included|available|hours|plans?|options?|tiers?|team|people)\b)([A-Za-z0-9][\w.\-]*)"
    r"(?=\s*\?)"
    # (a name, capitalised: "u support guys are slow" is Acme's support team)
    r"|^\s*(?:you|u)\s+support\s+(?:our\s+|my\s+)?((?-i:[A-Z])[\w.\-]*)"
    # What a feature is asked to cover, a name written so: "does the docker build support cover
    # ARM images?" ("handle those container builds" names nothing)
    r"|\b(?:cover|covers|handle|handles)\s+(?:our\s+|my\s+|the\s+)?((?-i:[A-Z])[\w.\-]*)"
    # "is sso with OIDC supported or only saml", "are ARM runners supported"
    # (of a name of two words, its first: "Is OpenID Connect supported")
    r"|\b(?:([A-Za-z0-9][\w.\-]*)|((?-i:[A-Z])[\w.\-]*)\s+(?-i:[A-Z])[\w.\-]*)\s+(?:is\s+|are\s+)?"
    r"supported\b",
    re.IGNORECASE,
)
#: Where a product is asked to run, in the words hosting goes by: "can we run acme on-prem /
#: air-gapped?" asks about a way of hosting the pack says nothing of, where it never says it.
_NAMED_HOSTED = re.compile(r"\b(on[-\s]?prem(?:ise|ises)?|air[-\s]?gapped)(?![\w-])", re.IGNORECASE)
#: ...unless the message asks of builds or runners on the customer's own machines, which the pack
#: may answer (self-hosted runners): "can we run our pipelines builds on-prem on our own machines?"
_RUN_OURSELVES = re.compile(
    # (not "can i self host the whole thing on-prem, not just runners")
    r"(?<!not just )(?<!not only )\b(?:runners?|builds?|self[- ]hosted"
    r"|own\s+(?:network|servers?|machines?|hardware|infra\w*))\b",
    re.IGNORECASE,
)
#: What is asked to be printed, shown or added somewhere: "get our VAT number printed on the
#: invoices", "add our logo to the status page" (a letter first: "add 5 seats to our plan" names
#: no thing).
_NAMED_ON = re.compile(
    r"\b(?:get|have|put)\s+(?:our\s+|my\s+|the\s+|a\s+|an\s+)?([A-Za-z][\w.\-]*)\s+(?:[\w-]+\s+)?"
    r"(?:printed|shown|added|included|listed|displayed)\b"
    # (an owner before it: "put our firm's tax ID on the invoices")
    r"|\b(?:print|add|include|show|display|put)\s+(?:our\s+|my\s+|the\s+|a\s+|an\s+)?"
    r"(?:[\w-]+'s\s+)?"
    r"([A-Za-z][\w.\-]*)\s+(?:[\w-]+\s+)?(?:on|in|to)\s+(?:the|our|my|each|every|all)\s+\w+"
    # "can invoices include our vat id?"
    r"|\b(?:include|show|display|print|carry)s?\s+(?:our|my|the)\s+([A-Za-z][\w.\-]*)\s+"
    r"(?:id|number|no|code)\b",
    re.IGNORECASE,
)
#: What follows "keep our data in" without being a place, or is a place of the customer's own
#: ("run the builds on our servers in the datacenter": no place the pack could name).
_NOT_PLACES = (
    r"(?:sync|bulk|json|csv|xml|yaml|memory|advance|future|general|batches|parallel|order|place"
    r"|transit|production|staging|time|full|total|one|house|january|february|march|april|may"
    r"|june|july|august|september|october|november|december|spring|summer|autumn|fall|winter"
    r"|datacenter|datacentre|datacenters|datacentres|office|offices|basement|building|premises"
    r"|garage|lab|closet|rack|racks"
    # (a screen of the product's, no place: "where are invoices kept in the console?")
    r"|console|dashboard|app|ui|settings|portal|interface|browser)"
)
#: Where something is hosted or kept: "is it hosted in frankfurt or ireland?", "data centres in
#: sydney" (a place the pack never names, whatever its case).
_NAMED_IN = re.compile(
    r"\b(?:hosted|located|stored|kept|based|housed|running|run)\s+in\s+(?:the\s+)?"
    rf"(?!{_NOT_PLACES}\b)([A-Za-z][\w.\-]*)"
    r"|\b(?:data\s*cent(?:er|re)s?|servers?|regions?)\s+in\s+(?:the\s+)?"
    rf"(?!{_NOT_PLACES}\b)([A-Za-z][\w.\-]*)"
    # "can we store our data in India region?", "keep everything in the Sydney data centre"
    # (a place by its capital: "in accordance with", "in the default region" name nothing)
    r"|\b(?:store|host|keep|move)\s+(?:(?:our|my|all|the|your)\s+)*(?:data|stuff|everything"
    r"|information|workspace|account|it)\s+in\s+(?:the\s+)?((?-i:[A-Z])[\w.\-]*)"
    # ...in lower case where the place ends the question: "can we host our data in australia"
    # (not "in sync", "in bulk", "in json", "in January")
    r"|\b(?:store|host|keep|move)\s+(?:(?:our|my|all|the|your)\s+)*(?:data|stuff|everything"
    rf"|information|workspace|account|it)\s+in\s+(?:the\s+)?(?!{_NOT_PLACES}\b)"
    r"((?-i:[a-z])[\w\-]*)(?=\s*(?:[?.!]|$))"
    r"|\bin\s+(?:the\s+)?((?-i:[A-Z])[\w.\-]*)\s+(?:region|data\s*cent(?:er|re))\b",
    re.IGNORECASE,
)
#: What has support or is used for something: "any bitbucket support for pipelines?", "can i use
#: a yubikey for 2fa": lower case names too.
_NAMED_FOR = re.compile(
    r"\b([A-Za-z0-9][\w.\-]*)\s+(?:support|integration|compatibility)\s+(?:for|in|on|with)\b"
    r"|\b(?:use|using)\s+(?:a|an|our|my|the)\s+([A-Za-z0-9][\w.\-]*)\s+(?:for|with|as)\b",
    re.IGNORECASE,
)
_NAMED_USED = re.compile(
    r"\b(?:we|i)\s+(?:use|are\s+using|am\s+using|run|host\s+\w+\s+on)\s+([A-Za-z0-9][\w.\-]*)"
    r"(?![\w.\-])"
    # (not the identity provider, named as one: "we use google workspace idp")
    r"(?!(?:\s+[\w.\-]+)?\s+(?:as\s+(?:our\s+|the\s+|an\s+)?)?(?:idp|identity\s+provider)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PackFit:
    """The pack's calibration: the logit shift, and what it was placed from."""

    shift: float = 0.0
    queries: int = 0
    highest: float | None = None  # the highest negative's P under the shipped head
    #: Stems the pack declares without its passages saying them (product, topic, FAQ and
    #: intent keywords: "ci", "api"): never an unseen name.
    declared: frozenset[str] = field(default=frozenset(), repr=False)

    def apply(self, p: float) -> float:
        """``p`` with the shift added to its logit."""
        if not self.shift:
            return p
        z = math.log(max(p, 1e-9) / max(1.0 - p, 1e-9)) + self.shift
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

    def as_dict(self) -> dict[str, Any]:
        highest = None if self.highest is None else round(self.highest, 4)
        return {"shift": round(self.shift, 4), "queries": self.queries, "highest": highest}


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1.0 - 1e-9)
    return math.log(p / (1.0 - p))


def declared_words(pack: Any) -> frozenset[str]:
    """The stems of every keyword the pack declares (products, scope topics, FAQ, intents)."""
    words = [p.name for p in pack.products]
    words += [k for p in pack.products for k in p.keywords]
    words += [k for t in pack.topics for k in t.keywords]
    words += [k for f in pack.faq for k in f.keywords]
    words += [k for i in pack.intents for k in i.keywords]
    return frozenset(t for w in words for t in tokenize(w))


def pack_queries(pack: Any) -> list[str]:
    """The pack's own questions: FAQ questions and the examples of intents that answer."""
    out = [f.question for f in pack.faq]
    out += [e for i in pack.intents if i.move == "answer" for e in i.examples]
    return list(dict.fromkeys(q.strip() for q in out if q.strip()))


def place_shift(
    negatives: list[float], gate: float, declared: frozenset[str] = frozenset()
) -> PackFit:
    """The shift that keeps the highest negative :data:`MARGIN` under ``gate`` (see the module
    docstring), or none when there are too few negatives."""
    if len(negatives) < MIN_QUERIES:
        return PackFit(0.0, len(negatives), max(negatives) if negatives else None, declared)
    highest = max(negatives)
    shift = _logit(gate) - _logit(highest) - MARGIN
    return PackFit(min(MAX_SHIFT, max(0.0, shift)), len(negatives), highest, declared)


def fit_pack(
    queries: list[str],
    negative: Callable[[str], float | None],
    gate: float,
    declared: frozenset[str] = frozenset(),
) -> PackFit:
    """Place the pack's shift from ``negative(query)``: the shipped head's P for the query's best
    passage once its answer is removed (None when nothing is left to rank)."""
    queries = queries[:: max(1, -(-len(queries) // MAX_QUERIES))][:MAX_QUERIES]
    found = [p for p in (negative(q) for q in queries) if p is not None]
    return place_shift(found, gate, declared)


def _sentence_start(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return not before or before[-1] in ".!?:;\"'(-\u00bf\u00a1\u201c\u2018"


def _asked_alone(text: str, end: int) -> bool:
    """Whether the word ending at ``end`` is asked about alone: "which country exactly does it
    sit in? Germany? Ireland?" (a capital starting a sentence is otherwise no sign of a name)."""
    return text[end:].lstrip()[:1] == "?"


#: Names that stem to an ordinary word: "Windows" reads as "window", which a pack may say of an
#: undo window. Named (capitalised, or what something is asked to run on or work with) where the
#: pack never writes the name itself, it is a thing the pack never speaks of.
NAMES_LIKE_WORDS = frozenset({"windows", "outlook", "chrome", "safari", "edge", "excel"})


#: A suffix that says what kind of thing a name is: "SAML-based SSO" names SAML.
_KIND_SUFFIX = re.compile(
    r"-(?:based|style|like|ready|friendly|compatible|powered|driven|enabled)$", re.IGNORECASE
)


def unseen_names(
    known: dict[str, int],
    query: str,
    declared: frozenset[str] = frozenset(),
    capitals: bool = True,
    written: frozenset[str] | None = None,
) -> list[str]:
    """Words of ``query`` the pack never uses (``known``: its passages' stemmed vocabulary;
    ``declared``: its keywords' stems) that name a thing: capitalised other than at a sentence's
    start, an acronym, a domain, or what is asked to be integrated or connected (see the module
    docstring). ``capitals=False`` for a language that capitalises every noun (German): there a
    capital says nothing of a name. ``written``: the passages' words as written, where known
    (a name of :data:`NAMES_LIKE_WORDS` is looked for there, not by its stem)."""

    def unseen(word: str) -> bool:
        ignored = CHAT_STEMS | QUERY_STOPWORDS
        word = _KIND_SUFFIX.sub("", word)  # "SAML-based" names SAML
        if written is not None and word.lower() in NAMES_LIKE_WORDS:
            return word.lower() not in written
        # A domain is read without its top level: "gitlab.com" is GitLab, which the pack says;
        # "status.ourcompany.com" names what it never does (no compound of "status", below).
        domain = "." in word.strip(".")
        stems = tokenize(word.rsplit(".", 1)[0] if domain else word)
        if any(s not in known and s not in declared and s not in ignored for s in stems):
            return domain or not _compound_of_known(word.lower(), known)
        return False

    names: list[str] = []
    query = _PLACES_SPELLED_OUT.sub(
        lambda m: "EU" if "european" in m.group(0).lower() else "US", query
    )
    providers = _sign_in_providers(query, known)
    for match in _TOKEN.finditer(query):
        word = match.group(0)
        if len(word) < 2 or word.lower() in _NEVER_NAMES or not unseen(word):
            continue
        if _said_not_named(query, match, providers):
            continue
        letters = [c for c in word if c.isalpha()]
        acronym = len(letters) >= 2 and all(c.isupper() for c in letters)
        capital = capitals and any(c.isupper() for c in word)
        capital = capital and (
            not _sentence_start(query, match.start()) or _asked_alone(query, match.end())
        )
        domain = "." in word.strip(".")
        # A capital inside a word names something in every language ("PagerDuty", "GitLab").
        camel = any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)
        if acronym or capital or camel or domain or _CODED.fullmatch(word):
            names.append(word)
    for word in _targets(query):
        if word.lower() in _NEVER_NAMES or not unseen(word) or word in names:
            continue
        at = query.find(word)
        if at >= 0 and _a_person(query, at, at + len(word)):
            continue  # "how do I add Sandra on our front desk to the workspace?"
        if not _someone_of_ours(query, word):
            names.append(word)
    return names


def _said_not_named(query: str, match: re.Match[str], providers: set[str]) -> bool:
    """Whether the word at ``match`` is written as a name but names nothing the pack could have
    said: a colleague ("Dev keeps saying", "Dr Hughes"), the customer's identity provider or
    office talk ("IT says"), the customer's own place ("our Lisbon office", "our Wymondham
    branch") or a common word in capitals ("builds are SLOW")."""
    word, start, end = match.group(0), match.start(), match.end()
    if _a_person(query, start, end):
        return True
    if word.lower() in providers or word.upper() in _OFFICE_ACRONYMS:
        return True
    if _OWN_THING_AFTER.match(query, end) or (
        _OUR_PLACE_AFTER.match(query, end) and _OUR_BEFORE.search(query[:start])
    ):
        return True
    return _shouted(query, start, word, sum(c.isalpha() for c in word))


#: Words that never name a thing the pack might not say: stop words, pronouns ("how do I get her
#: added"), days and months ("he's not in till Thursday").
_NEVER_NAMES = STOPWORDS | frozenset(
    "he she him her his hers himself herself they them their theirs themselves it itself"
    " monday tuesday wednesday thursday friday saturday sunday january february march april"
    " june july august september october november december christmas easter dr mr mrs prof".split()
)
#: A name a person goes by, told by what is around it: a title before it ("Dr Hughes"), what
#: only a person does after it ("Dev keeps saying", "Dev's not in") or where they sit ("Sandra on
#: our front desk"); see :func:`_a_person` for the rest.
_TITLE_BEFORE = re.compile(r"\b(?-i:Dr|Mr|Mrs|Ms|Prof)\.?\s+$")
#: (only what no tool does: "Sentry says the site is down", "Jira's out of date", "Grafana in our
#: platform team", "every time Renovate uploads changes" name tools)
_PERSON_AFTER = re.compile(
    r"(?:'s|\s+is|\s+isn't|\s+was)\s+(?:not\s+in|away|off\s+(?:sick|today)"
    r"|on\s+(?:holiday|leave|vacation)|moaning|complaining|very\s+strict)\b"
    r"|\s+(?:asked|told|thinks|reckons|insists|moans|keeps\s+(?:saying|asking|telling|moaning)"
    r"|joined\s+us|left\s+us|looks\s+after|set\s+up|sets\s+up|wants\s+me|needs\s+me)\b"
    r"|\s+(?:on|at)\s+(?:our|the)\s+(?:front\s+desk|reception)\b",
    re.IGNORECASE,
)


def _a_person(query: str, start: int, end: int) -> bool:
    """Whether the capitalised word at ``start:end`` of ``query`` names a person, not a thing the
    pack might never say: a title before it or a person's doing after it (:data:`_TITLE_BEFORE`,
    :data:`_PERSON_AFTER`), "he" or "she" after it in a clause it starts, or a role in an aside
    after it."""
    if not query[start].isupper() or query[start:end].isupper():
        return False
    if _TITLE_BEFORE.search(query[:start]) or _PERSON_AFTER.match(query, end):
        return True
    if _ROLE_BEFORE.search(query[:start]):
        return True  # "Our volunteer developer Marcus (he's a college kid) asked me"
    # The subject of its clause, and "he" or "she" later in its sentence: "I think Dev deleted
    # our old workspace when he was tidying up" (a tool is no "he": "Priya says we should connect
    # Opsgenie, can she set it up?" names a tool after a verb).
    rest = _SENTENCE_END.split(query[end:], maxsplit=1)[0]
    if _SUBORDINATE_BEFORE.search(query[:start]):
        # After "while", "until" or "unless": "he" or "she" in the clause after it ("while Marcus
        # was asleep, can he just rerun it"), not in its own ("while Bitbucket is what her team
        # uses, will Pipelines connect to it?": a tool's user).
        main = rest.split(",", 1)[1] if "," in rest else ""
        if _HE_OR_SHE_SUBJECT.search(main):
            return True
    elif _CLAUSE_BEFORE.search(query[:start]) and _HE_OR_SHE.search(rest):
        return True
    # "Dev (our part-time IT guy)", "Priya, our boss,": a role of the customer's after it (not
    # "Opsgenie (our paging tool)").
    aside = _ASIDE.match(query, end)
    if aside is None:
        return False
    last = aside.group(1).split()[-1].lower()
    return last in _ROLES | _FOLK or last.removesuffix("s") in _ROLES | _FOLK


_CLAUSE_BEFORE = re.compile(
    r"(?:^|[.,;:!?(]|\b(?:and|but|when|because|that|think|if|time|can|could|does|did|will|would"
    r"|so))\s*$",
    re.IGNORECASE,
)
#: (not "after", "before", "since" or "once": "after GitLab went down, he moved our builds")
_SUBORDINATE_BEFORE = re.compile(r"\b(?:while|until|unless)\s*$", re.IGNORECASE)
_HE_OR_SHE_SUBJECT = re.compile(r"\b(?:he|she)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?]")
_HE_OR_SHE = re.compile(r"\b(?:he|she|him|his|her|himself|herself|he's|she's)\b", re.IGNORECASE)
#: An aside after a name, to its end: "Dev (our part-time IT guy)", "Priya, our boss,".
_ASIDE = re.compile(r"\s*[,(]\s*(?:our|my)\s+((?:[\w-]+\s+){0,2}[\w-]+)\s*[,)]", re.IGNORECASE)
_FOLK = frozenset({"guy", "girl", "lad", "person", "man", "woman"})


#: The United States and the European Union spelled out, as the pack's "US" and "EU".
_PLACES_SPELLED_OUT = re.compile(
    r"\b(?:the\s+)?(?:united\s+states(?:\s+of\s+america)?|european\s+union)\b", re.IGNORECASE
)
#: Acronyms of an office's talk, never a product: roles, a fiscal year, a time ("IT says they
#: want SAML", "the CFO wants a number for FY26", "need it by EOD").
_OFFICE_ACRONYMS = frozenset(
    "HR IT CFO CEO CTO COO CIO CISO VP FY ETA EOD EOW OOO FYI TBH IMO BTW ASAP".split()
)
#: After a name, what makes it the customer's own thing, not a product: "the Brightline workspace".
#: (Not a workspace, a project, a client, a store or a shop: "one Bitbucket workspace", "40
#: Jenkins projects", "the Outlook client", "a Shopify store" name tools.)
_OWN_THING_AFTER = re.compile(r"\s+(?:offices?|campus|school|hospital|clinic)\b", re.IGNORECASE)
#: ...and after "our" only, where a tool's name goes too ("every Gitea branch", "Snowflake
#: warehouse alerts"): "our Wymondham branch".
_OUR_PLACE_AFTER = re.compile(r"\s+(?:branch|warehouse|depot|factory)\b", re.IGNORECASE)
_OUR_BEFORE = re.compile(r"\bour\s+$", re.IGNORECASE)
#: "add my copywriter to the workspace", "can it go to my co-teacher": a person of the customer's
#: (a word of a role after "my", "our"), not a thing to integrate. Roles by name: "my messenger"
#: and "my pager" end as "my copywriter" does and are things alerts might go to.
_SOMEONE_OF_OURS = r"\b(?:my|our|his|her|their)\s+{}\b"
_ROLES = frozenset(
    "copywriter designer developer dev engineer accountant bookkeeper assistant intern contractor"
    " freelancer manager colleague coworker teammate boss partner founder cofounder teacher"
    " student admin administrator consultant employee analyst tester coordinator volunteer"
    " planner supervisor deputy editor writer recruiter receptionist secretary technician".split()
)


#: A role of the customer's right before a name: "our volunteer developer Marcus". Roles only a
#: person has: "our password manager Bitwarden", "our dev Kubernetes cluster" and "our payroll
#: partner Gusto" name tools.
_PERSON_ROLES = _ROLES - frozenset(
    "dev manager partner admin administrator editor planner assistant tester deputy".split()
)
_ROLE_BEFORE = re.compile(
    rf"\b(?:our|my)\s+(?:[\w-]+\s+)?(?:{'|'.join(sorted(_PERSON_ROLES))})\s+$", re.IGNORECASE
)


def _someone_of_ours(query: str, word: str) -> bool:
    role = word.lower().removeprefix("co-")
    if role.rstrip("s") not in _ROLES and role not in _ROLES:
        return False
    return re.search(_SOMEONE_OF_OURS.format(re.escape(word)), query, re.IGNORECASE) is not None


#: What comes before a name: "alerts via LINE", "alerts through SIGNAL", "is it on STEAM".
_BEFORE_A_NAME = re.compile(
    r"\b(?:via|through|thru|to|into|over|with|on|in|using|from|for|and|or|like|than|vs)\W*$",
    re.IGNORECASE,
)


def _shouted(query: str, at: int, word: str, letters: int) -> bool:
    """Whether ``word`` (at ``at`` in ``query``, of ``letters`` letters) is a common word in
    capitals said loudly ("builds are SLOW", "deploys take FOREVER"), not a name: four letters or
    more (ARM is too short to tell), no word of :data:`NAMES_LIKE_WORDS`, not where a name goes
    ("alerts via LINE") and not a sentence's first ("SIGNAL alerts possible?")."""
    if letters < 4 or not word.isupper() or word.lower() in NAMES_LIKE_WORDS:
        return False
    if _BEFORE_A_NAME.search(query[:at]) or _sentence_start(query, at):
        return False
    return is_common(word.lower())


#: What the customer signs in through ("we log in through Okta", "our company signs in via Azure
#: AD", "Okta SSO"): their identity provider, whatever its name.
_SIGNED_IN = re.compile(
    r"\b(?:log|logs|logged|sign|signs|signed)[ -]?(?:in|on)\s+(?:through|thru|with|via|using)\s+"
    # "through our company's Okta login": the owner before the name is no provider.
    r"(?:our\s+(?:company's\s+|corporate\s+|work\s+)?|an\s+|the\s+)?"
    r"([A-Za-z0-9][\w.\-]*(?:\s+(?-i:[A-Z]{2})\b)?)"
    r"|\b([A-Za-z0-9][\w.\-]*)\s+(?:SSO|single\s+sign-on)\b"
    # "we use google workspace idp", "Okta as our identity provider"
    r"|\b([A-Za-z0-9][\w.\-]*(?:\s+[A-Za-z0-9][\w.\-]*)?)\s+(?:as\s+(?:our\s+|the\s+)?)?"
    r"(?:idp|identity\s+provider)\b",
    re.IGNORECASE,
)
#: ...or signs on against, or whose login goes through ("We need SAML SSO against Okta", "Our
#: company login goes through Okta"): read apart, as "SAML SSO" is read by the pattern above.
_SIGNED_ON_WITH = re.compile(
    r"\b(?:SSO|single\s+sign-on|login|log-in)\s+(?:goes\s+|runs\s+|is\s+)?(?:against|with|via"
    # (a name ends on a letter or a digit: "through Okta. MS Teams alerts?" names Okta alone)
    r"|through|thru|using)\s+(?:our\s+|an\s+|the\s+)?"
    r"([A-Za-z0-9](?:[\w.\-]*\w)?(?:\s+(?-i:[A-Z]{2})\b)?)",
    re.IGNORECASE,
)


def _sign_in_providers(query: str, known: dict[str, int]) -> set[str]:
    """The words of the identity provider the customer says they sign in through, where the pack
    speaks of identity providers: "we log in through Okta, how do I change my password?" is
    answered by a page on signing in with one's identity provider (the name is an instance of
    what the pack says, not a thing it never does). Empty for a pack that never says it."""
    if not all(w in known for w in tokenize("identity provider")):
        return set()
    found = set()
    for match in chain(_SIGNED_IN.finditer(query), _overlapping(_SIGNED_ON_WITH, query)):
        said = next(g for g in match.groups() if g)
        found |= {w.lower().strip(".-") for w in said.split()}
    return found


def _overlapping(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """Every match of ``pattern``, overlapping ones too: in "we login with SSO through Okta",
    "login with SSO" names SSO and "SSO through Okta" the provider."""
    at = 0
    while (match := pattern.search(text, at)) is not None:
        yield match
        at = match.start() + 1


#: Places named in the customer's language that the pack writes as an acronym: read as it writes
#: them before names are looked for ("aux États-Unis" is the pack's "the US", not a name it never
#: says; the accent would also cut "tats-Unis" out of it).
_PLACES_ABROAD = re.compile(
    r"\b(?:estados\s+unidos|[ée]tats[- ]unis|stati\s+uniti|vereinigten?\s+staaten|ee\.?\s?uu\.?"
    r"|eeuu)(?!\w)",
    re.IGNORECASE,
)


def places_as_written(text: str) -> str:
    """``text`` with the United States as other languages name it written "US"."""
    return _PLACES_ABROAD.sub("US", text)


def cognate(word: str, known: dict[str, int], written: frozenset[str] = frozenset()) -> bool:
    """Whether ``word``, from a question in another language, is a pack word as that language
    writes it: the same stem begun ("Europa" for the pack's "Europe", stem "europ") or the same
    letters of a short acronym in another order ("UE" for "EU") or with one letter more ("EUA" for
    "EU"). A place or body named in the customer's language is not a thing the pack never says.
    ``written``: the passages' words as written, where an acronym that is also a stop word stays
    ("USA" for the pack's "the US"). A domain is never one: "status.notreboite.fr" begins with
    the pack's "status" and names the customer's own site, which the pack never does, so the
    question is matched to no FAQ entry across languages."""
    w = word.lower()
    if "." in w.strip("."):
        return False
    if len(w) <= 4 and w.isalpha() and (len(w) <= 3 or word.isupper()):
        # "UE" for "EU"; "EUA" for "EU" (one letter more, the pack's acronym begun); "RGPD" for
        # "GDPR" (an acronym of four in another order, written in capitals).
        return any(
            (len(k) == len(w) and sorted(k) == sorted(w))
            or (len(k) == len(w) - 1 and w.startswith(k))
            for k in chain(known, written)
            if len(k) >= 2
        )
    return len(w) >= 5 and any(len(k) >= 5 and w.startswith(k) for k in known)


#: The shortest pack word a compound may begin with and still be read as that word's kind
#: ("Dockerfile" is Docker's file; "CI" does not make "CIrcle" one).
_COMPOUND_HEAD = 5


def _compound_of_known(word: str, known: dict[str, int]) -> bool:
    """Whether ``word`` begins with a word the pack uses ("dockerfile", "slackbot"): a thing of
    that kind, not a name the pack never says."""
    return any(
        len(head) >= _COMPOUND_HEAD and word.startswith(head) and word != head for head in known
    )


def _targets(query: str) -> list[str]:
    """Words the question asks to integrate, connect or send to, or says it uses."""
    found = []
    patterns: tuple[re.Pattern[str], ...] = (
        _NAMED_AFTER,
        _NAMED_BEFORE,
        _NAMED_SENT,
        _NAMED_WORKS,
        _NAMED_USED,
        _NAMED_ON,
        _NAMED_IN,
        _NAMED_FOR,
    )
    if not _RUN_OURSELVES.search(query):
        patterns += (_NAMED_HOSTED,)
    for pattern in patterns:
        for m in pattern.finditer(query):
            found.append(next(g for g in m.groups() if g).strip(".-"))
            # "work on Windows and ARM machines": the second is as much what is asked.
            more = _AND_NAME.match(query, m.end())
            if more:
                found.append(more.group(1).strip(".-"))
    return found


#: "... and Y", "... Server and on Y" (a name of two words, the preposition said again).
_AND_NAME = re.compile(
    r"(?:\s+[A-Z][\w.\-]*)?\s+(?:and|or|&)\s+(?:(?:on|with|in|to)\s+)?([A-Za-z0-9][\w.\-]*)"
)


#: P(answerable) never above this when an unseen name is what the question asks to integrate,
#: connect, send to or work with: "do you integrate with bitbucket? we're not on github or gitlab"
#: read 0.89 with the penalty alone (the GitHub entry holds every other word), and the question
#: is about the one thing the pack never names.
TARGET_AT = 0.3


def names_target(query: str, names: list[str]) -> bool:
    """Whether one of the unseen ``names`` is what ``query`` asks to integrate, connect, send to,
    work with or says it uses."""
    return bool(set(names) & set(_targets(query)))


def name_penalty(query: str, names: list[str]) -> float:
    """How far (in logit) the unseen ``names`` lower P(answerable): :data:`TARGET_PENALTY` when
    one is what the question asks to integrate, connect or send to, else :data:`NAMED_PENALTY`."""
    return TARGET_PENALTY if names_target(query, names) else NAMED_PENALTY


def remove_rows(index: Any, removed: set[int]) -> Any:
    """The index without the rows in ``removed`` (vectors and BM25 rebuilt over the rest)."""
    from gatebot_knowledge.index import KnowledgeIndex

    keep = [i for i in range(len(index.passages)) if i not in removed]
    vectors = None
    if index.vectors is not None:
        vectors = index.vectors.subset(keep)
    return KnowledgeIndex([index.passages[i] for i in keep], vectors)

"""The reply gate: every model-written draft passes it before a customer sees it.

Each rule in :data:`RULES` has a name, and a refusal names its rule in the turn record
(``reply.gate.rules``, one name per reason). What a rule allows comes from two places only: the
facts retrieved this turn (which a citation or a link may point at) and the pack's own files
(:class:`Allowances`: its declared offers, addresses and instructions). Text inside a draft or a
fact can never switch a rule off, and a fact never lends a draft a price, a promise or an action:

- ``uncited``: a citation of a fact not retrieved this turn (under ``cite-only``, a sentence
  that cites none);
- ``price``: a price or an amount; ``guarantee``: a guarantee, warranty, money back, a promise;
- ``offer``: a discount, a percentage off, a free period, a coupon, unless the pack declares it
  (pack.yaml ``offers``);
- ``action_claim``: a claim that something was done (refunded, sent, cancelled, booked...) or a
  promise to do it, unless a tool with that effect finished this turn;
- ``link``: a URL or email address that is neither the pack's own nor in a fact retrieved this
  turn on the pack's own domain;
- ``instructions``: text repeating the system prompt or a role's, or talking about instructions;
- ``markup``: HTML, script, markdown links or images;
- ``excluded_name``, ``questions`` (more than one), ``empty``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.turn.gatewords import LANGUAGES

if TYPE_CHECKING:
    from bot.extend.retriever import Fact
    from bot.extend.tool import ToolEvent, ToolRegistry
    from bot.packs.model import Pack

CITATION = re.compile(r"\[([a-z0-9][a-z0-9_#-]*)\]")
_PRICE = re.compile(
    r"(?:[$€£¥]\s?\d)|(?:\d[\d,.]*\s?(?:usd|eur|gbp|dollars?|euros?|pounds?|cents?)\b)"
    r"|(?:\d[\d,.]*\s?(?:/|per)\s?(?:month|mo|year|yr|user|seat)\b)",
    re.IGNORECASE,
)
_GUARANTEE = re.compile(
    r"\b(?:guarantee[sd]?|guaranteeing|warrant(?:y|ies|ed)?|money[- ]back|promise[sd]?|"
    r"100\s?% (?:uptime|secure|safe))\b",
    re.IGNORECASE,
)
_NUMBER_WORD = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|a|an)"
_OFFER = re.compile(
    r"\b\d+(?:\.\d+)?\s?(?:%|percent)(?:\s+|-)(?:off|discount|cheaper|less|reduction|savings?)\b"
    r"|\b(?:discount(?:s|ed)?|coupons?|promo(?:tion(?:al)?)?\s+codes?|vouchers?|rebates?|"
    r"cash\s?back|half[- ]price|price[- ]match|on the house|complimentary|"
    r"free of charge|at no (?:extra |additional )?(?:cost|charge)|waive[sd]?)\b"
    r"|\bfree\s+(?:trials?|months?|years?|weeks?|days?|periods?|upgrades?|seats?|access|"
    r"for\s+" + _NUMBER_WORD + r")\b"
    r"|\b" + _NUMBER_WORD + r"[- ](?:days?|weeks?|months?|years?)\s+(?:free|on us)\b"
    r"|\b(?:months?|years?|weeks?)\s+(?:is\s+|are\s+)?(?:free|on us)\b",
    re.IGNORECASE,
)
#: Claimed actions, by the effect a tool must have had for the claim to be true.
EFFECTS: dict[str, tuple[str, ...]] = {
    "refund": ("refund", "refunded", "credit", "credited", "reimburse", "reimbursed"),
    "send": ("send", "sent", "email", "emailed", "mail", "mailed", "resend", "resent"),
    "change": (
        "change", "changed", "update", "updated", "add", "added", "remove", "removed",
        "upgrade", "upgraded", "downgrade", "downgraded", "apply", "applied", "modify",
        "modified", "reset", "activate", "activated", "deactivate", "deactivated", "enable",
        "enabled", "disable", "disabled", "unlock", "unlocked", "increase", "increased",
        "reduce", "reduced", "create", "created", "transfer", "transferred", "process",
        "processed", "issue", "issued",
    ),
    "book": ("book", "booked", "schedule", "scheduled", "reserve", "reserved"),
    "cancel": ("cancel", "cancelled", "canceled", "terminate", "terminated", "close", "closed"),
    "delete": ("delete", "deleted", "erase", "erased"),
}  # fmt: skip
_VERB = {word: effect for effect, words in EFFECTS.items() for word in words}
#: A done action is told in the past ("refunded", "sent"); a promised one with a plain verb.
_PAST = "|".join(sorted((w for w in _VERB if w.endswith("ed") or w in ("sent", "resent", "reset")),
                        key=len, reverse=True))  # fmt: skip
_BASE = "|".join(sorted((w for w in _VERB if not w.endswith("ed")), key=len, reverse=True))
_ACTION = re.compile(
    rf"\b(?:i|we)(?:'ve| have| had)?(?: just| already| now)?\s+(?P<a>{_PAST})\b"
    rf"|\bi(?:'ll| will| am going to|'m going to)(?: now| just| go ahead and)?\s+(?P<b>{_BASE})\b"
    rf"|\b(?:has|have|had)\s+(?:now\s+|just\s+|already\s+)?been\s+(?P<c>{_PAST})\b"
    rf"|\b(?:your|order\s+#?\d+)(?:\s+[\w'-]+){{0,6}}?\s+(?:is|are|was|were)\s+(?:now\s+|already\s+)?"
    rf"(?P<d>{_PAST})\b"
    rf"|\b(?P<e>{_BASE})\s+(?:is\s+|was\s+|has\s+been\s+)?"
    r"(?:complete[d]?|done|successful|confirmed|finished)\b"
    r"|^\s*(?P<f>done|all set|success)\b",
    re.IGNORECASE | re.MULTILINE,
)
#: Every language's claims and offers apply to every draft (bot/turn/gatewords.py): a model
#: that answers in another language than the customer's is gated all the same.
_CLAIMS: tuple[tuple[re.Pattern[str], dict[str, str]], ...] = (
    (_ACTION, _VERB),
    *((lang.action, lang.verbs) for lang in LANGUAGES.values()),
)
_OFFERS: tuple[re.Pattern[str], ...] = (_OFFER, *(lang.offer for lang in LANGUAGES.values()))
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'()\[\]]+", re.IGNORECASE)
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b")
_MARKUP = re.compile(
    r"<\s*/?\s*[a-zA-Z!][^>]*>|\bjavascript\s*:|\bdata\s*:\s*text/html|\bon[a-z]+\s*=\s*[\"']"
    r"|!?\[[^\]]*\]\([^)]*\)|&(?:lt|gt|#x?[0-9a-f]+);",
    re.IGNORECASE,
)
_INSTRUCTION_TALK = re.compile(
    r"\b(?:system prompt|(?:my|the|these|your|previous|prior|above|earlier)\s+instructions|"
    r"ignore (?:all |any |the )?(?:previous|prior|above|earlier)|developer message|"
    r"i (?:was|am|have been) (?:told|instructed|programmed) to|as an ai(?: language model)?|"
    r"jailbreak|prompt injection)\b",
    re.IGNORECASE,
)
#: How many words in a row a draft may share with its instructions before it repeats them.
SHARED_WORDS = 7
#: Where one sentence ends: after its closing punctuation and any citations that follow it.
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?![\[])")


@dataclass(frozen=True)
class Allowances:
    """What the pack itself vouches for: offers a draft may repeat, its own addresses (and their
    domains, which a retrieved fact's link must be on), and its instructions, which no draft may
    repeat. Built by :func:`allowances`; never from a fact."""

    offers: tuple[str, ...] = ()
    links: frozenset[str] = frozenset()
    domains: frozenset[str] = frozenset()
    instructions: tuple[str, ...] = ()


@dataclass
class Draft:
    """One draft and everything a rule may look at."""

    text: str
    body: str  # the text without citation markers
    fact_keys: set[str]
    facts: list[Fact]
    effects: frozenset[str]
    allow: Allowances
    excluded_names: list[str]
    require_citations: bool
    instructions: str


@dataclass
class GateResult:
    passed: bool
    reasons: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)  # the rule of each reason, in order


Rule = Callable[[Draft], list[str]]


def _uncited(d: Draft) -> list[str]:
    out = [
        f"cites {key!r}, which was not retrieved this turn"
        for key in dict.fromkeys(CITATION.findall(d.text))
        if key not in d.fact_keys
    ]
    if d.require_citations:
        for sentence in _SENTENCE.split(d.text.strip()):
            if sentence.strip() and not any(k in d.fact_keys for k in CITATION.findall(sentence)):
                out.append(f"has a sentence without a resolved citation ({sentence[:60]!r})")
    return out


def _price(d: Draft) -> list[str]:
    m = _PRICE.search(d.body)
    return [f"states a price or amount ({m.group(0).strip()!r})"] if m else []


def _guarantee(d: Draft) -> list[str]:
    m = _GUARANTEE.search(d.body)
    return [f"makes a guarantee ({m.group(0)!r})"] if m else []


def _offer(d: Draft) -> list[str]:
    declared = [
        (m.start(), m.end())
        for offer in d.allow.offers
        for m in re.finditer(re.escape(offer), d.body, re.IGNORECASE)
    ]
    for pattern in _OFFERS:
        for m in pattern.finditer(d.body):
            if not any(start <= m.start() and m.end() <= end for start, end in declared):
                return [f"makes a commercial promise the pack does not declare ({m.group(0)!r})"]
    return []


def _action_claim(d: Draft) -> list[str]:
    for pattern, verbs in _CLAIMS:
        for m in pattern.finditer(d.body):
            word = next(g for g in m.groups() if g).lower()
            effect = verbs.get(word, "any")
            if effect in d.effects or (effect == "any" and d.effects):
                continue
            what = "that" if effect == "any" else f"no {effect}"
            return [f"claims an action ({m.group(0).strip()!r}), but {what} ran this turn"]
    return []


def _link(d: Draft) -> list[str]:
    fact_text = " ".join(f.text for f in d.facts)
    for found in [*_URL.findall(d.body), *_EMAIL.findall(d.body)]:
        link = found.rstrip(".,;:!?")
        if link.lower() in d.allow.links:
            continue
        if link in fact_text and _on_pack_domain(link, d.allow.domains):
            continue
        return [f"gives a link or address the pack does not ({link!r})"]
    return []


def _instructions(d: Draft) -> list[str]:
    if m := _INSTRUCTION_TALK.search(d.body):
        return [f"talks about its instructions ({m.group(0)!r})"]
    said = _shingles(d.body)
    for source in (d.instructions, *d.allow.instructions):
        shared = said & _shingles(source)
        if shared:
            return [f"repeats its instructions ({' '.join(sorted(shared)[0])!r})"]
    return []


def _markup(d: Draft) -> list[str]:
    m = _MARKUP.search(d.text)  # the text as written: "[key](url)" is a link, not a citation
    return [f"contains markup ({m.group(0)[:40]!r})"] if m else []


def _excluded(d: Draft) -> list[str]:
    return [
        f"names {name!r}, which the pack excludes"
        for name in d.excluded_names
        if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", d.body, re.IGNORECASE)
    ]


def _questions(d: Draft) -> list[str]:
    n = d.body.count("?")
    return [f"asks {n} questions; at most one is allowed"] if n > 1 else []


def _empty(d: Draft) -> list[str]:
    return [] if d.body.strip() else ["is empty"]


#: The rules, in the order a refusal lists them.
RULES: tuple[tuple[str, Rule], ...] = (
    ("uncited", _uncited),
    ("price", _price),
    ("guarantee", _guarantee),
    ("offer", _offer),
    ("action_claim", _action_claim),
    ("link", _link),
    ("instructions", _instructions),
    ("markup", _markup),
    ("excluded_name", _excluded),
    ("questions", _questions),
    ("empty", _empty),
)


def check(
    draft: str,
    fact_keys: set[str],
    excluded_names: list[str],
    require_citations: bool = False,
    *,
    facts: Iterable[Fact] = (),
    effects: Iterable[str] = (),
    allow: Allowances | None = None,
    instructions: str = "",
) -> GateResult:
    """Every rule over ``draft``. ``require_citations`` (a flow step's ``cite-only`` mod): every
    sentence must cite a fact retrieved this turn. ``facts``: those retrieved this turn (a link
    may come from one); ``effects``: what tools that finished this turn did (:func:`effects_of`);
    ``instructions``: the system text the draft was written under, which it may not repeat."""
    d = Draft(
        text=draft,
        body=CITATION.sub("", draft),
        fact_keys=fact_keys,
        facts=list(facts),
        effects=frozenset(effects),
        allow=allow or Allowances(),
        excluded_names=excluded_names,
        require_citations=require_citations,
        instructions=instructions,
    )
    result = GateResult(True, citations=list(dict.fromkeys(CITATION.findall(draft))))
    for name, rule in RULES:
        for reason in rule(d):
            result.reasons.append(reason)
            result.rules.append(name)
    result.passed = not result.reasons
    return result


def effects_of(events: Iterable[ToolEvent], tools: ToolRegistry | None = None) -> set[str]:
    """The effects of the tools that finished (status ok) among ``events``: a claim of one of
    them is true this turn. Only a tool that changes something has an effect (a lookup has none);
    which one comes from the words of its name (``orders.refund_order``: refund)."""
    out: set[str] = set()
    for event in events:
        if event["event"] != "finished" or event["detail"].get("status") != "ok":
            continue
        tool = tools.get(event["tool"]) if tools is not None else None
        if tool is not None and not (tool.changes or tool.repeat):
            continue
        words = re.split(r"[^a-z]+", event["tool"].lower())
        named = {_VERB[w] for w in words if w in _VERB}
        if tool is not None or named:
            out |= named or {"change"}
    return out


def allowances(pack: Pack) -> Allowances:
    """What ``pack``'s own files vouch for (see :class:`Allowances`)."""
    own: list[str] = [pack.booking.get("url") or "", pack.booking.get("contact") or ""]
    own += [h.email or "" for h in pack.helpdesks]
    own += [t for templates in pack.templates.values() for t in templates.values()]
    found = [x for text in own for x in [*_URL.findall(text), *_EMAIL.findall(text)]]
    links = {x.rstrip(".,;:!?").lower() for x in found}
    domains = {_domain(link) for link in links} - {""}
    roles = [getattr(r, "prompt", "") for r in pack.roles.values()]
    return Allowances(tuple(pack.offers), frozenset(links), frozenset(domains),
                      tuple(r for r in roles if r))  # fmt: skip


def _domain(link: str) -> str:
    if "@" in link and "://" not in link:
        return link.rsplit("@", 1)[1].lower()
    host = re.sub(r"^(?:https?://)?(?:www\.)?", "", link.lower()).split("/")[0].split(":")[0]
    return host.rsplit("@", 1)[-1]


def _on_pack_domain(link: str, domains: frozenset[str]) -> bool:
    host = _domain(link)
    return any(host == d or host.endswith("." + d) for d in domains)


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i : i + SHARED_WORDS]) for i in range(len(words) - SHARED_WORDS + 1)}


def strip_citations(draft: str) -> str:
    """The text a customer sees: citation markers removed (sources travel beside the text)."""
    return re.sub(r"\s+([.,!?])", r"\1", re.sub(r"\s{2,}", " ", CITATION.sub("", draft))).strip()

"""The offline repeat reader: what each phrase of a message calls for in a repeat step.

A customer building something up writes several changes in one message ("add 3 seats, scratch
the storage pack"). The message is cut into phrases; each phrase gets a distribution over actions
(add, remove, change, undo, done, none), what it names (an item the step declares), how many, and
the record a change would alter (the referent: the last record mentioned). The pick is the most
likely action, and it must pass the repeat gate.

One rule runs before the pick. When an earlier phrase of the same message took a record off,
changing that record and adding are one and the same action ("scratch the storage pack, make it
3 seats": the storage pack is gone, so "make it" can only add), so their probabilities are counted
together. Without that fold the phrase stays a 0.62 / 0.33 split and the step asks which was meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.text import STOPWORDS, has_phrase, normalise, tokens

VERSION = "repeat-lexicon@3"
ACTIONS = ("add", "remove", "change", "undo", "done", "none")

_SPLIT = re.compile(r"[,;.!?\n]+|\s+(?:and then|and|then|but|plus also|also)\s+", re.IGNORECASE)
_NUMBER = re.compile(r"\b(\d{1,4})\b")
_WORDS = {
    "one": 1,
    "a": 1,
    "an": 1,
    "another": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple": 2,
    # The pack's other languages ("ajoutez trois licences", "añadir dos asientos")
    "un": 1,
    "une": 1,
    "deux": 2,
    "trois": 3,
    "quatre": 4,
    "cinq": 5,
    "dos": 2,
    "tres": 3,
    "cuatro": 4,
    "cinco": 5,
    "ein": 1,
    "eine": 1,
    "einen": 1,
    "zwei": 2,
    "drei": 3,
    "vier": 4,
    "f\u00fcnf": 5,
}
_UNDO = ("undo", "undo that", "take that back", "scratch that", "revert that", "cancel that")
_DONE = (
    "done",
    "that's all",
    "thats all",
    "finished",
    "nothing else",
    "that's it",
    "all good",
    "c'est tout",
    "termin\u00e9",
    "eso es todo",
    "nada m\u00e1s",
    "das war's",
    "fertig",
)
_REMOVE = (
    "remove",
    "drop",
    "scratch",
    "cancel",
    "take off",
    "take away",
    "get rid of",
    "minus",
    "fewer",
    "less",
    "without",
    "delete",
    "no more",
    "lose",
    # the verbs of shrinking a count ("reduce our seats by three", "cut 2 licences")
    "reduce",
    "decrease",
    "cut",
    "lower",
    "retirez",
    "retirer",
    "enlevez",
    "supprimez",
    "quitar",
    "quitad",
    "eliminar",
    "elimine",
    "entfernen",
    "entfernen sie",
    "weniger",
)
_ADD = (
    "add",
    "more",
    "extra",
    "plus",
    "another",
    "also",
    "include",
    "throw in",
    "put in",
    # the verbs of growing a count ("bump us by 4 seats", "increase our seats by 5")
    "bump",
    "increase",
    "raise",
    "ajoutez",
    "ajouter",
    "rajoutez",
    "a\u00f1adir",
    "a\u00f1ada",
    "a\u00f1ade",
    "agregar",
    "agregue",
    "m\u00e1s",
    "hinzuf\u00fcgen",
    "hinzu",
    "zus\u00e4tzliche",
    "mehr",
)
_CHANGE = (
    "make it",
    "make that",
    "make them",
    "change it to",
    "change that to",
    "set it to",
    "instead",
    "should be",
    "switch to",
    "actually",
    # a count given as the new total ("reduce it to 5 seats"), not as the change
    "reduce to",
    "reduce it to",
    "increase to",
    "increase it to",
    "bump to",
    "bump it to",
    "down to",
    "up to",
)
#: "take 1 storage pack off": the verb and its particle apart.
_TAKE_OFF = re.compile(r"\btake\b(?:(?!\b(?:and|but|then)\b).)*?\b(?:off|away|out)\b")
#: A new total given with a verb of changing, however far apart ("change the number of users
#: on our account to 25", "can we go from 8 to 12 members"): the count is the one after "to".
_TO_TOTAL = re.compile(
    r"\b(?:change|changing|set|update|adjust|bring|take|move|go|going|increase|reduce|lower)\b"
    r"(?:(?!\b(?:and|but|then)\b).)*?\bto (\w+)\b"
)
#: The old total and the new, after a verb of changing ("drop us from 20 licences to 15", "bump
#: my client's plan from 12 users up to 15"): a change to the new total, whatever the verb says
#: of its direction.
_FROM_TO = re.compile(
    r"\bfrom (\d{1,3})\b(?:(?!\b(?:and|but|then)\b).){0,30}?\bto (\d{1,3})\b"
    # (not a time, a date, an age or a price: "from 9 to 5 every day", "from 1 june to 30 june")
    r"(?!\s*(?:am|pm|h|years?|yrs?|months?|weeks?|days?|hours?|mins?|minutes?|%|percent|eur|usd"
    r"|gbp|dollars?|euros?|pounds?|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january"
    r"|february|march|april|june|july|august|september|october|november|december)\b)"
)
_POLITE = {"thanks", "thank", "please", "ok", "okay", "great", "cool", "cheers", "hi", "hello"}


@dataclass
class Reading:
    """One phrase as the reader understood it. ``scores`` sum to 1 over :data:`ACTIONS`."""

    phrase: str
    scores: dict[str, float]
    item: str | None = None
    #: Where the item came from: ``phrase`` (named there), ``message`` (an earlier phrase),
    #: ``conversation`` (an earlier change), ``question`` (the agent's own question), ``default``.
    item_from: str = "none"
    quantity: int | None = None  # None with remove: all of it
    target: str | None = None  # the record a change alters
    folded: bool = False
    pick: str = "none"
    confidence: float = 0.0
    cues: list[str] = field(default_factory=list)  # what in the phrase carried meaning

    def describe(self) -> dict[str, object]:
        return {
            "phrase": self.phrase,
            "pick": self.pick,
            "confidence": round(self.confidence, 4),
            "item": self.item,
            "quantity": self.quantity,
            "target": self.target,
            "folded": self.folded,
            "scores": {k: round(v, 4) for k, v in self.scores.items() if v},
        }


def split(text: str) -> list[str]:
    return [p.strip() for p in _SPLIT.split(text) if p and p.strip()]


def named_item(norm: str, items: dict[str, list[str]]) -> str | None:
    """The declared item a phrase names (its longest matching name wins)."""
    best: tuple[int, str] | None = None
    for item, names in items.items():
        for name in (item.replace("_", " "), *names):
            if has_phrase(norm, normalise(name)) and (best is None or len(name) > best[0]):
                best = (len(name), item)
    return best[1] if best else None


def _count(norm: str) -> int | None:
    m = _NUMBER.search(norm)
    if m:
        return int(m.group(1))
    found = [n for w, n in _WORDS.items() if has_phrase(norm, w)]
    return max(found) if found else None


def _any(norm: str, words: tuple[str, ...]) -> list[str]:
    return [w for w in words if has_phrase(norm, w)]


def _verbs(norm: str) -> tuple[list[str], list[str], list[str], int | None]:
    """The verbs of changing a phrase says (to remove, add, change) and its count: a new total
    after "to" ("change the number of users on our account to 25"), or the new one of an old and
    a new total ("drop us from 20 licences to 15")."""
    count = _count(norm)
    remove, add, change = _any(norm, _REMOVE), _any(norm, _ADD), _any(norm, _CHANGE)
    parted = _TAKE_OFF.search(norm)
    if parted is not None and not remove:
        remove = [parted.group(0)]
    total = _TO_TOTAL.search(norm)
    if total is not None and not change and _count(total.group(1)) not in (None, 1):
        change, count = [total.group(0)], _count(total.group(1))  # "to a" is no total
    span = _FROM_TO.search(norm)
    if span is not None and (remove or add or change) and not _NUMBER.search(norm[: span.start()]):
        # (only with a verb of changing, "we grew from 2 to 5 people" orders nothing, and with no
        # count of its own before: "add 3 seats from 1 june to 30 june" adds 3)
        remove, add, change, count = [], [], remove + add + change, int(span.group(2))
    if "no more" in remove:
        add = [w for w in add if w != "more"]
    return remove, add, change, count


def read_phrase(
    phrase: str,
    items: dict[str, list[str]],
    referent: tuple[str, str] | None,
    previous: Reading | None = None,
) -> Reading:
    """One phrase. ``referent`` is the last record mentioned and where it was mentioned
    (``message``, ``conversation``, ``question`` or ``default``); ``previous`` is the phrase
    before it in the same message, whose verb a bare "and 2 storage packs" carries on."""
    norm = normalise(phrase)
    undo, done = _any(norm, _UNDO), _any(norm, _DONE)
    item = named_item(norm, items)
    r = Reading(phrase, {a: 0.0 for a in ACTIONS})
    if undo:
        r.scores["undo"], r.scores["none"], r.cues = 0.95, 0.05, undo
        return r
    if done and item is None:
        r.scores["done"], r.scores["none"], r.cues = 0.95, 0.05, done
        return r
    remove, add, change, count = _verbs(norm)
    r.cues = remove + add + change
    if item is not None:
        r.item, r.item_from = item, "phrase"
    elif referent is not None:
        r.item, r.item_from = referent
    r.quantity = count
    if remove and not add and not change:
        r.scores.update(remove=0.9, none=0.1)
    elif change and not (add and count is not None and "more" in add):
        r.target = referent[0] if referent is not None else item
        if item is not None and r.target is not None and item != r.target:
            # "make it 3 seats" after storage packs: replace them, or add seats?
            r.scores.update(change=0.62, add=0.33, none=0.05)
        elif r.item is not None and count is not None:
            r.target = r.item
            r.scores.update(change=0.88, add=0.07, none=0.05)
    elif add and count is not None:
        r.scores.update(add=0.9, none=0.1)
    elif count is not None and (item is not None or r.item is not None):
        if previous is not None and previous.pick in ("add", "remove") and item is not None:
            # "remove 2 seats and 1 storage pack": the verb carries on
            r.scores.update({previous.pick: 0.85, "none": 0.15})
        else:
            r.scores.update(add=0.75, change=0.2, none=0.05)
            r.target = r.item
    if sum(r.scores.values()) == 0:
        r.scores["none"] = 1.0
    if r.scores["remove"] and r.item is None:
        r.scores.update(remove=0.0, none=1.0)
    return r


def read_message(
    text: str,
    items: dict[str, list[str]],
    referent: tuple[str, str] | None = None,
    removed: frozenset[str] = frozenset(),
) -> list[Reading]:
    """Every phrase of a message, in order, each picked after the fold. ``removed``: records
    already taken off before the message was read (a change the customer just said no to)."""
    out: list[Reading] = []
    removed_: set[str] = set(removed)
    previous: Reading | None = None
    for phrase in split(text):
        r = read_phrase(phrase, items, referent, previous)
        if r.scores["change"] and r.target in removed_:
            # The record a change would alter is already off: changing it is adding.
            r.scores["add"] += r.scores["change"]
            r.scores["change"] = 0.0
            r.folded = True
        r.pick, r.confidence = max(r.scores.items(), key=lambda kv: kv[1])
        if r.pick == "remove" and r.item:
            removed_.add(r.item)
        if r.item is not None and r.item_from == "phrase":
            referent = (r.item, "message")
        out.append(r)
        previous = r
    return out


def substantive(phrase: str) -> bool:
    """A phrase with something in it beyond politeness (for "anything missing?")."""
    return any(t not in _POLITE and t not in STOPWORDS for t in tokens(phrase))

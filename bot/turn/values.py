"""Values: typed proposals read from the conversation, kept only if the customer wrote them.

The offline readers are deterministic extractors (emails, phone numbers, order ids, numbers, dates)
plus the bare answer to the question just asked. Whatever proposes a value (these extractors or a
model), :func:`verbatim` decides: a value not found word for word in the customer's own messages is
rejected, and the rejection is recorded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.packs import Pack
from bot.turn.turn import ValueEntry

EXTRACTORS: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"),
    # Unprompted, a phone number must look like one (a + or separators); a bare run of digits
    # is as likely an order number. Asked for a phone, any 7-15 digit run will do.
    "phone": re.compile(r"(?<![\w+])(?:\+\d[\d ().-]{5,}\d|\d{2,4}[ .-]\d[\d ().-]{3,}\d)(?!\w)"),
    "phone_asked": re.compile(r"(?<![\w+])\+?\d[\d ().-]{5,}\d(?!\w)"),
    "order_id": re.compile(r"(?i)(?:order|invoice)\s*(?:id|number|no\.?)?\s*#?\s*([A-Z0-9-]{4,})"),
    # The pack's other languages: "pour la commande 1042", "para el pedido 1042", "für die
    # Bestellung Nr. 1042". The id must hold a digit: "ma commande pour..." names none.
    "order_id_words": re.compile(
        r"(?i)\b(?:commande|facture|pedido|factura|bestellung|rechnung)\s*"
        r"(?:n[°º]\s*|num[ée]ro\s*|n[úu]mero\s*|nummer\s*|nr\.?\s*)?#?\s*"
        r"(?=[A-Z0-9-]*\d)([A-Z0-9-]{4,})|\b(?:bestell|rechnungs)nummer\s*#?\s*([A-Z0-9-]{4,})"
    ),
    "date": re.compile(
        r"\b(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}"
        r"|\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|"
        r"sep|oct|nov|dec)[a-z]*(?: \d{4})?)\b",
        re.IGNORECASE,
    ),
    "number": re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w.])"),
}

#: Confidence the deterministic extractors report: a pattern match is strong but not certain.
EXTRACTOR_CONFIDENCE = 0.95
BARE_ANSWER_CONFIDENCE = 0.9
BURIED_CONFIDENCE = 0.7


@dataclass
class Proposal:
    slot: str
    value: str
    confidence: float
    source: str = "customer"


def verbatim(value: str, customer_texts: list[str]) -> bool:
    """The trust rule: a customer value must appear word for word in what the customer wrote."""
    return bool(value) and any(value in text for text in customer_texts)


def _extract(kind: str, text: str) -> str | None:
    match = EXTRACTORS[kind].search(text)
    if not match:
        return None
    groups = [g for g in match.groups() if g]
    return (groups[0] if groups else match.group(0)).strip()


def propose(pack: Pack, text: str, asked_slot: str | None) -> list[Proposal]:
    """Offline proposals for this message; at most one per slot (a value is read once a message)."""
    out: dict[str, Proposal] = {}
    for slot in pack.slots:
        asked = asked_slot == slot.name
        # Numbers and dates are too common to read unprompted; emails, phones and order ids are not.
        if slot.type == "text" or (slot.type in ("number", "date") and not asked):
            continue
        kind = "phone_asked" if slot.type == "phone" and asked else slot.type
        found, confidence = _extract(kind, text), EXTRACTOR_CONFIDENCE
        if slot.type == "order_id" and found is None:
            found = _extract("order_id_words", text)
        if slot.type == "order_id" and found is None and asked:
            # A bare "5843990922" is an order id because that is what we just asked for; one
            # buried in a sentence might be something else, so it is checked before it is kept.
            found = _extract("number", text)
            confidence = BARE_ANSWER_CONFIDENCE if text.strip() == found else BURIED_CONFIDENCE
        if found:
            out[slot.name] = Proposal(slot.name, found, confidence)
    if asked_slot and asked_slot not in out:
        asked_for = pack.slot(asked_slot)
        answer = text.strip().rstrip(".!")
        # A question back ("does it do X?") is not an answer to ours.
        bare = 0 < len(answer) <= 300 and not text.strip().endswith("?")
        if asked_for is not None and asked_for.type == "text" and bare:
            out[asked_slot] = Proposal(asked_slot, answer, BARE_ANSWER_CONFIDENCE)
    return list(out.values())


def read_values(
    pack: Pack,
    proposals: list[Proposal],
    customer_texts: list[str],
    known: dict[str, Any],
    threshold: float,
) -> list[ValueEntry]:
    """Check each proposal and return the record's ``values`` entries (stored ones have outcome
    ``act``). A value already known is not read again."""
    entries: list[ValueEntry] = []
    for p in proposals:
        entry: ValueEntry = {
            "slot": p.slot,
            "value": None,
            "source": p.source,
            "outcome": "skip",
            "confidence": p.confidence,
            "rejected": [],
        }
        if p.slot in known:
            entry["rejected"].append({"value": p.value, "reason": "already known"})
        elif p.source == "customer" and not verbatim(p.value, customer_texts):
            entry["rejected"].append({"value": p.value, "reason": "not verbatim in customer text"})
        elif p.confidence < threshold:
            entry["outcome"] = "unsure"
            entry["rejected"].append({"value": p.value, "reason": "below value gate"})
        else:
            entry["value"], entry["outcome"] = p.value, "act"
        entries.append(entry)
    return entries

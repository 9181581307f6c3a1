"""The reply gate: every model-written draft passes it before a customer sees it.

Checks: each citation resolves to a fact retrieved this turn; no price, amount or guarantee; no
excluded name; at most one question. None of these can be switched off by text in the draft.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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


#: Where one sentence ends: after its closing punctuation and any citations that follow it.
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?![\[])")


@dataclass
class GateResult:
    passed: bool
    reasons: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)


def check(
    draft: str, fact_keys: set[str], excluded_names: list[str], require_citations: bool = False
) -> GateResult:
    """``require_citations`` (a flow step's ``cite-only`` mod): every sentence must cite a fact
    retrieved this turn."""
    reasons = []
    cited = list(dict.fromkeys(CITATION.findall(draft)))
    for key in cited:
        if key not in fact_keys:
            reasons.append(f"cites {key!r}, which was not retrieved this turn")
    if require_citations:
        for sentence in _SENTENCE.split(draft.strip()):
            if sentence.strip() and not any(k in fact_keys for k in CITATION.findall(sentence)):
                reasons.append(f"has a sentence without a resolved citation ({sentence[:60]!r})")
    body = CITATION.sub("", draft)
    if m := _PRICE.search(body):
        reasons.append(f"states a price or amount ({m.group(0).strip()!r})")
    if m := _GUARANTEE.search(body):
        reasons.append(f"makes a guarantee ({m.group(0)!r})")
    for name in excluded_names:
        if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", body, re.IGNORECASE):
            reasons.append(f"names {name!r}, which the pack excludes")
    if body.count("?") > 1:
        reasons.append(f"asks {body.count('?')} questions; at most one is allowed")
    if not body.strip():
        reasons.append("is empty")
    return GateResult(not reasons, reasons, cited)


def strip_citations(draft: str) -> str:
    """The text a customer sees: citation markers removed (sources travel beside the text)."""
    return re.sub(r"\s+([.,!?])", r"\1", re.sub(r"\s{2,}", " ", CITATION.sub("", draft))).strip()

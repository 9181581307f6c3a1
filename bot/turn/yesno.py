"""The offline yes/no reader: the probability that a reply means yes.

Used for "Just to check, is X right?" and read-backs. Its output passes the yesNo gate on
|2p - 1|, so a hedged reply ("maybe", "I think so?") is unsure, never a yes.

The lexicons hold English and the sample pack's other languages (French, Spanish, German) in one
list each: a flow run in French is confirmed by "oui", and the gate logic is the same for every
language. Accents are folded first ("sí", "ça", "sûr" read as "si", "ca", "sur"), so a reply
typed without them reads the same.
"""

from __future__ import annotations

import unicodedata

from bot.text import has_phrase, normalise
from bot.turn.gates import yes_no_outcome
from bot.turn.turn import Read

VERSION = "yesno-lexicon@2"

_YES = [
    "yes",
    "yeah",
    "yep",
    "yup",
    "sure",
    "correct",
    "right",
    "that's right",
    "exactly",
    "affirmative",
    "ok",
    "okay",
    "go ahead",
    "please do",
    "sounds good",
    "confirmed",
    "y",
    # French
    "oui",
    "ouais",
    "c'est ca",
    "c'est bien ca",
    "d'accord",
    "exact",
    "exactement",
    "tout a fait",
    "bien sur",
    "absolument",
    "allez y",
    "vas y",
    "volontiers",
    "parfait",
    # Spanish
    "si",
    "claro",
    "vale",
    "de acuerdo",
    "exacto",
    "correcto",
    "por supuesto",
    "adelante",
    "perfecto",
    # German
    "ja",
    "jawohl",
    "genau",
    "stimmt",
    "richtig",
    "korrekt",
    "klar",
    "einverstanden",
    "in ordnung",
    "passt",
    "gerne",
]
_NO = [
    "no",
    "nope",
    "nah",
    "not",
    "wrong",
    "incorrect",
    "don't",
    "do not",
    "never",
    "n",
    "that's wrong",
    "not right",
    # French ("pas d'accord" holds a yes and a no: unsure, asked again)
    "non",
    "pas",
    "faux",
    "jamais",
    "surtout pas",
    # Spanish ("no" is English's too)
    "incorrecto",
    "nunca",
    "para nada",
    # German
    "nein",
    "nicht",
    "falsch",
    "keinesfalls",
    "auf keinen fall",
]
_HEDGE = [
    "maybe",
    "perhaps",
    "not sure",
    "i think",
    "probably",
    "i guess",
    "kind of",
    "peut etre",
    "je crois",
    "je pense",
    "probablement",
    "pas sur",
    "quizas",
    "tal vez",
    "creo que",
    "no estoy seguro",
    "no se",
    "vielleicht",
    "ich glaube",
    "wahrscheinlich",
    "nicht sicher",
    "weiss nicht",
]


def _folded(text: str) -> str:
    """``text`` without accents, so the lexicons hold one spelling of a word."""
    decomposed = unicodedata.normalize("NFKD", text.replace("ß", "ss"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def p_yes(text: str) -> float:
    norm = normalise(_folded(text))
    yes = any(has_phrase(norm, w) for w in _YES)
    no = any(has_phrase(norm, w) for w in _NO)
    hedged = any(has_phrase(norm, w) for w in _HEDGE) or text.strip().endswith("?")
    if yes == no:  # neither, or both ("yes... no wait")
        return 0.5
    p = 0.95 if yes else 0.05
    if hedged:
        p = 0.7 if yes else 0.3
    return p


def read(text: str, gate: str, threshold: float, head: str = "yesno") -> Read:
    """A reply read as yes or no, as the turn record keeps it: ``answer`` is yes, no or None (an
    even reading), ``outcome`` act only when the gate ``gate`` at ``threshold`` is passed."""
    p = p_yes(text)
    outcome, confidence = yes_no_outcome(p, threshold)
    answer = "yes" if p > 0.5 else "no" if p < 0.5 else None
    return {
        "head": head,
        "version": VERSION,
        "answer": answer,
        "confidence": round(confidence, 4),
        "gate": gate,
        "threshold": threshold,
        "outcome": outcome if answer is not None else "unsure",
    }

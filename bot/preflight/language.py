"""Which of the pack's languages a message is written in: py3langid, whose model ships inside the
package (nothing downloads at run time), restricted to the languages the pack has templates for.

Short messages ("hi", "ok") give weak readings; the confidence says so and the threshold keeps
them from switching the conversation's language.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

from bot.text import CLAUSE_WORDS, tokens

_identifiers: dict[tuple[str, ...], Any] = {}
_lock = threading.Lock()


def available() -> bool:
    try:
        import py3langid  # noqa: F401
    except ImportError:
        return False
    return True


def _identifier(languages: tuple[str, ...]) -> Any:
    with _lock:
        if languages not in _identifiers:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            known = set(ident.labels)
            ident.set_languages([lang for lang in languages if lang in known])
            _identifiers[languages] = ident
        return _identifiers[languages]


def detect(text: str, languages: list[str]) -> tuple[str | None, float]:
    """(language, probability among ``languages``), or (None, 0.0) when it cannot tell."""
    langs = tuple(sorted(set(languages)))
    if not text.strip() or not langs or not available():
        return None, 0.0
    if len(langs) == 1:
        return langs[0], 1.0  # one language to choose from: nothing to detect
    return _classified(text, langs)


@lru_cache(maxsize=2048)
def _classified(text: str, langs: tuple[str, ...]) -> tuple[str | None, float]:
    """One reading per text and language set: a turn asks about its message three or four times
    (pre-flight, the reply's language, the flow's, knowledge search's), and the identifier is a
    pure function of the two."""
    ident = _identifier(langs)
    if not ident.nb_classes:
        return None, 0.0
    label, probability = ident.classify(text)
    return str(label), float(probability)


#: Languages a message is also read against before it is taken for one of the pack's: among the
#: pack's template languages alone, Portuguese reads as Spanish and Italian or Dutch as nothing
#: sure, so an Italian question went through the English path ("Per quanto tempo vengono
#: conservati i log delle build?") and a Dutch one was declined as out of scope. Widely written
#: languages (those a multilingual encoder commonly covers); none of the English lines of the
#: sample pack's sets reads as any of them.
WIDE = ("ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh")


def written_in(text: str, languages: list[str]) -> tuple[str | None, float]:
    """The message's language: among :data:`WIDE` and ``languages`` when that reading is sure
    (:data:`SURE`), else among ``languages`` alone (a short Spanish line, "¿Funciona con GitHub?",
    is surer among fewer)."""
    lang, p = detect(text, sorted({*WIDE, *languages}))
    if lang and p >= SURE:
        return lang, p
    return detect(text, languages)


#: Where a message mixing languages is cut into clauses: punctuation before a space or the end
#: ("99.9%", "v2.3.1" and "10:30" stay whole), and the Spanish opening marks. A clause is read on
#: its own from :data:`bot.text.CLAUSE_WORDS` words.
_CLAUSE = re.compile(r"[,.;:?!]+(?=\s|$)|[\u00bf\u00a1]")


def split_by_language(text: str, own: str, languages: list[str]) -> tuple[frozenset[str], str]:
    """The other languages of a message that mixes the pack's language ``own`` with others,
    clause by clause (none unless a clause is in ``own`` too), and its text without the clauses
    read in them: "can you bump up our seats? estamos creciendo rápido" reads as English at 0.62
    as a whole, its clauses as English and Spanish at 0.99, so ({"es"}, "can you bump up our
    seats"). A clause counts from :data:`~bot.text.CLAUSE_WORDS` words, read as surely as a
    whole message (:data:`SURE`)."""
    kept, found = [], set[str]()
    for clause in _CLAUSE.split(text):
        lang = None
        if len(clause.split()) >= CLAUSE_WORDS:
            read, p = written_in(clause, languages)
            lang = read if read and p >= SURE else None
        if lang is not None:
            found.add(lang)
        if lang in (None, own):
            kept.append(clause)
    others = frozenset(found - {own}) if own in found else frozenset()
    return others, " ".join(" ".join(kept).split())


#: A turn is answered in the message's language when it reads this surely as one the pack has
#: templates for, from this many words on (shorter messages give weak readings).
SURE = 0.9
MIN_WORDS = 3


#: Letters of scripts that set no spaces between words (Chinese, Japanese, Thai) or whose words
#: are long (Korean): "상담원 연결해주세요" (put me through to an agent) is two spaced words, and
#: its script alone says the language.
_DENSE_SCRIPT = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
#: ...so this many of its letters read as long enough.
DENSE_LETTERS = 4
#: A word in any script ("Сколько стоит подписка" is three).
_ANY_WORD = re.compile(r"[^\W\d_]+")


def long_enough(text: str, min_words: int = MIN_WORDS) -> bool:
    """Whether ``text`` is long enough for its language to be read: ``min_words`` words (as the
    pack's tokens count them, or in any script), or :data:`DENSE_LETTERS` letters of a script
    written densely."""
    if len(tokens(text)) >= min_words or len(_ANY_WORD.findall(text)) >= min_words:
        return True
    return written_densely(text)


def written_densely(text: str) -> bool:
    """Whether ``text`` has :data:`DENSE_LETTERS` letters of a script written densely."""
    return len(_DENSE_SCRIPT.findall(text)) >= DENSE_LETTERS


def reply_language(text: str, current: str, pack_language: str, templates: list[str]) -> str:
    """The language a turn's templates are said in: the message's own when it is confidently
    one the pack has templates for, else ``current`` (the conversation's)."""
    if not long_enough(text):
        return current
    lang, p = written_in(text, sorted({pack_language, *templates}))
    return lang if lang and p >= SURE and lang in templates else current

"""Words of English, so the typo channel leaves real words alone.

The channel (:meth:`gatebot_knowledge.lexical.Bm25Index.corrections`) reads a query word the
corpus never uses as the corpus word it is closest to. Spelled right, such a word is no typo: it
is a word the pack does not say, and "which country is our data in" read as "which count",
"can a branch reuse the cache" as "reset the cache" and "our own custom domain" as "our own
customer domain" put into the question words the customer never wrote, and took out the very
words that tell what the pack does not answer. So a word English knows is kept as written.

The word list is pyspellchecker's English frequency list (a word with its count in a large body
of text; about 160,000 words, shipped inside the wheel, nothing downloaded). Misspellings sit in
it with a small count or not at all ("pricng", "monitr", "pasword": 0), so a word counts as English
from :data:`MIN_COUNT`. Without the package, no word is known and the channel reads every unknown
word as before.
"""

from __future__ import annotations

from functools import lru_cache

#: A word seen fewer times than this in pyspellchecker's English list is not taken for a word.
#: Every typo on the sample pack's sets reads 0; the rarest real words they use read 50 and up
#: ("authenticator" 50, "reuse" 378).
MIN_COUNT = 20


@lru_cache(maxsize=1)
def _counts() -> dict[str, int] | None:
    try:
        from spellchecker import SpellChecker
    except ImportError:
        return None
    return dict(SpellChecker(language="en", distance=1).word_frequency.dictionary)


def _count(word: str) -> int:
    """How often ``word`` is seen in the list (0 without the package)."""
    counts = _counts()
    return 0 if counts is None else counts.get(word, 0)


def is_english(word: str) -> bool:
    """Whether ``word`` (lower case) is an English word, spelled right."""
    return _count(word) >= MIN_COUNT


#: A word this common is said, not named, even in capitals: "builds are SLOW", "deploys take
#: FOREVER" (slow 101,934, forever 59,493); "SWIFT" (6,378) or "Azure" (494) may name a thing.
COMMON_COUNT = 10_000


def is_common(word: str) -> bool:
    """Whether ``word`` (lower case) is a common English word (see :data:`COMMON_COUNT`)."""
    return _count(word) >= COMMON_COUNT

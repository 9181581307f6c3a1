"""Whether a message uses any word of a pack: the lexical half of the scope check's edge rule.

A message the domain check keeps only just (``domain:edge``) sits as close to the pack as many
generic lines do; "knock knock" is near the pack's greetings by the encoder's reckoning, but
shares no word with anything the pack says. A word of any text the domain check scores against
is an anchor (a declared keyword keeps a message before that check); function words and chat
words are not, since every pack's documents use them ("the", "out", "every").
Words are compared lightly stemmed (a plural, "-ing", "-ed"), so "builds" meets "build".
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.text import STOPWORDS, tokens

#: Words that say nothing about a topic: pronouns, auxiliaries, determiners, prepositions, the
#: pieces of contractions, greetings and hedges. Kept short: a word left out of here that a pack
#: happens to use only counts as an anchor, which keeps a message in scope (the safe side).
FUNCTION_WORDS = frozenset(
    (
        "about above across after again against all along also am among an any anyone anything"
        " around as away back be been between during into onto per since upon via within without"
        " before being both did doing done each else even ever every everyone everything few get"
        " gets getting go goes going gone got had has having he her here hers him his how's i'd"
        " i'll i've into it's just know let let's lot lots make many may maybe me mine more most"
        " much must need now off ok okay once one only other ought out over own really same say"
        " she should some someone something still such than thank thanks that's then these they"
        " thing things those through too under until up very was way we'd we're we've well were"
        " what's where's while who's whom whose why won't wouldn't yes yet you'd you'll you're"
        " you've hey hiya yeah yep sure lol oh ah um uh can't don't doesn't didn't isn't aren't"
        " wasn't weren't haven't hasn't couldn't shouldn't"
    ).split()
)

_SUFFIXES = ("ies", "ing", "ed", "s")


def stem(word: str) -> str:
    """One common English inflection off, then a final "e" ("caches", "cached" and "cache" all
    give "cach"), keeping three letters; a possessive "'s" goes first."""
    word = word.removesuffix("'s")
    out = word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            out = word[:-3] + "y" if suffix == "ies" else word[: -len(suffix)]
            break
    return out[:-1] if out.endswith("e") and len(out) > 3 else out


def content_words(text: str) -> list[str]:
    """The message's words that could name a topic, stemmed."""
    skip = STOPWORDS | FUNCTION_WORDS
    return [stem(w) for w in tokens(text) if w not in skip and not w.isdigit()]


def pack_words(texts: Iterable[str]) -> frozenset[str]:
    """Every content word of the pack's texts (see :func:`content_words`)."""
    return frozenset(w for text in texts for w in content_words(text))


def anchors(text: str, words: frozenset[str]) -> list[str]:
    """The message's content words that the pack uses too (none: nothing ties it to the pack)."""
    return [w for w in dict.fromkeys(content_words(text)) if w in words]

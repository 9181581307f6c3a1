"""Which FAQ entry a question asks, through the same hybrid ranking as knowledge search.

An FAQ entry is one passage: its question is the title (embedded apart) and its answer the text,
both read by BM25 and by the joint vector, so a paraphrase of either finds it. The match is the
best-ranked passage of the whole pack, when that passage is an FAQ entry: a document passage
ranked above every entry says the question is about something the FAQ does not hold.

Its confidence is one declared logistic over the hybrid score (see
:mod:`gatebot_knowledge.index`; an exact FAQ question scores about 1.2). On the sample pack,
paraphrases whose best entry answers them score 0.80 to 1.25 ("will monitor ping our slack
channel when the site goes down" 0.81, "I forgot my password, how do I get back in" 1.06), and
in-scope questions the entry does not answer stay under 0.70 ("does pipelines support
kubernetes" 0.70, "do you integrate with bitbucket" 0.66, "can pipelines run on ARM runners"
0.69). :data:`MATCH_AT` sits between, so pre-flight's FAQ threshold (0.85) routes from a score of
about 0.80. With BM25 alone there is no such scale, and no match is read (pre-flight then
compares the FAQ's keywords, as it does with the core's retriever).
"""

from __future__ import annotations

import math

import numpy as np

from bot.extend.retriever import FaqMatch
from gatebot_knowledge.index import KnowledgeIndex

MATCH_AT = 0.75
MATCH_SCALE = 0.03
#: A match read from closeness is never certain, however close (an exact question included).
MATCH_MOST = 0.995


def match_confidence(score: float) -> float:
    z = max(-40.0, min(40.0, (score - MATCH_AT) / MATCH_SCALE))
    return min(MATCH_MOST, 1.0 / (1.0 + math.exp(-z)))


def faq_match(index: KnowledgeIndex, query: str, qvec: np.ndarray) -> FaqMatch:
    """The FAQ entry ``query`` asks, on the hybrid ranking (see the module docstring)."""
    ranked = index.rank(query, 1, "hybrid", qvec)
    if not ranked or index.passages[ranked[0][0]].kind != "faq":
        return FaqMatch(None, 0.0, round(ranked[0][1], 4) if ranked else 0.0, "hybrid")
    row, score = ranked[0]
    confidence = round(match_confidence(score), 4)
    return FaqMatch(index.passages[row].key, confidence, round(score, 4), "hybrid")

"""The answerability check, between retrieval and wording: does the best fact answer the question?

Retrieval always finds the nearest passage; nearest is not the same as answering. A retriever that
can say how well its best passage fits (the knowledge plugin's ``evidence``: a small head over
retrieval features, see ``gatebot_knowledge.answerability``) gives P(answerable); the pack's
``answerable`` gate turns it into a read like any other head's:

- ``act``: P >= threshold. The best fact is answered from, as before.
- ``skip``: P <= 1 - threshold, a confident "no"; ``unsure`` in between. Either way no fact is
  asserted and no model is asked to word one: the act stage says honestly that this is not
  something it can confirm and offers a person.

A retriever without ``evidence`` (the core's BM25 one) keeps its own abstention: the read then
says so with the version :data:`RETRIEVER_GATE` and is certain either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from bot.extend.retriever import Fact, QueryVector, Retriever
from bot.turn.turn import Read

HEAD = "answerability"
GATE = "answerable"
#: The version of a read taken from the retriever's own abstention rather than a head.
RETRIEVER_GATE = "retriever-gate"


class Evidence(Protocol):
    """What a retriever's ``evidence(query, k)`` returns (attributes read, nothing imported)."""

    facts: list[Fact]  # the k best, ungated, best first
    features: dict[str, float]
    p_answerable: float
    version: str  # the head's, with the features it had: ".../dense" or ".../lexical"


@runtime_checkable
class GivesEvidence(Protocol):
    async def evidence(self, query: str, k: int = 3) -> Any: ...


@dataclass
class Checked:
    """The check's read, and the facts it vouches for (empty unless the read is ``act``)."""

    read: Read
    facts: list[Fact] = field(default_factory=list)

    @property
    def answers(self) -> bool:
        return self.read["outcome"] == "act"


def answer_read(p_answerable: float, threshold: float, version: str) -> Read:
    """The read for P(answerable): answer yes/no, its confidence, and act/skip/unsure."""
    answer = "yes" if p_answerable >= 0.5 else "no"
    confidence = p_answerable if answer == "yes" else 1.0 - p_answerable
    outcome = "unsure" if confidence < threshold else ("act" if answer == "yes" else "skip")
    return {
        "head": HEAD,
        "version": version,
        "answer": answer,
        "confidence": round(confidence, 4),
        "gate": GATE,
        "threshold": threshold,
        "outcome": outcome,
    }


def retriever_read(found: list[Fact], threshold: float) -> Read:
    """The read when the retriever has no head: its own gate found something, or nothing."""
    return answer_read(1.0 if found else 0.0, threshold, RETRIEVER_GATE)


async def check(
    retriever: Retriever,
    question: str,
    threshold: float,
    k: int = 3,
    vector: QueryVector | None = None,
) -> Checked | None:
    """The check through the retriever's ``evidence`` (given the question's ``vector`` when it
    takes one); None when it has none (the caller then searches as before and records
    :func:`retriever_read`)."""
    if not isinstance(retriever, GivesEvidence):
        return None
    if vector is not None and retriever.takes_vector and vector.text == question:
        evidence: Evidence = await retriever.evidence(question, k, vector=vector)  # type: ignore[call-arg]
    else:
        evidence = await retriever.evidence(question, k)
    read = answer_read(float(evidence.p_answerable), threshold, str(evidence.version))
    searched = getattr(evidence, "query", "")
    if searched:  # the query as the retriever searched it (typos spelled as the pack writes them)
        read["query"] = str(searched)
    checked = Checked(read)
    if checked.answers:
        checked.facts = list(evidence.facts)
    return checked

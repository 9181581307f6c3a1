"""Grouping what the agent could not answer into pack changes, by embedding.

Each question or request is embedded with the shared encoder (:mod:`bot.heads.encoder`, the one
under every head) and grouped by a single pass: a text joins the group whose centre it is closest
to when that closeness reaches ``threshold``, else it starts a group; a second pass puts every
text with its closest final centre, so the grouping does not hang on which text came first.

For each group the most central text becomes the suggested question. The pack's passages say
what kind of change it asks for: when none is near the group's centre (cosine below ``near``), the
pack has nothing on it and it is a new **FAQ** entry; when one is near but the question still went
unanswered, the document that should answer it falls short: a **document gap**.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from bot.unanswered.gather import Asked, gather

#: Cosine to a group's centre for a text to join it. Paraphrases of one question score 0.6-0.8
#: with the shipped encoder, two questions on one topic 0.4-0.6, unrelated ones below 0.2.
THRESHOLD = 0.5
#: Cosine from a group's centre to a passage above which the pack is taken to cover the topic.
NEAR = 0.5
EXAMPLES = 3

Embed = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class Passage:
    key: str
    title: str
    text: str


@dataclass
class Cluster:
    question: str  # the suggested question: the group's most central text
    suggestion: str  # "faq" or "document_gap"
    count: int
    kinds: dict[str, int]  # unanswered / out_of_scope
    conversations: int
    examples: list[str]  # distinct texts, the most central first
    first_seen: datetime
    last_seen: datetime
    nearest: dict[str, Any] | None = None  # {"key", "title", "similarity"} of the best passage
    members: list[Asked] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "suggestion": self.suggestion,
            "count": self.count,
            "kinds": self.kinds,
            "conversations": self.conversations,
            "examples": self.examples,
            "first_seen": self.first_seen.isoformat(),
            "last_seen": self.last_seen.isoformat(),
            "nearest": self.nearest,
        }


def unanswered_clusters(
    store: Any,
    *,
    since: datetime | None = None,
    passages: Sequence[Passage] = (),
    threshold: float = THRESHOLD,
    near: float = NEAR,
    embed: Embed | None = None,
) -> list[Cluster]:
    """What the agent could not answer in ``store`` (since ``since``), grouped, largest first."""
    return cluster_asked(
        gather(store, since), passages, threshold=threshold, near=near, embed=embed
    )


def cluster_asked(
    asked: list[Asked],
    passages: Sequence[Passage] = (),
    *,
    threshold: float = THRESHOLD,
    near: float = NEAR,
    embed: Embed | None = None,
) -> list[Cluster]:
    """``asked`` grouped by meaning, each group with its suggested pack change."""
    if not asked:
        return []
    encode = embed if embed is not None else _shipped_encoder()
    distinct = list(dict.fromkeys(a.text for a in asked))
    rows = np.asarray(encode(distinct), dtype=np.float32)
    by_text = dict(zip(distinct, rows, strict=True))
    vectors = np.stack([by_text[a.text] for a in asked])
    shelf = np.asarray(encode([_passage_text(p) for p in passages]), dtype=np.float32)
    groups = group(vectors, threshold)
    clusters = [_cluster([asked[i] for i in g], vectors[g], passages, shelf, near) for g in groups]
    return sorted(clusters, key=lambda c: (-c.count, -c.last_seen.timestamp(), c.question))


def group(vectors: np.ndarray, threshold: float) -> list[list[int]]:
    """Row indices in groups: single-pass leaders on unit vectors, then each row with its
    closest final centre."""
    sums: list[np.ndarray] = []
    for row in vectors:
        if sums:
            sims = _unit(np.stack(sums)) @ row
            best = int(np.argmax(sims))
            if sims[best] >= threshold:
                sums[best] = sums[best] + row
                continue
        sums.append(row.copy())
    centres = _unit(np.stack(sums))
    nearest = np.argmax(vectors @ centres.T, axis=1)
    members: dict[int, list[int]] = {}
    for i, c in enumerate(nearest.tolist()):
        members.setdefault(c, []).append(i)
    return [members[c] for c in sorted(members)]


def _cluster(
    asked: list[Asked],
    vectors: np.ndarray,
    passages: Sequence[Passage],
    shelf: np.ndarray,
    near: float,
) -> Cluster:
    centre = _unit(vectors.sum(axis=0, keepdims=True))[0]
    order = np.argsort(-(vectors @ centre), kind="stable").tolist()
    examples = list(dict.fromkeys(asked[i].text for i in order))[:EXAMPLES]
    nearest, closeness = None, -1.0
    if len(passages):
        sims = shelf @ centre
        best = int(np.argmax(sims))
        p, closeness = passages[best], round(float(sims[best]), 3)
        nearest = {"key": p.key, "title": p.title, "similarity": closeness}
    covered = closeness >= near
    times = [a.at for a in asked]
    return Cluster(
        question=suggested_question(examples[0]),
        suggestion="document_gap" if covered else "faq",
        count=len(asked),
        kinds=dict(Counter(a.kind for a in asked)),
        conversations=len({a.conversation_id for a in asked}),
        examples=examples,
        first_seen=min(times),
        last_seen=max(times),
        nearest=nearest,
        members=asked,
    )


def suggested_question(text: str) -> str:
    """A customer's words as an FAQ question: one line, capitalised, ending in a question mark."""
    line = " ".join(text.split())[:200].rstrip(" .!")
    if not line:
        return ""
    line = line[0].upper() + line[1:]
    return line if line.endswith("?") else line + "?"


def _shipped_encoder() -> Embed:
    from bot.heads.encoder import embed_shipped

    return embed_shipped


def _passage_text(passage: Passage) -> str:
    return f"{passage.title}: {passage.text}" if passage.title else passage.text


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)

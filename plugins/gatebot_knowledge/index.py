"""The in-memory index: rank passages for a query by BM25, embeddings or both, and say whether a
passage is close enough to answer from.

Hybrid ranking is a normalised score combination, not reciprocal-rank fusion (RRF scored well
below embeddings alone on stackfaq-dev: it throws away how far apart the scores are):

    joint = cos(query, title + text)
    score = max(cos(query, title), joint) + W_JOINT * joint
            + W_BM25 * bm25 / max(bm25 over the corpus for this query)

Cosines of unit vectors are already on one scale across queries; BM25 is not, so it is divided by
the query's best score. The title (an FAQ's question, a document's title and heading) is embedded
apart from the passage: a customer's question is a paraphrase of a question far more than of an
answer, and on stackfaq-dev the title alone beats the joint vector. It enters through ``max`` so
that a document passage, whose title is a generic "Acme Monitor overview", competes on its text
rather than being outscored by every FAQ question that is vaguely alike. Weights were tuned on one
half of stackfaq-dev's threads and checked on the other (``bench/knowledge.py tune``, see
bench/README.md); "embeddings" mode is the plain baseline, one vector per passage.

Every mode scores the whole corpus with numpy (a matrix-vector product and a sparse sum), so
there is no approximate index to build or tune; at 100,000 passages a query stays in milliseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from bot.text import one_typo_apart
from gatebot_knowledge.lexical import STOPWORDS, Bm25Index, stem, tokenize
from gatebot_knowledge.passages import Passage
from gatebot_knowledge.shorthand import written_out

MODES = ("hybrid", "embeddings", "bm25")

#: Hybrid's weights (the title/joint maximum weighs 1). Held-out tuning on stackfaq-dev put the
#: best pair at (0.2, 0.08) on one half and (0.4, 0.03) on the other; this sits between them.
W_JOINT, W_BM25 = 0.3, 0.03

#: A passage answers when its title or its text is at least this close to the question (on the
#: sample pack, unrelated questions stay under 0.3 and answerable ones reach 0.45)...
MIN_COSINE = 0.45
#: ...or when it holds this share of the question's informative words, with a BM25 score of at
#: least MIN_BM25: the core lexical retriever's rule, so BM25 mode abstains as the core does. (The
#: core's minimum is 1.5; bm25s' Lucene scores leave out Okapi's constant factor k1 + 1 = 2.5.)
MIN_COVERAGE = 0.5
MIN_BM25 = 1.5 / 2.5


@dataclass
class Vectors:
    """Unit vectors: one per passage (title + text) and one per distinct title, and one per way
    a passage is also asked (the pack's ``asked``), which counts as a title of that passage."""

    joint: np.ndarray  # (passages, dim) float32
    titles: np.ndarray  # (distinct titles, dim) float32
    title_row: np.ndarray  # (passages,) int: which title row each passage has
    asked: np.ndarray | None = None  # (asked questions, dim) float32
    asked_row: np.ndarray | None = None  # (asked questions,) int: whose passage each is

    def title_scores(self, qvec: np.ndarray, rows: list[int] | None = None) -> np.ndarray:
        """Each passage's (or each of ``rows``') title cosine: the best of its title and the
        ways it is also asked."""
        scores = (self.titles @ qvec)[self.title_row]
        if self.asked is not None and self.asked_row is not None and len(self.asked_row):
            np.maximum.at(scores, self.asked_row, self.asked @ qvec)
        return scores if rows is None else scores[rows]

    def asked_scores(self, qvec: np.ndarray, questions: np.ndarray) -> np.ndarray:
        """Each passage's best cosine among the ways it is asked: its asked questions, and its
        title where ``questions`` (a mask over passages) says the title is a question (an FAQ
        entry's). -1 for a passage asked no way."""
        scores = np.where(questions, (self.titles @ qvec)[self.title_row], -1.0)
        if self.asked is not None and self.asked_row is not None and len(self.asked_row):
            np.maximum.at(scores, self.asked_row, self.asked @ qvec)
        return scores

    def subset(self, keep: list[int]) -> Vectors:
        """The vectors of the passages at ``keep``, in that order (their asked questions too)."""
        asked, asked_row = self.asked, self.asked_row
        if asked is not None and asked_row is not None:
            new = {old: i for i, old in enumerate(keep)}
            mine = [j for j, r in enumerate(asked_row.tolist()) if r in new]
            asked = asked[mine]
            asked_row = np.array([new[int(asked_row[j])] for j in mine], dtype=np.int64)
        title_row = np.asarray(self.title_row)[keep]
        return Vectors(self.joint[keep], self.titles, title_row, asked, asked_row)


#: Above this many passages, ``KnowledgeIndex.said`` is BM25's vocabulary as it stands.
SAID_MAX_PASSAGES = 5000
#: Two words are read as one written word (see ``KnowledgeIndex._joined``) of this many letters
#: or more: shorter joins are too often two words meant ("log in", "set up").
JOINED_LETTERS = 6
#: First words never joined to the next: stop words ("in voice" stays) and the determiners of
#: "every one of our users", "any one", "some body".
_NOT_JOINED = STOPWORDS | frozenset({"every", "any", "some", "no", "same"})
#: Words after which a phrase has ended: "get hub for ...", "get lab we have ...".
_PHRASE_ENDS = STOPWORDS | frozenset(
    "we i you they he she it our my your their that which who for with and or but so".split()
)


class KnowledgeIndex:
    def __init__(
        self,
        passages: list[Passage],
        vectors: Vectors | None = None,
        lexical: Bm25Index | None = None,
    ) -> None:
        self.passages = passages
        self.by_key = {p.key: i for i, p in enumerate(passages)}
        # ``lexical``: BM25 built earlier over these same passages (read back from the store).
        self.lexical = lexical or Bm25Index([p.lexical for p in passages])
        self.vectors = vectors
        # Which passages' titles are questions (FAQ entries'): a document's title is no way it
        # is asked (see Vectors.asked_scores).
        self.faq_rows = np.array([p.kind == "faq" for p in passages], dtype=bool)
        self.w_joint, self.w_bm25 = W_JOINT, W_BM25  # per index, so tuning can try others
        self._surfaces: dict[str, str] = {}  # a stem's surface word, for spelled()
        self._plain: KnowledgeIndex | None = None  # see without_asked()
        self._said: frozenset[str] | None = None  # see said
        self._written: frozenset[str] | None = None  # see written
        self._text: str | None = None  # see _text_as_written
        # written words by length and last three letters, for _one_word
        self._by_end: dict[tuple[int, str], list[str]] | None = None
        if vectors is not None and len(vectors.joint) != len(passages):
            raise ValueError(f"{len(vectors.joint)} vectors for {len(passages)} passages")

    @property
    def said(self) -> frozenset[str]:
        """The words (stems) the passages say: BM25's vocabulary less the words only the pack's
        ``asked`` questions use. The checks of an action or a thing the pack never names
        (.specific) read this, with the best passage's own asked words: an asked question is
        how customers word a question, not a fact, and one passage's ("can an unanswered alert
        move on to my backup?") says nothing of another. A corpus of more than
        :data:`SAID_MAX_PASSAGES` passages keeps BM25's vocabulary (tokenizing it all again
        would cost seconds)."""
        if self._said is None:
            if not any(p.asked for p in self.passages) or len(self.passages) > SAID_MAX_PASSAGES:
                self._said = frozenset(self.lexical.vocab)
            else:
                self._said = frozenset(t for p in self.passages for t in tokenize(p.said))
        return self._said

    @property
    def written(self) -> frozenset[str]:
        """The words the passages write, as written (lower case, unstemmed): whether the pack
        says "Windows" itself or only "window" (see .packfit's NAMES_LIKE_WORDS)."""
        if self._written is None:
            self._written = frozenset(self._text_as_written().split())
        return self._written

    def _text_as_written(self) -> str:
        """Every passage's words as written (lower case), a space between and at each end (so a
        phrase is looked for whole without copying the text): what ``written`` and
        :meth:`_says` read."""
        if self._text is None:
            words = (" ".join(re.findall(r"[a-z0-9]+", p.lexical.lower())) for p in self.passages)
            self._text = f" {' '.join(words)} "
        return self._text

    def spelled(self, query: str) -> str:
        """``query`` with chat shorthand written out (:mod:`.shorthand`: "PRs" -> "pull
        requests") and each word the BM25 vocabulary reads as a typo written as the corpus
        writes it ("whats teh pricng" -> "whats teh pricing"): the retriever searches this, on
        both sides (an encoder reads "pricng" as noise too). Unchanged when nothing was
        corrected. Ranking and evaluation below read the query they are given as it is."""
        query = written_out(query, self._knows, self._says)
        query = self._joined(query)
        fixes = self.lexical.corrections(query)
        if not fixes:
            return query

        def fix(match: re.Match[str]) -> str:
            fixed = fixes.get(stem(match.group(0).lower()))
            return match.group(0) if fixed is None else self._surface(fixed)

        return re.sub(r"[A-Za-z0-9]+", fix, query)

    def _joined(self, query: str) -> str:
        """``query`` with two neighbouring words that a passage writes as one word joined:
        "does your pipe lines build those" -> "pipelines", and, by speech-to-text, "we use get
        hub for everything" -> "github" (the second word whole at the written word's end, one
        letter off at most before it). Only into a written word of :data:`JOINED_LETTERS` or
        more, after a first word that is no stop word or determiner (:data:`_NOT_JOINED`: "in
        voice" and "every one" stay), where no passage writes the two words apart."""
        found = list(re.finditer(r"[A-Za-z]+", query))
        if len(found) < 2:
            return query
        out, last, skip = [], 0, False
        for i, (first, second) in enumerate(pairwise(found)):
            if skip:
                skip = False
                continue
            a, b = first.group(0).lower(), second.group(0).lower()
            gap = query[first.end() : second.start()]
            if gap.strip() or a in _NOT_JOINED or len(b) < 3 or len(a + b) < JOINED_LETTERS:
                continue
            # (the phrase ends at the message's end, a stop or a word that starts another)
            nxt = found[i + 2] if i + 2 < len(found) else None
            ends = nxt is None or bool(query[second.end() : nxt.start()].strip())
            ends = ends or (nxt is not None and nxt.group(0).lower() in _PHRASE_ENDS)
            word = self._one_word(a, b, ends)
            if word is not None:
                out += [query[last : first.start()], word]
                last, skip = second.end(), True
        return "".join([*out, query[last:]]) if out else query

    def _one_word(self, a: str, b: str, ends: bool) -> str | None:
        """The written word ``a`` and ``b`` make together, or None (see :meth:`_joined`). One
        letter off only where ``b`` ends its phrase ("we use get hub for everything", not "we've
        got lab machines"). The candidates are looked up first, the corpus searched for the two
        words apart last."""
        joined = a + b
        if joined in self.written:
            word: str | None = joined
        elif not ends:
            word = None
        else:
            if self._by_end is None:
                self._by_end = {}
                for w in self.written:
                    self._by_end.setdefault((len(w), w[-3:]), []).append(w)
            same = self._by_end.get((len(joined), b[-3:]), [])
            near = [w for w in same if w.endswith(b) and one_typo_apart(joined, w)]
            word = near[0] if len(near) == 1 else None
        return None if word is None or self._says(f"{a} {b}") else word

    def _says(self, phrase: str) -> bool:
        """Whether a passage holds ``phrase`` (lower case, words as written)."""
        return f" {phrase} " in self._text_as_written()

    def _knows(self, word: str) -> bool:
        """Whether the corpus holds ``word`` (every stem of it)."""
        return all(t in self.lexical.vocab for t in tokenize(word))

    def _surface(self, term: str) -> str:
        """A word of the corpus that ``term`` is the stem of (the first found, kept)."""
        if term not in self._surfaces:
            self._surfaces[term] = term
            for p in self.passages:
                words = re.findall(r"[a-z0-9]+", p.lexical.lower())
                found = next((w for w in words if stem(w) == term), None)
                if found:
                    self._surfaces[term] = found
                    break
        return self._surfaces[term]

    def without_asked(self) -> KnowledgeIndex:
        """This index ranking on titles and texts alone (the ways passages are also asked left
        out); the same passages, BM25 and vectors otherwise."""
        v = self.vectors
        if v is None or v.asked is None:
            return self
        if self._plain is None:  # made once: building by_key walks every passage
            plain = KnowledgeIndex(
                self.passages, Vectors(v.joint, v.titles, v.title_row), self.lexical
            )
            plain.w_joint, plain.w_bm25, plain._surfaces = self.w_joint, self.w_bm25, self._surfaces
            self._plain = plain
        return self._plain

    @property
    def modes(self) -> tuple[str, ...]:
        return MODES if self.vectors is not None else ("bm25",)

    def scores(self, query: str, mode: str, qvec: np.ndarray | None = None) -> np.ndarray:
        """Every passage's score for ``query`` under ``mode``; ``qvec`` is the query's vector
        (needed unless mode is bm25)."""
        if mode not in self.modes:
            raise ValueError(f"mode {mode!r} is not available here (available: {self.modes})")
        if mode == "bm25":
            return self.lexical.scores(query)
        assert self.vectors is not None and qvec is not None
        if mode == "embeddings":
            return self.vectors.joint @ qvec
        title, joint, lexical = self.components(query, qvec)
        # In place: at 100,000 passages each temporary array costs a pass over 400 kB.
        score = np.maximum(title, joint, out=title)
        score += np.multiply(joint, self.w_joint, out=joint)
        score += np.multiply(lexical, self.w_bm25, out=lexical)
        return score

    def components(self, query: str, qvec: np.ndarray) -> tuple[np.ndarray, ...]:
        """Hybrid's three inputs for every passage: title cosine, joint cosine, BM25 / its max."""
        assert self.vectors is not None
        title = self.vectors.title_scores(qvec)
        joint = self.vectors.joint @ qvec
        bm25 = self.lexical.scores(query)
        best = float(bm25.max()) if len(bm25) else 0.0
        if best > 0:
            bm25 /= best
        return title, joint, bm25

    def rank(
        self, query: str, k: int, mode: str, qvec: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` best (row, score) pairs, best first; equal scores in reading order."""
        scores = self.scores(query, mode, qvec)
        if not len(scores) or k <= 0:
            return []
        k = min(k, len(scores))
        top = np.argpartition(scores, len(scores) - k)[-k:] if k < len(scores) else range(k)
        rows = sorted((int(r) for r in top), key=lambda r: (-float(scores[r]), r))
        if mode == "bm25":  # a passage sharing no word with the query is no match at all
            rows = [r for r in rows if scores[r] > 0]
        return [(r, float(scores[r])) for r in rows]

    def answerable(
        self, query: str, rows: list[int], mode: str, qvec: np.ndarray | None = None
    ) -> list[bool]:
        """Which of ``rows`` are close enough to the question to answer from (see MIN_*)."""
        if not rows:
            return []
        coverage = self.lexical.coverage(query, rows)
        bm25 = self.lexical.scores(query)[rows]
        lexical_ok = (coverage >= MIN_COVERAGE) & (bm25 >= MIN_BM25)
        if mode == "bm25" or self.vectors is None or qvec is None:
            return lexical_ok.tolist()
        v = self.vectors
        joint = v.joint[rows] @ qvec
        title = v.title_scores(qvec, rows)
        dense_ok = np.maximum(joint, title) >= MIN_COSINE
        return (dense_ok | lexical_ok).tolist()

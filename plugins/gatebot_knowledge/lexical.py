"""The lexical side: tokens and a BM25 index (bm25s), the fallback when embeddings are off.

Tokens are lower-case words without stop words, with a light suffix stripper ("builds" and
"building" meet "build"); with the title counted twice (see ``Passage.lexical``) BM25 nDCG@10 on
stackfaq-dev goes from 0.64 (plain words) to 0.72. bm25s scores with the Lucene variant of Okapi
BM25 (k1=1.5, b=0.75), the idf the core's lexical retriever uses.

bm25s keeps the index as a sparse matrix of precomputed per-word passage scores. Tokenizing
100,000 passages takes about 15 s in Python, more than a start may take, so the matrix can be
saved as arrays (:meth:`Bm25Index.to_arrays`) and the store hands them back at the next start.
Besides scores, :meth:`Bm25Index.coverage` says how much of a query's informative weight a passage
holds: one common word in common ("support") is not an answer.

Typos: a query word the corpus never uses is read as the corpus word it most likely misspells
(:meth:`Bm25Index.corrections`, which the retriever uses to rewrite a query before searching):
same first letter, at least :data:`TYPO_MIN_LETTERS` letters, and a rapidfuzz similarity of at
least :data:`TYPO_RATIO` ("pricng" reads as "pricing", "monitr" as "monitor"). Shorter words are
left alone: "long" is one edit from "log" and "last" from "least", and a four-letter word is as
likely a real word the corpus lacks as a typo, unless no English list knows it and two of its
neighbouring letters swapped back make a corpus word ("lnog"). So is a word English knows,
however long (:mod:`.dictionary`: "country" is no typo of "count", nor "reuse" of "reset"),
unless it is the corpus word with two neighbouring letters swapped ("trail" for "trial").
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from bot.text import STOPWORDS
from gatebot_knowledge.dictionary import is_english

#: Names the tokenizer and BM25 parameters: saved arrays made by another are rebuilt, not reused.
TOKENIZER = "words-stopwords-stem1/lucene-k1.5-b0.75"

_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ingly", "ings", "ing", "edly", "ed", "ies", "s")

#: A word this long or longer that the corpus never uses may be read as a typo of one it does...
TYPO_MIN_LETTERS = 5
#: ...when rapidfuzz's ratio (an edit similarity, 0-100) to that word is at least this. Measured
#: on the sample pack: typos score 83-93 ("dokcer" 83, "monitr" 92), real words the pack lacks at
#: most 77 ("recipe" against "receipt").
TYPO_RATIO = 80.0
#: A word this long or longer that no English list knows reads as the corpus word it is with two
#: neighbouring letters swapped back, the commonest slip ("lnog" for "long", "cahces").
SWAP_MIN_LETTERS = 4


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Strip one common English inflection, then a final "e" ("caches", "cached" and "cache" all
    give "cach"), keeping at least three letters."""
    out = word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            out = word[:-3] + "y" if suffix == "ies" else word[: -len(suffix)]
            break
    return out[:-1] if out.endswith("e") and len(out) > 3 else out


#: How customers talk rather than what they ask about: greetings and thanks, hedges ("actually",
#: "just", "I think"), pronouns of nobody in particular ("anyone", "everything"), auxiliaries and
#: the pieces contractions split into ("doesn't": "doesn", "t"). A word the corpus never uses
#: weighs as much as its rarest, so on a small pack, which uses few of them, "oops, I think I
#: deleted our workspace by accident. is everything gone??" held a quarter of its weight (P 0.57,
#: refused) and holds 44% without them (0.69). A chat word is left out of a query only where the
#: corpus never uses it: one that does (a large forum corpus says them all) keeps its own weight,
#: as before. Words a pack's answers say ("down", "own", "before", "every", "one") are not here.
CHAT_WORDS = (
    "hey hiya thanks thank cheers quick question questions wondering wonder curious oops ok okay"
    " lol yeah yes yep sure actually basically really just think guess maybe perhaps kinda"
    " anyone anybody anything everything something somebody someone everyone everybody"
    " possible able also any all some else tell know let get got gonna wanna"
    " am been being were should shall may might must"
    " don doesn didn isn aren wasn weren haven hasn won wouldn couldn shouldn cant dont doesnt"
    " didnt isnt arent wont hadn theres t s re ve ll d m"
    # Chat spellings with a digit, which would otherwise read as a coded name (see .packfit).
    " b4 gr8 l8r w8"
).split()
#: Who asks, not what about: "our DPO insists data stays in Europe", "a bunch of PMs who only look
#: at dashboards", "I'm CTO at a startup". Read as names the pack never says, they held answerable
#: questions below the gate (an acronym is otherwise a name: see .packfit). Left out of a query
#: as the chat words are.
ROLE_WORDS = "cto ceo cfo coo cio ciso cpo dpo vp vps pm pms sre sres qa hr infosec secops".split()
#: The customer's own paperwork and processes, not a thing they ask about: "For the technical
#: annex of our RFP I need to describe ...", "our SDLC auditors asked whether ...". Only words
#: that never name a feature ("RCA" or "KPI" may: "does Monitor do RCA?"), nor a rule the
#: customer asks the pack to meet ("Our SOP requires 90-day log retention, can you keep build
#: logs that long?").
PAPERWORK_WORDS = "rfp rfps rfi rfq sdlc dpia".split()

#: Query words that say a question is asked, not what it is about, and chat spellings of stop
#: words ("teh"), as stems. A query's words only (the index is unchanged): a small pack's
#: documents rarely say "what", so it weighed as a word the pack never uses and sank every
#: "what ..." question's coverage.
QUERY_STOPWORDS = frozenset(
    "what which where when who whom whose why wher hows thats theres teh hte adn ur pls plz im ive"
    " youre".split()
)
#: An address on the web, not a thing of its own: "how many probe sites hit our URLs?" asks
#: about the websites checked, which a page on checking websites names otherwise.
WEB_WORDS = "url urls".split()
CHAT_STEMS = frozenset(stem(w) for w in (*CHAT_WORDS, *ROLE_WORDS, *PAPERWORK_WORDS, *WEB_WORDS))
#: "what about SMS?" asks about SMS: the "about" of a follow-up is no word of the question (as a
#: query stop word everywhere it cost one false answer on stackfaq-dev's held-out questions).
_WHAT_ABOUT = re.compile(r"\b(what|how)\s+about\b", re.IGNORECASE)


def tokenize(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def _shared_start(a: str, b: str) -> int:
    """How many letters ``a`` and ``b`` begin with alike."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _swapped(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with two neighbouring letters swapped."""
    if len(a) != len(b) or a == b:
        return False
    at = [i for i in range(len(a)) if a[i] != b[i]]
    return len(at) == 2 and at[1] == at[0] + 1 and a[at[0]] == b[at[1]] and a[at[1]] == b[at[0]]


class Bm25Arrays(NamedTuple):
    """A built index, as the store keeps it."""

    num_docs: int
    vocab: list[str]  # word of each token id, in id order
    data: np.ndarray  # float32: a word's score in a passage
    indices: np.ndarray  # int32: the passage row of each score
    indptr: np.ndarray  # int64: where each token id's scores start


class Bm25Index:
    """bm25s over token lists; scores every passage for a query as one numpy array."""

    k1, b = 1.5, 0.75

    def __init__(self, texts: list[str]) -> None:
        import bm25s

        tokens = [tokenize(t) for t in texts]
        bm25 = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        if texts:
            # Passages with no words still get a row, so row numbers stay passage numbers.
            bm25.index([t or [""] for t in tokens], show_progress=False)
        self._setup(bm25, len(texts))

    @classmethod
    def from_arrays(cls, arrays: Bm25Arrays) -> Bm25Index:
        """The index saved by :meth:`to_arrays`, without tokenizing anything."""
        import bm25s

        bm25 = bm25s.BM25(k1=cls.k1, b=cls.b, method="lucene")
        # What bm25s' own BM25.load sets, from arrays instead of files.
        bm25.vocab_dict = {w: i for i, w in enumerate(arrays.vocab)}
        bm25.unique_token_ids_set = set(bm25.vocab_dict.values())
        bm25.scores = {
            "data": arrays.data,
            "indices": arrays.indices,
            "indptr": arrays.indptr,
            "num_docs": arrays.num_docs,
        }
        bm25.nonoccurrence_array = None
        index = cls.__new__(cls)
        index._setup(bm25, arrays.num_docs)
        return index

    def _setup(self, bm25: Any, n: int) -> None:
        self._bm25, self.n = bm25, n
        self.vocab: dict[str, int] = dict(getattr(bm25, "vocab_dict", None) or {})
        matrix = getattr(bm25, "scores", None) or {}
        # One column of passages per token id: df and coverage read it.
        self._indptr = np.asarray(matrix.get("indptr", np.zeros(1)), dtype=np.int64)
        self._rows = np.asarray(matrix.get("indices", np.zeros(0)), dtype=np.int64)
        df = np.diff(self._indptr)[: len(self.vocab)] if len(self.vocab) else np.zeros(0)
        self.idf = np.log(1 + (max(n, 1) - df + 0.5) / (df + 0.5))
        self._unseen = float(self.idf.max()) if len(self.idf) else 1.0
        self._by_letter: dict[str, list[str]] | None = None  # vocabulary by first letter
        self._typo_cache: dict[str, str | None] = {}

    @property
    def unseen_weight(self) -> float:
        """What a word the corpus never uses weighs: as much as its rarest word."""
        return self._unseen

    def to_arrays(self) -> Bm25Arrays:
        vocab = [""] * len(self.vocab)
        for word, tid in self.vocab.items():
            vocab[tid] = word
        matrix = getattr(self._bm25, "scores", None) or {}
        return Bm25Arrays(
            self.n,
            vocab,
            np.asarray(matrix.get("data", np.zeros(0)), dtype=np.float32),
            np.asarray(matrix.get("indices", np.zeros(0)), dtype=np.int32),
            self._indptr,
        )

    def query_terms(self, query: str) -> list[str]:
        """The query's words as the index reads them: stems, each once. Typos are not read here:
        the retriever rewrites the whole query first (``KnowledgeIndex.spelled``)."""
        return list(
            dict.fromkeys(
                t
                for t in tokenize(_WHAT_ABOUT.sub(r"\1", query))
                if t not in QUERY_STOPWORDS and (t not in CHAT_STEMS or t in self.vocab)
            )
        )

    def corrections(self, query: str) -> dict[str, str]:
        """Each query stem the corpus never uses that reads as a typo of one it does, mapped to
        that stem (the fuzzy channel of the module docstring)."""
        out = {}
        for word in _WORD.findall(query.lower()):
            if word in STOPWORDS:  # a stop word is spelled right ("there" is not "three")
                continue
            term = stem(word)
            if term in self.vocab or term in QUERY_STOPWORDS or term in CHAT_STEMS:
                continue  # (a chat word the corpus lacks is no typo of one it has)
            swapped = self._swap_of(word) if len(word) >= SWAP_MIN_LETTERS else None
            if swapped == "" or (swapped is None and len(word) < TYPO_MIN_LETTERS):
                continue  # a slip of a word the corpus lacks ("tehre": "there"), or too short
            if swapped:  # "cahces" is "caches", "lnog" is "long"
                out[term] = swapped
                continue
            fix = self._nearest(word)
            # Spelled right, a word is one the pack does not say (.dictionary), unless it is
            # the pack's word with two letters swapped, the commonest slip ("trail", "trial").
            if fix is not None and (not is_english(word) or _swapped(term, fix)):
                out[term] = fix
        return out

    def _swap_of(self, word: str) -> str | None:
        """The corpus stem ``word``, a word no English list knows, reads as with two neighbouring
        letters swapped back; "" when that makes a stop word ("tehre": "there", not "three") or,
        in a word too short for the ratio, another word or two corpus words; None otherwise. The
        ratio misses a swap in a short word, whose stem is shorter still ("cahces" scores 75
        against "cach")."""
        if is_english(word):
            return None
        other, found = None, set()
        for i in range(len(word) - 1):
            back = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
            if back in STOPWORDS:
                return ""  # "htis" is "this", not "hits"; "colud" is "could", not "cloud"
            term = stem(back)
            if term in self.vocab and term not in QUERY_STOPWORDS:
                found.add((i == 0, term))
            elif is_english(back):
                other = ""
        # The first letter kept first ("usre" is "user", not "sure"); two readings left, none.
        kept = {t for first, t in found if not first}
        if len(word) >= TYPO_MIN_LETTERS:  # (a short word's first letters swapped: a name, "Esat")
            kept = kept or {t for _, t in found}
        if len(kept) == 1:
            return next(iter(kept))
        # A longer word still goes to the ratio ("realy" is "really", though a swap makes
        # "relay"); a short one is left alone.
        return (other if not kept else "") if len(word) < TYPO_MIN_LETTERS else None

    def _nearest(self, word: str) -> str | None:
        if word not in self._typo_cache:
            from rapidfuzz import fuzz, process

            if self._by_letter is None:
                self._by_letter = defaultdict(list)
                for term in self.vocab:
                    self._by_letter[term[:1]].append(term)
            found = process.extract(
                word,
                self._by_letter.get(word[:1], []),
                scorer=fuzz.ratio,
                score_cutoff=TYPO_RATIO,
                limit=5,
            )
            # Ties go to the word sharing the longest beginning: "pricng" is as near "pric(e)"
            # as "ping(s)" by the ratio, and a slip is likelier late in a word than early.
            best = max(found, key=lambda f: (f[1], _shared_start(word, f[0])), default=None)
            if len(self._typo_cache) > 10_000:
                self._typo_cache.clear()
            self._typo_cache[word] = best[0] if best else None
        return self._typo_cache[word]

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every passage for ``query`` (zeros when no query word is indexed)."""
        terms = [t for t in self.query_terms(query) if t in self.vocab]
        if not terms or not self.n:
            return np.zeros(self.n, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(terms), dtype=np.float32)

    def known_share(self, text: str, row: int) -> float:
        """Share of the idf weight of ``text``'s words the corpus uses that the passage at ``row``
        holds (1.0 when it uses none): whether what ``text`` says of the pack's things is said
        there. Words the corpus never uses are the customer's own and not weighed."""
        held, total = self._held(text, [row], unseen=0.0)
        return float(held[0]) / total if total > 0 else 1.0

    def coverage(self, query: str, rows: list[int]) -> np.ndarray:
        """Share of the query's idf weight each passage in ``rows`` holds. A word the corpus never
        uses weighs as much as its rarest word, so unknown words lower every passage's share."""
        held, total = self._held(query, rows, unseen=self._unseen)
        return held / total if total > 0 else held

    def _held(self, query: str, rows: list[int], unseen: float) -> tuple[np.ndarray, float]:
        """The idf weight of the query's words each passage in ``rows`` holds, and the query's
        whole weight, a word the corpus never uses weighing ``unseen``."""
        held = np.zeros(len(rows), dtype=np.float64)
        total = 0.0
        wanted = np.asarray(rows, dtype=np.int64)
        for t in self.query_terms(query):
            tid = self.vocab.get(t)
            if tid is None:
                total += unseen
                continue
            weight = float(self.idf[tid])
            total += weight
            holders = self._rows[self._indptr[tid] : self._indptr[tid + 1]]
            held += weight * np.isin(wanted, holders)
        return held, total

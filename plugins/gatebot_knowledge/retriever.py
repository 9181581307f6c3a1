"""The knowledge retriever: builds the index from the store, answers searches and windowed reads.

Life cycle. The app builds the retriever in ``register_retrievers``' factory (no I/O there); the
``startup`` hook calls :meth:`KnowledgeRetriever.start`, which loads the index in a worker
thread and is awaited, so channels open with the index ready. A search that comes before that
(or after a build that failed) is answered from BM25 over the pack's passages, built on first
use, and its facts say so (mode ``bm25``): never an error, never a wait.

Building (:meth:`build`):

1. Passages: when the store holds this pack version (cut by this cutter), they are read back;
   otherwise the pack is cut again and the store synced by key (unchanged rows are not written).
2. Vectors: every distinct text to embed (each passage's title + text, and each title) is looked
   up by content hash under the model id; only the missing ones are embedded and stored. A restart
   embeds nothing; an edited document re-embeds only the passages whose text changed.
3. The in-memory index (:mod:`gatebot_knowledge.index`) is built and swapped in at once.

Without embeddings (GATEBOT_EMBEDDINGS=off, no package, a model that fails to load) step 2 is
skipped and every search runs on BM25, recorded as mode ``bm25``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bot.errors import ConfigError, GatebotError
from bot.extend.retriever import Fact, FaqMatch, QueryVector, Retriever
from bot.packs import Pack
from bot.store import Store
from bot.store import passages as stored
from gatebot_knowledge.answerability import DEPTH, Evidence, Umbrella, agreeing_rivals, assess
from gatebot_knowledge.embedder import Embedder, load_embedder
from gatebot_knowledge.faqmatch import faq_match
from gatebot_knowledge.figures import asked_value, holds_value, mentions_value
from gatebot_knowledge.index import MODES, KnowledgeIndex, Vectors
from gatebot_knowledge.lexical import TOKENIZER, Bm25Arrays, Bm25Index, tokenize
from gatebot_knowledge.multilingual import MIN_WORDS as CROSS_MIN_WORDS
from gatebot_knowledge.multilingual import CrossMatch, MultilingualFaq
from gatebot_knowledge.packfit import (
    MAX_PASSAGES,
    PackFit,
    cognate,
    declared_words,
    fit_pack,
    pack_queries,
    places_as_written,
    remove_rows,
    unseen_names,
)
from gatebot_knowledge.passages import Passage, attach_asked, pack_passages, text_hash
from gatebot_knowledge.sentences import (
    after_lead,
    asked_after_context,
    first_alternatives,
    points_back,
    points_before_itself,
    points_to_a_name,
    question_sentences,
    run_on_question,
    without_sign_off,
)

log = logging.getLogger(__name__)

#: Part of the stored pack version: bump it when the cutting rules change, so stored passages
#: cut by older rules are cut again even though the pack's files did not change.
CUTTER = "cut1"
#: Languages that capitalise every noun: a capital mid-sentence there names nothing.
NOUN_CAPITALS = frozenset({"de", "lb"})
#: A confident FAQ match raises P(answerable) only when its entry leads the next passage with
#: another title by this much cosine (the answerability features' ``dense_margin``). On the
#: sample pack the matches that answer lead by 0.24 or more; "hi there, is there a free plan or
#: is everything paid?" put the trial entry 0.01 ahead of the pricing one and was answered with
#: the trial.
FAQ_MATCH_CLEAR = 0.1
#: ...or when its entry leads the next passage of another document by this much in the hybrid
#: ranking itself, for a match this sure (:data:`FAQ_MATCH_SURE`): "our whole build is a
#: Dockerfile, will pipelines handle that?" puts the Docker entry 0.085 ahead in cosine but 0.18
#: ahead in the ranking, where the free-plan question's two entries sat 0.01 apart in both.
FAQ_MATCH_LEAD = 0.1
FAQ_MATCH_SURE = 0.95
#: A way the pack says a passage is asked (its ``asked``; an FAQ entry's question too) this close
#: to the message, nearer than any other passage's, vouches for the passage (see
#: :func:`_asked_match`). Measured over the sample pack's sets, on questions no rule spoke
#: against and the head read below 0.6: from 0.7, 18 answers and 1 unanswerable question; from
#: 0.65, 20 and 3; from 0.75, 9 and 0.
ASKED_MATCH_AT = 0.7
ASKED_MATCH_SCALE = 0.025
#: Below this coverage margin (the best passage's share of the message's words less the runner-
#: up's) no asked question vouches for the best passage: the runner-up holds the words.
ASKED_AGAINST_COVERAGE = -0.4
#: How many of the best passages by BM25 alone the words of a question without its product's name
#: are looked through for one that speaks for every product (:meth:`KnowledgeRetriever.
#: _for_every_product`).
EVERY_PRODUCT_RANKS = 3
#: The share of a lead clause's words of the pack's that the best passage must hold for the
#: question after it to be read alone (see ``KnowledgeRetriever._after_leads``).
LEAD_HELD = 0.34
#: Features that speak against a whole message (each of its sentences read alone included) and
#: that no FAQ match outweighs: a name the pack never mentions (.packfit), an action or thing it
#: never names, a plan or a price the passage does not name, a figure asked past (.specific).
AGAINST = (
    "unseen_names",
    "action_unseen",
    "thing_unseen",
    "thing_absent",
    "plan_missing",
    "price_missing",
    "beyond_stated",
    "other_doer",
)


#: The evidence against that a word of the message carries on its own: a name, a thing or an
#: action the pack never says (:meth:`KnowledgeRetriever._past_the_context`).
_NAMED_AGAINST = frozenset({"unseen_names", "action_unseen", "thing_unseen"})

#: A question whose subject points back, in its first few words: "does it get deleted?", "and
#: are they kept?" (the pronoun in lower case: "Does IT get notified?" asks about a department).
_STARTS_POINTING = re.compile(
    r"^\W*(?:[\w']+\s+){0,2}?(?-i:it|they|that|this|those|these)\b(?!\s+(?:is|are)\b)",
    re.IGNORECASE,
)


def leans_on_the_last(sentence: str) -> bool:
    """Whether ``sentence``, a question after another in the same message, points back and says
    little else: "..., what happens to the stuff they set up? does it get deleted?" (its "it" is
    the question before's; alone it reads as any deletion the pack speaks of). Not read alone."""
    return _STARTS_POINTING.match(sentence) is not None and len(tokenize(sentence)) < 3


#: A question whose last word points back: "Which tier unlocks that?", "do you support it?".
_ENDS_POINTING = re.compile(r"\b(?:that|this|it|them|those|these)\s*[?.!]*\s*$", re.IGNORECASE)


#: A question's words up to its question mark (what :meth:`KnowledgeRetriever._past_the_context`
#: reads after the question it found).
_ASKED = re.compile(r"[^.?!]+\?")
#: ...offering a choice: "Poland or Germany?".
_OFFERS = re.compile(r"\bor\b", re.IGNORECASE)


class UnknownKeyError(GatebotError, LookupError):
    """A read named a key the pack does not have."""


@dataclass
class BuildReport:
    passages: int = 0
    embedded: int = 0  # texts embedded by this build (titles and passages)
    synced: dict[str, int] = field(default_factory=dict)  # empty when read back unchanged
    mode: str = "bm25"
    model: str | None = None
    seconds: float = 0.0
    pack_fit: dict[str, Any] = field(default_factory=dict)  # see .packfit


def to_rows(passages: list[Passage]) -> list[stored.PassageRow]:
    return [
        stored.PassageRow(
            p.key, i, p.kind, p.title, p.text, p.source, p.keywords, p.content_hash, p.title_hash
        )
        for i, p in enumerate(passages)
    ]


def from_rows(rows: list[stored.PassageRow]) -> list[Passage]:
    return [Passage(r.key, r.title, r.text, r.source, r.kind, list(r.keywords)) for r in rows]


def embed_passages(
    passages: list[Passage],
    embedder: Embedder,
    store: Store | None = None,
    pack: str = "",
    progress: bool | None = None,
) -> tuple[Vectors, int]:
    """Vectors for ``passages``: from the store where it has them, embedded (and stored) where
    not. With ``store``, the passages must be synced there under ``pack`` first: stored vectors
    are found through them (one join, whichever pack embedded the text first). Returns the
    vectors and how many texts were embedded."""
    texts = {p.content_hash: p.joint for p in passages}
    texts.update({p.title_hash: p.title for p in passages})
    have: dict[str, np.ndarray] = {}
    if store is not None:
        for field_ in ("content_hash", "title_hash"):
            have.update(stored.pack_vectors(store, pack, embedder.model_id, field_))
    missing = [h for h in texts if h not in have]
    if missing:
        fresh = dict(
            zip(missing, embedder.embed([texts[h] for h in missing], progress), strict=True)
        )
        if store is not None:
            stored.put_vectors(store, embedder.model_id, fresh)
        have.update(fresh)
    joint = np.stack([have[p.content_hash] for p in passages]) if passages else np.zeros((0, 0))
    title_ids = {h: i for i, h in enumerate(dict.fromkeys(p.title_hash for p in passages))}
    titles = np.stack([have[h] for h in title_ids]) if title_ids else np.zeros((0, 0))
    rows = np.array([title_ids[p.title_hash] for p in passages], dtype=np.int64)
    vectors = Vectors(np.asarray(joint, np.float32), np.asarray(titles, np.float32), rows)
    embedded = len(missing)
    asked = [(i, q) for i, p in enumerate(passages) for q in p.asked]
    if asked:
        vectors.asked, n_fresh = _asked_vectors([q for _, q in asked], embedder, store)
        vectors.asked_row = np.array([i for i, _ in asked], dtype=np.int64)
        embedded += n_fresh
    return vectors, embedded


def _asked_vectors(
    questions: list[str], embedder: Embedder, store: Store | None
) -> tuple[np.ndarray, int]:
    """Vectors for the ways passages are also asked, stored by text hash like the rest (they are
    not passage columns, so they are looked up by hash); and how many were embedded."""
    hashes = [text_hash(q) for q in questions]
    have = stored.vectors_by_hash(store, embedder.model_id, hashes) if store is not None else {}
    missing = list(dict.fromkeys(h for h in hashes if h not in have))
    if missing:
        texts = dict(zip(hashes, questions, strict=True))
        fresh = dict(zip(missing, embedder.embed([texts[h] for h in missing]), strict=True))
        if store is not None:
            stored.put_vectors(store, embedder.model_id, fresh)
        have.update(fresh)
    return np.asarray(np.stack([have[h] for h in hashes]), np.float32), len(missing)


def load_index(
    name: str,
    version: str,
    cut: Callable[[], list[Passage]],
    embedder: Embedder | None,
    store: Store | None = None,
    progress: bool | None = None,
    attach: Callable[[list[Passage]], list[Passage]] = lambda passages: passages,
) -> tuple[KnowledgeIndex, BuildReport]:
    """Steps 1-3 of the module docstring for the pack stored as ``name``: passages (and BM25
    arrays) read back when the store holds ``version``, else ``cut()`` and synced; then vectors;
    then the index, whose BM25 arrays are saved when they had to be built."""
    started = time.perf_counter()
    report = BuildReport()
    lexical = None
    lexical_version = f"{version}/{TOKENIZER}"
    if store is not None and stored.stored_version(store, name) == version:
        passages = attach(from_rows(stored.load_passages(store, name)))
        saved = stored.load_bm25(store, name, lexical_version)
        if saved is not None and saved.num_docs == len(passages):
            lexical = Bm25Index.from_arrays(Bm25Arrays(*saved))
    else:
        passages = cut()
        if store is not None:
            report.synced = stored.sync_passages(store, name, version, to_rows(passages))
    vectors = None
    if embedder is not None and passages:
        vectors, report.embedded = embed_passages(passages, embedder, store, name, progress)
        report.model = embedder.model_id
    index = KnowledgeIndex(passages, vectors, lexical)
    if store is not None and lexical is None:
        stored.save_bm25(store, name, lexical_version, stored.Bm25Row(*index.lexical.to_arrays()))
    report.passages = len(passages)
    report.mode = "hybrid" if vectors is not None else "bm25"
    report.seconds = round(time.perf_counter() - started, 3)
    return index, report


class KnowledgeRetriever(Retriever):
    """Hybrid (embeddings + BM25) search over a pack's passages, kept in the store."""

    name = "knowledge"
    #: A turn hands over its message's embedding (:class:`bot.extend.retriever.QueryVector`).
    takes_vector = True

    def __init__(
        self,
        pack: Pack,
        store: Store | None = None,
        *,
        mode: str | None = None,
        embedder_loader: Callable[[], Embedder | None] = load_embedder,
        progress: bool | None = None,
    ) -> None:
        self.pack, self.store = pack, store
        wanted = mode or os.environ.get("GATEBOT_KNOWLEDGE_MODE", "").strip() or "hybrid"
        if wanted not in MODES:
            raise ConfigError(f"GATEBOT_KNOWLEDGE_MODE={wanted!r}: use one of {', '.join(MODES)}")
        self.wanted_mode = wanted
        self.embedder: Embedder | None = None
        self._load_embedder = embedder_loader
        self._progress = progress
        self._index: KnowledgeIndex | None = None  # the built index, swapped in whole
        self._fallback: KnowledgeIndex | None = None  # BM25 over the pack until then
        self._cross: tuple[KnowledgeIndex, MultilingualFaq] | None = None  # see .multilingual
        self._fit: tuple[KnowledgeIndex, PackFit] | None = None  # the built index's, see .packfit
        self._lock = threading.Lock()
        self._documents: dict[str, tuple[str, str]] | None = None
        self._vectors: dict[tuple[str, str], np.ndarray] = {}  # recent query vectors
        self._vectors_lock = threading.Lock()
        self.vectors_taken = 0  # queries whose vector the turn handed over (not embedded here)

    @classmethod
    def for_app(cls, app: Any) -> KnowledgeRetriever:
        return cls(app.pack, app.store)

    @property
    def ready(self) -> bool:
        return self._index is not None

    @property
    def mode(self) -> str:
        """The mode searches run in now: the wanted one if the index can, else bm25."""
        index = self._index
        if index is None or self.wanted_mode not in index.modes:
            return "bm25"
        return self.wanted_mode

    # -- building ------------------------------------------------------------------------------

    async def start(self) -> BuildReport:
        """Build in a worker thread. A failed build is logged and leaves BM25 answering: a
        customer is better served by lexical search than by an app that will not start."""
        try:
            return await asyncio.to_thread(self.build)
        except Exception:
            log.exception("knowledge: building the index of %s failed; BM25 only", self.pack.name)
            return BuildReport()

    def build(self) -> BuildReport:
        """Load or build the index (see the module docstring); safe to call again after edits."""
        with self._lock:
            self.embedder = self._load_embedder()
            self._index, report = load_index(
                self.pack.name,
                f"{self.pack.version}/{CUTTER}",
                lambda: pack_passages(self.pack),
                self.embedder,
                self.store,
                self._progress,
                lambda passages: attach_asked(passages, self.pack),
            )
            fit = self._pack_fit(self._index)
            self._fit = (self._index, fit)
            report.pack_fit = fit.as_dict()
        report.mode = self.mode
        log.info(
            "knowledge: %d passages of %s ready in %.2fs (mode %s, %d embedded)",
            report.passages,
            self.pack.name,
            report.seconds,
            report.mode,
            report.embedded,
        )
        return report

    def _umbrella(self) -> Umbrella:
        return Umbrella(self.pack.company, tuple(p.name for p in self.pack.products))

    def _pack_fit(self, index: KnowledgeIndex) -> PackFit:
        """The pack's calibration of the answerability head (:mod:`.packfit`): its own questions
        read with their answer removed. GATEBOT_PACK_FIT=off keeps the shipped head as it is."""
        declared = declared_words(self.pack)
        if os.environ.get("GATEBOT_PACK_FIT", "").strip().lower() in ("off", "0", "false", "no"):
            return PackFit(declared=declared)
        if len(index.passages) > MAX_PASSAGES:
            return PackFit(declared=declared)
        embedder = self.embedder
        mode = self.wanted_mode if self.wanted_mode in index.modes and embedder else "bm25"
        umbrella = self._umbrella()

        def negative(query: str) -> float | None:
            qvec = embedder.embed_query(query) if embedder is not None and mode != "bm25" else None
            rows = [r for r, _ in index.rank(query, DEPTH, mode, qvec)]
            if not rows:
                return None
            removed = {rows[0]} | {rows[pos] for pos in agreeing_rivals(index, rows)}
            rest = remove_rows(index, removed)
            if not rest.passages:
                return None
            return assess(rest, query, mode, qvec, 1, umbrella).p_answerable

        gate = float(self.pack.gates.get("answerable", 0.6))
        return fit_pack(pack_queries(self.pack), negative, gate, declared)

    # -- searching -----------------------------------------------------------------------------

    def _current(self) -> KnowledgeIndex:
        index = self._index
        if index is not None:
            return index
        if self._fallback is None:
            self._fallback = KnowledgeIndex(pack_passages(self.pack))
        return self._fallback

    def _query(
        self, query: str, vector: QueryVector | None = None
    ) -> tuple[KnowledgeIndex, str, np.ndarray | None, str]:
        """The index in hand, the mode it searches in, the query's vector (None in bm25) and the
        query as searched: spelled (:meth:`KnowledgeIndex.spelled`), typos read as the corpus
        words they misspell, for BM25 and the embedding alike. The vector is ``vector`` when it
        was made by this index's model from that same text, else embedded here."""
        # The mode follows the index in hand, not self.mode: a build may swap indexes meanwhile.
        index, embedder = self._current(), self.embedder
        mode = self.wanted_mode if self.wanted_mode in index.modes and embedder else "bm25"
        query = index.spelled(query)
        if mode == "bm25" or embedder is None:
            return index, mode, None, query
        if vector is not None and vector.text == query and vector.folder == embedder.folder:
            self.vectors_taken += 1  # a query read with a typo corrected is embedded anew
            return index, mode, np.asarray(vector.values, dtype=np.float32), query
        # An answer turn asks twice for the same question (the check, then the search): embed once.
        key = (embedder.model_id, query)
        with self._vectors_lock:
            qvec = self._vectors.get(key)
        if qvec is None:
            qvec = embedder.embed_query(query)
            with self._vectors_lock:
                self._vectors[key] = qvec
                while len(self._vectors) > 64:
                    self._vectors.pop(next(iter(self._vectors)))
        return index, mode, qvec, query

    def search_sync(
        self, query: str, k: int = 3, gate: bool = True, vector: QueryVector | None = None
    ) -> list[Fact]:
        query = without_sign_off(query)
        foreign = self._foreign(query)
        if foreign is not None:  # never an English passage for a question in another language
            found = self._cross_match(query, foreign)
            sure = found is not None and found.confidence >= 0.5
            return self._cross_facts(found) if sure or not gate else []
        index, mode, qvec, query = self._query(query, vector)
        ranked = index.rank(query, k, mode, qvec)
        rows = [r for r, _ in ranked]
        keep = index.answerable(query, rows, mode, qvec) if gate else [True] * len(rows)
        facts = []
        for (row, score), ok in zip(ranked, keep, strict=True):
            if ok:
                p = index.passages[row]
                fact_mode = "faq" if p.kind == "faq" else mode
                facts.append(Fact(p.key, p.text, p.source, fact_mode, round(score, 4), p.title))
        return facts

    async def search(self, query: str, k: int = 3, vector: QueryVector | None = None) -> list[Fact]:
        # Off the event loop: a query embedding and a pass over every vector take milliseconds.
        return await asyncio.to_thread(self.search_sync, query, k, True, vector)

    def evidence_sync(self, query: str, k: int = 3, vector: QueryVector | None = None) -> Evidence:
        """The answerability check's input (:mod:`gatebot_knowledge.answerability`): the ``k``
        best passages, ungated, with P(answerable) from the head for the features in hand. A
        sign-off is not read: its name ("Thanks, Chris") is no name the pack never says."""
        query = without_sign_off(query)
        foreign = self._foreign(query)
        if foreign is not None:
            return self._cross_evidence(query, foreign)
        evidence = self._evidence(query, k, vector)
        f = evidence.features
        if any(f.get(k) for k in AGAINST):
            # A name anywhere in the message, an action or thing the pack never names, ... (see
            # AGAINST) is evidence against every part of it, but for a name in the context
            # before the message's one question (:meth:`_past_the_context`).
            evidence = self._past_the_context(query, k, evidence)
            if f.get("thing_absent"):
                # The pack names the thing, the best passage does not: "Is there a free trial of
                # Acme Monitor?" is drawn to Monitor's sections by its name, and the trial entry
                # answers it for every product.
                return self._for_every_product(query, k, evidence)
            return evidence
        if f.get("asks_value") and not f.get("holds_value"):
            # "How many days do I get to test Acme Monitor": the value may be in one sentence's
            # passage, or in one that answers for every product (the trial entry).
            evidence = self._value_in_a_sentence(query, k, evidence)
            return self._for_every_product(query, k, evidence)
        evidence = self._past_the_company(query, k, evidence)
        evidence = self._for_every_product(query, k, evidence)
        asked = question_sentences(query)
        for n, sentence in enumerate(asked):
            if n and leans_on_the_last(sentence):
                continue
            # The question in a message of context ("Our tool wakes us at night with false
            # alarms. How does yours decide a site is really down?") reads better alone; it
            # counts only where its best passage is the whole message's, or, when it is the
            # message's one question, among the whole message's best: the context's words can
            # draw the whole to another passage ("We want to evaluate escalation policies
            # before we commit. Is the trial a cut-down version?" to the alerts section).
            part = self._evidence(sentence, k, None)
            # A question that ends pointing back to its context ("We need SAML SSO against Okta.
            # Which tier unlocks that?") is not read alone as much: alone, "that" is anything.
            narrow = len(asked) > 1 or _ENDS_POINTING.search(sentence) is not None
            among = [f.key for f in evidence.facts[: 1 if narrow else k]]
            same = bool(part.facts) and part.facts[0].key in among
            if same and part.p_answerable > evidence.p_answerable:
                part.version += "+sentence"
                evidence = part
        evidence = self._after_leads(query, k, asked, evidence)
        best = evidence.facts[0].key if evidence.facts else None
        run_on = None if asked else run_on_question(query, self._umbrella().product_words())
        if run_on is not None:
            # A question typed on after its context with no stop between, read alone as the
            # question of a message of sentences is.
            evidence = self._read_alone(run_on, k, best, evidence, "+run-on")
        for alternative in first_alternatives(query):
            # A question's first alternative alone, where its best passage is the whole's best.
            evidence = self._read_alone(alternative, k, best, evidence, "+first-alternative")
        return evidence

    def _read_alone(
        self, part_of: str, k: int, best: str | None, evidence: Evidence, suffix: str
    ) -> Evidence:
        """The evidence for a part of the message read alone, where its best passage is
        ``best``, nothing speaks against it and it reads better than ``evidence``; else
        ``evidence``."""
        part = self._evidence(part_of, k, None)
        same = bool(part.facts) and part.facts[0].key == best
        against = any(part.features.get(x) for x in AGAINST)
        if same and not against and part.p_answerable > evidence.p_answerable:
            part.version += suffix
            return part
        return evidence

    def _after_leads(self, query: str, k: int, asked: list[str], evidence: Evidence) -> Evidence:
        """A question sentence's lead clause ("When our booking website goes down, can the warning
        show up in our Slack channel?") is the customer's situation, not what they ask: the
        question after it is read alone as well. That reading counts only where its best passage
        is the message's, nothing in it speaks against it, and the passage holds
        :data:`LEAD_HELD` of what the lead says in the pack's own words: "On the free plan, can I
        add ten people?" keeps its plan where the passage on roles does not say it."""
        if not evidence.facts:
            return evidence
        best = evidence.facts[0].key
        index = self._current()
        row = index.by_key.get(best)
        for sentence in asked or [query]:
            found = after_lead(sentence)
            if found is None or row is None:
                continue
            if index.lexical.known_share(index.spelled(found[0]), row) >= LEAD_HELD:
                evidence = self._read_alone(found[1], k, best, evidence, "+after-lead")
        return evidence

    def _past_the_context(self, query: str, k: int, evidence: Evidence) -> Evidence:
        """A name the pack never says, or a thing or action it never names (:data:`_NAMED_AGAINST`),
        only in what the customer tells of their situation around what they ask, is not what
        they ask: "Our last monitoring tool woke us up because a single probe in Asia had a
        hiccup. How does Acme decide a site is really down?". The questions alone
        (:func:`asked_after_context`) are read where the first points back to nothing the
        context says ("We use Bitbucket. Does Pipelines work with it?" keeps the name against
        it) and where nothing else speaks against them."""
        f = evidence.features
        against = [x for x in AGAINST if f.get(x)]
        found = asked_after_context(query)
        # (only what a word of the context can carry: what the context says of a figure, "wiped
        # immediately instead of waiting out the grace period", is what the question asks)
        if not against or not set(against) <= _NAMED_AGAINST or found is None:
            return evidence
        # What the question points back to is said before it: a name only after it ("how much
        # is this going to cost us? we're 9 devs moving off Jenkins") is not pointed to. A name
        # before it may be what any word of the question points to ("Our repos live in Azure
        # DevOps. Can Acme Pipelines build from a repository, and will it show results on pull
        # requests?"). A thing or an action the pack never names is not placed in the message:
        # a question pointing back keeps it, but for a subject that points inside its own
        # sentence (:func:`points_before_itself`).
        at = query.find(found[1])
        before = query[:at]
        # A question after the one read, too short to be read alone, that offers names to
        # choose from asks of them: "EU region - which exact country/datacenter? Poland or
        # Germany?" (not an example given: "How do I invite a new teammate? Like Priya?").
        later = [q for q in _ASKED.findall(query[at:]) if q.strip() not in found[0]]
        if any(_OFFERS.search(q) and self._names(q) for q in later):
            return evidence
        products = self._umbrella().product_words()
        names = self._names(before)
        # (a question read alone only for words that point to no name keeps its whole's best:
        # "... stopped reaching PagerDuty since yesterday. Can it only be me?" asks of the alerts)
        kept_best = False
        if names:
            if points_to_a_name(found[1], products, len(set(names))):
                return evidence
            kept_best = points_back(found[1], products)
        elif points_before_itself(found[1], products) and against != ["unseen_names"]:
            return evidence
        # (the question alone is read as the whole is: past the company's name, "whole acme
        # cloud install on our own server is possible? ... everything on-prem" is no pricing
        # question)
        part = self._past_the_company(found[0], k, self._evidence(found[0], k, None))
        if not part.facts or any(part.features.get(x) for x in AGAINST):
            return evidence
        if kept_best and part.facts[0].key not in [f.key for f in evidence.facts]:
            return evidence
        if part.p_answerable > evidence.p_answerable:
            part.version += "+question"
            return part
        return evidence

    def _names(self, text: str, capitals: bool = True) -> list[str]:
        """The names in ``text`` the pack never says (see :func:`.packfit.unseen_names`;
        ``capitals`` False for a language that capitalises every noun)."""
        index = self._current()
        return unseen_names(
            index.lexical.vocab, text, self._declared(index), capitals, index.written
        )

    def _declared(self, index: KnowledgeIndex) -> frozenset[str]:
        """The stems of the pack's declared keywords, where its fit is of ``index``."""
        held = self._fit
        return held[1].declared if held is not None and held[0] is index else frozenset()

    def _for_every_product(self, query: str, k: int, evidence: Evidence) -> Evidence:
        """A question about one product that a passage answers for every product: "can I try
        Pipelines before paying? and do I have to put a card in" is drawn to the Pipelines
        overview by its name, while the trial entry ("Every product has a 14-day free trial")
        answers it. The question is also read without the product's name, and that reading
        counts only where its best passage speaks for every product (names none, and says every
        product or names the company: :meth:`Umbrella.for_every_product`)."""
        umbrella = self._umbrella()
        names = umbrella.product_words()
        # The product's whole name goes ("test Acme Monitor before I pay": "Acme" too, a word the
        # trial entry does not use), once a product's own word is there.
        named = {w for name in umbrella.products for w in tokenize(name)}
        words = [(w, set(tokenize(w))) for w in query.split()]
        kept = [w for w, stems in words if not stems & named]
        if not names or not any(stems & names for _, stems in words) or len(kept) < 3:
            return evidence
        index = self._current()
        if not self._may_speak_for_every_product(index, umbrella, " ".join(kept), evidence):
            return evidence
        part = self._evidence(" ".join(kept), k, None)
        row = index.by_key.get(part.facts[0].key) if part.facts else None
        if row is None or not umbrella.for_every_product(index, row):
            return evidence
        if part.p_answerable > evidence.p_answerable:
            part.version += "+every-product"
            return part
        return evidence

    def _past_the_company(self, query: str, k: int, evidence: Evidence) -> Evidence:
        """The company's name draws a question to a passage that names it too: "Does Acme Cloud
        offer a free trial?" ranks "How much does Acme Cloud cost?" above the trial entry. Where
        the whole message's best passage names the company, the question is also read without
        its name (the whole name only); where that reading's best passage is another, it is what
        was asked, answerable or not. "How much does Acme Cloud cost?" keeps its entry: without
        the name it is still the best. One more reading, only for a message that names the
        company whose best passage names it too."""
        company = self.pack.company.strip()
        kept = re.sub(rf"\b{re.escape(company)}\b", " ", query, flags=re.IGNORECASE)
        if not company or not evidence.facts or kept == query or len(kept.split()) < 3:
            return evidence
        index = self._current()
        best = index.by_key.get(evidence.facts[0].key)
        said = set(tokenize(index.passages[best].joint)) if best is not None else set()
        if not set(tokenize(company)) <= said:
            return evidence
        part = self._evidence(" ".join(kept.split()), k, None)
        if not part.facts or part.facts[0].key == evidence.facts[0].key:
            return evidence
        # Without the name the question is drawn elsewhere: the name alone drew the whole, and
        # how answerable it reads is the reading without it ("Does Acme Cloud offer phone
        # support?" is no pricing question, answered or not).
        part.version += "+past-the-company"
        return part

    @staticmethod
    def _may_speak_for_every_product(
        index: KnowledgeIndex, umbrella: Umbrella, kept: str, evidence: Evidence
    ) -> bool:
        """Whether a passage that speaks for every product is among the whole message's best
        (its evidence's candidates) or the words kept's best by BM25 alone: the reading without
        the product's name (a query embedding more) is made only then."""
        rows = [index.by_key.get(f.key) for f in evidence.facts]
        rows += [r for r, _ in index.rank(index.spelled(kept), EVERY_PRODUCT_RANKS, "bm25")]
        return any(r is not None and umbrella.for_every_product(index, r) for r in rows)

    def _value_in_a_sentence(self, query: str, k: int, evidence: Evidence) -> Evidence:
        """A value asked for that the whole message's best passage lacks is evidence against
        that passage, not against the message: "can i try pipelines before paying? how long do
        i get" is drawn to the Pipelines overview by its name, while its first sentence finds
        the trial entry, which says how long. A sentence's evidence counts only where its best
        passage holds the value the whole message asks for."""
        asked = asked_value(query)
        for sentence in question_sentences(query):
            part = self._evidence(sentence, k, None)
            if not part.facts or asked is None or not holds_value(asked, part.facts[0].text):
                continue
            if part.p_answerable > evidence.p_answerable:
                part.version += "+sentence"
                evidence = part
        return evidence

    def _evidence(self, query: str, k: int, vector: QueryVector | None) -> Evidence:
        index, mode, qvec, query = self._query(query, vector)
        held = self._fit
        fit = held[1] if held is not None and held[0] is index else None
        evidence = assess(index, query, mode, qvec, k, self._umbrella(), fit)
        evidence.query = query
        if mode == "hybrid" and qvec is not None:
            # A confident FAQ match is evidence too: what pre-flight would answer verbatim, the
            # answer path answers as well.
            found = faq_match(index, query, qvec)
            evidence.features["faq_match"] = found.confidence
            best = evidence.facts[0].key if evidence.facts else None
            # ...unless another passage sits as close: two entries alike ("is there a free plan"
            # between the trial entry and the pricing one) are a doubt the match cannot settle.
            clear = evidence.features.get("dense_margin", 0.0) >= FAQ_MATCH_CLEAR
            clear = clear or (
                found.confidence >= FAQ_MATCH_SURE and _lead(evidence.facts) >= FAQ_MATCH_LEAD
            )
            # ...nor when the question names what the pack never says ("send alerts into
            # Opsgenie" matches the Slack entry: see .packfit), or asks what the entry lacks.
            named = any(evidence.features.get(k) for k in AGAINST)
            # ...nor when it asks for a value the entry says nothing of: "How many times can I ask
            # for a reset link before I get locked out?" matched the password entry, which says
            # how long a link lasts (not "how many regions", answered by "the EU or the US").
            asked = asked_value(query) if evidence.features.get("asks_value") else None
            top = evidence.facts[0].text if evidence.facts else ""
            named = named or (asked is not None and not mentions_value(asked, top))
            # ...and only a match pre-flight would route on (its ``faq`` threshold): "can we pay
            # invoices by bank transfer" matched the invoice entry at 0.72, and was answered.
            routes = found.confidence >= self._faq_threshold()
            if (
                found.key == best
                and clear
                and not named
                and routes
                and found.confidence > evidence.p_answerable
            ):
                evidence.p_answerable = found.confidence
                evidence.version += "+faq-match"
            if not named:
                _asked_match(index, qvec, evidence)
        return evidence

    def _faq_threshold(self) -> float:
        from bot.preflight.answers import thresholds

        return thresholds(self.pack)["faq"]

    async def evidence(self, query: str, k: int = 3, vector: QueryVector | None = None) -> Evidence:
        return await asyncio.to_thread(self.evidence_sync, query, k, vector)

    def faq_match_sync(self, query: str) -> FaqMatch | None:
        query = without_sign_off(query)
        if self._foreign(query) is not None:
            # Never routed to an entry's English text as it stands: the answer path matches it
            # across languages and says, in the customer's language, where the answer is from.
            return FaqMatch(None, 0.0, 0.0, "another language: left to the answer path")
        index, mode, qvec, query = self._query(query)
        if mode != "hybrid" or qvec is None:
            return None  # BM25 scores have no scale to read a match from (see .faqmatch)
        found = faq_match(index, query, qvec)
        if found.key is not None and self._names(query):
            # A question about something the pack never names is no entry's (see .packfit).
            return FaqMatch(None, 0.0, found.score, mode)
        return found

    async def faq_match(self, query: str) -> FaqMatch | None:
        """The FAQ entry ``query`` asks, through the hybrid ranking (:mod:`.faqmatch`)."""
        return await asyncio.to_thread(self.faq_match_sync, query)

    # -- other languages (see .multilingual) --------------------------------------------------

    def _foreign(self, query: str) -> str | None:
        """The query's language when it is confidently not the pack's, else None."""
        from bot.preflight.language import long_enough, written_in
        from gatebot_knowledge.multilingual import MIN_WORDS, SURE_LANGUAGE

        if not long_enough(query, MIN_WORDS):
            return None
        lang, p = written_in(query, sorted({self.pack.language, *self.pack.templates}))
        return lang if lang and lang != self.pack.language and p >= SURE_LANGUAGE else None

    def embed_across_languages(self, texts: list[str]) -> np.ndarray | None:
        """Unit rows for ``texts`` in one space across languages (the multilingual encoder);
        None without it or with embeddings off. Blocking: call it off the event loop."""
        from gatebot_knowledge.multilingual import available, embed

        if self.embedder is None or not available():
            return None
        return embed(texts)

    def _cross_match(self, query: str, language: str) -> CrossMatch | None:
        """The FAQ entry a question in ``language`` asks; None without the multilingual encoder
        (or with embeddings off)."""
        from gatebot_knowledge.multilingual import available

        index = self._current()
        if self.embedder is None or not available():
            return None
        held = self._cross
        if held is None or held[0] is not index:
            # An entry's question and each way it is also asked, and each way a document
            # section is asked, all pointing at its row: question against question is what the
            # encoder was trained for (a section's prose against a question is not matched).
            asked = [
                (i, q)
                for i, p in enumerate(index.passages)
                for q in ((p.title, *p.asked) if p.kind == "faq" else p.asked)
            ]
            held = self._cross = (
                index,
                MultilingualFaq([i for i, _ in asked], [q for _, q in asked]),
            )
        found = held[1].match(query, language)
        names = self._names(places_as_written(query), capitals=language not in NOUN_CAPITALS)
        vocab = index.lexical.vocab
        said = index.written | self._declared(index)
        if found.row is not None and [n for n in names if not cognate(n, vocab, said)]:
            # As in the pack's language: a question naming what the pack never says ("...avec
            # Bitbucket ?") is no entry's, however close its wording is to one.
            return CrossMatch(None, found.cosine, 0.0, language)
        return found

    def _cross_facts(self, found: CrossMatch | None) -> list[Fact]:
        if found is None or found.row is None:
            return []
        p = self._current().passages[found.row]
        mode = "faq" if p.kind == "faq" else "embeddings"
        return [Fact(p.key, p.text, p.source, mode, round(found.confidence, 4), p.title)]

    def _cross_evidence(self, query: str, language: str) -> Evidence:
        """Evidence for a question in another language: the FAQ entry the multilingual encoder
        matches, with its confidence; without the encoder, no passage and P = 0 (an English
        passage ranked for a Spanish question is noise)."""
        from gatebot_knowledge.multilingual import VERSION

        found = self._cross_match(query, language)
        if found is None:
            return Evidence([], {}, 0.0, f"{VERSION}/{language}/no-encoder", "multilingual", query)
        version = f"{VERSION}/{language}"
        if found.row is None:
            found, version = self._cross_past_the_context(query, language, found, version)
        asked = question_sentences(query, CROSS_MIN_WORDS) if found.row is not None else []
        for n, sentence in enumerate(asked):
            if n and leans_on_the_last(sentence):
                continue
            # As in the pack's language, a question among others reads better alone ("Hola,
            # ¿tienen prueba gratis? ¿Cuántos días dura...?": 0.52 whole, 0.99 its first
            # question), where it finds the same entry as the whole message, or, the message's
            # one question, one of the whole message's best ("¿Tienen una prueba gratuita?
            # Somos un equipo pequeño y queremos probar Acme Pipelines antes de pagar nada."
            # reads the pricing entry whole at 0.01, the trial entry second).
            part = self._cross_match(sentence, language)
            among = found.near if len(asked) == 1 else (found.row,)
            if part is not None and part.row in among and part.confidence > found.confidence:
                found, version = part, f"{VERSION}/{language}+sentence"
        features = {"cross_cosine": found.cosine}
        facts = self._cross_facts(found)
        return Evidence(facts, features, found.confidence, version, "multilingual", query)

    def _cross_past_the_context(
        self, query: str, language: str, found: CrossMatch, version: str
    ) -> tuple[CrossMatch, str]:
        """As :meth:`_past_the_context` in the pack's language: a name the pack never says,
        only in the context before what is asked ("Hola, soy responsable de compras en Bogotá.
        ¿Tienen un período de prueba gratuito?"), is not what is asked. The questions are read
        together, then each alone, and the surest match counts; each reading is held to the
        same unseen-name rule as the whole."""
        asked = asked_after_context(query, CROSS_MIN_WORDS)
        if asked is None or points_back(asked[1], self._umbrella().product_words()):
            return found, version
        readings = [asked[0], *question_sentences(asked[0], CROSS_MIN_WORDS)]
        parts = [self._cross_match(r, language) for r in dict.fromkeys(readings)]
        kept = [p for p in parts if p is not None and p.row is not None]
        if not kept:
            return found, version
        return max(kept, key=lambda p: p.confidence), version + "+question"

    # -- reading -------------------------------------------------------------------------------

    def _texts(self) -> dict[str, tuple[str, str]]:
        """Whole documents by key, for reads of a document rather than one passage."""
        if self._documents is None:
            from gatebot_knowledge.sources import extra_documents

            taken = {f.key for f in self.pack.faq} | {d.key for d in self.pack.documents}
            docs = [*self.pack.documents, *extra_documents(Path(self.pack.root), taken)]
            self._documents = {d.key: (d.title, d.text.strip()) for d in docs}
        return self._documents

    def _numbered_aliases(self) -> dict[str, str]:
        from bot.packs.sections import numbered_aliases

        return {
            old: new
            for doc in self.pack.documents
            for old, new in numbered_aliases(doc.key, doc.text).items()
        }

    def read_sync(self, key: str, offset: int = 0, length: int = 2000) -> dict[str, Any]:
        if offset < 0 or length < 1:
            raise ValueError(f"offset must be >= 0 and length >= 1 (got {offset}, {length})")
        index = self._current()
        if key not in index.by_key:
            # A key numbered before the document had headings (in a stored record): today's.
            key = self._numbered_aliases().get(key, key)
        if key in index.by_key:
            p = index.passages[index.by_key[key]]
            title, text = p.title, p.text
        elif key in self._texts():
            title, text = self._texts()[key]
        else:
            raise UnknownKeyError(
                f"no passage or document {key!r} in pack {self.pack.name!r}; "
                "keys look like 'faq-trial', 'doc-monitor' or 'doc-monitor#alerts'"
            )
        total = len(text)
        if offset > total:
            raise ValueError(f"offset {offset} is past the end of {key!r} ({total} characters)")
        window = text[offset : offset + length]
        end = offset + len(window)
        return {
            "key": key,
            "title": title,
            "text": window,
            "offset": offset,
            "length": len(window),
            "total": total,
            # Where the next window starts; None only when this one reached the end.
            "next_offset": end if end < total else None,
        }

    async def read(self, key: str, offset: int = 0, length: int = 2000) -> dict[str, Any]:
        """``length`` characters of a passage or whole document from ``offset``, with the total
        length; ``next_offset`` says whether more follows, so nothing is cut silently."""
        return self.read_sync(key, offset, length)


def _asked_match(index: KnowledgeIndex, qvec: np.ndarray, evidence: Evidence) -> None:
    """Raise ``evidence``'s P(answerable) when a way the pack says the best passage is asked sits
    close to the message ("how do i make my deploy job wait for the tests job to finish first?"
    against the jobs section's "How do I make one job wait for another?"), nearer than any other
    passage's ways of being asked, and the question asks for no value the passage lacks. The
    answerability head reads the passage's own words, which customers seldom use; the pack's
    asked questions are how they ask. Called only when no rule spoke against the message."""
    f = evidence.features
    if not evidence.facts or (f.get("asks_value") and not f.get("holds_value")):
        return
    if f.get("coverage_margin", 0.0) < ASKED_AGAINST_COVERAGE:
        # Another passage holds far more of the message's words: "Can Pipelines run builds
        # inside our own network?" is asked like the overview ("Can Pipelines run my builds?")
        # and answered by the runners section ("build inside their own network").
        return
    row = index.by_key.get(evidence.facts[0].key)
    if row is None or index.vectors is None:
        return
    # Not a document's title: "Acme Pipelines overview: Pipelines" sits close to anything naming
    # the product ("Acme Pipelines how much is it?").
    scores = index.vectors.asked_scores(qvec, index.faq_rows)
    cosine = float(scores[row])
    if cosine < ASKED_MATCH_AT or int(np.argmax(scores)) != row:
        return
    z = max(-40.0, min(40.0, (cosine - ASKED_MATCH_AT) / ASKED_MATCH_SCALE))
    confidence = round(1.0 / (1.0 + math.exp(-z)) * 0.5 + 0.5, 4)  # 0.5 at the threshold, to 1
    f["asked_match"] = confidence
    if confidence > evidence.p_answerable:
        evidence.p_answerable = confidence
        evidence.version += "+asked-match"


def _lead(facts: list[Fact]) -> float:
    """How far the best fact's score leads the next fact from another document (0: none)."""
    if not facts:
        return 0.0
    first = facts[0].key.split("#", 1)[0]
    rival = next((f for f in facts[1:] if f.key.split("#", 1)[0] != first), None)
    return facts[0].score - rival.score if rival is not None else 0.0

